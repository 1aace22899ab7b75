"""Lowerings of DotGeneral and ConvGeneralDilated.

Both accumulate as the reference semantics do: in the NumPy result type of
the operand and result types (f16/bf16 as f32), PRED as OR of ANDs, and
round once into the result type.

DotGeneral: operands are seen as ``lhs[batch, m, k]`` and ``rhs[batch, k,
n]``.  For float and complex accumulation, every matrix is handed to BLAS
where it lies, through :func:`compile.kernels.blas.dot_blas`: an operand or
result in a strided layout (any permutation of the dimensions, padded or
not) of the accumulation type is addressed through its strides, row- or
column-major with its leading dimension, so transposed operands, batch
dimensions anywhere and column-major results cost no copy.  Batch
dimensions, and dimensions of M, N or K whose strides do not fold into one,
become loops around the BLAS calls (accumulating over K).  Only a tiled
layout, a type that needs converting, or a fold so poor that the BLAS calls
would be tiny, packs an operand (one loop over it in its physical order) or
takes the result through a row-major scratch buffer; of the plans BLAS can
take, the one copying fewest elements wins.  Integers and PRED pack both
operands and run :func:`matmul_loop` per batch.

ConvGeneralDilated: im2col.  The kernel is read as one matrix ``[tap * I +
c, o]`` per group through its strides when the taps and input features
fold into one stride (HWIO and the like), else packed; the input is read
as ``x[N, spatial..., C]`` through its strides when the features are its
most minor dimension (NHWC, padded or permuted), else copied so; the
result is written as ``y[N / bg, spatial..., O]`` through its strides when
features or positions lie at unit stride (NHWC, NCHW...), else through a
row-major scratch buffer.  The compiled helper :func:`conv_blas` (float,
complex) or :func:`conv_loop` (integers, PRED) then takes the output
positions in chunks of rows, gathers each chunk's patch matrix ``am[row,
tap * I + c]`` (zeros where a tap falls into padding or a hole of the lhs
dilation; negative padding crops; taps reading adjacent pixels copied as
one run) and multiplies it by the group's kernel matrix, one BLAS product
per chunk and group, straight into the group's columns of ``y``.  A
pointwise convolution (1x1 taps, unit strides, no padding) multiplies the
rows of ``x`` in place, with no patch matrix.  The helpers are compiled
once per element type (and cached on disk), so a convolution adds little
to the compile time of the graph that holds it.

Generated code calls :func:`compile.kernels.blas.dot_blas`,
:func:`matmul_loop`, :func:`conv_blas` and :func:`conv_loop`; the generated
module's header imports them (every public Numba function of the kernel
modules).
"""
from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np
from numba import njit, types

from primitives import dot_conv
from tracer.graph import Equation, Literal, Var
from tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, dtype_name
from ..registry import lowerings
from .alloc import empty_buf, zeros_buf  # noqa: F401  (generated code calls them)
from .blas import dot_blas

__all__ = ["matmul_loop", "conv_blas", "conv_loop", "conv_blas_f32", "conv_blas_f64",
           "conv_blas_c64", "conv_blas_c128"]

# Generated code calls dot_blas through its pre-compiled entry for the type
# (:mod:`compile.extern`), not a copy linked into the graph.
_DOT_ENTRY = {np.dtype(np.float32): "dot_blas_f32", np.dtype(np.float64): "dot_blas_f64",
              np.dtype(np.complex64): "dot_blas_c64", np.dtype(np.complex128): "dot_blas_c128"}
_CONV_ENTRY = {dtype: name.replace("dot_", "conv_") for dtype, name in _DOT_ENTRY.items()}

# Bytes of im2col patch matrix per chunk: enough rows for BLAS to run at
# speed, few enough to stay in the L1/L2 cache between being gathered and
# multiplied (measured on the CNN benchmark's conv: 64 KiB chunks took 4.3 ms
# of CPU, 512 KiB ones 5.4 ms, the whole matrix at once 4.8 ms).  Products
# this small also run on one BLAS thread (OpenBLAS's small-matrix kernel):
# larger chunks that OpenBLAS splits over two threads were 1.5x faster on an
# idle two-core machine, but 5-30x slower when another process held one of
# the cores, each of the many calls waiting for a descheduled worker.
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


# -- strided layouts -----------------------------------------------------------------------

def _strides(atom: Var | Literal) -> list[int] | None:
    """The buffer stride of each logical dimension of ``atom`` when its layout is
    strided (a permutation, maybe padded; no tiles), else None."""
    if isinstance(atom, Literal):
        return None
    shape = atom.aval.shape
    layout = shape.layout
    sizes = layout.padded_dimensions or shape.dimensions
    if layout.tiles or any(p < d for p, d in zip(sizes, shape.dimensions)):
        return None
    strides, s = [0] * len(sizes), 1
    for d in layout.minor_to_major:
        strides[d] = s
        s *= sizes[d]
    return strides


def _row_major_strides(dims: tuple[int, ...], order: tuple[int, ...]) -> list[int]:
    """Strides of a buffer holding the logical dimensions row-major in ``order``."""
    strides, s = [0] * len(dims), 1
    for d in reversed(order):
        strides[d] = s
        s *= dims[d]
    return strides


# -- DotGeneral -------------------------------------------------------------------------------

def _merged(pairs, sizes, sx, sy) -> list[tuple[list[tuple[int, int, int]], tuple[int, int, int]]]:
    """Ways to see the dimensions ``pairs`` (``(dx, dy)``: the same dimension in
    two matrices X and Y, with strides ``sx``, ``sy``) as one BLAS dimension
    plus loops: ``(loops, (size, x stride, y stride))`` with each loop as
    ``(size, x stride, y stride)``.  The BLAS dimension takes the dimensions
    that fold into one stride in both matrices, from the most minor (in X's
    order, or in Y's) up."""
    items = [(n, sx[dx], sy[dy]) for (dx, dy), n in zip(pairs, sizes) if n != 1]
    if not items:
        return [([], (1, 0, 0))]
    ways = []
    for key in (lambda t: (t[1], t[2]), lambda t: (t[2], t[1])):
        order = sorted(items, key=key, reverse=True)
        size, tx, ty = order[-1]
        j = len(order) - 1
        while j > 0 and order[j - 1][1] == tx * size and order[j - 1][2] == ty * size:
            j -= 1
            size *= order[j][0]
        way = (order[:j], (size, tx, ty))
        if way not in ways:
            ways.append(way)
    return ways


def _col_major_ld(r: int, c: int, sr: int, sc: int) -> int:
    """As :func:`compile.kernels.blas._col_major_ld`: an ``r x c`` matrix with
    strides ``(sr, sc)`` as a column-major BLAS matrix: its leading dimension, or 0."""
    if r != 1 and sr != 1:
        return 0
    if c == 1:
        return max(r, 1)
    return sc if sc >= max(r, 1) else 0


def _blas_ready(m, n, k, a, b, c) -> bool:
    """Whether :func:`dot_blas` hands these strided matrices to BLAS as they are."""
    def ok(r, cols, s):
        return _col_major_ld(r, cols, *s) > 0 or _col_major_ld(cols, r, s[1], s[0]) > 0
    return ok(m, n, c) and ok(m, k, a) and ok(k, n, b)


# A BLAS call this small is not worth looping over: copy the operands instead.
_MIN_LOOPED_WORK = 4096


def _dot_plan(dims, lhs_s, rhs_s, out_s, groups):
    """The loops and the BLAS product for strided lhs, rhs and out, or None.

    ``groups`` holds the batch, M, N and K dimensions as (lhs, rhs or out)
    pairs.  Batch dimensions are loops; the M, N and K dimensions are each
    folded into one BLAS dimension where their strides allow (else further
    loops, accumulating over K).  Returns ``(loops, (m, n, k), a, b, c)``: loops
    as ``(size, lhs stride, rhs stride, out stride, over_k)``, and each matrix's
    ``(row stride, column stride)``."""
    ldims, rdims = dims
    batch, mg, ng, kg = groups
    loops = [(ldims[l], lhs_s[l], rhs_s[r], out_s[o], False)
             for l, r, o in batch if ldims[l] != 1]
    best = None
    for m_loops, (m, am, cm) in _merged([(l, o) for l, o in mg], [ldims[l] for l, _ in mg],
                                        lhs_s, out_s):
        for n_loops, (n, bn, cn) in _merged([(r, o) for r, o in ng],
                                            [rdims[r] for r, _ in ng], rhs_s, out_s):
            for k_loops, (k, ak, bk) in _merged(kg, [ldims[l] for l, _ in kg], lhs_s, rhs_s):
                if not _blas_ready(m, n, k, (am, ak), (bk, bn), (cm, cn)):
                    continue
                extra = ([(s, x, 0, y, False) for s, x, y in m_loops] +
                         [(s, 0, x, y, False) for s, x, y in n_loops] +
                         [(s, x, y, 0, True) for s, x, y in k_loops])
                count = math.prod(e[0] for e in extra)
                if count > 1 and m * n * k < _MIN_LOOPED_WORK:
                    continue
                if best is None or count < best[0]:
                    best = (count, (loops + extra, (m, n, k), (am, ak), (bk, bn), (cm, cn)))
    return None if best is None else best[1]


def _pack(ctx: LoweringContext, x: Var | Literal, order: tuple[int, ...], acc: np.dtype) -> str:
    """A copy of ``x`` in type ``acc``, row-major over its logical dimensions in ``order``."""
    dims = x.aval.dimensions
    name = ctx.fresh("pack")
    ctx.emit(f"{name} = empty_buf({math.prod(dims)}, {_np_text(acc)})")
    with ctx.loops(x.aval.shape) as idx:
        ctx.emit(f"{name}[{_flat(idx, dims, order)}] = {_np_text(acc)}({ctx.read(x, idx)})")
    return name


def _lower_dot_general(ctx: LoweringContext, eq: Equation) -> None:
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    (lc, rc), (lb, rb) = eq.params["dimension_numbers"]
    lfree = tuple(d for d in range(lhs.aval.ndim) if d not in lc and d not in lb)
    rfree = tuple(d for d in range(rhs.aval.ndim) if d not in rc and d not in rb)
    ldims, rdims = lhs.aval.dimensions, rhs.aval.dimensions
    nb = math.prod(ldims[d] for d in lb)
    m = math.prod(ldims[d] for d in lfree)
    k = math.prod(ldims[d] for d in lc)
    n = math.prod(rdims[d] for d in rfree)
    out_t = out.aval.element_type
    acc = _acc_np(lhs.aval.element_type, out_t)
    blas = acc.kind in "fc"
    name = ctx.alloc(out, zero=nb * m * n == 0 or k == 0 or not blas)
    if nb * m * n == 0 or k == 0:  # nothing to compute, or the empty sum
        return
    if not blas:
        _lower_dot_loop(ctx, eq, lfree, rfree, acc, name)
        return
    out_dims = out.aval.dimensions
    nbd, nm = len(lb), len(lfree)
    groups = (list(zip(lb, rb, range(nbd))), list(zip(lfree, range(nbd, nbd + nm))),
              list(zip(rfree, range(nbd + nm, len(out_dims)))), list(zip(lc, rc)))
    lhs_pack_order, rhs_pack_order = lb + lfree + lc, rb + rc + rfree
    # Each operand as it is when its buffer holds values of the accumulation type
    # in a strided layout, else packed; the result into the output buffer, else
    # through a row-major scratch buffer.  The cheapest such plan (fewest elements
    # copied) that BLAS takes wins; packing all three always works.
    choices = []
    for pack_l, pack_r, temp_o in itertools.product((False, True), repeat=3):
        ls = _row_major_strides(ldims, lhs_pack_order) if pack_l else \
            (_strides(lhs) if _storage_is(lhs.aval.element_type, acc) else None)
        rs = _row_major_strides(rdims, rhs_pack_order) if pack_r else \
            (_strides(rhs) if _storage_is(rhs.aval.element_type, acc) else None)
        os_ = _row_major_strides(out_dims, tuple(range(len(out_dims)))) if temp_o else \
            (_strides(out) if _storage_is(out_t, acc) else None)
        if ls is None or rs is None or os_ is None:
            continue
        plan = _dot_plan((ldims, rdims), ls, rs, os_, groups)
        if plan is not None:
            cost = pack_l * nb * m * k + pack_r * nb * k * n + temp_o * nb * m * n
            choices.append((cost, len(choices), pack_l, pack_r, temp_o, plan))
    _, _, pack_l, pack_r, temp_o, plan = min(choices)
    a = _pack(ctx, lhs, lhs_pack_order, acc) if pack_l else ctx.name(lhs)
    b = _pack(ctx, rhs, rhs_pack_order, acc) if pack_r else ctx.name(rhs)
    if temp_o:
        c = ctx.fresh("prod")
        ctx.emit(f"{c} = empty_buf({nb * m * n}, {_np_text(acc)})")
    else:
        c = name
    loops, (bm, bn, bk), (ars, acs), (brs, bcs), (crs, ccs) = plan
    offsets = [[], [], []]
    k_vars = []
    with contextlib.ExitStack() as stack:
        for size, sa, sb, sc, over_k in loops:
            v = ctx.fresh("l")
            stack.enter_context(ctx.block(f"for {v} in range({size}):"))
            for off, s in zip(offsets, (sa, sb, sc)):
                if s:
                    off.append(f"{v} * {s}" if s != 1 else v)
            if over_k:
                k_vars.append(v)
        ao, bo, co = (" + ".join(off) or "0" for off in offsets)
        beta = f"0.0 if {' + '.join(k_vars)} == 0 else 1.0" if k_vars else "0.0"
        ctx.emit(f"{_DOT_ENTRY[acc]}({a}, {ao}, {ars}, {acs}, {b}, {bo}, {brs}, {bcs}, {c}, {co}, "
                 f"{crs}, {ccs}, {bm}, {bn}, {bk}, {beta})")
    if temp_o:
        with ctx.loops(out.aval.shape) as idx:
            ctx.write(out, idx, _cast(f"{c}[{_flat(idx, out_dims, tuple(range(len(out_dims))))}]",
                                      out_t))


def _lower_dot_loop(ctx: LoweringContext, eq: Equation, lfree, rfree, acc: np.dtype,
                    name: str) -> None:
    """Integer and PRED products: both operands packed into ``[batch, rows, cols]``,
    :func:`matmul_loop` per batch, into the output buffer when that is row-major."""
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    (lc, rc), (lb, rb) = eq.params["dimension_numbers"]
    ldims, rdims = lhs.aval.dimensions, rhs.aval.dimensions
    nb = math.prod(ldims[d] for d in lb)
    m = math.prod(ldims[d] for d in lfree)
    k = math.prod(ldims[d] for d in lc)
    n = math.prod(rdims[d] for d in rfree)
    out_t = out.aval.element_type
    a = _pack(ctx, lhs, lb + lfree + lc, acc)
    b = _pack(ctx, rhs, rb + rc + rfree, acc)
    out_dims = out.aval.dimensions
    direct = _storage_is(out_t, acc) and _dense_order(out) == _significant(
        out_dims, tuple(range(len(out_dims))))
    c = name if direct else ctx.fresh("prod")
    if not direct:
        ctx.emit(f"{c} = zeros_buf({nb * m * n}, {_np_text(acc)})")
    a3, b3, c3 = ctx.fresh("mat"), ctx.fresh("mat"), ctx.fresh("mat")
    ctx.emit(f"{a3} = {a}.reshape(({nb}, {m}, {k}))")
    ctx.emit(f"{b3} = {b}.reshape(({nb}, {k}, {n}))")
    ctx.emit(f"{c3} = {c}.reshape(({nb}, {m}, {n}))")
    bi = ctx.fresh("bi")
    with ctx.block(f"for {bi} in range({nb}):"):
        ctx.emit(f"matmul_loop({a3}[{bi}], {b3}[{bi}], {c3}[{bi}])")
    if not direct:
        with ctx.loops(out.aval.shape) as idx:
            flat = _flat(idx, out_dims, tuple(range(len(out_dims))))
            ctx.write(out, idx, _cast(f"{c}[{flat}]", out_t))


def _cast(value: str, t: PrimitiveType) -> str:
    return f"{dtype_name(t)}({value})" if t not in (PrimitiveType.F16, PrimitiveType.BF16) \
        else value


# -- ConvGeneralDilated ---------------------------------------------------------------------

def _folded(dims: list[int], strides: list[int]) -> int | None:
    """The stride of the row-major flattening of ``dims`` (listed major to minor)
    when their strides fold into one, else None."""
    inner, size = None, 1
    for n, s in zip(reversed(dims), reversed(strides)):
        if n == 1:
            continue
        if inner is None:
            inner = s
        elif s != inner * size:
            return None
        size *= n
    return 1 if inner is None else inner


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
    # The kernel as matrices wk[tap * I + c, o] per group: read in the buffer itself
    # when (taps..., I) fold into one stride (HWIO and the like), else packed into
    # [group, tap * I + c, o].  ``kernel``: [group stride, row stride, column stride].
    ks = _strides(rhs) if _storage_is(rhs.aval.element_type, acc) else None
    rows = (*rhs_spec[2:], rhs_spec[1])
    kfold = None if ks is None else _folded([rd[d] for d in rows], [ks[d] for d in rows])
    if kfold is not None:
        wk = ctx.name(rhs)
        kernel = [og * ks[rhs_spec[0]], kfold, ks[rhs_spec[0]]]
    else:
        wk = ctx.fresh("wk")
        _pack_kernel(ctx, rhs, rhs_spec, wk, groups, kc, og, per_group_c, acc_t)
        kernel = [kc * og, og, 1]

    # The input read as x[N, spatial..., C] through its strides: the buffer itself when
    # the features are its most minor dimension, else a row-major copy.
    lhs_order = (lhs_spec[0], *lhs_spec[2:], lhs_spec[1])
    xs = _strides(lhs) if _storage_is(lhs.aval.element_type, acc) else None
    if xs is not None and (xs[lhs_spec[1]] == 1 or ld[lhs_spec[1]] == 1):
        x = ctx.name(lhs)
    else:
        x = ctx.fresh("xc")
        ctx.emit(f"{x} = empty_buf({math.prod(ld)}, {acc_t})")
        with ctx.loops(lhs.aval.shape) as idx:
            ctx.emit(f"{x}[{_flat(idx, ld, lhs_order)}] = {acc_t}({ctx.read(lhs, idx)})")
        xs = _row_major_strides(ld, lhs_order)
    # The result written as y[N / bg, spatial..., O] through its strides: the output
    # buffer itself when BLAS can write its blocks of rows (features or positions
    # at unit stride), else a row-major scratch buffer copied through the layout.
    out_order = (out_spec[0], *out_spec[2:], out_spec[1])
    ys = _strides(out) if _storage_is(out_t, acc) else None
    if ys is not None:
        minor = [d for d in out_order[:-1] if od[d] != 1]
        if not (ys[out_spec[1]] == 1 or od[out_spec[1]] == 1 or (minor and ys[minor[-1]] == 1)
                or acc.kind not in "fc"):
            ys = None
    direct = ys is not None
    if direct:
        y = name
    else:
        y = ctx.fresh("yc")
        ctx.emit(f"{y} = empty_buf({math.prod(od)}, {acc_t})")
        ys = _row_major_strides(od, out_order)
    geometry = [ld[lhs_spec[0]] // bg, bg, fg, per_group_c,
                max(1, _PATCH_BYTES // (kc * acc.itemsize)), ns]
    for i in range(ns):
        geometry += [ld[lhs_spec[2 + i]], od[out_spec[2 + i]], taps[i], p["window_strides"][i],
                     p["padding"][i][0], p["lhs_dilation"][i], p["rhs_dilation"][i]]
    geometry += [xs[d] for d in lhs_order] + [ys[d] for d in out_order] + kernel + [og]
    helper = _CONV_ENTRY.get(acc, "conv_loop")
    ctx.emit(f"{helper}({x}, {wk}, {y}, np.array({geometry}, np.int64))")
    if not direct:
        with ctx.loops(out.aval.shape) as idx:
            ctx.write(out, idx, _cast(f"{y}[{_flat(idx, od, out_order)}]", out_t))


def _pack_kernel(ctx: LoweringContext, rhs, rhs_spec, wk: str, groups: int, kc: int, og: int,
                 per_group_c: int, acc_t: str) -> None:
    rd = rhs.aval.dimensions
    ctx.emit(f"{wk} = empty_buf({groups * kc * og}, {acc_t})")
    with ctx.loops(rhs.aval.shape, prefix="k") as idx:
        t_flat = _flat(idx, rd, tuple(rhs_spec[2:]))
        o_full = idx[rhs_spec[0]]
        g, o = (f"{o_full} // {og}", f"{o_full} % {og}") if groups > 1 else ("0", o_full)
        ctx.emit(f"{wk}[({g}) * {kc * og} + (({t_flat}) * {per_group_c} + "
                 f"{idx[rhs_spec[1]]}) * {og} + {o}] = {acc_t}({ctx.read(rhs, idx)})")


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
    a pointwise convolution multiplies the rows of ``x`` as they are.

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
    if _is_pointwise(geo):
        xblock, rx = _row_block(counts, xstr, nb, xn)
        block = min(block, xblock)
        for g in range(groups):
            for r0 in range(0, total, block):
                xo = _row_offset(r0 + (g * total if bg > 1 else 0), counts, xstr, xn) + \
                    (g * cin if fg > 1 else 0)
                dot_blas(x, xo, rx, 1, w, g * kg, kr, kcol, y,
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
                dot_blas(a, (b0 - r0) * kc, kc, 1, w, g * kg, kr, kcol, y,
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
def _conv_blas_entry(x, w, y, geo):
    """:func:`conv_blas` as its own cached function, for :func:`_conv_entry`."""
    conv_blas(x, w, y, geo)


def _conv_entry(suffix: str, dtype):
    """:func:`conv_blas` for C-contiguous ``dtype`` buffers, called through a
    symbol (:mod:`compile.extern`): linked into every graph that convolves, it
    was optimised again each time (~1.5 s of LLVM per convolution)."""
    from ..extern import Entry
    arr = types.Array(dtype, 1, "C")
    sig = (arr, arr, arr, types.Array(types.int64, 1, "C"))
    return Entry(f"conv_blas_{suffix}", _conv_blas_entry, sig, outputs=(2,)).make_intrinsic()


conv_blas_f32 = _conv_entry("f32", types.float32)
conv_blas_f64 = _conv_entry("f64", types.float64)
conv_blas_c64 = _conv_entry("c64", types.complex64)
conv_blas_c128 = _conv_entry("c128", types.complex128)

lowerings[dot_conv.dot_general_p] = _lower_dot_general
lowerings[dot_conv.conv_general_dilated_p] = _lower_conv
