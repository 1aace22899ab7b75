"""A neural ODE integrated with a fixed-step Runge-Kutta 4 in lax.fori_loop,
fitted to a damped oscillator by gradient descent through the solver, and an
adaptive step loop written with lax.while_loop."""


def main(jax):
    jnp, lax, random = jax.numpy, jax.lax, jax.random
    from functools import partial

    def mlp(params, y):
        h = jnp.tanh(params["w1"] @ y + params["b1"])
        return params["w2"] @ h + params["b2"]

    def rk4_step(f, y, t, dt, params):
        k1 = f(y, t, params)
        k2 = f(y + dt / 2 * k1, t + dt / 2, params)
        k3 = f(y + dt / 2 * k2, t + dt / 2, params)
        k4 = f(y + dt * k3, t + dt, params)
        return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def dynamics(y, t, params):
        return mlp(params, y)

    @partial(jax.jit, static_argnums=(2,))
    def odeint(params, y0, num_steps, t1):
        dt = t1 / num_steps

        def body(i, y):
            return rk4_step(dynamics, y, i * dt, dt, params)
        return lax.fori_loop(0, num_steps, body, y0)

    def true_solution(t):  # y'' = -y - 0.2 y', y(0) = (1, 0)
        w = jnp.sqrt(1 - 0.01)
        x = jnp.exp(-0.1 * t) * (jnp.cos(w * t) + 0.1 / w * jnp.sin(w * t))
        v = jnp.exp(-0.1 * t) * (-(w + 0.01 / w) * jnp.sin(w * t))
        return jnp.stack([x, v])

    k1, k2 = random.split(random.PRNGKey(2024))
    params = {"w1": 0.3 * random.normal(k1, (8, 2)), "b1": jnp.zeros(8),
              "w2": 0.3 * random.normal(k2, (2, 8)), "b2": jnp.zeros(2)}
    y0 = jnp.array([1.0, 0.0])
    target = true_solution(1.0)

    def loss(params):
        return jnp.sum((odeint(params, y0, 10, 1.0) - target) ** 2)

    grad_loss = jax.jit(jax.value_and_grad(loss))
    losses = []
    for _ in range(8):
        l, g = grad_loss(params)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.3 * g, params, g)
        losses.append(l)

    # a linear ODE checked against its exact solution
    def linear(y, t, params):
        return params @ y
    A = jnp.array([[0.0, 1.0], [-1.0, 0.0]])

    def integrate_linear(A, y0, n):
        dt = 1.0 / n
        return lax.fori_loop(0, n, lambda i, y: rk4_step(linear, y, i * dt, dt, A), y0)

    rotated = jax.jit(integrate_linear, static_argnums=2)(A, y0, 20)

    # an adaptive-step Euler integrator with while_loop: halve dt until the
    # error estimate is small, then step until t reaches 1
    def adaptive(y0):
        def cond(state):
            t, y, dt, n = state
            return t < 1.0

        def body(state):
            t, y, dt, n = state
            full = y + dt * (A @ y)
            half = y + dt / 2 * (A @ y)
            half = half + dt / 2 * (A @ half)
            err = jnp.max(jnp.abs(full - half))
            accept = err < 1e-3
            t = jnp.where(accept, t + dt, t)
            y = jnp.where(accept, half, y)
            dt = jnp.where(accept, jnp.minimum(dt * 1.5, 1.0 - t + 1e-6), dt / 2)
            return t, y, dt, n + 1
        return lax.while_loop(cond, body, (0.0, y0, 0.5, 0))

    t_end, y_end, dt_end, n_iter = jax.jit(adaptive)(y0)
    return {"losses": jnp.stack(losses), "rotated": rotated, "exact": jnp.array(
        [jnp.cos(1.0), -jnp.sin(1.0)]), "y_end": y_end, "n_iter": n_iter,
        "t_end_dtype": str(t_end.dtype), "n_dtype": str(n_iter.dtype),
        "grad_b2": g["b2"]}
