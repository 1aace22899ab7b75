"""Rules for dot_general, conv_general_dilated, gather and scatter."""
from __future__ import annotations

from .values import BITS, COMPLEX, FLOATS, INTS, SIGNED, UNSIGNED, kind, of_kinds

# operand kind -> the types preferred_element_type may name (JAX's table; floats
# may narrow, integers may not)
PREFERRED = {"pred": INTS + FLOATS, "signed": SIGNED + FLOATS,
             "unsigned": INTS + FLOATS, "float": FLOATS, "complex": COMPLEX}


def _preferred(g, t: str) -> str | None:
    if not g.chance(0.25):
        return None
    options = [u for u in PREFERRED[kind(t)]
               if kind(t) == "float" or BITS[u] >= BITS[t]]
    return g.choice(options) if options else None


def _noise(t: str) -> str:
    return "inout" if t in FLOATS or t in COMPLEX else ""


def gen_dot_general(g) -> None:
    x = g.operand(of_kinds("psufc"), min_rank=1)
    t, shape = g.avals[x]
    dims = list(range(len(shape)))
    batch = g.subset(dims, min(len(dims), g.choice([0, 0, 1])))
    contract = g.subset([d for d in dims if d not in batch], None)
    free = [d for d in dims if d not in batch and d not in contract]
    rhs_free = [g.integer(0, 4) for _ in range(g.choice([0, 1, 1, 2]))]
    # rhs dims: batch first, then contracting and free dims in random order
    tail = [("c", c) for c in contract] + [("f", n) for n in rhs_free]
    g.rng.shuffle(tail)
    rhs_shape = [shape[b] for b in batch] + [shape[v] if k == "c" else v for k, v in tail]
    rhs_contract = [len(batch) + i for i, (k, _) in enumerate(tail) if k == "c"]
    order = [v for k, v in tail if k == "c"]
    rc = tuple(rhs_contract[order.index(c)] for c in contract)
    y = g.derive(t, tuple(rhs_shape))
    dn = ((tuple(contract), rc), (tuple(batch), tuple(range(len(batch)))))
    out = [shape[b] for b in batch] + [shape[f] for f in free] + \
        [v for k, v in tail if k == "f"]
    preferred = _preferred(g, t)
    extra = f", preferred_element_type={preferred!r}" if preferred else ""
    g.emit1("dot_general", f"lax.dot_general({{0}}, {{1}}, {dn!r}{extra})", [x, y],
            preferred or t, out, _noise(preferred or t))


SPECS = {1: [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"), ("CHN", "IHO", "HNC")],
         2: [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("HCNW", "IWHO", "WNCH")]}


def _layout(spec: str, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[c] for c in spec)


def gen_conv(g) -> None:
    t = g.choice(of_kinds("f") * 4 + of_kinds("suc"))
    nspatial = g.choice([1, 1, 2])
    lhs_spec, rhs_spec, out_spec = g.choice(SPECS[nspatial])
    spatial = [ch for ch in rhs_spec if ch not in "OI"]  # JAX orders them as rhs_spec does
    groups, batch_groups = 1, 1
    if g.chance(0.2):
        groups = g.choice([2, 3])
    elif g.chance(0.15):
        batch_groups = 2
    n = g.integer(0, 2) * batch_groups if batch_groups > 1 else g.integer(0, 2)
    c = g.integer(1, 2) * groups
    o = g.integer(1, 2) * groups * batch_groups
    lhs_sizes = {"N": n, "C": c}
    rhs_sizes = {"O": o, "I": c // groups}
    out_sizes = {"N": n // batch_groups, "C": o}
    strides, padding, lhs_dil, rhs_dil = [], [], [], []
    for s in spatial:
        d, w = g.integer(0, 5), g.integer(1, 3)
        lhs_sizes[s], rhs_sizes[s] = d, w
        strides.append(g.choice([1, 1, 2]))
        lhs_dil.append(g.choice([1, 1, 2]))
        rhs_dil.append(g.choice([1, 1, 2]))
        padding.append((g.integer(-1, 2), g.integer(-1, 2)))
        padded = (max(d - 1, 0) * lhs_dil[-1] + 1 if d else 0) + sum(padding[-1])
        while padded < 0:
            padding[-1] = (padding[-1][0] + 1, padding[-1][1])
            padded += 1
        effective = (w - 1) * rhs_dil[-1] + 1
        out_sizes[s] = 0 if effective > padded else (padded - effective) // strides[-1] + 1
    lhs = g.derive(t, _layout(lhs_spec, lhs_sizes))
    rhs = g.derive(t, _layout(rhs_spec, rhs_sizes))
    preferred = _preferred(g, t)
    extra = f", preferred_element_type={preferred!r}" if preferred else ""
    g.emit1("conv_general_dilated",
            f"lax.conv_general_dilated({{0}}, {{1}}, {tuple(strides)!r}, {padding!r}, "
            f"lhs_dilation={tuple(lhs_dil)!r}, rhs_dilation={tuple(rhs_dil)!r}, "
            f"dimension_numbers={(lhs_spec, rhs_spec, out_spec)!r}, "
            f"feature_group_count={groups}, batch_group_count={batch_groups}{extra})",
            [lhs, rhs], preferred or t, _layout(out_spec, out_sizes), _noise(preferred or t))


def _indices(g, operand_shape, index_dims, batch_shape, unique: bool = False) -> str:
    """An index array input ``batch_shape + (len(index_dims),)`` into ``operand_shape``."""
    t = g.choice(["s32", "s32", "s64", "u32", "s8", "u16"])
    shape = tuple(batch_shape) + (len(index_dims),)
    bound = max([operand_shape[d] for d in index_dims], default=1)
    name = g.index_input(t, shape, bound)
    if name is None:
        name = g.derive(t, shape)
    if unique:  # distinct index vectors: a permutation of coordinates, row by row
        import numpy as np
        inp = next(i for i in g.inputs if i.name == name) if name.startswith("x") else None
        if inp is None or inp.type != t:
            return None
        rows = inp.value.reshape(-1, len(index_dims)) if len(index_dims) else None
        if rows is not None and len(rows):
            base = g.rng.permutation(max(bound + 2, len(rows)))[:len(rows)] - 1
            rows[:, 0] = np.clip(base, 0 if t in UNSIGNED else -1, None).astype(rows.dtype)
            if len(set(rows[:, 0].tolist())) != len(rows):
                return None
    return name


def gen_gather(g) -> None:
    x = g.operand(of_kinds("psufc"), min_rank=1)
    t, shape = g.avals[x]
    rank = len(shape)
    index_dims = g.subset(range(rank), g.integer(1, rank))
    g.rng.shuffle(index_dims)
    sizes = [g.integer(0, d) if d else 0 for d in shape]
    collapsed = [d for d in index_dims if sizes[d] == 1 and g.chance(0.6)]
    batch_shape = g.shape(g.integer(0, 2))
    indices = _indices(g, shape, index_dims, batch_shape)
    offset_count = rank - len(collapsed)
    out_rank = len(batch_shape) + offset_count
    offset_dims = tuple(g.subset(range(out_rank), offset_count))
    offsets = [sizes[d] for d in range(rank) if d not in collapsed]
    batch = iter(batch_shape)
    it = iter(offsets)
    out = [next(it) if i in offset_dims else next(batch) for i in range(out_rank)]
    dn = (f"lax.GatherDimensionNumbers(offset_dims={offset_dims!r}, collapsed_slice_dims="
          f"{tuple(sorted(collapsed))!r}, start_index_map={tuple(index_dims)!r})")
    mode = g.choice([None, "clip", "fill", "promise_in_bounds"])
    extra = f", mode={mode!r}" if mode else ""
    g.emit1("gather", f"lax.gather({{0}}, {{1}}, {dn}, {tuple(sizes)!r}{extra})",
            [x, indices], t, out)


SCATTERS = {"scatter": ("psufc", ""), "scatter_add": ("psufc", "r"),
            "scatter_mul": ("psufc", "r"), "scatter_min": ("psuf", ""),
            "scatter_max": ("psuf", "")}


def gen_scatter(g) -> None:
    op = g.choice(SCATTERS)
    kinds, accuracy = SCATTERS[op]
    x = g.operand(of_kinds(kinds), min_rank=1)
    t, shape = g.avals[x]
    rank = len(shape)
    index_dims = g.subset(range(rank), g.integer(1, rank))
    g.rng.shuffle(index_dims)
    replace = op == "scatter"
    # a replacing scatter must not update an element twice: window size 1 (inserted)
    # on the indexed dims, distinct index vectors
    inserted = sorted(d for d in index_dims if shape[d] and (replace or g.chance(0.5)))
    window = [min(1, shape[d]) if d in index_dims and (replace or g.chance(0.5))
              else g.integer(0, shape[d]) for d in range(rank)]
    window = [w if d not in inserted else 1 for d, w in enumerate(window)]
    batch_shape = g.shape(1) if replace else g.shape(g.integer(0, 2))
    indices = _indices(g, shape, index_dims, batch_shape, unique=replace)
    if indices is None:
        return
    window_shape = [w for d, w in enumerate(window) if d not in inserted]
    out_rank = len(batch_shape) + len(window_shape)
    window_dims = tuple(g.subset(range(out_rank), len(window_shape)))
    batch, it = iter(batch_shape), iter(window_shape)
    upd_shape = tuple(next(it) if i in window_dims else next(batch) for i in range(out_rank))
    updates = g.derive(t, upd_shape)
    dn = (f"lax.ScatterDimensionNumbers(update_window_dims={window_dims!r}, "
          f"inserted_window_dims={tuple(inserted)!r}, "
          f"scatter_dims_to_operand_dims={tuple(index_dims)!r})")
    mode = None if replace else g.choice([None, "clip", "fill"])
    extra = f", mode={mode!r}" if mode else ""
    noise = "inout" if accuracy and (t in FLOATS or t in COMPLEX) else ""
    g.emit1(op, f"lax.{op}({{0}}, {{1}}, {{2}}, {dn}{extra})", [x, indices, updates], t, shape,
            noise)
