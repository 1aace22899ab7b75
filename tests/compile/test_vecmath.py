"""The vectorisable transcendental functions: accuracy in ulp over the whole
domain, NumPy's special values, and that a loop calling them vectorises.

References.  f32: NumPy's (or SciPy's) f64 result, which is accurate far
beyond f32.  f64: NumPy's long-double functions (80-bit on x86-64 Linux,
11 bits more than f64) and a long-double series for erf, so the bound of
2 ulp is against the true value; where ``long double`` is just ``double``
the f64 NumPy/SciPy results are the reference and the bound grows by their
own error.  Every f64 result is also checked against NumPy/SciPy in f64.
"""
from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
import scipy.special as sps
from numba import njit

from numxla.compile.kernels import vecmath

LD = np.longdouble
HAVE_LD = np.finfo(LD).nmant >= 63          # x87 extended (or better)

ULP32 = 4          # the binding bounds
ULP64 = 2
# bound against NumPy/SciPy f64 results (their own error comes on top: scipy's
# erf is up to ~3 ulp off)
ULP64_VS_NUMPY = {"erf": 5}


def _apply1(fn):
    @njit(error_model="numpy")
    def apply(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])
    return apply


def _apply2(fn):
    @njit(error_model="numpy")
    def apply(x, y, out):
        for i in range(x.size):
            out[i] = fn(x[i], y[i])
    return apply


_LOOPS: dict = {}


def loop(fn, nargs=1):
    """One compiled loop per function (the vectorisation test reuses it)."""
    key = (fn, nargs)
    if key not in _LOOPS:
        _LOOPS[key] = _apply1(fn) if nargs == 1 else _apply2(fn)
    return _LOOPS[key]


def run(fn, *args):
    out = np.empty_like(args[0])
    loop(fn, len(args))(*args, out)
    return out


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the last place of got's format in the binade of
    ref (ref may be long double).  Equal values (NaN = NaN) count 0, a NaN or
    infinity against anything else counts inf."""
    dt = got.dtype
    with np.errstate(all="ignore"):
        r = ref.astype(dt)
        same = (got == r) | (np.isnan(got) & np.isnan(r))
        _, e = np.frexp(np.abs(ref.astype(np.float64)))
        lowest = -125 if dt == np.float32 else -1021
        ulp = np.ldexp(1.0, np.maximum(e, lowest) - np.finfo(dt).nmant - 1).astype(LD)
        err = (np.abs(got.astype(LD) - ref.astype(LD)) / ulp).astype(np.float64)
    err = np.where(np.isfinite(err), err, np.inf)
    return np.where(same, 0.0, err)


# ---------------------------------------------------------------- references

def _ld_erf(x):
    """erf in long double: for |x| < 2.5, erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!!
    (positive terms, no cancellation); beyond, 1 - erfc(|x|) with SciPy's erfc
    (<= 4e-4, so its f64 error is far below an ulp of erf)."""
    x = np.asarray(x, dtype=LD)
    r = np.empty_like(x)
    big = ~(np.abs(x) < 2.5)
    with np.errstate(invalid="ignore"):
        r[big] = 1 - sps.erfc(np.abs(x[big]).astype(np.float64)).astype(LD)
    a = np.abs(x[~big])
    z = a * a
    s = a.copy()
    t = a.copy()
    for n in range(1, 50):
        t = t * 2 * z / (2 * n + 1)
        s = s + t
    r[~big] = LD("1.12837916709551257389615890312154517") * np.exp(-z) * s
    r = np.where(np.isnan(x), x, r)
    return np.where(x < 0, -r, np.where(x == 0, x, r))


# XLA's logistic is 1 / (1 + exp(-x)): 0 where exp(-x) overflows in the type
LOGISTIC_ZERO = {"f64": -709.782712893384, "f32": -88.72283172607422}


def _logistic(x, zero_below=LOGISTIC_ZERO["f64"]):
    """The exact logistic (exp(x) / (1 + exp(x)) for x < 0), 0 below ``zero_below``."""
    with np.errstate(all="ignore"):
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return np.where(x < zero_below, 0, y).astype(y.dtype)


def _f64_reference(name, x):
    """NumPy/SciPy in f64."""
    return {"erf": sps.erf, "logistic": _logistic}.get(name, getattr(np, name, None))(x)


def _np(name):
    return {"pow": np.power, "atan2": np.arctan2}.get(name) or getattr(np, name)


def reference(name, *args, f32=False):
    with np.errstate(all="ignore"):
        if f32:
            a64 = [a.astype(np.float64) for a in args]
            if name in ("pow", "atan2"):
                return _np(name)(*a64)
            if name == "logistic":
                return _logistic(a64[0], LOGISTIC_ZERO["f32"])
            return _f64_reference(name, a64[0])
        if HAVE_LD:
            ald = [a.astype(LD) for a in args]
            if name == "erf":
                return _ld_erf(ald[0])
            if name == "logistic":
                return _logistic(ald[0])
            return _np(name)(*ald)
        return _f64_reference(name, *args) if len(args) == 1 else _np(name)(*args)


# ---------------------------------------------------------------- inputs

rng = np.random.default_rng(7)
N = 200_000


def logu(lo, hi, n, signed=True):
    """magnitudes log-uniform in [lo, hi]: every binade, denormals included."""
    v = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    return v * rng.choice([-1.0, 1.0], n) if signed else v


# Per function: inputs spanning the whole domain (overflow, underflow,
# denormals, every binade) for f64; the f32 run uses the same values cast,
# plus f32-sized ranges.
DOMAINS = {
    "exp": lambda: np.concatenate([rng.uniform(-760, 720, N // 2), rng.uniform(-110, 100, N // 4),
                                   logu(5e-324, 1, N // 4),
                                   [709.78, 709.79, -708.4, -745.13, -745.14, 88.72, 88.73, -103.97]]),
    "log": lambda: np.concatenate([logu(5e-324, 1.7e308, N // 2, False), logu(1e-45, 3.4e38, N // 4, False),
                                   rng.uniform(0.5, 2, N // 4), [2.2250738585072014e-308, 1e-45, 3e38]]),
    "expm1": lambda: np.concatenate([rng.uniform(-50, 720, N // 2), rng.uniform(-2, 2, N // 4),
                                     logu(5e-324, 1, N // 4), [709.78, 88.72, 1e-9, -1e-9]]),
    "log1p": lambda: np.concatenate([logu(5e-324, 1.7e308, N // 2, False), -logu(5e-324, 1, N // 4, False),
                                     rng.uniform(-0.5, 1, N // 4), [-0.9999999999999999, 3.7e-9, -3.7e-9]]),
    "tanh": lambda: np.concatenate([rng.uniform(-25, 25, N // 2), rng.uniform(-1, 1, N // 4),
                                    logu(5e-324, 1, N // 4), [0.55, -0.55, 0.5499999999999999, 19.06, 20.0]]),
    "logistic": lambda: np.concatenate([rng.uniform(-760, 760, N // 4), rng.uniform(-110, 110, N // 4),
                                        rng.uniform(-5, 5, N // 4), logu(5e-324, 1, N // 4)]),
    "sin": lambda: np.concatenate([rng.uniform(-10, 10, N // 2), logu(5e-324, 1.6e6, N // 4),
                                   rng.uniform(-1.6e6, 1.6e6, N // 4), np.arange(-50, 50) * (np.pi / 2)]),
    "erf": lambda: np.concatenate([rng.uniform(-7, 7, N // 2), logu(5e-324, 10, N // 2),
                                   [1.0, -1.0, 1.5, 2.0, 4.0, 6.0, 5.9, 0.9999999999999999]]),
    "cbrt": lambda: np.concatenate([logu(5e-324, 1.7e308, N // 2), logu(1e-45, 3.4e38, N // 4),
                                    rng.uniform(-10, 10, N // 4), [8.0, -27.0, 1e-300]]),
}
DOMAINS["cos"] = DOMAINS["tan"] = DOMAINS["sin"]

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, 5e-324, -5e-324,
                    1e-310, 2.2250738585072014e-308, 1e-300, -1e-300, 1.7976931348623157e308,
                    -1.7976931348623157e308, 1e-45, -1e-45, 1e-40, 1.1754944e-38, 3.4028235e38,
                    -3.4028235e38])

UNARY = ["exp", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan", "erf", "cbrt"]
FUNCS = {name: (vecmath.__dict__[name + "_f64"], vecmath.__dict__[name + "_f32"]) for name in UNARY}
# what a kernel should call: the trig functions through their *_reduced form
# (sin_f64 itself calls libm for |x| > TRIG_BOUND_F64, see test_trig_*)
KERNELS = {name: ((vecmath.__dict__[name + "_f64_reduced"], vecmath.__dict__[name + "_f32_reduced"])
                  if name in ("sin", "cos", "tan") else FUNCS[name]) for name in UNARY}


def _check_specials(got, want, what):
    assert np.array_equal(np.isnan(got), np.isnan(want)), (what, got, want)
    signed = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[signed]), np.signbit(want[signed])), (what, got, want)
    fin = signed & ~np.isfinite(want)
    assert np.array_equal(got[fin], want[fin]), (what, got, want)


@pytest.mark.parametrize("name", UNARY)
def test_accuracy_f64(name):
    f64, _ = FUNCS[name]
    x = np.concatenate([DOMAINS[name](), SPECIAL])
    got = run(f64, x)
    err = ulp_error(got, reference(name, x))
    bound = ULP64 if HAVE_LD else ULP64 + 1
    assert err.max() <= bound, (name, err.max(), x[np.argmax(err)])
    with np.errstate(all="ignore"):
        np_ref = _f64_reference(name, x)
    err_np = ulp_error(got, np_ref)
    assert err_np.max() <= ULP64_VS_NUMPY.get(name, 3), (name, err_np.max(), x[np.argmax(err_np)])
    _check_specials(got[-len(SPECIAL):], np_ref[-len(SPECIAL):], name)


@pytest.mark.parametrize("name", UNARY)
def test_accuracy_f32(name):
    _, f32 = FUNCS[name]
    x = np.concatenate([DOMAINS[name](), SPECIAL]).astype(np.float32)
    got = run(f32, x)
    ref = reference(name, x, f32=True)
    err = ulp_error(got, ref)
    assert err.max() <= ULP32, (name, err.max(), x[np.argmax(err)])
    _check_specials(got[-len(SPECIAL):], ref[-len(SPECIAL):].astype(np.float32), name)


def test_named_special_values():
    cases = [
        ("tanh", -0.0, -0.0), ("tanh", np.inf, 1.0), ("tanh", -np.inf, -1.0),
        ("sin", np.inf, np.nan), ("sin", -0.0, -0.0), ("cos", np.inf, np.nan), ("tan", -np.inf, np.nan),
        ("expm1", -np.inf, -1.0), ("expm1", -0.0, -0.0), ("expm1", np.inf, np.inf),
        ("log1p", -1.0, -np.inf), ("log1p", -2.0, np.nan), ("log1p", -0.0, -0.0),
        ("erf", np.inf, 1.0), ("erf", -np.inf, -1.0), ("erf", -0.0, -0.0),
        ("logistic", np.inf, 1.0), ("logistic", -np.inf, 0.0), ("logistic", 0.0, 0.5),
        ("logistic", -720.0, 0.0), ("logistic", np.nan, np.nan),
        ("cbrt", -0.0, -0.0), ("cbrt", -np.inf, -np.inf), ("cbrt", -8.0, -2.0),
        ("exp", -np.inf, 0.0), ("exp", 1000.0, np.inf), ("log", 0.0, -np.inf), ("log", -1.0, np.nan),
    ]
    for name, xv, want in cases:
        for k, dt in enumerate((np.float64, np.float32)):
            fn = vecmath.__dict__[f"{name}_{'f64' if dt is np.float64 else 'f32'}"]
            got = run(fn, np.array([xv], dtype=dt))[0]
            assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), \
                (name, dt, xv, got, want)


# ---------------------------------------------------------------- pow, atan2

PAIR_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan,
                 2.5, -2.5, 1e-310, 1e308, 9007199254740993.0, 1e20, -1e20, 3.4e38, 1e-40]


def _pairs(dt):
    x, y = map(np.array, zip(*itertools.product(PAIR_SPECIALS, PAIR_SPECIALS)))
    with np.errstate(over="ignore"):
        return x.astype(dt), y.astype(dt)


def _pow_inputs():
    x1 = logu(5e-324, 1.7e308, N // 2, False)
    y1 = rng.uniform(-780, 720, N // 2) / np.log(x1)             # results over the whole range
    x2 = rng.uniform(0, 3, N // 4)
    y2 = rng.uniform(-50, 50, N // 4)
    x3 = 1 + rng.uniform(-1e-6, 1e-6, N // 8)
    y3 = logu(1e3, 1e9, N // 8)
    x4 = -logu(0.01, 100, N // 8, False)
    y4 = rng.integers(-60, 60, N // 8).astype(float)             # negative base, integer exponent
    return np.concatenate([x1, x2, x3, x4]), np.concatenate([y1, y2, y3, y4])


def _atan2_inputs():
    y1, x1 = logu(5e-324, 1.7e308, N // 2), logu(5e-324, 1.7e308, N // 2)
    r, th = logu(1e-3, 1e3, N // 2, False), rng.uniform(-np.pi, np.pi, N // 2)
    return np.concatenate([y1, r * np.sin(th)]), np.concatenate([x1, r * np.cos(th)])


@pytest.mark.parametrize("name", ["pow", "atan2"])
def test_binary(name):
    a, b = _pow_inputs() if name == "pow" else _atan2_inputs()
    f64, f32 = vecmath.__dict__[name + "_f64"], vecmath.__dict__[name + "_f32"]
    got = run(f64, a, b)
    err = ulp_error(got, reference(name, a, b))
    assert err.max() <= (ULP64 if HAVE_LD else ULP64 + 1), (name, err.max(), a[np.argmax(err)], b[np.argmax(err)])
    with np.errstate(all="ignore"):
        assert ulp_error(got, _np(name)(a, b)).max() <= 3
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ok = np.isfinite(a32) & np.isfinite(b32)
    a32, b32 = a32[ok], b32[ok]
    got = run(f32, a32, b32)
    err = ulp_error(got, reference(name, a32, b32, f32=True))
    assert err.max() <= ULP32, (name, err.max(), a32[np.argmax(err)], b32[np.argmax(err)])
    # every pair of special values, against NumPy (C99 pow / atan2)
    for dt, fn in ((np.float64, f64), (np.float32, f32)):
        x, y = _pairs(dt)
        got = run(fn, x, y)
        with np.errstate(all="ignore"):
            want = _np(name)(x.astype(np.float64), y.astype(np.float64)).astype(dt)
        _check_specials(got, want, (name, dt))
        fin = np.isfinite(want)
        assert ulp_error(got[fin], want[fin].astype(np.float64)).max() <= 2, (name, dt)


def test_pow_cases():
    cases = [(np.nan, 0.0, 1.0), (1.0, np.nan, 1.0), (-1.0, np.inf, 1.0), (-8.0, 1 / 3, np.nan),
             (-2.0, 3.0, -8.0), (-2.0, -3.0, -0.125), (-0.0, -1.0, -np.inf), (-0.0, -2.0, np.inf),
             (-0.0, 3.0, -0.0), (0.0, -0.5, np.inf), (-np.inf, 3.0, -np.inf), (-np.inf, -3.0, -0.0),
             (0.5, np.inf, 0.0), (0.5, -np.inf, np.inf), (2.0, 1024.0, np.inf), (2.0, -1074.0, 5e-324),
             (2.0, -1075.0, 0.0), (10.0, 308.0, 1e308)]
    for dt in (np.float64, np.float32):
        fn = vecmath.pow_f64 if dt is np.float64 else vecmath.pow_f32
        for x, y, want in cases:
            with np.errstate(all="ignore"):
                want = dt(want) if dt is np.float64 else np.float32(np.power(x, y))
            got = run(fn, np.array([x], dt), np.array([y], dt))[0]
            assert (np.isnan(got) and np.isnan(want)) or (
                got == want and np.signbit(got) == np.signbit(want)) or abs(got - want) <= np.spacing(want), \
                (dt, x, y, got, want)


# ---------------------------------------------------------------- trig beyond the bound

def test_trig_full_range():
    """sin_f64 etc. are correct for every x (libm beyond the bound); the
    *_reduced kernels give NaN beyond it, and the guard says where."""
    x = np.concatenate([logu(1e-300, 1.7e308, 20_000), [1e22, -1e300, 1.7e308, np.inf, np.nan]])
    for name in ("sin", "cos", "tan"):
        for dt, bound in ((np.float64, vecmath.TRIG_BOUND_F64), (np.float32, vecmath.TRIG_BOUND_F32)):
            xs = x.astype(dt)
            sfx = "_f64" if dt is np.float64 else "_f32"
            got = run(vecmath.__dict__[name + sfx], xs)
            with np.errstate(all="ignore"):
                want = getattr(np, name)(xs.astype(np.float64))
            assert ulp_error(got, want).max() <= (2 if dt is np.float64 else 1), name
            red = run(vecmath.__dict__[name + sfx + "_reduced"], xs)
            inside = np.abs(xs) <= bound
            assert np.isnan(red[~inside]).all()
            assert ulp_error(red[inside], want[inside]).max() <= 2
            guard = run(vecmath.__dict__["trig_needs_libm" + sfx], xs)
            assert np.array_equal(guard != 0, ~inside & np.isfinite(xs))


@njit(error_model="numpy")
def _sin_with_fixup(x, out):
    """The pattern the module docstring recommends."""
    nbig = 0
    for i in range(x.size):
        v = x[i]
        out[i] = vecmath.sin_f64_reduced(v)
        nbig += vecmath.trig_needs_libm_f64(v)
    if nbig:
        for i in range(x.size):
            if vecmath.trig_needs_libm_f64(x[i]):
                out[i] = math.sin(x[i])


def test_trig_pattern_vectorises():
    x = np.concatenate([rng.uniform(-1e3, 1e3, 1000), [1e10, -3e200]])
    out = np.empty_like(x)
    _sin_with_fixup(x, out)
    assert ulp_error(out, np.sin(x)).max() <= 2
    ir = "".join(_sin_with_fixup.inspect_llvm().values())
    assert vector_bits(ir) >= 256


def vector_bits(ir: str) -> int:
    """The widest float vector in LLVM IR, in bits (LLVM picks 256 or 512 by
    host: AVX2, or AVX-512 with its preferred width)."""
    sizes = {"float": 32, "double": 64}
    return max((int(n) * sizes[t] for n, t in re.findall(r"<(\d+) x (float|double)>", ir)),
               default=0)


# ---------------------------------------------------------------- vectorisation

LIBM = ("@exp", "@log", "@sin", "@cos", "@tan", "@pow", "@atan", "@erf", "@cbrt", "@expm1", "@log1p",
        "@llvm.exp", "@llvm.log", "@llvm.sin", "@llvm.cos", "@llvm.tan", "@llvm.pow", "@llvm.atan")


@pytest.mark.parametrize("name", UNARY + ["pow", "atan2"])
def test_loops_vectorise(name):
    """A loop calling the function has vector code and no libm call; f32 in
    vectors of 256 bits at least (<8 x float>, <4 x double>: AVX2's width)."""
    if name in ("pow", "atan2"):
        f64, f32, nargs = vecmath.__dict__[name + "_f64"], vecmath.__dict__[name + "_f32"], 2
    else:
        (f64, f32), nargs = KERNELS[name], 1
    for fn, dt in ((f64, np.float64), (f32, np.float32)):
        x = np.ones(64, dt)
        run(fn, *([x] * nargs))
        ir = "".join(loop(fn, nargs).inspect_llvm().values())
        assert vector_bits(ir) >= 256, (name, dt)
        calls = [c for c in LIBM if c + "(" in ir or c + "." in ir]
        assert not calls, (name, dt, calls)
