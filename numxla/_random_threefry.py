"""Threefry-2x32 keys and random bits, bit for bit as ``jax.random``'s default
implementation (``threefry2x32`` with ``jax_threefry_partitionable=True``, the
default since JAX 0.5 and in 0.10).

A key here is raw ``uint32[2]`` data (``_random_keys`` unwraps typed keys).
Everything is written with numxla ops (``uint32`` add, xor and shifts), so
the same code runs eagerly, under ``jit``, under ``vmap`` (over a batch of
keys) and inside ``grad`` (keys and bits carry no tangent: their ops are
integer ops).

* ``threefry2x32(k1, k2, x1, x2)``: the 20-round block cipher (Salmon et al.,
  "Parallel random numbers: as easy as 1, 2, 3") on pairs of words.
* ``random_bits(key, width, shape)``: element ``i`` (row-major) encrypts the
  64-bit counter ``i`` (high word, low word) under ``key``; 32-bit outputs are
  the xor of the two result words, 64-bit ones join them (high word first),
  8/16-bit ones truncate the xor.
* ``split(key, shape)``: the same encryption, both words kept, as new keys.
* A key array of ``uint32[*batch, 2]`` (for the samplers' internal use)
  gives each key's bits or splits: results of ``(*batch, *shape)``, what
  ``vmap`` over the keys gives, without tracing a batched loop.
* ``fold_in(key, data)``: the original (non-partitionable) hash of the pair
  ``[0, data]``: one block, whose two result words are the new key.
* ``seed(s)``: ``[s >> 32, s & 0xFFFFFFFF]``; without x64 the seed is first
  taken modulo 2**32 (JAX reads it as a 32-bit integer), so the high word is 0.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
from numxla.tracer.config import config
from numxla.tracer.core import EagerArray, Tracer, abstractify

__all__ = ["threefry2x32", "random_bits", "split_key", "fold_in_key", "seed_key", "UINT_DTYPES"]

_U32 = np.uint32
# Rotation distances of the even and odd groups of four rounds, and the key
# schedule's parity constant (Threefish's C240 truncated to 32 bits).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = _U32(0x1BD11BDA)
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}


def _rotl(x: Any, distance: Any) -> Any:
    return lax.bitwise_or(lax.shift_left(x, distance),
                          lax.shift_right_logical(x, lax.sub(_U32(32), distance)))


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 (20 rounds) of the word pairs ``(x1, x2)`` under the key
    ``(k1, k2)``; ``x1``/``x2`` are ``uint32`` arrays of one shape, ``k1``/``k2``
    ``uint32`` scalars or arrays of a prefix of that shape (a key per leading
    index). Five groups of four rounds, each group followed by a
    key injection (the next words of the key schedule, and the group number).
    The groups are a ``fori_loop``, as in JAX's CPU lowering: it keeps the
    compiled kernels small."""
    shape = abstractify(x1).dimensions
    wide = lambda w: lax.broadcast_in_dim(  # noqa: E731 (along the leading dimensions)
        w, shape, tuple(range(len(abstractify(w).dimensions))))
    k3 = lax.bitwise_xor(lax.bitwise_xor(k1, k2), _PARITY)

    def group(i: Any, state: tuple) -> tuple:
        x1, x2, ka, kb, kc = state   # the schedule, rotated by one word per group
        odd = lax.eq(lax.rem(i, np.int32(2)), np.int32(1))
        for even_distance, odd_distance in zip(*_ROTATIONS):
            distance = lax.select(odd, _U32(odd_distance), _U32(even_distance))
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(x1, _rotl(x2, wide(distance)))
        count = lax.convert_element_type(lax.add(i, np.int32(1)), _U32)
        return lax.add(x1, wide(kb)), lax.add(x2, wide(lax.add(kc, count))), kb, kc, ka

    state = (lax.add(x1, wide(k1)), lax.add(x2, wide(k2)), k1, k2, k3)
    x1, x2, *_ = lax.fori_loop(0, 5, group, state)
    return x1, x2


def _words(key: Any) -> tuple[Any, Any]:
    """The key's two words, scalars (arrays of the batch shape for a key array)."""
    batch = abstractify(key).dimensions[:-1]
    zeros = (0,) * len(batch)
    return tuple(lax.reshape(lax.slice(key, (*zeros, i), (*batch, i + 1)), batch)
                 for i in (0, 1))


def _counters(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The row-major element index of ``shape`` as a 64-bit counter: (high, low) words."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise NotImplementedError(f"random bits of {size} elements (2**32 or more)")
    low = lax.reshape(lax.iota(_U32, size), shape)
    return lax.broadcast_in_dim(_U32(0), shape, ()), low


def _hash_counters(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    k1, k2 = _words(key)
    hi, lo = _counters(shape)
    batch = abstractify(k1).dimensions
    if batch:   # every key hashes the same counters
        out, dims = (*batch, *shape), tuple(range(len(batch), len(batch) + len(shape)))
        hi, lo = (lax.broadcast_in_dim(w, out, dims) for w in (hi, lo))
    return threefry2x32(k1, k2, hi, lo)


def random_bits(key: Any, width: int, shape: Sequence[int]) -> Any:
    """``uint{width}`` random bits of ``shape`` from a single key (of
    ``(*batch, *shape)`` from keys of ``(*batch, 2)``)."""
    shape = tuple(int(d) for d in shape)
    if width not in UINT_DTYPES:
        raise TypeError(f"random bits of width {width}: requires 8-, 16-, 32- or 64-bit")
    if 0 in shape:
        batch = abstractify(key).dimensions[:-1]
        return lax.broadcast_in_dim(UINT_DTYPES[width].type(0), (*batch, *shape), ())
    b1, b2 = _hash_counters(key, shape)
    if width == 64:
        hi, lo = (lax.convert_element_type(b, np.uint64) for b in (b1, b2))
        return lax.bitwise_or(lax.shift_left(hi, np.uint64(32)), lo)
    bits = lax.bitwise_xor(b1, b2)
    return bits if width == 32 else lax.convert_element_type(bits, UINT_DTYPES[width])


def split_key(key: Any, shape: Sequence[int]) -> Any:
    """Keys of ``(*shape, 2)``: each element's counter encrypted, both words
    kept (``(*batch, *shape, 2)`` from keys of ``(*batch, 2)``)."""
    shape = tuple(int(d) for d in shape)
    out = (*abstractify(key).dimensions[:-1], *shape)
    if 0 in out:
        return lax.broadcast_in_dim(_U32(0), (*out, 2), ())
    b1, b2 = _hash_counters(key, shape)
    return lax.concatenate([lax.expand_dims(b, (len(out),)) for b in (b1, b2)], len(out))


def fold_in_key(key: Any, data: Any) -> Any:
    """The key ``threefry(key, [0, data])``: JAX hashes the seed-like pair of
    ``data`` (a ``uint32`` scalar) as one block."""
    k1, k2 = _words(key)
    y1, y2 = threefry2x32(k1, k2, lax.broadcast_in_dim(_U32(0), (1,), ()),
                          lax.broadcast_in_dim(data, (1,), ()))
    return lax.concatenate([y1, y2], 0)


def seed_key(seed: Any) -> Any:
    """The key of an integer seed (a Python int, a NumPy integer or a traced
    integer scalar)."""
    if isinstance(seed, (bool, np.bool_)) or not _is_integer(seed):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r:.80}")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, Tracer):
        s = int(seed) if config.jax_enable_x64 else int(seed) % 2 ** 32
        return np.array([(s >> 32) % 2 ** 32, s % 2 ** 32], dtype=_U32).view(EagerArray)
    aval = abstractify(seed)
    if aval.dimensions:
        raise TypeError(f"PRNG key seed must be a scalar; got an array of shape "
                        f"{aval.dimensions}. Use vmap for batching")
    if aval.dtype.itemsize == 8:
        hi = lax.convert_element_type(lax.shift_right_logical(seed, aval.dtype.type(32)), _U32)
    else:
        hi = lax.broadcast_in_dim(_U32(0), (), ())
    lo = lax.convert_element_type(seed, _U32)
    return lax.concatenate([lax.expand_dims(w, (0,)) for w in (hi, lo)], 0)


def _is_integer(x: Any) -> bool:
    if isinstance(x, (int, np.integer)):
        return True
    try:
        return np.issubdtype(abstractify(x).dtype, np.integer)
    except TypeError:
        return False
