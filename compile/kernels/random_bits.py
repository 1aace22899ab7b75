"""The random-bit kernels generated code calls (``compile/lowering/rng.py``
writes the calls): XLA's Threefry-2x32 and Philox-4x32 ciphers on 32-bit
words held in uint64 values, and the seed of compiled ``rng_uniform`` /
``rng_normal``."""
from __future__ import annotations

import numpy as np
from numba import njit

from numxla.primitives import rng

__all__ = ["seed", "threefry2x32_words", "philox4x32_words"]


@njit(cache=True)
def _seed(value):
    np.random.seed(value)


def seed(value: int) -> None:
    """Reseed the generator behind compiled ``rng_uniform``/``rng_normal``
    (Numba's per-thread state: seeds the calling thread)."""
    _seed(int(value) % 2 ** 32)


# --------------------------------------------------------------------------
# the ciphers, on 32-bit words held in uint64 values
# --------------------------------------------------------------------------

_PARITY = np.uint64(rng._THREEFRY_PARITY)
_ROTATIONS = tuple(np.uint64(r) for group in rng._THREEFRY_ROTATIONS for r in group)
_MULTIPLIERS = tuple(np.uint64(v) for v in rng._PHILOX_MULTIPLIERS)
_WEYL = tuple(np.uint64(v) for v in rng._PHILOX_WEYL)

@njit(cache=True, nogil=True)
def threefry2x32_words(k0, k1, x0, x1):
    """Threefry-2x32-20 of the counter words ``(x0, x1)`` under key ``(k0, k1)``;
    every word a 32-bit value held in a uint64."""
    m = np.uint64(0xFFFFFFFF)
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0 = (x0 + k0) & m
    x1 = (x1 + k1) & m
    for blk in range(5):
        for q in range(4):
            r = _ROTATIONS[(blk % 2) * 4 + q]
            x0 = (x0 + x1) & m
            x1 = (((x1 << r) | (x1 >> (np.uint64(32) - r))) & m) ^ x0
        x0 = (x0 + ks[(blk + 1) % 3]) & m
        x1 = (x1 + ks[(blk + 2) % 3] + np.uint64(blk + 1)) & m
    return x0, x1


@njit(cache=True, nogil=True)
def philox4x32_words(k0, k1, x0, x1, x2, x3):
    """Philox-4x32-10 of the counter words ``x0..x3`` under key ``(k0, k1)``."""
    m = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = x0 * _MULTIPLIERS[0]
        p1 = x2 * _MULTIPLIERS[1]
        x0, x1, x2, x3 = ((p1 >> np.uint64(32)) ^ x1 ^ k0, p1 & m,
                          (p0 >> np.uint64(32)) ^ x3 ^ k1, p0 & m)
        k0 = (k0 + _WEYL[0]) & m
        k1 = (k1 + _WEYL[1]) & m
    return x0, x1, x2, x3
