"""Regression tests for issue 13's defects: each fails on the code before its fix.

Runtime values (``Array``, bf16, dynamic sizes) and the NumPy protocol."""
import operator

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.compile import jit
from numxla.compile.runtime import device_put
from numxla.tracer.core import bf16_array, dynamic_array
from numxla.tracer.shapes import bf16_to_f32


def test_device_put_keeps_bf16():
    values = np.array([1.5, -2.0, 3.0], np.float32)
    x = device_put(bf16_array(values), "{0}")
    assert str(x.xla_shape) == "bf16[3]{0}"
    doubled = jit(lambda v: v * 2)(x)
    assert doubled.xla_shape.element_type.name == "BF16"
    np.testing.assert_array_equal(bf16_to_f32(np.asarray(doubled)), values * 2)
    # NumPy sees the values, not the 16-bit words
    np.testing.assert_array_equal(np.negative(x), -values)
    assert float(device_put(bf16_array(np.float32(0.5)))) == 0.5


def test_array_numpy_protocol():
    a = device_put(np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(a == 2, [False, False, True, False])
    np.testing.assert_array_equal(a != 2, [True, True, False, True])
    with pytest.raises(TypeError):
        hash(a)
    one = device_put(np.array([7], np.int32))
    assert bool(one) and operator.index(one) == 7 and [10, 11, 12, 13, 14, 15, 16, 17][one] == 17
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)
    with pytest.raises(TypeError, match="f32"):
        operator.index(device_put(np.float32(3)))
    with pytest.raises(TypeError, match="one element"):
        float(a)
    np.testing.assert_array_equal(np.add(a, 1), np.arange(1, 5))
    scalar = jit(lambda x: x * 3)(np.float32(1.5))
    assert f"{scalar:.2f}" == "4.50" and str(scalar) == "4.5"
    assert scalar.item() == 4.5 and round(scalar) == 4


def test_array_operators_and_methods_as_jax_arrays():
    a = jit(lambda x: x)(np.arange(1, 4, dtype=np.int32))
    n = np.arange(1, 4, dtype=np.int32)
    for got, want in [(a ** 2, n ** 2), (2 ** a, 2 ** n), (abs(-a), n), (a // 2, n // 2),
                      (7 // a, 7 // n), (a % 2, n % 2), (7 % a, 7 % n), (a & 1, n & 1),
                      (a | 4, n | 4), (a ^ 1, n ^ 1), (~a, ~n), (a << 1, n << 1),
                      (a >> 1, n >> 1), (divmod(a, 2)[1], n % 2), (a.T, n), (a.sum(), 6),
                      (a.reshape(3, 1), n.reshape(3, 1)), (a.astype(np.float32), n),
                      (a.max(), 3), (a.mean(), 2.0), (a[1:], n[1:])]:
        np.testing.assert_array_equal(np.asarray(got), want)
    assert a.tolist() == [1, 2, 3] and a.copy().tolist() == [1, 2, 3]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        a.nope


def test_dynamic_array_numpy_operators_respect_runtime_size():
    x = dynamic_array(np.arange(5, dtype=np.float32), [3])
    eager = x * 2 + 1
    compiled = jit(lambda v: v * 2 + 1)(x)
    np.testing.assert_array_equal(np.asarray(eager)[:3], [1, 3, 5])
    assert eager.dynamic_sizes == (3,)
    np.testing.assert_array_equal(np.asarray(compiled)[:3], [1, 3, 5])
    np.testing.assert_array_equal(np.asarray(2 - x)[:3], [2, 1, 0])
    assert (x > 0).dynamic_sizes == (3,)
    np.testing.assert_array_equal(lax.neg(x)[:3], [0, -1, -2])


@pytest.mark.parametrize("shape, axes, layout", [
    ((16384, 64), (0, 1), None),      # reduced dims in registers, no vector lanes
    ((1 << 18, 4), (0,), None),       # accumulated in memory across the outer loop
    ((64, 16384), (0, 1), "{0,1}"),
])
def test_f32_sum_accurate_like_numpy(shape, axes, layout):
    """A sequential f32 chain over a million same-signed values drifts by 1e-3
    relative (XLA's reduce test allows 1e-4): sums accumulate in f64."""
    x = np.random.default_rng(0).uniform(3.12, 3.16, shape).astype(np.float32)
    got = jit(lambda v: lax.reduce(v, np.float32(0), lax.add, axes),
              in_layouts=layout)(x)
    exact = x.astype(np.float64).sum(axes)
    np.testing.assert_allclose(np.asarray(got), exact, rtol=2e-6)


_CUMULATIVE = {  # op -> NumPy's accumulate along an axis
    "cumsum": np.cumsum, "cumprod": np.cumprod,
    "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


@pytest.mark.parametrize("name", sorted(_CUMULATIVE))
def test_cumulative_ops_are_linear(name):
    """cumsum and co. are reduce_windows as long as the axis: one pass, not
    one per window position (200k elements took 47 s compiled; 20k took
    3.6 GB eagerly)."""
    import time
    x = np.random.default_rng(1).uniform(0.999, 1.001, 200_000).astype(np.float32)
    for reverse in (False, True):
        def f(v, reverse=reverse):
            return getattr(lax, name)(v, axis=0, reverse=reverse)
        expected = _CUMULATIVE[name](x[::-1])[::-1] if reverse else _CUMULATIVE[name](x)
        start = time.perf_counter()
        eager = f(x)
        assert time.perf_counter() - start < 1.0
        start = time.perf_counter()
        compiled = jit(f)(x)
        assert time.perf_counter() - start < 20.0  # compiling included
        np.testing.assert_allclose(eager, expected, rtol=1e-4)
        np.testing.assert_allclose(np.asarray(compiled), expected, rtol=1e-4)


@pytest.mark.parametrize("layout", ["{1,0}", "{0,1}"])
def test_cumulative_along_either_axis_in_any_layout(layout):
    x = np.random.default_rng(2).integers(-3, 4, (37, 23)).astype(np.int32)
    for axis in (0, 1):
        for reverse in (False, True):
            got = jit(lambda v, a=axis, r=reverse: (lax.cumsum(v, a, r), lax.cummax(v, a, r)),
                      in_layouts=layout, out_layouts=layout)(x)
            flip = (lambda v, a=axis: np.flip(v, a)) if reverse else (lambda v: v)
            np.testing.assert_array_equal(np.asarray(got[0]), flip(np.cumsum(flip(x), axis)))
            np.testing.assert_array_equal(np.asarray(got[1]),
                                          flip(np.maximum.accumulate(flip(x), axis)))


def test_cumsum_gradient_is_a_reverse_cumsum():
    from numxla.autodiff import grad
    n = 50_000
    weights = np.linspace(0, 1, n, dtype=np.float32)
    g = grad(lambda v: (lax.cumsum(v) * weights).sum())
    expected = np.cumsum(weights[::-1].astype(np.float64))[::-1]
    np.testing.assert_allclose(g(np.zeros(n, np.float32)), expected, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(jit(g)(np.zeros(n, np.float32))), expected, rtol=1e-4)


def test_sort_of_a_transcendental_chain_compiles_in_bounded_time():
    """Issue 13 item 9: this graph sat in Numba's ParforFusionPass for 1500 s."""
    import time
    x = np.linspace(-2, 2, 1024 * 2048, dtype=np.float32).reshape(1024, 2048)

    def f(v):
        return lax.sort(lax.sin(lax.exp(v)) + lax.logistic(v), dimension=1)

    start = time.perf_counter()
    got = np.asarray(jit(f)(x))
    assert time.perf_counter() - start < 120
    expected = np.sort(np.sin(np.exp(x)) + 1 / (1 + np.exp(-x)), axis=1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_several_trig_ops_in_one_threaded_loop():
    """Each sin in a prange body counts its huge arguments in a reduction
    variable of its own (one shared counter updated twice per iteration is
    refused by Numba's parfor pass)."""
    x = np.linspace(-3, 3, 1024 * 2048, dtype=np.float32).reshape(1024, 2048)
    x[5, 7] = 1e30  # beyond the fast path's bound: the exact re-run
    r = np.linspace(0, 1, 2048, dtype=np.float32)
    got = jit(lambda v, w: lax.sin(v) * w[None, :] + lax.cos(v * 2.0) * w[None, :])(x, r)
    x64 = x.astype(np.float64)
    expected = np.sin(x64) * r + np.cos(x64 * 2.0) * r
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def _multi_element_less(a, b):
    """XLA's sort_test MultiElementComparator: the scalars broadcast, an iota
    added, compared as vectors, one element sliced and reshaped back."""
    va, vb = lax.broadcast_in_dim(a, (2,), ()), lax.broadcast_in_dim(b, (2,), ())
    offsets = lax.iota(np.float32, 2)
    less = lax.lt(va + offsets, vb + offsets)
    return lax.reshape(lax.slice(less, (1,), (2,)), ())


def test_sort_comparator_with_array_ops():
    x = np.random.default_rng(3).uniform(-50, 50, (32, 5)).astype(np.float32)
    got = jit(lambda v: lax.sort(v, dimension=0, comparator=_multi_element_less))(x)
    np.testing.assert_array_equal(np.asarray(got), np.sort(x, axis=0))


def test_reduce_computation_with_array_ops_inside_loops():
    """The computation's own loops are nested in the reduction's: their index
    names must differ (a shared ``i0`` gave garbage)."""
    def add_through_vectors(acc, x):
        both = lax.broadcast_in_dim(acc, (3,), ()) + lax.broadcast_in_dim(x, (3,), ())
        return lax.reduce_max(both, (0,))
    y = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = jit(lambda v: lax.reduce(v, np.float32(0), add_through_vectors, (1,)))(y)
    np.testing.assert_array_equal(np.asarray(got), y.sum(axis=1))


def test_a_stuck_replica_does_not_hang_pmap():
    """Issue 13 item 8: a replica that never looks at the rendezvous (a long
    loop of host callbacks here; an endless loop alike) no longer keeps the
    call waiting once the others time out; the next call works."""
    import time

    from numxla.compile.spmd.pmap import pmap
    from numxla.compile.spmd.rendezvous import CollectiveError
    from numxla.primitives import side_effects as se

    se.register_custom_call_target("test_reliability_nap", lambda v: (time.sleep(0.25), v)[1])

    def fn(v):
        def body(carry):
            count, value = carry
            return count + 1, lax.custom_call("test_reliability_nap", [value],
                                              result_shapes="f32[1]")
        # replica 1 naps 24 times (6 s); replica 0 goes straight to the psum
        limit = lax.convert_element_type(v[0], np.int32)
        _, value = lax.while_loop(lambda c: c[0] < limit, body, (np.int32(0), v))
        return lax.psum(value, "i")

    stuck = pmap(fn, axis_name="i", timeout=0.5)
    start = time.perf_counter()
    with pytest.raises(CollectiveError, match="left running"):
        stuck(np.array([[0.0], [24.0]], np.float32))
    assert time.perf_counter() - start < 4
    np.testing.assert_array_equal(stuck(np.zeros((2, 1), np.float32)), [[0.0], [0.0]])


def test_misuse_gets_errors_that_name_the_problem():
    """Issue 13's unclear errors: each is now a TypeError/ValueError naming
    the op or parameter and the shape."""
    import functools

    from numxla.tracer.core import ShapeError

    with pytest.raises(ShapeError, match=r"broadcast_in_dim.*18446744073709551616 elements"):
        jit(lambda x: lax.broadcast_in_dim(x, (1 << 32, 1 << 32), ()))(np.float32(1))
    with pytest.raises(ValueError, match=r"out_layouts.*u8\[3\].*padding_value -1"):
        jit(lambda x: x + 1, out_layouts="{0:PD(4)PV(-1)}")(np.ones(3, np.uint8))
    with pytest.raises(TypeError, match=r"in_layouts must be one layout .*; got 3.5"):
        jit(lambda x: x + 1, in_layouts=3.5)(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"in_layouts entry 3.5 for positional argument 1"):
        jit(lambda x, y: x + y, in_layouts=[None, 3.5])(np.ones(3, np.float32), np.float32(1))
    with pytest.raises(TypeError, match=r"in_layouts entry 3.5 for positional argument 0"):
        jit(lambda x: x + 1, in_layouts=[3.5])(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"in_layouts.*f32\[3\].*got 3.5"):
        jit(lambda x: x + 1, in_layouts=[[3.5]])(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="expected a function to compile, got int"):
        jit(3)

    class ShapeOnly:
        shape, dtype = (3,), np.dtype(np.float32)

    with pytest.raises(TypeError, match=r"ShapeOnly has a shape and dtype .* but no values"):
        jit(lambda x: x + 1)(ShapeOnly())
    with pytest.raises(TypeError, match=r"ShapeOnly has a shape and dtype .* but no values"):
        lax.add(ShapeOnly(), np.float32(1))
    # a partial (no __name__ of its own) compiles
    twice = jit(functools.partial(lambda a, x: a * x, np.float32(2)))
    np.testing.assert_array_equal(np.asarray(twice(np.ones(2, np.float32))), [2, 2])


def test_f32_sum_with_its_init_as_an_argument_is_accurate():
    """XLA's reduce_test ReduceR2_1024x1024_To_R0 passes the init value as a
    parameter: the general reduce of one add accumulates in f64 too."""
    x = np.random.default_rng(0).uniform(3.1, 3.18, (1024, 1024)).astype(np.float32)
    got = jit(lambda a, i: lax.reduce(a, i, lax.add, (0, 1)))(x, np.float32(0))
    assert float(got) == pytest.approx(x.astype(np.float64).sum(), rel=1e-6)


def test_a_value_used_twice_is_computed_once_in_fused_code():
    """x = x * x + x, seven times: the fused loop body grew exponentially
    (2211 lines), now linearly."""
    def f(x):
        for _ in range(7):
            x = lax.add(lax.mul(x, x), x)
        return x

    x = np.linspace(0, 0.5, 7, dtype=np.float32)
    compiled = jit(f).lower(x).compile()
    assert compiled.source.count("\n") < 200
    np.testing.assert_allclose(np.asarray(compiled(x)), f(x), rtol=1e-6)


def test_fuzzer_findings_rank0_layouts_s64_wrap_and_init_first():
    """Found by tests/fuzz: a rank-0 Array with layout attributes could not be
    read back; s64 overflow was undefined in compiled code (LLVM nsw); a
    cumulative complex product applied its init value last."""
    np.testing.assert_array_equal(np.asarray(device_put(np.float32(1.5), "{:T(2)}")), 1.5)
    back = jit(lambda x: (x,), out_layouts=["{:T(2)}"])(np.int32(7))[0]
    assert np.asarray(back) == 7
    big = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 5], np.int64)

    def wraps(v):
        return (lax.convert_element_type(lax.add(v, v), "pred"),
                lax.lt(lax.add(v, np.int64(1)), v), lax.mul(v, np.int64(3)))

    for got, want in zip(jit(wraps)(big), ([False, True, True], [False, True, False],
                                           big * np.int64(3))):
        np.testing.assert_array_equal(np.asarray(got), want)
    z = np.array([2.5 + 0j, complex(1.5, 1e308)])
    for got in (lax.cumprod(z, 0), np.asarray(jit(lambda v: lax.cumprod(v, 0))(z))):
        assert got[1].real == 3.75 and np.isinf(got[1].imag)


def test_fuzzer_findings_complex_sqrt_extremes_and_empty_select_and_scatter():
    """Found by tests/fuzz: compiled complex sqrt/rsqrt of a huge or tiny |z|
    went through Numba's sqrt, which halved the imaginary part; the reference
    crashed on a select_and_scatter_add of a zero-size operand with padding."""
    for dtype, real in ((np.complex64, np.float32), (np.complex128, np.float64)):
        big, least = np.finfo(real).max, np.finfo(real).smallest_subnormal
        z = np.array([complex(0.001, -big), complex(-big, big / 2), complex(least, least),
                      3 + 4j, -2 + 0j], dtype)
        roots, inverse = jit(lambda v: (lax.sqrt(v), lax.rsqrt(v)))(z)
        np.testing.assert_allclose(np.asarray(roots), np.sqrt(z), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(inverse)[:2], 1 / np.sqrt(z[:2]), rtol=1e-6)

    def scatter(source, operand):
        return lax.select_and_scatter_add(source, operand, "ge", (1,), (1,), ((1, 0),))

    empty = (np.ones((1,), np.float32), np.zeros((0,), np.float32))
    assert scatter(*empty).shape == (0,) and np.asarray(jit(scatter)(*empty)).shape == (0,)


# -- fuzzer findings 6-13 (tests/fuzz/README.md): expected values are XLA:CPU's
# (jax 0.10.2, the HLO op itself), except where noted

_M64 = np.finfo(np.float64).max
_M32 = np.finfo(np.float32).max


def _eager_and_compiled(f, *args):
    """``f`` by the reference semantics and compiled, as NumPy arrays."""
    return [np.asarray(f(*args)), np.asarray(jit(f)(*args))]


def _same(got, want):
    """Equal, NaN where NaN (either part of a complex)."""
    got, want = np.asarray(got), np.asarray(want)
    for part in ((lambda a: a.real), (lambda a: a.imag)) if want.dtype.kind == "c" else (
            lambda a: a,):
        g, w = part(got), part(want)
        if not (np.array_equal(np.isnan(g), np.isnan(w)) and
                np.allclose(g[~np.isnan(w)], w[~np.isnan(w)], rtol=1e-12, atol=0)):
            return False
    return True


def test_fuzzer_findings_complex_log_exp_cbrt_pow_near_overflow():
    """Found by tests/fuzz (6, 13, and seed 5502): compiled log|z| overflowed
    for |z| > max (so cbrt(-M - Mi) was inf + NaN i) and lost log|z| near 1;
    compiled exp multiplied an overflowed e^x into sin y (exp(710 + 1e-300i)
    = inf + inf i); cbrt as exp(log(z) / 3) was 255 ulps off for z = 5e-324.
    XLA rejects complex cbrt (numxla's is the principal root in polar form:
    the exact values, (M / 2)^(1/3) (1 - i) and the real cube root), and its
    pow(z, z) of the last case is inf + NaN i (it flushes the subnormal Im z
    to 0): that expected value is NumPy's."""
    z = np.array([complex(-_M64, -_M64), complex(1, 1e-10), complex(710, 1e-300), 5e-324])
    log_want = [complex(710.1292864836639, -2.356194490192345),
                complex(5.0000000000000005e-21, 1e-10)]
    def f(v):
        return lax.log(v[:2]), lax.exp(v[2:3]), lax.cbrt(v[::3])

    for log, exp, cbrt in ([np.asarray(r) for r in f(z)], [np.asarray(r) for r in jit(f)(z)]):
        np.testing.assert_allclose(log, log_want, rtol=1e-14)
        assert np.isposinf(exp[0].real) and exp[0].imag == pytest.approx(2.2339947661617115e8)
        np.testing.assert_allclose(cbrt, [complex(4.4794894843556084e102, -4.4794894843556084e102),
                                          1.7031839360032603e-108], rtol=1e-15)
    w = np.array([complex(178.67152846528856, -5e-324)])
    for got in _eager_and_compiled(lambda v: lax.pow(v, v), w):
        assert np.isposinf(got[0].real) and got[0].imag == pytest.approx(-5.9010148327261254e79)
    c64 = np.array([complex(-_M32, -_M32)], np.complex64)
    for got in _eager_and_compiled(lax.log, c64):  # XLA: 89.06858, 1e-5 off
        np.testing.assert_allclose(got, [complex(89.06941, -2.3561945)], rtol=1e-6)


def test_fuzzer_findings_complex_products_as_xla():
    """Found by tests/fuzz (9, 7): XLA multiplies complex numbers by the
    textbook formula with fused multiply-adds (re = fma(a, c, -bd), im =
    fma(b, c, ad)): compiled code (no FMA) gave NaN + inf i for a product that
    overflows, the reference (NumPy) other special values; BLAS (alpha scaling)
    turned every infinite complex dot into NaN + NaN i."""
    e = 2.0 ** -30
    x = np.array([complex(_M64, _M64), complex(1 + e, 1 + 2 * e), complex(1 + e, -(1 + 2 * e)),
                  complex(1, np.inf), complex(2, 0)])
    y = np.array([complex(100, 3), complex(1 + e, 1), complex(1, 1 + e), complex(1, 1),
                  complex(np.inf, 0)])
    want = [complex(-np.inf, np.inf), complex(2.0 ** -60, 2.0000000037252903),
            complex(2.0000000037252903, 0.0), complex(-np.inf, np.inf), complex(np.inf, np.nan)]
    for got in _eager_and_compiled(lax.mul, x, y):
        assert _same(got, want), got
    x32 = np.array([complex(_M32, _M32)], np.complex64)
    for got in _eager_and_compiled(lax.mul, x32, np.array([100 + 3j], np.complex64)):
        assert _same(got, [complex(-np.inf, np.inf)])

    outer = (((), ()), ((), ()))
    a = np.array([[[complex(3.5188772678375244, np.inf)]]], np.complex64)
    b = np.array(complex(-7.5, 0), np.complex64)
    for got in _eager_and_compiled(lambda u, v: lax.dot_general(u, v, outer), a, b):
        assert _same(got, [[[complex(np.nan, -np.inf)]]])
    a = np.array([complex(-_M64, -0.9917844899249662)])
    b = np.array([complex(1.7201526432959435, 2.3029410398463526)])
    for got in _eager_and_compiled(lambda u, v: lax.dot_general(u, v, outer), a, b):
        assert _same(got, [[complex(-np.inf, -np.inf)]])
    # a contraction: XLA's vector dot sums its products (inf + NaN i); numxla
    # does so for matrix products too (XLA's Eigen GEMM gives NaN + NaN i there)
    u = np.array([complex(np.inf, 0), 1 + 2j])
    v = np.array([1 + 0j, 3 - 1j])
    for got in _eager_and_compiled(lax.dot, u, v):
        assert _same(got, complex(np.inf, np.nan))
    for got in _eager_and_compiled(lax.dot, np.tile(u, (4, 1)), np.tile(v[:, None], (1, 5))):
        assert _same(got, np.full((4, 5), complex(np.inf, np.nan)))
    # a convolution (XLA's gives inf + NaN i for both: its products differ)
    xc = np.array([[[1, complex(np.inf, 0), 2]]])
    kc = np.array([[[1 + 1j, 2 + 0j]]])
    for got in _eager_and_compiled(lambda p, q: lax.conv_general_dilated(p, q, (1,), "VALID"),
                                   xc, kc):
        assert _same(got, [[[complex(np.inf, np.nan), complex(np.inf, np.inf)]]])


def test_fuzzer_findings_complex_sin_cos_of_infinite_real_parts():
    """Found by tests/fuzz (10): sin(inf - inf i) was NaN - inf i compiled,
    NaN + inf i in NumPy (C99 leaves the sign open); XLA's sin and cos give
    NaN + NaN i wherever Re z is infinite or NaN."""
    z = np.array([complex(np.inf, -np.inf), complex(-np.inf, -np.inf), complex(np.inf, 0),
                  complex(np.nan, 0), complex(0, np.inf), complex(1, 800)], np.complex64)
    nan = complex(np.nan, np.nan)
    for got in _eager_and_compiled(lax.sin, z):
        assert _same(got, [nan, nan, nan, nan, complex(0, np.inf), complex(np.inf, np.inf)])
    for got in _eager_and_compiled(lax.cos, z):
        assert _same(got[:4], [nan] * 4) and _same(got[5:], [complex(np.inf, -np.inf)])


def test_fuzzer_findings_logistic_is_zero_where_exp_overflows():
    """Found by tests/fuzz (11): XLA's logistic is 1 / (1 + exp(-x)), 0 where
    exp(-x) overflows in the element type (f16 rounds its exp to f16);
    compiled code gave the exact subnormal 5.5e-43 for logistic(-97.3).
    Subnormals are IEEE's (XLA:CPU flushes them to zero)."""
    cases = {
        np.float32: ([-97.31053924560547, -88.72283935546875, -88.72283172607422, -87.0],
                     [0.0, 0.0, 2.938758e-39, 1.6458116e-38]),
        np.float64: ([-745.0, -709.7827128933841, -709.782712893384, -700.0],
                     [0.0, 0.0, 5.562684646268137e-309, 9.85967654375977e-305]),
        np.float16: ([-12.0, -11.09375, -11.0859375, -10.0],
                     [0.0, 0.0, 1.5318394e-05, 4.541874e-05]),
    }
    for dtype, (x, want) in cases.items():
        for got in _eager_and_compiled(lax.logistic, np.array(x, dtype)):
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3 if
                                       dtype is np.float16 else 1e-6, atol=0)
    bf = bf16_array(np.array([-89.0, -88.5], np.float32))
    for got in _eager_and_compiled(lax.logistic, bf):
        values = bf16_to_f32(got)
        assert values[0] == 0 and 3e-39 < values[1] < 4e-39
