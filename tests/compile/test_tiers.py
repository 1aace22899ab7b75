"""Tiered execution (compile/tiers.py, compile/background.py): the first calls
are served at once by tier 0 (the reference semantics) while the compiled
program builds in a worker process; calls then switch to it.  Results of
both tiers agree; a failing or killed background compile leaves correct
results and one warning; threads calling through the switch get correct
results.  States are asserted, not timings: a gated worker does not start
compiling until the test opens its gate."""
from __future__ import annotations

import itertools
import os
import sys
import threading
import warnings

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.compile import Array, device_put, jit
from numxla.compile.background import CompileService, use_service
from numxla.compile.jit import Compiled
from numxla.compile.tiers import TieredProgram, TierWarning
from numxla.primitives.side_effects import Token
from numxla.tracer.core import bf16_array, dynamic_array

rng = np.random.default_rng(12)


@pytest.fixture
def worker(tmp_path):
    """A compile service whose worker waits for ``gate.open()`` before it
    compiles anything (the real worker, behind a file)."""
    gate = tmp_path / "gate"
    code = (f"import os, time\n"
            f"while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
            f"from numxla.compile.worker import main; main()\n")
    service = CompileService([sys.executable, "-c", code])
    previous = use_service(service)

    class Gate:
        service_ = service

        @staticmethod
        def open():
            gate.write_text("open")
    try:
        yield Gate
    finally:
        use_service(previous)
        gate.write_text("open")
        service.close()


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMXLA_CACHE_DIR", str(tmp_path / "cache"))


def program_of(f) -> TieredProgram | Compiled:
    (program,) = f.programs()
    return program


_salt = itertools.count(1)


def new_model():
    """A function whose compiled code no earlier test has built in this
    process (a constant of its own: compiled modules are kept per process)."""
    salt = np.float32(next(_salt))

    def model(w, x):
        return xnp.tanh(x @ w["a"] + w["b"] * salt), lax.reduce_max(x, (1,))
    return model


def inputs():
    return ({"a": rng.standard_normal((5, 3)).astype(np.float32),
             "b": rng.standard_normal(3).astype(np.float32)},
            rng.standard_normal((4, 5)).astype(np.float32))


def assert_same(got, want, rtol=2e-6):
    got_leaves, want_leaves = jax_leaves(got), jax_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert type(g) is type(w)
        if isinstance(g, tuple):                     # a TupleValue: element by element
            assert_same(list(g), list(w), rtol)
            continue
        if isinstance(g, Token):
            continue
        if isinstance(g, Array):
            assert g.xla_shape == w.xla_shape
            assert g.buffer.dtype == w.buffer.dtype
        assert getattr(g, "dynamic_sizes", None) == getattr(w, "dynamic_sizes", None)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=rtol, atol=1e-6)


def jax_leaves(tree):
    from numxla.tracer import pytree
    return pytree.tree_leaves(tree)


# -- the first call does not wait --------------------------------------------------------

def test_first_call_returns_before_the_compile_then_calls_switch(worker, fresh_cache):
    model = new_model()
    f = jit(model, tiered=True)
    w, x = inputs()
    first = f(w, x)
    program = program_of(f)
    assert isinstance(program, TieredProgram) and program.state == "compiling"
    assert_same(f(w, x), first)                      # still tier 0, same answer
    worker.open()
    assert program.wait(timeout=300)
    assert program.state == "compiled", program.failure
    assert isinstance(program_of(f), Compiled)       # the caches now hold the compiled program
    assert_same(f(w, x), first)


def test_code_in_the_disk_cache_is_loaded_not_compiled(fresh_cache):
    model = new_model()
    w, x = inputs()
    jit(model, tiered=False)(w, x)                   # fills the cache
    refusing = CompileService([sys.executable, "-c", "import sys; sys.exit(5)"])
    previous = use_service(refusing)                 # a compile request would fail the program
    try:
        f = jit(model, tiered=True)
        f(w, x)
        program = program_of(f)                      # (it may have switched already)
        if isinstance(program, TieredProgram):
            assert program.wait(timeout=60)
            assert program.state == "compiled", program.failure
        assert isinstance(program_of(f), Compiled)
    finally:
        use_service(previous)


def test_tiered_false_and_the_environment_switch(monkeypatch, fresh_cache):
    model = new_model()
    w, x = inputs()
    f = jit(model, tiered=False)
    f(w, x)
    assert isinstance(program_of(f), Compiled)
    monkeypatch.setenv("NUMXLA_TIERED", "0")
    g = jit(model)
    g(w, x)
    assert isinstance(program_of(g), Compiled)


# -- failures stay on tier 0 with a warning -------------------------------------------------

def test_a_failing_worker_leaves_correct_results_and_one_warning(fresh_cache):
    service = CompileService([sys.executable, "-c", "import sys; sys.stdin.readline(); "
                              "sys.stderr.write('simulated crash\\n'); sys.exit(3)"])
    previous = use_service(service)
    model = new_model()
    try:
        f = jit(model, tiered=True)
        w, x = inputs()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = f(w, x)
            program = program_of(f)
            assert program.wait(timeout=60)
            results = [f(w, x) for _ in range(3)]
        assert program.state == "failed"
        assert "status 3" in program.failure and "simulated crash" in program.failure
        tier_warnings = [c for c in caught if issubclass(c.category, TierWarning)]
        assert len(tier_warnings) == 1 and "status 3" in str(tier_warnings[0].message)
        want = jit(model, tiered=False)(w, x)
        for got in [first, *results]:
            assert_same(got, want)
    finally:
        use_service(previous)
        service.close()


def test_a_killed_worker_leaves_correct_results_and_a_warning(worker, fresh_cache):
    model = new_model()
    f = jit(model, tiered=True)
    w, x = inputs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = f(w, x)
        program = program_of(f)
        deadline = threading.Event()
        while worker.service_.pid is None and not deadline.wait(0.01):
            pass                                     # the submit runs on a thread
        os.kill(worker.service_.pid, 9)
        assert program.wait(timeout=60)
        assert program.state == "failed" and "SIGKILL" in program.failure
        assert_same(f(w, x), first)
    assert any(issubclass(c.category, TierWarning) and "SIGKILL" in str(c.message)
               for c in caught)
    worker.open()                                    # (the full compile may use the other worker)
    assert_same(first, jit(model, tiered=False)(w, x))


def test_a_graph_without_a_code_generator_runs_on_tier_0(fresh_cache):
    def f(x, n):  # a sort of a value with a dynamic dimension has no compiled form
        return lax.sort(lax.set_dimension_size(x, n, 0), dimension=0)
    x = np.array([3.0, 1.0, 2.0, 0.5], np.float32)
    with pytest.raises(NotImplementedError):
        jit(f, tiered=False)(x, np.int32(3))
    with pytest.warns(TierWarning, match="sort"):
        g = jit(f, tiered=True)
        got = g(x, np.int32(3))
        assert program_of(g).wait(timeout=60)       # the code generator refused it
    want = f(x, np.int32(3))
    assert got.dynamic_sizes == want.dynamic_sizes == (3,)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# -- threads through the switch ------------------------------------------------------------

def test_eight_threads_calling_through_the_switch(worker, fresh_cache):
    model = new_model()
    f = jit(model, tiered=True)
    cases = [inputs() for _ in range(8)]
    wants = [model(w, x) for w, x in cases]          # eagerly: the reference semantics
    f(*cases[0])
    program = program_of(f)
    errors, calls = [], [0] * 8
    stop = threading.Event()

    def hammer(k):
        try:
            while not stop.is_set() or calls[k] < 5:
                for got, want in zip(f(*cases[k]), wants[k]):
                    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
                calls[k] += 1
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
            stop.set()

    threads = [threading.Thread(target=hammer, args=(k,), daemon=True) for k in range(8)]
    for t in threads:
        t.start()
    try:
        worker.open()
        assert program.wait(timeout=300)
        before = list(calls)
        while not errors and min(c - b for c, b in zip(calls, before)) < 3:
            stop.wait(0.01)                          # a few calls each on the compiled code
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors[0]
    assert program.state == "compiled", program.failure
    assert isinstance(program_of(f), Compiled)


# -- tier 0 gives what the compiled program gives --------------------------------------------

def _layouts(x):
    return xnp.sin(x) * 2, x.T + 1


def _halves(h, b):
    return h * 2, b + b, lax.convert_element_type(h, np.float32)


def _tuples_and_tokens(x):
    token = lax.create_token()
    return lax.tuple((x, x * 2)), lax.after_all(token), x[:2]


def _dynamic(x, n):
    y = lax.set_dimension_size(x, n, 0)
    return lax.exp(y), lax.reduce_sum(y, (0,)), lax.get_dimension_size(y, 0)


CASES = {
    "layouts": (dict(in_layouts="{0,1}", out_layouts=("{0,1:T(2,2)}", None)), _layouts,
                lambda: (device_put(rng.standard_normal((3, 5)).astype(np.float32), "{0,1}"),)),
    "f16 and bf16": ({}, _halves,
                     lambda: (rng.standard_normal((2, 3)).astype(np.float16),
                              bf16_array(rng.standard_normal(4).astype(np.float32)))),
    "tuples and tokens": ({}, _tuples_and_tokens,
                          lambda: (rng.standard_normal(4).astype(np.float32),)),
    "dynamic sizes": ({}, _dynamic,
                      lambda: (rng.standard_normal((5, 2)).astype(np.float32), np.int32(3))),
    "dynamic argument": ({}, lambda y: (lax.exp(y), lax.reduce_sum(y, (0,))),
                         lambda: (dynamic_array(np.pad(rng.standard_normal((2, 3)),
                                                       ((0, 2), (0, 0))).astype(np.float32),
                                                (2, 3)),)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_tier_0_results_equal_the_compiled_results(case, worker, fresh_cache):
    options, fn, make = CASES[case]
    args = make()
    f = jit(fn, tiered=True, **options)
    tier0 = f(*args)
    assert program_of(f).state == "compiling"
    worker.open()                                    # the full compile may use the workers too
    compiled = jit(fn, tiered=False, **options)(*args)
    assert_same(tier0, compiled, rtol=1e-3 if case == "f16 and bf16" else 2e-6)


def test_without_a_disk_cache_the_program_compiles_on_a_thread(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("NUMXLA_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    model = new_model()
    w, x = inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # the cache's one CacheWarning
        f = jit(model, tiered=True)
        first = f(w, x)
        program = program_of(f)
        assert isinstance(program, TieredProgram)
        assert program.wait(timeout=300)
    assert program.state == "compiled", program.failure
    assert_same(f(w, x), first)


def test_tier_0_results_never_share_memory_with_the_arguments(worker, fresh_cache):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    f = jit(lambda x: (x, x.reshape(6, 4), x[1:3], x.T), tiered=True)
    results = f(x)
    assert program_of(f).state == "compiling"       # tier 0 served these
    for r in results:
        assert not np.shares_memory(r.buffer, x)
    np.testing.assert_array_equal(np.asarray(results[1]), x.reshape(6, 4))
    np.testing.assert_array_equal(np.asarray(results[3]), x.T)


def test_a_background_compile_fills_the_cache_after_the_process_exits(tmp_path):
    """A short run (a script, a notebook cell) ends before its kernels are
    compiled: the worker goes on, so the next run loads them."""
    import subprocess
    import textwrap
    from pathlib import Path
    program = textwrap.dedent("""
        import sys, time
        import numpy as np
        import numxla.primitives.numpy as xnp
        from numxla.compile import jit
        from numxla.compile.background import service
        from numxla.compile.kernel import compile_counts
        f = jit(lambda x: xnp.tanh(x @ x.T * 0.4375) + xnp.sum(x), tiered=sys.argv[1] == "1")
        f(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        if sys.argv[1] == "1":
            while service().pid is None:   # the worker is started on a thread
                time.sleep(0.01)
            print(service().pid)           # and exit at once: the compile is not done
        else:
            print(compile_counts()["compiled_here"], compile_counts()["loaded"])
    """)
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMXLA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(repo),
               NUMXLA_COMPILE_SERVER="0")
    run = lambda tiered: subprocess.run([sys.executable, "-c", program, tiered], env=env,
                                        cwd=repo, check=True, capture_output=True, text=True,
                                        timeout=300).stdout.split()
    (pid,) = run("1")
    deadline = threading.Event()
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(3000):                  # the orphaned worker finishes, then exits
        try:
            if stat.read_text().split()[2] == "Z":
                break                      # (exited; not yet reaped)
        except OSError:
            break
        deadline.wait(0.1)
    compiled_here, loaded = run("0")
    assert compiled_here == "0" and int(loaded) >= 1
