"""``lax.custom_root``, ``lax.custom_linear_solve`` (autodiff/implicit.py) and the
Krylov solvers of ``numxla.scipy.sparse.linalg`` built on them: forward values
against NumPy, derivatives against the implicit function theorem's closed forms
and finite differences."""
import numpy as np
import pytest

import numxla
import numxla.numpy as jnp
import numxla.scipy.sparse.linalg as sparse_linalg
from numxla import lax

RNG = np.random.default_rng(0)
SPD = (lambda q: q @ q.T + 4 * np.eye(4))(RNG.normal(size=(4, 4)))
GENERAL = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
B = RNG.normal(size=4)


def newton(f, x0):
    """Newton's method for a scalar root, as a ``solve`` for ``custom_root``."""
    def step(state):
        x, k = state
        return x - f(x) / numxla.grad(f)(x), k + 1

    def unconverged(state):
        x, k = state
        return (jnp.abs(f(x)) > 1e-12) & (k < 50)
    return lax.while_loop(unconverged, step, (x0, 0))


def scalar_tangent_solve(g, y):
    return y / g(1.0)


def cube_root(a):
    return lax.custom_root(lambda x: x ** 3 - a, 1.0, lambda f, x0: newton(f, x0)[0],
                           scalar_tangent_solve)


# --------------------------------------------------------------------------
# custom_root
# --------------------------------------------------------------------------

def test_custom_root_value_and_derivatives_by_the_implicit_function_theorem():
    a = 5.0
    root = a ** (1 / 3)
    assert float(cube_root(a)) == pytest.approx(root, rel=1e-12)
    first, second = root / (3 * a), -2 * root / (9 * a ** 2)   # d/da a^(1/3), d2/da2
    assert float(numxla.grad(cube_root)(a)) == pytest.approx(first, rel=1e-10)
    assert float(numxla.jvp(cube_root, (a,), (1.0,))[1]) == pytest.approx(first, rel=1e-10)
    assert float(numxla.grad(numxla.grad(cube_root))(a)) == pytest.approx(second, rel=1e-8)
    got = numxla.vmap(numxla.grad(cube_root))(jnp.array([1.0, 8.0]))
    np.testing.assert_allclose(got, [1 / 3, 1 / 12], rtol=1e-10)


def test_custom_root_under_jit():
    assert float(numxla.jit(numxla.grad(cube_root))(8.0)) == pytest.approx(1 / 12, rel=1e-10)


def test_custom_root_vector_with_aux_and_no_derivative_for_the_guess():
    # f(x, theta) = M x + x^3 - theta = 0: dx/dtheta = (M + 3 diag(x^2))^-1
    M = np.diag([3.0, 4.0, 5.0]) + 0.5

    def solve(f, x0):
        def step(state):
            x, k = state
            return x - jnp.linalg.solve(numxla.jacfwd(f)(x), f(x)), k + 1
        return lax.fori_loop(0, 30, lambda i, s: step(s), (x0, 0))

    def tangent_solve(g, y):
        return jnp.linalg.solve(numxla.jacfwd(g)(y), y)

    def root(theta, guess):
        return lax.custom_root(lambda x: jnp.asarray(M) @ x + x ** 3 - theta, guess, solve,
                               tangent_solve, has_aux=True)

    theta = jnp.array([1.0, -2.0, 0.5])
    (x, iterations) = root(theta, jnp.zeros(3))
    np.testing.assert_allclose(M @ np.asarray(x) + np.asarray(x) ** 3, theta, atol=1e-12)
    assert int(iterations) == 30
    expected = np.linalg.inv(M + 3 * np.diag(np.asarray(x) ** 2))
    jac = numxla.jacrev(lambda t: root(t, jnp.zeros(3))[0])(theta)
    np.testing.assert_allclose(jac, expected, rtol=1e-10)
    np.testing.assert_allclose(numxla.jacfwd(lambda t: root(t, jnp.zeros(3))[0])(theta),
                               expected, rtol=1e-10)
    guess_grad = numxla.grad(lambda g: root(theta, g)[0].sum())(jnp.zeros(3))
    np.testing.assert_array_equal(guess_grad, np.zeros(3))


# --------------------------------------------------------------------------
# custom_linear_solve
# --------------------------------------------------------------------------

def direct_solve(A, b, symmetric=False, **kwargs):
    """``A x = b`` by ``custom_linear_solve`` with direct solves; ``A`` enters
    through the matvec's closure."""
    return lax.custom_linear_solve(
        lambda x: A @ x, b, lambda mv, r: jnp.linalg.solve(A, r),
        transpose_solve=None if symmetric else (lambda vm, r: jnp.linalg.solve(A.T, r)),
        symmetric=symmetric, **kwargs)


@pytest.mark.parametrize("symmetric", [False, True])
def test_custom_linear_solve_derivatives_in_b_and_in_the_matrix(symmetric):
    A = jnp.asarray(SPD if symmetric else GENERAL)
    inv = np.linalg.inv(np.asarray(A))
    x = inv @ B
    np.testing.assert_allclose(direct_solve(A, jnp.asarray(B), symmetric), x, rtol=1e-12)
    np.testing.assert_allclose(numxla.jacrev(lambda b: direct_solve(A, b, symmetric))(B), inv,
                               rtol=1e-10)
    np.testing.assert_allclose(numxla.jacfwd(lambda b: direct_solve(A, b, symmetric))(B), inv,
                               rtol=1e-10)
    # d(sum x)/dA = -outer(A^-T 1, x)
    loss = lambda A: direct_solve(A, jnp.asarray(B), symmetric).sum()  # noqa: E731
    expected = -np.outer(inv.T @ np.ones(4), x)
    np.testing.assert_allclose(numxla.grad(loss)(A), expected, rtol=1e-10)
    tangent = numxla.jvp(loss, (A,), (jnp.ones((4, 4)),))[1]
    assert float(tangent) == pytest.approx(expected.sum(), rel=1e-10)


def test_custom_linear_solve_second_derivative_matches_finite_differences():
    loss = lambda A: jnp.sum(direct_solve(A, jnp.asarray(B)) ** 2)  # noqa: E731
    hess = np.asarray(numxla.hessian(loss)(jnp.asarray(GENERAL)))
    grad = numxla.grad(loss)
    eps = 1e-6
    for i, j in [(0, 0), (1, 3), (2, 1)]:
        step = np.zeros((4, 4))
        step[i, j] = eps
        fd = (np.asarray(grad(jnp.asarray(GENERAL + step))) -
              np.asarray(grad(jnp.asarray(GENERAL - step)))) / (2 * eps)
        np.testing.assert_allclose(hess[:, :, i, j], fd, rtol=1e-5, atol=1e-8)


def test_custom_linear_solve_pytree_and_aux():
    def matvec(x):
        return {"a": 2.0 * x["a"], "b": x["a"] + 3.0 * x["b"]}

    def solve(mv, r):
        a = r["a"] / 2.0
        return {"a": a, "b": (r["b"] - a) / 3.0}, jnp.int32(1)

    b = {"a": jnp.array([2.0, 4.0]), "b": jnp.array([7.0, 8.0])}
    x, aux = lax.custom_linear_solve(matvec, b, solve, has_aux=True)
    np.testing.assert_allclose(x["a"], [1.0, 2.0])
    np.testing.assert_allclose(x["b"], [2.0, 2.0])
    assert int(aux) == 1
    tangent = numxla.jvp(lambda b: lax.custom_linear_solve(matvec, b, solve, has_aux=True)[0],
                         (b,), ({"a": jnp.ones(2), "b": jnp.zeros(2)},))[1]
    np.testing.assert_allclose(tangent["b"], [-1 / 6, -1 / 6])


def test_custom_linear_solve_reverse_mode_needs_transpose_solve():
    A = jnp.asarray(GENERAL)
    solve_only = lambda b: lax.custom_linear_solve(  # noqa: E731
        lambda x: A @ x, b, lambda mv, r: jnp.linalg.solve(A, r))
    np.testing.assert_allclose(numxla.jacfwd(solve_only)(B), np.linalg.inv(GENERAL), rtol=1e-10)
    with pytest.raises(TypeError, match="custom_linear_solve: .*transpose_solve"):
        numxla.grad(lambda b: solve_only(b).sum())(jnp.asarray(B))


def test_bad_arguments_name_the_function():
    with pytest.raises(TypeError, match="custom_linear_solve: matvec must be callable"):
        lax.custom_linear_solve(np.eye(2), jnp.ones(2), lambda mv, r: r)
    with pytest.raises(TypeError, match="custom_root: tangent_solve must be callable"):
        lax.custom_root(lambda x: x, 0.0, lambda f, x: x, None)
    with pytest.raises(TypeError, match="custom_root: with has_aux=True"):
        lax.custom_root(lambda x: x, 0.0, lambda f, x: x, scalar_tangent_solve, has_aux=True)
    with pytest.raises(TypeError, match="custom_linear_solve: solve must return"):
        lax.custom_linear_solve(lambda x: x, jnp.ones(2), lambda mv, r: (r, r))


# --------------------------------------------------------------------------
# scipy.sparse.linalg
# --------------------------------------------------------------------------

SOLVERS = [("cg", SPD), ("bicgstab", GENERAL), ("gmres", GENERAL)]


@pytest.mark.parametrize("name,A", SOLVERS)
def test_krylov_solvers_match_numpy(name, A):
    solver = getattr(sparse_linalg, name)
    expected = np.linalg.solve(A, B)
    x, info = solver(jnp.asarray(A), jnp.asarray(B), tol=1e-12)
    assert info is None
    np.testing.assert_allclose(x, expected, rtol=1e-9)
    # a function, a preconditioner (Jacobi), a starting guess
    x, _ = solver(lambda v: jnp.asarray(A) @ v, B, x0=jnp.ones(4), tol=1e-12,
                  M=jnp.diag(1 / np.diag(A)))
    np.testing.assert_allclose(x, expected, rtol=1e-9)
    # a pytree right-hand side; the operator's matrix is [[2, 0, 1], [0, 2, 1], [1, 1, 3]]
    x, _ = solver(lambda t: {"p": 2.0 * t["p"] + t["q"], "q": 3.0 * t["q"] + t["p"].sum()},
                  {"p": jnp.array([3.0, 5.0]), "q": jnp.array([5.0])}, tol=1e-12)
    expected = np.linalg.solve([[2, 0, 1], [0, 2, 1], [1, 1, 3]], [3.0, 5.0, 5.0])
    np.testing.assert_allclose(x["p"], expected[:2], rtol=1e-9)
    np.testing.assert_allclose(x["q"], expected[2:], rtol=1e-9)


@pytest.mark.parametrize("name,A", SOLVERS)
def test_krylov_solvers_are_differentiable(name, A):
    solver = getattr(sparse_linalg, name)
    inv = np.linalg.inv(A)
    grad_b = numxla.grad(lambda b: solver(jnp.asarray(A), b, tol=1e-12)[0].sum())(B)
    np.testing.assert_allclose(grad_b, inv.T @ np.ones(4), rtol=1e-8)
    grad_A = numxla.grad(lambda A: solver(A, jnp.asarray(B), tol=1e-12)[0].sum())(jnp.asarray(A))
    np.testing.assert_allclose(grad_A, -np.outer(inv.T @ np.ones(4), inv @ B), rtol=1e-7,
                               atol=1e-10)


def test_gmres_restarts_and_a_limited_krylov_space():
    for restart in (1, 2, 3):
        x, _ = sparse_linalg.gmres(jnp.asarray(GENERAL), B, restart=restart, tol=1e-12,
                                   solve_method="incremental")
        np.testing.assert_allclose(x, np.linalg.solve(GENERAL, B), rtol=1e-9)
    # one cycle of one vector: the minimal-residual multiple of b
    x, _ = sparse_linalg.gmres(jnp.asarray(GENERAL), B, restart=1, maxiter=1)
    ab = GENERAL @ B
    np.testing.assert_allclose(x, (ab @ B) / (ab @ ab) * B, rtol=1e-10)


def test_unconverged_iterates_match_jax():
    # what JAX's solvers return (x64) when stopped after a few iterations
    A_spd, A_gen, b = jnp.asarray(SPD), jnp.asarray(GENERAL), jnp.asarray(B)
    jacobi_spd, jacobi_gen = jnp.diag(1 / np.diag(SPD)), jnp.diag(1 / np.diag(GENERAL))
    cases = [
        (sparse_linalg.cg(A_spd, b, maxiter=2)[0],
         [-0.02947024723439489, 0.09255802183356474, 0.02725485461916005, 0.03113949788845438]),
        (sparse_linalg.cg(A_spd, b, maxiter=2, M=jacobi_spd)[0],
         [-0.04036988267023473, 0.09092650404509835, 0.03091641496678424, 0.0291444578315429]),
        (sparse_linalg.bicgstab(A_gen, b, maxiter=2)[0],
         [-0.08342472926650041, 0.10619986094609335, 0.11704975478749416, 0.10863406779024729]),
        (sparse_linalg.gmres(A_gen, b, restart=2, maxiter=1)[0],
         [-0.07906926417012251, 0.10339025280707972, 0.1127809726500682, 0.11604256698670136]),
        (sparse_linalg.gmres(A_gen, b, restart=2, maxiter=1, M=jacobi_gen)[0],
         [-0.08271677223121358, 0.10754327563159155, 0.11569220118676872, 0.10671833457528057]),
    ]
    for got, expected in cases:
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_krylov_solvers_under_jit_and_vmap():
    cg = numxla.jit(lambda A, b: sparse_linalg.cg(A, b, tol=1e-12)[0])
    np.testing.assert_allclose(cg(jnp.asarray(SPD), B), np.linalg.solve(SPD, B), rtol=1e-9)
    rhs = np.stack([B, 2 * B + 1])
    got = numxla.vmap(lambda b: sparse_linalg.bicgstab(jnp.asarray(GENERAL), b, tol=1e-12)[0])(rhs)
    np.testing.assert_allclose(got, np.linalg.solve(GENERAL, rhs.T).T, rtol=1e-9)


def test_jax_scipy_sparse_linalg_spelling():
    assert numxla.scipy.sparse.linalg.cg is sparse_linalg.cg
    assert numxla.lax.custom_root is lax.custom_root
    from tests.numxla.programs import as_jax
    with as_jax(numxla):
        import jax.scipy.sparse.linalg
        assert jax.scipy.sparse.linalg.gmres is sparse_linalg.gmres


def test_krylov_solvers_bad_arguments():
    with pytest.raises(ValueError, match="cg: A must be a square matrix"):
        sparse_linalg.cg(jnp.ones((2, 3)), jnp.ones(3))
    with pytest.raises(TypeError, match="bicgstab: A must be a matrix, a function"):
        sparse_linalg.bicgstab("A", jnp.ones(3))
    with pytest.raises(ValueError, match="gmres: x0 and b must have the same structure"):
        sparse_linalg.gmres(jnp.eye(3), jnp.ones(3), x0=jnp.ones(2))
    with pytest.raises(ValueError, match="gmres: solve_method"):
        sparse_linalg.gmres(jnp.eye(3), jnp.ones(3), solve_method="qr")
