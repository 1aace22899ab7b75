"""JAX's Quickstart and "Thinking in JAX" / "Stateful computations" docs as
a user types them: selu under jit, sum_logistic with grad and finite
differences, batched matrix-vector products with vmap, smoothing with
jnp.convolve, static arguments, and a linear regression whose parameters
and optimiser state live in a NamedTuple."""


def main(jax):
    from functools import partial
    from typing import NamedTuple

    import numpy as np
    import jax.numpy as jnp
    from jax import grad, jit, random, vmap

    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    key = random.key(1701)
    x = random.normal(key, (8,))
    selu_jit = jit(selu)

    def sum_logistic(x):
        return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

    x_small = jnp.arange(3.)
    derivative_fn = grad(sum_logistic)

    def first_finite_differences(f, x, eps=1E-3):
        return jnp.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps)
                          for v in jnp.eye(len(x))])

    key1, key2 = random.split(key)
    mat = random.normal(key1, (5, 4))
    batched_x = random.normal(key2, (3, 4))

    def apply_matrix(x):
        return jnp.dot(mat, x)

    @jit
    def vmap_batched_apply_matrix(batched_x):
        return vmap(apply_matrix)(batched_x)

    # Thinking in JAX: smoothing noisy data, static arguments
    xs = jnp.linspace(0, 10, 40)
    y = jnp.sin(xs) + 0.1 * random.normal(random.key(0), xs.shape)
    window = jnp.ones(5) / 5
    smooth = jnp.convolve(y, window, mode="same")

    @partial(jit, static_argnums=(1,))
    def f(x, neg):
        return -x if neg else x

    @jit
    def g(x):
        return x.reshape((np.prod(x.shape),))

    # Stateful computations: linear regression with an explicit state
    class Params(NamedTuple):
        weight: jnp.ndarray
        bias: jnp.ndarray

    def init(rng) -> Params:
        weights_key, bias_key = random.split(rng)
        weight = random.normal(weights_key, ())
        bias = random.normal(bias_key, ())
        return Params(weight, bias)

    def loss(params: Params, x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
        pred = params.weight * x + params.bias
        return jnp.mean((pred - y) ** 2)

    LEARNING_RATE = 0.005

    @jax.jit
    def update(params: Params, x: jnp.ndarray, y: jnp.ndarray) -> Params:
        grad = jax.grad(loss)(params, x, y)
        new_params = jax.tree_util.tree_map(
            lambda param, g: param - g * LEARNING_RATE, params, grad)
        return new_params

    rng = random.key(42)
    true_w, true_b = 2, -1
    x_rng, noise_rng = random.split(rng)
    xs_lin = random.normal(x_rng, (128, 1))
    noise = random.normal(noise_rng, (128, 1)) * 0.5
    ys_lin = xs_lin * true_w + true_b + noise
    params = init(rng)
    for _ in range(50):
        params = update(params, xs_lin, ys_lin)

    return {
        "selu": selu_jit(x),
        "selu_same": bool(jnp.allclose(selu(x), selu_jit(x))),
        "derivative": derivative_fn(x_small),
        "finite_diff": first_finite_differences(sum_logistic, x_small),
        "jacfwd_jacrev": jax.jacfwd(jax.jacrev(sum_logistic))(x_small),
        "batched": vmap_batched_apply_matrix(batched_x),
        "smooth_tail": smooth[-5:],
        "static_neg": f(1, True),
        "reshaped": g(jnp.ones((2, 3))).shape,
        "params": params,
        "x_dtype": str(x.dtype),
    }
