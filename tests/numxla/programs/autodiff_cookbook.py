"""JAX's "Autodiff cookbook": gradients of a logistic regression with
argnums and over dicts, value_and_grad, a finite-difference check and
jax.test_util.check_grads, jvp and vjp, Jacobians with jacfwd/jacrev (and
their agreement), Jacobian-matrix and matrix-Jacobian products with vmap
over jvp/vjp, hessian of a pytree function, linearize, complex
differentiation (holomorphic and real-valued functions of complex inputs),
and gradients through jnp.linalg: det, slogdet, inv, solve, cholesky, eigh,
svd, qr, norm, pinv, matrix_power, expm."""


def main(jax):
    import jax.numpy as jnp
    from jax import grad, jacfwd, jacrev, jit, jvp, random, vjp, vmap
    from jax.test_util import check_grads

    out = {}
    key = random.key(0)

    def sigmoid(x):
        return 0.5 * (jnp.tanh(x / 2) + 1)

    def predict(W, b, inputs):
        return sigmoid(jnp.dot(inputs, W) + b)

    inputs = jnp.array([[0.52, 1.12, 0.77],
                        [0.88, -1.08, 0.15],
                        [0.52, 0.06, -1.30],
                        [0.74, -2.49, 1.39]])
    targets = jnp.array([True, True, False, True])

    def loss(W, b):
        preds = predict(W, b, inputs)
        label_probs = preds * targets + (1 - preds) * (1 - targets)
        return -jnp.sum(jnp.log(label_probs))

    key, W_key, b_key = random.split(key, 3)
    W = random.normal(W_key, (3,))
    b = random.normal(b_key, ())
    out["W_grad"] = grad(loss, argnums=0)(W, b)
    out["W_grad_default"] = grad(loss)(W, b)
    out["b_grad"] = grad(loss, 1)(W, b)
    out["W_b_grad"] = grad(loss, (0, 1))(W, b)

    def loss2(params_dict):
        preds = predict(params_dict["W"], params_dict["b"], inputs)
        label_probs = preds * targets + (1 - preds) * (1 - targets)
        return -jnp.sum(jnp.log(label_probs))
    out["dict_grad"] = grad(loss2)({"W": W, "b": b})
    loss_value, Wb_grad = jax.value_and_grad(loss, (0, 1))(W, b)
    out["value_and_grad"] = (loss_value, loss(W, b))

    # finite differences
    eps = 1e-4
    b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps
    out["b_fd_close"] = bool(jnp.abs(b_grad_numerical - grad(loss, 1)(W, b)) < 1e-2)
    key, subkey = random.split(key)
    vec = random.normal(subkey, W.shape)
    unitvec = vec / jnp.sqrt(jnp.vdot(vec, vec))
    W_grad_numerical = (loss(W + eps / 2. * unitvec, b) - loss(W - eps / 2. * unitvec, b)) / eps
    out["W_dirderiv_close"] = bool(jnp.abs(W_grad_numerical - jnp.vdot(grad(loss)(W, b),
                                                                       unitvec)) < 1e-2)
    check_grads(loss, (W, b), order=2)
    check_grads(jnp.sin, (1.2,), order=1, modes=["rev"])
    out["check_grads_ok"] = True

    # jvp, vjp, Jacobians
    f = lambda W: predict(W, b, inputs)  # noqa: E731
    y, u = jvp(f, (W,), (vec,))
    out["jvp"] = (y, u)
    y2, vjp_fun = vjp(f, W)
    out["vjp"] = vjp_fun(jnp.ones_like(y2))
    J = jacfwd(f)(W)
    out["jacfwd"] = J
    out["jac_agree"] = bool(jnp.allclose(J, jacrev(f)(W)))

    def hessian(f):
        return jacfwd(jacrev(f))
    H = hessian(f)(W)
    out["hessian_shape"] = H.shape
    out["hessian_row"] = H[1]

    # Jacobian-matrix and matrix-Jacobian products
    key, subkey = random.split(key)
    M = random.normal(subkey, (3, 3))

    def vmap_mjp(f, x, M):
        y, vjp_fun = vjp(f, x)
        outs, = vmap(vjp_fun)(M)
        return outs
    U = random.normal(random.key(7), (2, 4))
    out["mjp"] = vmap_mjp(f, W, M=U)
    out["mjp_loop"] = jnp.vstack([vjp(f, W)[1](ui)[0] for ui in U])

    def vmap_jmp(f, W, M):
        _jvp = lambda s: jvp(f, (W,), (s,))[1]  # noqa: E731
        return vmap(_jvp, in_axes=1)(M)
    out["jmp"] = vmap_jmp(f, W, M)

    # jacrev/jacfwd/hessian of pytree functions
    def tree_fn(params):
        return {"out": jnp.tanh(params["w"] @ params["x"]), "s": jnp.sum(params["x"] ** 3)}
    params = {"w": jnp.array([[1.0, 2.0], [0.5, -1.0]]), "x": jnp.array([0.3, -0.2])}
    jr = jacrev(tree_fn)(params)
    jf = jacfwd(tree_fn)(params)
    out["jac_tree_shapes"] = str(jax.tree_util.tree_map(lambda a: a.shape, jr))
    out["jac_tree"] = (jr["out"]["w"], jf["s"]["x"])
    out["hessian_tree"] = jax.hessian(lambda p: jnp.sum(tree_fn(p)["out"] ** 2))(params)["x"]
    y_lin, f_lin = jax.linearize(f, W)
    out["linearize"] = (y_lin, f_lin(vec), jit(f_lin)(2 * vec))

    # complex numbers
    def fc(z):
        x, y = jnp.real(z), jnp.imag(z)
        return x ** 2 + y ** 2
    z = 3. + 4j
    out["grad_real_of_complex"] = grad(fc)(z)
    out["grad_abs2"] = grad(lambda z: jnp.abs(z) ** 2)(z)
    out["grad_holomorphic"] = grad(lambda z: jnp.sin(z) * z, holomorphic=True)(z)
    out["grad_holomorphic_exp"] = grad(jnp.exp, holomorphic=True)(1.0 + 0.5j)
    out["jacfwd_complex"] = jacfwd(lambda z: z ** 2, holomorphic=True)(jnp.array([1 + 1j, 2j]))
    out["jacrev_complex_in"] = jacrev(lambda z: jnp.real(jnp.conj(z) * z))(
        jnp.array([1.0 + 1j, 2.0]))
    out["grad_complex_loss"] = grad(lambda A: jnp.real(jnp.sum(A * jnp.conj(A) * 1j + A)))(
        jnp.array([[1 + 2j, 0.5j], [1.0, -1j]]))
    out["vjp_complex"] = vjp(jnp.sin, 1.0 + 2.0j)[1](1.0 + 0j)

    # gradients through linear algebra on real matrices
    A = jnp.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.0, 0.4, 1.0]])
    S = A @ A.T + jnp.eye(3)
    rhs = jnp.array([1.0, -1.0, 0.5])
    la = jnp.linalg
    out["grad_det"] = grad(la.det)(A)
    out["grad_slogdet"] = grad(lambda a: la.slogdet(a)[1])(A)
    out["grad_inv"] = grad(lambda a: jnp.sum(la.inv(a) ** 2))(A)
    out["grad_solve"] = grad(lambda a, r: jnp.sum(la.solve(a, r) ** 2), (0, 1))(A, rhs)
    out["grad_cholesky"] = grad(lambda s: jnp.sum(la.cholesky(s) @ rhs))(S)
    out["grad_eigh"] = grad(lambda s: jnp.sum(la.eigh(s)[0] ** 2) + jnp.max(la.eigh(s)[0]))(S)
    out["grad_eigh_vecs"] = grad(lambda s: jnp.sum(jnp.abs(la.eigh(s)[1][:, -1])))(S)
    out["grad_eigvalsh"] = grad(lambda s: la.eigvalsh(s)[0])(S)
    out["grad_svd"] = grad(lambda a: jnp.sum(la.svd(a, compute_uv=False)))(A)
    out["grad_svd_uv"] = grad(lambda a: jnp.sum(jnp.abs(la.svd(a)[0][:, 0])))(A)
    out["grad_qr"] = grad(lambda a: jnp.sum(jnp.abs(jnp.diag(la.qr(a)[1]))))(A)
    out["grad_norm"] = grad(lambda a: la.norm(a) + la.norm(a, "nuc") + la.norm(a[0]))(A)
    out["grad_pinv"] = grad(lambda a: jnp.sum(la.pinv(a)))(A)
    out["grad_matrix_power"] = grad(lambda a: jnp.sum(la.matrix_power(a, 3)))(A)
    out["grad_expm"] = grad(lambda a: jnp.trace(jax.scipy.linalg.expm(a)))(0.3 * A)
    out["grad_lstsq"] = grad(lambda a: jnp.sum(la.lstsq(a, rhs)[0]))(A)
    out["jvp_det"] = jvp(la.det, (A,), (jnp.eye(3),))
    return out
