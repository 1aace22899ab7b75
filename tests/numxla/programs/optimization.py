"""Optimisation idioms: jax.scipy.optimize.minimize (BFGS) on a logistic
regression flattened with jax.flatten_util.ravel_pytree, Newton steps with
jax.hessian, a vmap with a named axis and collectives (psum/pmean) for a
batch statistic, and segment sums with jax.ops."""


def main(jax):
    jnp, random, lax = jax.numpy, jax.random, jax.lax
    from jax.flatten_util import ravel_pytree
    from jax.scipy.optimize import minimize

    key = random.PRNGKey(4)
    kx, kw = random.split(key)
    X = random.normal(kx, (30, 3))
    w_true = jnp.array([1.0, -2.0, 0.5])
    y = (X @ w_true + 0.3 * random.normal(kw, (30,)) > 0).astype(jnp.float32)
    params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    flat, unravel = ravel_pytree(params)

    def nll(flat_params, X, y, l2):
        p = unravel(flat_params)
        logits = X @ p["w"] + p["b"]
        return jnp.mean(jax.nn.softplus(logits) - y * logits) + l2 * jnp.sum(p["w"] ** 2)

    result = minimize(nll, flat, args=(X, y, 0.01), method="BFGS", options={"gtol": 1e-3})
    jit_result = jax.jit(lambda f: minimize(nll, f, args=(X, y, 0.01), method="BFGS",
                                            options={"gtol": 1e-3}).x)(flat)

    # Newton's method with the Hessian
    def newton(flat, steps=5):
        for _ in range(steps):
            g = jax.grad(nll)(flat, X, y, 0.01)
            H = jax.hessian(nll)(flat, X, y, 0.01)
            flat = flat - jnp.linalg.solve(H, g)
        return flat
    newton_x = newton(flat)

    # a batch norm written with a named vmap axis
    def normalize(x):
        mean = lax.pmean(x, "batch")
        var = lax.pmean((x - mean) ** 2, "batch")
        return (x - mean) / jnp.sqrt(var + 1e-5), lax.psum(jnp.ones(()), "batch")
    normed, count = jax.vmap(normalize, axis_name="batch")(X)

    segments = jnp.array([0, 1, 1, 2, 2, 2])
    return {
        "bfgs_x": unravel(result.x),
        "bfgs_fun": result.fun,
        "bfgs_success": result.success,
        "bfgs_nit": result.nit,
        "jit_bfgs_x": jit_result,
        "newton_x": newton_x,
        "normed_mean": normed.mean(0),
        "normed_std": normed.std(0),
        "count": count[:2],
        "segment_sum": jax.ops.segment_sum(jnp.arange(6.0), segments, num_segments=3),
        "segment_max": jax.ops.segment_max(jnp.arange(6.0), segments, num_segments=4),
        "flat_dtype": str(flat.dtype),
        "flat_size": flat.size,
    }
