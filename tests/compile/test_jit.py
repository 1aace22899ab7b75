"""``compile.jit`` end to end: the starter op set against NumPy, tracing once
per signature, layouts in and out, the runtime ``Array``, the disk cache."""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.compile import Array, device_put, jit
from numxla.tracer import parse_shape, to_physical

from . import util

REPO = Path(__file__).resolve().parents[2]
rng = np.random.default_rng(42)
rand = functools.partial(util.rand, rng=rng, bound=50)


# -- the starter op set against NumPy ------------------------------------------------

BINARY = [
    (lax.add, np.add), (lax.sub, np.subtract), (lax.mul, np.multiply),
    (lax.max, np.maximum), (lax.min, np.minimum),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_binary_ops_match_numpy(dtype):
    x, y = rand((3, 4), dtype), rand((3, 4), dtype)
    ops = [(f, g) for f, g in BINARY if not (np.dtype(dtype).kind == "c" and f in (lax.max, lax.min))]

    @jit
    def f(a, b):
        return [op(a, b) for op, _ in ops]

    for got, (_, ref) in zip(f(x, y), ops):
        np.testing.assert_allclose(np.asarray(got), ref(x, y), rtol=1e-6)
        assert got.dtype == np.dtype(dtype)


def test_division_follows_xla_for_integers_and_ieee_for_floats():
    @jit
    def f(a, b, c, d):
        return lax.div(a, b), lax.div(c, d)

    a = np.array([7, -7, 7, -7, 5, np.iinfo(np.int32).min, 3], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 0], np.int32)
    c = np.array([1.0, -1.0, 0.0, 6.0], np.float32)
    d = np.array([0.0, 0.0, 0.0, 4.0], np.float32)
    ints, floats = f(a, b, c, d)
    # truncation toward zero; x/0 = -1; INT_MIN/-1 = INT_MIN (XLA:CPU)
    np.testing.assert_array_equal(np.asarray(ints),
                                  [3, -3, -3, 3, -1, np.iinfo(np.int32).min, -1])
    out = np.asarray(floats)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2]) and out[3] == 1.5
    np.testing.assert_array_equal(np.asarray(ints), lax.div(a, b))  # eager reference agrees


def test_unsigned_division_by_zero_sets_all_bits():
    f = jit(lambda a, b: lax.div(a, b))
    out = np.asarray(f(np.array([7, 9], np.uint8), np.array([0, 2], np.uint8)))
    np.testing.assert_array_equal(out, [255, 4])


def test_unary_ops_and_nan_propagation_match_numpy():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0, np.inf, -np.inf, np.nan], np.float64)
    f = jit(lambda a: (lax.neg(a), lax.exp(a), lax.tanh(a), lax.log(lax.exp(a)),
                       lax.max(a, 0.0), lax.min(a, 0.0)))
    neg, exp, tanh, log_exp, relu, mn = (np.asarray(v) for v in f(x))
    np.testing.assert_array_equal(neg, -x)
    np.testing.assert_allclose(exp, np.exp(x), rtol=1e-15)
    np.testing.assert_allclose(tanh, np.tanh(x), rtol=1e-15)
    np.testing.assert_allclose(log_exp[:5], x[:5], atol=1e-15)
    assert np.isnan(relu[-1]) and np.isnan(mn[-1])  # XLA's max/min propagate NaN
    np.testing.assert_array_equal(relu[:-1], np.maximum(x[:-1], 0))


def test_compare_and_select_match_numpy():
    x, y = rand((5, 3)), rand((5, 3))
    f = jit(lambda a, b: [lax.select(lax.compare(a, b, d), a, b)
                          for d in ("EQ", "NE", "LT", "LE", "GT", "GE")] + [a < b, a >= b])
    refs = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]
    outs = f(x, y)
    for got, ref in zip(outs, refs):
        np.testing.assert_array_equal(np.asarray(got), np.where(ref(x, y), x, y))
    np.testing.assert_array_equal(np.asarray(outs[-2]), x < y)
    assert outs[-1].dtype == np.bool_


def test_shape_ops_match_numpy():
    x = rand((2, 3, 4))
    f = jit(lambda a: (lax.transpose(a, (2, 0, 1)), lax.reshape(a, (6, 4)),
                       lax.reshape(a, (4, 6), dimensions=(2, 1, 0)),
                       lax.broadcast_in_dim(a, (5, 2, 3, 4), (1, 2, 3)),
                       lax.broadcast_in_dim(lax.reshape(a, (2, 1, 12)), (2, 7, 12), (0, 1, 2))))
    t, r, rt, b, b1 = (np.asarray(v) for v in f(x))
    np.testing.assert_array_equal(t, x.transpose(2, 0, 1))
    np.testing.assert_array_equal(r, x.reshape(6, 4))
    np.testing.assert_array_equal(rt, x.transpose(2, 1, 0).reshape(4, 6))
    np.testing.assert_array_equal(b, np.broadcast_to(x, (5, 2, 3, 4)))
    np.testing.assert_array_equal(b1, np.broadcast_to(x.reshape(2, 1, 12), (2, 7, 12)))


def test_reduce_sum_over_any_dimensions():
    x = rand((3, 4, 5), np.float64)
    axes_list = [(0,), (1,), (2,), (0, 2), (0, 1, 2), ()]
    f = jit(lambda a: [lax.reduce_sum(a, axes) for axes in axes_list])
    for got, axes in zip(f(x), axes_list):
        np.testing.assert_allclose(np.asarray(got), x.sum(axis=axes), rtol=1e-12)
    ints = rand((4, 6), np.int32)
    np.testing.assert_array_equal(np.asarray(jit(lambda a: a.sum(1))(ints)), ints.sum(1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex128])
def test_dot_and_dot_general_match_einsum(dtype):
    a, b = rand((3, 4), dtype), rand((4, 5), dtype)
    v = rand((4,), dtype)
    bl, br = rand((2, 3, 4), dtype), rand((2, 5, 4), dtype)

    @jit
    def f(a, b, v, bl, br):
        return (lax.dot(a, b), lax.dot(a, v), lax.dot(v, v),
                lax.dot_general(bl, br, (((2,), (2,)), ((0,), (0,)))),
                lax.dot_general(b, a, (((0,), (1,)), ((), ()))))

    mm, mv, vv, batched, swapped = (np.asarray(o) for o in f(a, b, v, bl, br))
    tol = dict(rtol=1e-5, atol=1e-5) if np.dtype(dtype).kind in "fc" else dict(rtol=0)
    np.testing.assert_allclose(mm, a @ b, **tol)
    np.testing.assert_allclose(mv, a @ v, **tol)
    np.testing.assert_allclose(vv, v @ v, **tol)
    np.testing.assert_allclose(batched, np.einsum("bik,bjk->bij", bl, br), **tol)
    np.testing.assert_allclose(swapped, np.einsum("kj,ik->ji", b, a), **tol)


def test_dot_with_preferred_element_type_accumulates_wider():
    a = np.full((2, 300), 100, np.int8)
    f = jit(lambda x: lax.dot(x, x.T, preferred_element_type=np.int32))
    np.testing.assert_array_equal(np.asarray(f(a)), np.full((2, 2), 3_000_000, np.int32))


def test_numpy_style_layer_and_operators():
    x, w, bias = rand((8, 3)), rand((3, 4)), rand((4,))

    @jit
    def f(x, w, bias):
        h = xnp.tanh(x @ w + bias)
        return (h * 2 - 1) / 3, xnp.mean(h, axis=0), xnp.where(h > 0, h, 0.1 * h), -h.T

    expected_h = np.tanh(x @ w + bias)
    got = [np.asarray(v) for v in f(x, w, bias)]
    np.testing.assert_allclose(got[0], (expected_h * 2 - 1) / 3, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], expected_h.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], np.where(expected_h > 0, expected_h, 0.1 * expected_h),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], -expected_h.T, rtol=1e-5, atol=1e-6)
    assert got[0].dtype == np.float32  # weak Python scalars keep f32


# -- tracing once per signature ---------------------------------------------------------

def test_traces_once_per_signature():
    traces = []

    @jit
    def f(x, y):
        traces.append(1)
        return x * y + 1

    a = np.ones(4, np.float32)
    for _ in range(3):
        f(a, a)
    assert len(traces) == 1
    f(a + 1, a)  # new values, same signature
    assert len(traces) == 1
    f(np.ones(5, np.float32), np.ones(5, np.float32))  # a new shape
    assert len(traces) == 2
    f(np.ones(5, np.float64), np.ones(5, np.float64))  # a new dtype
    assert len(traces) == 3
    f(device_put(np.ones((5,), np.float64)), np.ones(5))  # an Array argument, same signature
    assert len(traces) == 3
    assert f.cache_size() == 3


def test_static_arguments_key_the_cache():
    traces = []

    @jit(static_argnums=1, static_argnames="scale")
    def f(x, power, *, scale):
        traces.append(power)
        out = x
        for _ in range(power - 1):
            out = out * x
        return out * scale

    x = np.full(3, 2.0, np.float32)
    np.testing.assert_allclose(np.asarray(f(x, 3, scale=1.0)), 8.0)
    np.testing.assert_allclose(np.asarray(f(x, 3, scale=1.0)), 8.0)
    np.testing.assert_allclose(np.asarray(f(x, 2, scale=1.0)), 4.0)
    np.testing.assert_allclose(np.asarray(f(x, 2, scale=0.5)), 2.0)
    assert traces == [3, 2, 2]


def test_pytree_inputs_and_outputs():
    @jit
    def f(params, xs):
        return {"sum": params["w"] @ xs[0] + params["b"], "pair": (xs[1], None)}

    params = {"w": rand((3, 4)), "b": rand((3,))}
    xs = [rand((4,)), rand((2,))]
    out = f(params, xs)
    np.testing.assert_allclose(np.asarray(out["sum"]), params["w"] @ xs[0] + params["b"],
                               rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(out["pair"][0]), xs[1])
    assert out["pair"][1] is None


def test_jit_inside_jit_is_traced_inline():
    inner = jit(lambda x: x * 3)
    outer = jit(lambda x: inner(x) + 1)
    np.testing.assert_allclose(np.asarray(outer(np.ones(2, np.float32))), 4)
    text = outer.lower(np.ones(2, np.float32)).as_text()
    assert "mul" in text and "add" in text


# -- layouts -----------------------------------------------------------------------------

LAYOUTS = ["{0,1}", "{1,0:T(2,2)}", "{0,1:T(2,4)(2,1)}", "{1,0:PD(5,7)PV(-1)}"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_inputs_and_outputs_in_any_layout(layout):
    x, y = rand((3, 5)), rand((3, 5))
    text = f"f32[3,5]{layout}"
    f = jit(lambda a, b: (a * b + a, (a @ b.T).sum(1)), in_layouts=(text, None),
            out_layouts=[text, None])
    out, row = f(x, y)
    assert isinstance(out, Array) and str(out.xla_shape) == text
    # the result buffer really is in that layout
    expected = x * y + x
    np.testing.assert_allclose(out.buffer, to_physical(expected, parse_shape(text)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(row), (x @ y.T).sum(1), rtol=1e-5)
    # the compiled graph records the parameter's layout
    assert f"a: {text}" in f.lower(x, y).compile().as_text()


def test_array_round_trip_and_reuse_without_conversion():
    x = rand((4, 6))
    a = device_put(x, "{0,1:T(2,2)}")
    assert a.shape == (4, 6) and a.dtype == np.float32
    assert a.buffer.size == a.xla_shape.physical_size
    np.testing.assert_array_equal(np.asarray(a), x)
    f = jit(lambda v: v * 2)
    out = f(a)  # an Array argument keeps its own layout
    np.testing.assert_allclose(np.asarray(out), x * 2)
    assert "f32[4,6]{0,1:T(2,2)}" in f.lower(a).as_text()
    np.testing.assert_allclose(np.asarray(a + 1), x + 1)  # operators run eagerly


def test_output_never_aliases_an_input():
    x = np.arange(6, dtype=np.float32)
    out = jit(lambda v: lax.reshape(v, (2, 3)))(x)
    x[0] = 100
    assert np.asarray(out)[0, 0] == 0


# -- the compiled-code cache --------------------------------------------------------------

def test_a_new_process_loads_compiled_code_from_the_disk_cache(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from numxla.compile import jit
        import numxla.primitives.numpy as xnp
        from numxla.compile.kernel import compile_counts
        f = jit(lambda x: xnp.tanh(x) * 3 + x.sum())
        out = f(np.arange(5, dtype=np.float32))
        counts = compile_counts()  # kernels loaded from the disk cache, or compiled
        print(counts["loaded"], counts["compiled"], float(np.asarray(out)[1]))
    """)
    env = dict(os.environ, NUMXLA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(REPO))
    run = lambda: subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
    cold_hits, cold_misses, cold_value = run()
    warm_hits, warm_misses, warm_value = run()
    assert cold_hits == "0" and int(cold_misses) >= 1
    assert (warm_hits, warm_misses) == (cold_misses, "0")
    assert cold_value == warm_value == repr(float(np.float32(np.tanh(1) * 3 + 10)))
    for d in tmp_path.iterdir():
        assert (d.stat().st_mode & 0o077) == 0


def test_a_corrupted_cache_entry_is_replaced(tmp_path, monkeypatch):
    from numxla.compile import cache
    monkeypatch.setenv("NUMXLA_CACHE_DIR", str(tmp_path))
    source = "def graph_fn():\n    return (1,)\n"
    import hashlib
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    target = cache.cache_dir() / f"k_{digest}.py"
    target.write_text("garbage that is not python (")
    module = cache.load_module(source)
    assert module.graph_fn() == (1,)
    assert target.read_text() == source


def test_concurrent_calls_trace_and_compile_once():
    traces = []

    @jit
    def f(x):
        traces.append(1)
        return x * x + 2

    x = np.arange(100, dtype=np.float64)
    results = []
    threads = [threading.Thread(target=lambda: results.append(np.asarray(f(x))))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(traces) == 1 and len(results) == 4
    for r in results:
        np.testing.assert_array_equal(r, x * x + 2)


def test_ops_without_a_dynamic_lowering_are_refused_rather_than_miscompiled():
    f = jit(lambda x: lax.cumsum(lax.set_dimension_size(x, 5, 0), axis=0))
    with pytest.raises(NotImplementedError, match="reduce_window_sum.*bounded dynamic dimensions"):
        f(np.ones(10, np.float32))


# -- a compiled program checks its arguments (issue 13, item 1) -------------------------------

def test_a_compiled_program_refuses_arguments_it_was_not_compiled_for():
    """Its kernels index buffers with the compiled sizes: a smaller argument
    was read 64 MB out of bounds (a segfault), a larger one gave a result of
    the compiled shape, wrong pytree keys were accepted."""
    compiled = jit(lambda x: x * 2 + 1).lower(np.ones(1 << 20, np.float32)).compile()
    for bad, text in [(np.ones(3, np.float32), "f32[3]"), (np.ones(1 << 21, np.float32), "f32[2097152]"),
                      (np.ones(1 << 20, np.float64), "f64[1048576]"),
                      (np.ones((2, 1 << 19), np.float32), "f32[2,524288]")]:
        with pytest.raises(TypeError, match=rf"argument x is {re.escape(text)}, but this program "
                                            r"was compiled for f32\[1048576\]"):
            compiled(bad)
    with pytest.raises(TypeError, match="compiled for 1 array arguments|structured as"):
        compiled(np.ones(1 << 20, np.float32), np.ones(1 << 20, np.float32))
    np.testing.assert_array_equal(np.asarray(compiled(np.ones(1 << 20, np.float32)))[:2], [3, 3])

    tree = jit(lambda p: p["a"] * p["b"]).lower({"a": np.ones(2, np.float32),
                                                  "b": np.ones(2, np.float32)}).compile()
    with pytest.raises(TypeError, match=r"structured as .*'c'.* but compiled for .*'a'"):
        tree({"b": np.ones(2, np.float32), "c": np.ones(2, np.float32)})
    with pytest.raises(TypeError, match="argument"):
        tree({"a": np.ones(2, np.float32), "b": "text"})


def test_arrays_compare_element_wise_and_are_not_hashable():
    """Issue 13, item 3: ``Array == 3`` was ``False`` (identity), ``!=`` ``True``."""
    a = device_put(np.array([[1, 3], [5, 3]], np.int32), "{0,1}")
    np.testing.assert_array_equal(np.asarray(a == 3), [[False, True], [False, True]])
    np.testing.assert_array_equal(np.asarray(a != 3), [[True, False], [True, False]])
    b = jit(lambda x: x * 2)(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(b == np.array([0, 3, 4], np.float32)),
                                  [True, False, True])
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
