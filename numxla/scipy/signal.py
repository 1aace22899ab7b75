"""``jax.scipy.signal``: direct convolution and correlation of N-d arrays
(``convolve``, ``correlate``, ``convolve2d``, ``correlate2d``,
``fftconvolve``), as JAX computes them: one ``conv_general_dilated``; and
spectral analysis (``stft``, ``istft``, ``welch``, ``csd``, ``detrend``,
``get_window``) from ``_signal_spectral``."""
from __future__ import annotations

from typing import Any

import numxla.primitives as lax
import numxla.primitives.numpy as xnp

from ._signal_spectral import csd, detrend, get_window, istft, stft, welch
from ._util import promote_inexact

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "stft",
           "istft", "welch", "csd", "detrend", "get_window"]


def _convolve_nd(in1: Any, in2: Any, mode: str) -> Any:
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = promote_inexact(in1, in2)
    if xnp.ndim(in1) != xnp.ndim(in2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if xnp.ndim(in1) == 0:
        return in1 * in2
    s1, s2 = xnp.shape(in1), xnp.shape(in2)
    no_swap = all(a >= b for a, b in zip(s1, s2))
    swap = all(a <= b for a, b in zip(s1, s2))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = s2
    if swap:
        in1, in2 = in2, in1
    shape = xnp.shape(in2)
    in2 = xnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    out = lax.conv_general_dilated(in1[None, None], in2[None, None], (1,) * len(shape), padding)
    return out[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """The N-d convolution of ``in1`` and ``in2`` ("full", "same" or "valid")."""
    return _convolve_nd(in1, in2, mode)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """The N-d cross-correlation: ``convolve(in1, flip(conj(in2)))``."""
    return _convolve_nd(in1, xnp.flip(xnp.conj(xnp.asarray(in2))), mode)


def _check_2d(fn: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if xnp.ndim(in1) != 2 or xnp.ndim(in2) != 2:
        raise ValueError(f"{fn}() only supports 2-dimensional inputs.")
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{fn}() only supports boundary='fill', fillvalue=0")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0, precision: Any = None) -> Any:
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0, precision: Any = None) -> Any:
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    return correlate(in1, in2, mode)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """``convolve`` (computed directly: the result is the same)."""
    if axes is not None:
        raise NotImplementedError("fftconvolve: axes is not supported")
    return _convolve_nd(in1, in2, mode)
