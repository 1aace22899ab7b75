"""Derivatives (finite differences, order 2, both modes; NumPy formulas for
ties and zeros) and vmap (against stacked per-slice results) of the
reductions."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp, vjp, vmap
from tests.autodiff.util import check_vmap
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import bf16_to_f32

CASES = range(4)


def _case(seed, salt):
    """A random operand of rank 2..3 and a random non-empty set of its axes."""
    rng = np.random.default_rng(100 * salt + seed)
    shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(2, 4))))
    k = int(rng.integers(1, len(shape) + 1))
    axes = tuple(sorted(int(a) for a in rng.choice(len(shape), k, replace=False)))
    return rng, rng.standard_normal(shape), axes


# -- the shortcuts ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", CASES)
def test_reduce_sum_grads(seed):
    _, x, axes = _case(seed, 1)
    check_grads(lambda x: lax.reduce_sum(x, axes), (x,))


@pytest.mark.parametrize("seed", CASES)
def test_reduce_prod_grads(seed):
    _, x, axes = _case(seed, 2)
    check_grads(lambda x: lax.reduce_prod(x, axes), (x,))


@pytest.mark.parametrize("zeros", [1, 2])
def test_reduce_prod_with_zeros(zeros):
    x = np.array([[2.0, 0.0, 3.0, -1.5, 0.5], [1.5, 2.0, -1.0, 0.5, 4.0]])
    if zeros == 2:
        x[0, 3] = 0.0
    check_grads(lambda x: lax.reduce_prod(x, (1,)), (x,))
    # NumPy: d prod / d x_i = the product of the other elements
    others = np.array([[np.prod(np.delete(row, i)) for i in range(row.size)] for row in x])
    np.testing.assert_allclose(grad(lambda x: lax.reduce_sum(lax.reduce_prod(x, (1,)),
                                                             (0,)))(x), others)
    _, t = jvp(lambda x: lax.reduce_prod(x, (1,)), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, others.sum(1))


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("seed", CASES)
def test_reduce_max_min_grads(name, seed):
    _, x, axes = _case(seed, 3)
    op = getattr(lax, name)
    check_grads(lambda x: op(x, axes), (x,))


@pytest.mark.parametrize("name, pick", [("reduce_max", np.max), ("reduce_min", np.min)])
def test_reduce_max_min_split_ties_equally(name, pick):
    x = np.array([[1.0, 3.0, 3.0, -2.0], [-2.0, -2.0, 1.0, -2.0]])
    op = getattr(lax, name)
    ct = np.array([2.0, 6.0])
    tied = (x == pick(x, axis=1, keepdims=True))
    want = tied * (ct / tied.sum(1))[:, None]
    (got,) = vjp(lambda x: op(x, (1,)), x)[1](ct)
    np.testing.assert_allclose(got, want)
    t = np.arange(8.0).reshape(2, 4)
    _, t_out = jvp(lambda x: op(x, (1,)), (x,), (t,))
    np.testing.assert_allclose(t_out, (t * tied).sum(1) / tied.sum(1))


def test_reductions_over_empty_rows_have_zero_derivatives():
    x = np.zeros((0, 3))
    for op in (lax.reduce_sum, lax.reduce_prod, lax.reduce_max, lax.reduce_min):
        _, t = jvp(lambda x: op(x, (0,)), (x,), (x,))
        np.testing.assert_array_equal(t, np.zeros(3))
        (ct,) = vjp(lambda x: op(x, (0,)), x)[1](np.ones(3))
        assert ct.shape == (0, 3)


def test_non_differentiable_reductions_have_no_tangent():
    x = np.array([[0.5, 2.0, -1.0], [3.0, 1.0, 1.0]])
    for f in (lambda x: lax.argmax(x, 1), lambda x: lax.argmin(x, 0),
              lambda x: lax.reduce_or(lax.gt(x, 1.0), (1,)),
              lambda x: lax.reduce_and(lax.gt(x, 0.0), (0, 1)),
              lambda x: lax.reduce_xor(lax.convert_element_type(x, np.int32), (1,))):
        _, t = jvp(f, (x,), (np.ones_like(x),))
        assert t.dtype.names == ("float0",)
    # an index from argmax used to pick a differentiable value
    g = grad(lambda x: lax.reduce_sum(lax.mul(x, lax.convert_element_type(
        lax.broadcast_in_dim(lax.argmax(x, 1), (2, 3), (0,)), np.float64)), (0, 1)))(x)
    np.testing.assert_allclose(g, [[1, 1, 1], [0, 0, 0]])


# -- the general reduce ---------------------------------------------------------------------

MONOIDS = {"add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min}


@pytest.mark.parametrize("op", list(MONOIDS))
@pytest.mark.parametrize("seed", range(3))
def test_reduce_with_single_op_computation_grads(op, seed):
    _, x, axes = _case(seed, 4)
    init = np.float64(0.37)  # not the identity: the general reduce is bound

    def f(x, init):
        return lax.reduce(x, init, MONOIDS[op], axes)
    check_grads(f, (x, init))


def test_reduce_init_value_gradients():
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 4.0, 0.5]])
    g = grad(lambda i: lax.reduce_sum(lax.reduce(x, i, lax.add, (1,)), (0,)))(np.float64(0.5))
    assert float(g) == 2.0
    g = grad(lambda i: lax.reduce_sum(lax.reduce(x, i, lax.mul, (1,)), (0,)))(np.float64(0.5))
    np.testing.assert_allclose(g, np.prod(x, 1).sum())
    # max: the init wins the first row; it ties with 4.0 in the second
    g = grad(lambda x, i: lax.reduce_sum(lax.reduce(x, i, lax.max, (1,)), (0,)),
             argnums=(0, 1))(x, np.float64(4.0))
    np.testing.assert_allclose(g[0], [[0, 0, 0], [0, 0.5, 0]])
    np.testing.assert_allclose(g[1], 1.5)


def test_reduce_general_computation_is_not_differentiable():
    x = np.array([1.0, 2.0, 3.0])

    def polynomial(a, b):
        return lax.add(lax.mul(a, b), b)
    with pytest.raises(NotImplementedError, match="polynomial"):
        jvp(lambda x: lax.reduce(x, 0.0, polynomial, (0,)), (x,), (x,))
    with pytest.raises(NotImplementedError, match="polynomial"):
        grad(lambda x: lax.reduce(x, 0.0, polynomial, (0,)))(x)
    # variadic (an argmax) and closing over a value
    with pytest.raises(NotImplementedError, match="_argmax_computation"):
        grad(lambda x: lax.reduce((x, np.arange(3, dtype=np.int32)),
                                  (np.float64(-np.inf), np.int32(-1)),
                                  _argmax_computation, (0,))[0])(x)
    with pytest.raises(NotImplementedError, match="region"):
        grad(lambda x: lax.reduce(np.ones(3), 0.0, lambda a, b: lax.add(a, lax.mul(b, x)),
                                  (0,)))(np.float64(2.0))


# -- vmap -------------------------------------------------------------------------------------

SHORTCUTS = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]


@pytest.mark.parametrize("name", SHORTCUTS)
@pytest.mark.parametrize("ax", [0, 1, 2])
def test_vmap_shortcuts(name, ax):
    x = np.random.default_rng(ax).standard_normal((3, 3, 3))
    op = getattr(lax, name)
    for axes in ((0,), (1,), (0, 1)):
        check_vmap(lambda x: op(x, axes), (x,), ax)


@pytest.mark.parametrize("ax", [0, 1, 2])
def test_vmap_bitwise_and_arg_reductions(ax):
    rng = np.random.default_rng(10 + ax)
    b = rng.random((3, 3, 3)) < 0.5
    i = rng.integers(-8, 8, size=(3, 3, 3)).astype(np.int32)
    x = rng.standard_normal((3, 3, 3))
    for axes in ((0,), (1,), (0, 1)):
        check_vmap(lambda b: lax.reduce_and(b, axes), (b,), ax)
        check_vmap(lambda b: lax.reduce_or(b, axes), (b,), ax)
        check_vmap(lambda i: lax.reduce_xor(i, axes), (i,), ax)
    for axis in (0, 1):
        check_vmap(lambda x: lax.argmax(x, axis), (x,), ax)
        check_vmap(lambda x: lax.argmin(x, axis), (x,), ax)


def _argmax_computation(acc, x):
    (av, ai), (xv, xi) = acc, x
    take = lax.gt(xv, av)
    return lax.select(take, xv, av), lax.select(take, xi, ai)


@pytest.mark.parametrize("axes", [(0, 0), (1, 2), (2, None), (None, 1)])
def test_vmap_variadic_reduce(axes):
    rng = np.random.default_rng(20)
    shapes = {0: (3, 4, 3), 1: (4, 3, 3), 2: (4, 3, 3), None: (4, 3)}
    x = rng.standard_normal(shapes[axes[0]])
    ishape = {0: (3, 4, 3), 1: (4, 3, 3), 2: (4, 3, 3), None: (4, 3)}[axes[1]]
    idx = rng.integers(0, 10, size=ishape).astype(np.int32)

    def f(x, idx):
        return lax.reduce((x, idx), (np.float64(-np.inf), np.int32(-1)), _argmax_computation,
                          (1,))
    check_vmap(f, (x, idx), axes)


@pytest.mark.parametrize("axes", [(0, None), (1, 0), (None, 0), (2, 0)])
def test_vmap_reduce_general_with_batched_init(axes):
    rng = np.random.default_rng(21)
    shapes = {0: (3, 2, 4), 1: (2, 3, 4), 2: (2, 4, 3), None: (2, 4)}
    x = rng.standard_normal(shapes[axes[0]])
    init = rng.standard_normal(3) if axes[1] is not None else np.float64(0.5)

    def f(x, init):
        return lax.reduce(x, init, lambda a, b: lax.add(lax.mul(a, b), b), (1,))
    check_vmap(f, (x, init), axes)


@pytest.mark.parametrize("op", list(MONOIDS))
def test_vmap_of_grad_of_reduce(op):
    x = np.random.default_rng(22).standard_normal((4, 3, 2))
    inits = np.array([0.1, -0.2, 0.3])

    def g(x, i):
        return grad(lambda x, i: lax.reduce_sum(lax.reduce(x, i, MONOIDS[op], (0,)), (0,)),
                    argnums=(0, 1))(x, i)
    check_vmap(g, (x, inits), (1, 0))


def test_vmap_reduce_with_batched_captured_value():
    x = np.random.default_rng(23).standard_normal((3, 4))
    scales = np.array([1.0, 2.0, -1.0])

    def f(x, s):
        return lax.reduce(x, np.float64(0.0), lambda a, b: lax.add(a, lax.mul(b, s)), (0,))
    check_vmap(f, (x, scales), (0, 0))
    check_vmap(lambda x: f(x, np.float64(3.0)), (x,), 1)


def test_vmap_reduce_batch_stays_in_place():
    """Batched operands reduce the shifted dimensions: no loop in the graph."""
    from numxla.tracer import make_graph
    x = np.ones((2, 3, 4))
    graph = make_graph(vmap(lambda x: lax.reduce(x, 1.5, lax.add, (0,)), in_axes=1))(x)
    names = [eq.primitive.name for eq in graph.equations]
    assert names == ["reduce"], names


def test_jit_grad_of_prod_max_and_reduce():
    from numxla.compile import jit
    x = np.random.default_rng(24).standard_normal((3, 4))
    x[1, 2] = 0.0

    def f(x):
        y = lax.add(lax.reduce_prod(x, (1,)), lax.reduce_max(x, (1,)))
        return lax.reduce(y, np.float64(0.25), lax.mul, (0,))
    np.testing.assert_allclose(jit(grad(f))(x), grad(f)(x), rtol=1e-12)


@pytest.mark.parametrize("axes", [(0, 0, 0, None), (1, None, None, 0), (None, 2, 0, 0)])
def test_vmap_variadic_reduce_with_batched_inits(axes):
    rng = np.random.default_rng(25)
    shapes = {0: (3, 4, 2), 1: (4, 3, 2), 2: (4, 2, 3), None: (4, 2)}
    x = rng.standard_normal(shapes[axes[0]])
    idx = rng.integers(0, 10, size=shapes[axes[1]]).astype(np.int32)
    v0 = rng.standard_normal(3) if axes[2] is not None else np.float64(0.3)
    i0 = np.array([-1, 5, 7], np.int32) if axes[3] is not None else np.int32(-1)

    def f(x, idx, v0, i0):
        return lax.reduce((x, idx), (v0, i0), _argmax_computation, (0,))
    check_vmap(f, (x, idx, v0, i0), axes)


def test_vmap_reduce_batched_init_is_one_reduce():
    """A batched init value needs no loop: one reduce, its rows prefixed by
    the init values."""
    from numxla.tracer import make_graph
    x, inits = np.ones((4, 3)), np.arange(3.0)
    graph = make_graph(vmap(lambda x, i: lax.reduce(x, i, lambda a, b: lax.mul(a, b + a),
                                                    (0,)), in_axes=(1, 0)))(x, inits)
    names = [eq.primitive.name for eq in graph.equations]
    assert names.count("reduce") == 1 and "scan" not in names and "while" not in names, names



# -- bf16 ------------------------------------------------------------------------------------
# The rules' constants (ones, zeros, the pad of the product tree, the empty
# accumulator of batched init values) must be bf16 values, not uint16 words.

def _bf16(x):
    return bf16_array(np.asarray(x, np.float32))


def _f32(x):
    return bf16_to_f32(np.asarray(x))


BF16_REDUCTIONS = {
    "max": lambda v, init: lax.reduce_max(v, (0,)),
    "prod": lambda v, init: lax.reduce_prod(v, (0,)),
    "reduce_mul": lambda v, init: lax.reduce(v, init, lax.mul, (0,)),
}


@pytest.mark.parametrize("name", BF16_REDUCTIONS)
def test_bf16_derivatives_match_f32(name):
    f = BF16_REDUCTIONS[name]
    x, t, init = np.array([3.0, 3.0, 1.0], np.float32), np.array([1.0, -2.0, 0.5]), 2.0
    want_g = grad(f)(x, np.float32(init))
    want_t = jvp(lambda v: f(v, np.float32(init)), (x,), (t.astype(np.float32),))[1]
    got_g = grad(f)(_bf16(x), _bf16(init))
    got_t = jvp(lambda v: f(v, _bf16(init)), (_bf16(x),), (_bf16(t),))[1]
    np.testing.assert_array_equal(_f32(got_g), want_g)
    np.testing.assert_array_equal(_f32(got_t), want_t)


def test_bf16_vmap_with_batched_init_matches_f32():
    xs, inits = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1.0, 2.0], np.float32)
    f = vmap(lambda v, i: lax.reduce(v, i, lax.add, (0,)))
    np.testing.assert_array_equal(_f32(f(_bf16(xs), _bf16(inits))), f(xs, inits))
