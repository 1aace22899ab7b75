"""What JAX programs rely on beyond the op set, one behaviour per test: JAX's
promotion in eager arithmetic, the x64 switch, arrays' Python protocol, the
API names JAX programs import, and the fast path of eager random calls.
(tests/numxla/test_programs.py runs whole programs; these pin the pieces.)"""
import time

import numpy as np
import pytest

import numxla as jax
import numxla.numpy as jnp
from numxla import lax, random
from numxla.tracer.config import config


def test_eager_arithmetic_promotes_as_jax(x64_off):
    f, i = jnp.ones(3), jnp.arange(3)
    jitted = jax.jit(lambda a: a * 2)(f)
    assert (f + i).dtype == np.float32 and (i + 1.5).dtype == np.float32
    assert (i / 2).dtype == np.float32 and (jnp.ones(2, jnp.float16) + 1.0).dtype == np.float16
    assert (f * np.float64(2)).dtype == np.float32 and (np.float64(2) * f).dtype == np.float32
    assert (np.ones(3) + f).dtype == np.float32 and (np.ones(3) + jitted).dtype == np.float32
    assert (jitted + i).dtype == np.float32
    assert i.mean().dtype == np.float32 and i.sum().dtype == np.int32
    assert jnp.sum(jnp.ones(2, jnp.int8)).dtype == np.int32  # promote_integers
    assert f.astype(np.float64).dtype == np.float32
    assert (f == pytest.approx(1.0))  # unknown operands: NotImplemented, Python asks the other


def test_x64_makes_python_scalars_and_defaults_64_bit(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)
    jax.config.update("jax_enable_x64", True)
    assert jnp.asarray(1.5).dtype == np.float64 and jnp.asarray(2).dtype == np.int64
    assert jnp.zeros(2).dtype == np.float64 and jnp.arange(3).dtype == np.int64
    assert (jnp.arange(3, dtype=jnp.int32) + 1.5).dtype == np.float64
    assert (jnp.ones(2, jnp.float32) * 2.5).dtype == np.float32   # weak: the array's type
    assert jnp.mean(jnp.arange(3, dtype=jnp.int32)).dtype == np.float32  # as JAX
    assert random.normal(random.PRNGKey(0), (2,)).dtype == np.float64
    jax.config.update("jax_platform_name", "cpu")  # JAX's other settings are accepted


def test_arrays_behave_as_jax_arrays(x64_off):
    x = jnp.array([[1.0, 2.5], [-3.0, 4.0]])
    jitted = jax.jit(lambda a: a + 1)(x)
    assert repr(x) == "Array([[ 1. ,  2.5],\n       [-3. ,  4. ]], dtype=float32)"
    assert str(x) == str(np.asarray(x)) and repr(jnp.zeros((2, 0))).endswith(
        "shape=(2, 0), dtype=float32)")
    assert f"{x[0, 1]:.2f}" == "2.50" and "{:.1f}".format(jitted[0, 0]) == "2.0"
    assert float(x[0, 1]) == 2.5 and int(jnp.int32(7)) == 7 and len(x) == 2
    assert [type(r).__name__ for r in jitted] == ["EagerArray", "EagerArray"]
    assert x[1].block_until_ready() is not None and x[1, 1].shape == ()
    assert round(jnp.array(2.567), 2) == pytest.approx(2.57) and round(jnp.array(2.5)) == 2
    assert isinstance(x, jax.Array) and isinstance(jitted, jax.Array)
    assert type(jax.device_get(jitted)) is np.ndarray
    assert jnp.asarray(np.ones(3)).at[0].set(5.0).tolist() == [5.0, 1.0, 1.0]
    assert jnp.arange(10)[11] == 9 and jnp.arange(4.0).at[jnp.array([5])].get() == 3.0
    assert jnp.arange(4.0).at[jnp.array([5])].set(1.0).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.unique(jnp.array([3, 1, 3])).tolist() == [1, 3]   # NumPy sees a plain array
    built = jax.jit(lambda v: jnp.array([v.sum(), v.max(), 2.0]))(jnp.arange(3.0))
    assert built.tolist() == [3.0, 2.0, 2.0]
    assert jax.jit(lambda v: (v.var(), v.nbytes))(jnp.arange(4.0))[0] == pytest.approx(1.25)


def test_at_updates_and_indexing_idioms(x64_off):
    v = jnp.arange(3.0)
    assert v.at[1:].divide(2.0).tolist() == [0.0, 0.5, 1.0]
    assert v.at[1].power(2.0).tolist() == [0.0, 1.0, 2.0]
    assert v.at[jnp.array([0, 0])].apply(lambda a: a + 1.0).tolist() == [2.0, 1.0, 2.0]
    assert jax.grad(lambda a: a.at[1].divide(2.0).sum())(jnp.ones(3)).tolist() == [1, 0.5, 1]
    assert jnp.pad(jnp.arange(3.0), 2, mode="reflect").tolist() == [2, 1, 0, 1, 2, 1, 0]
    assert jnp.repeat(jnp.arange(3), jnp.array([1, 0, 2]), total_repeat_length=3).tolist() == \
        [0, 2, 2]
    assert jnp.argsort(jnp.array([3, 1, 3, 2]), descending=True).tolist() == [0, 2, 3, 1]
    assert lax.map(lambda a: a.sum(), jnp.arange(10.0).reshape(5, 2), batch_size=2).tolist() == \
        [1.0, 5.0, 9.0, 13.0, 17.0]


def test_vmap_axis_name_collectives(x64_off):
    x = jnp.arange(4.0)
    assert jax.vmap(lambda a: a - lax.pmean(a, "i"), axis_name="i")(x).tolist() == \
        [-1.5, -0.5, 0.5, 1.5]
    assert jax.vmap(lambda a: lax.axis_index("i"), axis_name="i")(x).tolist() == [0, 1, 2, 3]
    assert jax.vmap(lambda a: lax.all_gather(a, "i"), axis_name="i")(x[:2]).tolist() == \
        [[0.0, 1.0], [0.0, 1.0]]
    nested = jax.vmap(jax.vmap(lambda a: lax.psum(a, "j") + lax.psum(a, "i"), axis_name="j"),
                      axis_name="i")(jnp.arange(6.0).reshape(2, 3))
    assert nested.tolist() == [[6.0, 8.0, 10.0], [15.0, 17.0, 19.0]]
    grads = jax.grad(lambda v: jax.vmap(lambda a: a * lax.psum(a, "i"), axis_name="i")(v).sum())
    assert grads(jnp.arange(3.0)).tolist() == [6.0, 6.0, 6.0]


def test_tree_util_paths_and_printing():
    tu = jax.tree_util
    tree = {"a": [1, (2, 3)], "b": None}
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]]
    assert paths == ["['a'][0]", "['a'][1][0]", "['a'][1][1]"]
    assert str(tu.tree_structure(tree)) == "PyTreeDef({'a': [*, (*, *)], 'b': None})"
    assert tu.tree_map_with_path(lambda p, x: len(p) * x, tree) == {"a": [2, (6, 9)], "b": None}
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [[3], 4]) == [(1, [3]), (2, 4)]  # prefix
    assert jax.tree.transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)),
                              [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_top_level_names_jax_programs_use(x64_off):
    assert jax.jacobian(jnp.sin)(0.0) == 1.0
    assert jax.linear_transpose(lambda x: 2 * x, 1.0)(3.0)[0] == 6.0
    out = jax.vmap(lambda x: jax.pure_callback(lambda v: np.asarray(v) * 2,
                                               jax.ShapeDtypeStruct((), np.float32), x))(
        jnp.arange(3.0))
    assert out.tolist() == [0.0, 2.0, 4.0]

    @jax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * 10 * x,)
    assert jax.grad(f)(3.0) == 30.0
    traced = []
    g = jax.jit(lambda x: traced.append(type(x).__name__) or x * 2)
    with jax.disable_jit():
        g(jnp.ones(2))
    assert traced == ["EagerArray"]
    assert jax.jit(lambda x: x * 2, donate_argnums=0)(jnp.ones(2)).tolist() == [2.0, 2.0]
    assert jax.device_put({"a": np.ones(2)}, jax.devices()[0])["a"].dtype == np.float32
    with jax.experimental.enable_x64():
        assert jnp.asarray(1.0).dtype == np.float64
    assert jax.jacrev(lambda x: (x ** 2, x.sum()), has_aux=True)(jnp.arange(2.0))[1] == 1.0
    flat, unravel = jax.flatten_util.ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(1)})
    assert flat.shape == (5,) and unravel(flat)["w"].shape == (2, 2)
    assert jax.ops.segment_sum(jnp.arange(5.0), jnp.array([0, 0, 1, 2, 2]), 3).tolist() == \
        [1.0, 2.0, 7.0]


def test_scipy_linalg_signal_optimize(x64_off):
    import numxla.scipy.linalg as sl
    a = jnp.array([[4.0, 2.0], [2.0, 3.0]])
    x = sl.cho_solve(sl.cho_factor(a), jnp.ones(2))
    np.testing.assert_allclose(np.asarray(a @ x), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(sl.lu_solve(sl.lu_factor(a), jnp.ones(2)), x, rtol=1e-6)
    np.testing.assert_allclose(sl.expm(jnp.array([[0.0, 1.0], [-1.0, 0.0]])),
                               [[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]], rtol=1e-6)
    assert jax.scipy.signal.convolve(jnp.arange(4.0), jnp.ones(2)).tolist() == \
        [0.0, 1.0, 3.0, 5.0, 3.0]
    w = jnp.linalg.eigvals(jnp.array([[1.0, 2.0], [-3.0, 1.0]]))
    np.testing.assert_allclose(sorted(np.asarray(w).imag), [-np.sqrt(6), np.sqrt(6)], rtol=1e-6)


def test_example_libraries(x64_off):
    from numxla.example_libraries import optimizers, stax
    init, apply = stax.serial(stax.Conv(2, (3, 3), padding="SAME"), stax.Relu,
                              stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(3))
    out_shape, params = init(random.PRNGKey(0), (-1, 4, 4, 1))
    assert out_shape == (0, 3)  # JAX's too: MaxPool's shape rule clips the -1 batch to 0
    assert apply(params, jnp.ones((2, 4, 4, 1))).shape == (2, 3)
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    state = opt_init({"x": jnp.ones(2)})
    state = jax.jit(opt_update)(0, {"x": jnp.ones(2)}, state)
    np.testing.assert_allclose(get_params(state)["x"], [0.9, 0.9], rtol=1e-5)


def test_eager_random_calls_go_through_a_cached_jit(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)
    monkeypatch.setenv("NUMXLA_TIERED", "reference")  # hot signatures: jit's tier 0
    key = random.PRNGKey(0)
    first = random.split(key)
    for _ in range(3):
        routed = random.split(key)
    assert routed.tolist() == first.tolist()
    monkeypatch.setenv("NUMXLA_TIERED", "1")
    start = time.perf_counter()
    random.truncated_normal(key, -1.0, 1.0, (4,))  # eager, once: not compiled, but quick
    assert time.perf_counter() - start < 1.0


def test_bf16_arrays_show_and_convert_their_values(x64_off):
    a = jnp.array([1.5, 2.25], jnp.bfloat16)
    try:  # with ml_dtypes, bf16 prints with bf16's digits, as JAX's
        import ml_dtypes  # noqa: F401
        assert repr(a) == "Array([1.5, 2.25], dtype=bfloat16)" and str(a) == "[1.5 2.25]"
    except ImportError:  # printed as f32 values
        assert repr(a) == "Array([1.5 , 2.25], dtype=bfloat16)" and str(a) == "[1.5  2.25]"
    # (``.dtype`` is the storage type, the uint16 words: NumPy has no bf16)
    assert repr(jax.jit(lambda x: x * 2)(a)) == repr(a * 2)
    assert repr(jax.jit(lambda x: x)(jnp.zeros(0, jnp.bfloat16))) == \
        "Array([], shape=(0,), dtype=bfloat16)"
    assert f"{a[0]:.2f}" == "1.50" and float(a[1]) == 2.25 and a.tolist() == [1.5, 2.25]
    f32 = a.astype(jnp.float32)
    assert f32.dtype == np.float32 and f32.tolist() == [1.5, 2.25]
    assert float(a.sum()) == 3.75 and [float(x) for x in a] == [1.5, 2.25]
    assert float(a[7]) == 2.25  # clamped, as JAX's
    assert a.at[0].set(3.0).tolist() == [3.0, 2.25]


def test_scipy_optimize_minimize_bfgs():
    from numxla.scipy.optimize import minimize

    def rosenbrock(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    res = minimize(rosenbrock, np.array([-1.2, 1.0, 0.5, -0.3]), method="BFGS")
    assert bool(res.success) and int(res.status) == 0 and int(res.nit) > 5
    np.testing.assert_allclose(res.x, np.ones(4), atol=1e-4)   # SciPy's minimum too
    # a quadratic with arguments: the minimum is the shift, the inverse Hessian diag(1/2w)
    w = np.array([1.0, 2.0, 3.0])
    res = minimize(lambda x, a: jnp.sum(w * (x - a) ** 2), np.zeros(3),
                   args=(np.array([1.0, -2.0, 3.0]),), method="BFGS")
    np.testing.assert_allclose(res.x, [1.0, -2.0, 3.0], atol=1e-6)
    np.testing.assert_allclose(np.diag(np.asarray(res.hess_inv)), 1 / (2 * w), rtol=1e-3)
    short = minimize(rosenbrock, np.array([-1.2, 1.0]), method="BFGS", options={"maxiter": 2})
    assert not bool(short.success) and int(short.status) == 1 and int(short.nit) == 2
    with pytest.raises(ValueError, match="method"):
        minimize(rosenbrock, np.zeros(2), method="Nelder-Mead")


# -- what the programs of JAX's docs pages turned up (tests/numxla/programs) -------------------

def test_tree_reduce_initializer_and_treedef_children():
    tu = jax.tree_util
    assert jax.tree.reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]}, initializer=10) == 16
    assert tu.tree_reduce(max, [4, (9, 2)]) == 9
    kids = tu.tree_structure({"a": 1, "b": (2, 3)}).children()
    assert [str(k) for k in kids] == ["PyTreeDef(*)", "PyTreeDef((*, *))"]
    assert tu.treedef_children(tu.tree_structure([1, [2]]))[1].num_leaves == 1


def test_vmap_maps_keyword_arguments_over_their_leading_axis(x64_off):
    out = jax.vmap(lambda a, scale=1.0: a * scale, in_axes=(None,))(jnp.arange(3.0),
                                                                   scale=jnp.arange(2.0))
    assert out.tolist() == [[0.0, 0.0, 0.0], [0.0, 1.0, 2.0]]


def test_jvp_has_aux(x64_off):
    primal, tangent, aux = jax.jvp(lambda x: (jnp.sin(x), {"c": jnp.cos(x), "n": 3}), (0.0,),
                                   (2.0,), has_aux=True)
    assert (float(primal), float(tangent), float(aux["c"]), aux["n"]) == (0.0, 2.0, 1.0, 3)


def test_closure_convert_hoists_traced_floats(x64_off):
    from functools import partial
    assert jax.closure_convert(lambda x: x * 2.0, 1.0)[1] == []   # nothing traced: fun itself
    seen = []

    def outer(a, n):
        converted, consts = jax.closure_convert(lambda x: x * a + n, 1.0)
        seen.append(len(consts))   # a (traced float) is hoisted; the int n stays closed
        return converted(3.0, *consts)
    assert jax.jit(outer)(2.0, 1) == 7.0 and seen == [1]

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *consts):
        return f(x, *consts)

    def fwd(f, x, *consts):
        return f(x, *consts), (x, consts)

    def bwd(f, res, g):   # differentiate f itself: the closed-over a is an explicit input now
        x, consts = res
        return jax.vjp(f, x, *consts)[1](g)
    apply.defvjp(fwd, bwd)

    def through(a):
        converted, consts = jax.closure_convert(lambda x: jnp.sin(a * x), 2.0)
        return apply(converted, 2.0, *consts)
    np.testing.assert_allclose(jax.grad(through)(0.5), 2.0 * np.cos(1.0), rtol=1e-6)


def test_cond_takes_numeric_predicates(x64_off):
    assert lax.cond(2, lambda: 1.0, lambda: 2.0) == 1.0
    assert lax.cond(jnp.uint8(0), lambda: 1.0, lambda: 2.0) == 2.0
    assert jax.jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(0, 0.0) == 1.0
    assert lax.cond(0.5, lambda: 1, lambda: 2) == 1
    with pytest.raises(Exception):
        lax.cond(jnp.array([True]), lambda: 1, lambda: 2)   # a scalar, as in JAX


def test_einsum_sublist_form(x64_off):
    a, b = jnp.arange(6.0).reshape(2, 3), jnp.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.asarray(a @ b))
    assert jnp.einsum(jnp.ones((2, 3)), [0, 1], jnp.arange(3.0), [1]).tolist() == [3.0, 3.0]
    assert jnp.einsum(jnp.arange(4.0).reshape(2, 2), [Ellipsis, 0, 0]) == 3.0
    np.testing.assert_array_equal(jax.jit(lambda x: jnp.einsum(x, [1, 0]))(a), np.asarray(a.T))


def test_roll_with_traced_shifts(x64_off):
    x = jnp.arange(6).reshape(2, 3)
    assert jax.jit(lambda v, s: jnp.roll(v, s))(jnp.arange(5), 7).tolist() == [3, 4, 0, 1, 2]
    assert jax.jit(lambda v, s: jnp.roll(v, s, axis=1))(x, -4).tolist() == [[1, 2, 0],
                                                                            [4, 5, 3]]
    assert jax.jit(lambda v, s: jnp.roll(v, s, axis=(0, 1)))(x, jnp.array([1, 1])).tolist() == \
        [[5, 3, 4], [2, 0, 1]]
    assert jax.vmap(jnp.roll)(x, jnp.array([1, 2])).tolist() == [[2, 0, 1], [4, 5, 3]]


def test_roots_quantile_nearest_and_histogram2d_counts(x64_off):
    np.testing.assert_allclose(jnp.roots(jnp.array([0.0, 2.0, -6.0, 4.0])), [2.0, 1.0],
                               rtol=1e-6)
    assert jnp.roots(jnp.array([1, -3, 2])).dtype == np.complex64
    # JAX's "nearest": an exact tie takes the lower neighbour (NumPy's rounds half to even)
    assert jnp.quantile(jnp.arange(5.0), jnp.array([0.125, 0.375, 0.625]),
                        method="nearest").tolist() == [0.0, 1.0, 2.0]
    counts = jnp.histogram2d(jnp.array([0.1, 0.4, 0.9]), jnp.array([0.2, 0.8, 0.9]), bins=2)[0]
    assert counts.dtype == np.int32 and counts.tolist() == [[1, 1], [0, 1]]
    assert jnp.histogram2d(jnp.ones(2), jnp.ones(2), density=True)[0].dtype == np.float32


def test_lax_collapse_takes_jax_start_and_stop(x64_off):
    x = jnp.ones((2, 3, 4))
    assert lax.collapse(x, 1).shape == (2, 12) and lax.collapse(x, 0, 2).shape == (6, 4)
    assert lax.collapse(x, -2).shape == (2, 12) and lax.collapse(x, (0, 1)).shape == (6, 4)


def test_jit_decorated_methods_bind_self(x64_off):
    from functools import partial

    class Scaler:
        def __init__(self, factor):
            self.factor = factor

        @partial(jax.jit, static_argnums=0)
        def apply(self, v):
            return v * self.factor

        def __hash__(self):
            return hash(self.factor)

        def __eq__(self, other):
            return self.factor == other.factor
    assert Scaler(3.0).apply(jnp.ones(2)).tolist() == [3.0, 3.0]
    assert Scaler.apply(Scaler(2.0), 1.0) == 2.0


def test_reductions_refuse_lists_as_jax(x64_off):
    with pytest.raises(TypeError, match="sum requires ndarray"):
        jnp.sum([1, 2, 3])
    with pytest.raises(TypeError):
        jnp.max((1.0, 2.0))
    assert jnp.sum(jnp.array([1, 2, 3])) == 6


def test_settings_as_context_managers_and_process_queries(x64_off):
    with jax.enable_x64(True):
        assert jnp.ones(1).dtype == np.float64
    assert jnp.ones(1).dtype == np.float32 and jax.enable_x64.value is False
    with jax.debug_nans(True), jax.transfer_guard("disallow"), jax.numpy_rank_promotion("raise"):
        assert jax.config.jax_debug_nans is True
    assert jax.config.jax_debug_nans is False
    assert (jax.host_count(), jax.process_indices(), jax.live_arrays()) == (1, [0], [])
    assert isinstance(jax.devices()[0], jax.Device)
    arr = jax.make_array_from_callback((2, 3), jax.sharding.SingleDeviceSharding(jax.devices()[0]),
                                       lambda index: np.arange(6.0).reshape(2, 3)[index])
    assert arr.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_io_callback_runs_even_when_its_result_is_unused(x64_off):
    from numxla.experimental import io_callback
    calls = []

    def log(v):
        calls.append(float(v))
        return np.float32(v * 2)

    @jax.jit
    def f(x):
        io_callback(log, jax.ShapeDtypeStruct((), np.float32), x)
        return x + 1
    assert f(1.0) == 2.0 and calls == [1.0]


# -- sharding on one device, shard_map as vmap lanes -------------------------------------------

def test_sharding_types_and_device_put(x64_off):
    from numxla.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()).reshape(1, 1), ("data", "model"))
    sharding = NamedSharding(mesh, P("data", None))
    assert repr(P("data", None)) == "P('data', None)" and P() == ()
    assert dict(mesh.shape) == {"data": 1, "model": 1} and mesh.size == 1
    x = jax.device_put(jnp.arange(8.0).reshape(4, 2), sharding)
    assert x.sharding == sharding and x.tolist()[3] == [6.0, 7.0]
    assert sharding.shard_shape((4, 2)) == (4, 2) and sharding.is_fully_replicated
    plain = jnp.ones(2)
    assert plain.sharding.device_set == {jax.devices()[0]} and plain.devices() == {
        jax.devices()[0]}
    assert jax.jit(lambda a: a * 2)(x).sharding.is_fully_replicated
    assert jax.make_mesh((1,), ("x",)).axis_names == ("x",)
    assert jax.lax.with_sharding_constraint(x, sharding) is x
    with pytest.raises(ValueError):
        NamedSharding(mesh, P("batch"))


def test_shard_map_runs_shards_as_vmap_lanes(x64_off):
    from numxla.sharding import Mesh, PartitionSpec as P
    one = Mesh(np.array(jax.devices()), ("x",))
    sm = jax.shard_map(lambda b: jax.lax.psum(b.sum(axis=0), "x") / jax.lax.psum(b.shape[0], "x"),
                       mesh=one, in_specs=P("x"), out_specs=P())
    assert jax.jit(sm)(jnp.arange(6.0).reshape(3, 2)).tolist() == [2.0, 3.0]
    assert jax.grad(lambda a: sm(a).sum())(jnp.ones((2, 2))).tolist() == [[0.5, 0.5]] * 2
    # a two-lane mesh (the same device twice): each lane sees its own block
    two = Mesh(np.array(jax.devices() * 2), ("x",))
    from numxla.experimental.shard_map import shard_map
    blocks = shard_map(lambda b: b * 0 + jax.lax.axis_index("x"), two, P("x"), P("x"))
    assert blocks(jnp.zeros(4)).tolist() == [0.0, 0.0, 1.0, 1.0]
    total = shard_map(lambda b: jax.lax.psum(b, "x"), two, P(None, "x"), P())(
        jnp.arange(8.0).reshape(2, 4))
    assert total.tolist() == [[2.0, 4.0], [10.0, 12.0]]
    grid = Mesh(np.array(jax.devices() * 4).reshape(2, 2), ("a", "b"))
    gathered = jax.shard_map(lambda b: b + 10 * jax.lax.axis_index("a"), mesh=grid,
                             in_specs=P(("a", "b")), out_specs=P(("a", "b")))(jnp.zeros(4))
    assert gathered.tolist() == [0.0, 0.0, 10.0, 10.0]
    with pytest.raises(ValueError, match="split"):
        shard_map(lambda b: b, two, P("x"), P("x"))(jnp.zeros(3))


# -- what JAX's example scripts and docs pages needed (tests/numxla/programs) ------------------

def test_pmap_takes_jax_arguments_and_returns_jax_arrays(x64_off):
    xs = jnp.arange(6.0).reshape(2, 3)
    squared = jax.pmap(lambda x, n: x ** n, static_broadcasted_argnums=1)(xs, 2)
    assert isinstance(squared, jax.Array) and squared.at[0, 0].set(7.0).tolist()[0] == \
        [7.0, 1.0, 4.0]
    assert (squared + 1.5).dtype == np.float32 and squared.tolist()[1] == [9.0, 16.0, 25.0]
    # the static argument's in_axes entry is dropped, as JAX drops it
    scaled = jax.pmap(lambda n, x: x * n, in_axes=(None, 0), static_broadcasted_argnums=0)
    assert scaled(3, xs).tolist()[1] == [9.0, 12.0, 15.0]
    with pytest.raises(ValueError, match="hashable"):
        scaled(np.ones(2), xs)
    one = jax.pmap(lambda x: x + 1, devices=jax.devices(), donate_argnums=0, backend="cpu")
    assert one(jnp.ones((1, 2))).tolist() == [[2.0, 2.0]]
    with pytest.raises(ValueError, match="mapped axes"):
        jax.pmap(lambda x: x, axis_size=3)(xs)
    total = jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i", out_axes=None)(xs)
    assert isinstance(total, jax.Array) and total.tolist() == [3.0, 5.0, 7.0]


def test_test_util_check_grads(x64_off):
    from numxla.test_util import check_grads

    check_grads(lambda x, y: jnp.sin(x) * y ** 2, (0.3, 1.5), order=2)

    @jax.custom_jvp
    def wrong(x):
        return jnp.sin(x)
    wrong.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2.0 * tangents[0]))
    with pytest.raises(AssertionError):
        check_grads(wrong, (0.3,), order=1, modes=["fwd"])


def test_ensure_compile_time_eval_gives_concrete_values(x64_off):
    from numxla.tracer.core import Tracer
    seen = []

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(jnp.float32(1.0)) * 2       # only constants: computed now
            table = jnp.arange(4) ** 2
            z = x * 2                               # a traced operand: traced
        seen.append((isinstance(y, Tracer), isinstance(z, Tracer)))
        return z + table[int(y)]
    assert f(jnp.ones(2)).tolist() == [3.0, 3.0] and seen == [(False, True)]


def test_result_type_of_python_types_and_unsigned_promotion(x64_off, monkeypatch):
    assert [jnp.result_type(t) for t in (int, float, complex)] == [np.int32, np.float32,
                                                                     np.complex64]
    assert jnp.result_type(jnp.int8, float) == np.float32 and jnp.result_type(
        jnp.float16, int) == np.float16
    assert jnp.result_type(np.dtype("float64")) == np.float32
    # u32 with a signed type: s64, narrowed to s32 without x64 (JAX's table)
    assert jnp.promote_types(jnp.uint32, jnp.int8) == np.int32
    assert (jnp.zeros(1, jnp.uint32) + jnp.zeros(1, jnp.int32)).dtype == np.int32
    assert (jnp.zeros(1, jnp.uint8) + jnp.zeros(1, jnp.int8)).dtype == np.int16
    monkeypatch.setattr(config, "jax_enable_x64", True)
    assert jnp.promote_types(jnp.uint32, jnp.int32) == np.int64


def test_concretization_errors_have_jax_types(x64_off):
    errors = jax.errors

    def branch(x):
        return x if x > 0 else -x
    with pytest.raises(errors.TracerBoolConversionError) as caught:
        jax.jit(branch)(1.0)
    assert isinstance(caught.value, errors.ConcretizationTypeError)
    with pytest.raises(errors.ConcretizationTypeError):
        jax.jit(lambda x: int(x))(1.5)
    with pytest.raises(errors.TracerIntegerConversionError):
        jax.jit(lambda i: [1, 2][i])(0)
    with pytest.raises(errors.TracerArrayConversionError):
        jax.jit(lambda x: np.asarray(x))(1.0)
    with pytest.raises(IndexError, match="static"):
        jax.jit(lambda x, i: x[:i])(jnp.arange(4), 2)
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x[x > 1])(jnp.arange(4))


def test_python_ints_out_of_range_raise(x64_off):
    for make in (lambda: jnp.array(2 ** 40), lambda: jnp.array([1, 2 ** 33]),
                 lambda: jnp.array(300, jnp.uint8), lambda: jnp.asarray(-1, jnp.uint32),
                 lambda: jnp.zeros(2, jnp.int32) + 2 ** 31):
        with pytest.raises(OverflowError):
            make()
    assert jnp.array(2 ** 31 - 1) == 2 ** 31 - 1 and jnp.uint32(2 ** 32 - 1) == 2 ** 32 - 1
    assert jnp.asarray(np.array([2 ** 40])).tolist() == [0]   # NumPy arrays wrap, as in JAX
    assert jnp.array(2 ** 40, jnp.float32) == 2.0 ** 40


def test_jit_of_the_same_function_shares_its_traces(x64_off):
    traces = []

    def f(x, n=1):
        traces.append(x.shape)
        return x * n
    for _ in range(3):
        jax.jit(f)(jnp.ones(2))             # a new jit object each time, as loops write it
    assert len(traces) == 1
    jax.jit(f, static_argnames="n")(jnp.ones(2), n=2)   # other options: their own trace
    assert len(traces) == 2
    jitted = jax.jit(f)
    out = jitted.eval_shape(jnp.ones((3, 2)))
    assert (out.shape, out.dtype) == ((3, 2), np.float32) and len(traces) == 3
    traced = jitted.trace(jnp.ones(4))
    assert traced.out_info.shape == (4,) and isinstance(traced.lower().as_text(), str)
    jitted.clear_cache()
    jax.jit(f)(jnp.ones(2))
    assert len(traces) == 5


def test_typed_keys_stack_and_concatenate(x64_off):
    keys = random.split(random.key(3), 3)
    stacked = jnp.stack([keys[2], keys[0]])
    assert stacked.shape == (2,) and str(stacked.dtype) == "key<fry>"
    data = np.asarray(random.key_data(keys))
    assert np.asarray(random.key_data(stacked)).tolist() == data[[2, 0]].tolist()
    joined = jnp.concatenate([keys, keys[:1]])
    assert np.asarray(random.key_data(joined)).tolist() == data[[0, 1, 2, 0]].tolist()
    columns = jnp.stack([keys, keys], axis=-1)
    assert columns.shape == (3, 2) and random.key_data(columns).shape == (3, 2, 2)
    with pytest.raises(TypeError, match="key arrays"):
        jnp.stack([keys[0], jnp.zeros(2, jnp.uint32)])


def test_convolve_promotes_integers_to_floats(x64_off):
    out = jnp.convolve(jnp.array([1, 2, 3]), jnp.array([0, 1]))
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert jnp.correlate(jnp.array([True, False]), jnp.array([True, True]), "full").dtype == \
        np.float32
    assert jnp.convolve(jnp.ones(3, jnp.float16), jnp.array([1, 2])).dtype == np.float16


def test_tracers_print_as_jax_and_arrays_are_immutable(x64_off):
    printed = []
    jax.jit(lambda x, s: printed.append(f"{x} {s!r}") or x)(jnp.ones(2), 1.0)
    jax.vmap(lambda x: printed.append(str(x)) or x)(jnp.ones((3, 2)))
    assert printed == ["JitTracer(float32[2]) JitTracer(~float32[])",
                       "VmapTracer(aval=float32[2], batched=float32[3,2])"]
    for x in (jnp.zeros(3), jnp.zeros(3, jnp.bfloat16), jax.jit(lambda a: a + 1)(jnp.zeros(3))):
        with pytest.raises(TypeError, match="immutable"):
            x[0] = 1.0
    assert x.tolist() == [1.0, 1.0, 1.0]
    assert str(jnp.ones(2).device) == "cpu:0" and jnp.ones(2).to_device(jax.devices()[0]).shape \
        == (2,)
    assert repr(jnp.zeros(0)) == "Array([], shape=(0,), dtype=float32)"


def test_debug_nans_raises_where_a_nan_appears(x64_off, monkeypatch):
    monkeypatch.setattr(config, "jax_debug_nans", True)
    with pytest.raises(FloatingPointError, match="nan"):
        jnp.log(-1.0)
    with pytest.raises(FloatingPointError, match="nan"):
        jax.jit(lambda x: jnp.sqrt(x) + 1)(-1.0)
    assert jnp.log(1.0) == 0.0 and float(jnp.divide(1.0, 0.0)) == np.inf
    monkeypatch.setattr(config, "jax_debug_infs", True)
    with pytest.raises(FloatingPointError, match="inf"):
        jnp.divide(1.0, 0.0)


def test_integer_division_and_remainder_by_zero_as_jax():
    """JAX 0.10.2's values: ``x // 0`` is XLA's quotient (-1) less 1 where the
    signs differ (-2 for x != 0), ``x % 0`` is 0 (signed and unsigned)."""
    x = jnp.array([5, -5, 0, 7], dtype=jnp.int32)
    zero = jnp.zeros(4, jnp.int32)
    assert (x // zero).tolist() == [-2, -2, -1, -2]
    assert (x % zero).tolist() == [0, 0, 0, 0]
    assert (x // jnp.array([2, -3, 0, 1], jnp.int32)).tolist() == [2, 1, -1, 7]
    assert (x % jnp.array([2, -3, 0, 1], jnp.int32)).tolist() == [1, -2, 0, 0]
    u = jnp.array([5, 0], jnp.uint32)
    assert (u // jnp.zeros(2, jnp.uint32)).tolist() == [4294967295, 4294967295]
    assert (u % jnp.zeros(2, jnp.uint32)).tolist() == [0, 0]
    q, r = jnp.divmod(jnp.array([7, -7, 3]), jnp.array([2, 2, 0]))
    assert q.tolist() == [3, -4, -2] and r.tolist() == [1, 1, 0]
