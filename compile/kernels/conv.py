"""The convolution kernels generated code calls (``compile/lowering/dot_conv.py``
writes the calls): im2col in chunks of rows with one BLAS product per chunk
and group (:func:`conv_blas`, float and complex; through a symbol per type,
:mod:`compile.extern`), or :func:`matmul_loop` for integers and PRED
(:func:`conv_loop`).  Compiled once per element type and cached on disk.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from .blas import dot_blas

__all__ = ["matmul_loop", "conv_blas", "conv_blas_call", "conv_loop", "conv_blas_f32",
           "conv_blas_f64",
           "conv_blas_c64", "conv_blas_c128"]


@njit(cache=True, nogil=True)
def matmul_loop(a, b, c):
    """``c += a @ b`` for 2-D integer or bool arrays: integers wrap in ``c``'s type;
    for bool, ``c[i, j]`` becomes true when some ``a[i, p] and b[p, j]`` is (OR of ANDs)."""
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for p in range(k):
            x = a[i, p]
            if x:
                for j in range(n):
                    c[i, j] += x * b[p, j]


@njit(cache=True, nogil=True)
def _window_tables(geo):
    """Per spatial dimension i (at least 3, trivial ones first), the base
    coordinate read by output position p and kernel tap t, or -1 where that
    falls into padding or a hole of the lhs dilation; the dimension sizes,
    output sizes and taps; and the strides of x and y along them."""
    ns = geo[5]
    nd = max(ns, 3)
    sizes = np.ones(nd, np.int64)
    counts = np.ones(nd, np.int64)
    taps = np.ones(nd, np.int64)
    xstr = np.zeros(nd, np.int64)
    ystr = np.zeros(nd, np.int64)
    xb, yb = 6 + 7 * ns, 8 + 8 * ns
    for i in range(ns):
        sizes[nd - ns + i] = geo[6 + 7 * i]
        counts[nd - ns + i] = geo[7 + 7 * i]
        taps[nd - ns + i] = geo[8 + 7 * i]
        xstr[nd - ns + i] = geo[xb + 1 + i]
        ystr[nd - ns + i] = geo[yb + 1 + i]
    table = np.zeros((nd, counts.max(), taps.max()), np.int64)
    for i in range(ns):
        d = nd - ns + i
        stride, low, ldil, rdil = geo[9 + 7 * i], geo[10 + 7 * i], geo[11 + 7 * i], geo[12 + 7 * i]
        for p in range(counts[d]):
            for t in range(taps[d]):
                q = p * stride + t * rdil - low  # position in the padded, dilated base
                ok = q >= 0 and q % ldil == 0 and q // ldil < sizes[d]
                table[d, p, t] = q // ldil if ok else -1
    return table, sizes, counts, taps, xstr, ystr


@njit(cache=True, nogil=True)
def _last_runs(table, counts, taps, merge):
    """For each output position p of the most minor spatial dimension, its taps as
    runs: ``starts[p, j]`` (the base coordinate of the run's first tap, or -1 for
    a run of taps in padding or holes) and ``lens[p, j]`` taps, ``nruns[p]`` runs.
    With ``merge``, taps reading adjacent base positions form one run (one copy)."""
    d = counts.shape[0] - 1
    k = taps[d]
    starts = np.empty((counts[d], k), np.int64)
    lens = np.empty((counts[d], k), np.int64)
    nruns = np.zeros(counts[d], np.int64)
    for p in range(counts[d]):
        j = -1
        for t in range(k):
            b = table[d, p, t]
            if j >= 0 and ((b < 0 and starts[p, j] < 0) or (
                    merge and b >= 0 and starts[p, j] >= 0 and b == starts[p, j] + lens[p, j])):
                lens[p, j] += 1
            else:
                j += 1
                starts[p, j] = b
                lens[p, j] = 1
        nruns[p] = j + 1
    return starts, lens, nruns


@njit(cache=True, nogil=True)
def _im2col(x, am, r0, rows, g, geo, table, sizes, counts, taps, xstr, starts, lens, nruns):
    """Rows ``r0 .. r0 + rows`` of group ``g``'s patch matrix into ``am``:
    ``am[r, tap * I + c]`` for output row r (batch, then output position), read
    from ``x`` through its strides (features at unit stride).

    Walks the rows in order, a line (all positions of the most minor spatial
    dimension) at a time: per line, where each tap of the other spatial
    dimensions starts in ``x``; per row, one copy per run of taps of the minor
    dimension (see :func:`_last_runs`)."""
    nb, bg, fg, cin = geo[0], geo[1], geo[2], geo[3]
    xn = geo[6 + 7 * geo[5]]
    cbase = g * cin if fg > 1 else 0
    nd = sizes.shape[0]
    last = nd - 1
    npre = 1
    for i in range(last):
        npre *= taps[i]
    xlast, clast = xstr[last], counts[last]
    bases = np.empty(npre, np.int64)  # per tap of the other dimensions: its offset, or -1
    pos = np.empty(nd, np.int64)
    tap = np.empty(nd, np.int64)
    r = r0
    for i in range(last, -1, -1):
        pos[i] = r % counts[i]
        r //= counts[i]
    n = r
    line_start = True
    # (unsigned positions: with signed ones, Numba's negative-index wraparound turned
    # the copies into scatters, 3x slower)
    zeros = np.uint64(taps[last] * cin)
    for rr in range(rows):
        if line_start:
            nin = g * nb + n if bg > 1 else n
            tap[:] = 0
            for q in range(npre):
                base = nin * xn + cbase
                for i in range(last):
                    b = table[i, pos[i], tap[i]]
                    if b < 0:
                        base = -1
                        break
                    base += b * xstr[i]
                bases[q] = base
                i = last - 1
                while i >= 0:
                    tap[i] += 1
                    if tap[i] < taps[i]:
                        break
                    tap[i] = 0
                    i -= 1
            line_start = False
        row = am[rr]
        p = pos[last]
        col = np.uint64(0)
        for q in range(npre):
            base = bases[q]
            if base < 0:
                for c in range(zeros):
                    row[col + c] = 0
                col += zeros
                continue
            for j in range(nruns[p]):
                b = starts[p, j]
                length = np.uint64(lens[p, j] * cin)
                if b < 0:
                    for c in range(length):
                        row[col + c] = 0
                else:
                    src = np.uint64(base + b * xlast)
                    for c in range(length):
                        row[col + c] = x[src + c]
                col += length
        pos[last] += 1
        if pos[last] == clast:  # the next line
            pos[last] = 0
            line_start = True
            i = last - 1
            while i >= 0:
                pos[i] += 1
                if pos[i] < counts[i]:
                    break
                pos[i] = 0
                i -= 1
            if i < 0:
                n += 1


@njit(cache=True, nogil=True)
def _row_block(counts, strides, nb, nstride):
    """Output rows (batch, then positions) fold into one stride over aligned blocks
    of rows: returns ``(rows per block, stride)``."""
    block, inner = 1, -1
    for j in range(counts.shape[0] - 1, -2, -1):
        cnt, st = (counts[j], strides[j]) if j >= 0 else (nb, nstride)
        if cnt == 1:
            continue
        if inner < 0:
            inner = st
        elif st != inner * block:
            return block, inner
        block *= cnt
    return block, max(inner, 1)


@njit(cache=True, nogil=True)
def _row_offset(r, counts, strides, nstride):
    """The buffer offset of output row r (batch, then positions) through ``strides``."""
    off = 0
    for i in range(counts.shape[0] - 1, -1, -1):
        off += (r % counts[i]) * strides[i]
        r //= counts[i]
    return off + r * nstride


@njit(cache=True, nogil=True)
def _is_pointwise(geo):
    """Whether every output position reads exactly its own input pixel (1x1 taps,
    unit strides, no padding or dilation): the input rows are the patch matrix."""
    for i in range(geo[5]):
        j = 6 + 7 * i
        if geo[j + 2] != 1 or geo[j + 1] != geo[j] or geo[j + 3] != 1 or geo[j + 4] != 0 or \
                geo[j + 5] != 1:
            return False
    return True


@njit(cache=True, nogil=True)
def conv_blas(x, w, y, geo):
    """``y[N / bg, spatial..., O] = conv(x[N, spatial..., C], w)`` for float or
    complex 1-D buffers read and written through the strides in ``geo``, the
    kernel as a strided matrix ``[tap * I + c, o]`` per group: im2col in chunks of
    rows, one BLAS product per chunk and group (per aligned block of rows where
    the rows of ``y`` do not fold into one stride), written straight into ``y``;
    a pointwise convolution multiplies the rows of ``x`` as they are.  Complex
    outputs that come out infinite or NaN are summed again with XLA's product
    (:func:`dot_blas`), as the reference does.

    ``geo``: ``[N / bg, bg, fg, I, rows per chunk, spatial rank ns, then per
    spatial dimension: size, output size, taps, stride, low padding, lhs
    dilation, rhs dilation; then the strides of x (batch, spatial..., feature),
    of y (batch, spatial..., feature) and of the kernel (group, row, column);
    then O / groups]``."""
    table, sizes, counts, taps, xstr, ystr = _window_tables(geo)
    nb, bg, fg, cin, ns = geo[0], geo[1], geo[2], geo[3], geo[5]
    xn, yn, yo = geo[6 + 7 * ns], geo[8 + 8 * ns], geo[9 + 9 * ns]
    kg, kr, kcol = geo[10 + 9 * ns], geo[11 + 9 * ns], geo[12 + 9 * ns]
    groups = fg * bg
    kc = cin * taps.prod()
    og = geo[13 + 9 * ns]
    total = nb * counts.prod()
    block, ry = _row_block(counts, ystr, nb, yn)
    # (np.int64(1), not 1: a constant would compile dot_blas again for it)
    if _is_pointwise(geo):
        xblock, rx = _row_block(counts, xstr, nb, xn)
        block = min(block, xblock)
        for g in range(groups):
            for r0 in range(0, total, block):
                xo = _row_offset(r0 + (g * total if bg > 1 else 0), counts, xstr, xn) + \
                    (g * cin if fg > 1 else 0)
                dot_blas(x, xo, rx, np.int64(1), w, g * kg, kr, kcol, y,
                         _row_offset(r0, counts, ystr, yn) + g * og * yo, ry, yo,
                         block, og, kc, 0.0)
        return
    starts, lens, nruns = _last_runs(table, counts, taps, xstr[-1] == cin)
    chunk = min(geo[4], total)
    am = np.empty((chunk, kc), y.dtype)
    a = am.reshape(-1)
    for g in range(groups):
        for r0 in range(0, total, chunk):
            rows = min(chunk, total - r0)
            _im2col(x, am, r0, rows, g, geo, table, sizes, counts, taps, xstr, starts, lens,
                    nruns)
            b0 = r0
            while b0 < r0 + rows:
                b1 = min(r0 + rows, (b0 // block + 1) * block)
                dot_blas(a, (b0 - r0) * kc, kc, np.int64(1), w, g * kg, kr, kcol, y,
                         _row_offset(b0, counts, ystr, yn) + g * og * yo, ry, yo,
                         b1 - b0, og, kc, 0.0)
                b0 = b1


@njit(cache=True, nogil=True)
def conv_loop(x, w, y, geo):
    """:func:`conv_blas` for integer and bool types, with :func:`matmul_loop`."""
    table, sizes, counts, taps, xstr, ystr = _window_tables(geo)
    nb, bg, fg, cin, ns = geo[0], geo[1], geo[2], geo[3], geo[5]
    yn, yo = geo[8 + 8 * ns], geo[9 + 9 * ns]
    kg, kr, kcol = geo[10 + 9 * ns], geo[11 + 9 * ns], geo[12 + 9 * ns]
    groups = fg * bg
    kc = cin * taps.prod()
    og = geo[13 + 9 * ns]
    total = nb * counts.prod()
    starts, lens, nruns = _last_runs(table, counts, taps, xstr[-1] == cin)
    chunk = min(geo[4], total)
    am = np.empty((chunk, kc), y.dtype)
    cm = np.empty((chunk, og), y.dtype)
    wg = np.empty((kc, og), y.dtype)
    for g in range(groups):
        for i in range(kc):
            for o in range(og):
                wg[i, o] = w[g * kg + i * kr + o * kcol]
        for r0 in range(0, total, chunk):
            rows = min(chunk, total - r0)
            _im2col(x, am, r0, rows, g, geo, table, sizes, counts, taps, xstr, starts, lens,
                    nruns)
            cm[:] = 0
            matmul_loop(am[:rows], wg, cm[:rows])
            for rr in range(rows):
                off = _row_offset(r0 + rr, counts, ystr, yn) + g * og * yo
                for o in range(og):
                    y[off + o * yo] = cm[rr, o]


@njit(cache=True, nogil=True)
def conv_blas_call(x, w, y, geo):
    """:func:`conv_blas` as its own cached function: the code behind the
    symbol of :func:`_conv_entry`, and what a program calls directly when no
    operand needs packing (a library call)."""
    conv_blas(x, w, y, geo)


def _conv_entry(suffix: str, dtype):
    """:func:`conv_blas` for C-contiguous ``dtype`` buffers, called through a
    symbol (:mod:`compile.extern`): linked into every graph that convolves, it
    was optimised again each time (~1.5 s of LLVM per convolution)."""
    from ..extern import Entry
    arr = types.Array(dtype, 1, "C")
    sig = (arr, arr, arr, types.Array(types.int64, 1, "C"))
    return Entry(f"conv_blas_{suffix}", conv_blas_call, sig, outputs=(2,)).make_intrinsic()


conv_blas_f32 = _conv_entry("f32", types.float32)
conv_blas_f64 = _conv_entry("f64", types.float64)
conv_blas_c64 = _conv_entry("c64", types.complex64)
conv_blas_c128 = _conv_entry("c128", types.complex128)
