"""The conformance cases again, compiled with ``compile.jit``.

Numba compiles slowly, so the cases of one StableHLO op are compiled
together: one jitted function runs all of them.  An op's group runs once
every primitive its cases trace to (sub-graphs included) has a Numba
lowering; ``test_lowered_groups`` lists how far that is.
"""
from __future__ import annotations

import collections

import pytest

from compile import jit
from compile.codegen import lowerings
from tracer import make_graph
from tracer.graph import Graph

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


def _fully_lowered(case) -> bool:
    try:
        graph = make_graph(_case_function(case))(*[to_array(s) for s in case["inputs"]])
    except Exception:
        return False
    return all(p in lowerings for p in _primitives(graph))


GROUPS: dict[str, list[dict]] = collections.defaultdict(list)
for _case in MAPPED:
    GROUPS[_case["op"]].append(_case)
LOWERED = {op: cases for op, cases in GROUPS.items() if all(map(_fully_lowered, cases))}


def test_lowered_groups():
    """At least the starter ops' groups compile (this grows with the backend)."""
    assert {"add", "multiply", "compare", "select", "transpose", "dot_general"} <= set(LOWERED)


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
