"""Lowerings of tokens, tuples and side effects: AfterAll, OptimizationBarrier,
Tuple/GetTupleElement, CompositeCall, and the host transfers Infeed, Outfeed,
Send, Recv and CustomCall.

Representations inside the compiled function:

* a token is a 1-element bool buffer (``np.zeros(1, np.bool_)``): it has no
  data, and the generated code runs its statements in program order, which
  is the order tokens express;
* a TUPLE-shaped value is a Numba tuple of its elements' values (buffers,
  tokens, tuples); ``get_tuple_element`` indexes it with a constant.

Host callbacks.  Infeed, Outfeed, Send, Recv and CustomCall *mean* a call to
the host: they read or fill the host-side queues of
``primitives.side_effects`` (``infeed_queue``, ``outfeed_queue``,
``channels``) or run a Python function registered with
``register_custom_call_target``.  They are lowered to calls of the ``host_*``
functions of this module through :func:`compile.kernels.host.host_call`
(which holds the GIL for the call); the host functions convert between
kernel buffers and the eager values the queues and targets hold, with the
same checks as the reference semantics.  Every other op here stays in
nopython code.
"""
from __future__ import annotations

import hashlib
import weakref
from typing import Any, Sequence

import numpy as np

from numxla.primitives import side_effects as se
from numxla.tracer.core import AbstractValue, bf16_array, impl_rules
from numxla.tracer.graph import Equation, Literal, Var
from numxla.tracer.shapes import PrimitiveType, Shape

from ..codegen import LoweringContext
from ..runtime import Array, to_buffer
from ..registry import lowerings
from .control_flow import as_layout, buffer_of, inline_call, root_of, token_buffer

__all__ = ["host_infeed", "host_outfeed", "host_send", "host_recv", "host_custom_call",
           "result_value"]

_MODULE = __name__

# ctx -> {tuple var: its element atoms}, so get_tuple_element of a tuple built
# in the same function aliases the element itself.
_TUPLE_ELEMENTS: "weakref.WeakKeyDictionary[LoweringContext, dict[Var, tuple]]" = \
    weakref.WeakKeyDictionary()


# --------------------------------------------------------------------------
# tokens, barriers, tuples, composites
# --------------------------------------------------------------------------

def _lower_after_all(ctx: LoweringContext, eq: Equation) -> None:
    ctx.bind_name(eq.outputs[0], token_buffer(ctx))


def _lower_optimization_barrier(ctx: LoweringContext, eq: Equation) -> None:
    """The identity: results share the operands' buffers (the generated code
    evaluates every operand before any use of a result, in program order)."""
    for x, out in zip(eq.inputs, eq.outputs):
        if isinstance(x, Var) and x.aval.shape == out.aval.shape:
            ctx.alias(out, x)
        else:
            ctx.bind_name(out, as_layout(ctx, x, out.aval.shape))


def _tuple_text(names: Sequence[str]) -> str:
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _lower_tuple(ctx: LoweringContext, eq: Equation) -> None:
    (out,) = eq.outputs
    name = ctx.fresh("tup")
    ctx.emit(f"{name} = {_tuple_text([buffer_of(ctx, a) for a in eq.inputs])}")
    ctx.bind_name(out, name)
    _TUPLE_ELEMENTS.setdefault(ctx, {})[out] = eq.inputs


def _lower_get_tuple_element(ctx: LoweringContext, eq: Equation) -> None:
    (src,), (out,) = eq.inputs, eq.outputs
    index = eq.params["index"]
    elements = _TUPLE_ELEMENTS.get(ctx, {}).get(src)
    if elements is not None and isinstance(elements[index], Var) and \
            elements[index].aval.shape == out.aval.shape:
        ctx.alias(out, elements[index])
        return
    name = ctx.fresh("g")
    ctx.emit(f"{name} = {ctx.name(src)}[{index}]")
    ctx.bind_name(out, name)
    ctx.aliases[out] = root_of(ctx, src)  # it shares a buffer with the tuple


def _lower_composite(ctx: LoweringContext, eq: Equation) -> None:
    """CompositeCall runs its decomposition, inlined."""
    inline_call(ctx, eq, eq.params["decomposition"])


def result_value(ctx: LoweringContext, atom: Var | Literal, shape: Shape) -> str:
    """A token or tuple result of the compiled function that shares no
    buffer with an input (tuples are copied element by element)."""
    if shape.is_token:
        return token_buffer(ctx)
    return as_layout(ctx, atom, shape, copy=True)


# --------------------------------------------------------------------------
# host callbacks (Python, called with the GIL)
# --------------------------------------------------------------------------

_HOST_PARAMS: dict[str, Any] = {}


def _register(kind: str, payload: Any, *, identity: Any = None) -> str:
    """A key for ``payload`` (shapes, parameters) that the generated code
    passes to the host function; deterministic, so the generated source
    (and its disk-cache entry) is the same in every process.  The key hashes
    ``repr(identity)`` when given (a payload holding sub-graphs, whose repr
    does not tell them apart), ``repr(payload)`` otherwise."""
    text = repr(payload if identity is None else identity)
    key = f"{kind}:{hashlib.sha256(text.encode()).hexdigest()[:20]}"
    _HOST_PARAMS[key] = payload
    return key


def _storage(t: PrimitiveType) -> np.dtype:
    if t in (PrimitiveType.F16, PrimitiveType.BF16):
        return np.dtype(np.uint16)
    return np.dtype(t.numpy_dtype)


def _numba_type(shape: Shape) -> str:
    dtype = _storage(shape.element_type)
    return ("boolean" if dtype == np.bool_ else dtype.name) + "[::1]"


def _leaves(shape: Shape) -> list[Shape]:
    """The array shapes of a value, depth first (tokens hold no data)."""
    if shape.is_tuple:
        return [leaf for s in shape.tuple_shapes for leaf in _leaves(s)]
    return [] if shape.is_token else [shape]


def _to_eager(value: Any, shape: Shape) -> Any:
    """A kernel value (buffer, token buffer, tuple) as the eager value the
    reference semantics use (NumPy array, BF16Array, Token, TupleValue)."""
    if shape.is_token:
        return se.Token()
    if shape.is_tuple:
        return se.TupleValue(_to_eager(v, s) for v, s in zip(value, shape.tuple_shapes))
    buffer = np.asarray(value)
    if shape.element_type is PrimitiveType.F16:
        buffer = buffer.view(np.float16)
    array = np.array(Array.wrap(buffer, shape))  # a copy in logical order
    return bf16_array(array) if shape.element_type is PrimitiveType.BF16 else array


def _to_kernel(value: Any, shape: Shape) -> list[np.ndarray]:
    """An eager value as the kernel buffers of its array leaves."""
    if shape.is_token:
        return []
    if shape.is_tuple:
        return [b for v, s in zip(value, shape.tuple_shapes) for b in _to_kernel(v, s)]
    arr = np.asarray(value)  # (f16: float16 values; bf16: uint16 words)
    buffer = to_buffer(arr, AbstractValue(shape))
    if buffer.dtype == np.float16:
        buffer = buffer.view(np.uint16)
    return [np.ascontiguousarray(buffer, dtype=_storage(shape.element_type)).copy()]


def host_infeed(key: str) -> tuple:
    """Host half of infeed: the next value of ``infeed_queue``."""
    shape = _HOST_PARAMS[key]
    return tuple(_to_kernel(se._take("infeed", se.infeed_queue, shape), shape))


def host_outfeed(key: str, value: Any) -> None:
    """Host half of outfeed: push the operand to ``outfeed_queue``."""
    se.outfeed_queue.put(_to_eager(value, _HOST_PARAMS[key]))


def host_send(key: str, value: Any) -> None:
    """Host half of send: put the operand on its channel."""
    shape, channel_id = _HOST_PARAMS[key]
    se.channels[channel_id].put(_to_eager(value, shape))


def host_recv(key: str) -> tuple:
    """Host half of recv: the next value of its channel."""
    shape, channel_id = _HOST_PARAMS[key]
    return tuple(_to_kernel(se._take("recv", se.channels[channel_id], shape), shape))


def host_custom_call(key: str, operands: tuple) -> tuple:
    """Host half of custom_call: run the registered target (through the
    reference semantics, which check what it returns)."""
    operand_shapes, params = _HOST_PARAMS[key]
    values = [_to_eager(v, s) for v, s in zip(operands, operand_shapes)]
    outs = impl_rules[se.custom_call_p](*values, **params)
    return tuple(b for v, s in zip(outs, params["result_shapes"]) for b in _to_kernel(v, s))


def _host_block(ctx: LoweringContext, function: str, constants: Sequence[str],
                values: Sequence[str], results: Sequence[Shape]) -> list[str]:
    """A call of the host function ``function`` (``module.name``) on the
    string ``constants`` (channel keys) and the kernel ``values`` (source
    texts), through :func:`compile.kernels.host.host_call`; returns the value
    (buffer, token or tuple) of each result shape."""
    leaves = [leaf for s in results for leaf in _leaves(s)]
    if any(";" in c for c in constants):
        raise ValueError(f"host call constants must not hold ';': {constants}")
    call = (f"host_call({function!r}, {';'.join(constants)!r}, "
            f"{';'.join(_numba_type(s) for s in leaves)!r}, {_tuple_text(list(values))})")
    names = [ctx.fresh("h") for _ in leaves]
    ctx.emit(f"{_tuple_text(names)} = {call}" if names else call)
    it = iter(names)

    def build(shape: Shape) -> str:
        if shape.is_token:
            return token_buffer(ctx)
        if shape.is_tuple:
            name = ctx.fresh("tup")
            parts = [build(s) for s in shape.tuple_shapes]
            ctx.emit(f"{name} = {_tuple_text(parts)}")
            return name
        return next(it)

    return [build(s) for s in results]


def _value(ctx: LoweringContext, atom: Var | Literal) -> str:
    return buffer_of(ctx, atom)


def _lower_infeed(ctx: LoweringContext, eq: Equation) -> None:
    """Host callback: the next value of ``infeed_queue``."""
    shape = eq.params["shape"]
    key = _register("infeed", shape)
    (value,) = _host_block(ctx, f"{_MODULE}.host_infeed", [key], [], [shape])
    _bind(ctx, eq.outputs[0], value, shape)
    ctx.bind_name(eq.outputs[1], token_buffer(ctx))


def _lower_recv(ctx: LoweringContext, eq: Equation) -> None:
    """Host callback: the next value of ``channels[channel_id]``."""
    shape = eq.params["shape"]
    key = _register("recv", (shape, eq.params["channel_id"]))
    (value,) = _host_block(ctx, f"{_MODULE}.host_recv", [key], [], [shape])
    _bind(ctx, eq.outputs[0], value, shape)
    ctx.bind_name(eq.outputs[1], token_buffer(ctx))


def _lower_outfeed(ctx: LoweringContext, eq: Equation) -> None:
    """Host callback: push the operand to ``outfeed_queue``."""
    operand = eq.inputs[0]
    key = _register("outfeed", operand.aval.shape)
    _host_block(ctx, f"{_MODULE}.host_outfeed", [key], [_value(ctx, operand)], [])
    ctx.bind_name(eq.outputs[0], token_buffer(ctx))


def _lower_send(ctx: LoweringContext, eq: Equation) -> None:
    """Host callback: put the operand on ``channels[channel_id]``."""
    operand = eq.inputs[0]
    key = _register("send", (operand.aval.shape, eq.params["channel_id"]))
    _host_block(ctx, f"{_MODULE}.host_send", [key], [_value(ctx, operand)], [])
    ctx.bind_name(eq.outputs[0], token_buffer(ctx))


def _lower_custom_call(ctx: LoweringContext, eq: Equation) -> None:
    """Host callback: run the registered Python target."""
    shapes = tuple(a.aval.shape for a in eq.inputs)
    key = _register("custom_call", (shapes, dict(eq.params)))
    operands = _tuple_text([_value(ctx, a) for a in eq.inputs])
    values = _host_block(ctx, f"{_MODULE}.host_custom_call", [key], [operands],
                         list(eq.params["result_shapes"]))
    for out, value, shape in zip(eq.outputs, values, eq.params["result_shapes"]):
        _bind(ctx, out, value, shape)


def _bind(ctx: LoweringContext, out: Var, name: str, shape: Shape) -> None:
    """Bind ``out`` to the host value ``name`` of ``shape`` (its layout as
    declared), converting when ``out`` has another layout."""
    if out.aval.shape == shape:
        ctx.bind_name(out, name)
        ctx.owned.add(out)  # host functions hand over fresh buffers
        return
    tmp = Var(AbstractValue(shape))
    ctx.bind_name(tmp, name)
    ctx.bind_name(out, as_layout(ctx, tmp, out.aval.shape))


lowerings[se.after_all_p] = _lower_after_all
lowerings[se.optimization_barrier_p] = _lower_optimization_barrier
lowerings[se.stop_gradient_p] = _lower_optimization_barrier  # the identity, no copy
lowerings[se.tuple_p] = _lower_tuple
lowerings[se.get_tuple_element_p] = _lower_get_tuple_element
lowerings[se.composite_p] = _lower_composite
lowerings[se.infeed_p] = _lower_infeed
lowerings[se.outfeed_p] = _lower_outfeed
lowerings[se.send_p] = _lower_send
lowerings[se.recv_p] = _lower_recv
lowerings[se.custom_call_p] = _lower_custom_call
