"""The kernels' index expressions agree with the seeds' numbers and with
``tracer.shapes.linear_index_map`` for every kind of layout."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from numxla.compile.layout_index import linear_index_expr
from numxla.tracer.shapes import Layout, PrimitiveType, Shape, Tile, linear_index_map, parse_shape


def evaluate(shape: Shape) -> np.ndarray:
    """Evaluate the generated expression for every logical index at once."""
    names = [f"i{d}" for d in range(len(shape.dimensions))]
    expr = linear_index_expr(shape, names)
    grids = np.indices(shape.dimensions, dtype=np.int64) if shape.dimensions else []
    env = {n: g for n, g in zip(names, grids)}
    return np.broadcast_to(np.asarray(eval(expr, {}, env)), shape.dimensions)


def test_seed_examples():
    assert eval(linear_index_expr(parse_shape("f32[3,5]{1,0:T(2,2)}"), ["2", "3"])) == 17
    assert eval(linear_index_expr(parse_shape("f32[8,8]{1,0:T(2,4)(2,1,1,1)}"), ["6", "5"])) == 51
    np.testing.assert_array_equal(
        evaluate(parse_shape("f32[2,3]{0,1}")), [[0, 2, 4], [1, 3, 5]])
    np.testing.assert_array_equal(  # the padded [2x3] of the seed, minor_to_major [0,1]
        evaluate(parse_shape("f32[2,3]{0,1:PD(3,5)}")), [[0, 3, 6], [1, 4, 7]])
    np.testing.assert_array_equal(  # Figure 2: (2,4)(2,1) on a 4x8 array
        evaluate(parse_shape("bf16[4,8]{1,0:T(2,4)(2,1)}")).reshape(-1),
        [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
         16, 18, 20, 22, 24, 26, 28, 30, 17, 19, 21, 23, 25, 27, 29, 31])


def test_default_layout_is_plain_row_major_arithmetic():
    assert linear_index_expr(parse_shape("f32[4,5,6]"), ["a", "b", "c"]) == "c + b * 6 + a * 30"
    assert linear_index_expr(parse_shape("f32[4,5]{0,1}"), ["a", "b"]) == "a + b * 4"


@st.composite
def shapes(draw):
    rank = draw(st.integers(1, 4))
    dims = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    m2m = tuple(draw(st.permutations(range(rank))))
    padded = None
    if draw(st.booleans()):
        padded = tuple(d + draw(st.integers(0, 2)) for d in dims)
    tiles = []
    ntiles = draw(st.integers(0, 2))
    available = rank
    for _ in range(ntiles):
        k = draw(st.integers(1, available))
        sizes = [draw(st.integers(1, 4)) for _ in range(k)]
        if k > 1 and draw(st.booleans()):
            sizes[draw(st.integers(0, k - 2))] = -1  # '*' combines with the next dimension
        tiles.append(Tile(tuple(sizes)))
        stars = sizes.count(-1)
        available = max(available, k) + k - 2 * stars  # the rank of the tiled shape
    layout = Layout(m2m, tiles=tuple(tiles), padded_dimensions=padded)
    return Shape(PrimitiveType.F32, tuple(dims), layout)


@settings(max_examples=150, deadline=None)
@given(shapes())
def test_generated_expression_matches_linear_index_map(shape):
    np.testing.assert_array_equal(evaluate(shape), linear_index_map(shape))
