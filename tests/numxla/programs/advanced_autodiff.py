"""JAX's "Advanced automatic differentiation" page: higher-order grads,
Hessians as jacfwd(jacrev), batched HVPs with vmap over tangents,
Jacobian-matrix and matrix-Jacobian products, stop_gradient in TD(0)
learning and the straight-through estimator, per-example gradients,
derivatives of complex functions (holomorphic and not), vjp/jvp with
has_aux, linearize under vmap, and linear_transpose."""


def main(jax):
    import jax.numpy as jnp
    from jax import grad, jacfwd, jacrev, jit, jvp, vjp, vmap

    out = {}
    f = lambda x: x ** 3 + 2 * x ** 2 - 3 * x + 1
    dfdx = grad(f)
    d2fdx = grad(dfdx)
    d3fdx = grad(d2fdx)
    d4fdx = grad(d3fdx)
    out["derivs"] = (dfdx(1.), d2fdx(1.), d3fdx(1.), d4fdx(1.))

    def hessian(f):
        return jacfwd(grad(f))

    def g(x):
        return jnp.dot(x, x)
    out["hess_dot"] = hessian(g)(jnp.array([1., 2., 3.]))

    # Hessian-vector products, one and batched
    def loss(w):
        return jnp.sum(jnp.tanh(w) ** 2) + 0.1 * jnp.sum(w ** 4)

    def hvp(f, x, v):
        return jvp(grad(f), (x,), (v,))[1]
    w = jnp.array([0.3, -0.7, 1.2])
    V = jnp.eye(3)[:2]
    out["hvp"] = hvp(loss, w, V[0])
    out["hvp_batched"] = vmap(hvp, in_axes=(None, None, 0))(loss, w, V)
    out["hess_rev_fwd"] = jacrev(jacfwd(loss))(w)
    out["hess_fwd_rev"] = jacfwd(jacrev(loss))(w)

    # Jacobian-matrix and matrix-Jacobian products
    def predict(W, b, inputs):
        return jnp.tanh(jnp.dot(inputs, W) + b)
    W = jnp.array([[0.5, -0.2], [0.1, 0.4], [-0.3, 0.8]])
    b = jnp.array([0.1, -0.1])
    inputs = jnp.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    f_W = lambda W: predict(W, b, inputs)
    y, vjp_fun = vjp(f_W, W)
    U = jnp.arange(8.0).reshape(2, 2, 2) / 8.0
    out["vmjp"] = vmap(vjp_fun)(U)
    _, jvp_fun = jax.linearize(f_W, W)
    out["vjmp"] = vmap(jvp_fun)(jnp.stack([W, -W, 2 * W]))
    out["jac_W"] = jacrev(f_W)(W).shape

    # stop_gradient: TD(0) with a linear value function
    value_fn = lambda theta, state: jnp.dot(theta, state)
    theta = jnp.array([0.1, -0.1, 0.])
    s_tm1 = jnp.array([1., 2., -1.])
    r_t = jnp.array(1.)
    s_t = jnp.array([2., 1., 0.])

    def td_loss(theta, s_tm1, r_t, s_t):
        v_tm1 = value_fn(theta, s_tm1)
        target = r_t + value_fn(theta, s_t)
        return -0.5 * ((jax.lax.stop_gradient(target) - v_tm1) ** 2)
    td_update = grad(td_loss)
    out["td_update"] = td_update(theta, s_tm1, r_t, s_t)

    def td_loss_full(theta, s_tm1, r_t, s_t):
        return -0.5 * ((r_t + value_fn(theta, s_t) - value_fn(theta, s_tm1)) ** 2)
    out["td_full"] = grad(td_loss_full)(theta, s_tm1, r_t, s_t)

    # straight-through estimator
    def f_round(x):
        return jnp.round(x)

    def straight_through_f(x):
        zero = x - jax.lax.stop_gradient(x)
        return zero + jax.lax.stop_gradient(f_round(x))
    out["straight_through"] = (f_round(3.2), straight_through_f(3.2), grad(f_round)(3.2),
                               grad(straight_through_f)(3.2))

    # per-example gradients
    perex_grads = jit(vmap(grad(td_loss), in_axes=(None, 0, 0, 0)))
    batched_s_tm1 = jnp.stack([s_tm1, s_tm1])
    batched_r_t = jnp.stack([r_t, r_t])
    batched_s_t = jnp.stack([s_t, s_t])
    out["perex"] = perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t)

    # complex numbers
    def fc(z):
        x, y = jnp.real(z), jnp.imag(z)
        return x ** 2 + y ** 2
    z = 3. + 4j
    out["grad_c_to_r"] = grad(fc)(z)

    def h(z):
        return jnp.sin(z) * z
    out["holomorphic"] = grad(h, holomorphic=True)(1.0 + 2.0j)
    out["jac_holomorphic"] = jacfwd(lambda z: z ** 2, holomorphic=True)(jnp.array([1 + 1j, 2j]))
    out["abs_grad"] = grad(jnp.abs)(z)
    out["abs2_grad"] = grad(lambda z: jnp.abs(z) ** 2)(z)
    out["vjp_complex"] = vjp(jnp.exp, 1j * jnp.pi / 4)[1](1.0 + 0j)
    out["jvp_complex"] = jvp(lambda z: jnp.conj(z) * z, (1.0 + 1j,), (1j,))
    A = jnp.array([[5., 2. + 3j, 5j], [2. - 3j, 7., 1. + 7j], [-5j, 1. - 7j, 12.]])

    out["eigvalsh"] = jnp.linalg.eigvalsh(A)

    # has_aux everywhere
    def model_with_aux(x):
        y = jnp.sin(x)
        return jnp.sum(y ** 2), {"y": y, "n": 3}
    (val, aux), g_aux = jax.value_and_grad(model_with_aux, has_aux=True)(jnp.arange(3.0))
    out["vg_aux"] = (val, aux["y"], aux["n"], g_aux)
    prim, vjp_aux_fun, aux2 = vjp(lambda x: (x * 2, x.sum()), jnp.arange(3.0), has_aux=True)
    out["vjp_aux"] = (prim, vjp_aux_fun(jnp.ones(3)), aux2)
    out["jvp_aux"] = jvp(lambda x: (jnp.sin(x), jnp.cos(x)), (0.5,), (1.0,), has_aux=True)
    out["jacrev_aux"] = jacrev(lambda x: (x ** 2, x.sum()), has_aux=True)(jnp.arange(2.0))

    # integer inputs get float0 tangents; allow_int
    out["allow_int"] = str(grad(lambda x, n: x * n, argnums=1, allow_int=True)(2.0, 3).dtype)
    out["jvp_int_prim"] = jvp(lambda x: x * 2.0, (3.0,), (1.0,))

    # linear_transpose of a linear map
    def lin(x):
        return jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) @ x
    lin_t = jax.linear_transpose(lin, jnp.zeros(2))
    out["linear_transpose"] = lin_t(jnp.ones(3))
    out["jacobian_tree"] = jax.jacobian(lambda p: p["a"] * p["b"])({"a": jnp.ones(2),
                                                                   "b": jnp.arange(2.0)})
    out["grad_of_jit"] = grad(jit(lambda x: jnp.exp(-x ** 2)))(0.5)
    out["jit_of_grad_of_grad"] = jit(grad(grad(lambda x: jnp.exp(-x ** 2))))(0.5)
    return out
