"""The seeded random-program generator.

``generate(seed)`` builds a small random DAG of 1-8 ops over 1-3 random
inputs of rank 0-4 (zero-size dimensions too) and up to two run-time index
inputs: each step picks an op family from
:data:`tests.fuzz.families.FAMILIES` by weight and lets its rule emit one op
on existing values, which :class:`Gen` finds or derives (convert, reshape,
slice, broadcast: helper nodes, up to 14 nodes in all) with the element
types and shapes the op needs.  Rules emit only programs XLA accepts.
Inputs and outputs get random layouts.  Same seed, same program.
"""
from __future__ import annotations

import numpy as np

from .program import Input, Node, Program
from .values import (
    ALL_TYPES,
    bf16_values,
    index_values,
    random_layout,
    random_values,
    scalar_text,
)

MAX_INDEX_INPUTS = 2
# program features a known numxla bug breaks, which ``--avoid`` leaves out to
# explore the rest (the CI slice keeps them all)
AVOIDABLE = {"scalar-layouts": "layout attributes (tiles, padding) on rank-0 inputs and outputs"}


class Gen:
    """The program under construction and the helpers rules build it with."""

    def __init__(self, seed: int, avoid: tuple[str, ...] = ()):
        self.seed = seed
        self.avoid = avoid
        self.rng = np.random.default_rng(seed)
        self.inputs: list[Input] = []
        self.nodes: list[Node] = []
        self.avals: dict[str, tuple] = {}
        self.index_inputs = 0
        self._count = 0

    # -- random choices --------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, seq):
        seq = list(seq)
        return seq[int(self.rng.integers(0, len(seq)))]

    def integer(self, lo: int, hi: int) -> int:
        """A random int in ``[lo, hi]``."""
        return int(self.rng.integers(lo, hi + 1))

    def subset(self, seq, k: int | None = None) -> list:
        seq = list(seq)
        k = self.integer(0, len(seq)) if k is None else k
        picked = self.rng.choice(len(seq), size=k, replace=False) if k else []
        return [seq[i] for i in sorted(int(i) for i in picked)]

    def extent(self) -> int:
        """Mostly 1-5; zero sometimes, and sometimes past small tiles and vectors."""
        r = self.rng.random()
        return 0 if r < 0.06 else self.integer(6, 19) if r < 0.14 else self.integer(1, 5)

    def shape(self, rank: int | None = None) -> tuple[int, ...]:
        if rank is None:
            rank = int(self.rng.choice(5, p=[0.12, 0.25, 0.3, 0.2, 0.13]))
        dims = [self.extent() for _ in range(rank)]
        while np.prod(dims, dtype=np.int64) > 1024:  # at most 1024 elements
            dims[int(np.argmax(dims))] //= 2
        return tuple(dims)

    def layout(self, t: str, shape) -> str | None:
        layout = random_layout(self.rng, t, tuple(shape))
        return None if not shape and "scalar-layouts" in self.avoid else layout

    # -- values ----------------------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def add_input(self, t: str, shape: tuple[int, ...], value: np.ndarray) -> str:
        name = self.fresh("x")
        self.inputs.append(Input(name, t, tuple(shape), value, self.layout(t, shape)))
        self.avals[name] = (t, tuple(shape))
        return name

    def data_input(self, t: str | None = None, shape: tuple[int, ...] | None = None) -> str:
        t = t or self.choice(ALL_TYPES)
        shape = self.shape() if shape is None else shape
        return self.add_input(t, shape, random_values(self.rng, t, shape))

    def index_input(self, t: str, shape: tuple[int, ...], bound: int) -> str | None:
        """A run-time index array (values mostly in ``[0, bound)``), or None past the budget."""
        if self.index_inputs >= MAX_INDEX_INPUTS:
            return None
        self.index_inputs += 1
        if t == "pred":
            return self.add_input(t, shape, random_values(self.rng, t, shape))
        return self.add_input(t, shape, index_values(self.rng, t, shape, bound))

    def emit(self, op: str, expr: str, args, avals, noise: str = "", multi: bool = False
             ) -> list[str]:
        """Append a node computing ``expr.format(*args)``; returns its output names."""
        outs = tuple(self.fresh() for _ in avals)
        avals = tuple((t, tuple(int(d) for d in s)) for t, s in avals)
        self.nodes.append(Node(outs, avals, expr, tuple(args), op, noise, multi))
        self.avals.update(zip(outs, avals))
        return list(outs)

    def emit1(self, op: str, expr: str, args, t: str, shape, noise: str = "") -> str:
        return self.emit(op, expr, args, [(t, shape)], noise)[0]

    def names(self, types=None, rank=None, min_rank: int = 0, shape=None,
              nonempty: bool = False) -> list[str]:
        out = []
        for name, (t, s) in self.avals.items():
            if types is not None and t not in types:
                continue
            if (rank is not None and len(s) != rank) or len(s) < min_rank:
                continue
            if (shape is not None and tuple(s) != tuple(shape)) or (nonempty and 0 in s):
                continue
            out.append(name)
        return out

    def pick(self, **filters) -> str | None:
        """An existing value (recent ones likelier: chains rather than fans)."""
        found = self.names(**filters)
        if not found:
            return None
        order = list(self.avals)
        w = np.array([1.0 + order.index(n) for n in found])
        return found[int(self.rng.choice(len(found), p=w / w.sum()))]

    def operand(self, types, min_rank: int = 0, rank=None, nonempty: bool = False) -> str:
        """A value of one of ``types``: an existing one, or one converted."""
        name = self.pick(types=types, min_rank=min_rank, rank=rank, nonempty=nonempty)
        if name is not None and self.chance(0.85):
            return name
        source = self.pick(min_rank=min_rank, rank=rank, nonempty=nonempty)
        if source is None:
            shape = self.shape(rank if rank is not None else max(min_rank, self.integer(0, 3)))
            if nonempty:
                shape = tuple(max(d, 1) for d in shape)
            return self.data_input(self.choice(types), shape)
        return self.convert(source, self.choice(types))

    def convert(self, name: str, t: str) -> str:
        src, shape = self.avals[name]
        if src == t:
            return name
        return self.emit1("convert_element_type", f"lax.convert_element_type({{0}}, {t!r})",
                          [name], t, shape)

    def const(self, t: str, value=None) -> str:
        """A scalar literal of type ``t``: ``value``, or an edge or small value."""
        if value is None:
            sample = random_values(self.rng, t, (1,), edge_rate=0.5)
            value = bf16_values(sample)[0] if t == "bf16" else sample[0]
        return scalar_text(t, value)

    def derive(self, t: str, shape: tuple[int, ...]) -> str:
        """A value of type ``t`` and ``shape``, found or built from existing ones."""
        shape = tuple(shape)
        same = self.names(shape=shape)
        exact = [n for n in same if self.avals[n][0] == t]
        if exact and self.chance(0.8):
            return self.choice(exact)
        if same and self.chance(0.7):
            return self.convert(self.choice(same), t)
        size = int(np.prod(shape, dtype=np.int64))
        ways = ["broadcast"]
        sized = [n for n in self.avals if int(np.prod(self.avals[n][1], dtype=np.int64)) == size]
        if sized:
            ways += ["reshape"] * 2
        wider = [n for n, (_, s) in self.avals.items()
                 if len(s) == len(shape) and all(a >= b for a, b in zip(s, shape))]
        if wider:
            ways += ["slice"] * 2
        if t != "pred":
            ways.append("iota")
        way = self.choice(ways)
        if way == "reshape":
            src = self.convert(self.choice(sized), t)
            return self.emit1("reshape", f"lax.reshape({{0}}, {shape!r})", [src], t, shape)
        if way == "slice":
            src = self.convert(self.choice(wider), t)
            return self.emit1("slice", f"lax.slice({{0}}, {(0,) * len(shape)!r}, {shape!r})",
                              [src], t, shape)
        if way == "iota":
            dim = self.integer(0, len(shape) - 1) if shape else 0
            if not shape:
                return self.emit1("convert_element_type", f"lax.convert_element_type("
                                  f"{self.const('s32', self.integer(-3, 3))}, {t!r})", [], t, ())
            return self.emit1("broadcasted_iota", f"lax.broadcasted_iota({t!r}, {shape!r}, {dim})",
                              [], t, shape)
        scalars = self.names(rank=0)
        if scalars and self.chance(0.5):
            scalar = self.convert(self.choice(scalars), t)
            return self.emit1("broadcast_in_dim", f"lax.broadcast_in_dim({{0}}, {shape!r}, ())",
                              [scalar], t, shape)
        return self.emit1("broadcast_in_dim",
                          f"lax.broadcast_in_dim({self.const(t)}, {shape!r}, ())", [], t, shape)

    def scalar(self, t: str) -> str:
        """A rank-0 value of type ``t``: an existing one, a run-time input or a literal."""
        found = self.names(types=(t,), rank=0)
        if found and self.chance(0.6):
            return self.choice(found)
        if self.chance(0.5):
            name = self.index_input(t, (), 4)
            if name is not None:
                return name
        return self.emit1("literal", f"np.asarray({self.const(t)})" if t != "bf16"
                          else self.const(t), [], t, ())


def generate(seed: int, exclude: tuple[str, ...] = (), only: tuple[str, ...] = (),
             avoid: tuple[str, ...] = ()) -> Program:
    """The program of ``seed``; ``exclude``/``only`` filter op families,
    ``avoid`` names features of :data:`AVOIDABLE` to leave out."""
    from .families import FAMILIES  # the rule tables

    g = Gen(seed, avoid)
    for _ in range(g.integer(1, 3)):
        g.data_input()
    families = [f for f in FAMILIES if f not in exclude and (not only or f in only)]
    weights = np.array([FAMILIES[f][0] for f in families], float)
    target, emitted = g.integer(1, 8), 0
    for _ in range(40):  # ops to emit (the helpers they need come on top, up to 14 nodes)
        if emitted >= target or len(g.nodes) >= 14:
            break
        family = families[int(g.rng.choice(len(families), p=weights / weights.sum()))]
        before = len(g.nodes)
        FAMILIES[family][1](g)
        if len(g.nodes) > before:
            g.nodes[-1].family = family  # the rule's op comes last, after its helpers
            emitted += 1
    used = {a for n in g.nodes for a in n.args}
    values = list(g.avals)
    sinks = [n for n in values if n not in used and not n.startswith("x")]
    if not sinks or g.chance(0.2):
        sinks.append(g.choice(values))
    outputs = sinks[-4:]
    if g.chance(0.08):  # the same value twice, in two layouts
        outputs.append(g.choice(outputs))
    out_layouts = [g.layout(*g.avals[o]) for o in outputs]
    return Program(seed, g.inputs, g.nodes, outputs, out_layouts).dce(strict=False)
