"""JVP, VJP and batching rules of the windowed reductions (primitives/windows.py).

XLA's own window ops are the derivatives, as in JAX:

* A max (min) window picks one element; its derivative moves values between
  that element and the window's result.  Forward: *select-and-gather*, the
  tangent at the window's maximum, as a variadic ``reduce_window`` over
  (operand, tangent) pairs whose computation keeps the pair with the larger
  (smaller) key, first one on ties (:func:`select_and_gather`).  Reverse: its
  transpose ``select_and_scatter_add`` with select ``ge`` (``le``) and
  scatter ``add`` over the same window (:func:`scatter_to_selected`; base
  dilation by padding the operand with the chooser's identity, window
  dilation, which SelectAndScatter lacks, by splitting the windows into
  phases that are undilated windows over strided slices).  The two are each
  other's transposes, which closes second order; the variadic
  ``reduce_window`` of these pairs is recognised by its computation.
* ``reduce_window_sum`` is linear; its transpose is a transposed
  convolution with a window of ones: the cotangent padded (interior
  ``stride - 1``, edges the transposed padding) and summed again over the
  same window with the base dilation as stride.
* Cumulative windows (the prefixes or suffixes of one axis: ``cumprod``,
  long ``cummax``/``cummin``) are differentiated as the
  ``associative_scan`` of their computation (JAX's rule for its cumulative
  ops): O(n log n) element-wise ops instead of n windows of n elements, and
  ``cumprod`` without dividing by the operand.
* The general ``reduce_window`` and ``select_and_scatter`` are routed to
  these rules when their computations are one ``add``/``max``/``min`` (a
  ``ge``/``le`` select with an ``add`` scatter); the init value then
  combines with the shortcut's result element-wise.

Batching adds a window dimension of size 1 and stride 1 for the batch
(looping only when an init value or a captured value is batched).
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
from numxla.primitives import elementwise as ew
from numxla.primitives import windows as win
from numxla.primitives._subgraph import trace_computation
from numxla.primitives.reductions import single_binary_op
from numxla.tracer.core import AbstractValue, abstractify, array_value
from numxla.tracer.graph import Graph
from numxla.tracer.shapes import PrimitiveType as PT

from .forward import jvp_flat
from .reverse import vjp_flat
from .rules import Zero, add_tangents, batch_by_loop, batch_rules, bdim_size, instantiate, \
    is_zero, jvp_rules, linear_jvp, move_batch_dim, scalar_like, vjp_rules, zeros_like_aval

__all__ = ["select_and_gather", "scatter_to_selected"]

_WINDOW_KEYS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                "window_dilation")
# the window entry of a dimension the window does not move along
_TRIVIAL = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0),
            "base_dilation": 1, "window_dilation": 1}
# select primitive name -> (direction of the key comparison, identity of the chooser)
_SELECTS = {"ge": ("GE", -np.inf), "le": ("LE", np.inf)}


def _window(params: dict[str, Any], rank: int) -> dict[str, tuple]:
    """The full window of an op's params (select_and_scatter has no dilations)."""
    return {k: params.get(k, (_TRIVIAL[k],) * rank) for k in _WINDOW_KEYS}


def _zeros(x: Any) -> Any:
    return zeros_like_aval(abstractify(x))


# --------------------------------------------------------------------------
# select-and-gather and its transpose
# --------------------------------------------------------------------------

_GATHER_COMPUTATIONS: dict[tuple[PT, str], Graph] = {}


def _gather_computation(element_type: PT, select: str) -> Graph:
    """The pair reducer ``((k, v), (k', v')) -> (k, v) if k >= k' else (k', v')``
    (``<=`` for ``le``): keeps the first extreme key and its value.  One graph
    per type, so the rules recognise it (graphs compare by identity)."""
    key = (element_type, select)
    if key not in _GATHER_COMPUTATIONS:
        direction = _SELECTS[select][0]

        def reducer(k_acc, v_acc, k, v):
            keep = ew.compare(k_acc, k, direction)
            return ew.select(keep, k_acc, k), ew.select(keep, v_acc, v)

        scalar = array_value(element_type, ())
        _GATHER_COMPUTATIONS[key] = trace_computation(
            reducer, [scalar] * 4, name=f"select_and_gather_{select}").graph
    return _GATHER_COMPUTATIONS[key]


def _gather_select(computation: Graph) -> str | None:
    """``'ge'``/``'le'`` if ``computation`` is one of our pair reducers."""
    for (_, select), graph in _GATHER_COMPUTATIONS.items():
        if graph is computation:
            return select
    return None


def select_and_gather(tangent: Any, operand: Any, select: str, window: dict) -> Any:
    """For every window, the element of ``tangent`` at the position ``select``
    picks in ``operand`` (JAX's ``_select_and_gather_add``): a variadic
    ``reduce_window`` over (operand, tangent) pairs."""
    aval = abstractify(operand)
    graph = _gather_computation(aval.element_type, select)
    init_k = scalar_like(aval, _SELECTS[select][1])
    init_v = scalar_like(aval, 0)
    _, out = win.reduce_window_p.bind(operand, tangent, init_k, init_v, computation=graph,
                                      **window)
    return out


def scatter_to_selected(ct: Any, operand: Any, select: str, window: dict) -> Any:
    """The transpose of :func:`select_and_gather` in ``tangent``: every window's
    cotangent added at the position it selects, by ``select_and_scatter_add``.

    Base dilation: the operand is padded with the chooser's identity between
    elements and the result sliced back (JAX's way).  Window dilation, which
    SelectAndScatter cannot express, is split by phase: along a dimension
    with stride ``s`` and window dilation ``r``, the windows ``p, p + m, ...``
    (``m = r / gcd(s, r)``) read the elements ``p s + r j`` only, i.e. an
    undilated window with stride ``s / gcd(s, r)`` over a strided slice; each
    phase is one ``select_and_scatter_add`` and the pieces are padded back
    into place and summed."""
    aval = abstractify(operand)
    if any(d != 1 for d in window["window_dilation"]):
        return _scatter_dilated(ct, operand, select, window)
    base = window["base_dilation"]
    dilated = any(d != 1 for d in base)
    x = operand
    if dilated:
        x = lax.pad(x, scalar_like(aval, _SELECTS[select][1]), [(0, 0, d - 1) for d in base])
    out = win.select_and_scatter_add_p.bind(
        ct, x, select_prim=select, window_dimensions=window["window_dimensions"],
        window_strides=window["window_strides"], padding=window["padding"])
    if dilated:
        out = lax.slice(out, (0,) * aval.ndim, abstractify(out).dimensions, base)
    return out


def _scatter_dilated(ct: Any, operand: Any, select: str, window: dict) -> Any:
    """:func:`scatter_to_selected` with window dilation (see there)."""
    aval = abstractify(operand)
    identity = scalar_like(aval, _SELECTS[select][1])
    pads = window["padding"]
    xp = lax.pad(operand, identity, [(lo, hi, d - 1) for (lo, hi), d
                                     in zip(pads, window["base_dilation"])])
    padded = abstractify(xp).dimensions
    out_dims = abstractify(ct).dimensions
    # per dimension: the phases (ct start, ct stride, count, x start, window stride)
    phases = []
    for w, s, r, n_out in zip(window["window_dimensions"], window["window_strides"],
                              window["window_dilation"], out_dims):
        g = math.gcd(s, r)
        m = r // g
        phases.append([(p, m, -(-(n_out - p) // m), p * s, s // g) for p in range(min(m, n_out))])
    total = None
    for combo in itertools.product(*phases):
        ct_p = lax.slice(ct, [c[0] for c in combo],
                         [c[0] + (c[2] - 1) * c[1] + 1 for c in combo], [c[1] for c in combo])
        lengths = [(c[2] - 1) * c[4] + w for c, w in zip(combo, window["window_dimensions"])]
        rs = window["window_dilation"]
        x_p = lax.slice(xp, [c[3] for c in combo],
                        [c[3] + (n - 1) * r + 1 for c, n, r in zip(combo, lengths, rs)], rs)
        piece = win.select_and_scatter_add_p.bind(
            ct_p, x_p, select_prim=select, window_dimensions=window["window_dimensions"],
            window_strides=tuple(c[4] for c in combo), padding=((0, 0),) * aval.ndim)
        piece = lax.pad(piece, scalar_like(aval, 0),
                        [(c[3], size - (c[3] + (n - 1) * r + 1), r - 1)
                         for c, size, n, r in zip(combo, padded, lengths, rs)])
        total = add_tangents(total, piece)
    if total is None:       # no window at all
        return _zeros(operand)
    # the transpose of the padding: edges cut (or restored), holes dropped
    unpadded = lax.pad(total, scalar_like(aval, 0), [(-lo, -hi, 0) for lo, hi in pads])
    return lax.slice(unpadded, (0,) * aval.ndim, abstractify(unpadded).dimensions,
                     window["base_dilation"])


# --------------------------------------------------------------------------
# reduce_window_sum / _max / _min
# --------------------------------------------------------------------------

def _sum_transpose(ct: Any, aval: AbstractValue, window: dict) -> Any:
    """The cotangent of ``reduce_window_sum``'s operand: a transposed
    convolution with a window of ones (JAX's ``_reduce_window_sum_transpose_rule``)."""
    n = aval.ndim
    if win.scan_axis(aval.dimensions, **window) is not None:
        # a prefix sum's transpose is the suffix sum (and back): one pass
        mirrored = tuple((high, low) for low, high in window["padding"])
        return win.reduce_window_sum_p.bind(ct, **{**window, "padding": mirrored})
    base, wdil, strides = (window["base_dilation"], window["window_dilation"],
                           window["window_strides"])
    config = []
    for d in range(n):
        lhs = win._dilated(aval.dimensions[d], base[d])
        rhs = win._dilated(window["window_dimensions"][d], wdil[d])
        out = win._dilated(abstractify(ct).dimensions[d], strides[d])
        before = rhs - 1 - window["padding"][d][0]
        config.append((before, lhs + rhs - 1 - out - before, strides[d] - 1))
    padded = lax.pad(ct, scalar_like(aval, 0), config)
    return win.reduce_window_sum_p.bind(
        padded, window_dimensions=window["window_dimensions"], window_strides=base,
        padding=((0, 0),) * n, base_dilation=(1,) * n, window_dilation=wdil)


def _sum_vjp(ct, fwd, x, **window):
    return (_sum_transpose(ct, abstractify(x), window),)


jvp_rules[win.reduce_window_sum_p] = linear_jvp(win.reduce_window_sum_p)
vjp_rules[win.reduce_window_sum_p] = _sum_vjp


# --------------------------------------------------------------------------
# cumulative windows (cummax, cumprod...): the derivative of a scan
# --------------------------------------------------------------------------

# Below this many elements along the axis a max/min's select-and-scatter over
# n windows (n^2 / 2 comparisons per row) is cheaper than compiling a scan's
# 2 log2(n) rounds of ops (about 0.5 s of Numba compile per round).
SCAN_DERIVATIVE_MIN = 1024


def _scan_of(x: Any, window: dict, min_size: int = 2) -> tuple[int, bool] | None:
    """``(axis, reverse)`` when the windows are the prefixes (suffixes) of one
    axis of at least ``min_size`` elements."""
    dims = abstractify(x).dimensions
    scan = win.scan_axis(dims, **{k: window[k] for k in _WINDOW_KEYS})
    return scan if scan is not None and dims[scan[0]] >= min_size else None


def _scan_function(combine: Callable[[Any, Any], Any], scan: tuple[int, bool],
                   with_init: bool) -> Callable[..., list]:
    """The cumulative window as ``associative_scan(combine)``: O(n log n) ops
    whose derivatives are element-wise, where a select-and-scatter over n
    windows of n elements costs O(n^2).  ``with_init``: the init value is
    combined first, as XLA's fold over the padded window does."""
    axis, reverse = scan

    def fn(x: Any, init: Any = None) -> list:
        if not with_init:
            return [lax.associative_scan(combine, x, reverse=reverse, axis=axis)]
        dims = list(abstractify(x).dimensions)
        dims[axis] = 1
        first = lax.broadcast_in_dim(init, tuple(dims), ())
        n = abstractify(x).dimensions[axis]
        parts = [x, first] if reverse else [first, x]
        scanned = lax.associative_scan(combine, lax.concatenate(parts, axis), reverse=reverse,
                                       axis=axis)
        start = 0 if reverse else 1
        return [lax.slice_in_dim(scanned, start, start + n, axis=axis)]
    return fn


def _scan_jvp(fn: Callable[..., list], primals: tuple, tangents: tuple) -> Any:
    _, (t,) = jvp_flat(fn, primals, [instantiate(t) for t in tangents])
    return t


def _scan_vjp(fn: Callable[..., list], ct: Any, fwd, primals: tuple) -> tuple:
    _, pullback = vjp_flat(fn, primals)
    return tuple(None if not want or is_zero(c) else c
                 for c, want in zip(pullback([ct]), fwd.wants))


def _chooser_rules(prim, select: str) -> None:
    """Max/min windows: the tangent gathered at the selected element; the
    cotangent scattered back there.  Cumulative windows are scans instead."""
    combine = ew.max if select == "ge" else ew.min

    def jvp(primals, tangents, **window):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **window)
        if (scan := _scan_of(x, window, SCAN_DERIVATIVE_MIN)) is not None:
            return out, _scan_jvp(_scan_function(combine, scan, False), primals, tangents)
        return out, select_and_gather(instantiate(t), x, select, window)

    def vjp(ct, fwd, x, **window):
        if (scan := _scan_of(x, window, SCAN_DERIVATIVE_MIN)) is not None:
            return _scan_vjp(_scan_function(combine, scan, False), ct, fwd, (x,))
        return (scatter_to_selected(ct, x, select, window),)

    jvp_rules[prim] = jvp
    vjp_rules[prim] = vjp


_chooser_rules(win.reduce_window_max_p, "ge")
_chooser_rules(win.reduce_window_min_p, "le")


# --------------------------------------------------------------------------
# the general reduce_window
# --------------------------------------------------------------------------

# the shortcut of a one-op computation: elementwise primitive -> (shortcut, select)
_MONOIDS = {ew.add_p: (win.reduce_window_sum_p, None), ew.max_p: (win.reduce_window_max_p, "ge"),
            ew.min_p: (win.reduce_window_min_p, "le")}


# scanned monoids whose cumulative windows are differentiated as scans
_SCANNED = {"mul": ew.mul, "max": ew.max, "min": ew.min}


def _cumulative_scan(computation: Graph, args: tuple, window: dict
                     ) -> Callable[..., list] | None:
    """The scan function of a one-operand cumulative ``reduce_window`` whose
    computation is one ``mul``/``max``/``min`` (``cumprod``...), else None."""
    name = win.scanned_monoid(computation) if len(args) == 2 else None
    if name not in _SCANNED:
        return None
    scan = _scan_of(args[0], window, 2 if name == "mul" else SCAN_DERIVATIVE_MIN)
    return None if scan is None else _scan_function(_SCANNED[name], scan, True)


def _monoid(computation: Graph, n_args: int) -> tuple[Any, str | None]:
    """The (shortcut, select) of a one-operand reduce_window whose computation
    is one ``add``/``max``/``min``, else NotImplementedError."""
    op = single_binary_op(computation) if n_args == 2 else None
    if op not in _MONOIDS:
        raise NotImplementedError(
            f"reduce_window: no derivative for the computation {computation.name!r} "
            f"({len(computation.equations)} equations, {len(computation.out_avals)} results); "
            f"only a single add, max or min (or select-and-gather pairs) is differentiable")
    return _MONOIDS[op]


def _init_wins(partial: Any, init: Any, select: str) -> Any:
    """Where the init value, not the windows' elements, gives a max/min result."""
    direction = "LT" if select == "ge" else "GT"
    return ew.compare(partial, lax.broadcast_in_dim(init, abstractify(partial).dimensions, ()),
                      direction)


def _reduce_window_jvp(primals, tangents, *, computation, **window):
    outs = win.reduce_window_p.bind(*primals, computation=computation, **window)
    select = _gather_select(computation)
    if select is not None:       # our select-and-gather pairs: both outputs gather
        k, _, _, _ = primals
        return outs, tuple(Zero(abstractify(o)) if is_zero(t) else
                           select_and_gather(t, k, select, window)
                           for o, t in zip(outs, tangents[:2]))
    if (scan_fn := _cumulative_scan(computation, primals, window)) is not None:
        return outs, (_scan_jvp(scan_fn, primals, tangents),)
    shortcut, select = _monoid(computation, len(primals))
    (x, init), (tx, tinit) = primals, tangents
    out_aval = abstractify(outs[0])
    if select is None:
        t = Zero(out_aval) if is_zero(tx) else shortcut.bind(tx, **window)
        if not is_zero(tinit):
            t = add_tangents(t, lax.broadcast_in_dim(tinit, out_aval.dimensions, ()))
        return outs, (t,)
    partial = shortcut.bind(x, **window)
    t_partial = select_and_gather(instantiate(tx), x, select, window)
    t_init = lax.broadcast_in_dim(instantiate(tinit), out_aval.dimensions, ())
    return outs, (ew.select(_init_wins(partial, init, select), t_init, t_partial),)


def _reduce_window_vjp(cts, fwd, *args, computation, **window):
    select = _gather_select(computation)
    if select is not None:
        k = args[0]
        # the keys' result moves with the keys; the values' result with the values
        # (the selection itself is piecewise constant)
        return tuple(None if is_zero(ct) or not want else scatter_to_selected(ct, k, select, window)
                     for ct, want in zip(cts, fwd.wants[:2])) + (None,) * (len(args) - 2)
    if (scan_fn := _cumulative_scan(computation, args, window)) is not None:
        return _scan_vjp(scan_fn, cts[0], fwd, args)
    shortcut, select = _monoid(computation, len(args))
    (ct,), (x, init) = cts, args
    aval = abstractify(x)
    if select is None:
        ct_x = _sum_transpose(ct, aval, window) if fwd.wants[0] else None
        ct_init = lax.reduce_sum(ct, tuple(range(aval.ndim))) if fwd.wants[1] else None
        return ct_x, ct_init
    from_init = _init_wins(shortcut.bind(x, **window), init, select)
    zero = _zeros(ct)
    ct_x = scatter_to_selected(ew.select(from_init, zero, ct), x, select, window) \
        if fwd.wants[0] else None
    ct_init = lax.reduce_sum(ew.select(from_init, ct, zero), tuple(range(aval.ndim))) \
        if fwd.wants[1] else None
    return ct_x, ct_init


jvp_rules[win.reduce_window_p] = _reduce_window_jvp
vjp_rules[win.reduce_window_p] = _reduce_window_vjp


# --------------------------------------------------------------------------
# select_and_scatter_add and the general select_and_scatter
# --------------------------------------------------------------------------

def _ssa_jvp(primals, tangents, *, select_prim, **window):
    """Linear in ``source``; the selection makes it constant in ``operand``."""
    (source, operand), (t_source, _) = primals, tangents
    out = win.select_and_scatter_add_p.bind(source, operand, select_prim=select_prim, **window)
    if is_zero(t_source):
        return out, Zero(abstractify(out))
    return out, win.select_and_scatter_add_p.bind(t_source, operand, select_prim=select_prim,
                                                  **window)


def _ssa_vjp(ct, fwd, source, operand, *, select_prim, **window):
    """The transpose in ``source`` gathers the cotangent at the selected positions
    (JAX's ``_select_and_scatter_add_transpose``); none for ``operand``."""
    full = _window(window, abstractify(operand).ndim)
    return (select_and_gather(ct, operand, select_prim, full) if fwd.wants[0] else None, None)


jvp_rules[win.select_and_scatter_add_p] = _ssa_jvp
vjp_rules[win.select_and_scatter_add_p] = _ssa_vjp


def _select_direction(select: Graph) -> str | None:
    """``'ge'``/``'le'`` if ``select(a, b)`` is ``a >= b`` (``a <= b``)."""
    if len(select.equations) != 1 or len(select.in_vars) != 2 or select.const_vars:
        return None
    eq = select.equations[0]
    if (eq.primitive is ew.compare_p and eq.inputs == select.in_vars
            and select.out_atoms == eq.outputs and not eq.params.get("total_order")):
        return {"GE": "ge", "LE": "le"}.get(eq.params["direction"])
    return None


def _scatter_add_select(select: Graph, scatter: Graph, n_extra: int) -> str:
    direction = _select_direction(select)
    if n_extra or direction is None or single_binary_op(scatter) is not ew.add_p:
        raise NotImplementedError(
            f"select_and_scatter: no derivative for select {select.name!r} with scatter "
            f"{scatter.name!r}; only a ge/le select with an add scatter is differentiable")
    return direction


def _sas_jvp(primals, tangents, *, select, scatter, **window):
    out = win.select_and_scatter_p.bind(*primals, select=select, scatter=scatter, **window)
    direction = _scatter_add_select(select, scatter, len(primals) - 3)
    (operand, _, _), (_, t_source, t_init) = primals[:3], tangents[:3]
    aval = abstractify(out)
    t = Zero(aval) if is_zero(t_source) else win.select_and_scatter_add_p.bind(
        t_source, operand, select_prim=direction, **window)
    if not is_zero(t_init):
        t = add_tangents(t, lax.broadcast_in_dim(t_init, aval.dimensions, ()))
    return out, t


def _sas_vjp(ct, fwd, operand, source, init, *extra, select, scatter, **window):
    """The result is ``init + select_and_scatter_add(source)``."""
    direction = _scatter_add_select(select, scatter, len(extra))
    full = _window(window, abstractify(operand).ndim)
    return (None,
            select_and_gather(ct, operand, direction, full) if fwd.wants[1] else None,
            lax.reduce_sum(ct, tuple(range(abstractify(ct).ndim))) if fwd.wants[2] else None)


jvp_rules[win.select_and_scatter_p] = _sas_jvp
vjp_rules[win.select_and_scatter_p] = _sas_vjp


# --------------------------------------------------------------------------
# batching
# --------------------------------------------------------------------------

def _insert_window(params: dict[str, Any], at: int) -> dict[str, Any]:
    """``params`` with a trivial window entry for a new dimension ``at``."""
    out = dict(params)
    for key in _WINDOW_KEYS:
        if key in params:
            values = list(params[key])
            values.insert(at, _TRIVIAL[key])
            out[key] = tuple(values)
    return out


def _common_dim(args, dims) -> tuple[list[Any], int]:
    """The operands with their batch dimension in one place (that of the
    first batched one if they all agree, else 0; unbatched ones broadcast)."""
    size = bdim_size(args, dims)
    batched = {d for d in dims if d is not None}
    at = batched.pop() if len(batched) == 1 else 0
    return [move_batch_dim(x, d, at, size) for x, d in zip(args, dims)], at


def _window_batch(prim, n_window_operands: Callable[[dict[str, Any]], int] | None = None):
    """Batch a window op whose first ``n_window_operands(params)`` operands
    are windowed arrays (all operands by default); the rest (init values,
    captured values) must be unbatched, else the op runs once per batch
    element."""
    def rule(args, dims, **params):
        n = len(args) if n_window_operands is None else n_window_operands(params)
        if any(d is not None for d in dims[n:]):
            return batch_by_loop(prim, args, dims, **params)
        moved, at = _common_dim(args[:n], dims[:n])
        out = prim.bind(*moved, *args[n:], **_insert_window(params, at))
        return out, ((at,) * len(out) if prim.multiple_results else at)
    batch_rules[prim] = rule


for _p in (win.reduce_window_sum_p, win.reduce_window_max_p, win.reduce_window_min_p,
           win.select_and_scatter_add_p):
    _window_batch(_p)
_window_batch(win.reduce_window_p, lambda params: len(params["computation"].out_avals))
_window_batch(win.select_and_scatter_p, lambda params: 2)
