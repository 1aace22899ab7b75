"""Every case of shared/conformance/stablehlo_cases.json whose ops numxla
maps, run eagerly (reference semantics) and checked against the expected
values.  Cases whose element types are outside the seeds' PrimitiveType
list (4-bit and 2-bit integers, 8-bit floats) are listed, not run."""
from __future__ import annotations

import pytest

from .harness import OPS, check_results, load_cases, load_mappings, ops_used, run_case, \
    uses_out_of_scope_dtype

load_mappings()
CASES = [c for c in load_cases() if not uses_out_of_scope_dtype(c)]
MAPPED = [c for c in CASES if "run_parallel" not in c and "process_grid" not in c
          and ops_used(c) <= set(OPS)]


def test_out_of_scope_cases_are_only_sub_byte_and_fp8_types():
    out = [c["id"] for c in load_cases() if uses_out_of_scope_dtype(c)]
    assert len(out) == 30, out


@pytest.mark.parametrize("case", MAPPED, ids=[c["id"] for c in MAPPED])
def test_case_eager(case):
    check_results(case, run_case(case))
