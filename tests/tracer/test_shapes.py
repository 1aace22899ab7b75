"""Tests for tracer/shapes.py: XLA shapes, layouts, tiling and shape text.

Worked examples come from XLA's "Shapes and Layout" and "Tiled layout" docs;
test vectors from shared/conformance/layout_cases.json.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from numxla.tracer.shapes import (
    COMBINE, Layout, PrimitiveType as PT, Shape, Tile, bf16_from_f32, bf16_to_f32,
    byte_size, byte_strides, from_physical, linear_index, linear_index_map,
    make_shape, multi_index, parse_layout, parse_shape, to_physical,
)

from ..shared_data import conformance_file

CASES = json.loads(conformance_file("layout_cases.json").read_text())
FACTS = {}
for _fact in CASES["size_and_layout_facts"]:
    FACTS.setdefault(_fact["fact"], []).append(_fact)


def tiles_of(case):
    return tuple(tuple(t) for t in case.get("tiles", ()))


def shape_of(case, element_type="f32"):
    return make_shape(case.get("element_type", element_type), case["shape"], case["minor_to_major"],
                      tiles=tiles_of(case), padded_dimensions=case.get("padded_dimensions"),
                      padding_value=case.get("padding_value"))


def letter_buffer(shape, letters):
    """Lay out letters (row-major logical order) as XLA would: padding shows as '0'."""
    codes = np.array([ord(c) for c in letters], dtype=np.int32).reshape(shape.dimensions)
    return [chr(c) if c else "0" for c in to_physical(codes, shape).tolist()]


# --------------------------------------------------------------------------
# Seed worked examples (docs/shapes.md, docs/tiled_layout.md)
# --------------------------------------------------------------------------

def test_seed_minor_to_major_examples():
    letters = "abcdef"  # the [2 x 3] array  a b c / d e f
    assert letter_buffer(make_shape("s32", (2, 3), (0, 1)), letters) == list("adbecf")
    assert letter_buffer(make_shape("s32", (2, 3), (1, 0)), letters) == list("abcdef")
    assert letter_buffer(make_shape("s32", (2, 3)), letters) == list("abcdef")  # default: dim 0 major


def test_seed_padded_dimensions_example():
    for padding_value in (0, None):
        s = make_shape("s32", (2, 3), (0, 1), padded_dimensions=(3, 5), padding_value=padding_value)
        assert s.physical_size == 15
        assert letter_buffer(s, "abcdef") == "a d 0 b e 0 c f 0 0 0 0 0 0 0".split()
    # "equivalent to the 3x5 array a b c 0 0 / d e f 0 0 / 0 0 0 0 0" with the same layout
    s = make_shape("s32", (2, 3), (0, 1), padded_dimensions=(3, 5))
    same = make_shape("s32", (3, 5), (0, 1))
    big = np.zeros((3, 5), np.int32)
    big[:2, :3] = np.arange(1, 7).reshape(2, 3)
    np.testing.assert_array_equal(to_physical(big, same), to_physical(np.arange(1, 7).reshape(2, 3), s))


def test_seed_tiled_figure_1():
    s = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert linear_index(s, (2, 3)) == 17
    assert s.physical_size == 24  # ceil(3/2) * ceil(5/2) * 2 * 2
    np.testing.assert_array_equal(linear_index_map(s), [[0, 1, 4, 5, 8],
                                                        [2, 3, 6, 7, 10],
                                                        [12, 13, 16, 17, 20]])


def test_seed_tiled_figure_2_repeated_tiling():
    s = parse_shape("bf16[4,8]{1,0:T(2,4)(2,1)}")
    # within each 2x4 tile, rows 2k and 2k+1 of a column are adjacent (BF16 packing)
    np.testing.assert_array_equal(linear_index_map(s), [
        [0, 2, 4, 6, 8, 10, 12, 14],
        [1, 3, 5, 7, 9, 11, 13, 15],
        [16, 18, 20, 22, 24, 26, 28, 30],
        [17, 19, 21, 23, 25, 27, 29, 31]])


def test_seed_repeated_tiling_example_51():
    s = make_shape("f32", (8, 8), tiles=((2, 4), (2, 1, 1, 1)))
    assert linear_index(s, (6, 5)) == 51
    assert multi_index(s, 51) == (6, 5)


def test_seed_combined_dimensions_equal_merged_shape():
    s = parse_shape("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    merged = parse_shape("f32[112,110]{1,0:T(2,3)}")
    assert s.physical_size == merged.physical_size
    np.testing.assert_array_equal(linear_index_map(s).reshape(112, 110), linear_index_map(merged))
    assert Tile((COMBINE, 2)) == Tile(("*", 2))


def test_padding_then_tiling():
    # padded sizes are the bounds tiling sees: 5 -> ceil(5/4) * 4 = 8 slots
    s = make_shape("f32", (3,), tiles=((4,),), padded_dimensions=(5,))
    assert s.physical_size == 8
    assert [linear_index(s, (i,)) for i in range(3)] == [0, 1, 2]


# --------------------------------------------------------------------------
# Conformance vectors (shared/conformance/layout_cases.json)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES["index_cases"],
                         ids=lambda c: f"{c['shape']}{c['minor_to_major']}{c['index']}")
def test_index_cases(case):
    s = shape_of(case)
    assert linear_index(s, case["index"]) == case["linear_index"]
    assert multi_index(s, case["linear_index"]) == tuple(case["index"])


@pytest.mark.parametrize("case", CASES["buffers"],
                         ids=lambda c: c.get("text", str(c["minor_to_major"])))
def test_buffers(case):
    if "logical_values_row_major" in case:
        s = shape_of(case, "s32")
        assert letter_buffer(s, case["logical_values_row_major"]) == case["buffer"]
    if "linear_index_of_each_element_row_major" in case:
        s = shape_of(case)
        assert linear_index_map(s).ravel().tolist() == case["linear_index_of_each_element_row_major"]
    if "buffer_elements" in case:
        assert shape_of(case).physical_size == case["buffer_elements"]
    if "text" in case:
        s = parse_shape(case["text"])
        assert (s.dimensions, s.layout) == (tuple(case["shape"]), shape_of(case).layout)
    if "equivalent_to" in case:
        s, eq = shape_of(case), shape_of(case["equivalent_to"])
        np.testing.assert_array_equal(linear_index_map(s).reshape(eq.dimensions), linear_index_map(eq))


@pytest.mark.parametrize("case", CASES["shape_strings"], ids=lambda c: c["text"])
def test_shape_strings(case):
    s = parse_shape(case["text"])
    assert s.element_type is PT.from_name(case["element_type"])
    assert s.dimensions == tuple(case["dims"])
    assert s.layout.minor_to_major == tuple(case["minor_to_major"])
    assert s.layout.tiles == tuple(Tile(t) for t in case.get("tiles", ()))
    assert s.layout.element_size_in_bits == case.get("element_size_in_bits", 0)
    assert s.layout.memory_space == case.get("memory_space", 0)
    if "buffer_elements" in case:
        assert s.physical_size == case["buffer_elements"]
    assert str(s) == case["text"]
    assert parse_shape(str(s)) == s


_UNSUPPORTED_LAYOUT_KEYS = {"dim_level_types", "index_primitive_type", "pointer_primitive_type",
                            "split_configs", "physical_shape", "dynamic_shape_metadata_prefix_bytes"}


@pytest.mark.parametrize("case", CASES["layout_strings"], ids=lambda c: c["text"])
def test_layout_strings(case):
    text = case["text"]
    if case.get("kind") == "Tile ToString":
        assert str(Tile(case["tile"])) == text
    elif "kind" in case:  # an invalid tile (-2) and the 2018 "invalid{}" spelling
        with pytest.raises(ValueError):
            parse_layout(text)
    elif _UNSUPPORTED_LAYOUT_KEYS & case.keys():
        with pytest.raises(ValueError, match="unsupported layout attribute"):
            parse_layout(text)
    else:
        layout = parse_layout(text)
        assert layout == Layout(
            case["minor_to_major"], tiles=tiles_of(case),
            element_size_in_bits=case.get("element_size_in_bits", 0),
            memory_space=case.get("memory_space", 0),
            tail_padding_alignment_in_elements=case.get("tail_padding_alignment_in_elements", 0))
        assert str(layout) == text


def test_negative_tile_sizes_other_than_combine_are_invalid():
    with pytest.raises(ValueError, match="tile dimension -2 must be >= 1 or"):
        Tile((-2, 55))
    with pytest.raises(ValueError, match="tile dimension -2"):
        parse_layout("{1,0:T(-2,55)E(42)}")


def test_linear_to_multi_round_trip():
    case = CASES["linear_to_multi_round_trip"]
    for m2m in case["minor_to_major_orders"]:
        s = make_shape("f32", case["shape"], m2m)
        assert s.size == 1440000000
        for linear in case["linear_indexes"]:
            assert linear_index(s, multi_index(s, linear)) == linear


def test_fact_byte_strides_and_sizes():
    for f in FACTS["ByteStrides"]:
        s = make_shape(f["element_type"], f["shape"], f["minor_to_major"])
        assert byte_strides(s) == tuple(f["byte_strides"])
    for f in FACTS["ByteSizeOf"]:
        assert byte_size(make_shape(f["element_type"], f["shape"])) == f["bytes"]


def test_fact_array_size_with_element_size_in_bits():
    # We have no s4 type; XLA gives s4 arrays E(4), so s8 with E(4) is the same computation.
    (plain,) = FACTS["ArraySize (int4, element_size_in_bits=4)"]
    assert byte_size(make_shape("s8", plain["shape"], element_size_in_bits=4)) == plain["bytes"]
    (tiled,) = FACTS["ArraySize (int4, tiles (64,128)(8,1), element_size_in_bits=4)"]
    s = make_shape("s8", tiled["shape"], tiles=tiles_of(tiled), element_size_in_bits=4)
    assert byte_size(s) == tiled["bytes"]
    (empty,) = FACTS["ArraySize is 0 if any dim is 0"]
    for dims in empty["shapes"]:
        for tiles in ((), ((64, 128), (8, 1))):
            assert byte_size(make_shape("s8", dims, tiles=tiles, element_size_in_bits=4)) == empty["bytes"]


def test_fact_elements_in():
    for dims, count in FACTS["ElementsIn"][0]["cases"]:
        assert make_shape("f32", dims).size == count


def test_fact_byte_strides_is_major_to_minor():
    (f,) = FACTS["ByteStridesIsMajorToMinor"]
    default = byte_strides(make_shape(f["element_type"], f["shape"]))
    for strides, expected in f["cases"]:
        assert (tuple(strides) == default) is expected


def test_fact_descending_and_ascending_layouts():
    cases = FACTS["MakeDescendingLayout / MakeAscendingLayout"][0]["cases"]
    for name, m2m in cases.items():
        kind, rank = name.split("_")
        if kind == "descending":
            assert Layout.default(int(rank)).minor_to_major == tuple(m2m)
        else:
            s = make_shape("f32", [2] * int(rank), m2m)
            assert s.layout.minor_to_major == tuple(m2m) == tuple(range(int(rank)))
            assert str(s.layout) == "{" + ",".join(map(str, m2m)) + "}"


def _numbered(shape):
    return np.arange(shape.size, dtype=np.float32).reshape(shape.dimensions)


def test_fact_transposes_and_reorders_that_are_bitcasts():
    # A transpose is a bitcast when the buffers coincide.
    for a, b, perm, expected in FACTS["TransposeIsBitcast / DeduceTransposeDimensionsForBitcast"][0]["cases"]:
        sa, sb = parse_shape(a), parse_shape(b)
        x = _numbered(sa)
        same = np.array_equal(to_physical(x, sa), to_physical(x.transpose(perm or [1, 0]), sb))
        assert same is expected
    (f,) = FACTS["ReorderLogicalDimensions"]
    sa, sb = parse_shape(f["input"]), parse_shape(f["output"])
    x = _numbered(sa)
    np.testing.assert_array_equal(to_physical(x, sa), to_physical(x.transpose(f["permutation"]), sb))
    (f,) = FACTS["MakeShapeWithDescendingLayoutAndSamePhysicalLayout"]
    sa, sb = parse_shape(f["input"]), parse_shape(f["output"])
    x = _numbered(sa)
    major_to_minor = list(reversed(sa.layout.minor_to_major))
    np.testing.assert_array_equal(to_physical(x, sa), to_physical(x.transpose(major_to_minor), sb))


def test_fact_reshape_is_bitcast():
    for a, b, expected in FACTS["ReshapeIsBitcast"][0]["cases"]:
        sa, sb = parse_shape(a), parse_shape(b)
        x = _numbered(sa)
        same = np.array_equal(to_physical(x, sa), to_physical(x.reshape(sb.dimensions), sb))
        assert same is expected


def test_fact_prepend_major_and_append_minor_dimension():
    for a, n, b in FACTS["PrependMajorDimension"][0]["cases"]:
        sa, sb = parse_shape(a), parse_shape(b)
        y = np.arange(math.prod(sb.dimensions), dtype=np.float32).reshape(sb.dimensions)
        stacked = np.concatenate([to_physical(y[k], sa) for k in range(n)])
        np.testing.assert_array_equal(to_physical(y, sb), stacked)
    for a, n, b in FACTS["AppendMinorDimension"][0]["cases"]:
        sa, sb = parse_shape(a), parse_shape(b)
        y = np.arange(math.prod(sb.dimensions), dtype=np.float32).reshape(sb.dimensions)
        buf = to_physical(y, sb).reshape(-1, n)
        for k in range(n):
            np.testing.assert_array_equal(buf[:, k], to_physical(y[..., k], sa))


def test_fact_delete_dimensions_keeps_relative_physical_order():
    for a, deleted, b in FACTS["DeleteDimensions"][0]["cases"]:
        sa, sb = parse_shape(a), parse_shape(b)
        x = _numbered(sa)
        part = tuple(0 if d in deleted else slice(None) for d in range(sa.rank))
        in_buffer_order = x[part].ravel()[np.argsort(linear_index_map(sa)[part].ravel())]
        np.testing.assert_array_equal(in_buffer_order, to_physical(x[part], sb))


# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

def test_primitive_type_properties():
    assert [t.short_name for t in PT] == ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                                          "f16", "bf16", "f32", "f64", "c64", "c128", "tuple", "token"]
    assert PT.BF16.numpy_dtype == np.uint16 and PT.F32.numpy_dtype == np.float32
    assert PT.TUPLE.numpy_dtype is None and PT.TOKEN.numpy_dtype is None
    assert [PT.PRED.bit_width, PT.BF16.bit_width, PT.C64.bit_width, PT.C128.bit_width] == [8, 16, 64, 128]
    assert PT.F16.is_floating and PT.BF16.is_floating and not PT.C64.is_floating
    assert PT.C128.is_complex and not PT.F64.is_complex
    assert PT.S8.is_integral and PT.U64.is_integral and not PT.PRED.is_integral and not PT.F32.is_integral
    assert PT.S32.is_signed and not PT.U32.is_signed and not PT.F32.is_signed
    assert PT.U8.is_unsigned and not PT.PRED.is_unsigned
    assert PT.PRED.is_array and not PT.TUPLE.is_array and not PT.TOKEN.is_array


def test_primitive_type_from_dtype_and_name():
    assert PT.from_dtype(np.float32) is PT.F32
    assert PT.from_dtype(bool) is PT.PRED
    assert PT.from_dtype(np.uint16) is PT.U16
    assert PT.from_dtype(np.dtype(">i8")) is PT.S64
    assert PT.from_dtype(complex) is PT.C128
    for t in PT:
        if t.numpy_dtype is not None and t is not PT.BF16:
            assert PT.from_dtype(t.numpy_dtype) is t
        assert PT.from_name(t.short_name) is t and PT.from_name(t.name) is t
    with pytest.raises(ValueError, match="unsupported dtype 'object'"):
        PT.from_dtype(object)
    with pytest.raises(ValueError, match="unsupported dtype 'str'"):
        PT.from_dtype(str)
    with pytest.raises(ValueError, match="unknown element type 'f33'"):
        PT.from_name("f33")


def test_bf16_conversion():
    f = np.array([1.0, -2.5, 0.0, -0.0, np.inf, -np.inf, 3.0e38, 1e-40], np.float32)
    expected = [1.0, -2.5, 0.0, -0.0, np.inf, -np.inf, bf16_to_f32(0x7F62), bf16_to_f32(0x0001)]
    np.testing.assert_array_equal(bf16_to_f32(bf16_from_f32(f)), np.array(expected, np.float32))
    assert bf16_from_f32(np.float32(1.0)) == 0x3F80
    words = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF], np.uint32).view(np.float32)
    np.testing.assert_array_equal(bf16_from_f32(words), [0x3F80, 0x3F82, 0x3F81, 0x7F80])  # ties to even
    nan = bf16_from_f32(np.array([np.nan, -np.nan, np.uint32(0x7F800001).view(np.float32)], np.float32))
    assert np.isnan(bf16_to_f32(nan)).all()
    every = np.arange(1 << 16, dtype=np.uint16)
    finite = every[np.isfinite(bf16_to_f32(every))]
    np.testing.assert_array_equal(bf16_from_f32(bf16_to_f32(finite)), finite)
    assert bf16_from_f32([1.0, 2.0]).dtype == np.uint16 and bf16_to_f32([0x3F80]).dtype == np.float32


# --------------------------------------------------------------------------
# Shape / Layout API
# --------------------------------------------------------------------------

def test_shape_basics():
    s = Shape(PT.F32, (3, 5))
    assert s == Shape(PT.F32, [3, 5]) == make_shape(np.float32, [3, 5]) == make_shape("float32", (3, 5))
    assert s.layout == Layout((1, 0)) and s.has_default_layout
    assert (s.rank, s.true_rank, s.size, s.physical_size, s.dtype) == (2, 2, 15, 15, np.float32)
    assert Shape(PT.F32, (1, 4, 1)).true_rank == 1
    assert s.is_array and not s.is_tuple and not s.is_token
    assert [s.canonical_dimension(d) for d in (0, 1, -1, -2)] == [0, 1, 1, 0]
    t = s.with_layout((0, 1))
    assert t.layout == Layout((0, 1)) and str(t) == "f32[3,5]{0,1}" and not t.has_default_layout
    assert s.with_layout(Layout((1, 0), tiles=[(2, 2)])) == parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert s.with_dimensions((2, 3, 4)) == make_shape("f32", (2, 3, 4))
    assert s.with_dimensions((2, 3), (0, 1)) == make_shape("f32", (2, 3), (0, 1))
    assert hash(s) == hash(Shape(PT.F32, [3, 5]))
    assert (Layout([1, 0], tiles=[[2, 2]]) == Layout((1, 0), tiles=(Tile((2, 2)),))
            == Layout((1, 0), tiles=Tile([2, 2])))


def test_shape_text_forms():
    assert str(make_shape("f32", (2, 3))) == "f32[2,3]{1,0}"
    assert str(make_shape("f32", ())) == "f32[]"
    assert str(make_shape("pred", (0,))) == "pred[0]{0}"
    tup = Shape.tuple_of([make_shape("f32", (2,)), make_shape("s32", ())])
    assert str(tup) == "(f32[2]{0}, s32[])"
    nested = Shape.tuple_of([tup, Shape.token(), Shape.tuple_of([])])
    assert str(nested) == "((f32[2]{0}, s32[]), token[], ())"
    assert parse_shape(str(nested)) == nested and parse_shape("( (f32[2], s32[]),token[] , ())") == nested
    assert str(Shape.token()) == "token[]" and Shape.token().is_token and tup.is_tuple
    assert byte_size(tup) == 12 and byte_size(Shape.token()) == 0
    assert parse_shape("f32[2,3]") == make_shape("f32", (2, 3)) and parse_shape("f32[]{}") == make_shape("f32", ())
    s = parse_shape("f32[2,3]{0,1:PD(3,5)PV(0)}")
    assert (s.layout.padded_dimensions, s.layout.padding_value) == ((3, 5), 0)
    assert str(s) == "f32[2,3]{0,1:PD(3,5)PV(0)}"
    full = "bf16[2,3]{0,1:T(2,*,2)(1)PD(3,5)PV(-1.5)L(16)E(16)S(1)}"
    assert str(parse_shape(full)) == full
    assert parse_shape("f32[2]{0:PV(nan)}") == parse_shape("f32[2]{0:PV(nan)}")
    assert str(Layout(())) == "{}" and str(Layout((), tiles=[(128,)])) == "{:T(128)}"


def test_padding_values_fill_padding_slots():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    for pv, fill in ((None, 0), (0, 0), (-7, -7)):
        s = make_shape("s32", (2, 3), (0, 1), padded_dimensions=(3, 5), padding_value=pv)
        buf = to_physical(x, s)
        mask = np.ones(s.physical_size, bool)
        mask[linear_index_map(s)] = False
        assert mask.sum() == 9 and (buf[mask] == fill).all()
        np.testing.assert_array_equal(from_physical(buf, s), x)
    s = parse_shape("f32[3,5]{1,0:T(2,2)PV(-1.5)}")
    buf = to_physical(np.ones((3, 5)), s)
    assert buf.dtype == np.float32 and (buf == -1.5).sum() == 9 and (buf == 1).sum() == 15
    b = parse_shape("bf16[3]{0:T(2)PV(-1.5)}")
    buf = to_physical(np.array([1.0, 2.0, 1.00390625], np.float32), b)
    assert buf.dtype == np.uint16
    np.testing.assert_array_equal(bf16_to_f32(buf), [1.0, 2.0, 1.0, -1.5])
    aligned = parse_shape("s32[3]{0:L(4)PV(9)}")
    assert aligned.physical_size == 4 and to_physical([1, 2, 3], aligned).tolist() == [1, 2, 3, 9]
    with pytest.raises(ValueError, match="padding slot"):
        multi_index(aligned, 3)


def test_fast_path_and_index_map_properties():
    s = make_shape("f32", (2, 3, 4), (0, 2, 1))
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    buf = to_physical(x, s)
    assert buf.flags.c_contiguous and buf.dtype == np.float32 and not np.shares_memory(buf, x)
    np.testing.assert_array_equal(buf[linear_index_map(s)], x)
    back = from_physical(buf, s)
    assert np.shares_memory(back, buf)  # untiled, unpadded: a transposed view
    np.testing.assert_array_equal(back, x)
    assert not np.shares_memory(to_physical(x, make_shape("f32", (2, 3, 4))), x)
    m = linear_index_map(s)
    assert m is linear_index_map(make_shape("s8", (2, 3, 4), (0, 2, 1)))  # cached on (dims, layout)
    assert m.dtype == np.int64 and not m.flags.writeable
    with pytest.raises(ValueError):
        m[0, 0, 0] = 5
    assert linear_index_map(make_shape("f32", ())).shape == ()
    assert linear_index_map(make_shape("f32", (0, 3))).shape == (0, 3)
    scalar = parse_shape("s32[]{:T(128)}")
    assert scalar.physical_size == 128 and to_physical(7, scalar).tolist() == [7] + [0] * 127
    assert from_physical(to_physical(7, scalar), scalar) == 7


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

ERRORS = [
    (lambda: Layout((0, 0)), r"minor_to_major \[0,0\] is not a permutation of 0\.\.1"),
    (lambda: Layout((1, 2)), r"minor_to_major \[1,2\] is not a permutation of 0\.\.1"),
    (lambda: Shape(PT.F32, (2, 3), Layout((0,))), r"minor_to_major \[0\] has rank 1 but the shape has rank 2"),
    (lambda: Shape(PT.F32, (2, 3), (2, 1, 0)), r"minor_to_major \[2,1,0\] has rank 3 but the shape has rank 2"),
    (lambda: Shape(PT.F32, (2, -1)), r"Shape\.dimensions\[1\] must be >= 0, got -1"),
    (lambda: Shape(PT.F32, (2, 2.5)), r"Shape\.dimensions\[1\] must be an int"),
    (lambda: make_shape("f32", (2, 3), padded_dimensions=(1, 3)),
     r"padded_dimensions\[0\] = 1 is smaller than dimension 0 of size 2"),
    (lambda: make_shape("f32", (2, 3), padded_dimensions=(3,)),
     r"padded_dimensions \[3\] has rank 1 but the shape has rank 2"),
    (lambda: Layout((0,), padded_dimensions=(-1,)), r"padded_dimensions\[0\] must be >= 0"),
    (lambda: Tile((0,)), r"tile dimension 0 must be >= 1 or '\*'"),
    (lambda: Tile((2, -3)), r"tile dimension -3 must be >= 1 or '\*'"),
    (lambda: Tile(()), r"a tile needs at least one dimension"),
    (lambda: Tile((2, "*")), r"tile \(2,\*\) ends in '\*'"),
    (lambda: Layout((0,), tiles=(2,)), r"Layout\.tiles must be a sequence of tiles"),
    (lambda: Layout((0,), element_size_in_bits=-1), r"element_size_in_bits must be >= 0"),
    (lambda: Layout((0,), memory_space=-1), r"memory_space must be >= 0"),
    (lambda: Layout((0,), padding_value="x"), r"padding_value must be an int, a float or None"),
    (lambda: Shape(PT.TUPLE, (2,)), r"Shape\.dimensions must be empty for tuple shapes"),
    (lambda: Shape(PT.TOKEN, layout=Layout(())), r"Shape\.layout must be None for token shapes"),
    (lambda: Shape(PT.F32, (2,), tuple_shapes=(Shape.token(),)), r"Shape\.tuple_shapes must be empty"),
    (lambda: Shape.tuple_of([3]), r"Shape\.tuple_shapes\[0\] must be a Shape"),
    (lambda: Shape("f33", (2,)), r"unknown element type 'f33'"),
    (lambda: make_shape("f32", (2, 3)).canonical_dimension(2), r"dimension 2 is out of range for rank 2"),
    (lambda: make_shape("f32", (2, 3)).canonical_dimension(-3), r"dimension -3 is out of range for rank 2"),
    (lambda: Shape.token().size, r"size is only defined for array shapes"),
    (lambda: linear_index(make_shape("f32", (2, 3)), (1, 3)), r"out of range in dimension 1"),
    (lambda: linear_index(make_shape("f32", (2, 3)), (1,)),
     r"index \[1\] has 1 entries but f32\[2,3\]\{1,0\} has rank 2"),
    (lambda: multi_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), 9), r"linear index 9 is a padding slot"),
    (lambda: multi_index(parse_shape("f32[3,5]{1,0:T(2,2)}"), 24), r"linear index 24 is out of range"),
    (lambda: multi_index(make_shape("f32", (2,)), -1), r"linear index -1 is out of range"),
    (lambda: to_physical(np.zeros((3, 2)), make_shape("f32", (2, 3))), r"array of shape \(3, 2\) does not match"),
    (lambda: from_physical(np.zeros(5), make_shape("f32", (2, 3))), r"buffer of shape \(5,\) does not match"),
    (lambda: byte_strides(parse_shape("f32[3,5]{1,0:T(2,2)}")), r"only defined for untiled layouts"),
    (lambda: byte_strides(make_shape("s8", (2,), element_size_in_bits=4)), r"not whole bytes"),
    (lambda: linear_index_map(Shape.token()), r"linear_index_map is only defined for array shapes"),
]

PARSE_ERRORS = [
    ("f33[2]", r"unknown element type 'f33' in 'f33\[2\]'"),
    ("f32[2", r"expected '\]' or ',' at position 5 in 'f32\[2'"),
    ("f32[2;3]", r"expected '\]' or ',' at position 5"),
    ("f32[?]", r"dynamic dimensions \('\?'\) aren't supported"),
    ("f32[2,3]{0,0}",
     r"minor_to_major \[0,0\] is not a permutation of 0\.\.1 in 'f32\[2,3\]\{0,0\}'"),
    ("f32[2,3]{0}", r"minor_to_major \[0\] has rank 1 but the shape has rank 2"),
    ("f32[2]{0:T(0)}", r"tile dimension 0 must be >= 1 or '\*'"),
    ("f32[2]{0:T(2,x)}", r"expected a tile dimension \(an int or '\*'\)"),
    ("f32[2]{0:T}", r"expected '\(' after 'T'"),
    ("f32[2]{0:D(C)}", r"unsupported layout attribute 'D\(' in 'f32\[2\]\{0:D\(C\)\}'"),
    ("f32[2]{0:SC(0:3)}", r"unsupported layout attribute 'SC\('"),
    ("f32[2]{0:#(u32)}", r"unsupported layout attribute '#\('"),
    ("f32[2]{0:*(u16)}", r"unsupported layout attribute '\*\('"),
    ("f32[2]{0:P(s32[2]{0})}", r"unsupported layout attribute 'P\('"),
    ("f32[2]{0:M(8)}", r"unsupported layout attribute 'M\('"),
    ("f32[2]{0:Q(1)}", r"expected a layout attribute"),
    ("f32[2]{0:T(2)T(2)}", r"duplicate layout attribute 'T'"),
    ("f32[2]{0:E(8)E(8)}", r"duplicate layout attribute 'E'"),
    ("f32[2]{0:PV(abc)}", r"expected a padding value"),
    ("f32[2,3]{1,0:PD(3)}", r"padded_dimensions \[3\] has rank 1 but the shape has rank 2"),
    ("f32[2]{0", r"expected ',', ':' or '\}'"),
    ("f32[2]{0:T(2)", r"expected '\}'"),
    ("f32[2] x", r"unexpected text at position 7"),
    ("tuple[2]", r"write tuple shapes as '\(a, b\)'"),
    ("token[2]", r"a token is written 'token\[\]'"),
    ("(f32[2]", r"expected ',' or '\)'"),
    ("", r"expected an element type at position 0"),
    ("[2]", r"expected an element type"),
]


@pytest.mark.parametrize("make, message", ERRORS, ids=[m for _, m in ERRORS])
def test_error_messages(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("text, message", PARSE_ERRORS, ids=[t for t, _ in PARSE_ERRORS])
def test_parse_error_messages(text, message):
    with pytest.raises(ValueError, match=message):
        parse_shape(text)


def test_parse_layout_errors():
    with pytest.raises(ValueError, match=r"expected '\{'"):
        parse_layout("invalid{}")
    with pytest.raises(ValueError, match="shape text must be a str"):
        parse_shape(None)


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

ARRAY_TYPES = [t for t in PT if t.is_array]


@st.composite
def layouts_for(draw, dims):
    rank = len(dims)
    m2m = tuple(draw(st.permutations(range(rank))))
    padded = None
    if draw(st.booleans()):
        padded = tuple(d + draw(st.integers(0, 2)) for d in dims)
    tiles, tiled_rank = [], rank
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(1, min(tiled_rank, 3) + 1))  # sometimes one more dim than the shape
        entries = [draw(st.integers(1, 3)) for _ in range(k)]
        for i in range(k - 1):
            if draw(st.integers(0, 3)) == 0:
                entries[i] = "*"
        tiles.append(tuple(entries))
        stars = entries.count("*")
        tiled_rank = max(tiled_rank, k) + k - 2 * stars
    padding_value = draw(st.none() | st.integers(-5, 5) | st.sampled_from([-1.5, 0.25, 1e30]))
    return Layout(m2m, tiles=tiles, padded_dimensions=padded, padding_value=padding_value,
                  element_size_in_bits=draw(st.sampled_from([0, 0, 32])),
                  memory_space=draw(st.sampled_from([0, 0, 3])),
                  tail_padding_alignment_in_elements=draw(st.sampled_from([0, 0, 0, 1, 4])))


@st.composite
def shape_parts(draw, element_types=ARRAY_TYPES):
    """(element type, dimensions, layout); the layout's padding value may not
    fit the element type."""
    rank = draw(st.integers(0, 4))
    dims = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 2, 3, 3, 4]), min_size=rank, max_size=rank)))
    return draw(st.sampled_from(element_types)), dims, draw(layouts_for(dims))


def _representable(pv, t) -> bool:
    return pv is None or t.is_floating or t.is_complex or \
        pv == int(pv) and (t.is_signed or pv >= 0) and abs(pv) < 2 ** 15


@st.composite
def array_shapes(draw, element_types=ARRAY_TYPES):
    t, dims, layout = draw(shape_parts(element_types))
    try:
        return Shape(t, dims, layout)
    except ValueError:  # a padding value the type cannot hold
        assume(False)


shapes_and_tuples = st.recursive(
    array_shapes() | st.just(Shape.token()),
    lambda inner: st.lists(inner, max_size=3).map(Shape.tuple_of),
    max_leaves=5)


@settings(max_examples=150, deadline=None)
@given(shape_parts([PT.S32, PT.F32, PT.F64, PT.U16, PT.C64]))
def test_physical_round_trip(parts):
    t, dims, layout = parts
    pv = layout.padding_value
    if not _representable(pv, t):  # refused when the shape is made
        message = f"padding_value {pv!r} is not representable as {t.short_name}"
        with pytest.raises(ValueError, match=re.escape(message)):
            Shape(t, dims, layout)
        return
    s = Shape(t, dims, layout)
    x = np.arange(1, s.size + 1).reshape(s.dimensions).astype(s.dtype)
    buf = to_physical(x, s)
    assert buf.shape == (s.physical_size,) and buf.dtype == s.dtype
    np.testing.assert_array_equal(buf[linear_index_map(s)], x)
    np.testing.assert_array_equal(from_physical(buf, s), x)
    padding = np.ones(s.physical_size, bool)
    padding[linear_index_map(s)] = False
    assert (buf[padding] == (0 if pv is None else pv)).all()


def pad_reshape_transpose(x, s, fill):
    """Independent model of the layout: the tiled_layout doc's pad, reshape, transpose."""
    a = np.transpose(x, list(reversed(s.layout.minor_to_major)))
    if s.layout.padded_dimensions:
        padded = [s.layout.padded_dimensions[d] for d in reversed(s.layout.minor_to_major)]
        a = np.pad(a, [(0, p - n) for p, n in zip(padded, a.shape)], constant_values=fill)
    for tile in s.layout.tiles:
        t = ["*" if d == COMBINE else d for d in tile.dimensions]
        a = a.reshape((1,) * max(0, len(t) - a.ndim) + a.shape)
        lead = a.ndim - len(t)
        merged, sizes, run = list(a.shape[:lead]), [], 1
        for d, ti in zip(a.shape[lead:], t):  # '*': row-major merge with the next dim
            run *= d
            if ti != "*":
                merged.append(run)
                sizes.append(ti)
                run = 1
        a = a.reshape(merged)
        tiled = list(zip(a.shape[lead:], sizes))
        a = np.pad(a, [(0, 0)] * lead + [(0, -d % ti) for d, ti in tiled], constant_values=fill)
        a = a.reshape(list(a.shape[:lead]) + [n for d, ti in tiled for n in (-(-d // ti), ti)])
        k = len(sizes)
        counts, within = [lead + 2 * i for i in range(k)], [lead + 2 * i + 1 for i in range(k)]
        a = a.transpose(list(range(lead)) + counts + within)
    flat = a.reshape(-1)
    return np.concatenate([flat, np.full(s.physical_size - flat.size, fill, flat.dtype)])


@settings(max_examples=150, deadline=None)
@given(array_shapes([PT.S32]))
def test_buffer_matches_pad_reshape_transpose_model(s):
    x = np.arange(1, s.size + 1, dtype=np.int32).reshape(s.dimensions)
    pv = s.layout.padding_value
    assume(pv is None or pv == int(pv) and abs(pv) < 2 ** 31)
    fill = np.int32(pv or 0)
    np.testing.assert_array_equal(to_physical(x, s), pad_reshape_transpose(x, s, fill))


@settings(max_examples=150, deadline=None)
@given(array_shapes([PT.F32]))
def test_index_map_is_a_bijection_onto_non_padding_slots(s):
    assume(s.physical_size <= 3000)
    m = linear_index_map(s)
    assert m.shape == s.dimensions
    values = m.ravel()
    assert len(np.unique(values)) == s.size
    assert ((values >= 0) & (values < s.physical_size)).all()
    for index in np.ndindex(*s.dimensions):
        assert linear_index(s, index) == m[index]
    hits = 0
    for slot in range(s.physical_size):
        try:
            index = multi_index(s, slot)
        except ValueError as e:
            assert "padding slot" in str(e)
            continue
        hits += 1
        assert m[index] == slot
    assert hits == s.size


@settings(max_examples=150, deadline=None)
@given(shapes_and_tuples)
def test_text_round_trip(s):
    text = str(s)
    assert parse_shape(text) == s
    assert str(parse_shape(text)) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(1, 5))
def test_combined_dimensions_match_reshaped_shape(dims, t):
    # T(*,...,*,t) on dims == T(t) on the single merged dimension
    s = make_shape("f32", dims, tiles=[("*",) * (len(dims) - 1) + (t,)])
    merged = make_shape("f32", (math.prod(dims),), tiles=[(t,)])
    assert s.physical_size == merged.physical_size
    np.testing.assert_array_equal(linear_index_map(s).ravel(), linear_index_map(merged))


def test_bounded_dynamic_dimensions_in_text_and_shapes():
    s = parse_shape("f32[<=10,3]{1,0}")
    assert s.dimensions == (10, 3) and s.dynamic_dimensions == (True, False)
    assert s.is_dynamic_dimension(0) and not s.is_dynamic_dimension(1)
    assert str(s) == "f32[<=10,3]{1,0}" and parse_shape(str(s)) == s
    assert s.physical_size == 30  # the buffer holds the bound
    assert parse_shape("f32[10,3]") != s
    assert Shape(PT.F32, (2,), dynamic_dimensions=(False,)) == parse_shape("f32[2]")
    with pytest.raises(ValueError, match="dynamic_dimensions has 1 entries for rank 2"):
        Shape(PT.F32, (2, 3), dynamic_dimensions=(True,))
