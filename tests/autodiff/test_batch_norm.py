"""Derivatives (finite differences, order 2, both modes) and vmap (against
stacked per-slice results) of BatchNormTraining, BatchNormInference and
BatchNormGrad, at the first, a middle and the last feature dimension."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla import tracer
from numxla.autodiff import check_grads, grad, jvp
from numxla.compile import jit
from tests.autodiff.util import _numerical_grad, _rng, check_vmap

# (operand shape, feature_index)
LAYOUTS = [((4, 3), 1), ((3, 4, 2), 0), ((2, 3, 4), 1), ((2, 3, 2, 3), -1), ((3, 2, 2, 2), 2)]
EPS = 1e-3


def _features(shape, fi):
    return shape[fi]


def _stats(rng, n, batch=()):
    """A mean and a (positive) variance per feature."""
    return rng.standard_normal(batch + (n,)), rng.uniform(0.5, 2.0, batch + (n,))


def _training(fi):
    return lambda x, s, o: lax.batch_norm_training(x, s, o, EPS, fi)


def _inference(fi):
    return lambda x, s, o, m, v: lax.batch_norm_inference(x, s, o, m, v, EPS, fi)


def _grad_op(fi):
    return lambda x, s, m, v, dy: lax.batch_norm_grad(x, s, m, v, dy, EPS, fi)


# -- derivatives ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(len(LAYOUTS)))
def test_training_grads(seed):
    """All three results, so the reverse check puts cotangents on mean and variance too."""
    rng = _rng(seed, 1)
    shape, fi = LAYOUTS[seed]
    n = _features(shape, fi)
    check_grads(_training(fi), (rng.standard_normal(shape), rng.standard_normal(n),
                                rng.standard_normal(n)))


@pytest.mark.parametrize("seed", range(3))
def test_training_statistics_only_grads(seed):
    """A loss of the batch statistics alone: the output's cotangent is zero."""
    rng = _rng(seed, 2)
    shape, fi = LAYOUTS[seed]
    n = _features(shape, fi)

    def f(x, s, o):
        _, mean, var = _training(fi)(x, s, o)
        return lax.mul(mean, var)
    check_grads(f, (rng.standard_normal(shape), rng.standard_normal(n), rng.standard_normal(n)))


@pytest.mark.parametrize("seed", range(len(LAYOUTS)))
def test_inference_grads(seed):
    rng = _rng(seed, 3)
    shape, fi = LAYOUTS[seed]
    n = _features(shape, fi)
    mean, var = _stats(rng, n)
    check_grads(_inference(fi), (rng.standard_normal(shape), rng.standard_normal(n),
                                 rng.standard_normal(n), mean, var))


@pytest.mark.parametrize("seed", range(len(LAYOUTS)))
def test_grad_grads(seed):
    rng = _rng(seed, 4)
    shape, fi = LAYOUTS[seed]
    n = _features(shape, fi)
    mean, var = _stats(rng, n)
    check_grads(_grad_op(fi), (rng.standard_normal(shape), rng.standard_normal(n), mean, var,
                               rng.standard_normal(shape)))


def test_training_vjp_matches_numpy_formula():
    """The gradient of sum(w * y) in closed form (NumPy), with a batch mean
    and variance computed by NumPy."""
    rng = _rng(0, 5)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    scale, offset = rng.standard_normal(3), rng.standard_normal(3)

    def loss(x):
        y, _, _ = lax.batch_norm_training(x, scale, offset, EPS, 1)
        return lax.reduce_sum(lax.mul(y, w), (0, 1))
    mu, var = x.mean(0), x.var(0)
    xhat = (x - mu) / np.sqrt(var + EPS)
    want = scale / np.sqrt(var + EPS) * (w - w.mean(0) - xhat * (w * xhat).mean(0))
    np.testing.assert_allclose(grad(loss)(x), want, rtol=1e-10, atol=1e-10)


# -- vmap ----------------------------------------------------------------------------------

B = 3


@pytest.mark.parametrize("seed", range(len(LAYOUTS)))
def test_training_vmap(seed):
    rng = _rng(seed, 6)
    shape, fi = LAYOUTS[seed]
    n, rank = _features(shape, fi), len(shape)
    xs = rng.standard_normal((B,) + shape)
    scales, offsets = rng.standard_normal((B, n)), rng.standard_normal((B, n))
    f = _training(fi)
    check_vmap(f, (xs, scales[0], offsets[0]), (0, None, None))
    check_vmap(f, (np.moveaxis(xs, 0, rank), scales, offsets[0]), (rank, 0, None))
    check_vmap(f, (xs[0], scales, offsets.T), (None, 0, 1))
    check_vmap(f, (np.moveaxis(xs, 0, 1), scales, offsets), (1, 0, 0))


@pytest.mark.parametrize("seed", range(len(LAYOUTS)))
def test_inference_vmap(seed):
    rng = _rng(seed, 7)
    shape, fi = LAYOUTS[seed]
    n, rank = _features(shape, fi), len(shape)
    xs = rng.standard_normal((B,) + shape)
    scales, offsets = rng.standard_normal((B, n)), rng.standard_normal((B, n))
    means, variances = _stats(rng, n, (B,))
    f = _inference(fi)
    x, s, o, m, v = xs[0], scales[0], offsets[0], means[0], variances[0]
    check_vmap(f, (xs, s, o, m, v), (0, None, None, None, None))
    check_vmap(f, (np.moveaxis(xs, 0, rank), s, o, m, v), (rank, None, None, None, None))
    check_vmap(f, (np.moveaxis(xs, 0, 1), s, o, means, v), (1, None, None, 0, None))
    check_vmap(f, (x, scales, o, m, variances.T), (None, 0, None, None, 1))
    check_vmap(f, (xs, scales, offsets, means, variances), 0)


@pytest.mark.parametrize("seed", range(len(LAYOUTS)))
def test_grad_vmap(seed):
    rng = _rng(seed, 8)
    shape, fi = LAYOUTS[seed]
    n, rank = _features(shape, fi), len(shape)
    xs, dys = rng.standard_normal((B,) + shape), rng.standard_normal((B,) + shape)
    scales = rng.standard_normal((B, n))
    means, variances = _stats(rng, n, (B,))
    f = _grad_op(fi)
    x, s, m, v, dy = xs[0], scales[0], means[0], variances[0], dys[0]
    check_vmap(f, (xs, s, m, v, dy), (0, None, None, None, None))
    check_vmap(f, (x, s, m, v, np.moveaxis(dys, 0, rank)), (None, None, None, None, rank))
    check_vmap(f, (x, scales, means, v, dy), (None, 0, 0, None, None))
    check_vmap(f, (np.moveaxis(xs, 0, 1), scales, means, variances, dys), (1, 0, 0, 0, 0))


# -- the acceptance test -------------------------------------------------------------

SCALE, OFFSET = np.array([1.5, -0.5, 2.0]), np.array([0.1, 0.2, -0.3])


def _layer_loss(x):
    y, _, _ = lax.batch_norm_training(x, SCALE, OFFSET, EPS, 3)
    return lax.reduce_sum(lax.mul(y, lax.sin(y)), (0, 1, 2, 3))


def test_batch_norm_layer_grad_is_batch_norm_grad():
    x = _rng(0, 9).standard_normal((2, 2, 3, 3))
    assert "batch_norm_grad" in tracer.make_graph(grad(_layer_loss))(x).as_text()
    np.testing.assert_allclose(grad(_layer_loss)(x), _numerical_grad(_layer_loss, x),
                               rtol=1e-6, atol=1e-6)


def test_jit_grad_batch_norm_layer():
    x = _rng(1, 9).standard_normal((2, 2, 3, 3))
    np.testing.assert_allclose(jit(grad(_layer_loss))(x), _numerical_grad(_layer_loss, x),
                               rtol=1e-6, atol=1e-6)


def test_vmap_of_grad_batch_norm_layer():
    """Per-example gradients: the batch rules of batch_norm_training and batch_norm_grad."""
    xs = _rng(2, 9).standard_normal((3, 2, 2, 3, 3))
    check_vmap(grad(_layer_loss), (np.moveaxis(xs, 0, 4),), 4)


# -- bfloat16 ------------------------------------------------------------------------------

def _quarters(rng, *shape):
    """float32 values exact in bf16 (multiples of 1/4 in [-2, 2])."""
    return (rng.integers(-8, 9, shape) * 0.25).astype(np.float32)


def _check_bf16_like_f32(loss, args):
    """``loss(weights)(*args)``'s gradient and tangent in bf16 against f32:
    the scalar constants of the rules (1/N, 2/N, 1/2, epsilon) must be built
    in bf16 (NumPy holds bf16 as uint16 words).  bf16 keeps 8 significant
    bits and the rules reduce over the batch: 2% of the largest entry."""
    bf16 = tracer.core.bf16_array
    args_b = tuple(bf16(a) for a in args)
    argnums = tuple(range(len(args)))
    f32_fn, bf16_fn = loss(lambda a: a), loss(bf16)
    got = list(grad(bf16_fn, argnums=argnums)(*args_b)) + [jvp(bf16_fn, args_b, args_b)[1]]
    want = list(grad(f32_fn, argnums=argnums)(*args)) + [jvp(f32_fn, args, args)[1]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(tracer.shapes.bf16_to_f32(np.asarray(g)), w, rtol=0.02,
                                   atol=0.02 * np.abs(w).max())


def test_training_bf16_derivatives_match_f32():
    """The loss reads the batch statistics too (their cotangents' constants)."""
    rng = _rng(0, 10)
    x, w = _quarters(rng, 4, 2, 3), _quarters(rng, 4, 2, 3)

    def loss(cast):
        def f(x, s, o):
            y, mean, var = lax.batch_norm_training(x, s, o, EPS, 2)
            return lax.add(lax.reduce_sum(lax.mul(y, cast(w)), (0, 1, 2)),
                           lax.reduce_sum(lax.mul(mean, var), (0,)))
        return f
    _check_bf16_like_f32(loss, (x, _quarters(rng, 3), _quarters(rng, 3)))


def test_inference_bf16_derivatives_match_f32():
    rng = _rng(1, 10)
    x, w = _quarters(rng, 4, 3), _quarters(rng, 4, 3)
    var = np.array([1.0, 2.0, 0.5], np.float32)

    def loss(cast):
        def f(*a):
            y = lax.batch_norm_inference(*a, EPS, 1)
            return lax.reduce_sum(lax.mul(y, lax.mul(y, cast(w))), (0, 1))
        return f
    _check_bf16_like_f32(loss, (x, _quarters(rng, 3), _quarters(rng, 3), _quarters(rng, 3), var))
