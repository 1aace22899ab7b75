"""Derivatives and batching of the element-wise ops.

Derivatives are checked against finite differences (``check_grads``, order
2 in float64, complex64/128 for the complex ops) on inputs inside each op's
domain and away from kinks; JAX's conventions at kinks and ties (max/min
split on ties, abs' derivative +1 at 0, pow at x = 0 or y = 0, zero
derivatives of floor/ceil/round/sign) against hand-computed numbers; vmap
against stacking per-slice results, for every primitive.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from numxla import autodiff
import numxla.primitives as lax
from tests.autodiff.util import check_vmap
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import bf16_to_f32

B = 3  # batch size of the vmap tests


def _rng(*key):
    """A generator seeded by ``key`` (strings by their CRC: stable across runs)."""
    return np.random.default_rng([zlib.crc32(str(k).encode()) for k in key])


def _uniform(rng, shape, lo, hi, dtype=np.float64):
    return np.asarray(rng.uniform(lo, hi, shape), dtype)


def _away_from_integers(rng, shape, lo, hi):
    """Values whose fractional part is in [0.2, 0.8] (no jumps of floor/round nearby)."""
    return np.floor(rng.uniform(lo, hi, shape)) + rng.uniform(0.2, 0.8, shape)


def _complex(rng, shape, lo, hi, im=1.0, dtype=np.complex128):
    return np.asarray(rng.uniform(lo, hi, shape) + 1j * rng.uniform(-im, im, shape), dtype)


SHAPES = [(), (4,), (2, 3)]

# -- unary ops, real -----------------------------------------------------------------
# op -> (function, domain low, domain high)
UNARY_REAL = {
    "neg": (lax.neg, -2, 2),
    "sin": (lax.sin, -3, 3),
    "cos": (lax.cos, -3, 3),
    "tan": (lax.tan, -1.2, 1.2),
    "tanh": (lax.tanh, -2, 2),
    "exp": (lax.exp, -2, 2),
    "expm1": (lax.expm1, -2, 2),
    "log": (lax.log, 0.3, 3),
    "log1p": (lax.log1p, -0.6, 3),
    "logistic": (lax.logistic, -4, 4),
    "sqrt": (lax.sqrt, 0.3, 3),
    "rsqrt": (lax.rsqrt, 0.3, 3),
    "cbrt": (lax.cbrt, 0.3, 3),
    "erf": (lax.erf, -2, 2),
    "abs_positive": (lax.abs, 0.2, 3),
    "abs_negative": (lax.abs, -3, -0.2),
    "real": (lax.real, -2, 2),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY_REAL))
def test_unary_real_grads(name, shape):
    fn, lo, hi = UNARY_REAL[name]
    x = _uniform(_rng(name, len(shape)), shape, lo, hi)
    autodiff.check_grads(fn, (x,), order=2, modes=("fwd", "rev"))


def test_cbrt_of_negative_values():
    x = _uniform(_rng("cbrt-"), (5,), -3, -0.3)
    autodiff.check_grads(lax.cbrt, (x,), order=2)


# -- unary ops, complex --------------------------------------------------------------------
UNARY_COMPLEX = {
    "neg": lax.neg, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "tanh": lax.tanh,
    "exp": lax.exp, "expm1": lax.expm1, "log": lax.log, "log1p": lax.log1p,
    "logistic": lax.logistic, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "cbrt": lax.cbrt,
    "abs": lax.abs, "real": lax.real, "imag": lax.imag,
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", sorted(UNARY_COMPLEX))
def test_unary_complex_grads(name, dtype):
    # real parts in [0.5, 1.5]: away from the branch cuts of log, sqrt, cbrt
    x = _complex(_rng(name, np.dtype(dtype).itemsize), (2, 2), 0.5, 1.5, im=0.8, dtype=dtype)
    autodiff.check_grads(UNARY_COMPLEX[name], (x,), order=2, modes=("fwd", "rev"))


def test_abs_of_complex_is_real_with_the_unit_vector_as_derivative():
    z = np.array([3 + 4j, -1 + 0j, 0j])
    t = np.array([1 + 2j, 1j, 1 + 1j])
    out, t_out = autodiff.jvp(lax.abs, (z,), (t,))
    assert t_out.dtype == np.float64
    # Re(conj(z) t) / |z|, with |z| = 0 read as 1
    np.testing.assert_allclose(t_out, [(3 * 1 + 4 * 2) / 5, 0.0, 0.0])
    (ct,) = autodiff.vjp(lax.abs, z)[1](np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(ct, [(3 - 4j) / 5, -2 + 0j, 0j])


def test_real_imag_complex_cotangents():
    z = np.array([1 + 2j, -3 + 0.5j])
    ct = np.array([2.0, -1.0])
    np.testing.assert_allclose(autodiff.vjp(lax.real, z)[1](ct)[0], [2 + 0j, -1 + 0j])
    np.testing.assert_allclose(autodiff.vjp(lax.imag, z)[1](ct)[0], [-2j, 1j])
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    cx, cy = autodiff.vjp(lax.complex, x, y)[1](np.array([1 + 2j, 3 - 1j]))
    np.testing.assert_allclose(cx, [1.0, 3.0])
    np.testing.assert_allclose(cy, [-2.0, 1.0])


def test_imag_of_a_real_value_has_zero_derivative():
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(autodiff.jvp(lax.imag, (x,), (np.ones(2),))[1], [0.0, 0.0])
    np.testing.assert_array_equal(
        autodiff.grad(lambda x: lax.reduce_sum(lax.imag(x), (0,)))(x), [0.0, 0.0])


# -- binary ops, real ---------------------------------------------------------------------

def _pair(rng, shape, lo, hi, lo2=None, hi2=None):
    return _uniform(rng, shape, lo, hi), _uniform(rng, shape, lo if lo2 is None else lo2,
                                                  hi if hi2 is None else hi2)


def _max_min_args(rng, shape):
    x = _uniform(rng, shape, -2, 2)
    gap = rng.uniform(0.2, 1.0, shape) * rng.choice([-1, 1], shape)
    return x, x + gap                       # never tied


def _rem_args(rng, shape):
    y = _uniform(rng, shape, 0.5, 2) * rng.choice([-1, 1], shape)
    q = _away_from_integers(rng, shape, -3, 3)   # x / y away from integers: no jumps
    return q * y, y


BINARY_REAL = {
    "add": (lax.add, lambda r, s: _pair(r, s, -2, 2)),
    "sub": (lax.sub, lambda r, s: _pair(r, s, -2, 2)),
    "mul": (lax.mul, lambda r, s: _pair(r, s, -2, 2)),
    "div": (lax.div, lambda r, s: _pair(r, s, -2, 2, 0.5, 2)),
    "rem": (lax.rem, _rem_args),
    "pow": (lax.pow, lambda r, s: _pair(r, s, 0.3, 2, -2, 2)),
    "max": (lax.max, _max_min_args),
    "min": (lax.min, _max_min_args),
    "atan2": (lax.atan2, lambda r, s: _pair(r, s, -2, 2, 0.3, 2)),
    "atan2_negative_y": (lax.atan2, lambda r, s: _pair(r, s, 0.3, 2, -2, -0.3)),
    "complex": (lax.complex, lambda r, s: _pair(r, s, -2, 2)),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY_REAL))
def test_binary_real_grads(name, shape):
    fn, make = BINARY_REAL[name]
    args = make(_rng(name, len(shape)), shape)
    autodiff.check_grads(fn, args, order=2, modes=("fwd", "rev"))


# -- binary ops, complex --------------------------------------------------------------------
BINARY_COMPLEX = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div,
                  "pow": lax.pow, "atan2": lax.atan2}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", sorted(BINARY_COMPLEX))
def test_binary_complex_grads(name, dtype):
    rng = _rng(name, np.dtype(dtype).itemsize)
    x = _complex(rng, (3,), 0.5, 1.5, im=0.5, dtype=dtype)
    y = _complex(rng, (3,), 0.5, 1.5, im=0.5, dtype=dtype)
    autodiff.check_grads(BINARY_COMPLEX[name], (x, y), order=2, modes=("fwd", "rev"))


# -- JAX's conventions at kinks and ties -------------------------------------------------------

def test_max_min_split_the_derivative_on_ties():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 0.0])
    for fn, gx, gy in ((lax.max, [0.5, 0.0, 1.0], [0.5, 1.0, 0.0]),
                       (lax.min, [0.5, 1.0, 0.0], [0.5, 0.0, 1.0])):
        got = autodiff.grad(lambda a, b: lax.reduce_sum(fn(a, b), (0,)), argnums=(0, 1))(x, y)
        np.testing.assert_array_equal(got[0], gx)
        np.testing.assert_array_equal(got[1], gy)
        tx, ty = np.array([1.0, 1.0, 1.0]), np.array([3.0, 3.0, 3.0])
        t_out = autodiff.jvp(fn, (x, y), (tx, ty))[1]
        np.testing.assert_array_equal(t_out, np.multiply(gx, 1.0) + np.multiply(gy, 3.0))
    # max(x, x) = x: the halves add up to 1
    np.testing.assert_array_equal(
        autodiff.grad(lambda a: lax.reduce_sum(lax.max(a, a), (0,)))(x), [1.0, 1.0, 1.0])


def test_abs_derivative_is_one_at_zero():
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(
        autodiff.grad(lambda a: lax.reduce_sum(lax.abs(a), (0,)))(x), [-1.0, 1.0, 1.0])


def test_pow_at_zero_base_and_zero_exponent():
    x = np.array([0.0, 0.0, 2.0, -2.0])
    y = np.array([0.0, 2.0, 0.0, 2.0])
    gx, gy = autodiff.grad(lambda a, b: lax.reduce_sum(lax.pow(a, b), (0,)),
                           argnums=(0, 1))(x, y)
    # d/dx = y x^(y-1), 0 where y = 0; d/dy = log(x) x^y, 0 where x = 0 (NaN for x < 0)
    np.testing.assert_array_equal(gx, [0.0, 0.0, 0.0, -4.0])
    np.testing.assert_array_equal(gy[:3], [0.0, 0.0, np.log(2.0)])
    assert np.isnan(gy[3])


@pytest.mark.parametrize("fn", [lax.floor, lax.ceil, lax.round, lax.round_nearest_even,
                                lax.sign], ids=lambda f: f.__name__)
def test_piecewise_constant_ops_have_zero_derivatives(fn):
    x = _away_from_integers(_rng("zero"), (2, 3), -3, 3)
    t = np.ones_like(x)
    np.testing.assert_array_equal(autodiff.jvp(fn, (x,), (t,))[1], np.zeros_like(x))
    g = autodiff.grad(lambda a: lax.reduce_sum(lax.mul(fn(a), a), (0, 1)))(x)
    np.testing.assert_array_equal(g, fn(x))          # only the factor a is differentiated
    autodiff.check_grads(lambda a: lax.mul(fn(a), lax.sin(a)), (x,), order=2)


def test_sign_of_complex_has_zero_derivative():
    z = np.array([1 + 1j, -2 + 0.5j])
    np.testing.assert_array_equal(autodiff.jvp(lax.sign, (z,), (np.ones(2, complex),))[1],
                                  np.zeros(2, complex))


def test_rem_partials_by_hand():
    x, y = np.array([7.5, -7.5, 2.0]), np.array([2.0, 2.0, -0.75])
    gx, gy = autodiff.grad(lambda a, b: lax.reduce_sum(lax.rem(a, b), (0,)),
                           argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gy, [-3.0, 3.0, 2.0])   # -trunc(x / y)


# -- clamp, select, conversions, reduce_precision ----------------------------------------------

def _clamp_args(rng, shape, scalar_bounds):
    lo, hi = (np.float64(-0.5), np.float64(0.7)) if scalar_bounds else (
        _uniform(rng, shape, -1, -0.3), _uniform(rng, shape, 0.3, 1))
    x = _uniform(rng, shape, -2, 2)
    # no ties: keep x at least 0.1 away from both bounds
    x = np.where(np.abs(x - lo) < 0.1, x + 0.25, x)
    x = np.where(np.abs(x - hi) < 0.1, x + 0.25, x)
    return lo, x, hi


@pytest.mark.parametrize("scalar_bounds", [False, True])
@pytest.mark.parametrize("shape", [(5,), (3, 4)], ids=str)
def test_clamp_grads(shape, scalar_bounds):
    args = _clamp_args(_rng("clamp", len(shape), scalar_bounds), shape, scalar_bounds)
    autodiff.check_grads(lax.clamp, args, order=2, modes=("fwd", "rev"))


def test_clamp_derivative_goes_to_the_active_bound():
    lo, x, hi = np.float64(-1.0), np.array([-3.0, 0.5, 4.0]), np.float64(2.0)
    g = autodiff.grad(lambda *a: lax.reduce_sum(lax.clamp(*a), (0,)), argnums=(0, 1, 2))(
        lo, x, hi)
    assert g[0] == 1.0 and g[2] == 1.0 and g[0].shape == () and g[2].shape == ()
    np.testing.assert_array_equal(g[1], [0.0, 1.0, 0.0])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_select_grads(shape):
    rng = _rng("select", len(shape))
    pred = rng.random(shape) < 0.5
    x, y = _pair(rng, shape, -2, 2)
    autodiff.check_grads(lambda a, b: lax.mul(lax.select(pred, a, b), lax.sin(b)), (x, y),
                         order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("src,dst", [(np.float32, np.float64), (np.float64, np.float32),
                                     (np.float64, np.complex128),
                                     (np.complex128, np.float64),
                                     (np.complex64, np.complex128)],
                         ids=lambda t: np.dtype(t).name)
def test_convert_element_type_grads(src, dst):
    rng = _rng("convert", np.dtype(src).name, np.dtype(dst).name)
    x = (_complex(rng, (4,), -1, 1, dtype=src) if np.issubdtype(src, np.complexfloating)
         else _uniform(rng, (4,), -1, 1, src))
    # sin keeps the second derivative nonzero; computed in the wider type
    autodiff.check_grads(lambda a: lax.sin(lax.convert_element_type(a, dst)), (x,), order=2,
                         modes=("fwd", "rev"), atol=3e-2 if np.float32 in (src, dst) else None,
                         rtol=3e-2 if np.float32 in (src, dst) else None)


def test_convert_to_integer_has_zero_tangent():
    x = np.array([1.5, -2.5])
    _, t = autodiff.jvp(lambda a: lax.convert_element_type(a, np.int32), (x,), (np.ones(2),))
    assert t.dtype == autodiff.float0
    g = autodiff.grad(lambda a: lax.reduce_sum(
        lax.mul(lax.convert_element_type(lax.convert_element_type(a, np.int32), np.float64), a),
        (0,)))(x)
    np.testing.assert_array_equal(g, [1.0, -2.0])


def test_reduce_precision_grads():
    x = _uniform(_rng("rp"), (2, 3), -2, 2)
    # f64's own format: the identity, so finite differences are exact enough
    autodiff.check_grads(lambda a: lax.mul(lax.reduce_precision(a, 11, 52), a), (x,), order=2)
    # to f32's format the tangent and cotangent are rounded like the value (JAX)
    t = np.array([1 + 2.0 ** -30, 1 / 3, -0.1])
    want = t.astype(np.float32).astype(np.float64)
    f = lambda a: lax.reduce_precision(a, 8, 23)  # noqa: E731
    np.testing.assert_array_equal(autodiff.jvp(f, (np.ones(3),), (t,))[1], want)
    np.testing.assert_array_equal(autodiff.vjp(f, np.ones(3))[1](t)[0], want)


def test_non_differentiable_ops_pass_no_derivative():
    x = np.array([-1.5, 0.5, np.inf, 2.0])

    def f(a):
        finite = lax.is_finite(a)
        masked = lax.select(finite, a, np.zeros(a.shape))
        step = lax.convert_element_type(lax.lt(masked, 0.0), np.float64)
        bits = lax.bitcast_convert_type(lax.shift_right_logical(
            lax.bitcast_convert_type(masked, np.int64), np.int64(1)), np.float64)
        return lax.reduce_sum(lax.add(lax.mul(masked, lax.add(step, masked)),
                                      lax.select(finite, bits, masked)), (0,))

    g = autodiff.grad(f)(x)
    # d/da [a * (step + a)] = step + 2a where finite; the bit-level term has no derivative
    np.testing.assert_array_equal(g[[0, 1, 3]], [1.0 - 3.0, 1.0, 4.0])
    t = autodiff.jvp(f, (x[[0, 1, 3]],), (np.ones(3),))[1]
    assert t == -2.0 + 1.0 + 4.0


# -- integers and weak types --------------------------------------------------------------

def test_grad_of_an_integer_input_is_a_float0_zero():
    x, n = np.array([1.0, 2.0]), np.array([3, 4], np.int32)
    gx, gn = autodiff.grad(
        lambda a, k: lax.reduce_sum(lax.mul(a, lax.convert_element_type(k, np.float64)), (0,)),
        argnums=(0, 1), allow_int=True)(x, n)
    np.testing.assert_array_equal(gx, [3.0, 4.0])
    assert gn.dtype == autodiff.float0 and gn.shape == (2,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [lambda a: lax.mul(a, 2.0), lambda a: lax.pow(a, 3.0),
                                lambda a: lax.max(a, 0.5), lambda a: lax.atan2(1.5, a),
                                lambda a: lax.div(1.0, a), lambda a: lax.clamp(0.0, a, 1.0)],
                         ids=["mul", "pow", "max", "atan2", "div", "clamp"])
def test_python_scalar_operands_keep_the_gradient_dtype(fn, dtype):
    x = np.asarray(0.75, dtype)
    g = autodiff.grad(fn)(x)
    assert np.asarray(g).dtype == dtype
    gg = autodiff.grad(autodiff.grad(fn))(x)
    assert np.asarray(gg).dtype == dtype


def test_bf16_derivatives_and_vmap_match_f32():
    """The rules' constants and masks take bf16 values (not uint16 words)."""
    def f(v, w, lo, hi):
        return lax.reduce_sum(lax.add(lax.mul(lax.abs(v), lax.max(v, w)), lax.clamp(lo, v, hi)),
                              (0,))
    x = np.array([-2.0, 0.5, 1.0, 3.0, 0.0], np.float32)   # a tie with w, a kink at 0
    t = np.array([1.0, -2.0, 0.5, 1.0, 4.0], np.float32)
    w, lo, hi = np.ones(5, np.float32), np.float32(-1.0), np.float32(2.0)
    xb, tb, wb, lob, hib = (bf16_array(a) for a in (x, t, w, lo, hi))

    def check(got, want):
        np.testing.assert_array_equal(bf16_to_f32(np.asarray(got)), want)
    for g, want in zip(autodiff.grad(f, (0, 1))(xb, wb, lob, hib),
                       autodiff.grad(f, (0, 1))(x, w, lo, hi)):
        check(g, want)
    check(autodiff.jvp(lambda v, u: f(v, u, lob, hib), (xb, wb), (tb, tb))[1],
          autodiff.jvp(lambda v, u: f(v, u, lo, hi), (x, w), (t, t))[1])
    per_row = autodiff.vmap(autodiff.grad(f), in_axes=(0, None, None, None))
    check(per_row(bf16_array(np.stack([x, t])), wb, lob, hib), per_row(np.stack([x, t]), w, lo, hi))


def test_jit_of_grad():
    from numxla.compile import jit
    f = lambda a, b: lax.reduce_sum(lax.mul(lax.pow(a, b), lax.tanh(a)), (0,))  # noqa: E731
    x, y = np.array([0.5, 1.5, 2.0]), np.array([1.0, -0.5, 2.0])
    got = jit(autodiff.grad(f, argnums=(0, 1)))(x, y)
    want = autodiff.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


# -- vmap ------------------------------------------------------------------------------

AXES = [(0, 0), (1, 0), (0, None), (None, 1), (1, 1)]


def _batched(make, rng, base_shape, axis):
    """``make(rng, shape)`` with a batch of B inserted at ``axis`` (none for None)."""
    if axis is None:
        return make(rng, base_shape)
    shape = list(base_shape)
    shape.insert(axis, B)
    return make(rng, tuple(shape))


_REAL = lambda r, s: _uniform(r, s, 0.2, 2)  # noqa: E731
_SYM = lambda r, s: _uniform(r, s, -3, 3)  # noqa: E731
_CPLX = lambda r, s: _complex(r, s, 0.2, 2)  # noqa: E731
_SMALL = lambda r, s: r.integers(-3, 6, s).astype(np.int32)  # noqa: E731
_I32 = lambda r, s: r.integers(-1000, 1000, s).astype(np.int32)  # noqa: E731
_U8 = lambda r, s: r.integers(0, 256, s).astype(np.uint8)  # noqa: E731
_SHIFT = lambda r, s: r.integers(0, 40, s).astype(np.int32)  # noqa: E731
_BOOL = lambda r, s: r.random(s) < 0.5  # noqa: E731

VMAP_UNARY = {
    "neg": (lax.neg, _REAL), "abs": (lax.abs, _CPLX), "abs_int": (lax.abs, _I32),
    "sign": (lax.sign, _SYM), "ceil": (lax.ceil, _SYM), "floor": (lax.floor, _SYM),
    "cbrt": (lax.cbrt, _SYM),
    "cos": (lax.cos, _REAL), "sin": (lax.sin, _CPLX), "tan": (lax.tan, _REAL),
    "tanh": (lax.tanh, _REAL), "erf": (lax.erf, _REAL), "exp": (lax.exp, _REAL),
    "expm1": (lax.expm1, _REAL), "log": (lax.log, _REAL), "log1p": (lax.log1p, _REAL),
    "logistic": (lax.logistic, _REAL), "sqrt": (lax.sqrt, _REAL), "rsqrt": (lax.rsqrt, _REAL),
    "is_finite": (lax.is_finite, _REAL), "real": (lax.real, _CPLX), "imag": (lax.imag, _CPLX),
    "not": (lax.not_, _I32), "not_pred": (lax.not_, _BOOL),
    "round": (lax.round, _SYM), "round_even": (lax.round_nearest_even, _SYM),
    "population_count": (lax.population_count, _I32), "clz": (lax.clz, _U8),
    "reduce_precision": (lambda a: lax.reduce_precision(a, 5, 10), _REAL),
    "convert": (lambda a: lax.convert_element_type(a, np.int32), _REAL),
    "bitcast_same_width": (lambda a: lax.bitcast_convert_type(a, np.int64), _REAL),
    "bitcast_narrowing": (lambda a: lax.bitcast_convert_type(a, np.uint16), _REAL),
}


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("name", sorted(VMAP_UNARY))
def test_vmap_unary(name, axis):
    fn, make = VMAP_UNARY[name]
    x = _batched(make, _rng("vu", name), (2, 4), axis)
    check_vmap(fn, (x,), in_axes=(axis,))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_bitcast_widening(axis):
    # u8 -> f32 drops a last dimension of 4; axis 2 batches that last position
    x = _batched(lambda r, s: r.integers(0, 64, s).astype(np.uint8), _rng("bw"), (2, 4), axis)
    check_vmap(lambda a: lax.bitcast_convert_type(a, np.float32), (x,), in_axes=(axis,),
               out_axes=0)


VMAP_BINARY = {
    "add": (lax.add, _REAL, _REAL), "add_pred": (lax.add, _BOOL, _BOOL),
    "sub": (lax.sub, _CPLX, _CPLX), "mul": (lax.mul, _I32, _I32), "div": (lax.div, _REAL, _REAL),
    "div_int": (lax.div, _I32, _I32), "rem": (lax.rem, _SYM, _REAL),
    "rem_int": (lax.rem, _I32, _SMALL), "pow": (lax.pow, _REAL, _REAL),
    "pow_int": (lax.pow, _SMALL, _SMALL), "max": (lax.max, _REAL, _REAL),
    "min": (lax.min, _I32, _I32), "atan2": (lax.atan2, _REAL, _REAL),
    "complex": (lax.complex, _REAL, _REAL), "and": (lax.bitwise_and, _I32, _I32),
    "or": (lax.bitwise_or, _BOOL, _BOOL), "xor": (lax.bitwise_xor, _I32, _I32),
    "shift_left": (lax.shift_left, _I32, _SHIFT),
    "shift_right_arithmetic": (lax.shift_right_arithmetic, _I32, _SHIFT),
    "shift_right_logical": (lax.shift_right_logical, _I32, _SHIFT),
    "lt": (lax.lt, _REAL, _REAL), "eq_total_order": (lax.eq_total_order, _CPLX, _CPLX),
}


@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("name", sorted(VMAP_BINARY))
def test_vmap_binary(name, axes):
    fn, make_x, make_y = VMAP_BINARY[name]
    rng = _rng("vb", name)
    x = _batched(make_x, rng, (2, 4), axes[0])
    y = _batched(make_y, rng, (2, 4), axes[1])
    check_vmap(fn, (x, y), in_axes=axes)


SELECT_AXES = [(0, 0, 0), (None, 1, 0), (0, None, None), (1, None, 1), (None, None, 2)]


@pytest.mark.parametrize("axes", SELECT_AXES, ids=str)
def test_vmap_select(axes):
    rng = _rng("vs")
    pred = _batched(_BOOL, rng, (2, 4), axes[0])
    x, y = (_batched(_REAL, rng, (2, 4), a) for a in axes[1:])
    check_vmap(lax.select, (pred, x, y), in_axes=axes)


@pytest.mark.parametrize("axes", [(None, 0, 0), (0, None, 1), (0, 0, None)], ids=str)
def test_vmap_select_with_scalar_pred(axes):
    rng = _rng("vss")
    pred = _batched(_BOOL, rng, (), axes[0])
    x, y = (_batched(_REAL, rng, (2, 4), a) for a in axes[1:])
    check_vmap(lax.select, (pred, x, y), in_axes=axes)


@pytest.mark.parametrize("axes", [(None, 0, None), (None, 1, 0), (0, None, None),
                                  (0, 1, 0), (None, None, 0)], ids=str)
def test_vmap_clamp_with_scalar_bounds(axes):
    rng = _rng("vc")
    lo = _batched(lambda r, s: _uniform(r, s, -1, -0.2), rng, (), axes[0])
    x = _batched(lambda r, s: _uniform(r, s, -2, 2), rng, (2, 4), axes[1])
    hi = _batched(lambda r, s: _uniform(r, s, 0.2, 1), rng, (), axes[2])
    check_vmap(lax.clamp, (lo, x, hi), in_axes=axes)


@pytest.mark.parametrize("axes", [(0, 0, 0), (1, None, 0), (None, 1, None)], ids=str)
def test_vmap_clamp_with_full_bounds(axes):
    rng = _rng("vcf")
    lo = _batched(lambda r, s: _uniform(r, s, -1, -0.2), rng, (2, 4), axes[0])
    x = _batched(lambda r, s: _uniform(r, s, -2, 2), rng, (2, 4), axes[1])
    hi = _batched(lambda r, s: _uniform(r, s, 0.2, 1), rng, (2, 4), axes[2])
    check_vmap(lax.clamp, (lo, x, hi), in_axes=axes)


def test_vmap_of_grad_and_grad_of_vmap():
    x = _uniform(_rng("vg"), (B, 4), 0.3, 2)
    f = lambda a: lax.reduce_sum(lax.mul(lax.log(a), lax.max(a, 1.0)), (0,))  # noqa: E731
    check_vmap(autodiff.grad(f), (x,), in_axes=(0,))
    g = autodiff.grad(lambda a: lax.reduce_sum(autodiff.vmap(f, in_axes=1)(a), (0,)))(x.T)
    np.testing.assert_allclose(g, autodiff.vmap(autodiff.grad(f))(x).T, rtol=1e-12)
