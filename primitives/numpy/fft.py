"""``numpy.fft`` on XLA's Fft op (``import primitives.numpy.fft``; JAX's
``jax.numpy.fft``).

The op transforms the trailing 1 to 3 dimensions; other ``axes`` are moved
there first (and more than three are transformed three at a time, the
transform being separable).  ``s``/``n`` crop or zero-pad each axis first,
as NumPy does; ``norm`` is "backward" (the default: the inverse scales by
1/n, as the op's IFFT does), "ortho" or "forward".  Real inputs of ``fft``
become complex (f32 -> c64, f64 -> c128, integers c64); ``rfft`` takes
reals.  Everything differentiates and batches through the op's rules.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ..fft_linalg import FftType, fft as _lax_fft
from ._core import _arraylike, _to_inexact
from ._indexing import _axis, moveaxis, roll
from .._util import dims as _dims, element_type as _type

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_COMPLEX = {PT.F32: PT.C64, PT.F64: PT.C128, PT.F16: PT.C64, PT.BF16: PT.C64}
_REAL = {PT.C64: PT.F32, PT.C128: PT.F64}
_NORMS = (None, "backward", "ortho", "forward")




def _complex(x: Any) -> Any:
    x = _to_inexact(_arraylike(x))
    t = _type(x)
    return x if t.is_complex else ew.convert_element_type(x, _COMPLEX[t])


def _real(x: Any) -> Any:
    x = _to_inexact(_arraylike(x))
    if _type(x).is_complex:
        raise TypeError("rfft: the input must be real")
    return x if _type(x) in (PT.F32, PT.F64) else ew.convert_element_type(x, PT.F32)


def _resize(x: Any, axis: int, n: int) -> Any:
    """Crop or zero-pad ``axis`` to ``n`` entries."""
    size = _dims(x)[axis]
    if n < size:
        return lax.slice_in_dim(x, 0, n, 1, axis)
    if n > size:
        config = [(0, 0, 0)] * len(_dims(x))
        config[axis] = (0, n - size, 0)
        return lax.pad(x, ew.convert_element_type(0, _type(x)), config)
    return x


def _scale(x: Any, n: int, norm: str | None, inverse: bool) -> Any:
    """The normalisation beyond the op's own (none forward, 1/n inverse)."""
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be one of {_NORMS[1:]}, got {norm!r}")
    factor = {None: 1.0, "backward": 1.0, "ortho": math.sqrt(n) if inverse else 1 / math.sqrt(n),
              "forward": float(n) if inverse else 1 / n}[norm]
    if factor == 1.0 or n == 0:
        return x
    return ew.mul(x, ew.convert_element_type(factor, _REAL.get(_type(x), _type(x))))


def _axes_and_sizes(x: Any, s: Sequence[int] | None, axes: Sequence[int] | None,
                    default_axes: Sequence[int] | None = None
                    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    rank = len(_dims(x))
    if axes is None:
        axes = default_axes if default_axes is not None else (
            tuple(range(rank)) if s is None else tuple(range(rank - len(s), rank)))
    axes = tuple(_axis("fft", a, rank) for a in axes)
    if s is not None and len(s) != len(axes):
        raise ValueError("fft: s and axes must have the same length")
    return axes, None if s is None else tuple(operator.index(n) for n in s)


def _transform(x: Any, kind: FftType, axes: tuple[int, ...], lengths: tuple[int, ...]) -> Any:
    """The op over ``axes``, moved to the end and taken three at a time: RFFT's
    chunk (the last axes, where the halved axis is) goes first, IRFFT's last;
    the other chunks are complex transforms."""
    if not axes:
        return x
    rank, k = len(_dims(x)), len(axes)
    x = moveaxis(x, axes, tuple(range(rank - k, rank)))
    chunks = [(max(0, i - 3), i) for i in range(k, 0, -3)]  # the last axes first
    plain = FftType.IFFT if kind in (FftType.IFFT, FftType.IRFFT) else FftType.FFT
    for lo, hi in (chunks[::-1] if kind is FftType.IRFFT else chunks):
        inner = tuple(range(rank - k + lo, rank - k + hi))
        end = tuple(range(rank - len(inner), rank))
        step = kind if (lo, hi) == chunks[0] else plain
        x = moveaxis(_lax_fft(moveaxis(x, inner, end), step, lengths[lo:hi]), end, inner)
    return moveaxis(x, tuple(range(rank - k, rank)), axes)


def _c2c(a: Any, s: Any, axes: Any, norm: str | None, inverse: bool,
         default_axes: Sequence[int] | None = None) -> Any:
    x = _complex(a)
    axes, sizes = _axes_and_sizes(x, s, axes, default_axes)
    if sizes is not None:
        for ax, n in zip(axes, sizes):
            x = _resize(x, ax, n)
    lengths = tuple(_dims(x)[ax] for ax in axes)
    out = _transform(x, FftType.IFFT if inverse else FftType.FFT, axes, lengths)
    return _scale(out, math.prod(lengths), norm, inverse)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The n-dimensional discrete Fourier transform over ``axes`` (all by default)."""
    return _c2c(a, s, axes, norm, False)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The n-dimensional inverse discrete Fourier transform."""
    return _c2c(a, s, axes, norm, True)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform along ``axis``."""
    return _c2c(a, None if n is None else (n,), (axis,), norm, False)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return _c2c(a, None if n is None else (n,), (axis,), norm, True)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    return _c2c(a, s, axes, norm, False)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    return _c2c(a, s, axes, norm, True)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The n-dimensional transform of real input: the last axis keeps its
    ``n // 2 + 1`` non-negative frequencies."""
    x = _real(a)
    axes, sizes = _axes_and_sizes(x, s, axes)
    if sizes is not None:
        for ax, n in zip(axes, sizes):
            x = _resize(x, ax, n)
    lengths = tuple(_dims(x)[ax] for ax in axes)
    return _scale(_transform(x, FftType.RFFT, axes, lengths), math.prod(lengths), norm, False)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """The inverse of ``rfftn``: the last axis grows to ``s[-1]`` (by default
    ``2 * (m - 1)`` for ``m`` input entries)."""
    x = _complex(a)
    axes, sizes = _axes_and_sizes(x, s, axes)
    if sizes is None:
        sizes = tuple(_dims(x)[ax] for ax in axes[:-1]) + (2 * (_dims(x)[axes[-1]] - 1),)
    for ax, n in zip(axes[:-1], sizes[:-1]):
        x = _resize(x, ax, n)
    x = _resize(x, axes[-1], sizes[-1] // 2 + 1)
    return _scale(_transform(x, FftType.IRFFT, axes, sizes), math.prod(sizes), norm, True)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return rfftn(a, None if n is None else (n,), (axis,), norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return irfftn(a, None if n is None else (n,), (axis,), norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    return rfftn(a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    return irfftn(a, s, axes, norm)


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a Hermitian-symmetric signal (given by its first half):
    a real spectrum, ``irfft`` of the conjugate with the normalisation swapped."""
    x = _complex(a)
    return irfft(ew.complex(ew.real(x), ew.neg(ew.imag(x))), n, axis, _SWAPPED[norm])


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``hfft``: the conjugate of ``rfft`` with the normalisation swapped."""
    out = rfft(a, n, axis, _SWAPPED[norm])
    return ew.complex(ew.real(out), ew.neg(ew.imag(out)))


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None) -> Any:
    """The sample frequencies of an ``n``-point FFT with spacing ``d``:
    ``[0, 1, ..., -(n // 2), ..., -1] / (d n)`` (f32 by default)."""
    t = PT.F32 if dtype is None else _element_type(dtype)
    n = operator.index(n)
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return ew.div(ew.convert_element_type(k, t), ew.mul(ew.convert_element_type(d, t),
                                                        ew.convert_element_type(n, t)))


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None) -> Any:
    """The non-negative sample frequencies ``[0, 1, ..., n // 2] / (d n)``."""
    t = PT.F32 if dtype is None else _element_type(dtype)
    n = operator.index(n)
    k = np.arange(n // 2 + 1)
    return ew.div(ew.convert_element_type(k, t), ew.mul(ew.convert_element_type(d, t),
                                                        ew.convert_element_type(n, t)))


def _element_type(dtype: Any) -> PT:
    from ._types import element_type
    return element_type(dtype)


def _shift(x: Any, axes: Any, sign: int) -> Any:
    x = _arraylike(x)
    rank = len(_dims(x))
    axes = tuple(range(rank)) if axes is None else (
        (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes))
    shifts = [sign * (_dims(x)[_axis("fftshift", a, rank)] // 2) for a in axes]
    return roll(x, shifts, axes)


def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the centre (a roll by ``n // 2`` on each axis)."""
    return _shift(x, axes, 1)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of ``fftshift``."""
    return _shift(x, axes, -1)
