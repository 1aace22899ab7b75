"""``numxla.nn`` against NumPy/SciPy formulas: values and dtypes, JAX's
derivatives (finite differences, and JAX's choices at the kinks), the
softmax family with ``axis``/``where``, ``one_hot``, ``standardize``,
``dot_product_attention``, and a sample under ``jit``."""
import numpy as np
import pytest
from scipy.special import erfc, expit, logsumexp as sp_logsumexp

import numxla as jax
import numxla.numpy as jnp
from numxla import nn

X = np.linspace(-6, 6, 49)  # includes 0, +-1, 6 and -3 (the kinks)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

FORMULAS = {  # f64 references
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": expit,
    "softplus": lambda x: np.logaddexp(x, 0),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * expit(x),
    "swish": lambda x: x * expit(x),
    "log_sigmoid": lambda x: -np.logaddexp(-x, 0),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "mish": lambda x: x * np.tanh(np.logaddexp(x, 0)),
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "tanh": np.tanh,
    "identity": lambda x: x,
}
# points where the function is not differentiable (or JAX picks a one-sided value)
KINKS = {"relu": [0], "relu6": [0, 6], "leaky_relu": [0], "hard_sigmoid": [-3, 3],
         "hard_silu": [-3, 3], "hard_swish": [-3, 3], "hard_tanh": [-1, 1], "selu": [0],
         "sparse_plus": [-1], "sparse_sigmoid": [-1, 1]}


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_activations_match_formulas(name):
    f = getattr(nn, name)
    for dtype, rtol in ((np.float64, 1e-13), (np.float32, 3e-6)):
        x = X.astype(dtype)
        got = f(x)
        assert got.dtype == dtype, (name, got.dtype)
        expected = FORMULAS[name](x.astype(np.float64))
        np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=rtol,
                                   atol=10 * np.finfo(dtype).eps)


def test_activation_parameters_and_exact_gelu():
    x = X
    np.testing.assert_allclose(nn.gelu(x, approximate=False), x * erfc(-x / np.sqrt(2)) / 2,
                               rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(nn.gelu(np.float32([-30, -10, 0.5]), approximate=False),
                               np.float32([0, -7.6198530e-23, 0.34573123]), rtol=2e-6)
    np.testing.assert_allclose(nn.elu(x, alpha=0.5), np.where(x > 0, x, 0.5 * np.expm1(x)))
    np.testing.assert_allclose(nn.celu(x, alpha=2.0),
                               np.maximum(x, 0) + 2 * np.expm1(np.minimum(x, 0) / 2))
    np.testing.assert_allclose(nn.leaky_relu(x, negative_slope=0.2), np.where(x >= 0, x, 0.2 * x))
    np.testing.assert_allclose(nn.squareplus(x, b=1.0), (x + np.sqrt(x * x + 1)) / 2)
    t = np.linspace(0.01, 20, 50)
    np.testing.assert_allclose(nn.log1mexp(t), np.where(t < np.log(2), np.log(-np.expm1(-t)),
                                                        np.log1p(-np.exp(-t))), rtol=1e-13)
    v = np.arange(12.0).reshape(3, 4) - 5
    np.testing.assert_allclose(nn.glu(v), v[:, :2] * expit(v[:, 2:]))
    w = v.reshape(4, 3)
    np.testing.assert_allclose(nn.glu(w, axis=0), w[:2] * expit(w[2:]))
    assert nn.relu(np.int32([-2, 3])).dtype == np.int32  # relu keeps integer inputs
    assert nn.gelu(np.int32([1])).dtype == np.float64  # promotes to the default float


def _finite_difference(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("name", sorted(set(FORMULAS) - {"identity"}))
def test_activation_gradients(name):
    """Away from the kinks: finite differences; at them: JAX's choice."""
    f = getattr(nn, name)
    kinks = KINKS.get(name, [])
    x = np.array([v for v in X if all(abs(v - k) > 1e-3 for k in kinks)] + [0.3, -0.7])
    grads = np.asarray(jax.vmap(jax.grad(f))(x))
    expected = _finite_difference(lambda v: FORMULAS[name](v), x)
    np.testing.assert_allclose(grads, expected, rtol=1e-6, atol=1e-8)


def test_derivatives_at_kinks_follow_jax():
    grad = lambda f, v: float(jax.grad(f)(np.float32(v)))  # noqa: E731
    assert grad(nn.relu, 0.0) == 0.0 and grad(nn.relu, 1e-30) == 1.0
    assert grad(nn.relu6, 0.0) == 0.0 and grad(nn.relu6, 6.0) == 0.0 and grad(nn.relu6, 5.9) == 1
    assert grad(nn.leaky_relu, 0.0) == 1.0 and grad(nn.hard_tanh, 1.0) == 1.0
    assert grad(nn.softplus, 0.0) == 0.5 and grad(nn.log_sigmoid, 0.0) == 0.5
    assert grad(nn.sigmoid, 0.0) == 0.25 and grad(nn.silu, 0.0) == 0.5
    assert grad(nn.elu, 0.0) == 1.0 and grad(nn.celu, 0.0) == 1.0
    assert grad(nn.hard_sigmoid, 3.0) == 0.0 and grad(nn.hard_sigmoid, -3.0) == 0.0
    assert np.isfinite(grad(nn.softplus, 100.0)) and grad(nn.softplus, -100.0) >= 0
    assert grad(lambda v: nn.log_sigmoid(v), -200.0) == 1.0  # no overflow in the tail
    # second derivative of relu is zero (its rule is a select)
    assert float(jax.grad(jax.grad(nn.relu))(np.float32(1.0))) == 0.0


def _np_softmax(x, axis=-1, where=None):
    if where is not None:
        x = np.where(where, x, -np.inf)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    out = e / e.sum(axis=axis, keepdims=True)
    return out if where is None else np.where(where, out, 0)


M = np.linspace(-5, 7, 24).reshape(2, 3, 4) * np.array([1, -1, 0.5, 2])
MASK = (np.arange(24).reshape(2, 3, 4) % 3) != 1


def test_softmax_family():
    for axis in (-1, 0, (1, 2), None):
        np.testing.assert_allclose(nn.softmax(M, axis=axis), _np_softmax(M, axis), rtol=1e-13)
        np.testing.assert_allclose(nn.log_softmax(M, axis=axis),
                                   M - sp_logsumexp(M, axis=axis, keepdims=True), rtol=1e-13,
                                   atol=1e-14)
        np.testing.assert_allclose(nn.logsumexp(M, axis=axis), sp_logsumexp(M, axis=axis),
                                   rtol=1e-14)
    masked = nn.softmax(M, where=MASK)
    np.testing.assert_allclose(masked, _np_softmax(M, -1, MASK), rtol=1e-13)
    log_masked = np.asarray(nn.log_softmax(M, where=MASK))
    assert np.all(log_masked[~MASK] == -np.inf)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(log_masked[MASK], np.log(_np_softmax(M, -1, MASK))[MASK])
    # a large initial joins the maximum that is subtracted (older JAX's argument)
    np.testing.assert_allclose(nn.softmax(M, initial=100.0), _np_softmax(M), rtol=1e-12)
    big = np.float32([1000, 1000, -1000])
    np.testing.assert_allclose(nn.softmax(big), [0.5, 0.5, 0])
    np.testing.assert_allclose(nn.log_softmax(big), [-np.log(2), -np.log(2), -2000 - np.log(2)],
                               rtol=1e-6)
    assert nn.softmax(np.float32([1, 2])).dtype == np.float32
    np.testing.assert_allclose(nn.logsumexp(M, axis=1, where=MASK),
                               sp_logsumexp(np.where(MASK, M, -np.inf), axis=1), rtol=1e-14)
    np.testing.assert_allclose(nn.logmeanexp(M, axis=1), sp_logsumexp(M, axis=1) - np.log(3))
    np.testing.assert_allclose(nn.logmeanexp(M, axis=-1, where=MASK),
                               sp_logsumexp(np.where(MASK, M, -np.inf), axis=-1)
                               - np.log(MASK.sum(-1)))
    value, sign = nn.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0]), return_sign=True)
    assert sign == -1 and value == pytest.approx(np.log(np.e ** 2 - np.e))
    assert np.isnan(nn.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0])))


def test_softmax_gradients():
    w = np.cos(np.arange(24.0)).reshape(2, 3, 4)
    for fn in (lambda m: (nn.softmax(m) * w).sum(), lambda m: (nn.log_softmax(m, axis=1) * w).sum(),
               lambda m: (nn.softmax(m, where=MASK) * w).sum(), lambda m: nn.logsumexp(m * w),
               lambda m: (nn.standardize(m) * w).sum()):
        got = np.asarray(jax.grad(fn)(M))
        expected = np.zeros_like(M)
        for i in np.ndindex(M.shape):
            e = np.zeros_like(M)
            e[i] = 1e-6
            expected[i] = (float(fn(M + e)) - float(fn(M - e))) / 2e-6
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    # masked entries get no gradient
    g = np.asarray(jax.grad(lambda m: (nn.log_softmax(m, where=MASK) * MASK).sum())(M))
    assert np.all(g[~MASK] == 0)


def test_standardize_and_normalize():
    mean, var = M.mean(-1, keepdims=True), M.var(-1, keepdims=True)
    np.testing.assert_allclose(nn.standardize(M), (M - mean) / np.sqrt(var + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(nn.standardize(M, axis=(0, 2), algorithm="stable", epsilon=0.1),
                               (M - M.mean((0, 2), keepdims=True))
                               / np.sqrt(M.var((0, 2), keepdims=True) + 0.1), rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(M, mean=1.0, variance=4.0),
                               (M - 1) / np.sqrt(4 + 1e-5))
    mw = np.where(MASK, M, np.nan)
    m_mean = np.nanmean(mw, -1, keepdims=True)
    m_var = np.nanmean((mw - m_mean) ** 2, -1, keepdims=True)
    np.testing.assert_allclose(nn.standardize(M, where=MASK),
                               (M - m_mean) / np.sqrt(m_var + 1e-5), rtol=1e-10)
    assert nn.standardize(M.astype(np.float32), where=MASK).dtype == np.float32
    assert nn.normalize is nn.standardize
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(M, algorithm="exact")


def test_one_hot():
    out = nn.one_hot(np.array([0, 2, -1, 3]), 3)
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert out.dtype == np.float64  # JAX's default float (x64 here)
    labels = np.array([[0, 1], [2, 0]])
    out = nn.one_hot(labels, 3, axis=0, dtype=np.int32)
    assert out.shape == (3, 2, 2) and out.dtype == np.int32
    np.testing.assert_array_equal(out, np.moveaxis(np.eye(3, dtype=np.int32)[labels], -1, 0))
    np.testing.assert_array_equal(nn.one_hot(labels, 4, axis=1, dtype=np.float32),
                                  np.moveaxis(np.eye(4)[labels], -1, 1))
    assert jax.jit(lambda v: nn.one_hot(v, 5))(np.int32([4, 0])).shape == (2, 5)


def _np_attention(q, k, v, bias=None, mask=None, scale=None):
    """Reference: per head, softmax(q k^T * scale + bias) v with masked logits."""
    n, n_kv = q.shape[-2], k.shape[-2]
    k = np.repeat(k, n // n_kv, axis=-2)
    v = np.repeat(v, n // n_kv, axis=-2)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = np.where(mask, logits, -0.7 * np.finfo(np.float32).max)
    return np.einsum("bnts,bsnh->btnh", _np_softmax(logits), v)


def test_dot_product_attention():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(2, 5, 4, 8))
    k = rng.normal(size=(2, 6, 2, 8))  # grouped-query: 4 query heads on 2 kv heads
    v = rng.normal(size=(2, 6, 2, 8))
    bias = rng.normal(size=(2, 1, 5, 6))
    mask = rng.uniform(size=(2, 4, 5, 6)) > 0.3
    causal = np.tril(np.ones((5, 6), bool))
    # the probabilities are computed in f32, as JAX's: compare at f32 accuracy
    tol = dict(rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v), _np_attention(q, k, v), **tol)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v, bias, mask, is_causal=True),
                               _np_attention(q, k, v, bias, mask & causal), **tol)
    window = (np.arange(5)[:, None] <= np.arange(6)[None] + 1) & \
             (np.arange(5)[:, None] >= np.arange(6)[None] - 1)
    np.testing.assert_allclose(
        nn.dot_product_attention(q[0], k[0], v[0], scale=0.5, local_window_size=1),
        _np_attention(q[:1], k[:1], v[:1], scale=0.5, mask=window)[0], **tol)
    out, lse = nn.dot_product_attention(q, k, v, query_seq_lengths=np.int32([3, 5]),
                                        key_value_seq_lengths=np.int32([6, 2]),
                                        return_residual=True)
    lengths = (np.arange(5)[None, :, None] < np.array([3, 5])[:, None, None]) & \
              (np.arange(6)[None, None, :] < np.array([6, 2])[:, None, None])
    expected = _np_attention(q, k, v, mask=lengths[:, None])
    expected[0, 3:] = 0  # padded queries give zeros
    np.testing.assert_allclose(out, expected, **tol)
    assert lse.shape == (2, 5, 4)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    out32 = nn.dot_product_attention(q32, k32, v32)
    assert out32.dtype == np.float32
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(ValueError, match="dtype"):
        nn.dot_product_attention(q32, k, v)


def test_under_jit():
    """One compiled program of many of the functions equals eager evaluation."""
    x = np.linspace(-4, 4, 12).astype(np.float32)
    names = ["relu", "relu6", "sigmoid", "softplus", "silu", "log_sigmoid", "leaky_relu",
             "hard_tanh", "elu", "selu", "gelu", "mish", "sparse_plus", "soft_sign"]

    def many(v):
        out = [getattr(nn, n)(v) for n in names]
        m = jnp.reshape(v, (3, 4))
        out += [nn.softmax(m), nn.log_softmax(m, axis=0), nn.standardize(m),
                nn.logsumexp(m, axis=1), nn.one_hot(jnp.argmax(m, axis=1), 4)]
        return out

    for got, want in zip(jax.jit(many)(x), many(x)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-7)
    grad_fn = jax.grad(lambda v: (nn.relu(v) + nn.gelu(v) + nn.softplus(v)).sum()
                       + nn.log_softmax(v)[0])
    np.testing.assert_allclose(np.asarray(jax.jit(grad_fn)(x)), np.asarray(grad_fn(x)), rtol=1e-6)
