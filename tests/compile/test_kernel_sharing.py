"""Compiled code is shared by structure (compile/clusters.py, compile/kernel.py):
every materialising op with what is fused into it is a kernel interned by
its generated source, so identical layers compile once, a second model
built from layers already seen compiles nothing, and the disk cache hands
the kernels to another process.  Counted with ``compile_counts``."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import numxla.primitives.numpy as xnp
from numxla.autodiff import value_and_grad
from numxla.compile import jit
from numxla.compile.kernel import Kernel, compile_counts

REPO = Path(__file__).resolve().parents[2]
rng = np.random.default_rng(21)


def layer(h, w, b):
    return xnp.tanh(h @ w + b * 0.75)


def mlp(params, x):
    for w, b in params:
        x = layer(x, w, b)
    return x


def params_of(depth, width=24):
    return [(rng.standard_normal((width, width)).astype(np.float32) / 5,
             rng.standard_normal(width).astype(np.float32)) for _ in range(depth)]


def reference(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b * 0.75)
    return x


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty disk cache (kernels compiled by an earlier run are not loaded)."""
    monkeypatch.setenv("NUMXLA_CACHE_DIR", str(tmp_path / "cache"))


def compiled_by(fn, *args) -> int:
    """Kernels Numba compiled for a first call of ``jit(fn)`` (tiered=False)."""
    before = compile_counts()["compiled"]
    out = jit(fn, tiered=False)(*args)
    return compile_counts()["compiled"] - before, out


def test_identical_layers_compile_once_and_a_second_model_compiles_nothing(fresh_cache):
    x = rng.standard_normal((7, 24)).astype(np.float32)
    deep = params_of(12)
    n_deep, out = compiled_by(mlp, deep, x)
    np.testing.assert_allclose(np.asarray(out), reference(deep, x), rtol=2e-5, atol=2e-6)
    assert 1 <= n_deep <= 3            # one kernel per distinct cluster, not per layer
    program = jit(mlp, tiered=False).lower(deep, x).compile()
    calls = program.program.calls
    generated = {id(c.kernel) for c in calls if isinstance(c.kernel, Kernel)}
    # every layer's bias and tanh in one generated kernel; the products call
    # the pre-compiled BLAS kernel (compiled too, the first time on a machine)
    assert len(calls) >= 24 and len(generated) == 1
    assert n_deep - len(generated) in (0, 1)

    def other_model(params, x, y):  # another graph, made of the layers seen above
        return mlp(params[:3], x), mlp(params[3:], y)

    params = params_of(5)
    n_other, (a, b) = compiled_by(other_model, params, x, x[::-1].copy())
    assert n_other == 0
    np.testing.assert_allclose(np.asarray(b), reference(params[3:], x[::-1]), rtol=2e-5,
                               atol=2e-6)


def test_the_gradient_of_a_deep_model_compiles_like_a_shallow_one(fresh_cache):
    x = rng.standard_normal((5, 24)).astype(np.float32)

    def loss(params, x):
        return xnp.sum(xnp.square(mlp(params, x)))
    n_shallow, _ = compiled_by(value_and_grad(loss), params_of(2), x)
    n_deep, (value, grads) = compiled_by(value_and_grad(loss), params_of(10), x)
    assert n_deep <= 2                 # the first and last layers' kernels differ a little
    assert n_shallow >= 3
    eps = 1e-2                         # one gradient entry against a central difference
    params = params_of(10)
    value, grads = jit(value_and_grad(loss), tiered=False)(params, x)
    w, b = params[4]
    bumped = [(w2.copy(), b2) for w2, b2 in params]
    bumped[4][0][1, 2] += eps
    up = float(loss(bumped, x))
    bumped[4][0][1, 2] -= 2 * eps
    down = float(loss(bumped, x))
    np.testing.assert_allclose(float(np.asarray(grads[4][0])[1, 2]), (up - down) / (2 * eps),
                               rtol=2e-2)


def test_another_process_loads_every_kernel_from_the_disk_cache(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from numxla.compile import jit
        from numxla.compile.kernel import compile_counts
        from tests.compile.test_kernel_sharing import mlp, params_of
        import sys
        depth = int(sys.argv[1])
        x = np.ones((3, 24), np.float32)
        jit(mlp, tiered=False)(params_of(depth), x)
        print(compile_counts()["compiled"], compile_counts()["loaded"])
    """)
    env = dict(os.environ, NUMXLA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(REPO))
    run = lambda depth: subprocess.run([sys.executable, "-c", script, str(depth)], env=env,
                                       check=True, capture_output=True, text=True,
                                       cwd=REPO).stdout.split()
    compiled, loaded = run(2)
    assert int(compiled) >= 1 and loaded == "0"
    compiled, loaded = run(9)         # deeper: the same kernels, from the cache
    assert compiled == "0" and int(loaded) >= 1


def test_helpers_are_not_compiled_again_for_each_constant(fresh_cache):
    """Numba compiles a jitted helper called with constants from another jitted
    function once per constant value.  Generated code passes FFT sizes,
    reduce_precision widths, shift amounts and triangular-solve flags that
    differ from graph to graph: no kernel helper may end up compiled twice
    for the same argument types (its signatures differ in literals only)."""
    import pkgutil

    from numba.core import types
    from numba.core.registry import CPUDispatcher

    import numxla.primitives as lax
    from numxla.compile import kernels
    from numxla.tracer.core import bf16_array
    x = rng.standard_normal(6).astype(np.float32)
    ints = np.arange(6, dtype=np.int32)
    a = np.tril(rng.standard_normal((3, 3))).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    for n, (e, m), shift, lower in [(8, (5, 10), 3, True), (12, (8, 7), 5, False)]:
        c = rng.standard_normal(n).astype(np.complex64)
        got = jit(lambda c: lax.fft(c, "FFT", (n,)), tiered=False)(c)
        np.testing.assert_allclose(np.asarray(got), np.fft.fft(c), rtol=1e-4, atol=1e-4)
        for t in (np.float32, np.float16, "bf16"):
            xt = bf16_array(x) if t == "bf16" else x.astype(t)
            jit(lambda x: lax.reduce_precision(x, e, m), tiered=False)(xt)
        np.testing.assert_array_equal(
            np.asarray(jit(lambda i: lax.shift_left(i, np.int32(shift)), tiered=False)(ints)),
            ints << shift)
        aa = a if lower else a.T
        got = jit(lambda aa, b: lax.triangular_solve(aa, b, left_side=True, lower=lower),
                  tiered=False)(aa, b)
        np.testing.assert_allclose(aa @ np.asarray(got), b, rtol=1e-4, atol=1e-4)
    again = []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = __import__(f"{kernels.__name__}.{info.name}", fromlist=["_"])
        for name, fn in vars(module).items():
            if isinstance(fn, CPUDispatcher):
                plain = [tuple(types.unliteral(t) for t in sig) for sig in fn.signatures]
                if len(set(plain)) < len(plain):
                    again.append((name, [str(s) for s in fn.signatures]))
    assert not again


def test_host_callbacks_load_from_the_disk_cache_without_compiling(tmp_path):
    """Host calls (here infeed, outfeed and a collective of two replicas) hold
    no Python object in compiled code: another process runs the program from
    the disk cache with no Numba compile at all (an ``objmode`` block was
    compiled again in every process that loaded it)."""
    script = textwrap.dedent("""
        import numpy as np
        import numba.core.event as event
        import numxla.primitives as lax
        from numxla import pmap
        from numxla.compile import jit
        from numxla.primitives import side_effects as se
        compiles = []
        class Compiles(event.Listener):
            def on_start(self, e):
                pass
            def on_end(self, e):
                compiles.append(e.data["dispatcher"].py_func.__name__)
        event.register("numba:compile", Compiles())
        def feed(x):
            value, token = lax.infeed(lax.create_token(), "f32[3]")
            return x * value, lax.outfeed(value + 1, token)
        se.infeed_queue.put(np.arange(3, dtype=np.float32))
        y, _ = jit(feed, tiered=False)(np.full(3, 2, np.float32))
        out = se.outfeed_queue.get()
        s = pmap(lambda v: lax.psum(v, "i") * 2, axis_name="i")(np.ones((2, 3), np.float32))
        ok = (np.array_equal(np.asarray(y), [0, 2, 4]) and np.array_equal(out, [1, 2, 3])
              and np.array_equal(np.asarray(s), np.full((2, 3), 4)))
        print(ok, len([c for c in compiles if c in ("graph_fn",) or c.startswith("host")]),
              len(compiles))
    """)
    env = dict(os.environ, NUMXLA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(REPO),
               NUMXLA_DEVICE_COUNT="2", NUMXLA_TIERED="0")
    run = lambda: subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                 capture_output=True, text=True, cwd=REPO).stdout.split()
    ok, generated, _ = run()
    assert ok == "True" and int(generated) >= 2
    ok, generated, every = run()
    assert ok == "True" and generated == "0" and every == "0"


def test_element_wise_kernels_serve_every_shape(fresh_cache):
    """An element-wise cluster whose values share a dense layout loops over
    its buffers to their run-time size: one kernel for every shape."""
    def f(x, y):
        return xnp.tanh(x) * y + 2.0             # a fused chain, a scalar broadcast
    x, y = (rng.standard_normal((7, 5)).astype(np.float32) for _ in range(2))
    first, _ = compiled_by(f, x, y)
    assert first >= 1
    for shape in [(3, 11, 2), (40,), (1, 1)]:
        x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        n, out = compiled_by(f, x, y)
        assert n == 0, shape
        np.testing.assert_allclose(np.asarray(out), np.tanh(x) * y + 2.0, rtol=2e-6, atol=2e-6)
    program = jit(f, tiered=False).lower(x, y).compile()
    assert "range(out0.size)" in program.source


def test_results_in_another_dense_layout_are_library_copies_for_every_shape(fresh_cache):
    """A result returned in another layout than its value's is copied by the
    library's strided copy (geometry at run time): no kernel is generated,
    whatever the shape, and the elements land where the layout says."""
    fn = jit(lambda x, y: (x, x * y), out_layouts=["{0,1}", "{1,0}"], tiered=False)
    before = dict(compile_counts())
    for shape in [(3, 4), (5, 7), (1, 9)]:
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.standard_normal(shape).astype(np.float32)
        moved, product = fn(x, y)
        assert str(moved.layout) == "{0,1}"
        np.testing.assert_array_equal(np.asarray(moved), x)
        np.testing.assert_array_equal(np.asarray(product), x * y)
    # the product's element-wise kernel serves every shape (flat) and the
    # copies are the library's: compiled (or loaded) once, not once per shape
    assert compile_counts()["compiled"] - before["compiled"] <= 2
