"""Rules for shape ops: reshape, transpose, broadcast_in_dim, slice, pad
(negative and interior padding included), concatenate, rev, iota, and
dynamic_slice / dynamic_update_slice with run-time start indices (XLA
clamps out-of-range starts, which the index inputs often are)."""
from __future__ import annotations

import numpy as np

from .values import ALL_TYPES, INTS, SIGNED, of_kinds


def _factor(g, size: int, rank: int) -> tuple[int, ...]:
    """Dimensions of ``rank`` whose product is ``size``."""
    if size == 0:
        dims = [g.integer(0, 3) for _ in range(rank)]
        if rank:
            dims[g.integer(0, rank - 1)] = 0
        return tuple(dims)
    dims = [1] * rank
    if rank == 0:
        return () if size == 1 else (size,)
    n, p = size, 2
    while n > 1:
        while n % p == 0:
            dims[g.integer(0, rank - 1)] *= p
            n //= p
        p += 1
    return tuple(dims)


def gen_reshape(g) -> None:
    x = g.operand(ALL_TYPES)
    t, shape = g.avals[x]
    size = int(np.prod(shape, dtype=np.int64))
    new = _factor(g, size, g.integer(0 if size == 1 else 1, 4))
    if shape and g.chance(0.2):
        perm = tuple(int(d) for d in g.rng.permutation(len(shape)))
        g.emit1("reshape", f"lax.reshape({{0}}, {new!r}, dimensions={perm!r})", [x], t, new)
    else:
        g.emit1("reshape", f"lax.reshape({{0}}, {new!r})", [x], t, new)


def gen_transpose(g) -> None:
    x = g.operand(ALL_TYPES, min_rank=1)
    t, shape = g.avals[x]
    perm = tuple(int(d) for d in g.rng.permutation(len(shape)))
    g.emit1("transpose", f"lax.transpose({{0}}, {perm!r})", [x], t,
            tuple(shape[d] for d in perm))


def gen_broadcast_in_dim(g) -> None:
    x = g.operand(ALL_TYPES)
    t, shape = g.avals[x]
    rank = g.integer(len(shape), max(len(shape), min(4, len(shape) + 2)))
    dims = tuple(g.subset(range(rank), len(shape)))
    out = [g.integer(0, 3) for _ in range(rank)]
    for i, d in enumerate(dims):
        out[d] = shape[i] if shape[i] != 1 or g.chance(0.3) else g.integer(0, 4)
    g.emit1("broadcast_in_dim", f"lax.broadcast_in_dim({{0}}, {tuple(out)!r}, {dims!r})", [x],
            t, out)


def gen_slice(g) -> None:
    x = g.operand(ALL_TYPES, min_rank=1)
    t, shape = g.avals[x]
    starts, limits, strides, out = [], [], [], []
    for d in shape:
        s = g.integer(0, d)
        e = g.integer(s, d)
        k = g.choice([1, 1, 2, 3])
        starts.append(s), limits.append(e), strides.append(k)
        out.append(-(-(e - s) // k))
    g.emit1("slice", f"lax.slice({{0}}, {tuple(starts)!r}, {tuple(limits)!r}, "
            f"{tuple(strides)!r})", [x], t, out)


def gen_pad(g) -> None:
    x = g.operand(ALL_TYPES)
    t, shape = g.avals[x]
    config, out = [], []
    for d in shape:
        interior = g.choice([0, 0, 1, 2])
        inner = d + max(d - 1, 0) * interior
        lo, hi = g.integer(-2, 2), g.integer(-2, 2)
        while inner + lo + hi < 0:
            lo, hi = lo + 1, hi + 1
        config.append((lo, hi, interior))
        out.append(inner + lo + hi)
    value = g.scalar(t) if g.chance(0.4) else None
    text = "{1}" if value else g.const(t)
    g.emit1("pad", f"lax.pad({{0}}, {text}, {config!r})", [x] + ([value] if value else []), t,
            out)


def gen_concatenate(g) -> None:
    x = g.operand(ALL_TYPES, min_rank=1)
    t, shape = g.avals[x]
    dim = g.integer(0, len(shape) - 1)
    parts = [x]
    for _ in range(g.integer(1, 2)):
        other = list(shape)
        other[dim] = g.integer(0, 3)
        parts.append(x if g.chance(0.2) else g.derive(t, tuple(other)))
    g.rng.shuffle(parts)
    out = list(shape)
    out[dim] = sum(g.avals[p][1][dim] for p in parts)
    refs = ", ".join(f"{{{i}}}" for i in range(len(parts)))
    g.emit1("concatenate", f"lax.concatenate([{refs}], {dim})", parts, t, out)


def gen_rev(g) -> None:
    x = g.operand(ALL_TYPES, min_rank=1)
    t, shape = g.avals[x]
    dims = tuple(g.subset(range(len(shape))))
    g.emit1("rev", f"lax.rev({{0}}, {dims!r})", [x], t, shape)


def gen_iota(g) -> None:
    t = g.choice(of_kinds("sufc"))
    shape = g.shape(g.integer(1, 3))
    dim = g.integer(0, len(shape) - 1)
    g.emit1("broadcasted_iota", f"lax.broadcasted_iota({t!r}, {shape!r}, {dim})", [], t, shape)


def start_indices(g, shape, sizes, first: int) -> tuple[list[str], str]:
    """Start index operands for a dynamic slice of ``sizes`` out of ``shape``:
    literals, or scalar run-time inputs of one integer type; returns the
    names to pass as args and their text (placeholders numbered from ``first``)."""
    t = g.choice(["s32", "s32", "s64", "u32", "s8", "u8"])
    args, texts = [], []
    for d, n in zip(shape, sizes):
        name = g.index_input(t, (), d - n + 1) if g.chance(0.5) else None
        if name is None:
            lo = 0 if t in INTS and t not in SIGNED else -3
            texts.append(g.const(t, g.integer(lo, d + 2)))
        else:
            texts.append(f"{{{first + len(args)}}}")
            args.append(name)
    return args, "(" + "".join(f"{s}, " for s in texts) + ")"


def gen_dynamic_slice(g) -> None:
    x = g.operand(ALL_TYPES)
    t, shape = g.avals[x]
    sizes = tuple(g.integer(0, d) for d in shape)
    args, starts = start_indices(g, shape, sizes, 1)
    g.emit1("dynamic_slice", f"lax.dynamic_slice({{0}}, {starts}, {sizes!r})", [x] + args, t,
            sizes)


def gen_dynamic_update_slice(g) -> None:
    x = g.operand(ALL_TYPES)
    t, shape = g.avals[x]
    sizes = tuple(g.integer(0, d) for d in shape)
    update = g.derive(t, sizes)
    args, starts = start_indices(g, shape, sizes, 2)
    g.emit1("dynamic_update_slice", f"lax.dynamic_update_slice({{0}}, {{1}}, {starts})",
            [x, update] + args, t, shape)
