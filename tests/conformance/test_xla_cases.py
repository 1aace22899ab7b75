"""The cases transcribed from XLA's own tests (shared/conformance/xla_tests),
run eagerly (numxla's reference semantics) and compiled with ``compile.jit``.

Eagerly, every case is a test of its own.  Compiled, Numba's compile time
per kernel makes that too slow: one jitted function runs ``CHUNK``
consecutive cases of a source file, and the cases with argument or result
layouts are grouped apart, per file, their ``in_layouts``/``out_layouts``
giving each argument and result its own layout.  (Chunks, not whole files:
numxla fuses a group's independent ops into a few large kernels, and Numba's
compile time grows faster than their size; six cases per function took the
least CPU in all, measured against 3, 12 and 80.)  When a group's
jitted function fails (an op with no lowering, a compile error, a
``TierMismatch``), the group is halved until the failing cases are found:
every failing case is reported, none is skipped.  Both parts compare with the
case's expected data only.  Cases needing element types numxla does not have
(``requires``) are skipped.
"""
from __future__ import annotations

import collections

import pytest

from numxla.compile import jit

from .xla_cases import (
    case_function,
    check_results,
    compare,
    has_layouts,
    inputs_of,
    layouts,
    load_cases,
    run_eager,
    skip_reason,
    source_file,
)

CASES = load_cases()
IN_SCOPE = [c for c in CASES if skip_reason(c) is None]
OUT_OF_SCOPE = [c for c in CASES if skip_reason(c) is not None]
CHUNK = 6


@pytest.mark.parametrize("case", CASES, ids=[c["source"] for c in CASES])
def test_case_eager(case):
    if skip_reason(case):
        pytest.skip(skip_reason(case))
    check_results(case, run_eager(case))


def _groups() -> dict[str, list[dict]]:
    by_file: dict[tuple, list[dict]] = collections.defaultdict(list)
    for case in IN_SCOPE:
        by_file[source_file(case).removesuffix("_test.cc"), has_layouts(case)].append(case)
    groups = {}
    for (name, laid_out), cases in by_file.items():
        name += "/layouts" if laid_out else ""
        chunks = [cases[i:i + CHUNK] for i in range(0, len(cases), CHUNK)]
        for k, chunk in enumerate(chunks):
            groups[name if len(chunks) == 1 else f"{name}/{k}"] = chunk
    return groups


GROUPS = _groups()


def _layout_text(layout) -> str | None:
    return None if layout is None else "{" + ",".join(map(str, layout)) + "}"


def _jit_all(cases: list[dict]):
    """One jitted function running ``cases`` on their flat inputs."""
    functions = [case_function(c) for c in cases]
    counts = [len(c["inputs"]) for c in cases]

    def all_cases(*inputs):
        results, start = [], 0
        for fn, n in zip(functions, counts):
            results.append(fn(*inputs[start:start + n]))
            start += n
        return results

    ins = [_layout_text(x) for c in cases for x in layouts(c)[0]]
    outs = [_layout_text(x) for c in cases for x in layouts(c)[1]]
    return jit(all_cases, in_layouts=ins if any(ins) else None,
               out_layouts=outs if any(outs) else None)


def run_compiled(cases: list[dict]) -> dict[int, list[str]]:
    """The problems of each case (by id) compiled; halves a group that fails."""
    try:
        results = _jit_all(cases)(*[x for c in cases for x in inputs_of(c)])
    except Exception as e:  # noqa: BLE001 (every failure is a finding)
        if len(cases) > 1:
            half = len(cases) // 2
            return {**run_compiled(cases[:half]), **run_compiled(cases[half:])}
        return {cases[0]["id"]: [f"{type(e).__name__}: {e}"]}
    return {c["id"]: compare(c, r, check_layouts=True) for c, r in zip(cases, results)}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_cases_compiled(group):
    cases = GROUPS[group]
    problems = run_compiled(cases)
    failing = [f"{c['source']} ({c['op']}): " + "; ".join(problems[c["id"]])
               for c in cases if problems[c["id"]]]
    assert not failing, f"{len(failing)} of {len(cases)} cases fail:\n" + "\n".join(failing)


@pytest.mark.parametrize("case", OUT_OF_SCOPE, ids=[c["source"] for c in OUT_OF_SCOPE])
def test_case_compiled_out_of_scope(case):
    pytest.skip(skip_reason(case))
