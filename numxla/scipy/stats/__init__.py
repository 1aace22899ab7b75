"""``jax.scipy.stats`` for numxla: one module per distribution, as JAX's
(``from numxla.scipy.stats import norm``; ``norm.logpdf(x, loc, scale)``),
with JAX's formulas, so their values, dtypes and derivatives follow JAX."""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon,  # noqa: F401
               gamma, gennorm, geom, gumbel_l, gumbel_r, laplace, logistic, multinomial,
               multivariate_normal, nbinom, norm, pareto, poisson, t, truncnorm, uniform,
               vonmises, wrapcauchy)
from ._descriptive import ModeResult, mode, rankdata, sem  # noqa: F401
from ._kde import gaussian_kde  # noqa: F401

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
           "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
           "truncnorm", "uniform", "vonmises", "wrapcauchy", "mode", "rankdata", "sem",
           "gaussian_kde"]
