"""``jax.scipy.fft``: discrete cosine transforms (``dct``, ``idct``, ``dctn``,
``idctn``) of types 1 to 3 with SciPy's definitions and norms, computed with
one FFT of the transformed axis (JAX itself implements type 2 only)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp

from ._util import dtype_of, promote_inexact

__all__ = ["dct", "idct", "dctn", "idctn"]

_NORMS = (None, "backward", "ortho", "forward")
_SWAPPED_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
_INVERSE_TYPE = {1: 1, 2: 3, 3: 2}   # idct of type t is dct of this type, with the norm swapped


def _const(values: np.ndarray, like: Any) -> Any:
    return xnp.asarray(values.astype(dtype_of(like)))


def _dct2(x: Any) -> Any:
    """Unnormalised DCT-II of the last axis, ``2 sum_m x_m cos(pi k (2m+1) / 2n)``:
    the even samples then the odd ones reversed, one FFT, a twiddle."""
    n = x.shape[-1]
    order = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    spectrum = xnp.fft.fft(x[..., order], axis=-1)
    twiddle = _const(np.exp(-0.5j * np.pi * np.arange(n) / n), spectrum)
    return 2 * xnp.real(spectrum * twiddle)


def _dct2_inverse(y: Any) -> Any:
    """The inverse of :func:`_dct2` (a DCT-III divided by ``2n``): the FFT of
    the reordered signal rebuilt from ``y_k`` and ``y_(n-k)``, one inverse FFT."""
    n = y.shape[-1]
    mirrored = xnp.concatenate([xnp.zeros_like(y[..., :1]), xnp.flip(y[..., 1:], -1)], -1)
    spectrum = lax.complex(y, -mirrored)
    twiddle = _const(0.5 * np.exp(0.5j * np.pi * np.arange(n) / n), spectrum)
    signal = xnp.real(xnp.fft.ifft(spectrum * twiddle, axis=-1))
    order = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    return signal[..., np.argsort(order)]


def _ortho_scale(n: int) -> np.ndarray:
    """The factors that make the DCT-II orthonormal."""
    scale = np.full(n, 1 / np.sqrt(2 * n))
    scale[0] = 1 / np.sqrt(4 * n)
    return scale


def _dct_last(x: Any, type: int, norm: str | None) -> Any:
    """The DCT of ``type`` along the last axis of the real array ``x``."""
    n = x.shape[-1]
    if type == 1:
        if n < 2:
            raise ValueError(f"dct: type 1 needs at least 2 points along the axis, got {n}")
        edges = np.ones(n)
        edges[[0, -1]] = np.sqrt(2)
        if norm == "ortho":
            x = x * _const(edges, x)
        y = xnp.real(xnp.fft.fft(xnp.concatenate([x, x[..., -2:0:-1]], -1), axis=-1))[..., :n]
        if norm == "ortho":
            return y * _const(1 / (edges * np.sqrt(2 * (n - 1))), y)
        return y / (2 * (n - 1)) if norm == "forward" else y
    if type == 2:
        y = _dct2(x)
        if norm == "ortho":
            return y * _const(_ortho_scale(n), y)
        return y / (2 * n) if norm == "forward" else y
    if norm == "ortho":   # type 3: the transpose of type 2
        return _dct2_inverse(x / _const(_ortho_scale(n), x))
    return _dct2_inverse(x) if norm == "forward" else _dct2_inverse(x) * (2 * n)


def _inverse(fn: str, type: int, norm: str | None) -> tuple[int, str]:
    """The (type, norm) of the forward transform that inverts ``(type, norm)``."""
    _check(fn, type, norm)
    return _INVERSE_TYPE[type], _SWAPPED_NORM[norm]


def _check(fn: str, type: int, norm: str | None) -> None:
    if type not in (1, 2, 3):
        raise NotImplementedError(f"{fn}: type must be 1, 2 or 3, got {type!r}")
    if norm not in _NORMS:
        raise ValueError(f"{fn}: norm must be one of {_NORMS}, got {norm!r}")


def _transform(fn: str, x: Any, type: int, norm: str | None, lengths: Sequence[int | None],
               axes: Sequence[int]) -> Any:
    """``x`` cropped or zero-padded to ``lengths`` and transformed along ``axes``."""
    _check(fn, type, norm)
    (x,) = promote_inexact(x)
    ndim = x.ndim
    for axis, n in zip(axes, lengths):
        if not -ndim <= axis < ndim:
            raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of rank {ndim}")
        x = xnp.moveaxis(x, axis, -1)
        if n is not None:
            if n < 1:
                raise ValueError(f"{fn}: the transform length must be positive, got {n}")
            size = x.shape[-1]
            x = x[..., :n] if n <= size else xnp.pad(x, [(0, 0)] * (ndim - 1) + [(0, n - size)])
        if np.issubdtype(dtype_of(x), np.complexfloating):
            x = lax.complex(_dct_last(xnp.real(x), type, norm), _dct_last(xnp.imag(x), type, norm))
        else:
            x = _dct_last(x, type, norm)
        x = xnp.moveaxis(x, -1, axis)
    return x


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
        ) -> Any:
    """The discrete cosine transform of ``type`` along ``axis`` (SciPy's
    definitions; ``norm`` None/"backward", "ortho" or "forward"), ``x`` first
    cropped or zero-padded to ``n`` points."""
    return _transform("dct", x, type, norm, [n], [axis])


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
         ) -> Any:
    """The inverse of :func:`dct` with the same ``type`` and ``norm``."""
    return _transform("idct", x, *_inverse("idct", type, norm), [n], [axis])


def _lengths_and_axes(fn: str, ndim: int, s: Sequence[int] | None,
                      axes: Sequence[int] | None) -> tuple[list, list]:
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    lengths = [None] * len(axes) if s is None else list(s)
    if len(lengths) != len(axes):
        raise ValueError(f"{fn}: s and axes must have the same length, got {len(lengths)} "
                         f"and {len(axes)}")
    return lengths, axes


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """:func:`dct` along each of ``axes`` (all, or the last ``len(s)``), each
    first cropped or zero-padded to its entry of ``s``."""
    lengths, axes = _lengths_and_axes("dctn", xnp.ndim(x), s, axes)
    return _transform("dctn", x, type, norm, lengths, axes)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of :func:`dctn` with the same ``type`` and ``norm``."""
    lengths, axes = _lengths_and_axes("idctn", xnp.ndim(x), s, axes)
    return _transform("idctn", x, *_inverse("idctn", type, norm), lengths, axes)
