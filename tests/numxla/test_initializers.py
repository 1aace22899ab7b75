"""``numxla.nn.initializers`` against JAX's values for the same key.

The ``JAX`` table was generated offline with JAX 0.10.2 (CPU, x64 off) by
running, for each entry, ``np.asarray(init(jax.random.PRNGKey(42), shape,
np.float32))`` with ``init`` the expression named by the key, e.g.
``jax.nn.initializers.glorot_normal()``, and printing each value as
``str(np.float32(v))`` (shortest round-trip repr, so the f32 bits are exact).
"""
import numpy as np
import pytest

import numxla as jax
from numxla.nn import initializers as I

KEY = jax.random.PRNGKey(42)

# JAX 0.10.2: {expression: (shape, values)}, see the module docstring
JAX = {
    'uniform(0.3)': ((2, 3), [
        0.14661288, 0.20393915, 0.18488145, 0.16830483, 0.1351934, 0.17575976,
    ]),
    'normal(0.5)': ((2, 3), [
        -0.014152308, 0.23356593, 0.14785148, 0.07677296, -0.06201641, 0.10846157,
    ]),
    'truncated_normal(0.5)': ((2, 3), [
        -0.013508249, 0.22219041, 0.14093854, 0.07325403, -0.05918115, 0.10345374,
    ]),
    'truncated_normal(1.0, lower=-1.0, upper=0.5)': ((2, 3), [
        -0.2043417, 0.052302334, -0.032568946, -0.106560856, -0.25655293, -0.07323685,
    ]),
    'glorot_uniform()': ((3, 4), [
        -0.020905817, 0.3329197, 0.21529298, 0.11297984, -0.09138842, 0.15899268,
        -0.78729993, 0.509448, 0.3684009, 0.5899949, -0.2771809, 0.69032854,
    ]),
    'glorot_normal()': ((3, 4), [
        -0.016417125, 0.27003706, 0.17128834, 0.089028604, -0.07192526, 0.12573154,
        -0.79944557, 0.4343255, 0.30115262, 0.5204617, -0.22251517, 0.64527744,
    ]),
    'lecun_uniform()': ((2, 2, 3), [
        -0.0195556, 0.31141782, 0.20138814, 0.105682954, -0.08548604, 0.14872402,
        -0.7364516, 0.47654498, 0.3446075, 0.5518897, -0.25927898, 0.6457432,
    ]),
    'lecun_normal()': ((2, 2, 3), [
        -0.015356816, 0.25259656, 0.16022559, 0.08327864, -0.06727993, 0.1176111,
        -0.7478129, 0.40627432, 0.2817025, 0.48684737, -0.20814389, 0.6036018,
    ]),
    'he_uniform()': ((4, 3), [
        -0.027655795, 0.44041136, 0.28480583, 0.14945827, -0.12089552, 0.21032754,
        -1.0415, 0.67393637, 0.48734862, 0.7804899, -0.36667588, 0.91321886,
    ]),
    'he_normal()': ((4, 3), [
        -0.021717817, 0.35722545, 0.22659318, 0.11777377, -0.09514818, 0.16632721,
        -1.0575671, 0.5745586, 0.39838746, 0.6885061, -0.2943599, 0.8536218,
    ]),
    "variance_scaling(2.0, 'fan_out', 'normal')": ((3, 4), [
        -0.020014385, 0.3303121, 0.20909357, 0.108573355, -0.08770444, 0.15338783,
        -1.0188553, 0.53447366, 0.36869228, 0.64358765, -0.27188015, 0.8059768,
    ]),
    ("variance_scaling(0.5, 'fan_geo_avg', 'uniform', "
     'in_axis=(0, 1), out_axis=-1, batch_axis=2)'): ((2, 1, 2, 3), [
        -0.017670479, 0.2813978, 0.18197472, 0.09549533, -0.077245355, 0.13438733,
        -0.6654592, 0.430607, 0.31138802, 0.49868864, -0.23428503, 0.58349484,
    ]),
    'orthogonal()': ((4, 3), [
        -0.01653874, 0.97987, -0.14570099, 0.08971903, -0.10146704, 0.20810865,
        -0.8419258, 0.06932299, 0.5343054, 0.5318253, 0.15733364, 0.8062131,
    ]),
    'orthogonal(2.0, column_axis=0)': ((3, 4), [
        -0.03307748, 0.17943805, -1.6838516, 1.0636506, 1.95974, -0.20293409,
        0.13864598, 0.31466728, -0.29140198, 0.4162173, 1.0686108, 1.6124262,
    ]),
}

# f32 samplers that numxla.random reproduces bit for bit: these must be equal;
# orthogonal's QR (Cholesky QR here, Householder in XLA) agrees to rounding.
BIT_EXACT = [name for name in JAX if not name.startswith("orthogonal")]
# numxla.random.normal(PRNGKey(42), (3, 4), f32)[1, 2] is 1 ulp off JAX's
# (3216535224 vs 3216535225 as bits): this initializer only scales it
KNOWN_ULPS = {"variance_scaling(2.0, 'fan_out', 'normal')": 1}


def _init(expression):
    return eval(expression, {}, vars(I))  # the table's keys are initializer expressions


@pytest.mark.parametrize("expression", list(JAX))
def test_values_equal_jax_for_the_same_key(expression):
    shape, expected = JAX[expression]
    expected = np.array(expected, np.float32).reshape(shape)
    got = _init(expression)(KEY, shape, np.float32)
    assert got.dtype == np.float32 and got.shape == shape
    if expression in KNOWN_ULPS:
        np.testing.assert_array_max_ulp(np.asarray(got), expected, KNOWN_ULPS[expression])
    elif expression in BIT_EXACT:
        np.testing.assert_array_equal(np.asarray(got), expected)
    else:
        np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-5, atol=2e-6)


def test_aliases_and_default_dtype():
    assert I.xavier_uniform is I.glorot_uniform and I.xavier_normal is I.glorot_normal
    assert I.kaiming_uniform is I.he_uniform and I.kaiming_normal is I.he_normal
    # JAX's default float: f64 with x64 enabled (the test suite's setting)
    assert I.glorot_normal()(KEY, (3, 4)).dtype == np.float64
    assert I.normal(dtype=np.float32)(KEY, (2,)).dtype == np.float32
    for init in (I.zeros, I.ones, I.constant(2.5)):
        out = init(KEY, (2, 3), np.float32)
        assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(I.zeros(KEY, (2,), np.float32), [0, 0])
    np.testing.assert_array_equal(I.ones(KEY, 3, np.float32), [1, 1, 1])
    np.testing.assert_array_equal(I.constant(-0.5, np.float32)(KEY, (2,)), [-0.5, -0.5])
    assert I.constant(1)(KEY, (1,), np.int32).dtype == np.int32


def test_variance_scaling_statistics_and_errors():
    key = jax.random.PRNGKey(7)
    w = np.asarray(I.he_normal()(key, (400, 300), np.float32))
    assert abs(w.std() - np.sqrt(2 / 400)) < 0.02 * np.sqrt(2 / 400)
    assert np.abs(w).max() <= 2 * np.sqrt(2 / 400) / 0.8796256610342398 + 1e-6
    u = np.asarray(I.glorot_uniform()(key, (200, 300), np.float32))
    limit = np.sqrt(3 * 2 / 500)
    assert -limit <= u.min() and u.max() < limit and abs(u.std() - np.sqrt(2 / 500)) < 1e-3
    conv = np.asarray(I.lecun_uniform()(key, (3, 3, 16, 8), np.float32))  # fan_in = 3*3*16
    assert conv.max() < np.sqrt(3 / 144)
    with pytest.raises(ValueError, match="mode"):
        I.variance_scaling(1.0, "fan_sum", "normal")
    with pytest.raises(ValueError, match="distribution"):
        I.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="1-dimensional"):
        I.lecun_normal()(key, (5,))


def test_complex_variance_scaling():
    """Complex weights: modulus from a (truncated) distribution, uniform phase.
    E|w|^2 is the variance (times E[r^2] = 1 - 4e^-4/(1 - e^-4) over 0.9531^2
    for the modulus truncated at 2)."""
    key = jax.random.PRNGKey(3)
    truncated = (1 - 4 * np.exp(-4) / (1 - np.exp(-4))) / 0.9531116438049121 ** 2
    for init, expected in ((I.variance_scaling(1.0, "fan_in", "truncated_normal"),
                            truncated / 200), (I.glorot_uniform(), 1 / 250)):
        w = np.asarray(init(key, (200, 300), np.complex64))
        assert w.dtype == np.complex64
        assert abs(np.mean(np.abs(w) ** 2) - expected) < 0.02 * expected
        assert abs(np.mean(w)) < 0.02 * np.sqrt(expected)


def test_orthogonal_and_delta_orthogonal():
    key = jax.random.PRNGKey(1)
    q = np.asarray(I.orthogonal(1.5)(key, (6, 4), np.float64))
    np.testing.assert_allclose(q.T @ q, 2.25 * np.eye(4), atol=1e-12)
    wide = np.asarray(I.orthogonal(column_axis=0)(key, (3, 2, 4), np.float64))  # 3 columns of 8
    flat = np.moveaxis(wide, 0, -1).reshape(8, 3)
    np.testing.assert_allclose(flat.T @ flat, np.eye(3), atol=1e-12)
    np.testing.assert_array_equal(I.orthogonal()(key, (0, 3), np.float32), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="2D"):
        I.orthogonal()(key, (3,))
    k = np.asarray(I.delta_orthogonal(2.0)(key, (3, 3, 4, 5), np.float64))
    centre = k[1, 1]
    np.testing.assert_allclose(centre @ centre.T, 4 * np.eye(4), atol=1e-12)
    k[1, 1] = 0
    assert not k.any()
    np.testing.assert_allclose(I.delta_orthogonal()(key, (4, 2, 2), np.float64)[1],
                               I.orthogonal()(key, (2, 2), np.float64), atol=1e-15)
    with pytest.raises(ValueError, match="fan_in"):
        I.delta_orthogonal()(key, (3, 5, 4))


def test_under_jit_and_vmap_keys():
    """Under jit the same bits as eagerly (uniform-based initializers: compiling
    normal and truncated-normal sampling takes numxla 15-50 s); keys split and
    vmapped as in JAX."""
    def init_all(key):
        k1, k2 = jax.random.split(key)
        return I.glorot_uniform()(k1, (3, 4), np.float32), I.he_uniform()(k2, (4, 3), np.float32)
    for a, b in zip(init_all(KEY), jax.jit(init_all)(KEY)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    keys = jax.random.split(KEY, 2)
    batched = jax.vmap(lambda k: I.lecun_normal()(k, (2, 2, 3), np.float32))(keys)
    np.testing.assert_array_equal(np.asarray(batched[1]),
                                  np.asarray(I.lecun_normal()(keys[1], (2, 2, 3), np.float32)))
