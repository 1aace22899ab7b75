"""Shared helpers for the compile tests.

``rand(shape, dtype, rng=..., bound=...)`` draws test values of any element
type from a module's seeded generator; ``check(got, want)`` and
``check_all`` compare compiled results with the reference semantics (the
same functions run un-jitted); ``relaid(f, args)`` compiles ``f`` with its
parameters and intermediate values in non-default layouts, taken in turn
from ``LAYOUTS`` or from a module's own list of the layouts below.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from numxla.compile import jit
from numxla.compile.jit import Compiled, Lowered
from numxla.tracer import pytree
from numxla.tracer.core import AbstractValue
from numxla.tracer.shapes import Layout, bf16_to_f32


def rand(shape, dtype=np.float32, *, rng: np.random.Generator, bound: int = 100) -> np.ndarray:
    """Values of ``dtype``: standard normal floats (both parts of complexes),
    integers in [-bound, bound) clipped to the type's range, bools half true."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -bound), min(info.max, bound), shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# -- comparing with the reference ---------------------------------------------------------

# by element type (a complex type by its parts): the reductions, sorting, windows and
# library-call tests use these; others pass their own
TOLS = {"bf16": 1e-2, "f16": 1e-2, "f32": 1e-5, "f64": 1e-5}


def is_bf16(x: Any) -> bool:
    """A BF16Array, or an Array of bf16 (both hold the 16-bit words)."""
    shape = getattr(x, "xla_shape", None)
    return type(x).__name__ == "BF16Array" or (
        shape is not None and shape.element_type.short_name == "bf16")


def check(got: Any, want: Any, where: str = "", *, exact: bool = False,
          tol: float | None = None, tols: dict[str, float] = TOLS) -> None:
    """``got`` (compiled) is ``want`` (reference): the same shape and dtype,
    bf16 both or neither; integers and bools equal, and everything when
    ``exact``; floats and complexes within ``tol`` (relative and absolute,
    NaNs where ``want`` has them; bf16 as f32 values), by default the ``tols``
    entry of the element type ("bf16", "f16", "f32", "f64"; a complex type
    by its parts'), and equal when ``tols`` has none."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
    assert g.dtype == w.dtype, f"{where}: dtype {g.dtype} != {w.dtype}"
    bf16 = is_bf16(want)
    assert is_bf16(got) == bf16, f"{where}: bf16 {is_bf16(got)} != {bf16}"
    if bf16:
        kind = "bf16"
    elif w.dtype.kind in "fc":
        kind = f"f{8 * w.dtype.itemsize // (2 if w.dtype.kind == 'c' else 1)}"
    else:
        kind = None
    if tol is None and kind is not None:
        tol = tols.get(kind)
    if exact or kind is None or tol is None:
        np.testing.assert_array_equal(g, w, err_msg=where)
        return
    if bf16:
        g, w = bf16_to_f32(g), bf16_to_f32(w)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=where)


def check_all(got: Any, want: Any, where: str = "", **options: Any) -> None:
    """``check`` each leaf of the pytrees ``got`` and ``want`` (as many of them)."""
    got_leaves, want_leaves = pytree.tree_leaves(got), pytree.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), \
        f"{where}: {len(got_leaves)} results != {len(want_leaves)}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        check(g, w, f"{where} result {i}".lstrip(), **options)


# -- layouts: each gives the Layout of an abstract value (of one or more dimensions) ----------

def column_major(av: AbstractValue) -> Layout:
    """The dimensions' order reversed."""
    return Layout(tuple(range(av.ndim)))


def tiled(av: AbstractValue) -> Layout:
    return Layout(tuple(reversed(range(av.ndim))), tiles=((2, 2),))


def permuted(av: AbstractValue) -> Layout:
    """Row-major with the two most minor dimensions swapped."""
    m2m = tuple(reversed(range(av.ndim)))
    return Layout(m2m[1:2] + m2m[:1] + m2m[2:] if av.ndim >= 2 else m2m)


def repeated_tiles(av: AbstractValue) -> Layout:
    return Layout(tuple(range(av.ndim)), tiles=((2, 4), (2, 1)))


def padded(extra: int) -> Callable[[AbstractValue], Layout]:
    """Row-major, each dimension padded by ``extra`` elements."""
    def layout(av: AbstractValue) -> Layout:
        return Layout(tuple(reversed(range(av.ndim))),
                      padded_dimensions=tuple(d + extra for d in av.dimensions))
    return layout


LAYOUTS = [column_major, tiled, permuted, repeated_tiles, padded(2)]  # the acceptance list


def relaid(f: Callable[..., Any], args: Sequence[Any], shift: int = 0,
           layouts: Sequence[Callable[[AbstractValue], Layout]] = LAYOUTS) -> Compiled:
    """``f`` compiled with its parameters and every intermediate value of its
    graph re-laid out (what a layout-assignment pass may choose): those with
    dimensions take ``layouts`` in turn, from the ``shift``-th.  Sub-graphs
    keep theirs, so ops convert between their operands' layouts and their
    computations'; results come back in the default layout."""
    lowered = jit(f).lower(*args)
    graph = lowered.graph
    k = shift
    for v in list(graph.in_vars) + [v for eq in graph.equations for v in eq.outputs]:
        if v.aval.shape.is_array and v.aval.ndim:
            layout = layouts[k % len(layouts)](v.aval)
            v.aval = AbstractValue(v.aval.shape.with_layout(layout), v.aval.weak_type)
            k += 1
    return Lowered(graph, lowered.out_shapes).compile()
