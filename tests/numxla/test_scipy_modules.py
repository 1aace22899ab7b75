"""``jax.scipy.ndimage``, ``fft``, ``interpolate``, ``cluster.vq``,
``spatial.transform`` and ``jax.lax.linalg``: checked against SciPy
(float64) or against values JAX 0.10.2 printed (CPU)."""
import importlib

import numpy as np
import pytest
import scipy.fft
import scipy.ndimage
import scipy.spatial.transform as sst
from scipy.interpolate import RegularGridInterpolator as ScipyRGI

import numxla
import numxla as jax
import numxla.numpy as jnp
from numxla.lax import linalg as lax_linalg
from numxla.scipy import fft, ndimage
from numxla.scipy.cluster.vq import vq
from numxla.scipy.interpolate import RegularGridInterpolator
from numxla.scipy.spatial.transform import Rotation, Slerp


# public names of JAX 0.10.2's modules (``dir()``, without lax.linalg's ``*_p`` primitives)
JAX_NAMES = {
    "numxla.scipy.ndimage": ["map_coordinates"],
    "numxla.scipy.fft": ["dct", "dctn", "idct", "idctn"],
    "numxla.scipy.interpolate": ["RegularGridInterpolator"],
    "numxla.scipy.cluster": ["vq"],
    "numxla.scipy.cluster.vq": ["vq"],
    "numxla.scipy.spatial.transform": ["Rotation", "Slerp"],
    "numxla.lax.linalg": [
        "EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky",
        "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu",
        "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd", "symmetric_product",
        "triangular_solve", "tridiagonal", "tridiagonal_solve"],
}


@pytest.mark.parametrize("module", sorted(JAX_NAMES))
def test_modules_have_jax_names(module):
    mod = jax.lax.linalg if module == "numxla.lax.linalg" else importlib.import_module(module)
    assert set(JAX_NAMES[module]) <= set(dir(mod))


def test_modules_import_under_jax_names():
    from tests.numxla.programs import as_jax
    with as_jax(numxla):
        from jax.scipy.spatial.transform import Rotation as R  # noqa: F401
        from jax.scipy.cluster.vq import vq as jvq  # noqa: F401
        import jax.scipy.ndimage, jax.scipy.fft, jax.scipy.interpolate  # noqa: E401,F401
        import jax.lax.linalg
        from jax.lax import linalg
        assert jax.lax.linalg is linalg
        assert R.from_quat(jnp.array([0.0, 0.0, 1.0, 1.0])).magnitude() == pytest.approx(np.pi / 2)


# -- ndimage ----------------------------------------------------------------------------------

COORDS = np.array([-2.3, -1.5, -0.6, -0.5, 0.2, 0.5, 1.5, 2.5, 3.7, 4.0, 4.4, 4.5, 5.2, 6.9, 9.1])
MAP_COORDINATES_JAX = {  # map_coordinates(arange(1, 6) ** 2, [COORDS], order, mode, cval=-7)
    ("constant", 0): [-7, -7, -7, -7, 1, 4, 9, 16, 25, 25, 25, -7, -7, -7, -7],
    ("constant", 1): [-7, -7, -3.8, -3, 1.6, 2.5, 6.5, 12.5, 22.3, 25, 12.2, 9, -7, -7, -7],
    ("nearest", 0): [1, 1, 1, 1, 1, 4, 9, 16, 25, 25, 25, 25, 25, 25, 25],
    ("nearest", 1): [1, 1, 1, 1, 1.6, 2.5, 6.5, 12.5, 22.3, 25, 25, 25, 25, 25, 25],
    ("wrap", 0): [16, 16, 25, 25, 1, 4, 9, 16, 25, 25, 25, 1, 1, 9, 25],
    ("wrap", 1): [13.9, 20.5, 15.4, 13, 1.6, 2.5, 6.5, 12.5, 22.3, 25, 15.4, 13, 1.6, 8.5, 22.6],
    ("mirror", 0): [9, 9, 4, 4, 1, 4, 9, 16, 25, 25, 25, 16, 16, 4, 4],
    ("mirror", 1): [11.1, 6.5, 2.8, 2.5, 1.6, 2.5, 6.5, 12.5, 22.3, 25, 21.4, 20.5, 14.6, 4.5, 4.5],
    ("reflect", 0): [4, 4, 1, 1, 1, 4, 9, 16, 25, 25, 25, 25, 25, 9, 1],
    ("reflect", 1): [5.5, 2.5, 1, 1, 1.6, 2.5, 6.5, 12.5, 22.3, 25, 25, 25, 23.2, 9.7, 1],
}


def test_map_coordinates_matches_jax(x64_off):
    x = jnp.arange(1.0, 6.0) ** 2
    for (mode, order), want in MAP_COORDINATES_JAX.items():
        got = ndimage.map_coordinates(x, [jnp.asarray(COORDS, jnp.float32)], order, mode, -7.0)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5, err_msg=f"{mode} {order}")
    ints = ndimage.map_coordinates(jnp.arange(12).reshape(3, 4),
                                   [jnp.array([0.5, 1.2]), jnp.array([2.5, 0.3])], 1)
    assert ints.dtype == np.int32 and ints.tolist() == [5, 5]   # 4.5 and 5.1, rounded


@pytest.mark.parametrize("mode, scipy_mode", [("constant", "grid-constant"),
                                              ("nearest", "nearest"), ("wrap", "grid-wrap"),
                                              ("mirror", "mirror"), ("reflect", "reflect")])
def test_map_coordinates_matches_scipy_in_2d(x64, mode, scipy_mode):
    rng = np.random.default_rng(0)
    image = rng.normal(size=(4, 5))
    coords = rng.uniform(-3, 8, size=(2, 7))
    for order in (0, 1):
        np.testing.assert_allclose(
            ndimage.map_coordinates(image, list(coords), order, mode, 1.5),
            scipy.ndimage.map_coordinates(image, coords, order=order, mode=scipy_mode,
                                          cval=1.5), rtol=1e-12)


def test_map_coordinates_transforms(x64_off):
    image = jnp.arange(12.0).reshape(3, 4)
    grad = jax.grad(lambda c: ndimage.map_coordinates(image, [c, c], 1).sum())
    np.testing.assert_allclose(grad(jnp.array([0.5, 1.2])), [5.0, 5.0], rtol=1e-6)
    rows, cols = jnp.array([0.5, 1.2, 2.7]), jnp.array([2.5, -0.3, 3.6])
    image_grad = jax.grad(lambda i: ndimage.map_coordinates(i, [rows, cols], 1,
                                                            mode="reflect").sum())(image)
    np.testing.assert_allclose(image_grad, [[0, 0, 0.25, 0.25], [0.8, 0, 0.25, 0.25],
                                            [0.2, 0, 0, 1]], atol=1e-6)
    warp = jax.jit(lambda i, c: ndimage.map_coordinates(i, [c, c], 1, mode="wrap"))
    np.testing.assert_allclose(warp(image, jnp.array([0.5, 1.2])), [2.5, 6.0], rtol=1e-6)
    by_row = jax.vmap(lambda row: ndimage.map_coordinates(row, [jnp.array([0.5, 1.5])], 1))
    np.testing.assert_allclose(by_row(image), [[0.5, 1.5], [4.5, 5.5], [8.5, 9.5]])


def test_map_coordinates_rejects_bad_input():
    with pytest.raises(NotImplementedError, match="map_coordinates: order"):
        ndimage.map_coordinates(jnp.ones(3), [jnp.ones(2)], 3)
    with pytest.raises(ValueError, match="map_coordinates: mode"):
        ndimage.map_coordinates(jnp.ones(3), [jnp.ones(2)], 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="map_coordinates: coordinates"):
        ndimage.map_coordinates(jnp.ones((3, 3)), [jnp.ones(2)], 1)


# -- fft --------------------------------------------------------------------------------------

def test_dct_matches_scipy(x64):
    rng = np.random.default_rng(1)
    for n in (2, 5, 8):
        x = rng.normal(size=(3, n))
        for kind in (1, 2, 3):
            for norm in (None, "ortho", "forward"):
                for ours, theirs in ((fft.dct, scipy.fft.dct), (fft.idct, scipy.fft.idct)):
                    np.testing.assert_allclose(ours(x, type=kind, norm=norm),
                                               theirs(x, type=kind, norm=norm), atol=1e-12,
                                               err_msg=f"{ours.__name__} {kind} {norm} {n}")
    x = rng.normal(size=(4, 5, 6))
    np.testing.assert_allclose(fft.dct(x, n=4, axis=1), scipy.fft.dct(x, n=4, axis=1))
    np.testing.assert_allclose(fft.idct(x, 3, n=9, axis=0), scipy.fft.idct(x, 3, n=9, axis=0))
    np.testing.assert_allclose(fft.dctn(x, 1, norm="ortho"), scipy.fft.dctn(x, 1, norm="ortho"))
    np.testing.assert_allclose(fft.idctn(x, s=[3, 8]), scipy.fft.idctn(x, s=[3, 8]))
    np.testing.assert_allclose(fft.dctn(x, axes=[0, 2]), scipy.fft.dctn(x, axes=[0, 2]))
    z = x + 1j * x[::-1]
    np.testing.assert_allclose(fft.dct(z), scipy.fft.dct(z))


def test_dct_matches_jax_and_transforms(x64_off):
    x = jnp.arange(6.0) ** 1.5
    np.testing.assert_allclose(fft.dct(x), [56.409839, -32.723878, 5.465937, -2.563424,
                                            1.204919, -0.461969], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fft.idct(x, norm="ortho"), [8.073282, -10.896229, 5.158321,
                                                           -3.367946, 1.658625, -0.626053],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fft.dctn(jnp.arange(6.0).reshape(2, 3), norm="ortho"),
                               [[6.1237245, -2.0, 0.0], [-3.6742344, 0.0, 0.0]], atol=1e-5)
    weights = jnp.array([1.0, -2.0, 0.5, 3.0, 0.0, 1.0])
    grad = jax.grad(lambda v: jnp.sum(weights * fft.dct(v, norm="ortho")))(x)
    np.testing.assert_allclose(grad, fft.idct(weights, norm="ortho"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(fft.dct)(x), fft.dct(x), rtol=1e-6)


def test_dct_rejects_bad_input():
    with pytest.raises(NotImplementedError, match="dct: type"):
        fft.dct(jnp.ones(4), type=4)
    with pytest.raises(ValueError, match="idct: norm"):
        fft.idct(jnp.ones(4), norm="sideways")
    with pytest.raises(ValueError, match="dctn: s and axes"):
        fft.dctn(jnp.ones((2, 3)), s=[2, 2], axes=[0])


# -- interpolate ------------------------------------------------------------------------------

GRID = (np.array([0.0, 1.0, 3.0]), np.array([-1.0, 0.0, 2.0, 3.0]))
GRID_VALUES = np.arange(12.0).reshape(3, 4) ** 2
GRID_POINTS = np.array([[0.5, -0.5], [2.0, 2.5], [3.0, 3.0], [-0.1, 0], [1.5, 0.5], [0.5, 0.0]])


def test_regular_grid_interpolator_matches_jax(x64_off):
    f = RegularGridInterpolator(GRID, GRID_VALUES)
    np.testing.assert_allclose(f(GRID_POINTS), [10.5, 76.5, 121, np.nan, 42.25, 13])
    np.testing.assert_allclose(f(GRID_POINTS, method="nearest"), [0, 36, 121, np.nan, 25, 1])
    np.testing.assert_allclose(RegularGridInterpolator(GRID, GRID_VALUES, fill_value=None)(
        jnp.array([[-1.0, 4.0]])), [-34.0])
    np.testing.assert_allclose(f((jnp.array([0.5, 1.0]), jnp.array([0.0, 1.0]))), [13.0, 30.5])
    assert f(jnp.array([0.5, 0.0])).shape == (1,)
    stacked = RegularGridInterpolator(GRID, np.stack([GRID_VALUES, -GRID_VALUES], -1))
    np.testing.assert_allclose(stacked(GRID_POINTS[:2]), [[10.5, -10.5], [76.5, -76.5]])
    assert RegularGridInterpolator(GRID, GRID_VALUES.astype(np.int32))(GRID_POINTS).dtype \
        == np.float32
    # a pytree: through jit, and differentiable in the values
    np.testing.assert_allclose(jax.jit(lambda g, p: g(p))(f, GRID_POINTS), f(GRID_POINTS))
    grad = jax.grad(lambda v: RegularGridInterpolator(GRID, v)(GRID_POINTS[:3]).sum())
    np.testing.assert_allclose(grad(jnp.asarray(GRID_VALUES)),
                               [[0.25, 0.25, 0, 0], [0.25, 0.25, 0.25, 0.25], [0, 0, 0.25, 1.25]])


def test_regular_grid_interpolator_matches_scipy_in_3d(x64):
    rng = np.random.default_rng(2)
    grid = (np.sort(rng.uniform(0, 4, 4)), np.array([0.0, 0.5, 2.0]), np.linspace(-1, 1, 5))
    values = rng.normal(size=(4, 3, 5))
    xi = np.stack([rng.uniform(g[0], g[-1], 9) for g in grid], -1)
    for method in ("linear", "nearest"):
        np.testing.assert_allclose(RegularGridInterpolator(grid, values, method)(xi),
                                   ScipyRGI(grid, values, method)(xi), rtol=1e-12)


def test_regular_grid_interpolator_rejects_bad_input():
    with pytest.raises(ValueError, match="RegularGridInterpolator: method 'cubic'"):
        RegularGridInterpolator(GRID, GRID_VALUES, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(GRID, GRID_VALUES, bounds_error=True)
    with pytest.raises(ValueError, match=r"points\[1\] must be strictly ascending"):
        RegularGridInterpolator((GRID[0], GRID[1][::-1]), GRID_VALUES)
    with pytest.raises(ValueError, match=r"points\[0\] must be 1-D with 2"):
        RegularGridInterpolator(GRID, GRID_VALUES[:2])
    with pytest.raises(ValueError, match="have dimension 3"):
        RegularGridInterpolator(GRID, GRID_VALUES)(jnp.ones((2, 3)))


# -- cluster.vq -------------------------------------------------------------------------------

def test_vq_matches_jax(x64_off):
    book = jnp.array([[0.0, 0], [4, 4], [1, 1]])
    code, dist = vq(jnp.array([[1.0, 2], [3, 4], [0, 0], [5, 5]]), book)
    assert code.dtype == np.int32 and code.tolist() == [2, 1, 0, 1]
    np.testing.assert_allclose(dist, [1, 1, 0, np.sqrt(2)], rtol=1e-6)
    code, dist = vq(jnp.array([1.0, 3, 0]), jnp.array([0.0, 2.5]))
    assert code.tolist() == [0, 1, 0] and dist.tolist() == [1.0, 0.5, 0.0]
    assert vq(jnp.array([[1.0, 2], [3, 4]]), jnp.array([[1.0, 2], [1, 2]]))[0].tolist() == [0, 0]
    grad = jax.grad(lambda o: vq(o, book)[1].sum())(jnp.array([[1.0, 2], [3, 4], [5, 5]]))
    np.testing.assert_allclose(grad, [[0, 1], [-1, 0], [0.70710677, 0.70710677]], rtol=1e-6)
    with pytest.raises(ValueError, match="vq: obs and code_book"):
        vq(jnp.ones((2, 3)), jnp.ones(3))


# -- spatial.transform ------------------------------------------------------------------------

QUATS = np.random.default_rng(3).normal(size=(6, 4))


def test_rotation_conversions_match_scipy(x64):
    ours, theirs = Rotation.from_quat(QUATS), sst.Rotation.from_quat(QUATS)
    np.testing.assert_allclose(ours.as_quat(canonical=True), theirs.as_quat(canonical=True))
    np.testing.assert_allclose(ours.as_quat(scalar_first=True), theirs.as_quat(scalar_first=True))
    np.testing.assert_allclose(ours.as_matrix(), theirs.as_matrix(), atol=1e-12)
    np.testing.assert_allclose(ours.as_rotvec(degrees=True), theirs.as_rotvec(degrees=True))
    np.testing.assert_allclose(ours.as_mrp(), theirs.as_mrp())
    np.testing.assert_allclose(ours.magnitude(), theirs.magnitude())
    matrices = theirs.as_matrix()
    np.testing.assert_allclose(Rotation.from_matrix(matrices).quat,
                               sst.Rotation.from_matrix(matrices).as_quat(), atol=1e-12)
    rotvecs, mrps = theirs.as_rotvec(), theirs.as_mrp()
    np.testing.assert_allclose(Rotation.from_rotvec(rotvecs).as_matrix(), matrices, atol=1e-12)
    np.testing.assert_allclose(Rotation.from_mrp(mrps).as_matrix(), matrices, atol=1e-12)
    np.testing.assert_allclose(Rotation.from_rotvec(np.array([1e-5, 0, 0])).quat,   # series
                               [np.sin(5e-6), 0, 0, np.cos(5e-6)], rtol=1e-15)
    vectors = np.arange(18.0).reshape(6, 3) - 4
    np.testing.assert_allclose(ours.apply(vectors), theirs.apply(vectors))
    np.testing.assert_allclose(ours.apply(vectors[0], inverse=True),
                               theirs.apply(vectors[0], inverse=True))
    np.testing.assert_allclose((ours * ours[::-1].inv()).as_matrix(),
                               (theirs * theirs[::-1].inv()).as_matrix(), atol=1e-12)
    mean = ours.mean(np.arange(1.0, 7.0)).as_quat(canonical=True)
    np.testing.assert_allclose(mean, theirs.mean(np.arange(1.0, 7.0)).as_quat(canonical=True))
    quat = np.array([0.0, -1, 2, 0])
    np.testing.assert_allclose(Rotation.from_quat(quat).as_quat(canonical=True),
                               [0, 1 / np.sqrt(5), -2 / np.sqrt(5), 0])


def test_rotation_euler_angles_match_scipy(x64):
    seqs = ["xyz", "zyx", "xzx", "yxy", "XYZ", "ZXY", "ZYZ", "XZX"]
    for seq in seqs:
        angles = sst.Rotation.from_quat(QUATS).as_euler(seq)
        np.testing.assert_allclose(Rotation.from_quat(QUATS).as_euler(seq), angles, atol=1e-12)
        np.testing.assert_allclose(Rotation.from_euler(seq, angles).as_matrix(),
                                   sst.Rotation.from_euler(seq, angles).as_matrix(), atol=1e-12)
        # gimbal locks: the third angle is set to 0, as in SciPy and JAX
        middle = (0.0, np.pi) if seq[0] == seq[2] else (np.pi / 2, -np.pi / 2)
        locked = np.array([[0.3, m, 0.2] for m in middle])
        quats = sst.Rotation.from_euler(seq, locked).as_quat()
        with pytest.warns(UserWarning):
            want = sst.Rotation.from_quat(quats).as_euler(seq)
        np.testing.assert_allclose(Rotation.from_quat(quats).as_euler(seq), want, atol=1e-7)
    np.testing.assert_allclose(Rotation.from_euler("xz", [0.1, 0.2], degrees=True).quat,
                               sst.Rotation.from_euler("xz", [0.1, 0.2], degrees=True).as_quat())


def test_rotation_is_a_sequence_and_a_pytree(x64_off):
    r = Rotation.from_quat(jnp.array(QUATS[:2], jnp.float32))
    assert len(r) == 2 and not r.single and r[0].single and r[1:].quat.shape == (1, 4)
    assert Rotation.concatenate([r, r[0]]).quat.shape == (3, 4)
    assert Rotation.identity().quat.tolist() == [0, 0, 0, 1]
    assert Rotation.identity(3).quat.shape == (3, 4)
    with pytest.raises(TypeError, match="Single rotation has no len"):
        len(r[0])
    with pytest.raises(TypeError, match="not subscriptable"):
        r[0][0]
    np.testing.assert_allclose(jax.jit(lambda r: (r * r).as_matrix())(r), (r * r).as_matrix(),
                               rtol=1e-6, atol=1e-6)
    matrices = jax.vmap(lambda q: Rotation.from_quat(q).as_matrix())(r.quat)
    np.testing.assert_allclose(matrices, r.as_matrix(), rtol=1e-6)
    grad = jax.grad(lambda v: Rotation.from_rotvec(v).as_rotvec().sum())
    np.testing.assert_allclose(grad(jnp.zeros(3)), [1, 1, 1], rtol=1e-6)
    random = Rotation.random(jax.random.PRNGKey(0), 3).quat
    np.testing.assert_allclose(jnp.linalg.norm(random, axis=-1), 1, rtol=1e-6)


def test_rotation_rejects_bad_input():
    with pytest.raises(ValueError, match="from_euler: consecutive axes"):
        Rotation.from_euler("xxy", jnp.ones(3))
    with pytest.raises(ValueError, match="from_euler: seq must take its axes"):
        Rotation.from_euler("xYz", jnp.ones(3))
    with pytest.raises(ValueError, match="from_euler: angles must have 1"):
        Rotation.from_euler("x", jnp.ones(3))
    with pytest.raises(ValueError, match="as_euler: seq must be a string of 3"):
        Rotation.identity().as_euler("xy")
    with pytest.raises(ValueError, match="from_quat: quat must have shape"):
        Rotation.from_quat(jnp.ones(3))
    with pytest.raises(ValueError, match="apply: 2 rotations|apply: \\(2,\\) rotations"):
        Rotation.from_quat(jnp.ones((2, 4))).apply(jnp.ones((3, 3)))


def test_slerp_matches_jax(x64_off):
    rotations = Rotation.from_quat(jnp.array([[0, 0, 0, 1.0], [0, 0, 1, 1], [1, 0, 0, 1]]))
    slerp = Slerp.init(jnp.array([0.0, 1, 3]), rotations)
    np.testing.assert_allclose(slerp.timedelta, [1, 2])
    np.testing.assert_allclose(slerp.rotvecs, [[0, 0, np.pi / 2], [1.2091995, -1.2091995,
                                                                    -1.2091995]], rtol=1e-6)
    got = slerp(jnp.array([-1.0, 0.5, 2.0, 2.9, 3.5, 7.0])).quat
    s2 = np.sqrt(0.5)
    np.testing.assert_allclose(got, [[0, 0, -s2, s2], [0, 0, 0.38268352, 0.9238796],
                                     [0.40824834, 0, 0.4082483, 0.8164967],
                                     [0.68477166, 0, 0.04273212, 0.7275038],
                                     [0.21132487, 0, 0.5773503, 0.7886752],   # past the end:
                                     [s2, 0, -s2, 0]], atol=2e-6)             # as JAX's
    assert slerp(0.5).single
    with pytest.raises(ValueError, match="Slerp.init: times"):
        Slerp.init(jnp.array([0.0, 1.0]), rotations)


# -- lax.linalg -------------------------------------------------------------------------------

GENERAL = np.array([[1.0, 2, 0], [3, -1, 4], [0, 2, 2]])
SPD = np.array([[4.0, 1, 2, 1], [1, 3, 0, 2], [2, 0, 5, 1], [1, 2, 1, 6]])
PACKED = np.arange(12.0).reshape(4, 3) ** 0.5
TAUS = np.array([1.2, 0.5, 1.1])


def test_lax_linalg_host_decompositions_match_jax(x64):
    w, vl, vr = lax_linalg.eig(GENERAL)
    np.testing.assert_allclose(w, [-3.68690373, 1.38806465, 4.29883908], rtol=1e-8)
    np.testing.assert_allclose(vl, [[0.46382295, 0.75991684, 0.41274402],
                                    [-0.72463117, 0.09829896, 0.4538587],
                                    [0.50968415, -0.64254471, 0.78971809]], rtol=1e-7)
    np.testing.assert_allclose(vr, [[0.37343075, 0.83338921, 0.41595178],
                                    [-0.87511699, 0.16170445, 0.686079],
                                    [0.30776571, -0.52850174, 0.59689172]], rtol=1e-7)
    assert len(lax_linalg.eig(GENERAL, compute_left_eigenvectors=False)) == 2
    q, r, p = lax_linalg.qr(GENERAL, pivoting=True)
    assert p.tolist() == [2, 1, 0]
    np.testing.assert_allclose(q @ r, GENERAL[:, [2, 1, 0]], atol=1e-12)
    np.testing.assert_allclose(r[0], [-4.47213595, 0, -2.68328157], rtol=1e-8)
    t, vs = lax_linalg.schur(GENERAL)
    np.testing.assert_allclose(t[0], [-3.68690373, 0.03576995, -2.19223981], rtol=1e-7)
    np.testing.assert_allclose(vs @ t @ vs.T, GENERAL, atol=1e-12)
    assert len(lax_linalg.schur(GENERAL, compute_schur_vectors=False)) == 1
    packed, taus = lax_linalg.hessenberg(np.arange(16.0).reshape(4, 4) ** 0.5)
    np.testing.assert_allclose(taus, [1.40824829, 1.33770594, 0], rtol=1e-8)
    np.testing.assert_allclose(packed[:, 0], [0, -4.89897949, 0.40997761, 0.50211798], rtol=1e-7)
    packed, d, e, taus = lax_linalg.tridiagonal(SPD)
    np.testing.assert_allclose(d, [4, 6.16666667, 4.09501558, 3.73831776], rtol=1e-8)
    np.testing.assert_allclose(e, [-2.44948974, -1.72401341, -1.62536235], rtol=1e-8)
    np.testing.assert_allclose(taus, [1.40824829, 1.15555578, 0], rtol=1e-8)
    np.testing.assert_allclose(packed[2:, 0], [0.5797959, 0.28989795], rtol=1e-7)
    _, d, e, taus = lax_linalg.tridiagonal(SPD, lower=False)
    np.testing.assert_allclose(d, [2.79389313, 4.37277354, 4.83333333, 6], rtol=1e-8)
    np.testing.assert_allclose(taus, [0, 1.83954935, 1.40824829], rtol=1e-8)


def test_lax_linalg_decompositions_match_jax(x64):
    lu, pivots, perm = lax_linalg.lu(GENERAL)
    np.testing.assert_allclose(lu, [[3, -1, 4], [1 / 3, 7 / 3, -4 / 3], [0, 6 / 7, 22 / 7]])
    assert pivots.tolist() == [1, 1, 2] and perm.tolist() == [1, 0, 2]
    assert lax_linalg.lu_pivots_to_permutation(jnp.array([2, 2, 2], jnp.int32), 5).tolist() \
        == [2, 0, 1, 3, 4]
    assert lax_linalg.lu_pivots_to_permutation(jnp.array([[1, 1], [0, 1]], jnp.int32),
                                               3).tolist() == [[1, 0, 2], [0, 1, 2]]
    v, w = lax_linalg.eigh(SPD[:3, :3])   # eigenvectors first
    np.testing.assert_allclose(w, [1.85489731, 3.4760236, 6.66907909], rtol=1e-8)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, SPD[:3, :3], atol=1e-12)
    np.testing.assert_allclose(lax_linalg.eigh(SPD[:3, :3], subset_by_index=(1, 3))[1], w[1:])
    q, r = lax_linalg.qr(GENERAL[:, :2], full_matrices=False)
    np.testing.assert_allclose(r, [[-3.16227766, 0.31622777], [0, 2.98328678]], rtol=1e-7)
    assert lax_linalg.qr(GENERAL[:, :2])[0].shape == (3, 3)
    np.testing.assert_allclose(lax_linalg.svd(GENERAL, compute_uv=False),
                               [5.29303346, 3.01355252, 1.3792382], rtol=1e-8)
    u, s, vh = lax_linalg.svd(GENERAL, full_matrices=False, subset_by_index=(0, 2))
    assert u.shape == (3, 2) and s.shape == (2,) and vh.shape == (2, 3)
    with pytest.raises(ValueError, match="svd: full_matrices and subset_by_index"):
        lax_linalg.svd(GENERAL, subset_by_index=(0, 2))
    u, h, iterations, converged = lax_linalg.qdwh(GENERAL)
    np.testing.assert_allclose(u, [[0.63773332, 0.71439439, -0.28798761],
                                   [0.65293158, -0.30303821, 0.69415286],
                                   [-0.40862766, 0.63072061, 0.65970822]], rtol=1e-7)
    np.testing.assert_allclose(h[0], [2.59652805, -0.19472025, 1.79447098], rtol=1e-7)
    assert int(iterations) == 6 and bool(converged)


def test_lax_linalg_composed_functions_match_jax(x64):
    np.testing.assert_allclose(lax_linalg.householder_product(PACKED, TAUS),
                               [[-0.2, 8.54131372, -111.901206], [-2.07846097, 15.2939893,
                                                                  -187.917837],
                                [-2.93938769, 19.5989847, -258.588975],
                                [-3.6, 24.0428023, -320.692138]], rtol=1e-8)
    np.testing.assert_allclose(lax_linalg.ormqr(PACKED, TAUS, np.arange(8.0).reshape(4, 2)),
                               [[-2978.06780528, -3506.21863222], [-4999.30057364,
                                                                   -5887.03908311],
                                [-6902.0126733, -8128.41784167],
                                [-8519.34849342, -10033.70875336]], rtol=1e-10)
    np.testing.assert_allclose(
        lax_linalg.ormqr(PACKED, TAUS, np.arange(8.0).reshape(2, 4), left=False, transpose=True),
        [[-1489.03390264, -2499.65028682, -3451.00633665, -4259.67424671],
         [-3601.6372104, -6050.6043247, -8356.62701012, -10317.11528648]], rtol=1e-10)
    r = np.linalg.cholesky(SPD).T
    w = np.array([1.0, -2, 0.5, 0.3])
    np.testing.assert_allclose(lax_linalg.cholesky_update(r, w),
                               np.linalg.cholesky(SPD + np.outer(w, w)).T, atol=1e-12)
    c = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(lax_linalg.symmetric_product(GENERAL[:, :2], c, beta=1.0),
                               [[5, 2, 6], [4, 14, 3], [10, 5, 12]])
    np.testing.assert_allclose(lax_linalg.symmetric_product(GENERAL[:, :2], c, beta=1.0,
                                                            symmetrize_output=True),
                               [[5, 4, 10], [4, 14, 5], [10, 5, 12]])
    dl, d, du = jnp.array([0.0, 1, 2]), jnp.array([4.0, 5, 6]), jnp.array([1.0, 1, 0])
    b = jnp.array([[1.0, 2], [3, 4], [5, 6]])
    np.testing.assert_allclose(lax_linalg.tridiagonal_solve(dl, d, du, b),
                               [[0.14150943, 0.35849057], [0.43396226, 0.56603774],
                                [0.68867925, 0.81132075]], rtol=1e-7)
    dense = lambda d: jnp.diag(d) + jnp.diag(dl[1:], -1) + jnp.diag(du[:-1], 1)  # noqa: E731
    ours = jax.grad(lambda d: lax_linalg.tridiagonal_solve(dl, d, du, b).sum())(d)
    np.testing.assert_allclose(ours, jax.grad(lambda d: jnp.linalg.solve(dense(d), b).sum())(d),
                               rtol=1e-10)


def test_lax_linalg_rejects_bad_input():
    with pytest.raises(ValueError, match="householder_product: a must have at least"):
        lax_linalg.householder_product(jnp.ones((2, 3)), jnp.ones(2))
    with pytest.raises(ValueError, match="householder_product: taus"):
        lax_linalg.householder_product(jnp.ones((3, 2)), jnp.ones(3))
    with pytest.raises(TypeError, match="lu_pivots_to_permutation: pivots must be integers"):
        lax_linalg.lu_pivots_to_permutation(jnp.array([1.0, 0.0]), 2)
    with pytest.raises(ValueError, match="tridiagonal_solve: dl, d, du"):
        lax_linalg.tridiagonal_solve(jnp.zeros(3), jnp.ones(3), jnp.zeros(3), jnp.ones(3))
    with pytest.raises(ValueError, match="lax.linalg.schur: x must be a batch of square"):
        lax_linalg.schur(jnp.ones((2, 3)))
