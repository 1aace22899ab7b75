"""Gather and Scatter: the document's worked examples, XLA's shape errors at
trace time, property tests against independent loop formulations of the
document's formal definitions (batching dimensions, clamping, skipped
windows, explicit ``index_vector_dim``), the out-of-bounds modes, and the
NumPy layer (advanced indexing, take, take_along_axis, ``.at``) against NumPy."""
from __future__ import annotations

import time

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.primitives.indexing import GatherDimensionNumbers as GDN, ScatterDimensionNumbers as SDN
from numxla.primitives.numpy._gather_indexing import advanced_getitem, take, take_along_axis
from numxla.tracer import make_graph
from numxla.tracer.core import ShapeError, abstractify, bf16_array
from numxla.tracer.graph import eval_graph
from numxla.tracer.shapes import bf16_to_f32

RNG = np.random.default_rng(3)


def run_traced(fn, *args):
    """Trace ``fn`` with ``make_graph`` and evaluate the graph: (graph, results)."""
    graph = make_graph(fn)(*args)
    return graph, eval_graph(graph, *args)


# --------------------------------------------------------------------------
# independent formulations: the document's formal definitions, one element at a time
# --------------------------------------------------------------------------

def loop_gather(operand, indices, dn: GDN, slice_sizes, ivd):
    """Gather by the document's definition: for each output index Out, G are its
    batch coordinates, S the index vector at G (index_vector_dim ``ivd``), Sin
    and Oin scattered into the operand; starts clamped so the slice fits."""
    if ivd == indices.ndim:
        indices = indices[..., None]
    batch_shape = tuple(d for i, d in enumerate(indices.shape) if i != ivd)
    kept = [d for d in range(operand.ndim)
            if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_rank = len(batch_shape) + len(kept)
    out_shape, b_iter, o_iter = [], iter(batch_shape), iter(kept)
    for i in range(out_rank):
        out_shape.append(slice_sizes[next(o_iter)] if i in dn.offset_dims else next(b_iter))
    out = np.zeros(out_shape, operand.dtype)
    batch_positions = [i for i in range(out_rank) if i not in dn.offset_dims]
    for out_index in np.ndindex(*out_shape):
        g = [out_index[i] for i in batch_positions]
        s = [indices[tuple(g[:ivd]) + (k,) + tuple(g[ivd:])] for k in range(indices.shape[ivd])]
        full = [0] * operand.ndim
        for k, d in enumerate(dn.start_index_map):
            full[d] = int(s[k])
        for d in range(operand.ndim):
            full[d] = min(max(full[d], 0), operand.shape[d] - slice_sizes[d])
        for od, idd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            full[od] = g[idd - (idd > ivd)]
        for k, d in enumerate(kept):
            full[d] += out_index[dn.offset_dims[k]]
        out[out_index] = operand[tuple(full)]
    return out


def loop_scatter(operand, indices, updates, dn: SDN, ivd, combine):
    """Scatter by the document's definition, updates applied in order (index
    vector by index vector, each window row-major); windows that do not fit
    are skipped whole."""
    if ivd == indices.ndim:
        indices = indices[..., None]
    out = operand.copy()
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    kept = [d for d in range(operand.ndim)
            if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    window = [1] * operand.ndim
    for k, d in enumerate(kept):
        window[d] = updates.shape[dn.update_window_dims[k]]
    for g in np.ndindex(*[updates.shape[d] for d in scatter_dims]):
        s = [indices[tuple(g[:ivd]) + (k,) + tuple(g[ivd:])] for k in range(indices.shape[ivd])]
        start = [0] * operand.ndim
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = int(s[k])
        for od, idd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = g[idd - (idd > ivd)]
        if any(st < 0 or st + w > n for st, w, n in zip(start, window, operand.shape)):
            continue
        for w in np.ndindex(*[updates.shape[d] for d in dn.update_window_dims]):
            u = [0] * updates.ndim
            for d, v in zip(scatter_dims, g):
                u[d] = v
            for d, v in zip(dn.update_window_dims, w):
                u[d] = v
            target = list(start)
            for k, d in enumerate(kept):
                target[d] += w[k]
            out[tuple(target)] = combine(out[tuple(target)], updates[tuple(u)])
    return out


def random_gather_case(rng):
    """Random valid gather/scatter dimension numbers with batching dimensions,
    indices with the index vector at a random ``index_vector_dim``."""
    rank = int(rng.integers(1, 5))
    dims = list(rng.permutation(rank))
    n_batching = int(rng.integers(0, min(rank, 2) + 1))
    operand_batching = tuple(sorted(int(d) for d in dims[:n_batching]))
    rest = dims[n_batching:]
    n_collapsed = int(rng.integers(0, len(rest) + 1))
    collapsed = tuple(sorted(int(d) for d in rest[:n_collapsed]))
    mappable = [int(d) for d in rng.permutation(rest)]
    index_map = tuple(mappable[:int(rng.integers(0, len(mappable) + 1))])
    n_batch_idx = int(rng.integers(n_batching, n_batching + 3))
    batch_shape = [int(rng.integers(1, 4)) for _ in range(n_batch_idx)]
    idx_batching = tuple(int(d) for d in rng.permutation(n_batch_idx)[:n_batching])
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    for od, idd in zip(operand_batching, idx_batching):
        shape[od] = batch_shape[idd]
    n_offset = rank - len(collapsed) - n_batching
    out_rank = n_batch_idx + n_offset
    offset_dims = tuple(sorted(int(d) for d in rng.permutation(out_rank)[:n_offset]))
    slice_sizes = tuple(1 if d in collapsed or d in operand_batching else
                        int(rng.integers(0, shape[d] + 1)) for d in range(rank))
    ivd = int(rng.integers(0, n_batch_idx + 1))
    idx_shape = batch_shape[:ivd] + [len(index_map)] + batch_shape[ivd:]
    if len(index_map) == 1 and ivd == n_batch_idx and rng.random() < 0.5:
        idx_shape = batch_shape  # index_vector_dim == rank: an implicit trailing 1
    hi = max(shape) + 2
    indices = rng.integers(-2, hi, size=idx_shape)
    # index_vector_dim numbering: batching dims of the indices skip the vector dim
    idx_batching_xla = tuple(d + (d >= ivd) for d in idx_batching)
    operand = rng.integers(-50, 50, size=shape)
    return operand, indices, ivd, offset_dims, collapsed, index_map, operand_batching, \
        idx_batching_xla, slice_sizes


# --------------------------------------------------------------------------
# the document's examples
# --------------------------------------------------------------------------

def test_doc_gather_five_slices_of_8x6_from_16x11():
    """Out[G,O0,O1] = In[X+O0, Y+O1] with (X,Y) = indices[G]; output [5,8,6]."""
    operand = np.arange(16 * 11, dtype=np.float32).reshape(16, 11)
    indices = np.array([[0, 0], [8, 5], [3, 2], [7, 1], [1, 4]], dtype=np.int64)  # S64[5,2]
    out = lax.gather(operand, indices, GDN(offset_dims=(1, 2), collapsed_slice_dims=(),
                                           start_index_map=(0, 1)), (8, 6))
    assert out.shape == (5, 8, 6)
    for g, (x, y) in enumerate(indices):
        np.testing.assert_array_equal(out[g], operand[x:x + 8, y:y + 6])


def test_doc_gather_batch_of_4x5_index_vectors():
    """Indices [4,5,2]: G0, G1 are batch dimensions; output [4,5,8,6]."""
    operand = np.arange(16 * 11, dtype=np.int32).reshape(16, 11)
    indices = np.stack([RNG.integers(0, 9, (4, 5)), RNG.integers(0, 6, (4, 5))], axis=-1)
    out = lax.gather(operand, indices, GDN((2, 3), (), (0, 1)), (8, 6))
    assert out.shape == (4, 5, 8, 6)
    for g0 in range(4):
        for g1 in range(5):
            x, y = indices[g0, g1]
            np.testing.assert_array_equal(out[g0, g1], operand[x:x + 8, y:y + 6])


def test_doc_gather_as_tf_gather_nd():
    """start_index_map {0}, collapsed {0}, slice_sizes [1,11]: every X picks a
    whole row: Out[G0,G1,O0] = In[indices[G0,G1,0], O0]."""
    operand = RNG.standard_normal((16, 11))
    indices = RNG.integers(0, 16, (4, 5, 1))
    out = lax.gather(operand, indices, GDN(offset_dims=(2,), collapsed_slice_dims=(0,),
                                           start_index_map=(0,)), (1, 11))
    assert out.shape == (4, 5, 11)
    np.testing.assert_array_equal(out, operand[indices[..., 0]])


def test_doc_remapped_offset_dims():
    """offset_dims.size 4, operand rank 6, collapsed_slice_dims {0,2}:
    remapped_offset_dims is {0->1, 1->3, 2->4, 3->5}."""
    operand = RNG.integers(0, 100, (2, 4, 4, 2, 3, 2))
    indices = np.array([[1, 0, 2]])  # starts of operand dims 0, 2, 1
    out = lax.gather(operand, indices, GDN(offset_dims=(1, 2, 3, 4), collapsed_slice_dims=(0, 2),
                                           start_index_map=(0, 2, 1)), (1, 2, 1, 2, 3, 2))
    assert out.shape == (1, 2, 2, 3, 2)
    for o in np.ndindex(2, 2, 3, 2):
        assert out[(0,) + o] == operand[1, 2 + o[0], 0, o[1], o[2], o[3]]
    # the same map places Scatter's window dimensions
    zeros = np.zeros_like(operand)
    back = lax.scatter(zeros, indices, out, SDN(update_window_dims=(1, 2, 3, 4),
                                                inserted_window_dims=(0, 2),
                                                scatter_dims_to_operand_dims=(0, 2, 1)))
    np.testing.assert_array_equal(back[1, 2:4, 0], operand[1, 2:4, 0])
    assert back.sum() == operand[1, 2:4, 0].sum()


def test_doc_implicit_trailing_index_vector_dimension():
    """start_indices [6,7] with index_vector_dim 2 is read as [6,7,1]."""
    operand = np.arange(10) * 10
    indices = RNG.integers(0, 10, (6, 7))
    out = lax.gather(operand, indices, GDN((), (0,), (0,)), (1,), index_vector_dim=2)
    assert out.shape == (6, 7)
    np.testing.assert_array_equal(out, operand[indices])


def test_doc_batch_bounds_skip_index_vector_dim():
    """Batch dimension bounds come from start_indices.shape without
    index_vector_dim (dims[k] for k < index_vector_dim, dims[k+1] otherwise)."""
    operand = RNG.integers(0, 9, (5, 7))
    indices = np.stack([RNG.integers(0, 5, (4, 3)), RNG.integers(0, 7, (4, 3))])  # [2,4,3]
    out = lax.gather(operand, indices, GDN((), (0, 1), (0, 1)), (1, 1), index_vector_dim=0)
    assert out.shape == (4, 3)
    np.testing.assert_array_equal(out, operand[indices[0], indices[1]])


def test_gather_clamps_start_indices_so_the_slice_fits():
    """The conformance notes' example: index 9 into a dimension of 3 is clamped."""
    operand = np.arange(1, 25).reshape(3, 4, 2)
    indices = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]])
    out = lax.gather(operand, indices, GDN((2, 3), (0,), (1, 0)), (1, 2, 2))
    np.testing.assert_array_equal(out[1, 2], [[17, 18], [19, 20]])  # start (2, 0)
    np.testing.assert_array_equal(out[0, 2], operand[1, 2:4])


def test_doc_scatter_update_computation_gets_current_value_first():
    """update_computation(old, new): the current output value first, then the
    update (matters for non-commutative computations); repeated indices apply
    in turn."""
    operand = np.array([1, 2, 3, 4], dtype=np.int32)
    indices = np.array([[1], [1], [3]])
    updates = np.array([10, 20, 30], dtype=np.int32)
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    out = lax.scatter(operand, indices, updates, dn, update_computation=lambda old, new:
                      lax.sub(lax.mul(old, 2), new))
    np.testing.assert_array_equal(out, [1, (2 * 2 - 10) * 2 - 20, 3, 4 * 2 - 30])


def test_doc_scatter_is_the_inverse_of_gather():
    """Scatter modifies exactly the elements the corresponding gather extracts."""
    operand = RNG.integers(0, 100, (16, 11))
    indices = np.array([[0, 0], [8, 5], [3, 2]])
    gdn = GDN((1, 2), (), (0, 1))
    window = lax.gather(operand, indices, gdn, (8, 6))
    sdn = SDN(update_window_dims=(1, 2), inserted_window_dims=(),
              scatter_dims_to_operand_dims=(0, 1))
    out = lax.scatter(np.zeros_like(operand), indices, window, sdn)
    mask = np.zeros(operand.shape, bool)
    for x, y in indices:
        mask[x:x + 8, y:y + 6] = True
    np.testing.assert_array_equal(out, np.where(mask, operand, 0))


def test_doc_variadic_scatter_collates_tuples():
    """N = 2: operands and updates are pairs; the computation takes
    (old_0, old_1, new_0, new_1) and returns a pair (here: keep the larger
    value and its tag)."""
    values = np.array([5.0, 1.0, 7.0], dtype=np.float32)
    tags = np.array([0, 0, 0], dtype=np.int32)
    indices = np.array([[0], [1], [1], [2]])
    upd_values = np.array([3.0, 4.0, 2.0, 9.0], dtype=np.float32)
    upd_tags = np.array([1, 2, 3, 4], dtype=np.int32)

    def keep_max(v0, t0, v1, t1):
        take_new = lax.gt(v1, v0)
        return lax.select(take_new, v1, v0), lax.select(take_new, t1, t0)

    dn = SDN((), (0,), (0,))
    out_v, out_t = lax.scatter((values, tags), indices, (upd_values, upd_tags), dn,
                               update_computation=keep_max)
    np.testing.assert_array_equal(out_v, [5.0, 4.0, 9.0])
    np.testing.assert_array_equal(out_t, [0, 2, 4])


def test_rank_0_operands_and_empty_index_vectors():
    """Index vectors of size 0 (start_index_map empty): every slice starts at 0."""
    out = lax.gather(np.float32(3), np.zeros((4, 0), np.int32), GDN((), (), ()), ())
    np.testing.assert_array_equal(out, [3, 3, 3, 3])
    total = lax.scatter_add(np.float32(3), np.zeros((4, 0), np.int32), np.ones(4, np.float32),
                            SDN((), (), ()))
    assert total == 7
    empty = lax.scatter(np.zeros((0, 3)), np.zeros((2, 1), np.int32), np.zeros((2, 0, 3)),
                        SDN((1, 2), (), (0,)))
    assert empty.shape == (0, 3)


def test_scatter_skips_whole_windows_that_do_not_fit():
    operand = np.zeros((5,), np.int32)
    indices = np.array([[-1], [3], [4], [1]])
    updates = np.ones((4, 2), np.int32)
    out = lax.scatter_add(operand, indices, updates, SDN((1,), (), (0,)))
    np.testing.assert_array_equal(out, [0, 1, 1, 1, 1])  # windows at 3 and 1 only


def test_conformance_scatter_with_batching_dims():
    operand = np.arange(1, 49).reshape(2, 3, 4, 2)
    indices = np.array([0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0]
                       ).reshape(2, 2, 3, 2)
    dn = SDN(update_window_dims=(3, 4), inserted_window_dims=(1,),
             scatter_dims_to_operand_dims=(2, 1), operand_batching_dims=(0,),
             scatter_indices_batching_dims=(1,))
    out = lax.scatter_add(operand, indices, np.ones((2, 2, 3, 2, 2), np.int64), dn,
                          index_vector_dim=3)
    np.testing.assert_array_equal(out.reshape(-1)[:12], [3, 4, 6, 7, 6, 7, 7, 8, 9, 10, 11, 12])


# --------------------------------------------------------------------------
# property tests against the loop formulations
# --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(60))
def test_gather_matches_the_formal_definition(seed):
    rng = np.random.default_rng(seed)
    (operand, indices, ivd, offset_dims, collapsed, index_map, obatch, ibatch,
     slice_sizes) = random_gather_case(rng)
    dn = GDN(offset_dims, collapsed, index_map, obatch, ibatch)
    got = lax.gather(operand, indices, dn, slice_sizes, index_vector_dim=ivd)
    np.testing.assert_array_equal(got, loop_gather(operand, indices, dn, slice_sizes, ivd))


def _scatter_case(seed):
    rng = np.random.default_rng(seed)
    (operand, indices, ivd, offset_dims, collapsed, index_map, obatch, ibatch,
     slice_sizes) = random_gather_case(rng)
    # the gather's output is a valid updates shape for the matching scatter
    gdn = GDN(offset_dims, collapsed, index_map, obatch, ibatch)
    updates = rng.integers(-9, 9, size=lax.gather(operand, indices, gdn, slice_sizes,
                                                  index_vector_dim=ivd).shape)
    sdn = SDN(offset_dims, collapsed, index_map, obatch, ibatch)
    return operand, indices, updates, sdn, ivd


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("name,combine", [
    ("scatter_add", lambda a, b: a + b), ("scatter_mul", lambda a, b: a * b),
    ("scatter_min", min), ("scatter_max", max), ("scatter", lambda a, b: b)])
def test_scatter_matches_the_formal_definition(seed, name, combine):
    operand, indices, updates, sdn, ivd = _scatter_case(seed)
    got = getattr(lax, name)(operand, indices, updates, sdn, index_vector_dim=ivd)
    np.testing.assert_array_equal(got, loop_scatter(operand, indices, updates, sdn, ivd, combine))


@pytest.mark.parametrize("seed", range(20))
def test_scatter_general_computation_matches_the_formal_definition(seed):
    """A non-commutative computation: the order of repeated updates matters."""
    operand, indices, updates, sdn, ivd = _scatter_case(seed)
    got = lax.scatter(operand, indices, updates, sdn, index_vector_dim=ivd,
                      update_computation=lambda old, new: lax.sub(lax.mul(old, 3), new))
    want = loop_scatter(operand, indices, updates, sdn, ivd, lambda a, b: a * 3 - b)
    np.testing.assert_array_equal(got, want)


def test_scatter_computation_that_does_not_vectorise_runs_element_by_element():
    """A computation whose ops need rank-0 values (reshape to []) still runs."""
    operand = np.arange(6, dtype=np.float32)
    indices = np.array([[1], [1], [4]])
    updates = np.array([1.0, 2.0, 3.0], np.float32)

    def comp(old, new):
        return lax.reshape(lax.add(lax.reshape(old, (1,)), lax.reshape(new, (1,))), ())

    out = lax.scatter(operand, indices, updates, SDN((), (0,), (0,)), update_computation=comp)
    np.testing.assert_array_equal(out, [0, 4, 2, 3, 7, 5])


def test_scatter_of_ten_thousand_indices_is_fast():
    operand = np.zeros((100, 8), np.float32)
    indices = RNG.integers(0, 100, (10_000, 1))
    updates = RNG.standard_normal((10_000, 8)).astype(np.float32)
    dn = SDN((1,), (0,), (0,))
    start = time.perf_counter()
    out = lax.scatter_add(operand, indices, updates, dn)
    general = lax.scatter(operand, indices, updates, dn,
                          update_computation=lambda a, b: lax.max(a, lax.mul(b, 2.0)))
    gathered = lax.gather(out, indices, GDN((1,), (0,), (0,)), (1, 8))
    assert time.perf_counter() - start < 5
    want = np.zeros((100, 8), np.float32)
    np.add.at(want, indices[:, 0], updates)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    want_max = np.zeros((100, 8), np.float32)
    np.maximum.at(want_max, indices[:, 0], updates * 2)
    np.testing.assert_array_equal(general, want_max)
    np.testing.assert_array_equal(gathered, out[indices[:, 0]])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16,
                                   np.float64, np.complex64])
def test_scatter_add_and_mul_over_element_types(dtype):
    """Integers wrap; pred add is 'or' and mul is 'and' (XLA's add/mul of pred)."""
    operand = (RNG.integers(0, 3, 6) if dtype != np.bool_ else RNG.integers(0, 2, 6)).astype(dtype)
    indices = RNG.integers(0, 6, (9, 1))
    updates = (RNG.integers(0, 100, 9) if dtype != np.bool_ else RNG.integers(0, 2, 9)
               ).astype(dtype)
    dn = SDN((), (0,), (0,))
    add_op = (lambda a, b: a | b) if dtype == np.bool_ else (lambda a, b: dtype(a + b))
    mul_op = (lambda a, b: a & b) if dtype == np.bool_ else (lambda a, b: dtype(a * b))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(lax.scatter_add(operand, indices, updates, dn),
                                      loop_scatter(operand, indices, updates, dn, 1, add_op))
        np.testing.assert_array_equal(lax.scatter_mul(operand, indices, updates, dn),
                                      loop_scatter(operand, indices, updates, dn, 1, mul_op))


def test_bf16_scatters_round_after_every_update():
    """1 + 2**-8 is a tie in bf16 and rounds to 1: three such updates leave 1
    (rounding once at the end would give 1 + 2**-7); u16 words add as integers."""
    operand = bf16_array(np.array([1.0, 0.0], np.float32))
    updates = bf16_array(np.full(3, 2.0 ** -8, np.float32))
    indices = np.zeros((3, 1), np.int32)
    dn = SDN((), (0,), (0,))
    out = lax.scatter_add(operand, indices, updates, dn)
    assert abstractify(out).element_type.short_name == "bf16"
    np.testing.assert_array_equal(bf16_to_f32(out), [1.0, 0.0])
    down = lax.scatter(operand, indices, updates, dn, update_computation=lambda a, b: lax.sub(a, b))
    np.testing.assert_array_equal(bf16_to_f32(down), [1 - 3 * 2.0 ** -8, 0.0])
    words = lax.scatter_add(np.array([1, 0], np.uint16), indices, np.full(3, 5, np.uint16), dn)
    np.testing.assert_array_equal(words, [16, 0])
    filled = lax.gather(operand, np.array([[5]]), GDN((), (0,), (0,)), (1,), mode="fill")
    assert np.isnan(bf16_to_f32(filled)).all()


def test_scatter_min_max_propagate_nan():
    operand = np.array([1.0, np.nan, 3.0], np.float32)
    indices = np.array([[0], [1], [2]])
    updates = np.array([np.nan, 0.0, 2.0], np.float32)
    dn = SDN((), (0,), (0,))
    np.testing.assert_array_equal(lax.scatter_max(operand, indices, updates, dn),
                                  [np.nan, np.nan, 3.0])
    np.testing.assert_array_equal(lax.scatter_min(operand, indices, updates, dn),
                                  [np.nan, np.nan, 2.0])


# --------------------------------------------------------------------------
# out-of-bounds modes of the user functions
# --------------------------------------------------------------------------

def test_gather_fill_mode_and_default_fill_values():
    dn = GDN((1,), (0,), (0,))
    indices = np.array([[0], [-1], [2], [3]])
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = lax.gather(x, indices, GDN((1,), (0,), (0,)), (1, 2), mode="fill")
    np.testing.assert_array_equal(out, [[0, 1], [np.nan, np.nan], [6, 7], [9, 10]])
    ints = lax.gather(x.astype(np.int16), np.array([[5]]), dn, (1, 3), mode="fill")
    np.testing.assert_array_equal(ints, [[-32768] * 3])
    unsigned = lax.gather(x.astype(np.uint8), np.array([[5]]), dn, (1, 3), mode="fill")
    np.testing.assert_array_equal(unsigned, [[255] * 3])
    custom = lax.gather(x, np.array([[5], [1]]), dn, (1, 3), mode="fill", fill_value=-1.0)
    np.testing.assert_array_equal(custom, [[-1, -1, -1], [3, 4, 5]])
    # the slice must fit entirely: start 1 with 3 of 3 columns is out of bounds
    cols = lax.gather(x, np.array([[0, 1]]), GDN((1, 2), (), (0, 1)), (1, 3), mode="fill")
    assert np.isnan(cols).all()
    for mode in (None, "clip", "promise_in_bounds"):  # XLA's clamping
        np.testing.assert_array_equal(lax.gather(x, indices, dn, (1, 2), mode=mode),
                                      x[[0, 0, 2, 3], :2])


def test_scatter_clip_mode_clamps_and_default_drops():
    operand = np.zeros((4,), np.int32)
    indices = np.array([[-3], [7], [1]])
    updates = np.array([[1, 1], [2, 2], [4, 4]], np.int32)
    dn = SDN((1,), (), (0,))
    np.testing.assert_array_equal(lax.scatter_add(operand, indices, updates, dn, mode="clip"),
                                  [1, 5, 6, 2])
    for mode in (None, "drop", "fill", "promise_in_bounds"):
        np.testing.assert_array_equal(lax.scatter_add(operand, indices, updates, dn, mode=mode),
                                      [0, 4, 4, 0])


def test_mode_names_are_validated():
    with pytest.raises(ValueError, match="mode must be one of"):
        lax.gather(np.zeros(3), np.zeros((1, 1), np.int32), GDN((), (0,), (0,)), (1,),
                   mode="wrap")
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP


# --------------------------------------------------------------------------
# tracing and printing
# --------------------------------------------------------------------------

def test_gather_and_scatters_trace_and_print():
    x = np.zeros((4, 3), np.float32)
    i = np.array([[1], [3]], np.int32)
    u = np.ones((2, 3), np.float32)
    gdn, sdn = GDN((1,), (0,), (0,)), SDN((1,), (0,), (0,))

    def f(x, i, u):
        g = lax.gather(x, i, gdn, (1, 3))
        return (g, lax.scatter(x, i, u, sdn), lax.scatter_add(x, i, u, sdn),
                lax.scatter_mul(x, i, u, sdn), lax.scatter_min(x, i, u, sdn),
                lax.scatter_max(x, i, u, sdn),
                lax.scatter(x, i, u, sdn, update_computation=lambda a, b: lax.sub(a, b)))

    graph, results = run_traced(f, x, i, u)
    text = graph.as_text()
    for name in ("gather(", "scatter(", "scatter_add(", "scatter_mul(", "scatter_min(",
                 "scatter_max(", "offset_dims={1}", "update_window_dims={1}", "%scatter_update"):
        assert name in text, name
    np.testing.assert_array_equal(results[0], x[[1, 3]])
    np.testing.assert_array_equal(results[6][[1, 3]], -u)


def test_named_computations_become_named_scatters():
    """``update_computation=lax.add`` (or any add of (old, new)) is scatter_add."""
    x = np.zeros(3, np.int32)
    i = np.array([[0], [0]], np.int32)
    u = np.array([1, 2], np.int32)
    dn = SDN((), (0,), (0,))
    text = make_graph(lambda x, i, u: lax.scatter(x, i, u, dn, update_computation=lax.add)
                      )(x, i, u).as_text()
    assert "scatter_add(" in text and "scatter_update" not in text
    np.testing.assert_array_equal(lax.scatter(x, i, u, dn, update_computation=lax.max), [2, 0, 0])


def test_scatter_computation_may_close_over_traced_values():
    def f(x, i, u, k):
        return lax.scatter(x, i, u, SDN((), (0,), (0,)),
                           update_computation=lambda old, new: lax.add(old, lax.mul(new, k)))

    x, i = np.zeros(3, np.float32), np.array([[2], [2]], np.int32)
    u, k = np.array([1.0, 2.0], np.float32), np.float32(10.0)
    graph, (out,) = run_traced(f, x, i, u, k)
    np.testing.assert_array_equal(out, [0, 0, 30])


# --------------------------------------------------------------------------
# shape errors, raised when tracing
# --------------------------------------------------------------------------

X = np.zeros((3, 4, 2), np.float32)
IDX = np.zeros((2, 3, 2), np.int32)

GATHER_ERRORS = [
    (X, IDX, GDN((2, 3), (0,), (1, 0)), (1, 2, 2, 1), r"slice_sizes \(1, 2, 2, 1\) must have one "
                                                      r"entry per operand dimension"),
    (X, IDX, GDN((3, 2), (0,), (1, 0)), (1, 2, 2), r"offset_dims \(3, 2\) must be sorted"),
    (X, IDX, GDN((2, 4), (0,), (1, 0)), (1, 2, 2), r"offset_dims \(2, 4\): dimension 4 is out "
                                                   r"of range \[0, 4\)"),
    (X, IDX, GDN((2, 3), (0,), (1,)), (1, 2, 2), r"start_index_map \(1,\) must have one entry "
                                                 r"per index vector element"),
    (X, IDX, GDN((2, 3), (0,), (1, 1)), (1, 2, 2), r"start_index_map \(1, 1\) repeats"),
    (X, IDX, GDN((2, 3), (0,), (1, 0)), (2, 2, 2), r"dimension 0 is in collapsed_slice_dims and "
                                                   r"must have slice size <= 1"),
    (X, IDX, GDN((2, 3), (0,), (1, 0)), (1, 5, 2), r"size 5 of dimension 1 must be in \[0, 4\]"),
    (X, IDX, GDN((2,), (0,), (1, 0)), (1, 2, 2), r"must count the operand rank 3"),
    (X, IDX, GDN((2, 3), (0,), (1, 3)), (1, 2, 2), r"start_index_map \(1, 3\): dimension 3"),
    (X, IDX.astype(np.float32), GDN((2, 3), (0,), (1, 0)), (1, 2, 2),
     r"start_indices element type f32 is not allowed"),
    (X, np.zeros((2, 2, 2), np.int32), GDN((2, 3), (), (1, 0), (0,), (1,)), (1, 2, 2),
     r"batching dimension 0 of the operand \(size 3\) and dimension 1 of the indices \(size "
     r"2\) must have equal sizes"),
    (X, np.zeros((3, 2), np.int32), GDN((1, 2), (0,), (1, 0), (0,), (0,)), (1, 2, 2),
     r"collapsed_slice_dims \(0,\) and operand_batching_dims \(0,\) share"),
    (X, np.zeros((3, 1), np.int32), GDN((1, 2), (), (0,), (0,), (0,)), (1, 2, 2),
     r"start_index_map \(0,\) and operand_batching_dims \(0,\) share"),
    (X, np.zeros((3, 2), np.int32), GDN((1, 2), (), (1, 2), (0,), ()), (1, 2, 2),
     r"operand_batching_dims \(0,\) and start_indices_batching_dims \(\) must have the same "
     r"length"),
]


@pytest.mark.parametrize("operand,indices,dn,sizes,match", GATHER_ERRORS)
def test_gather_shape_errors(operand, indices, dn, sizes, match):
    with pytest.raises(ShapeError, match=r"^gather: .*" + match):
        make_graph(lambda o, i: lax.gather(o, i, dn, sizes))(operand, indices)


def test_gather_error_names_the_shapes_and_index_vector_dim():
    with pytest.raises(ShapeError, match=r"f32\[3,4,2\].*s32\[2,3,2\]"):
        make_graph(lambda o, i: lax.gather(o, i, GDN((3, 2), (0,), (1, 0)), (1, 2, 2)))(X, IDX)
    with pytest.raises(ShapeError, match=r"index_vector_dim 4 is out of range \[0, 3\]"):
        make_graph(lambda o, i: lax.gather(o, i, GDN((2, 3), (0,), (1, 0)), (1, 2, 2),
                                           index_vector_dim=4))(X, IDX)


UPD = np.zeros((2, 3, 2, 2), np.float32)
SCATTER_ERRORS = [
    (X, IDX, UPD, SDN((3, 2), (0,), (1, 0)), r"update_window_dims \(3, 2\) must be sorted"),
    (X, IDX, UPD, SDN((2, 3), (0, 0), (1, 0)), r"inserted_window_dims \(0, 0\) repeats"),
    (X, IDX, UPD, SDN((2, 3), (0,), (1,)), r"scatter_dims_to_operand_dims \(1,\) must have one "
                                           r"entry per index vector element"),
    (X, IDX, np.zeros((2, 3, 2, 3), np.float32), SDN((2, 3), (0,), (1, 0)),
     r"updates window dimension 3 has size 3, more than the operand's bound 2"),
    (X, IDX, np.zeros((2, 4, 2, 2), np.float32), SDN((2, 3), (0,), (1, 0)),
     r"updates scatter dimension 1 has size 4, scatter_indices give 3"),
    (X, IDX, np.zeros((2, 3, 2), np.float32), SDN((2,), (0,), (1, 0)),
     r"must count the operand rank 3"),
    (X, IDX, np.zeros((2, 3, 2, 2, 1), np.float32), SDN((2, 3), (0,), (1, 0)),
     r"updates must have rank 2 \(update_window_dims\) \+ 2"),
    (X, IDX, UPD.astype(np.float64), SDN((2, 3), (0,), (1, 0)),
     r"updates 0 has element type f64, its operand f32"),
    (X, np.zeros((3, 2), np.int32), np.zeros((3, 2, 2), np.float32),
     SDN((1, 2), (), (1, 2), (0,), (1,)), r"scatter_indices_batching_dims \(1,\): dimension 1 is "
                                          r"out of range \[0, 1\)"),
]


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_mul", "scatter_min",
                                  "scatter_max"])
@pytest.mark.parametrize("operand,indices,updates,dn,match", SCATTER_ERRORS)
def test_scatter_shape_errors(name, operand, indices, updates, dn, match):
    with pytest.raises(ShapeError, match=rf"^{name}: .*" + match):
        make_graph(lambda o, i, u: getattr(lax, name)(o, i, u, dn))(operand, indices, updates)


def test_scatter_computation_and_kind_errors():
    dn = SDN((), (0,), (0,))
    x, i, u = np.zeros(3, np.float32), np.zeros((2, 1), np.int32), np.zeros(2, np.float32)
    with pytest.raises(ShapeError, match=r"update_computation must return 1 scalar\(s\) of "
                                         r"type\(s\) f32"):
        make_graph(lambda x, i, u: lax.scatter(
            x, i, u, dn, update_computation=lambda a, b: lax.convert_element_type(a, np.int32))
        )(x, i, u)
    with pytest.raises(ShapeError, match=r"^scatter_max: operand element type c64"):
        make_graph(lambda x, i, u: lax.scatter_max(x, i, u, dn))(
            x.astype(np.complex64), i, u.astype(np.complex64))


# --------------------------------------------------------------------------
# the NumPy layer: advanced indexing, take, take_along_axis, .at
# --------------------------------------------------------------------------

A = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
NUMPY_INDICES = [
    0, -1, [0, 2], ([[0], [1]], [1, 2]), (slice(None), [0, 1], None, 0), ([0, 1], None, [0, 1]),
    (Ellipsis, [1, 3]), (slice(None, None, 2), [1, 2]), slice(1, None, -1), None,
    (Ellipsis, None), (slice(1, 3), slice(None, None, -2), [0, -1]), np.array([True, False, True]),
    A[:, :, 0] > 20, (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]),
    ([0, 1], slice(1, 4), 0), slice(5, 1), [], (np.array([], int), slice(None)), (1, 2, 3),
    (slice(None), [0, 1], Ellipsis, [0, 1]), (slice(None), [[0, 1]], 1), (2, slice(1, 3), None),
    (np.array([[-1, 0], [1, 2]]), slice(None, None, 3), np.array([4, -5])), (),
    (Ellipsis,), (slice(-2, None), slice(None, None, -1), slice(1, 4, 2)), True, False,
    (slice(None), True, [0, 1]), (True, slice(None), [0, 2]), (None, np.True_, 0),
]


@pytest.mark.parametrize("index", NUMPY_INDICES, ids=[repr(i)[:40] for i in NUMPY_INDICES])
def test_advanced_getitem_matches_numpy(index):
    got = advanced_getitem(A, index)
    want = A[index]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_advanced_getitem_random_mixed_indices_match_numpy():
    rng = np.random.default_rng(11)
    for _ in range(200):
        shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 5)))
        x = rng.integers(0, 100, shape)
        index = []
        for n in shape[:int(rng.integers(0, len(shape) + 1))]:
            kind = rng.integers(0, 5)
            if kind == 0:
                index.append(int(rng.integers(-n, n)))
            elif kind == 1:
                index.append(rng.integers(-n, n, size=rng.integers(1, 3, size=rng.integers(0, 3))))
            elif kind == 2:
                a, b = sorted(int(v) for v in rng.integers(-n - 1, n + 1, 2))
                index.append(slice(a, b, int(rng.choice([1, 2, -1, -2]))))
            elif kind == 3:
                index.append(slice(None))
            else:
                index.append(None)
                index.append(slice(None))
        try:
            want = x[tuple(index)]
        except IndexError:  # advanced shapes that do not broadcast
            with pytest.raises(IndexError):
                advanced_getitem(x, tuple(index))
            continue
        np.testing.assert_array_equal(advanced_getitem(x, tuple(index)), want)


def test_traced_integer_indices_wrap_negatives_and_clamp():
    i = np.array([[0, -1], [2, -4]], np.int64)
    graph, (out,) = run_traced(lambda x, i: advanced_getitem(x, (slice(None), i, 0)), A, i)
    assert "gather(" in graph.as_text()
    np.testing.assert_array_equal(out, A[:, i, 0])
    # traced out-of-bounds indices clamp (XLA), 'fill' reads the fill value
    far = np.array([7, -9], np.int32)
    _, (clamped,) = run_traced(lambda x, i: advanced_getitem(x, (1, i)), A, far)
    np.testing.assert_array_equal(clamped, A[1, [3, 0]])
    _, (filled,) = run_traced(lambda x, i: x.at[1, i].get(mode="fill", fill_value=-1.0), A, far)
    np.testing.assert_array_equal(filled, -np.ones((2, 5)))


def test_getitem_of_traced_values_delegates_array_indices_to_gather():
    i = np.array([2, 0], np.int32)
    graph, (out,) = run_traced(lambda x, i: x[i, :, [1, -1]], A, i)
    assert "gather(" in graph.as_text()
    np.testing.assert_array_equal(out, A[i, :, [1, -1]])


def test_several_traced_index_arrays():
    i, j = np.array([2, 0, 1], np.int32), np.array([[-1], [3]], np.int8)
    _, (out,) = run_traced(lambda x, i, j: advanced_getitem(x, (i, slice(1, None, 2), j)), A, i, j)
    np.testing.assert_array_equal(out, A[i, 1::2, j])


def test_indexing_errors_follow_numpy():
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        advanced_getitem(A, [0, 3])
    with pytest.raises(IndexError, match="too many indices"):
        advanced_getitem(A, (0, 0, 0, 0))
    with pytest.raises(IndexError, match="single ellipsis"):
        advanced_getitem(A, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="boolean index of shape"):
        advanced_getitem(A, np.array([True, False]))
    with pytest.raises(IndexError, match="could not be broadcast"):
        advanced_getitem(A, ([0, 1], [0, 1, 2]))
    with pytest.raises(IndexError, match="must be integers"):
        advanced_getitem(A, np.array([0.5]))
    with pytest.raises(IndexError, match="boolean mask index must be concrete"):
        make_graph(lambda x, m: advanced_getitem(x, m))(A, np.ones(3, bool))


def test_take_matches_numpy():
    idx = np.array([[0, -1], [2, 1]])
    for axis in (None, 0, 1, -1):
        np.testing.assert_array_equal(take(A, idx, axis=axis), np.take(A, idx, axis=axis))
    far = np.array([7, -9, 1])
    np.testing.assert_array_equal(take(A, far, axis=1, mode="clip"),
                                  np.take(A, far, axis=1, mode="clip"))
    np.testing.assert_array_equal(take(A, far, axis=1, mode="wrap"),
                                  np.take(A, far, axis=1, mode="wrap"))
    filled = take(A, far, axis=2, mode="fill", fill_value=0.5)
    np.testing.assert_array_equal(filled[..., 0], 0.5)
    np.testing.assert_array_equal(filled[..., 2], A[..., 1])
    with pytest.raises(IndexError):
        take(A, [5], axis=1)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_along_axis_matches_numpy(axis):
    rng = np.random.default_rng(5)
    if axis is None:
        idx = rng.integers(-A.size, A.size, 7)
    else:
        shape = list(A.shape)
        shape[axis] = 6
        shape[(axis + 1) % 3] = 1  # broadcasts against A
        idx = rng.integers(-A.shape[axis], A.shape[axis], shape)
    got = take_along_axis(A, idx, axis)
    np.testing.assert_array_equal(got, np.take_along_axis(A, idx, axis))
    if axis is not None:
        graph, (traced,) = run_traced(lambda a, i: take_along_axis(a, i, axis), A, idx)
        assert "operand_batching_dims={" in graph.as_text()
        np.testing.assert_array_equal(traced, np.take_along_axis(A, idx, axis))


def test_take_along_axis_modes():
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[5], [-6], [1]])
    np.testing.assert_array_equal(take_along_axis(x, idx, 1, mode="clip"),
                                  np.take_along_axis(x, np.clip(idx, 0, 3), 1))
    np.testing.assert_array_equal(take_along_axis(x, idx, 1, mode="wrap"),
                                  np.take_along_axis(x, idx % 4, 1))
    np.testing.assert_array_equal(take_along_axis(x, idx, 1, mode="fill", fill_value=-1.0),
                                  [[-1.0], [-1.0], [9.0]])
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 4"):
        take_along_axis(x, idx, 1)
    with pytest.raises(ValueError, match="mode must be one of"):
        take_along_axis(x, idx, 1, mode="bogus")
    with pytest.raises(ValueError, match="same number of dimensions"):
        take_along_axis(x, idx[:, 0], 1)


def test_argsort_style_take_along_axis():
    x = RNG.standard_normal((4, 6))
    order = np.argsort(x, axis=1)
    np.testing.assert_array_equal(take_along_axis(x, order, 1), np.sort(x, axis=1))


AT_INDICES = [1, (slice(1, 3),), ([0, 2, 0],), (slice(None), [1, 1, 3], 0),
              (np.array([[0], [2]]), slice(None, None, 2), [4, 0]), (Ellipsis, -1),
              (0, None, [1, 2]), (A[..., 0] > 30,)]


@pytest.mark.parametrize("index", AT_INDICES, ids=[repr(i)[:40] for i in AT_INDICES])
def test_at_updates_match_numpy(index):
    rng = np.random.default_rng(2)
    values = rng.integers(-5, 5, A[index].shape).astype(np.float32)

    def updates(x):
        r = x.at[index]
        return (r.get(), r.set(values), r.add(values), r.subtract(values), r.multiply(values),
                r.min(values), r.max(values), r.set(7.0))

    graph, results = run_traced(updates, A)
    got, setv, addv, subv, mulv, minv, maxv, scalar = results
    np.testing.assert_array_equal(got, A[index])
    want = A.copy()
    want[index] = values
    if not isinstance(index, tuple) or not any(isinstance(i, list) and len(set(i)) < len(i)
                                               for i in index):
        np.testing.assert_array_equal(setv, want)
    for ufunc, got_u in ((np.add, addv), (np.subtract, subv), (np.multiply, mulv),
                         (np.minimum, minv), (np.maximum, maxv)):
        want = A.copy()
        ufunc.at(want, index, values)
        np.testing.assert_array_equal(got_u, want, err_msg=ufunc.__name__)
    want = A.copy()
    want[index] = 7.0
    np.testing.assert_array_equal(scalar, want)


def test_at_set_with_repeated_indices_keeps_the_last_update():
    x = np.zeros(4, np.int32)
    _, (out,) = run_traced(lambda x: x.at[np.array([1, 3, 1])].set(np.array([5, 6, 7],
                                                                               np.int32)), x)
    np.testing.assert_array_equal(out, [0, 7, 0, 6])


def test_at_with_traced_indices_drops_out_of_bounds_updates():
    x = np.zeros(5, np.float32)
    i = np.array([1, -1, 9, -7], np.int32)
    graph, (out,) = run_traced(lambda x, i: x.at[i].add(1.0), x, i)
    assert "scatter_add(" in graph.as_text()
    np.testing.assert_array_equal(out, [0, 1, 0, 0, 1])
    _, (clipped,) = run_traced(lambda x, i: x.at[i].add(1.0, mode="clip"), x, i)
    np.testing.assert_array_equal(clipped, [1, 1, 0, 0, 2])
