"""Second-order autodiff as in JAX's autodiff cookbook: Hessian-vector
products (forward-over-reverse and reverse-over-reverse), jax.hessian,
jacfwd/jacrev over pytrees, linearize, and a few Newton steps."""


def main(jax):
    jnp = jax.numpy
    from jax import grad, jacfwd, jacrev, jvp, vjp

    def f(x):
        return jnp.sum(jnp.sin(x) * x ** 2) + jnp.prod(x[:2]) ** 2

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def hvp_revrev(f, primals, tangents):
        x, = primals
        v, = tangents
        return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

    x = jnp.array([0.5, -1.0, 2.0])
    v = jnp.array([1.0, 0.0, -1.0])
    H = jax.hessian(f)(x)

    def loss(params, inputs):
        w, b = params["w"], params["b"]
        return jnp.mean(jnp.tanh(inputs @ w + b) ** 2)

    params = {"w": jnp.array([[0.1, -0.2], [0.3, 0.4], [0.5, -0.6]]), "b": jnp.array([0.1, 0.2])}
    inputs = jnp.arange(6.0).reshape(2, 3) / 6.0
    J_fwd = jacfwd(lambda p: jnp.tanh(inputs @ p["w"] + p["b"]))(params)
    J_rev = jacrev(lambda p: jnp.tanh(inputs @ p["w"] + p["b"]))(params)
    H_tree = jax.hessian(loss)(params, inputs)

    # Newton's method on a convex function
    def g(z):
        return jnp.sum(jnp.exp(z) - 2.0 * z) + 0.5 * jnp.sum(z ** 2)
    z = jnp.zeros(3)
    for _ in range(4):
        z = z - jnp.linalg.solve(jax.hessian(g)(z), grad(g)(z))

    y, f_jvp = jax.linearize(jnp.sin, x)
    out, f_vjp = vjp(lambda a, b: a * jnp.cos(b), x, v)
    ct = f_vjp(jnp.ones(3))
    jac_scalar = jacrev(lambda a: a ** 3)(2.0)
    return {
        "hvp": hvp(f, (x,), (v,)),
        "hvp_revrev": hvp_revrev(f, (x,), (v,)),
        "H_v": H @ v,
        "H_shape": str(H.shape),
        "J_fwd_w": J_fwd["w"],
        "J_rev_b": J_rev["b"],
        "J_shapes": str(jax.tree_util.tree_map(lambda a: a.shape, J_rev)),
        "H_ww_diag": jnp.diagonal(H_tree["w"]["w"].reshape(6, 6)),
        "H_bb": H_tree["b"]["b"],
        "newton_z": z,
        "lin": f_jvp(v),
        "vjp": ct,
        "jac_scalar": jac_scalar,
        "grad_argnums": grad(lambda a, b: a * b ** 2, argnums=(0, 1))(3.0, 2.0),
        "value_and_grad_aux": jax.value_and_grad(lambda a: (a ** 2, a + 1), has_aux=True)(3.0),
    }
