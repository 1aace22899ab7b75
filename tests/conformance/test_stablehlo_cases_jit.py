"""The conformance cases again, compiled with ``compile.jit``.

Numba compiles slowly, so the cases of one StableHLO op are compiled
together: one jitted function runs all of them.  An op's group runs once
every primitive its cases trace to (sub-graphs included) has a Numba
lowering.  ``test_every_group_is_lowered`` fails when a group is left out
for any reason but those of ``NOT_COMPILED``, and says which: a primitive
without a lowering, or a case that does not trace.
"""
from __future__ import annotations

import collections

import pytest

from numxla.compile import jit
from numxla.compile.codegen import lowerings
from numxla.tracer import make_graph
from numxla.tracer.core import ConcretizationError
from numxla.tracer.graph import Graph

from .harness import check_results, run_case, to_array
from .test_stablehlo_cases import MAPPED


def _primitives(graph: Graph) -> set:
    found = set()
    for eq in graph.equations:
        found.add(eq.primitive)
        for value in eq.params.values():
            for sub in (value if isinstance(value, (tuple, list)) else (value,)):
                if isinstance(sub, Graph):
                    found |= _primitives(sub)
    return found


def _case_function(case):
    """The case as a function of its inputs (tracing it records its primitives)."""
    captured = {}

    def wrap(fn):
        captured["fn"] = fn
        return lambda *args: []
    run_case(case, wrap=wrap)
    return captured["fn"]


def _why_not_lowered(case) -> tuple[str, str] | None:
    """None when every primitive the case traces to has a lowering; else
    ``("no lowering", the primitives)`` or ``("tracing failed", the error)``."""
    try:
        graph = make_graph(_case_function(case))(*[to_array(s) for s in case["inputs"]])
    except Exception as e:  # noqa: BLE001  (any error: reported, not raised)
        return "tracing failed", f"{type(e).__name__}: {str(e).splitlines()[0]}"
    missing = sorted(str(p) for p in _primitives(graph) if p not in lowerings)
    return ("no lowering", ", ".join(missing)) if missing else None


GROUPS: dict[str, list[dict]] = collections.defaultdict(list)
for _case in MAPPED:
    GROUPS[_case["op"]].append(_case)
WHY_NOT = {op: {r for r in map(_why_not_lowered, cases) if r} for op, cases in GROUPS.items()}
LOWERED = {op: cases for op, cases in GROUPS.items() if not WHY_NOT[op]}

# The op groups that cannot be compiled, each with its reason.  The dynamic_*
# ops take the result's shape (or its padding, or the slice sizes) as an
# operand tensor; the harness maps them to the static-shape op (broadcast_in_dim,
# conv, gather, iota, pad, reshape: all lowered), which needs those values
# while tracing, but jit traces every input abstractly: a ConcretizationError.
# Compiling them needs result shapes that depend on data, not a lowering.
_SHAPE_OPERAND = "a shape operand must be concrete while tracing (the result shape depends on it)"
NOT_COMPILED: dict[str, str] = {
    op: _SHAPE_OPERAND for op in ("dynamic_broadcast_in_dim", "dynamic_conv", "dynamic_gather",
                                  "dynamic_iota", "dynamic_pad", "dynamic_reshape")}


def test_lowered_groups():
    """At least the starter ops' groups compile (this grows with the backend)."""
    assert {"add", "multiply", "compare", "select", "transpose", "dot_general"} <= set(LOWERED)


def test_every_group_is_lowered():
    """Every in-scope op group is compiled but those of NOT_COMPILED, which
    fail to trace for their documented reason only; a group that becomes
    compilable must leave the list."""
    left_out = {op: sorted(WHY_NOT[op]) for op in set(GROUPS) - set(LOWERED)}
    unexpected = {op: why for op, why in left_out.items() if op not in NOT_COMPILED}
    assert not unexpected, f"op groups not compiled: {unexpected}"
    assert set(left_out) == set(NOT_COMPILED), \
        f"compiled now, to leave NOT_COMPILED: {sorted(set(NOT_COMPILED) - set(left_out))}"
    for op in NOT_COMPILED:
        assert all(kind == "tracing failed" and _is_concretization(detail)
                   for kind, detail in left_out[op]), (op, left_out[op])


def _is_concretization(detail: str) -> bool:
    """Whether ``"ErrorName: message"`` names a ConcretizationError (or a subclass:
    TracerArrayConversionError...)."""
    import numxla.tracer.core as core
    error = getattr(core, detail.split(":")[0], None)
    return isinstance(error, type) and issubclass(error, ConcretizationError)


@pytest.mark.parametrize("op", sorted(LOWERED))
def test_cases_compiled(op):
    cases = LOWERED[op]
    functions = [_case_function(c) for c in cases]
    counts = [len(c["inputs"]) for c in cases]

    @jit
    def all_cases(*inputs):
        results, start = [], 0
        for fn, n in zip(functions, counts):
            results.append(fn(*inputs[start:start + n]))
            start += n
        return results

    inputs = [to_array(s) for c in cases for s in c["inputs"]]
    for case, results in zip(cases, all_cases(*inputs)):
        check_results(case, results)
