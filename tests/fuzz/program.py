"""A fuzz program: inputs, a list of nodes (one ``lax.*`` call each), outputs
and layouts; rendered as Python source, as a standalone repro script, and
edited by the shrinker (dead-code elimination, cutting a node into an input).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .values import ARR_SOURCE, COMPLEX, FLOATS, array_text

Aval = tuple  # (element type name, dimensions)


@dataclass
class Input:
    name: str
    type: str
    shape: tuple[int, ...]
    value: np.ndarray              # storage form: bf16 as uint16 words
    layout: str | None = None      # layout text for ``in_layouts``


@dataclass
class Node:
    """``outs = expr.format(*args)``; ``noise`` says where the reference runs
    used to estimate rounding sensitivity perturb values: ``"out"`` (the
    result), ``"outz"`` (the result, whose zeros' sign is free too), ``"outu"``
    (as ``"outz"``, by ulps of max(|result|, 1): complex atan2) or ``"inout"``
    (the float operands too, and the sign of zero: accumulations, complex pow)."""

    outs: tuple[str, ...]
    avals: tuple[Aval, ...]
    expr: str
    args: tuple[str, ...]
    op: str
    noise: str = ""
    multi: bool = False            # the expression returns a tuple (unpacked into outs)
    family: str = ""               # the op family whose rule emitted it (not its helpers)


@dataclass
class Program:
    seed: int
    inputs: list[Input]
    nodes: list[Node]
    outputs: list[str]
    out_layouts: list[str | None]
    notes: list[str] = field(default_factory=list)

    def avals(self) -> dict[str, Aval]:
        out = {i.name: (i.type, tuple(i.shape)) for i in self.inputs}
        for n in self.nodes:
            out.update(zip(n.outs, n.avals))
        return out

    def ops(self) -> list[str]:
        return [n.op for n in self.nodes]

    def families(self) -> set[str]:
        return {n.family for n in self.nodes if n.family}

    # -- source ---------------------------------------------------------------------------
    def source(self, noise: bool = False, returns: str = "outputs") -> str:
        """``def f(...)``; with ``noise``, float values pass through ``_n``
        (:class:`tests.fuzz.compare.Perturb`); with ``returns="all"``, every
        value is also stored into the dict ``_r`` as it is computed."""
        lines = [f"def f({', '.join(i.name for i in self.inputs)}):"]
        for n in self.nodes:
            args = [f"_n({a})" if noise and n.noise == "inout" else a for a in n.args]
            expr = n.expr.format(*args)
            if noise and n.noise:
                expr = {"out": f"_n({expr})", "outu": f"_n({expr}, zeros=True, unit=True)"}.get(
                    n.noise, f"_n({expr}, zeros=True)")
            elif noise and any(t in FLOATS or t in COMPLEX for t, _ in n.avals):
                expr = f"_n({expr}, exact=True)"  # the sign of NaNs is free
            target = ", ".join(n.outs) + ("," if len(n.outs) == 1 and n.multi else "")
            lines.append(f"    {target} = {expr}")
            if returns == "all":
                lines += [f"    _r[{o!r}] = {o}" for o in n.outs]
        lines.append(f"    return ({', '.join(self.outputs)},)")
        return "\n".join(lines) + "\n"

    def in_layouts(self) -> list[str | None]:
        return [i.layout for i in self.inputs]

    def repro(self, comment: str = "") -> str:
        """A standalone script: builds the inputs, runs ``f`` eagerly (the
        reference) and compiled, and prints both."""
        head = "\n".join(f"# {line}" for line in comment.splitlines() if line.strip())
        args = ",\n        ".join(array_text(i.type, i.value) for i in self.inputs)
        return f'''{head}
import os
os.environ.setdefault("NUMXLA_ENABLE_X64", "1")  # 64-bit inputs keep their types

import numpy as np
import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import BF16Array, bf16_array
from numxla.tracer.shapes import bf16_to_f32

{ARR_SOURCE}

{self.source()}

args = ({args}{"," if len(self.inputs) == 1 else ""})
in_layouts = {self.in_layouts()!r}
out_layouts = {list(self.out_layouts)!r}


def show(x):
    bf16 = isinstance(x, BF16Array) or "bf16" in str(getattr(x, "xla_shape", ""))
    return bf16_to_f32(np.asarray(x)) if bf16 else np.asarray(x)


want = f(*args)  # the reference semantics (NumPy)
got = jit(f, tiered=False, in_layouts=in_layouts, out_layouts=out_layouts)(*args)
for i, (g, w) in enumerate(zip(got, want)):
    print(f"result {{i}}: {{getattr(g, 'xla_shape', '')}}")
    print("  compiled: ", repr(show(g)).replace(chr(10), chr(10) + "  "))
    print("  reference:", repr(show(w)).replace(chr(10), chr(10) + "  "))
'''

    # -- edits for the shrinker -------------------------------------------------------------
    def copy(self) -> Program:
        return dataclasses.replace(self, inputs=list(self.inputs), nodes=list(self.nodes),
                                   outputs=list(self.outputs), out_layouts=list(self.out_layouts),
                                   notes=list(self.notes))

    def dce(self, strict: bool = True) -> Program:
        """Drop nodes and inputs no output depends on; ``strict``: also the
        arguments a node's expression does not use (a loop's unused capture)."""
        live = set(self.outputs)
        kept = []
        for n in reversed(self.nodes):
            if live.intersection(n.outs):
                kept.append(n)
                live.update(a for i, a in enumerate(n.args)
                            if not strict or f"{{{i}}}" in n.expr)
        p = self.copy()
        p.nodes = kept[::-1]
        p.inputs = [i for i in self.inputs if i.name in live]
        return p

    def cut(self, index: int, values: dict[str, np.ndarray]) -> Program:
        """Node ``index`` replaced by inputs holding its reference values."""
        p = self.copy()
        node = p.nodes.pop(index)
        for name, (t, _) in zip(node.outs, node.avals):
            value = np.asarray(values[name])
            p.inputs.append(Input(name, t, value.shape, value))
        return p.dce()

    def with_output(self, k: int, name: str) -> Program:
        p = self.copy()
        p.outputs[k], p.out_layouts[k] = name, None
        return p.dce()

    def halved(self, k: int, dim: int, upper: bool = False) -> Program:
        """Input ``k`` cut to the first (or last) half of dimension ``dim``."""
        p = self.copy()
        inp = p.inputs[k]
        index = [slice(None)] * len(inp.shape)
        half = (inp.shape[dim] + 1) // 2
        index[dim] = slice(inp.shape[dim] - half, None) if upper else slice(0, half)
        value = np.ascontiguousarray(inp.value[tuple(index)])
        p.inputs[k] = Input(inp.name, inp.type, value.shape, value, inp.layout)
        return p

    def without_output(self, k: int) -> Program:
        p = self.copy()
        del p.outputs[k], p.out_layouts[k]
        return p.dce()
