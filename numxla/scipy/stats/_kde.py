"""Gaussian kernel density estimation (``jax.scipy.stats.gaussian_kde``), a
pytree so it can cross ``jit``.  The bandwidth is Scott's or Silverman's
rule on the (weighted) effective sample size, or given."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.tracer.pytree import register_pytree_node

from .._util import logsumexp, promote_inexact
from ..special import ndtr

__all__ = ["gaussian_kde"]


class gaussian_kde:  # noqa: N801  (SciPy's name)
    """A Gaussian KDE of ``dataset`` (``(d, n)``, or ``(n,)`` for one variable)."""

    def __init__(self, dataset: Any, bw_method: str | float | Callable | None = None,
                 weights: Any = None):
        dataset = xnp.atleast_2d(*promote_inexact(dataset))
        d, n = dataset.shape
        if n < 2:
            raise ValueError("gaussian_kde: the dataset needs more than one point")
        if weights is None:
            weights = xnp.full((n,), 1.0 / n, dtype=dataset.dtype)
        else:
            weights = xnp.asarray(weights, dtype=dataset.dtype)
            weights = weights / xnp.sum(weights)
        self.dataset, self.weights = dataset, weights
        self.d, self.n = d, n
        self.neff = 1 / xnp.sum(weights ** 2)
        self.set_bandwidth(bw_method)

    def scotts_factor(self) -> Any:
        return self.neff ** (-1.0 / (self.d + 4))

    def silverman_factor(self) -> Any:
        return (self.neff * (self.d + 2) / 4.0) ** (-1.0 / (self.d + 4))

    covariance_factor = scotts_factor

    def set_bandwidth(self, bw_method: str | float | Callable | None = None) -> None:
        if bw_method is None or bw_method == "scott":
            self.factor = self.scotts_factor()
        elif bw_method == "silverman":
            self.factor = self.silverman_factor()
        elif callable(bw_method):
            self.factor = bw_method(self)
        elif isinstance(bw_method, str):
            raise ValueError(f"gaussian_kde: bw_method {bw_method!r}: 'scott', 'silverman', "
                             f"a number or a callable")
        else:
            self.factor = xnp.asarray(bw_method, dtype=self.dataset.dtype)
        data_cov = xnp.atleast_2d(xnp.cov(self.dataset, rowvar=True, bias=False,
                                          aweights=self.weights))
        self.covariance = data_cov * self.factor ** 2
        self.inv_cov = xnp.linalg.inv(self.covariance)

    def _points(self, points: Any) -> Any:
        (points,) = promote_inexact(points)
        points = xnp.atleast_2d(points)
        if points.shape[0] != self.d:
            if points.shape == (1, self.d):
                points = points.T
            else:
                raise ValueError(f"gaussian_kde: points of shape {points.shape} for a "
                                 f"{self.d}-dimensional dataset")
        return points

    def logpdf(self, points: Any) -> Any:
        """The log density at each point (columns of ``points``)."""
        points = self._points(points)
        diff = self.dataset[:, :, None] - points[:, None, :]          # (d, n, m)
        chol = xnp.linalg.cholesky(self.covariance)
        z = lax.triangular_solve(chol, xnp.reshape(diff, (self.d, -1)), left_side=True,
                                 lower=True)
        energy = xnp.reshape(xnp.sum(z ** 2, axis=0), diff.shape[1:]) / 2   # (n, m)
        log_norm = (xnp.sum(xnp.log(xnp.diagonal(chol)))
                    + self.d / 2 * float(np.log(2 * np.pi)))
        return logsumexp(-energy, axis=0, b=self.weights[:, None]) - log_norm

    def evaluate(self, points: Any) -> Any:
        return xnp.exp(self.logpdf(points))

    __call__ = pdf = evaluate

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the KDE times the Gaussian ``N(mean, cov)``."""
        mean, cov = xnp.atleast_1d(mean), xnp.atleast_2d(cov)
        total = self.covariance + cov
        diff = self.dataset - mean[:, None]
        z = xnp.linalg.solve(total, diff)
        energy = xnp.sum(diff * z, axis=0) / 2
        norm = xnp.sqrt(xnp.linalg.det(2 * np.pi * total))
        return xnp.sum(self.weights * xnp.exp(-energy)) / norm

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The mass of a one-dimensional KDE between ``low`` and ``high``."""
        if self.d != 1:
            raise ValueError("integrate_box_1d: the KDE must be one-dimensional")
        sd = xnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sd
        hi = (high - self.dataset[0]) / sd
        return xnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def integrate_kde(self, other: "gaussian_kde") -> Any:
        """The integral of the product of two KDEs."""
        total = self.covariance + other.covariance
        diff = self.dataset[:, :, None] - other.dataset[:, None, :]
        flat = xnp.reshape(diff, (self.d, -1))
        energy = xnp.sum(flat * xnp.linalg.solve(total, flat), axis=0) / 2
        weights = (self.weights[:, None] * other.weights[None, :]).ravel()
        return xnp.sum(weights * xnp.exp(-energy)) / xnp.sqrt(
            xnp.linalg.det(2 * np.pi * total))


def _flatten(kde: gaussian_kde) -> tuple:
    return ((kde.dataset, kde.weights, kde.neff, kde.factor, kde.covariance, kde.inv_cov),
            (kde.d, kde.n))


def _unflatten(aux: tuple, children: Any) -> gaussian_kde:
    kde = object.__new__(gaussian_kde)
    (kde.dataset, kde.weights, kde.neff, kde.factor, kde.covariance, kde.inv_cov) = children
    kde.d, kde.n = aux
    return kde


register_pytree_node(gaussian_kde, _flatten, _unflatten)
