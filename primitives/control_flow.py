"""Control flow: While, Conditional (cond/switch), Call, Map; scan (its own
primitive, for reverse-mode autodiff), map_sequential on scan; fori_loop on scan
(static bounds) or While (traced bounds).

Every op here holds one or more computations: Python callables traced into
sub-graphs (``primitives._subgraph.trace_computation``) that travel as
equation parameters and print as computations of their own.  Outer traced
values a computation closes over become extra operands of the op, counted in
its parameters:

* ``while``        operands ``(*cond_consts, *body_consts, *carry)``; params
  ``cond_graph``, ``body_graph``, ``cond_nconsts``, ``body_nconsts`` (as JAX).
* ``conditional``  operands ``(selector, *group_0, ..., *group_{N-1})``: branch
  ``b`` gets group ``b`` (its operands, then its captures); params
  ``branches``, ``operand_counts``.  A PRED selector picks branch 0 when true
  (XLA's true_computation) and branch 1 when false; an S32 index out of
  ``[0, N)`` runs the last branch, as XLA defines.
* ``scan``         operands ``(*consts, *init, *xs)``; params ``body``,
  ``num_consts``, ``num_carry``, ``length``, ``reverse`` (as JAX).
* ``call``         operands ``(*args, *captures)``; param ``computation``.
* ``map``          operands ``(*arrays, *consts)``; params ``computation``,
  ``dimensions``, ``num_consts`` (XLA's N mapped and M static operands).

Sub-graph parameters are their declared inputs followed by their captures
(``trace_computation``'s order), so e.g. ``body_graph`` takes
``(*carry, *body_consts)``.  Types are compared without weak typing and
layout: a Python scalar carry (``0``) may come back as a strong ``s32``.

Reference semantics run a sub-graph with :func:`eval_computation`, which
calls each equation's NumPy implementation directly on the graph's own
abstract values (so bf16 words keep their type).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import AbstractValue, Primitive, ShapeError, Tracer, abstractify, array_value, \
    impl_rules
from numxla.tracer.graph import Graph, Literal
from numxla.tracer.shapes import PrimitiveType as PT

from ._subgraph import Computation, scalar_avals, trace_computation
from ._util import as_int_tuple
from .elementwise import add, clamp, convert_element_type, lt, ne, promote

__all__ = ["while_loop", "fori_loop", "cond", "switch", "conditional", "scan", "call", "map",
           "map_sequential"]


# --------------------------------------------------------------------------
# helpers: running sub-graphs, comparing types
# --------------------------------------------------------------------------

def eval_computation(graph: Graph, *args: Any) -> list[Any]:
    """Run ``graph`` with reference semantics: each equation's NumPy impl, fed
    values of the graph's recorded abstract values (no re-abstraction, so a
    bf16 operand stays bf16).  Tokens and tuples pass through as they are."""
    if len(args) != len(graph.in_vars):
        raise TypeError(f"computation {graph.name} takes {len(graph.in_vars)} arguments, "
                        f"got {len(args)}")
    env: dict[Any, Any] = {}

    def write(var, value):
        aval = var.aval
        if aval.shape.is_array:
            value = np.asarray(value, dtype=aval.dtype)
            if value.shape != aval.dimensions:
                raise AssertionError(f"{graph.name}: value of shape {value.shape} for {aval}")
        env[var] = value

    for var, value in zip(graph.const_vars, graph.const_values):
        write(var, value)
    for var, value in zip(graph.in_vars, args):
        write(var, value)

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[atom]

    for eq in graph.equations:
        impl = impl_rules.get(eq.primitive)
        if impl is None:
            raise NotImplementedError(f"{eq.primitive.name}: no reference semantics registered")
        params = eq.params
        if eq.primitive.impl_needs_operand_types:  # bf16 and u16 share a NumPy dtype
            params = dict(params, operand_types=tuple(a.aval.element_type for a in eq.inputs))
        out = impl(*(read(a) for a in eq.inputs), **params)
        outs = out if eq.primitive.multiple_results else (out,)
        for var, value in zip(eq.outputs, outs):
            write(var, value)
    return [read(a) for a in graph.out_atoms]


def _type_key(aval: AbstractValue) -> Any:
    """An abstract value's XLA type without layout and weak typing."""
    shape = aval.shape
    if shape.is_tuple:
        return ("tuple",) + tuple(_type_key(AbstractValue(s)) for s in shape.tuple_shapes)
    return (shape.element_type, shape.dimensions)


def _type_text(shape: Any) -> str:
    """``f32[2,3]`` (no layout), ``(s32[], f32[2])``, ``token[]``."""
    if shape.is_tuple:
        return "(" + ", ".join(_type_text(s) for s in shape.tuple_shapes) + ")"
    if shape.is_token:
        return "token[]"
    return f"{shape.element_type.short_name}[{','.join(str(d) for d in shape.dimensions)}]"


def _types_text(avals: Sequence[AbstractValue]) -> str:
    return "(" + ", ".join(_type_text(a.shape) for a in avals) + ")"


def _same_types(a: Sequence[AbstractValue], b: Sequence[AbstractValue]) -> bool:
    return len(a) == len(b) and all(_type_key(x) == _type_key(y) for x, y in zip(a, b))


def _check_types(op: str, what: str, got: Sequence[AbstractValue], expected_what: str,
                 expected: Sequence[AbstractValue]) -> None:
    if not _same_types(got, expected):
        raise ShapeError(op, f"{what} {_types_text(got)} must equal {expected_what} "
                             f"{_types_text(expected)}")


def _join_weak(avals: Sequence[AbstractValue], *others: Sequence[AbstractValue]
               ) -> list[AbstractValue]:
    """``avals``, weakly typed only where every alternative is weak too."""
    return [a if a.weak_type and all(o[i].weak_type for o in others) else a.strong()
            for i, a in enumerate(avals)]


def _promote_weak_carry(leaves: list[Any], avals: list[AbstractValue],
                        body_out: Sequence[AbstractValue]) -> bool:
    """A weakly typed initial carry (a Python scalar) takes the type the
    body gives that carry, as in JAX (``scan(f, 1.0, xs_f64)``); the lists are
    updated in place.  Returns whether anything changed (re-trace the body)."""
    from .elementwise import convert_element_type
    changed = False
    for i, (a, out) in enumerate(zip(avals, body_out)):
        if a.weak_type and a.shape.is_array and out.shape.is_array and \
                a.dimensions == out.dimensions and a.element_type is not out.element_type:
            leaves[i] = convert_element_type(leaves[i], out.element_type)
            avals[i] = array_value(out.element_type, a.dimensions)
            changed = True
    return changed


def _is_scalar(aval: AbstractValue, t: PT) -> bool:
    return aval.element_type is t and aval.shape.is_array and aval.ndim == 0


def _graph_name(fn: Callable, default: str) -> str:
    name = getattr(fn, "__name__", "")
    return name if name.isidentifier() else default


def _flat_avals(tree: Any) -> tuple[list[Any], list[AbstractValue], pytree.TreeDef]:
    leaves, treedef = pytree.flatten(tree)
    return leaves, [abstractify(x) for x in leaves], treedef


# --------------------------------------------------------------------------
# While
# --------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True)


@while_p.def_abstract_eval
def _while_rule(*operands: AbstractValue, cond_graph: Graph, body_graph: Graph,
                cond_nconsts: int, body_nconsts: int) -> list[AbstractValue]:
    cond_consts = list(operands[:cond_nconsts])
    body_consts = list(operands[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(operands[cond_nconsts + body_nconsts:])
    _check_types("while", "condition parameters", cond_graph.in_avals, "the carry and its "
                 "captured values", carry + cond_consts)
    _check_types("while", "body parameters", body_graph.in_avals, "the carry and its captured "
                 "values", carry + body_consts)
    out = cond_graph.out_avals
    if len(out) != 1 or not _is_scalar(out[0], PT.PRED):
        raise ShapeError("while", f"the condition must return a scalar pred, got "
                                  f"{_types_text(out)}")
    _check_types("while", "the body result", body_graph.out_avals, "the carry", carry)
    return _join_weak(carry, body_graph.out_avals)


@while_p.def_impl
def _while_impl(*operands, cond_graph, body_graph, cond_nconsts, body_nconsts):
    cond_consts = operands[:cond_nconsts]
    body_consts = operands[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(operands[cond_nconsts + body_nconsts:])
    while bool(eval_computation(cond_graph, *carry, *cond_consts)[0]):
        carry = eval_computation(body_graph, *carry, *body_consts)
    return tuple(carry)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """XLA's While: ``while cond_fun(val): val = body_fun(val)``; returns the
    last ``val``.  ``val`` is a pytree whose types the body must keep."""
    leaves, avals, tree = _flat_avals(init_val)
    in_tree = pytree.tree_structure((init_val,))  # both functions take the carry as one argument
    body = trace_computation(body_fun, avals, name="while_body", in_tree=in_tree)
    if _promote_weak_carry(leaves, avals, body.graph.out_avals):
        body = trace_computation(body_fun, avals, name="while_body", in_tree=in_tree)
    cond = trace_computation(cond_fun, avals, name="while_cond", in_tree=in_tree)
    if body.graph.out_tree != tree:
        raise ShapeError("while", f"body_fun must return the carry's structure {tree}, "
                                  f"got {body.graph.out_tree}")
    outs = while_p.bind(*cond.captured, *body.captured, *leaves,
                        cond_graph=cond.graph, body_graph=body.graph,
                        cond_nconsts=len(cond.captured), body_nconsts=len(body.captured))
    return tree.unflatten(outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)`` (``lower`` and
    ``upper`` promote to one integer type).  As in JAX, concrete bounds (Python
    or NumPy integers, not traced values) make a ``scan`` of static length
    ``max(upper - lower, 0)`` over the carry ``(i, val)``, which reverse-mode
    differentiation supports; traced bounds make a While."""
    for name, bound in (("lower", lower), ("upper", upper)):
        aval = abstractify(bound)
        if aval.ndim != 0 or not aval.element_type.is_integral:
            raise ShapeError("fori_loop", f"{name} must be an integer scalar, got {aval.shape}",
                             aval)
    static = not isinstance(lower, Tracer) and not isinstance(upper, Tracer)
    length = max(int(upper) - int(lower), 0) if static else 0
    if all(type(b) is int and -2 ** 31 <= b < 2 ** 31 for b in (lower, upper)):
        # Python ints: an s32 index (JAX's is a weakly typed int, which an s32
        # carry or operand does not widen, as an s32 index does not)
        lower, upper = np.int32(lower), np.int32(upper)
    lower, upper = promote(lower, upper)

    if static:
        def scan_body(carry, _):
            i, val = carry
            return (add(i, 1), body_fun(i, val)), None

        return scan(scan_body, (lower, init_val), None, length=length)[0][1]

    def loop_cond(carry):
        return lt(carry[0], upper)

    def loop_body(carry):
        i, val = carry
        return add(i, 1), body_fun(i, val)

    return while_loop(loop_cond, loop_body, (lower, init_val))[1]


# --------------------------------------------------------------------------
# Conditional
# --------------------------------------------------------------------------

conditional_p = Primitive("conditional", multiple_results=True)


def _split_groups(operands: Sequence[Any], counts: Sequence[int]) -> list[list[Any]]:
    groups, start = [], 0
    for n in counts:
        groups.append(list(operands[start:start + n]))
        start += n
    return groups


@conditional_p.def_abstract_eval
def _conditional_rule(selector: AbstractValue, *operands: AbstractValue,
                      branches: tuple[Graph, ...], operand_counts: tuple[int, ...]
                      ) -> list[AbstractValue]:
    op = "conditional"
    if not (_is_scalar(selector, PT.PRED) or _is_scalar(selector, PT.S32)):
        raise ShapeError(op, f"branch_index must be a scalar pred or s32, got {selector.shape}",
                         selector)
    if not branches:
        raise ShapeError(op, "there must be at least one branch computation", selector)
    if selector.element_type is PT.PRED and len(branches) != 2:
        raise ShapeError(op, f"a pred selector needs exactly two branches (true, false), got "
                             f"{len(branches)}", selector)
    if len(operand_counts) != len(branches) or sum(operand_counts) != len(operands):
        raise ShapeError(op, f"operand_counts {operand_counts} must give one group of the "
                             f"{len(operands)} operands per branch ({len(branches)})")
    for b, (graph, group) in enumerate(zip(branches, _split_groups(operands, operand_counts))):
        _check_types(op, f"branch {b} parameters", graph.in_avals, "its operands", group)
    first = branches[0].out_avals
    for b, graph in enumerate(branches[1:], 1):
        _check_types(op, f"branch {b} returns", graph.out_avals, "what branch 0 returns", first)
    return _join_weak(first, *(g.out_avals for g in branches[1:]))


@conditional_p.def_impl
def _conditional_impl(selector, *operands, branches, operand_counts):
    if selector.dtype == np.bool_:
        b = 0 if bool(selector) else 1
    else:
        b = int(selector)
        b = b if 0 <= b < len(branches) else len(branches) - 1  # XLA: out of range -> last
    group = _split_groups(operands, operand_counts)[b]
    return tuple(eval_computation(branches[b], *group))


def _check_selector(op: str, selector: Any, t: PT, what: str) -> None:
    aval = abstractify(selector)
    if not _is_scalar(aval, t):
        raise ShapeError(op, f"{what} must be a scalar {t.short_name}, got {aval.shape}"
                             + ("" if t is PT.PRED else " (convert with convert_element_type)"),
                         aval)


def _conditional(op: str, selector: Any, fns: Sequence[Callable], args: Sequence[tuple],
                 names: Sequence[str]) -> Any:
    """Trace branch ``b`` as ``fns[b](*args[b])`` and bind one ``conditional``."""
    comps: list[Computation] = []
    groups: list[list[Any]] = []
    for b, (fn, arg) in enumerate(zip(fns, args)):
        leaves, avals, in_tree = _flat_avals(tuple(arg))
        comp = trace_computation(fn, avals, name=f"branch_{b}", in_tree=in_tree)
        comps.append(comp)
        groups.append(leaves + list(comp.captured))
    first = comps[0].graph
    for name, comp in zip(names[1:], comps[1:]):
        g = comp.graph
        if g.out_tree != first.out_tree or not _same_types(g.out_avals, first.out_avals):
            raise ShapeError(op, f"{name} returns {g.out_tree} of types {_types_text(g.out_avals)}"
                                 f" but {names[0]} returns {first.out_tree} of types "
                                 f"{_types_text(first.out_avals)}; every branch must return "
                                 f"the same types")
    outs = conditional_p.bind(selector, *(x for g in groups for x in g),
                              branches=tuple(c.graph for c in comps),
                              operand_counts=tuple(len(g) for g in groups))
    return first.out_tree.unflatten(outs)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``;
    ``pred`` is a scalar pred, or a scalar number standing for ``pred != 0``
    as in JAX (XLA's Conditional with a predicate)."""
    aval = abstractify(pred)
    if aval.ndim == 0 and aval.element_type is not PT.PRED and (
            aval.element_type.is_integral or aval.element_type.is_floating):
        pred = (np.bool_(pred != 0) if isinstance(pred, (int, float, np.number))
                else ne(pred, convert_element_type(0, aval.element_type)))
    _check_selector("cond", pred, PT.PRED, "pred")
    return _conditional("cond", pred, [true_fun, false_fun], [operands, operands],
                        ["true_fun", "false_fun"])


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """``branches[index](*operands)``; ``index`` is an integer scalar, clamped
    into ``[0, len(branches))`` as JAX's ``switch`` does (XLA's own
    :func:`conditional` runs the last branch for any index out of range)."""
    branches = list(branches)
    if not branches:
        raise ShapeError("switch", "branches must hold at least one function")
    aval = abstractify(index)
    if aval.ndim == 0 and aval.element_type.is_integral and aval.element_type is not PT.S32:
        # any integer scalar (a Python int is s64 with x64), as JAX converts it
        index = (np.int32(max(min(index, 2 ** 31 - 1), -2 ** 31)) if isinstance(index, int)
                 else convert_element_type(index, PT.S32))
    _check_selector("switch", index, PT.S32, "index")
    last = np.int32(len(branches) - 1)
    index = (np.int32(min(max(int(index), 0), last)) if isinstance(index, (int, np.integer))
             else clamp(np.int32(0), index, last))
    return _conditional("switch", index, branches, [operands] * len(branches),
                        [f"branch {b}" for b in range(len(branches))])


def conditional(branch_index: Any, branch_computations: Sequence[Callable],
                branch_operands: Sequence[Any]) -> Any:
    """XLA's Conditional in its own form: ``branch_computations[b]`` takes the
    one operand ``branch_operands[b]`` (any pytree).  ``branch_index`` is a
    scalar pred (two computations, true first) or s32."""
    fns, ops = list(branch_computations), list(branch_operands)
    if len(fns) != len(ops):
        raise ShapeError("conditional", f"{len(fns)} branch_computations but "
                                        f"{len(ops)} branch_operands")
    aval = abstractify(branch_index)
    _check_selector("conditional", branch_index, PT.PRED if aval.element_type is PT.PRED
                    else PT.S32, "branch_index")
    return _conditional("conditional", branch_index, fns, [(o,) for o in ops],
                        [f"branch {b}" for b in range(len(fns))])


# --------------------------------------------------------------------------
# Scan
# --------------------------------------------------------------------------

scan_p = Primitive("scan", multiple_results=True)


@scan_p.def_abstract_eval
def _scan_rule(*operands: AbstractValue, body: Graph, num_consts: int, num_carry: int,
               length: int, reverse: bool) -> list[AbstractValue]:
    consts = list(operands[:num_consts])
    carry = list(operands[num_consts:num_consts + num_carry])
    xs = list(operands[num_consts + num_carry:])
    for x in xs:
        if not x.shape.is_array or x.ndim == 0 or x.dimensions[0] != length:
            raise ShapeError("scan", f"every xs leaf needs a leading dimension of size "
                                     f"length={length}", *xs)
    slices = [array_value(x.element_type, x.dimensions[1:]) for x in xs]
    _check_types("scan", "body parameters", body.in_avals, "the carry, the xs slices and the "
                 "captured values", carry + slices + consts)
    out = body.out_avals
    _check_types("scan", "the body's carry result", out[:num_carry], "the carry", carry)
    ys = out[num_carry:]
    for y in ys:
        if not y.shape.is_array:
            raise ShapeError("scan", f"per-iteration outputs must be arrays, got {y.shape}")
    return _join_weak(carry, out[:num_carry]) + [
        array_value(y.element_type, (length,) + y.dimensions, y.weak_type) for y in ys]


@scan_p.def_impl
def _scan_impl(*operands, body, num_consts, num_carry, length, reverse):
    consts = operands[:num_consts]
    carry = list(operands[num_consts:num_consts + num_carry])
    xs = operands[num_consts + num_carry:]
    steps: list[list[Any]] = [[] for _ in range(length)]
    for i in (reversed(range(length)) if reverse else range(length)):
        out = eval_computation(body, *carry, *(x[i] for x in xs), *consts)
        carry, steps[i] = out[:num_carry], out[num_carry:]
    y_avals = body.out_avals[num_carry:]
    ys = [np.stack([s[j] for s in steps]) if length else np.zeros((0,) + av.dimensions, av.dtype)
          for j, av in enumerate(y_avals)]
    return tuple(carry) + tuple(ys)


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """JAX's scan: ``carry, y = f(carry, x)`` for each leading-axis slice
    ``x`` of ``xs`` (from the end if ``reverse``); returns the final carry and
    the ``y`` s stacked along a new leading axis (in ``xs`` order).
    ``unroll`` is accepted and changes nothing (the values are the same)."""
    init_leaves, carry_avals, carry_tree = _flat_avals(init)
    xs_leaves, xs_avals, _ = _flat_avals(xs)
    sizes = {a.dimensions[0] for a in xs_avals if a.shape.is_array and a.ndim}
    if any(not a.shape.is_array or a.ndim == 0 for a in xs_avals):
        raise ShapeError("scan", "every xs leaf must be an array with a leading dimension",
                         *xs_avals)
    if length is not None:
        sizes.add(int(length))
    if len(sizes) != 1:
        raise ShapeError("scan", "the xs leaves' leading dimensions and length must agree"
                         if sizes else "length must be given when xs has no leaves",
                         *xs_avals)
    (n,) = sizes
    slices = [array_value(a.element_type, a.dimensions[1:]) for a in xs_avals]
    in_tree = pytree.tree_structure((init, xs))  # f(carry, x): x has xs's structure
    comp = trace_computation(f, carry_avals + slices, name="scan_body", in_tree=in_tree)
    if _promote_weak_carry(init_leaves, carry_avals, comp.graph.out_avals):
        comp = trace_computation(f, carry_avals + slices, name="scan_body", in_tree=in_tree)
    out_tree = comp.graph.out_tree
    if out_tree.node_type not in (tuple, list) or len(out_tree.subtrees) != 2:
        raise ShapeError("scan", f"f must return a pair (carry, y), got {out_tree}")
    if out_tree.subtrees[0] != carry_tree:
        raise ShapeError("scan", f"f must return a carry of the structure {carry_tree}, "
                                 f"got {out_tree.subtrees[0]}")
    outs = scan_p.bind(*comp.captured, *init_leaves, *xs_leaves, body=comp.graph,
                       num_consts=len(comp.captured), num_carry=len(init_leaves),
                       length=n, reverse=bool(reverse))
    k = len(init_leaves)
    return carry_tree.unflatten(outs[:k]), out_tree.subtrees[1].unflatten(outs[k:])


def map_sequential(f: Callable[[Any], Any], xs: Any, batch_size: int | None = None) -> Any:
    """JAX's ``lax.map``: ``f`` over the leading axis of ``xs``, one slice
    after the other (a scan without carry), or ``batch_size`` slices at a
    time (``vmap`` inside the scan, the remainder after it).  Not XLA's Map
    (see ``map``)."""
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), None, xs)[1]
    from numxla.autodiff import vmap  # autodiff builds on this package: import when called
    from .shape_ops import concatenate, reshape, slice_in_dim
    leaves, tree = pytree.flatten(xs)
    n = abstractify(leaves[0]).dimensions[0]
    full, rest = divmod(n, batch_size)

    def split(x: Any, lo: int, hi: int) -> Any:
        return slice_in_dim(x, lo, hi, 1, 0)
    outs = []
    if full:
        batched = tree.unflatten([reshape(split(x, 0, full * batch_size), (full, batch_size) +
                                          abstractify(x).dimensions[1:]) for x in leaves])
        ys = scan(lambda c, x: (c, vmap(f)(x)), None, batched)[1]
        outs.append(pytree.tree_map(lambda y: reshape(y, (full * batch_size,) +
                                                      abstractify(y).dimensions[2:]), ys))
    if rest:
        outs.append(vmap(f)(tree.unflatten([split(x, full * batch_size, n) for x in leaves])))
    if len(outs) == 1:
        return outs[0]
    return pytree.tree_map(lambda a, b: concatenate([a, b], 0), *outs)


# --------------------------------------------------------------------------
# Call
# --------------------------------------------------------------------------

call_p = Primitive("call", multiple_results=True)


@call_p.def_abstract_eval
def _call_rule(*operands: AbstractValue, computation: Graph) -> tuple[AbstractValue, ...]:
    _check_types("call", "the computation's parameters", computation.in_avals, "the operands",
                 operands)
    return computation.out_avals


@call_p.def_impl
def _call_impl(*operands, computation):
    return tuple(eval_computation(computation, *operands))


def call(computation: Callable, *operands: Any) -> Any:
    """XLA's Call: ``computation(*operands)`` as one op holding a sub-graph."""
    leaves, avals, in_tree = _flat_avals(operands)
    comp = trace_computation(computation, avals, name=_graph_name(computation, "callee"),
                             in_tree=in_tree)
    outs = call_p.bind(*leaves, *comp.captured, computation=comp.graph)
    return comp.graph.out_tree.unflatten(outs)


# --------------------------------------------------------------------------
# Map (XLA's)
# --------------------------------------------------------------------------

map_p = Primitive("map", multiple_results=True)


@map_p.def_abstract_eval
def _map_rule(*operands: AbstractValue, computation: Graph, dimensions: tuple[int, ...],
              num_consts: int) -> list[AbstractValue]:
    arrays = operands[:len(operands) - num_consts]
    consts = list(operands[len(arrays):])
    if not arrays:
        raise ShapeError("map", "needs at least one operand to map over")
    dims = arrays[0].dimensions
    if any(not a.shape.is_array or a.dimensions != dims for a in arrays):
        raise ShapeError("map", "operands must be arrays of the same dimensions", *arrays)
    if dimensions != tuple(range(len(dims))):
        raise ShapeError("map", f"dimensions {dimensions} must be 0..{len(dims) - 1} in order: "
                                f"XLA maps over every dimension", *arrays)
    _check_types("map", "the computation's parameters", computation.in_avals,
                 "scalars of the operands' element types and the captured values",
                 scalar_avals(arrays) + consts)
    outs = computation.out_avals
    if not outs or any(not o.shape.is_array or o.ndim for o in outs):
        raise ShapeError("map", f"the computation must return scalars, got {_types_text(outs)}",
                         *arrays)
    return [array_value(o.element_type, dims) for o in outs]


@map_p.def_impl
def _map_impl(*operands, computation, dimensions, num_consts):
    arrays = operands[:len(operands) - num_consts]
    consts = operands[len(arrays):]
    dims = arrays[0].shape
    results = [np.empty(dims, o.dtype) for o in computation.out_avals]
    for index in np.ndindex(*dims):
        values = eval_computation(computation, *(a[index] for a in arrays), *consts)
        for r, v in zip(results, values):
            r[index] = v
    return tuple(results)


def map(operands: Sequence[Any], computation: Callable[..., Any],  # noqa: A001 (XLA's name)
        dimensions: Sequence[int] | None = None, *, batch_size: int | None = None) -> Any:
    """XLA's Map: ``computation`` (N scalars -> scalar) applied elementwise to
    the N ``operands`` of equal dimensions; ``dimensions`` must be all of
    them, in order (the default).  Outer values it closes over are XLA's
    static operands.  Returns one array (a tuple if it returns several
    scalars).  Called as ``jax.lax.map(f, xs, batch_size=None)`` (a function
    first), it is JAX's: :func:`map_sequential`."""
    if callable(operands):  # jax.lax.map(f, xs)
        return map_sequential(operands, computation, batch_size=batch_size or dimensions)
    operands = list(operands)
    avals = [abstractify(x) for x in operands]
    if not operands:
        raise ShapeError("map", "needs at least one operand to map over")
    dims = tuple(range(avals[0].ndim)) if dimensions is None else \
        as_int_tuple("map", "dimensions", dimensions)
    comp = trace_computation(computation, scalar_avals(avals), name="map_computation")
    outs = map_p.bind(*operands, *comp.captured, computation=comp.graph, dimensions=dims,
                      num_consts=len(comp.captured))
    return comp.graph.out_tree.unflatten(outs)
