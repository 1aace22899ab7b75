"""Scalar helpers called from generated kernels, with XLA's semantics where
they differ from Python's and NumPy's."""
from __future__ import annotations

from numba import njit

__all__ = ["div_signed", "div_unsigned", "nan_max", "nan_min"]


@njit(cache=True, inline="always")
def div_signed(x, y):
    """Truncating division; x/0 = -1; INT_MIN/-1 = INT_MIN (wraps)."""
    if y == 0:
        return ~(x ^ x)
    if y == -1:
        return -x
    q = x // y  # floor division; adjust toward zero
    if q * y != x and (x < 0) != (y < 0):
        q += 1
    return q


@njit(cache=True, inline="always")
def div_unsigned(x, y):
    """x/0 has all bits set."""
    if y == 0:
        return ~(x ^ x)
    return x // y


@njit(cache=True, inline="always")
def nan_max(x, y):
    """XLA's max: NaN if either operand is NaN."""
    if x != x or x > y:
        return x
    return y


@njit(cache=True, inline="always")
def nan_min(x, y):
    if x != x or x < y:
        return x
    return y
