"""Lowerings of Sort (multi-operand, ``num_keys``, a comparator inlined as
scalar code, or XLA's default total order) and TopK.

Both work one slice at a time: a loop nest over every dimension but the
sorted one (in the first operand's physical order) copies the slice of each
operand into a contiguous scratch array, sorts a permutation of ``0..n-1``
with a stable bottom-up merge sort, and writes each result's slice through
the permutation.  The merge takes the right run's element only when it
goes strictly before the left run's one (``less(right, left)``), so equal
elements keep their order: the sort is stable whatever ``is_stable`` says,
as the reference is.

``less`` is the comparator's sub-graph emitted as scalar statements on the
two elements (``ctx.scalar_graph``), or, without a comparator, XLA's total
order on the first ``num_keys`` operands compared lexicographically: each
float key becomes an integer of its width whose order is the total order
(``bits ^ 0x7f..f`` for negatives, so -0 < +0) with every NaN mapped to the
largest integer (NaNs last and equal, whatever their sign, as the
reference); complex keys compare real then imaginary parts.  TopK orders by
the same integer keys with the NaNs kept apart (+NaN the largest, -NaN the
smallest), largest first and ties lower index first.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Sequence

from numxla.primitives import sorting
from numxla.tracer.graph import Equation, Var
from numxla.tracer.shapes import PrimitiveType as PT

from ..codegen import LoweringContext, dtype_name
from ..layout_index import loop_order
from ..registry import lowerings
from .reductions import cast, loops_in_order, read_scalar

# float width -> (signed integer of that width, its largest value)
_FLOAT_KEYS = {32: ("np.int32", 0x7FFFFFFF), 64: ("np.int64", 0x7FFFFFFFFFFFFFFF)}


@contextlib.contextmanager
def _slices(ctx: LoweringContext, x: Var, dimension: int) -> Iterator[list[str]]:
    """Loops over every index of ``x`` but ``dimension`` (physical order);
    yields the index with ``dimension`` left empty for the caller to fill."""
    dims = x.aval.dimensions
    idx = [ctx.fresh("s") for _ in dims]
    order = [d for d in loop_order(x.aval.shape) if d != dimension]
    with loops_in_order(ctx, order, dims, idx):
        yield idx


def _at(index: Sequence[str], dimension: int, value: str) -> list[str]:
    out = list(index)
    out[dimension] = value
    return out


def _merge_sort(ctx: LoweringContext, n: int, perm: str, tmp: str,
                less: Callable[[str, str, str], None]) -> str:
    """Emit a stable bottom-up merge sort of ``perm`` (already ``0..n-1``)
    using ``tmp``; ``less(flag, a, b)`` emits ``flag = <a goes before b>``
    for positions ``a``, ``b``.  Returns the name of the sorted array."""
    src, dst, width = ctx.fresh("src"), ctx.fresh("dst"), ctx.fresh("width")
    lo, mid, hi, i, j, k, right = (ctx.fresh(p) for p in ("lo", "mid", "hi", "i", "j", "k",
                                                            "right"))
    ctx.emit(f"{src} = {perm}")
    ctx.emit(f"{dst} = {tmp}")
    ctx.emit(f"{width} = 1")
    with ctx.block(f"while {width} < {n}:"):
        ctx.emit(f"{lo} = 0")
        with ctx.block(f"while {lo} < {n}:"):
            ctx.emit(f"{mid} = min({lo} + {width}, {n})")
            ctx.emit(f"{hi} = min({lo} + 2 * {width}, {n})")
            ctx.emit(f"{i} = {lo}")
            ctx.emit(f"{j} = {mid}")
            with ctx.block(f"for {k} in range({lo}, {hi}):"):
                ctx.emit(f"{right} = {j} < {hi}")
                with ctx.block(f"if {right} and {i} < {mid}:"):
                    less(right, f"{src}[{j}]", f"{src}[{i}]")
                with ctx.block(f"if {right}:"):
                    ctx.emit(f"{dst}[{k}] = {src}[{j}]")
                    ctx.emit(f"{j} += 1")
                with ctx.block("else:"):
                    ctx.emit(f"{dst}[{k}] = {src}[{i}]")
                    ctx.emit(f"{i} += 1")
            ctx.emit(f"{lo} += 2 * {width}")
        ctx.emit(f"{src}, {dst} = {dst}, {src}")
        ctx.emit(f"{width} *= 2")
    return src


class _Keys:
    """Integer keys ordered as XLA's total order, for one operand's slice."""

    def __init__(self, ctx: LoweringContext, t: PT, values: str, n: int, *, nan_last: bool):
        self.ctx, self.t, self.values, self.nan_last = ctx, t, values, nan_last
        self.parts: list[tuple[str, str, str, int]] = []  # (key, float view, int view, top)
        if t.is_complex or t.is_floating:
            width = {PT.C64: 32, PT.C128: 64, PT.F64: 64}.get(t, 32)
            int_type, top = _FLOAT_KEYS[width]
            float_type = "np.float64" if width == 64 else "np.float32"
            for _ in range(2 if t.is_complex else 1):
                key, fview = ctx.fresh("key"), ctx.fresh("fbits")
                iview = ctx.fresh("ibits")
                ctx.emit(f"{key} = empty_buf({n}, {int_type})")
                ctx.emit(f"{fview} = empty_buf(1, {float_type})")
                ctx.emit(f"{iview} = {fview}.view({int_type})")
                self.parts.append((key, fview, iview, top))
            self.names = [p[0] for p in self.parts]
        else:  # integers and pred order as they are
            self.names = [values]

    def fill(self, p: str) -> None:
        """Emit the computation of the keys of position ``p``."""
        ctx = self.ctx
        components = ([f"{self.values}[{p}].real", f"{self.values}[{p}].imag"]
                      if self.t.is_complex else [f"{self.values}[{p}]"])
        for (key, fview, iview, top), value in zip(self.parts, components):
            bits = ctx.fresh("b")
            ctx.emit(f"{fview}[0] = {value}")
            ctx.emit(f"{bits} = {iview}[0]")
            with ctx.block(f"if {bits} < 0:"):
                ctx.emit(f"{bits} = {bits} ^ {top}")
            if self.nan_last:
                with ctx.block(f"if {fview}[0] != {fview}[0]:"):
                    ctx.emit(f"{bits} = {top}")
            ctx.emit(f"{key}[{p}] = {bits}")


def _lexicographic_less(ctx: LoweringContext, keys: Sequence[str], flag: str, a: str, b: str,
                        *, descending: bool = False) -> None:
    """Emit ``flag = keys[a] < keys[b]`` compared lexicographically over ``keys``."""
    before = ">" if descending else "<"
    ctx.emit(f"{flag} = False")
    with contextlib.ExitStack() as stack:
        for n, key in enumerate(keys):
            with ctx.block(f"if {key}[{a}] {before} {key}[{b}]:"):
                ctx.emit(f"{flag} = True")
            if n + 1 < len(keys):
                stack.enter_context(ctx.block(f"elif {key}[{a}] == {key}[{b}]:"))


# --------------------------------------------------------------------------
# Sort
# --------------------------------------------------------------------------

def _lower_sort(ctx: LoweringContext, eq: Equation) -> None:
    comparator = eq.params["comparator"]
    dimension, num_keys = eq.params["dimension"], eq.params["num_keys"]
    n_ops = len(eq.outputs)
    xs, extra = eq.inputs[:n_ops], eq.inputs[n_ops:]
    outs = eq.outputs
    types = [x.aval.element_type for x in xs]
    n = xs[0].aval.dimensions[dimension]
    for out in outs:
        ctx.alloc(out)
    if xs[0].aval.size == 0:
        return
    extra_texts = [read_scalar(ctx, a) for a in extra]
    values = [ctx.fresh("vals") for _ in xs]
    for name, t in zip(values, types):
        ctx.emit(f"{name} = empty_buf({n}, {dtype_name(t)})")
    perm, tmp = ctx.fresh("perm"), ctx.fresh("tmp")
    ctx.emit(f"{perm} = empty_buf({n}, np.int64)")
    ctx.emit(f"{tmp} = empty_buf({n}, np.int64)")
    keys = [] if comparator is not None else \
        [_Keys(ctx, t, v, n, nan_last=True) for t, v in zip(types[:num_keys], values)]
    p = ctx.fresh("p")
    with _slices(ctx, xs[0], dimension) as idx:
        with ctx.block(f"for {p} in range({n}):"):
            for x, name, t in zip(xs, values, types):
                ctx.emit(f"{name}[{p}] = {cast(t, ctx.read(x, _at(idx, dimension, p)))}")
            for k in keys:
                k.fill(p)
            ctx.emit(f"{perm}[{p}] = {p}")
        if comparator is not None:
            def less(flag: str, a: str, b: str) -> None:
                args = [v for name in values for v in (f"{name}[{a}]", f"{name}[{b}]")]
                (result,) = ctx.scalar_graph(comparator, [*args, *extra_texts])
                ctx.emit(f"{flag} = {result}")
        else:
            names = [name for k in keys for name in k.names]

            def less(flag: str, a: str, b: str) -> None:
                _lexicographic_less(ctx, names, flag, a, b)
        order = _merge_sort(ctx, n, perm, tmp, less)
        with ctx.block(f"for {p} in range({n}):"):
            for out, name in zip(outs, values):
                ctx.write(out, _at(idx, dimension, p), f"{name}[{order}[{p}]]")


lowerings[sorting.sort_p] = _lower_sort


# --------------------------------------------------------------------------
# TopK
# --------------------------------------------------------------------------

def _lower_top_k(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (values_out, indices_out) = eq.inputs, eq.outputs
    k, largest = eq.params["k"], eq.params["largest"]
    t = x.aval.element_type
    dimension = x.aval.ndim - 1
    n = x.aval.dimensions[dimension]
    ctx.alloc(values_out)
    ctx.alloc(indices_out)
    if x.aval.size == 0 or k == 0:
        return
    values = ctx.fresh("vals")
    ctx.emit(f"{values} = empty_buf({n}, {dtype_name(t)})")
    perm, tmp = ctx.fresh("perm"), ctx.fresh("tmp")
    ctx.emit(f"{perm} = empty_buf({n}, np.int64)")
    ctx.emit(f"{tmp} = empty_buf({n}, np.int64)")
    keys = _Keys(ctx, t, values, n, nan_last=False)
    p = ctx.fresh("p")
    with _slices(ctx, x, dimension) as idx:
        with ctx.block(f"for {p} in range({n}):"):
            ctx.emit(f"{values}[{p}] = {cast(t, ctx.read(x, _at(idx, dimension, p)))}")
            keys.fill(p)
            ctx.emit(f"{perm}[{p}] = {p}")
        order = _merge_sort(ctx, n, perm, tmp, lambda flag, a, b: _lexicographic_less(
            ctx, keys.names, flag, a, b, descending=largest))
        with ctx.block(f"for {p} in range({k}):"):
            ctx.write(values_out, _at(idx, dimension, p), f"{values}[{order}[{p}]]")
            ctx.write(indices_out, _at(idx, dimension, p), f"np.int32({order}[{p}])")


lowerings[sorting.top_k_p] = _lower_top_k
