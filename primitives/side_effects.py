"""Tokens and side effects: AfterAll, Infeed/Outfeed, Send/Recv, CustomCall,
CompositeCall, OptimizationBarrier, Tuple/GetTupleElement.

Tokens order side effects: an effectful op takes a token and returns a new
one, and ``after_all`` joins several.  Their concrete value is a
:class:`Token` (no data); a TUPLE-shaped value's is a :class:`TupleValue`
(a Python tuple of its elements).  Both report their abstract value through
``__numxla_aval__``, so they flow through eager calls and tracing like
arrays do.

The host side of the effects lives here, as plain Python objects a user
can fill and read:

* ``infeed_queue.put(array)`` before a program runs ``infeed``;
  ``outfeed_queue.get()`` after it ran ``outfeed``;
* ``channels[channel_id]``: the queue a ``send`` pushes to and a ``recv``
  pops from (a send followed by a recv on one channel delivers the value);
* ``register_custom_call_target(name, fn)``: the functions ``custom_call``
  runs (NumPy arrays in, arrays out).

Effectful primitives are marked ``has_side_effect=True`` so no later pass
drops or reorders them.  ``custom_call`` is always marked (conservatively);
its ``has_side_effect`` parameter records XLA's attribute.
"""
from __future__ import annotations

import builtins
import collections
import enum
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import AbstractValue, Primitive, ShapeError, abstractify, bf16_array
from numxla.tracer.graph import Graph
from numxla.tracer.shapes import PrimitiveType as PT, Shape, parse_shape

from ._subgraph import trace_computation
from .control_flow import _check_types, _type_key, _type_text, eval_computation

__all__ = [
    "Token", "TupleValue", "HostQueue", "HostTransferError", "infeed_queue", "outfeed_queue",
    "channels", "after_all", "create_token", "infeed", "outfeed", "send", "recv",
    "CustomCallApiVersion", "register_custom_call_target", "custom_call", "composite_call",
    "optimization_barrier", "stop_gradient", "tuple", "get_tuple_element",
]

_tuple = builtins.tuple  # this module defines XLA's ``tuple``
TOKEN = AbstractValue(Shape.token())


# --------------------------------------------------------------------------
# runtime values and host-side queues
# --------------------------------------------------------------------------

class Token:
    """The concrete value of an XLA token: no data, only ordering."""

    __slots__ = ()

    def __numxla_aval__(self) -> AbstractValue:
        return TOKEN

    def __repr__(self) -> str:
        return "Token()"


class TupleValue(_tuple):
    """The concrete value of a TUPLE-shaped XLA value: a Python tuple of its
    elements (arrays, tokens or tuples).  A pytree leaf: one XLA value."""

    __slots__ = ()

    def __numxla_aval__(self) -> AbstractValue:
        return AbstractValue(Shape.tuple_of([abstractify(e).shape for e in self]))

    def __repr__(self) -> str:
        return f"TupleValue{_tuple.__repr__(self)}"


class HostTransferError(RuntimeError):
    """A host transfer found no value, or a value of the wrong shape."""


class HostQueue:
    """A first-in first-out queue of host values (infeed, outfeed, a channel)."""

    def __init__(self, name: str):
        self.name = name
        self._items: collections.deque = collections.deque()

    def put(self, value: Any) -> None:
        self._items.append(value if isinstance(value, (Token, TupleValue))
                           else np.array(value, subok=True))  # a copy; BF16Array stays one

    def get(self) -> Any:
        if not self._items:
            raise HostTransferError(f"the {self.name} is empty")
        return self._items.popleft()

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<HostQueue {self.name}: {len(self)} value(s)>"


class _Channels(dict):
    """``channels[channel_id]``: a channel's queue, created on first use."""

    def __missing__(self, channel_id: int) -> HostQueue:
        queue = self[channel_id] = HostQueue(f"channel {channel_id}")
        return queue


infeed_queue = HostQueue("infeed queue")
outfeed_queue = HostQueue("outfeed queue")
channels: dict[int, HostQueue] = _Channels()


def _same_type(a: Shape, b: Shape) -> bool:
    """Equal element types and dimensions (layouts aside), recursively."""
    return _type_key(AbstractValue(a)) == _type_key(AbstractValue(b))


def _host_shape(value: Any, expected: Shape) -> Shape:
    """The shape of a host value; uint16 words read as bf16 where bf16 is expected."""
    shape = abstractify(value).shape
    if expected.element_type is PT.BF16 and shape.element_type is PT.U16:
        return Shape(PT.BF16, shape.dimensions)
    return shape


def _take(op: str, queue: HostQueue, shape: Shape) -> Any:
    try:
        value = queue.get()
    except HostTransferError as e:
        raise HostTransferError(f"{op}: {e}; nothing to read a {_type_text(shape)} value "
                                f"from") from None
    return check_received(op, value, shape, f"the {queue.name} held")


def _as_shape(op: str, what: str, spec: Any) -> Shape:
    """A Shape from a Shape, an AbstractValue, a text form ('s32[2,2]') or
    anything with ``.shape`` and ``.dtype``."""
    if isinstance(spec, Shape):
        return spec
    if isinstance(spec, AbstractValue):
        return spec.shape
    if isinstance(spec, str):
        return parse_shape(spec)
    if hasattr(spec, "shape") and hasattr(spec, "dtype"):
        return abstractify(spec).shape
    raise ShapeError(op, f"{what} must be a Shape, a shape string such as 's32[2,2]' or have "
                         f".shape and .dtype, got {spec!r:.60}")


def _require_token(op: str, aval: AbstractValue, what: str = "token") -> None:
    if not aval.shape.is_token:
        raise ShapeError(op, f"{what} must be a token, got {aval.shape}", aval)


def _require_data(op: str, aval: AbstractValue, what: str = "operand") -> None:
    if aval.shape.is_token:
        raise ShapeError(op, f"{what} must be an array or a tuple, not a token", aval)


# --------------------------------------------------------------------------
# AfterAll
# --------------------------------------------------------------------------

after_all_p = Primitive("after_all")


@after_all_p.def_abstract_eval
def _after_all_rule(*tokens: AbstractValue) -> AbstractValue:
    for i, t in enumerate(tokens):
        _require_token("after_all", t, f"operand {i}")
    return TOKEN


@after_all_p.def_impl
def _after_all_impl(*tokens):
    return Token()


def after_all(*tokens: Any) -> Any:
    """XLA's AfterAll: a token ordered after every token given (a join)."""
    return after_all_p.bind(*tokens)


def create_token() -> Any:
    """A fresh token (AfterAll of nothing)."""
    return after_all_p.bind()


# --------------------------------------------------------------------------
# Infeed / Outfeed
# --------------------------------------------------------------------------

infeed_p = Primitive("infeed", multiple_results=True, has_side_effect=True)
outfeed_p = Primitive("outfeed", has_side_effect=True)


def _check_transfer_shape(op: str, shape: Shape) -> None:
    if shape.is_token or (shape.is_tuple and any(not s.is_array for s in shape.tuple_shapes)):
        raise ShapeError(op, f"shape {shape} must be an array or a tuple of arrays (no tokens, "
                             f"no nested tuples)")


@infeed_p.def_abstract_eval
def _infeed_rule(token: AbstractValue, *, shape: Shape, config: str) -> list[AbstractValue]:
    _require_token("infeed", token)
    _check_transfer_shape("infeed", shape)
    return [AbstractValue(shape), TOKEN]


@infeed_p.def_impl
def _infeed_impl(token, *, shape, config):
    return _take("infeed", infeed_queue, shape), Token()


def infeed(token: Any, shape: Any, config: str = "") -> tuple[Any, Any]:
    """XLA's Infeed: the next value of ``infeed_queue`` (which must have
    ``shape``), and a new token.  Successive infeeds read in token order."""
    return infeed_p.bind(token, shape=_as_shape("infeed", "shape", shape), config=str(config))


@outfeed_p.def_abstract_eval
def _outfeed_rule(operand: AbstractValue, token: AbstractValue, *, config: str) -> AbstractValue:
    _require_data("outfeed", operand)
    _require_token("outfeed", token)
    return TOKEN


@outfeed_p.def_impl
def _outfeed_impl(operand, token, *, config):
    outfeed_queue.put(operand)
    return Token()


def outfeed(operand: Any, token: Any, config: str = "") -> Any:
    """XLA's Outfeed: push ``operand`` to ``outfeed_queue``; returns a new token."""
    return outfeed_p.bind(operand, token, config=str(config))


# --------------------------------------------------------------------------
# Send / Recv
# --------------------------------------------------------------------------

send_p = Primitive("send", has_side_effect=True)
recv_p = Primitive("recv", multiple_results=True, has_side_effect=True)


def _check_channel(op: str, channel_id: Any) -> int:
    if isinstance(channel_id, bool) or not isinstance(channel_id, (int, np.integer)) \
            or channel_id < 0:
        raise ShapeError(op, f"channel_id must be a non-negative int, got {channel_id!r}")
    return int(channel_id)


def check_pairs(op: str, pairs: Any) -> tuple[tuple[int, int], ...] | None:
    """``source_target_pairs`` as a tuple of (source, target) process pairs:
    each process the source of one pair at most and the target of one at most."""
    if pairs is None:
        return None
    try:
        out = _tuple((int(s), int(t)) for s, t in pairs)
    except (TypeError, ValueError):
        raise ShapeError(op, f"source_target_pairs must be (source, target) pairs, got "
                             f"{pairs!r}") from None
    if any(i < 0 for pair in out for i in pair):
        raise ShapeError(op, f"source_target_pairs {out} hold a negative process id")
    for k, what in ((0, "source"), (1, "target")):
        ids = [pair[k] for pair in out]
        if len(set(ids)) != len(ids):
            raise ShapeError(op, f"source_target_pairs {out}: a process is the {what} of "
                                 f"several pairs")
    return out


@send_p.def_abstract_eval
def _send_rule(operand: AbstractValue, token: AbstractValue, *, channel_id: int,
               is_host_transfer: bool, source_target_pairs=None) -> AbstractValue:
    _require_data("send", operand)
    _require_token("send", token)
    _check_channel("send", channel_id)
    return TOKEN


def check_pair_ids(op: str, pairs: tuple, channel_id: int, size: int) -> None:
    """Raise unless every process ``source_target_pairs`` names is one of the
    ``size`` processes of the program."""
    beyond = sorted({i for pair in pairs for i in pair if i >= size})
    if beyond:
        where = ("1 process of this program (run several with compile.pmap or "
                 "run_replicated)" if size == 1 else f"{size} of the program")
        raise ValueError(f"{op} on channel {channel_id}: source_target_pairs {pairs} name "
                         f"process(es) {beyond} beyond the {where}")


def _one_process_peer(op: str, pairs: tuple, channel_id: int) -> bool:
    """For a program of one process (0): whether it sends to (receives from)
    itself; pairs naming other processes are an error."""
    check_pair_ids(op, pairs, channel_id, 1)
    return (0, 0) in pairs


@send_p.def_impl
def _send_impl(operand, token, *, channel_id, is_host_transfer, source_target_pairs=None):
    if source_target_pairs is None or _one_process_peer("send", source_target_pairs, channel_id):
        channels[channel_id].put(operand)
    return Token()


def send(operand: Any, token: Any, channel_id: int, *, is_host_transfer: bool = False,
         source_target_pairs: Sequence[Sequence[int]] | None = None) -> Any:
    """XLA's Send: put ``operand`` on channel ``channel_id`` (``channels``);
    returns a new token.

    ``source_target_pairs`` (XLA's ``_xla_send_recv_source_target_pairs``):
    in a program of several processes (``compile.pmap``), process ``s`` of
    each ``(s, t)`` pair sends its operand to process ``t``, whose ``recv``
    on the same channel (with the same pairs) receives it: a point-to-point
    message (MPI ``send`` on the MPI backend).  Processes that are no source
    send nothing."""
    return send_p.bind(operand, token, channel_id=_check_channel("send", channel_id),
                       is_host_transfer=bool(is_host_transfer),
                       source_target_pairs=check_pairs("send", source_target_pairs))


@recv_p.def_abstract_eval
def _recv_rule(token: AbstractValue, *, shape: Shape, channel_id: int,
               is_host_transfer: bool, source_target_pairs=None) -> list[AbstractValue]:
    _require_token("recv", token)
    _check_transfer_shape("recv", shape)
    _check_channel("recv", channel_id)
    return [AbstractValue(shape), TOKEN]


@recv_p.def_impl
def _recv_impl(token, *, shape, channel_id, is_host_transfer, source_target_pairs=None):
    if source_target_pairs is None or _one_process_peer("recv", source_target_pairs, channel_id):
        return _take("recv", channels[channel_id], shape), Token()
    return zeros_value(shape), Token()


def recv(token: Any, shape: Any, channel_id: int, *, is_host_transfer: bool = False,
         source_target_pairs: Sequence[Sequence[int]] | None = None) -> tuple[Any, Any]:
    """XLA's Recv: the next value sent on channel ``channel_id`` (it must have
    ``shape``), and a new token.  With ``source_target_pairs`` (see
    :func:`send`), process ``t`` of a pair ``(s, t)`` receives the next value
    process ``s`` sent it on the channel; processes that are no target get
    zeros."""
    return recv_p.bind(token, shape=_as_shape("recv", "shape", shape),
                       channel_id=_check_channel("recv", channel_id),
                       is_host_transfer=bool(is_host_transfer),
                       source_target_pairs=check_pairs("recv", source_target_pairs))


def zeros_value(shape: Shape) -> Any:
    """The all-zero value of an array or tuple ``shape`` (tokens for token leaves)."""
    if shape.is_token:
        return Token()
    if shape.is_tuple:
        return TupleValue(zeros_value(s) for s in shape.tuple_shapes)
    if shape.element_type is PT.BF16:
        return bf16_array(np.zeros(shape.dimensions, np.uint16))
    return np.zeros(shape.dimensions, shape.element_type.numpy_dtype)


def check_received(op: str, value: Any, shape: Shape, origin: str) -> Any:
    """``value`` if it has ``shape``'s type; ``origin`` says where it came
    from in the error ("replica 0 sent", "the infeed queue held")."""
    got = _host_shape(value, shape)
    if not _same_type(got, shape):
        raise HostTransferError(f"{op}: {origin} a {_type_text(got)} value, the program reads "
                                f"{_type_text(shape)}")
    return value


# --------------------------------------------------------------------------
# CustomCall
# --------------------------------------------------------------------------

class CustomCallApiVersion(enum.IntEnum):
    """XLA's ``CustomCallApiVersion`` (metadata here: every target is a Python function)."""

    API_VERSION_ORIGINAL = 1
    API_VERSION_STATUS_RETURNING = 2
    API_VERSION_STATUS_RETURNING_UNIFIED = 3
    API_VERSION_TYPED_FFI = 4


@dataclass(frozen=True)
class _Target:
    fn: Callable[..., Any]
    shape_rule: Callable[..., Any] | None


_TARGETS: dict[str, _Target] = {}


def register_custom_call_target(name: str, fn: Callable[..., Any], *,
                                shape_rule: Callable[..., Any] | None = None) -> None:
    """Make ``fn`` the target ``custom_call(name, ...)`` runs.

    ``fn(*arrays)`` gets the operands as NumPy arrays and returns one array
    or a sequence of them; a dict ``backend_config`` (typed FFI attributes)
    is passed as keyword arguments, a string one as ``backend_config=``.
    ``shape_rule(*avals)``, if given, returns the result shape(s) so that a
    wrong ``result_shapes`` is caught at trace time.  Registering a name
    again replaces its target.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"register_custom_call_target: name must be a non-empty string, "
                         f"got {name!r}")
    _TARGETS[name] = _Target(fn, shape_rule)


class FrozenDict:
    """A hashable, printable mapping (``backend_config``, composite attributes)."""

    __slots__ = ("items",)

    def __init__(self, mapping: Mapping[str, Any]):
        self.items = _tuple(sorted((str(k), _freeze(v)) for k, v in mapping.items()))

    def as_dict(self) -> dict[str, Any]:
        return dict(self.items)

    def __hash__(self) -> int:
        return hash(self.items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrozenDict) and self.items == other.items

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k} = {v!r}" for k, v in self.items) + "}"

    __repr__ = __str__


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return FrozenDict(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return _freeze(value.tolist())        # nested lists of Python scalars
    if isinstance(value, (list, _tuple)):
        return _tuple(_freeze(v) for v in value)
    hash(value)
    return value


def _api_version(value: Any) -> CustomCallApiVersion:
    if isinstance(value, str):
        key = value.upper()
        key = key if key.startswith("API_VERSION_") else "API_VERSION_" + key
        if key in CustomCallApiVersion.__members__:
            return CustomCallApiVersion[key]
    else:
        try:
            return CustomCallApiVersion(int(value))
        except (TypeError, ValueError):
            pass
    raise ShapeError("custom_call", f"api_version {value!r} is not one of "
                                    f"{', '.join(CustomCallApiVersion.__members__)}")


custom_call_p = Primitive("custom_call", multiple_results=True, has_side_effect=True)


def _shapes_text(shapes: Sequence[Shape]) -> str:
    return "(" + ", ".join(_type_text(s) for s in shapes) + ")"


@custom_call_p.def_abstract_eval
def _custom_call_rule(*operands: AbstractValue, call_target_name: str,
                      result_shapes: tuple[Shape, ...], has_side_effect: bool,
                      api_version: CustomCallApiVersion, backend_config: Any
                      ) -> list[AbstractValue]:
    target = _TARGETS.get(call_target_name)
    if target is None:
        known = ", ".join(sorted(_TARGETS)) or "none"
        raise ShapeError("custom_call", f"unknown call_target_name {call_target_name!r}; "
                                        f"register it with register_custom_call_target "
                                        f"(registered: {known})", *operands)
    if isinstance(backend_config, FrozenDict) and \
            api_version is not CustomCallApiVersion.API_VERSION_TYPED_FFI:
        raise ShapeError("custom_call", f"a dictionary backend_config needs api_version="
                                        f"API_VERSION_TYPED_FFI, got {api_version.name}")
    if target.shape_rule is not None:
        expected = target.shape_rule(*operands)
        expected = [_as_shape("custom_call", "shape_rule result", s) for s in
                    (expected if isinstance(expected, (list, _tuple)) else [expected])]
        if len(expected) != len(result_shapes) or \
                not all(_same_type(a, b) for a, b in zip(expected, result_shapes)):
            raise ShapeError("custom_call", f"target {call_target_name!r} returns "
                                            f"{_shapes_text(expected)} for these operands, but "
                                            f"result_shapes is {_shapes_text(result_shapes)}",
                             *operands)
    return [AbstractValue(s) for s in result_shapes]


@custom_call_p.def_impl
def _custom_call_impl(*operands, call_target_name, result_shapes, has_side_effect,
                      api_version, backend_config):
    fn = _TARGETS[call_target_name].fn
    if isinstance(backend_config, FrozenDict):
        out = fn(*operands, **backend_config.as_dict())
    elif backend_config is not None:
        out = fn(*operands, backend_config=backend_config)
    else:
        out = fn(*operands)
    outs = list(out) if isinstance(out, (list, _tuple)) and not isinstance(out, TupleValue) \
        else [out]
    if len(outs) != len(result_shapes):
        raise ShapeError("custom_call", f"target {call_target_name!r} returned {len(outs)} "
                                        f"value(s), result_shapes declares {len(result_shapes)}")
    for i, (value, shape) in enumerate(zip(outs, result_shapes)):
        got = _host_shape(value if isinstance(value, (Token, TupleValue)) else np.asarray(value),
                          shape)
        if not _same_type(got, shape):
            raise ShapeError("custom_call", f"target {call_target_name!r} returned "
                                            f"{_type_text(got)} as result {i}, "
                                            f"result_shapes declares {_type_text(shape)}")
    return _tuple(outs)


def custom_call(call_target_name: str, operands: Sequence[Any], result_shapes: Any, *,
                has_side_effect: bool = False, api_version: Any = 1,
                backend_config: str | Mapping[str, Any] | None = None) -> Any:
    """XLA's CustomCall: run the registered target ``call_target_name`` on
    ``operands``.  ``result_shapes`` is one shape (one result) or a sequence
    (a tuple of results); shapes are ``Shape`` s, strings like ``'f32[3,3]'``
    or anything with ``.shape`` and ``.dtype``."""
    single = not isinstance(result_shapes, (list, _tuple))
    shapes = _tuple(_as_shape("custom_call", "result_shapes", s)
                    for s in ([result_shapes] if single else result_shapes))
    config = FrozenDict(backend_config) if isinstance(backend_config, Mapping) else \
        (None if backend_config is None else str(backend_config))
    outs = custom_call_p.bind(*operands, call_target_name=str(call_target_name),
                              result_shapes=shapes, has_side_effect=bool(has_side_effect),
                              api_version=_api_version(api_version), backend_config=config)
    return outs[0] if single else outs


# --------------------------------------------------------------------------
# CompositeCall
# --------------------------------------------------------------------------

composite_p = Primitive("composite_call", multiple_results=True)


@composite_p.def_abstract_eval
def _composite_rule(*operands: AbstractValue, name: str, attributes: FrozenDict | str,
                    version: int, decomposition: Graph) -> tuple[AbstractValue, ...]:
    if not isinstance(name, str) or not name:
        raise ShapeError("composite_call", f"name must be a non-empty string, got {name!r}")
    if not isinstance(version, int) or version < 0:
        raise ShapeError("composite_call", f"version must be a non-negative int, got {version!r}")
    _check_types("composite_call", "the decomposition's parameters", decomposition.in_avals,
                 "the operands", operands)
    return decomposition.out_avals


@composite_p.def_impl
def _composite_impl(*operands, name, attributes, version, decomposition):
    return _tuple(eval_computation(decomposition, *operands))


def composite_call(decomposition: Callable[..., Any], *operands: Any, name: str,
                   attributes: Mapping[str, Any] | str | None = None, version: int = 0) -> Any:
    """XLA's CompositeCall: an op named ``name`` (with ``attributes`` and a
    semantics ``version``) whose meaning is ``decomposition(*operands)``;
    the decomposition is traced to a sub-graph and is what runs."""
    leaves, in_tree = pytree.flatten(operands)
    comp = trace_computation(decomposition, [abstractify(x) for x in leaves],
                             name=name.replace(".", "_") if isinstance(name, str) and name
                             else "decomposition", in_tree=in_tree)
    attrs = attributes if isinstance(attributes, str) else FrozenDict(attributes or {})
    outs = composite_p.bind(*leaves, *comp.captured, name=name, attributes=attrs,
                            version=version, decomposition=comp.graph)
    return comp.graph.out_tree.unflatten(outs)


# --------------------------------------------------------------------------
# OptimizationBarrier
# --------------------------------------------------------------------------

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


@optimization_barrier_p.def_abstract_eval
def _optimization_barrier_rule(*operands: AbstractValue) -> tuple[AbstractValue, ...]:
    return operands


@optimization_barrier_p.def_impl
def _optimization_barrier_impl(*operands):
    return operands


def optimization_barrier(operands: Any) -> Any:
    """XLA's OptimizationBarrier: the identity on a pytree of values, across
    which no optimisation may move computations (all inputs are evaluated
    before anything that uses an output)."""
    leaves, tree = pytree.flatten(operands)
    return tree.unflatten(optimization_barrier_p.bind(*leaves))


# StopGradient: not an XLA op, JAX's ``lax.stop_gradient``: the identity
# whose derivative is zero.  It stays in graphs (so ``grad(jit(f))`` sees it)
# and compiles to nothing: its result shares the operand's buffer.
stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_impl(lambda x: x)


def stop_gradient(x: Any) -> Any:
    """``x`` (a pytree), with derivatives treating it as a constant."""
    leaves, tree = pytree.flatten(x)
    return tree.unflatten([stop_gradient_p.bind(leaf) for leaf in leaves])


# --------------------------------------------------------------------------
# Tuple / GetTupleElement
# --------------------------------------------------------------------------

tuple_p = Primitive("tuple")
get_tuple_element_p = Primitive("get_tuple_element")


@tuple_p.def_abstract_eval
def _tuple_rule(*elements: AbstractValue) -> AbstractValue:
    return AbstractValue(Shape.tuple_of([e.shape for e in elements]))


@tuple_p.def_impl
def _tuple_impl(*elements):
    return TupleValue(elements)


def tuple(elements: Sequence[Any]) -> Any:  # noqa: A001 (XLA's name)
    """XLA's Tuple: one TUPLE-shaped value holding ``elements`` (a sequence
    of arrays, tokens or tuples); read it with ``get_tuple_element``."""
    if not isinstance(elements, (list, _tuple)) or isinstance(elements, TupleValue):
        raise ShapeError("tuple", f"elements must be a list or tuple of values, got "
                                  f"{type(elements).__name__}")
    return tuple_p.bind(*elements)


@get_tuple_element_p.def_abstract_eval
def _get_tuple_element_rule(operand: AbstractValue, *, index: int) -> AbstractValue:
    if not operand.shape.is_tuple:
        raise ShapeError("get_tuple_element", f"operand must be a tuple, got {operand.shape}",
                         operand)
    n = len(operand.shape.tuple_shapes)
    if not 0 <= index < n:
        raise ShapeError("get_tuple_element", f"index {index} is out of range for a tuple of "
                                              f"{n} element(s)", operand)
    return AbstractValue(operand.shape.tuple_shapes[index])


@get_tuple_element_p.def_impl
def _get_tuple_element_impl(operand, *, index):
    return operand[index]


def get_tuple_element(tuple_value: Any, index: int) -> Any:
    """XLA's GetTupleElement: element ``index`` (a compile-time constant) of a tuple."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise ShapeError("get_tuple_element", f"index must be an int, got {index!r}")
    return get_tuple_element_p.bind(tuple_value, index=int(index))
