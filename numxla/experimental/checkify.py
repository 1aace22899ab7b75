"""``jax.experimental.checkify``: run-time error checks that work eagerly and
under ``jit``, ``vmap`` and ``grad``.

Design.  ``checkify(f)(*args)`` traces ``f`` into a graph (jitted functions
inside it trace inline), then evaluates that graph equation by equation on
the current interpreter (eagerly, into an enclosing ``jit``'s graph, under
``vmap``...) while threading an *error state*: a bool ``pred`` (an error
happened), an s32 ``code`` (which check fired first) and, per check site,
the values its message needs (a slot).  The first failing check wins:
``take = fail & ~pred`` selects the new code and payload.

* ``check`` binds ``checkify_check``, an op with no results whose operands
  are ``(fail, code, *payload)`` and whose parameter lists its sites.
  Eagerly, outside ``checkify``, its reference semantics raise; under
  ``vmap`` its batching rule keeps the last failing element (as JAX
  reports it); it has no derivative.  Staged without ``checkify`` it is
  refused, as JAX does.  ``check_error`` binds the same op with the sites
  of an ``Error``, so an inner error is carried on.
* Automatic checks are added while the graph is evaluated: before a
  ``div`` (a zero divisor), before ``gather``/``scatter``/``dynamic_slice``/
  ``dynamic_update_slice`` (an index out of bounds: the first one, by
  row-major position, is reported) and after the float ops JAX checks for
  NaN (``add``, ``log``, ``dot_general``...).  numxla's composite ops
  (``lgamma``, ``cumsum``...) name the primitive inside them that failed.
* Control flow: a ``cond``/``switch``, ``while_loop``/``fori_loop`` and
  ``scan`` whose computations hold checks are rebuilt with the state added
  to their operands, results and loop carry (a ``while`` condition's checks
  run before the loop and after each body step).  ``call`` and
  ``composite_call`` are inlined.  Checks inside other computations (a
  ``reduce``'s reducer...) are refused.

``Error`` is a pytree (the state; its sites are static) with ``get``,
``get_exception`` and ``throw``; a batched one (from ``vmap(checkify(f))``)
reports each failing element "at mapped index i".
Differences from JAX: ``grad(checkify(f))`` differentiates the ops of a
``custom_jvp``/``custom_vjp`` function inside ``f`` rather than its rule (as
``grad(jit(f))`` does in numxla), and a check inside a jitted function that
is compiled on its own (called with no traced argument) is not carried out.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np

import numxla.primitives as lax
from numxla import errors as _errors
from numxla.autodiff.rules import (batch_rules, bdim_size, move_batch_dim,
                                   register_non_differentiable, zeros_like_aval)
from numxla.primitives import control_flow as cf
from numxla.primitives import elementwise as ew
from numxla.primitives import indexing as ix
from numxla.primitives import shape_ops as so
from numxla.primitives import side_effects as se
from numxla.tracer import pytree
from numxla.tracer.core import (AbstractValue, BF16Array, Primitive, Tracer, abstractify,
                                array_value, current_interpreter)
from numxla.tracer.graph import Graph, GraphBuilder, Literal, _typed, trace_flat
from numxla.tracer.shapes import PrimitiveType as PT

__all__ = ["checkify", "check", "check_error", "Error", "JaxRuntimeError", "JaxException",
           "FailedCheckError", "NaNError", "OOBError", "DivisionByZeroError", "BatchedError",
           "user_checks", "nan_checks", "index_checks", "div_checks", "float_checks",
           "automatic_checks", "all_checks"]


class JaxException(Exception):
    """An error a check found; its class is its category."""


class FailedCheckError(JaxException):
    """A ``check`` whose predicate was false."""


class NaNError(JaxException):
    """A floating-point op produced a NaN."""


class OOBError(JaxException):
    """An index was out of bounds."""


class DivisionByZeroError(JaxException):
    """A division by zero."""


class BatchedError(JaxException):
    """The errors of a batched ``Error``, one line per failing element."""


class JaxRuntimeError(_errors.JaxRuntimeError, ValueError):
    """What ``Error.throw`` and an eager failing ``check`` raise (a ``ValueError``, as JAX's)."""


user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

_NOT_FUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it "
    "through `checkify.checkify`.")


# --------------------------------------------------------------------------
# check sites and their messages
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, repr=False)
class _Site:
    """One place that can fail: its category, what its message needs
    (a check's format string and arguments' structure, a primitive's name,
    an indexed array's shape) and the abstract values of its payload."""

    category: type
    text: str
    tree: Any = None
    avals: tuple[AbstractValue, ...] = ()
    shape: tuple[int, ...] = ()

    def __repr__(self) -> str:
        return f"{self.category.__name__}({self.text!r})"

    def message(self, payload: Sequence[Any]) -> str:
        values = [_host(v) for v in payload]
        if self.category is FailedCheckError:
            args, kwargs = self.tree.unflatten([v.item() if v.ndim == 0 else v for v in values])
            return self.text.format(*args, **kwargs) + " (`check` failed)"
        if self.category is NaNError:
            return f"nan generated by primitive: {self.text}."
        if self.category is DivisionByZeroError:
            return "division by zero"
        index, axis = int(values[0]), int(values[1])
        return (f"out-of-bounds indexing for array of shape {self.shape}: index {index} is out "
                f"of bounds for axis {axis} with size {self.shape[axis]}. ")


def _host(x: Any) -> np.ndarray:
    return x.values() if isinstance(x, BF16Array) else np.asarray(x)


def _site_payload(sites: Sequence[_Site], code: int, payload: Sequence[Any]
                  ) -> tuple[_Site, list[Any]]:
    """Site ``code`` and its own leaves of the concatenated ``payload``."""
    start = sum(len(s.avals) for s in sites[:code])
    site = sites[code]
    return site, list(payload[start:start + len(site.avals)])


def _payload_aval(x: Any) -> AbstractValue:
    aval = abstractify(x)
    return array_value(aval.element_type, aval.dimensions)


# --------------------------------------------------------------------------
# the check op
# --------------------------------------------------------------------------

check_p = Primitive("checkify_check", multiple_results=True, has_side_effect=True)


@check_p.def_abstract_eval
def _check_rule(fail: AbstractValue, code: AbstractValue, *payload: AbstractValue,
                sites: tuple[_Site, ...]) -> tuple:
    if fail.element_type is not PT.PRED or fail.ndim != 0:
        raise TypeError(f"checkify_check: the failure flag must be a scalar pred, got {fail}")
    return ()


@check_p.def_impl
def _check_impl(fail, code, *payload, sites):
    if bool(fail):
        site, leaves = _site_payload(sites, int(code), payload)
        raise JaxRuntimeError(site.message(leaves))
    return ()


def _last_true(flags: Any) -> Any:
    """The index of the last true element of a rank-1 pred array."""
    n = abstractify(flags).dimensions[0]
    first_reversed = lax.argmax(lax.convert_element_type(lax.rev(flags, (0,)), PT.S32), 0)
    return lax.sub(np.int32(n - 1), first_reversed)


def _pick_last_failure(fail: Any, rest: Sequence[Any]) -> tuple[Any, list[Any]]:
    """A batch of checks (leading axis) as one: failed if any failed, the
    code and payload of the last failing element."""
    index = _last_true(fail)
    picked = [lax.dynamic_index_in_dim(x, index, 0, keepdims=False) for x in rest]
    return lax.reduce_or(fail, (0,)), picked


def _check_batch(args, dims, *, sites):
    size = bdim_size(args, dims)
    fail, *rest = [move_batch_dim(x, d, 0, size) for x, d in zip(args, dims)]
    fail, picked = _pick_last_failure(fail, rest)
    check_p.bind(fail, *picked, sites=sites)
    return (), ()


register_non_differentiable(check_p)
batch_rules[check_p] = _check_batch


class _Tracing(threading.local):
    depth = 0  # how many checkify traces are running in this thread


_tracing = _Tracing()


@contextlib.contextmanager
def _tracing_checks() -> Iterator[None]:
    _tracing.depth += 1
    try:
        yield
    finally:
        _tracing.depth -= 1


def _staging() -> bool:
    """Whether the current interpreter records a graph (jit, cond...)."""
    interpreter = current_interpreter()
    while interpreter is not None:
        if isinstance(interpreter, GraphBuilder):
            return True
        interpreter = interpreter.parent
    return False


def _is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic)) or hasattr(x, "__numxla_aval__")


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Add an error with ``msg.format(*fmt_args, **fmt_kwargs)`` if ``pred`` is
    false.  Under ``checkify`` the error is returned; eagerly it raises
    ``JaxRuntimeError``; staged (``jit``) without ``checkify`` it is refused,
    unless ``debug`` (then it is dropped, as it is eagerly)."""
    if not isinstance(msg, str):
        raise TypeError(f"check: msg must be a string, got {type(msg).__name__} {msg!r:.60}")
    aval = abstractify(pred)
    if aval.element_type is not PT.PRED or aval.ndim != 0:
        raise TypeError(f"check takes a scalar pred as argument, got {pred}")
    leaves, tree = pytree.flatten((fmt_args, fmt_kwargs))
    for x in leaves:
        if not _is_array(x):
            raise TypeError(f"Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {x!r} of type {type(x)}.")
    if _tracing.depth == 0:
        if debug:
            return None
        if _staging():
            raise ValueError(_NOT_FUNCTIONALIZED)
    fail = np.bool_(not pred) if isinstance(pred, (bool, np.bool_)) else lax.not_(pred)
    site = _Site(FailedCheckError, msg, tree, tuple(_payload_aval(x) for x in leaves))
    check_p.bind(fail, np.int32(0), *leaves, sites=(site,))
    return None


def check_error(error: "Error") -> None:
    """Raise ``error`` if it holds one; under ``checkify``, add it to the
    checkified function's error instead (where its category is enabled)."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} "
                        f"instead.")
    if _tracing.depth == 0:
        if _staging():
            raise ValueError(_NOT_FUNCTIONALIZED)
        error.throw()
        return
    if not error._sites:
        return
    fail, code, payload = error._pred, error._code, list(error._payload)
    batch = abstractify(fail).dimensions
    if batch:  # a batched error: one element's (the last failing one's)
        n = int(np.prod(batch))
        flat = [lax.reshape(x, (n,) + abstractify(x).dimensions[len(batch):])
                for x in [fail, code, *payload]]
        fail, (code, *payload) = _pick_last_failure(flat[0], flat[1:])
    check_p.bind(fail, code, *payload, sites=error._sites)


# --------------------------------------------------------------------------
# Error
# --------------------------------------------------------------------------

class Error:
    """What a checkified function returns first: whether a check failed, and
    the message of the first one that did (``get``)."""

    def __init__(self, pred: Any, code: Any, payload: Sequence[Any], sites: Sequence[_Site]):
        self._pred = pred
        self._code = code
        self._payload = list(payload)
        self._sites = tuple(sites)

    def _failures(self) -> list[tuple[tuple[int, ...], _Site, str]]:
        """(batch index, site, message) of every failing element."""
        pred = np.asarray(self._pred)
        codes = np.asarray(self._code)
        payload = [_host(p) for p in self._payload]
        out = []
        for index in np.ndindex(pred.shape):
            if pred[index]:
                site, leaves = _site_payload(self._sites, int(codes[index]),
                                             [p[index] for p in payload])
                out.append((index, site, site.message(leaves)))
        return out

    def get(self) -> str | None:
        """The error message, or None if no check failed."""
        failures = self._failures()
        if not failures:
            return None
        if np.ndim(self._pred) == 0:
            return failures[0][2]
        return "\n".join(f"at mapped index {', '.join(map(str, index))}: {message}"
                         for index, _, message in failures)

    def get_exception(self) -> JaxException | None:
        """The error as an exception of its category (``FailedCheckError``,
        ``NaNError``...; ``BatchedError`` for a batched one), or None."""
        failures = self._failures()
        if not failures:
            return None
        if np.ndim(self._pred) == 0:
            return failures[0][1].category(failures[0][2])
        return BatchedError(self.get())

    def throw(self) -> None:
        """Raise ``JaxRuntimeError`` with the message if a check failed (for a
        batched error, the last failing element's)."""
        failures = self._failures()
        if failures:
            raise JaxRuntimeError(failures[-1][2])

    def __str__(self) -> str:
        return f"Error({self.get()})"

    __repr__ = __str__


def _unflatten_error(sites: tuple[_Site, ...], children: Any) -> Error:
    pred, code, *payload = children
    return Error(pred, code, payload, sites)


pytree.register_pytree_node(Error, lambda e: ([e._pred, e._code, *e._payload], e._sites),
                            _unflatten_error)


# --------------------------------------------------------------------------
# checkify
# --------------------------------------------------------------------------

def checkify(fun: Callable[..., Any], errors: frozenset = user_checks) -> Callable[..., Any]:
    """``fun`` with its checks made functional: it returns ``(err, out)``.
    ``errors`` picks the checks: ``user_checks`` (``check``), ``nan_checks``,
    ``div_checks``, ``index_checks`` or a union of them."""
    if not callable(fun):
        raise TypeError(f"checkify: fun must be callable, got {type(fun).__name__}")
    try:
        enabled = frozenset(errors)
    except TypeError:
        raise TypeError(f"checkify: errors must be a set of error categories (user_checks, "
                        f"nan_checks...), got {errors!r}") from None
    unknown = enabled - all_checks
    if unknown:
        raise ValueError(f"checkify: errors holds {sorted(map(repr, unknown))}, which are not "
                         f"error categories; combine user_checks, nan_checks, index_checks, "
                         f"div_checks")

    @functools.wraps(fun)
    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        leaves, in_tree = pytree.flatten((args, kwargs))
        box: dict[str, Any] = {}

        def flat(*tracers: Any) -> list[Any]:
            call_args, call_kwargs = in_tree.unflatten(tracers)
            with _tracing_checks():
                out = fun(*call_args, **call_kwargs)
            out_leaves, box["tree"] = pytree.flatten(out)
            return out_leaves

        graph, captured = trace_flat(flat, [abstractify(x) for x in leaves], name="checkify")
        checker = _Checker(enabled)
        state = _State(np.bool_(False), np.int32(0), {})
        outs = checker.run(graph, [*leaves, *captured], state)
        payload = [x for i in range(len(checker.sites)) for x in checker.slot(state, i)]
        return Error(state.pred, state.code, payload, checker.sites), box["tree"].unflatten(outs)
    return checked


class _State:
    """The error state while a graph is evaluated: ``pred``, ``code`` and the
    payload slot of each site reached (by site id)."""

    def __init__(self, pred: Any, code: Any, slots: dict[int, list[Any]]):
        self.pred, self.code, self.slots = pred, code, slots


class _Auto(NamedTuple):
    """An automatic check of one equation: ``compute(inputs, outputs)`` gives
    ``(fail, payload)``; ``before``: it runs before the op (on its inputs)."""

    kind: str
    site: _Site
    before: bool
    compute: Callable[[list[Any], Any], tuple[Any, list[Any]]]


_STATE_AVALS = [array_value(PT.PRED, ()), array_value(PT.S32, ())]


class _Checker:
    """Evaluates graphs with the error state threaded through (one per
    ``checkify`` call; it numbers the sites it meets)."""

    def __init__(self, enabled: frozenset):
        self.enabled = enabled
        self.sites: list[_Site] = []
        self._ids: dict[Any, int] = {}
        self._graph_sites: dict[int, tuple[Graph, list[int]]] = {}
        self._holds: dict[Any, bool] = {}

    # -- sites ---------------------------------------------------------------------
    def site_id(self, key: Any, site: _Site) -> int:
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self.sites)
            self.sites.append(site)
        return i

    def sites_of(self, graph: Graph) -> list[int]:
        """The ids of the sites ``graph`` (and its computations) can record."""
        cached = self._graph_sites.get(id(graph))
        if cached is None:
            ids = [i for eq in graph.equations for i in self._equation_sites(eq)]
            cached = self._graph_sites[id(graph)] = (graph, list(dict.fromkeys(ids)))
        return cached[1]

    def _equation_sites(self, eq: Any) -> list[int]:
        if eq.primitive is check_p:
            return [self.site_id((eq, k), s) for k, s in enumerate(eq.params["sites"])
                    if s.category in self.enabled]
        if eq.primitive in _CONTROL_FLOW:
            subgraphs = _CONTROL_FLOW[eq.primitive][1](eq.params)
            return [i for g in subgraphs for i in self.sites_of(g)]
        if any(_has_check(g) for g in _graph_params(eq.params)):
            raise NotImplementedError(f"checkify: a check inside the computation of "
                                      f"{eq.primitive.name} is not supported")
        return [self.site_id((eq, a.kind), a.site) for a in _automatic(eq, self.enabled)]

    def _holds_check(self, eq: Any) -> bool:
        """Whether a computation of ``eq`` holds a check (enabled or not)."""
        holds = self._holds.get(eq)
        if holds is None:
            holds = self._holds[eq] = any(_has_check(g) for g in _graph_params(eq.params))
        return holds

    def slot(self, state: _State, site: int) -> list[Any]:
        slot = state.slots.get(site)
        return slot if slot is not None else [zeros_like_aval(av) for av in self.sites[site].avals]

    # -- recording -----------------------------------------------------------------
    def record(self, state: _State, fail: Any, code: Any, payloads: dict[int, list[Any]]) -> None:
        """The first failure wins: a check records only while no earlier one failed."""
        take = lax.and_(fail, lax.not_(state.pred))
        state.pred = lax.or_(state.pred, fail)
        state.code = lax.select(take, np.int32(code) if isinstance(code, int) else code,
                                state.code)
        for site, leaves in payloads.items():
            state.slots[site] = [lax.select(take, new, old)
                                 for new, old in zip(leaves, self.slot(state, site))]

    def _record_check(self, eq: Any, ins: list[Any], state: _State) -> None:
        fail, code, *payload = ins
        sites = eq.params["sites"]
        on = [s.category in self.enabled for s in sites]
        if not any(on):
            return
        ids = [self.site_id((eq, k), s) if on[k] else -1 for k, s in enumerate(sites)]
        if len(sites) == 1:
            global_code: Any = ids[0]
        else:
            global_code = lax.dynamic_index_in_dim(np.array(ids, np.int32), code, 0, False)
            if not all(on):
                fail = lax.and_(fail, lax.dynamic_index_in_dim(np.array(on), code, 0, False))
        payloads = {i: _site_payload(sites, k, payload)[1]
                    for k, i in enumerate(ids) if on[k]}
        self.record(state, fail, global_code, payloads)

    # -- evaluation ----------------------------------------------------------------
    def run(self, graph: Graph, args: Sequence[Any], state: _State) -> list[Any]:
        """Evaluate ``graph`` on the current interpreter, recording into ``state``."""
        env: dict[Any, Any] = {v: _typed(c, v.aval)
                               for v, c in zip(graph.const_vars, graph.const_values)}
        env.update(zip(graph.in_vars, args))

        def read(atom: Any) -> Any:
            return _typed(atom.value, atom.aval) if isinstance(atom, Literal) else env[atom]

        for eq in graph.equations:
            ins = [read(a) for a in eq.inputs]
            if eq.primitive is check_p:
                self._record_check(eq, ins, state)
                continue
            if eq.primitive in _CONTROL_FLOW and (self._equation_sites(eq) or
                                                  self._holds_check(eq)):
                # (a disabled check is dropped there)
                outs = _CONTROL_FLOW[eq.primitive][0](self, eq, ins, state)
            else:
                autos = _automatic(eq, self.enabled)
                for a in autos:
                    if a.before:
                        self._record_auto(eq, a, state, ins, None)
                out = eq.primitive.bind(*ins, **eq.params)
                outs = out if eq.primitive.multiple_results else (out,)
                for a in autos:
                    if not a.before:
                        self._record_auto(eq, a, state, ins, outs)
            env.update(zip(eq.outputs, outs))
        return [read(a) for a in graph.out_atoms]

    def _record_auto(self, eq: Any, auto: _Auto, state: _State, ins: list[Any], outs: Any
                     ) -> None:
        site = self.site_id((eq, auto.kind), auto.site)
        fail, payload = auto.compute(ins, outs)
        self.record(state, fail, site, {site: payload})

    # -- the state as operands of computations ------------------------------------------
    def pack(self, state: _State, ids: Sequence[int]) -> list[Any]:
        return [state.pred, state.code, *(x for i in ids for x in self.slot(state, i))]

    def unpack(self, leaves: Sequence[Any], ids: Sequence[int]) -> _State:
        slots, k = {}, 2
        for i in ids:
            n = len(self.sites[i].avals)
            slots[i] = list(leaves[k:k + n])
            k += n
        return _State(leaves[0], leaves[1], slots)

    def state_avals(self, ids: Sequence[int]) -> list[AbstractValue]:
        return _STATE_AVALS + [av for i in ids for av in self.sites[i].avals]

    def threaded(self, fn: Callable[[_State, list[Any]], list[Any]], ids: Sequence[int],
                 avals: Sequence[AbstractValue], name: str, *, returns_state: bool = True
                 ) -> Graph:
        """A computation of ``(*state, *avals)`` returning ``(*state, *fn(state, xs))``
        (``fn``'s results alone unless ``returns_state``)."""
        n = len(self.state_avals(ids))

        def flat(*xs: Any) -> list[Any]:
            state = self.unpack(xs[:n], ids)
            outs = list(fn(state, list(xs[n:])))
            return self.pack(state, ids) + outs if returns_state else outs

        graph, captured = trace_flat(flat, self.state_avals(ids) + list(avals), name=name)
        assert not captured, "a threaded computation closed over an outer value"
        return graph


# --------------------------------------------------------------------------
# automatic checks
# --------------------------------------------------------------------------

# the ops JAX checks for NaN results (numxla's names are JAX's)
_NAN_PRIMITIVES = frozenset({
    "add", "sub", "mul", "div", "rem", "pow", "atan2", "exp", "expm1", "log", "log1p", "sin",
    "cos", "tan", "tanh", "sqrt", "rsqrt", "cbrt", "logistic", "erf", "dot_general",
    "conv_general_dilated", "reduce_sum", "reduce_prod", "reduce_window_sum", "pad"})


def _is_inexact(aval: AbstractValue) -> bool:
    return aval.shape.is_array and (aval.element_type.is_floating or aval.element_type.is_complex)


def _any(x: Any) -> Any:
    """Whether any element of a pred array is true."""
    rank = abstractify(x).ndim
    return lax.reduce_or(x, tuple(range(rank))) if rank else x


def _automatic(eq: Any, enabled: frozenset) -> list[_Auto]:
    """The enabled automatic checks of one equation."""
    prim, out = eq.primitive, []
    if DivisionByZeroError in enabled and prim is ew.div_p:
        out.append(_Auto("div", _Site(DivisionByZeroError, "div"), True, _divisor_zero))
    if OOBError in enabled and prim in _INDEX_BOUNDS:
        bounds = _INDEX_BOUNDS[prim](eq)
        if bounds is not None:
            shape, index_aval, compute = bounds
            site = _Site(OOBError, prim.name, avals=(index_aval, array_value(PT.S32, ())),
                         shape=shape)
            out.append(_Auto("oob", site, True, compute))
    if NaNError in enabled and prim.name in _NAN_PRIMITIVES and \
            any(_is_inexact(v.aval) for v in eq.outputs):
        out.append(_Auto("nan", _Site(NaNError, prim.name), False, _nan_result))
    return out


def _divisor_zero(ins: list[Any], outs: Any) -> tuple[Any, list[Any]]:
    divisor = ins[1]
    return _any(lax.eq(divisor, zeros_like_aval(abstractify(divisor)))), []


def _nan_result(ins: list[Any], outs: Any) -> tuple[Any, list[Any]]:
    flags = [_any(lax.ne(o, o)) for o in outs if _is_inexact(abstractify(o))]
    return functools.reduce(lax.or_, flags), []


def _out_of_bounds(indices: Any, operand_dims: Sequence[int], index_map: Sequence[int],
                   window: Sequence[int]) -> tuple[Any, list[Any]]:
    """Whether an index array (the index vector last) addresses a window
    outside the operand, with the first bad index and its operand axis."""
    aval = abstractify(indices)
    k, n = aval.dimensions[-1], aval.size
    upper = np.array([operand_dims[d] - window[d] for d in index_map], aval.dtype)
    bad = lax.or_(lax.lt(indices, zeros_like_aval(aval)),
                  lax.gt(indices, lax.broadcast_in_dim(upper, aval.dimensions, (aval.ndim - 1,))))
    flat_bad, flat_indices = lax.reshape(bad, (n,)), lax.reshape(indices, (n,))
    position = lax.argmax(lax.convert_element_type(flat_bad, PT.S32), 0)
    value = lax.dynamic_index_in_dim(flat_indices, position, 0, False)
    axis = lax.dynamic_index_in_dim(np.array(index_map, np.int32),
                                    lax.rem(position, np.int32(k)), 0, False)
    return lax.reduce_or(flat_bad, (0,)), [value, axis]


def _start_indices_bounds(first_start: int, window_of: Callable[[Any], Sequence[int]]):
    """The out-of-bounds check of ``dynamic_slice``/``dynamic_update_slice``
    (scalar start indices from operand ``first_start``)."""
    def bounds(eq: Any):
        starts = eq.inputs[first_start:]
        if not starts:
            return None
        dims, window = eq.inputs[0].aval.dimensions, window_of(eq)
        index_type = starts[0].aval.element_type

        def compute(ins: list[Any], outs: Any) -> tuple[Any, list[Any]]:
            vector = lax.concatenate([lax.reshape(lax.convert_element_type(s, index_type),
                                                  (1, 1)) for s in ins[first_start:]], 1)
            return _out_of_bounds(vector, dims, range(len(dims)), window)
        return dims, array_value(index_type, ()), compute
    return bounds


def _gather_bounds(eq: Any):
    operand, indices = eq.inputs[0].aval, eq.inputs[1].aval
    if indices.size == 0 or indices.dimensions[-1] == 0:
        return None
    dn, sizes = eq.params["dimension_numbers"], eq.params["slice_sizes"]

    def compute(ins: list[Any], outs: Any) -> tuple[Any, list[Any]]:
        return _out_of_bounds(ins[1], operand.dimensions, dn.start_index_map, sizes)
    return operand.dimensions, array_value(indices.element_type, ()), compute


def _scatter_bounds(eq: Any):
    computation = eq.params.get("update_computation")
    n = len(computation.out_avals) if computation is not None else \
        (len(eq.inputs) - 1) // 2 if eq.primitive is ix.scatter_p else 1
    operand, indices, updates = eq.inputs[0].aval, eq.inputs[n].aval, eq.inputs[n + 1].aval
    if indices.size == 0 or indices.dimensions[-1] == 0:
        return None
    dn = eq.params["dimension_numbers"]
    skipped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = [1] * operand.ndim
    in_window = [d for d in range(operand.ndim) if d not in skipped]
    for d, u in zip(in_window, dn.update_window_dims):
        window[d] = updates.dimensions[u]

    def compute(ins: list[Any], outs: Any) -> tuple[Any, list[Any]]:
        return _out_of_bounds(ins[n], operand.dimensions, dn.scatter_dims_to_operand_dims,
                              window)
    return operand.dimensions, array_value(indices.element_type, ()), compute


_INDEX_BOUNDS: dict[Primitive, Callable[[Any], Any]] = {
    so.dynamic_slice_p: _start_indices_bounds(1, lambda eq: eq.params["slice_sizes"]),
    so.dynamic_update_slice_p: _start_indices_bounds(2, lambda eq: eq.inputs[1].aval.dimensions),
    ix.gather_p: _gather_bounds,
    ix.scatter_p: _scatter_bounds,
    **{p: _scatter_bounds for p in ix.NAMED_SCATTER_PRIMITIVES.values()},
}


# --------------------------------------------------------------------------
# computations: the state through control flow
# --------------------------------------------------------------------------

def _graph_params(params: dict[str, Any]) -> Iterator[Graph]:
    for value in params.values():
        for v in (value if isinstance(value, tuple) else (value,)):
            if isinstance(v, Graph):
                yield v


def _has_check(graph: Graph) -> bool:
    return any(eq.primitive is check_p or any(_has_check(g) for g in _graph_params(eq.params))
               for eq in graph.equations)


def _while(checker: _Checker, eq: Any, ins: list[Any], state: _State) -> list[Any]:
    p = eq.params
    cond, body, nc, nb = p["cond_graph"], p["body_graph"], p["cond_nconsts"], p["body_nconsts"]
    cond_consts, body_consts, carry = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
    checked_cond = bool(checker.sites_of(cond))
    if checked_cond:  # the condition's checks: on the initial carry, then after each step
        checker.run(cond, carry + cond_consts, state)
    ids = list(dict.fromkeys(checker.sites_of(body) + checker.sites_of(cond)))
    k = len(carry)

    def new_cond(st: _State, xs: list[Any]) -> list[Any]:  # its checks recorded in new_body
        return checker.run(cond, xs, st)

    def new_body(st: _State, xs: list[Any]) -> list[Any]:
        out = checker.run(body, xs[:k + nb], st)
        if checked_cond:
            checker.run(cond, out + xs[k + nb:], st)
        return out
    carry_avals = list(body.in_avals[:k])
    cond_g = checker.threaded(new_cond, ids, carry_avals + list(cond.in_avals[k:]), cond.name,
                              returns_state=False)
    extra = cond_consts if checked_cond else []
    body_g = checker.threaded(new_body, ids, list(body.in_avals) +
                              (list(cond.in_avals[k:]) if checked_cond else []), body.name)
    n = len(checker.state_avals(ids))
    outs = cf.while_p.bind(*cond_consts, *body_consts, *extra, *checker.pack(state, ids), *carry,
                           cond_graph=cond_g, body_graph=body_g, cond_nconsts=nc,
                           body_nconsts=nb + len(extra))
    _take_state(checker, state, outs[:n], ids)
    return list(outs[n:])


def _take_state(checker: _Checker, state: _State, leaves: Sequence[Any], ids: list[int]) -> None:
    new = checker.unpack(leaves, ids)
    state.pred, state.code = new.pred, new.code
    state.slots.update(new.slots)


def _scan(checker: _Checker, eq: Any, ins: list[Any], state: _State) -> list[Any]:
    p = eq.params
    body, nc = p["body"], p["num_consts"]
    ids = checker.sites_of(body)
    n = len(checker.state_avals(ids))
    body_g = checker.threaded(lambda st, xs: checker.run(body, xs, st), ids,
                              list(body.in_avals), body.name)
    outs = cf.scan_p.bind(*ins[:nc], *checker.pack(state, ids), *ins[nc:], body=body_g,
                          num_consts=nc, num_carry=n + p["num_carry"], length=p["length"],
                          reverse=p["reverse"])
    _take_state(checker, state, outs[:n], ids)
    return list(outs[n:])


def _conditional(checker: _Checker, eq: Any, ins: list[Any], state: _State) -> list[Any]:
    branches, counts = eq.params["branches"], eq.params["operand_counts"]
    ids = list(dict.fromkeys(i for b in branches for i in checker.sites_of(b)))
    n = len(checker.state_avals(ids))

    def branch_fn(branch: Graph) -> Callable[[_State, list[Any]], list[Any]]:
        return lambda st, xs: checker.run(branch, xs, st)
    new = tuple(checker.threaded(branch_fn(b), ids, list(b.in_avals), b.name) for b in branches)
    packed, operands, start = checker.pack(state, ids), [], 1
    for count in counts:
        operands += packed + ins[start:start + count]
        start += count
    outs = cf.conditional_p.bind(ins[0], *operands, branches=new,
                                 operand_counts=tuple(n + c for c in counts))
    _take_state(checker, state, outs[:n], ids)
    return list(outs[n:])


def _inline(param: str) -> Callable[..., list[Any]]:
    def handler(checker: _Checker, eq: Any, ins: list[Any], state: _State) -> list[Any]:
        return checker.run(eq.params[param], ins, state)
    return handler


# the control flow the state threads through: (handler, its computations)
_CONTROL_FLOW: dict[Primitive, tuple[Callable[..., list[Any]], Callable[[dict], Any]]] = {
    cf.while_p: (_while, lambda p: (p["body_graph"], p["cond_graph"])),
    cf.scan_p: (_scan, lambda p: (p["body"],)),
    cf.conditional_p: (_conditional, lambda p: p["branches"]),
    cf.call_p: (_inline("computation"), lambda p: (p["computation"],)),
    se.composite_p: (_inline("decomposition"), lambda p: (p["decomposition"],)),
}
