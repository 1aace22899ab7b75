"""Compiled shape and data-movement ops (compile/lowering/shape_ops.py) against
their reference semantics: every op of primitives/shape_ops.py, for each
dtype family, with inputs in non-default layouts, with intermediate values
re-laid out (reversed, tiled, repeated tiles, padded), 16-bit floats moved
bit for bit, and dynamic start indices far out of range.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.shape_ops  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import device_put, jit
from numxla.tracer.core import AbstractValue, bf16_array
from numxla.tracer.shapes import Layout, from_physical

from . import util
from .util import check, check_all, relaid

rng = np.random.default_rng(7)
rand = functools.partial(util.rand, rng=rng)
assert_same = functools.partial(check, exact=True)  # bit for bit
assert_all_same = functools.partial(check_all, exact=True)


def all_shape_ops(x, y, upd, pv, s0, s1, s2):
    """Every shape op of primitives/shape_ops.py but set_dimension_size (see
    its own test) on x: [3,4,5], y: [3,2,5], upd: [2,3,2], scalar pv,
    integer start indices."""
    return [
        lax.broadcast(x, (2,)),
        lax.broadcast_in_dim(lax.slice(x, (0, 0, 0), (3, 1, 5)), (2, 3, 4, 5), (1, 2, 3)),
        lax.reshape(x, (12, 5)),
        lax.reshape(x, (5, 12), dimensions=(2, 0, 1)),
        lax.collapse(x, (1, 2)),
        lax.collapse(x, (0, 1)),
        lax.reshape(lax.transpose(x, (1, 2, 0)), (2, 30)),
        lax.transpose(x, (2, 0, 1)),
        lax.rev(x, (0, 2)),
        lax.rev(x, (1,)),
        lax.slice(x, (1, 0, 1), (3, 4, 5), (1, 2, 3)),
        lax.slice(x, (0, 1, 0), (3, 3, 5)),
        lax.dynamic_slice(x, (s0, s1, s2), (2, 3, 2)),
        lax.dynamic_slice(x, (s2, s0, s1), (3, 1, 5)),
        lax.dynamic_update_slice(x, upd, (s0, s1, s2)),
        lax.dynamic_update_slice(lax.transpose(x, (2, 1, 0)), lax.transpose(upd, (2, 1, 0)),
                                 (s2, s1, s0)),
        lax.pad(x, pv, ((1, 2, 1), (-1, 0, 0), (0, -2, 2))),
        lax.pad(x, pv, ((-2, -1, 0), (2, 2, 0), (-3, 1, 1))),
        lax.pad(x, pv, ((0, 0, 0), (-4, -1, 1), (0, 0, 0))),  # all of dim 1 cut but padding
        lax.pad(x, pv, ((-1, -1, 0), (-1, 0, 0), (-2, -2, 0))),  # a pure slice
        lax.concatenate([x, y, x], 1),
        lax.concatenate([y, lax.slice(y, (0, 0, 0), (3, 0, 5)), y], 1),
        lax.get_dimension_size(x, 2),
    ]


def _args(dtype):
    x, y, upd = rand((3, 4, 5), dtype), rand((3, 2, 5), dtype), rand((2, 3, 2), dtype)
    pv = rand((), dtype)
    return x, y, upd, pv


STARTS = [(0, 0, 0), (1, 2, 3), (-5, 100, 2), (2, -1, -1000), (10 ** 9, -10 ** 9, 4)]


def _calls(dtype, index_type=np.int32, count=len(STARTS)):
    x, y, upd, pv = _args(dtype)
    for starts in STARTS[:count]:
        yield (x, y, upd, pv, *(index_type(s) for s in starts))


def test_every_shape_op_matches_reference():
    f = jit(all_shape_ops)
    for args in _calls(np.float32):
        assert_all_same(f(*args), all_shape_ops(*args))


def some_shape_ops(x, y, upd, pv, s0, s1, s2):
    return [lax.pad(x, pv, ((1, 2, 1), (-1, 0, 0), (0, -2, 2))),
            lax.dynamic_update_slice(x, upd, (s0, s1, s2)),
            lax.concatenate([x, y], 1), lax.rev(lax.transpose(x, (1, 0, 2)), (0, 2))]


def test_every_dtype_family():
    types = [np.int32, np.uint8, np.int64, np.complex128, np.bool_, np.float64]

    def f(*args):
        return sum((some_shape_ops(*args[7 * i:7 * i + 7]) for i in range(len(types))), [])

    calls = [list(_calls(t)) for t in types]
    for k in range(len(STARTS)):
        args = [a for c in calls for a in c[k]]
        assert_all_same(jit(f)(*args), f(*args))


def test_inputs_and_intermediates_in_non_default_layouts():
    """Each kernel reads and writes through any layout: reversed, permuted,
    padded, tiled (2,2) and repeated tiles (2,4)(2,1), cycled over the values
    (x tiled, y permuted, upd in repeated tiles, the results in turn)."""
    args = next(_calls(np.int16, count=3))
    compiled = relaid(all_shape_ops, args, shift=1)
    for args in _calls(np.int16, count=3):
        assert_all_same(compiled(*args), all_shape_ops(*args))


def test_jit_in_layouts_and_device_put():
    layouts = ("{0,1,2}", "{2,0,1:T(2,4)(2,1)}", "{1,0,2:PD(3,4,3)}")
    f = jit(some_shape_ops, in_layouts=layouts + (None,) * 4)
    for args in _calls(np.float64, np.int64, count=3):
        assert_all_same(f(*args), some_shape_ops(*args))
    x, y, upd, pv = _args(np.float64)
    args = (device_put(x, layouts[0]), device_put(y, layouts[1]), device_put(upd, layouts[2]),
            pv, np.int64(1), np.int64(1), np.int64(1))
    assert_all_same(f(*args), some_shape_ops(x, y, upd, *args[3:]))


def test_remaps_between_different_minor_dimensions_walk_blocks():
    """Transposes and layout changes of large arrays loop in 32x32 blocks
    (sizes not multiples of 32 included)."""
    x = rand((70, 3, 130), np.float32)

    def remaps(a, s):
        return [lax.transpose(a, (2, 1, 0)), lax.transpose(a, (1, 2, 0)), lax.rev(a, (0, 2)),
                lax.slice(a, (1, 0, 2), (69, 3, 129), (1, 1, 2)),
                lax.broadcast_in_dim(a, (70, 2, 3, 130), (0, 2, 3)), lax.broadcast(a, (2,)),
                lax.dynamic_slice(a, (s, s, s), (65, 2, 100)),
                lax.dynamic_update_slice(a, lax.slice(a, (0, 0, 0), (3, 3, 3)), (s, s, s))]

    f = jit(remaps, in_layouts=("{0,1,2:T(2,4)}", None))
    assert "blk" in f.lower(x, np.int32(3)).compile().source
    assert_all_same(f(x, np.int32(3)), remaps(x, np.int32(3)))


def test_reshape_between_row_major_buffers_is_an_alias_and_copies_elsewhere():
    x = rand((40, 60), np.float32)     # big enough for kernels of their own

    def f(a):
        return lax.reshape(lax.collapse(lax.reshape(a, (20, 3, 40)), (0, 1)) * 2, (30, 80))

    program = jit(f).lower(x).compile().program.program_source.splitlines()
    reshapes = [ln for ln in program if " reshape(" in ln or " collapse(" in ln]
    assert len(reshapes) == 3 and all(ln.strip().startswith("#") and ln.endswith(": a bitcast")
                                      for ln in reshapes)     # no kernel: the same buffer
    np.testing.assert_array_equal(np.asarray(jit(f)(x)), f(x))
    g = jit(f, in_layouts="{0,1}")
    np.testing.assert_array_equal(np.asarray(g(x)), f(x))
    program = g.lower(x).compile().program.program_source.splitlines()
    first = next(ln for ln in program if " reshape(" in ln)
    assert not first.strip().startswith("#")                  # a kernel: a copy in row-major order


def test_16_bit_floats_move_bit_for_bit():
    words = np.array([0x7E01, 0x7C01, 0xFE55, 0x0001, 0x8000, 0x3C00, 0xFC00, 0x7BFF] * 3,
                     np.uint16)
    h = words.view(np.float16).reshape(4, 6)
    b = bf16_array(np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5)

    def moves(a, pv, s):
        return [lax.transpose(a, (1, 0)), lax.rev(a, (0,)), lax.slice(a, (1, 1), (4, 5), (2, 3)),
                lax.pad(a, pv, ((1, -1, 1), (0, 2, 0))),
                lax.dynamic_slice(a, (s, s), (2, 3)),
                lax.dynamic_update_slice(a, lax.slice(a, (0, 0), (2, 2)), (s, s)),
                lax.concatenate([a, a], 0), lax.broadcast(a, (2,)),
                lax.reshape(a, (6, 4), dimensions=(1, 0))]

    f = jit(moves, in_layouts=("{0,1}", None, None))
    for a, pv in ((h, np.float16(np.nan)), (b, bf16_array(np.float32(-2.25)))):
        got, want = f(a, pv, np.int32(1)), moves(a, pv, np.int32(1))
        for g, w in zip(got, want):
            assert_same(np.asarray(g).view(np.uint16), np.asarray(w).view(np.uint16))


def test_iota_every_numeric_type_and_layout():
    types = [np.int8, np.uint16, np.float64, np.complex64, np.float16]

    def iotas():
        return ([lax.broadcasted_iota(t, (3, 4, 2), i % 3) for i, t in enumerate(types)]
                + [lax.iota(np.int32, 7), lax.broadcasted_iota(np.float32, (0, 3), 1),
                   lax.get_dimension_size(lax.iota(np.int8, 9), 0)])

    assert_all_same(jit(iotas)(), iotas())
    assert_all_same(relaid(iotas, (), 1)(), iotas())


def test_dynamic_indices_far_out_of_range_stay_in_bounds():
    """Start indices of every integer type, at the ends of their range, clamp
    exactly as the reference does (and never touch memory outside a buffer)."""
    index_types = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64]
    x, upd = rand((5, 300), np.float32), rand((2, 7), np.float32)

    def dyn(x, upd, *starts):
        out = []
        for i in range(len(index_types)):
            s = starts[2 * i:2 * i + 2]
            out += [lax.dynamic_slice(x, s, (2, 7)), lax.dynamic_update_slice(x, upd, s)]
        return out + [lax.dynamic_slice(x, starts[:2], (5, 0))]

    f = jit(dyn, in_layouts=("{0,1:T(2,4)}", None) + (None,) * 2 * len(index_types))
    for pick in ("min", "max", "mid", "small"):
        starts = []
        for t in index_types:
            info = np.iinfo(t)
            a, b = {"min": (info.min, info.min), "max": (info.max, info.max),
                    "mid": (info.max // 2 + 1, info.min // 2 - 1 if info.min else info.max // 3),
                    "small": (min(4, info.max), min(296, info.max))}[pick]
            starts += [t(a), t(b)]
        assert_all_same(f(x, upd, *starts), dyn(x, upd, *starts))


def test_rank_0_and_empty_operands():
    def edge(s, e, pv, i):
        return [lax.broadcast(s, (2, 3)), lax.broadcast_in_dim(s, (4,), ()),
                lax.reshape(s, (1, 1)), lax.pad(s, pv, ()), lax.dynamic_slice(s, (), ()),
                lax.dynamic_update_slice(s, pv, ()),
                lax.pad(e, pv, ((1, 1, 3), (0, 2, 0))), lax.slice(e, (0, 0), (0, 0)),
                lax.concatenate([e, e], 0), lax.rev(e, (0,)), lax.transpose(e, (1, 0)),
                lax.dynamic_update_slice(e, e, (i, i)),
                lax.dynamic_slice(lax.pad(e, pv, ((2, 0, 0), (1, 1, 0))), (i, i), (1, 1))]

    args = (np.float32(2.5), np.zeros((0, 3), np.float32), np.float32(-1), np.int32(7))
    assert_all_same(jit(edge)(*args), edge(*args))


def test_set_dimension_size_kernel_writes_the_zero_padded_bound():
    """jit refuses values with bounded dynamic dimensions for now (the runtime
    carries no run-time sizes); the kernel itself materialises what the eager
    interpreter holds: the bound-size buffer, zero past the (clamped) size."""
    from numba import njit

    from numxla.compile.codegen import LoweringContext, lowerings
    from numxla.primitives.shape_ops import set_dimension_size_p
    from numxla.tracer import make_graph

    x = rand((3, 4, 5), np.float32)
    graph = make_graph(lambda a, n: lax.set_dimension_size(a, n, 1))(x, np.int32(2))
    (eq,) = graph.equations
    for layout in (None, Layout((0, 2, 1), tiles=((2, 2),))):
        if layout is not None:
            eq.outputs[0].aval = AbstractValue(eq.outputs[0].aval.shape.with_layout(layout))
        ctx = LoweringContext(graph)
        ctx.bind_name(graph.in_vars[0], "a0")
        ctx.bind_name(graph.in_vars[1], "a1")
        lowerings[set_dimension_size_p](ctx, eq)
        from numxla.compile.kernels.alloc import empty_buf, zeros_buf
        ns = {"np": np, "empty_buf": empty_buf, "zeros_buf": zeros_buf}
        exec("def k(a0, a1):\n" + "\n".join(ctx.render()) + f"\n    return {ctx.name(eq.outputs[0])}",
             ns)
        kernel = njit(ns["k"])
        for size in (-3, 0, 2, 4, 100):
            got = from_physical(kernel(x.reshape(-1), np.array([size], np.int32)),
                                eq.outputs[0].aval.shape)
            want = x.copy()
            want[:, max(size, 0):] = 0
            np.testing.assert_array_equal(got, want)
            if 0 <= size <= 4:
                np.testing.assert_array_equal(np.asarray(lax.set_dimension_size(x, size, 1)),
                                              want)
