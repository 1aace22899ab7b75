"""JVP, VJP and batching rules of the control-flow ops (primitives/control_flow.py).

Every op holds sub-graphs; a rule transforms an op by tracing new sub-graphs
that run the old one (``eval_graph``) under a transform (``jvp_flat``,
``vjp_flat``, ``batch_flat``/``vmap_flat``) and binding the same op on them.  Tangents,
cotangents and batch information travel as extra operands, in the slots the
op already has (a scan's carry gets the carry tangents, its consts the
tangents of the consts); values the new sub-graphs capture go to the consts.

* ``conditional``: JVP and VJP are conditionals over the transformed
  branches; a batched selector runs every branch and combines with select.
* ``while``: JVP carries (primal, tangent); no VJP (the trip count is
  dynamic); a batched predicate loops while any element's holds, updating
  only those elements (JAX's approach).
* ``scan``: JVP carries (primal, tangent); VJP is a reverse scan over the
  per-iteration carries that the forward scan stacks, recomputing each
  iteration's forward to apply its VJP.
* ``call`` through its computation; ``map`` element-wise (the map of the
  scalar JVP / VJP; batching adds a mapped dimension, or, when a static
  operand that is an array is batched, loops over the batch with
  ``rules.batch_by_loop``).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
from numxla.primitives import control_flow as cf
from numxla.primitives._subgraph import Computation, trace_computation
from numxla.tracer.core import AbstractValue, abstractify, array_value
from numxla.tracer.graph import Graph, eval_graph
from numxla.tracer.shapes import PrimitiveType as PT

from .batching import batch_flat, vmap_flat
from .forward import jvp_flat
from .reverse import vjp_flat
from .rules import Zero, add_tangents, batch_by_loop, batch_rules, bdim_size, instantiate, \
    is_differentiable_type, is_zero, jvp_rules, move_batch_dim, vjp_forward_rules, vjp_rules, \
    zeros_like_aval


# --------------------------------------------------------------------------
# helpers: splitting operand lists, transforming graphs
# --------------------------------------------------------------------------

def _split(xs: Sequence[Any], sizes: Sequence[int]) -> list[list[Any]]:
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    return out


def _pick(mask: Sequence[bool], xs: Sequence[Any]) -> list[Any]:
    return [x for m, x in zip(mask, xs) if m]


def _expand(mask: Sequence[bool], xs: Sequence[Any], avals: Sequence[AbstractValue]) -> list[Any]:
    """The inverse of ``_pick``: ``Zero`` where ``mask`` is False."""
    it = iter(xs)
    return [next(it) if m else Zero(a) for m, a in zip(mask, avals)]


def _batched_aval(aval: AbstractValue, size: int) -> AbstractValue:
    return array_value(aval.element_type, (size,) + tuple(aval.dimensions))


def _jvp_graph(graph: Graph, in_sizes: Sequence[int], nz_in: Sequence[bool],
               out_sizes: Sequence[int], emit_out: Sequence[bool | None], name: str
               ) -> tuple[Computation, list[bool], list[bool]]:
    """The JVP of ``graph`` as a new graph.  Its inputs are ``graph``'s, split
    into groups of ``in_sizes``, each group followed by the tangents of its
    members with ``nz_in``; its outputs likewise, each group followed by the
    tangents of its members with ``emit_out`` True (zeros if none flowed) or,
    where ``emit_out`` is None, those that turned out nonzero.  Returns the
    computation, which output tangents were nonzero and which were emitted."""
    in_avals, out_avals = graph.in_avals, graph.out_avals
    in_groups = _split(range(len(in_avals)), in_sizes)
    out_groups = _split(range(len(out_avals)), out_sizes)
    avals = [a for g in in_groups for a in [in_avals[i] for i in g]
             + [in_avals[i] for i in g if nz_in[i]]]
    box: dict[str, list[bool]] = {}

    def fn(*args):
        it = iter(args)
        primals: list[Any] = [None] * len(in_avals)
        tangents: list[Any] = [None] * len(in_avals)
        for g in in_groups:
            for i in g:
                primals[i] = next(it)
            for i in g:
                tangents[i] = next(it) if nz_in[i] else Zero(in_avals[i])
        outs, t_outs = jvp_flat(lambda *a: eval_graph(graph, *a), primals, tangents)
        nz = [not is_zero(t) for t in t_outs]
        emit = [(n if e is None else e) and is_differentiable_type(a)
                for n, e, a in zip(nz, emit_out, out_avals)]
        box.update(nz=nz, emit=emit)
        return [x for g in out_groups for x in [outs[i] for i in g]
                + [instantiate(t_outs[i]) for i in g if emit[i]]]

    comp = trace_computation(fn, avals, name=name)
    return comp, box["nz"], box["emit"]


def _jvp_loop_body(body: Graph, in_sizes: Sequence[int], nz_in: list[bool], num_carry: int,
                   name: str) -> tuple[Computation, list[bool], list[bool]]:
    """The JVP of a loop body whose first group of inputs and outputs is the
    carry: the carries with tangents are found by iterating to a fixed point
    (a carry whose tangent is nonzero after one iteration gets one from the
    start).  Returns the computation, the carry mask and the emitted mask of
    the other outputs."""
    n_out = len(body.out_avals)
    while True:
        nz_carry = nz_in[:num_carry]
        emit = list(nz_carry) + [None] * (n_out - num_carry)
        comp, nz_out, emitted = _jvp_graph(body, in_sizes, nz_in, [num_carry, n_out - num_carry],
                                           emit, name)
        grown = [a or (b and is_differentiable_type(av)) for a, b, av in
                 zip(nz_carry, nz_out[:num_carry], body.in_avals[:num_carry])]
        if grown == nz_carry:
            return comp, nz_carry, emitted[num_carry:]
        nz_in = grown + nz_in[num_carry:]


def _pullback(graph: Graph, primals: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
    """Cotangents of ``graph``'s inputs (``Zero`` where none flowed), by
    running it forward under ``vjp_flat`` and pulling ``cts`` back."""
    _, pullback = vjp_flat(lambda *a: eval_graph(graph, *a), primals)
    return pullback(list(cts))


def _batch_call(graph: Graph, args: Sequence[Any], dims: Sequence[int | None], size: int,
                force: Sequence[bool]) -> tuple[list[Any], list[bool]]:
    """``graph`` run batched on the current interpreter: results batched at 0
    where they depend on the batch or ``force`` says so, unbatched otherwise.
    Returns the results and which of them depended on the batch."""
    outs, out_dims = batch_flat(lambda *a: eval_graph(graph, *a), args, dims, size)
    batched = [d is not None for d in out_dims]
    return ([move_batch_dim(o, d, 0, size) if b or f else o
             for o, d, b, f in zip(outs, out_dims, batched, force)], batched)


def _batch_graph(graph: Graph, in_batched: Sequence[bool], force: Sequence[bool], size: int,
                 name: str) -> tuple[Computation, list[bool], list[bool]]:
    """``graph`` batched as a new graph: inputs with ``in_batched`` get a
    leading batch dimension, as do the outputs that depend on the batch or
    are forced.  Returns the computation, which outputs depended on the batch
    and which are batched."""
    avals = [_batched_aval(a, size) if b else a for a, b in zip(graph.in_avals, in_batched)]
    box: dict[str, list[bool]] = {}

    def fn(*args):
        outs, box["b"] = _batch_call(graph, args, [0 if b else None for b in in_batched],
                                     size, force)
        return outs

    comp = trace_computation(fn, avals, name=name)
    return comp, box["b"], [b or f for b, f in zip(box["b"], force)]


def _to_front(args: Sequence[Any], dims: Sequence[int | None], size: int) -> list[Any]:
    """Batched operands with their batch dimension moved to 0; others as they are."""
    return [x if d is None else move_batch_dim(x, d, 0, size) for x, d in zip(args, dims)]


# --------------------------------------------------------------------------
# Conditional
# --------------------------------------------------------------------------

def _cond_jvp(primals, tangents, *, branches, operand_counts):
    """A conditional over the JVPs of the branches; a result's tangent is
    emitted by every branch (zeros where one has none) if any branch has one."""
    selector, ops = primals[0], primals[1:]
    nz = [not is_zero(t) for t in tangents[1:]]
    nz_groups = _split(nz, operand_counts)
    n_out = len(branches[0].out_avals)
    first = [_jvp_graph(g, [len(m)], m, [n_out], [None] * n_out, f"{g.name}_jvp")
             for g, m in zip(branches, nz_groups)]
    union = [any(f[2][i] for f in first) for i in range(n_out)]
    comps = [c if emitted == union else
             _jvp_graph(g, [len(m)], m, [n_out], union, f"{g.name}_jvp")[0]
             for (c, _, emitted), g, m in zip(first, branches, nz_groups)]
    groups = [g + _pick(m, t) + list(c.captured) for g, t, m, c in
              zip(_split(ops, operand_counts), _split(tangents[1:], operand_counts),
                  nz_groups, comps)]
    outs = cf.conditional_p.bind(selector, *(x for g in groups for x in g),
                                 branches=tuple(c.graph for c in comps),
                                 operand_counts=tuple(len(g) for g in groups))
    out_avals = branches[0].out_avals
    return outs[:n_out], tuple(_expand(union, outs[n_out:], out_avals))


def _cond_vjp(ct, fwd, selector, *ops, branches, operand_counts):
    """A conditional over branches that each recompute their forward and
    pull the results' cotangents back: every branch returns a cotangent for
    every operand that wants one (zeros for other branches' operands); the
    selector gets none."""
    out_avals = branches[0].out_avals
    ct_nz = [not is_zero(c) for c in ct]
    cts = _pick(ct_nz, ct)
    avals = [abstractify(x) for x in ops]
    wants = [w and is_differentiable_type(a) for w, a in zip(fwd.wants[1:], avals)]
    starts = [sum(operand_counts[:b]) for b in range(len(branches))]
    comps = []
    for b, graph in enumerate(branches):
        lo, hi = starts[b], starts[b] + operand_counts[b]

        def fn(*args, graph=graph, lo=lo, hi=hi):
            got = _pullback(graph, args[:hi - lo], _expand(ct_nz, args[hi - lo:], out_avals))
            return [instantiate(got[j - lo]) if lo <= j < hi else
                    zeros_like_aval(avals[j]) for j in range(len(ops)) if wants[j]]

        comps.append(trace_computation(fn, list(graph.in_avals) + [abstractify(c) for c in cts],
                                       name=f"{graph.name}_vjp"))
    groups = [g + cts + list(c.captured) for g, c in zip(_split(ops, operand_counts), comps)]
    outs = cf.conditional_p.bind(selector, *(x for g in groups for x in g),
                                 branches=tuple(c.graph for c in comps),
                                 operand_counts=tuple(len(g) for g in groups))
    return (None,) + tuple(_expand(wants, outs, avals))


def _select_all(selector: Any, results: Sequence[Sequence[Any]]) -> list[Any]:
    """Per batch element, the results of the branch the selector picks (all
    batched at 0): ``select`` chains, the last branch for an index out of
    range (XLA's rule for Conditional)."""
    is_pred = abstractify(selector).element_type is PT.PRED
    out = []
    for j, last in enumerate(results[-1]):
        shape = abstractify(last).dimensions
        acc = last
        for b in range(len(results) - 2, -1, -1):
            pick = selector if is_pred else lax.eq(selector, np.asarray(b, np.int32))
            acc = lax.select(lax.broadcast_in_dim(pick, shape, (0,)), results[b][j], acc)
        out.append(acc)
    return out


def _cond_batch(args, dims, *, branches, operand_counts):
    """An unbatched selector batches each branch (a result batched in any
    branch is batched in all); a batched one runs every branch on the whole
    batch and picks per element with select, as JAX does."""
    size = bdim_size(args, dims)
    selector, ops = args[0], _to_front(args[1:], dims[1:], size)
    batched = [d is not None for d in dims[1:]]
    groups, b_groups = _split(ops, operand_counts), _split(batched, operand_counts)
    n_out = len(branches[0].out_avals)
    if dims[0] is not None:
        selector = move_batch_dim(selector, dims[0], 0, size)
        results = [_batch_call(g, grp, [0 if b else None for b in bg], size,
                               [a.shape.is_array for a in g.out_avals])[0]
                   for g, grp, bg in zip(branches, groups, b_groups)]
        return _select_all(selector, results), [0] * n_out
    first = [_batch_graph(g, bg, [False] * n_out, size, f"{g.name}_batched")
             for g, bg in zip(branches, b_groups)]
    union = [any(f[2][i] for f in first) for i in range(n_out)]
    comps = [c if out_b == union else _batch_graph(g, bg, union, size, f"{g.name}_batched")[0]
             for (c, _, out_b), g, bg in zip(first, branches, b_groups)]
    groups = [grp + list(c.captured) for grp, c in zip(groups, comps)]
    outs = cf.conditional_p.bind(selector, *(x for g in groups for x in g),
                                 branches=tuple(c.graph for c in comps),
                                 operand_counts=tuple(len(g) for g in groups))
    return outs, [0 if b else None for b in union]


jvp_rules[cf.conditional_p] = _cond_jvp
vjp_rules[cf.conditional_p] = _cond_vjp
batch_rules[cf.conditional_p] = _cond_batch


# --------------------------------------------------------------------------
# While
# --------------------------------------------------------------------------

def _while_jvp(primals, tangents, *, cond_graph, body_graph, cond_nconsts, body_nconsts):
    """A While over (primal, tangent) carries: the body is the body's JVP,
    the condition reads only the primal carry."""
    cc, bc, carry = _split(primals, [cond_nconsts, body_nconsts, len(primals)])
    _, bct, kt = _split(tangents, [cond_nconsts, body_nconsts, len(primals)])
    nk = len(carry)
    nz_in = [not is_zero(t) for t in kt + bct]
    body, nz_carry, _ = _jvp_loop_body(body_graph, [nk, body_nconsts], nz_in, nk,
                                       f"{body_graph.name}_jvp")
    n_kt = sum(nz_carry)
    k_avals = list(cond_graph.in_avals[:nk])
    cond = trace_computation(
        lambda *a: eval_graph(cond_graph, *a[:nk], *a[nk + n_kt:]),
        k_avals + _pick(nz_carry, k_avals) + list(cond_graph.in_avals[nk:]),
        name=f"{cond_graph.name}_jvp")
    carry_t = [instantiate(t) for t, m in zip(kt, nz_carry) if m]
    nz_b = [not is_zero(t) for t in bct]
    cond_consts = cc + list(cond.captured)
    body_consts = bc + _pick(nz_b, bct) + list(body.captured)
    outs = cf.while_p.bind(*cond_consts, *body_consts, *carry, *carry_t,
                           cond_graph=cond.graph, body_graph=body.graph,
                           cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return outs[:nk], tuple(_expand(nz_carry, outs[nk:], k_avals))


def _while_vjp(ct, fwd, *primals, **params):
    """None: running a While backwards needs its per-iteration carries, which a
    dynamic trip count cannot stack (JAX refuses it too)."""
    raise NotImplementedError(
        "Reverse-mode differentiation of while_loop is not supported: its trip count is "
        "only known at run time, so the loop cannot be run backwards. Use fori_loop with "
        "static (Python int) bounds, or scan, which reverse mode supports; forward mode "
        "(jvp, jacfwd) works on while_loop.")


def _while_batch(args, dims, *, cond_graph, body_graph, cond_nconsts, body_nconsts):
    """Batched carries with an unbatched predicate batch the body; a batched
    predicate (carries that differ per element decide the trip count) runs
    while any element's predicate holds and updates, with select, only the
    elements whose predicate still holds."""
    size = bdim_size(args, dims)
    cc, bc, carry = _split(_to_front(args, dims, size), [cond_nconsts, body_nconsts, len(args)])
    ccb, bcb, kb = _split([d is not None for d in dims], [cond_nconsts, body_nconsts, len(args)])
    nk = len(carry)
    while True:
        body, _, out_b = _batch_graph(body_graph, kb + bcb, kb, size, "while_body_batched")
        cond, pred_b, _ = _batch_graph(cond_graph, kb + ccb, [False], size, "while_cond_batched")
        grown = [a.shape.is_array for a in body_graph.out_avals] if pred_b[0] else out_b
        if grown == kb:
            break
        kb = grown
    carry = [move_batch_dim(x, None, 0, size) if b and d is None else x
             for x, b, d in zip(carry, kb, dims[cond_nconsts + body_nconsts:])]
    if not pred_b[0]:
        cond_consts = cc + list(cond.captured)
        body_consts = bc + list(body.captured)
        outs = cf.while_p.bind(*cond_consts, *body_consts, *carry, cond_graph=cond.graph,
                               body_graph=body.graph, cond_nconsts=len(cond_consts),
                               body_nconsts=len(body_consts))
        return outs, [0 if b else None for b in kb]
    in_dims = [0 if b else None for b in kb]

    def any_cond(*a):
        pred, _ = _batch_call(cond_graph, list(a), in_dims + [0 if b else None for b in ccb],
                              size, [True])
        return [lax.reduce_or(pred[0], (0,))]

    def masked_body(*a):
        k, b_consts, c_consts = _split(a, [nk, len(bc), len(cc)])
        pred, _ = _batch_call(cond_graph, k + c_consts, in_dims + [0 if b else None for b in ccb],
                              size, [True])
        new, _ = _batch_call(body_graph, k + b_consts, in_dims + [0 if b else None for b in bcb],
                             size, kb)
        return [lax.select(lax.broadcast_in_dim(pred[0], abstractify(n).dimensions, (0,)), n, o)
                for n, o in zip(new, k)]

    k_avals = [_batched_aval(a, size) for a in body_graph.in_avals[:nk]]
    cond = trace_computation(any_cond, k_avals + [abstractify(x) for x in cc],
                             name="while_cond_batched")
    body = trace_computation(masked_body, k_avals + [abstractify(x) for x in bc + cc],
                             name="while_body_batched")
    cond_consts = cc + list(cond.captured)
    body_consts = bc + cc + list(body.captured)
    outs = cf.while_p.bind(*cond_consts, *body_consts, *carry, cond_graph=cond.graph,
                           body_graph=body.graph, cond_nconsts=len(cond_consts),
                           body_nconsts=len(body_consts))
    return outs, [0] * nk


jvp_rules[cf.while_p] = _while_jvp
vjp_rules[cf.while_p] = _while_vjp
batch_rules[cf.while_p] = _while_batch


# --------------------------------------------------------------------------
# Scan
# --------------------------------------------------------------------------

def _scan_jvp(primals, tangents, *, body, num_consts, num_carry, length, reverse):
    """A scan over (primal, tangent) carries and xs: the body is the body's
    JVP, the tangents of the consts are consts too."""
    sizes = [num_consts, num_carry, len(primals)]
    consts, init, xs = _split(primals, sizes)
    ct, it, xt = _split(tangents, sizes)
    nx = len(xs)
    nz_in = [not is_zero(t) for t in it + xt + ct]
    comp, nz_carry, ys_emit = _jvp_loop_body(body, [num_carry, nx, num_consts], nz_in,
                                             num_carry, f"{body.name}_jvp")
    k_avals = body.in_avals[:num_carry]
    init_t = [instantiate(t) for t, m in zip(it, nz_carry) if m]
    new_consts = consts + _pick(nz_in[num_carry + nx:], ct) + list(comp.captured)
    new_xs = xs + _pick(nz_in[num_carry:num_carry + nx], xt)
    outs = cf.scan_p.bind(*new_consts, *init, *init_t, *new_xs, body=comp.graph,
                          num_consts=len(new_consts), num_carry=num_carry + len(init_t),
                          length=length, reverse=reverse)
    carry, carry_t, ys, ys_t = _split(outs, [num_carry, len(init_t), len(ys_emit), len(outs)])
    y_avals = [abstractify(y) for y in ys]
    return (carry + ys, tuple(_expand(nz_carry, carry_t, k_avals)
                              + _expand(ys_emit, ys_t, y_avals)))


def _scan_vjp_forward(*primals, body, num_consts, num_carry, length, reverse):
    """The forward scan of reverse mode: the scan's results, plus, as the
    residuals, each iteration's incoming carry stacked as extra ys."""
    kept = [a.shape.is_array for a in body.in_avals[:num_carry]]

    def fn(*args):
        return eval_graph(body, *args) + _pick(kept, args[:num_carry])

    comp = trace_computation(fn, body.in_avals, name=f"{body.name}_fwd")
    consts, init, xs = _split(primals, [num_consts, num_carry, len(primals)])
    consts = consts + list(comp.captured)
    outs = cf.scan_p.bind(*consts, *init, *xs, body=comp.graph, num_consts=len(consts),
                          num_carry=num_carry, length=length, reverse=reverse)
    n = len(body.out_avals)
    return tuple(outs[:n]), tuple(outs[n:])


def _scan_vjp(ct, fwd, *primals, body, num_consts, num_carry, length, reverse):
    """A scan in the other direction over the stacked carries: iteration
    ``i`` recomputes the body at its carry, xs slice and consts and pulls the
    cotangents of its results back; the carry holds the carries' cotangents
    and the sums of the consts' cotangents, the ys the xs' cotangents."""
    consts, init, xs = _split(primals, [num_consts, num_carry, len(primals)])
    nx = len(xs)
    k_avals, x_avals, c_avals = _split(body.in_avals, [num_carry, nx, num_consts])
    out_avals = body.out_avals
    wants_c, wants_k, wants_x = _split(fwd.wants, [num_consts, num_carry, nx])
    dk = [is_differentiable_type(a) for a in k_avals]     # carried cotangents
    dc = [w and is_differentiable_type(a) for w, a in zip(wants_c, c_avals)]
    dx = [w and is_differentiable_type(a) for w, a in zip(wants_x, x_avals)]
    ct_k, ct_y = list(ct[:num_carry]), list(ct[num_carry:])
    dy = [not is_zero(c) for c in ct_y]
    kept = [a.shape.is_array for a in k_avals]
    sizes = [sum(dk), sum(dc), sum(dy), sum(kept), nx, num_consts]

    def fn(*args):
        g_k, acc, c_y, res, x, c = _split(args, sizes)
        res_it = iter(res)
        carry = [next(res_it) if k else lax.create_token() for k in kept]
        got = _pullback(body, carry + x + c,
                        _expand(dk, g_k, k_avals) + _expand(dy, c_y, out_avals[num_carry:]))
        got_k, got_x, got_c = _split(got, [num_carry, nx, num_consts])
        new_acc = [add_tangents(a, g) for a, g in zip(acc, _pick(dc, got_c))]
        return ([instantiate(g) for g in _pick(dk, got_k)]
                + new_acc
                + [instantiate(g) for g in _pick(dx, got_x)])

    avals = (_pick(dk, k_avals) + _pick(dc, c_avals)
             + [a for a, d in zip(out_avals[num_carry:], dy) if d] + _pick(kept, k_avals)
             + list(x_avals) + list(c_avals))
    comp = trace_computation(fn, avals, name=f"{body.name}_vjp")
    init_ct = [instantiate(c) for c in _pick(dk, ct_k)]
    acc0 = [zeros_like_aval(a) for a in _pick(dc, c_avals)]
    new_consts = consts + list(comp.captured)
    outs = cf.scan_p.bind(*new_consts, *init_ct, *acc0, *_pick(dy, ct_y), *fwd.residuals, *xs,
                          body=comp.graph, num_consts=len(new_consts),
                          num_carry=len(init_ct) + len(acc0), length=length, reverse=not reverse)
    g_init, g_consts, g_xs = _split(outs, [len(init_ct), len(acc0), len(outs)])
    g_init = _expand(dk, g_init, k_avals)
    return tuple([g if d else None for g, d in zip(_expand(dc, g_consts, c_avals), dc)]
                 + [g if w and d else None for g, w, d in zip(g_init, wants_k, dk)]
                 + [g if d else None for g, d in zip(_expand(dx, g_xs, x_avals), dx)])


def _scan_batch(args, dims, *, body, num_consts, num_carry, length, reverse):
    """The scan of the batched body: consts and carries batched at 0, xs at
    1 (so each slice is batched at 0), ys come out batched at 1.  A carry is
    batched if its init or the body's result for it is (to a fixed point)."""
    size = bdim_size(args, dims)
    sizes = [num_consts, num_carry, len(args)]
    consts, init, xs = _split(args, sizes)
    cd, kd, xd = _split(dims, sizes)
    kb = [d is not None for d in kd]
    n_y = len(body.out_avals) - num_carry
    while True:
        comp, _, out_b = _batch_graph(body, kb + [d is not None for d in xd + cd],
                                      kb + [False] * n_y, size, f"{body.name}_batched")
        if out_b[:num_carry] == kb:
            break
        kb = [a or b for a, b in zip(kb, out_b[:num_carry])]
    new_consts = _to_front(consts, cd, size) + list(comp.captured)
    init = [move_batch_dim(x, d, 0, size) if b else x for x, d, b in zip(init, kd, kb)]
    xs = [x if d is None else move_batch_dim(x, d, 1, size) for x, d in zip(xs, xd)]
    outs = cf.scan_p.bind(*new_consts, *init, *xs, body=comp.graph, num_consts=len(new_consts),
                          num_carry=num_carry, length=length, reverse=reverse)
    return outs, [0 if b else None for b in kb] + [1 if b else None for b in out_b[num_carry:]]


jvp_rules[cf.scan_p] = _scan_jvp
vjp_forward_rules[cf.scan_p] = _scan_vjp_forward
vjp_rules[cf.scan_p] = _scan_vjp
batch_rules[cf.scan_p] = _scan_batch


# --------------------------------------------------------------------------
# Call
# --------------------------------------------------------------------------

def _call_jvp(primals, tangents, *, computation):
    """A call of the computation's JVP (tangents as extra operands)."""
    nz = [not is_zero(t) for t in tangents]
    n_out = len(computation.out_avals)
    comp, _, emit = _jvp_graph(computation, [len(primals)], nz, [n_out], [None] * n_out,
                               f"{computation.name}_jvp")
    outs = cf.call_p.bind(*primals, *_pick(nz, tangents), *comp.captured,
                          computation=comp.graph)
    return outs[:n_out], tuple(_expand(emit, outs[n_out:], computation.out_avals))


def _call_vjp(ct, fwd, *primals, computation):
    """A call of the computation's VJP: the operands and the nonzero result
    cotangents in, the operands' cotangents out."""
    ct_nz = [not is_zero(c) for c in ct]
    cts = _pick(ct_nz, ct)
    avals = [abstractify(x) for x in primals]
    wants = [w and is_differentiable_type(a) for w, a in zip(fwd.wants, avals)]
    n = len(primals)

    def fn(*args):
        got = _pullback(computation, args[:n], _expand(ct_nz, args[n:], computation.out_avals))
        return [instantiate(g) for g in _pick(wants, got)]

    comp = trace_computation(fn, list(computation.in_avals) + [abstractify(c) for c in cts],
                             name=f"{computation.name}_vjp")
    outs = cf.call_p.bind(*primals, *cts, *comp.captured, computation=comp.graph)
    return tuple(_expand(wants, outs, avals))


def _call_batch(args, dims, *, computation):
    """A call of the batched computation."""
    size = bdim_size(args, dims)
    n_out = len(computation.out_avals)
    comp, _, out_b = _batch_graph(computation, [d is not None for d in dims], [False] * n_out,
                                  size, f"{computation.name}_batched")
    outs = cf.call_p.bind(*_to_front(args, dims, size), *comp.captured, computation=comp.graph)
    return outs, [0 if b else None for b in out_b]


jvp_rules[cf.call_p] = _call_jvp
vjp_rules[cf.call_p] = _call_vjp
batch_rules[cf.call_p] = _call_batch


# --------------------------------------------------------------------------
# Map (XLA's)
# --------------------------------------------------------------------------

def _map_jvp(primals, tangents, *, computation, dimensions, num_consts):
    """A map of the scalar computation's JVP: the tangents of the mapped
    operands are mapped operands, those of the static operands static."""
    na = len(primals) - num_consts
    nz = [not is_zero(t) for t in tangents]
    n_out = len(computation.out_avals)
    comp, _, emit = _jvp_graph(computation, [na, num_consts], nz, [n_out], [None] * n_out,
                               f"{computation.name}_jvp")
    arrays, consts = primals[:na], primals[na:]
    mapped = list(arrays) + _pick(nz[:na], tangents[:na])
    static = list(consts) + _pick(nz[na:], tangents[na:]) + list(comp.captured)
    outs = cf.map_p.bind(*mapped, *static, computation=comp.graph, dimensions=dimensions,
                         num_consts=len(static))
    out_avals = [abstractify(o) for o in outs[:n_out]]
    return outs[:n_out], tuple(_expand(emit, outs[n_out:], out_avals))


def _map_vjp(ct, fwd, *primals, computation, dimensions, num_consts):
    """A map of the scalar computation's VJP: per element, the cotangents of
    the mapped operands and of the scalar static operands (those summed over
    all elements).  Static operands that are arrays get theirs from the VJP
    of the computation batched over all elements at once (a map can only
    return scalars)."""
    na = len(primals) - num_consts
    arrays, consts = list(primals[:na]), list(primals[na:])
    avals = [abstractify(x) for x in primals]
    wants = [w and is_differentiable_type(a) for w, a in zip(fwd.wants, avals)]
    ct_nz = [not is_zero(c) for c in ct]
    cts = _pick(ct_nz, ct)
    out_avals = computation.out_avals
    # mapped operands and scalar static operands: through a map
    via_map = wants[:na] + [w and a.ndim == 0 for w, a in zip(wants[na:], avals[na:])]
    got: list[Any] = [None] * len(primals)
    if any(via_map):
        def fn(*args):
            x, c_out, c = _split(args, [na, len(cts), num_consts])
            g = _pullback(computation, x + c, _expand(ct_nz, c_out, out_avals))
            return [instantiate(gi) for gi, m in zip(g, via_map) if m]

        comp = trace_computation(fn, list(computation.in_avals[:na])
                                 + [a for a, m in zip(out_avals, ct_nz) if m]
                                 + list(computation.in_avals[na:]),
                                 name=f"{computation.name}_vjp")
        static = consts + list(comp.captured)
        outs = iter(cf.map_p.bind(*arrays, *cts, *static, computation=comp.graph,
                                  dimensions=dimensions, num_consts=len(static)))
        all_dims = tuple(range(avals[0].ndim))
        for i, m in enumerate(via_map):
            if m:
                g = next(outs)
                got[i] = g if i < na else lax.reduce_sum(g, all_dims)
    rest = [i for i in range(na, len(primals)) if wants[i] and not via_map[i]]
    if rest:
        for i, g in zip(rest, _static_cts(computation, arrays, consts, ct, rest, na)):
            got[i] = instantiate(g)
    return tuple(got)


def _static_cts(computation: Graph, arrays: list[Any], consts: list[Any], ct: Sequence[Any],
                rest: Sequence[int], na: int) -> list[Any]:
    """Cotangents of the static operands ``rest`` (indices among all
    operands): the computation vmapped over the flattened elements, pulled back."""
    n = abstractify(arrays[0]).size
    flat = [lax.reshape(a, (n,)) for a in arrays]

    def f(*chosen):
        full = list(consts)
        for i, c in zip(rest, chosen):
            full[i - na] = c
        return vmap_flat(lambda *a: eval_graph(computation, *a), flat + full,
                         [0] * len(flat) + [None] * len(full), 0, n)

    _, pullback = vjp_flat(f, [consts[i - na] for i in rest])
    return pullback([c if is_zero(c) else lax.reshape(c, (n,)) for c in ct])


def _map_batch(args, dims, *, computation, dimensions, num_consts):
    """The batch dimension becomes one more mapped dimension (at 0); a
    batched scalar static operand becomes a mapped operand.  A batched array
    static operand has no element-wise form: then the map runs once per batch
    element (a scan)."""
    size = bdim_size(args, dims)
    na = len(args) - num_consts
    c_avals = computation.in_avals[na:]
    if any(d is not None and a.ndim for d, a in zip(dims[na:], c_avals)):
        return batch_by_loop(cf.map_p, args, dims, computation=computation,
                             dimensions=dimensions, num_consts=num_consts)
    arrays = [move_batch_dim(x, d, 0, size) for x, d in zip(args[:na], dims[:na])]
    full = abstractify(arrays[0]).dimensions
    promoted = [i for i, d in enumerate(dims[na:]) if d is not None]
    kept = [i for i, d in enumerate(dims[na:]) if d is None]
    consts = args[na:]
    arrays += [lax.broadcast_in_dim(consts[i], full, (0,)) for i in promoted]
    graph = computation
    if promoted:
        def fn(*a):
            c = [None] * num_consts
            for i, v in zip(promoted + kept, a[na:]):
                c[i] = v
            return eval_graph(computation, *a[:na], *c)

        comp = trace_computation(fn, list(computation.in_avals[:na])
                                 + [c_avals[i] for i in promoted + kept],
                                 name=f"{computation.name}_batched")
        graph, extra = comp.graph, list(comp.captured)
    else:
        extra = []
    static = [consts[i] for i in kept] + extra
    outs = cf.map_p.bind(*arrays, *static, computation=graph,
                         dimensions=tuple(range(len(full))), num_consts=len(static))
    return outs, [0] * len(outs)


jvp_rules[cf.map_p] = _map_jvp
vjp_rules[cf.map_p] = _map_vjp
batch_rules[cf.map_p] = _map_batch
