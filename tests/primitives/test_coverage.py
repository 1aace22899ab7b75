"""Every operation of XLA's "Operation semantics" document is a primitive.

The document (shared/seeds/002, machine-translated) names each op's builder
function, ``XlaBuilder::<Name>``; element-wise ops are described in lists.
Those names are kept in ``tests/data/operation_semantics_builders.txt``, so
the coverage is checked without ../shared; where the seed is there, the list
is checked against it, so an op added to the document but not to numxla
fails here.
"""
from __future__ import annotations

import re
from pathlib import Path

from numxla import primitives
from ..shared_data import seeds_dir

BUILDERS = Path(__file__).parents[1] / "data" / "operation_semantics_builders.txt"

# XlaBuilder name in the document -> the numxla primitive(s) that implement it.
DOCUMENT_OPS = {
    "AfterAll": ["after_all"], "AllGather": ["all_gather"], "AllReduce": ["all_reduce"],
    "AllToAll": ["all_to_all"], "BatchNormGrad": ["batch_norm_grad"],
    "BatchNormInference": ["batch_norm_inference"],
    "BatchNormTraining": ["batch_norm_training"],
    "BitcastConvertType": ["bitcast_convert_type"], "Broadcast": ["broadcast"],
    "BroadcastInDim": ["broadcast_in_dim"], "Call": ["call"], "Cholesky": ["cholesky"],
    "Clamp": ["clamp"], "Collapse": ["collapse"], "CollectivePermute": ["collective_permute"],
    "CompositeCall": ["composite_call"], "ConcatInDim": ["concatenate"],
    "Conditional": ["conditional"], "Conv": ["conv_general_dilated"],
    "ConvWithGeneralPadding": ["conv_general_dilated"],
    "ConvertElementType": ["convert_element_type"], "CustomCall": ["custom_call"],
    "Dot": ["dot_general"], "DotGeneral": ["dot_general"], "DynamicSlice": ["dynamic_slice"],
    "DynamicUpdateSlice": ["dynamic_update_slice"], "Fft": ["fft"], "Gather": ["gather"],
    "GetDimensionSize": ["get_dimension_size"], "GetTupleElement": ["get_tuple_element"],
    "Infeed": ["infeed"], "Iota": ["iota"], "Map": ["map"], "Pad": ["pad"], "Recv": ["recv"],
    "Reduce": ["reduce"], "ReducePrecision": ["reduce_precision"],
    "ReduceScatter": ["reduce_scatter"], "ReduceWindow": ["reduce_window"],
    "ReplicaId": ["replica_id"], "Reshape": ["reshape"], "Rev": ["rev"],
    "RngNormal": ["rng_normal"], "RngUniform": ["rng_uniform"], "Scatter": ["scatter"],
    "Select": ["select"], "SelectAndScatter": ["select_and_scatter"], "Send": ["send"],
    "SetDimensionSize": ["set_dimension_size"], "Slice": ["slice"], "Sort": ["sort"],
    "TopK": ["top_k"], "TriangularSolve": ["triangular_solve"], "Tuple": ["tuple"],
    "While": ["while"],
    # the document's lists of element-wise ops (XlaBuilder::Add, XlaBuilder::Eq stand for them)
    "Add": ["add", "sub", "mul", "div", "pow", "rem", "max", "min", "atan2", "complex",
            "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical"],
    "Eq": ["compare"],
}

# Ops the document describes in sections without an XlaBuilder link (and
# Outfeed, which the issue names beside Infeed).
OTHER_SECTIONS = {
    "CrossReplicaSum": ["all_reduce"],  # XLA's builder emits an AllReduce with add
    "Outfeed": ["outfeed"], "OptimizationBarrier": ["optimization_barrier"],
    "RngBitGenerator": ["rng_bit_generator"], "Transpose": ["transpose"],
    "Element-wise unary functions": [
        "abs", "ceil", "cbrt", "clz", "cos", "erf", "exp", "expm1", "floor", "imag",
        "is_finite", "log", "log1p", "logistic", "neg", "not", "population_count", "real",
        "round", "rsqrt", "sign", "sin", "sqrt", "tan", "tanh"],
}


def _listed_builders() -> set[str]:
    return {line.strip() for line in BUILDERS.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def test_every_listed_builder_function_is_mapped():
    assert _listed_builders() == set(DOCUMENT_OPS), sorted(_listed_builders() ^ set(DOCUMENT_OPS))


def test_the_list_is_the_document_s():
    text = next(seeds_dir().glob("002_*.txt")).read_text()
    names = set(re.findall(r"XlaBuilder::([A-Za-z]+)", text))
    assert names == _listed_builders(), sorted(names ^ _listed_builders())
    for name in ("CrossReplicaSum", "OptimizationBarrier", "RngBitGenerator", "Transpose"):
        assert name in text, name


def test_every_document_op_is_a_primitive():
    registered = set(primitives.list_primitives())
    wanted = {p for ps in list(DOCUMENT_OPS.values()) + list(OTHER_SECTIONS.values())
              for p in ps}
    assert not wanted - registered, sorted(wanted - registered)


def test_every_primitive_has_a_shape_rule_and_reference_semantics():
    from numxla.tracer.core import PRIMITIVES, abstract_eval_rules, impl_rules
    missing = [n for n, p in PRIMITIVES.items()
               if p not in abstract_eval_rules or p not in impl_rules]
    assert not missing, missing
