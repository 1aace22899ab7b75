"""JAX programs in the style of JAX's examples and docs (tests/numxla/programs/),
run with ``numxla`` standing in for ``jax`` and compared with what real JAX
returned for them (tests/data/jax_program_results.json, recorded offline:
nothing here imports JAX).

They run as a JAX user runs them (x64 off), with ``jit`` on tier 0 only
(``NUMXLA_TIERED=reference``: the traced graphs evaluated with the ops'
reference semantics), so the suite's time goes to what the programs do
rather than to Numba compiling their kernels (minutes on a cold cache); the
compiled kernels of the same ops are checked by the op-level tests.
``NUMXLA_PROGRAMS_COMPILED=1`` runs them with the suite's mode instead
(every call compiled and checked against tier 0).
"""
import os

import pytest

import numxla
from numxla.tracer.config import config
from tests.numxla import programs


@pytest.fixture
def as_jax_user(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)
    if os.environ.get("NUMXLA_PROGRAMS_COMPILED", "0") in ("", "0"):
        monkeypatch.setenv("NUMXLA_TIERED", "reference")


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_program_matches_jax(name, as_jax_user):
    got = programs.run(name, numxla)
    problems = programs.compare(got, programs.expected(name),
                                *programs.TOLERANCES.get(name, (1e-4, 1e-5)))
    assert not problems, f"{name}: {len(problems)} differences from JAX:\n" + "\n".join(problems)


def test_as_jax_restores_modules():
    import sys
    before = {k: v for k, v in sys.modules.items() if k == "jax" or k.startswith("jax.")}
    with programs.as_jax(numxla):
        import jax  # noqa: F401  (numxla, under JAX's name)
        from jax.scipy import stats
        assert jax is numxla and stats is numxla.scipy.stats
    after = {k: v for k, v in sys.modules.items() if k == "jax" or k.startswith("jax.")}
    assert after == before
