"""Special functions built from the op set, as XLA's client library builds
them (``xla/hlo/builder/lib/math.cc``) and JAX's ``lax`` exposes them:
compositions of element-wise ops, so they run eagerly, compile, and
differentiate through the ops they are made of.

``erf_inv``: for f32 (and the 16-bit floats, computed in f32) Giles'
single-precision approximation ("Approximating the erfinv function", 2010)
in XLA's form, so JAX's ``random.normal`` bits are reproduced; for f64 that
estimate refined by Newton steps on ``erf`` (on ``log(erfc)`` in the tails).

``erfc``, ``lgamma``, ``digamma``, ``polygamma``, ``zeta``, ``igamma``,
``igammac``, ``igamma_grad_a``, ``random_gamma_grad``, ``betainc`` and
``bessel_i0e``/``bessel_i1e``:
XLA's algorithms (Cephes' fits, Lanczos' approximation, the series and
continued fractions of ``igamma``/``betainc`` as ``while_loop`` s), with JAX's
derivatives as ``custom_jvp`` rules where differentiating the composition
would be inaccurate or would go through a loop.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer.config import config
from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .control_flow import scan, while_loop
from .elementwise import (abs, and_, clamp, convert_element_type, cos, eq, erf, exp, floor, ge,
                          gt, is_finite, le, log, log1p, lt, ne, not_, or_, pow, promote, rem,
                          select, sign, sin, sqrt)
from .reductions import reduce_or
from .shape_ops import broadcast_in_dim

__all__ = ["erf_inv", "erfc", "lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac",
           "igamma_grad_a", "random_gamma_grad", "betainc", "regularized_incomplete_beta",
           "bessel_i0e", "bessel_i1e"]

# Giles' coefficients, highest degree first: w = -log(1 - x^2) below 5
# (shifted by 2.5) and sqrt(w) at or above 5 (shifted by 3)
_ERF_INV_SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                    0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


_NEWTON_STEPS = 6  # from the f32 estimate: quadratic steps, the tail's in log(erfc)


def _horner(coefficients: tuple[float, ...], w: Any) -> Any:
    aval = abstractify(w)
    p = broadcast_in_dim(np.asarray(coefficients[0], aval.dtype), aval.dimensions, ())
    for c in coefficients[1:]:
        p = c + p * w
    return p


def _signed_inf(x: Any) -> Any:
    """inf with the sign of x (``x * inf`` would be NaN, and warn, at 0)."""
    inf = x * 0.0 + np.inf
    return select(lt(x, 0.0), -inf, inf)


def _erf_inv_f32(x: Any) -> Any:
    w = -log1p(-x * x)
    small = lt(w, 5.0)
    p = select(small, _horner(_ERF_INV_SMALL_W, w - 2.5),
               _horner(_ERF_INV_LARGE_W, sqrt(w) - 3.0))
    # erf_inv(+-1) = +-inf, where the polynomial is indeterminate
    return select(eq(abs(x), 1.0), _signed_inf(x), p * x)


def erf_inv(x: Any) -> Any:
    """The inverse error function: ``erf(erf_inv(x)) == x`` on (-1, 1),
    +-inf at +-1, NaN beyond."""
    t = abstractify(x).element_type
    if t in (PT.F16, PT.BF16):
        return convert_element_type(_erf_inv_f32(convert_element_type(x, PT.F32)), t)
    if t is not PT.F64:
        return _erf_inv_f32(x)
    # f64: the f32 estimate, then Newton steps on |x| = erf(y).  Where |x| > 1/2
    # they solve log(erfc(y)) = log(1 - |x|) instead (1 - |x| is exact there):
    # erf(y) - |x| would cancel to nothing near 1, and log(erfc) is almost
    # -y^2: from f32's last estimate (3.7, |x| = 1 - 2^-24) the steps reach the
    # largest root (8.1, 1 - |x| = 2^-53) in a few quadratic steps.
    a = abs(x)
    limit = 1.0 - 2.0 ** -23
    y = convert_element_type(_erf_inv_f32(convert_element_type(clamp(0.0, a, limit), PT.F32)),
                             PT.F64)
    tail = gt(a, 0.5)
    log_r = log(select(tail, 1.0 - clamp(0.0, a, 1.0 - 2.0 ** -53), a * 0.0 + 0.5))  # finite at 1
    half_sqrt_pi = np.sqrt(np.pi) / 2
    for _ in range(_NEWTON_STEPS):
        e = erfc(y)
        step_tail = (log(e) - log_r) * e * half_sqrt_pi * exp(y * y)
        step_body = (erf(y) - a) * half_sqrt_pi * exp(y * y)
        y = y + select(tail, step_tail, -step_body)
    y = select(lt(x, 0.0), -y, y)
    y = select(eq(a, 1.0), _signed_inf(x), y)
    return select(gt(a, 1.0), x * 0.0 + np.nan, y)


# ==========================================================================
# erfc, lgamma, digamma, polygamma, zeta, igamma, betainc, Bessel i0e/i1e
# ==========================================================================
# XLA's client-library algorithms (``math.cc``; JAX's ``lax/special.py`` for
# igamma and betainc), composed from element-wise ops.  f16/bf16 compute in
# f32.  Where differentiating the composition would be inaccurate (polynomial
# fits, loops) the function carries JAX's derivative as a ``custom_jvp`` rule.


def _float_args(name: str, *args: Any) -> tuple[list[Any], Any]:
    """The arguments as arrays of one float type and one shape (f16/bf16 as
    f32), and that common type (``None`` when no conversion back is needed)."""
    args = promote(*args)
    t = abstractify(args[0]).element_type
    if not (t.is_floating or t is PT.PRED or t.is_integral):
        raise TypeError(f"{name} takes real floating-point arguments, got {t.name.lower()}")
    if not t.is_floating:
        t = PT.F64 if config.jax_enable_x64 else PT.F32
        args = [convert_element_type(a, t) for a in args]
    back = t if t in (PT.F16, PT.BF16) else None
    if back is not None:
        args = [convert_element_type(a, PT.F32) for a in args]
    if len(args) > 1:
        from .numpy import broadcast_shapes, broadcast_to
        shape = broadcast_shapes(*(abstractify(a).dimensions for a in args))
        args = [broadcast_to(a, shape) for a in args]
    return args, back


def _elementwise(name: str, *, jvp: Any = None) -> Any:
    """Decorator: ``impl(*float_args)`` as the public function ``name``:
    arguments promoted and broadcast, f16/bf16 computed in f32, NumPy's
    warnings off while it runs eagerly, and ``jvp(primals, tangents)`` (if
    given) as its derivative: autodiff's ``custom_jvp``, made on first call
    because autodiff imports this package."""
    def wrap(impl: Any) -> Any:
        def run(*args: Any) -> Any:
            args, back = _float_args(name, *args)
            with np.errstate(all="ignore"):
                out = impl(*args)
            return out if back is None else convert_element_type(out, back)

        custom: list[Any] = []

        def public(*args: Any) -> Any:
            if jvp is None:
                return run(*args)
            if not custom:
                from numxla.autodiff.custom import custom_jvp
                custom.append(custom_jvp(run))
                custom[0].defjvp(jvp)
            return custom[0](*args)
        public.__name__ = public.__qualname__ = name
        public.__doc__ = impl.__doc__
        return public
    return wrap


def _is_nan(x: Any) -> Any:
    return ne(x, x)


def _any(pred: Any) -> Any:
    return reduce_or(pred, tuple(range(abstractify(pred).ndim)))


def _eps(x: Any) -> float:
    return float(np.finfo(abstractify(x).dtype).eps)


def _full_like(x: Any, value: float) -> Any:
    return broadcast_in_dim(np.asarray(value, abstractify(x).dtype), abstractify(x).dimensions, ())


# --------------------------------------------------------------------------
# erfc (Cephes' rational fits beyond |x| = 1, 1 - erf inside)
# --------------------------------------------------------------------------

_ERFC_F64_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
               4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
               9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_F64_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
               9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
               1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC_F64_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
               6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_F64_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
               1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
# f32, in 1/x^2: below |x| = 2 and from there on
_ERFC_F32_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
               -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
               3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1)
_ERFC_F32_R = (-1.047766399936249e1, 1.297719955372516e1, -7.495518717768503e0,
               2.921019019210786e0, -1.015265279202700e0, 4.218463358204948e-1,
               -2.820767439740514e-1, 5.641895067754075e-1)


_MAX_LOG = {PT.F64: 7.09782712893383996843e2, PT.F32: 88.72283905206835}


def _erfc_tail(x: Any) -> Any:
    """erfc for |x| > 1 (XLA's ErfcImpl32/ErfcImpl64)."""
    ax = abs(x)
    z = exp(-x * x)
    if abstractify(x).element_type is PT.F64:
        y = z * select(lt(ax, 8.0), _horner(_ERFC_F64_P, ax) / _horner(_ERFC_F64_Q, ax),
                       _horner(_ERFC_F64_R, ax) / _horner(_ERFC_F64_S, ax))
    else:
        q = 1.0 / ax
        y = z * q * select(lt(ax, 2.0), _horner(_ERFC_F32_P, q * q), _horner(_ERFC_F32_R, q * q))
    y = select(lt(x * x, _MAX_LOG[abstractify(x).element_type]), y, _full_like(x, 0.0))
    return select(lt(x, 0.0), 2.0 - y, y)


def _erfc_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return erfc(x), t * (-2.0 / np.sqrt(np.pi)) * exp(-x * x)


@_elementwise("erfc", jvp=_erfc_jvp)
def erfc(x: Any) -> Any:
    """The complementary error function ``1 - erf(x)``, accurate in the tail."""
    return select(gt(abs(x), 1.0), _erfc_tail(x), 1.0 - erf(x))


# --------------------------------------------------------------------------
# lgamma and digamma: Lanczos' approximation (g = 7, 9 terms) as XLA's
# --------------------------------------------------------------------------

_LANCZOS_G = 7.0
_LOG_G_HALF = float(np.log(_LANCZOS_G + 0.5))
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lanczos_z(x: Any) -> tuple[Any, Any]:
    """Reflect below 1/2 (``z = -x``), else shift (``z = x - 1``)."""
    reflect = lt(x, 0.5)
    return reflect, select(reflect, -x, x - 1.0)


def _log_t(z: Any) -> tuple[Any, Any]:
    t = (_LANCZOS_G + 0.5) + z
    return t, _LOG_G_HALF + log1p(z / (_LANCZOS_G + 0.5))


def _lgamma_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return lgamma(x), t * digamma(x)


@_elementwise("lgamma", jvp=_lgamma_jvp)
def lgamma(x: Any) -> Any:
    """``log|Gamma(x)|``; +inf at the poles (0, -1, -2...) and at +-inf."""
    reflect, z = _lanczos_z(x)
    series = _LANCZOS_BASE
    for i, c in enumerate(_LANCZOS):
        series = series + c / (z + float(i + 1))
    t, log_t = _log_t(z)
    log_y = float(0.5 * np.log(2 * np.pi)) + (z + 0.5 - t / log_t) * log_t + log(series)
    # reflection: log(pi) - lgamma(1 - x) - log|sin(pi x)|, with sin of the
    # fractional part folded into [0, 1/2] for precision
    ax = abs(x)
    frac = ax - floor(ax)
    frac = select(gt(frac, 0.5), 1.0 - frac, frac)
    denom = log(sin(np.pi * frac))
    reflection = select(is_finite(denom), float(np.log(np.pi)) - denom - log_y, -denom)
    out = select(reflect, reflection, log_y)
    return select(eq(ax, np.inf), ax, out)


def _digamma_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return digamma(x), t * polygamma(1.0, x)


@_elementwise("digamma", jvp=_digamma_jvp)
def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma; NaN at the poles (0, -1, -2...)."""
    reflect, z = _lanczos_z(x)
    num, denom = 0.0, _LANCZOS_BASE
    for i, c in enumerate(_LANCZOS):
        zi = z + float(i + 1)
        num = num - c / (zi * zi)
        denom = denom + c / zi
    t, log_t = _log_t(z)
    y = log_t + num / denom - _LANCZOS_G / t
    # reflection: digamma(1 - x) - pi cot(pi x), x moved into [-1/2, 1/2]
    reduced = x + abs(floor(x + 0.5))
    reflection = y - np.pi * cos(np.pi * reduced) / sin(np.pi * reduced)
    out = select(reflect, reflection, y)
    return select(and_(le(x, 0.0), eq(x, floor(x))), _full_like(x, np.nan), out)


# --------------------------------------------------------------------------
# Hurwitz zeta and polygamma
# --------------------------------------------------------------------------

def _zeta_coefficients() -> tuple[float, ...]:
    """``B_2k / (2k)!`` for k = 1..12 (Bernoulli numbers, exact until rounded)."""
    from fractions import Fraction
    from math import comb, factorial
    b = [Fraction(1)]
    for m in range(1, 25):
        b.append(-sum(comb(m + 1, j) * b[j] for j in range(m)) / (m + 1))
    return tuple(float(b[2 * k] / factorial(2 * k)) for k in range(1, 13))


_ZETA_B = _zeta_coefficients()


@_elementwise("zeta")
def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function ``sum_n (n + q)^-x`` (x > 1): ten terms, then
    the Euler-Maclaurin tail with 12 Bernoulli terms (XLA's ``Zeta``)."""
    initial = pow(q, -x)
    a = q
    for _ in range(9):
        a = a + 1.0
        initial = initial + pow(a, -x)
    a = a + 1.0
    neg_power = pow(a, -x)
    s = initial + neg_power * a / (x - 1.0)
    inv_a2 = 1.0 / (a * a)
    tail = 0.0  # Horner over k = 12..2 of B_2k/(2k)! (x)_(2k-1) / a^(2k-1)
    for k in range(12, 1, -1):
        tail = (x + float(2 * k - 3)) * (x + float(2 * k - 2)) * inv_a2 * (tail + _ZETA_B[k - 1])
    s = s + neg_power * (0.5 + x / a * (_ZETA_B[0] + tail))
    out = select(lt(abs(neg_power), abs(initial) * _eps(x)), initial, s)
    nan, inf = _full_like(x, np.nan), _full_like(x, np.inf)
    out = select(lt(x, 1.0), nan, out)
    out = select(and_(le(q, 0.0), ne(x, floor(x))), nan, out)
    at_pole = and_(le(q, 0.0), eq(q, floor(q)))
    even = and_(eq(rem(x, 2.0), 0.0), eq(x, floor(x)))
    return select(at_pole, select(even, inf, nan), out)


def _polygamma_jvp(primals: Any, tangents: Any) -> Any:
    (m, x), (_, t) = primals, tangents
    return polygamma(m, x), t * polygamma(m + 1.0, x)


@_elementwise("polygamma", jvp=_polygamma_jvp)
def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of digamma (m a natural number, as a float):
    ``(-1)^(m+1) m! zeta(m + 1, x)``.  No derivative in ``m`` (zero)."""
    sign = 2.0 * rem(m, 2.0) - 1.0
    out = select(eq(m, 0.0), digamma(x), sign * exp(lgamma(m + 1.0)) * zeta(m + 1.0, x))
    return select(or_(ne(m, floor(m)), lt(m, 0.0)), _full_like(x, np.nan), out)


# --------------------------------------------------------------------------
# regularized incomplete gamma: series below, continued fraction above
# (JAX's port of XLA's Igamma).  ``mode``: "value"; "derivative", d/da of
# the value; "sample", the derivative of a Gamma(a, 1) sample x in a.
# --------------------------------------------------------------------------

def _where_enabled(enabled: Any, new: tuple, old: tuple) -> tuple:
    return tuple(select(enabled, n, o) for n, o in zip(new, old))


def _igamma_series(ax: Any, x: Any, a: Any, enabled: Any, mode: str) -> Any:
    eps = _eps(x)

    def body(vals: tuple) -> tuple:
        enabled, r, c, ans, dc_da, dans_da = vals
        r = r + 1.0
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        test = c / ans if mode == "value" else abs(dc_da / dans_da)
        return (and_(enabled, gt(test, eps)),
                *_where_enabled(enabled, (r, c, ans, dc_da, dans_da), vals[1:]))

    one, zero = _full_like(a, 1.0), _full_like(a, 0.0)
    _, _, _, ans, _, dans_da = while_loop(lambda v: _any(v[0]), body,
                                          (enabled, a, one, one, zero, zero))
    if mode == "value":
        return ans * ax / a
    dlogax_da = log(x) - digamma(a + 1.0)
    if mode == "derivative":
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, mode: str) -> Any:
    eps = _eps(x)

    def cond(vals: tuple) -> Any:
        return and_(lt(vals[5], 2000.0), _any(vals[0]))

    def body(vals: tuple) -> tuple:
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = c + 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nonzero = ne(qk, 0.0)
        r = pk / qk
        t = select(nonzero, abs((ans - r) / r), _full_like(r, 1.0))
        ans = select(nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = select(nonzero, (dpk_da - ans * dqk_da) / qk, dans_da)
        grad_test = select(nonzero, abs(dans_da_new - dans_da), _full_like(dans_da, 1.0))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = gt(abs(pk), 1.0 / eps)
        scaled = [select(rescale, v * eps, v) for v in
                  (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da)]
        going = and_(enabled, gt(t if mode == "value" else grad_test, eps))
        new = (ans, t, y, z)
        return (going, *_where_enabled(enabled, new, vals[1:5]), c,
                *_where_enabled(enabled, (*scaled, dans_da_new), vals[6:]))

    y = 1.0 - a
    z = x + y + 1.0
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    zero = _full_like(x, 0.0)
    init = (enabled, ans, _full_like(x, 1.0), y, z, np.asarray(0.0, abstractify(x).dtype),
            pkm1, qkm1, _full_like(x, 1.0), x, zero, zero, zero, -x, (0.0 - ans * -x) / qkm1)
    vals = while_loop(cond, body, init)
    ans, dans_da = vals[1], vals[14]
    if mode == "value":
        return ans * ax
    dlogax_da = log(x) - digamma(a)
    if mode == "derivative":
        return ax * (ans * dlogax_da + dans_da)
    return -(dans_da + ans * dlogax_da) * x


def _igamma_setup(a: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """``exp(a log x - x - lgamma(a))``, whether it underflows, NaN inputs."""
    log_ax = a * log(x) - x - lgamma(a)
    underflow = lt(log_ax, -float(np.log(np.finfo(abstractify(x).dtype).max)))
    return exp(log_ax), underflow, or_(_is_nan(a), _is_nan(x)), eq(x, 0.0)


def _igamma_jvp(primals: Any, tangents: Any) -> Any:
    (a, x), (ta, tx) = primals, tangents
    return igamma(a, x), ta * igamma_grad_a(a, x) + tx * _igamma_dx(a, x)


def _igamma_dx(a: Any, x: Any) -> Any:
    return exp(-x + (a - 1.0) * log(x) - lgamma(a))


@_elementwise("igamma", jvp=_igamma_jvp)
def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    ax, underflow, nan_in, x_zero = _igamma_setup(a, x)
    x_inf = eq(x, np.inf)
    domain = or_(or_(lt(x, 0.0), lt(a, 0.0)), or_(and_(eq(a, 0.0), x_zero), nan_in))
    use_cf = and_(ge(x, 1.0), gt(x, a))
    enabled = not_(or_(or_(x_zero, domain), or_(underflow, x_inf)))
    out = select(use_cf,
                 1.0 - _igammac_continued_fraction(ax, x, a, and_(enabled, use_cf), "value"),
                 _igamma_series(ax, x, a, and_(enabled, not_(use_cf)), "value"))
    out = select(x_zero, _full_like(a, 0.0), out)
    out = select(x_inf, _full_like(a, 1.0), out)
    return select(domain, _full_like(a, np.nan), out)


def _igammac_jvp(primals: Any, tangents: Any) -> Any:
    (a, x), (ta, tx) = primals, tangents
    return igammac(a, x), -(ta * igamma_grad_a(a, x) + tx * _igamma_dx(a, x))


@_elementwise("igammac", jvp=_igammac_jvp)
def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    ax, underflow, nan_in, x_zero = _igamma_setup(a, x)
    a_zero, x_inf = eq(a, 0.0), eq(x, np.inf)
    domain = or_(or_(lt(x, 0.0), lt(a, 0.0)), or_(and_(a_zero, x_zero), nan_in))
    use_series = or_(lt(x, 1.0), lt(x, a))
    enabled = not_(or_(or_(domain, underflow), or_(x_inf, a_zero)))
    out = select(use_series,
                 1.0 - _igamma_series(ax, x, a, and_(enabled, use_series), "value"),
                 _igammac_continued_fraction(ax, x, a, and_(enabled, not_(use_series)),
                                             "value"))
    out = select(or_(x_inf, a_zero), _full_like(a, 0.0), out)
    return select(domain, _full_like(a, np.nan), out)


def _igamma_derivative(a: Any, x: Any, mode: str) -> Any:
    """The series' or continued fraction's own derivative in ``a``."""
    ax, underflow, nan_in, x_zero = _igamma_setup(a, x)
    domain = or_(lt(x, 0.0), le(a, 0.0))
    use_cf = and_(gt(x, 1.0), gt(x, a))
    enabled = not_(or_(or_(x_zero, domain), or_(underflow, nan_in)))
    out = select(use_cf, -_igammac_continued_fraction(ax, x, a, and_(enabled, use_cf), mode),
                 _igamma_series(ax, x, a, and_(enabled, not_(use_cf)), mode))
    out = select(x_zero, _full_like(a, 0.0), out)
    return select(or_(domain, nan_in), _full_like(a, np.nan), out)


@_elementwise("igamma_grad_a")
def igamma_grad_a(a: Any, x: Any) -> Any:
    """``d/da igamma(a, x)``."""
    return _igamma_derivative(a, x, "derivative")


@_elementwise("random_gamma_grad")
def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative in ``a`` of a Gamma(a, 1) sample ``x`` (implicit
    reparameterization: ``-(d igamma / da) / (d igamma / dx)``)."""
    return _igamma_derivative(a, x, "sample")


# --------------------------------------------------------------------------
# regularized incomplete beta: Lentz's continued fraction (DLMF 8.17.22)
# --------------------------------------------------------------------------

def _betainc_jvp(primals: Any, tangents: Any) -> Any:
    (a, b, x), (_, _, tx) = primals, tangents
    lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
    return betainc(a, b, x), tx * exp((b - 1.0) * log1p(-x) + (a - 1.0) * log(x) - lbeta)


@_elementwise("betainc", jvp=_betainc_jvp)
def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)``.  Differentiable
    in ``x`` only (JAX defines no derivative in ``a`` and ``b``: zero here)."""
    dtype = abstractify(x).dtype
    a_zero = or_(eq(a, 0.0), eq(b, np.inf))
    b_zero = or_(eq(b, 0.0), eq(a, np.inf))
    x_zero, x_one = eq(x, 0.0), eq(x, 1.0)
    is_nan = or_(or_(_is_nan(a), _is_nan(b)), _is_nan(x))
    zero_out = or_(and_(b_zero, not_(x_one)), and_(a_zero, x_zero))
    one_out = or_(and_(a_zero, not_(x_zero)), and_(b_zero, x_one))
    nan_out = or_(or_(or_(lt(a, 0.0), lt(b, 0.0)), or_(lt(x, 0.0), gt(x, 1.0))),
                  or_(and_(a_zero, b_zero), is_nan))
    # the fraction converges fast for x < (a + 1) / (a + b + 2); else I_x(a, b) = 1 - I_(1-x)(b, a)
    fast = lt(x, (a + 1.0) / (a + b + 2.0))
    a, b, x = select(fast, a, b), select(fast, b, a), select(fast, x, 1.0 - x)

    def numerator(it: Any) -> Any:
        """DLMF 8.17.23's d_n; 1 for n = 1."""
        m = floor((it - 1.0) * 0.5)
        even = (-(a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        even = select(eq(m, 0.0), -(a + b) * x / (a + 1.0), even)
        odd = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        d = select(eq(rem(it, 2.0), 0.0), even, odd)
        return select(eq(it, 1.0), _full_like(x, 1.0), d)

    small = float(np.finfo(dtype).eps / 2)
    iterations = 200.0 if dtype == np.float32 else 600.0

    def body(vals: tuple) -> tuple:
        it, _, c, d, h = vals
        num = numerator(broadcast_in_dim(it, abstractify(x).dimensions, ()))
        c = 1.0 + num / c
        c = select(lt(abs(c), small), _full_like(c, small), c)
        d = 1.0 + num * d
        d = 1.0 / select(lt(abs(d), small), _full_like(d, small), d)
        delta = c * d
        return it + 1.0, _any(gt(abs(delta - 1.0), small)), c, d, h * delta

    def cond(vals: tuple) -> Any:
        return and_(lt(vals[0], iterations), vals[1])

    h0 = _full_like(x, small)  # the 0th partial denominator is 0
    one = np.asarray(1.0, dtype)
    fraction = while_loop(cond, body, (one, np.asarray(True), h0, _full_like(x, 0.0), h0))[4]
    lbeta_small_a = lgamma(b) - lgamma(a + b)
    lbeta = lgamma(a) + lbeta_small_a
    factor = select(lt(a, float(np.finfo(dtype).tiny * 2)), exp(log1p(-x) * b - lbeta_small_a),
                    exp(log(x) * a + log1p(-x) * b - lbeta) / a)
    out = fraction * factor
    out = select(fast, out, 1.0 - out)
    out = select(zero_out, _full_like(x, 0.0), out)
    out = select(one_out, _full_like(x, 1.0), out)
    return select(nan_out, _full_like(x, np.nan), out)


regularized_incomplete_beta = betainc


# --------------------------------------------------------------------------
# exponentially scaled modified Bessel functions i0e, i1e (Cephes' Chebyshev
# series on [0, 8] and (8, inf); f32 uses the last terms only)
# --------------------------------------------------------------------------

_I0E_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
          1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
          -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
          9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
          -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
          1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
          -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
          1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
          -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
          1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0E_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
          3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
          1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
          -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
          7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
          -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
          3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
          2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
          8.04490411014108831608e-1)
_I1E_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
          -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
          3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
          -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
          9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
          -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
          4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
          -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
          2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
          -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1E_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
          -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
          -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
          4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
          -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
          3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
          -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
          -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
          7.78576235018280120474e-1)
# the trailing terms f32 keeps of each series (XLA's and Cephes' f32 versions)
_BESSEL_F32_TERMS = {"i0e": (18, 7), "i1e": (17, 7)}


def _chebyshev(x: Any, coefficients: tuple[float, ...]) -> Any:
    """Cephes' ``chbevl``: a Chebyshev series, highest degree first, by
    Clenshaw's recurrence, as a ``scan`` over the coefficients (unrolled,
    each step's ``b`` feeds two later ones)."""
    dtype = abstractify(x).dtype
    b0 = _full_like(x, coefficients[0])
    zero = _full_like(x, 0.0)

    def step(carry: tuple, c: Any) -> tuple:
        b0, b1, _ = carry
        return (x * b0 - b1 + c, b0, b1), None

    (b0, _, b2), _ = scan(step, (b0, zero, zero), np.asarray(coefficients[1:], dtype))
    return 0.5 * (b0 - b2)


def _bessel_series(x: Any, small: tuple, large: tuple, name: str) -> tuple[Any, Any, Any]:
    """|x| and the series on [0, 8] (in x/2 - 2) and beyond (in 32/x - 2, over sqrt(x))."""
    if abstractify(x).element_type is not PT.F64:
        n_small, n_large = _BESSEL_F32_TERMS[name]
        small, large = small[-n_small:], large[-n_large:]
    ax = abs(x)
    return ax, _chebyshev(ax * 0.5 - 2.0, small), _chebyshev(32.0 / ax - 2.0, large) / sqrt(ax)


def _i0e_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    y = bessel_i0e(x)
    return y, t * (bessel_i1e(x) - sign(x) * y)


@_elementwise("bessel_i0e", jvp=_i0e_jvp)
def bessel_i0e(x: Any) -> Any:
    """``exp(-|x|) I0(x)``."""
    ax, low, high = _bessel_series(x, _I0E_A, _I0E_B, "i0e")
    return select(le(ax, 8.0), low, high)


def _i1e_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    y = bessel_i1e(x)
    eps = _eps(x)
    not_tiny = gt(abs(x), eps)
    safe = select(not_tiny, x, _full_like(x, eps))
    dy = bessel_i0e(safe) - y * (sign(safe) + 1.0 / safe)
    return y, t * select(not_tiny, dy, _full_like(x, 0.5))


@_elementwise("bessel_i1e", jvp=_i1e_jvp)
def bessel_i1e(x: Any) -> Any:
    """``exp(-|x|) I1(x)``."""
    ax, low, high = _bessel_series(x, _I1E_A, _I1E_B, "i1e")
    return select(le(ax, 8.0), low * x, select(lt(x, 0.0), -high, high))
