"""Windowed reductions as library kernels: ``reduce_window_{max,min,sum}``
and ``select_and_scatter_add`` of up to four dimensions, compiled once per
element type and cached on disk, with the geometry passed at run time (a
max pool and its gradient compile no code of their own).

``geometry`` holds, per dimension (leading dimensions of size 1 pad the
rank to four), the numbers the generated lowering
(``compile/lowering/windows.py``) bakes into its loops: the window maps
position ``k`` of window ``o`` to base coordinate ``o * stride + k *
dilation - pad_low``, which is skipped outside ``[0, base)`` (padding is no
element).  Buffers are dense and addressed through per-dimension strides.
Elements are visited in the generated lowering's order, so results equal
it bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .scalar import nan_max, nan_min

__all__ = ["reduce_window_monoid", "select_and_scatter_add_ge", "select_and_scatter_add_le"]

WINDOW_RANK = 4
# reduce_window: result size, base size, window, stride, window dilation, low
# padding, operand stride, result stride (per dimension, dimensions major first)
REDUCE_WINDOW_FIELDS = 8
# select_and_scatter_add: windows (the source's size), base size, window,
# stride, window dilation, low padding, operand stride, source stride, result stride
SCATTER_FIELDS = 9
MAX, MIN, SUM = 0, 1, 2

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTIONS)
def reduce_window_monoid(x, out, geometry, monoid, identity):
    """``out[o] = identity (op) x[window of o]...`` for ``monoid`` MAX, MIN
    (NaN-propagating) or SUM, the window walked with dimension 3 innermost.
    The geometry is read into locals first: a store into ``out`` could
    otherwise alias it, and every loop would reload it."""
    g = geometry.reshape((WINDOW_RANK, REDUCE_WINDOW_FIELDS))
    n0, n1, n2, n3 = g[0, 0], g[1, 0], g[2, 0], g[3, 0]
    b0, b1, b2, b3 = g[0, 1], g[1, 1], g[2, 1], g[3, 1]
    w0, w1, w2, w3 = g[0, 2], g[1, 2], g[2, 2], g[3, 2]
    s0, s1, s2, s3 = g[0, 3], g[1, 3], g[2, 3], g[3, 3]
    d0, d1, d2, d3 = g[0, 4], g[1, 4], g[2, 4], g[3, 4]
    p0, p1, p2, p3 = g[0, 5], g[1, 5], g[2, 5], g[3, 5]
    x0, x1, x2, x3 = g[0, 6], g[1, 6], g[2, 6], g[3, 6]
    y0, y1, y2, y3 = g[0, 7], g[1, 7], g[2, 7], g[3, 7]
    init = out.dtype.type(identity)
    for o0 in range(n0):
        for o1 in range(n1):
            for o2 in range(n2):
                for o3 in range(n3):
                    acc = init
                    for k0 in range(w0):
                        c0 = o0 * s0 + k0 * d0 - p0
                        if c0 < 0 or c0 >= b0:
                            continue
                        for k1 in range(w1):
                            c1 = o1 * s1 + k1 * d1 - p1
                            if c1 < 0 or c1 >= b1:
                                continue
                            for k2 in range(w2):
                                c2 = o2 * s2 + k2 * d2 - p2
                                if c2 < 0 or c2 >= b2:
                                    continue
                                row = c0 * x0 + c1 * x1 + c2 * x2
                                for k3 in range(w3):
                                    c3 = o3 * s3 + k3 * d3 - p3
                                    if c3 < 0 or c3 >= b3:
                                        continue
                                    v = x[row + c3 * x3]
                                    if monoid == MAX:
                                        acc = nan_max(acc, v)
                                    elif monoid == MIN:
                                        acc = nan_min(acc, v)
                                    else:
                                        acc = acc + v
                    out[o0 * y0 + o1 * y1 + o2 * y2 + o3 * y3] = acc


@njit(**_OPTIONS)
def _select_and_scatter_add(source, operand, out, geometry, greater):
    """Each window (``source`` element, in row-major order) picks its first
    element that no later one beats (``>=`` when ``greater``, else ``<=``),
    scanning in row-major order, and adds its ``source`` value there."""
    g = geometry.reshape((WINDOW_RANK, SCATTER_FIELDS))
    out[:] = 0
    for w0 in range(g[0, 0]):
        for w1 in range(g[1, 0]):
            for w2 in range(g[2, 0]):
                for w3 in range(g[3, 0]):
                    found = False
                    current = operand.dtype.type(0)
                    at = 0
                    for k0 in range(g[0, 2]):
                        c0 = w0 * g[0, 3] + k0 * g[0, 4] - g[0, 5]
                        if c0 < 0 or c0 >= g[0, 1]:
                            continue
                        for k1 in range(g[1, 2]):
                            c1 = w1 * g[1, 3] + k1 * g[1, 4] - g[1, 5]
                            if c1 < 0 or c1 >= g[1, 1]:
                                continue
                            for k2 in range(g[2, 2]):
                                c2 = w2 * g[2, 3] + k2 * g[2, 4] - g[2, 5]
                                if c2 < 0 or c2 >= g[2, 1]:
                                    continue
                                for k3 in range(g[3, 2]):
                                    c3 = w3 * g[3, 3] + k3 * g[3, 4] - g[3, 5]
                                    if c3 < 0 or c3 >= g[3, 1]:
                                        continue
                                    v = operand[c0 * g[0, 6] + c1 * g[1, 6] + c2 * g[2, 6] +
                                                c3 * g[3, 6]]
                                    if found:
                                        keep = current >= v if greater else current <= v
                                        take = not keep
                                    else:
                                        take = True
                                    if take:
                                        found = True
                                        current = v
                                        at = c0 * g[0, 8] + c1 * g[1, 8] + c2 * g[2, 8] + \
                                            c3 * g[3, 8]
                    if found:
                        out[at] = out[at] + source[w0 * g[0, 7] + w1 * g[1, 7] +
                                                   w2 * g[2, 7] + w3 * g[3, 7]]


@njit(**_OPTIONS)
def select_and_scatter_add_ge(source, operand, out, geometry):
    """The gradient of a max pool."""
    _select_and_scatter_add(source, operand, out, geometry, True)


@njit(**_OPTIONS)
def select_and_scatter_add_le(source, operand, out, geometry):
    """The gradient of a min pool."""
    _select_and_scatter_add(source, operand, out, geometry, False)
