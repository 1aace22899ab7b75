"""Lowerings of the control-flow ops: While, Conditional, Scan, Call, Map.

Sub-computations are emitted in place with ``ctx.inline_graph`` (whole
graphs: loop bodies, branches, callees) or ``ctx.scalar_graph`` (Map's
per-element computation), so a program with loops is still one Numba
function:

* ``while``: the carry lives in variables ``k1, k2, ...`` (one per carry
  value) rebound at the end of every iteration of a ``while True:`` loop
  (simultaneously, so a body that swaps two carries is right).  The carry
  is kept in the layout of the body's parameters; a body result in another
  layout, or a literal, is converted before it is carried.
* ``conditional``: ``if``/``elif``/``else`` blocks, one per branch, each
  assigning the same result names (a PRED selector: ``if pred`` runs branch
  0; an S32 index: out of ``[0, N)`` runs the last branch, as XLA defines).
* ``scan``: a ``for`` loop over the leading axis; each ``xs`` slice is
  packed into a buffer of the body's parameter layout and each per-iteration
  output written into its stacked result.
* ``call``: the callee inlined.
* ``map``: one loop nest over the result with the computation inlined as
  scalar statements (a computation with non-scalar ops, e.g. over a captured
  array, is inlined as a whole graph per element).

Buffers are never written after the equation that allocates them, so
rebinding a name never disturbs a value that is still in use.  Results that
may be an operand's buffer (a branch returning its operand, a loop that
runs zero times) are recorded in ``ctx.aliases`` or copied, so no output of
the compiled function shares an input's buffer.
"""
from __future__ import annotations

from typing import Sequence

from numxla.primitives import control_flow as cf
from numxla.tracer.core import AbstractValue
from numxla.tracer.graph import Equation, Graph, Literal, Var
from numxla.tracer.shapes import Shape

from ..codegen import WORKSPACE_MIN_BYTES, LoweringContext, buffer_nbytes, literal_text, \
    lowerings, scalar_exprs, storage_dtype_name

__all__ = ["buffer_of", "as_layout", "root_of", "owned_copy", "token_buffer", "inline_call"]

Atom = Var | Literal


# --------------------------------------------------------------------------
# helpers shared with the other kernel modules of this family
# --------------------------------------------------------------------------

def token_buffer(ctx: LoweringContext) -> str:
    """A fresh token: a 1-element bool buffer (tokens carry no data, only order)."""
    name = ctx.fresh("tok")
    ctx.emit(f"{name} = zeros_buf(1, np.bool_)")
    return name


def _fill_literal(ctx: LoweringContext, value: Literal, shape: Shape) -> str:
    """A buffer of ``shape`` holding the scalar literal ``value`` (written
    through ``ctx.write``, which stores 16-bit floats as their words)."""
    var = _alloc_like(ctx, shape)
    text = literal_text(value.value, value.aval.element_type)
    with ctx.loops(shape) as idx:
        ctx.write(var, idx, text)
    return ctx.name(var)


def buffer_of(ctx: LoweringContext, atom: Atom) -> str:
    """The buffer name of ``atom`` (a literal is put in a 1-element buffer)."""
    if isinstance(atom, Literal):
        return _fill_literal(ctx, atom, atom.aval.shape)
    return ctx.name(atom)


def root_of(ctx: LoweringContext, atom: Atom) -> Var | None:
    """The value whose buffer ``atom`` shares (itself if none); None for a literal."""
    if isinstance(atom, Literal):
        return None
    return ctx.aliases.get(atom, atom)


def _alloc_like(ctx: LoweringContext, shape: Shape, *, own: bool = False) -> Var:
    """A new buffer for a value of ``shape``, padding initialised as the layout
    says (``own``: never a workspace slice)."""
    var = Var(AbstractValue(shape))
    layout = shape.layout
    ctx.alloc(var, zero=bool(layout.padded_dimensions or layout.tiles), own=own)
    if layout.padding_value not in (None, 0):
        ctx.emit(f"{ctx.name(var)}[:] = {literal_text(layout.padding_value, shape.element_type)}")
    return var


def owned_copy(ctx: LoweringContext, name: str, shape: Shape) -> str:
    """Source text of a copy of the value ``name`` of ``shape`` (arrays copied,
    tuples copied element by element, tokens fresh)."""
    if shape.is_token:
        return token_buffer(ctx)
    if shape.is_tuple:
        parts = []
        for i, s in enumerate(shape.tuple_shapes):
            element = ctx.fresh("te")
            ctx.emit(f"{element} = {name}[{i}]")
            parts.append(owned_copy(ctx, element, s))
        out = ctx.fresh("tup")
        ctx.emit(f"{out} = ({', '.join(parts)}{',' if len(parts) == 1 else ''})")
        return out
    out = ctx.fresh("cp")
    ctx.emit(f"{out} = {name}.copy()")
    return out


def as_layout(ctx: LoweringContext, atom: Atom, shape: Shape, *, copy: bool = False) -> str:
    """A buffer holding ``atom``'s value in ``shape``'s layout: ``atom``'s own
    buffer when the layouts agree (a copy if ``copy``), else a converted one
    (never a workspace slice if ``copy``)."""
    if isinstance(atom, Literal):
        if not shape.is_array or shape.dimensions != ():
            raise NotImplementedError(f"a literal as a value of {shape}")
        return _fill_literal(ctx, atom, shape)
    name = ctx.name(atom)
    src = atom.aval.shape
    if not shape.is_array:
        if src.is_tuple and shape.is_tuple and src != shape:
            parts = []
            for i, (s, t) in enumerate(zip(src.tuple_shapes, shape.tuple_shapes)):
                element = Var(AbstractValue(s))
                ctx.bind_name(element, ctx.fresh("te"))
                ctx.emit(f"{ctx.name(element)} = {name}[{i}]")
                parts.append(as_layout(ctx, element, t, copy=copy))
            out = ctx.fresh("tup")
            ctx.emit(f"{out} = ({', '.join(parts)}{',' if len(parts) == 1 else ''})")
            return out
        return owned_copy(ctx, name, shape) if copy else name
    if src == shape:
        return owned_copy(ctx, name, shape) if copy else name
    out = _alloc_like(ctx, shape, own=copy)
    with ctx.loops(shape) as idx:
        ctx.write(out, idx, ctx.read(atom, idx))
    return ctx.name(out)


def _assign(ctx: LoweringContext, targets: Sequence[str], values: Sequence[str]) -> None:
    """``t1, t2 = v1, v2`` (simultaneous, so a swap is right)."""
    if not targets:
        return
    if len(targets) == 1:
        ctx.emit(f"{targets[0]} = {values[0]}")
    else:
        ctx.emit(f"{', '.join(targets)} = {', '.join(values)}")


def _result(ctx: LoweringContext, atom: Atom, shape: Shape, keep: Sequence[Var] = ()) -> str:
    """The buffer of sub-graph result ``atom`` as a value of ``shape`` that the
    op may hand out: ``atom``'s buffer when it is its own (``ctx.owned``) or
    one of the parameters in ``keep``, else a copy (a parameter's, a
    constant's, a workspace slice the next iteration overwrites, a buffer
    bound by name whose owner is not known)."""
    root = root_of(ctx, atom)
    borrowed = root is not None and root not in keep and root not in ctx.owned
    return as_layout(ctx, atom, shape, copy=borrowed)


def _operand_buffers(ctx: LoweringContext, operands: Sequence[Atom], params: Sequence[Var]
                     ) -> list[str]:
    """The operands' buffers, in the layouts of the parameters they are bound to."""
    return [as_layout(ctx, a, p.aval.shape) for a, p in zip(operands, params)]


def _bind_outputs(ctx: LoweringContext, outputs: Sequence[Var], names: Sequence[str],
                  shapes: Sequence[Shape], sources: Sequence[Atom | None]) -> None:
    """Bind each output to the variable holding it (converting the layout
    where the op's result layout differs); ``sources[i]``, when not None, is
    an operand whose buffer output ``i`` may be."""
    for out, name, shape, src in zip(outputs, names, shapes, sources):
        if out.aval.shape == shape:
            ctx.bind_name(out, name)
            root = root_of(ctx, src) if src is not None else None
            if root is not None:
                ctx.aliases[out] = root
        else:
            tmp = Var(AbstractValue(shape))
            ctx.bind_name(tmp, name)
            ctx.bind_name(out, as_layout(ctx, tmp, out.aval.shape))


# --------------------------------------------------------------------------
# Loop carries in rotating workspace slots
# --------------------------------------------------------------------------

class _RotatingCarries:
    """New loop carries written alternately into two workspace slots each, so
    iterations allocate nothing: iteration ``i`` writes one slot while it
    reads the carry of iteration ``i - 1`` from the other.

    Only a carry whose new value the body computes into a buffer of its own
    (an array of the carry's layout, big enough for the workspace) rotates,
    and none when a carry is a tuple or token (their buffers may move between
    positions).  A buffer that would move to another carry position (a swap,
    a bitcast of the carry) is copied: see ``keep``."""

    def __init__(self, ctx: LoweringContext, body: Graph, carry_shapes: Sequence[Shape]):
        self.ctx = ctx
        self.slots: dict[int, tuple[str, str]] = {}
        self._atoms: list[Var] = []
        outs = body.out_atoms[:len(carry_shapes)]
        if not all(s.is_array for s in carry_shapes):
            return
        for j, (atom, shape) in enumerate(zip(outs, carry_shapes)):
            nbytes = buffer_nbytes(shape)
            if not isinstance(atom, Var) or atom in body.in_vars or atom in body.const_vars \
                    or atom.aval.shape != shape or outs.index(atom) != j \
                    or nbytes < WORKSPACE_MIN_BYTES:
                continue
            dtype = storage_dtype_name(shape.element_type)
            a, b = ctx.fresh("wa"), ctx.fresh("wb")
            ctx.emit(f"{a} = {ctx.workspace_slice(nbytes, dtype)}")
            ctx.emit(f"{b} = {ctx.workspace_slice(nbytes, dtype)}")
            ctx.carry_slots[atom] = a
            self.slots[j] = (a, b)
            self._atoms.append(atom)

    def keep(self, carry_params: Sequence[Var]) -> list[Var]:
        """The carry parameters a body result may share without a copy."""
        return [p for j, p in enumerate(carry_params) if j not in self.slots]

    def swap(self) -> None:
        """At the end of an iteration: the next one writes the other slots."""
        for a, b in self.slots.values():
            self.ctx.emit(f"{a}, {b} = {b}, {a}")

    def close(self, outputs: Sequence[Var]) -> None:
        """After the loop: its results may be workspace slots, not their own
        (copied where they escape)."""
        for atom in self._atoms:
            del self.ctx.carry_slots[atom]
        for j in self.slots:
            self.ctx.aliases[outputs[j]] = Var(outputs[j].aval)  # a buffer nobody owns


# --------------------------------------------------------------------------
# While
# --------------------------------------------------------------------------

def _lower_while(ctx: LoweringContext, eq: Equation) -> None:
    cond, body = eq.params["cond_graph"], eq.params["body_graph"]
    nc, nb = eq.params["cond_nconsts"], eq.params["body_nconsts"]
    ops = eq.inputs
    cond_consts, body_consts, init = ops[:nc], ops[nc:nc + nb], ops[nc + nb:]
    n = len(init)
    carry_params = body.in_vars[:n]
    carry_shapes = [p.aval.shape for p in carry_params]
    cc = _operand_buffers(ctx, cond_consts, cond.in_vars[n:])
    bc = _operand_buffers(ctx, body_consts, body.in_vars[n:])
    carry = [ctx.fresh("k") for _ in range(n)]
    _assign(ctx, carry, [as_layout(ctx, a, s) for a, s in zip(init, carry_shapes)])
    rotating = _RotatingCarries(ctx, body, carry_shapes)
    with ctx.block("while True:"):
        cond_in = []
        for k, s, p in zip(carry, carry_shapes, cond.in_vars[:n]):
            tmp = Var(AbstractValue(s))
            ctx.bind_name(tmp, k)
            cond_in.append(as_layout(ctx, tmp, p.aval.shape))
        ctx.inline_graph(cond, cond_in + cc)
        ctx.emit(f"if not {ctx.read(cond.out_atoms[0], [])}:")
        ctx.emit("    break")
        ctx.inline_graph(body, carry + bc)
        keep = rotating.keep(carry_params)
        new = [_result(ctx, a, s, keep=keep) for a, s in zip(body.out_atoms, carry_shapes)]
        _assign(ctx, carry, new)
        rotating.swap()
    _bind_outputs(ctx, eq.outputs, carry, carry_shapes, init)
    rotating.close(eq.outputs)


# --------------------------------------------------------------------------
# Conditional
# --------------------------------------------------------------------------

def _lower_conditional(ctx: LoweringContext, eq: Equation) -> None:
    branches: tuple[Graph, ...] = eq.params["branches"]
    selector, *operands = eq.inputs
    groups = cf._split_groups(operands, eq.params["operand_counts"])
    results = [ctx.fresh("r") for _ in eq.outputs]
    shapes = [o.aval.shape for o in eq.outputs]

    def emit_branch(b: int) -> None:
        graph = branches[b]
        ctx.emit("pass")
        ctx.inline_graph(graph, _operand_buffers(ctx, groups[b], graph.in_vars))
        _assign(ctx, results, [_result(ctx, a, s) for a, s in zip(graph.out_atoms, shapes)])

    sel = ctx.read(selector, [])
    if selector.aval.element_type.name == "PRED":
        headers = [f"if {sel}:", "else:"]
    else:
        index = ctx.fresh("b")
        ctx.emit(f"{index} = {sel}")
        headers = [f"{'if' if b == 0 else 'elif'} {index} == {b}:"
                   for b in range(len(branches) - 1)] + ["else:"]
        if len(branches) == 1:
            headers = ["if True:"]
    for b, header in enumerate(headers):
        with ctx.block(header):
            emit_branch(b)
    for out, name in zip(eq.outputs, results):
        ctx.bind_name(out, name)
        ctx.owned.add(out)  # each branch hands out buffers of its own (_result)


# --------------------------------------------------------------------------
# Scan
# --------------------------------------------------------------------------

def _lower_scan(ctx: LoweringContext, eq: Equation) -> None:
    body: Graph = eq.params["body"]
    nconsts, ncarry = eq.params["num_consts"], eq.params["num_carry"]
    length, reverse = eq.params["length"], eq.params["reverse"]
    ops = eq.inputs
    consts, init, xs = ops[:nconsts], ops[nconsts:nconsts + ncarry], ops[nconsts + ncarry:]
    carry_params = body.in_vars[:ncarry]
    slice_params = body.in_vars[ncarry:ncarry + len(xs)]
    carry_shapes = [p.aval.shape for p in carry_params]
    const_names = _operand_buffers(ctx, consts, body.in_vars[ncarry + len(xs):])
    carry = [ctx.fresh("k") for _ in range(ncarry)]
    _assign(ctx, carry, [as_layout(ctx, a, s) for a, s in zip(init, carry_shapes)])
    ys = eq.outputs[ncarry:]
    for y in ys:
        _alloc_like_var(ctx, y)
    rotating = _RotatingCarries(ctx, body, carry_shapes)
    step = ctx.fresh("it")
    with ctx.block(f"for {step} in range({length}):"):
        i = step
        if reverse:
            i = ctx.fresh("ri")
            ctx.emit(f"{i} = {length - 1} - {step}")
        slices = []
        for x, p in zip(xs, slice_params):
            s = _alloc_like(ctx, p.aval.shape)
            with ctx.loops(p.aval.shape, prefix=ctx.fresh("j") + "_") as idx:
                ctx.write(s, idx, ctx.read(x, [i] + idx))
            slices.append(ctx.name(s))
        ctx.inline_graph(body, carry + slices + const_names)
        for y, atom in zip(ys, body.out_atoms[ncarry:]):
            shape = Shape(y.aval.element_type, y.aval.dimensions[1:])
            with ctx.loops(shape, prefix=ctx.fresh("j") + "_") as idx:
                ctx.write(y, [i] + idx, ctx.read(atom, idx))
        keep = rotating.keep(carry_params)
        new = [_result(ctx, a, s, keep=keep) for a, s in zip(body.out_atoms[:ncarry], carry_shapes)]
        _assign(ctx, carry, new)
        rotating.swap()
    _bind_outputs(ctx, eq.outputs[:ncarry], carry, carry_shapes, init)
    rotating.close(eq.outputs)


def _alloc_like_var(ctx: LoweringContext, var: Var) -> None:
    layout = var.aval.shape.layout
    ctx.alloc(var, zero=bool(layout.padded_dimensions or layout.tiles))
    if layout.padding_value not in (None, 0):
        ctx.emit(f"{ctx.name(var)}[:] = "
                 f"{literal_text(layout.padding_value, var.aval.element_type)}")


# --------------------------------------------------------------------------
# Call (and CompositeCall, registered in side_effects)
# --------------------------------------------------------------------------

def inline_call(ctx: LoweringContext, eq: Equation, callee: Graph) -> None:
    """``eq.outputs = callee(*eq.inputs)``, inlined; outputs that are an
    operand's buffer are recorded as its aliases."""
    names = _operand_buffers(ctx, eq.inputs, callee.in_vars)
    ctx.inline_graph(callee, names)
    for out, atom in zip(eq.outputs, callee.out_atoms):
        if isinstance(atom, Literal):
            ctx.bind_name(out, as_layout(ctx, atom, out.aval.shape))
            continue
        root = root_of(ctx, atom)
        if atom.aval.shape != out.aval.shape:
            ctx.bind_name(out, as_layout(ctx, atom, out.aval.shape))
            continue
        ctx.bind_name(out, ctx.name(atom))
        if root in callee.in_vars:
            operand = eq.inputs[callee.in_vars.index(root)]
            outer = root_of(ctx, operand)
            if outer is not None and ctx.name(operand) == names[callee.in_vars.index(root)]:
                ctx.aliases[out] = outer
        elif root is not atom:
            ctx.aliases[out] = root


def _lower_call(ctx: LoweringContext, eq: Equation) -> None:
    inline_call(ctx, eq, eq.params["computation"])


# --------------------------------------------------------------------------
# Map (XLA's)
# --------------------------------------------------------------------------

def _is_scalar_computation(graph: Graph) -> bool:
    return (all(v.aval.shape.is_array and v.aval.ndim == 0 for v in graph.in_vars)
            and not graph.const_vars
            and all(eq.primitive in scalar_exprs and
                    all(o.aval.shape.is_array and o.aval.ndim == 0 for o in eq.outputs)
                    for eq in graph.equations))


def _lower_map(ctx: LoweringContext, eq: Equation) -> None:
    graph: Graph = eq.params["computation"]
    nconsts = eq.params["num_consts"]
    arrays = eq.inputs[:len(eq.inputs) - nconsts]
    consts = eq.inputs[len(arrays):]
    for out in eq.outputs:
        ctx.alloc(out)
    shape = eq.outputs[0].aval.shape
    if _is_scalar_computation(graph):
        const_texts = []
        for c in consts:
            name = ctx.fresh("m")
            ctx.emit(f"{name} = {ctx.read(c, [])}")
            const_texts.append(name)
        with ctx.loops(shape) as idx:
            args = []
            for a in arrays:
                name = ctx.fresh("m")
                ctx.emit(f"{name} = {ctx.read(a, idx)}")
                args.append(name)
            for out, value in zip(eq.outputs, ctx.scalar_graph(graph, args + const_texts)):
                ctx.write(out, idx, value)
        return
    # a computation with array ops inside: the whole graph per element
    const_names = _operand_buffers(ctx, consts, graph.in_vars[len(arrays):])
    # (its own loop variables: the inlined ops nest loops named i0, i1...)
    with ctx.loops(shape, prefix=ctx.fresh("m") + "_") as idx:
        names = []
        for a, p in zip(arrays, graph.in_vars):
            e = _alloc_like(ctx, p.aval.shape)
            ctx.write(e, [], ctx.read(a, idx))
            names.append(ctx.name(e))
        ctx.inline_graph(graph, names + const_names)
        for out, atom in zip(eq.outputs, graph.out_atoms):
            ctx.write(out, idx, ctx.read(atom, []))


lowerings[cf.while_p] = _lower_while
lowerings[cf.conditional_p] = _lower_conditional
lowerings[cf.scan_p] = _lower_scan
lowerings[cf.call_p] = _lower_call
lowerings[cf.map_p] = _lower_map
