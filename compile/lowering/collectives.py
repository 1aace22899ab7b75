"""Lowerings of the collectives for a compiled program of one process.

A ``jit``-compiled function runs as a program of one replica and one
partition (``run_replicated`` interprets multi-process programs with the
reference semantics).  With one process every group is that process alone,
so, exactly as ``primitives.collectives`` defines them on the 1x1 grid:

* ``all_reduce``, ``all_gather``, ``all_to_all``, ``reduce_scatter``: the
  identity on each operand (a group of one reduces, gathers, exchanges and
  scatters nothing: the counts must be 1);
* ``collective_permute``: the operand if ``(0, 0)`` is one of the pairs,
  zeros otherwise; ``collective_broadcast``: the operand if process 0 is in a
  group, zeros otherwise;
* ``replica_id`` and ``partition_id``: 0.

Parameters the one-process program cannot honour (ids beyond 0, counts
other than 1) raise the reference semantics' errors when the function is
compiled.  The identity results share the operand's buffer (recorded as an
alias) when the layouts agree, and are converted otherwise.

In a program of several processes (``compile.pmap``: the lowering context
has a ``process_grid``), every collective is a host callback (Python, with the GIL):
``host_collective`` hands the operands to the process's rendezvous
(``compile.spmd``), which meets the other processes and computes the
results with the reference semantics, so they are XLA's bit for bit.  An
AllReduce of row-major buffers is reduced in place instead: into the result
buffers the compiled code allocated (``host_all_reduce_into``) or, when its
results die before it runs again (``LoweringContext.is_intermediate``), into
buffers the replica group shares, kept between runs (``host_all_reduce_shared``).
"""
from __future__ import annotations

from typing import Any

from numxla.primitives import collectives as co, side_effects as se
from numxla.tracer.graph import Equation, Var
from numxla.tracer.shapes import PrimitiveType as PT

from ..codegen import LoweringContext, literal_text
from ..registry import lowerings
from .control_flow import as_layout, token_buffer
from .side_effects import _HOST_PARAMS, _bind, _host_block, _register, _to_eager, \
    _to_kernel, _tuple_text, _value

__all__ = ["host_collective", "host_all_reduce_into", "host_all_reduce_shared", "host_send_to",
           "host_recv_from", "host_zeros"]

_MODULE = __name__

_SINGLE = co.ProcessGrid(1, 1)


def _identity(ctx: LoweringContext, x, out: Var) -> None:
    if isinstance(x, Var) and x.aval.shape == out.aval.shape:
        ctx.alias(out, x)
    else:
        ctx.bind_name(out, as_layout(ctx, x, out.aval.shape))


def _zeros(ctx: LoweringContext, out: Var) -> None:
    name = ctx.alloc(out, zero=True)
    shape = out.aval.shape
    pad = shape.layout.padding_value
    if pad not in (None, 0):  # padding holds its value, elements zero
        ctx.emit(f"{name}[:] = {literal_text(pad, shape.element_type)}")
        with ctx.loops(shape) as idx:
            ctx.write(out, idx, literal_text(0, shape.element_type))


def _check(op: str, eq: Equation, count_name: str | None = None, *,
           use_global_device_ids=False, every_process: bool = True) -> list[list[int]]:
    """The process groups of the 1x1 program (raising the reference's errors)."""
    p = eq.params
    groups = co._groups_for(op, _SINGLE, p["replica_groups"], p["channel_id"],
                            use_global_device_ids, every_process=every_process)
    if count_name is not None:
        for g in groups:
            co._shard_count_matches(op, count_name, p[count_name], g, _SINGLE)
    return groups


def _lower_all_reduce(ctx: LoweringContext, eq: Equation) -> None:
    _check("all_reduce", eq, use_global_device_ids=eq.params["use_global_device_ids"])
    for x, out in zip(eq.inputs, eq.outputs):
        _identity(ctx, x, out)


def _lower_all_gather(ctx: LoweringContext, eq: Equation) -> None:
    _check("all_gather", eq, "shard_count",
           use_global_device_ids=eq.params["use_global_device_ids"])
    for x, out in zip(eq.inputs, eq.outputs):
        _identity(ctx, x, out)


def _lower_all_to_all(ctx: LoweringContext, eq: Equation) -> None:
    _check("all_to_all", eq, "split_count", use_global_device_ids=None)
    for x, out in zip(eq.inputs, eq.outputs):
        _identity(ctx, x, out)


def _lower_reduce_scatter(ctx: LoweringContext, eq: Equation) -> None:
    _check("reduce_scatter", eq, "shard_count",
           use_global_device_ids=eq.params["use_global_device_ids"])
    for x, out in zip(eq.inputs, eq.outputs):
        _identity(ctx, x, out)


def _lower_collective_permute(ctx: LoweringContext, eq: Equation) -> None:
    pairs = eq.params["source_target_pairs"]
    if any(i >= 1 for pair in pairs for i in pair):
        kind = "replicas" if eq.params["channel_id"] is None else "partitions"
        raise ValueError(f"collective_permute: source_target_pairs {pairs} name an id beyond "
                         f"the 1 {kind} of the program (run several processes with "
                         f"run_replicated)")
    (x,), (out,) = eq.inputs, eq.outputs
    if (0, 0) in pairs:
        _identity(ctx, x, out)
    else:
        _zeros(ctx, out)


def _lower_collective_broadcast(ctx: LoweringContext, eq: Equation) -> None:
    groups = _check("collective_broadcast", eq, use_global_device_ids=None, every_process=False)
    (x,), (out,) = eq.inputs, eq.outputs
    if any(0 in g for g in groups):
        _identity(ctx, x, out)
    else:
        _zeros(ctx, out)


def _lower_zero_id(ctx: LoweringContext, eq: Equation) -> None:
    (out,) = eq.outputs
    ctx.alloc(out)
    ctx.write(out, [], "np.uint32(0)")


def host_collective(key: str, operands: tuple) -> tuple:
    """Host half of a collective of a multi-process program: this
    process's results, from the rendezvous of ``compile.spmd``.  ``key``
    (the same in every process for the same equation) is what the processes
    compare to check they reached the same collective."""
    from ..spmd.rendezvous import current_process
    prim, params, in_shapes, out_shapes = _HOST_PARAMS[key]
    values = [_to_eager(v, s) for v, s in zip(operands, in_shapes)]
    outs = current_process().collective(prim, params, values, key)
    return tuple(b for v, s in zip(outs, out_shapes) for b in _to_kernel(v, s))


def host_all_reduce_into(key: str, operands: tuple, outs: tuple) -> None:
    """Host half of an AllReduce of row-major buffers: reduced in
    place into the result buffers the compiled code allocated (no conversion
    to eager values and back, no fresh buffers): ``Rendezvous.all_reduce_buffers``."""
    from ..spmd.rendezvous import current_process
    current_process().all_reduce_buffers(_HOST_PARAMS[key][1], operands, outs, key)


def host_all_reduce_shared(key: str, slot: str, operands: tuple) -> tuple:
    """Host half of an AllReduce whose results die before it runs
    again: result buffers kept between runs, which the group shares when
    every member runs this equation (``slot`` names it in the program): one
    result written per group instead of one per member
    (``Rendezvous.all_reduce_buffers``)."""
    from ..spmd.rendezvous import current_process
    return tuple(current_process().all_reduce_buffers(_HOST_PARAMS[key][1], operands, None, key,
                                                      slot))


def host_send_to(key: str, value: Any) -> None:
    """Host half of a send with ``source_target_pairs`` in a program
    of several processes: a point-to-point message to this process's target."""
    from ..spmd.rendezvous import current_process
    shape, channel_id, pairs = _HOST_PARAMS[key]
    current_process().send_to(channel_id, pairs, _to_eager(value, shape))


def host_recv_from(key: str) -> tuple:
    """Host half of a recv with ``source_target_pairs``: the next
    message from this process's source (zeros for a process that is no target)."""
    from ..spmd.rendezvous import current_process
    shape, channel_id, pairs = _HOST_PARAMS[key]
    return tuple(_to_kernel(current_process().recv_from(channel_id, pairs, shape), shape))


def host_zeros(key: str) -> tuple:
    """Host half of a recv that receives nothing: zeros of its shape."""
    shape = _HOST_PARAMS[key]
    return tuple(_to_kernel(se.zeros_value(shape), shape))


def _paired(host_channel_lowering, lower_paired):
    """Send/Recv: through the host channels without ``source_target_pairs``
    (and in a program of one process that sends to itself), else point to point."""
    def lower(ctx: LoweringContext, eq: Equation) -> None:
        pairs, channel_id = eq.params["source_target_pairs"], eq.params["channel_id"]
        if pairs is None:
            return host_channel_lowering(ctx, eq)
        if ctx.process_grid is None:  # ids beyond 0 are errors; (0, 0) a loop-back
            if se._one_process_peer(eq.primitive.name, pairs, channel_id):
                return host_channel_lowering(ctx, eq)
            return lower_paired(ctx, eq)
        se.check_pair_ids(eq.primitive.name, pairs, channel_id, ctx.process_grid.size)
        lower_paired(ctx, eq)
    return lower


def _lower_send_to(ctx: LoweringContext, eq: Equation) -> None:
    operand = eq.inputs[0]
    if ctx.process_grid is not None:
        p = eq.params
        key = _register("send_to", (operand.aval.shape, p["channel_id"], p["source_target_pairs"]))
        _host_block(ctx, f"{_MODULE}.host_send_to", [key], [_value(ctx, operand)], [])
    ctx.bind_name(eq.outputs[0], token_buffer(ctx))


def _lower_recv_from(ctx: LoweringContext, eq: Equation) -> None:
    p = eq.params
    shape = p["shape"]
    if ctx.process_grid is not None:
        function = f"{_MODULE}.host_recv_from"
        key = _register("recv_from", (shape, p["channel_id"], p["source_target_pairs"]))
    else:
        function, key = f"{_MODULE}.host_zeros", _register("zeros", shape)
    (value,) = _host_block(ctx, function, [key], [], [shape])
    _bind(ctx, eq.outputs[0], value, shape)
    ctx.bind_name(eq.outputs[1], token_buffer(ctx))


def _row_major(shapes) -> bool:
    return all(s.has_default_layout and s.element_type not in (PT.F16, PT.BF16)
               for s in shapes)


def _replicated(single_process):
    """The lowering of a collective: ``single_process`` in a program of one
    process, a host callback to the rendezvous in a program of several."""
    def lower(ctx: LoweringContext, eq: Equation) -> None:
        if ctx.process_grid is None:
            return single_process(ctx, eq)
        in_shapes = tuple(a.aval.shape for a in eq.inputs)
        out_shapes = tuple(v.aval.strip_layout().shape for v in eq.outputs)
        key = _register("collective", (eq.primitive, dict(eq.params), in_shapes, out_shapes),
                        identity=(eq.primitive, _params_key(eq.params), in_shapes, out_shapes))
        operands = _tuple_text([_value(ctx, a) for a in eq.inputs])
        if eq.primitive is co.all_reduce_p and _row_major(in_shapes) and \
                _row_major(v.aval.shape for v in eq.outputs):
            if all(ctx.is_intermediate(v) for v in eq.outputs):
                # results dead before this AllReduce runs again: the group's one
                # copy of them (not their own: copied where they escape)
                slot = ctx.fresh("allreduce")  # names this equation in the program
                names = _host_block(ctx, f"{_MODULE}.host_all_reduce_shared", [key, slot],
                                    [operands], list(out_shapes))
                for out, name in zip(eq.outputs, names):
                    ctx.bind_name(out, name)
                return
            outs = _tuple_text([ctx.alloc(v) for v in eq.outputs])
            _host_block(ctx, f"{_MODULE}.host_all_reduce_into", [key], [operands, outs], [])
            return
        values = _host_block(ctx, f"{_MODULE}.host_collective", [key], [operands],
                             list(out_shapes))
        for out, value, shape in zip(eq.outputs, values, out_shapes):
            _bind(ctx, out, value, shape)
    return lower


def _params_key(params: dict[str, Any]) -> tuple:
    """The parameters as a deterministic key (sub-graphs by their text)."""
    return tuple(sorted((k, str(v) if not isinstance(v, tuple) else
                         tuple(str(x) for x in v)) for k, v in params.items()))


for _prim, _single in ((co.all_reduce_p, _lower_all_reduce), (co.all_gather_p, _lower_all_gather),
                       (co.all_to_all_p, _lower_all_to_all),
                       (co.reduce_scatter_p, _lower_reduce_scatter),
                       (co.collective_permute_p, _lower_collective_permute),
                       (co.collective_broadcast_p, _lower_collective_broadcast),
                       (co.replica_id_p, _lower_zero_id), (co.partition_id_p, _lower_zero_id)):
    lowerings[_prim] = _replicated(_single)
lowerings[se.send_p] = _paired(lowerings[se.send_p], _lower_send_to)
lowerings[se.recv_p] = _paired(lowerings[se.recv_p], _lower_recv_from)
