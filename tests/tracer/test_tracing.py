"""The tracer core: pytrees, graphs, the printer, tracer errors."""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.tracer import (ConcretizationError, LeakedTracerError, ShapeDtypeStruct, make_graph,
                    parse_shape, pytree)
from numxla.tracer.core import ShapeError
from numxla.tracer.graph import Literal


# -- pytrees ---------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


@pytree.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="layer", metadata={"static": True})


def test_pytree_round_trip_of_every_container_kind():
    tree = {"a": (1, [2, None, 3]), "b": Point(4, {"z": 5, "y": 6}),
            "c": Params(w=7, b=8, name="dense")}
    leaves, treedef = pytree.flatten(tree)
    assert leaves == [1, 2, 3, 4, 6, 5, 7, 8]  # dict keys sorted, None has no leaves
    rebuilt = treedef.unflatten(leaves)
    assert rebuilt == tree
    assert rebuilt["c"].name == "dense"
    assert treedef.num_leaves == 8
    hash(treedef)


def test_treedef_equality_depends_on_structure_and_static_fields():
    _, a = pytree.flatten(Params(1, 2, "x"))
    _, b = pytree.flatten(Params(3, 4, "x"))
    _, c = pytree.flatten(Params(3, 4, "y"))
    assert a == b and a != c


def test_unflatten_with_wrong_leaf_count_raises():
    _, treedef = pytree.flatten((1, 2))
    with pytest.raises(ValueError, match="too few leaves"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match="left over"):
        treedef.unflatten([1, 2, 3])


def test_tree_map_and_leaf_paths():
    tree = {"w": [1, 2], "p": Point(3, 4)}
    assert pytree.tree_map(lambda a, b: a + b, tree, tree) == {"w": [2, 4], "p": Point(6, 8)}
    assert pytree.leaf_paths(tree, "params") == [
        "params['p'].x", "params['p'].y", "params['w'][0]", "params['w'][1]"]


# -- graphs and the printer ----------------------------------------------------------

def mlp(x, params):
    h = xnp.tanh(x @ params["w"] + params["b"])
    return {"out": h * 2, "total": h.sum()}


def test_make_graph_prints_shapes_layouts_and_argument_names():
    x = ShapeDtypeStruct((4, 3), np.float32)
    params = {"w": parse_shape("f32[3,5]{0,1}"), "b": np.zeros(5, np.float32)}
    graph = make_graph(mlp)(x, params)
    text = graph.as_text()
    assert "ENTRY %mlp (x: f32[4,3]{1,0}, params.b: f32[5]{0}, params.w: f32[3,5]{0,1})" in text
    assert "%params.w = f32[3,5]{0,1} parameter(2)  // params['w']" in text
    assert "dot_general(%x, %params.w), dimension_numbers={{{1},{0}},{{},{}}}" in text
    assert "= f32[4,5]{1,0} tanh(" in text
    assert "broadcast_in_dim(2.0:f32)" in text  # a weakly typed Python scalar
    assert "reduce_sum(%tanh" in text and "axes={0,1}" in text
    assert "// outputs: {'out': *, 'total': *}" in text
    assert [eq.primitive.name for eq in graph.equations] == [
        "dot_general", "broadcast_in_dim", "add", "tanh", "broadcast_in_dim", "mul",
        "reduce_sum"]
    assert graph.out_tree.unflatten([1, 2]) == {"out": 1, "total": 2}


def test_constants_are_captured_once():
    table = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x):
        return x * table + table

    graph = make_graph(f)(np.ones((2, 3), np.float32))
    assert len(graph.const_vars) == 1
    assert graph.const_values[0] is table
    assert "constant({0.0, 1.0, 2.0, 3.0, 4.0, 5.0})" in graph.as_text()


def test_scalars_become_literals_and_keep_weak_types():
    graph = make_graph(lambda x: x * 2 + 0.5)(np.ones(3, np.float16))
    assert all(str(v.aval.shape).startswith("f16") for eq in graph.equations for v in eq.outputs)
    literals = [a for eq in graph.equations for a in eq.inputs if isinstance(a, Literal)]
    assert [float(lit.value) for lit in literals] == [2.0, 0.5]


def test_eval_graph_agrees_with_eager_execution():
    from numxla.tracer import eval_graph
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    params = {"w": rng.standard_normal((3, 5)).astype(np.float32),
              "b": rng.standard_normal(5).astype(np.float32)}
    graph = make_graph(mlp)(x, params)
    flat, _ = pytree.flatten(((x, params), {}))
    out = graph.out_tree.unflatten(eval_graph(graph, *flat))
    expected_h = np.tanh(x @ params["w"] + params["b"])
    np.testing.assert_allclose(out["out"], expected_h * 2, rtol=1e-5)
    np.testing.assert_allclose(out["total"], expected_h.sum(), rtol=1e-5)


def test_static_arguments_are_python_values_while_tracing():
    def f(x, n, *, mode):
        for _ in range(n):
            x = x * 2 if mode == "double" else x + 1
        return x

    graph = make_graph(f, static_argnums=1, static_argnames="mode")(
        np.ones(2, np.float32), 3, mode="double")
    assert [eq.primitive.name for eq in graph.equations].count("mul") == 3


# -- errors ------------------------------------------------------------------------

def test_python_control_flow_on_a_traced_value_names_the_argument():
    def f(x, threshold):
        if (x.sum() > threshold):
            return x
        return -x

    with pytest.raises(ConcretizationError) as info:
        make_graph(f)(np.ones(3, np.float32), np.float32(1))
    message = str(info.value)
    assert "x" in message and "threshold" in message and "of f" in message
    assert "lax.cond" in message
    assert "bool()" in message


def test_asking_for_a_concrete_value_names_the_argument():
    with pytest.raises(ConcretizationError, match=r"the argument params\['lr'\] of lambda"):
        make_graph(lambda params: float(params["lr"]) * 2)({"lr": np.float32(0.1)})

    def g(data):
        return np.asarray(data["x"])
    with pytest.raises(ConcretizationError, match=r"np\.asarray\(\) needs a concrete value.*"
                                                  r"data\['x'\] of g"):
        make_graph(g)({"x": np.ones(2)})


def test_leaked_tracer_is_reported_when_used_later():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return x

    make_graph(f)(np.ones(2, np.float32))
    with pytest.raises(LeakedTracerError, match="escaped the traced function.*Return it"):
        lax.add(leaked[0], 1.0)
    with pytest.raises(LeakedTracerError, match="a value computed from x of f"):
        make_graph(lambda y: y + leaked[0])(np.ones(2, np.float32))


def test_shape_errors_name_the_op_the_shapes_and_the_parameter():
    with pytest.raises(ShapeError, match=r"add: operand dimensions must be equal.*"
                                         r"f32\[3\]\{0\}, f32\[4\]\{0\}"):
        make_graph(lambda a, b: lax.add(a, b))(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(ShapeError, match=r"transpose: permutation \(0, 0\) is not a permutation"):
        make_graph(lambda a: lax.transpose(a, (0, 0)))(np.ones((2, 2), np.float32))
    with pytest.raises(ShapeError, match=r"dot_general: contracting dimension sizes differ"):
        make_graph(lambda a, b: lax.dot(a, b))(np.ones((2, 3), np.float32),
                                               np.ones((4, 5), np.float32))
    with pytest.raises(ShapeError, match=r"reshape: new_sizes \(4,\) has 4 elements, the "
                                         r"operand 6"):
        make_graph(lambda a: lax.reshape(a, (4,)))(np.ones((2, 3), np.float32))
    with pytest.raises(ShapeError, match=r"broadcast_in_dim: operand dimension 0 of size 3 "
                                         r"cannot broadcast"):
        make_graph(lambda a: lax.broadcast_in_dim(a, (4, 2), (0,)))(np.ones(3, np.float32))
    with pytest.raises(ShapeError, match=r"reduce_sum: dimension 2 is out of range for rank 2"):
        make_graph(lambda a: lax.reduce_sum(a, (2,)))(np.ones((2, 3), np.float32))
    with pytest.raises(ShapeError, match=r"exp: operand element type s32 is not allowed"):
        lax.exp(np.ones(3, np.int32))
