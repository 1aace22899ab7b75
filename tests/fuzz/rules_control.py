"""Rules for control flow: while_loop (trip count bounded: at most 4), fori_loop
(static bounds: a scan), cond and switch (an out-of-range index runs the last
branch).  Bodies are element-wise expressions that keep the carry's type and
shape, sometimes closing over an outer value."""
from __future__ import annotations

from .rules_elementwise import noise, same_type_expr
from .values import of_kinds


def _body(g, t: str, arg: str, capture: str | None) -> tuple[str, str]:
    """A body expression of ``arg`` and whether it is noisy."""
    expr, accuracy = same_type_expr(g, t, arg, capture)
    if g.chance(0.3):  # two ops deep
        expr, second = same_type_expr(g, t, expr, capture)
        accuracy = max(accuracy, second, key=" crtap".index)  # the looser class
    return expr, noise(accuracy, t)


def _capture(g, t: str, shape, args: list[str]) -> str | None:
    if not g.chance(0.4):
        return None
    args.append(g.derive(t, shape))
    return f"{{{len(args) - 1}}}"


def gen_while(g) -> None:
    x = g.operand(of_kinds("psufc"))
    t, shape = g.avals[x]
    args = [x]
    capture = _capture(g, t, shape, args)
    body, noisy = _body(g, t, "c[1]", capture)
    if g.chance(0.5):
        args.append(g.scalar("s32"))
        bound = f"lax.min({{{len(args) - 1}}}, np.int32(4))"
    else:
        bound = f"np.int32({g.integer(0, 4)})"
    g.emit1("while_loop", f"lax.while_loop(lambda c: lax.lt(c[0], {bound}), lambda c: "
            f"(lax.add(c[0], np.int32(1)), {body}), (np.int32(0), {{0}}))[1]", args, t, shape,
            "inout" if noisy else "")


def gen_fori_loop(g) -> None:
    x = g.operand(of_kinds("psufc"))
    t, shape = g.avals[x]
    args = [x]
    capture = _capture(g, t, shape, args)
    body, noisy = _body(g, t, "v", capture)
    if t != "pred" and g.chance(0.3):
        body = f"lax.add({body}, lax.convert_element_type(i, {t!r}))"
    lo = g.integer(0, 2)
    g.emit1("fori_loop", f"lax.fori_loop({lo}, {lo + g.integer(0, 3)}, lambda i, v: {body}, {{0}})",
            args, t, shape, "inout" if noisy else "")


def gen_cond(g) -> None:
    x = g.operand(of_kinds("psufc"))
    t, shape = g.avals[x]
    args = [x]
    capture = _capture(g, t, shape, args)
    branches, noisy = [], False
    count = 2 if g.chance(0.6) else g.integer(1, 3)
    for _ in range(count):
        body, n = _body(g, t, "a", capture) if g.chance(0.8) else ("a", "")
        branches.append(f"lambda a: {body}")
        noisy = noisy or bool(n)
    if count == 2 and g.chance(0.5):
        args.append(g.scalar("pred"))
        expr = f"lax.cond({{{len(args) - 1}}}, {branches[0]}, {branches[1]}, {{0}})"
        op = "cond"
    else:
        name = g.index_input("s32", (), count) or g.scalar("s32")
        args.append(name)
        expr = f"lax.switch({{{len(args) - 1}}}, [{', '.join(branches)}], {{0}})"
        op = "switch"
    g.emit1(op, expr, args, t, shape, "inout" if noisy else "")
