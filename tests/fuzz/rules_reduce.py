"""Rules for reductions (the shortcut ones, ``lax.reduce`` with a
computation, argmax/argmin), reduce_window and the cumulative reductions,
select_and_scatter_add, sort and top_k."""
from __future__ import annotations

from .values import COMPLEX, FLOATS, INTS, of_kinds

# name -> (types, combining op for ``lax.reduce``, float accumulation?)
REDUCTIONS = {
    "reduce_sum": ("psufc", "add", True), "reduce_prod": ("psufc", "mul", True),
    "reduce_max": ("psuf", "max", False), "reduce_min": ("psuf", "min", False),
    "reduce_and": ("psu", "bitwise_and", False), "reduce_or": ("psu", "bitwise_or", False),
    "reduce_xor": ("psu", "bitwise_xor", False),
}
# the identity of each combining op, by type kind (``lax.reduce`` needs one: XLA may
# apply the init value any number of times)
IDENTITY = {"add": lambda t: 0, "mul": lambda t: 1, "bitwise_or": lambda t: 0,
            "bitwise_xor": lambda t: 0, "bitwise_and": lambda t: True if t == "pred" else -1,
            "max": lambda t: _extreme(t, low=True), "min": lambda t: _extreme(t, low=False)}
WINDOWED = {"reduce_window_sum": ("psufc", "add"), "reduce_window_max": ("psuf", "max"),
            "reduce_window_min": ("psuf", "min")}
CUMULATIVE = {"cumsum": "sufc", "cumprod": "sufc", "cummax": "suf", "cummin": "suf"}


def _extreme(t: str, low: bool):
    import numpy as np
    if t == "pred":
        return not low
    if t in INTS:
        info = np.iinfo(np.dtype(("int" if t[0] == "s" else "uint") + t[1:]))
        return int(info.min if low else info.max)
    return float("-inf" if low else "inf")


def _noise(t: str, accumulates: bool) -> str:
    return "inout" if accumulates and (t in FLOATS or t in COMPLEX) else ""


def gen_reduce(g) -> None:
    name = g.choice(REDUCTIONS)
    kinds, op, accumulates = REDUCTIONS[name]
    x = g.operand(of_kinds(kinds))
    t, shape = g.avals[x]
    axes = tuple(g.subset(range(len(shape))))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    if g.chance(0.35):
        init = IDENTITY[op](t)
        if op == "bitwise_and" and t != "pred":
            init = -1 if t[0] == "s" else _extreme(t, low=False)
        if op in ("max", "min") and g.chance(0.3):
            init = None  # any init value is fine for idempotent ops
        expr = (f"lax.reduce({{0}}, {g.const(t, init)}, lambda a, b: lax.{op}(a, b), {axes!r})")
    else:
        expr = f"lax.{name}({{0}}, {axes!r})"
    g.emit1(name, expr, [x], t, out, _noise(t, accumulates))


def gen_argmax(g) -> None:
    x = g.operand(of_kinds("psuf"), min_rank=1, nonempty=True)
    shape = g.avals[x][1]
    axis = g.integer(0, len(shape) - 1)
    op = g.choice(["argmax", "argmin"])
    index = g.choice(["s32", "s64", "u8", "s16"])
    out = tuple(d for i, d in enumerate(shape) if i != axis)
    g.emit1(op, f"lax.{op}({{0}}, {axis}, np.{_np_name(index)})", [x], index, out)


def _np_name(t: str) -> str:
    return ("int" if t[0] == "s" else "uint") + t[1:]


def window_params(g, shape) -> tuple[str, tuple[int, ...]]:
    """Random window text (dimensions, strides, padding, dilations) and the output dims."""
    window = tuple(g.integer(1, 3) for _ in shape)
    strides = tuple(g.choice([1, 1, 2]) for _ in shape)
    base = tuple(g.choice([1, 1, 1, 2]) for _ in shape)
    dilation = tuple(g.choice([1, 1, 1, 2]) for _ in shape)
    padding = tuple((g.choice([0, 0, 1, 2]), g.choice([0, 0, 1])) for _ in shape)
    out = []
    for d, w, s, b, k, (lo, hi) in zip(shape, window, strides, base, dilation, padding):
        padded = (max(d - 1, 0) * b + 1 if d else 0) + lo + hi
        effective = (w - 1) * k + 1
        out.append(0 if effective > padded else (padded - effective) // s + 1)
    text = f"{window!r}, {strides!r}, {padding!r}, {base!r}, {dilation!r}"
    return text, tuple(out)


def gen_reduce_window(g) -> None:
    name = g.choice(WINDOWED)
    kinds, op = WINDOWED[name]
    x = g.operand(of_kinds(kinds))
    t, shape = g.avals[x]
    params, out = window_params(g, shape)
    if g.chance(0.3):
        init = g.const(t, IDENTITY[op](t))
        expr = f"lax.reduce_window({{0}}, {init}, lambda a, b: lax.{op}(a, b), {params})"
    else:
        expr = f"lax.{name}({{0}}, {params})"
    g.emit1(name, expr, [x], t, out, _noise(t, op == "add"))


def gen_cumulative(g) -> None:
    name = g.choice(CUMULATIVE)
    x = g.operand(of_kinds(CUMULATIVE[name]), min_rank=1)
    t, shape = g.avals[x]
    axis, reverse = g.integer(0, len(shape) - 1), g.chance(0.3)
    g.emit1(name, f"lax.{name}({{0}}, {axis}, reverse={reverse})", [x], t, shape,
            _noise(t, name in ("cumsum", "cumprod")))


def gen_select_and_scatter_add(g) -> None:
    x = g.operand(of_kinds("suf"), min_rank=1)
    t, shape = g.avals[x]
    window = tuple(g.integer(1, 3) for _ in shape)
    strides = tuple(g.choice([1, 2]) for _ in shape)
    padding = tuple((g.choice([0, 0, 1]), g.choice([0, 1])) for _ in shape)
    out = []
    for d, w, s, (lo, hi) in zip(shape, window, strides, padding):
        padded = d + lo + hi
        out.append(0 if w > padded else (padded - w) // s + 1)
    source = g.derive(t, tuple(out))
    select = g.choice(["ge", "le"])
    g.emit1("select_and_scatter_add", f"lax.select_and_scatter_add({{0}}, {{1}}, {select!r}, "
            f"{window!r}, {strides!r}, {padding!r})", [source, x], t, shape,
            _noise(t, True))


def gen_sort(g) -> None:
    x = g.operand(of_kinds("psufc"), min_rank=1)
    t, shape = g.avals[x]
    dim = g.integer(0, len(shape) - 1)
    if g.chance(0.4):
        stable = g.chance(0.5)
        g.emit1("sort", f"lax.sort({{0}}, {dim}, is_stable={stable})", [x], t, shape)
        return
    others = [g.derive(g.choice(of_kinds("psufc")), shape) for _ in range(g.integer(1, 2))]
    operands = [x] + others
    keys = g.integer(1, len(operands))
    refs = ", ".join(f"{{{i}}}" for i in range(len(operands)))
    g.emit("sort", f"lax.sort(({refs},), {dim}, is_stable=True, num_keys={keys})", operands,
           [g.avals[o] for o in operands], multi=True)


def gen_top_k(g) -> None:
    x = g.operand(of_kinds("psuf"), min_rank=1)
    t, shape = g.avals[x]
    k = g.integer(0, shape[-1])
    out = shape[:-1] + (k,)
    g.emit("top_k", f"lax.top_k({{0}}, {k})", [x], [(t, out), ("s32", out)], multi=True)
