"""Lowerings of Fft, Cholesky and TriangularSolve.

Fft: the operand is gathered (through its layout) into a row-major complex128
work buffer, transformed one axis at a time by :func:`fft_axis` (Numba has
no ``np.fft``: an iterative radix-2 FFT, and Bluestein's chirp-z algorithm
for other lengths, all in f64, so c64 results are rounded once at the end),
and written out through the result's layout.  RFFT is the full complex FFT
of the real input, keeping the first ``n // 2 + 1`` terms of the innermost
axis; IRFFT follows ``np.fft.irfftn``: inverse FFTs over the outer axes,
then each innermost line extended Hermitian-symmetrically to ``n`` terms,
inverse-transformed, and its real part kept.

Cholesky and TriangularSolve: generated code gathers only the triangle the
op reads from the operand (so the other one is never touched) into a work
array in the compute type (f32 for f16/bf16), one matrix per batch element;
the compiled helpers :func:`cholesky_lower` (the reference's
Cholesky–Banachiewicz order; a matrix whose pivot is NaN — not positive
definite, or NaN input — comes back all NaN) and :func:`substitute` (forward
or back substitution, dividing by the diagonal as it is: zero gives
inf/NaN) work on it in place, and generated code writes the result through
its layout.

Generated code calls :func:`fft_axis`, :func:`cholesky_lower` and
:func:`substitute`; the generated module's header imports them
(every public Numba function of the kernel modules).
"""
from __future__ import annotations

import math


from numxla.primitives import fft_linalg
from numxla.primitives.fft_linalg import FftType, Transpose
from numxla.tracer.graph import Equation
from numxla.tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, dtype_name
from ..registry import lowerings

__all__: list[str] = []


# -- lowering helpers -------------------------------------------------------------------------

def _row_major(idx: list[str], dims: tuple[int, ...]) -> str:
    terms, stride = [], 1
    for i, d in zip(reversed(idx), reversed(dims)):
        if d != 1:
            terms.append(i if stride == 1 else f"{i} * {stride}")
        stride *= d
    return " + ".join(reversed(terms)) or "0"


def _cast(value: str, t: PrimitiveType) -> str:
    """A computed value as the value ``ctx.write`` stores for type ``t``."""
    if t in (PrimitiveType.F16, PrimitiveType.BF16):
        return f"np.float32({value})"
    return f"{dtype_name(t)}({value})"


# -- Fft ----------------------------------------------------------------------------------------

def _lower_fft(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    fft_type: FftType = eq.params["fft_type"]
    lengths = eq.params["fft_lengths"]
    k = len(lengths)
    in_dims, out_dims = x.aval.dimensions, out.aval.dimensions
    ctx.alloc(out, zero=True)
    if out.aval.shape.size == 0 or x.aval.shape.size == 0:
        return  # the reference gives zeros
    rank = len(in_dims)
    inverse = fft_type in (FftType.IFFT, FftType.IRFFT)
    w = ctx.fresh("fw")
    ctx.emit(f"{w} = empty_buf({math.prod(in_dims)}, np.complex128)")
    with ctx.loops(x.aval.shape) as idx:
        ctx.emit(f"{w}[{_row_major(idx, in_dims)}] = np.complex128({ctx.read(x, idx)})")
    # IRFFT transforms its innermost axis last, after the Hermitian extension.
    axes = range(rank - k, rank - 1 if fft_type is FftType.IRFFT else rank)
    for a in axes:
        outer, inner = math.prod(in_dims[:a]), math.prod(in_dims[a + 1:])
        ctx.emit(f"fft_axis({w}, {outer}, {in_dims[a]}, {inner}, {inverse})")
    src, src_dims = w, in_dims
    if fft_type is FftType.IRFFT:
        n, half = lengths[-1], in_dims[-1]
        lines = math.prod(in_dims[:-1])
        full = ctx.fresh("fh")
        ln, j = ctx.fresh("ln"), ctx.fresh("j")
        ctx.emit(f"{full} = empty_buf({lines * n}, np.complex128)")
        with ctx.block(f"for {ln} in range({lines}):"):
            with ctx.block(f"for {j} in range({n}):"):
                with ctx.block(f"if {j} < {half}:"):
                    ctx.emit(f"{full}[{ln} * {n} + {j}] = {w}[{ln} * {half} + {j}]")
                with ctx.block("else:"):
                    ctx.emit(f"{full}[{ln} * {n} + {j}] = "
                             f"{w}[{ln} * {half} + {n} - {j}].conjugate()")
        ctx.emit(f"fft_axis({full}, {lines}, {n}, 1, True)")
        src, src_dims = full, out_dims
    elif fft_type is FftType.RFFT:
        src_dims = in_dims  # the output keeps the first n // 2 + 1 terms of each line
    t = out.aval.element_type
    with ctx.loops(out.aval.shape) as idx:
        value = f"{src}[{_row_major(idx, src_dims)}]"
        if fft_type is FftType.IRFFT:
            value += ".real"
        ctx.write(out, idx, _cast(value, t))


# -- Cholesky -------------------------------------------------------------------------------

def _work_text(t: PrimitiveType) -> str:
    return dtype_name(t)  # f32 for f16/bf16


def _nan_text(t: PrimitiveType) -> str:
    work = _work_text(t)
    return f"{work}(complex(np.nan, 0.0))" if t.is_complex else f"{work}(np.nan)"


def _batch_flat(idx: list[str], dims: tuple[int, ...]) -> str:
    return _row_major(idx[:-2], dims[:-2])


def _lower_cholesky(ctx: LoweringContext, eq: Equation) -> None:
    (a,), (out,) = eq.inputs, eq.outputs
    lower = eq.params["lower"]
    dims = a.aval.dimensions
    t = a.aval.element_type
    work = _work_text(t)
    n = dims[-1]
    nbatch = math.prod(dims[:-2])
    ctx.alloc(out)
    if out.aval.shape.size == 0:
        return
    # l[b, i, j] = a[..., i, j] (lower) or a[..., j, i] (upper: the plain transpose), i >= j
    l, failed = ctx.fresh("chol"), ctx.fresh("failed")
    ctx.emit(f"{l} = np.zeros(({nbatch}, {n}, {n}), {work})")
    ctx.emit(f"{failed} = zeros_buf({nbatch}, np.bool_)")
    with ctx.loops(a.aval.shape) as idx:
        i, j = (idx[-2], idx[-1]) if lower else (idx[-1], idx[-2])
        with ctx.block(f"if {i} >= {j}:"):
            ctx.emit(f"{l}[{_batch_flat(idx, dims)}, {i}, {j}] = {ctx.read(a, idx)}")
    ctx.emit(f"cholesky_lower({l}, {failed})")
    with ctx.loops(out.aval.shape) as idx:
        i, j = (idx[-2], idx[-1]) if lower else (idx[-1], idx[-2])
        bf = _batch_flat(idx, dims)
        value = (f"({_nan_text(t)} if {failed}[{bf}] else "
                 f"({l}[{bf}, {i}, {j}] if {i} >= {j} else {work}(0)))")
        ctx.write(out, idx, value)


# -- TriangularSolve ------------------------------------------------------------------------

def _lower_triangular_solve(ctx: LoweringContext, eq: Equation) -> None:
    a, bv = eq.inputs
    (out,) = eq.outputs
    p = eq.params
    left, lower, unit = p["left_side"], p["lower"], p["unit_diagonal"]
    transpose: Transpose = p["transpose_a"]
    t = a.aval.element_type
    work = _work_text(t)
    conj = t.is_complex and (p["conjugate_a"] or transpose is Transpose.ADJOINT)
    transposed = transpose is not Transpose.NO_TRANSPOSE
    # op(a) is lower triangular iff lower != transposed.  Solving x @ op(a) = b is
    # solving op(a)^T @ x^T = b^T, so the system matrix s is op(a) (left side) or
    # op(a)^T (right side): s[i, j] = conj?(a[i, j]) when transposed == right side,
    # else conj?(a[j, i]); s is lower triangular iff lower == (transposed == right side).
    swap = transposed == left
    s_lower = lower != swap
    dims = bv.aval.dimensions
    m = a.aval.dimensions[-1]
    nz = dims[-1] if left else dims[-2]  # columns of the right-hand side z (b or b^T)
    nbatch = math.prod(dims[:-2])
    ctx.alloc(out)
    if out.aval.shape.size == 0:
        return
    sm, z = ctx.fresh("tri"), ctx.fresh("rhs")
    ctx.emit(f"{sm} = np.zeros(({nbatch}, {m}, {m}), {work})")
    ctx.emit(f"{z} = np.empty(({nbatch}, {m}, {nz}), {work})")
    with ctx.loops(a.aval.shape) as idx:
        i, j = (idx[-1], idx[-2]) if swap else (idx[-2], idx[-1])
        below = f"{i} > {j}" if s_lower else f"{i} < {j}"
        cond = below if unit else f"{below} or {i} == {j}"
        value = ctx.read(a, idx)
        if conj:
            value = f"({value}).conjugate()"
        with ctx.block(f"if {cond}:"):
            ctx.emit(f"{sm}[{_batch_flat(idx, a.aval.dimensions)}, {i}, {j}] = {value}")
    with ctx.loops(bv.aval.shape) as idx:
        r, c = (idx[-2], idx[-1]) if left else (idx[-1], idx[-2])
        ctx.emit(f"{z}[{_batch_flat(idx, dims)}, {r}, {c}] = {ctx.read(bv, idx)}")
    # flags as plain booleans: constants would compile the helper once per combination
    ctx.emit(f"substitute({sm}, {z}, np.bool_({s_lower}), np.bool_({unit}))")
    with ctx.loops(out.aval.shape) as idx:
        r, cc = (idx[-2], idx[-1]) if left else (idx[-1], idx[-2])
        ctx.write(out, idx, f"{z}[{_batch_flat(idx, dims)}, {r}, {cc}]")


lowerings[fft_linalg.fft_p] = _lower_fft
lowerings[fft_linalg.cholesky_p] = _lower_cholesky
lowerings[fft_linalg.triangular_solve_p] = _lower_triangular_solve
