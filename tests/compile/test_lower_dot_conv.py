"""Compiled DotGeneral and ConvGeneralDilated (compile/lowering/dot_conv.py)
against their reference semantics: BLAS and loop paths, every dtype family,
preferred element types, batch/contracting dimensions anywhere, operands
whose buffers are used as they are (row-major or transposed) or packed, and
convolutions with strides, negative padding, lhs/rhs dilation, feature and
batch groups and any dimension numbers — with operands, results and
intermediates in non-default layouts (reversed, permuted, tiled, repeated
tiles, padded).

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import numxla.compile.lowering.dot_conv  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import bf16_from_f32, bf16_to_f32

from . import util
from .util import relaid

rng = np.random.default_rng(11)
rand = functools.partial(util.rand, rng=rng, bound=20)
TOLS = {"f16": 2e-3, "f32": 2e-5, "f64": 1e-12}  # complexes by their parts; bf16 words exact
check_all = functools.partial(util.check_all, tols=TOLS)


# -- DotGeneral ---------------------------------------------------------------------------

MATMUL = (((1,), (0,)), ((), ()))


def dots(f32a, f32b, f32t, c64a, c64b, f64a, i32a, i32b, i8a, i8b, u8a, u8b, pa, pb,
         f16a, f16b, b3l, b3r, w3l, w3r, e30, e05, i30, i05, v5, v4):
    return [
        lax.dot_general(f32a, f32b, MATMUL),                                 # views
        lax.dot_general(f32t, f32b, (((0,), (0,)), ((), ()))),               # lhs^T view
        lax.dot_general(f32a, f32a, (((1,), (1,)), ((), ()))),               # rhs^T view
        lax.dot_general(b3l, b3r, (((2,), (1,)), ((0,), (0,)))),             # batched views
        lax.dot_general(w3l, w3r, (((3, 0), (0, 3)), ((1,), (2,)))),         # packed
        lax.dot_general(f32a, f32b, MATMUL, preferred_element_type=np.float64),
        lax.dot_general(c64a, c64b, MATMUL),
        lax.dot_general(f64a, f64a, (((0,), (0,)), ((), ()))),
        lax.dot_general(i32a, i32b, MATMUL),
        lax.dot_general(i8a, i8b, MATMUL),                                   # wraps in s8
        lax.dot_general(i8a, i8b, MATMUL, preferred_element_type=np.int32),
        lax.dot_general(u8a, u8b, MATMUL, preferred_element_type=np.float32),
        lax.dot_general(pa, pb, MATMUL),
        lax.dot_general(pa, pb, MATMUL, preferred_element_type=np.int32),
        lax.dot_general(f16a, f16b, MATMUL),
        lax.dot_general(f16a, f16b, MATMUL, preferred_element_type=np.float32),
        lax.dot_general(e30, e05, MATMUL),                                   # empty sum
        lax.dot_general(i30, i05, MATMUL),
        lax.dot_general(v5, v4, (((), ()), ((), ()))),                       # outer product
        lax.dot_general(v4, f32b, (((0,), (0,)), ((), ()))),                 # vector-matrix
    ]


def dot_args():
    return (rand((3, 4), np.float32), rand((4, 5), np.float32), rand((4, 3), np.float32),
            rand((3, 4), np.complex64), rand((4, 5), np.complex64), rand((4, 6), np.float64),
            rand((3, 4), np.int32), rand((4, 5), np.int32), rand((3, 4), np.int8) * 5,
            rand((4, 5), np.int8) * 5, rand((3, 4), np.uint8), rand((4, 5), np.uint8),
            rand((3, 4), np.bool_), rand((4, 5), np.bool_), rand((3, 4), np.float16),
            rand((4, 5), np.float16), rand((2, 3, 4), np.float32), rand((2, 4, 5), np.float32),
            rand((4, 2, 6, 3), np.float32), rand((3, 5, 2, 4), np.float32),
            rand((3, 0), np.float32), rand((0, 5), np.float32), rand((3, 0), np.int32),
            rand((0, 5), np.int32), rand((5,), np.float32), rand((4,), np.float32))


def test_dot_general_dtypes_and_dimension_numbers():
    args = dot_args()
    check_all(jit(dots)(*args), dots(*args))


def layout_dots(f32a, f32b, f32t, c64a, c64b, i32a, i32b, b3l, b3r):
    return [lax.dot_general(f32a, f32b, MATMUL), lax.dot_general(f32t, f32b, (((0,), (0,)),
                                                                              ((), ()))),
            lax.dot_general(c64a, c64b, MATMUL), lax.dot_general(i32a, i32b, MATMUL),
            lax.dot_general(b3l, b3r, (((2,), (1,)), ((0,), (0,)))),
            lax.dot_general(f32a, f32b, MATMUL) * 2]


def test_dot_general_layouts():
    a = dot_args()
    args = (a[0], a[1], a[2], a[3], a[4], a[6], a[7], a[16], a[17])
    want = layout_dots(*args)
    # column-major operands are read as transposed views, others packed; results
    # (and the product feeding the multiply) in tiled, permuted and padded layouts
    check_all(relaid(layout_dots, args, shift=1)(*args), want)
    colmajor = jit(layout_dots, in_layouts=("{0,1}",) * 7 + ("{0,1,2}", "{1,2,0}"),
                   out_layouts=["{0,1}"] * 4 + ["{1,0,2}", "{0,1}"])
    check_all(colmajor(*args), want)


def strided_dots(q, k, t, u, s, r, c1, c2, f, v):
    return [
        lax.dot_general(q, k, (((3,), (3,)), ((0, 2), (0, 2)))),   # batch dimensions amid
        lax.dot_general(t, u, (((0, 2), (0, 1)), ((), ()))),        # K that does not fold
        lax.dot_general(s, r, (((1,), (0,)), ((), ()))),            # M that does not fold
        lax.dot_general(c1, c2, MATMUL),
        lax.dot_general(v, f, (((0,), (0,)), ((), ()))),            # vector-matrix (gemv)
        lax.dot_general(f, v, (((0,), (0,)), ((), ()))),            # matrix^T-vector
        lax.dot_general(v, v, (((0,), (0,)), ((), ()))),            # inner product
    ]


def strided_dot_args():
    return (rand((2, 5, 3, 4), np.float32), rand((2, 6, 3, 4), np.float32),
            rand((3, 20, 16), np.float32), rand((3, 16, 20), np.float32),
            rand((4, 20, 16), np.float32), rand((20, 16), np.float32),
            rand((4, 3), np.complex64), rand((3, 5), np.complex64),
            rand((4, 6), np.float64), rand((4,), np.float64))


def test_dot_general_strided_operands():
    """Operands and results go to BLAS in their own buffers, whatever the strides:
    no packed copies, loops over the dimensions that do not fold into one."""
    args = strided_dot_args()
    want = strided_dots(*args)
    f = jit(strided_dots)
    check_all(f(*args), want)
    source = f.lower(*args).compile().source
    assert "pack" not in source and "prod" not in source, source
    assert "dot_blas_loops" in source  # loops around BLAS (a K loop accumulates: the values)
    for shift in (0, 2, 4):  # column-major, permuted, padded, tiled (packed) and mixed
        check_all(relaid(strided_dots, args, shift=shift)(*args), want)
    colmajor = jit(strided_dots, in_layouts=("{0,1,2,3}", "{3,2,1,0}", "{0,1,2}", "{1,0,2}",
                                             "{0,2,1}", "{0,1}", "{0,1}", "{0,1}", "{0,1}",
                                             None))
    check_all(colmajor(*args), want)


def test_dot_blas_strides_and_bounds():
    from numxla.compile.kernels.blas import dot_blas
    a, b = rand((40,), np.float64), rand((60,), np.float64)
    A = np.array([[a[1 + 3 * i + 2 * p] for p in range(4)] for i in range(3)])
    B = np.array([[b[2 + 5 * p + 3 * j] for j in range(2)] for p in range(4)])
    for crs, ccs in ((2, 1), (1, 3), (4, 2)):  # row-major, column-major, neither (a loop)
        c = np.full(20, 7.0)
        dot_blas(a, 1, 3, 2, b, 2, 5, 3, c, 1, crs, ccs, 3, 2, 4, 0.0)
        got = np.array([[c[1 + crs * i + ccs * j] for j in range(2)] for i in range(3)])
        np.testing.assert_allclose(got, A @ B)
        dot_blas(a, 1, 3, 2, b, 2, 5, 3, c, 1, crs, ccs, 3, 2, 4, 1.0)
        got = np.array([[c[1 + crs * i + ccs * j] for j in range(2)] for i in range(3)])
        np.testing.assert_allclose(got, 2 * A @ B)
        written = [1 + crs * i + ccs * j for i in range(3) for j in range(2)]
        assert (np.delete(c, written) == 7).all()  # nothing else touched
    with pytest.raises(IndexError):
        dot_blas(a, 1, 3, 2, b, 2, 5, 3, np.zeros(6), 1, 2, 1, 3, 2, 4, 0.0)


def test_bf16_computes_in_f32():
    # (the reference semantics take bf16 words for values; compare with f32 math)
    a, b = bf16_array(rand((3, 4), np.float32)), bf16_array(rand((4, 5), np.float32))
    x, w = bf16_array(rand((1, 2, 4, 4), np.float32)), bf16_array(rand((3, 2, 2, 2), np.float32))

    def f(a, b, x, w):
        return [lax.dot_general(a, b, MATMUL), lax.conv_general_dilated(x, w, (1, 1), "SAME")]

    def f32(words):
        return bf16_to_f32(np.asarray(words))
    got = jit(f)(a, b, x, w)
    want = [f32(a) @ f32(b), lax.conv_general_dilated(f32(x), f32(w), (1, 1), "SAME")]
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(f32(g), bf16_to_f32(bf16_from_f32(w_)), rtol=1e-2, atol=1e-2)


# -- ConvGeneralDilated ---------------------------------------------------------------------

NHWC = ("NHWC", "HWIO", "NHWC")


def convs(x, w, xn, wn, xi, wi, xb, wb, xc, wc, xh, wh, x1, w1, x3, w3, xg, wg, xbg, wbg,
          x0, w0, x4, w4):
    c = lax.conv_general_dilated
    return [
        c(x, w, (1, 1), "SAME", dimension_numbers=NHWC),                    # into the output
        c(x, w, (2, 1), "VALID", dimension_numbers=NHWC),
        c(x, w, (1, 2), ((2, -1), (-1, 3)), lhs_dilation=(2, 1), rhs_dilation=(1, 2),
          dimension_numbers=NHWC),
        c(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NCHW")),  # scattered
        c(xn, wn, (1, 1), ((1, 1), (0, 0))),                                  # NCHW/OIHW
        c(xn, wn, (2, 2), ((0, 0), (1, 1)), lhs_dilation=(3, 2), rhs_dilation=(2, 1)),
        c(xn, wn, (1, 1), ((-1, -1), (-2, 0))),                               # crops only
        c(xn, wn, (1, 1), "SAME", dimension_numbers=("CWNH", "WHIO", "HNCW")),
        c(xi, wi, (1, 1), "SAME", dimension_numbers=NHWC, preferred_element_type=np.int32),
        c(xb, wb, (1, 1), "VALID"),
        c(xc, wc, (1, 1), ((1, 0), (0, 1)), rhs_dilation=(1, 2)),
        c(xh, wh, (1, 1), "SAME"),
        c(xh, wh, (1, 1), "SAME", preferred_element_type=np.float32),
        c(x1, w1, (2,), ((1, 2),), lhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC")),
        c(x3, w3, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
        c(xg, wg, (1, 1), "SAME", dimension_numbers=NHWC, feature_group_count=2),
        c(xbg, wbg, (1, 1), "VALID", dimension_numbers=NHWC, batch_group_count=2),
        c(x, w, (1, 1), ((3, 3), (0, 0)), rhs_dilation=(4, 1), dimension_numbers=NHWC,
          preferred_element_type=np.float64),
        c(x0, w0, (1, 1), "SAME", dimension_numbers=NHWC),                  # no features
        c(x4, w4, (1, 2, 1, 1), ((1, 0), (0, 1), (1, 1), (-1, 0)),            # 4 spatial dims
          rhs_dilation=(1, 1, 2, 1)),
    ]


def conv_args():
    return (rand((2, 5, 6, 3), np.float32), rand((3, 2, 3, 4), np.float32),
            rand((2, 3, 5, 4), np.float64), rand((4, 3, 2, 3), np.float64),
            rand((2, 4, 4, 3), np.int8), rand((3, 3, 3, 2), np.int8),
            rand((1, 2, 4, 4), np.bool_), rand((3, 2, 2, 2), np.bool_),
            rand((1, 2, 4, 5), np.complex64), rand((2, 2, 2, 2), np.complex64),
            rand((1, 2, 4, 4), np.float16), rand((3, 2, 3, 3), np.float16),
            rand((2, 7, 3), np.float32), rand((3, 3, 2), np.float32),
            rand((1, 3, 4, 4, 2), np.float32), rand((2, 3, 2, 2, 3), np.float32),
            rand((2, 4, 4, 6), np.float32), rand((3, 3, 3, 4), np.float32),
            rand((4, 4, 4, 3), np.float32), rand((2, 2, 3, 6), np.float32),
            rand((2, 5, 6, 0), np.float32), rand((3, 2, 0, 4), np.float32),
            rand((2, 3, 3, 4, 3, 3), np.float64), rand((2, 3, 2, 2, 2, 2), np.float64))


def test_conv_general_dilated():
    args = conv_args()
    check_all(jit(convs)(*args), convs(*args))


def layout_convs(x, w, xi, wi, xg, wg, xbg, wbg):
    c = lax.conv_general_dilated
    return [c(x, w, (1, 2), ((2, -1), (-1, 3)), lhs_dilation=(2, 1), rhs_dilation=(1, 2),
              dimension_numbers=NHWC),
            c(x, w, (1, 1), "SAME", dimension_numbers=NHWC) + 1,
            c(xi, wi, (1, 1), "SAME", dimension_numbers=NHWC, preferred_element_type=np.int32),
            c(xg, wg, (1, 1), "SAME", dimension_numbers=NHWC, feature_group_count=2),
            c(xbg, wbg, (1, 1), "VALID", dimension_numbers=NHWC, batch_group_count=2)]


def test_conv_layouts():
    a = conv_args()
    args = (a[0], a[1], a[4], a[5], a[16], a[17], a[18], a[19])
    want = layout_convs(*args)
    check_all(relaid(layout_convs, args)(*args), want)


def strided_convs(x, w1, xn, wn1, xg, wg1, xbg, wbg1, xn3, wn3, xi, wi):
    c = lax.conv_general_dilated
    return [
        c(x, w1, (1, 1), "VALID", dimension_numbers=NHWC),                 # pointwise: x as is
        c(xn, wn1, (1, 1), "VALID"),                                          # pointwise NCHW
        c(xg, wg1, (1, 1), "VALID", dimension_numbers=NHWC, feature_group_count=2),
        c(xbg, wbg1, (1, 1), "VALID", dimension_numbers=NHWC, batch_group_count=2),
        c(xn3, wn3, (1, 1), "SAME"),                      # NCHW result written column-major
        c(x, w1, (1, 1), ((0, -1), (1, 0)), dimension_numbers=NHWC),       # 1x1, not pointwise
        c(xi, wi, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NCHW")),
    ]


def strided_conv_args():
    return (rand((2, 5, 6, 3), np.float32), rand((1, 1, 3, 4), np.float32),
            rand((2, 3, 5, 4), np.float64), rand((4, 3, 1, 1), np.float64),
            rand((2, 4, 4, 6), np.float32), rand((1, 1, 3, 4), np.float32),
            rand((4, 4, 4, 3), np.float32), rand((1, 1, 3, 6), np.float32),
            rand((3, 2, 6, 5), np.complex64), rand((4, 2, 3, 3), np.complex64),
            rand((2, 4, 4, 3), np.int32), rand((3, 3, 3, 2), np.int32))


def test_conv_strided_operands():
    """Pointwise convolutions multiply the input rows in place; inputs with the
    features most minor are read, and results with features or positions at unit
    stride written, through their strides (padded, permuted, NCHW)."""
    args = strided_conv_args()
    want = strided_convs(*args)
    f = jit(strided_convs)
    check_all(f(*args), want)
    for shift in (0, 3, 4):
        check_all(relaid(strided_convs, args, shift=shift)(*args), want)


def test_conv_benchmark_shape():
    """NHWC 32x32x32x16, 3x3 SAME to 32 channels (the CNN benchmark's conv)."""
    x, w = rand((32, 32, 32, 16), np.float32), rand((3, 3, 16, 32), np.float32)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)
    check_all(jit(f)(x, w), f(x, w))
