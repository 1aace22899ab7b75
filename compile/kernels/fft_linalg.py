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

import numpy as np
from numba import njit

from primitives import fft_linalg
from primitives.fft_linalg import FftType, Transpose
from tracer.graph import Equation
from tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, dtype_name
from ..registry import lowerings

__all__ = ["fft_axis", "cholesky_lower", "substitute"]


# -- FFT helpers called from generated code ---------------------------------------------------

@njit(cache=True, nogil=True)
def _radix2(a, tw):
    """In-place forward FFT of ``a`` (length n a power of two); ``tw[k] =
    exp(-2 pi i k / n)`` for ``k < n / 2``."""
    n = a.shape[0]
    j = 0
    for i in range(1, n):  # bit-reversal permutation
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            a[i], a[j] = a[j], a[i]
    size = 2
    while size <= n:
        half = size // 2
        step = n // size
        for start in range(0, n, size):
            for k in range(half):
                w = tw[k * step]
                u = a[start + k]
                v = a[start + k + half] * w
                a[start + k] = u + v
                a[start + k + half] = u - v
        size *= 2


@njit(cache=True, nogil=True)
def fft_axis(w, outer, n, inner, inverse):
    """Transform ``w`` (1-D complex128, row-major ``[outer, n, inner]``) in place
    along its middle axis: the DFT, or the inverse DFT scaled by ``1 / n``.

    A length that is not a power of two goes through Bluestein's algorithm: with
    the chirp ``c[k] = exp(-i pi k^2 / n)``, ``X[k] = c[k] * (a * f)[k]`` where
    ``a[j] = x[j] c[j]`` and ``f[j] = conj(c[j])`` (both ends), a circular
    convolution of a power-of-two length ``m >= 2n - 1`` done by FFTs."""
    if n <= 1:
        return
    power_of_two = (n & (n - 1)) == 0
    m = n  # the power-of-two length transformed
    if not power_of_two:
        m = 1
        while m < 2 * n - 1:
            m *= 2
    tw = np.empty(m // 2, np.complex128)
    for k in range(m // 2):  # every twiddle from its own angle
        angle = -2.0 * math.pi * k / m
        tw[k] = complex(math.cos(angle), math.sin(angle))
    chirp = np.empty(n, np.complex128)
    filt = np.zeros(m, np.complex128)
    if not power_of_two:
        for k in range(n):
            angle = -math.pi * ((k * k) % (2 * n)) / n  # k^2 mod 2n keeps the angle exact
            chirp[k] = complex(math.cos(angle), math.sin(angle))
            filt[k] = chirp[k].conjugate()
            if k:
                filt[m - k] = filt[k]
        _radix2(filt, tw)
    work = np.empty(m, np.complex128)
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            for j in range(n):
                v = w[base + j * inner]
                work[j] = v.conjugate() if inverse else v
            if power_of_two:
                _radix2(work, tw)
            else:
                for j in range(n):
                    work[j] *= chirp[j]
                for j in range(n, m):
                    work[j] = 0
                _radix2(work, tw)
                for j in range(m):  # inverse FFT of the product, as conj(FFT(conj(.))) / m
                    work[j] = (work[j] * filt[j]).conjugate()
                _radix2(work, tw)
                for j in range(n):
                    work[j] = chirp[j] * work[j].conjugate() / m
            for j in range(n):
                w[base + j * inner] = work[j].conjugate() / n if inverse else work[j]


@njit(cache=True, nogil=True)
def cholesky_lower(l, failed):
    """In place, each ``l[b]`` (its lower triangle holding the matrix) becomes its
    Cholesky factor, column by column (Cholesky–Banachiewicz, the reference's
    order); ``failed[b]`` is set where a pivot is NaN (not positive definite)."""
    nb, n, _ = l.shape
    zero = np.zeros(1, l.dtype)[0]
    for b in range(nb):
        m = l[b]
        for j in range(n):
            s = zero
            for k in range(j):
                s += m[j, k] * np.conj(m[j, k])
            d = np.sqrt((m[j, j] - s).real)
            if np.isnan(d):
                failed[b] = True
            m[j, j] = d
            for i in range(j + 1, n):
                s = zero
                for k in range(j):
                    s += m[i, k] * np.conj(m[j, k])
                m[i, j] = (m[i, j] - s) / d


@njit(cache=True, nogil=True)
def substitute(s, z, lower, unit):
    """Solve ``s[b] @ x = z[b]`` in place of ``z[b]`` for triangular ``s[b]``
    (lower: forward substitution, else backward; ``unit``: the diagonal is ones),
    dividing by the diagonal as it is."""
    nb, m, nz = z.shape
    acc = np.empty(nz, z.dtype)
    for b in range(nb):
        sb = s[b]
        zb = z[b]
        for step in range(m):
            i = step if lower else m - 1 - step
            acc[:] = 0
            lo, hi = (0, i) if lower else (i + 1, m)  # the unknowns already solved
            for j in range(lo, hi):
                coef = sb[i, j]
                for c in range(nz):
                    acc[c] += coef * zb[j, c]
            for c in range(nz):
                if unit:
                    zb[i, c] = zb[i, c] - acc[c]
                else:
                    zb[i, c] = (zb[i, c] - acc[c]) / sb[i, i]


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
    ctx.emit(f"substitute({sm}, {z}, {s_lower}, {unit})")
    with ctx.loops(out.aval.shape) as idx:
        r, cc = (idx[-2], idx[-1]) if left else (idx[-1], idx[-2])
        ctx.write(out, idx, f"{z}[{_batch_flat(idx, dims)}, {r}, {cc}]")


lowerings[fft_linalg.fft_p] = _lower_fft
lowerings[fft_linalg.cholesky_p] = _lower_cholesky
lowerings[fft_linalg.triangular_solve_p] = _lower_triangular_solve
