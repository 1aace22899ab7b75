"""Derivatives (finite differences, order 2, both modes) and vmap (against
stacked per-slice results) of the windowed reductions and SelectAndScatter.

Max/min windows are differentiable away from ties only, so the operands
hold distinct values (a permutation, 0.1 apart) and init values sit between
them; window configurations whose windows hold no element (only padding or
dilation holes, giving an infinite result) are drawn again.
"""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla import tracer
from numxla.autodiff import check_grads, grad, jvp
from numxla.compile import jit
from tests.autodiff.util import _numerical_grad, _rng, check_vmap

CASES = range(5)
WINDOW_OPS = {"max": lax.reduce_window_max, "min": lax.reduce_window_min,
              "sum": lax.reduce_window_sum}
MONOIDS = {"max": lax.max, "min": lax.min, "sum": lax.add}
SELECTS = {"ge": lax.ge, "le": lax.le}


def _distinct(rng, shape):
    """Values 0.1 apart (plus a small jitter), in random order."""
    n = int(np.prod(shape))
    return rng.permutation(n).reshape(shape) * 0.1 + rng.uniform(0.01, 0.02, shape)


def _window(rng, rank, dilations=True):
    """Random window parameters (padding smaller than the dilated window)."""
    dims = [int(w) for w in rng.integers(1, 4, rank)]
    strides = [int(s) for s in rng.integers(1, 3, rank)]
    base = [int(b) for b in rng.integers(1, 3, rank)] if dilations else [1] * rank
    wdil = [int(r) for r in rng.integers(1, 3, rank)] if dilations else [1] * rank
    pads = []
    for w, r in zip(dims, wdil):
        extent = (w - 1) * r + 1
        pads.append(tuple(int(p) for p in rng.integers(0, extent, 2)))
    return dict(window_dimensions=tuple(dims), window_strides=tuple(strides),
                padding=tuple(pads), base_dilation=tuple(base), window_dilation=tuple(wdil))


def _case(rng, rank=2, dilations=True):
    """An operand and a window whose every result is a finite max over real elements."""
    while True:
        shape = tuple(int(n) for n in rng.integers(3, 6, rank))
        window = _window(rng, rank, dilations)
        x = _distinct(rng, shape)
        y = np.asarray(lax.reduce_window_max(x, **window))
        if y.size and np.all(np.isfinite(y)):
            return x, window


def _select_window(window):
    return {k: window[k] for k in ("window_dimensions", "window_strides", "padding")}


# -- reduce_window_sum / _max / _min ---------------------------------------------------------

@pytest.mark.parametrize("op", sorted(WINDOW_OPS))
@pytest.mark.parametrize("seed", CASES)
def test_reduce_window_grads(op, seed):
    rng = _rng(seed, 1)
    x, window = _case(rng, rank=2 if seed < 3 else 3)
    fn = WINDOW_OPS[op]

    def f(x):
        y = fn(x, **window)
        return lax.mul(y, y)      # nonlinear: second order sees the window's transpose too
    check_grads(f, (x,))


DILATED_WINDOWS = [
    # strides sharing a factor with the window dilation (phases by gcd)
    dict(window_dimensions=(2, 3), window_strides=(2, 3), padding=((1, 0), (2, 1)),
         base_dilation=(1, 1), window_dilation=(4, 2)),
    # negative padding (a crop) with base and window dilation together
    dict(window_dimensions=(2, 3), window_strides=(3, 2), padding=((1, -1), (2, 1)),
         base_dilation=(1, 2), window_dilation=(2, 2)),
]


@pytest.mark.parametrize("op", sorted(WINDOW_OPS))
@pytest.mark.parametrize("window", range(len(DILATED_WINDOWS)))
def test_reduce_window_dilated_grads(op, window):
    x = _distinct(_rng(window, 2), (9, 8))
    w = DILATED_WINDOWS[window]
    check_grads(lambda x: lax.mul(WINDOW_OPS[op](x, **w), WINDOW_OPS[op](x, **w)), (x,))


@pytest.mark.parametrize("op", sorted(MONOIDS))
@pytest.mark.parametrize("seed", CASES)
def test_reduce_window_general_grads(op, seed):
    """reduce_window with a one-op computation and an init value that wins in
    some windows (it lies between the operand's values)."""
    rng = _rng(seed, 3)
    x, window = _case(rng)
    init = np.float64(0.1 * (x.size // 2) + 0.065)   # 0.045 away from every value

    def f(x, init):
        y = lax.reduce_window(x, init, MONOIDS[op], **window)
        return lax.mul(y, y)
    check_grads(f, (x, init))


def test_reduce_window_general_other_computation_raises():
    x = _distinct(_rng(0, 4), (4, 4))
    with pytest.raises(NotImplementedError, match="reduce_window.*computation"):
        grad(lambda x: lax.reduce_sum(
            lax.reduce_window(x, np.float64(1), lax.mul, (2, 2), (1, 1), "VALID"), (0, 1)))(x)


# -- select_and_scatter_add / select_and_scatter ---------------------------------------------

@pytest.mark.parametrize("select", sorted(SELECTS))
@pytest.mark.parametrize("seed", CASES)
def test_select_and_scatter_add_grads(select, seed):
    rng = _rng(seed, 5)
    operand, window = _case(rng, dilations=False)
    window = _select_window(window)
    out = np.asarray(lax.reduce_window_max(operand, **window))
    source = rng.standard_normal(out.shape)

    def f(source, operand):
        y = lax.select_and_scatter_add(lax.mul(source, source), operand, select, **window)
        return lax.mul(y, operand)
    check_grads(f, (source, operand))


@pytest.mark.parametrize("select", sorted(SELECTS))
@pytest.mark.parametrize("seed", CASES[:3])
def test_select_and_scatter_grads(select, seed):
    rng = _rng(seed, 6)
    operand, window = _case(rng, dilations=False)
    w = _select_window(window)
    source = rng.standard_normal(np.asarray(lax.reduce_window_max(operand, **w)).shape)

    def f(operand, source, init):
        y = lax.select_and_scatter(operand, SELECTS[select], w["window_dimensions"],
                                   w["window_strides"], w["padding"], source, init, lax.add)
        return lax.mul(y, y)
    check_grads(f, (operand, source, np.float64(0.5)))


def test_select_and_scatter_other_computations_raise():
    operand = _distinct(_rng(0, 7), (4, 4))
    source = np.ones((2, 2))
    for select, scatter in ((lax.gt, lax.add), (lax.ge, lax.mul)):
        with pytest.raises(NotImplementedError, match="select_and_scatter"):
            jvp(lambda s: lax.select_and_scatter(operand, select, (2, 2), (2, 2), "VALID", s,
                                                 np.float64(0), scatter),
                (source,), (source,))


# -- vmap ----------------------------------------------------------------------------------

def _batch(rng, n, shape):
    return np.stack([_distinct(rng, shape) for _ in range(n)])


@pytest.mark.parametrize("op", sorted(WINDOW_OPS))
@pytest.mark.parametrize("seed", CASES[:3])
def test_reduce_window_vmap(op, seed):
    rng = _rng(seed, 8)
    x, window = _case(rng)
    xs = _batch(rng, 3, x.shape)
    f = lambda x: WINDOW_OPS[op](x, **window)
    check_vmap(f, (xs,), 0)
    check_vmap(f, (np.moveaxis(xs, 0, 1),), 1)
    check_vmap(f, (np.moveaxis(xs, 0, 2),), 2)


@pytest.mark.parametrize("seed", CASES[:3])
def test_reduce_window_general_vmap(seed):
    rng = _rng(seed, 9)
    x, window = _case(rng)
    xs = _batch(rng, 3, x.shape)
    ys = np.moveaxis(_batch(rng, 3, x.shape), 0, 1)

    def variadic(x, y, i, j):
        return lax.reduce_window((x, y), (i, j),
                                 lambda a, b: (lax.add(a[0], b[0]), lax.max(a[1], b[1])),
                                 **window)
    one, two = np.float64(1), np.float64(-1)
    check_vmap(variadic, (xs, ys, one, two), (0, 1, None, None))
    check_vmap(variadic, (x, ys, one, two), (None, 1, None, None))
    # batched init values: the op runs once per batch element
    check_vmap(variadic, (xs, x, np.arange(3.0), two), (0, None, 0, None))
    check_vmap(lambda x, i: lax.reduce_window(x, i, lax.mul, **window),
               (xs, np.float64(2)), (0, None))


@pytest.mark.parametrize("select", sorted(SELECTS))
@pytest.mark.parametrize("seed", CASES[:3])
def test_select_and_scatter_add_vmap(select, seed):
    rng = _rng(seed, 10)
    operand, window = _case(rng, dilations=False)
    w = _select_window(window)
    out_shape = np.asarray(lax.reduce_window_max(operand, **w)).shape
    operands = _batch(rng, 3, operand.shape)
    sources = rng.standard_normal((3,) + out_shape)
    f = lambda s, o: lax.select_and_scatter_add(s, o, select, **w)
    check_vmap(f, (sources, operands), 0)
    check_vmap(f, (np.moveaxis(sources, 0, 1), operands), (1, 0))
    check_vmap(f, (sources, operand), (0, None))
    check_vmap(f, (sources[0], np.moveaxis(operands, 0, 2)), (None, 2))


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_select_and_scatter_vmap(select):
    rng = _rng(0, 11)
    operand, window = _case(rng, dilations=False)
    w = _select_window(window)
    out_shape = np.asarray(lax.reduce_window_max(operand, **w)).shape
    operands = _batch(rng, 3, operand.shape)
    sources = rng.standard_normal((3,) + out_shape)

    def f(o, s, init):
        return lax.select_and_scatter(o, SELECTS[select], w["window_dimensions"],
                                      w["window_strides"], w["padding"], s, init, lax.add)
    half = np.float64(0.5)
    check_vmap(f, (operands, sources, half), (0, 0, None))
    check_vmap(f, (operand, np.moveaxis(sources, 0, 1), half), (None, 1, None))
    check_vmap(f, (operands, sources[0], half), (0, None, None))
    check_vmap(f, (operands, sources, np.arange(3.0)), (0, 0, 0))   # batched init: loops


# -- the acceptance tests ----------------------------------------------------------

def _max_pool_loss(x):
    y = lax.reduce_window_max(x, (1, 2, 2, 1), (1, 2, 2, 1), ((0, 0), (0, 1), (0, 1), (0, 0)))
    return lax.reduce_sum(lax.mul(y, lax.sin(y)), (0, 1, 2, 3))


def test_max_pool_grad_is_select_and_scatter():
    x = _distinct(_rng(0, 12), (2, 3, 3, 2))
    text = tracer.make_graph(grad(_max_pool_loss))(x).as_text()
    assert "select_and_scatter" in text
    np.testing.assert_allclose(grad(_max_pool_loss)(x), _numerical_grad(_max_pool_loss, x),
                               rtol=1e-6, atol=1e-6)


def test_window_dilated_max_grad_uses_select_and_scatter():
    x = _distinct(_rng(1, 12), (6, 7))

    def loss(x):
        y = lax.reduce_window_max(x, (2, 2), (1, 2), ((1, 0), (0, 1)), window_dilation=(2, 3))
        return lax.reduce_sum(lax.mul(y, y), (0, 1))
    assert "select_and_scatter" in tracer.make_graph(grad(loss))(x).as_text()
    np.testing.assert_allclose(grad(loss)(x), _numerical_grad(loss, x), rtol=1e-6, atol=1e-6)


def test_jit_grad_max_pool():
    x = _distinct(_rng(2, 12), (2, 3, 3, 2))
    np.testing.assert_allclose(jit(grad(_max_pool_loss))(x), _numerical_grad(_max_pool_loss, x),
                               rtol=1e-6, atol=1e-6)


def test_vmap_of_grad_and_jvp_max_pool():
    """Per-example gradients and tangents: the batch rules of
    select_and_scatter_add and of the (operand, tangent) reduce_window."""
    rng = _rng(3, 12)
    xs = _batch(rng, 3, (2, 3, 3, 2))
    check_vmap(grad(_max_pool_loss), (np.moveaxis(xs, 0, 2),), 2)
    f = lambda x, t: jvp(lambda x: lax.reduce_window_max(x, (2, 2), (1, 2), ((0, 1), (1, 0))),
                         (x,), (t,))[1]
    check_vmap(f, (xs[:, 0, 0], rng.standard_normal((3, 2))), (0, None))


# -- bfloat16 ------------------------------------------------------------------------------

BF16_WINDOWS = [
    # a 2x2 max-pool with stride 2 (edge padding)
    dict(window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1),
         padding=((0, 0), (0, 1), (0, 1), (0, 0))),
    # base and window dilation: the chooser's identity and zero pads in bf16
    dict(window_dimensions=(1, 2, 2, 1), window_strides=(1, 1, 2, 1),
         padding=((0, 0), (1, 0), (0, 1), (0, 0)), base_dilation=(1, 2, 1, 1),
         window_dilation=(1, 1, 2, 1)),
]


@pytest.mark.parametrize("window", range(len(BF16_WINDOWS)))
def test_max_pool_bf16_derivatives_match_f32(window):
    """The constants of the rules (init values, pads) are built in bf16 (NumPy
    holds bf16 as uint16 words): the gradient and tangent of a bf16 max-pool
    are the f32 ones (inputs and results exact in bf16)."""
    w = BF16_WINDOWS[window]
    x = (_rng(window, 13).permutation(24).reshape(1, 4, 3, 2) * 0.25 - 3).astype(np.float32)
    t = np.arange(24, dtype=np.float32).reshape(x.shape) * 0.5

    def loss(x):
        y = lax.reduce_window_max(x, **w)
        return lax.reduce_sum(lax.mul(y, y), (0, 1, 2, 3))
    xb = tracer.core.bf16_array(x)
    np.testing.assert_array_equal(tracer.shapes.bf16_to_f32(np.asarray(grad(loss)(xb))),
                                  grad(loss)(x))
    _, t_b = jvp(lambda x: lax.reduce_window_max(x, **w), (xb,), (tracer.core.bf16_array(t),))
    _, t_f = jvp(lambda x: lax.reduce_window_max(x, **w), (x,), (t,))
    np.testing.assert_array_equal(tracer.shapes.bf16_to_f32(np.asarray(t_b)), t_f)
