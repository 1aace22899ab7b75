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

Generated code calls :func:`compile.kernels.blas.dot_blas` and the
kernels of :mod:`compile.kernels.conv` (``matmul_loop``, ``conv_blas``,
``conv_loop``); the generated module's header imports them (every public
Numba function of :mod:`compile.kernels`).
"""
from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np

from numxla.primitives import dot_conv
from numxla.tracer.graph import Equation, Literal, Var
from numxla.tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, dtype_name
from ..kernels import blas as blas_kernels
from ..kernels import conv as conv_kernels
from ..kernels import copy as copy_kernels
from ..kernels.copy import copy_geometry
from ..layout_index import dense_strides
from ..registry import (LIBRARY_MAX_ELEMENTS, Buffer, LibraryCall, LibraryCalls, Scratch,
                        library_rules, lowerings)

__all__: list[str] = []

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


def _dot_dims(eq: Equation):
    """The free dimensions of both operands and the sizes nb, m, k, n."""
    lhs, rhs = eq.inputs
    (lc, rc), (lb, rb) = eq.params["dimension_numbers"]
    lfree = tuple(d for d in range(lhs.aval.ndim) if d not in lc and d not in lb)
    rfree = tuple(d for d in range(rhs.aval.ndim) if d not in rc and d not in rb)
    ldims, rdims = lhs.aval.dimensions, rhs.aval.dimensions
    return (lfree, rfree, math.prod(ldims[d] for d in lb), math.prod(ldims[d] for d in lfree),
            math.prod(ldims[d] for d in lc), math.prod(rdims[d] for d in rfree))


def _dot_choice(eq: Equation, acc: np.dtype):
    """Whether to pack each operand and compute the result in a scratch
    buffer, and the BLAS plan (:func:`_dot_plan`) then: each operand as it is
    when its buffer holds values of the accumulation type in a strided
    layout, else packed; the result into the output buffer, else through a
    row-major scratch buffer.  The cheapest such plan (fewest elements
    copied) that BLAS takes wins; packing all three always works."""
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    (lc, rc), (lb, rb) = eq.params["dimension_numbers"]
    lfree, rfree, nb, m, k, n = _dot_dims(eq)
    ldims, rdims, out_dims = lhs.aval.dimensions, rhs.aval.dimensions, out.aval.dimensions
    nbd, nm = len(lb), len(lfree)
    groups = (list(zip(lb, rb, range(nbd))), list(zip(lfree, range(nbd, nbd + nm))),
              list(zip(rfree, range(nbd + nm, len(out_dims)))), list(zip(lc, rc)))
    lhs_pack_order, rhs_pack_order = lb + lfree + lc, rb + rc + rfree
    choices = []
    for pack_l, pack_r, temp_o in itertools.product((False, True), repeat=3):
        ls = _row_major_strides(ldims, lhs_pack_order) if pack_l else \
            (_strides(lhs) if _storage_is(lhs.aval.element_type, acc) else None)
        rs = _row_major_strides(rdims, rhs_pack_order) if pack_r else \
            (_strides(rhs) if _storage_is(rhs.aval.element_type, acc) else None)
        os_ = _row_major_strides(out_dims, tuple(range(len(out_dims)))) if temp_o else \
            (_strides(out) if _storage_is(out.aval.element_type, acc) else None)
        if ls is None or rs is None or os_ is None:
            continue
        plan = _dot_plan((ldims, rdims), ls, rs, os_, groups)
        if plan is not None:
            cost = pack_l * nb * m * k + pack_r * nb * k * n + temp_o * nb * m * n
            choices.append((cost, len(choices), pack_l, pack_r, temp_o, plan))
    _, _, pack_l, pack_r, temp_o, plan = min(choices)
    return pack_l, pack_r, temp_o, plan, lhs_pack_order, rhs_pack_order


def _library_dot(eq: Equation) -> LibraryCall | None:
    """BLAS products the program calls directly: float operands of the
    accumulation type whose strides BLAS takes as they are; one product, or
    a few loops of them (a batched product)."""
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    acc = _acc_np(lhs.aval.element_type, out.aval.element_type)
    _, _, nb, m, k, n = _dot_dims(eq)
    if acc not in _DOT_ENTRY or nb * m * n == 0 or k == 0 or \
            not all(isinstance(a, Var) for a in eq.inputs) or \
            dense_strides(out.aval.shape) is None:  # (a padded result's padding is written)
        return None
    pack_l, pack_r, temp_o, plan, _, _ = _dot_choice(eq, acc)
    loops, (bm, bn, bk), (ars, acs), (brs, bcs), (crs, ccs) = plan
    if pack_l or pack_r or temp_o:
        return None
    if loops:
        geometry = blas_kernels.dot_loops_geometry(loops, (ars, acs), (brs, bcs), (crs, ccs),
                                                   (bm, bn, bk))
        return None if geometry is None else LibraryCall.buffers_then(
            blas_kernels.dot_blas_loops, eq, geometry)
    return LibraryCall(blas_kernels.dot_blas_call, (
        Buffer(0), 0, ars, acs, Buffer(1), 0, brs, bcs, Buffer(0, True), 0, crs, ccs,
        bm, bn, bk, 0.0))


def _lower_dot_general(ctx: LoweringContext, eq: Equation) -> None:
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    lfree, rfree, nb, m, k, n = _dot_dims(eq)
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
    pack_l, pack_r, temp_o, plan, lhs_pack_order, rhs_pack_order = _dot_choice(eq, acc)
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


class _ConvPlan:
    """How a convolution maps onto :func:`compile.kernels.conv.conv_blas`: the
    strides through which it reads the kernel, the input and the result where
    their buffers serve as they are (None where one needs a packed copy or a
    scratch result), and the geometry it takes."""

    def __init__(self, eq: Equation):
        lhs, rhs = eq.inputs
        (out,) = eq.outputs
        p = eq.params
        self.lhs_spec, self.rhs_spec, self.out_spec = lhs_spec, rhs_spec, out_spec = \
            p["dimension_numbers"]
        fg, bg = p["feature_group_count"], p["batch_group_count"]
        ld, rd, od = lhs.aval.dimensions, rhs.aval.dimensions, out.aval.dimensions
        out_c, self.per_group_c = rd[rhs_spec[0]], rd[rhs_spec[1]]
        taps = [rd[d] for d in rhs_spec[2:]]
        self.groups = fg * bg
        self.og = out_c // self.groups
        self.kc = self.per_group_c * math.prod(taps)
        self.acc = acc = _acc_np(lhs.aval.element_type, out.aval.element_type)
        self.empty = out.aval.shape.size == 0 or self.kc == 0
        # The kernel as matrices wk[tap * I + c, o] per group: read in the buffer itself
        # when (taps..., I) fold into one stride (HWIO and the like), else packed into
        # [group, tap * I + c, o].  ``kernel``: [group stride, row stride, column stride].
        ks = _strides(rhs) if _storage_is(rhs.aval.element_type, acc) else None
        rows = (*rhs_spec[2:], rhs_spec[1])
        kfold = None if ks is None else _folded([rd[d] for d in rows], [ks[d] for d in rows])
        self.kernel = None if kfold is None else [self.og * ks[rhs_spec[0]], kfold,
                                                  ks[rhs_spec[0]]]
        # The input read as x[N, spatial..., C] through its strides: the buffer itself
        # when the features are its most minor dimension, else a row-major copy.
        self.lhs_order = (lhs_spec[0], *lhs_spec[2:], lhs_spec[1])
        xs = _strides(lhs) if _storage_is(lhs.aval.element_type, acc) else None
        self.xs = xs if xs is not None and (xs[lhs_spec[1]] == 1 or ld[lhs_spec[1]] == 1) \
            else None
        # The result written as y[N / bg, spatial..., O] through its strides: the output
        # buffer itself when BLAS can write its blocks of rows (features or positions
        # at unit stride), else a row-major scratch buffer copied through the layout.
        self.out_order = (out_spec[0], *out_spec[2:], out_spec[1])
        ys = _strides(out) if _storage_is(out.aval.element_type, acc) else None
        if ys is not None:
            minor = [d for d in self.out_order[:-1] if od[d] != 1]
            if not (ys[out_spec[1]] == 1 or od[out_spec[1]] == 1 or
                    (minor and ys[minor[-1]] == 1) or acc.kind not in "fc"):
                ys = None
        self.ys = ys
        ns = len(ld) - 2
        self._head = [ld[lhs_spec[0]] // bg, bg, fg, self.per_group_c,
                      max(1, _PATCH_BYTES // (max(self.kc, 1) * acc.itemsize)), ns]
        for i in range(ns):
            self._head += [ld[lhs_spec[2 + i]], od[out_spec[2 + i]], taps[i],
                           p["window_strides"][i], p["padding"][i][0], p["lhs_dilation"][i],
                           p["rhs_dilation"][i]]

    def geometry(self, xs, ys, kernel) -> list[int]:
        """conv_blas's geometry, with the strides of the buffers it gets."""
        return self._head + [xs[d] for d in self.lhs_order] + [ys[d] for d in self.out_order] + \
            kernel + [self.og]


def _lower_conv(ctx: LoweringContext, eq: Equation) -> None:
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    plan = _ConvPlan(eq)
    acc, acc_t = plan.acc, _np_text(plan.acc)
    ld, od = lhs.aval.dimensions, out.aval.dimensions
    name = ctx.alloc(out, zero=plan.empty)
    if plan.empty:
        return
    if plan.kernel is not None:
        wk, kernel = ctx.name(rhs), plan.kernel
    else:
        wk = ctx.fresh("wk")
        _pack_kernel(ctx, rhs, plan.rhs_spec, wk, plan.groups, plan.kc, plan.og,
                     plan.per_group_c, acc_t)
        kernel = [plan.kc * plan.og, plan.og, 1]
    if plan.xs is not None:
        x, xs = ctx.name(lhs), plan.xs
    else:
        x = ctx.fresh("xc")
        ctx.emit(f"{x} = empty_buf({math.prod(ld)}, {acc_t})")
        with ctx.loops(lhs.aval.shape) as idx:
            ctx.emit(f"{x}[{_flat(idx, ld, plan.lhs_order)}] = {acc_t}({ctx.read(lhs, idx)})")
        xs = _row_major_strides(ld, plan.lhs_order)
    if plan.ys is not None:
        y, ys = name, plan.ys
    else:
        y = ctx.fresh("yc")
        ctx.emit(f"{y} = empty_buf({math.prod(od)}, {acc_t})")
        ys = _row_major_strides(od, plan.out_order)
    helper = _CONV_ENTRY.get(acc, "conv_loop")
    ctx.emit(f"{helper}({x}, {wk}, {y}, np.array({plan.geometry(xs, ys, kernel)}, np.int64))")
    if plan.ys is None:
        with ctx.loops(out.aval.shape) as idx:
            ctx.write(out, idx, _cast(f"{y}[{_flat(idx, od, plan.out_order)}]",
                                      out.aval.element_type))


def _library_conv(eq: Equation) -> LibraryCalls | None:
    """conv_blas (conv_loop for integer and bool types) called by the program,
    after strided copies of the operands that need packing (a kernel not in
    (taps..., I, O) order, an input whose features are not minor) and
    followed by one of a result written through a scratch buffer — where the
    buffers hold the accumulation type in dense layouts and what is copied
    is small (``LIBRARY_MAX_ELEMENTS``)."""
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    if not all(isinstance(a, Var) for a in eq.inputs):
        return None
    plan = _ConvPlan(eq)
    acc = plan.acc
    if plan.empty or dense_strides(out.aval.shape) is None or \
            not all(_storage_is(a.aval.element_type, acc) for a in (lhs, rhs, out)):
        return None
    ld, rd, od = lhs.aval.dimensions, rhs.aval.dimensions, out.aval.dimensions
    calls = []

    def copied(atom, dims, dst_strides, scratch: int, into: bool = False):
        """The strided copy of ``atom`` into scratch ``scratch`` (from it, ``into``)."""
        strides = dense_strides(atom.aval.shape)
        if strides is None or atom.aval.shape.size > LIBRARY_MAX_ELEMENTS:
            return None
        buffer = Scratch(scratch, math.prod(dims), acc.name)
        geometry = copy_geometry(dims, dst_strides, strides) if into else \
            copy_geometry(dims, strides, dst_strides)
        if geometry is None:
            return None
        ends = (buffer, Buffer(0, True)) if into else (Buffer(eq.inputs.index(atom)), buffer)
        return LibraryCall(copy_kernels.strided_copy, (*ends, geometry)), buffer

    if plan.kernel is not None:
        wk, kernel = Buffer(1), plan.kernel
    else:
        packed = plan.groups == 1 and copied(
            rhs, rd, _row_major_strides(rd, (*plan.rhs_spec[2:], plan.rhs_spec[1],
                                             plan.rhs_spec[0])), 0)
        if not packed:
            return None
        calls.append(packed[0])
        wk, kernel = packed[1], [plan.kc * plan.og, plan.og, 1]
    if plan.xs is not None:
        x, xs = Buffer(0), plan.xs
    else:
        xs = _row_major_strides(ld, plan.lhs_order)
        packed = copied(lhs, ld, xs, 1)
        if not packed:
            return None
        calls.append(packed[0])
        x = packed[1]
    if plan.ys is not None:
        y, ys, back = Buffer(0, True), plan.ys, None
    else:
        ys = _row_major_strides(od, plan.out_order)
        back = copied(out, od, ys, 2, into=True)
        if not back:
            return None
        y = back[1]
    geometry = np.array(plan.geometry(xs, ys, kernel), np.int64)
    helper = conv_kernels.conv_blas_call if acc in _CONV_ENTRY else conv_kernels.conv_loop
    calls.append(LibraryCall(helper, (x, wk, y, geometry)))
    if back:
        calls.append(back[0])
    return tuple(calls)


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


lowerings[dot_conv.dot_general_p] = _lower_dot_general
lowerings[dot_conv.conv_general_dilated_p] = _lower_conv
library_rules[dot_conv.dot_general_p] = _library_dot
library_rules[dot_conv.conv_general_dilated_p] = _library_conv
