"""Lowerings of the element-wise ops (``primitives/elementwise.py`` and
``elementwise_bits.py``).

Each op is a scalar expression in :data:`codegen.scalar_exprs` — ``(operand
element type, params, *operand texts) -> text`` — with the reference
semantics' definitions wherever XLA's differ from Python's or Numba's
(integer division and remainder by 0 and of INT_MIN by -1, shifts past the
bit width, integer ``pow`` with negative exponents, NaN-propagating
``max``/``min``, ``sign(-0.0) = -0.0``, round half away from zero,
saturating float -> integer conversion...).  The helpers they call live in
:mod:`compile.kernels.scalar` (XLA semantics) and
:mod:`compile.kernels.vecmath` (transcendentals that LLVM vectorises).

Conventions of the expressions:

* each operand text appears once (operands may be buffer reads);
* the value has the result's element type (a cast back where Numba widens
  small integers: that cast is XLA's wrap-around), except that 16-bit
  floats are f32 values: :data:`scalar_exprs` round them to the format (so
  scalar computations inlined elsewhere round as the reference does), the
  loop lowering leaves the rounding to ``ctx.write``.

Every expression op is lowered by :func:`lower_elementwise`, one loop nest
over the result, or fused into the loops of its consumers
(:mod:`compile.fusion`).  ``sin``/``cos``/``tan`` of real types use the
libm-free reduced kernels, and the loop runs again exactly when any
argument was too large for them;
``bitcast_convert_type`` between types of different widths gets its own
loop (a minor dimension added or removed).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from numxla.primitives import elementwise as ew
from numxla.primitives import elementwise_bits as ewb
from numxla.tracer.graph import Equation
from numxla.tracer.shapes import PrimitiveType as PT

from ..codegen import LoweringContext, dtype_name
from ..layout_assignment import propagate_operand_layout
from ..registry import (ScalarExpr, cheap_producers, elementwise, fused_reads, fusion_consumers,
                        layout_rules, lowerings, scalar_exprs, vector_math)

__all__ = ["lower_elementwise", "element_value", "raw_exprs", "result_type", "round_result"]

_HALF = (PT.F16, PT.BF16)
_COMPONENT = {PT.C64: PT.F32, PT.C128: PT.F64}
_COMPLEX_OF = {PT.F32: PT.C64, PT.F64: PT.C128}
_UNSIGNED = {8: "np.uint8", 16: "np.uint16", 32: "np.uint32", 64: "np.uint64"}
_SIGNED = {8: "np.int8", 16: "np.int16", 32: "np.int32", 64: "np.int64"}


def _bits(t: PT) -> int:
    return t.bit_width


def _vec(fn: str, t: PT) -> str:
    """The vecmath function ``fn`` for the real type ``t``."""
    return f"{fn}_f64" if t is PT.F64 else f"{fn}_f32"


# --------------------------------------------------------------------------
# expression builders
# --------------------------------------------------------------------------

RawExpr = Callable[..., str]
raw_exprs: dict = {}   # primitive -> expression before 16-bit rounding


def _arith(op: str, logical: str | None = None) -> RawExpr:
    def expr(t: PT, params: dict, a: str, b: str) -> str:
        if t is PT.PRED:
            return f"({a} {logical} {b})"
        if t is PT.S64:
            # in u64, which wraps: a signed overflow is undefined in LLVM (nsw),
            # and the optimiser then folds later comparisons as if it could
            # not happen; XLA's s64 arithmetic wraps
            return f"np.int64(np.uint64({a}) {op} np.uint64({b}))"
        if t.is_integral:
            return f"{dtype_name(t)}({a} {op} {b})"
        return f"({a} {op} {b})"
    return expr


def _mul(t: PT, params: dict, a: str, b: str) -> str:
    if t.is_complex:  # XLA's product (fused multiply-adds), not Numba's
        return f"{dtype_name(t)}(complex_mul({a}, {b}))"
    return _arith("*", "&")(t, params, a, b)


def _div(t: PT, params: dict, a: str, b: str) -> str:
    if t.is_integral:
        if _bits(t) <= 32:
            return f"div_small({a}, {b}, {dtype_name(t)})"
        helper = "div_signed" if t.is_signed else "div_unsigned"
        return f"{dtype_name(t)}({helper}({a}, {b}))"
    if t.is_complex:
        return f"{dtype_name(t)}(complex_div({a}, {b}))"
    return f"({a} / {b})"


def _rem(t: PT, params: dict, a: str, b: str) -> str:
    if t.is_integral:
        if _bits(t) <= 32:
            return f"rem_small({a}, {b}, {dtype_name(t)})"
        helper = "rem_signed" if t.is_signed else "rem_unsigned"
        return f"{helper}({a}, {b}, {dtype_name(t)})"
    return f"np.fmod({a}, {b})"


def _pow(t: PT, params: dict, a: str, b: str) -> str:
    if t.is_integral:
        return f"pow_int({a}, {b}, {dtype_name(t)})"
    if t.is_complex:
        return f"{dtype_name(t)}(complex_pow({a}, {b}))"
    return f"{_vec('pow', t)}({a}, {b})"


def _max_min(which: str) -> RawExpr:
    def expr(t: PT, params: dict, a: str, b: str) -> str:
        if t is PT.PRED:
            return f"({a} {'|' if which == 'max' else '&'} {b})"
        if t.is_complex:
            return f"complex_{which}({a}, {b})"
        return f"nan_{which}({a}, {b})"
    return expr


def _atan2(t: PT, params: dict, a: str, b: str) -> str:
    if t.is_complex:
        return f"{dtype_name(t)}(complex_atan2({a}, {b}))"
    return f"{dtype_name(t)}({_vec('atan2', t)}({a}, {b}))"


def _complex(t: PT, params: dict, a: str, b: str) -> str:
    return f"{dtype_name(_COMPLEX_OF[t])}(complex({a}, {b}))"


def _bitwise(op: str) -> RawExpr:
    def expr(t: PT, params: dict, a: str, b: str) -> str:
        if t is PT.PRED:
            return f"({a} {op} {b})"
        return f"{dtype_name(t)}({a} {op} {b})"
    return expr


def _not(t: PT, params: dict, a: str) -> str:
    return f"(not {a})" if t is PT.PRED else f"{dtype_name(t)}(~{a})"


def _shift(kind: str) -> RawExpr:
    def expr(t: PT, params: dict, a: str, b: str) -> str:
        T, n = dtype_name(t), _bits(t)
        b = f"{T}({b})"  # a constant amount would compile the helper once per value
        if kind == "arithmetic":
            return f"shift_right_arithmetic({a}, {b}, {T}, {_SIGNED[n]}, {_UNSIGNED[n]}, {n})"
        return f"shift_{kind}({a}, {b}, {T}, {_UNSIGNED[n]}, {n})"
    return expr


def _unary_math(fn: str, complex_fn: str | None = None, complex_args: str = "") -> RawExpr:
    """A vecmath function for real types; ``complex_fn`` (scalar.py) for complex."""
    def expr(t: PT, params: dict, a: str) -> str:
        if t.is_complex:
            extra = complex_args and ", " + complex_args.format(big=9.0 if t is PT.C64 else 22.0)
            return f"{dtype_name(t)}({complex_fn}({a}{extra}))"
        return f"{dtype_name(t)}({_vec(fn, t)}({a}))"
    return expr


def _logistic(t: PT, params: dict, a: str) -> str:
    if t is PT.F16:  # 0 where exp(-x) overflows in f16, as XLA's expansion
        return f"logistic_f16({a})"
    return _unary_math("logistic", "complex_logistic")(t, params, a)


def _abs(t: PT, params: dict, a: str) -> str:
    if t.is_complex:
        return f"{dtype_name(_COMPONENT[t])}(abs({a}))"
    return f"{dtype_name(t)}(abs({a}))"


def _sign(t: PT, params: dict, a: str) -> str:
    T = dtype_name(t)
    if t.is_integral:
        return f"sign_int({a}, {T})"
    if t.is_complex:
        return f"{T}(sign_complex({a}))"
    return f"{T}(sign_float({a}))"


def _round(t: PT, params: dict, a: str) -> str:
    if params["rounding_method"] == ew.RoundingMethod.TO_NEAREST_EVEN:
        return f"np.rint({a})"
    return f"{dtype_name(t)}(round_afz({a}))"


def _sqrt(t: PT, params: dict, a: str) -> str:
    if t.is_complex:
        return f"{dtype_name(t)}(complex_sqrt({a}))"
    return f"np.sqrt({a})"


def _rsqrt(t: PT, params: dict, a: str) -> str:
    if t.is_complex:
        return f"{dtype_name(t)}(complex_rsqrt({a}))"
    return f"({dtype_name(t)}(1.0) / np.sqrt({a}))"


def _real(t: PT, params: dict, a: str) -> str:
    return f"({a}).real" if t.is_complex else a


def _imag(t: PT, params: dict, a: str) -> str:
    return f"({a}).imag" if t.is_complex else f"{dtype_name(t)}(0.0)"


_COMPARE_OPS = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _compare(t: PT, params: dict, a: str, b: str) -> str:
    op = _COMPARE_OPS[params["direction"]]
    if params.get("total_order") and (t.is_floating or t.is_complex):
        width = 32 if t in _HALF else _bits(_COMPONENT.get(t, t))
        key_type = _SIGNED[width]
        if t.is_complex:
            return f"(total_order_cmp_complex({a}, {b}, {key_type}) {op} 0)"
        return f"(total_order_key({a}, {key_type}) {op} total_order_key({b}, {key_type}))"
    return f"({a} {op} {b})"


def _select(t: PT, params: dict, c: str, a: str, b: str) -> str:
    return f"({a} if {c} else {b})"


def _clamp(t: PT, params: dict, lo: str, x: str, hi: str) -> str:
    if t is PT.PRED:
        return f"(({x} | {lo}) & {hi})"
    if t.is_complex:
        return f"complex_min(complex_max({x}, {lo}), {hi})"
    return f"nan_min(nan_max({x}, {lo}), {hi})"


def _convert(t: PT, params: dict, a: str) -> str:
    """XLA's ConvertElementType as ``primitives.elementwise.convert_values``."""
    target: PT = params["new_dtype"]
    if t is target:
        return a
    if t.is_complex and not target.is_complex:
        a, t = f"({a}).real", _COMPONENT[t]
    if target is PT.PRED:
        return f"({a} != 0)"
    if t.is_floating and target.is_integral:
        info = np.iinfo(target.numpy_dtype)
        T = dtype_name(target)
        return (f"float_to_int({a}, {T}, {float(info.min)!r}, {float(info.max)!r}, "
                f"{T}({int(info.min)}), {T}({int(info.max)}))")
    if target is PT.F16:
        return f"round_to_f16({a})"          # one rounding, from f64 too
    if target is PT.BF16:
        return f"round_to_bf16(np.float32({a}))"   # through f32, as the reference
    return f"{dtype_name(target)}({a})"


def _reduce_precision(t: PT, params: dict, a: str) -> str:
    suffix = {PT.F16: "f16", PT.BF16: "bf16", PT.F32: "f32", PT.F64: "f64"}[t]
    # the widths as int64 values, not constants: Numba compiles a helper called
    # with constants once per value (they are still folded once it is inlined)
    return (f"reduce_precision_{suffix}({a}, np.int64({int(params['exponent_bits'])}), "
            f"np.int64({int(params['mantissa_bits'])}))")


# -- bitcasts --------------------------------------------------------------------

def word_of(t: PT, a: str) -> str:
    """The bits of the value ``a`` of type ``t`` as an unsigned integer of its
    width (complex: see ``component_words``)."""
    if t is PT.PRED:
        return f"np.uint8({a})"
    if t is PT.F16:
        return f"f16_bits({a})"
    if t is PT.BF16:
        return f"bf16_bits({a})"
    if t.is_floating:
        return f"bitcast({a}, {_UNSIGNED[_bits(t)]})"
    if t is PT.C64:
        return f"c64_bits({a})"
    return f"{_UNSIGNED[_bits(t)]}({a})"


def value_of(t: PT, w: str) -> str:
    """The value of type ``t`` whose bits are the unsigned word ``w`` (of t's width)."""
    if t is PT.PRED:
        return f"({w} != 0)"
    if t is PT.F16:
        return f"f16_from_bits({w})"
    if t is PT.BF16:
        return f"bf16_from_bits({w})"
    if t.is_floating:
        return f"bitcast({_UNSIGNED[_bits(t)]}({w}), {dtype_name(t)})"
    if t is PT.C64:
        return f"c64_from_bits({w})"
    return f"{dtype_name(t)}({w})"


def _bitcast(t: PT, params: dict, a: str) -> str:
    target: PT = params["new_dtype"]
    if _bits(t) != _bits(target):
        raise NotImplementedError("a width-changing bitcast is not a scalar expression")
    if t is target:
        return a
    if t.is_integral and target.is_integral:
        return f"{dtype_name(target)}({a})"
    return value_of(target, word_of(t, a))


# --------------------------------------------------------------------------
# the tables
# --------------------------------------------------------------------------

raw_exprs.update({
    ew.add_p: _arith("+", "|"),
    ew.sub_p: _arith("-"),
    ew.mul_p: _mul,
    ew.div_p: _div,
    ew.rem_p: _rem,
    ew.pow_p: _pow,
    ew.max_p: _max_min("max"),
    ew.min_p: _max_min("min"),
    ew.atan2_p: _atan2,
    ew.complex_p: _complex,
    ew.and_p: _bitwise("&"),
    ew.or_p: _bitwise("|"),
    ew.xor_p: _bitwise("^"),
    ew.not_p: _not,
    ewb.shift_left_p: _shift("left"),
    ewb.shift_right_arithmetic_p: _shift("arithmetic"),
    ewb.shift_right_logical_p: _shift("right_logical"),
    ewb.population_count_p: lambda t, p, a: f"popcount({a}, {dtype_name(t)})",
    ewb.clz_p: lambda t, p, a: f"clz({a}, {dtype_name(t)})",
    ew.neg_p: lambda t, p, a: f"{dtype_name(t)}(-{a})" if t.is_integral else f"(-{a})",
    ew.abs_p: _abs,
    ew.sign_p: _sign,
    ew.ceil_p: lambda t, p, a: f"np.ceil({a})",
    ew.floor_p: lambda t, p, a: f"np.floor({a})",
    ew.round_p: _round,
    ew.cbrt_p: _unary_math("cbrt", "complex_cbrt"),
    ew.cos_p: _unary_math("cos", "complex_cos"),
    ew.sin_p: _unary_math("sin", "complex_sin"),
    ew.tan_p: _unary_math("tan", "complex_tan", "{big}"),
    ew.tanh_p: _unary_math("tanh", "complex_tanh", "{big}"),
    ew.erf_p: _unary_math("erf"),
    ew.exp_p: _unary_math("exp", "complex_exp"),
    ew.expm1_p: _unary_math("expm1", "complex_expm1"),
    ew.log_p: _unary_math("log", "complex_log"),
    ew.log1p_p: _unary_math("log1p", "complex_log1p"),
    ew.logistic_p: _logistic,
    ew.is_finite_p: lambda t, p, a: f"np.isfinite({a})",
    ew.real_p: _real,
    ew.imag_p: _imag,
    ew.sqrt_p: _sqrt,
    ew.rsqrt_p: _rsqrt,
    ew.compare_p: _compare,
    ew.select_p: _select,
    ew.clamp_p: _clamp,
    ew.convert_element_type_p: _convert,
    ewb.bitcast_convert_type_p: _bitcast,
    ewb.reduce_precision_p: _reduce_precision,
})

vector_math.update({ew.cbrt_p, ew.cos_p, ew.sin_p, ew.tan_p, ew.tanh_p, ew.erf_p, ew.exp_p,
                    ew.expm1_p, ew.log_p, ew.log1p_p, ew.logistic_p, ew.pow_p, ew.atan2_p})

# ops whose result is exactly representable in a 16-bit operand's format
_EXACT = {ew.neg_p, ew.abs_p, ew.sign_p, ew.ceil_p, ew.floor_p, ew.round_p, ew.max_p, ew.min_p,
          ew.clamp_p, ew.select_p, ew.real_p, ew.imag_p, ewb.reduce_precision_p,
          ewb.bitcast_convert_type_p, ew.convert_element_type_p, ew.compare_p, ew.is_finite_p}


def result_type(prim, t: PT, params: dict) -> PT:
    """The result element type of ``prim`` on operands of type ``t``."""
    if prim in (ew.convert_element_type_p, ewb.bitcast_convert_type_p):
        return params["new_dtype"]
    if prim in (ew.compare_p, ew.is_finite_p):
        return PT.PRED
    if prim in (ew.abs_p, ew.real_p, ew.imag_p):
        return _COMPONENT.get(t, t)
    if prim is ew.complex_p:
        return _COMPLEX_OF[t]
    return t


def round_result(prim, t: PT, params: dict, text: str) -> str:
    """``text`` (the raw value of ``prim`` on operands of type ``t``) rounded
    to a 16-bit float result's format; other results unchanged."""
    if prim in _EXACT:
        return text
    out = result_type(prim, t, params)
    if out is PT.F16:
        return f"round_to_f16({text})"
    if out is PT.BF16:
        return f"round_to_bf16({text})"
    return text


def _rounded(prim, raw: RawExpr) -> ScalarExpr:
    """``raw`` with 16-bit float results rounded to their format."""
    def expr(t: PT, params: dict, *operands: str) -> str:
        return round_result(prim, t, params, raw(t, params, *operands))
    return expr


for _prim, _raw in raw_exprs.items():
    scalar_exprs[_prim] = _rounded(_prim, _raw)


# --------------------------------------------------------------------------
# loop lowerings
# --------------------------------------------------------------------------

def _alloc(ctx: LoweringContext, var) -> str:
    """The output buffer; zeroed where its layout has padding (tiles that do
    not divide, padded dimensions), so no element of it is left undefined."""
    shape = var.aval.shape
    return ctx.alloc(var, zero=shape.physical_size != shape.size)


def _operands(ctx: LoweringContext, eq: Equation, idx: Sequence[str]) -> list[str]:
    # rank-0 operands (select's predicate, clamp's bounds) are read at index ()
    return [ctx.read(atom, idx if atom.aval.ndim else []) for atom in eq.inputs]


_TRIG = {ew.sin_p: "sin", ew.cos_p: "cos", ew.tan_p: "tan"}


def element_value(ctx: LoweringContext, eq: Equation, operands: Sequence[str], *,
                  rounded: bool) -> str:
    """The value of one element of ``eq``'s result from its operands' values:
    16-bit float results rounded to their format when ``rounded`` (a fused
    value), else left to ``ctx.write``.  Real sin/cos/tan take the libm-free
    reduced kernels (which vectorise) and count the finite arguments beyond
    their bound in the loop's guard; the loop is then run again exactly."""
    t = eq.inputs[-1].aval.element_type
    ctx.count_math(eq)
    trig = _TRIG.get(eq.primitive)
    guard = ctx.use_guard() if trig and not t.is_complex else None
    if guard is None:
        table = scalar_exprs if rounded else raw_exprs
        return table[eq.primitive](t, eq.params, *operands)
    suffix = "f64" if t is PT.F64 else "f32"
    ctx.math_calls += 1  # the range check is a second call per element
    x = ctx.fresh("x")
    ctx.emit(f"{x} = {operands[0]}")
    ctx.emit(f"{guard} += np.int64(trig_needs_libm_{suffix}({x}))")
    text = f"{dtype_name(t)}({trig}_{suffix}_reduced({x}))"
    return round_result(eq.primitive, t, eq.params, text) if rounded else text


def lower_elementwise(ctx: LoweringContext, eq: Equation) -> None:
    """One loop nest over the result, innermost on its most-minor dimension."""
    (out,) = eq.outputs
    _alloc(ctx, out)
    with ctx.loops(out.aval.shape, may_parallelise=True) as idx:
        ctx.write(out, idx, element_value(ctx, eq, _operands(ctx, eq, idx), rounded=False))


def fused_element(ctx: LoweringContext, eq: Equation, idx: Sequence[str]) -> str:
    """Element ``idx`` of a fused element-wise value, computed in place (a
    temporary of the consumer's loop body)."""
    key = (eq, tuple(idx), ctx.exact, ctx.index_scope)
    name = ctx.computed(key)
    if name is not None:  # read again (x * x + x): computed once per element
        return name
    value = element_value(ctx, eq, _operands(ctx, eq, idx), rounded=True)
    name = ctx.fresh("f")
    ctx.emit(f"{name} = {value}")
    ctx.remember(key, name)
    return name


def lower_bitcast_convert(ctx: LoweringContext, eq: Equation) -> None:
    """BitcastConvertType; between widths, the narrower side has a minor
    dimension of ``wide / narrow`` elements, least significant first
    (little-endian, as the reference views memory)."""
    (x,) = eq.inputs
    (out,) = eq.outputs
    src, dst = x.aval.element_type, out.aval.element_type
    if _bits(src) == _bits(dst):
        return lower_elementwise(ctx, eq)
    _alloc(ctx, out)
    if _bits(src) > _bits(dst):
        _narrowing_bitcast(ctx, x, out, src, dst)
    else:
        _widening_bitcast(ctx, x, out, src, dst)


def _words(ctx: LoweringContext, t: PT, value: str) -> tuple[list[str], int]:
    """Emit the bits of ``value`` (type t) as unsigned words: one, or two
    (real, imaginary) for complex; returns their names and width."""
    if t.is_complex:
        comp = _COMPONENT[t]
        names = []
        for part in ("real", "imag"):
            name = ctx.fresh("w")
            ctx.emit(f"{name} = {word_of(comp, f'{value}.{part}')}")
            names.append(name)
        return names, _bits(comp)
    name = ctx.fresh("w")
    ctx.emit(f"{name} = {word_of(t, value)}")
    return [name], _bits(t)


def _narrowing_bitcast(ctx, x, out, src: PT, dst: PT) -> None:
    k, piece_bits = _bits(src) // _bits(dst), _bits(dst)
    U = _UNSIGNED[piece_bits]
    with ctx.loops(x.aval.shape) as idx:
        value = ctx.fresh("x")
        ctx.emit(f"{value} = {ctx.read(x, idx)}")
        words, word_bits = _words(ctx, src, value)
        W = _UNSIGNED[word_bits]
        for j in range(k):
            word = words[(j * piece_bits) // word_bits]
            shift = (j * piece_bits) % word_bits
            piece = f"{U}({word} >> {W}({shift}))" if shift else f"{U}({word})"
            ctx.write(out, idx + [str(j)], value_of(dst, piece))


def _widening_bitcast(ctx, x, out, src: PT, dst: PT) -> None:
    k, piece_bits = _bits(dst) // _bits(src), _bits(src)
    comp = _COMPONENT.get(dst, dst)
    word_bits = _bits(comp)
    W = _UNSIGNED[word_bits]
    per_word = word_bits // piece_bits
    with ctx.loops(out.aval.shape) as idx:
        pieces = []
        for j in range(k):
            value = ctx.fresh("x")
            ctx.emit(f"{value} = {ctx.read(x, idx + [str(j)])}")
            ws, _ = _words(ctx, src, value)
            if len(ws) == 2:   # a complex piece: two component words, low first
                pieces.append(f"({W}({ws[0]}) | ({W}({ws[1]}) << {W}({piece_bits // 2})))")
            else:
                pieces.append(ws[0])
        words = []
        for w in range(_bits(dst) // word_bits):
            terms = []
            for j in range(per_word):
                p = pieces[w * per_word + j]
                terms.append(f"({W}({p}) << {W}({j * piece_bits}))" if j else f"{W}({p})")
            name = ctx.fresh("w")
            ctx.emit(f"{name} = {W}({' | '.join(terms)})")
            words.append(name)
        if dst.is_complex:
            re, im = (value_of(comp, w) for w in words)
            ctx.write(out, idx, f"{dtype_name(dst)}(complex({re}, {im}))")
        else:
            ctx.write(out, idx, value_of(dst, words[0]))


for _prim in raw_exprs:
    lowerings[_prim] = lower_elementwise
    fusion_consumers.add(_prim)
    if _prim is not ewb.bitcast_convert_type_p:  # may change the width: not one element
        fused_reads[_prim] = fused_element
        elementwise.add(_prim)
lowerings[ewb.bitcast_convert_type_p] = lower_bitcast_convert
for _prim in raw_exprs.keys() - {ewb.bitcast_convert_type_p}:
    layout_rules[_prim] = propagate_operand_layout
cheap_producers.update({ew.add_p, ew.sub_p, ew.mul_p, ew.neg_p, ew.abs_p, ew.max_p, ew.min_p,
                        ew.select_p, ew.compare_p, ew.clamp_p, ew.convert_element_type_p,
                        ew.and_p, ew.or_p, ew.not_p, ew.real_p, ew.imag_p})
