"""``jax.image``: resampling images (any array) to new sizes.

``scale_and_translate`` maps output pixel centres back into the input
(``(i + 0.5 - translation) / scale - 0.5``) and weighs the input pixels by a
kernel (triangle for linear, Keys cubic, Lanczos 3 / 5), one dimension at
a time; when shrinking with ``antialias`` the kernel is widened by the
shrink factor, so every input pixel contributes.  Weights are normalised to
sum to one, and outputs whose sample point falls outside the input get
zero.  ``resize`` is that with the scale of the size change; its
``nearest`` picks the pixel under each output centre.
"""
from __future__ import annotations

import enum
from typing import Any, Callable, Sequence

import numpy as np

import numxla.primitives.numpy as xnp

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                 "tricubic": "CUBIC"}
        if s not in names:
            raise ValueError(f"Unknown resize method {s!r}")
        return ResizeMethod[names[s]]


def _triangle(x: Any) -> Any:
    return xnp.maximum(0.0, 1.0 - xnp.abs(x))


def _keys_cubic(x: Any) -> Any:
    """Keys' cubic convolution kernel with a = -0.5."""
    x = xnp.abs(x)
    inner = (1.5 * x - 2.5) * x * x + 1.0
    outer = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return xnp.where(x <= 1.0, inner, xnp.where(x < 2.0, outer, 0.0))


def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        return xnp.where(xnp.abs(x) < radius, xnp.sinc(x) * xnp.sinc(x / radius), 0.0)
    return kernel


_KERNELS = {ResizeMethod.LINEAR: _triangle, ResizeMethod.CUBIC: _keys_cubic,
            ResizeMethod.LANCZOS3: _lanczos(3.0), ResizeMethod.LANCZOS5: _lanczos(5.0)}


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)


def _weights(in_size: int, out_size: int, scale: Any, translation: Any,
             kernel: Callable[[Any], Any], antialias: bool, dtype: Any) -> Any:
    """The (in_size, out_size) matrix taking one dimension to its new size."""
    inv_scale = 1.0 / scale
    kernel_scale = xnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample = (xnp.arange(out_size, dtype=dtype) + 0.5 - translation) * inv_scale - 0.5
    x = xnp.abs(sample[None, :] - xnp.arange(in_size, dtype=dtype)[:, None]) / kernel_scale
    w = kernel(x)
    total = xnp.sum(w, axis=0, keepdims=True)
    tiny = 1000 * float(np.finfo(np.dtype(dtype)).eps)
    w = xnp.where(xnp.abs(total) > tiny, w / xnp.where(total == 0, 1.0, total), 0.0)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return xnp.where(inside[None, :], w, 0.0).astype(dtype)


def _apply(image: Any, axis: int, weights: Any, precision: Any) -> Any:
    """Contract ``image``'s ``axis`` with ``weights``, the new axis in its place."""
    out = xnp.tensordot(image, weights, axes=([axis], [0]), precision=precision)
    return xnp.moveaxis(out, -1, axis)


def _float_type(image: Any) -> Any:
    """The image's type if inexact, else the default float (integers are resampled as floats)."""
    from numxla.scipy._util import default_float
    dt = xnp.asarray(image).dtype
    return dt if xnp.issubdtype(dt, xnp.inexact) else default_float()


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod = "linear",
                        antialias: bool = True, precision: Any = None) -> Any:
    """``image`` resampled to ``shape`` along ``spatial_dims``: output pixel
    ``i`` samples the input at ``(i + 0.5 - translation) / scale - 0.5``."""
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: method 'nearest' is not supported; use "
                         "'linear', 'cubic', 'lanczos3' or 'lanczos5'")
    image = xnp.asarray(image)
    dtype = _float_type(image)
    out = image.astype(dtype)
    scale = xnp.broadcast_to(xnp.asarray(scale, dtype=dtype), (len(spatial_dims),))
    translation = xnp.broadcast_to(xnp.asarray(translation, dtype=dtype), (len(spatial_dims),))
    for k, d in enumerate(spatial_dims):
        w = _weights(image.shape[d], int(shape[d]), scale[k], translation[k], _KERNELS[m],
                     antialias, dtype)
        out = _apply(out, d, w, precision)
    return out


def _resize_nearest(image: Any, shape: Sequence[int]) -> Any:
    for d, (n_in, n_out) in enumerate(zip(image.shape, shape)):
        if n_in == n_out:
            continue
        centres = (np.arange(n_out, dtype=np.float32) + 0.5) * np.float32(n_in / n_out)
        index = np.minimum(np.floor(centres).astype(np.int32), n_in - 1)
        image = xnp.take(image, index, axis=d)
    return image


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = None) -> Any:
    """``image`` resampled to ``shape`` (same rank): every dimension whose
    size changes is rescaled by ``new / old``."""
    image = xnp.asarray(image)
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"resize: shape {shape} must have the image's rank {image.ndim}")
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    if not dims:
        return image.astype(_float_type(image))
    scale = [shape[d] / image.shape[d] for d in dims]
    return scale_and_translate(image, shape, dims, scale, [0.0] * len(dims), m, antialias,
                               precision)
