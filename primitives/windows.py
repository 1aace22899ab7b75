"""Windowed reductions: ReduceWindow (variadic, base and window dilation,
padding) and SelectAndScatter.

A window op sees its operand through XLA's window: the base area is dilated
by ``base_dilation`` (``d - 1`` holes between elements), padded by
``padding`` ((low, high) per dimension; negative padding crops), and a
window of ``window_dimensions``, dilated by ``window_dilation``, moves over
it by ``window_strides``.  The result has one element per window position:
``(padded - dilated_window) // stride + 1`` per dimension (0 when the window
does not fit).  Padding and holes are not elements: they are skipped, so the
init value takes part exactly once per window, as in XLA's evaluator.

* ``reduce_window(operand, init_value, computation, window_dimensions,
  window_strides=None, padding="VALID", base_dilation=None,
  window_dilation=None)`` as in ``jax.lax`` (``operand``/``init_value`` may
  be pytrees for the variadic form; ``padding`` is ``"VALID"``, ``"SAME"``,
  ``"SAME_LOWER"`` or ((lo, hi), ...) pairs).  Each window is reduced in
  row-major order of its elements: ``f(...f(init, w_0)..., w_{k-1})``.
* ``reduce_window_sum``/``_max``/``_min``: the shortcuts with an implicit
  identity init value (JAX's primitives; ``reduce_window`` binds them for
  ``add``/``max``/``min`` with a concrete identity init value).
* ``select_and_scatter(operand, select, window_dimensions, window_strides,
  padding, source, init_value, scatter)`` (XlaBuilder's order): every window
  selects one element, scanning it in row-major order and keeping the
  current pick while ``select(current, candidate)`` is true; the result
  starts at ``init_value`` everywhere and each selected position gets
  ``scatter(result, source[w])`` for every window ``w`` that selected it,
  in row-major order of the windows.  A window made only of padding selects
  nothing.  ``select_and_scatter_add(source, operand, select_prim, ...)`` is
  the shortcut with ``select_prim`` ``'ge'`` or ``'le'`` and ``add``.
"""
from __future__ import annotations

import functools
import itertools
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from numxla.tracer.core import (AbstractValue, Primitive, ShapeError, abstractify, array_value,
                         bf16_array)
from numxla.tracer.graph import Graph
from numxla.tracer.shapes import PrimitiveType as PT

from ._subgraph import scalar_avals, trace_computation
from ._util import as_int_tuple, check_kinds
from .dot_conv import padtype_to_pads
from .elementwise import mul
from numxla.tracer.core import TypedPrimitive
from .reductions import (ALL, ORDERED, apply_computation, as_init_value,
                         check_computation, check_operands_and_inits, computation_name,
                         flatten_variadic, monoid_shortcut, narrow, trace_reducer, type_of,
                         widen)

__all__ = ["reduce_window", "reduce_window_sum", "reduce_window_max", "reduce_window_min",
           "select_and_scatter", "select_and_scatter_add", "cumsum", "cumprod", "cummax",
           "cummin"]


# --------------------------------------------------------------------------
# window geometry
# --------------------------------------------------------------------------

def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def _check_window(op: str, x: AbstractValue, window_dimensions: tuple[int, ...],
                  window_strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                  base_dilation: tuple[int, ...], window_dilation: tuple[int, ...]
                  ) -> tuple[int, ...]:
    """Validate the window parameters; returns the result dimensions."""
    rank = x.ndim
    for name, values in (("window_dimensions", window_dimensions),
                         ("window_strides", window_strides), ("padding", padding),
                         ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        if len(values) != rank:
            raise ShapeError(op, f"{name} {tuple(values)} must have one entry per operand "
                                 f"dimension (rank {rank})", x)
        if name != "padding" and any(v < 1 for v in values):
            raise ShapeError(op, f"{name} {tuple(values)} must be positive", x)
    if any(len(p) != 2 for p in padding):
        raise ShapeError(op, f"padding {padding} must be (low, high) pairs", x)
    out = []
    for d, size in enumerate(x.dimensions):
        padded = padding[d][0] + _dilated(size, base_dilation[d]) + padding[d][1]
        if padded < 0:
            raise ShapeError(op, f"padding {padding[d]} of dimension {d} removes more than "
                                 f"the {_dilated(size, base_dilation[d])} elements there",
                             x)
        window = _dilated(window_dimensions[d], window_dilation[d])
        out.append(0 if padded < window else (padded - window) // window_strides[d] + 1)
    return tuple(out)


def _window_taps(in_shape: tuple[int, ...], out_shape: tuple[int, ...], *,
                 window_dimensions, window_strides, padding, base_dilation, window_dilation
                 ) -> Iterator[tuple[tuple[np.ndarray, ...], np.ndarray]]:
    """For each position in the window (row-major), the operand index that
    every window reads there (an ``np.ix_`` index of the result's shape) and
    whether it is a real element (not padding, not a dilation hole)."""
    per_dim = []
    for d in range(len(in_shape)):
        o = np.arange(out_shape[d])
        taps = []
        for k in range(window_dimensions[d]):
            c = o * window_strides[d] + k * window_dilation[d] - padding[d][0]
            valid = ((c >= 0) & (c < _dilated(in_shape[d], base_dilation[d]))
                     & (c % base_dilation[d] == 0))
            taps.append((np.where(valid, c // base_dilation[d], 0), valid))
        per_dim.append(taps)
    for combo in itertools.product(*per_dim):
        index = np.ix_(*(i for i, _ in combo))
        valid = np.ones(out_shape, bool)
        for d, (_, v) in enumerate(combo):  # np.ix_ would take booleans as masks
            valid = valid & v.reshape((-1,) + (1,) * (len(combo) - d - 1))
        yield index, valid


def _window_params(op: str, x: Any, window_dimensions, window_strides, padding,
                   base_dilation=None, window_dilation=None) -> dict[str, Any]:
    """Normalise the user's window arguments to the primitives' parameters."""
    aval = abstractify(x)
    window = as_int_tuple(op, "window_dimensions", window_dimensions)
    n = len(window)
    strides = (1,) * n if window_strides is None else as_int_tuple(op, "window_strides",
                                                                     window_strides)
    base = (1,) * n if base_dilation is None else as_int_tuple(op, "base_dilation",
                                                                 base_dilation)
    wdil = (1,) * n if window_dilation is None else as_int_tuple(op, "window_dilation",
                                                                   window_dilation)
    if isinstance(padding, str):
        if padding.upper() not in ("VALID", "SAME", "SAME_LOWER"):
            raise ShapeError(op, f"padding {padding!r} is not 'VALID', 'SAME' or "
                                 f"'SAME_LOWER'")
        if len(strides) != n or len(wdil) != n or aval.ndim != n:
            raise ShapeError(op, f"window_dimensions {window}, window_strides {strides} and "
                                 f"window_dilation {wdil} must have one entry per operand "
                                 f"dimension (rank {aval.ndim})", aval)
        # as JAX: the window dilated, the base not
        padding = padtype_to_pads(aval.dimensions,
                                  [_dilated(w, d) for w, d in zip(window, wdil)], strides,
                                  padding)
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ShapeError(op, f"padding must be a string or (low, high) pairs, "
                             f"got {padding!r}") from None
    return dict(window_dimensions=window, window_strides=strides, padding=pads,
                base_dilation=base, window_dilation=wdil)


# --------------------------------------------------------------------------
# ReduceWindow
# --------------------------------------------------------------------------

reduce_window_p = Primitive("reduce_window", multiple_results=True)


@reduce_window_p.def_abstract_eval
def _reduce_window_rule(*avals: AbstractValue, computation: Graph, **window
                        ) -> list[AbstractValue]:
    n = len(computation.out_avals) if isinstance(computation, Graph) else 0
    if n == 0 or len(avals) < 2 * n:
        raise ShapeError("reduce_window", f"needs N >= 1 operands and N init values for a "
                                          f"computation with N results, got {len(avals)} "
                                          f"values", *avals)
    operands, inits, extra = avals[:n], avals[n:2 * n], avals[2 * n:]
    check_operands_and_inits("reduce_window", operands, inits)
    types = [x.element_type for x in operands]
    check_computation("reduce_window", "computation", computation, types + types, types, extra)
    out = _check_window("reduce_window", operands[0], **window)
    return [array_value(t, out) for t in types]


# --------------------------------------------------------------------------
# cumulative windows: linear scans instead of a pass per window position
# --------------------------------------------------------------------------

def scan_axis(shape: Sequence[int], *, window_dimensions, window_strides, padding,
              base_dilation, window_dilation) -> tuple[int, bool] | None:
    """``(axis, reverse)`` when the windows are the prefixes of one axis (or,
    ``reverse``, its suffixes): a window as long as the axis, padded by all
    but one element on one side, stride 1, no dilation, and windows of one
    element elsewhere.  These are cumulative reductions (``cumsum``...):
    result ``i`` along the axis combines elements ``0..i`` (``i..n-1``)."""
    found = None
    for d, n in enumerate(shape):
        if window_strides[d] != 1 or base_dilation[d] != 1 or window_dilation[d] != 1:
            return None
        pads = tuple(padding[d])
        if window_dimensions[d] == 1 and pads == (0, 0):
            continue
        if found is not None or n < 2 or window_dimensions[d] != n or \
                pads not in ((n - 1, 0), (0, n - 1)):
            return None
        found = (d, pads == (0, n - 1))
    return found


def _accumulate(ufunc: np.ufunc, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    if reverse:
        return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
    return ufunc.accumulate(x, axis=axis)


# computations whose scan is a NumPy accumulate: (numeric, pred) ufuncs
_SCAN_UFUNCS = {"add": (np.add, np.logical_or), "mul": (np.multiply, np.logical_and),
                "max": (np.maximum, np.logical_or), "min": (np.minimum, np.logical_and),
                "and": (np.bitwise_and, np.logical_and), "or": (np.bitwise_or, np.logical_or)}


def scanned_monoid(computation: Graph) -> str | None:
    """The op name when ``computation`` is one commutative monoid op
    (``add``, ``mul``, ``max``...) of its two parameters."""
    if len(computation.equations) != 1 or len(computation.in_vars) != 2:
        return None
    (eq,) = computation.equations
    name = eq.primitive.name
    if name not in _SCAN_UFUNCS or set(eq.inputs) != set(computation.in_vars) or \
            tuple(eq.outputs) != tuple(computation.out_atoms):
        return None
    return name


def _scan_reduce_window(computation: Graph, x: np.ndarray, init: Any, extra, scan
                        ) -> np.ndarray | None:
    """A cumulative ``reduce_window`` as one accumulate, when that is what the
    reference's fold computes: ``f(init, x_0), f(f(init, x_0), x_1)...``
    equals the fold over each window (its padding is ``init``s) when
    ``f(init, init) == init``."""
    name = scanned_monoid(computation)
    t = computation.in_vars[1].aval.element_type  # (bf16 arrives as uint16 words)
    if name is None or t is PT.BF16 or t.is_complex and name in ("max", "min"):
        return None
    init = np.asarray(init, x.dtype)
    (twice,) = apply_computation(computation, [init, init], extra)
    if not np.array_equal(twice, init, equal_nan=t.is_floating or t.is_complex):
        return None
    numeric, logical = _SCAN_UFUNCS[name]
    axis, reverse = scan
    # the init value comes first, as in the reference's fold (init * x0 * x1,
    # not x0 * x1 * init: with infinities complex products differ)
    first = np.broadcast_to(init, x.shape[:axis] + (1,) + x.shape[axis + 1:])
    with np.errstate(all="ignore"):
        if reverse:
            scanned = _accumulate(logical if x.dtype == np.bool_ else numeric,
                                  np.concatenate([x, first], axis), axis, True)
            return np.take(scanned, np.arange(x.shape[axis]), axis).astype(x.dtype, copy=False)
        scanned = _accumulate(logical if x.dtype == np.bool_ else numeric,
                              np.concatenate([first, x], axis), axis, False)
    return np.take(scanned, np.arange(1, x.shape[axis] + 1), axis).astype(x.dtype, copy=False)


@reduce_window_p.def_impl
def _reduce_window_impl(*args: np.ndarray, computation: Graph, **window):
    n = len(computation.out_avals)
    operands, inits, extra = args[:n], args[n:2 * n], args[2 * n:]
    out_shape = _check_window("reduce_window", abstractify(operands[0]), **window)
    accs = [np.full(out_shape, init, x.dtype) for init, x in zip(inits, operands)]
    if operands[0].size == 0:
        return tuple(accs)
    scan = scan_axis(operands[0].shape, **window)
    if scan is not None and n == 1:
        scanned = _scan_reduce_window(computation, operands[0], inits[0], extra, scan)
        if scanned is not None:
            return (scanned,)
    for index, valid in _window_taps(operands[0].shape, out_shape, **window):
        new = apply_computation(computation, [*accs, *(x[index] for x in operands)], extra)
        accs = [np.where(valid, a_new, a) for a_new, a in zip(new, accs)]
    return tuple(accs)


def _pred_aware(numeric: Callable, logical: Callable) -> Callable:
    return lambda x, y: logical(x, y) if x.dtype == np.bool_ else numeric(x, y)


# name -> (admitted kinds, combining function, identity for a dtype)
SHORTCUT_WINDOW_REDUCTIONS: dict[str, tuple[tuple[str, ...], Callable, Callable]] = {
    "reduce_window_sum": (ALL, _pred_aware(np.add, np.logical_or), lambda dt: 0),
    "reduce_window_max": (ORDERED, np.maximum, lambda dt: (
        False if dt == np.bool_ else -np.inf if dt.kind == "f" else np.iinfo(dt).min)),
    "reduce_window_min": (ORDERED, np.minimum, lambda dt: (
        True if dt == np.bool_ else np.inf if dt.kind == "f" else np.iinfo(dt).max)),
}


_SHORTCUT_MONOIDS = {"reduce_window_sum": "add", "reduce_window_max": "max",
                     "reduce_window_min": "min"}


def _shortcut_window_rule(op: str, kinds: tuple[str, ...], x: AbstractValue, **window
                          ) -> AbstractValue:
    check_kinds(op, x, kinds)
    return array_value(x.element_type, _check_window(op, x, **window), x.weak_type)


def _shortcut_window_impl(op: str, combine: Callable, identity: Callable, x: np.ndarray, *,
                          operand_types: Sequence[PT] | None = None, **window) -> np.ndarray:
    t = type_of(x, operand_types)
    x = widen(x, t)
    out_shape = _check_window(op, abstractify(x), **window)
    acc = np.full(out_shape, identity(x.dtype), x.dtype)
    scan = scan_axis(x.shape, **window) if x.size else None
    if scan is not None:  # a cumulative reduction: one pass
        numeric, logical = _SCAN_UFUNCS[_SHORTCUT_MONOIDS[op]]
        with np.errstate(all="ignore"):
            scanned = _accumulate(logical if x.dtype == np.bool_ else numeric, x, *scan)
            return narrow(combine(acc, scanned).astype(x.dtype, copy=False), t)
    if x.size:
        with np.errstate(all="ignore"):
            for index, valid in _window_taps(x.shape, out_shape, **window):
                acc = np.where(valid, combine(acc, x[index]), acc).astype(x.dtype, copy=False)
    return narrow(acc, t)


SHORTCUT_WINDOW_PRIMITIVES: dict[str, Primitive] = {}
for _name, (_kinds, _combine, _identity) in SHORTCUT_WINDOW_REDUCTIONS.items():
    _p = TypedPrimitive(_name)
    _p.def_abstract_eval(functools.partial(_shortcut_window_rule, _name, _kinds))
    _p.def_impl(functools.partial(_shortcut_window_impl, _name, _combine, _identity))
    SHORTCUT_WINDOW_PRIMITIVES[_name] = _p
reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p = \
    SHORTCUT_WINDOW_PRIMITIVES.values()


def _shortcut_window(name: str) -> Callable[..., Any]:
    prim = SHORTCUT_WINDOW_PRIMITIVES[name]

    def fn(operand: Any, window_dimensions: Sequence[int],
           window_strides: Sequence[int] | None = None, padding: Any = "VALID",
           base_dilation: Sequence[int] | None = None,
           window_dilation: Sequence[int] | None = None) -> Any:
        return prim.bind(operand, **_window_params(name, operand, window_dimensions,
                                                   window_strides, padding, base_dilation,
                                                   window_dilation))
    fn.__name__ = name
    fn.__doc__ = (f"``reduce_window`` with ``{name.removeprefix('reduce_window_')}`` and its "
                  f"identity as init value.")
    return fn


reduce_window_sum = _shortcut_window("reduce_window_sum")
reduce_window_max = _shortcut_window("reduce_window_max")
reduce_window_min = _shortcut_window("reduce_window_min")


def reduce_window(operand: Any, init_value: Any, computation: Callable[[Any, Any], Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """XLA's ReduceWindow (see the module docstring); ``operand`` and
    ``init_value`` may be pytrees of the same structure (the variadic form)."""
    flat_ops, tree, avals, flat_inits = flatten_variadic("reduce_window", operand, init_value)
    window = _window_params("reduce_window", flat_ops[0], window_dimensions, window_strides,
                            padding, base_dilation, window_dilation)
    if len(flat_ops) == 1:
        shortcut = monoid_shortcut(computation, flat_inits[0], avals[0], {
            "add": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p})
        if shortcut is not None:
            return shortcut.bind(flat_ops[0], **window)
    comp = trace_reducer("reduce_window", computation, operand, avals)
    outs = reduce_window_p.bind(*flat_ops, *flat_inits, *comp.captured,
                                computation=comp.graph, **window)
    return tree.unflatten(outs)


# --------------------------------------------------------------------------
# cumulative reductions (reduce_window over a window as long as the axis)
# --------------------------------------------------------------------------

def _cumulative(window_op: Callable[..., Any], operand: Any, axis: int, reverse: bool) -> Any:
    aval = abstractify(operand)
    if not -aval.ndim <= axis < aval.ndim:
        raise ShapeError("cumulative reduction", f"axis {axis} is out of range for rank "
                                                 f"{aval.ndim}", aval)
    axis %= aval.ndim
    n = aval.dimensions[axis]
    if n == 0:
        return operand
    window = [1] * aval.ndim
    window[axis] = n
    pads = [(0, 0)] * aval.ndim
    pads[axis] = (0, n - 1) if reverse else (n - 1, 0)
    return window_op(operand, window, None, pads)


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative sum along ``axis`` (from the end if ``reverse``)."""
    return _cumulative(reduce_window_sum, operand, axis, reverse)


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative maximum along ``axis``."""
    return _cumulative(reduce_window_max, operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative minimum along ``axis``."""
    return _cumulative(reduce_window_min, operand, axis, reverse)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative product along ``axis``."""
    t = abstractify(operand).element_type
    one = bf16_array(np.float32(1)) if t is PT.BF16 else np.ones((), t.numpy_dtype)
    return _cumulative(lambda x, *w: reduce_window(x, one, mul, *w), operand, axis, reverse)


# --------------------------------------------------------------------------
# SelectAndScatter
# --------------------------------------------------------------------------

def _select_positions(operand: np.ndarray, out_shape: tuple[int, ...],
                      select: Callable[[np.ndarray, np.ndarray], np.ndarray], window: dict
                      ) -> tuple[np.ndarray, np.ndarray]:
    """For every window, the flat operand index it selects and whether it
    selected anything (a window of padding only does not)."""
    strides = np.array([int(np.prod(operand.shape[d + 1:], dtype=np.int64))
                        for d in range(operand.ndim)], np.int64)
    chosen_value = np.zeros(out_shape, operand.dtype)
    chosen = np.zeros(out_shape, np.int64)
    found = np.zeros(out_shape, bool)
    if operand.size == 0:  # windows of padding only: nothing to select
        return chosen, found
    for index, valid in _window_taps(operand.shape, out_shape, **window):
        value = operand[index]
        flat = sum((i * s for i, s in zip(index, strides)), np.zeros((), np.int64))
        with np.errstate(all="ignore"):
            keep = np.asarray(select(chosen_value, value), bool)
        take = valid & (~found | ~keep)
        chosen_value = np.where(take, value, chosen_value)
        chosen = np.where(take, flat, chosen)
        found = found | valid
    return chosen, found


def _scatter_in_order(result: np.ndarray, targets: np.ndarray, values: np.ndarray,
                      scatter: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """``result[t] = scatter(result[t], v)`` for each (t, v) in order, run in
    rounds: round r applies the r-th value of every target at once."""
    flat = result.reshape(-1).copy()
    order = np.argsort(targets, kind="stable")
    targets, values = targets[order], values[order]
    # each value's place among those of its target
    rank = np.arange(targets.size) - np.searchsorted(targets, targets, side="left")
    for r in range(int(rank.max(initial=-1)) + 1):
        here = rank == r
        t = targets[here]
        with np.errstate(all="ignore"):
            flat[t] = np.asarray(scatter(flat[t], values[here])).astype(flat.dtype, copy=False)
    return flat.reshape(result.shape)


def _check_select_and_scatter(op: str, operand: AbstractValue, source: AbstractValue,
                              window: dict) -> None:
    out = _check_window(op, operand, base_dilation=(1,) * operand.ndim,
                        window_dilation=(1,) * operand.ndim, **window)
    if source.dimensions != out:
        raise ShapeError(op, f"source dimensions {source.dimensions} must be the window "
                             f"output dimensions {out}", operand, source)
    if source.element_type is not operand.element_type:
        raise ShapeError(op, "source and operand must have the same element type",
                         operand, source)


select_and_scatter_p = Primitive("select_and_scatter")


@select_and_scatter_p.def_abstract_eval
def _select_and_scatter_rule(operand: AbstractValue, source: AbstractValue,
                             init_value: AbstractValue, *extra: AbstractValue, select: Graph,
                             scatter: Graph, **window) -> AbstractValue:
    op = "select_and_scatter"
    _check_select_and_scatter(op, operand, source, window)
    if init_value.ndim != 0 or init_value.element_type is not operand.element_type:
        raise ShapeError(op, "init_value must be a scalar of the operand's element type",
                         operand, init_value)
    t = operand.element_type
    n_select = len(select.in_avals) - 2 if isinstance(select, Graph) else 0
    check_computation(op, "select", select, [t, t], [PT.PRED], extra[:n_select])
    check_computation(op, "scatter", scatter, [t, t], [t], extra[n_select:])
    return array_value(t, operand.dimensions)


@select_and_scatter_p.def_impl
def _select_and_scatter_impl(operand, source, init_value, *extra, select: Graph,
                             scatter: Graph, **window):
    n_select = len(select.in_avals) - 2
    window = dict(window, base_dilation=(1,) * operand.ndim,
                  window_dilation=(1,) * operand.ndim)
    chosen, found = _select_positions(
        operand, source.shape,
        lambda a, b: apply_computation(select, [a, b], extra[:n_select])[0], window)
    result = np.full(operand.shape, init_value, operand.dtype)
    return _scatter_in_order(
        result, chosen[found], source[found],
        lambda a, b: apply_computation(scatter, [a, b], extra[n_select:])[0])


def select_and_scatter(operand: Any, select: Callable[[Any, Any], Any],
                       window_dimensions: Sequence[int], window_strides: Sequence[int],
                       padding: Any, source: Any, init_value: Any,
                       scatter: Callable[[Any, Any], Any]) -> Any:
    """XLA's SelectAndScatter (see the module docstring); ``padding`` is
    ``"VALID"``/``"SAME"`` or (low, high) pairs."""
    aval = abstractify(operand)
    window = _window_params("select_and_scatter", operand, window_dimensions, window_strides,
                            padding)
    del window["base_dilation"], window["window_dilation"]
    init_value = as_init_value(init_value, aval)
    scalars = scalar_avals([aval]) * 2
    sel = trace_computation(select, scalars, name=computation_name(select))
    sct = trace_computation(scatter, scalars, name=computation_name(scatter))
    return select_and_scatter_p.bind(operand, source, init_value, *sel.captured, *sct.captured,
                                     select=sel.graph, scatter=sct.graph, **window)


select_and_scatter_add_p = TypedPrimitive("select_and_scatter_add")
_SELECT_PRIMS = {"ge": np.greater_equal, "le": np.less_equal}


@select_and_scatter_add_p.def_abstract_eval
def _select_and_scatter_add_rule(source: AbstractValue, operand: AbstractValue, *,
                                 select_prim: str, **window) -> AbstractValue:
    op = "select_and_scatter_add"
    if select_prim not in _SELECT_PRIMS:
        raise ShapeError(op, f"select_prim {select_prim!r} must be 'ge' or 'le'",
                         source, operand)
    check_kinds(op, operand, ("signed", "unsigned", "float"))
    _check_select_and_scatter(op, operand, source, window)
    return array_value(operand.element_type, operand.dimensions)


@select_and_scatter_add_p.def_impl
def _select_and_scatter_add_impl(source, operand, *, select_prim: str,
                                 operand_types: Sequence[PT] | None = None, **window):
    t = type_of(operand, operand_types, 1)
    source, operand = widen(source, t), widen(operand, t)
    window = dict(window, base_dilation=(1,) * operand.ndim,
                  window_dilation=(1,) * operand.ndim)
    chosen, found = _select_positions(operand, source.shape, _SELECT_PRIMS[select_prim], window)
    result = np.zeros(operand.size, operand.dtype)
    with np.errstate(all="ignore"):
        np.add.at(result, chosen[found], source[found])
    return narrow(result.reshape(operand.shape), t)


def select_and_scatter_add(source: Any, operand: Any, select_prim: Any,
                           window_dimensions: Sequence[int], window_strides: Sequence[int],
                           padding: Any) -> Any:
    """SelectAndScatter with ``select_prim`` (``'ge'``/``'le'``, or ``lax.ge``/``lax.le``)
    as select, ``add`` as scatter and 0 as init value (JAX's argument order)."""
    name = getattr(select_prim, "__name__", select_prim)
    name = getattr(select_prim, "name", name)
    window = _window_params("select_and_scatter_add", operand, window_dimensions,
                            window_strides, padding)
    del window["base_dilation"], window["window_dilation"]
    return select_and_scatter_add_p.bind(source, operand, select_prim=str(name).lower(),
                                         **window)
