"""numxla.random against jax.random, and under numxla's transforms.

The reference values are in tests/data/jax_random_vectors.json, computed
offline by JAX 0.10.2 (jaxlib 0.10.2, x86-64 CPU, default config: x64 off,
jax_threefry_partitionable=True) with

    .venv/bin/python gen_vectors.py tests/data/jax_random_vectors.json

where gen_vectors.py is the JSON's "generator_source" (its "x64" section
reruns the script under JAX_ENABLE_X64=1). Each sampler case is a call,
evaluated here with ``R = numxla.random`` and ``k = R.PRNGKey(seed)``. These
tests never import JAX.

What must be bit-identical: keys (raw and typed), bits, ``uniform`` and every
sampler whose values are integers or booleans ("samplers"). The float
samplers built on XLA's log/erf_inv may differ by a few ulps (XLA:CPU fuses
their polynomials' multiply-adds; see numxla/_random_xla_math.py), and are
bit-identical with its ``EXACT_FMA``. Those built on pow/exp/lgamma (the
gamma family, "approx") and the gamma family's gradients ("gamma_grads") are
compared to a relative tolerance.
"""
from __future__ import annotations

import json
import math
import os
import types
import zlib

import numpy as np
import pytest
from scipy import special

import numxla._random_core as random_core
import numxla._random_threefry as threefry
import numxla._random_xla_math as xla_math
import numxla.dtypes as nx_dtypes
import numxla.random as R
from numxla.autodiff import grad, vmap
from numxla.compile import jit
from numxla.primitives import fori_loop, scan
from numxla.tracer import make_graph, pytree
from numxla.tracer.config import config
from numxla.tracer.graph import eval_graph

with open(os.path.join(os.path.dirname(__file__), "..", "data", "jax_random_vectors.json")) as _f:
    VECTORS = json.load(_f)

P5 = np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)
LOGITS = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]],
                         np.float32))
ARR = np.arange(24, dtype=np.float32).reshape(4, 6)
ENV = {"R": R, "np": np, "jnp": np, "P5": P5, "LOGITS": LOGITS, "ARR": ARR,
       "jax": types.SimpleNamespace(grad=grad)}

# most ulps (of max(|value|, 1)) a float sampler may differ from JAX by
ULPS = {"normal": 3, "truncated_normal": 3, "exponential": 2, "laplace": 2, "logistic": 4,
        "gumbel": 2, "rayleigh": 1, "multivariate_normal": 4}


@pytest.fixture(autouse=True)
def _x64_off():
    """JAX's default, x64 off (tests/conftest.py turns it on for the op set)."""
    before = config.jax_enable_x64
    config.update("jax_enable_x64", False)
    yield
    config.update("jax_enable_x64", before)


def decode(e: dict) -> np.ndarray:
    if "bits" in e:
        words = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}[e["dtype"]]
        return np.array(e["bits"], words).view(e["dtype"]).reshape(e["shape"])
    return np.array(e["values"], dtype=e["dtype"]).reshape(e["shape"])


def assert_matches(got, want: np.ndarray, allowed_ulps: int = 0, what: str = "") -> None:
    """Equal dtype, shape and values; floats within ``allowed_ulps`` units in
    the last place of ``max(|want|, 1)`` (0: bit for bit)."""
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if got.dtype.kind == "f" and allowed_ulps:
        scale = np.spacing(np.maximum(np.abs(want), want.dtype.type(1)))
        assert np.all(np.abs(got - want) <= allowed_ulps * scale), (what, got, want)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def evaluate(case: dict):
    return eval(case["call"], dict(ENV, k=R.PRNGKey(case["seed"])))


# --------------------------------------------------------------------------
# keys and bits
# --------------------------------------------------------------------------

@pytest.mark.parametrize("case", VECTORS["seeds"], ids=lambda c: str(c["seed"]))
def test_prng_key_of_seed(case):
    want = decode(case["key"])
    assert_matches(R.PRNGKey(case["seed"]), want)
    assert_matches(R.key_data(R.key(case["seed"])), want)        # typed, over the same data


def test_typed_keys():
    k = R.key(3)
    assert isinstance(k, R.KeyArray) and k.shape == () and k.ndim == 0
    assert str(k.dtype) == "key<fry>" and k.dtype == R.key_dtype()
    assert R.key_impl(k) == "threefry2x32"
    assert nx_dtypes.issubdtype(k.dtype, nx_dtypes.prng_key)
    assert nx_dtypes.issubdtype(k.dtype, nx_dtypes.extended)
    assert not nx_dtypes.issubdtype(k.dtype, np.floating)
    assert not nx_dtypes.issubdtype(np.uint32, nx_dtypes.prng_key)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 3]"
    raw = R.PRNGKey(3)
    keys = R.split(k, 4)
    assert isinstance(keys, R.KeyArray) and keys.shape == (4,) and len(keys) == 4
    assert R.split(k, (2, 3)).shape == (2, 3)
    np.testing.assert_array_equal(R.key_data(keys), R.split(raw, 4))
    np.testing.assert_array_equal(R.key_data(R.fold_in(k, 7)), R.fold_in(raw, 7))
    assert isinstance(R.fold_in(k, 7), R.KeyArray) and isinstance(R.clone(k), R.KeyArray)
    assert R.key_data(raw) is raw                                # raw keys are their data
    wrapped = R.wrap_key_data(R.key_data(keys))
    assert isinstance(wrapped, R.KeyArray) and bool(np.all(wrapped == keys))
    np.testing.assert_array_equal(keys != keys, np.zeros(4, bool))
    # the key axes only: indexing, iteration, reshape, transpose
    a, b = R.split(k)
    np.testing.assert_array_equal(R.key_data(a), R.split(raw)[0])
    grid = keys.reshape(2, 2)
    assert grid.shape == (2, 2) and grid[..., 0].shape == (2,) and grid.T.shape == (2, 2)
    np.testing.assert_array_equal(R.key_data(grid.T[0, 1]), R.key_data(keys[2]))
    assert [x.shape for x in keys] == [()] * 4 and keys[1:3].shape == (2,)
    assert keys.ravel().shape == (4,) and grid[:1].squeeze().shape == (2,)
    # a typed key draws what the raw key of the same seed draws
    np.testing.assert_array_equal(R.normal(k, (5,)), R.normal(raw, (5,)))
    np.testing.assert_array_equal(R.gamma(k, 2.0, (3,)), R.gamma(raw, 2.0, (3,)))
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(TypeError):
        len(k)


def test_key_errors():
    k = R.key(3)
    with pytest.raises(TypeError, match="integer"):
        R.PRNGKey(1.5)
    with pytest.raises(TypeError, match="normal: a key"):
        R.normal(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="binomial: a key"):
        R.binomial(np.zeros(2, np.int32), 3, 0.5)
    with pytest.raises(TypeError, match="wrap_key_data"):
        R.wrap_key_data(np.zeros((2, 3), np.uint32))
    with pytest.raises(TypeError, match="wrapped already"):
        R.wrap_key_data(k)
    for keys in (R.split(k, 2), R.split(R.PRNGKey(3), 2)):
        with pytest.raises(ValueError, match="gamma accepts a single key.*shape \\(2,\\)"):
            R.gamma(keys, 1.0)
    with pytest.raises(ValueError, match="threefry2x32"):
        R.key(0, impl="rbg")


@pytest.mark.parametrize("case", VECTORS["split"], ids=lambda c: f"{c['seed']}-{c['num']}")
def test_split(case):
    num = case["num"] if isinstance(case["num"], int) else tuple(case["num"])
    assert_matches(R.split(R.PRNGKey(case["seed"]), num), decode(case["keys"]))


@pytest.mark.parametrize("case", VECTORS["fold_in"], ids=lambda c: f"{c['seed']}-{c['data']}")
def test_fold_in(case):
    key = R.PRNGKey(case["seed"])
    want = decode(case["key"])
    assert_matches(R.fold_in(key, case["data"]), want)
    assert_matches(R.fold_in(key, np.uint32(case["data"])), want)


@pytest.mark.parametrize("case", VECTORS["bits"], ids=lambda c: f"{c['shape']}-{c['dtype']}")
def test_bits(case):
    got = R.bits(R.PRNGKey(case["seed"]), tuple(case["shape"]), np.dtype(case["dtype"]))
    assert_matches(got, decode(case["bits"]))
    if case["dtype"] == "uint32":
        assert_matches(R.random_bits(R.PRNGKey(case["seed"]), 32, case["shape"]),
                       decode(case["bits"]))


# --------------------------------------------------------------------------
# samplers against JAX's values
# --------------------------------------------------------------------------

def _name(case: dict) -> str:
    return case["call"].split("(")[0].removeprefix("R.")


@pytest.mark.parametrize("case", VECTORS["samplers"], ids=lambda c: c["call"])
def test_sampler_matches_jax(case):
    assert_matches(evaluate(case), decode(case["values"][0]), ULPS.get(_name(case), 0),
                   case["call"])


FLOAT_CASES = [c for c in VECTORS["samplers"]
               if _name(c) in ULPS and _name(c) != "multivariate_normal"]


@pytest.mark.parametrize("case", FLOAT_CASES, ids=lambda c: c["call"])
def test_exact_fma_gives_jax_bits(case):
    """With every FMA of XLA:CPU emulated, the float samplers are JAX's bits."""
    xla_math.EXACT_FMA = True
    try:
        got = evaluate(case)
    finally:
        xla_math.EXACT_FMA = False
    assert_matches(got, decode(case["values"][0]), 0, case["call"])


@pytest.mark.parametrize("case", VECTORS["grads"], ids=lambda c: c["call"][9:60])
def test_gradients_match_jax(case):
    got = evaluate(case)
    got = got if isinstance(got, tuple) else (got,)
    for g, want in zip(got, case["values"]):
        np.testing.assert_allclose(np.asarray(g), decode(want), rtol=1e-5)


@pytest.mark.parametrize("case", VECTORS["approx"], ids=lambda c: c["call"])
def test_approximate_samplers_match_jax(case):
    """pow/exp/lgamma are not XLA's to the last bit: within 4e-6 (relative;
    1e-6 measured)."""
    got = np.asarray(evaluate(case))
    want = decode(case["values"][0])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=4e-6, err_msg=case["call"])


@pytest.mark.parametrize("case", VECTORS["gamma_grads"], ids=lambda c: c["call"][9:70])
def test_gamma_gradients_match_jax(case):
    """Both are f32 approximations of the same derivative: JAX's is up to
    7.4e-6 (relative) off the exact one in these cases (at a = 300), ours
    under 1e-6 (test_gamma_gradient_is_exact)."""
    got = evaluate(case)
    got = got if isinstance(got, tuple) else (got,)
    for g, want in zip(got, case["values"]):
        np.testing.assert_allclose(np.asarray(g), decode(want), rtol=1e-5, err_msg=case["call"])


@pytest.mark.parametrize("case", VECTORS["x64"], ids=lambda c: c["call"])
def test_x64_matches_jax(case):
    config.update("jax_enable_x64", True)
    try:
        got = evaluate(case)
    finally:
        config.update("jax_enable_x64", False)
    want = decode(case["values"][0])
    if "normal" in case["call"]:   # f64: primitives' log1p, not XLA's
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-15)
    elif "grad" in case["call"]:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    else:
        assert_matches(got, want, 0, case["call"])


def _draw_derivative(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The exact ``dx/da`` of Gamma(a) draws ``x`` in f64: ``-(dP/da) / (dP/dx)``,
    ``dP/da`` by central differences of scipy's incomplete gamma function
    (its upper form above a), Richardson-extrapolated."""
    def dp_da(a, x, h):
        if x > a:
            return (special.gammaincc(a - h, x) - special.gammaincc(a + h, x)) / (2 * h)
        return (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)

    out = []
    for a_, x_ in zip(map(float, a), map(float, x)):
        h = 1e-4 * min(a_, math.sqrt(a_))
        slope = (4 * dp_da(a_, x_, h / 2) - dp_da(a_, x_, h)) / 3
        density = math.exp((a_ - 1) * math.log(x_) - x_ - special.gammaln(a_))
        out.append(-slope / density)
    return np.array(out)


# shapes in each branch of _random_gamma_grad: series, continued fraction
# (the draws of small a fall on both sides of a + 1), asymptotic expansion
GRAD_ALPHAS = np.float32([0.01, 0.05, 0.3, 0.3, 1.0, 2.5, 9.0, 29.0, 31.0, 150.0, 4000.0, 1e5])


def test_gamma_gradient_is_exact():
    """d(draw)/da against the implicit derivative of the CDF: within 1e-5 in
    f32 (7e-7 measured), 5e-9 in f64 (7e-10, the reference's own error); and
    d(log draw)/da alike."""
    k = R.PRNGKey(17)
    for x64, rtol in ((False, 1e-5), (True, 5e-9)):
        config.update("jax_enable_x64", x64)
        try:
            alphas = GRAD_ALPHAS.astype(np.float64 if x64 else np.float32)
            draws = np.asarray(R.gamma(k, alphas))
            got = np.asarray(grad(lambda a: R.gamma(k, a).sum())(alphas))
            log_draws = np.asarray(R.loggamma(k, alphas))
            got_log = np.asarray(grad(lambda a: R.loggamma(k, a).sum())(alphas))
        finally:
            config.update("jax_enable_x64", False)
        assert got.dtype == alphas.dtype and np.all(np.isfinite(got))
        drawn = draws > 0    # (a = 0.01 underflows in f32)
        np.testing.assert_allclose(got[drawn], _draw_derivative(alphas[drawn], draws[drawn]),
                                   rtol=rtol)
        x = np.exp(log_draws.astype(np.float64))
        np.testing.assert_allclose(got_log, _draw_derivative(alphas, x) / x, rtol=rtol)
    # an underflowing draw (a tiny shape) has derivative 0, its log a finite one
    tiny = np.float32([1e-3] * 8)
    assert np.any(np.asarray(R.gamma(k, tiny)) == 0)
    g = np.asarray(grad(lambda a: R.gamma(k, a).sum())(tiny))
    assert np.all(np.isfinite(g)) and np.all(g >= 0)
    assert np.all(np.isfinite(np.asarray(grad(lambda a: R.loggamma(k, a).sum())(tiny))))


def test_shuffle_is_independent_permutation():
    k = R.PRNGKey(11)
    np.testing.assert_array_equal(R.shuffle(k, ARR, 1),
                                  R.permutation(k, ARR, 1, independent=True))


def test_argument_errors():
    k = R.PRNGKey(0)
    with pytest.raises(ValueError, match="larger sample"):
        R.choice(k, 3, (4,), replace=False)
    with pytest.raises(ValueError, match="broadcast"):
        R.uniform(k, (3,), minval=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="float dtype"):
        R.normal(k, (2,), np.int32)
    with pytest.raises(ValueError, match="cannot exceed"):
        R.categorical(k, LOGITS[0], shape=(5,), replace=False)
    with pytest.raises(ValueError, match="binomial parameter shapes"):
        R.binomial(k, np.float32([1, 2, 3]), 0.5, (4,))
    with pytest.raises(ValueError, match="dtype argument to `binomial`"):
        R.binomial(k, 5, 0.5, dtype=np.int32)
    with pytest.raises(ValueError, match="multinomial parameter shapes"):
        R.multinomial(k, np.float32([5, 6, 7]), P5, shape=(2, 5))
    with pytest.raises(ValueError, match="multinomial: p needs"):
        R.multinomial(k, 5, 0.5)
    with pytest.raises(ValueError, match="gamma parameter shapes"):
        R.gamma(k, np.float32([1, 2]), (3,))
    with pytest.raises(ValueError, match="generalized_normal parameter shapes"):
        R.generalized_normal(k, np.float32([1, 2]), (3,))
    with pytest.raises(TypeError, match="ball: d must"):
        R.ball(k, 2.5)
    with pytest.raises(ValueError, match="random_gamma_p: keys of shape"):
        R.random_gamma_p.bind(R.split(k, 2), np.float32([1, 2, 3]))
    assert R.uniform(k, (2,), out_sharding=None).shape == (2,)


# --------------------------------------------------------------------------
# every sampler: traced, compiled, batched over keys
# --------------------------------------------------------------------------

ALPHA = np.float32([0.3, 4.5])   # below 1 (boosted) and above
COV = np.float32([[2, 0.5], [0.5, 1]])
SAMPLERS = {
    "split": lambda k: R.split(k, 3),
    "fold_in": lambda k: R.fold_in(k, 17),
    "bits": lambda k: R.bits(k, (2, 3)),
    "uniform": lambda k: R.uniform(k, (5,), minval=-2.0, maxval=3.0),
    "normal": lambda k: R.normal(k, (5,)),
    "bernoulli": lambda k: R.bernoulli(k, 0.3, (6,)),
    "randint": lambda k: R.randint(k, (6,), 0, 10),
    "permutation": lambda k: R.permutation(k, 8),
    "shuffle": lambda k: R.shuffle(k, ARR, 1),
    "choice": lambda k: R.choice(k, 5, (4,)),
    "choice_p": lambda k: R.choice(k, 5, (4,), p=P5),
    "choice_no_replace": lambda k: R.choice(k, 5, (3,), replace=False, p=P5),
    "categorical": lambda k: R.categorical(k, LOGITS),
    "gumbel": lambda k: R.gumbel(k, (4,)),
    "exponential": lambda k: R.exponential(k, (4,)),
    "laplace": lambda k: R.laplace(k, (4,)),
    "logistic": lambda k: R.logistic(k, (4,)),
    "cauchy": lambda k: R.cauchy(k, (4,)),
    "rademacher": lambda k: R.rademacher(k, (4,)),
    "truncated_normal": lambda k: R.truncated_normal(k, -1.0, 2.0, (4,)),
    "maxwell": lambda k: R.maxwell(k, (3,)),
    "double_sided_maxwell": lambda k: R.double_sided_maxwell(k, 1.0, 2.0, (3,)),
    "pareto": lambda k: R.pareto(k, 3.0, (3,)),
    "rayleigh": lambda k: R.rayleigh(k, 2.0, (3,)),
    "weibull_min": lambda k: R.weibull_min(k, 1.0, 2.0, (3,)),
    "lognormal": lambda k: R.lognormal(k, 0.5, (3,)),
    "geometric": lambda k: R.geometric(k, 0.3, (3,)),
    "triangular": lambda k: R.triangular(k, 0.0, 0.3, 1.0, (3,)),
    "wald": lambda k: R.wald(k, 1.5, (3,)),
    "multivariate_normal": lambda k: R.multivariate_normal(k, np.float32([1, -1]), COV, (2,)),
    "orthogonal": lambda k: R.orthogonal(k, 3),
    "gamma": lambda k: R.gamma(k, ALPHA),
    "loggamma": lambda k: R.loggamma(k, ALPHA),
    "beta": lambda k: R.beta(k, 2.0, 3.0, (1,)),
    "dirichlet": lambda k: R.dirichlet(k, ALPHA),
    "t": lambda k: R.t(k, 4.0, (1,)),
    "chisquare": lambda k: R.chisquare(k, 3.0, (1,)),
    "f": lambda k: R.f(k, 3.0, 5.0, ()),
    "poisson": lambda k: R.poisson(k, np.float32([0.0, 3.0, 25.0])),
    "binomial": lambda k: R.binomial(k, np.float32([5, 40]), 0.7),
    "multinomial": lambda k: R.multinomial(k, 10.0, P5),
    "generalized_normal": lambda k: R.generalized_normal(k, 1.5, (3,)),
    "ball": lambda k: R.ball(k, 3, 1.5),
    "gamma_grad": lambda k: grad(lambda a: R.gamma(k, a).sum())(ALPHA),
    "typed_key": lambda k: R.key_data(R.split(R.wrap_key_data(k), 2)[1]),
}
# Compiled (Numba) checks cost seconds of compile each: these cover the exact
# FMA, the unsigned remainders and the log/erf_inv polynomials (and
# test_keys_inside_jit the threefry loop); every sampler's traced graph is
# checked against eager evaluation.
COMPILED = ("uniform", "randint", "normal")


def _leaves(x) -> list[np.ndarray]:
    return [np.asarray(v) for v in (x if isinstance(x, tuple) else (x,))]


def _same(got, want, what) -> None:
    for g, w in zip(_leaves(got), _leaves(want)):
        assert g.dtype == w.dtype and g.shape == w.shape, what
        np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("name", [n for n in SAMPLERS if n not in ("beta", "f")])
def test_traced_graph_equals_eager(name):
    """(beta and f are compositions of loggamma and chisquare, which are here.)"""
    fn, key = SAMPLERS[name], R.PRNGKey(7)
    graph = make_graph(fn)(key)
    _same(tuple(eval_graph(graph, key)), fn(key), name)


@pytest.mark.parametrize("name", COMPILED)
def test_jit_equals_eager(name):
    fn, key = SAMPLERS[name], R.PRNGKey(7)
    _same(jit(fn)(key), fn(key), name)


def test_keys_inside_jit():
    """Seeds, splits and fold-ins traced: one compiled program."""
    def program(seed, data):
        k = R.PRNGKey(seed)
        a, b = R.split(k)
        return R.fold_in(a, data), b
    got = jit(program)(np.int32(42), np.int32(5))
    want = program(42, 5)
    _same(got, want, "keys")


def test_typed_keys_inside_jit():
    """A typed key as a compiled program's argument and results: its data
    crosses the boundary."""
    def program(key, data):
        a, b = R.split(key)
        return R.fold_in(a, data), b
    got = jit(program)(R.key(42), np.int32(5))
    want = program(R.key(42), 5)
    assert all(isinstance(g, R.KeyArray) for g in got)
    _same(tuple(R.key_data(g) for g in got), tuple(R.key_data(w) for w in want), "typed keys")


def test_typed_keys_through_transforms():
    k = R.key(3)
    keys = R.split(k, 3)
    draw = lambda q: R.normal(q, (2,))  # noqa: E731
    np.testing.assert_array_equal(vmap(draw)(keys), vmap(draw)(R.key_data(keys)))
    made = vmap(R.key)(np.arange(3, dtype=np.int32))
    assert isinstance(made, R.KeyArray) and made.shape == (3,)
    np.testing.assert_array_equal(R.key_data(made), np.stack([R.PRNGKey(i) for i in range(3)]))
    pairs = vmap(R.split)(keys)
    assert isinstance(pairs, R.KeyArray) and pairs.shape == (3, 2)
    np.testing.assert_array_equal(R.key_data(pairs[1]), R.key_data(R.split(keys[1])))

    # a key carried by scan and fori_loop, and keys scanned over
    def step(carry, q):
        carry, sub = R.split(carry)
        return carry, R.uniform(sub) + R.uniform(q)
    carry, got = scan(step, k, keys)
    want, c = [], k
    for q in keys:
        c, sub = R.split(c)
        want.append(R.uniform(sub) + R.uniform(q))
    assert isinstance(carry, R.KeyArray)
    np.testing.assert_array_equal(R.key_data(carry), R.key_data(c))
    np.testing.assert_array_equal(got, np.stack(want))
    looped = fori_loop(0, 3, lambda i, q: R.fold_in(q, i), k)
    assert isinstance(looped, R.KeyArray)
    np.testing.assert_array_equal(R.key_data(looped),
                                  R.key_data(R.fold_in(R.fold_in(R.fold_in(k, 0), 1), 2)))

    # pytrees see the data; a typed key among grad's arguments
    leaves, tree = pytree.flatten({"key": k, "x": 1.0})
    assert leaves[0] is R.key_data(k) and isinstance(tree.unflatten(leaves)["key"], R.KeyArray)
    g = grad(lambda s, q: (R.normal(q, (3,)) * s).sum())(np.float32(2.0), k)
    np.testing.assert_allclose(g, np.sum(R.normal(R.PRNGKey(3), (3,))), rtol=1e-6)


# Batching the gamma loop is slow eagerly (~0.25 s: loops of ~400 ops per
# rejection step, batched): its compositions (loggamma, beta, t, chisquare,
# f, dirichlet) are covered by gamma's batch.
BATCHED = [name for name in SAMPLERS if name not in ("loggamma", "beta", "t", "chisquare", "f",
                                                      "dirichlet", "generalized_normal", "ball",
                                                      "gamma_grad")]


@pytest.mark.parametrize("name", BATCHED)
def test_vmap_over_keys(name):
    fn = SAMPLERS[name]
    keys = R.split(R.PRNGKey(3), 3)
    batched = vmap(fn)(keys)
    per_key = [fn(keys[i]) for i in range(3)]
    for j, b in enumerate(_leaves(batched)):
        np.testing.assert_array_equal(b, np.stack([_leaves(p)[j] for p in per_key]), err_msg=name)


def test_vmap_over_seeds():
    seeds = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(vmap(R.PRNGKey)(seeds),
                                  np.stack([R.PRNGKey(s) for s in range(4)]))


def test_key_arrays_draw_as_vmap():
    """The internal samplers given a key array (as the gamma loop uses them)
    draw what vmap over its keys draws."""
    f32, f16 = np.dtype(np.float32), np.dtype(np.float16)
    keys = R.split(R.PRNGKey(9), (2, 3))
    for draw in (lambda q: threefry.split_key(q, (3,)),
                 lambda q: threefry.random_bits(q, 64, (2,)),
                 lambda q: random_core._split(q, 3)[2],
                 lambda q: random_core._uniform(q, (4,), f32, -1.0, 2.0),
                 lambda q: random_core._normal_real(q, (), f32),
                 lambda q: random_core._exponential(q, (2,), f16)):
        np.testing.assert_array_equal(draw(keys), vmap(vmap(draw))(keys))


def test_gradients_with_respect_to_parameters():
    k = R.PRNGKey(2)
    u = R.uniform(k, (6,))            # uniform(minval, maxval) = u * (maxval - minval) + minval
    g_min, g_max = grad(lambda a, b: R.uniform(k, (6,), minval=a, maxval=b).sum(),
                        argnums=(0, 1))(np.float32(-1.0), np.float32(2.0))
    np.testing.assert_allclose([g_min, g_max], [np.sum(1 - u), np.sum(u)], rtol=1e-6)
    z = R.normal(k, (6,))
    np.testing.assert_allclose(grad(lambda s, m: (R.normal(k, (6,)) * s + m).sum(),
                                    argnums=(0, 1))(np.float32(0.5), np.float32(1.0)),
                               [z.sum(), 6.0], rtol=1e-6)
    mean = np.float32([1.0, 2.0])
    np.testing.assert_allclose(grad(lambda m: R.multivariate_normal(k, m, COV, (3,)).sum())(mean),
                               [3.0, 3.0])


# --------------------------------------------------------------------------
# distributions: moments of many draws (eager)
# --------------------------------------------------------------------------

N = 4000


def _close(value: float, want: float, standard_error: float, what: str) -> None:
    assert abs(value - want) < 5 * standard_error + 1e-9, (what, value, want, standard_error)


# name: (draws, mean, variance)
MOMENTS = {
    "uniform": (lambda k: R.uniform(k, (N,), minval=-1.0, maxval=3.0), 1.0, 16 / 12),
    "normal": (lambda k: R.normal(k, (N,)), 0.0, 1.0),
    "exponential": (lambda k: R.exponential(k, (N,)), 1.0, 1.0),
    "laplace": (lambda k: R.laplace(k, (N,)), 0.0, 2.0),
    "logistic": (lambda k: R.logistic(k, (N,)), 0.0, math.pi ** 2 / 3),
    "gumbel": (lambda k: R.gumbel(k, (N,)), 0.5772156649, math.pi ** 2 / 6),
    "gumbel_high": (lambda k: R.gumbel(k, (N,), mode="high"), 0.5772156649, math.pi ** 2 / 6),
    "rademacher": (lambda k: R.rademacher(k, (N,)), 0.0, 1.0),
    "bernoulli": (lambda k: R.bernoulli(k, 0.3, (N,)), 0.3, 0.21),
    "randint": (lambda k: R.randint(k, (N,), -3, 7), 1.5, (10 ** 2 - 1) / 12),
    "truncated_normal": (lambda k: R.truncated_normal(k, 0.0, np.inf, (N,)), math.sqrt(2 / math.pi),
                         1 - 2 / math.pi),
    "maxwell": (lambda k: R.maxwell(k, (N,)), 2 * math.sqrt(2 / math.pi), 3 - 8 / math.pi),
    "double_sided_maxwell": (lambda k: R.double_sided_maxwell(k, 1.0, 2.0, (N,)), 1.0, 12.0),
    "pareto": (lambda k: R.pareto(k, 5.0, (N,)), 1.25, 5 / (16 * 3)),
    "rayleigh": (lambda k: R.rayleigh(k, 2.0, (N,)), 2 * math.sqrt(math.pi / 2),
                 (4 - math.pi) / 2 * 4),
    "weibull_min": (lambda k: R.weibull_min(k, 1.0, 2.0, (N,)), math.gamma(1.5),
                    math.gamma(2.0) - math.gamma(1.5) ** 2),
    "lognormal": (lambda k: R.lognormal(k, 0.5, (N,)), math.exp(0.125),
                  (math.exp(0.25) - 1) * math.exp(0.25)),
    "geometric": (lambda k: R.geometric(k, 0.3, (N,)), 1 / 0.3, 0.7 / 0.09),
    "triangular": (lambda k: R.triangular(k, 0.0, 0.3, 1.0, (N,)), 1.3 / 3,
                   (1 + 0.09 - 0.3) / 18),
    "wald": (lambda k: R.wald(k, 1.5, (N,)), 1.5, 1.5 ** 3),
    "gamma": (lambda k: R.gamma(k, 2.5, (N,)), 2.5, 2.5),
    "gamma_small": (lambda k: R.gamma(k, 0.4, (N,)), 0.4, 0.4),
    "loggamma": (lambda k: np.exp(R.loggamma(k, 0.4, (N,))), 0.4, 0.4),
    "beta": (lambda k: R.beta(k, 2.0, 3.0, (N,)), 0.4, 6 / (25 * 6)),
    "t": (lambda k: R.t(k, 5.0, (N,)), 0.0, 5 / 3),
    "chisquare": (lambda k: R.chisquare(k, 3.0, (N,)), 3.0, 6.0),
    "f": (lambda k: R.f(k, 4.0, 10.0, (N,)), 10 / 8, 2 * 100 * 12 / (4 * 64 * 6)),
    "poisson": (lambda k: R.poisson(k, 3.5, (N,)), 3.5, 3.5),
    "poisson_large": (lambda k: R.poisson(k, 40.0, (N,)), 40.0, 40.0),
    "binomial": (lambda k: R.binomial(k, 10, 0.3, (N,)), 3.0, 2.1),
    "binomial_btrs": (lambda k: R.binomial(k, 200, 0.35, (N,)), 70.0, 45.5),
    "binomial_high_p": (lambda k: R.binomial(k, 40, 0.8, (N,)), 32.0, 6.4),
    "multinomial": (lambda k: R.multinomial(k, 30, P5, shape=(N, 5))[:, 2], 9.0, 6.3),
    "generalized_normal": (lambda k: R.generalized_normal(k, 1.5, (N,)), 0.0,
                           math.gamma(3 / 1.5) / math.gamma(1 / 1.5)),
    # the squared radius of a point uniform in the 3-ball: d / (d + 2), 4 d / ((d+2)^2 (d+4))
    "ball": (lambda k: np.sum(np.asarray(R.ball(k, 3, shape=(N,))) ** 2, -1), 0.6, 12 / 175),
}
@pytest.mark.parametrize("name", MOMENTS)
def test_moments(name):
    """Sample mean and variance within 5 standard errors of the distribution's
    (the variance's standard error estimated from the sample's 4th moment)."""
    draw, mean, var = MOMENTS[name]
    x = np.asarray(draw(R.PRNGKey(zlib.crc32(name.encode()) % 1000)), np.float64)
    assert x.shape == (N,) and np.all(np.isfinite(x))
    m, v = float(x.mean()), float(x.var())
    _close(m, mean, math.sqrt(var / N), name + " mean")
    fourth = float(np.mean((x - m) ** 4))
    _close(v, var, math.sqrt(max(fourth - v * v, 0.0) / N), name + " variance")


def test_categorical_and_choice_frequencies():
    k = R.PRNGKey(4)
    p = np.float32([0.1, 0.2, 0.3, 0.4])
    for draws in (R.categorical(k, np.log(p), shape=(N,)), R.choice(k, 4, (N,), p=p)):
        freq = np.bincount(np.asarray(draws), minlength=4) / N
        np.testing.assert_allclose(freq, p, atol=5 * 0.5 / math.sqrt(N))
    unique = R.choice(k, 50, (50,), replace=False)
    assert sorted(np.asarray(unique).tolist()) == list(range(50))
    rows = np.asarray(R.categorical(k, LOGITS[:1], shape=(4, 1), replace=False))
    assert sorted(rows[:, 0].tolist()) == [0, 1, 2, 3]


def test_dirichlet_multivariate_normal_orthogonal_cauchy():
    k = R.PRNGKey(5)
    alpha = np.float32([0.5, 2.0, 3.5])
    d = np.asarray(R.dirichlet(k, alpha, (N,)), np.float64)
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), alpha / alpha.sum(), atol=0.02)
    mean = np.float32([1.0, -1.0])
    x = np.asarray(R.multivariate_normal(k, mean, COV, (N,)), np.float64)
    np.testing.assert_allclose(x.mean(0), mean, atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.15)
    for n, m in ((4, 4), (5, 3), (3, 5)):
        q = np.asarray(R.orthogonal(k, n, (2,), m=m), np.float64)
        assert q.shape == (2, n, m)
        eye = q @ np.swapaxes(q, -1, -2) if n <= m else np.swapaxes(q, -1, -2) @ q
        np.testing.assert_allclose(eye, np.broadcast_to(np.eye(min(n, m)), eye.shape), atol=1e-5)
    c = np.asarray(R.cauchy(k, (N,)), np.float64)
    assert abs(np.median(c)) < 0.1 and abs(np.subtract(*np.percentile(c, [75, 25])) - 2) < 0.25
    z = np.asarray(R.normal(k, (N,), np.complex64))
    assert z.dtype == np.complex64 and abs(np.mean(np.abs(z) ** 2) - 1) < 0.1
