"""Reductions: XLA's Reduce and the shortcut reductions kept as primitives.

``reduce(operands, init_values, computation, dimensions)`` is XLA's Reduce,
variadic as in the document's argmax example: ``computation(acc, x)``
receives pytrees shaped like ``operands`` (one scalar per operand) and
returns one, as in ``jax.lax.reduce``; a primitive such as ``lax.add`` is a
valid computation for a single operand.  The computation is traced into a
sub-graph (the ``computation`` parameter).

XLA leaves the order of application unspecified; the reference semantics is
the document's sequential one, ``f(...f(f(init, x_0), x_1)..., x_{n-1})``
over the reduced elements in row-major order, evaluated for all result
elements at once (the computation's ops are element-wise on scalars, so the
sub-graph runs on whole arrays).  A computation that is a single ``add``,
``mul``, ``max``, ``min``, ``and``, ``or`` or ``xor`` runs as one NumPy
reduction instead (float sums then associate pairwise, as XLA may).

As in JAX, the common reductions are primitives of their own with an
implicit identity as init value: ``reduce_sum`` (kept for ``compile/``),
``reduce_prod``, ``reduce_max``, ``reduce_min``, ``reduce_and``,
``reduce_or``, ``reduce_xor`` (parameter ``axes``), and ``argmax`` /
``argmin`` (``axes=(axis,)``, ``index_dtype``; the first maximal or minimal
index, a NaN counting as larger and smaller than everything, as in JAX).
``reduce`` with one of the monoids ``add``/``mul``/``max``/``min`` (and the
bitwise ones) and a concrete identity init value binds the shortcut, as
``jax.lax.reduce`` does.  The shortcuts compute f16 and bf16 in f32 and
round once, as XLA:CPU does.

This module also holds what the windowed reductions and Sort share:
:func:`apply_computation` (a traced scalar computation run element-wise on
arrays).  Ops whose reference semantics need the operands' element types
(bf16 and u16 are both uint16 words) are ``tracer.core.TypedPrimitive`` s.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import (AbstractValue, EvalInterpreter, Primitive, ShapeError, Tracer,
                         TypedPrimitive, abstractify, array_value, bf16_array, impl_rules,
                         set_interpreter)
from numxla.tracer.graph import Graph, Literal, eval_graph
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

from . import elementwise
from ._subgraph import scalar_avals, trace_computation
from ._util import as_int_tuple, canonical_dims, check_kinds
from .dtypes import canonical_type

__all__ = ["reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
           "reduce_or", "reduce_xor", "argmax", "argmin"]

ALL = ("pred", "signed", "unsigned", "float", "complex")
ORDERED = ("pred", "signed", "unsigned", "float")
BITWISE = ("pred", "signed", "unsigned")


# --------------------------------------------------------------------------
# element types at run time
# --------------------------------------------------------------------------

def type_of(x: np.ndarray, operand_types: Sequence[PT] | None, i: int = 0) -> PT:
    """Operand ``i``'s element type: given, or read off its dtype."""
    return operand_types[i] if operand_types else PT.from_dtype(x.dtype)


def widen(x: np.ndarray, t: PT) -> np.ndarray:
    """The values NumPy computes with: f16 and bf16 as f32 (rounded once at the end)."""
    if t is PT.BF16:
        return bf16_to_f32(x)
    return x.astype(np.float32) if t is PT.F16 else x


def narrow(v: Any, t: PT) -> np.ndarray:
    """Values computed by :func:`widen` back to ``t``'s storage."""
    v = np.asarray(v)
    return bf16_from_f32(v) if t is PT.BF16 else v.astype(t.numpy_dtype, copy=False)


# --------------------------------------------------------------------------
# running a scalar computation element-wise over arrays
# --------------------------------------------------------------------------

# At rank 0 these shape ops are the identity.
_RANK0_IDENTITIES = frozenset({"broadcast_in_dim", "broadcast", "reshape", "collapse",
                               "transpose", "rev"})
# Element-wise ops defined outside primitives/elementwise.py.
_OTHER_ELEMENTWISE = frozenset({"reduce_precision", "bitcast_convert_type"})


@functools.cache
def _elementwise_primitives() -> frozenset[Primitive]:
    """Every primitive defined by primitives/elementwise.py."""
    found: set[Primitive] = set()
    for value in vars(elementwise).values():
        if isinstance(value, Primitive):
            found.add(value)
        elif isinstance(value, dict):
            found.update(v for v in value.values() if isinstance(v, Primitive))
    return frozenset(found)


def _vectorisable(graph: Graph) -> bool:
    """Whether every equation is element-wise on scalars, so that the graph
    can run on whole arrays through the primitives' reference semantics."""
    ew = _elementwise_primitives()
    for eq in graph.equations:
        if any(a.aval.ndim for a in eq.inputs) or any(v.aval.ndim for v in eq.outputs):
            return False
        name = eq.primitive.name
        if not (eq.primitive in ew or eq.primitive.impl_needs_operand_types
                or name in _OTHER_ELEMENTWISE or name in _RANK0_IDENTITIES):
            return False
    return True


def _run_vectorised(graph: Graph, values: Sequence[Any]) -> list[np.ndarray]:
    env: dict[Any, Any] = dict(zip(graph.const_vars, graph.const_values))
    env.update(zip(graph.in_vars, values))

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[atom]

    for eq in graph.equations:
        ins = [np.asarray(read(a)) for a in eq.inputs]
        if eq.primitive.name in _RANK0_IDENTITIES:
            outs: Sequence[Any] = ins[:1]
        else:
            shape = np.broadcast_shapes(*(x.shape for x in ins))
            ins = [x if x.shape == shape else np.broadcast_to(x, shape) for x in ins]
            params = dict(eq.params)
            if eq.primitive.impl_needs_operand_types:  # bf16 and u16 share a dtype
                params["operand_types"] = tuple(a.aval.element_type for a in eq.inputs)
            out = impl_rules[eq.primitive](*ins, **params)
            outs = out if eq.primitive.multiple_results else (out,)
        for var, value in zip(eq.outputs, outs):
            env[var] = np.asarray(value).astype(var.aval.dtype, copy=False)
    return [np.asarray(read(a)) for a in graph.out_atoms]


def _run_per_element(graph: Graph, args: Sequence[np.ndarray], extra: Sequence[Any],
                     shape: tuple[int, ...]) -> list[np.ndarray]:
    results = [np.empty(shape, av.dtype) for av in graph.out_avals]
    args = [np.broadcast_to(a, shape) for a in args]
    # eager bf16 values are marked as such (NumPy holds them as uint16 words)
    bf16 = [v.aval.element_type is PT.BF16 for v in graph.in_vars]
    extra = [bf16_array(e) if b else e for e, b in zip(extra, bf16[len(args):])]
    with set_interpreter(EvalInterpreter()):
        for index in np.ndindex(*shape):
            scalars = [bf16_array(a[index]) if b else a[index] for a, b in zip(args, bf16)]
            outs = eval_graph(graph, *scalars, *extra)
            for r, o in zip(results, outs):
                r[index] = o
    return results


def apply_computation(graph: Graph, args: Sequence[np.ndarray], extra: Sequence[Any] = ()
                      ) -> list[np.ndarray]:
    """Apply ``graph``, a computation on scalars, element-wise to ``args``
    (arrays that broadcast together), with ``extra`` (the values it captured)
    passed whole; returns one array of the broadcast shape per result.

    Graphs of element-wise ops run once on whole arrays; any other graph
    runs once per element."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    with np.errstate(all="ignore"):
        if _vectorisable(graph):
            outs = _run_vectorised(graph, [*args, *extra])
        else:
            outs = _run_per_element(graph, args, extra, shape)
    return [o if o.shape == shape else np.array(np.broadcast_to(o, shape)) for o in outs]


def single_binary_op(graph: Graph) -> Primitive | None:
    """The primitive ``p`` if ``graph`` is just ``p(x, y)`` of its two
    parameters (in either order), else ``None``."""
    if len(graph.equations) != 1 or len(graph.in_vars) != 2 or graph.const_vars:
        return None
    eq = graph.equations[0]
    if (len(eq.inputs) == 2 and not eq.params and len(eq.outputs) == 1
            and set(map(id, eq.inputs)) == set(map(id, graph.in_vars))
            and len(graph.out_atoms) == 1 and graph.out_atoms[0] is eq.outputs[0]):
        return eq.primitive
    return None


# --------------------------------------------------------------------------
# checks shared with the windowed reductions
# --------------------------------------------------------------------------

def check_operands_and_inits(op: str, operands: Sequence[AbstractValue],
                             inits: Sequence[AbstractValue]) -> None:
    """N >= 1 operands of equal dimensions, each with a scalar init value of its type."""
    if not operands:
        raise ShapeError(op, "needs at least one operand")
    for i, (x, init) in enumerate(zip(operands, inits)):
        if x.dimensions != operands[0].dimensions:
            raise ShapeError(op, f"operands must have equal dimensions; operand {i} differs",
                             *operands)
        if init.ndim != 0:
            raise ShapeError(op, f"init_values[{i}] must be a scalar", *operands, *inits)
        if init.element_type is not x.element_type:
            raise ShapeError(op, f"init_values[{i}] has element type "
                                 f"{init.element_type.short_name}, operand {i} has "
                                 f"{x.element_type.short_name}", *operands, *inits)


def _signature(pairs: Sequence[tuple[PT, tuple[int, ...]]]) -> str:
    return ", ".join(t.short_name + (f"[{','.join(map(str, dims))}]" if dims else "")
                     for t, dims in pairs)


def check_computation(op: str, name: str, graph: Graph, in_types: Sequence[PT],
                      out_types: Sequence[PT], extra: Sequence[AbstractValue]) -> None:
    """``graph`` takes scalars of ``in_types`` (then the captured ``extra``)
    and returns scalars of ``out_types``."""
    if not isinstance(graph, Graph):
        raise ShapeError(op, f"{name} must be a traced computation (a Graph), got {graph!r}")
    got_in = [(a.element_type, a.dimensions) for a in graph.in_avals]
    want_in = [(t, ()) for t in in_types] + [(a.element_type, a.dimensions) for a in extra]
    if got_in != want_in:
        raise ShapeError(op, f"{name} takes ({_signature(got_in)}) but must take "
                             f"({_signature(want_in)})")
    got_out = [(a.element_type, a.dimensions) for a in graph.out_avals]
    want_out = [(t, ()) for t in out_types]
    if got_out != want_out:
        raise ShapeError(op, f"{name} returns ({_signature(got_out)}) but must return "
                             f"scalars ({_signature(want_out)})")


def computation_name(fn: Callable) -> str:
    name = getattr(fn, "__name__", "")
    return name if name.isidentifier() else "region"


def as_init_value(init: Any, operand: AbstractValue) -> Any:
    """A Python scalar init value takes the operand's element type (it is weak)."""
    aval = abstractify(init)
    if aval.weak_type and aval.element_type is not operand.element_type:
        return elementwise.convert_element_type(init, operand.element_type)
    return init


def concrete_scalar(x: Any) -> Any:
    """``x`` as a Python scalar if it is a concrete rank-0 value, else ``None``."""
    if isinstance(x, Tracer) or np.ndim(x) != 0:
        return None
    return np.asarray(x).item()


# --------------------------------------------------------------------------
# the shortcut reductions
# --------------------------------------------------------------------------

def _lowest(dtype: np.dtype) -> Any:
    return (False if dtype == np.bool_ else -np.inf if dtype.kind == "f"
            else np.iinfo(dtype).min)


def _highest(dtype: np.dtype) -> Any:
    return (True if dtype == np.bool_ else np.inf if dtype.kind == "f"
            else np.iinfo(dtype).max)


def _all_ones(dtype: np.dtype) -> Any:
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


def _sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.dtype == np.bool_:  # add on pred is or
        return np.any(x, axis=axes)
    return np.sum(x, axis=axes, dtype=x.dtype)


def _prod(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.dtype == np.bool_:  # mul on pred is and
        return np.all(x, axis=axes)
    return np.prod(x, axis=axes, dtype=x.dtype)


# name -> (admitted element kinds, NumPy reduction over ``axes``, the elementwise
# op it reduces with, the identity for a dtype)
SHORTCUT_REDUCTIONS: dict[str, tuple[tuple[str, ...], Callable, str, Callable]] = {
    "reduce_sum": (ALL, _sum, "add", lambda dt: 0),
    "reduce_prod": (ALL, _prod, "mul", lambda dt: 1),
    "reduce_max": (ORDERED, lambda x, axes: np.max(x, axis=axes, initial=_lowest(x.dtype)),
                   "max", _lowest),
    "reduce_min": (ORDERED, lambda x, axes: np.min(x, axis=axes, initial=_highest(x.dtype)),
                   "min", _highest),
    "reduce_and": (BITWISE, lambda x, axes: np.bitwise_and.reduce(
        x, axis=axes, initial=_all_ones(x.dtype)), "and", _all_ones),
    "reduce_or": (BITWISE, lambda x, axes: np.bitwise_or.reduce(
        x, axis=axes, initial=x.dtype.type(0)), "or", lambda dt: 0),
    "reduce_xor": (BITWISE, lambda x, axes: np.bitwise_xor.reduce(
        x, axis=axes, initial=x.dtype.type(0)), "xor", lambda dt: 0),
}


def _check_axes(op: str, x: AbstractValue, axes: tuple[int, ...]) -> tuple[int, ...]:
    if len(set(axes)) != len(axes):
        raise ShapeError(op, f"dimensions {axes} contain a repeated dimension", x)
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ShapeError(op, f"dimension {a} is out of range for rank {x.ndim}", x)
    return tuple(d for i, d in enumerate(x.dimensions) if i not in axes)


def _shortcut_rule(op: str, kinds: tuple[str, ...], x: AbstractValue, *,
                   axes: tuple[int, ...]) -> AbstractValue:
    check_kinds(op, x, kinds)
    return array_value(x.element_type, _check_axes(op, x, axes), x.weak_type)


def _shortcut_impl(reduction: Callable, x: np.ndarray, *, axes: tuple[int, ...],
                   operand_types: Sequence[PT] | None = None) -> np.ndarray:
    t = type_of(x, operand_types)
    with np.errstate(all="ignore"):
        return narrow(reduction(widen(x, t), axes), t)


SHORTCUT_PRIMITIVES: dict[str, Primitive] = {}
for _name, (_kinds, _reduction, _op, _identity) in SHORTCUT_REDUCTIONS.items():
    _p = TypedPrimitive(_name)
    _p.def_abstract_eval(functools.partial(_shortcut_rule, _name, _kinds))
    _p.def_impl(functools.partial(_shortcut_impl, _reduction))
    SHORTCUT_PRIMITIVES[_name] = _p

(reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
 reduce_xor_p) = SHORTCUT_PRIMITIVES.values()
# elementwise op name -> the shortcut reduction with it
_MONOIDS = {op: name for name, (_k, _r, op, _i) in SHORTCUT_REDUCTIONS.items()}


def _canonical_axes(op: str, operand: Any, axes: Any) -> tuple[int, ...]:
    aval = abstractify(operand)
    axes = canonical_dims(op, "dimension", as_int_tuple(op, "axes", axes), aval.ndim, aval)
    return tuple(sorted(axes))


def _shortcut(name: str) -> Callable[[Any, Sequence[int]], Any]:
    prim = SHORTCUT_PRIMITIVES[name]

    def fn(operand: Any, axes: Sequence[int]) -> Any:
        return prim.bind(operand, axes=_canonical_axes(name, operand, axes))
    op = SHORTCUT_REDUCTIONS[name][2]
    fn.__name__ = name
    fn.__doc__ = (f"Reduce ``axes`` with ``{op}`` (its identity as init value); negative "
                  f"axes count from the end.")
    return fn


reduce_sum = _shortcut("reduce_sum")
reduce_prod = _shortcut("reduce_prod")
reduce_max = _shortcut("reduce_max")
reduce_min = _shortcut("reduce_min")
reduce_and = _shortcut("reduce_and")
reduce_or = _shortcut("reduce_or")
reduce_xor = _shortcut("reduce_xor")


# --------------------------------------------------------------------------
# ArgMax / ArgMin
# --------------------------------------------------------------------------

argmax_p = TypedPrimitive("argmax")
argmin_p = TypedPrimitive("argmin")


def _arg_rule(op: str, x: AbstractValue, *, axes: tuple[int, ...], index_dtype: PT
              ) -> AbstractValue:
    check_kinds(op, x, ORDERED)
    if len(axes) != 1:
        raise ShapeError(op, f"axes {axes} must name exactly one dimension", x)
    kept = _check_axes(op, x, axes)
    if x.dimensions[axes[0]] < 1:
        raise ShapeError(op, f"the reduced dimension {axes[0]} must not be empty", x)
    if not isinstance(index_dtype, PT) or not index_dtype.is_integral:
        raise ShapeError(op, f"index_dtype must be an integer type, got {index_dtype!r}", x)
    return array_value(index_dtype, kept)


argmax_p.def_abstract_eval(functools.partial(_arg_rule, "argmax"))
argmin_p.def_abstract_eval(functools.partial(_arg_rule, "argmin"))


# NumPy's argmax/argmin return the first extreme index, and the first NaN if any.
@argmax_p.def_impl
def _argmax_impl(x: np.ndarray, *, axes, index_dtype, operand_types=None):
    x = widen(x, type_of(x, operand_types))
    return np.argmax(x, axis=axes[0]).astype(index_dtype.numpy_dtype)


@argmin_p.def_impl
def _argmin_impl(x: np.ndarray, *, axes, index_dtype, operand_types=None):
    x = widen(x, type_of(x, operand_types))
    return np.argmin(x, axis=axes[0]).astype(index_dtype.numpy_dtype)


def argmax(operand: Any, axis: int, index_dtype: Any = np.int32) -> Any:
    """The index of the largest element along ``axis`` (the first one on ties;
    the first NaN if there is one)."""
    axes = _canonical_axes("argmax", operand, (axis,))
    return argmax_p.bind(operand, axes=axes, index_dtype=canonical_type(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any = np.int32) -> Any:
    """The index of the smallest element along ``axis`` (the first one on ties;
    the first NaN if there is one)."""
    axes = _canonical_axes("argmin", operand, (axis,))
    return argmin_p.bind(operand, axes=axes, index_dtype=canonical_type(index_dtype))


# --------------------------------------------------------------------------
# Reduce
# --------------------------------------------------------------------------

reduce_p = Primitive("reduce", multiple_results=True)


@reduce_p.def_abstract_eval
def _reduce_rule(*avals: AbstractValue, computation: Graph, dimensions: tuple[int, ...]
                 ) -> list[AbstractValue]:
    n = len(computation.out_avals) if isinstance(computation, Graph) else 0
    if n == 0 or len(avals) < 2 * n:
        raise ShapeError("reduce", f"needs N >= 1 operands and N init values for a "
                                   f"computation with N results, got {len(avals)} values",
                         *avals)
    operands, inits, extra = avals[:n], avals[n:2 * n], avals[2 * n:]
    check_operands_and_inits("reduce", operands, inits)
    types = [x.element_type for x in operands]
    check_computation("reduce", "computation", computation, types + types, types, extra)
    kept = _check_axes("reduce", operands[0], dimensions)
    return [array_value(x.element_type, kept) for x in operands]


@reduce_p.def_impl
def _reduce_impl(*args: np.ndarray, computation: Graph, dimensions: tuple[int, ...]):
    n = len(computation.out_avals)
    operands, inits, extra = args[:n], args[n:2 * n], args[2 * n:]
    monoid = single_binary_op(computation) if n == 1 and not extra else None
    if monoid is not None and monoid.name in _MONOIDS:
        # one NumPy reduction, then the init value combined in
        x, t = operands[0], computation.out_avals[0].element_type
        part = _shortcut_impl(SHORTCUT_REDUCTIONS[_MONOIDS[monoid.name]][1], x,
                              axes=dimensions, operand_types=(t,))
        (out,) = apply_computation(computation, [inits[0], part])
        return (out,)
    shape = operands[0].shape
    kept = [d for d in range(len(shape)) if d not in dimensions]
    kept_shape = tuple(shape[d] for d in kept)
    # the reduced dimensions last, flattened in row-major order
    count = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))
    flat = [np.transpose(x, kept + list(dimensions)).reshape(kept_shape + (count,))
            for x in operands]
    accs = [np.full(kept_shape, init, dtype=x.dtype) for init, x in zip(inits, operands)]
    for r in range(flat[0].shape[-1]):
        accs = apply_computation(computation, [*accs, *(f[..., r] for f in flat)], extra)
    return tuple(accs)


# the user functions of the monoids, by elementwise op name
_MONOID_FUNCTIONS = {"add": "add", "mul": "mul", "max": "max", "min": "min",
                     "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}


def monoid_shortcut(computation: Callable, init: Any, operand: AbstractValue,
                    shortcuts: dict[str, Primitive]) -> Primitive | None:
    """The shortcut primitive (``shortcuts``: elementwise op name -> shortcut)
    equivalent to reducing with ``computation`` from ``init``: when the
    computation is the op's user function (``lax.add``...) and ``init`` a
    concrete identity of the op, as ``jax.lax.reduce`` detects monoids."""
    value = concrete_scalar(init)
    if value is None or operand.element_type is PT.BF16:  # (bf16 words: compare no values)
        return None
    for op, shortcut in shortcuts.items():
        if computation is getattr(elementwise, _MONOID_FUNCTIONS[op], None):
            kinds, _reduction, _op, identity = SHORTCUT_REDUCTIONS[_MONOIDS[op]]
            if _kind(operand) not in kinds:
                return None
            same = np.asarray(value, operand.dtype) == np.asarray(
                identity(operand.dtype)).astype(operand.dtype)
            return shortcut if bool(same) else None
    return None


def _kind(aval: AbstractValue) -> str:
    t = aval.element_type
    return ("pred" if t is PT.PRED else "complex" if t.is_complex else "float"
            if t.is_floating else "signed" if t.is_signed else "unsigned")


def flatten_variadic(op: str, operands: Any, init_values: Any
                     ) -> tuple[list[Any], pytree.TreeDef, list[AbstractValue], list[Any]]:
    """The operands and init values of a variadic reduction, flattened (Python
    scalar init values take their operand's type): operands, their tree,
    their abstract values, init values."""
    flat_ops, tree = pytree.flatten(operands)
    flat_inits, init_tree = pytree.flatten(init_values)
    if tree != init_tree:
        raise ShapeError(op, f"init_values must have the structure of operands "
                             f"({init_tree} vs {tree})")
    if not flat_ops:
        raise ShapeError(op, "needs at least one operand")
    avals = [abstractify(x) for x in flat_ops]
    return flat_ops, tree, avals, [as_init_value(i, av) for i, av in zip(flat_inits, avals)]


def trace_reducer(op: str, computation: Callable, operands: Any,
                  avals: Sequence[AbstractValue]) -> Any:
    """Trace ``computation(acc, x)``, both pytrees shaped like ``operands``."""
    comp = trace_computation(computation, scalar_avals(avals) * 2,
                             name=computation_name(computation),
                             in_tree=pytree.tree_structure((operands, operands)))
    if len(comp.out_avals) != len(avals):
        raise ShapeError(op, f"computation returns {len(comp.out_avals)} values for "
                             f"{len(avals)} operands")
    return comp


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """XLA's Reduce: reduce ``dimensions`` of ``operands`` (an array, or a
    pytree of arrays of equal dimensions) with ``computation(acc, x)``, from
    ``init_values`` (scalars, the same pytree structure).  Returns an array,
    or the operands' pytree structure of arrays."""
    flat_ops, tree, avals, flat_inits = flatten_variadic("reduce", operands, init_values)
    dims = _canonical_axes("reduce", flat_ops[0], dimensions)
    if len(flat_ops) == 1:
        shortcut = monoid_shortcut(computation, flat_inits[0], avals[0],
                                   {op: SHORTCUT_PRIMITIVES[name]
                                    for op, name in _MONOIDS.items()})
        if shortcut is not None:
            return shortcut.bind(flat_ops[0], axes=dims)
    comp = trace_reducer("reduce", computation, operands, avals)
    outs = reduce_p.bind(*flat_ops, *flat_inits, *comp.captured, computation=comp.graph,
                         dimensions=dims)
    return tree.unflatten(outs)
