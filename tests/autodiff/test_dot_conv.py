"""Derivatives and batching of dot_general and conv_general_dilated.

Derivatives are checked against finite differences (``check_grads``, order
2, float64), batching against stacked per-slice results (``check_vmap``),
result types against NumPy formulas.
"""
import numpy as np
import pytest

from numxla import autodiff
import numxla.primitives as lax
from tests.autodiff.util import check_vmap
from numxla.tracer import PrimitiveType


def _rand(rng, shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------
# dot_general
# --------------------------------------------------------------------------

# (lhs shape, rhs shape, dimension_numbers)
DOT_CASES = [
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),                      # matrix-vector
    ((4,), (4, 3), (((0,), (0,)), ((), ()))),                      # vector-matrix
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),                    # matmul
    ((3, 2, 4), (4, 2, 5), (((2,), (0,)), ((1,), (1,)))),          # batched, batch in the middle
    ((2, 3, 4), (4, 5, 3), (((1, 2), (2, 0)), ((), ()))),          # two contractions, crossed
    ((2, 3, 4, 2), (3, 2, 4, 5), (((2,), (2,)), ((0, 1), (1, 0)))),  # two batch dims, crossed
    ((3,), (2,), (((), ()), ((), ()))),                            # outer product
    ((2, 3), (3, 2), (((0, 1), (1, 0)), ((), ()))),                # full contraction: a scalar
]


def _dot(dn, **kw):
    return lambda x, y: lax.dot_general(x, y, dn, **kw)


@pytest.mark.parametrize("ls,rs,dn", DOT_CASES)
def test_dot_general_grads(ls, rs, dn):
    rng = np.random.default_rng(len(ls) * 10 + len(rs))
    autodiff.check_grads(_dot(dn), (_rand(rng, ls), _rand(rng, rs)), order=2,
                         modes=("fwd", "rev"))


def test_dot_general_grad_one_operand():
    rng = np.random.default_rng(1)
    x, y = _rand(rng, (3, 4)), _rand(rng, (4, 2))
    dn = (((1,), (0,)), ((), ()))
    gx = autodiff.grad(lambda a: lax.reduce_sum(lax.dot_general(a, y, dn), (0, 1)))(x)
    gy = autodiff.grad(lambda b: lax.reduce_sum(lax.dot_general(x, b, dn), (0, 1)))(y)
    np.testing.assert_allclose(gx, np.ones((3, 2)) @ y.T)
    np.testing.assert_allclose(gy, x.T @ np.ones((3, 2)))


def test_dot_general_preferred_element_type():
    """f32 operands, f64 result: the tangent is f64, cotangents are f32, the
    precision and result type of the forward op are kept."""
    rng = np.random.default_rng(2)
    x, y = _rand(rng, (3, 4), np.float32), _rand(rng, (4, 2), np.float32)
    f = _dot((((1,), (0,)), ((), ())), precision="highest", preferred_element_type=np.float64)
    out, t = autodiff.jvp(f, (x, y), (x, y))
    assert np.asarray(out).dtype == np.float64 and np.asarray(t).dtype == np.float64
    np.testing.assert_allclose(t, 2 * (x.astype(np.float64) @ y), rtol=1e-6)
    u = rng.standard_normal((3, 2))
    _, vjp_fn = autodiff.vjp(f, x, y)
    gx, gy = vjp_fn(u)
    assert np.asarray(gx).dtype == np.float32 and np.asarray(gy).dtype == np.float32
    np.testing.assert_allclose(gx, u @ y.T, rtol=1e-5)
    np.testing.assert_allclose(gy, x.T @ u, rtol=1e-5)
    gx2 = autodiff.vmap(lambda uu: vjp_fn(uu)[0])(np.stack([u, 2 * u]))
    np.testing.assert_allclose(gx2[1], 2 * (u @ y.T), rtol=1e-5)


# (lhs shape, rhs shape, dimension_numbers, in_axes, batch size)
DOT_VMAP_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), (0, None)),
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), (2, None)),
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), (None, 1)),
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), (None, 0)),
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), (1, 2)),
    ((3, 2, 4), (4, 2, 5), (((2,), (0,)), ((1,), (1,))), (0, 3)),
    ((3, 2, 4), (4, 2, 5), (((2,), (0,)), ((1,), (1,))), (3, None)),
    ((3, 2, 4), (4, 2, 5), (((2,), (0,)), ((1,), (1,))), (None, 1)),
    ((2, 3, 4), (4, 5, 3), (((1, 2), (2, 0)), ((), ())), (1, 1)),
    ((4,), (4,), (((0,), (0,)), ((), ())), (1, None)),
    ((4,), (4,), (((0,), (0,)), ((), ())), (0, 1)),
]


def _batched(rng, shape, axis, size=3):
    if axis is None:
        return _rand(rng, shape)
    shape = list(shape)
    shape.insert(axis, size)
    return _rand(rng, shape)


@pytest.mark.parametrize("ls,rs,dn,in_axes", DOT_VMAP_CASES)
def test_dot_general_vmap(ls, rs, dn, in_axes):
    rng = np.random.default_rng(3)
    args = (_batched(rng, ls, in_axes[0]), _batched(rng, rs, in_axes[1]))
    check_vmap(_dot(dn), args, in_axes)


def test_dot_general_vmap_of_vmap():
    rng = np.random.default_rng(4)
    x, y = _rand(rng, (2, 3, 4)), _rand(rng, (4, 5, 2))
    f = autodiff.vmap(_dot((((1,), (0,)), ((), ()))), in_axes=(0, 2))
    check_vmap(f, (_rand(rng, (3, 2, 3, 4)), y), (0, None))
    check_vmap(f, (x, _rand(rng, (4, 5, 3, 2))), (None, 2))


# --------------------------------------------------------------------------
# conv_general_dilated
# --------------------------------------------------------------------------

# (lhs shape, rhs shape, keyword arguments)
CONV_CASES = [
    # 1-D, NCH / OIH, strides and asymmetric padding
    ((2, 3, 7), (2, 3, 3), dict(window_strides=(2,), padding=((1, 2),))),
    # 1-D, negative padding, lhs and rhs dilation
    ((1, 2, 6), (3, 2, 2), dict(window_strides=(1,), padding=((-1, 2),), lhs_dilation=(2,),
                                rhs_dilation=(2,))),
    # 2-D NCHW, strides, asymmetric padding, rhs dilation, feature groups
    ((1, 4, 5, 5), (4, 2, 2, 3), dict(window_strides=(2, 1), padding=((1, 0), (0, 2)),
                                      rhs_dilation=(1, 2), feature_group_count=2)),
    # 2-D NHWC / HWIO, lhs dilation, three feature groups
    ((2, 4, 3, 3), (2, 2, 1, 6), dict(window_strides=(1, 2), padding=((0, 1), (1, -1)),
                                      lhs_dilation=(2, 1),
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                      feature_group_count=3)),
    # 2-D NCHW, batch groups, strides
    ((4, 2, 5, 4), (6, 2, 3, 2), dict(window_strides=(2, 1), padding=((1, 1), (0, 0)),
                                      batch_group_count=2)),
    # 1-D mixed layouts, batch groups, every knob
    ((3, 5, 2), (2, 2, 3), dict(window_strides=(2,), padding=((2, -1),), lhs_dilation=(2,),
                                rhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NCW"),
                                batch_group_count=3)),
    # 2-D SAME padding, NHWC
    ((1, 4, 4, 2), (3, 3, 2, 2), dict(window_strides=(2, 2), padding="SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
]


def _conv(kw):
    return lambda x, k: lax.conv_general_dilated(x, k, **kw)


@pytest.mark.parametrize("ls,rs,kw", CONV_CASES)
def test_conv_grads(ls, rs, kw):
    rng = np.random.default_rng(len(ls) + sum(ls))
    autodiff.check_grads(_conv(kw), (_rand(rng, ls), _rand(rng, rs)), order=2,
                         modes=("fwd", "rev"))


@pytest.mark.parametrize("op", ["dot_general", "conv_general_dilated"])
def test_complex_grads(op):
    rng = np.random.default_rng(11)
    c = lambda shape: _rand(rng, shape) + 1j * _rand(rng, shape)
    if op == "dot_general":
        f, args = _dot((((2,), (1,)), ((0,), (0,)))), (c((2, 3, 4)), c((2, 4, 2)))
    else:
        f = _conv(dict(window_strides=(2,), padding=((1, 0),), feature_group_count=2))
        args = (c((2, 4, 5)), c((4, 2, 2)))
    autodiff.check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_conv_grad_matches_formula():
    """Stride-1 VALID 1-D conv: d sum(out) / d x and d sum(out) / d k by hand."""
    rng = np.random.default_rng(5)
    x, k = _rand(rng, (1, 1, 6)), _rand(rng, (1, 1, 3))
    f = lambda a, b: lax.reduce_sum(lax.conv_general_dilated(a, b, (1,), "VALID"), (0, 1, 2))
    gx, gk = autodiff.grad(f, argnums=(0, 1))(x, k)
    want_x = np.convolve(np.ones(4), k[0, 0, :])        # each x[i] meets the taps covering it
    want_k = np.array([x[0, 0, j:j + 4].sum() for j in range(3)])
    np.testing.assert_allclose(gx[0, 0], want_x)
    np.testing.assert_allclose(gk[0, 0], want_k)


def test_conv_preferred_element_type():
    rng = np.random.default_rng(6)
    x, k = _rand(rng, (1, 2, 5), np.float32), _rand(rng, (3, 2, 2), np.float32)
    f = lambda a, b: lax.conv_general_dilated(a, b, (1,), ((0, 0),), precision="highest",
                                              preferred_element_type=np.float64)
    out, t = autodiff.jvp(f, (x, k), (x, np.zeros_like(k)))
    assert np.asarray(t).dtype == np.float64
    np.testing.assert_allclose(t, out, rtol=1e-6)
    _, vjp_fn = autodiff.vjp(f, x, k)
    gx, gk = vjp_fn(np.ones((1, 3, 4)))
    assert np.asarray(gx).dtype == np.float32 and np.asarray(gk).dtype == np.float32
    np.testing.assert_allclose(gk[:, :, 0], np.broadcast_to(x[0, :, :4].sum(-1), (3, 2)),
                               rtol=1e-5)


# (lhs shape, rhs shape, keyword arguments, in_axes)
_NHWC = ("NHWC", "HWIO", "NHWC")
CONV_VMAP_CASES = [
    ((2, 3, 6), (4, 3, 2), dict(window_strides=(2,), padding=((1, 0),)), (0, None)),
    ((2, 3, 6), (4, 3, 2), dict(window_strides=(2,), padding=((1, 0),)), (None, 2)),
    ((2, 3, 6), (4, 3, 2), dict(window_strides=(2,), padding=((1, 0),)), (3, 1)),
    ((1, 4, 4, 4), (2, 2, 2, 4), dict(window_strides=(1, 1), padding=((0, 1), (1, 0)),
                                      dimension_numbers=_NHWC, feature_group_count=2), (2, None)),
    ((1, 4, 4, 4), (2, 2, 2, 4), dict(window_strides=(1, 1), padding=((0, 1), (1, 0)),
                                      dimension_numbers=_NHWC, feature_group_count=2), (None, 3)),
    ((1, 4, 4, 4), (2, 2, 2, 4), dict(window_strides=(1, 1), padding=((0, 1), (1, 0)),
                                      dimension_numbers=_NHWC, feature_group_count=2), (4, 0)),
    ((4, 2, 5), (4, 2, 2), dict(window_strides=(1,), padding=((0, 0),), lhs_dilation=(2,),
                                batch_group_count=2), (1, None)),
    ((4, 2, 5), (4, 2, 2), dict(window_strides=(1,), padding=((0, 0),), lhs_dilation=(2,),
                                batch_group_count=2), (None, 0)),
    ((4, 2, 5), (4, 2, 2), dict(window_strides=(1,), padding=((0, 0),), lhs_dilation=(2,),
                                batch_group_count=2), (2, 3)),
    ((2, 5, 3), (2, 3, 4), dict(window_strides=(1,), padding=((1, 1),), rhs_dilation=(2,),
                                dimension_numbers=("NWC", "WIO", "NCW")), (3, 2)),
]


@pytest.mark.parametrize("ls,rs,kw,in_axes", CONV_VMAP_CASES)
def test_conv_vmap(ls, rs, kw, in_axes):
    rng = np.random.default_rng(7)
    args = (_batched(rng, ls, in_axes[0]), _batched(rng, rs, in_axes[1]))
    check_vmap(_conv(kw), args, in_axes)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_conv_vmap_empty_batch(in_axes):
    """A vmapped dimension of size 0 cannot be folded into a group count:
    the result is empty, shaped by the conv's shape formula."""
    rng = np.random.default_rng(12)
    kw = dict(window_strides=(2,), padding=((1, 0),), feature_group_count=2)
    x = _rand(rng, (0, 2, 4, 5) if in_axes[0] == 0 else (2, 4, 5))
    k = _rand(rng, (0, 4, 2, 2) if in_axes[1] == 0 else (4, 2, 2))
    out = np.asarray(autodiff.vmap(_conv(kw), in_axes=in_axes)(x, k))
    assert out.shape == (0, 2, 4, (1 + 5 - 2) // 2 + 1) and out.dtype == np.float64


def test_conv_vmap_of_vmap():
    rng = np.random.default_rng(13)
    kw = dict(window_strides=(1,), padding=((0, 1),), batch_group_count=2)
    inner = autodiff.vmap(_conv(kw), in_axes=(0, 0))
    check_vmap(inner, (_rand(rng, (3, 2, 4, 2, 5)), _rand(rng, (3, 4, 2, 2))), (1, None))


def test_conv_vmap_of_grad():
    """Per-example kernel gradients: vmap over the batch of the VJP's convs."""
    rng = np.random.default_rng(8)
    kw = dict(window_strides=(2,), padding=((1, 1),), feature_group_count=2)
    x, k = _rand(rng, (3, 1, 4, 5)), _rand(rng, (4, 2, 2))
    loss = lambda k_, x_: lax.reduce_sum(lax.conv_general_dilated(x_, k_, **kw), (0, 1, 2))
    check_vmap(autodiff.grad(loss), (k, x), (None, 0))


def test_jit_grad_conv():
    """The compiled gradient against central differences along a random direction."""
    from numxla.compile import jit
    rng = np.random.default_rng(9)
    kw = dict(window_strides=(1, 2), padding=((1, 0), (0, 1)), rhs_dilation=(2, 1))
    x, k = _rand(rng, (1, 2, 5, 5)), _rand(rng, (3, 2, 2, 2))
    loss = lambda a, b: lax.reduce_sum(lax.conv_general_dilated(a, b, **kw), (0, 1, 2, 3))
    gx, gk = jit(autodiff.grad(loss, argnums=(0, 1)))(x, k)
    vx, vk, eps = _rand(rng, x.shape), _rand(rng, k.shape), 1e-5
    fd = (np.asarray(loss(x + eps * vx, k + eps * vk))
          - np.asarray(loss(x - eps * vx, k - eps * vk))) / (2 * eps)
    np.testing.assert_allclose(np.sum(gx * vx) + np.sum(gk * vk), fd, rtol=1e-6)


def _equations(fn, *args):
    from numxla.tracer import make_graph
    return [(e.primitive.name, e.params) for e in make_graph(fn)(*args).equations]


@pytest.mark.parametrize("op", ["dot_general", "conv_general_dilated"])
def test_rules_keep_precision_and_preferred_type(op):
    """Every op the JVP, VJP and batching rules emit keeps the forward op's
    precision and result type; vmap emits one op, not a loop."""
    rng = np.random.default_rng(10)
    if op == "dot_general":
        x, y = _rand(rng, (3, 4), np.float32), _rand(rng, (4, 2), np.float32)
        f = _dot((((1,), (0,)), ((), ())), precision="highest", preferred_element_type=np.float64)
    else:
        x, y = _rand(rng, (2, 4, 5), np.float32), _rand(rng, (4, 2, 2), np.float32)
        f = _conv(dict(window_strides=(2,), padding=((1, 0),), feature_group_count=2,
                       precision="highest", preferred_element_type=np.float64))
    loss = lambda a, b: lax.reduce_sum(f(a, b), (0, 1) if op == "dot_general" else (0, 1, 2))
    transformed = [
        lambda a, b: autodiff.jvp(f, (a, b), (a, b)),
        autodiff.grad(loss, argnums=(0, 1)),
        autodiff.vmap(f, in_axes=(None, 0)),
    ]
    args = [(x, y), (x, y), (x, np.stack([y, y, y]))]
    for fn, fn_args in zip(transformed, args):
        eqs = [params for name, params in _equations(fn, *fn_args) if name == op]
        assert eqs
        for params in eqs:
            assert params["precision"] == (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
            assert params["preferred_element_type"] is PrimitiveType.F64
    assert len([n for n, _ in _equations(transformed[2], *args[2]) if n == op]) == 1
