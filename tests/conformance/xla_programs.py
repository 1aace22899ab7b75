"""The named programs of the XLA-test cases (``op: program``), and the map
computations and conditional branches that cases name.

Each program is the XlaBuilder (or HLO text) computation of its test, written
with numxla's ops: a function of ``(params, *inputs)`` returning the results
in the case's ``expected`` order.  Constants the test builds itself (not its
parameters) are written here as constants.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import numxla.primitives as lax
from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .xla_cases import COMPARATORS, COMPUTATIONS, const, dot_dnums, element_type

PROGRAMS: dict[str, Callable[..., Any]] = {}


def program(fn):
    PROGRAMS[fn.__name__.lstrip("_")] = fn
    return fn


def _dims(x) -> tuple[int, ...]:
    return abstractify(x).dimensions


def _reduce_sum(x, dims):
    return lax.reduce(x, const(0, x), lax.add, dims)


# -- batch_normalization_test.cc -------------------------------------------------------

@program
def _bn_square_and_reduce(p, x, means):
    dev = lax.sub(x, means, broadcast_dimensions=[1])
    return _reduce_sum(lax.mul(dev, dev), [0, 2, 3])


@program
def _bn_spec_forward(p, x):
    """SpecComparisonForward: batch normalisation spelled out with epsilon 1e-9."""
    sums = _reduce_sum(x, [0, 2, 3])
    count = const(np.prod(_dims(x)) / np.prod(_dims(sums)), x)
    eps = const(1e-9, x)
    dev = lax.sub(x, lax.div(sums, count), broadcast_dimensions=[1])
    variance = lax.div(_reduce_sum(lax.mul(dev, dev), [0, 2, 3]), count)
    std = lax.sqrt(variance)
    gt_eps = lax.select(lax.gt(std, eps), std, const([1e-9, 1e-9], x))
    normalized = lax.mul(dev, lax.div(const(1, x), gt_eps), broadcast_dimensions=[1])
    return lax.add(lax.mul(normalized, const([1, 1], x), broadcast_dimensions=[1]),
                   const([0, 0], x), broadcast_dimensions=[1])


# -- reduce_test.cc ----------------------------------------------------------------

@program
def _eq_one_then_reduce(p, x):
    pred = lax.eq(x, const(1, x))
    return lax.reduce(pred, np.bool_(p["reducer"] == "and"), COMPUTATIONS[p["reducer"]], [0])


@program
def _log_reduce0(p, x):
    return _reduce_sum(lax.log(x), [0])


@program
def _log_transpose_reduce1(p, x):
    return _reduce_sum(lax.transpose(lax.log(x), [1, 0]), [1])


@program
def _transpose102_reduce0(p, x):
    return _reduce_sum(lax.transpose(x, [1, 0, 2]), [0])


@program
def _tanh_reshape_reduce0(p, x):
    d0, d1, d2 = _dims(x)
    return _reduce_sum(lax.reshape(lax.tanh(x), [d0, d1 * d2]), [0])


@program
def _broadcast_reduce(p, x, init):
    b = lax.broadcast(x, p["sizes"])
    return lax.reduce(b, init, COMPUTATIONS[p["computation"]], list(range(len(p["sizes"]))))


@program
def _abs_init_reduce_max(p, a, b):
    return lax.reduce(b, lax.abs(a), lax.max, [0])


# -- pad_test.cc, slice_test.cc, dynamic_ops_test.cc, scatter_test.cc ---------------------

@program
def _pad_pred_select(p, t, f):
    padded = lax.pad(lax.broadcast(t, [1, 1, 3, 2]), f, p["padding_config"])
    shape = _dims(padded)
    return lax.select(padded, lax.broadcast(np.int32(1), shape), lax.broadcast(np.int32(0), shape))


@program
def _reduce0_then_pad(p, x, init):
    return lax.pad(lax.reduce(x, init, lax.add, [0]), init, p["padding_config"])


@program
def _reshape_then_slice(p, x):
    return lax.slice(lax.reshape(x, p["new_sizes"]), p["start_indices"], p["limit_indices"])


@program
def _add_of_dus(p, i, u, j):
    """AddOfDUS (HLO): dus into a constant, added to itself, then dynamic-sliced."""
    dus = lax.dynamic_update_slice(np.arange(2, 8, dtype=np.int32), u, [i])
    return lax.dynamic_slice(lax.add(dus, dus), [j], [2])


@program
def _scatter_inverse_permutation(p, perm):
    """TensorFlowScatterV2_InversePermutation: out[i, perm[i, j]] = j."""
    rows, cols = _dims(perm)
    row = lax.broadcasted_iota(PT.S32, (rows, cols, 1), 0)
    indices = lax.concatenate([row, lax.reshape(perm, (rows, cols, 1))], 2)
    updates = lax.broadcasted_iota(PT.S32, (rows, cols), 1)
    dnums = lax.ScatterDimensionNumbers((), (0, 1), (0, 1))
    return lax.scatter(lax.broadcasted_iota(PT.S32, (rows, cols), 1), indices, updates, dnums,
                       index_vector_dim=2)


# -- array_elementwise_ops_test.cc -----------------------------------------------------

@program
def _add_many_values(p, a, b):
    """AddManyValues: a and b are both constants and parameters of the test."""
    total = lax.add(a, b)
    for _ in range(3):
        total = lax.add(total, lax.add(a, b))
    return total


@program
def _deeply_nested_add_with_slices(p, a, b):
    total = lax.add(a, b)
    for _ in range(_dims(a)[0] - 1):
        n = _dims(total)[0]
        total = lax.add(lax.slice(total, [0], [n - 1]), lax.slice(total, [1], [n]))
    return total


for _name, _fn in {
        "pow_of_exp": lambda a, b: lax.pow(lax.exp(a), b),
        "log_of_power": lambda a, b: lax.log(lax.pow(a, b)),
        "mul_of_exp": lambda a, b: lax.mul(lax.exp(a), lax.exp(b)),
        "div_of_exp": lambda a, b: lax.div(a, lax.exp(b)),
        "div3_lhs": lambda a, b, c: lax.div(lax.div(a, b), c),
        "div3_rhs": lambda a, b, c: lax.div(a, lax.div(b, c)),
        "div_of_power": lambda a, b, c: lax.div(a, lax.pow(b, c)),
        "div4": lambda a, b, c, d: lax.div(lax.div(a, b), lax.div(c, d)),
        "add_chain_fold_left": lambda a, b, c: lax.add(lax.add(a, b), c),
        "add_chain_fold_right": lambda a, b, c: lax.add(a, lax.add(b, c)),
        "add_with_neg": lambda a, b: lax.add(lax.neg(a), lax.neg(b)),
        "add_chain_two_side": lambda a, b, c, d: lax.add(lax.add(a, b), lax.add(c, d)),
        "slice_minus": lambda x, y: lax.sub(lax.slice(x, [1], [2]), y),
        "concat_left_assoc": lambda a, b, c: lax.concatenate([lax.concatenate([a, b], 0), c], 0),
        "concat_right_assoc": lambda a, b, c: lax.concatenate([a, lax.concatenate([b, c], 0)], 0),
        "select_max_by_gt": lambda a, b: lax.select(lax.gt(a, b), a, b),
        "sort_twice": lambda x, y: (lax.sort(x, 0, False, comparator=COMPARATORS["lt"]),
                                    lax.sort(y, 1, False, comparator=COMPARATORS["lt"])),
        "exp_then_dot": lambda a, b: lax.dot(lax.exp(a), b),
        "concurrent_matmult": lambda a, b: lax.add(lax.dot(a, b), lax.dot(b, a)),
}.items():
    PROGRAMS[_name] = lambda p, *xs, fn=_fn: fn(*xs)


@program
def _clamp_scalar_vector(p, min_s, min_v, arg, max_s, max_v):
    return lax.add(lax.add(lax.clamp(min_v, arg, max_s), lax.clamp(min_s, arg, max_v)),
                   lax.add(lax.clamp(min_s, arg, max_s), lax.clamp(min_v, arg, max_v)))


@program
def _compare_1d_2d_eq_both(p, v, m):
    return lax.eq(v, m, broadcast_dimensions=[1]), lax.eq(v, m, broadcast_dimensions=[0])


# -- concat_test.cc, transpose_test.cc -------------------------------------------------

@program
def _concat_deeply_nested(p, a):
    for _ in range(17):
        a = lax.concatenate([a, a], 0)
    return a


@program
def _concat_operands_of_same_operand(p, x, y):
    mul = lax.mul(x, y)
    return lax.concatenate([lax.add(mul, const(c, x)) for c in ([1, 2], [3, 4], [5, 6])], 0)


@program
def _concat_broadcast_argument(p, x, y, z):
    return lax.concatenate([lax.concatenate([lax.broadcast(y, [5]), x], 0),
                            lax.broadcast(z, [3])], 0)


@program
def _concat_broadcast_argument_r3(p, x, y, z):
    d0, d1, d2 = _dims(x)
    first = lax.concatenate([lax.broadcast(y, [1, d1, d2]), x], 0)
    return lax.concatenate([first, lax.broadcast(z, [d0 + 1, 1, d2])], 1)


@program
def _multi_transpose(p, x):
    for _ in range(p["count"]):
        x = lax.transpose(x, [1, 0])
    return x


# -- select_test.cc, convert_test.cc, bitcast_convert_test.cc, iota_test.cc ---------------

@program
def _select_cmp(p, v1, v2, on_true, on_false):
    return lax.select(getattr(lax, p["cmp"])(v1, v2), on_true, on_false)


@program
def _reshape_scalar_then(p, x):
    then = {"convert_f32": lax.convert_element_type, "bitcast_f32": lax.bitcast_convert_type}
    return then[p["then"]](lax.reshape(x, []), PT.F32)


@program
def _roundtrip_through(p, x):
    t = abstractify(x).element_type
    return lax.convert_element_type(lax.convert_element_type(x, element_type(p["through"])), t)


@program
def _iota_reshape(p):
    return lax.reshape(lax.broadcasted_iota(PT.S32, p["shape"], p["dimension"]), p["new_sizes"])


# -- map_test.cc ----------------------------------------------------------------------

MAP_COMPUTATIONS: dict[str, Callable[..., Any]] = {
    "add_one": lambda x: lax.add(x, const(1, x)),
    "add": lax.add, "pow": lax.pow, "gt": lax.gt,
    "ternary_add": lambda a, b, c: lax.add(lax.add(a, b), c),
    "one_s32": lambda x: np.int32(1), "one_u32": lambda x: np.uint32(1),
    "add_one_times_itself": lambda x: lax.mul(lax.add(x, const(1, x)), x),
    "max_with_square": lambda x: lax.max(x, lax.mul(x, x)),
    "add_mixed": lambda a, b: lax.add(a, lax.convert_element_type(b, PT.F32)),
    "sub_opposite": lambda a, b: lax.sub(b, a),
    "square": lambda x: lax.mul(x, x),
    "convert_s32": lambda x: lax.convert_element_type(x, PT.S32),
    "convert_f32": lambda x: lax.convert_element_type(x, PT.F32),
    "bitcast_s32": lambda x: lax.bitcast_convert_type(x, PT.S32),
    "bitcast_f32": lambda x: lax.bitcast_convert_type(x, PT.F32),
}


@program
def _map_add_one_mul_two(p, x):
    plus_one = lax.map([x], MAP_COMPUTATIONS["add_one"])
    return lax.map([plus_one], lambda v: lax.mul(v, const(2, v)))


def _embed(n: int):
    """map_test ComplexNestedMaps' embedded computations (each maps the previous)."""
    def add(c):
        return lambda v: lax.add(v, const(c, v))

    def nested(fn, c):
        return lambda v: lax.add(lax.map([v], fn, []), const(c, v))
    e1 = add(1)
    e2, e3 = nested(e1, 2), nested(e1, 4)
    e4 = lambda v: lax.add(lax.map([v], e2, []), lax.map([v], e3, []))
    return {4: e4, 5: nested(e2, 6)}[n]


@program
def _complex_nested_maps(p, a, b):
    return lax.add(lax.map([a], _embed(5), []), lax.map([b], _embed(4), []))


# -- dot_operation_test.cc ------------------------------------------------------------

@program
def _dot_general_relu(p, a, b):
    out = lax.dot_general(a, b, dot_dnums(p["dimension_numbers"]))
    return lax.max(out, const(0, out))


@program
def _transpose_dot(p, lhs, rhs):
    if p["transpose_lhs"]:
        lhs = lax.transpose(lhs, [1, 0])
    if p["transpose_rhs"]:
        rhs = lax.transpose(rhs, [1, 0])
    return lax.dot(lhs, rhs)


@program
def _dot_of_concat_const_lhs(p, a, b, c):
    lhs = const([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]], a)
    return lax.dot(lhs, lax.concatenate([a, b, c], 0))


@program
def _dot_of_concat_const_rhs(p, a, b, c):
    rhs = const([[1, 2], [3, 4], [5, 6], [6, 5], [4, 3], [2, 1]], a)
    return lax.dot(lax.concatenate([a, b, c], 1), rhs)


@program
def _batch_matmul_by_slices(p, x, y):
    x_flat, y_flat = lax.reshape(x, [4, 2, 2]), lax.reshape(y, [4, 2, 2])
    outs = []
    for i in range(4):
        xs = lax.reshape(lax.slice(x_flat, [i, 0, 0], [i + 1, 2, 2]), [2, 2])
        ys = lax.reshape(lax.slice(y_flat, [i, 0, 0], [i + 1, 2, 2]), [2, 2])
        outs.append(lax.reshape(lax.dot(xs, ys), [1, 2, 2]))
    return lax.reshape(lax.concatenate(outs, 0), [2, 2, 2, 2])


@program
def _dot_of_dynamic_slice(p, lhs, rhs, s0, s1):
    if p["which"] == "lhs":
        lhs = lax.dynamic_slice(lhs, [s0, s1], p["sizes"])
    else:
        rhs = lax.dynamic_slice(rhs, [s0, s1], p["sizes"])
    return lax.dot_general(lhs, rhs, dot_dnums(p["dimension_numbers"]))


# -- conditional_test.cc, while_test.cc ------------------------------------------------

BRANCHES: dict[str, Callable[..., Any]] = {
    "identity": lambda ops: ops[0], "ceil": lambda ops: lax.ceil(ops[0]),
    "floor": lambda ops: lax.floor(ops[0]),
    "tuple_add": lambda ops: lax.add(ops[0], ops[1]),
    "tuple_sub": lambda ops: lax.sub(ops[0], ops[1]),
}
for _k in range(0, 60, 2):
    BRANCHES[f"const:{_k}"] = lambda ops, k=_k: np.float32(k)
for _k in range(3):
    BRANCHES[f"add_const:{_k}"] = lambda ops, k=_k: lax.add(ops[0], np.float32(k))


@program
def _conditional_with_call(p, pred, a, b):
    def inner(pred, a, b):
        return lax.conditional(pred, [lambda x: lax.ceil(x), lambda x: lax.floor(x)], [a, b])
    return lax.call(inner, pred, a, b)


@program
def _while_count_to(p, init):
    limit = const(p["limit"], init)
    return lax.while_loop(lambda i: lax.lt(i, limit), lambda i: lax.add(i, const(1, i)), init)


@program
def _while_count_from_reduce(p, x):
    return _while_count_to(p, _reduce_sum(x, [0]))


@program
def _while_predicate(p, a, b):
    return lax.while_loop(lambda v: lax.ne(b, v), lambda v: lax.bitwise_or(v, b), lax.ne(a, b))


@program
def _while_vector_sum(p, x):
    step = const(np.full(_dims(x), 0.125), x)
    return lax.while_loop(lambda v: lax.gt(const(15.5, v), _reduce_sum(v, [0])),
                          lambda v: lax.add(step, v), x)


@program
def _while_permutation(p, i, w1, w2, w3):
    n = const(p["n"], i)
    out = lax.while_loop(lambda c: lax.gt(n, c[0]),
                         lambda c: (lax.add(c[0], const(1, c[0])), c[3], c[1], c[2]),
                         (i, w1, w2, w3))
    return lax.add(lax.add(out[1], out[2]), out[3]) if p["sum_result"] else out


# -- triangular_solve_test.cc, cholesky_test.cc ----------------------------------------

@program
def _batched_left_upper(p, a, b):
    x = lax.triangular_solve(a, b, left_side=True, lower=False, unit_diagonal=False,
                             transpose_a="NO_TRANSPOSE")
    return lax.dot_general(a, x, (((2,), (1,)), ((0,), (0,))))


def _batch_dot_t(a, b, transpose_a: bool):
    """BatchDot(a, b^T) or BatchDot(a^T, b) over the leading dimension."""
    contract = ((1,), (1,)) if transpose_a else ((2,), (2,))
    return lax.dot_general(a, b, (contract, ((0,), (0,))),
                           precision=lax.Precision.HIGHEST)


@program
def _cholesky_residual(p, x):
    """RandomCholeskyTest: sum((x x^T - L L^T)^2) for a random x."""
    matrix = _batch_dot_t(x, x, False)
    chol = lax.cholesky(matrix, lower=p["lower"])
    verification = _batch_dot_t(chol, chol, not p["lower"])
    delta = lax.sub(matrix, verification)
    return _reduce_sum(lax.mul(delta, delta), [0, 1, 2])
