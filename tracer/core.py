"""The tracer core: abstract values, primitives, interpreters and tracers.

numxla follows JAX's newer design ("one current interpreter with a parent",
as in JAX's autodidax2): every operation is ``primitive.bind(*args,
**params)``, which hands the operation to the *current interpreter*.

* :class:`EvalInterpreter` (the bottom of every chain) runs a primitive's
  reference semantics on concrete NumPy arrays.
* :class:`tracer.graph.GraphBuilder` records the operation as an equation of
  a :class:`tracer.graph.Graph` and returns a tracer standing for its result.
* transforms (``autodiff``) add interpreters of their own, each with a
  ``parent`` it delegates to.

Rules live in tables keyed by primitive, one table per concern:
``abstract_eval_rules`` and ``impl_rules`` here; ``autodiff`` and
``compile`` keep their own tables.  Adding an op touches one place per
concern.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .config import canonicalize_type, config
from .shapes import PrimitiveType, Shape, ShapeTooLarge

__all__ = [
    "AbstractValue", "Primitive", "TypedPrimitive", "Tracer", "Interpreter", "EvalInterpreter",
    "abstract_eval_rules", "impl_rules", "PRIMITIVES", "abstractify",
    "current_interpreter", "set_interpreter", "TracerError",
    "ConcretizationError", "ConcretizationTypeError", "TracerBoolConversionError",
    "TracerIntegerConversionError", "TracerArrayConversionError", "NonConcreteBooleanIndexError",
    "LeakedTracerError",
    "ShapeError", "OPERATORS",
    "DEFAULT_FLOAT", "DEFAULT_INT", "BF16Array", "bf16_array", "DynamicArray", "dynamic_array",
    "runtime_sizes", "FLOAT0", "is_float0", "EagerArray", "OPERATOR_NAMES", "default_int",
    "default_float", "default_complex", "eager_array", "array_repr", "is_operand",
    "bf16_display", "check_special_values",
]

# Python scalars are weakly typed (as in JAX): their dtype yields to the
# other operand's; alone they become these types without x64, and their
# 64-bit versions with it (``default_int()``...).
DEFAULT_INT = PrimitiveType.S32
DEFAULT_FLOAT = PrimitiveType.F32
DEFAULT_COMPLEX = PrimitiveType.C64


def default_int() -> PrimitiveType:
    """The type of a Python int alone: s32, or s64 with x64 on (JAX's default int)."""
    return canonicalize_type(PrimitiveType.S64)


def default_float() -> PrimitiveType:
    """The type of a Python float alone: f32, or f64 with x64 on."""
    return canonicalize_type(PrimitiveType.F64)


def default_complex() -> PrimitiveType:
    return canonicalize_type(PrimitiveType.C128)

# JAX's dtype of the tangent of an integer or boolean value: it carries no
# data.  Such arrays are never graph values: transforms produce them and
# ``jit`` hands them back around the compiled graph.
FLOAT0 = np.dtype([("float0", np.void, 0)])


def is_float0(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == FLOAT0


# --------------------------------------------------------------------------
# abstract values
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class AbstractValue:
    """What tracing knows about a value: its XLA ``Shape`` (element type,
    dimensions, layout) and whether it came from a Python scalar
    (``weak_type``, which lets ``x * 2`` keep ``x``'s dtype)."""

    shape: Shape
    weak_type: bool = False

    @property
    def dimensions(self) -> tuple[int, ...]:
        return self.shape.dimensions

    @property
    def element_type(self) -> PrimitiveType:
        return self.shape.element_type

    @property
    def dtype(self) -> np.dtype:
        return self.shape.element_type.numpy_dtype

    @property
    def ndim(self) -> int:
        return len(self.shape.dimensions)

    @property
    def layout(self):
        return self.shape.layout

    @property
    def size(self) -> int:
        return int(np.prod(self.shape.dimensions, dtype=np.int64))

    def strip_layout(self) -> "AbstractValue":
        """The same value with the default (major-to-minor) layout."""
        if not self.shape.is_array:
            return self
        return AbstractValue(Shape(self.shape.element_type, self.shape.dimensions), self.weak_type)

    def strong(self) -> "AbstractValue":
        return dataclasses.replace(self, weak_type=False) if self.weak_type else self

    def __str__(self) -> str:
        return str(self.shape) + ("~weak" if self.weak_type else "")

    def jax_text(self) -> str:
        """As JAX prints an abstract value: ``float32[2,3]``, ``~`` before a weak type."""
        t = self.element_type
        name = "bfloat16" if t is PrimitiveType.BF16 else t.numpy_dtype.name \
            if self.shape.is_array else "?"
        return f"{'~' if self.weak_type else ''}{name}[{','.join(map(str, self.dimensions))}]"


def array_value(element_type: PrimitiveType, dimensions, weak_type: bool = False) -> AbstractValue:
    """An ``AbstractValue`` with default layout; the common result of shape rules."""
    return AbstractValue(Shape(element_type, tuple(int(d) for d in dimensions)), weak_type)


_NUMPY_AVALS: dict[tuple, AbstractValue] = {}  # (dtype, shape, x64) -> AbstractValue


def abstractify(x: Any) -> AbstractValue:
    """The abstract value of a concrete input (or of a tracer)."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, AbstractValue):
        return x
    if isinstance(x, Shape):
        return AbstractValue(x)
    aval_of = getattr(x, "__numxla_aval__", None)
    if aval_of is not None:
        return aval_of()
    if isinstance(x, np.ma.MaskedArray):  # its mask would be dropped silently
        raise TypeError("a NumPy masked array is not a numxla value: its masked elements would "
                        "count as data; pass arr.filled(value) or arr.data")
    if isinstance(x, (np.ndarray, np.generic)):  # before int/float: np.float64 is a float
        key = (x.dtype, np.shape(x), config.jax_enable_x64)
        aval = _NUMPY_AVALS.get(key)
        if aval is None:
            if len(_NUMPY_AVALS) > 4096:
                _NUMPY_AVALS.clear()
            t = canonicalize_type(PrimitiveType.from_dtype(x.dtype))  # (f64 -> f32 without x64)
            aval = _NUMPY_AVALS[key] = AbstractValue(Shape(t, tuple(np.shape(x))))
        return aval
    if isinstance(x, bool):
        return AbstractValue(Shape(PrimitiveType.PRED, ()), weak_type=True)
    if isinstance(x, int):
        return AbstractValue(Shape(default_int(), ()), weak_type=True)
    if isinstance(x, float):
        return AbstractValue(Shape(default_float(), ()), weak_type=True)
    if isinstance(x, complex):
        return AbstractValue(Shape(default_complex(), ()), weak_type=True)
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # ShapeDtypeStruct-like
        t = canonicalize_type(PrimitiveType.from_dtype(np.dtype(x.dtype)))
        return AbstractValue(Shape(t, tuple(x.shape)))
    raise TypeError(f"{type(x).__name__} is not a valid numxla value: expected an array, "
                    f"a Python scalar or a Shape, got {x!r:.80}")


def to_numpy(x: Any, aval: AbstractValue | None = None) -> np.ndarray:
    """A concrete value as a NumPy array of its abstract value's dtype."""
    if aval is None:
        aval = abstractify(x)
    if not isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)) and \
            not hasattr(x, "__array__") and hasattr(x, "shape") and hasattr(x, "dtype"):
        raise TypeError(f"{type(x).__name__} has a shape and dtype ({aval.shape}) but no "
                        f"values: pass an array to compute (a shape-only value is for "
                        f"tracing, e.g. jit(f).lower(...))")
    return np.asarray(x, dtype=aval.dtype)


# --------------------------------------------------------------------------
# primitives and their rule tables
# --------------------------------------------------------------------------

abstract_eval_rules: dict["Primitive", Callable[..., Any]] = {}
impl_rules: dict["Primitive", Callable[..., Any]] = {}
PRIMITIVES: dict[str, "Primitive"] = {}


class Primitive:
    """One XLA operation.  ``bind`` hands it to the current interpreter.

    ``multiple_results``: the op returns a tuple of values (e.g. ``sort`` of
    several operands, ``batch_norm_training``).  ``has_side_effect``: the op
    must not be removed or reordered (``outfeed``, ``send``...).

    ``impl_needs_operand_types`` (a class attribute): the reference semantics
    are called with ``operand_types=`` (the operands' ``PrimitiveType`` s), for
    ops whose NumPy storage does not say the element type (bf16 and u16 are
    both uint16 words).  Shape rules and graphs never see it.
    """

    impl_needs_operand_types: bool = False

    def __init__(self, name: str, *, multiple_results: bool = False,
                 has_side_effect: bool = False):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is defined twice")
        self.name = name
        self.multiple_results = multiple_results
        self.has_side_effect = has_side_effect
        PRIMITIVES[name] = self

    def bind(self, *args: Any, **params: Any) -> Any:
        if _state.eval_constants and not self.has_side_effect and \
                not any(isinstance(a, Tracer) for a in args):
            return _EAGER.interpret(self, args, params)   # ensure_compile_time_eval
        return current_interpreter().interpret(self, args, params)

    def abstract_eval(self, *avals: AbstractValue, **params: Any) -> tuple[AbstractValue, ...]:
        """Output abstract values as a tuple (one element unless ``multiple_results``)."""
        rule = abstract_eval_rules.get(self)
        if rule is None:
            raise NotImplementedError(f"{self.name}: no shape rule registered")
        try:
            out = rule(*avals, **params)
        except ShapeTooLarge as error:  # raised building a result's Shape: name the op
            raise ShapeError(self.name, str(error), *avals) from None
        return tuple(out) if self.multiple_results else (out,)

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        abstract_eval_rules[self] = rule
        return rule

    def def_impl(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        impl_rules[self] = rule
        return rule

    def __repr__(self) -> str:
        return self.name


class TypedPrimitive(Primitive):
    """A primitive whose reference semantics are told the operands' element
    types (``operand_types=``), since bf16 and u16 are both uint16 words in
    NumPy; shape rules and graphs never see them."""

    impl_needs_operand_types = True


# --------------------------------------------------------------------------
# interpreters
# --------------------------------------------------------------------------

class TracerError(Exception):
    """Base of the errors raised when a traced value is misused."""


class ConcretizationError(TracerError, TypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""


# JAX's names for the ways of asking a traced value for a concrete one; each
# is a ConcretizationError, so code catching that catches them all
class ConcretizationTypeError(ConcretizationError):
    """``int()``/``float()``/``complex()`` of a traced value."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced value: an ``if``, ``while``, ``and``, ``or``, ``not``."""


class TracerIntegerConversionError(ConcretizationError):
    """A traced value used as a Python index (``__index__``)."""


class TracerArrayConversionError(ConcretizationError):
    """``np.asarray()`` of a traced value."""


class NonConcreteBooleanIndexError(IndexError):
    """Indexing with a traced boolean mask: the result's shape would depend on its values."""


class LeakedTracerError(TracerError):
    """A traced value escaped the function being traced and was used later."""


class ShapeError(TypeError, ValueError):
    """An op was called with shapes, element types or parameters XLA rejects.

    Raised by shape rules at trace time; the message names the op, the
    operand shapes and the parameter at fault.  It is both a ``TypeError``
    (as ``jax.lax`` raises) and a ``ValueError``.
    """

    def __init__(self, op: str, message: str, *operands: "AbstractValue | Shape"):
        shapes = ", ".join(str(o.shape if isinstance(o, AbstractValue) else o) for o in operands)
        detail = f" (operands: {shapes})" if operands else ""
        super().__init__(f"{op}: {message}{detail}")
        self.op = op


class Interpreter:
    """Handles ``bind`` calls; ``parent`` is the interpreter it runs on."""

    parent: "Interpreter | None" = None
    active: bool = True

    def interpret(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        raise NotImplementedError

    def is_ancestor_of(self, other: "Interpreter") -> bool:
        node: Interpreter | None = other
        while node is not None:
            if node is self:
                return True
            node = node.parent
        return False


class EvalInterpreter(Interpreter):
    """Runs primitives eagerly with their reference semantics (NumPy).

    The shape rule runs first, so an eager call raises the same error as a
    traced one; the result is then checked against the rule's output."""

    def interpret(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        for a in args:
            if isinstance(a, Tracer):
                raise a._leaked_error(f"it was passed to {primitive.name}")
        avals = tuple(abstractify(a) for a in args)
        out_avals = primitive.abstract_eval(*avals, **params)
        impl = impl_rules.get(primitive)
        if impl is None:
            raise NotImplementedError(f"{primitive.name}: no reference semantics registered")
        # Tokens and tuples are passed through as the runtime objects they are.
        arrays = tuple(to_numpy(a, av) if av.shape.is_array else a for a, av in zip(args, avals))
        if primitive.impl_needs_operand_types:
            params = dict(params, operand_types=tuple(av.element_type for av in avals))
        dynamic = any(av.shape.dynamic_dimensions for av in avals + out_avals)
        if dynamic:
            arrays = _slice_to_runtime_sizes(args, arrays, avals, out_avals)
        out = impl(*arrays, **params)
        outs = tuple(out) if primitive.multiple_results else (out,)
        if len(outs) != len(out_avals):
            raise AssertionError(f"{primitive.name}: reference gave {len(outs)} results, "
                                 f"shape rule {len(out_avals)}")
        check = _check_dynamic if dynamic else _check_concrete
        results = tuple(check(primitive, o, av) for o, av in zip(outs, out_avals))
        if config.jax_debug_nans or config.jax_debug_infs:
            check_special_values(primitive.name, results)
        return results if primitive.multiple_results else results[0]


def check_special_values(where: str, values: Sequence[Any]) -> None:
    """With ``jax_debug_nans`` (``jax_debug_infs``) on: a ``FloatingPointError``
    if a float value among ``values`` holds a NaN (an infinity), as JAX raises."""
    for value in values:
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "fc") or \
                isinstance(value, BF16Array):
            continue
        if config.jax_debug_nans and np.isnan(value).any():
            raise FloatingPointError(f"invalid value (nan) encountered in {where}")
        if config.jax_debug_infs and np.isinf(value).any():
            raise FloatingPointError(f"divide by zero or overflow (inf) encountered in {where}")


# Bounded dynamic dimensions (XLA's SetDimensionSize): an eager value is a
# DynamicArray of the bound's shape whose elements past the run-time sizes are
# padding.  The reference semantics run on the operands cut to their run-time
# sizes, so padding never takes part ("padded values are ignored by
# reductions"); results shorter than their shape rule's bounds become
# DynamicArrays again.

def runtime_sizes(x: Any) -> tuple[int, ...] | None:
    sizes = getattr(x, "dynamic_sizes", None)
    return tuple(sizes) if sizes is not None else None


def _slice_to_runtime_sizes(args: tuple, arrays: tuple, avals: tuple, out_avals: tuple) -> tuple:
    sizes = [runtime_sizes(a) or (av.dimensions if av.shape.is_array else None)
             for a, av in zip(args, avals)]
    array_sizes = [s for s, av in zip(sizes, avals) if av.shape.is_array]
    # Operands aligned with a single result (element-wise ops) are cut to the
    # smallest run-time size of each dimension; others to their own sizes.
    aligned = (len(out_avals) == 1 and all(av.dimensions == out_avals[0].dimensions
                                           for av in avals if av.shape.is_array and av.ndim))
    if aligned and array_sizes:
        rank = out_avals[0].ndim
        common = tuple(min(s[d] for s in array_sizes if len(s) == rank) for d in range(rank))
        sizes = [common if av.shape.is_array and av.ndim == rank else s
                 for s, av in zip(sizes, avals)]
    return tuple(x[tuple(slice(0, n) for n in s)] if av.shape.is_array and av.ndim else x
                 for x, s, av in zip(arrays, sizes, avals))


def _check_dynamic(primitive: Primitive, value: Any, aval: AbstractValue) -> Any:
    if not aval.shape.is_array:
        return value
    arr = np.asarray(value).astype(aval.dtype, copy=False)
    bounds = aval.dimensions
    if arr.ndim != len(bounds) or any(n > b for n, b in zip(arr.shape, bounds)):
        raise AssertionError(f"{primitive.name}: reference semantics gave shape {arr.shape}, "
                             f"beyond the bounds {aval.shape}")
    if arr.shape == bounds:
        return arr
    padded = np.zeros(bounds, aval.dtype)
    padded[tuple(slice(0, n) for n in arr.shape)] = arr
    return dynamic_array(padded, arr.shape)


class DynamicArray(np.ndarray):
    """An eager value with bounded dynamic dimensions: the array has the
    bounds' shape, ``dynamic_sizes`` the run-time sizes."""

    dynamic_sizes: tuple[int, ...] | None = None

    def __array_finalize__(self, obj) -> None:
        # a view or slice of a dynamic value is an ordinary array
        self.dynamic_sizes = None

    def __numxla_aval__(self) -> AbstractValue:
        t = PrimitiveType.from_dtype(self.dtype)
        if self.dynamic_sizes is None:
            return AbstractValue(Shape(t, self.shape))
        flags = tuple(n < b for n, b in zip(self.dynamic_sizes, self.shape))
        return AbstractValue(Shape(t, self.shape, dynamic_dimensions=flags))


def dynamic_array(padded: np.ndarray, sizes: Sequence[int]) -> DynamicArray:
    out = np.asarray(padded).view(DynamicArray)
    out.dynamic_sizes = tuple(int(n) for n in sizes)
    return out


def _check_concrete(primitive: Primitive, value: Any, aval: AbstractValue) -> Any:
    if not aval.shape.is_array:
        return value
    arr = np.asarray(value)
    if arr.shape != aval.dimensions:
        raise AssertionError(f"{primitive.name}: reference semantics gave shape {arr.shape}, "
                             f"shape rule says {aval.shape}")
    arr = arr.astype(aval.dtype, copy=False)
    return bf16_array(arr) if aval.element_type is PrimitiveType.BF16 else arr.view(EagerArray)


_EAGER_AVALS: dict[tuple, AbstractValue] = {}  # (dtype, shape) -> its AbstractValue


class DeviceArrayMethods:
    """What eager and compiled arrays share as JAX's arrays: ``.at[...]``,
    and their placement on numxla's one CPU device."""
    __slots__ = ()

    @property
    def at(self) -> Any:
        """JAX's ``x.at[index].set(v)`` (``add``, ``mul``, ``min``, ``max``, ``get``...)."""
        return OPERATORS["attr:at"](self)

    @property
    def sharding(self) -> Any:
        """JAX's ``x.sharding`` (see ``numxla.sharding``: one CPU device)."""
        return OPERATORS["attr:sharding"](self)

    def devices(self) -> set:
        return self.sharding.device_set

    @property
    def device(self) -> Any:
        """JAX's ``x.device``: the one device the array is on (not NumPy's "cpu")."""
        return next(iter(self.devices()))

    def to_device(self, device: Any, *, stream: Any = None) -> Any:
        """The array on ``device``: itself (one CPU device)."""
        return self

    def copy_to_host_async(self) -> None:
        """Nothing to start: the values are in host memory."""


class EagerArray(DeviceArrayMethods, np.ndarray):
    """An eager op's result: a NumPy array that behaves as JAX's arrays do.

    Its Python operators, and NumPy's arithmetic and comparison ufuncs
    applied to it (``np.float64(2) * x``), are the op set's, so promotion is
    JAX's (weak Python scalars, f32 + i32 -> f32, no f64 without x64); so are
    the array methods whose results NumPy would type otherwise (``.sum()``,
    ``.mean()``, ``.astype()``...).  Indexing is NumPy's on the values (a
    traced index traces) and gives eager arrays, 0-d ones for single elements,
    as iteration does.  Other NumPy functions see a plain ndarray.
    """

    def __numxla_aval__(self) -> AbstractValue:
        """Its own element type: an op's result is typed (an f64 result stays
        f64 without x64, as a graph value does under jit)."""
        key = (self.dtype, self.shape)
        aval = _EAGER_AVALS.get(key)
        if aval is None:
            if len(_EAGER_AVALS) > 4096:
                _EAGER_AVALS.clear()
            aval = _EAGER_AVALS[key] = AbstractValue(
                Shape(PrimitiveType.from_dtype(self.dtype), self.shape))
        return aval

    def block_until_ready(self) -> "EagerArray":
        return self

    def __repr__(self) -> str:
        return array_repr(np.asarray(self))

    def __str__(self) -> str:
        return str(np.asarray(self))

    def __format__(self, spec: str) -> str:
        value = np.asarray(self)
        return format(value[()] if value.ndim == 0 else value, spec)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        routed = operator_ufunc(ufunc, method, inputs, kwargs)
        if routed is not NotImplemented:
            return routed
        inputs = tuple(x.view(np.ndarray) if isinstance(x, EagerArray) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, EagerArray) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's functions (``np.unique``, ``np.median``...) see plain ndarrays,
        as they see JAX's arrays, and return NumPy's results."""
        return func(*_plain(args), **_plain(kwargs))

    def __getitem__(self, index: Any) -> Any:
        return eager_getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise _immutable_error(self)

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (eager_array(row) for row in np.asarray(self))

    def __bool__(self) -> bool:
        return bool(np.asarray(self))


def _immutable_error(x: Any) -> TypeError:
    return TypeError(f"JAX arrays are immutable and do not support in-place item assignment "
                     f"({type(x).__name__}). Instead of x[idx] = y, use x = x.at[idx].set(y) "
                     f"or another .at[] method")


def array_repr(values: np.ndarray, dtype_name: str | None = None, extra: str = "") -> str:
    """JAX's ``repr`` of an array: ``Array([1., 2.], dtype=float32)``."""
    prefix = "Array("
    line_width = np.get_printoptions()["linewidth"]
    if dtype_name == "bfloat16":
        values = bf16_display(values)
    text = np.array2string(values, prefix=prefix, suffix=",", separator=", ",
                           max_line_width=line_width)
    if values.size == 0:
        text = f"[], shape={values.shape}"
    dtype_text = f"dtype={dtype_name or values.dtype.name}{extra})"
    last_line = len(text) - text.rfind("\n") + 1
    sep = " " * len(prefix) if last_line + len(dtype_text) + 1 > line_width else " "
    return f"{prefix}{text},{sep}{dtype_text}"


def _plain(x: Any) -> Any:
    """``x`` with every eager array in it (in lists, tuples, dicts) as a plain ndarray."""
    if isinstance(x, EagerArray):
        return x.view(np.ndarray)
    if type(x) in (list, tuple):
        return type(x)(_plain(v) for v in x)
    if type(x) is dict:
        return {k: _plain(v) for k, v in x.items()}
    return x


def eager_array(x: Any) -> "EagerArray":
    """``x``'s values as an eager array (a NumPy scalar as a 0-d one)."""
    return np.asarray(x).view(EagerArray)


def _has_tracer(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, Tracer) or (isinstance(p, (list, tuple)) and _has_tracer(tuple(p)))
               for p in parts)


def _numpy_index(index: Any) -> Any:
    """An index with numxla arrays in it as NumPy's (their values)."""
    if isinstance(index, tuple):
        return tuple(_numpy_index(p) for p in index)
    if hasattr(index, "__numxla_aval__") and not isinstance(index, np.ndarray):
        return np.asarray(index)
    if isinstance(index, EagerArray):
        return index.view(np.ndarray)
    return index


def eager_getitem(values: np.ndarray, index: Any, source: Any = None) -> Any:
    """``source[index]`` for an eager or runtime array whose values are
    ``values``: NumPy's indexing, the result an eager array, except that
    out-of-bounds indices clamp, as JAX's do; an index holding a traced value
    is the op set's (it traces)."""
    if _has_tracer(index):
        return OPERATORS["__getitem__"](values if source is None else source, index)
    try:
        return eager_array(values.view(np.ndarray)[_numpy_index(index)])
    except IndexError as error:
        if "out of bounds" not in str(error):
            raise
        # JAX reads out-of-bounds indices clamped (x[11] of 10 elements is x[9])
        return OPERATORS["attr:at"](values if source is None else source)[index].get(mode="clip")


# NumPy's ufuncs that are Python operators: on eager and runtime arrays they
# compute as the operators do (JAX's promotion).  Called by NumPy when a
# NumPy scalar or array is the left operand (``np.float32(2) * x``).
_OPERATOR_UFUNCS = {
    np.add: "__add__", np.subtract: "__sub__", np.multiply: "__mul__",
    np.true_divide: "__truediv__", np.floor_divide: "__floordiv__", np.remainder: "__mod__",
    np.power: "__pow__", np.matmul: "__matmul__", np.bitwise_and: "__and__",
    np.bitwise_or: "__or__", np.bitwise_xor: "__xor__", np.left_shift: "__lshift__",
    np.right_shift: "__rshift__", np.equal: "__eq__", np.not_equal: "__ne__",
    np.less: "__lt__", np.less_equal: "__le__", np.greater: "__gt__",
    np.greater_equal: "__ge__",
}


def operator_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """The op set's result for a NumPy operator ufunc called plainly
    (``ufunc(a, b)``, no ``out``/``dtype``/``where``); NotImplemented for any
    other call, which NumPy then computes."""
    name = _OPERATOR_UFUNCS.get(ufunc)
    if name is None or method != "__call__" or kwargs or name not in OPERATORS or \
            len(inputs) != 2:  # (np.negative(x) itself is NumPy's)
        return NotImplemented
    if any(isinstance(x, np.ndarray) and x.dtype == object for x in inputs) or any(
            abstractify(x).element_type is PrimitiveType.BF16 for x in inputs
            if hasattr(x, "__numxla_aval__")):
        return NotImplemented  # bf16: NumPy computes on the values
    return OPERATORS[name](*inputs)


# Methods NumPy would type otherwise (an s32 array's ``mean`` is f64 in
# NumPy, f32 in JAX): eager arrays take them from the op set, except when
# called with NumPy's ``out=``.
EAGER_METHODS = ("sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin",
                 "cumsum", "cumprod", "any", "all", "astype", "dot", "argsort", "round", "clip",
                 "trace", "sort")


_NUMPY_ONLY = {"order", "casting", "subok"}  # NumPy's own arguments: NumPy's method


def _eager_method(name: str) -> Callable[..., Any]:
    numpy_method = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        fn = OPERATORS.get(f"attr:{name}")
        if fn is None or kwargs.get("out") is not None or _NUMPY_ONLY.intersection(kwargs):
            return numpy_method(self.view(np.ndarray), *args, **kwargs)
        kwargs.pop("out", None)
        return fn(self)(*args, **kwargs)
    method.__name__ = name
    method.__doc__ = numpy_method.__doc__
    return method


for _name in EAGER_METHODS:
    setattr(EagerArray, _name, _eager_method(_name))


def _bf16_print_dtype() -> Any:
    """ml_dtypes' bf16 where installed (bf16 values print with bf16's digits,
    ``[1.5 2]``, as JAX's), else None."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def bf16_display(values: np.ndarray) -> np.ndarray:
    """bf16 values (as f32) to print: as ml_dtypes' bf16 where installed, so
    they print with bf16's digits (``[1.5 2]``, as JAX), else as they are."""
    dtype = _bf16_print_dtype()
    return values if dtype is None else values.astype(dtype)


class BF16Array(np.ndarray):
    """A NumPy array of bf16 values, stored as 16-bit words (the upper half of
    the f32 bit pattern).  NumPy has no bf16, so eager bf16 values are uint16
    arrays marked with this subclass, which tells ``abstractify`` their type.
    ``np.asarray`` gives the raw words; ``tracer.shapes.bf16_to_f32`` their values."""

    def __numxla_aval__(self) -> AbstractValue:
        return AbstractValue(Shape(PrimitiveType.BF16, self.shape))

    def values(self) -> np.ndarray:
        """The values, as f32 (exactly: every bf16 is an f32)."""
        from .shapes import bf16_to_f32
        return bf16_to_f32(self.view(np.ndarray))

    def __repr__(self) -> str:
        return array_repr(self.values(), "bfloat16")

    def __str__(self) -> str:
        return str(bf16_display(self.values()))

    def __format__(self, spec: str) -> str:
        value = self.values()
        return format(value[()] if value.ndim == 0 else value, spec)

    # NumPy arithmetic would act on the raw words: operators go to the op set.
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented

    def __getitem__(self, index: Any) -> Any:
        """Indexing as an eager array's (clamped, traced indices trace); the
        result keeps the words, a single element as a 0-d BF16Array."""
        if _has_tracer(index):
            return OPERATORS["__getitem__"](self, index)
        try:
            return np.asarray(self.view(np.ndarray)[_numpy_index(index)]).view(BF16Array)
        except IndexError as error:
            if "out of bounds" not in str(error):
                raise
            return OPERATORS["attr:at"](self)[index].get(mode="clip")

    def __setitem__(self, index: Any, value: Any) -> None:
        raise _immutable_error(self)

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    @property
    def at(self) -> Any:
        return OPERATORS["attr:at"](self)

    def block_until_ready(self) -> "BF16Array":
        return self

    def tolist(self) -> Any:
        return self.values().tolist()

    def item(self, *args: Any) -> Any:
        return self.values().item(*args)

    def __float__(self) -> float:
        return float(self.values())

    def __int__(self) -> int:
        return int(self.values())

    def __bool__(self) -> bool:
        return bool(self.values())


for _name in EAGER_METHODS:
    setattr(BF16Array, _name, _eager_method(_name))



def bf16_array(words: Any) -> BF16Array:
    """Mark uint16 words (or round float values) as an eager bf16 array."""
    arr = np.asarray(words)
    if arr.dtype != np.uint16:
        from .shapes import bf16_from_f32
        arr = bf16_from_f32(arr)
    return arr.view(BF16Array)


class _InterpreterState(threading.local):
    def __init__(self):
        self.current: Interpreter = EvalInterpreter()
        self.eval_constants = False


_state = _InterpreterState()
_EAGER = EvalInterpreter()


@contextlib.contextmanager
def eval_constants() -> Iterator[None]:
    """While the block runs, an op none of whose operands is traced runs
    eagerly even inside a trace, so its result is a concrete value Python
    can branch on or index with (JAX's ``ensure_compile_time_eval``)."""
    previous = _state.eval_constants
    _state.eval_constants = True
    try:
        yield
    finally:
        _state.eval_constants = previous


def current_interpreter() -> Interpreter:
    return _state.current


@contextlib.contextmanager
def set_interpreter(interpreter: Interpreter) -> Iterator[Interpreter]:
    """Make ``interpreter`` current for the duration of the block (per thread)."""
    previous = _state.current
    _state.current = interpreter
    try:
        yield interpreter
    finally:
        _state.current = previous


# --------------------------------------------------------------------------
# tracers
# --------------------------------------------------------------------------

# Python operators on tracers are defined by the op set (primitives/), which
# fills this table: name -> function(self, other) (or function(self)).
OPERATORS: dict[str, Callable[..., Any]] = {}


def is_operand(x: Any) -> bool:
    """Whether ``x`` can be an operand of an array's Python operator; for
    anything else the operator returns NotImplemented, so Python asks the
    other operand (``x == pytest.approx(...)``), as JAX's arrays do."""
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)) or \
        hasattr(x, "__numxla_aval__")


def _operator(name: str) -> Callable[..., Any]:
    def method(self, *args):
        fn = OPERATORS.get(name)
        if fn is None:
            raise TypeError(f"operator {name} on a traced value needs the op set: import primitives")
        if args and name != "__getitem__" and not is_operand(args[0]):
            return NotImplemented
        return fn(self, *args)
    method.__name__ = name
    return method


class Tracer:
    """A value standing for an array during tracing.

    Subclasses belong to one interpreter (``_interpreter``) and carry an
    ``aval``.  Python operators dispatch through :data:`OPERATORS`; asking
    for a concrete value (``bool``, ``int``, ``np.asarray``) raises
    :class:`ConcretizationError` naming the argument it depends on.
    """

    __array_priority__ = 1000
    _interpreter: Interpreter
    aval: AbstractValue

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.dimensions

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def xla_shape(self) -> Shape:
        return self.aval.shape

    def __len__(self) -> int:
        if not self.aval.dimensions:
            raise TypeError("len() of a rank-0 traced value")
        return self.aval.dimensions[0]

    # -- concreteness errors ------------------------------------------------
    def describe_origin(self) -> str:
        """Which inputs of the traced function this value depends on."""
        return "a traced value"

    def _concretization_error(self, what: str, kind: type = ConcretizationTypeError
                              ) -> ConcretizationError:
        return kind(
            f"{what} needs a concrete value, but {self.describe_origin()} "
            f"({self.aval.shape}) is abstract while tracing. Python control flow "
            f"(if/while/and/or/bool) cannot depend on a traced value: use "
            f"lax.cond / lax.select / lax.while_loop instead, or mark the "
            f"argument static (jit(..., static_argnums=...)).")

    def _leaked_error(self, how: str) -> LeakedTracerError:
        return LeakedTracerError(
            f"a traced value ({self.describe_origin()}, {self.aval.shape}) was used "
            f"after the trace that made it had finished ({how}). It escaped the "
            f"traced function, e.g. stored in a global, a closure or an object "
            f"attribute. Return it as an output of the function instead.")

    def __bool__(self):
        raise self._concretization_error("bool() (an if, while, and, or, not)",
                                        TracerBoolConversionError)

    def __int__(self):
        raise self._concretization_error("int()")

    def __float__(self):
        raise self._concretization_error("float()")

    def __complex__(self):
        raise self._concretization_error("complex()")

    def __index__(self):
        raise self._concretization_error("using a traced value as a Python index",
                                        TracerIntegerConversionError)

    def __array__(self, dtype=None, copy=None):
        raise self._concretization_error("np.asarray()",
                                        TracerArrayConversionError)

    def __iter__(self):
        if not self.aval.dimensions:
            raise TypeError("iteration over a rank-0 traced value")
        return (self[i] for i in range(self.aval.dimensions[0]))

    __hash__ = object.__hash__

    __add__ = _operator("__add__")
    __radd__ = _operator("__radd__")
    __sub__ = _operator("__sub__")
    __rsub__ = _operator("__rsub__")
    __mul__ = _operator("__mul__")
    __rmul__ = _operator("__rmul__")
    __truediv__ = _operator("__truediv__")
    __rtruediv__ = _operator("__rtruediv__")
    __floordiv__ = _operator("__floordiv__")
    __rfloordiv__ = _operator("__rfloordiv__")
    __mod__ = _operator("__mod__")
    __rmod__ = _operator("__rmod__")
    __pow__ = _operator("__pow__")
    __rpow__ = _operator("__rpow__")
    __matmul__ = _operator("__matmul__")
    __rmatmul__ = _operator("__rmatmul__")
    __and__ = _operator("__and__")
    __rand__ = _operator("__rand__")
    __or__ = _operator("__or__")
    __ror__ = _operator("__ror__")
    __xor__ = _operator("__xor__")
    __rxor__ = _operator("__rxor__")
    __lshift__ = _operator("__lshift__")
    __rshift__ = _operator("__rshift__")
    __rlshift__ = _operator("__rlshift__")
    __rrshift__ = _operator("__rrshift__")
    __neg__ = _operator("__neg__")
    __pos__ = _operator("__pos__")
    __abs__ = _operator("__abs__")
    __invert__ = _operator("__invert__")
    __eq__ = _operator("__eq__")  # type: ignore[assignment]
    __ne__ = _operator("__ne__")  # type: ignore[assignment]
    __lt__ = _operator("__lt__")
    __le__ = _operator("__le__")
    __gt__ = _operator("__gt__")
    __ge__ = _operator("__ge__")
    __getitem__ = _operator("__getitem__")

    def __getattr__(self, name: str):
        # Array methods (.T, .reshape, .sum, .astype ...) come from the op set.
        fn = OPERATORS.get(f"attr:{name}")
        if fn is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return fn(self)


# Python's operators that the op set defines (``OPERATORS``), for the
# array types that take theirs from it.
OPERATOR_NAMES = tuple(f"__{n}__" for n in (
    "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
    "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "and", "rand", "or", "ror",
    "xor", "rxor", "lshift", "rlshift", "rshift", "rrshift", "neg", "pos", "abs", "invert",
    "eq", "ne", "lt", "le", "gt", "ge"))

# Eager bf16 arrays take their operators from the op set too, and so do
# dynamic arrays: ``x * 2 + 1`` computes on the run-time sizes, as under jit
# (NumPy functions still see the whole padded buffer).
def _round(self, ndigits: int | None = None) -> Any:
    """Python's ``round`` as JAX's: ``jnp.round(x, ndigits)``, an integer
    array when ``ndigits`` is None."""
    out = OPERATORS["attr:round"](self)(ndigits or 0)
    return out if ndigits is not None else OPERATORS["attr:astype"](out)(default_int())


Tracer.__round__ = _round
EagerArray.__round__ = _round

for _name in OPERATOR_NAMES:
    setattr(BF16Array, _name, _operator(_name))
    setattr(DynamicArray, _name, _operator(_name))
    setattr(EagerArray, _name, _operator(_name))
