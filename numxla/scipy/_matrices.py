"""``jax.scipy.linalg``'s special matrices (SciPy's constructors): Toeplitz,
Hankel, circulant, companion, Hilbert, Pascal, Helmert, Hadamard, DFT,
Leslie, Fiedler and convolution matrices.  Those built from vectors take
traced vectors; those built from a size need a Python int."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type

from ._util import default_float, promote_inexact

__all__ = ["toeplitz", "hankel", "circulant", "companion", "hilbert", "invhilbert", "pascal",
           "helmert", "hadamard", "dft", "leslie", "fiedler", "fiedler_companion",
           "convolution_matrix"]


def _vector(name: str, x: Any) -> Any:
    x = xnp.asarray(x)
    if x.ndim == 0:
        x = xnp.reshape(x, (1,))
    if x.ndim != 1:
        raise ValueError(f"{name}: expected a vector, got shape {x.shape}")
    return x


def toeplitz(c: Any, r: Any = None) -> Any:
    """``T[i, j] = c[i - j]`` below the diagonal, ``r[j - i]`` above (``r``
    defaults to ``c``; ``c[0]`` is the diagonal).  Batched over leading axes."""
    c = xnp.asarray(c)
    r = c if r is None else xnp.asarray(r)
    c, r = xnp.atleast_1d(c), xnp.atleast_1d(r)
    m, n = c.shape[-1], r.shape[-1]
    batch = xnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c, r = xnp.broadcast_to(c, batch + (m,)), xnp.broadcast_to(r, batch + (n,))
    # T[i, j] = values[(n - 1) + i - j] with values = reversed(r[1:]) followed by c
    t = xnp.result_type(c, r)
    values = xnp.concatenate([xnp.flip(r[..., 1:], -1).astype(t), c.astype(t)], axis=-1)
    index = (n - 1) + np.arange(m)[:, None] - np.arange(n)[None, :]
    return values[..., index]


def hankel(c: Any, r: Any = None) -> Any:
    """``H[i, j] = c[i + j]`` while in ``c``, then ``r[i + j - len(c) + 1]``
    (``r[0]`` is not used; ``r`` defaults to zeros)."""
    c = _vector("hankel", c)
    r = xnp.zeros_like(c) if r is None else _vector("hankel", r)
    t = xnp.result_type(c, r)
    values = xnp.concatenate([c.astype(t), r[1:].astype(t)])
    m, n = c.shape[0], r.shape[0]
    return values[np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c: Any) -> Any:
    """``C[i, j] = c[(i - j) mod n]``: each column ``c`` rolled down once more."""
    c = xnp.asarray(c)
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial ``a`` (highest power first):
    first row ``-a[1:] / a[0]``, ones below the diagonal."""
    (a,) = promote_inexact(_vector("companion", a))
    n = a.shape[0]
    if n < 2:
        raise ValueError("companion: the polynomial needs at least two coefficients")
    first = -a[1:] / a[0]
    return xnp.concatenate([first[None, :], xnp.eye(n - 2, n - 1, dtype=a.dtype)], axis=0)


def hilbert(n: int) -> Any:
    """``H[i, j] = 1 / (i + j + 1)``."""
    n = operator.index(n)
    i = np.arange(n)
    return xnp.asarray(1.0 / (i[:, None] + i[None, :] + 1), dtype=default_float())


def invhilbert(n: int) -> Any:
    """The exact inverse of ``hilbert(n)`` (integers, as floats)."""
    n = operator.index(n)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return xnp.asarray(out, dtype=default_float())


def pascal(n: int, kind: str | None = None) -> Any:
    """Pascal's matrix: ``symmetric`` (default) ``C(i + j, i)``, or its
    ``lower`` / ``upper`` Cholesky-like factor ``C(i, j)`` / ``C(j, i)``."""
    n = operator.index(n)
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    out = np.array([[math.comb(i + j, i) if kind == "symmetric" else
                     math.comb(i, j) if kind == "lower" else math.comb(j, i)
                     for j in range(n)] for i in range(n)], dtype=np.float64)
    return xnp.asarray(out, dtype=default_float())


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix (orthonormal rows contrasting each element with
    those before it); ``full`` keeps the first row, ``1/sqrt(n)`` everywhere."""
    n = operator.index(n)
    out = np.zeros((n, n))
    out[0] = 1 / np.sqrt(n)
    for i in range(1, n):
        out[i, :i] = 1 / np.sqrt(i * (i + 1))
        out[i, i] = -i / np.sqrt(i * (i + 1))
    return xnp.asarray(out if full else out[1:], dtype=default_float())


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Sylvester-Hadamard matrix of order ``n`` (a power of 2)."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a power of 2, got {n}")
    out = np.ones((1, 1))
    while out.shape[0] < n:
        out = np.block([[out, out], [out, -out]])
    return xnp.asarray(out, dtype=canonical_type(dtype).numpy_dtype)


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The discrete Fourier transform matrix ``exp(-2 pi i jk / n)``, scaled
    by ``1/n`` (``'n'``) or ``1/sqrt(n)`` (``'sqrtn'``)."""
    n = operator.index(n)
    k = np.arange(n)
    out = np.exp(-2j * np.pi * np.outer(k, k) / n)
    if scale == "n":
        out = out / n
    elif scale == "sqrtn":
        out = out / np.sqrt(n)
    elif scale is not None:
        raise ValueError(f"dft: scale must be None, 'n' or 'sqrtn', got {scale!r}")
    return xnp.asarray(out, dtype=canonical_type(dtype or np.complex128).numpy_dtype)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities ``f`` on the first row, survival
    rates ``s`` below the diagonal."""
    f, s = promote_inexact(_vector("leslie", f), _vector("leslie", s))
    n = f.shape[0]
    if s.shape[0] != n - 1:
        raise ValueError(f"leslie: s must have {n - 1} entries, got {s.shape[0]}")
    below = xnp.concatenate([xnp.diag(s), xnp.zeros((n - 1, 1), s.dtype)], axis=1)
    return xnp.concatenate([f[None, :], below], axis=0)


def fiedler(a: Any) -> Any:
    """``F[i, j] = |a[i] - a[j]|``."""
    a = xnp.asarray(a)
    return xnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of ``a`` (normalised to
    ``a[0] = 1``): on even rows ``r``, ``-a[r+1], -a[r+2]`` either side of
    the diagonal (``-a[1]`` on it for row 0) and a 1 two places right; on odd
    rows a 1 two places left (one for row 1)."""
    (a,) = promote_inexact(_vector("fiedler_companion", a))
    n = a.shape[0] - 1
    if n < 1:
        raise ValueError("fiedler_companion: the polynomial needs at least two coefficients")
    a = a / a[0]
    rows, cols, coef, ones_r, ones_c = [0], [0], [1], [], []
    for r in range(0, n, 2):
        if r:
            rows.append(r), cols.append(r - 1), coef.append(r + 1)
        if r + 1 < n:
            rows.append(r), cols.append(r + 1), coef.append(r + 2)
        if r + 2 < n:
            ones_r.append(r), ones_c.append(r + 2)
    for r in range(1, n, 2):
        ones_r.append(r), ones_c.append(max(r - 2, 0))
    out = xnp.zeros((n, n), a.dtype).at[np.array(rows), np.array(cols)].set(-a[np.array(coef)])
    return out.at[np.array(ones_r, int), np.array(ones_c, int)].set(1.0) if ones_r else out


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``len(v) == n``."""
    a = _vector("convolution_matrix", a)
    n = operator.index(n)
    m = a.shape[0]
    short, long = min(m, n), max(m, n)
    rows = {"full": (0, m + n - 1), "same": ((short - 1) // 2, (short - 1) // 2 + long),
            "valid": (short - 1, long)}
    if mode not in rows:
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', "
                         f"got {mode!r}")
    padded = xnp.concatenate([xnp.zeros(n - 1, a.dtype), a, xnp.zeros(n - 1, a.dtype)])
    full = padded[(n - 1) + np.arange(m + n - 1)[:, None] - np.arange(n)[None, :]]
    start, stop = rows[mode]
    return full[start:stop]
