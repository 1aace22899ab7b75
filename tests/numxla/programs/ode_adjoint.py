"""Fitting the parameters of an ODE with jax.experimental.ode.odeint
(adaptive Dormand-Prince, adjoint gradients), as the neural-ODE examples in
JAX's documentation do: a damped oscillator's parameters recovered by
gradient descent on trajectory error, with a pytree state."""


def main(jax):
    jnp = jax.numpy
    from jax.experimental.ode import odeint

    def dynamics(state, t, params):
        x, v = state["x"], state["v"]
        return {"x": v, "v": -params["k"] * x - params["c"] * v + params["f"] * jnp.sin(t)}

    ts = jnp.linspace(0.0, 3.0, 7)
    y0 = {"x": jnp.array([1.0, 0.5]), "v": jnp.zeros(2)}
    true_params = {"k": jnp.array(2.0), "c": jnp.array(0.3), "f": jnp.array(0.5)}
    target = odeint(dynamics, y0, ts, true_params, rtol=1e-6, atol=1e-6)

    def loss(params):
        traj = odeint(dynamics, y0, ts, params, rtol=1e-6, atol=1e-6)
        return sum(jnp.mean((traj[k] - target[k]) ** 2) for k in ("x", "v"))

    params = {"k": jnp.array(1.5), "c": jnp.array(0.1), "f": jnp.array(0.0)}
    grad_fn = jax.jit(jax.value_and_grad(loss))
    losses = []
    for _ in range(4):
        value, grads = grad_fn(params)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)
        losses.append(value)
    d_y0 = jax.grad(lambda x0: odeint(dynamics, {"x": x0, "v": jnp.zeros(2)}, ts,
                                      true_params, rtol=1e-6, atol=1e-6)["x"][-1].sum())(
        jnp.array([1.0, 0.5]))
    return {"target_x": target["x"][:, 0], "losses": jnp.stack(losses), "params": params,
            "d_y0": d_y0}
