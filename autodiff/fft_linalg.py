"""JVP, VJP and batching rules of Fft, Cholesky and TriangularSolve
(primitives/fft_linalg.py).

Fft is linear.  Its transposes are JAX's: FFT and IFFT are symmetric
(each is its own transpose); RFFT's is the FFT of the cotangent zero-padded
to the full length, real part taken (the transpose of "FFT of a real input,
half kept"); IRFFT's is the conjugate of the RFFT of the cotangent, scaled
by 1/N and by 2 for the Hermitian terms that stand for two.

Cholesky's JVP is JAX's ``L phi(L^-1 dA L^-H)`` (phi: lower triangle, half
the diagonal), with ``dA`` the Hermitian matrix made of what the op reads
(the strict lower triangle and the real part of the diagonal); its VJP is
the transpose of that map, step by step.  TriangularSolve is linear in
``b`` (its transpose solves with the transposed ``op(a)``) and has JAX's
``-op(a)^-1 op(da) x`` derivative in ``a``.  Everything is written with
triangular_solve, dot_general, transpose and select on (constant) triangle
masks.

All three batch by moving the batch to the front, where the ops take their
batch (leading) dimensions.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from numxla.primitives import fft_linalg as fl
from numxla.primitives.fft_linalg import FftType, Transpose
from numxla.tracer.core import abstractify, bf16_array
from numxla.tracer.shapes import PrimitiveType

from .rules import Zero, add_tangents, batch_at_front, batch_rules, const_like, is_zero, \
    jvp_rules, linear_jvp, vjp_rules, zeros_like_aval


# -- helpers ---------------------------------------------------------------------------------

def _conj(x):
    if not abstractify(x).element_type.is_complex:
        return x
    return lax.complex(lax.real(x), lax.neg(lax.imag(x)))


def _mT(x):
    nd = abstractify(x).ndim
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _matmul(a, b):
    nd = abstractify(a).ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _triangle(x, lower: bool, k: int = 0):
    """``x`` with the elements outside its lower (``j <= i + k``) or upper
    (``j >= i + k``) triangle zeroed: a select on an iota mask."""
    aval = abstractify(x)
    rows, cols = np.indices(aval.dimensions[-2:])
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    mask = lax.broadcast_in_dim(keep, aval.dimensions, (aval.ndim - 2, aval.ndim - 1))
    return lax.select(mask, x, zeros_like_aval(aval))


def _scaled(x, factors: np.ndarray, dims: tuple[int, ...]):
    """``x`` times a constant array laid along ``dims``."""
    aval = abstractify(x)
    if aval.element_type is PrimitiveType.BF16:   # bf16 values are uint16 words in NumPy
        const = bf16_array(np.asarray(factors, np.float32))
    else:
        const = np.asarray(factors, aval.dtype)
    return lax.mul(x, lax.broadcast_in_dim(const, aval.dimensions, dims))


# -- fft ---------------------------------------------------------------------------------------

def _fft_vjp(ct, fwd, x, *, fft_type, fft_lengths):
    if fft_type in (FftType.FFT, FftType.IFFT):
        return (fl.fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths),)
    aval = abstractify(ct)
    n = fft_lengths[-1]
    if fft_type is FftType.RFFT:     # transpose of: FFT of a real input, first n // 2 + 1 kept
        config = [(0, 0, 0)] * (aval.ndim - 1) + [(0, n - aval.dimensions[-1], 0)]
        padded = lax.pad(ct, const_like(ct, 0), config)
        return (lax.real(fl.fft_p.bind(padded, fft_type=FftType.FFT, fft_lengths=fft_lengths)),)
    # IRFFT: terms 1 .. ceil(n/2) - 1 stand for themselves and their conjugate
    spectrum = fl.fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    m = abstractify(spectrum).dimensions[-1]
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights /= float(np.prod(fft_lengths))
    nd = abstractify(spectrum).ndim
    return (_conj(_scaled(spectrum, weights, (nd - 1,))),)


jvp_rules[fl.fft_p] = linear_jvp(fl.fft_p)
vjp_rules[fl.fft_p] = _fft_vjp
batch_rules[fl.fft_p] = batch_at_front(fl.fft_p)


# -- cholesky ------------------------------------------------------------------------------

def _hermitian_from_lower(x):
    """The Hermitian matrix made of what the op reads: ``x``'s strict lower
    triangle and the real part of its diagonal (``phi(x) + phi(x)^H``)."""
    p = _phi(x)
    return lax.add(p, _conj(_mT(p)))


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    n = abstractify(x).dimensions[-1]
    nd = abstractify(x).ndim
    return _scaled(_triangle(x, True), np.ones((n, n)) - 0.5 * np.eye(n), (nd - 2, nd - 1))


def _solve(a, b, *, left_side, transpose_a=Transpose.NO_TRANSPOSE, conjugate_a=False):
    conjugate_a = conjugate_a and abstractify(a).element_type.is_complex
    return fl.triangular_solve_p.bind(a, b, left_side=left_side, lower=True,
                                      unit_diagonal=False, transpose_a=transpose_a,
                                      conjugate_a=conjugate_a)


def _cholesky_lower_tangent(l, da):
    """``L phi(L^-1 S L^-H)``, ``S`` the Hermitian matrix of ``da``'s lower triangle."""
    s = _hermitian_from_lower(da)
    adjoint = Transpose.ADJOINT if abstractify(l).element_type.is_complex else Transpose.TRANSPOSE
    tmp = _solve(l, s, left_side=False, transpose_a=adjoint)          # S L^-H
    return _matmul(l, _phi(_solve(l, tmp, left_side=True)))            # L phi(L^-1 S L^-H)


def _cholesky_lower_cotangent(l, g):
    """The transpose of :func:`_cholesky_lower_tangent` in ``da``."""
    g_m = _phi(_matmul(_mT(l), g))                                     # through L @ . , phi
    x = _solve(l, g_m, left_side=True, transpose_a=Transpose.TRANSPOSE)  # L^-T G
    g_s = _solve(l, x, left_side=False, conjugate_a=True)             # . conj(L)^-1
    return _phi(lax.add(g_s, _conj(_mT(g_s))))                          # through phi + phi^H


def _cholesky_jvp(primals, tangents, *, lower):
    (a,), (da,) = primals, tangents
    out = fl.cholesky_p.bind(a, lower=lower)
    if lower:
        return out, _cholesky_lower_tangent(out, da)
    # upper: the lower factor of a^T, transposed (as the op computes it)
    return out, _mT(_cholesky_lower_tangent(_mT(out), _mT(da)))


def _cholesky_vjp(ct, fwd, a, *, lower):
    if lower:
        return (_cholesky_lower_cotangent(fwd.out, ct),)
    return (_mT(_cholesky_lower_cotangent(_mT(fwd.out), _mT(ct))),)


jvp_rules[fl.cholesky_p] = _cholesky_jvp
vjp_rules[fl.cholesky_p] = _cholesky_vjp
batch_rules[fl.cholesky_p] = batch_at_front(fl.cholesky_p)


# -- triangular_solve ----------------------------------------------------------------------

def _op_flags(a, transpose_a, conjugate_a) -> tuple[bool, bool]:
    """(transposed, conjugated): what op(a) does to the triangle (as the op reads them)."""
    conj = abstractify(a).element_type.is_complex and (conjugate_a or
                                                        transpose_a is Transpose.ADJOINT)
    return transpose_a is not Transpose.NO_TRANSPOSE, conj


def _op(x, transposed: bool, conj: bool):
    x = _mT(x) if transposed else x
    return _conj(x) if conj else x


def _read_triangle(x, lower: bool, unit_diagonal: bool):
    """The part of ``a`` the op reads: its triangle, without the diagonal when unit."""
    k = (-1 if lower else 1) if unit_diagonal else 0
    return _triangle(x, lower, k)


def _transposed_params(a, params):
    """The parameters that solve with ``op(a)^T`` in place of ``op(a)``."""
    transposed, conj = _op_flags(a, params["transpose_a"], params["conjugate_a"])
    if transposed:   # op(a)^T is a or conj(a)
        option, conjugate = Transpose.NO_TRANSPOSE, conj
    else:
        option, conjugate = (Transpose.ADJOINT if conj else Transpose.TRANSPOSE), False
    return dict(params, transpose_a=option, conjugate_a=conjugate)


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (da, db) = primals, tangents
    x = fl.triangular_solve_p.bind(a, b, **params)
    t = Zero(abstractify(x))
    if not is_zero(db):
        t = fl.triangular_solve_p.bind(a, db, **params)
    if not is_zero(da):
        w = _op(_read_triangle(da, params["lower"], params["unit_diagonal"]),
                *_op_flags(a, params["transpose_a"], params["conjugate_a"]))
        rhs = _matmul(w, x) if params["left_side"] else _matmul(x, w)
        t = add_tangents(t, lax.neg(fl.triangular_solve_p.bind(a, rhs, **params)))
    return x, t


def _triangular_solve_vjp(ct, fwd, a, b, **params):
    ct_b = fl.triangular_solve_p.bind(a, ct, **_transposed_params(a, params))
    ct_a = None
    if fwd.wants[0]:
        x = fwd.out
        g_w = _matmul(ct_b, _mT(x)) if params["left_side"] else _matmul(_mT(x), ct_b)
        # op is self-transposing as a map on matrices (transpose, conjugate, or both)
        g_t = _op(lax.neg(g_w), *_op_flags(a, params["transpose_a"], params["conjugate_a"]))
        ct_a = _read_triangle(g_t, params["lower"], params["unit_diagonal"])
    return ct_a, (ct_b if fwd.wants[1] else None)


jvp_rules[fl.triangular_solve_p] = _triangular_solve_jvp
vjp_rules[fl.triangular_solve_p] = _triangular_solve_vjp
batch_rules[fl.triangular_solve_p] = batch_at_front(fl.triangular_solve_p)
