"""``jax.nn.dot_product_attention``, JAX's "xla" implementation: scaled
``Q K^T`` logits (plus ``bias``), masked (``mask``, ``is_causal``, sequence
lengths, a local window) with a large negative number, a float32 softmax,
and the weighted sum of ``V``; grouped-query attention when ``key``/``value``
have fewer heads than ``query``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives.numpy as xnp
from ..scipy._util import dtype_of, logsumexp

__all__ = ["dot_product_attention"]


def _as_4d(t: Any) -> Any:
    t = xnp.asarray(t)
    return xnp.reshape(t, (1,) * (4 - t.ndim) + tuple(t.shape)) if t.ndim < 4 else t


def _check(t: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and dtype_of(t) != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {dtype_of(t)}")
    if any(s != -1 and d != s for d, s in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {tuple(shape)}: but got {tuple(t.shape)}")


def _grouped(t: Any, k: int, g: int) -> Any:
    """A ``(B, N|1, T, S)`` bias or mask as ``(B, K|1, G|1, T, S)``."""
    if t is None:
        return None
    b, n, tt, s = t.shape
    return xnp.reshape(t, (b, 1, 1, tt, s) if n == 1 else (b, k, g, tt, s))


def _mask(logits_shape: tuple, mask: Any, is_causal: bool, q_len: Any, kv_len: Any,
          window: tuple[int, int] | None) -> Any:
    """The combined boolean mask, broadcastable to ``(B, K, G, T, S)``, or None."""
    t, s = logits_shape[-2:]
    parts = [] if mask is None else [mask]
    q_pos, k_pos = np.arange(t)[:, None], np.arange(s)[None, :]
    if is_causal:
        parts.append(np.tril(np.ones((t, s), bool)))
    if window is not None:
        left, right = window
        parts.append((q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_len is not None:
        parts.append(xnp.reshape(xnp.arange(t)[None, :] < q_len[:, None], (-1, 1, 1, t, 1)))
    if kv_len is not None:
        parts.append(xnp.reshape(xnp.arange(s)[None, :] < kv_len[:, None], (-1, 1, 1, 1, s)))
    if not parts:
        return None
    combined = parts[0]
    for p in parts[1:]:
        combined = xnp.logical_and(combined, p)
    return combined


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """``softmax(Q K^T * scale + bias) V`` per head, on ``(B, T, N, H)`` (or
    ``(T, N, H)``) queries and ``(B, S, K, H)`` keys/values (N a multiple of K).
    ``return_residual`` also returns the logsumexp of the logits, ``(B, T, N)``."""
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = tuple(xnp.asarray(query).shape)
    q, k, v = _as_4d(query), _as_4d(key), _as_4d(value)
    bias = None if bias is None else _as_4d(bias)
    mask = None if mask is None else _as_4d(mask)
    q_len = None if query_seq_lengths is None else xnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else xnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, n_kv, h = k.shape
    _check(v, (b, s, n_kv, h), dtype_of(k), "value")
    _check(q, (b, -1, -1, h), dtype_of(k), "query")
    _check(mask, (-1,) * 4, np.dtype(bool), "mask")
    _check(bias, (-1,) * 4, None, "bias")
    _check(q_len, (b,), np.dtype(np.int32), "query_seq_lengths")
    _check(kv_len, (b,), np.dtype(np.int32), "key_value_seq_lengths")
    t, n = q.shape[1], q.shape[2]
    if n % n_kv:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {n} vs {n_kv}")
    g = n // n_kv
    scale = 1.0 / np.sqrt(h) if scale is None else scale

    logits_dtype = np.promote_types(dtype_of(q), np.float32)
    qg = xnp.reshape(q, (b, t, n_kv, g, h)).astype(logits_dtype)
    logits = xnp.einsum("btkgh,bskh->bkgts", qg, k.astype(logits_dtype))
    logits = logits * xnp.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, n_kv, g)).astype(logits_dtype)
    combined = _mask(logits.shape, _grouped(mask, n_kv, g), is_causal, q_len, kv_len,
                     local_window_size)
    if combined is not None:
        large_negative = -0.7 * min(np.finfo(logits_dtype).max, np.finfo(np.float32).max)
        logits = xnp.where(combined, logits, xnp.asarray(large_negative, logits_dtype))
    logits = logits.astype(np.float32)
    from . import softmax
    probs = softmax(logits, axis=-1).astype(dtype_of(k))
    encoded = xnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        valid = xnp.arange(t)[None, :] < q_len[:, None]
        encoded = encoded * xnp.reshape(valid, (b, t, 1, 1, 1)).astype(dtype_of(encoded))
    out = xnp.reshape(encoded, output_shape)
    if not return_residual:
        return out
    lse = logsumexp(logits, axis=-1).astype(dtype_of(k))  # (B, K, G, T)
    lse = xnp.reshape(xnp.transpose(lse, (0, 3, 1, 2)), output_shape[:-1])
    from numxla.primitives.side_effects import stop_gradient
    return out, stop_gradient(lse)
