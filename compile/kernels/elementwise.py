"""Lowerings of the element-wise ops: each op is a scalar expression in
:data:`scalar_exprs`, written into one loop nest over the result.  (Fusing
chains of these into one loop is a matter of composing the expressions.)"""
from __future__ import annotations

from primitives import elementwise as ew
from tracer.graph import Equation
from tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, ScalarExpr, dtype_name, lowerings, scalar_exprs


def _arith(op: str, logical: str | None = None) -> ScalarExpr:
    def expr(t: PrimitiveType, params: dict, a: str, b: str) -> str:
        if t is PrimitiveType.PRED and logical is not None:
            return f"({a} {logical} {b})"
        return f"({a} {op} {b})"
    return expr


def _div(t: PrimitiveType, params: dict, a: str, b: str) -> str:
    if t.is_signed:
        return f"div_signed({a}, {b})"
    if t.is_unsigned:
        return f"div_unsigned({a}, {b})"
    return f"({a} / {b})"


def _math(fn: str) -> ScalarExpr:
    def expr(t: PrimitiveType, params: dict, a: str) -> str:
        module = "cmath" if t.is_complex else "math"
        return f"{module}.{fn}({a})"
    return expr


_COMPARE_OPS = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _compare(t: PrimitiveType, params: dict, a: str, b: str) -> str:
    if params.get("total_order"):
        raise NotImplementedError("compiled total-order comparisons are not lowered yet")
    return f"({a} {_COMPARE_OPS[params['direction']]} {b})"


def _convert(t: PrimitiveType, params: dict, a: str) -> str:
    target: PrimitiveType = params["new_dtype"]
    if target is PrimitiveType.PRED:
        return f"({a} != 0)"
    if t.is_complex and not target.is_complex:
        a = f"({a}).real"
    if (t.is_floating or t.is_complex) and target.is_integral:
        # XLA saturates float->int conversions and maps NaN to 0.
        info = target.numpy_dtype
        import numpy as np
        lo, hi = int(np.iinfo(info).min), int(np.iinfo(info).max)
        name = dtype_name(target)
        return (f"({name}({hi}) if {a} >= {float(hi)!r} else ({name}({lo}) if {a} <= {float(lo)!r}"
                f" else ({name}({a}) if {a} == {a} else {name}(0))))")
    return f"{dtype_name(target)}({a})"


scalar_exprs.update({
    ew.add_p: _arith("+", "|"),
    ew.sub_p: _arith("-"),
    ew.mul_p: _arith("*", "&"),
    ew.div_p: _div,
    ew.max_p: lambda t, p, a, b: f"nan_max({a}, {b})",
    ew.min_p: lambda t, p, a, b: f"nan_min({a}, {b})",
    ew.neg_p: lambda t, p, a: f"(-{a})",
    ew.exp_p: _math("exp"),
    ew.log_p: _math("log"),
    ew.tanh_p: _math("tanh"),
    ew.compare_p: lambda t, p, a, b: _compare(t, p, a, b),
    ew.select_p: lambda t, p, c, a, b: f"({a} if {c} else {b})",
    ew.convert_element_type_p: _convert,
})


def _lower_elementwise(ctx: LoweringContext, eq: Equation) -> None:
    (out,) = eq.outputs
    ctx.alloc(out)
    operand_type = eq.inputs[-1].aval.element_type
    rule = scalar_exprs[eq.primitive]
    with ctx.loops(out.aval.shape) as idx:
        operands = []
        for atom in eq.inputs:
            # select's scalar predicate is read at index ().
            operands.append(ctx.read(atom, idx if atom.aval.ndim else []))
        ctx.write(out, idx, rule(operand_type, eq.params, *operands))


for _prim in scalar_exprs:
    lowerings[_prim] = _lower_elementwise
