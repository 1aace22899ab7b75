"""Rules for element-wise ops, comparisons, select/clamp and conversions.

Each table row: the element types XLA admits (letters: p(red), s(igned),
u(nsigned), f(loat), c(omplex)), the result type, and the accuracy class
that decides whether the reference's sensitivity runs perturb the result
(``t`` transcendental: always; ``a``: as ``t``, but for complex operands
errors up to a few ulps of 1 rather than of |result|: atan2, whose definition
-i log(w) with |w| = 1 takes log|w| near 0, so its absolute error is about
eps whatever |result| is; ``p``: as ``t``, but for complex operands the
operands are perturbed too (a backward error): pow, exp(w log z) in the
element type, whose relative error grows with |w log z|; ``r`` rounded
arithmetic: on f16, bf16 and
complex, whose compiled code keeps f32 between fused ops or uses other
complex formulas; ``c``: on complex only; ``""``: exact).
"""
from __future__ import annotations

from .values import BITS, COMPLEX, COMPONENT, FLOATS, INTS, of_kinds

# op -> (types, result, accuracy)
UNARY = {
    "neg": ("sufc", "same", ""), "abs": ("sfc", "component", "c"), "sign": ("sfc", "same", "c"),
    "ceil": ("f", "same", ""), "floor": ("f", "same", ""), "round": ("f", "same", ""),
    "cbrt": ("fc", "same", "t"), "cos": ("fc", "same", "t"), "sin": ("fc", "same", "t"),
    "tan": ("fc", "same", "t"), "tanh": ("fc", "same", "t"), "exp": ("fc", "same", "t"),
    "expm1": ("fc", "same", "t"), "log": ("fc", "same", "t"), "log1p": ("fc", "same", "t"),
    "logistic": ("fc", "same", "t"), "sqrt": ("fc", "same", "r"), "rsqrt": ("fc", "same", "t"),
    "erf": ("f", "same", "t"), "is_finite": ("f", "pred", ""), "real": ("fc", "component", ""),
    "imag": ("fc", "component", ""), "not_": ("psu", "same", ""),
    "population_count": ("su", "same", ""), "clz": ("su", "same", ""),
}

BINARY = {
    "add": ("psufc", "r"), "sub": ("sufc", "r"), "mul": ("psufc", "r"), "div": ("sufc", "r"),
    "rem": ("suf", ""), "pow": ("sufc", "p"), "max": ("psufc", ""), "min": ("psufc", ""),
    "atan2": ("fc", "a"), "bitwise_and": ("psu", ""), "bitwise_or": ("psu", ""),
    "bitwise_xor": ("psu", ""), "shift_left": ("su", ""), "shift_right_arithmetic": ("su", ""),
    "shift_right_logical": ("su", ""),
}

DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
TOTAL_ORDER = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}
PRECISIONS = ((5, 10), (8, 7), (8, 23), (11, 52), (4, 3), (5, 2), (2, 1), (1, 0), (3, 12))


def noise(accuracy: str, t: str) -> str:
    """Where the sensitivity runs perturb an op of ``accuracy`` on type ``t``."""
    if t == "pred" or t in INTS:
        return ""
    if accuracy == "a" and t in COMPLEX:  # errors absolute (of 1), zeros of either sign
        return "outu"
    if accuracy == "p" and t in COMPLEX:  # operands perturbed too, zeros of either sign
        return "inout"
    if accuracy in ("t", "a", "p") and t in COMPLEX:  # formulas differ in zero parts' signs
        return "outz"
    if accuracy in ("t", "a", "p") or (accuracy == "r" and t in ("f16", "bf16") + COMPLEX):
        return "out"
    return "out" if accuracy == "c" and t in COMPLEX else ""


def result_type(rule: str, t: str) -> str:
    return {"same": t, "pred": "pred", "component": COMPONENT.get(t, t)}[rule]


def unary_expr(g, op: str, t: str, arg: str = "{0}") -> str:
    """The call of unary ``op`` on ``arg`` (text), with random parameters."""
    if op == "round":
        method = g.choice(["AWAY_FROM_ZERO", "TO_NEAREST_EVEN"])
        return f"lax.round({arg}, lax.RoundingMethod.{method})"
    return f"lax.{op}({arg})"


def _op_for(g, table: dict) -> tuple[str, str | None]:
    """An op of ``table`` and, mostly, an existing value of a type it admits."""
    x = g.pick()
    fits = [op for op, row in table.items() if x and g.avals[x][0] in of_kinds(row[0])]
    if fits and g.chance(0.75):
        return g.choice(fits), x
    op = g.choice(table)
    return op, g.operand(of_kinds(table[op][0]))


def gen_unary(g) -> None:
    op, x = _op_for(g, UNARY)
    _, result, accuracy = UNARY[op]
    t, shape = g.avals[x]
    g.emit1(op, unary_expr(g, op, t), [x], result_type(result, t), shape, noise(accuracy, t))


def partner(g, x: str) -> str:
    """A second operand for ``x``: same type, its shape or (implicitly broadcast) a scalar."""
    t, shape = g.avals[x]
    if shape and g.chance(0.2):
        return g.scalar(t)
    return g.derive(t, shape)


def gen_binary(g) -> None:
    op, x = _op_for(g, BINARY)
    accuracy = BINARY[op][1]
    t, shape = g.avals[x]
    y = partner(g, x)
    args = [x, y] if g.chance(0.7) else [y, x]
    g.emit1(op, f"lax.{op}({{0}}, {{1}})", args, t, shape, noise(accuracy, t))


def gen_compare(g) -> None:
    x = g.operand(of_kinds("psufc"))
    t, shape = g.avals[x]
    y = partner(g, x)
    direction = g.choice(DIRECTIONS if t not in COMPLEX else ("EQ", "NE"))
    if t in FLOATS and g.chance(0.3):
        expr = f"lax.{TOTAL_ORDER[direction].lower()}_total_order({{0}}, {{1}})"
    else:
        expr = f"lax.compare({{0}}, {{1}}, {direction!r})"
    g.emit1("compare", expr, [x, y], "pred", shape)


def gen_select(g) -> None:
    x = g.operand(of_kinds("psufc"))
    t, shape = g.avals[x]
    pred = g.scalar("pred") if shape and g.chance(0.2) else g.derive("pred", shape)
    g.emit1("select", "lax.select({0}, {1}, {2})", [pred, x, g.derive(t, shape)], t, shape)


def gen_clamp(g) -> None:
    x = g.operand(of_kinds("psuf"))
    t, shape = g.avals[x]
    lo, hi = (g.scalar(t) if g.chance(0.6) else g.derive(t, shape) for _ in range(2))
    g.emit1("clamp", "lax.clamp({0}, {1}, {2})", [lo, x, hi], t, shape)


def gen_complex(g) -> None:
    x = g.operand(("f32", "f64"))
    t, shape = g.avals[x]
    g.emit1("complex", "lax.complex({0}, {1})", [x, g.derive(t, shape)],
            {"f32": "c64", "f64": "c128"}[t], shape)


def gen_convert(g) -> None:
    x = g.operand(of_kinds("psufc"))
    t, shape = g.avals[x]
    new = g.choice(of_kinds("psufc"))
    accuracy = "r" if new in ("f16", "bf16") else ""
    g.emit1("convert_element_type", f"lax.convert_element_type({{0}}, {new!r})", [x], new, shape,
            noise(accuracy, new) if t not in INTS + ("pred",) else "")


def gen_bitcast(g) -> None:
    bitcastable = INTS + FLOATS
    x = g.operand(bitcastable)
    t, shape = g.avals[x]
    same = [u for u in bitcastable if BITS[u] == BITS[t]]
    narrower = [u for u in bitcastable if BITS[u] < BITS[t]]
    wider = [u for u in bitcastable if BITS[u] > BITS[t] and shape
             and shape[-1] == BITS[u] // BITS[t]]
    new = g.choice(same + narrower + wider * 3)
    if BITS[new] < BITS[t]:
        out = shape + (BITS[t] // BITS[new],)
    elif BITS[new] > BITS[t]:
        out = shape[:-1]
    else:
        out = shape
    g.emit1("bitcast_convert_type", f"lax.bitcast_convert_type({{0}}, {new!r})", [x], new, out)


def gen_reduce_precision(g) -> None:
    x = g.operand(FLOATS)
    t, shape = g.avals[x]
    e, m = g.choice(PRECISIONS)
    g.emit1("reduce_precision", f"lax.reduce_precision({{0}}, {e}, {m})", [x], t, shape)


def same_type_expr(g, t: str, arg: str, capture: str | None = None) -> tuple[str, str]:
    """An element-wise expression of ``arg`` (text) that keeps type ``t``, for
    loop and branch bodies; ``capture`` (text) is a value of the same type and
    shape the body may close over.  Returns (expression, accuracy)."""
    unary = [op for op, (kinds, result, _) in UNARY.items()
             if t in of_kinds(kinds) and result == "same"]
    binary = [op for op, (kinds, _) in BINARY.items() if t in of_kinds(kinds)]
    if binary and g.chance(0.5):
        op = g.choice(binary)
        other = capture if capture is not None and g.chance(0.6) else arg
        return f"lax.{op}({arg}, {other})", BINARY[op][1]
    if not unary:
        return arg, ""
    op = g.choice(unary)
    return unary_expr(g, op, t, arg), UNARY[op][2]
