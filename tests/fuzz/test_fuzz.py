"""CI's slice of the fuzzer (``tests/fuzz/README.md``): the programs of fixed
seeds, each compiled with ``jit(tiered=False)`` in worker subprocesses and
compared with the reference semantics.  Fails on any mismatch, crash, hang
or unexpected exception, printing the summary (distinct failures, seeds,
repro scripts under pytest's tmp_path).  ``python -m tests.fuzz`` runs more.
About 60 s on two cores with an empty Numba cache."""
from __future__ import annotations

import numpy as np
import pytest

from tests.fuzz.campaign import FAILURES, run_campaign, summary
from tests.fuzz.compare import mismatch
from tests.fuzz.families import FAMILIES
from tests.fuzz.generator import generate
from tests.fuzz.program import Input, Node, Program
from tests.fuzz.runner import Pool, single

CI_SEEDS = range(120)


def test_slice_draws_every_op_family():
    seen = set().union(*(generate(seed).families() for seed in CI_SEEDS))
    assert seen == set(FAMILIES), f"no program of the slice uses {set(FAMILIES) - seen}"


def test_same_seed_same_program():
    for seed in (0, 7, 119):
        a, b = generate(seed), generate(seed)
        assert a.repro() == b.repro()


def test_fuzz_slice(tmp_path):
    outcomes = run_campaign(CI_SEEDS, jobs=2, timeout=60.0, out=str(tmp_path), max_shrink=0,
                            log=None)
    assert len(outcomes) == len(CI_SEEDS)
    if any(o.status in FAILURES for o in outcomes):
        pytest.fail("fuzz programs failed:\n" + summary(outcomes), pytrace=False)


def test_compare_tolerances():
    f32 = np.float32
    one_ulp = np.nextafter(f32(1), f32(2))
    assert mismatch(np.array([one_ulp]), np.array([f32(1)]), [], "f32") is None
    assert "differ" in mismatch(np.array([f32(1.001)]), np.array([f32(1)]), [], "f32")
    assert "NaN" in mismatch(np.array([f32(1)]), np.array([f32("nan")]), [], "f32")
    assert "infinities" in mismatch(np.array([f32(1e38)]), np.array([f32("inf")]), [], "f32")
    assert "sign of zero" in mismatch(np.array([f32(0)]), np.array([f32(-0.0)]), [], "f32")
    assert "differ" in mismatch(np.array([3], np.int8), np.array([4], np.int8), [], "s8")
    # elements the sensitivity runs move are compared within what they moved, or skipped
    noisy = [np.array([f32(1.01), f32(5)]), np.array([f32(0.99), f32(6)])]
    got, want = np.array([f32(1.02), f32(7)]), np.array([f32(1), f32(5)])
    assert mismatch(got, want, noisy, "f32") is None
    assert mismatch(np.array([7], np.int32), np.array([5], np.int32), [np.array([6])], "s32") \
        is None


def _program(expr: str) -> Program:
    x = Input("x1", "f32", (2,), np.ones(2, np.float32))
    return Program(0, [x], [Node(("v1",), (("f32", (2,)),), expr, ("x1",), "test")], ["v1"],
                   [None])


def test_pool_survives_crashes_and_hangs():
    programs = {"ok": _program("lax.exp({0})"),
                "crash": _program("(__import__('ctypes').string_at(0), {0})[1]"),
                "hang": _program("(__import__('time').sleep(60), {0})[1]"),
                "after": _program("lax.neg({0})")}
    with Pool(jobs=1, timeout=3.0) as pool:
        results = dict(pool.drive((k, single(p)) for k, p in programs.items()))
    assert results["ok"]["status"] == results["after"]["status"] == "pass"
    assert results["crash"]["status"] == "crash" and "SIGSEGV" in results["crash"]["detail"]
    assert results["hang"]["status"] == "hang" and results["hang"]["phase"] == "reference"
