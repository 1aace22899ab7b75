"""Lowerings of DotGeneral and ConvGeneralDilated.

Both accumulate as the reference semantics do: in the NumPy result type of
the operand and result types (f16/bf16 as f32), PRED as OR of ANDs, and
round once into the result type.

DotGeneral: operands are seen as ``lhs[batch, m, k]`` and ``rhs[batch, k,
n]``.  An operand whose buffer already holds that order (or the transposed
``[batch, k, m]``, read as a Fortran-ordered view) is used as it is; any
other layout, or a type that needs converting, is packed by one loop over
the operand in its physical order.  Each batch is then one BLAS ``np.dot``
for float and complex accumulation, or :func:`matmul_loop` for integers and
PRED.  The result is written straight into the output buffer when that is
row-major ``[batch, m, n]`` of the accumulation type, else copied through
its layout.

ConvGeneralDilated: im2col.  Generated code packs the kernel into
``wk[group, tap * I + c, o]`` and brings the input to ``x[N, spatial...,
C]`` row-major (the buffer itself when it is laid out so, e.g. NHWC, else
one copy through its layout); the compiled helper :func:`conv_blas` (float,
complex) or :func:`conv_loop` (integers, PRED) then takes the output
positions in chunks of rows, gathers each chunk's patch matrix ``am[row,
tap * I + c]`` (zeros where a tap falls into padding or a hole of the lhs
dilation; negative padding crops) and multiplies it by the group's kernel
matrix, one BLAS ``np.dot`` per chunk and group, into ``y[N / bg,
spatial..., O]`` — the output buffer itself when it is laid out so, else a
copy written through the output's layout.  The helpers are compiled once
per element type (and cached on disk), so a convolution adds little to the
compile time of the graph that holds it.

Generated code calls :func:`matmul_loop`, :func:`conv_blas` and
:func:`conv_loop`; the generated module's header imports them
(every public Numba function of the kernel modules).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from primitives import dot_conv
from tracer.graph import Equation, Literal, Var
from tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, dtype_name, lowerings

__all__ = ["matmul_loop", "conv_blas", "conv_loop"]

# Bytes of im2col patch matrix per chunk: enough rows for BLAS to run at
# speed, few enough to stay in the L1/L2 cache between being gathered and
# multiplied (measured on the CNN benchmark's conv: 64 KiB chunks took 4.3 ms
# of CPU, 512 KiB ones 5.4 ms, the whole matrix at once 4.8 ms).
_PATCH_BYTES = 1 << 16


# -- types ----------------------------------------------------------------------------------

def _work_np(t: PrimitiveType) -> np.dtype:
    """The NumPy type values of ``t`` are computed in (f16 and bf16 in f32)."""
    if t in (PrimitiveType.F16, PrimitiveType.BF16):
        return np.dtype(np.float32)
    return np.dtype(t.numpy_dtype)


def _acc_np(operand: PrimitiveType, out: PrimitiveType) -> np.dtype:
    """The type products are summed in, as the reference's ``_contract`` does."""
    if out is PrimitiveType.PRED:
        return np.dtype(np.bool_)
    acc = np.result_type(_work_np(operand), _work_np(out))
    return np.dtype(np.float32) if acc == np.float16 else acc


def _np_text(dtype: np.dtype) -> str:
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def _storage_is(t: PrimitiveType, dtype: np.dtype) -> bool:
    """Whether a buffer of ``t`` holds values of ``dtype`` directly (not 16-bit float words)."""
    return t not in (PrimitiveType.F16, PrimitiveType.BF16) and np.dtype(t.numpy_dtype) == dtype


def _dense_order(atom: Var | Literal) -> tuple[int, ...] | None:
    """The logical dimensions of size > 1 from most major to most minor in the
    buffer, when it is a dense permutation (no tiles, no padding); else None."""
    if isinstance(atom, Literal):
        return None
    shape = atom.aval.shape
    layout = shape.layout
    if layout.tiles or layout.padded_dimensions is not None:
        return None
    return tuple(d for d in reversed(layout.minor_to_major) if shape.dimensions[d] != 1)


def _significant(dims: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in order if dims[d] != 1)


def _flat(idx: list[str], dims: tuple[int, ...], group: tuple[int, ...]) -> str:
    """Row-major flat index over the logical dimensions in ``group``."""
    terms, stride = [], 1
    for d in reversed(group):
        if dims[d] != 1:
            terms.append(f"{idx[d]} * {stride}" if stride != 1 else idx[d])
        stride *= dims[d]
    return " + ".join(reversed(terms)) or "0"


# -- DotGeneral -------------------------------------------------------------------------------

def _operand_matrices(ctx: LoweringContext, x: Var | Literal, batch: tuple[int, ...],
                      rows: tuple[int, ...], cols: tuple[int, ...], acc: np.dtype,
                      allow_view: bool) -> tuple[str, bool]:
    """``x`` as ``rows x cols`` matrices in type ``acc`` (see :func:`_matrix`): a view
    of ``x``'s buffer when its layout allows (``transposed`` when the buffer holds
    ``[batch, cols, rows]``), else a packed ``[batch, rows, cols]`` copy.
    Returns ``(name, transposed)``."""
    dims = x.aval.dimensions
    nb = math.prod(dims[d] for d in batch)
    nr = math.prod(dims[d] for d in rows)
    nc = math.prod(dims[d] for d in cols)
    order = _dense_order(x)
    if allow_view and order is not None and _storage_is(x.aval.element_type, acc):
        if order == _significant(dims, batch + rows + cols):
            view = ctx.fresh("mv")
            ctx.emit(f"{view} = {ctx.name(x)}.reshape(({nb}, {nr}, {nc}))")
            return view, False
        if order == _significant(dims, batch + cols + rows):
            view = ctx.fresh("mt")
            ctx.emit(f"{view} = {ctx.name(x)}.reshape(({nb}, {nc}, {nr}))")
            return view, True
    name = ctx.fresh("pack")
    ctx.emit(f"{name} = np.empty(({nb}, {nr}, {nc}), {_np_text(acc)})")
    with ctx.loops(x.aval.shape) as idx:
        ctx.emit(f"{name}[{_flat(idx, dims, batch)}, {_flat(idx, dims, rows)}, "
                 f"{_flat(idx, dims, cols)}] = {_np_text(acc)}({ctx.read(x, idx)})")
    return name, False


def _matrix(source: tuple[str, bool], bi: str) -> str:
    """One batch's matrix: ``name[bi]``, or its ``.T`` view for a transposed buffer."""
    name, transposed = source
    return f"{name}[{bi}].T" if transposed else f"{name}[{bi}]"


def _lower_dot_general(ctx: LoweringContext, eq: Equation) -> None:
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    (lc, rc), (lb, rb) = eq.params["dimension_numbers"]
    lfree = tuple(d for d in range(lhs.aval.ndim) if d not in lc and d not in lb)
    rfree = tuple(d for d in range(rhs.aval.ndim) if d not in rc and d not in rb)
    ldims = lhs.aval.dimensions
    nb = math.prod(ldims[d] for d in lb)
    m = math.prod(ldims[d] for d in lfree)
    k = math.prod(ldims[d] for d in lc)
    n = math.prod(rhs.aval.dimensions[d] for d in rfree)
    out_t = out.aval.element_type
    acc = _acc_np(lhs.aval.element_type, out_t)
    blas = acc.kind in "fc"
    name = ctx.alloc(out, zero=nb * m * n == 0 or k == 0 or not blas)
    if nb * m * n == 0 or k == 0:  # nothing to compute, or the empty sum
        return
    a = _operand_matrices(ctx, lhs, lb, lfree, lc, acc, blas)
    b = _operand_matrices(ctx, rhs, rb, rc, rfree, acc, blas)
    out_dims = out.aval.dimensions
    nbd = len(lb)
    direct = _storage_is(out_t, acc) and _dense_order(out) == _significant(
        out_dims, tuple(range(len(out_dims))))
    c = ctx.fresh("prod")
    if direct:
        ctx.emit(f"{c} = {name}.reshape(({nb}, {m}, {n}))")
    else:
        ctx.emit(f"{c} = np.{'empty' if blas else 'zeros'}(({nb}, {m}, {n}), {_np_text(acc)})")
    bi = ctx.fresh("bi")
    with ctx.block(f"for {bi} in range({nb}):"):
        if blas:
            ctx.emit(f"np.dot({_matrix(a, bi)}, {_matrix(b, bi)}, {c}[{bi}])")
        else:
            ctx.emit(f"matmul_loop({_matrix(a, bi)}, {_matrix(b, bi)}, {c}[{bi}])")
    if not direct:
        with ctx.loops(out.aval.shape) as idx:
            batch = _flat(idx, out_dims, tuple(range(nbd)))
            rows = _flat(idx, out_dims, tuple(range(nbd, nbd + len(lfree))))
            cols = _flat(idx, out_dims, tuple(range(nbd + len(lfree), len(out_dims))))
            ctx.write(out, idx, _cast(f"{c}[{batch}, {rows}, {cols}]", out_t))


def _cast(value: str, t: PrimitiveType) -> str:
    return f"{dtype_name(t)}({value})" if t not in (PrimitiveType.F16, PrimitiveType.BF16) \
        else value


# -- ConvGeneralDilated ---------------------------------------------------------------------

def _lower_conv(ctx: LoweringContext, eq: Equation) -> None:
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    p = eq.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    fg, bg = p["feature_group_count"], p["batch_group_count"]
    ld, rd, od = lhs.aval.dimensions, rhs.aval.dimensions, out.aval.dimensions
    ns = len(ld) - 2
    out_c, per_group_c = rd[rhs_spec[0]], rd[rhs_spec[1]]
    taps = [rd[d] for d in rhs_spec[2:]]
    groups = fg * bg
    og = out_c // groups
    kc = per_group_c * math.prod(taps)
    out_t = out.aval.element_type
    acc = _acc_np(lhs.aval.element_type, out_t)
    acc_t = _np_text(acc)
    empty = out.aval.shape.size == 0 or kc == 0
    name = ctx.alloc(out, zero=empty)
    if empty:
        return
    # The kernel as wk[group, tap * I + c, o]: the buffer itself when it is row-major
    # [spatial..., I, O] (HWIO) and there is one group, else a copy.
    wk = ctx.fresh("wk")
    if groups == 1 and _storage_is(rhs.aval.element_type, acc) and _dense_order(rhs) == \
            _significant(rd, (*rhs_spec[2:], rhs_spec[1], rhs_spec[0])):
        ctx.emit(f"{wk} = {ctx.name(rhs)}.reshape((1, {kc}, {og}))")
    else:
        _pack_kernel(ctx, rhs, rhs_spec, wk, groups, kc, og, per_group_c, acc_t)

    # The input as x[N, spatial..., C] and the result as y[N / bg, spatial..., O], both
    # row-major: the buffers themselves when they are laid out so, else copies.
    lhs_order = (lhs_spec[0], *lhs_spec[2:], lhs_spec[1])
    out_order = (out_spec[0], *out_spec[2:], out_spec[1])
    if _storage_is(lhs.aval.element_type, acc) and \
            _dense_order(lhs) == _significant(ld, lhs_order):
        x = ctx.name(lhs)
    else:
        x = ctx.fresh("xc")
        ctx.emit(f"{x} = np.empty({math.prod(ld)}, {acc_t})")
        with ctx.loops(lhs.aval.shape) as idx:
            ctx.emit(f"{x}[{_flat(idx, ld, lhs_order)}] = {acc_t}({ctx.read(lhs, idx)})")
    direct = _storage_is(out_t, acc) and _dense_order(out) == _significant(od, out_order)
    y = name if direct else ctx.fresh("yc")
    if not direct:
        ctx.emit(f"{y} = np.empty({math.prod(od)}, {acc_t})")
    geometry = [ld[lhs_spec[0]] // bg, bg, fg, per_group_c,
                max(1, _PATCH_BYTES // (kc * acc.itemsize)), ns]
    for i in range(ns):
        geometry += [ld[lhs_spec[2 + i]], od[out_spec[2 + i]], taps[i], p["window_strides"][i],
                     p["padding"][i][0], p["lhs_dilation"][i], p["rhs_dilation"][i]]
    helper = "conv_blas" if acc.kind in "fc" else "conv_loop"
    ctx.emit(f"{helper}({x}, {wk}, {y}, np.array({geometry}, np.int64))")
    if not direct:
        with ctx.loops(out.aval.shape) as idx:
            ctx.write(out, idx, _cast(f"{y}[{_flat(idx, od, out_order)}]", out_t))


def _pack_kernel(ctx: LoweringContext, rhs, rhs_spec, wk: str, groups: int, kc: int, og: int,
                 per_group_c: int, acc_t: str) -> None:
    rd = rhs.aval.dimensions
    ctx.emit(f"{wk} = np.empty(({groups}, {kc}, {og}), {acc_t})")
    with ctx.loops(rhs.aval.shape, prefix="k") as idx:
        t_flat = _flat(idx, rd, tuple(rhs_spec[2:]))
        o_full = idx[rhs_spec[0]]
        g, o = (f"{o_full} // {og}", f"{o_full} % {og}") if groups > 1 else ("0", o_full)
        ctx.emit(f"{wk}[{g}, ({t_flat}) * {per_group_c} + {idx[rhs_spec[1]]}, {o}] = "
                 f"{acc_t}({ctx.read(rhs, idx)})")


# -- helpers called from generated code -----------------------------------------------------

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
    falls into padding or a hole of the lhs dilation; and the dimension sizes."""
    ns = geo[5]
    nd = max(ns, 3)
    sizes = np.ones(nd, np.int64)
    counts = np.ones(nd, np.int64)
    taps = np.ones(nd, np.int64)
    for i in range(ns):
        sizes[nd - ns + i] = geo[6 + 7 * i]
        counts[nd - ns + i] = geo[7 + 7 * i]
        taps[nd - ns + i] = geo[8 + 7 * i]
    table = np.zeros((nd, counts.max(), taps.max()), np.int64)
    for i in range(ns):
        d = nd - ns + i
        stride, low, ldil, rdil = geo[9 + 7 * i], geo[10 + 7 * i], geo[11 + 7 * i], geo[12 + 7 * i]
        for p in range(counts[d]):
            for t in range(taps[d]):
                q = p * stride + t * rdil - low  # position in the padded, dilated base
                ok = q >= 0 and q % ldil == 0 and q // ldil < sizes[d]
                table[d, p, t] = q // ldil if ok else -1
    return table, sizes, counts, taps


@njit(cache=True, nogil=True)
def _im2col(x, am, r0, rows, g, geo, table, sizes, counts, taps):
    """Rows ``r0 .. r0 + rows`` of group ``g``'s patch matrix into ``am``:
    ``am[r, tap * I + c]`` for output row r (batch, then output position)."""
    if sizes.shape[0] != 3:
        _im2col_nd(x, am, r0, rows, g, geo, table, sizes, counts, taps)
        return
    nb, bg, fg, cin = geo[0], geo[1], geo[2], geo[3]
    ctot = cin * fg
    cbase = g * cin if fg > 1 else 0
    # (everything in locals: reloading sizes from their arrays in the loop ran 2x slower)
    s0, s1, s2 = sizes[0], sizes[1], sizes[2]
    c0, c1, c2 = counts[0], counts[1], counts[2]
    k0, k1, k2 = taps[0], taps[1], taps[2]
    srcs = np.empty(k0 * k1 * k2, np.int64)  # where each tap's features start in x, or -1
    for rr in range(rows):
        r = r0 + rr
        p2 = r % c2
        r //= c2
        p1 = r % c1
        r //= c1
        p0 = r % c0
        n = r // c0
        nin = g * nb + n if bg > 1 else n
        t = 0
        for t0 in range(k0):
            b0 = table[0, p0, t0]
            for t1 in range(k1):
                b1 = table[1, p1, t1]
                for t2 in range(k2):
                    b2 = table[2, p2, t2]
                    if b0 >= 0 and b1 >= 0 and b2 >= 0:
                        srcs[t] = (((nin * s0 + b0) * s1 + b1) * s2 + b2) * ctot + cbase
                    else:
                        srcs[t] = -1
                    t += 1
        # (a separate loop: fused with the index arithmetic above, the copy ran 10x slower)
        _copy_row(x, am[rr], srcs, cin)


@njit(cache=True, nogil=True)
def _im2col_nd(x, am, r0, rows, g, geo, table, sizes, counts, taps):
    """:func:`_im2col` for more than three spatial dimensions: an odometer over the taps."""
    nb, bg, fg, cin = geo[0], geo[1], geo[2], geo[3]
    ctot = cin * fg
    nd = sizes.shape[0]
    cbase = g * cin if fg > 1 else 0
    srcs = np.empty(taps.prod(), np.int64)
    pos = np.empty(nd, np.int64)
    tap = np.empty(nd, np.int64)
    for rr in range(rows):
        r = r0 + rr
        for i in range(nd - 1, -1, -1):
            pos[i] = r % counts[i]
            r //= counts[i]
        nin = g * nb + r if bg > 1 else r
        tap[:] = 0
        for t in range(srcs.shape[0]):
            src = nin
            for i in range(nd):
                b = table[i, pos[i], tap[i]]
                if b < 0:
                    src = -1
                    break
                src = src * sizes[i] + b
            srcs[t] = src * ctot + cbase if src >= 0 else -1
            i = nd - 1
            while i >= 0:
                tap[i] += 1
                if tap[i] < taps[i]:
                    break
                tap[i] = 0
                i -= 1
        _copy_row(x, am[rr], srcs, cin)


@njit(cache=True, nogil=True, inline="always")
def _copy_row(x, row, srcs, cin):
    """``row[t * cin + c] = x[srcs[t] + c]``, zeros where ``srcs[t] < 0``."""
    col = 0
    for t in range(srcs.shape[0]):
        src = srcs[t]
        if src >= 0:
            for c in range(cin):
                row[col + c] = x[src + c]
        else:
            for c in range(cin):
                row[col + c] = 0
        col += cin


@njit(cache=True, nogil=True)
def conv_blas(x, wk, y, geo):
    """``y[N / bg, spatial..., O] = conv(x[N, spatial..., C], wk[group, tap * I + c, o])``
    (row-major 1-D buffers, float or complex): im2col in chunks of rows, one BLAS
    product per chunk and group.  ``geo``: ``[N / bg, bg, fg, I, rows per chunk,
    spatial rank, then per spatial dimension: size, output size, taps, stride,
    low padding, lhs dilation, rhs dilation]``."""
    table, sizes, counts, taps = _window_tables(geo)
    groups, kc, og = wk.shape
    total = geo[0] * counts.prod()
    chunk = min(geo[4], total)
    am = np.empty((chunk, kc), wk.dtype)
    cm = np.empty((chunk, og), wk.dtype)
    y2 = y.reshape((total, groups * og))
    for g in range(groups):
        for r0 in range(0, total, chunk):
            rows = min(chunk, total - r0)
            _im2col(x, am, r0, rows, g, geo, table, sizes, counts, taps)
            if groups == 1:
                np.dot(am[:rows], wk[0], y2[r0:r0 + rows])
            else:
                np.dot(am[:rows], wk[g], cm[:rows])
                for rr in range(rows):
                    for o in range(og):
                        y2[r0 + rr, g * og + o] = cm[rr, o]


@njit(cache=True, nogil=True)
def conv_loop(x, wk, y, geo):
    """:func:`conv_blas` for integer and bool types, with :func:`matmul_loop`."""
    table, sizes, counts, taps = _window_tables(geo)
    groups, kc, og = wk.shape
    total = geo[0] * counts.prod()
    chunk = min(geo[4], total)
    am = np.empty((chunk, kc), wk.dtype)
    cm = np.empty((chunk, og), wk.dtype)
    y2 = y.reshape((total, groups * og))
    for g in range(groups):
        for r0 in range(0, total, chunk):
            rows = min(chunk, total - r0)
            _im2col(x, am, r0, rows, g, geo, table, sizes, counts, taps)
            cm[:] = 0
            matmul_loop(am[:rows], wk[g], cm[:rows])
            for rr in range(rows):
                for o in range(og):
                    y2[r0 + rr, g * og + o] = cm[rr, o]


lowerings[dot_conv.dot_general_p] = _lower_dot_general
lowerings[dot_conv.conv_general_dilated_p] = _lower_conv
