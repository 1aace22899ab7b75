"""Rules of the ops with effects, tokens and several processes:
primitives/rng.py, primitives/side_effects.py and primitives/collectives.py.

* Random numbers have no derivative (XLA's RngUniform/RngNormal values are
  implementation-defined; ``a + (b - a) * rng_uniform(0, 1, shape)`` gives
  the reparameterised one).  ``rng_bit_generator`` batches over
  keys by a sequential loop (one call per key, so each batch element gets
  exactly the bits of its own key); ``rng_uniform``/``rng_normal`` with
  batched bounds draw the whole batch at once from the standard
  distribution and scale it per element, in float64 as their reference
  semantics do: the values are those a loop of per-element calls would give
  from the same generator state, in batch order.
* Tokens carry no data: ``after_all``, ``infeed`` and ``recv`` have no
  derivative and are never batched (a token is not batched);
  ``outfeed``/``send`` pass no derivative and, given a batched operand, send
  one value per batch element in batch order (the host sees what the
  unbatched program run once per element would send).
* ``optimization_barrier``, ``tuple`` and ``get_tuple_element`` are
  structural: tangents and cotangents go through them.  ``composite_call``
  is differentiated and batched through its decomposition (inlined).
  ``custom_call`` targets are opaque: a derivative requested through one of
  their floating-point results raises, naming the target; vmap loops.
* Collectives: a sum ``all_reduce``/``reduce_scatter``, ``all_gather``,
  ``all_to_all``, ``collective_permute`` and ``collective_broadcast`` are
  linear.  Their transposes are collectives over the same process groups:
  sum all_reduce -> sum all_reduce, all_gather -> sum reduce_scatter,
  sum reduce_scatter -> all_gather, all_to_all -> all_to_all with the split
  and concat dimensions swapped, collective_permute -> the inverse
  permutation, collective_broadcast -> sum into the group's first member.
  A max/min reduction passes the tangent of the winning operands (averaged
  over ties, as ``reduce_max``).  Other reduction computations raise.
  Batching keeps each process's batch in place (a collective acts the same
  on every element of the batch).
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
from numxla.primitives import collectives as coll
from numxla.primitives import elementwise as ew
from numxla.primitives import rng
from numxla.primitives import side_effects as se
from numxla.primitives.reductions import single_binary_op
from numxla.tracer.core import AbstractValue, abstractify
from numxla.tracer.graph import eval_graph
from numxla.tracer.shapes import PrimitiveType as PT

from .batching import batch_flat
from .forward import jvp_flat
from .reverse import vjp_flat
from .rules import Zero, batch_by_loop, batch_rules, bdim_size, convert_like, instantiate, \
    is_differentiable_type, is_zero, jvp_rules, linear_jvp, move_batch_dim, \
    register_non_differentiable, vjp_forward_rules, vjp_rules, zeros_like_aval


def _zero_outs(outs: Sequence[Any]) -> tuple[Zero, ...]:
    return tuple(Zero(abstractify(o)) for o in outs)


def _passthrough_batch(prim):
    """A batching rule for ops whose operands are never batched (tokens, or none)."""
    def rule(args, dims, **params):
        out = prim.bind(*args, **params)
        return out, ((None,) * len(out) if prim.multiple_results else None)
    return rule


# ==========================================================================
# random numbers
# ==========================================================================

register_non_differentiable(rng.rng_bit_generator_p, rng.rng_uniform_p, rng.rng_normal_p)


def _rng_bit_generator_batch(args, dims, **params):
    """One generator call per key, in a sequential loop: the op takes one
    state, and its bits depend on the whole state through the block cipher,
    so there is no batched form (short of re-deriving the expander's cipher
    and bit layout in element-wise ops)."""
    return batch_by_loop(rng.rng_bit_generator_p, args, dims, **params)


def _bounds(args, dims, shape):
    """The two scalar bounds as arrays of the batched result shape ``(B, *shape)``
    (each element's bound broadcast over its slice), in their own type."""
    size = bdim_size(args, dims)
    full = (size, *shape)
    return [lax.broadcast_in_dim(move_batch_dim(x, d, 0, size), full, (0,))
            for x, d in zip(args, dims)]


def _f64(x: Any) -> Any:
    return lax.convert_element_type(x, PT.F64)


def _next_below(b: Any, b64: Any) -> Any:
    """The largest value of ``b``'s type below ``b`` (finite), by stepping its
    bit pattern: down for positive ``b``, up in magnitude for negative, the
    smallest negative subnormal (sign bit and 1) for +-0.  ``b64`` is ``b``
    in float64, for the comparisons."""
    aval = abstractify(b)
    word = {16: PT.S16, 32: PT.S32, 64: PT.S64}[aval.element_type.bit_width]
    bits = lax.bitcast_convert_type(b, word)
    one = np.asarray(1, word.numpy_dtype)
    stepped = lax.select(lax.gt(b64, np.float64(0)), lax.sub(bits, one), lax.add(bits, one))
    smallest_negative = lax.broadcast_in_dim(
        np.asarray(np.iinfo(word.numpy_dtype).min + 1, word.numpy_dtype), aval.dimensions, ())
    stepped = lax.select(lax.eq(b64, np.float64(0)), smallest_negative, stepped)
    return lax.bitcast_convert_type(stepped, aval.element_type)


def _rng_uniform_batch(args, dims, *, shape, dtype):
    """Floating point: one draw of the whole batch from [0, 1), scaled to
    [a_i, b_i) per element in float64 (the reference semantics' formula, and
    its clamp below b_i).  Integers and booleans: a sequential loop of
    per-element calls (their draw is not an affine map of a standard one)."""
    if not dtype.is_floating:
        return batch_by_loop(rng.rng_uniform_p, args, dims, shape=shape, dtype=dtype)
    a, b = _bounds(args, dims, shape)
    a64, b64 = _f64(a), _f64(b)
    u = rng.rng_uniform_p.bind(np.float64(0), np.float64(1), shape=abstractify(a).dimensions,
                               dtype=PT.F64)
    out = lax.convert_element_type(lax.add(a64, lax.mul(lax.sub(b64, a64), u)), dtype)
    # rounding may reach b, which [a, b) excludes
    reached = lax.and_(lax.gt(b64, a64), lax.ge(_f64(out), b64))
    return lax.select(reached, _next_below(b, b64), out), 0


def _rng_normal_batch(args, dims, *, shape, dtype):
    """One draw of the whole batch from N(0, 1), then ``mu_i + sigma_i * z``
    in float64, as the reference semantics compute each element."""
    mu, sigma = _bounds(args, dims, shape)
    z = rng.rng_normal_p.bind(np.float64(0), np.float64(1), shape=abstractify(mu).dimensions,
                              dtype=PT.F64)
    return lax.convert_element_type(lax.add(_f64(mu), lax.mul(_f64(sigma), z)), dtype), 0


batch_rules[rng.rng_bit_generator_p] = _rng_bit_generator_batch
batch_rules[rng.rng_uniform_p] = _rng_uniform_batch
batch_rules[rng.rng_normal_p] = _rng_normal_batch


# ==========================================================================
# tokens and host transfers
# ==========================================================================

register_non_differentiable(se.after_all_p, se.infeed_p, se.recv_p, se.outfeed_p, se.send_p)
for _prim in (se.after_all_p, se.infeed_p, se.recv_p):
    batch_rules[_prim] = _passthrough_batch(_prim)


def _per_element_transfer_batch(prim):
    """A batched operand is sent one batch element at a time, in batch order,
    each transfer ordered after the previous one by the token (there is no
    batched form: the receiver expects values of the unbatched shape)."""
    def rule(args, dims, **params):
        (x, token), (d, dt) = args, dims
        assert dt is None, "a token is never batched"
        for i in range(bdim_size(args, dims)):
            element = lax.squeeze(lax.slice_in_dim(x, i, i + 1, axis=d), (d,))
            token = prim.bind(element, token, **params)
        return token, None
    return rule


batch_rules[se.outfeed_p] = _per_element_transfer_batch(se.outfeed_p)
batch_rules[se.send_p] = _per_element_transfer_batch(se.send_p)


# ==========================================================================
# custom calls: opaque targets
# ==========================================================================

def _no_custom_call_derivative(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"custom_call: no derivative is defined for the custom call target {name!r} (its "
        f"function is opaque); differentiate a function that does not route a "
        f"floating-point result of {name!r} into the differentiated output, or wrap it "
        f"with a composite_call whose decomposition can be differentiated")


def _custom_call_jvp(primals, tangents, **params):
    """Allowed only when no result is floating point (nothing to differentiate)."""
    outs = se.custom_call_p.bind(*primals, **params)
    if any(is_differentiable_type(abstractify(o)) for o in outs):
        raise _no_custom_call_derivative(params["call_target_name"])
    return outs, _zero_outs(outs)


def _custom_call_vjp(cts, fwd, *operands, **params):
    """Reached only when a cotangent reaches a floating-point result."""
    raise _no_custom_call_derivative(params["call_target_name"])


jvp_rules[se.custom_call_p] = _custom_call_jvp
vjp_rules[se.custom_call_p] = _custom_call_vjp
# a sequential loop, one call per batch element (the target only knows the
# unbatched shapes); unbatched operands are shared
batch_rules[se.custom_call_p] = functools.partial(batch_by_loop, se.custom_call_p)


# ==========================================================================
# composite calls: through the decomposition
# ==========================================================================

def _composite_jvp(primals, tangents, *, decomposition, **_):
    """The JVP of the decomposition, inlined."""
    outs, t_outs = jvp_flat(lambda *a: eval_graph(decomposition, *a), primals, tangents)
    return tuple(outs), tuple(t_outs)


def _composite_vjp_forward(*operands, decomposition, **_):
    """Runs the decomposition (inlined) under reverse mode; its pullback is the residual."""
    outs, pullback = vjp_flat(lambda *a: eval_graph(decomposition, *a), operands)
    return tuple(outs), pullback


def _composite_vjp(cts, fwd, *operands, **_):
    got = fwd.residuals(list(cts))
    return tuple(None if not want or is_zero(g) else g for g, want in zip(got, fwd.wants))


def _composite_batch(args, dims, *, decomposition, **_):
    """The decomposition batched op by op (inlined); results that do not
    depend on the batch stay unbatched."""
    outs, out_dims = batch_flat(lambda *a: eval_graph(decomposition, *a), args, dims,
                                bdim_size(args, dims))
    return tuple(outs), tuple(out_dims)


jvp_rules[se.composite_p] = _composite_jvp
vjp_forward_rules[se.composite_p] = _composite_vjp_forward
vjp_rules[se.composite_p] = _composite_vjp
batch_rules[se.composite_p] = _composite_batch


# ==========================================================================
# structural ops: optimization_barrier, tuple, get_tuple_element
# ==========================================================================

def _barrier_jvp(primals, tangents):
    """One barrier over the primals and the non-zero tangents."""
    live = [i for i, t in enumerate(tangents) if not is_zero(t)]
    outs = se.optimization_barrier_p.bind(*primals, *(tangents[i] for i in live))
    n = len(primals)
    t_outs: list[Any] = list(_zero_outs(outs[:n]))
    for i, t in zip(live, outs[n:]):
        t_outs[i] = t
    return tuple(outs[:n]), tuple(t_outs)


def _barrier_vjp(cts, fwd, *operands):
    """The cotangents go back through a barrier of their own."""
    live = [i for i, c in enumerate(cts) if fwd.wants[i] and not is_zero(c)]
    back = se.optimization_barrier_p.bind(*(cts[i] for i in live))
    out: list[Any] = [None] * len(operands)
    for i, c in zip(live, back):
        out[i] = c
    return tuple(out)


def _barrier_batch(args, dims):
    return se.optimization_barrier_p.bind(*args), tuple(dims)


jvp_rules[se.stop_gradient_p] = lambda primals, tangents: (
    se.stop_gradient_p.bind(*primals), Zero(abstractify(primals[0])))
vjp_rules[se.stop_gradient_p] = lambda ct, fwd, x: (None,)
batch_rules[se.stop_gradient_p] = lambda args, dims: (se.stop_gradient_p.bind(*args), dims[0])
jvp_rules[se.optimization_barrier_p] = _barrier_jvp
vjp_rules[se.optimization_barrier_p] = _barrier_vjp
batch_rules[se.optimization_barrier_p] = _barrier_batch


def _tuple_jvp(primals, tangents):
    """The tangent of a tuple is the tuple of its elements' tangents (zeros
    of their own type for elements without one)."""
    out = se.tuple_p.bind(*primals)
    return out, se.tuple_p.bind(*(instantiate(t) for t in tangents))


def _tuple_vjp(ct, fwd, *elements):
    return tuple(se.get_tuple_element_p.bind(ct, index=i) if want else None
                 for i, want in enumerate(fwd.wants))


def _get_tuple_element_jvp(primals, tangents, *, index):
    (tup,), (t,) = primals, tangents
    out = se.get_tuple_element_p.bind(tup, index=index)
    if not is_differentiable_type(abstractify(out)):
        return out, Zero(abstractify(out))
    return out, se.get_tuple_element_p.bind(t, index=index)


def _get_tuple_element_vjp(ct, fwd, tup, *, index):
    """The cotangent of the tuple: ``ct`` at ``index``, zeros elsewhere."""
    shapes = abstractify(tup).shape.tuple_shapes
    return (se.tuple_p.bind(*(ct if i == index else zeros_like_aval(AbstractValue(s))
                              for i, s in enumerate(shapes))),)


def _tuple_batch(args, dims):
    """A batched value needs a batch dimension, which a TUPLE-typed value does
    not have (the batching interpreter tracks one dimension per value), so a
    tuple of batched elements cannot be formed under vmap.  A tuple of
    unbatched values is not batched and never reaches this rule."""
    raise NotImplementedError("tuple: vmap of a tuple of batched values is not supported (a "
                              "TUPLE value has no batch dimension); use pytrees of arrays")


jvp_rules[se.tuple_p] = _tuple_jvp
vjp_rules[se.tuple_p] = _tuple_vjp
batch_rules[se.tuple_p] = _tuple_batch
jvp_rules[se.get_tuple_element_p] = _get_tuple_element_jvp
vjp_rules[se.get_tuple_element_p] = _get_tuple_element_vjp
batch_rules[se.get_tuple_element_p] = _passthrough_batch(se.get_tuple_element_p)


# ==========================================================================
# collectives
# ==========================================================================

register_non_differentiable(coll.replica_id_p, coll.partition_id_p)
batch_rules[coll.replica_id_p] = _passthrough_batch(coll.replica_id_p)
batch_rules[coll.partition_id_p] = _passthrough_batch(coll.partition_id_p)

# the reduction computations with a derivative: the one op -> its kind
_REDUCER_KINDS = {ew.add_p: "add", ew.max_p: "max", ew.min_p: "min"}


def _unsupported_reducer(op: str, graph) -> NotImplementedError:
    return NotImplementedError(
        f"{op}: derivatives are defined for add, max and min reduction computations only, "
        f"got the computation\n{graph.as_text()}")


def _group_params(params: dict) -> dict:
    """The parameters that pick the process groups."""
    return {k: params[k] for k in ("replica_groups", "channel_id", "use_global_device_ids")}


def _psum(xs: Sequence[Any], groups: dict) -> tuple[Any, ...]:
    """A sum all_reduce of several arrays over ``groups`` (one collective)."""
    return tuple(lax.all_reduce(list(xs), lax.add, **groups))


def _indicator(x: Any, winner: Any) -> Any:
    """1 where ``x`` is the reduction's result, else 0, in ``x``'s type."""
    return convert_like(lax.eq(x, winner), x)


def _by_kind(computation, wanted: Sequence[int], op: str) -> dict[str, list[int]]:
    """The indices of ``wanted`` grouped by reduction kind; raises for others."""
    kinds: dict[str, list[int]] = {"add": [], "max": [], "min": []}
    for i in wanted:
        kind = _REDUCER_KINDS.get(single_binary_op(computation[i]))
        if kind is None:
            raise _unsupported_reducer(op, computation[i])
        kinds[kind].append(i)
    return kinds


def _linear_subset_jvp(prim):
    """The JVP of a collective acting on each operand on its own, linear in
    it: the op applied to the non-zero tangents only."""
    def rule(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        live = [i for i, t in enumerate(tangents) if not is_zero(t)]
        sub = dict(params)
        if "computation" in params:
            sub["computation"] = tuple(params["computation"][i] for i in live)
        t_outs: list[Any] = list(_zero_outs(outs))
        for i, t in zip(live, prim.bind(*(tangents[i] for i in live), **sub)):
            t_outs[i] = t
        return outs, tuple(t_outs)
    return rule


def _all_reduce_jvp(primals, tangents, *, computation, **params):
    """Sum: linear.  Max/min: the tangent of the winners, averaged over ties."""
    groups = _group_params(params)
    outs = coll.all_reduce_p.bind(*primals, computation=computation, **groups)
    live = [i for i, t in enumerate(tangents) if not is_zero(t)]
    kinds = _by_kind(computation, live, "all_reduce")
    t_outs: list[Any] = list(_zero_outs(outs))
    choosers = kinds["max"] + kinds["min"]
    inds = [_indicator(primals[i], outs[i]) for i in choosers]
    summed = _psum([tangents[i] for i in kinds["add"]] +
                   [lax.mul(tangents[i], m) for i, m in zip(choosers, inds)] + inds, groups)
    n_add, n_ch = len(kinds["add"]), len(choosers)
    for k, i in enumerate(kinds["add"]):
        t_outs[i] = summed[k]
    for k, i in enumerate(choosers):
        t_outs[i] = lax.div(summed[n_add + k], summed[n_add + n_ch + k])
    return outs, tuple(t_outs)


def _all_reduce_vjp(cts, fwd, *operands, computation, **params):
    """Sum: a sum all_reduce of the cotangents.  Max/min: the summed
    cotangent shared among the winners."""
    groups = _group_params(params)
    live = [i for i, c in enumerate(cts) if fwd.wants[i] and not is_zero(c)]
    if not live:
        return (None,) * len(operands)
    kinds = _by_kind(computation, live, "all_reduce")
    choosers = kinds["max"] + kinds["min"]
    inds = [_indicator(operands[i], fwd.out[i]) for i in choosers]
    summed = _psum([cts[i] for i in kinds["add"] + choosers] + inds, groups)
    out: list[Any] = [None] * len(operands)
    n_add, n_ch = len(kinds["add"]), len(choosers)
    for k, i in enumerate(kinds["add"]):
        out[i] = summed[k]
    for k, (i, m) in enumerate(zip(choosers, inds)):
        out[i] = lax.mul(lax.div(m, summed[n_add + n_ch + k]), summed[n_add + k])
    return tuple(out)


def _reduce_scatter_jvp(primals, tangents, *, computation, scatter_dimension, shard_count,
                        **params):
    """Sum: linear.  Max/min: the winners' tangents (winners found against a
    max/min all_reduce of the whole operand), reduce-scattered, over their count."""
    groups = _group_params(params)
    outs = coll.reduce_scatter_p.bind(*primals, computation=computation,
                                      scatter_dimension=scatter_dimension,
                                      shard_count=shard_count, **groups)
    live = [i for i, t in enumerate(tangents) if not is_zero(t)]
    kinds = _by_kind(computation, live, "reduce_scatter")
    choosers = kinds["max"] + kinds["min"]
    inds = _full_indicators(primals, choosers, computation, groups)
    scattered = lax.reduce_scatter(
        [tangents[i] for i in kinds["add"]] +
        [lax.mul(tangents[i], m) for i, m in zip(choosers, inds)] + inds,
        lax.add, scatter_dimension, shard_count, **groups)
    t_outs: list[Any] = list(_zero_outs(outs))
    n_add, n_ch = len(kinds["add"]), len(choosers)
    for k, i in enumerate(kinds["add"]):
        t_outs[i] = scattered[k]
    for k, i in enumerate(choosers):
        t_outs[i] = lax.div(scattered[n_add + k], scattered[n_add + n_ch + k])
    return outs, tuple(t_outs)


def _full_indicators(operands, indices, computation, groups) -> list[Any]:
    """For max/min operands: where each equals the reduction over its group."""
    if not indices:
        return []
    full = coll.all_reduce_p.bind(*(operands[i] for i in indices),
                                  computation=tuple(computation[i] for i in indices), **groups)
    return [_indicator(operands[i], f) for i, f in zip(indices, full)]


def _reduce_scatter_vjp(cts, fwd, *operands, computation, scatter_dimension, shard_count,
                        **params):
    """Sum: an all_gather of the cotangents.  Max/min: the gathered cotangent
    shared among the winners."""
    groups = _group_params(params)
    live = [i for i, c in enumerate(cts) if fwd.wants[i] and not is_zero(c)]
    if not live:
        return (None,) * len(operands)
    kinds = _by_kind(computation, live, "reduce_scatter")
    choosers = kinds["max"] + kinds["min"]
    gathered = lax.all_gather([cts[i] for i in kinds["add"] + choosers], scatter_dimension,
                              shard_count, **groups)
    inds = _full_indicators(operands, choosers, computation, groups)
    counts = _psum(inds, groups) if inds else ()
    out: list[Any] = [None] * len(operands)
    n_add = len(kinds["add"])
    for k, i in enumerate(kinds["add"]):
        out[i] = gathered[k]
    for k, (i, m, c) in enumerate(zip(choosers, inds, counts)):
        out[i] = lax.mul(lax.div(m, c), gathered[n_add + k])
    return tuple(out)


def _all_gather_vjp(cts, fwd, *operands, all_gather_dimension, shard_count, **params):
    """A sum reduce_scatter of the cotangents over the same groups: member
    ``j`` gets the sum of every member's cotangent of block ``j``."""
    live = [i for i, c in enumerate(cts) if fwd.wants[i] and not is_zero(c)]
    if not live:
        return (None,) * len(operands)
    back = lax.reduce_scatter([cts[i] for i in live], lax.add, all_gather_dimension,
                              shard_count, **_group_params(params))
    out: list[Any] = [None] * len(operands)
    for i, c in zip(live, back):
        out[i] = c
    return tuple(out)


def _all_to_all_vjp(cts, fwd, *operands, split_dimension, concat_dimension, split_count,
                    replica_groups, channel_id):
    """The inverse all_to_all: split where the forward op concatenated,
    concatenate where it split."""
    live = [i for i, c in enumerate(cts) if fwd.wants[i] and not is_zero(c)]
    if not live:
        return (None,) * len(operands)
    back = coll.all_to_all_p.bind(*(cts[i] for i in live), split_dimension=concat_dimension,
                                  concat_dimension=split_dimension, split_count=split_count,
                                  replica_groups=replica_groups, channel_id=channel_id)
    out: list[Any] = [None] * len(operands)
    for i, c in zip(live, back):
        out[i] = c
    return tuple(out)


def _collective_permute_vjp(ct, fwd, x, *, source_target_pairs, channel_id):
    """The inverse permutation: each target sends its cotangent back to its source."""
    inverse = tuple((t, s) for s, t in source_target_pairs)
    return (coll.collective_permute_p.bind(ct, source_target_pairs=inverse,
                                           channel_id=channel_id),)


def _collective_broadcast_vjp(ct, fwd, x, *, replica_groups, channel_id):
    """The first member of each group gets the sum of its group's
    cotangents, every other process zero: with explicit groups, one
    collective_permute per group position (member k -> first member);
    with empty groups (all replicas), a sum all_reduce kept on replica 0."""
    if replica_groups:
        total = None
        for k in range(max(len(g) for g in replica_groups)):
            pairs = tuple((g[k], g[0]) for g in replica_groups if k < len(g))
            part = coll.collective_permute_p.bind(ct, source_target_pairs=pairs,
                                                  channel_id=channel_id)
            total = part if total is None else lax.add(total, part)
        return (total,)
    if channel_id is not None:
        raise NotImplementedError(
            "collective_broadcast: the VJP of a cross-partition broadcast with empty "
            "replica_groups needs the number of partitions, which is not known while "
            "tracing; pass replica_groups explicitly")
    (summed,) = _psum([ct], dict(replica_groups=(), channel_id=None,
                                 use_global_device_ids=False))
    first = lax.eq(coll.replica_id_p.bind(), np.uint32(0))
    aval = abstractify(ct)
    first = lax.broadcast_in_dim(first, aval.dimensions, ())
    return (lax.select(first, summed, zeros_like_aval(aval)),)


jvp_rules[coll.all_reduce_p] = _all_reduce_jvp
vjp_rules[coll.all_reduce_p] = _all_reduce_vjp
jvp_rules[coll.reduce_scatter_p] = _reduce_scatter_jvp
vjp_rules[coll.reduce_scatter_p] = _reduce_scatter_vjp
jvp_rules[coll.all_gather_p] = _linear_subset_jvp(coll.all_gather_p)
vjp_rules[coll.all_gather_p] = _all_gather_vjp
jvp_rules[coll.all_to_all_p] = _linear_subset_jvp(coll.all_to_all_p)
vjp_rules[coll.all_to_all_p] = _all_to_all_vjp
jvp_rules[coll.collective_permute_p] = linear_jvp(coll.collective_permute_p)
vjp_rules[coll.collective_permute_p] = _collective_permute_vjp
jvp_rules[coll.collective_broadcast_p] = linear_jvp(coll.collective_broadcast_p)
vjp_rules[coll.collective_broadcast_p] = _collective_broadcast_vjp


def _same_place_batch(prim):
    """Collectives acting element by element across processes: each operand
    keeps its batch dimension."""
    def rule(args, dims, **params):
        outs = prim.bind(*args, **params)
        return outs, (tuple(dims) if prim.multiple_results else dims[0])
    return rule


def _axis_batch(prim, *axis_params: str):
    """Collectives with dimension parameters (gather, scatter, split, concat
    dimensions), shared by all operands: a batch dimension after all of them
    stays where it is (they keep their numbers); one at or before them moves
    to the end.  One collective for the whole batch."""
    def rule(args, dims, **params):
        last = max(params[k] for k in axis_params)
        size = bdim_size(args, dims)
        moved, out_dims = [], []
        for x, d in zip(args, dims):
            if d is not None and d <= last:
                end = abstractify(x).ndim - 1
                x, d = move_batch_dim(x, d, end, size), end
            moved.append(x)
            out_dims.append(d)
        return prim.bind(*moved, **params), tuple(out_dims)
    return rule


for _prim in (coll.all_reduce_p, coll.collective_permute_p, coll.collective_broadcast_p):
    batch_rules[_prim] = _same_place_batch(_prim)
batch_rules[coll.all_gather_p] = _axis_batch(coll.all_gather_p, "all_gather_dimension")
batch_rules[coll.reduce_scatter_p] = _axis_batch(coll.reduce_scatter_p, "scatter_dimension")
batch_rules[coll.all_to_all_p] = _axis_batch(coll.all_to_all_p, "split_dimension",
                                             "concat_dimension")
