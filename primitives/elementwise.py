"""Elementwise operations: XLA's unary and binary element-wise ops, Compare,
Select and ConvertElementType.

Each op is one row of a table: its name, the element-type kinds it admits
and its reference semantics in NumPy (with XLA's definitions where they
differ from NumPy's, e.g. integer division by zero).  The shape rule is
shared: operands of one element type and equal dimensions (user-facing
functions broadcast rank-0 operands and promote types first).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from tracer.core import AbstractValue, Primitive, ShapeError, array_value, abstractify
from tracer.shapes import PrimitiveType as PT

from ._util import check_kinds
from .dtypes import canonical_type, result_type

__all__ = [
    "add", "sub", "mul", "div", "max", "min", "neg", "exp", "log", "tanh",
    "eq", "ne", "lt", "le", "gt", "ge", "compare", "select", "convert_element_type",
    "UNARY_OPS", "BINARY_OPS", "COMPARISON_DIRECTIONS",
]

NUMERIC = ("signed", "unsigned", "float", "complex")
INEXACT = ("float", "complex")
SIGNED_NUMERIC = ("signed", "float", "complex")
ALL = ("pred",) + NUMERIC


# --------------------------------------------------------------------------
# reference semantics with XLA's definitions
# --------------------------------------------------------------------------

def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """XLA integer division: truncates toward zero; x/0 is -1 (all bits set);
    INT_MIN / -1 is INT_MIN."""
    with np.errstate(all="ignore"):
        safe = np.where(y == 0, 1, y).astype(x.dtype)
        if np.issubdtype(x.dtype, np.signedinteger):
            minus_one = safe == -1
            safe = np.where(minus_one, 1, safe).astype(x.dtype)
            q = np.floor_divide(x, safe)
            q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
            q = np.where(minus_one, (-x.astype(np.int64)).astype(x.dtype) if x.dtype.itemsize < 8
                         else np.negative(x), q)
        else:
            q = np.floor_divide(x, safe)
        all_ones = np.array(-1).astype(x.dtype) if x.dtype.kind == "i" else np.iinfo(x.dtype).max
        return np.where(y == 0, all_ones, q).astype(x.dtype)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        return _int_div(x, y)
    with np.errstate(all="ignore"):
        return np.divide(x, y)


def _quiet(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    @functools.wraps(fn)
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return wrapped


def _pred_aware(numeric: Callable, logical: Callable) -> Callable:
    return lambda x, y: logical(x, y) if x.dtype == np.bool_ else numeric(x, y)


# name -> (admitted kinds, reference semantics)
BINARY_OPS: dict[str, tuple[tuple[str, ...], Callable]] = {
    # StableHLO: add/mul of pred are logical or/and.
    "add": (ALL, _quiet(_pred_aware(np.add, np.logical_or))),
    "sub": (NUMERIC, _quiet(np.subtract)),
    "mul": (ALL, _quiet(_pred_aware(np.multiply, np.logical_and))),
    "div": (NUMERIC, _div),
    "max": (ALL, np.maximum),
    "min": (ALL, np.minimum),
}

UNARY_OPS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "neg": (NUMERIC, _quiet(np.negative)),
    "exp": (INEXACT, _quiet(np.exp)),
    "log": (INEXACT, _quiet(np.log)),
    "tanh": (INEXACT, _quiet(np.tanh)),
}

COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
_COMPARE_NUMPY = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less,
                  "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal}


# --------------------------------------------------------------------------
# shape rules
# --------------------------------------------------------------------------

def _same_shape(op: str, *avals: AbstractValue) -> None:
    first = avals[0]
    for a in avals[1:]:
        if a.dimensions != first.dimensions:
            raise ShapeError(op, "operand dimensions must be equal (broadcast explicitly "
                                 "with broadcast_in_dim)", *avals)
        if a.element_type is not first.element_type:
            raise ShapeError(op, "operand element types must be equal (convert with "
                                 "convert_element_type)", *avals)


def _unary_rule(op: str, kinds: tuple[str, ...], x: AbstractValue) -> AbstractValue:
    check_kinds(op, x, kinds)
    return array_value(x.element_type, x.dimensions, x.weak_type)


def _binary_rule(op: str, kinds: tuple[str, ...], x: AbstractValue, y: AbstractValue
                 ) -> AbstractValue:
    _same_shape(op, x, y)
    check_kinds(op, x, kinds)
    return array_value(x.element_type, x.dimensions, x.weak_type and y.weak_type)


UNARY_PRIMITIVES: dict[str, Primitive] = {}
BINARY_PRIMITIVES: dict[str, Primitive] = {}

for _name, (_kinds, _impl) in UNARY_OPS.items():
    _p = Primitive(_name)
    _p.def_abstract_eval(functools.partial(_unary_rule, _name, _kinds))
    _p.def_impl(_impl)
    UNARY_PRIMITIVES[_name] = _p

for _name, (_kinds, _impl) in BINARY_OPS.items():
    _p = Primitive(_name)
    _p.def_abstract_eval(functools.partial(_binary_rule, _name, _kinds))
    _p.def_impl(_impl)
    BINARY_PRIMITIVES[_name] = _p

add_p, sub_p, mul_p, div_p, max_p, min_p = (BINARY_PRIMITIVES[n] for n in
                                            ("add", "sub", "mul", "div", "max", "min"))
neg_p, exp_p, log_p, tanh_p = (UNARY_PRIMITIVES[n] for n in ("neg", "exp", "log", "tanh"))

# Compare -------------------------------------------------------------------
compare_p = Primitive("compare")


@compare_p.def_abstract_eval
def _compare_rule(x: AbstractValue, y: AbstractValue, *, direction: str) -> AbstractValue:
    if direction not in COMPARISON_DIRECTIONS:
        raise ShapeError("compare", f"comparison_direction {direction!r} is not one of "
                                    f"{', '.join(COMPARISON_DIRECTIONS)}", x, y)
    _same_shape("compare", x, y)
    if x.element_type.is_complex and direction not in ("EQ", "NE"):
        raise ShapeError("compare", f"direction {direction} is not defined for complex operands",
                         x, y)
    return array_value(PT.PRED, x.dimensions)


@compare_p.def_impl
def _compare_impl(x: np.ndarray, y: np.ndarray, *, direction: str) -> np.ndarray:
    return _COMPARE_NUMPY[direction](x, y)


# Select --------------------------------------------------------------------
select_p = Primitive("select")


@select_p.def_abstract_eval
def _select_rule(pred: AbstractValue, on_true: AbstractValue, on_false: AbstractValue
                 ) -> AbstractValue:
    if pred.element_type is not PT.PRED:
        raise ShapeError("select", f"pred must have element type pred, got "
                                   f"{pred.element_type.short_name}", pred, on_true, on_false)
    _same_shape("select", on_true, on_false)
    if pred.dimensions not in ((), on_true.dimensions):
        raise ShapeError("select", "pred must be a scalar or have the dimensions of on_true "
                                   "and on_false", pred, on_true, on_false)
    return array_value(on_true.element_type, on_true.dimensions,
                       on_true.weak_type and on_false.weak_type)


@select_p.def_impl
def _select_impl(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


# ConvertElementType -----------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type")


@convert_element_type_p.def_abstract_eval
def _convert_rule(x: AbstractValue, *, new_dtype: PT) -> AbstractValue:
    if not isinstance(new_dtype, PT) or not new_dtype.is_array:
        raise ShapeError("convert_element_type", f"new_dtype must be an array element type, "
                                                 f"got {new_dtype!r}", x)
    return array_value(new_dtype, x.dimensions)


def convert_values(x: np.ndarray, new_dtype: PT) -> np.ndarray:
    """XLA's conversion: float to integer saturates and maps NaN to 0;
    complex to real drops the imaginary part; to pred is ``x != 0``."""
    target = new_dtype.numpy_dtype
    if new_dtype is PT.PRED:
        return x != 0
    if x.dtype.kind == "c" and target.kind != "c":
        x = x.real
    if x.dtype.kind == "f" and target.kind in "iu":
        info = np.iinfo(target)
        with np.errstate(invalid="ignore"):
            clipped = np.clip(np.nan_to_num(x, nan=0.0), info.min, info.max)
            # the float bounds may round past the integer range: clamp after converting
            out = np.where(x >= float(info.max), info.max,
                           np.where(x <= float(info.min), info.min, clipped.astype(target)))
        return out.astype(target)
    with np.errstate(all="ignore"):
        return x.astype(target)


@convert_element_type_p.def_impl
def _convert_impl(x: np.ndarray, *, new_dtype: PT) -> np.ndarray:
    return convert_values(x, new_dtype)


# --------------------------------------------------------------------------
# user-facing functions
# --------------------------------------------------------------------------

def convert_element_type(x: Any, new_dtype: Any) -> Any:
    """Convert ``x`` to ``new_dtype`` (a dtype, a name such as ``'f32'``, or a
    ``PrimitiveType``); a no-op when it already has that type."""
    t = canonical_type(new_dtype)
    aval = abstractify(x)
    if aval.element_type is t and not aval.weak_type:
        return x
    if not hasattr(x, "shape") or isinstance(x, (int, float, complex, bool)):
        return np.asarray(x, dtype=t.numpy_dtype)  # a Python scalar: convert now
    return convert_element_type_p.bind(x, new_dtype=t)


def promote(*args: Any) -> list[Any]:
    """Convert arguments to their common element type (see ``dtypes``)."""
    t, _weak = result_type(*args)
    return [convert_element_type(a, t) if abstractify(a).element_type is not t
            or abstractify(a).weak_type else a for a in args]


def _broadcast_scalars(args: list[Any]) -> list[Any]:
    from .shape_ops import broadcast_in_dim
    dims = [abstractify(a).dimensions for a in args]
    target = next((d for d in dims if d != ()), ())
    return [broadcast_in_dim(a, target, ()) if d == () and target != () else a
            for a, d in zip(args, dims)]


def _binary(prim: Primitive) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        x, y = _broadcast_scalars(promote(x, y))
        return prim.bind(x, y)
    fn.__name__ = prim.name
    fn.__doc__ = (f"XLA's element-wise ``{prim.name}``; rank-0 operands broadcast and "
                  f"Python scalars are weakly typed.")
    return fn


def _unary(prim: Primitive) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        (x,) = promote(x)
        return prim.bind(x)
    fn.__name__ = prim.name
    fn.__doc__ = f"XLA's element-wise ``{prim.name}``."
    return fn


add, sub, mul, div, max, min = (_binary(p) for p in (add_p, sub_p, mul_p, div_p, max_p, min_p))
neg, exp, log, tanh = (_unary(p) for p in (neg_p, exp_p, log_p, tanh_p))


def compare(x: Any, y: Any, direction: str) -> Any:
    """XLA's Compare with ``comparison_direction`` ``EQ, NE, LT, LE, GT, GE``."""
    x, y = _broadcast_scalars(promote(x, y))
    return compare_p.bind(x, y, direction=str(direction).upper())


def eq(x, y): return compare(x, y, "EQ")
def ne(x, y): return compare(x, y, "NE")
def lt(x, y): return compare(x, y, "LT")
def le(x, y): return compare(x, y, "LE")
def gt(x, y): return compare(x, y, "GT")
def ge(x, y): return compare(x, y, "GE")


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """XLA's Select: ``on_true`` where ``pred`` else ``on_false`` (``pred`` may be a scalar)."""
    on_true, on_false = _broadcast_scalars(promote(on_true, on_false))
    if isinstance(pred, bool):
        pred = np.bool_(pred)
    return select_p.bind(pred, on_true, on_false)
