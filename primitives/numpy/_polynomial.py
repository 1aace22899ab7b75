"""NumPy-style layer: signals and polynomials.

``convolve``/``correlate`` are XLA Convs (as in ``jax.numpy``); ``diff``,
``ediff1d``, ``gradient`` (second-order central differences inside,
first-order at the edges, uniform or coordinate spacing), ``trapezoid``,
``interp`` (on ``searchsorted``) and ``unwrap``.  Polynomials are
coefficient vectors, highest power first (NumPy's ``poly1d`` order):
``polyval`` (Horner), ``polyadd``/``polysub``/``polymul``/``polydiv``
(JAX's: no trimming of leading zeros, so shapes stay static),
``polyder``, ``polyint``, ``poly`` (from roots) and ``polyfit`` (least
squares on ``linalg.lstsq``) and ``roots`` (eigenvalues of the
companion matrix, by ``linalg.eigvals``).
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ..control_flow import fori_loop
from ..dot_conv import conv_general_dilated
from ._core import _broadcast_all, _to_inexact, _arraylike, broadcast_shapes, broadcast_to, \
    reshape, sum as _sum, true_divide, where
from ._gather_indexing import take
from ._histograms import searchsorted
from ._indexing import _axis, concatenate, ravel
from ._math import conj, remainder
from ._reductions import cumsum
from .._util import dims as _dims, element_type as _type

__all__ = [
    "convolve", "correlate", "diff", "ediff1d", "gradient", "trapezoid", "interp", "unwrap",
    "polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "poly",
    "polyfit", "roots",
]




def _c(value: Any, like: Any) -> Any:
    return ew.convert_element_type(value, _type(like))


# -- convolution -------------------------------------------------------------------------------

_PADDING = {"full": lambda m: (m - 1, m - 1), "same": lambda m: (m // 2, m - m // 2 - 1),
            "valid": lambda m: (0, 0)}


def _conv1d(a: Any, v: Any, mode: str, precision: Any, preferred_element_type: Any) -> Any:
    """XLA's Conv (a cross-correlation) of 1-D ``a`` with ``v`` (len(a) >= len(v))."""
    if mode not in _PADDING:
        raise ValueError(f"mode must be one of {list(_PADDING)}, got {mode!r}")
    m = _dims(v)[0]
    out = conv_general_dilated(reshape(a, (1, 1, -1)), reshape(v, (1, 1, -1)), (1,),
                               [_PADDING[mode](m)], precision=precision,
                               preferred_element_type=preferred_element_type)
    return reshape(out, (-1,))


def _operands(name: str, a: Any, v: Any) -> tuple[Any, Any]:
    """``a`` and ``v`` promoted to one inexact type: integers and booleans
    convolve as floats, as in JAX (NumPy keeps integers)."""
    a, v = map(_to_inexact, ew.promote(_arraylike(a), _arraylike(v)))
    if abstractify(a).ndim != 1 or abstractify(v).ndim != 1:
        raise ValueError(f"{name}() only supports 1-dimensional inputs")
    if _dims(a)[0] == 0 or _dims(v)[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty")
    return a, v


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """The discrete linear convolution of 1-D sequences (``mode``: "full",
    "same", "valid")."""
    a, v = _operands("convolve", a, v)
    if _dims(a)[0] < _dims(v)[0]:
        a, v = v, a
    return _conv1d(a, lax.rev(v, (0,)), mode, precision, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """The cross-correlation ``c[k] = sum_n a[n + k] conj(v[n])`` of 1-D sequences."""
    a, v = _operands("correlate", a, v)
    if _dims(a)[0] < _dims(v)[0]:
        out = _conv1d(v, conj(a), mode, precision, preferred_element_type)
        return conj(lax.rev(out, (0,)))
    return _conv1d(a, conj(v), mode, precision, preferred_element_type)


# -- differences and integrals -----------------------------------------------------------------

def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th discrete difference along ``axis`` (booleans: ``!=``)."""
    a = _arraylike(a)
    rank = abstractify(a).ndim
    if rank == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _axis("diff", axis, rank)
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        x = _arraylike(extra)
        if abstractify(x).ndim == 0:
            shape = list(_dims(a))
            shape[axis] = 1
            x = broadcast_to(x, tuple(shape))
        parts.append(x)
    if len(parts) > 1:
        a = concatenate(parts, axis)
    for _ in range(operator.index(n)):
        size = _dims(a)[axis]
        hi = lax.slice_in_dim(a, 1, size, 1, axis)
        lo = lax.slice_in_dim(a, 0, builtins.max(size - 1, 0), 1, axis)
        a = ew.ne(hi, lo) if _type(a) is PT.PRED else ew.sub(hi, lo)
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """The differences of consecutive elements of the flattened array, with
    ``to_begin`` and ``to_end`` attached."""
    a = ravel(_arraylike(ary))
    parts = [diff(a)]
    if to_begin is not None:
        parts.insert(0, ew.convert_element_type(ravel(_arraylike(to_begin)), _type(a)))
    if to_end is not None:
        parts.append(ew.convert_element_type(ravel(_arraylike(to_end)), _type(a)))
    return concatenate(parts, 0) if len(parts) > 1 else parts[0]


def _slice(x: Any, axis: int, start: int, stop: int) -> Any:
    return lax.slice_in_dim(x, start, stop, 1, axis)


def _along(values: Any, axis: int, rank: int) -> Any:
    """A 1-D array shaped to broadcast along ``axis``."""
    shape = [1] * rank
    shape[axis] = _dims(values)[0]
    return reshape(values, shape)


def _gradient_1d(f: Any, axis: int, spacing: Any) -> Any:
    """NumPy's ``gradient`` along one axis, ``edge_order=1``."""
    n = _dims(f)[axis]
    rank = abstractify(f).ndim
    if n < 2:
        raise ValueError("gradient: each dimension must have at least 2 elements")
    spacing = _arraylike(spacing)
    if abstractify(spacing).ndim == 0:
        h = _c(spacing, f)
        inner = ew.div(ew.sub(_slice(f, axis, 2, n), _slice(f, axis, 0, n - 2)),
                       ew.mul(h, _c(2, f))) if n > 2 else None
        first = ew.div(ew.sub(_slice(f, axis, 1, 2), _slice(f, axis, 0, 1)), h)
        last = ew.div(ew.sub(_slice(f, axis, n - 1, n), _slice(f, axis, n - 2, n - 1)), h)
    else:  # coordinates: NumPy's second-order formula on uneven spacing
        x = ew.convert_element_type(spacing, _type(f))
        dx = diff(x)
        if n > 2:
            dx1, dx2 = _along(lax.slice(dx, (0,), (n - 2,)), axis, rank), \
                _along(lax.slice(dx, (1,), (n - 1,)), axis, rank)
            a = ew.neg(ew.div(dx2, ew.mul(dx1, ew.add(dx1, dx2))))
            b = ew.div(ew.sub(dx2, dx1), ew.mul(dx1, dx2))
            c = ew.div(dx1, ew.mul(dx2, ew.add(dx1, dx2)))
            terms = [ew.mul(*_broadcast_all(a, _slice(f, axis, 0, n - 2))),
                     ew.mul(*_broadcast_all(b, _slice(f, axis, 1, n - 1))),
                     ew.mul(*_broadcast_all(c, _slice(f, axis, 2, n)))]
            inner = ew.add(ew.add(terms[0], terms[1]), terms[2])
        else:
            inner = None
        d0 = _along(lax.slice(dx, (0,), (1,)), axis, rank)
        dl = _along(lax.slice(dx, (n - 2,), (n - 1,)), axis, rank)
        first = ew.div(*_broadcast_all(ew.sub(_slice(f, axis, 1, 2), _slice(f, axis, 0, 1)), d0))
        last = ew.div(*_broadcast_all(ew.sub(_slice(f, axis, n - 1, n),
                                             _slice(f, axis, n - 2, n - 1)), dl))
    return concatenate([first] + ([inner] if inner is not None else []) + [last], axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int | None = None) -> Any:
    """The gradient by central differences (one-sided at the edges): one array
    per axis (just the array for a single axis); ``varargs`` are scalar
    spacings or coordinate arrays, one for all axes or one per axis."""
    if edge_order not in (None, 1):
        raise NotImplementedError("gradient: only edge_order=1 is supported")
    f = _to_inexact(_arraylike(f))
    rank = abstractify(f).ndim
    axes = tuple(range(rank)) if axis is None else \
        tuple(_axis("gradient", a, rank) for a in ((axis,) if isinstance(axis, int) else axis))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("gradient: invalid number of spacing arguments")
    out = [_gradient_1d(f, ax, h) for ax, h in zip(axes, spacings)]
    return out[0] if len(out) == 1 else out


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule (samples at
    ``x``, or spaced ``dx``)."""
    y = _to_inexact(_arraylike(y))
    rank = abstractify(y).ndim
    axis = _axis("trapezoid", axis, rank)
    n = _dims(y)[axis]
    mids = ew.add(_slice(y, axis, 1, n), _slice(y, axis, 0, builtins.max(n - 1, 0)))
    if x is None:
        widths = _c(dx, y)
    else:
        x = _arraylike(x)
        widths = diff(x, axis=-1 if abstractify(x).ndim == 1 else axis)
        widths = _along(widths, axis, rank) if abstractify(x).ndim == 1 else widths
    area = ew.mul(*_broadcast_all(*ew.promote(mids, widths)))
    return ew.mul(_sum(area, axis), _c(0.5, area))


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) at ``x``
    (``xp`` increasing); ``left``/``right`` beyond the ends (default the end
    values); ``period`` for periodic ``xp``."""
    x, xp = ew.promote(_to_inexact(_arraylike(x)), _to_inexact(_arraylike(xp)))
    fp = _arraylike(fp)
    fp = ew.convert_element_type(fp, _type(x)) if not _type(fp).is_complex else fp
    if abstractify(xp).ndim != 1 or abstractify(fp).ndim != 1 or _dims(xp) != _dims(fp):
        raise ValueError("interp: xp and fp must be one-dimensional arrays of equal size")
    if period is not None:
        p = _c(period, x)
        x = remainder(x, p)
        xp = remainder(xp, p)
        order = _argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([ew.sub(lax.slice(xp, (_dims(xp)[0] - 1,), (_dims(xp)[0],)), p), xp,
                          ew.add(lax.slice(xp, (0,), (1,)), p)], 0)
        fp = concatenate([lax.slice(fp, (_dims(fp)[0] - 1,), (_dims(fp)[0],)), fp,
                          lax.slice(fp, (0,), (1,))], 0)
    n = _dims(xp)[0]
    i = ew.clamp(np.int32(1), searchsorted(xp, x, "right"), np.int32(builtins.max(n - 1, 1)))
    x0, x1 = take(xp, ew.sub(i, np.int32(1))), take(xp, i)
    f0, f1 = take(fp, ew.sub(i, np.int32(1))), take(fp, i)
    dx = ew.sub(x1, x0)
    zero = ew.eq(dx, _c(0, dx))
    t = ew.div(ew.sub(x, x0), where(zero, _c(1, dx), dx))
    t = ew.convert_element_type(t, _type(f0)) if _type(f0).is_complex else t
    out = where(zero, f0, ew.add(f0, ew.mul(t, ew.sub(f1, f0))))
    if period is None:
        last = take(fp, np.int32(n - 1))
        out = where(ew.eq(x, take(xp, np.int32(n - 1))), last, out)
        lo = take(fp, np.int32(0)) if left is None else _c(left, out)
        hi = last if right is None else _c(right, out)
        out = where(ew.lt(x, take(xp, np.int32(0))), lo, out)
        out = where(ew.gt(x, take(xp, np.int32(n - 1))), hi, out)
    return out


def _argsort(x: Any) -> Any:
    from ._reductions import argsort
    return argsort(x)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """Undo jumps larger than ``discont`` (default ``period / 2``) along ``axis``
    by adding multiples of ``period`` (NumPy's algorithm)."""
    p = _to_inexact(_arraylike(p))
    rank = abstractify(p).ndim
    axis = _axis("unwrap", axis, rank)
    dd = diff(p, axis=axis)
    period = _c(period, p)
    discont = ew.div(period, _c(2, p)) if discont is None else _c(discont, p)
    high = ew.div(period, _c(2, p))
    low = ew.neg(high)
    ddmod = ew.add(remainder(ew.sub(dd, low), period), low)
    ddmod = where(ew.bitwise_and(ew.eq(ddmod, low), ew.gt(dd, _c(0, dd))), high, ddmod)
    correct = where(ew.lt(ew.abs(dd), discont), _c(0, dd), ew.sub(ddmod, dd))
    n = _dims(p)[axis]
    fixed = ew.add(_slice(p, axis, 1, n), cumsum(correct, axis))
    return concatenate([_slice(p, axis, 0, 1), fixed], axis)


# -- polynomials -------------------------------------------------------------------------------

def _coefficients(p: Any) -> Any:
    p = _arraylike(p)
    if abstractify(p).ndim != 1:
        raise ValueError("polynomial coefficients must be a one-dimensional array")
    return p


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial ``p`` (highest power first) at ``x``, by Horner's scheme.
    As JAX's, ``p`` may have more dimensions: the coefficients run along its
    first, the rest broadcast with ``x``."""
    p = _arraylike(p)
    if abstractify(p).ndim == 0:
        raise ValueError("polynomial coefficients must be at least one-dimensional")
    x = _arraylike(x)
    p, x = ew.promote(p, x)
    shape = broadcast_shapes(_dims(p)[1:], _dims(x))
    x = broadcast_to(x, shape)
    y = ew.sub(x, x)
    rest = _dims(p)[1:]
    for k in range(_dims(p)[0]):
        c = reshape(lax.slice_in_dim(p, k, k + 1, 1, 0), rest)
        y = ew.add(ew.mul(y, x), broadcast_to(c, shape))
    return y


def _padded(a: Any, n: int) -> Any:
    return lax.pad(a, _c(0, a), [(n - _dims(a)[0], 0, 0)])


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials."""
    a1, a2 = ew.promote(_coefficients(a1), _coefficients(a2))
    n = builtins.max(_dims(a1)[0], _dims(a2)[0])
    return ew.add(_padded(a1, n), _padded(a2, n))


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials."""
    a1, a2 = ew.promote(_coefficients(a1), _coefficients(a2))
    n = builtins.max(_dims(a1)[0], _dims(a2)[0])
    return ew.sub(_padded(a1, n), _padded(a2, n))


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (a convolution)."""
    return convolve(_coefficients(a1), _coefficients(a2))


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """``(quotient, remainder)`` of polynomial long division; the remainder
    keeps ``u``'s length (leading zeros), as in JAX."""
    u, v = ew.promote(_to_inexact(_coefficients(u)), _to_inexact(_coefficients(v)))
    m, n = _dims(u)[0] - 1, _dims(v)[0] - 1
    scale = ew.div(_c(1, v), reshape(lax.slice(v, (0,), (1,)), ()))
    steps = m - n + 1
    if steps <= 0:
        return broadcast_to(_c(0, u), (1,)), u
    v_padded = lax.pad(v, _c(0, v), [(0, m - n, 0)])                   # length m + 1

    def step(k, carry):
        q, r = carry
        d = ew.mul(scale, reshape(lax.dynamic_slice(r, (k,), (1,)), ()))
        q = lax.dynamic_update_slice(q, reshape(d, (1,)), (k,))
        shifted = lax.dynamic_slice(lax.concatenate([lax.broadcast_in_dim(_c(0, v), (m,), ()),
                                                     v_padded], 0), (ew.sub(np.int32(m), k),),
                                    (m + 1,))                            # v shifted right by k
        return q, ew.sub(r, ew.mul(shifted, broadcast_to(d, (m + 1,))))

    return fori_loop(0, steps, step, (broadcast_to(_c(0, u), (steps,)), u))


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial."""
    p = _coefficients(p)
    for _ in range(operator.index(m)):
        n = _dims(p)[0] - 1
        if n <= 0:
            return broadcast_to(_c(0, p), (0,)) if n < 0 else lax.slice(p, (0,), (0,))
        powers = np.arange(n, 0, -1)
        p = ew.mul(lax.slice(p, (0,), (n,)), ew.convert_element_type(powers, _type(p)))
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k``."""
    p = _to_inexact(_coefficients(p))
    m = operator.index(m)
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k), (m,))
    for i in range(m):
        n = _dims(p)[0]
        powers = np.arange(n, 0, -1)
        p = concatenate([ew.div(p, ew.convert_element_type(powers, _type(p))),
                         reshape(_c(ks[i], p), (1,))], 0)
    return p


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots."""
    roots = _arraylike(seq_of_zeros)
    if abstractify(roots).ndim != 1:
        raise NotImplementedError("poly: only a 1-D sequence of roots is supported (the "
                                  "characteristic polynomial of a matrix needs eigvals)")
    roots = roots if _type(roots).is_complex else _to_inexact(roots)
    coefficients = broadcast_to(_c(1, roots), (1,))
    for k in range(_dims(roots)[0]):
        r = lax.slice(roots, (k,), (k + 1,))
        coefficients = convolve(coefficients, concatenate([broadcast_to(_c(1, roots), (1,)),
                                                           ew.neg(r)], 0))
    return coefficients


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial ``p`` (complex): the eigenvalues of its
    companion matrix.  ``strip_zeros`` drops leading zero coefficients first,
    which needs a concrete ``p``; with ``strip_zeros=False`` they must not be
    there (a traced ``p`` keeps its shape)."""
    from .linalg import eigvals
    p = _to_inexact(_coefficients(p))
    if strip_zeros:
        values = np.asarray(p)          # a concrete p: its leading zeros are dropped
        nonzero = np.flatnonzero(values)
        p = p[int(nonzero[0]):] if nonzero.size else p[:0]
    n = _dims(p)[0]
    if n < 2:
        return ew.convert_element_type(np.zeros(0), _complex_of(_type(p)))
    first_row = ew.neg(true_divide(lax.slice(p, (1,), (n,)), lax.slice(p, (0,), (1,))))
    shifted_identity = np.eye(n - 1, k=-1, dtype=_type(p).numpy_dtype)[1:]   # ones below
    return eigvals(concatenate([reshape(first_row, (1, n - 1)), shifted_identity], 0))


def _complex_of(t: PT) -> PT:
    return t if t.is_complex else (PT.C128 if t is PT.F64 else PT.C64)


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: bool = False) -> Any:
    """The least-squares polynomial fit of degree ``deg`` (columns of the
    Vandermonde matrix scaled to unit norm, as NumPy does)."""
    from . import linalg
    from ._creation import vander
    if cov:
        raise NotImplementedError("polyfit: cov=True is not supported")
    x, y = ew.promote(_to_inexact(_arraylike(x)), _to_inexact(_arraylike(y)))
    order = operator.index(deg) + 1
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = ew.convert_element_type(_arraylike(w), _type(x))
        lhs = ew.mul(lhs, broadcast_to(reshape(w, (-1, 1)), _dims(lhs)))
        rhs = ew.mul(*_broadcast_all(rhs, reshape(w, (-1,) + (1,) * (abstractify(y).ndim - 1))))
    scale = ew.sqrt(_sum(ew.mul(lhs, lhs), 0))
    lhs = true_divide(lhs, broadcast_to(reshape(scale, (1, -1)), _dims(lhs)))
    if rcond is None:
        rcond = _dims(x)[0] * float(np.finfo(_type(x).numpy_dtype).eps)
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = true_divide(c, broadcast_to(reshape(scale, (-1,) + (1,) * (abstractify(c).ndim - 1)),
                                    _dims(c)))
    if full:
        return c, resids, rank, s, rcond
    return c
