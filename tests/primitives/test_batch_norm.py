"""batch_norm_training / _inference / _grad: the documents' numbers, shape errors at
trace time, an independent NumPy formulation at several feature indices, and
batch_norm_grad as the VJP of training checked by finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.primitives.batch_norm import batch_norm_grad_p, batch_norm_training_p
from numxla.tracer import make_graph
from numxla.tracer.core import ShapeError, impl_rules
from numxla.tracer.shapes import bf16_from_f32, bf16_to_f32

RNG = np.random.default_rng(7)


# -- an independent NumPy batch norm: move the feature axis last, flatten the rest ---------

def _as_rows(x: np.ndarray, axis: int) -> np.ndarray:
    return np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])


def _from_rows(rows: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    moved = np.moveaxis(np.empty(shape), axis, -1).shape
    return np.moveaxis(rows.reshape(moved), -1, axis)


def _np_training(x, scale, offset, epsilon, axis):
    rows = _as_rows(x, axis)
    mean, var = rows.mean(axis=0), rows.var(axis=0)  # np.var is the biased variance
    y = (rows - mean) / np.sqrt(var + epsilon) * scale + offset
    return _from_rows(y, x.shape, axis), mean, var


def _np_inference(x, scale, offset, mean, var, epsilon, axis):
    rows = _as_rows(x, axis)
    return _from_rows((rows - mean) / np.sqrt(var + epsilon) * scale + offset, x.shape, axis)


def _random_case(rank, feature_index):
    shape = tuple(int(d) for d in RNG.integers(1, 5, size=rank))
    features = shape[feature_index]
    x = RNG.standard_normal(shape) * 3 + 1
    return x, RNG.standard_normal(features), RNG.standard_normal(features)


FEATURE_CASES = [(1, 0), (2, 0), (2, 1), (3, 1), (4, 0), (4, 3), (4, -1), (3, -3), (4, 2)]


# -- the documents' numbers -----------------------------------------------------------------

SPEC_OPERAND = np.array([[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]])


def test_spec_examples():
    out, mean, var = lax.batch_norm_training(SPEC_OPERAND, np.ones(2), np.ones(2), 0.0, 2)
    np.testing.assert_allclose(out, [[[0, 0], [2, 2]], [[2, 2], [0, 0]]], atol=1e-12)
    np.testing.assert_allclose(mean, [2, 3])
    np.testing.assert_allclose(var, [1, 1])
    np.testing.assert_allclose(
        lax.batch_norm_inference(SPEC_OPERAND, np.ones(2), np.ones(2), np.array([2.0, 3.0]),
                                 np.ones(2), 0.0, 2), [[[0, 0], [2, 2]], [[2, 2], [0, 0]]])
    dx, dscale, doffset = lax.batch_norm_grad(SPEC_OPERAND, np.ones(2), np.array([2.0, 3.0]),
                                              np.ones(2), np.full((2, 2, 2), 0.1), 0.0, 2)
    np.testing.assert_allclose(dx, np.zeros((2, 2, 2)), atol=1e-12)
    np.testing.assert_allclose(dscale, [0, 0], atol=1e-12)
    np.testing.assert_allclose(doffset, [0.4, 0.4])


def test_xla_basic_training_and_grad():
    x = np.arange(1, 9, dtype=np.float32).reshape(2, 2, 1, 2)
    out, mean, var = lax.batch_norm_training(x, np.float32([2, 3]), np.float32([1, 2]),
                                             0.001, 3)
    assert out.dtype == mean.dtype == var.dtype == np.float32
    np.testing.assert_allclose(mean, [4, 5])
    np.testing.assert_allclose(var, [5, 5])
    np.testing.assert_allclose(out.ravel(), [-1.6, -2.0, 0.1, 0.6, 1.9, 3.3, 3.7, 6.0], atol=0.1)
    # a negative epsilon is accepted: 125 - 100 = 25
    out, _, var = lax.batch_norm_training(np.float32([0, 10, 20, 30]).reshape(1, 4, 1),
                                          np.float32([1]), np.float32([0]), -100.0, 2)
    np.testing.assert_allclose(var, [125])
    np.testing.assert_allclose(out.ravel(), [-3, -1, 1, 3], rtol=1e-6)
    dx, dscale, doffset = lax.batch_norm_grad(
        np.zeros((2, 2, 2, 1), np.float32), np.float32([1, 1]), np.float32([0, 0]),
        np.float32([1, 1]), np.arange(1, 9, dtype=np.float32).reshape(2, 2, 2, 1), 0.0, 2)
    np.testing.assert_allclose(dx.ravel(), [-3, -3, -1, -1, 1, 1, 3, 3])
    np.testing.assert_allclose(dscale, [0, 0])
    np.testing.assert_allclose(doffset, [16, 20])


# -- properties -------------------------------------------------------------------------------

@pytest.mark.parametrize("rank, feature_index", FEATURE_CASES)
def test_training_and_inference_match_numpy(rank, feature_index):
    for epsilon in (1e-3, 0.5):
        x, scale, offset = _random_case(rank, feature_index)
        axis = feature_index % rank
        out, mean, var = lax.batch_norm_training(x, scale, offset, epsilon, feature_index)
        want_out, want_mean, want_var = _np_training(x, scale, offset, epsilon, axis)
        np.testing.assert_allclose(out, want_out, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(mean, want_mean, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(var, want_var, rtol=1e-10, atol=1e-12)
        mean_in, var_in = RNG.standard_normal(scale.shape), RNG.random(scale.shape) + 0.1
        np.testing.assert_allclose(
            lax.batch_norm_inference(x, scale, offset, mean_in, var_in, epsilon, feature_index),
            _np_inference(x, scale, offset, mean_in, var_in, epsilon, axis),
            rtol=1e-10, atol=1e-12)


def _numeric_vjp(fn, args, cotangent, step=1e-6):
    """d/d args of sum(cotangent * fn(*args)) by central differences."""
    grads = []
    for i, arg in enumerate(args):
        g = np.zeros_like(arg)
        for idx in np.ndindex(arg.shape):
            plus = [a.copy() for a in args]
            minus = [a.copy() for a in args]
            plus[i][idx] += step
            minus[i][idx] -= step
            g[idx] = np.sum(cotangent * (fn(*plus) - fn(*minus))) / (2 * step)
        grads.append(g)
    return grads


@pytest.mark.parametrize("rank, feature_index", FEATURE_CASES)
def test_grad_is_the_vjp_of_training(rank, feature_index):
    epsilon = 0.01
    x, scale, offset = _random_case(rank, feature_index)
    axis = feature_index % rank
    dy = RNG.standard_normal(x.shape)

    def training_output(x_, scale_, offset_):
        return _np_training(x_, scale_, offset_, epsilon, axis)[0]

    want = _numeric_vjp(training_output, [x, scale, offset], dy)
    _, mean, var = _np_training(x, scale, offset, epsilon, axis)
    got = lax.batch_norm_grad(x, scale, mean, var, dy, epsilon, feature_index)
    for name, g, w in zip(("grad_operand", "grad_scale", "grad_offset"), got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)


def test_grad_follows_the_documents_formulas_with_given_statistics():
    # mean and variance need not be the batch's own: c_l, d_l and the results use them as given.
    x = RNG.standard_normal((3, 4, 2))
    scale, mean, var = RNG.standard_normal(4), RNG.standard_normal(4), RNG.random(4) + 0.5
    dy, epsilon = RNG.standard_normal(x.shape), 0.25
    dx, dscale, doffset = lax.batch_norm_grad(x, scale, mean, var, dy, epsilon, 1)
    for l in range(4):
        xl, dyl = x[:, l, :], dy[:, l, :]
        s = np.sqrt(var[l] + epsilon)
        c = np.mean(dyl * (xl - mean[l]) / (var[l] + epsilon))
        d = np.mean(dyl)
        np.testing.assert_allclose(dx[:, l, :], scale[l] / s * (dyl - d - c * (xl - mean[l])))
        np.testing.assert_allclose(dscale[l], np.sum(dyl * (xl - mean[l]) / s))
        np.testing.assert_allclose(doffset[l], np.sum(dyl))


def test_low_precision_types_keep_their_element_type():
    x, scale, offset = _random_case(3, 1)
    want_out, want_mean, want_var = _np_training(x, scale, offset, 1e-3, 1)
    out, mean, var = lax.batch_norm_training(x.astype(np.float16), scale.astype(np.float16),
                                             offset.astype(np.float16), 1e-3, 1)
    assert out.dtype == mean.dtype == var.dtype == np.float16
    np.testing.assert_allclose(out, want_out, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(var, want_var, rtol=1e-2, atol=1e-2)
    # bf16 arrives at the reference semantics as uint16 words (eager NumPy cannot hold bf16)
    words = impl_rules[batch_norm_training_p](bf16_from_f32(x), bf16_from_f32(scale),
                                              bf16_from_f32(offset), epsilon=1e-3,
                                              feature_index=1)
    assert all(w.dtype == np.uint16 for w in words)
    np.testing.assert_allclose(bf16_to_f32(words[0]), want_out, rtol=5e-2, atol=5e-2)
    np.testing.assert_allclose(bf16_to_f32(words[1]), want_mean, rtol=2e-2, atol=2e-2)
    dy = RNG.standard_normal(x.shape)
    grads = impl_rules[batch_norm_grad_p](*(bf16_from_f32(v) for v in (x, scale, want_mean,
                                                                       want_var, dy)),
                                          epsilon=1e-3, feature_index=1)
    want_grads = lax.batch_norm_grad(x, scale, want_mean, want_var, dy, 1e-3, 1)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(bf16_to_f32(g), w, rtol=5e-2, atol=5e-2)


# -- shape errors --------------------------------------------------------------------------------

X = np.zeros((2, 3, 4), np.float32)
F3 = np.zeros(3, np.float32)


@pytest.mark.parametrize("fn, args, message", [
    (lax.batch_norm_training, (X, F3, F3, 1e-3, 3),
     r"batch_norm_training: feature_index 3 is out of range for an operand of rank 3"
     r".*f32\[2,3,4\]"),
    (lax.batch_norm_training, (X, F3, F3, 1e-3, -4), r"feature_index -4 is out of range"),
    (lax.batch_norm_training, (X, np.zeros(4, np.float32), F3, 1e-3, 1),
     r"scale must be 1-D of the feature count 3 \(operand dimension 1\), got f32\[4\]"),
    (lax.batch_norm_training, (X, F3, np.zeros((3, 1), np.float32), 1e-3, 1),
     r"offset must be 1-D of the feature count 3"),
    (lax.batch_norm_training, (X.astype(np.int32), F3.astype(np.int32),
                               F3.astype(np.int32), 1e-3, 1),
     r"operand element type s32 must be floating point"),
    (lax.batch_norm_training, (X, F3.astype(np.float64), F3, 1e-3, 1),
     r"scale element type f64 must be the operand's f32"),
    (lax.batch_norm_training, (np.float32(1), np.zeros(1, np.float32),
                               np.zeros(1, np.float32), 1e-3, 0), r"operand must have rank >= 1"),
    (lax.batch_norm_inference, (X, F3, F3, F3, np.zeros(2, np.float32), 1e-3, 1),
     r"batch_norm_inference: variance must be 1-D of the feature count 3"),
    (lax.batch_norm_inference, (X, F3, F3, F3, F3, 1e-3, 5),
     r"batch_norm_inference: feature_index 5 is out of range"),
    (lax.batch_norm_grad, (X, F3, F3, F3, np.zeros((2, 3, 5), np.float32), 1e-3, 1),
     r"batch_norm_grad: grad_output must have the operand's shape.*f32\[2,3,5\]"),
    (lax.batch_norm_grad, (X, F3, np.zeros(4, np.float32), F3, X, 1e-3, 1),
     r"batch_norm_grad: mean must be 1-D of the feature count 3"),
    (lax.batch_norm_grad, (X, F3, F3, F3, X.astype(np.float64), 1e-3, 1),
     r"grad_output element type f64 must be the operand's f32"),
])
def test_shape_errors_at_trace_time(fn, args, message):
    arrays = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    params = args[len(arrays):]
    with pytest.raises(ShapeError, match=message):
        make_graph(lambda *xs: fn(*xs, *params))(*arrays)


# -- tracing ---------------------------------------------------------------------------------------

def test_ops_trace_as_multi_result_equations():
    def f(x, scale, offset):
        y, mean, var = lax.batch_norm_training(x, scale, offset, 0.001, -1)
        z = lax.batch_norm_inference(x, scale, offset, mean, var, 0.001, -1)
        return lax.batch_norm_grad(x, scale, mean, var, z, 0.001, -1), y

    text = make_graph(f)(np.zeros((2, 3), np.float32), np.zeros(3, np.float32),
                         np.zeros(3, np.float32)).as_text()
    for name in ("batch_norm_training(", "batch_norm_inference(", "batch_norm_grad("):
        assert name in text
    assert "feature_index=1" in text and "epsilon=0.001" in text
    assert "(f32[2,3]{1,0}, f32[3]{0}, f32[3]{0})" in text
