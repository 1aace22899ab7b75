"""``primitives.numpy.linalg`` against ``numpy.linalg``: results on several
shapes (batches included) and element types, the factorisations' defining
properties where their signs are free (eigenvectors, singular vectors),
JAX's conventions where they differ from NumPy's, a sample under ``jit``
and ``vmap``, and derivatives against finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives.numpy as xnp
from numxla.autodiff import check_grads, jvp, vmap
from numxla.compile import jit
from numxla.tracer import pytree

la = xnp.linalg
RNG = np.random.default_rng(14)
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.float64): 1e-10,
       np.dtype(np.complex64): 2e-4, np.dtype(np.complex128): 1e-10}


def check(got, want, *, dtype=True, tol=None, err=""):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), err
        for g, w in zip(got, want):
            check(g, w, dtype=dtype, tol=tol, err=err)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{err}: shape {g.shape} != {w.shape}"
    if dtype:
        assert g.dtype == w.dtype, f"{err}: dtype {g.dtype} != {w.dtype}"
    t = TOL.get(g.dtype, 1e-10) if tol is None else tol
    np.testing.assert_allclose(g, w, rtol=t, atol=t, err_msg=err)


def normal(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(shape, dtype=np.float64):
    """Random matrices plus a multiple of the identity (pivots stay away from 0)."""
    n = shape[-1]
    return (normal(shape, dtype) + 3 * np.eye(n)).astype(dtype)


def spd(shape, dtype=np.float64):
    a = normal(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def symmetric(shape, dtype=np.float64):
    a = normal(shape, dtype)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


SQUARE = [(1, 1), (3, 3), (2, 4, 4), (2, 1, 5, 5)]
TYPES = [np.float32, np.float64]


# -- LU-based ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", TYPES + [np.complex128])
@pytest.mark.parametrize("shape", SQUARE)
def test_lu_based_functions(shape, dtype):
    a = well_conditioned(shape, dtype)
    check(la.det(a), np.linalg.det(a))
    check(la.slogdet(a), tuple(np.linalg.slogdet(a)))
    check(la.inv(a), np.linalg.inv(a))
    b = normal(shape[:-1] + (2,), dtype)
    check(la.solve(a, b), np.linalg.solve(a, b))
    v = normal(shape[-1:], dtype)
    check(la.solve(a, v), np.linalg.solve(a, v))
    for n in (0, 1, 3, -2):
        check(la.matrix_power(a, n), np.linalg.matrix_power(a, n), tol=1e-3 if dtype ==
              np.float32 else None, err=f"n={n}")


def test_solve_broadcasts_batches_and_singular_matrices():
    a, b = well_conditioned((3, 1, 4, 4)), normal((2, 4, 3))
    check(la.solve(a, b), np.linalg.solve(a, b))
    check(la.solve(a[0, 0], b), np.linalg.solve(a[0, 0], b))
    check(la.solve(np.array([[2.0, 1], [4, 3]]), np.array([1.0, 2])), np.array([0.5, 0.0]))
    singular = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])
    check(la.det(singular), 0.0)
    sign, logdet = la.slogdet(singular)
    assert sign == 0 and logdet == -np.inf
    check(la.det(np.zeros((0, 0))), 1.0)
    check(la.det(np.array([[0.0, 1], [1, 0]])), -1.0)  # a row interchange flips the sign
    assert la.det(np.eye(3, dtype=np.float32)).dtype == np.float32
    assert la.det(np.eye(2, dtype=np.int32)).dtype == np.float32  # integers: f32


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 2)])
def test_lu_factors_of_rectangular_matrices(shape):
    from numxla.primitives.numpy._decompositions import lu, lu_unpack
    a = normal(shape)
    packed, pivots, perm = lu(a)
    lower, upper = lu_unpack(packed)
    check(np.take_along_axis(a, np.asarray(perm)[..., None], -2), np.asarray(lower) @ upper,
          dtype=False)
    assert np.all(np.abs(np.tril(np.asarray(lower), -1)) <= 1 + 1e-12)  # partial pivoting
    swapped = np.broadcast_to(np.arange(shape[-2]), np.shape(perm)).copy()
    for j in range(min(shape[-2:])):  # LAPACK's interchanges replay to the permutation
        p = np.asarray(pivots)[..., j]
        idx = np.indices(p.shape)
        swapped[(*idx, j)], swapped[(*idx, p)] = swapped[(*idx, p)], swapped[(*idx, j)].copy()
    check(swapped, perm, dtype=False)


def test_tensor_solve_and_inverse():
    a = well_conditioned((6, 6)).reshape(2, 3, 6)
    b = normal((2, 3))
    check(la.tensorsolve(a, b), np.linalg.tensorsolve(a, b))
    a2 = well_conditioned((6, 6)).reshape(3, 2, 3, 2)  # axis 0 moves to the end
    check(la.tensorsolve(a2, b, axes=(0,)), np.linalg.tensorsolve(a2, b, axes=(0,)))
    t = well_conditioned((24, 24)).reshape(4, 6, 8, 3)
    check(la.tensorinv(t), np.linalg.tensorinv(t))
    t1 = t.reshape(24, 4, 6)
    check(la.tensorinv(t1, 1), np.linalg.tensorinv(t1, 1))


# -- Cholesky and QR ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", TYPES + [np.complex128])
@pytest.mark.parametrize("shape", SQUARE)
def test_cholesky(shape, dtype):
    a = spd(shape, dtype)
    check(la.cholesky(a), np.linalg.cholesky(a))
    check(la.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True))
    lower_only = np.tril(a) + np.triu(np.full(shape, 7.0, dtype), 1)
    check(la.cholesky(lower_only, symmetrize_input=False), np.linalg.cholesky(a))


@pytest.mark.parametrize("dtype", TYPES + [np.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (1, 1)])
def test_qr_matches_numpy_signs(shape, dtype):
    a = normal(shape, dtype)
    for mode in ("reduced", "complete"):
        q, r = la.qr(a, mode)
        want_q, want_r = np.linalg.qr(a, mode)
        check((q, r), (want_q, want_r), err=mode)
    check(la.qr(a, "r"), np.linalg.qr(a, "r"))
    rank_deficient = np.ones(shape, dtype)
    q, r = la.qr(rank_deficient)
    check(np.asarray(q) @ np.asarray(r), rank_deficient, tol=1e-4)


# -- eigh and SVD ------------------------------------------------------------------------------

def orthonormal_columns(v, tol):
    v = np.asarray(v)
    k = v.shape[-1]
    check(np.swapaxes(v, -1, -2).conj() @ v, np.broadcast_to(np.eye(k), v.shape[:-2] + (k, k)),
          tol=tol, dtype=False)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("shape", SQUARE + [(7, 7), (2, 16, 16)])
def test_eigh(shape, dtype):
    a = symmetric(shape, dtype)
    w, v = la.eigh(a)
    tol = 5e-5 if dtype == np.float32 else 1e-12
    check(w, np.linalg.eigvalsh(a), tol=tol * shape[-1])
    check(la.eigvalsh(a), np.linalg.eigvalsh(a), tol=tol * shape[-1])
    orthonormal_columns(v, tol * shape[-1])
    check(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], tol=tol * shape[-1],
          dtype=False)
    assert w.dtype == dtype and v.dtype == dtype


def test_eigh_uplo_degenerate_and_eig():
    a = symmetric((4, 4))
    upper_only = np.triu(a) + np.tril(np.full((4, 4), 9.0), -1)
    check(la.eigh(upper_only, UPLO="U", symmetrize_input=False).eigenvalues,
          np.linalg.eigvalsh(a))
    check(la.eigvalsh(np.tril(a) + np.triu(np.full((4, 4), 9.0), 1), "L",
                      symmetrize_input=False), np.linalg.eigvalsh(a))
    w, v = la.eigh(np.diag([2.0, 2.0, 1.0, 5.0]))
    check(w, np.array([1.0, 2, 2, 5]))
    orthonormal_columns(v, 1e-12)
    check(la.eigh(np.eye(3)).eigenvalues, np.ones(3))
    a = np.array([[1.0, 2.0], [-3.0, 1.0]])  # eig: LAPACK's geev on the host, as NumPy's
    w, v = la.eig(a)
    np.testing.assert_allclose(np.asarray(a) @ np.asarray(v), np.asarray(v) * np.asarray(w),
                               atol=1e-10)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (1, 1), (2, 7, 9)])
def test_svd(shape, dtype):
    a = normal(shape, dtype)
    tol = 5e-5 if dtype == np.float32 else 1e-12
    s_want = np.linalg.svd(a, compute_uv=False)
    check(la.svd(a, compute_uv=False), s_want, tol=tol * 10)
    check(la.svdvals(a), s_want, tol=tol * 10)
    m, n = shape[-2:]
    k = min(m, n)
    for full in (True, False):
        u, s, vh = la.svd(a, full_matrices=full)
        want_u, _, want_vh = np.linalg.svd(a, full_matrices=full)
        assert u.shape == want_u.shape and vh.shape == want_vh.shape
        orthonormal_columns(u, tol * 10)
        orthonormal_columns(np.swapaxes(np.asarray(vh), -1, -2).conj(), tol * 10)
        u, vh = np.asarray(u), np.asarray(vh)
        check(u[..., :, :k] * np.asarray(s)[..., None, :] @ vh[..., :k, :], a, tol=tol * 10,
              dtype=False)


def test_svd_rank_deficient_matrices():
    a = np.outer(np.arange(1.0, 5), np.arange(1.0, 4))  # rank 1
    u, s, vh = la.svd(a)
    check(s, np.linalg.svd(a, compute_uv=False), tol=1e-12)
    orthonormal_columns(u, 1e-12)
    orthonormal_columns(np.asarray(vh).T, 1e-12)
    check(np.asarray(u)[:, :3] * np.asarray(s) @ vh, a, tol=1e-12, dtype=False)
    u, s, vh = la.svd(np.zeros((3, 2)))
    orthonormal_columns(u, 1e-12)
    check(s, np.zeros(2))


# complex Hermitian eigh and complex SVD: the vectors only up to their phases,
# so the checks use phase-free quantities (projectors, rank-one terms)

def hermitian(shape, dtype):
    a = normal(shape, dtype)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def conj_t(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


def column_projectors(v):
    """``v[:, j] v[:, j]^H`` for each column ``j``: (..., n, m, m)."""
    v = np.asarray(v)
    return np.einsum("...ij,...kj->...jik", v, v.conj())


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_eigh(dtype):
    tol = 5e-5 if dtype == np.complex64 else 1e-12
    real = np.float32 if dtype == np.complex64 else np.float64
    for shape in [(1, 1), (3, 3), (2, 4, 4)]:
        a = hermitian(shape, dtype)
        n = shape[-1]
        w, v = la.eigh(a)
        assert w.dtype == real and v.dtype == dtype
        want_w, want_v = np.linalg.eigh(a)
        check(w, want_w, tol=tol * n)
        check(la.eigvalsh(a), want_w, tol=tol * n)
        orthonormal_columns(v, tol * n)
        check(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], tol=tol * n,
              dtype=False)
        check(column_projectors(v), column_projectors(want_v), tol=tol * 10 * n, dtype=False)
    junk = np.triu(np.full(shape, 7 + 7j, dtype), 1)  # only the lower triangle is read
    check(la.eigh(np.tril(a) + junk, symmetrize_input=False).eigenvalues, want_w, tol=tol * n)
    check(la.eigh(np.triu(a) + conj_t(junk), UPLO="U", symmetrize_input=False).eigenvalues,
          want_w, tol=tol * n)


def test_complex_eigh_degenerate_spectrum():
    """A repeated eigenvalue: any unitary basis of its eigenspace will do, so
    the check is the projector onto the eigenspace."""
    q = np.linalg.qr(normal((4, 4), np.complex128))[0]
    a = (q * np.array([2.0, 2.0, 1.0, 5.0])) @ conj_t(q)
    w, v = la.eigh(a)
    check(w, np.array([1.0, 2, 2, 5]), tol=1e-12)
    orthonormal_columns(v, 1e-12)
    v = np.asarray(v)
    check(v[:, 1:3] @ conj_t(v[:, 1:3]), q[:, :2] @ conj_t(q[:, :2]), tol=1e-12)
    w, v = la.eigh(np.eye(3, dtype=np.complex64))
    check(w, np.ones(3, np.float32))
    check(v, np.eye(3, dtype=np.complex64))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_svd(dtype):
    tol = 5e-5 if dtype == np.complex64 else 1e-12
    for shape in [(4, 4), (5, 3), (3, 5), (2, 4, 2)]:
        a = normal(shape, dtype)
        k = min(shape[-2:])
        want_u, want_s, want_vh = np.linalg.svd(a, full_matrices=False)
        check(la.svdvals(a), want_s, tol=tol * 10)
        for full in (True, False):
            u, s, vh = la.svd(a, full_matrices=full)
            assert u.shape == np.linalg.svd(a, full_matrices=full)[0].shape
            assert vh.shape == np.linalg.svd(a, full_matrices=full)[2].shape
            assert s.dtype == np.abs(a).dtype and u.dtype == vh.dtype == dtype
            check(s, want_s, tol=tol * 10)
            orthonormal_columns(u, tol * 10)
            orthonormal_columns(conj_t(vh), tol * 10)
            u, vh = np.asarray(u)[..., :k], np.asarray(vh)[..., :k, :]
            check(u * np.asarray(s)[..., None, :] @ vh, a, tol=tol * 10, dtype=False)
        # phase-free: each singular triple's rank-one term u_j vh_j
        terms = np.einsum("...ij,...jk->...jik", u, vh)
        check(terms, np.einsum("...ij,...jk->...jik", want_u, want_vh), tol=tol * 100,
              dtype=False)
    rank_one = np.outer(normal(4, dtype), normal(3, dtype))
    u, s, vh = la.svd(rank_one)
    check(s, np.linalg.svd(rank_one, compute_uv=False), tol=tol * 10)
    orthonormal_columns(u, tol * 10)  # unitary although two singular values are 0
    check(np.asarray(u)[:, :3] * np.asarray(s) @ vh, rank_one, tol=tol * 10, dtype=False)


def test_complex_svd_based_functions():
    z, b = normal((2, 5, 3), np.complex128), normal((5, 2), np.complex128)
    check(la.svdvals(np.swapaxes(z, 1, 2)), np.linalg.svd(z, compute_uv=False))
    for ord_ in (2, -2, "nuc"):
        check(la.norm(z, ord_, (1, 2)), np.linalg.norm(z, ord_, (1, 2)), err=str(ord_))
    check(la.matrix_rank(z), np.linalg.matrix_rank(z), dtype=False)
    check(la.cond(z), np.linalg.cond(z))
    check(la.pinv(z), np.linalg.pinv(z))
    rank_one = np.outer(normal(4, np.complex128), normal(3, np.complex128))
    check(la.pinv(rank_one), np.linalg.pinv(rank_one))
    check(la.matrix_rank(rank_one), 1, dtype=False)
    x, resid, rank, s = la.lstsq(z[0], b)
    want = np.linalg.lstsq(z[0], b)
    check((x, resid, s), (want[0], want[1], want[3]))
    assert rank == 3
    import numxla.scipy.linalg as sla
    from numxla.primitives.composites import linalg as lax_linalg
    h = hermitian((3, 3), np.complex128)
    w = np.linalg.eigvalsh(h)
    check(sla.eigh(h)[0], w)
    check(sla.eigh(h, eigvals_only=True), w)
    check(lax_linalg.eigh(h)[1], w)
    check(sla.svd(z[0])[1], np.linalg.svd(z[0], compute_uv=False))
    check(lax_linalg.svd(z[0])[1], np.linalg.svd(z[0], compute_uv=False))


def test_pinv_lstsq_matrix_rank_cond():
    for a in (normal((5, 3)), normal((3, 5)), np.outer(np.arange(1.0, 5), np.arange(1.0, 4)),
              normal((2, 4, 4))):
        check(la.pinv(a), np.linalg.pinv(a), tol=1e-9)
        check(la.matrix_rank(a), np.linalg.matrix_rank(a), dtype=False)
    assert la.matrix_rank(np.eye(3)).dtype == np.int32
    check(la.matrix_rank(np.diag([1.0, 1e-3, 1e-9]), tol=1e-2), 1, dtype=False)
    check(la.matrix_rank(np.diag([1.0, 1e-3, 1e-9]), rtol=1e-6), 2, dtype=False)
    check(la.matrix_rank(np.ones(3)), 1, dtype=False)
    check(la.pinv(np.diag([1.0, 1e-20]), rtol=1e-10), np.diag([1.0, 0.0]))
    a, b = normal((6, 3)), normal((6, 2))
    for rhs in (b, b[:, 0]):
        x, resid, rank, s = la.lstsq(a, rhs)
        want = np.linalg.lstsq(a, rhs)
        check((x, resid, s), (want[0], want[1], want[3]), tol=1e-10)
        assert rank == want[2]
    x, resid, rank, s = la.lstsq(a.T, b[:3])  # under-determined: JAX still gives residuals
    check(x, np.linalg.lstsq(a.T, b[:3])[0])
    assert rank == 3 and resid.shape == (2,)
    assert la.lstsq(a.T, b[:3], numpy_resid=True)[1].shape == (0,)
    sq = well_conditioned((2, 4, 4))
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"):
        check(la.cond(sq, p), np.linalg.cond(sq, p), tol=1e-9, err=str(p))
    tall = normal((5, 3))
    check(la.cond(tall), np.linalg.cond(tall), tol=1e-9)


@pytest.mark.parametrize("axis, ords", [
    (None, [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]),
    ((1, 2), [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]),
    ((2, 0), ["fro", 1, np.inf, 2]),
    (1, [None, 0, 1, 2, -1, -2, 3.5, np.inf, -np.inf]),
    (-1, [None, 2, np.inf]),
])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(axis, ords, keepdims):
    x = normal((2, 3, 4))
    x[0, 1, 2] = 0.0
    for ord_ in ords:
        arg = x[0] if axis is None and ord_ is not None else x
        with np.errstate(divide="ignore"):  # NumPy's negative orders of a zero
            want = np.linalg.norm(arg, ord_, axis, keepdims)
        check(la.norm(arg, ord_, axis, keepdims), want, err=f"ord={ord_}")
    z = normal((3, 4), np.complex128)
    check(la.norm(z), np.linalg.norm(z))
    check(la.norm(z, 1), np.linalg.norm(z, 1))
    check(la.norm(z, axis=0), np.linalg.norm(z, axis=0))


def test_array_api_norms_and_views():
    x = normal((2, 3, 4))
    check(la.vector_norm(x), np.linalg.vector_norm(x))
    check(la.vector_norm(x, axis=(0, 2), ord=3, keepdims=True),
          np.linalg.vector_norm(x, axis=(0, 2), ord=3, keepdims=True))
    check(la.matrix_norm(x), np.linalg.matrix_norm(x))
    check(la.matrix_norm(x, ord="nuc", keepdims=True),
          np.linalg.matrix_norm(x, ord="nuc", keepdims=True))
    check(la.matrix_norm(x, ord=np.inf), np.linalg.matrix_norm(x, ord=np.inf))
    check(la.trace(x, offset=1), np.linalg.trace(x, offset=1))
    check(la.diagonal(x, offset=-1), np.linalg.diagonal(x, offset=-1))
    check(la.matrix_transpose(x), np.linalg.matrix_transpose(x))
    check(la.matmul(x, np.swapaxes(x, 1, 2)), np.linalg.matmul(x, np.swapaxes(x, 1, 2)))
    check(la.tensordot(x, x[0], 2), np.linalg.tensordot(x, x[0], axes=2))
    check(la.vecdot(x, x[0]), np.linalg.vecdot(x, x[0]))
    u, v = normal((4, 3)), normal((3,))
    check(la.cross(u, v), np.linalg.cross(u, v))
    check(la.outer(v, u[0]), np.linalg.outer(v, u[0]))
    check(la.multi_dot([u[0], u.T, u, v]), np.linalg.multi_dot([u[0], u.T, u, v]))
    check(la.multi_dot([u, u.T, u]), np.linalg.multi_dot([u, u.T, u]))
    with pytest.raises(ValueError):
        la.cross(u[:, :2], v[:2])


# -- under jit and vmap ------------------------------------------------------------------------

def _jit_matches_eager(f, *args, tol=1e-8):
    got, want = jit(f)(*args), f(*args)
    for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
    return got


def test_lu_and_qr_under_jit():
    a, b = well_conditioned((2, 4, 4)), normal((2, 4, 3))
    x, (q, r) = _jit_matches_eager(lambda a, b: (la.solve(a, b), la.qr(b)), a, b)
    check(x, np.linalg.solve(a, b))
    check((q, r), tuple(np.linalg.qr(b)))


def test_eigh_and_svd_under_jit():
    a = symmetric((5, 5))
    (w, v), s = _jit_matches_eager(lambda a: (la.eigh(a), la.svdvals(a[:, :3])), a)
    check(w, np.linalg.eigvalsh(a))
    check(s, np.linalg.svd(a[:, :3], compute_uv=False))


def test_complex_eigh_under_jit():
    h = hermitian((3, 3), np.complex64)
    w, v = _jit_matches_eager(la.eigh, h, tol=1e-5)
    check(w, np.linalg.eigvalsh(h), tol=1e-5)
    check(h @ np.asarray(v), np.asarray(v) * np.asarray(w), tol=1e-5, dtype=False)


def test_vmap():
    a, b = well_conditioned((3, 4, 4)), normal((3, 4))
    check(vmap(la.solve)(a, b), np.linalg.solve(a, b[..., None])[..., 0])
    check(vmap(la.det)(a), np.linalg.det(a))
    s = symmetric((3, 4, 4))
    check(vmap(la.eigvalsh)(s), np.linalg.eigvalsh(s))
    check(vmap(la.svdvals)(a), np.linalg.svd(a, compute_uv=False))
    check(vmap(lambda m: la.norm(m, 2))(a), np.linalg.norm(a, 2, (1, 2)))
    h = hermitian((2, 3, 3), np.complex128)
    check(vmap(la.eigvalsh)(h), np.linalg.eigvalsh(h))


# -- derivatives against finite differences ----------------------------------------------------

def _grads(f, *args):
    check_grads(f, args, order=1, modes=("fwd", "rev"))


def test_gradients_of_lu_based_functions():
    a, b = well_conditioned((3, 3)), normal((3, 2))
    _grads(la.det, a)
    _grads(lambda m: la.slogdet(m).logabsdet, a)
    _grads(la.inv, a)
    _grads(la.solve, a, b)
    _grads(lambda m: la.matrix_power(m, -2), a)
    _grads(lambda m: la.tensorsolve(m.reshape(3, 1, 3), b[:, 0].reshape(3, 1)), a)


def test_gradients_of_cholesky_and_qr():
    _grads(la.cholesky, spd((3, 3)))
    _grads(lambda m: tuple(la.qr(m)), normal((4, 3)))
    _grads(lambda m: tuple(la.qr(m, "complete")), normal((3, 3)))


def test_gradients_of_eigh_and_svd():
    a = symmetric((4, 4))
    _grads(lambda m: la.eigh(m).eigenvalues, a)
    # eigenvectors up to sign: the projections v v^T
    _grads(lambda m: (lambda v: v[:, :2] @ v[:, :2].T)(la.eigh(m).eigenvectors), a)
    r = normal((5, 3))
    _grads(la.svdvals, r)
    _grads(la.svdvals, r.T)
    _grads(lambda m: (lambda u, s, vh: (u * s) @ vh)(*la.svd(m, full_matrices=False)), r)
    _grads(lambda m: (lambda u, s, vh: u[:, :1] @ vh[:1])(*la.svd(m)), r)


def test_gradients_of_complex_eigh_and_svd():
    """Real-valued, phase-free functions of the results against finite
    differences, and the tangents against JAX's rules (``M = V^H dA V``:
    ``dw = real(diag(M))``, ``V^H dV = F * M`` off the diagonal, where the
    vectors' phase convention does not enter; ``dS = real(diag(U^H dA V))``)."""
    a = hermitian((4, 4), np.complex128)
    _grads(lambda m: la.eigh(m).eigenvalues, a)
    _grads(lambda m: (lambda v: v[:, :2] @ xnp.conj(v[:, :2]).T)(la.eigh(m).eigenvectors), a)
    _grads(lambda m: xnp.abs(la.eigh(m).eigenvectors) ** 2, a)
    _grads(lambda m: la.eigvalsh(m), hermitian((3, 3), np.complex64))
    z = normal((4, 3), np.complex128)
    _grads(la.svdvals, z)
    _grads(la.svdvals, z.T)
    _grads(lambda m: (lambda u, s, vh: (u * s) @ vh)(*la.svd(m, full_matrices=False)), z)
    _grads(lambda m: (lambda u, s, vh: u[:, :1] @ vh[:1])(*la.svd(m)), z)
    _grads(la.pinv, z)

    da = hermitian((4, 4), np.complex128)
    (w, v), (dw, dv) = pytree.tree_map(np.asarray, jvp(la.eigh, (a,), (da,)))
    m = conj_t(v) @ da @ v
    check(dw, np.real(np.diag(m)))
    off = ~np.eye(4, dtype=bool)
    gaps = w[None, :] - w[:, None]
    check((conj_t(v) @ dv)[off], (m / np.where(off, gaps, 1))[off])
    dz = normal((4, 3), np.complex128)
    (u, _, vh), (_, ds, _) = pytree.tree_map(
        np.asarray, jvp(lambda x: tuple(la.svd(x, full_matrices=False)), (z,), (dz,)))
    check(ds, np.real(np.diag(conj_t(u) @ dz @ conj_t(vh))))


def test_gradients_of_eig():
    """Distinct eigenvalues (a general real matrix): eigenvalues and the
    phase-free |v|^2 of the eigenvectors against finite differences, and the
    eigenvalues' tangent against NumPy's eig of a perturbed matrix."""
    a = normal((4, 4))
    _grads(lambda m: xnp.abs(la.eigvals(m)) ** 2, a)
    _grads(lambda m: xnp.real(la.eigvals(m)) ** 3, a)
    _grads(lambda m: xnp.abs(la.eig(m).eigenvectors) ** 2, a)
    t, eps = normal((4, 4)), 1e-6
    (w, _), (dw, _) = pytree.tree_map(np.asarray, jvp(la.eig, (a,), (t,)))

    def moved(sign):  # each eigenvalue of a + sign * eps * t, in w's order
        near = np.linalg.eigvals(a + sign * eps * t)
        return near[np.argmin(np.abs(near[None, :] - w[:, None]), axis=1)]
    np.testing.assert_allclose(dw, (moved(1) - moved(-1)) / (2 * eps), atol=1e-6)
    batch = normal((3, 2, 2))
    np.testing.assert_allclose(vmap(la.eigvals)(batch), np.linalg.eigvals(batch), atol=1e-12)


def test_gradients_of_svd_based_functions():
    r, b = normal((5, 3)), normal((5,))
    _grads(la.pinv, r)
    _grads(lambda m, y: la.lstsq(m, y)[0], r, b)
    for ord_ in (None, "fro", "nuc", 2, -2, 1, np.inf):
        _grads(lambda m: la.norm(m, ord_), r)
    _grads(lambda v: la.norm(v, 3), b)
    _grads(la.cond, well_conditioned((3, 3)))
