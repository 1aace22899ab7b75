"""The rest of JAX's "Custom derivative rules" page: custom_jvp with
nondiff_argnums (a function argument), defjvps with None, custom_jvp under
vmap/jit and to second order, custom_vjp on pytrees (namedtuples and dicts)
and with nondiff_argnums, closure_convert for a fixed-point solver that
closes over traced values, jax.custom_gradient, and lax.custom_root /
lax.custom_linear_solve."""


def main(jax):
    from functools import partial
    from typing import NamedTuple

    import jax.numpy as jnp
    from jax import custom_jvp, custom_vjp, grad, jit, lax, vmap

    out = {}

    @custom_jvp
    def f(x):
        return x / (1 + jnp.sqrt(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = f(x)
        ans_dot = ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1) ** 2)) * x_dot
        return ans, ans_dot
    out["f_grad0"] = grad(f)(0.)
    out["f_vmap_jit"] = vmap(jit(grad(f)))(jnp.array([0.0, 1.0, 4.0]))
    out["f_second"] = grad(grad(f))(1.0)

    @partial(custom_jvp, nondiff_argnums=(0,))
    def app(g, x):
        return g(x)

    @app.defjvp
    def app_jvp(g, primals, tangents):
        x, = primals
        x_dot, = tangents
        return g(x), 2. * x_dot
    out["app"] = (app(lambda x: x ** 3, 3.), grad(app, 1)(lambda x: x ** 3, 3.))

    @partial(custom_jvp, nondiff_argnums=(1,))
    def scaled_tanh(x, scale):
        return jnp.tanh(x) * scale

    @scaled_tanh.defjvp
    def scaled_tanh_jvp(scale, primals, tangents):
        x, = primals
        t, = tangents
        y = scaled_tanh(x, scale)
        return y, scale * (1 - jnp.tanh(x) ** 2) * t
    out["nondiff_int"] = jit(vmap(grad(scaled_tanh), (0, None)), static_argnums=1)(
        jnp.array([0.0, 0.5]), 3)

    @custom_jvp
    def h(x, y):
        return x * y
    h.defjvps(lambda x_dot, primal_out, x, y: x_dot * y * 10.0, None)
    out["defjvps_none"] = grad(h, argnums=(0, 1))(2.0, 3.0)

    # custom_vjp on pytrees
    class Point(NamedTuple):
        x: float
        y: float

    @custom_vjp
    def fp(pt):
        x, y = pt.x, pt.y
        return {'a': x ** 2, 'b': (jnp.sin(x), jnp.cos(y))}

    def f_fwd(pt):
        return fp(pt), pt

    def f_bwd(pt, g):
        a_bar, (b0_bar, b1_bar) = g['a'], g['b']
        x_bar = 2 * pt.x * a_bar + jnp.cos(pt.x) * b0_bar
        y_bar = -jnp.sin(pt.y) * b1_bar
        return (Point(x_bar, y_bar),)
    fp.defvjp(f_fwd, f_bwd)

    def fun(pt):
        dct = fp(pt)
        return dct['a'] + dct['b'][0]
    pt = Point(1., 2.)
    g_pt = grad(fun)(pt)
    out["pytree_vjp"] = (type(g_pt).__name__, g_pt)

    @partial(custom_vjp, nondiff_argnums=(0,))
    def app2(g, x):
        return g(x)

    def app2_fwd(g, x):
        return app2(g, x), x

    def app2_bwd(g, x, y_bar):
        return (5 * y_bar,)
    app2.defvjp(app2_fwd, app2_bwd)
    out["vjp_nondiff"] = grad(app2, 1)(lambda x: x ** 3, 3.)

    @custom_vjp
    def debug_identity(x):
        return x

    def di_fwd(x):
        return x, ()

    def di_bwd(_, g):
        return (jax.tree.map(lambda t: t * 0.5, g),)
    debug_identity.defvjp(di_fwd, di_bwd)
    out["vmap_vjp"] = vmap(grad(lambda x: debug_identity(x) ** 2))(jnp.arange(3.0))
    out["jit_vjp_tree"] = jit(grad(lambda p: jnp.sum(debug_identity(p)['w'])))(
        {'w': jnp.ones(2), 'b': jnp.zeros(1)})

    # closure_convert: a custom_vjp solver whose function closes over traced values
    def fixed_point_solver(f, x0, *args):
        def cond(carry):
            x_prev, x = carry
            return jnp.max(jnp.abs(x - x_prev)) > 1e-6

        def body(carry):
            _, x = carry
            return x, f(x, *args)
        return lax.while_loop(cond, body, (x0, f(x0, *args)))[1]

    @partial(custom_vjp, nondiff_argnums=(0,))
    def _fixed_point(f, x0, *args):
        return fixed_point_solver(f, x0, *args)

    def _fp_fwd(f, x0, *args):
        x_star = _fixed_point(f, x0, *args)
        return x_star, (x_star, args)

    def _fp_bwd(f, res, x_star_bar):
        x_star, args = res
        _, vjp_args = jax.vjp(lambda *a: f(x_star, *a), *args)
        _, vjp_x = jax.vjp(lambda x: f(x, *args), x_star)
        u = fixed_point_solver(lambda u, v: v + vjp_x(u)[0], x_star_bar, x_star_bar)
        return (jnp.zeros_like(x_star),) + vjp_args(u)
    _fixed_point.defvjp(_fp_fwd, _fp_bwd)

    def fixed_point(f, x0):
        converted, consts = jax.closure_convert(f, x0)
        return _fixed_point(converted, x0, *consts)

    def sqrt_by_fixed_point(a):
        return fixed_point(lambda x: 0.5 * (x + a / x), a)
    out["fp_value"] = sqrt_by_fixed_point(2.0)
    out["fp_grad"] = grad(sqrt_by_fixed_point)(2.0)
    out["fp_grad_jit"] = jit(grad(sqrt_by_fixed_point))(9.0)

    # jax.custom_gradient
    @jax.custom_gradient
    def log_clipped(x):
        def vjp_fn(g):
            return (jnp.clip(g / x, -1.0, 1.0),)
        return jnp.log(x), vjp_fn
    out["custom_gradient"] = vmap(grad(log_clipped))(jnp.array([0.1, 1.0, 10.0]))

    # custom_root and custom_linear_solve: implicit differentiation
    def newton_sqrt(a):
        def f_root(x):
            return x ** 2 - a

        def solve(f_root, x0):
            def body(_, x):
                return x - f_root(x) / (2 * x)
            return lax.fori_loop(0, 25, body, x0)

        def tangent_solve(g, y):
            return y / g(1.0)
        return lax.custom_root(f_root, 1.0, solve, tangent_solve)
    out["custom_root"] = (newton_sqrt(4.0), grad(newton_sqrt)(4.0))

    A = jnp.array([[4.0, 1.0], [1.0, 3.0]])

    def solve_with(matrix, b):
        def matvec(x):
            return matrix @ x

        def cg_like(matvec, b):
            return jnp.linalg.solve(matrix, b)
        return lax.custom_linear_solve(matvec, b, cg_like, symmetric=True)
    b = jnp.array([1.0, 2.0])
    out["linear_solve"] = solve_with(A, b)
    out["linear_solve_grad_b"] = grad(lambda b: jnp.sum(solve_with(A, b) ** 2))(b)
    out["linear_solve_grad_A"] = grad(lambda m: jnp.sum(solve_with(m, b)))(A)
    return out
