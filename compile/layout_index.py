"""Linear-index expressions for generated kernels.

A compiled kernel addresses every array through its 1-D physical buffer.
:func:`linear_index_expr` writes, as Python source, the position of the
element with logical index ``(i0, i1, ...)`` in the buffer of a ``Shape``,
following the layout exactly as the seeds define it (``minor_to_major``,
``padded_dimensions``, tiles applied in turn, ``*`` combined dimensions):
the physical dimensions (major to minor) are tiled as
``linear_index((e // t, e % t), (ceil(d / t), t))`` once per tile, then
laid out row-major.  Constant factors are folded, so a default layout gives
plain row-major arithmetic (``i0*5 + i1``).

:func:`loop_order` gives the logical dimensions from most major to most
minor, so that loops nest with the innermost walking the buffer.
"""
from __future__ import annotations

from numxla.tracer.shapes import Shape

__all__ = ["linear_index_expr", "loop_order", "physical_bounds", "dense_strides"]


def loop_order(shape: Shape) -> tuple[int, ...]:
    """Logical dimension numbers from most major to most minor."""
    return tuple(reversed(shape.layout.minor_to_major))


def dense_strides(shape: Shape) -> tuple[int, ...] | None:
    """The buffer stride of each logical dimension when the layout is a plain
    permutation of the dimensions (no tiles, no padding), else None: how
    library kernels (:data:`compile.registry.library_rules`) address it."""
    if not shape.is_array or shape.layout.tiles or \
            shape.physical_size != shape.size or any(shape.dynamic_dimensions):
        return None
    strides, step = [0] * shape.rank, 1
    for d in shape.layout.minor_to_major:
        strides[d] = step
        step *= shape.dimensions[d]
    return tuple(strides)


def physical_bounds(shape: Shape) -> list[int]:
    """Sizes of the physical (major-to-minor) dimensions before tiling."""
    layout = shape.layout
    sizes = layout.padded_dimensions or shape.dimensions
    return [sizes[d] for d in loop_order(shape)]


class _Term:
    """An index expression as source text, folded when constant."""

    __slots__ = ("text", "const", "is_sum")

    def __init__(self, text: str, const: int | None = None, is_sum: bool = False):
        self.text = text
        self.const = const  # the value when the expression is a known constant
        self.is_sum = is_sum  # needs parentheses as a factor

    @staticmethod
    def of(value: int) -> "_Term":
        return _Term(str(value), value)


def _mul(a: _Term, k: int) -> _Term:
    if a.const is not None:
        return _Term.of(a.const * k)
    if k == 1:
        return a
    return _Term(f"({a.text}) * {k}" if a.is_sum else f"{a.text} * {k}")


def _add(a: _Term, b: _Term) -> _Term:
    if a.const == 0:
        return b
    if b.const == 0:
        return a
    if a.const is not None and b.const is not None:
        return _Term.of(a.const + b.const)
    return _Term(f"{a.text} + {b.text}", is_sum=True)


def _floordiv(a: _Term, t: int) -> _Term:
    if t == 1:
        return a
    if a.const is not None:
        return _Term.of(a.const // t)
    return _Term(f"({a.text}) // {t}")


def _mod(a: _Term, t: int) -> _Term:
    if t == 1:
        return _Term.of(0)
    if a.const is not None:
        return _Term.of(a.const % t)
    return _Term(f"({a.text}) % {t}")


def linear_index_expr(shape: Shape, index: list[str]) -> str:
    """Source text of the buffer position of logical element ``index``.

    ``index[d]`` is the expression for logical dimension ``d``.
    """
    if len(index) != len(shape.dimensions):
        raise ValueError(f"index has {len(index)} entries, shape {shape} rank {len(shape.dimensions)}")
    order = loop_order(shape)
    # an index given as a compound expression is one factor: parenthesise it
    terms = [_Term.of(int(t)) if t.isdigit() else _Term(t if t.isidentifier() else f"({t})")
             for t in (index[d] for d in order)]
    bounds = physical_bounds(shape)
    for tile in shape.layout.tiles:
        terms, bounds = _apply_tile(terms, bounds, tile.dimensions)
    return _row_major(terms, bounds).text


def _apply_tile(terms: list[_Term], bounds: list[int], tile: tuple[int, ...]
                ) -> tuple[list[_Term], list[int]]:
    k = len(tile)
    if k > len(terms):  # missing major dimensions count as size 1 (XLA's ArraySize)
        pad = k - len(terms)
        terms, bounds = [_Term.of(0)] * pad + terms, [1] * pad + bounds
    lead_terms, lead_bounds = terms[:len(terms) - k], bounds[:len(bounds) - k]
    sub_terms, sub_bounds = terms[len(terms) - k:], bounds[len(bounds) - k:]
    # '*' merges a dimension into the next more-minor one.
    sizes: list[int] = []
    merged_terms: list[_Term] = []
    merged_bounds: list[int] = []
    carry_term: _Term | None = None
    carry_bound = 1
    for t, term, bound in zip(tile, sub_terms, sub_bounds):
        if carry_term is not None:
            term = _add(_mul(carry_term, bound), term)
            bound = carry_bound * bound
        if t == -1:
            carry_term, carry_bound = term, bound
            continue
        carry_term, carry_bound = None, 1
        merged_terms.append(term)
        merged_bounds.append(bound)
        sizes.append(t)
    outer = [_floordiv(e, t) for e, t in zip(merged_terms, sizes)]
    inner = [_mod(e, t) for e, t in zip(merged_terms, sizes)]
    outer_bounds = [-(-b // t) for b, t in zip(merged_bounds, sizes)]
    return lead_terms + outer + inner, lead_bounds + outer_bounds + sizes


def _row_major(terms: list[_Term], bounds: list[int]) -> _Term:
    total = _Term.of(0)
    stride = 1
    for term, bound in zip(reversed(terms), reversed(bounds)):
        total = _add(total, _mul(term, stride))
        stride *= bound
    return total
