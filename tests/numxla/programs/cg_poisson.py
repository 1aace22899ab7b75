"""Matrix-free linear solvers as scientific JAX code uses them: a 2-D
Poisson problem whose Laplacian is a matvec function, solved with
jax.scipy.sparse.linalg.cg (with and without a Jacobi preconditioner, x0,
maxiter), under jit and vmap over right-hand sides, with a pytree right-hand
side, gradients through the solve; gmres and bicgstab on a nonsymmetric
advection-diffusion operator; lax.custom_linear_solve with a direct solver
and its transpose; and the dense jax.scipy.linalg solvers to compare."""


def main(jax):
    from functools import partial

    import jax.numpy as jnp
    import jax.scipy as jsp
    from jax import lax
    from jax.scipy.sparse.linalg import bicgstab, cg, gmres

    out = {}
    n = 8
    h = 1.0 / (n + 1)

    def laplacian(u):
        """-Laplacian of u on an n x n grid, zero on the boundary."""
        u_pad = jnp.pad(u, 1)
        return (4 * u - u_pad[:-2, 1:-1] - u_pad[2:, 1:-1] - u_pad[1:-1, :-2]
                - u_pad[1:-1, 2:]) / h ** 2

    xs = jnp.linspace(h, 1 - h, n)
    X, Y = jnp.meshgrid(xs, xs, indexing="ij")
    source = 2 * jnp.pi ** 2 * jnp.sin(jnp.pi * X) * jnp.sin(jnp.pi * Y)
    exact = jnp.sin(jnp.pi * X) * jnp.sin(jnp.pi * Y)

    u, info = cg(laplacian, source, tol=1e-6)
    out["cg"] = u[::2, ::2]
    out["cg_info_is_none"] = info is None
    out["cg_error"] = jnp.max(jnp.abs(u - exact))
    out["cg_residual_small"] = bool(jnp.linalg.norm(laplacian(u) - source) <
                                    1e-4 * jnp.linalg.norm(source))
    jacobi = lambda r: r * h ** 2 / 4  # noqa: E731  (the diagonal's inverse)
    u_pre, _ = cg(laplacian, source, x0=jnp.ones_like(source), M=jacobi, tol=1e-6)
    out["cg_preconditioned"] = u_pre[::3, ::3]
    u_few, _ = cg(laplacian, source, maxiter=3)
    out["cg_maxiter"] = u_few[2, :4]

    @jax.jit
    def solve(f):
        return cg(laplacian, f, tol=1e-6)[0]
    out["cg_jit"] = solve(source)[1, :4]
    scales = jnp.array([1.0, -2.0, 0.5])
    out["cg_vmap"] = jax.vmap(lambda s: solve(s * source)[3, 3])(scales)

    # a pytree unknown: two decoupled systems solved as one
    def block_op(tree):
        return {"a": laplacian(tree["a"]), "b": 3.0 * tree["b"]}
    tree_sol, _ = cg(block_op, {"a": source, "b": jnp.arange(3.0)}, tol=1e-6)
    out["cg_tree"] = (tree_sol["a"][4, 4], tree_sol["b"])
    out["cg_matrix"] = cg(jnp.array([[4.0, 1.0], [1.0, 3.0]]), jnp.array([1.0, 2.0]))[0]

    # gradients through the solve (implicit: another solve, not the iterations)
    def objective(f):
        u = cg(laplacian, f, tol=1e-6)[0]
        return jnp.sum(u ** 2) * h ** 2
    g = jax.grad(objective)(source)
    out["grad_source"] = g[::3, ::3]
    out["grad_matches_adjoint"] = bool(jnp.allclose(
        g, cg(laplacian, 2 * h ** 2 * solve(source), tol=1e-6)[0], rtol=1e-3, atol=1e-6))

    # a nonsymmetric operator: diffusion plus advection
    def advection_diffusion(u, velocity=5.0):
        u_pad = jnp.pad(u, 1)
        advect = velocity * (u_pad[2:, 1:-1] - u_pad[:-2, 1:-1]) / (2 * h)
        return laplacian(u) + advect
    rhs = jnp.ones((n, n))
    u_gm, _ = gmres(advection_diffusion, rhs, tol=1e-6, restart=10)
    u_bi, _ = bicgstab(advection_diffusion, rhs, tol=1e-6)
    out["gmres"] = u_gm[::3, ::3]
    out["bicgstab"] = u_bi[::3, ::3]
    out["gmres_incremental"] = gmres(advection_diffusion, rhs, tol=1e-6, restart=10,
                                     solve_method="incremental")[0][4, ::3]
    out["grad_gmres"] = jax.grad(lambda v: jnp.sum(gmres(
        partial(advection_diffusion, velocity=v), rhs, tol=1e-6)[0]))(5.0)

    # lax.custom_linear_solve: a direct solve, differentiated implicitly
    A = jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.5, -1.0, 5.0]])
    b = jnp.array([1.0, 2.0, 3.0])

    def matvec(x):
        return A @ x

    def direct(matvec, rhs):
        return jnp.linalg.solve(A, rhs)

    def direct_transpose(vecmat, rhs):
        return jnp.linalg.solve(A.T, rhs)

    x = lax.custom_linear_solve(matvec, b, solve=direct, transpose_solve=direct_transpose)
    out["custom_linear_solve"] = x
    out["custom_linear_solve_grad"] = jax.grad(lambda b: jnp.sum(lax.custom_linear_solve(
        matvec, b, solve=direct, transpose_solve=direct_transpose) ** 2))(b)
    out["custom_linear_solve_jvp"] = jax.jvp(lambda b: lax.custom_linear_solve(
        matvec, b, direct, direct_transpose), (b,), (jnp.ones(3),))[1]
    S = A @ A.T

    def cholesky_solve(matvec, rhs):
        return jsp.linalg.cho_solve(jsp.linalg.cho_factor(S), rhs)
    out["custom_symmetric"] = jax.grad(lambda b: jnp.sum(lax.custom_linear_solve(
        lambda x: S @ x, b, cholesky_solve, symmetric=True)))(b)

    # the dense solvers
    out["scipy_solve"] = jsp.linalg.solve(A, b)
    out["scipy_solve_sym"] = jsp.linalg.solve(S, b, assume_a="pos")
    lu_piv = jsp.linalg.lu_factor(A)
    out["lu_solve"] = jsp.linalg.lu_solve(lu_piv, b)
    out["solve_triangular"] = jsp.linalg.solve_triangular(jnp.triu(A), b, lower=False)
    out["cho_solve"] = jsp.linalg.cho_solve(jsp.linalg.cho_factor(S, lower=True), b)
    return out
