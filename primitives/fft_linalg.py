"""Fft (FFT, IFFT, RFFT, IRFFT over 1-3 dims), Cholesky and TriangularSolve.

``fft(x, fft_type, fft_lengths)`` transforms the trailing ``len(fft_lengths)``
dimensions of ``x``.  ``cholesky(a, lower=True)`` and
``triangular_solve(a, b, ...)`` work on batches of matrices: every dimension
but the two minor ones is a batch dimension, and only the ``lower`` (or
upper) triangle of ``a`` is read.

Implementation-defined values, chosen as XLA:CPU's expanders produce them:

* Cholesky writes zeros into the triangle it does not compute, and a matrix
  of the batch that is not positive definite (a square root of a negative
  pivot, or a NaN input) comes back entirely NaN.
* TriangularSolve divides by the diagonal as it finds it: a zero on the
  diagonal gives infinities/NaNs rather than an error.
* f16 and bf16 operands are computed in f32 and rounded once at the end.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

from ._util import as_int_tuple, check_kinds

__all__ = ["FftType", "Transpose", "fft", "cholesky", "triangular_solve"]


# -- helpers --------------------------------------------------------------------------

def _enum_value(op: str, enum_type: type[enum.Enum], value: Any, what: str) -> enum.Enum:
    """An enum member from a member, its name (any case) or its proto number."""
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        try:
            return enum_type[value.upper()]
        except KeyError:
            pass
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        for member in enum_type:
            if member.value == int(value):
                return member
    names = ", ".join(m.name for m in enum_type)
    raise ShapeError(op, f"{what} must be one of {names}, got {value!r}")


def _to_work(x: np.ndarray, t: PT) -> np.ndarray:
    """Values of element type ``t`` in the NumPy type the reference computes in."""
    if t is PT.BF16:
        return bf16_to_f32(x)
    return x.astype(np.float32) if t is PT.F16 else x


def _from_work(x: np.ndarray, t: PT) -> np.ndarray:
    if t is PT.BF16:
        return bf16_from_f32(x)
    return np.asarray(x).astype(t.numpy_dtype)


def _swap_minor(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _check_matrices(op: str, a: AbstractValue, what: str = "a") -> None:
    if a.ndim < 2:
        raise ShapeError(op, f"'{what}' must have rank >= 2, got rank {a.ndim}", a)
    if a.dimensions[-1] != a.dimensions[-2]:
        raise ShapeError(op, f"the two minor dimensions of '{what}' must have equal size, got "
                             f"{a.dimensions[-2]} and {a.dimensions[-1]}", a)


# -- Fft ------------------------------------------------------------------------------

class FftType(enum.Enum):
    """XLA's FftType (the proto's numbering)."""

    FFT = 0    # complex -> complex, forward
    IFFT = 1   # complex -> complex, inverse
    RFFT = 2   # real -> complex, forward; innermost axis shrinks to n // 2 + 1
    IRFFT = 3  # complex -> real, inverse; innermost axis grows back to n


_REAL_OF = {PT.C64: PT.F32, PT.C128: PT.F64}
_COMPLEX_OF = {PT.F32: PT.C64, PT.F64: PT.C128}

fft_p = Primitive("fft")


@fft_p.def_abstract_eval
def _fft_rule(x: AbstractValue, *, fft_type: FftType, fft_lengths: tuple[int, ...]
              ) -> AbstractValue:
    op, k = "fft", len(fft_lengths)
    if not 1 <= k <= 3:
        raise ShapeError(op, f"fft_lengths {fft_lengths} must have 1 to 3 entries", x)
    if any(n < 0 for n in fft_lengths):
        raise ShapeError(op, f"fft_lengths {fft_lengths} must be non-negative", x)
    if x.ndim < k:
        raise ShapeError(op, f"an FFT over {k} dimensions (fft_lengths {fft_lengths}) needs "
                             f"an operand of rank >= {k}, got rank {x.ndim}", x)
    t = x.element_type
    if fft_type is FftType.RFFT:
        if t not in _COMPLEX_OF:
            raise ShapeError(op, f"RFFT needs an f32 or f64 operand, got {t.short_name}", x)
    elif not t.is_complex:
        raise ShapeError(op, f"{fft_type.name} needs a complex operand, got {t.short_name}", x)
    trailing = x.dimensions[x.ndim - k:]
    # IRFFT's innermost input dimension holds only the n // 2 + 1 non-redundant terms.
    matched = k - 1 if fft_type is FftType.IRFFT else k
    for i in range(matched):
        if trailing[i] != fft_lengths[i]:
            raise ShapeError(op, f"{fft_type.name} needs the trailing dimensions to match "
                                 f"fft_lengths {fft_lengths}, but dimension "
                                 f"{x.ndim - k + i} is {trailing[i]}", x)
    dims, n = list(x.dimensions), fft_lengths[-1]
    if fft_type is FftType.RFFT:
        if n:  # zero-sized dimensions stay zero-sized
            dims[-1] = n // 2 + 1
        return array_value(_COMPLEX_OF[t], dims)
    if fft_type is FftType.IRFFT:
        if (dims[-1] or n) and dims[-1] != n // 2 + 1:
            raise ShapeError(op, f"IRFFT needs the innermost dimension to be fft_lengths[-1] "
                                 f"// 2 + 1 = {n // 2 + 1}, got {dims[-1]}", x)
        dims[-1] = n
        return array_value(_REAL_OF[t], dims)
    return array_value(t, dims)


@fft_p.def_impl
def _fft_impl(x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> np.ndarray:
    out = _fft_rule(array_value(PT.from_dtype(x.dtype), x.shape),  # the result's type
                    fft_type=fft_type, fft_lengths=fft_lengths)
    if x.size == 0 or 0 in out.dimensions:
        return np.zeros(out.dimensions, out.dtype)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    transform = {FftType.FFT: lambda: np.fft.fftn(x, axes=axes),
                 FftType.IFFT: lambda: np.fft.ifftn(x, axes=axes),
                 FftType.RFFT: lambda: np.fft.rfftn(x, s=fft_lengths, axes=axes),
                 FftType.IRFFT: lambda: np.fft.irfftn(x, s=fft_lengths, axes=axes)}[fft_type]
    return transform().astype(out.dtype)


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int] | int) -> Any:
    """XLA's Fft: the ``fft_type`` transform (an ``FftType`` or its name) of the
    trailing ``len(fft_lengths)`` dimensions of ``x`` (1 to 3 of them).

    FFT/IFFT map complex to complex of the same shape (IFFT scales by 1/n);
    RFFT maps f32/f64 to c64/c128, the innermost dimension becoming
    ``fft_lengths[-1] // 2 + 1``; IRFFT maps complex to real, the innermost
    dimension growing from ``fft_lengths[-1] // 2 + 1`` to ``fft_lengths[-1]``.
    """
    return fft_p.bind(x, fft_type=_enum_value("fft", FftType, fft_type, "fft_type"),
                      fft_lengths=as_int_tuple("fft", "fft_lengths", fft_lengths))


# -- Cholesky -------------------------------------------------------------------------

cholesky_p = Primitive("cholesky")


@cholesky_p.def_abstract_eval
def _cholesky_rule(a: AbstractValue, *, lower: bool) -> AbstractValue:
    check_kinds("cholesky", a, ("float", "complex"), "a")
    _check_matrices("cholesky", a)
    return array_value(a.element_type, a.dimensions)


def _cholesky_lower(a: np.ndarray) -> np.ndarray:
    """Cholesky–Banachiewicz on the lower triangle of each matrix of ``a``.

    Column ``j``: ``l[j,j] = sqrt(re(a[j,j] - sum_k<j |l[j,k]|^2))`` and
    ``l[i,j] = (a[i,j] - sum_k<j l[i,k] conj(l[j,k])) / l[j,j]`` for ``i > j``.
    A NaN pivot marks its whole matrix as failed (filled with NaN).
    """
    n = a.shape[-1]
    l = np.zeros_like(a)
    failed = np.zeros(a.shape[:-2], dtype=bool)
    with np.errstate(all="ignore"):
        for j in range(n):
            row = l[..., j, :j]
            pivot = a[..., j, j] - np.einsum("...k,...k->...", row, row.conj())
            ljj = np.sqrt(pivot.real).astype(a.dtype)
            failed |= np.isnan(ljj)
            l[..., j, j] = ljj
            below = a[..., j + 1:, j] - np.einsum("...ik,...k->...i", l[..., j + 1:, :j],
                                                  row.conj())
            l[..., j + 1:, j] = below / ljj[..., None]
    return np.where(failed[..., None, None], np.array(np.nan, a.dtype), l)


@cholesky_p.def_impl
def _cholesky_impl(a: np.ndarray, *, lower: bool) -> np.ndarray:
    t = PT.BF16 if a.dtype == np.uint16 else PT.from_dtype(a.dtype)
    work = _to_work(a, t)
    # upper: the factor of the (plain) transpose, transposed back, as XLA's expander does
    result = _cholesky_lower(work) if lower else _swap_minor(_cholesky_lower(_swap_minor(work)))
    return _from_work(result, t)


def cholesky(a: Any, lower: bool = True) -> Any:
    """XLA's Cholesky of a batch of Hermitian positive-definite matrices.

    ``lower=True``: ``l`` lower triangular with ``a = l @ l^H``; otherwise ``u``
    upper triangular with ``a = u^H @ u``.  Only that triangle of ``a`` is
    read; the other triangle of the result is zero; a matrix that is not
    positive definite gives all NaNs.
    """
    return cholesky_p.bind(a, lower=bool(lower))


# -- TriangularSolve ------------------------------------------------------------------

class Transpose(enum.Enum):
    """XLA's TriangularSolveOptions.Transpose: what op(a) is."""

    NO_TRANSPOSE = 1  # op(a) = a
    TRANSPOSE = 2     # op(a) = a^T
    ADJOINT = 3       # op(a) = conj(a)^T


triangular_solve_p = Primitive("triangular_solve")


@triangular_solve_p.def_abstract_eval
def _triangular_solve_rule(a: AbstractValue, b: AbstractValue, *, left_side: bool, lower: bool,
                           unit_diagonal: bool, transpose_a: Transpose, conjugate_a: bool
                           ) -> AbstractValue:
    op = "triangular_solve"
    check_kinds(op, a, ("float", "complex"), "a")
    if a.element_type is not b.element_type:
        raise ShapeError(op, f"'a' and 'b' must have the same element type, got "
                             f"{a.element_type.short_name} and {b.element_type.short_name}", a, b)
    _check_matrices(op, a)
    if b.ndim != a.ndim:
        raise ShapeError(op, f"'a' and 'b' must have equal rank, got {a.ndim} and {b.ndim}", a, b)
    shared = b.dimensions[-2] if left_side else b.dimensions[-1]
    if shared != a.dimensions[-1]:
        which = "b.dimensions[-2] (left_side=True)" if left_side else \
            "b.dimensions[-1] (left_side=False)"
        raise ShapeError(op, f"the shared dimension does not match: a is {a.dimensions[-1]}x"
                             f"{a.dimensions[-1]} but {which} is {shared}", a, b)
    if a.dimensions[:-2] != b.dimensions[:-2]:
        raise ShapeError(op, f"the batch dimensions of 'a' {a.dimensions[:-2]} and 'b' "
                             f"{b.dimensions[:-2]} must be equal", a, b)
    return array_value(b.element_type, b.dimensions)


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """Solve ``t @ x = b`` for triangular ``t`` by forward (lower) or back substitution."""
    m = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 dtype=np.result_type(t, b))
    rows = range(m) if lower else range(m - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in rows:
            known = slice(0, i) if lower else slice(i + 1, m)
            rhs = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, known], x[..., known, :])
            x[..., i, :] = rhs if unit_diagonal else rhs / t[..., i, i][..., None]
    return x


@triangular_solve_p.def_impl
def _triangular_solve_impl(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                           unit_diagonal: bool, transpose_a: Transpose, conjugate_a: bool
                           ) -> np.ndarray:
    t = PT.BF16 if a.dtype == np.uint16 else PT.from_dtype(a.dtype)
    a, b = _to_work(a, t), _to_work(b, t)
    tri = np.tril(a) if lower else np.triu(a)          # only this triangle is read
    if conjugate_a or transpose_a is Transpose.ADJOINT:
        tri = tri.conj()
    if transpose_a is not Transpose.NO_TRANSPOSE:
        tri, lower = _swap_minor(tri), not lower
    if left_side:                                       # op(a) @ x = b
        x = _substitute(tri, b, lower, unit_diagonal)
    else:                                               # x @ op(a) = b  <=>  op(a)^T x^T = b^T
        x = _swap_minor(_substitute(_swap_minor(tri), _swap_minor(b), not lower, unit_diagonal))
    return _from_work(x, t)


def _transpose_option(transpose_a: Any, conjugate_a: bool) -> tuple[Transpose, bool]:
    """(transpose_a, conjugate_a) as the primitive's (Transpose, conjugate_a) pair.

    ``conjugate_a`` means "use conj(a)"; with a transpose it becomes ADJOINT
    (and undoes ADJOINT's conjugation), so the primitive's ``conjugate_a`` is
    only ever set together with NO_TRANSPOSE.
    """
    if isinstance(transpose_a, (bool, np.bool_)):
        transposed, conj = bool(transpose_a), False
    else:
        option = _enum_value("triangular_solve", Transpose, transpose_a, "transpose_a")
        transposed, conj = option is not Transpose.NO_TRANSPOSE, option is Transpose.ADJOINT
    conj ^= bool(conjugate_a)
    if transposed:
        return (Transpose.ADJOINT if conj else Transpose.TRANSPOSE), False
    return Transpose.NO_TRANSPOSE, conj


def triangular_solve(a: Any, b: Any, left_side: bool = False, lower: bool = False,
                     unit_diagonal: bool = False, transpose_a: Any = False,
                     conjugate_a: bool = False) -> Any:
    """XLA's TriangularSolve: ``x`` with ``op(a) @ x = b`` (``left_side``) or
    ``x @ op(a) = b``, batched over the leading dimensions.

    Only the ``lower`` (or upper) triangle of ``a`` is read; ``unit_diagonal``
    takes its diagonal as ones without reading it.  ``transpose_a`` is a bool
    (``jax.lax``) or XLA's ``Transpose`` (NO_TRANSPOSE, TRANSPOSE, ADJOINT, or
    their names); ``conjugate_a`` uses ``conj(a)`` in place of ``a``.
    """
    option, conj = _transpose_option(transpose_a, conjugate_a)
    conj = conj and abstractify(a).element_type.is_complex  # conj(a) is a for real a
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   unit_diagonal=bool(unit_diagonal), transpose_a=option,
                                   conjugate_a=conj)
