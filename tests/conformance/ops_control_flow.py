"""StableHLO control flow, tokens and side effects -> numxla.

Maps while, if, case, func.call, map, chlo.scan, composite, after_all,
optimization_barrier, tuple, get_tuple_element, infeed, send and recv.

Some cases of this family the generic runner cannot run yet: a
``stablehlo.constant`` op (in a program or a region) carries its value outside
``attributes``, so no mapping can see it; ``tuple<...>`` result types do not
parse; ``interpreter.run_parallel`` cases are excluded.  :func:`run_case_locally`
runs any case of the family with this module's small runner (constants,
lenient types, ``run_parallel`` processes one after the other in grid order,
which is enough for send-before-recv programs); the family's tests call it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
from numxla.tracer.shapes import Shape

from .harness import OPS, OpCall, load_cases, parse_type, register, to_array


def _as_tuple(out: Any) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _results(outs: Any) -> Any:
    """One value for a single-result op (what ``run_ops`` stores), else a tuple."""
    outs = _as_tuple(outs)
    return outs[0] if len(outs) == 1 else outs


# -- control flow ----------------------------------------------------------------

@register("while")
def _while(call: OpCall):
    cond_region, body_region = call.regions
    return _results(lax.while_loop(lambda carry: cond_region(*carry),
                                   lambda carry: _as_tuple(body_region(*carry)),
                                   tuple(call.operands)))


def _argless_regions(call: OpCall) -> list[Callable[..., Any]]:
    """``call.regions`` of an op whose regions take no arguments.  The
    harness's ``make_region`` reads ``region["args"]``, which the case file
    omits for if/case regions: fill in the empty list (the same dicts back
    those callables) until the harness uses ``region.get("args", ())``."""
    for raw in call.raw_regions:
        raw.setdefault("args", [])
    return call.regions


@register("if")
def _if(call: OpCall):
    true_region, false_region = _argless_regions(call)
    return _results(lax.cond(call.operands[0], lambda: _as_tuple(true_region()),
                             lambda: _as_tuple(false_region())))


@register("case")
def _case(call: OpCall):
    # XLA's Conditional (an index out of range runs the last branch), not
    # lax.switch, which clamps as JAX's does
    branches = [lambda _, r=r: _as_tuple(r()) for r in _argless_regions(call)]
    return _results(lax.conditional(call.operands[0], branches, [()] * len(branches)))


@register("map")
def _map(call: OpCall):
    return lax.map(call.operands, call.regions[0], call.attributes["dimensions"])


@register("chlo.scan")
def _chlo_scan(call: OpCall):
    """chlo.scan: the region maps (input slices..., carries...) to (outputs...,
    new carries...); outputs stack along ``dimension``."""
    n_in, _ = call.attributes["operandSegmentSizes"]
    n_out, _ = call.attributes["resultSegmentSizes"]
    d = call.attributes["dimension"]
    inputs, inits = call.operands[:n_in], call.operands[n_in:]
    rank = np.ndim(inputs[0])
    to_front = [d] + [i for i in range(rank) if i != d]
    back = list(range(1, d + 1)) + [0] + list(range(d + 1, rank))

    def step(carry, xs):
        outs = _as_tuple(call.regions[0](*xs, *carry))
        return outs[n_out:], outs[:n_out]

    carry, ys = lax.scan(step, tuple(inits), tuple(lax.transpose(x, to_front) for x in inputs),
                         reverse=bool(call.attributes.get("is_reverse", False)))
    return tuple(lax.transpose(y, back) for y in ys) + tuple(carry)


# -- functions: func.call and composite decompositions ------------------------------

# composite.mlir's decomposition, which the case file does not carry: x + 2.
_KNOWN_FUNCTIONS: dict[str, Callable[..., Any]] = {"@add_n.impl": lambda x: lax.add(x, 2)}


@functools.lru_cache(maxsize=None)
def _function_bodies() -> dict[str, list[dict]]:
    bodies: dict[str, list[dict]] = {}
    for case in load_cases():
        for name, body in case.get("functions", {}).items():
            if body not in bodies.setdefault(name, []):
                bodies[name].append(body)
    return bodies


def _function(call: OpCall, name: str) -> Callable[..., Any]:
    """The callee ``name``: from the runner (``call.functions``) when it gives
    one, else the case file's unique definition of that name."""
    functions = getattr(call, "functions", None) or {}
    body = functions.get(name)
    if body is None:
        found = _function_bodies().get(name, [])
        if len(found) > 1:
            raise LookupError(f"function {name} is defined differently by several cases")
        if not found:
            if name in _KNOWN_FUNCTIONS:
                return _KNOWN_FUNCTIONS[name]
            raise LookupError(f"function {name} is not in the case file")
        body = found[0]
    return _function_callable(body, functions)


@register("func.call")
def _func_call(call: OpCall):
    return _results(lax.call(_function(call, call.attributes["callee"]), *call.operands))


@register("composite")
def _composite(call: OpCall):
    a = call.attributes
    decomposition = _function(call, a["decomposition"])
    return _results(lax.composite_call(decomposition, *call.operands, name=a["name"],
                                       attributes=a.get("composite_attributes", {}),
                                       version=a.get("version", 0)))


# -- tokens and side effects --------------------------------------------------------

register("after_all")(lambda call: lax.after_all(*call.operands))
register("tuple")(lambda call: lax.tuple(call.operands))
register("get_tuple_element")(
    lambda call: lax.get_tuple_element(call.operands[0], call.attributes["index"]))


@register("optimization_barrier")
def _optimization_barrier(call: OpCall):
    return _results(lax.optimization_barrier(tuple(call.operands)))


def _data_shape(call: OpCall) -> Shape:
    """The shape of the data results (all results but the final token)."""
    shapes = [Shape(t.element_type, t.dimensions) for t in call.result_types[:-1]]
    return shapes[0] if len(shapes) == 1 else Shape.tuple_of(shapes)


def _split_data(value: Any, token: Any, n: int) -> tuple:
    data = (value,) if n == 1 else tuple(lax.get_tuple_element(value, i) for i in range(n))
    return data + (token,)


@register("infeed")
def _infeed(call: OpCall):
    value, token = lax.infeed(call.operands[0], _data_shape(call),
                              call.attributes.get("infeed_config", ""))
    return _split_data(value, token, len(call.result_types) - 1)


@register("send")
def _send(call: OpCall):
    *inputs, token = call.operands
    value = inputs[0] if len(inputs) == 1 else lax.tuple(inputs)
    return lax.send(value, token, call.attributes["channel_handle"]["handle"],
                    is_host_transfer=call.attributes.get("is_host_transfer", False))


@register("recv")
def _recv(call: OpCall):
    value, token = lax.recv(call.operands[0], _data_shape(call),
                            call.attributes["channel_handle"]["handle"],
                            is_host_transfer=call.attributes.get("is_host_transfer", False))
    return _split_data(value, token, len(call.result_types) - 1)


# -- running program cases ------------------------------------------------------------

def _type(text: str):
    try:
        return parse_type(text)
    except ValueError:  # tuple<...>: numxla's own shape rules give the type
        return None


def _region(region: dict, outer: dict[str, Any], functions: dict) -> Callable[..., Any]:
    def fn(*args):
        env = dict(outer)
        env.update({a["name"]: x for a, x in zip(region.get("args", []), args)})
        return _results(_run_ops(region["ops"], env, functions))
    return fn


def _function_callable(body: dict, functions: dict) -> Callable[..., Any]:
    return _region(body, {}, functions)


def _assign(env: dict[str, Any], names: list[str], out: Any) -> None:
    if len(names) == 1:
        env[names[0]] = out
    else:
        env.update(zip(names, out))


def _run_parallel(o: dict, env: dict[str, Any], functions: dict) -> list[Any]:
    """``interpreter.run_parallel``: each process's function in grid order,
    taking its arguments from the operand list in turn."""
    args = [env[x] for x in o["operands"]]
    results: list[Any] = []
    for row in o["attributes"]["programs"]:
        for name in row:
            body = functions[name]
            mine, args = args[:len(body["args"])], args[len(body["args"]):]
            results.extend(_as_tuple(_function_callable(body, functions)(*mine)))
    return results


def _run_ops(ops: list[dict], env: dict[str, Any], functions: dict) -> list[Any]:
    for o in ops:
        name = o["op"].removeprefix("stablehlo.")
        if name in ("return", "func.return"):
            return [env[x] for x in o.get("operands", [])]
        if name == "constant":
            out = to_array(o["value"])
        elif name == "interpreter.run_parallel":
            out = _run_parallel(o, env, functions)
        else:
            call = OpCall(name=name, operands=[env[x] for x in o.get("operands", [])],
                          attributes=o.get("attributes", {}),
                          regions=[_region(r, env, functions) for r in o.get("regions", [])],
                          result_types=[_type(t) for t in o.get("result_types", [])],
                          raw_regions=o.get("regions", []))
            call.functions = functions  # type: ignore[attr-defined]
            out = OPS[name](call)
        _assign(env, o.get("results", []), out)
    return []


def run_case_locally(case: dict, wrap: Callable[[Callable], Callable] | None = None
                     ) -> list[Any]:
    """Run a single-op or program case with this module's runner (constants,
    lenient types, ``run_parallel``); its results in ``expected`` order.
    ``wrap`` (e.g. trace-then-evaluate) wraps the function of the inputs."""
    functions = case.get("functions", {})
    consts = {name: to_array(spec) for name, spec in case.get("captured_constants", {}).items()}
    if "program" in case:
        inputs: list[Any] = []

        def fn():
            env = dict(consts)
            _run_ops(case["program"]["ops"], env, functions)
            return [env[e["value"]] for e in case["expected"]]
    else:
        inputs = [to_array(spec) for spec in case["inputs"]]

        def fn(*args):
            env = dict(consts)
            call = OpCall(name=case["op"], operands=list(args), attributes=case["attributes"],
                          regions=[_region(r, env, functions) for r in case.get("regions", [])],
                          result_types=[_type(t) for t in case.get("result_types", [])],
                          raw_regions=case.get("regions", []))
            call.functions = functions  # type: ignore[attr-defined]
            outs = _as_tuple(OPS[case["op"]](call))
            return [outs[e.get("result_index", 0)] for e in case["expected"]]
    return list((wrap(fn) if wrap else fn)(*inputs))
