"""Spectral analysis for ``jax.scipy.signal``: ``stft``, ``istft``,
``welch``, ``csd``, ``detrend`` (and ``get_window``, SciPy's windows as
arrays), with SciPy's signatures, defaults and conventions.

A signal is cut into overlapping segments by one gather (a static index
grid), each segment is detrended and windowed, and transformed by an FFT;
``istft`` overlap-adds the inverse transforms with one scatter-add and
divides by the summed squared window (Griffin & Lim, 1984).  ``welch``
averages the segments' periodograms (Welch, 1967), by their mean or by
their median over the median's bias for chi-squared(2) variables,
``1 - 1/2 + 1/3 - ...`` up to ``n`` terms (Allen et al., FINDCHIRP, 2012).
Everything is made of ops, so it traces, batches and differentiates.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import numpy as np
import scipy.signal

import numxla.primitives.numpy as xnp

from ._util import dtype_of, promote_inexact

__all__ = ["stft", "istft", "welch", "csd", "detrend", "get_window"]


def get_window(window: Any, Nx: int, fftbins: bool = True) -> Any:
    """SciPy's window of length ``Nx`` (a name, or a ``(name, parameter)``
    tuple), periodic for spectral analysis with ``fftbins``."""
    return xnp.asarray(scipy.signal.get_window(window, Nx, fftbins=fftbins))


def _window(window: Any, nperseg: int | None, default: int, length: int | None
            ) -> tuple[np.ndarray | Any, int]:
    """The window and the segment length: a named window of ``nperseg``
    (``default`` when None, at most ``length``), or an array given as is."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = default
        if length is not None and nperseg > length:
            warnings.warn(f"nperseg = {nperseg} is greater than input length = {length}, "
                          f"using nperseg = {length}", stacklevel=3)
            nperseg = length
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
        return scipy.signal.get_window(window, nperseg), int(nperseg)
    win = xnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length is not None and win.shape[0] > length:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, int(win.shape[0])


def _overlap(nperseg: int, noverlap: int | None, nfft: int | None) -> tuple[int, int]:
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    return nfft, noverlap


def _detrend_pieces(x: Any, kind: str, breaks: Sequence[int]) -> Any:
    """``x`` (last axis) less its mean, or less its least-squares line on
    each piece between consecutive ``breaks``."""
    if kind in ("constant", "c"):
        return x - xnp.mean(x, axis=-1, keepdims=True)
    if kind not in ("linear", "l"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    pieces = []
    for lo, hi in zip(breaks[:-1], breaks[1:]):
        y = x[..., lo:hi]
        t = np.arange(hi - lo, dtype=np.float64)
        t = t - t.mean()
        tt = float((t * t).sum())
        slope = xnp.sum(y * t.astype(dtype_of(y)), axis=-1, keepdims=True) / (tt or 1.0)
        fit = xnp.mean(y, axis=-1, keepdims=True) + slope * t.astype(dtype_of(y))
        pieces.append(y - fit)
    return pieces[0] if len(pieces) == 1 else xnp.concatenate(pieces, axis=-1)


def detrend(data: Any, axis: int = -1, type: str = "linear",  # noqa: A002 (SciPy's name)
            bp: Any = 0, overwrite_data: None = None) -> Any:
    """``data`` less its mean (``type='constant'``) or less a least-squares
    line on each piece between the breakpoints ``bp`` (``'linear'``)."""
    del overwrite_data
    (x,) = promote_inexact(data)
    x = xnp.moveaxis(x, axis, -1)
    n = x.shape[-1]
    cuts = np.unique(np.r_[0, np.asarray(bp, dtype=int).ravel(), n])
    if cuts[0] < 0 or cuts[-1] > n:
        raise ValueError("Breakpoints must be less than length of data along given axis.")
    return xnp.moveaxis(_detrend_pieces(x, type, [int(c) for c in cuts]), -1, axis)


def _segment_detrend(kind: Any) -> Callable[[Any], Any] | None:
    if kind is False or kind is None:
        return None
    if callable(kind):
        return kind
    return lambda seg: _detrend_pieces(seg, kind, [0, seg.shape[-1]])


def _extend(x: Any, n: int, boundary: str) -> Any:
    """``x`` extended by ``n`` samples at each end of its last axis."""
    if boundary == "zeros":
        return xnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])
    first, last = x[..., :1], x[..., -1:]
    if boundary == "constant":
        reps = (1,) * (x.ndim - 1) + (n,)
        return xnp.concatenate([xnp.tile(first, reps), x, xnp.tile(last, reps)], axis=-1)
    left = xnp.flip(x[..., 1:n + 1], -1)       # mirrored about the end samples
    right = xnp.flip(x[..., -n - 1:-1], -1)
    if boundary == "odd":
        left, right = 2 * first - left, 2 * last - right
    elif boundary != "even":
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"['even', 'odd', 'constant', 'zeros', None]")
    return xnp.concatenate([left, x, right], axis=-1)


def _spectra(x: Any, y: Any | None, fs: Any, window: Any, nperseg: int | None,
             noverlap: int | None, nfft: int | None, detrend_kind: Any,
             return_onesided: bool, scaling: str, axis: int, mode: str,
             boundary: str | None = None, padded: bool = False
             ) -> tuple[Any, Any, Any]:
    """The segments' spectra, ``(freqs, times, S)`` with ``S[..., t, f]``: the
    windowed FFTs (``mode='stft'``) or the cross-spectra ``conj(X) Y``
    (``'psd'``), scaled as a ``'density'`` or ``'spectrum'``."""
    same = y is None or y is x
    x, y = (promote_inexact(x)[0], None) if same else promote_inexact(x, y)
    x = xnp.moveaxis(x, axis, -1)
    if not same:
        y = xnp.moveaxis(y, axis, -1)
        nx, ny = x.shape[-1], y.shape[-1]      # the shorter one padded with zeros
        if nx != ny:
            pad = lambda v, k: xnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, k)])  # noqa: E731
            x, y = (pad(x, ny - nx), y) if nx < ny else (x, pad(y, nx - ny))
        shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        x = xnp.broadcast_to(x, shape + x.shape[-1:])
        y = xnp.broadcast_to(y, shape + y.shape[-1:])
    complex_input = np.issubdtype(dtype_of(x), np.complexfloating)
    real_dtype = np.finfo(dtype_of(x)).dtype
    length = x.shape[-1]
    win, nperseg = _window(window, nperseg, 256, length if mode == "psd" else None)
    nfft, noverlap = _overlap(nperseg, noverlap, nfft)
    step = nperseg - noverlap
    win = xnp.asarray(win).astype(real_dtype)
    if scaling == "density":
        scale = 1.0 / (fs * xnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / xnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling!r}")
    if mode == "stft":
        scale = xnp.sqrt(scale)
    if return_onesided and complex_input:
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
        return_onesided = False

    def prepared(v):
        if boundary is not None:
            v = _extend(v, nperseg // 2, boundary)
        if padded:
            extra = -(v.shape[-1] - nperseg) % step % nperseg
            v = xnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, extra)])
        return v

    def spectrum(v):
        count = (v.shape[-1] - noverlap) // step
        segments = v[..., np.arange(count)[:, None] * step + np.arange(nperseg)]
        trend = _segment_detrend(detrend_kind)
        if trend is not None:
            segments = trend(segments)
        segments = segments * win.astype(segments.dtype)
        return xnp.fft.rfft(segments, n=nfft) if return_onesided else \
            xnp.fft.fft(segments, n=nfft)

    x = prepared(x)
    result = spectrum(x)
    if mode == "psd":
        result = xnp.conj(result) * (result if same else spectrum(prepared(y)))
    result = result * scale.astype(result.dtype)
    if mode == "psd" and return_onesided:
        last = -1 if nfft % 2 == 0 else None   # the Nyquist bin (even nfft) is not doubled
        result = result.at[..., 1:last].multiply(2)
    freqs = (np.fft.rfftfreq if return_onesided else np.fft.fftfreq)(nfft, 1.0)
    freqs = xnp.asarray(freqs, real_dtype) * fs
    times = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step)
    if boundary is not None:
        times = times - nperseg / 2
    times = xnp.asarray(times, real_dtype) / fs
    if same and mode == "psd":
        result = xnp.real(result)
    return freqs.astype(real_dtype), times.astype(real_dtype), result


def stft(x: Any, fs: Any = 1.0, window: str = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform: ``(f, t, Zxx)``, ``Zxx[..., f, t]``
    with the frequencies where ``axis`` was, scaled as SciPy's
    ``scaling='spectrum'``."""
    freqs, times, z = _spectra(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                               return_onesided, "spectrum", axis, "stft", boundary, padded)
    return freqs, times, xnp.moveaxis(z, -1, axis if axis >= 0 else axis - 1)


def csd(x: Any, y: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method:
    ``(f, Pxy)``, the segments' cross-spectra averaged (``'mean'`` or
    ``'median'``)."""
    freqs, _, pxy = _spectra(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                             return_onesided, scaling, axis, "psd")
    if pxy.ndim >= 2 and pxy.size > 0:
        count = pxy.shape[-2]
        if count > 1:
            if average == "mean":
                pxy = xnp.mean(pxy, axis=-2)
            elif average == "median":
                bias = 1.0 + sum(1.0 / (2 * k + 1) - 1.0 / (2 * k)
                                 for k in range(1, (count - 1) // 2 + 1))
                if np.issubdtype(dtype_of(pxy), np.complexfloating):
                    pxy = xnp.median(pxy.real, axis=-2) + 1j * xnp.median(pxy.imag, axis=-2)
                else:
                    pxy = xnp.median(pxy, axis=-2)
                pxy = pxy / bias
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = pxy[..., 0, :]
    return freqs, xnp.moveaxis(pxy, -1, axis)


def welch(x: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """The power spectral density by Welch's method: ``(f, Pxx)``."""
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, scaling, axis, average)
    return freqs, xnp.real(pxx)


def istft(Zxx: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2
          ) -> tuple[Any, Any]:
    """The inverse of ``stft``: ``(t, x)``, the segments' inverse FFTs
    windowed, overlap-added and divided by the overlap-added squared window."""
    z = xnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    time_axis, freq_axis = time_axis % z.ndim, freq_axis % z.ndim
    if time_axis == freq_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    if not np.issubdtype(dtype_of(z), np.complexfloating):
        z = z.astype(np.result_type(dtype_of(z), np.complex64))
    count, n_freqs = z.shape[time_axis], z.shape[freq_axis]
    n_default = 2 * (n_freqs - 1) if input_onesided else n_freqs
    win, nperseg = _window(window, nperseg, n_default, None)
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    nfft, noverlap = _overlap(nperseg, noverlap, nfft)
    step = nperseg - noverlap
    z = xnp.moveaxis(z, (freq_axis, time_axis), (-1, -2))        # [..., t, f]
    segments = xnp.fft.irfft(z, n=nfft) if input_onesided else xnp.fft.ifft(z, n=nfft)
    segments = segments[..., :nperseg]
    real_dtype = np.finfo(dtype_of(segments)).dtype
    win = xnp.asarray(win).astype(real_dtype)
    segments = segments * (win * xnp.sum(win)).astype(segments.dtype)   # 'spectrum' scaling
    size = nperseg + (count - 1) * step
    where = (np.arange(count)[:, None] * step + np.arange(nperseg)).ravel()
    lead = segments.shape[:-2]
    x = xnp.zeros(lead + (size,), segments.dtype).at[..., where].add(
        segments.reshape(lead + (count * nperseg,)))
    norm = xnp.zeros((size,), real_dtype).at[where].add(xnp.tile(win * win, count))
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:size - half], norm[half:size - half]
    x = x / xnp.where(norm > 1e-10, norm, 1.0).astype(x.dtype)
    if input_onesided:
        x = xnp.real(x)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        x = xnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    # SciPy's and JAX's times count along the first axis (not always the time axis)
    times = xnp.asarray(np.arange(x.shape[0]), real_dtype) / fs
    return times.astype(real_dtype), x
