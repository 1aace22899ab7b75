"""A program that turns on 64-bit types first, as JAX's
examples/gaussian_process_regression.py does (``config.update("jax_enable_x64",
True)``): Python scalars, defaults and promotions in 64 bits, random draws in
f64, a Cholesky solve, and back to x64 off at the end."""


def main(jax):
    jnp, random = jax.numpy, jax.random
    from jax import config

    config.update("jax_enable_x64", True)
    try:
        out = {}
        i32 = jnp.arange(3, dtype=jnp.int32)
        f32 = jnp.ones(3, dtype=jnp.float32)
        cases = {
            "py_float": jnp.asarray(1.5), "py_int": jnp.asarray(2), "arange": jnp.arange(3),
            "linspace": jnp.linspace(0, 1, 3), "ones": jnp.ones(2), "i32_plus_float": i32 + 1.5,
            "i32_plus_int": i32 + 1, "f32_times_float": f32 * 2.5, "f32_plus_i32": f32 + i32,
            "i32_div": i32 / 2, "mean_i32": jnp.mean(i32), "sum_i32": jnp.sum(i32),
            "normal": random.normal(random.PRNGKey(0), (3,)),
            "uniform": random.uniform(random.PRNGKey(1), (2,)),
            "randint": random.randint(random.PRNGKey(2), (3,), 0, 10),
            "jit_float": jax.jit(lambda x: x * 2)(1.5),
            "grad": jax.grad(lambda x: x ** 3)(2.0),
            "np_f64": jnp.asarray([0.1, 0.2]) + 0.1,
            "eye": jnp.eye(2), "argmax": jnp.argmax(jnp.array([1.0, 3.0])),
        }
        for name, value in cases.items():
            out[name] = value
            out[name + ":dtype"] = str(value.dtype)

        def exp_quadratic(x1, x2):
            return jnp.exp(-jnp.sum((x1 - x2) ** 2))

        x = jnp.linspace(-1.0, 1.0, 6)[:, None]
        y = jnp.sin(3.0 * x[:, 0])
        K = jax.vmap(lambda a: jax.vmap(lambda b: exp_quadratic(a, b))(x))(x) + 1e-3 * jnp.eye(6)
        L = jnp.linalg.cholesky(K)
        alpha = jax.scipy.linalg.cho_solve((L, True), y)
        out["alpha"] = alpha
        out["alpha_dtype"] = str(alpha.dtype)
        out["loglik"] = -0.5 * y @ alpha - jnp.sum(jnp.log(jnp.diag(L)))
        out["tiny"] = jnp.asarray(1.0) + 1e-12 > 1.0
        return out
    finally:
        config.update("jax_enable_x64", False)
