"""Shape and data-movement ops (and the NumPy layer's indexing, joining and
creation functions built on them): the semantics document's worked examples,
shape errors raised at trace time, and property tests against independent
NumPy formulations (explicit index arithmetic)."""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.shape_ops import dynamic_slice_p
from numxla.tracer import eval_graph, make_graph
from numxla.tracer.config import config
from numxla.tracer.core import ShapeError, bf16_array, default_float, default_int
from numxla.tracer.shapes import PrimitiveType as PT, bf16_to_f32

RNG = np.random.default_rng(11)


def run(f, *args):
    """Trace ``f`` into a graph and evaluate the graph on ``args``."""
    outs = eval_graph(make_graph(f)(*args), *args)
    return outs[0] if len(outs) == 1 else outs


def traced_error(match, f, *args):
    with pytest.raises(ShapeError, match=match):
        make_graph(f)(*args)


# The document's 24-element array of the Collapse and Reshape examples.
V = np.array([[[10, 11, 12], [15, 16, 17]],
              [[20, 21, 22], [25, 26, 27]],
              [[30, 31, 32], [35, 36, 37]],
              [[40, 41, 42], [45, 46, 47]]], np.float32)
A = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
B = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], np.float32)


# -- the document's worked examples ----------------------------------------------------

def test_broadcast_document_example():
    out = lax.broadcast(np.float32(2.0), (2, 3))
    assert out.shape == (2, 3) and out.dtype == np.float32 and (out == 2.0).all()
    out = lax.broadcast(np.array([1, 2, 3], np.int32), (2,))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])


def test_broadcast_in_dim_maps_operand_dims_and_stretches_size_one():
    out = lax.broadcast_in_dim(np.array([[1, 2, 3]], np.int32), (2, 3, 2), (0, 1))
    np.testing.assert_array_equal(out[:, :, 0], [[1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(out[:, :, 1], [[1, 2, 3], [1, 2, 3]])


def test_collapse_document_example():
    v012 = lax.collapse(V, (0, 1, 2))
    np.testing.assert_array_equal(v012, [10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                         30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47])
    # Erratum: the document labels its f32[4x6] result "Collapse(v, {0,1})" and its
    # f32[8x3] result "Collapse(v, {1,2})", against its own rule (dimensions are
    # replaced in place, lowest number most major) and XlaBuilder::Collapse, which
    # merges 4x2 -> 8 for {0,1} and 2x3 -> 6 for {1,2}.  Its numbers, with XLA's labels:
    doc_4x6 = [[10, 11, 12, 15, 16, 17], [20, 21, 22, 25, 26, 27],
               [30, 31, 32, 35, 36, 37], [40, 41, 42, 45, 46, 47]]
    doc_8x3 = [[10, 11, 12], [15, 16, 17], [20, 21, 22], [25, 26, 27],
               [30, 31, 32], [35, 36, 37], [40, 41, 42], [45, 46, 47]]
    np.testing.assert_array_equal(lax.collapse(V, (1, 2)), doc_4x6)
    np.testing.assert_array_equal(lax.collapse(V, (0, 1)), doc_8x3)
    assert lax.collapse(V, (1,)) is V and lax.collapse(V, ()) is V  # nothing to collapse


def test_concatenate_document_examples():
    parts = [np.array(p, np.int32) for p in ([2, 3], [4, 5], [6, 7])]
    np.testing.assert_array_equal(lax.concatenate(parts, 0), [2, 3, 4, 5, 6, 7])
    a = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    b = np.array([[7, 8]], np.int32)
    np.testing.assert_array_equal(lax.concatenate([a, b], 0),
                                  [[1, 2], [3, 4], [5, 6], [7, 8]])


def test_dynamic_slice_document_examples():
    np.testing.assert_array_equal(lax.dynamic_slice(A, [2], [2]), [2.0, 3.0])
    np.testing.assert_array_equal(lax.dynamic_slice(B, [2, 1], [2, 2]),
                                  [[7.0, 8.0], [10.0, 11.0]])


def test_dynamic_update_slice_document_examples():
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(A, np.array([5.0, 6.0], np.float32), [2]),
        [0.0, 1.0, 5.0, 6.0, 4.0])
    u = np.array([[12.0, 13.0], [14.0, 15.0], [16.0, 17.0]], np.float32)
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(B, u, [1, 1]),
        [[0.0, 1.0, 2.0], [3.0, 12.0, 13.0], [6.0, 14.0, 15.0], [9.0, 16.0, 17.0]])


def test_dynamic_starts_clamp_as_the_document_says():
    # start = clamp(start, 0, dim - size): negative starts become 0 (no wrap-around);
    # XLA's op alone (JAX's wrapper first counts negative starts from the end)
    xla = {"allow_negative_indices": False}
    np.testing.assert_array_equal(lax.dynamic_slice(A, [-3], [2], **xla), [0.0, 1.0])
    np.testing.assert_array_equal(lax.dynamic_slice(A, [4], [2], **xla), [3.0, 4.0])
    np.testing.assert_array_equal(lax.dynamic_slice(B, [-1, 3], [2, 2], **xla),
                                  [[1.0, 2.0], [4.0, 5.0]])
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(A, np.array([5.0, 6.0], np.float32), [-1], **xla),
        [5.0, 6.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(A, np.array([5.0, 6.0], np.float32), [7], **xla),
        [0.0, 1.0, 2.0, 5.0, 6.0])


def test_iota_document_example():
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (4, 8), 0),
                                  [[i] * 8 for i in range(4)])
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (4, 8), 1),
                                  [list(range(8))] * 4)
    np.testing.assert_array_equal(lax.iota(np.float32, 5), [0.0, 1.0, 2.0, 3.0, 4.0])


def test_pad_examples_interior_and_negative_edges():
    # StableHLO spec example: low (0, 1), high (2, 1), interior (1, 2).
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    out = lax.pad(x, np.int32(0), [(0, 2, 1), (1, 1, 2)])
    np.testing.assert_array_equal(out, [[0, 1, 0, 0, 2, 0, 0, 3, 0],
                                        [0, 0, 0, 0, 0, 0, 0, 0, 0],
                                        [0, 4, 0, 0, 5, 0, 0, 6, 0],
                                        [0, 0, 0, 0, 0, 0, 0, 0, 0],
                                        [0, 0, 0, 0, 0, 0, 0, 0, 0]])
    # Negative edges cut elements off the interior-padded operand.
    y = np.array([[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0], [0, 5, 6, 0], [0, 0, 0, 0]])
    out = lax.pad(y, -1, [(1, 1, 0), (-1, -1, 1)])
    np.testing.assert_array_equal(out, [[-1, -1, -1, -1, -1],
                                        [-1, 0, -1, 0, -1],
                                        [-1, 1, -1, 2, -1],
                                        [-1, 3, -1, 4, -1],
                                        [-1, 5, -1, 6, -1],
                                        [-1, 0, -1, 0, -1],
                                        [-1, -1, -1, -1, -1]])
    np.testing.assert_array_equal(lax.pad(np.arange(5), 0, [(-2, -1, 0)]), [2, 3])


def test_reshape_document_example():
    np.testing.assert_array_equal(lax.reshape(V, (24,)), lax.collapse(V, (0, 1, 2)))
    np.testing.assert_array_equal(lax.reshape(V, (8, 3)),
                                  [[10, 11, 12], [15, 16, 17], [20, 21, 22], [25, 26, 27],
                                   [30, 31, 32], [35, 36, 37], [40, 41, 42], [45, 46, 47]])
    five = lax.reshape(np.array([[5.0]], np.float32), ())
    assert five.shape == () and five == 5.0
    np.testing.assert_array_equal(lax.reshape(np.float32(5.0), (1, 1)), [[5.0]])


def test_rev_examples():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    np.testing.assert_array_equal(lax.rev(x, (1,)), [[2, 1], [4, 3], [6, 5]])
    np.testing.assert_array_equal(lax.rev(x, (1, 0)), [[6, 5], [4, 3], [2, 1]])


def test_slice_document_examples():
    np.testing.assert_array_equal(lax.slice(A, [2], [4]), [2.0, 3.0])
    np.testing.assert_array_equal(lax.slice(B, [2, 1], [4, 3]), [[7.0, 8.0], [10.0, 11.0]])
    np.testing.assert_array_equal(lax.slice(np.arange(10), [1], [8], [3]), [1, 4, 7])


def test_transpose_is_reshape_with_dimensions():
    # The document: Transpose == Reshape(operand, permutation, Permute(permutation, dims)).
    perm = (2, 0, 1)
    out = lax.transpose(V, perm)
    assert out.shape == (3, 4, 2)
    np.testing.assert_array_equal(out, lax.reshape(V, (3, 4, 2), dimensions=perm))
    np.testing.assert_array_equal(out[1, 2], [31, 36])  # out[i,j,k] = V[j,k,i]


def test_set_dimension_size_document_example():
    v = np.arange(1, 11, dtype=np.float32)
    padded_v_five = lax.set_dimension_size(v, 5, 0)
    padded_v_six = lax.set_dimension_size(v, 6, 0)
    assert padded_v_five.shape == (10,) and padded_v_six.shape == (10,)  # the static bound
    assert lax.reduce_sum(padded_v_five, (0,)) == 1 + 2 + 3 + 4 + 5
    assert lax.reduce_sum(padded_v_six, (0,)) == 1 + 2 + 3 + 4 + 5 + 6
    assert int(lax.get_dimension_size(padded_v_five, 0)) == 5
    assert int(lax.get_dimension_size(padded_v_six, 0)) == 6
    assert int(lax.get_dimension_size(v, 0)) == 10
    # "padded values are ignored by reductions": the product too
    assert lax.reduce_prod(padded_v_five, (0,)) == 1 * 2 * 3 * 4 * 5


def test_dynamic_sizes_propagate_through_later_ops():
    v = np.arange(1, 11, dtype=np.float32)
    five = lax.set_dimension_size(v, 5, 0)
    doubled = lax.mul(five, 2.0)  # element-wise with a static operand: still 5 long
    assert int(lax.get_dimension_size(doubled, 0)) == 5
    assert lax.reduce_max(lax.add(doubled, v), (0,)) == 2 * 5 + 5
    m = lax.set_dimension_size(np.ones((3, 4), np.float32), 2, 1)
    np.testing.assert_array_equal(lax.reduce_sum(m, (1,)), [2, 2, 2])
    t = lax.transpose(m, (1, 0))
    assert int(lax.get_dimension_size(t, 0)) == 2 and int(lax.get_dimension_size(t, 1)) == 3
    assert str(make_graph(lambda x: lax.set_dimension_size(x, 2, 1))(m).out_avals[0].shape) \
        == "f32[3,<=4]{1,0}"


def test_dynamic_dimension_size_under_tracing():
    def f(x, n):
        y = lax.set_dimension_size(x, n, 1)
        return y, lax.get_dimension_size(y, 1), lax.get_dimension_size(y, 0)

    x = np.ones((2, 4), np.float32)
    g = make_graph(f)(x, np.int32(3))
    assert "set_dimension_size" in g.as_text() and "get_dimension_size" in g.as_text()
    y, n, rows = eval_graph(g, x, np.int32(3))
    np.testing.assert_array_equal(y, [[1, 1, 1, 0], [1, 1, 1, 0]])
    assert int(n) == 3 and int(rows) == 2 and np.asarray(rows).dtype == np.int32


def test_squeeze_and_expand_dims():
    x = np.zeros((1, 3, 1, 2))
    assert lax.squeeze(x, (0, 2)).shape == (3, 2)
    assert lax.expand_dims(np.zeros((3, 2)), (0, 3)).shape == (1, 3, 2, 1)


# -- shape errors at trace time --------------------------------------------------------

X34 = np.zeros((3, 4), np.float32)

ERRORS = [
    ("broadcast", r"broadcast: sizes \(-1,\) has a negative", lambda x: lax.broadcast(x, (-1,))),
    ("broadcast_in_dim", r"broadcast_in_dim: .*strictly increasing.*f32\[3,4\]",
     lambda x: lax.broadcast_in_dim(x, (4, 3), (1, 0))),
    ("broadcast_in_dim", r"operand dimension 1 of size 4 cannot broadcast",
     lambda x: lax.broadcast_in_dim(x, (3, 5), (0, 1))),
    ("reshape", r"reshape: new_sizes \(5, 2\) has 10 elements, the operand 12",
     lambda x: lax.reshape(x, (5, 2))),
    ("collapse", r"collapse: dimensions \(1, 0\) must be .*consecutive",
     lambda x: lax.collapse(x, (1, 0))),
    ("collapse", r"collapse: dimensions \(0, 2\): 2 is out of range for rank 2",
     lambda x: lax.collapse(x, (0, 2))),
    ("collapse", r"collapse: dimensions \(0, 2\) must be .*consecutive",
     lambda x: lax.collapse(lax.reshape(x, (3, 2, 2)), (0, 2))),
    ("transpose", r"transpose: permutation \(0, 0\) is not a permutation",
     lambda x: lax.transpose(x, (0, 0))),
    ("rev", r"rev: dimensions \(1, 1\) contains a repeated dimension",
     lambda x: lax.rev(x, (1, 1))),
    ("rev", r"rev: dimensions 2 is out of range for rank 2", lambda x: lax.rev(x, (2,))),
    ("slice", r"slice: limit_indices\[1\] = 1 is less than start_indices\[1\] = 2",
     lambda x: lax.slice(x, (0, 2), (3, 1))),
    ("slice", r"slice: strides\[0\] = 0 must be >= 1", lambda x: lax.slice(x, (0, 0), (3, 4), (0, 1))),
    ("slice", r"slice: limit_indices\[0\] = 4 is past the end of dimension 0 \(size 3\)",
     lambda x: lax.slice(x, (0, 0), (4, 4))),
    ("slice", r"slice: start_indices\[0\] = -1 is negative", lambda x: lax.slice(x, (-1, 0), (2, 4))),
    ("slice", r"slice: start_indices \(0,\) must have one entry per operand dimension",
     lambda x: lax.slice(x, (0,), (2,))),
    ("dynamic_slice", r"dynamic_slice: slice_sizes\[1\] = 5 must be in \[0, 4\].*f32\[3,4\]",
     lambda x: lax.dynamic_slice(x, (0, 0), (2, 5))),
    ("dynamic_slice", r"dynamic_slice: got 1 start indices for an operand of rank 2",
     lambda x: lax.dynamic_slice(x, (0,), (2, 2))),
    ("dynamic_slice", r"dynamic_slice: start index 0 must be an integer scalar",
     lambda x: lax.dynamic_slice(x, (np.float32(0), np.float32(1)), (2, 2))),
    ("dynamic_update_slice", r"dynamic_update_slice: update dimension 1 \(size 5\) is larger",
     lambda x: lax.dynamic_update_slice(x, np.zeros((1, 5), np.float32), (0, 0))),
    ("dynamic_update_slice", r"dynamic_update_slice: update has rank 1, the operand 2",
     lambda x: lax.dynamic_update_slice(x, np.zeros(2, np.float32), (0, 0))),
    ("dynamic_update_slice", r"dynamic_update_slice: update element type s32 differs",
     lambda x: lax.dynamic_update_slice(x, np.zeros((1, 1), np.int32), (0, 0))),
    ("pad", r"pad: padding_config\[1\] interior padding -1 is negative",
     lambda x: lax.pad(x, 0.0, [(0, 0, 0), (0, 0, -1)])),
    ("pad", r"pad: padding_config\[0\] = \(-2, -2, 0\) gives dimension 0 the negative size -1",
     lambda x: lax.pad(x, 0.0, [(-2, -2, 0), (0, 0, 0)])),
    ("pad", r"pad: padding_config has 1 entries for an operand of rank 2",
     lambda x: lax.pad(x, 0.0, [(1, 1, 0)])),
    ("pad", r"pad: padding_value must be a scalar", lambda x: lax.pad(x, x, [(0, 0, 0)] * 2)),
    ("pad", r"pad: padding_value element type s32 differs",
     lambda x: lax.pad(x, np.int32(0), [(0, 0, 0)] * 2)),
    ("concatenate", r"concatenate: operand 1 has rank 1, operand 0 2",
     lambda x: lax.concatenate([x, np.zeros(4, np.float32)], 0)),
    ("concatenate", r"concatenate: operand 1 differs from operand 0 in dimension 1 \(5 vs 4\)",
     lambda x: lax.concatenate([x, np.zeros((2, 5), np.float32)], 0)),
    ("concatenate", r"concatenate: operand 1 has element type f64",
     lambda x: lax.concatenate([x, np.zeros((3, 4))], 0)),
    ("concatenate", r"concatenate: dimension 2 is out of range for rank 2",
     lambda x: lax.concatenate([x, x], 2)),
    ("concatenate", r"concatenate: rank-0 operands cannot be concatenated",
     lambda x: lax.concatenate([x[0, 0], x[0, 1]], 0)),
    ("iota", r"iota: dimension 2 is out of range for shape \(3, 4\)",
     lambda x: lax.broadcasted_iota(np.int32, (3, 4), 2)),
    ("iota", r"iota: dtype must be an integer, floating-point or complex type, got pred",
     lambda x: lax.iota(np.bool_, 3)),
    ("get_dimension_size", r"get_dimension_size: dimension 2 is out of range for rank 2",
     lambda x: lax.get_dimension_size(x, 2)),
    ("set_dimension_size", r"set_dimension_size: size must be an s32 scalar, got f32\[\]",
     lambda x: lax.set_dimension_size(x, np.float32(2), 0)),
    ("set_dimension_size", r"set_dimension_size: size 5 is outside \[0, 4\]",
     lambda x: lax.set_dimension_size(x, 5, 1)),
    ("set_dimension_size", r"set_dimension_size: dimension 3 is out of range for rank 2",
     lambda x: lax.set_dimension_size(x, np.int32(1), 3)),
    ("squeeze", r"squeeze: dimensions \(1,\): dimension 1 has size 4, not 1",
     lambda x: lax.squeeze(x, (1,))),
    ("expand_dims", r"expand_dims: dimensions 3 is out of range for rank 3",
     lambda x: lax.expand_dims(x, (3,))),
]


@pytest.mark.parametrize("op, match, f", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_invalid_calls_raise_shape_errors_when_tracing(op, match, f):
    traced_error(match, f, X34)


def test_start_indices_of_mixed_types_are_rejected_by_the_rule():
    # The user function promotes start indices; the primitive insists on one type.
    def f(x, i, j):
        return dynamic_slice_p.bind(x, i, j, slice_sizes=(1, 1))
    traced_error(r"dynamic_slice: start indices must all have the same element type",
                 f, X34, np.int32(0), np.int64(0))


# -- every op traces and prints ----------------------------------------------------------

def test_every_op_traces_and_prints():
    def f(x, i):
        y = lax.broadcast(x, (2,))
        y = lax.collapse(y, (0, 1))
        y = lax.rev(lax.transpose(y, (1, 0)), (0,))
        y = lax.slice(y, (0, 1), (4, 6), (1, 2))
        y = lax.pad(y, 0.0, [(1, -1, 1), (0, 2, 0)])
        z = lax.dynamic_slice(x, (i, 0), (2, 2))
        z = lax.dynamic_update_slice(x, z, (0, i))
        z = lax.concatenate([z, lax.broadcast_in_dim(lax.iota(np.float32, 4), (1, 4), (1,))], 0)
        w = lax.set_dimension_size(x, np.int32(2), 0)
        return y, z, lax.get_dimension_size(x, 1), w, lax.reshape(z, (16,))

    text = make_graph(f)(X34, np.int32(1)).as_text()
    for name in ("broadcast", "collapse", "transpose", "rev", "slice", "pad", "dynamic_slice",
                 "dynamic_update_slice", "concatenate", "iota", "broadcast_in_dim",
                 "set_dimension_size", "get_dimension_size", "reshape"):
        assert f" {name}(" in text, name
    assert "padding_config={{1,-1,1},{0,2,0}}" in text
    assert "slice_sizes={2,2}" in text


# -- property tests against independent NumPy formulations -----------------------------

def _random_shape(rank, low=0, high=5):
    return tuple(int(d) for d in RNG.integers(low, high, size=rank))


def _taken(x, index_lists):
    """``x`` at the outer product of per-dimension index lists (NumPy fancy indexing)."""
    return x[np.ix_(*index_lists)] if x.ndim else x


def test_slice_matches_index_arithmetic():
    for _ in range(150):
        x = RNG.standard_normal(_random_shape(RNG.integers(1, 4), 1, 7)).astype(np.float32)
        starts, limits, strides = [], [], []
        for n in x.shape:
            s = int(RNG.integers(0, n + 1))
            starts.append(s)
            limits.append(int(RNG.integers(s, n + 1)))
            strides.append(int(RNG.integers(1, 4)))
        want = _taken(x, [np.arange(s, l, st) for s, l, st in zip(starts, limits, strides)])
        got = run(lambda a: lax.slice(a, starts, limits, strides), x)
        np.testing.assert_array_equal(got, want)


def test_dynamic_slice_and_update_match_clamped_index_arithmetic():
    for _ in range(150):
        x = RNG.integers(-50, 50, _random_shape(RNG.integers(1, 4), 1, 6)).astype(np.int32)
        sizes = [int(RNG.integers(0, n + 1)) for n in x.shape]
        starts = [np.int32(RNG.integers(-4, n + 4)) for n in x.shape]
        begin = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, sizes)]
        rows = [np.arange(b, b + k) for b, k in zip(begin, sizes)]
        got = run(lambda a, *s: lax.dynamic_slice(a, s, sizes, allow_negative_indices=False),
                  x, *starts)
        np.testing.assert_array_equal(got, _taken(x, rows))
        update = RNG.integers(100, 200, sizes).astype(np.int32)
        want = x.copy()
        if update.size:
            want[np.ix_(*rows)] = update
        got = run(lambda a, u, *s: lax.dynamic_update_slice(a, u, s,
                                                            allow_negative_indices=False),
                  x, update, *starts)
        np.testing.assert_array_equal(got, want)


def _pad_oracle(x, value, config):
    """out[o] = x[(o - low) / (interior + 1)] where that is a whole in-range index."""
    out_shape = [lo + hi + n + max(n - 1, 0) * i for (lo, hi, i), n in zip(config, x.shape)]
    out = np.full(out_shape, value, x.dtype)
    for o in np.ndindex(*out_shape):
        src = []
        for k, ((lo, _, interior), n) in enumerate(zip(config, x.shape)):
            p = o[k] - lo
            if p < 0 or p % (interior + 1) or p // (interior + 1) >= n:
                break
            src.append(p // (interior + 1))
        else:
            out[o] = x[tuple(src)]
    return out


def test_pad_matches_element_formula():
    checked = 0
    while checked < 120:
        x = RNG.integers(1, 9, _random_shape(RNG.integers(1, 4), 0, 4)).astype(np.int64)
        config = [(int(RNG.integers(-3, 3)), int(RNG.integers(-3, 3)), int(RNG.integers(0, 3)))
                  for _ in x.shape]
        if any(lo + hi + n + max(n - 1, 0) * i < 0 for (lo, hi, i), n in zip(config, x.shape)):
            continue
        checked += 1
        got = run(lambda a: lax.pad(a, -7, config), x)
        np.testing.assert_array_equal(got, _pad_oracle(x, -7, config))


def test_rev_collapse_broadcast_transpose_iota_concatenate_match_numpy():
    for _ in range(60):
        rank = int(RNG.integers(1, 5))
        x = RNG.standard_normal(_random_shape(rank, 1, 5))
        dims = tuple(int(d) for d in np.flatnonzero(RNG.integers(0, 2, rank)))
        flipped = _taken(x, [n - 1 - np.arange(n) if d in dims else np.arange(n)
                             for d, n in enumerate(x.shape)])
        np.testing.assert_array_equal(run(lambda a: lax.rev(a, dims), x), flipped)
        first = int(RNG.integers(0, rank))
        last = int(RNG.integers(first, rank))
        merged = x.shape[:first] + (-1,) + x.shape[last + 1:]
        np.testing.assert_array_equal(run(lambda a: lax.collapse(a, range(first, last + 1)), x),
                                      x.reshape(merged))
        sizes = _random_shape(int(RNG.integers(0, 3)), 1, 4)
        np.testing.assert_array_equal(run(lambda a: lax.broadcast(a, sizes), x),
                                      np.tile(x, sizes + (1,) * rank))
        perm = tuple(int(p) for p in RNG.permutation(rank))
        np.testing.assert_array_equal(run(lambda a: lax.transpose(a, perm), x),
                                      np.einsum(x, list(range(rank)), list(perm)))
        d = int(RNG.integers(0, rank))
        np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, x.shape, d),
                                      np.indices(x.shape)[d])
        others = [RNG.standard_normal(x.shape[:d] + (int(RNG.integers(0, 3)),) + x.shape[d + 1:])
                  for _ in range(int(RNG.integers(1, 4)))]
        np.testing.assert_array_equal(run(lambda *xs: lax.concatenate(xs, d), x, *others),
                                      np.concatenate([x] + others, d))


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_data_movement_keeps_values_of_every_element_type(dtype):
    x = (RNG.integers(0, 2, (3, 4)) if dtype is np.bool_ else
         RNG.integers(0, 100, (3, 4))).astype(dtype)
    one = np.ones((), dtype)
    np.testing.assert_array_equal(lax.rev(x, (0, 1)), x[::-1, ::-1])
    np.testing.assert_array_equal(lax.slice(x, (1, 0), (3, 4), (1, 2)), x[1:3, ::2])
    np.testing.assert_array_equal(lax.concatenate([x, x], 1), np.concatenate([x, x], 1))
    padded = lax.pad(x, one, [(1, 0, 1), (0, 0, 0)])
    np.testing.assert_array_equal(padded[1::2], x)
    assert (padded[0::2] == one).all() and padded.dtype == dtype
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, x[:1, :2], (2, 2))[2, 2:], x[0, :2])
    if dtype is not np.bool_:
        np.testing.assert_array_equal(lax.iota(dtype, 4), np.arange(4).astype(dtype))


def test_bf16_pad_value_iota_and_creation():
    # Eager bf16 values are uint16 words marked as bf16 (tracer.core.bf16_array).
    def f(x):
        return (lax.pad(x, 1.5, [(1, 1, 0)]), lax.iota(PT.BF16, 3),
                xnp.full((2,), 2.5, PT.BF16), xnp.concatenate([x, x]), lax.rev(x, (0,)))

    x = bf16_array(np.array([1.0, 2.0], np.float32))
    g = make_graph(f)(x)
    assert "bf16[4]{0} pad(" in g.as_text()
    for outs in (eval_graph(g, x), f(x)):
        padded, counts, filled, joined, flipped = (bf16_to_f32(np.asarray(o)) for o in outs)
        np.testing.assert_array_equal(padded, [1.5, 1.0, 2.0, 1.5])
        np.testing.assert_array_equal(counts, [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(filled, [2.5, 2.5])
        np.testing.assert_array_equal(joined, [1.0, 2.0, 1.0, 2.0])
        np.testing.assert_array_equal(flipped, [2.0, 1.0])
    np.testing.assert_array_equal(bf16_to_f32(np.asarray(xnp.full_like(x, x[1:]))), [2.0, 2.0])
    np.testing.assert_array_equal(xnp.full((2,), bf16_array(np.float32(3.0)), np.float32), [3, 3])


def test_traced_dynamic_slice_with_negative_start_clamps_to_zero():
    f = lambda a, i: lax.dynamic_slice(a, (i,), (2,), allow_negative_indices=False)
    np.testing.assert_array_equal(run(f, A, np.int32(-3)), [0.0, 1.0])
    np.testing.assert_array_equal(run(f, A, np.int64(9)), [3.0, 4.0])


def test_weak_type_is_kept_through_data_movement(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)  # a Python float is then f32, weakly
    g = make_graph(lambda: (lax.rev(lax.broadcast(2.0, (3,)), (0,)),
                            lax.concatenate([lax.broadcast(2.0, (3,)),
                                             np.zeros(3, np.float32)], 0)))()
    weak, mixed = g.out_avals
    assert weak.weak_type and not mixed.weak_type


# -- the NumPy layer: indexing ---------------------------------------------------------

def _random_basic_index(shape):
    items = []
    for n in shape:
        kind = RNG.integers(0, 4)
        if kind == 0:
            items.append(int(RNG.integers(-n, n)))
        elif kind == 1:
            items.append(slice(None))
        else:
            bound = lambda: None if RNG.random() < 0.3 else int(RNG.integers(-n - 2, n + 3))
            step = int(RNG.choice([-3, -2, -1, 1, 2, 3]))
            items.append(slice(bound(), bound(), step if RNG.random() < 0.8 else None))
    if RNG.random() < 0.4:  # dims p..q-1 become an Ellipsis (which expands to q - p dims)
        p = int(RNG.integers(0, len(items) + 1))
        q = int(RNG.integers(p, len(items) + 1))
        items[p:q] = [Ellipsis]
    for _ in range(int(RNG.integers(0, 3))):
        items.insert(int(RNG.integers(0, len(items) + 1)), None)
    return tuple(items)


def test_basic_indexing_matches_numpy():
    for _ in range(300):
        x = RNG.standard_normal(_random_shape(int(RNG.integers(0, 4)), 1, 6)).astype(np.float32)
        index = _random_basic_index(x.shape)
        got = run(lambda a: a[index], x)
        np.testing.assert_array_equal(got, x[index], err_msg=str(index))


def test_indexing_forms():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    cases = [1, -1, (1, 2), (slice(None), 0), (Ellipsis, 1), (None, 0, None), (),
             (slice(None, None, -1), Ellipsis, slice(3, 0, -2)), np.int64(1), np.array(1),
             slice(5, 1), (0, slice(None), np.newaxis)]
    for index in cases:
        np.testing.assert_array_equal(run(lambda a: a[index], x), x[index], err_msg=str(index))
    text = make_graph(lambda a: a[1, ::-1, None])(x).as_text()
    assert "slice(" in text and "rev(" in text and "reshape(" in text


def test_traced_integer_indices_are_dynamic_slices():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    f = lambda a, i, j: (a[i], a[:, j], a[i, 1:4], a[j - 1, i])
    g = make_graph(f)(x, np.int32(0), np.int32(0))
    assert "dynamic_slice(" in g.as_text()
    for i, j in [(0, 0), (3, 4), (-1, -2), (-4, 2)]:
        outs = eval_graph(g, x, np.int32(i), np.int32(j))
        for got, want in zip(outs, (x[i], x[:, j], x[i, 1:4], x[j - 1, i])):
            np.testing.assert_array_equal(got, want)
    # out of range traced indices clamp (as in JAX) rather than fail
    np.testing.assert_array_equal(eval_graph(g, x, np.int32(9), np.int32(0))[0], x[3])
    np.testing.assert_array_equal(run(lambda a, i: a[i, ::-1], x, np.uint8(2)), x[2, ::-1])


def test_indexing_errors():
    x = np.zeros((2, 3), np.float32)
    for index, match in [((0, 0, 0), "too many indices"), (5, "index 5 is out of bounds for axis 0"),
                         ((0, -4), "index -4 is out of bounds for axis 1"),
                         ((Ellipsis, Ellipsis), "single ellipsis"), (1.5, "valid indices"),
                         (np.array(1.5), "valid indices")]:
        with pytest.raises(IndexError, match=match):
            make_graph(lambda a: a[index])(x)


def test_advanced_indices_are_delegated_whole(monkeypatch):
    calls = []

    def advanced_getitem(x, index):
        calls.append(index)
        return x

    stub = types.ModuleType("numxla.primitives.numpy._gather_indexing")
    stub.advanced_getitem = advanced_getitem
    monkeypatch.setitem(sys.modules, "numxla.primitives.numpy._gather_indexing", stub)
    x = np.zeros((3, 4), np.float32)
    indices = [[0, 2], (slice(None), np.array([1, 3])), (0, True), np.array([True, False, True])]
    for index in indices:
        make_graph(lambda a: a[index])(x)
    assert [repr(c) for c in calls] == [repr(i) for i in indices]  # the whole index, unchanged
    calls.clear()
    make_graph(lambda a, i: a[1:, i])(x, np.array([0, 1], np.int32))  # a traced int array
    assert len(calls) == 1 and calls[0][0] == slice(1, None)


def test_advanced_indices_run_through_gather_indexing():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for index in ([0, 2], (slice(None), np.array([1, 3])), np.array([True, False, True]),
                  (1, [0, 3]), (None, [2, 0], slice(1, None, 2))):
        np.testing.assert_array_equal(run(lambda a: a[index], x), x[index], err_msg=str(index))
    i = np.array([2, 0], np.int32)
    np.testing.assert_array_equal(run(lambda a, j: a[j], x, i), x[i])


# -- the NumPy layer: joining, rearranging, creation ---------------------------------

def test_joining_and_splitting_match_numpy():
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.integers(0, 9, (2, 3)).astype(np.int32)
    got = run(lambda p, q: xnp.concatenate([p, q], axis=-1), a, b)
    np.testing.assert_array_equal(got, np.concatenate([a, b.astype(np.float32)], -1))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(run(lambda p: xnp.concatenate([p, p], axis=None), a),
                                  np.concatenate([a, a], axis=None))
    for axis in (0, 1, 2, -1):
        np.testing.assert_array_equal(run(lambda p, q: xnp.stack([p, q, p], axis), a, a + 1),
                                      np.stack([a, a + 1, a], axis))
    np.testing.assert_array_equal(xnp.concatenate([[1, 2], (3,)]), [1, 2, 3])
    np.testing.assert_array_equal(xnp.vstack([a, a[0]]), np.vstack([a, a[0]]))
    np.testing.assert_array_equal(xnp.hstack([a, a]), np.hstack([a, a]))
    x = np.arange(24).reshape(4, 6)
    for sections, axis in [(2, 0), (3, 1), ([1, 3], 0), ([2, -1, 10], 1), ([], 0)]:
        got = run(lambda p: tuple(xnp.split(p, sections, axis)), x)
        got = got if isinstance(got, list) else [got]
        want = np.split(x, sections, axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(ShapeError, match="equal division"):
        xnp.split(x, 4, 1)
    with pytest.raises(ShapeError, match="same shape"):
        xnp.stack([a, a.T])


def test_rearranging_matches_numpy():
    x = RNG.standard_normal((2, 1, 3, 1)).astype(np.float32)
    checks = [
        (lambda a: xnp.squeeze(a), np.squeeze(x)),
        (lambda a: xnp.squeeze(a, -1), np.squeeze(x, -1)),
        (lambda a: a.squeeze((1, 3)), np.squeeze(x, (1, 3))),
        (lambda a: xnp.expand_dims(a, (0, -1)), np.expand_dims(x, (0, -1))),
        (lambda a: xnp.flip(a), np.flip(x)),
        (lambda a: xnp.flip(a, (0, 2)), np.flip(x, (0, 2))),
        (lambda a: xnp.swapaxes(a, 0, -2), np.swapaxes(x, 0, -2)),
        (lambda a: a.swapaxes(1, 2), x.swapaxes(1, 2)),
        (lambda a: xnp.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1)),
        (lambda a: xnp.moveaxis(a, (0, 2), (3, 0)), np.moveaxis(x, (0, 2), (3, 0))),
        (lambda a: xnp.ravel(a), np.ravel(x)),
        (lambda a: a.flatten(), x.flatten()),
        (lambda a: a.ravel(), x.ravel()),
        (lambda a: xnp.roll(a, 2, 2), np.roll(x, 2, 2)),
        (lambda a: xnp.roll(a, -1), np.roll(x, -1)),
        (lambda a: xnp.roll(a, (1, 5), (0, 2)), np.roll(x, (1, 5), (0, 2))),
        (lambda a: xnp.tile(a, 2), np.tile(x, 2)),
        (lambda a: xnp.tile(a, (2, 1, 1, 3, 1)), np.tile(x, (2, 1, 1, 3, 1))),
        (lambda a: xnp.repeat(a, 3, 2), np.repeat(x, 3, 2)),
        (lambda a: xnp.repeat(a, 2), np.repeat(x, 2)),
        (lambda a: xnp.pad(a, 1), np.pad(x, 1)),
        (lambda a: xnp.pad(a, ((0, 1), (2, 0), (1, 1), (0, 0)), constant_values=7.5),
         np.pad(x, ((0, 1), (2, 0), (1, 1), (0, 0)), constant_values=7.5)),
        (lambda a: xnp.pad(a, (1, 2), constant_values=((1, 2), (3, 4), (5, 6), (7, 8))),
         np.pad(x, (1, 2), constant_values=((1, 2), (3, 4), (5, 6), (7, 8)))),
    ]
    for k, (f, want) in enumerate(checks):
        got = run(f, x)
        assert got.shape == want.shape, k
        np.testing.assert_array_equal(got, want, err_msg=str(k))
    with pytest.raises(ShapeError, match="squeeze"):
        xnp.squeeze(x, 0)


def test_creation_functions_match_numpy():
    F, I = default_float().numpy_dtype, default_int().numpy_dtype  # JAX's (64-bit with x64)
    checks = [
        (xnp.zeros((2, 3)), np.zeros((2, 3), F)),
        (xnp.ones(4, np.int8), np.ones(4, np.int8)),
        (xnp.full((2, 2), 7), np.full((2, 2), 7, I)),
        (xnp.full((2, 3), np.array([1.0, 2.0, 3.0])), np.full((2, 3), [1.0, 2.0, 3.0])),
        (xnp.zeros_like(np.ones((2, 1), np.int16)), np.zeros((2, 1), np.int16)),
        (xnp.ones_like(np.ones(3), dtype=np.complex64), np.ones(3, np.complex64)),
        (xnp.full_like(np.ones((2,), np.uint8), 5, shape=(3, 2)), np.full((3, 2), 5, np.uint8)),
        (xnp.arange(5), np.arange(5, dtype=I)),
        (xnp.arange(2, 11, 3), np.arange(2, 11, 3, dtype=I)),
        (xnp.arange(10, 0, -3), np.arange(10, 0, -3, dtype=I)),
        (xnp.arange(3, 1), np.arange(3, 1, dtype=I)),
        (xnp.arange(0.5, 3.0, 0.5), np.arange(0.5, 3.0, 0.5, dtype=F)),
        (xnp.eye(3), np.eye(3, dtype=F)),
        (xnp.eye(3, 5, k=2, dtype=np.int32), np.eye(3, 5, k=2, dtype=np.int32)),
        (xnp.eye(4, 2, k=-1), np.eye(4, 2, k=-1, dtype=F)),
        (xnp.identity(2, np.bool_), np.identity(2, np.bool_)),
    ]
    for k, (got, want) in enumerate(checks):
        assert got.dtype == want.dtype and got.shape == want.shape, k
        np.testing.assert_array_equal(got, want, err_msg=str(k))
    for args in [(0.0, 1.0, 5), (-2.0, 3.0, 7, False), (1.0, 1.0, 1), (0.0, 10.0, 0)]:
        np.testing.assert_allclose(xnp.linspace(*args), np.linspace(*args).astype(F),
                                   rtol=1e-6)
    assert xnp.linspace(0.0, 3.0, 7)[-1] == 3.0


def test_creation_traces_as_broadcast_and_iota():
    text = make_graph(lambda x: (xnp.zeros_like(x), xnp.eye(3), xnp.arange(4),
                                 xnp.full((2,), x[0])))(np.ones(3, np.float32)).as_text()
    assert "broadcast_in_dim(" in text and "iota(" in text and "constant" not in text.lower()
    out = run(lambda x: xnp.linspace(x[0], x[1], 4), np.array([1.0, 4.0], np.float32))
    np.testing.assert_allclose(out, [1.0, 2.0, 3.0, 4.0])


def test_negative_dynamic_starts_count_from_the_end_as_jax_s():
    """JAX's lax.dynamic_slice/dynamic_update_slice read a negative start as
    ``start + dim`` before XLA's clamp (values from JAX 0.10.2);
    ``allow_negative_indices=False`` is XLA's op alone (clamped to 0)."""
    x = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-1,), (2,)), [3, 4])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-7,), (2,)), [0, 1])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-1,), (2,), allow_negative_indices=False),
                                  [0, 1])
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, np.int32([9, 9]), (np.int32(-1),)),
                                  [0, 1, 2, 9, 9])
    assert int(lax.dynamic_index_in_dim(x, -2, keepdims=False)) == 3
    graph = make_graph(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(x, np.int32(0))
    for start, want in ((-1, [3, 4]), (-7, [0, 1]), (2, [2, 3]), (9, [3, 4])):
        np.testing.assert_array_equal(eval_graph(graph, x, np.int32(start))[0], want)
