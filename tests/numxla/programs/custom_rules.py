"""Custom differentiation rules from JAX's "Custom derivative rules" docs:
a numerically stable log1pexp with custom_jvp, gradient clipping with
custom_vjp, a fixed-point solver with an implicit custom_vjp, and
checkpoint / stop_gradient."""


def main(jax):
    from functools import partial

    jnp, lax = jax.numpy, jax.lax
    from jax import custom_jvp, custom_vjp, grad, jit, vmap

    @custom_jvp
    def log1pexp(x):
        return jnp.log(1. + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = log1pexp(x)
        ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
        return ans, ans_dot

    @custom_jvp
    def f_defjvps(x, y):
        return jnp.sin(x) * y

    f_defjvps.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
                      lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)

    @custom_vjp
    def clip_gradient(lo, hi, x):
        return x  # identity function

    def clip_gradient_fwd(lo, hi, x):
        return x, (lo, hi)  # save bounds as residuals

    def clip_gradient_bwd(res, g):
        lo, hi = res
        return (None, None, jnp.clip(g, lo, hi))  # use None to indicate zero cotangents

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    @partial(custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return jnp.abs(x_prev - x) > 1e-6

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)

        _, x_star = lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)
        a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
        return a_bar, jnp.zeros_like(x_star)

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        update = lambda a, x: 0.5 * (x + a / x)
        return fixed_point(update, a, a)

    @jax.checkpoint
    def block(x):
        return jnp.sin(jnp.sin(x) * 2.0)

    def chain(x):
        return jnp.sum(block(block(x)))

    xs = jnp.array([-2.0, 0.0, 3.0, 100.0])
    return {
        "log1pexp_100": log1pexp(100.),
        "grad_log1pexp": vmap(grad(log1pexp))(xs),
        "jit_grad_log1pexp": jit(grad(log1pexp))(3.),
        "defjvps": grad(f_defjvps, argnums=(0, 1))(1.0, 2.0),
        "clip_grad": vmap(grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x) * 3.)))(xs),
        "newton_sqrt": newton_sqrt(2.),
        "grad_newton_sqrt": grad(newton_sqrt)(2.),
        "jit_grad_newton_sqrt": jit(grad(newton_sqrt))(9.),
        "checkpoint_grad": jit(grad(chain))(jnp.linspace(0.0, 1.0, 4)),
        "stop_gradient": grad(lambda x: x ** 2 + lax.stop_gradient(x ** 3))(2.0),
        "jvp_log1pexp": jax.jvp(log1pexp, (2.0,), (3.0,)),
    }
