"""Lowerings of BatchNormTraining, BatchNormInference and BatchNormGrad.

The reference's formulas, term by term in the compute type (f32 for f16,
bf16 and f32; f64 for f64), so each element is rounded as the reference
rounds it.  Per-feature sums are accumulated in f64 (the reference's NumPy
sums are pairwise or naive f32 sums, whichever the layout gives; f64 stays
within their rounding).  Where the operand, its results (and ``dy``) share one dense layout, the
type is f32 or f64 and the operand small (``LIBRARY_MAX_ELEMENTS``), a
program calls :mod:`compile.kernels.norm`
instead (:data:`~compile.registry.library_rules`), which computes the same
terms in the same order with the geometry passed at run time.  Elsewhere
each pass walks the operand in its physical order
through ``ctx.read``, indexing the per-feature accumulators by the
``feature_index`` coordinate, so any layout and any feature dimension work.

* training: f32 and 16-bit floats: pass 1 sums ``d = x - x0`` and ``d^2``
  (``x0`` a per-feature shift, see :func:`_shifted_moments`); f64: pass 1
  sums ``x`` (mean), pass 2 sums ``(x - mean)^2`` (biased variance); the last
  pass writes ``scale * (x - mean) / sqrt(var + eps) + offset``.
* inference: one pass with the given mean and variance.
* grad: pass 1 sums ``dy``, ``dy * (x - mean)`` and ``dy * (x - mean) /
  sqrt(var + eps)``; pass 2 writes ``scale / sqrt(var + eps) * (dy - d - c *
  (x - mean))`` with ``d = sum(dy) / N`` and ``c = sum(dy * (x - mean)) / N
  / (var + eps)``.
"""
from __future__ import annotations

import math

from numxla.primitives import batch_norm
from numxla.tracer.graph import Equation, Var
from numxla.tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, literal_text
from ..kernels import norm
from ..layout_index import dense_strides, loop_order
from ..registry import LIBRARY_MAX_ELEMENTS, LibraryCall, library_rules, lowerings

__all__: list[str] = []


def _work(t: PrimitiveType) -> str:
    return "np.float64" if t is PrimitiveType.F64 else "np.float32"


def _const(value: float, t: PrimitiveType) -> str:
    """A constant in the compute type of ``t``."""
    return literal_text(value, PrimitiveType.F64 if t is PrimitiveType.F64 else PrimitiveType.F32)


def _per_feature(ctx: LoweringContext, atom, features: int, work: str, prefix: str) -> str:
    """A work-type array of a per-feature operand (read through its layout)."""
    name, f = ctx.fresh(prefix), ctx.fresh("f")
    ctx.emit(f"{name} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{name}[{f}] = {work}({ctx.read(atom, [f])})")
    return name


def _store_per_feature(ctx: LoweringContext, var, values: str, features: int, work: str) -> None:
    ctx.alloc(var)
    f = ctx.fresh("f")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.write(var, [f], f"{work}({values}[{f}])")


def _zeros(ctx: LoweringContext, features: int, prefix: str) -> str:
    name = ctx.fresh(prefix)
    ctx.emit(f"{name} = zeros_buf({features}, np.float64)")
    return name


def _lower_training(ctx: LoweringContext, eq: Equation) -> None:
    x, scale, offset = eq.inputs
    y, mean_out, var_out = eq.outputs
    fi, eps = eq.params["feature_index"], eq.params["epsilon"]
    t = x.aval.element_type
    work = _work(t)
    dims = x.aval.dimensions
    features = dims[fi]
    count = math.prod(d for i, d in enumerate(dims) if i != fi)
    mean, var, sd = ctx.fresh("bmean"), ctx.fresh("bvar"), ctx.fresh("bsd")
    if t is PrimitiveType.F64:
        _two_pass_moments(ctx, x, fi, features, count, work, mean, var)
    else:
        _shifted_moments(ctx, x, fi, features, count, work, mean, var)
    f = ctx.fresh("f")
    ctx.emit(f"{sd} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{sd}[{f}] = np.sqrt({var}[{f}] + {_const(eps, x.aval.element_type)})")
    _normalize(ctx, x, y, fi, _per_feature(ctx, scale, features, work, "bscale"),
               _per_feature(ctx, offset, features, work, "boff"), mean, sd, work)
    _store_per_feature(ctx, mean_out, mean, features, work)
    _store_per_feature(ctx, var_out, var, features, work)


def _two_pass_moments(ctx: LoweringContext, x, fi: int, features: int, count: int, work: str,
                      mean: str, var: str) -> None:
    """f64: sum ``x`` (mean), then sum ``(x - mean)^2`` (biased variance)."""
    t = x.aval.element_type
    s1, s2 = _zeros(ctx, features, "bsum"), _zeros(ctx, features, "bsq")
    with ctx.loops(x.aval.shape) as idx:
        ctx.emit(f"{s1}[{idx[fi]}] += {ctx.read(x, idx)}")
    f = ctx.fresh("f")
    n = _const(count, t)
    ctx.emit(f"{mean} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{mean}[{f}] = {work}({s1}[{f}]) / {n}")
    with ctx.loops(x.aval.shape) as idx:
        d = ctx.fresh("dev")
        ctx.emit(f"{d} = {work}({ctx.read(x, idx)}) - {mean}[{idx[fi]}]")
        ctx.emit(f"{s2}[{idx[fi]}] += {d} * {d}")
    ctx.emit(f"{var} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{var}[{f}] = {work}({s2}[{f}]) / {n}")


def _shifted_moments(ctx: LoweringContext, x, fi: int, features: int, count: int, work: str,
                     mean: str, var: str) -> None:
    """f32 and 16-bit floats: one pass summing ``d = x - x0`` and ``d^2`` in f64
    (``x0``: the feature's first element, 0 if not finite), so the variance
    ``sum(d^2)/N - mean(d)^2`` cancels at most a factor N (``(x0 - mean)^2 <=
    N var``): exact to ~N f64 ulps, far inside f32 rounding.  The reference's
    variance is taken about the *rounded* mean ``m``: ``(mean - m)^2`` is added.
    Loads stay in the physical order, the f64 arithmetic vectorises."""
    shift, s1, s2 = ctx.fresh("bx0"), _zeros(ctx, features, "bsum"), _zeros(ctx, features, "bsq")
    f = ctx.fresh("f")
    ctx.emit(f"{shift} = zeros_buf({features}, np.float64)")
    if count:
        first = ["0"] * x.aval.ndim
        first[fi] = f
        with ctx.block(f"for {f} in range({features}):"):
            v = ctx.fresh("x0")
            ctx.emit(f"{v} = np.float64({ctx.read(x, first)})")
            with ctx.block(f"if np.isfinite({v}):"):
                ctx.emit(f"{shift}[{f}] = {v}")
    with ctx.loops(x.aval.shape) as idx:
        d, k = ctx.fresh("dev"), idx[fi]
        ctx.emit(f"{d} = np.float64({ctx.read(x, idx)}) - {shift}[{k}]")
        ctx.emit(f"{s1}[{k}] += {d}")
        ctx.emit(f"{s2}[{k}] += {d} * {d}")
    n = literal_text(count, PrimitiveType.F64)
    dm, m64, v64, bias = (ctx.fresh(p) for p in ("dm", "m64", "v64", "bias"))
    ctx.emit(f"{mean} = empty_buf({features}, {work})")
    ctx.emit(f"{var} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{dm} = {s1}[{f}] / {n}")
        ctx.emit(f"{m64} = {shift}[{f}] + {dm}")
        ctx.emit(f"{mean}[{f}] = {work}({m64})")
        ctx.emit(f"{v64} = {s2}[{f}] / {n} - {dm} * {dm}")
        with ctx.block(f"if {v64} < 0.0:"):  # rounding; NaN passes through
            ctx.emit(f"{v64} = 0.0")
        ctx.emit(f"{bias} = {m64} - np.float64({mean}[{f}])")
        ctx.emit(f"{var}[{f}] = {work}({v64} + {bias} * {bias})")


def _normalize(ctx: LoweringContext, x, y, fi: int, scale: str, offset: str, mean: str, sd: str,
               work: str) -> None:
    """``y = scale * (x - mean) / sd + offset``, in the reference's order of operations."""
    ctx.alloc(y)
    with ctx.loops(y.aval.shape) as idx:
        f = idx[fi]
        ctx.write(y, idx, f"{scale}[{f}] * ({work}({ctx.read(x, idx)}) - {mean}[{f}]) / {sd}[{f}]"
                          f" + {offset}[{f}]")


def _lower_inference(ctx: LoweringContext, eq: Equation) -> None:
    x, scale, offset, mean, variance = eq.inputs
    (y,) = eq.outputs
    fi, eps = eq.params["feature_index"], eq.params["epsilon"]
    work = _work(x.aval.element_type)
    features = x.aval.dimensions[fi]
    var = _per_feature(ctx, variance, features, work, "bvar")
    sd, f = ctx.fresh("bsd"), ctx.fresh("f")
    ctx.emit(f"{sd} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{sd}[{f}] = np.sqrt({var}[{f}] + {_const(eps, x.aval.element_type)})")
    _normalize(ctx, x, y, fi, _per_feature(ctx, scale, features, work, "bscale"),
               _per_feature(ctx, offset, features, work, "boff"),
               _per_feature(ctx, mean, features, work, "bmean"), sd, work)


def _lower_grad(ctx: LoweringContext, eq: Equation) -> None:
    x, scale, mean_in, variance, dy = eq.inputs
    dx, dscale, doffset = eq.outputs
    fi, eps = eq.params["feature_index"], eq.params["epsilon"]
    t = x.aval.element_type
    work = _work(t)
    dims = x.aval.dimensions
    features = dims[fi]
    count = math.prod(d for i, d in enumerate(dims) if i != fi)
    n = _const(count, t)
    mean = _per_feature(ctx, mean_in, features, work, "bmean")
    var_eps = _per_feature(ctx, variance, features, work, "bve")
    sd, f = ctx.fresh("bsd"), ctx.fresh("f")
    ctx.emit(f"{sd} = empty_buf({features}, {work})")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{var_eps}[{f}] = {var_eps}[{f}] + {_const(eps, x.aval.element_type)}")
        ctx.emit(f"{sd}[{f}] = np.sqrt({var_eps}[{f}])")
    s_dy, s_dyc, s_dys = (_zeros(ctx, features, p) for p in ("bsdy", "bsdyc", "bsdys"))
    with ctx.loops(x.aval.shape) as idx:
        k = idx[fi]
        g, c, p = ctx.fresh("gy"), ctx.fresh("cen"), ctx.fresh("prod")
        ctx.emit(f"{g} = {work}({ctx.read(dy, idx)})")
        ctx.emit(f"{c} = {work}({ctx.read(x, idx)}) - {mean}[{k}]")
        ctx.emit(f"{p} = {g} * {c}")
        ctx.emit(f"{s_dy}[{k}] += {g}")
        ctx.emit(f"{s_dyc}[{k}] += {p}")
        ctx.emit(f"{s_dys}[{k}] += {p} / {sd}[{k}]")
    cf, df, kf = ctx.fresh("bc"), ctx.fresh("bd"), ctx.fresh("bk")
    for name in (cf, df, kf):
        ctx.emit(f"{name} = empty_buf({features}, {work})")
    scale_w = _per_feature(ctx, scale, features, work, "bscale")
    with ctx.block(f"for {f} in range({features}):"):
        ctx.emit(f"{cf}[{f}] = {work}({s_dyc}[{f}]) / {n} / {var_eps}[{f}]")
        ctx.emit(f"{df}[{f}] = {work}({s_dy}[{f}]) / {n}")
        ctx.emit(f"{kf}[{f}] = {scale_w}[{f}] / {sd}[{f}]")
    ctx.alloc(dx)
    with ctx.loops(dx.aval.shape) as idx:
        k = idx[fi]
        value = (f"{kf}[{k}] * ({work}({ctx.read(dy, idx)}) - {df}[{k}] - {cf}[{k}] * "
                 f"({work}({ctx.read(x, idx)}) - {mean}[{k}]))")
        ctx.write(dx, idx, value)
    _store_per_feature(ctx, dscale, s_dys, features, work)
    _store_per_feature(ctx, doffset, s_dy, features, work)


lowerings[batch_norm.batch_norm_training_p] = _lower_training
lowerings[batch_norm.batch_norm_inference_p] = _lower_inference
lowerings[batch_norm.batch_norm_grad_p] = _lower_grad


# -- library calls ---------------------------------------------------------------------------

def _geometry(eq: Equation, like: tuple) -> tuple[int, int, int] | None:
    """``(outer, features, inner)`` of the operand seen as ``x[outer, features,
    inner]`` when every value of ``like`` (operand positions, then result
    positions past the operands) is an f32/f64 array in one dense layout,
    of at most ``LIBRARY_MAX_ELEMENTS``."""
    atoms = [eq.inputs[i] if i < len(eq.inputs) else eq.outputs[i - len(eq.inputs)]
             for i in like]
    x = atoms[0]
    if x.aval.element_type not in (PrimitiveType.F32, PrimitiveType.F64) or \
            x.aval.shape.size > LIBRARY_MAX_ELEMENTS or \
            not all(isinstance(a, Var) for a in eq.inputs) or \
            any(a.aval.shape.layout != x.aval.shape.layout for a in atoms) or \
            dense_strides(x.aval.shape) is None or \
            any(dense_strides(a.aval.shape) is None for a in (*eq.inputs, *eq.outputs)):
        return None
    dims, fi = x.aval.dimensions, eq.params["feature_index"]
    order = loop_order(x.aval.shape)
    at = order.index(fi)
    return (math.prod(dims[d] for d in order[:at]), dims[fi],
            math.prod(dims[d] for d in order[at + 1:]))


def _library_training(eq: Equation) -> LibraryCall | None:
    geometry = _geometry(eq, (0, 3))
    if geometry is None:
        return None
    function = norm.batch_norm_training_f64 if eq.inputs[0].aval.element_type is \
        PrimitiveType.F64 else norm.batch_norm_training_f32
    return LibraryCall.buffers_then(function, eq, *geometry, float(eq.params["epsilon"]))


def _library_inference(eq: Equation) -> LibraryCall | None:
    geometry = _geometry(eq, (0, 5))
    return None if geometry is None else \
        LibraryCall.buffers_then(norm.batch_norm_inference, eq, *geometry,
                                 float(eq.params["epsilon"]))


def _library_grad(eq: Equation) -> LibraryCall | None:
    geometry = _geometry(eq, (0, 4, 5))
    return None if geometry is None else \
        LibraryCall.buffers_then(norm.batch_norm_grad, eq, *geometry,
                                 float(eq.params["epsilon"]))


library_rules[batch_norm.batch_norm_training_p] = _library_training
library_rules[batch_norm.batch_norm_inference_p] = _library_inference
library_rules[batch_norm.batch_norm_grad_p] = _library_grad
