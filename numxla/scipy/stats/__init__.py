"""``jax.scipy.stats`` for numxla: one module per distribution, as JAX's
(``from numxla.scipy.stats import norm``; ``norm.logpdf(x, loc, scale)``),
with JAX's formulas, so their values, dtypes and derivatives follow JAX."""
from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, geom,  # noqa: F401
               laplace, logistic, multivariate_normal, nbinom, norm, pareto, poisson, t,
               uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "geom",
           "laplace", "logistic", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
           "t", "uniform"]
