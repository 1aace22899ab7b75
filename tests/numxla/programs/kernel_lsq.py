"""Kernel least squares: Gram matrices built with nested vmap, a momentum
minimiser written with jit/grad, and the fit's gradient with respect to the
kernel's length scale, after JAX's examples/kernel_lsq.py."""


def main(jax):
    from functools import partial

    import numpy as onp
    jnp = jax.numpy
    grad, jit, vmap = jax.grad, jax.jit, jax.vmap

    def gram(kernel, xs):
        return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)

    def minimize(f, x, num_steps=60, step_size=0.02, mass=0.9):
        @jit
        def update(i, state):
            x, velocity = state
            g = grad(f)(x)
            velocity = mass * velocity + g
            return x - step_size * velocity, velocity

        state = (x, jnp.zeros_like(x))
        for i in range(num_steps):
            state = update(i, state)
        return state[0]

    def train(kernel, xs, ys, regularization=0.01):
        gram_ = jit(partial(gram, kernel))
        gram_mat = gram_(xs)

        def objective(v):
            risk = .5 * jnp.sum((jnp.dot(gram_mat, v) - ys) ** 2.)
            reg = regularization * jnp.sum(v ** 2.)
            return risk + reg

        v = minimize(objective, jnp.zeros(xs.shape[0]))

        def predict(x):
            prods = vmap(lambda x_: kernel(x, x_))(xs)
            return jnp.sum(v * prods)

        return jit(vmap(predict)), objective(v)

    def rbf(x, y, length_scale=1.0):
        return jnp.exp(-jnp.sum((x - y) ** 2) / (2 * length_scale ** 2))

    rng = onp.random.RandomState(0)
    xs = rng.rand(12, 2)                      # float64 NumPy data: f32 in JAX
    ys = onp.sin(3 * xs[:, 0]) + xs[:, 1] ** 2
    predict, final_objective = train(rbf, xs, ys)
    xtest = jnp.linspace(0, 1, 5)[:, None] * jnp.ones(2)
    # exact solve of the regularised normal equations for comparison
    K = gram(rbf, jnp.asarray(xs))
    exact = jnp.linalg.solve(K + 0.5 * jnp.eye(12), ys)

    def fit_error(length_scale):
        k = partial(rbf, length_scale=length_scale)
        K = gram(k, xs)
        alpha = jnp.linalg.solve(K + 0.1 * jnp.eye(K.shape[0]), ys)
        return jnp.mean((K @ alpha - ys) ** 2)

    return {
        "gram_diag_sum": jnp.trace(K),
        "predictions": predict(xtest),
        "objective": final_objective,
        "exact_head": exact[:4],
        "fit_error": fit_error(0.5),
        "d_fit_error": grad(fit_error)(0.5),
        "K_dtype": str(K.dtype),
    }
