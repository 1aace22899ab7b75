"""dot, dot_general, conv / conv_with_general_padding / conv_general_dilated and
the NumPy-layer products: the document's examples, shape errors at trace time,
and properties against independent formulations (transpose + reshape + matmul
for dot_general, an explicit loop over output positions and kernel taps for
convolutions, numpy for the NumPy layer)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives import ConvDimensionNumbers, Precision
from numxla.primitives.dot_conv import conv_general_dilated_p, dot_general_p
from numxla.tracer import make_graph
from numxla.tracer.core import ShapeError
from numxla.tracer.shapes import PrimitiveType as PT, bf16_to_f32

RNG = np.random.default_rng(20240611)


def _ints(shape, lo=-4, hi=5, dtype=np.int64):
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def _trace_error(fn, *args, match):
    with pytest.raises(ShapeError, match=match):
        make_graph(fn)(*args)


# ==========================================================================
# independent formulations
# ==========================================================================

def _dot_general_ref(lhs, rhs, dimension_numbers):
    """Batch, free and contracting dimensions moved into place, then a batched matmul."""
    (lc, rc), (lb, rb) = dimension_numbers
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    size = lambda x, dims: int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    a = np.transpose(lhs, [*lb, *lf, *lc]).reshape(size(lhs, lb), size(lhs, lf), size(lhs, lc))
    b = np.transpose(rhs, [*rb, *rc, *rf]).reshape(size(rhs, rb), size(rhs, rc), size(rhs, rf))
    out = np.matmul(a, b)
    return out.reshape([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lf]
                       + [rhs.shape[d] for d in rf])


def _conv_ref(lhs, rhs, strides, padding, lhs_dil, rhs_dil, dn, fgc=1, bgc=1, dtype=None):
    """Convolution from its definition: for every output position and kernel tap,
    the padded, dilated base coordinate ``q = out * stride + tap * rhs_dil - low``
    reads input element ``q / lhs_dil`` when that is an integer inside the input;
    each (feature or batch) group multiplies its slice of features and kernel."""
    lhs_spec, rhs_spec, out_spec = dn
    x = np.transpose(lhs, lhs_spec)
    k = np.transpose(rhs, rhs_spec)
    batch, feat = x.shape[:2]
    out_feat, in_feat = k.shape[:2]
    spatial_in, taps = x.shape[2:], k.shape[2:]
    out_sizes = []
    for n_in, n_k, s, (lo, hi), ld, rd in zip(spatial_in, taps, strides, padding, lhs_dil,
                                               rhs_dil):
        base = (n_in - 1) * ld + 1 if n_in else 0
        window = (n_k - 1) * rd + 1
        out_sizes.append(max(0, (lo + base + hi - window) // s + 1)
                         if lo + base + hi >= window else 0)
    groups = fgc * bgc
    og = out_feat // groups
    out = np.zeros((batch // bgc, out_feat, *out_sizes), dtype or x.dtype)
    for pos in itertools.product(*map(range, out_sizes)):
        for tap in itertools.product(*map(range, taps)):
            coords = []
            for i, (p, t) in enumerate(zip(pos, tap)):
                q = p * strides[i] + t * rhs_dil[i] - padding[i][0]
                if q % lhs_dil[i] or not 0 <= q // lhs_dil[i] < spatial_in[i]:
                    break
                coords.append(q // lhs_dil[i])
            else:
                xv = x[(slice(None), slice(None), *coords)].astype(out.dtype)   # [N, C]
                kv = k[(slice(None), slice(None), *tap)].astype(out.dtype)      # [O, I]
                for g in range(groups):
                    bs = slice(g * batch // bgc, (g + 1) * batch // bgc) if bgc > 1 else slice(None)
                    fs = slice(g * in_feat, (g + 1) * in_feat) if fgc > 1 else slice(None)
                    os_ = slice(g * og, (g + 1) * og)
                    out[(slice(None), os_, *pos)] += xv[bs, fs] @ kv[os_].T
    return np.transpose(out, np.argsort(out_spec))


# ==========================================================================
# the document's examples
# ==========================================================================

def test_doc_dot_general_contracting_example():
    lhs = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    rhs = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], np.float32)
    out = lax.dot_general(lhs, rhs, (((1,), (1,)), ((), ())))
    np.testing.assert_array_equal(out, [[6.0, 12.0], [15.0, 30.0]])
    assert out.dtype == np.float32


def test_doc_dot_general_batch_example():
    lhs = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], np.float32)
    rhs = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]], np.float32)
    out = lax.dot_general(lhs, rhs, (((2,), (1,)), ((0,), (0,))))
    np.testing.assert_array_equal(out, [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])


@pytest.mark.parametrize("lhs_shape, rhs_shape, dn, out_shape", [
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,))), (2, 3, 5)),            # [b0,m,k]·[b0,k,n]
    ((2, 6, 3, 4), (2, 6, 4, 5), (((3,), (2,)), ((0, 1), (0, 1))), (2, 6, 3, 5)),  # [b0,b1,m,k]·...
])
def test_doc_dot_general_batch_matmul_table(lhs_shape, rhs_shape, dn, out_shape):
    lhs, rhs = _ints(lhs_shape), _ints(rhs_shape)
    out = lax.dot_general(lhs, rhs, dn)
    assert out.shape == out_shape
    np.testing.assert_array_equal(out, lhs @ rhs)


def test_doc_dot_table():
    v, w = np.array([1, 2, 3], np.int32), np.array([4, 5, 6], np.int32)
    m = np.arange(6, dtype=np.int32).reshape(2, 3)
    n = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert lax.dot(v, w).shape == () and int(lax.dot(v, w)) == 32      # vector·vector: scalar
    np.testing.assert_array_equal(lax.dot(m, v), [8, 26])                 # matrix·vector
    np.testing.assert_array_equal(lax.dot(v, n), v @ n)                   # vector·matrix
    np.testing.assert_array_equal(lax.dot(m, n), m @ n)                   # matrix·matrix


def _doc_conv2d(inp, kernel, stride, pad_low):
    """The document's pseudo-code for a 2-D convolution with padding and strides
    (NCHW input, OIHW kernel), written out literally."""
    b_n, z_n, y_n, x_n = inp.shape
    oz_n, iz_n, ky_n, kx_n = kernel.shape
    (sy, sx), (py, px) = stride, pad_low
    oy_n = (y_n + 2 * py - ky_n) // sy + 1
    ox_n = (x_n + 2 * px - kx_n) // sx + 1
    out = np.zeros((b_n, oz_n, oy_n, ox_n), inp.dtype)
    for b, oz, oy, ox in itertools.product(range(b_n), range(oz_n), range(oy_n), range(ox_n)):
        value = 0
        for iz, ky, kx in itertools.product(range(iz_n), range(ky_n), range(kx_n)):
            iy = oy * sy + ky - py
            ix = ox * sx + kx - px
            if 0 <= iy < y_n and 0 <= ix < x_n:
                value += inp[b, iz, iy, ix] * kernel[oz, iz, ky, kx]
        out[b, oz, oy, ox] = value
    return out


def test_doc_conv_pseudo_code_with_padding_and_strides():
    inp, kernel = _ints((2, 3, 7, 6)), _ints((4, 3, 3, 2))
    for stride, pad in (((1, 1), (0, 0)), ((2, 1), (1, 1)), ((3, 2), (2, 1))):
        out = lax.conv_with_general_padding(inp, kernel, stride, [(p, p) for p in pad],
                                            None, None)
        np.testing.assert_array_equal(out, _doc_conv2d(inp, kernel, stride, pad))


def test_doc_conv_padding_is_zeros_inserted_into_the_input():
    # "padding[1] = (2, 3)": two zeros before and three after in the second spatial dimension.
    inp, kernel = _ints((1, 2, 4, 5)), _ints((3, 2, 2, 2))
    out = lax.conv_with_general_padding(inp, kernel, (1, 1), [(0, 0), (2, 3)], None, None)
    padded = np.pad(inp, [(0, 0), (0, 0), (0, 0), (2, 3)])
    np.testing.assert_array_equal(out, lax.conv(padded, kernel, (1, 1), "VALID"))
    assert out.shape == (1, 3, 3, 9)


def test_doc_conv_negative_padding_removes_elements():
    inp, kernel = _ints((1, 2, 6, 5)), _ints((3, 2, 2, 2))
    out = lax.conv_with_general_padding(inp, kernel, (1, 1), [(-1, -2), (0, -1)], None, None)
    np.testing.assert_array_equal(out, lax.conv(inp[:, :, 1:-2, :-1], kernel, (1, 1), "VALID"))


def test_doc_conv_dilation_inserts_holes():
    inp, kernel = _ints((1, 2, 4, 3)), _ints((2, 2, 2, 3))
    # lhs dilation d puts d - 1 zeros between input elements (transposed convolution)
    dilated = np.zeros((1, 2, 10, 5), inp.dtype)
    dilated[:, :, ::3, ::2] = inp
    out = lax.conv_with_general_padding(inp, kernel, (1, 1), [(0, 0), (0, 0)], (3, 2), None)
    np.testing.assert_array_equal(out, lax.conv(dilated, kernel, (1, 1), "VALID"))
    # rhs dilation (atrous convolution) does the same to the kernel
    big = _ints((1, 2, 9, 9))
    holes = np.zeros((2, 2, 3, 7), kernel.dtype)
    holes[:, :, ::2, ::3] = kernel
    out = lax.conv_with_general_padding(big, kernel, (1, 1), [(0, 0), (0, 0)], None, (2, 3))
    np.testing.assert_array_equal(out, lax.conv(big, holes, (1, 1), "VALID"))


def test_doc_conv_same_keeps_the_input_shape_and_valid_pads_nothing():
    inp, kernel = _ints((2, 3, 7, 6)), _ints((5, 3, 4, 3))
    assert lax.conv(inp, kernel, (1, 1), "SAME").shape == (2, 5, 7, 6)
    assert lax.conv(inp, kernel, (2, 2), "SAME").shape == (2, 5, 4, 3)
    assert lax.conv(inp, kernel, (1, 1), "VALID").shape == (2, 5, 4, 4)


def test_doc_conv_depthwise_via_feature_group_count():
    # filter [h, w, in, multiplier] reshaped to [h, w, 1, in * multiplier], groups = in
    h, w, cin, mult = 3, 2, 4, 2
    inp = _ints((2, 6, 5, cin))
    filt = _ints((h, w, cin, mult))
    out = lax.conv_general_dilated(inp, filt.reshape(h, w, 1, cin * mult), (1, 1), "VALID",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                   feature_group_count=cin)
    assert out.shape == (2, 4, 4, cin * mult)
    for c in range(cin):  # input channel c alone, convolved with its `mult` filters
        single = lax.conv_general_dilated(inp[..., c:c + 1], filt[:, :, c:c + 1, :], (1, 1),
                                          "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        np.testing.assert_array_equal(out[..., c * mult:(c + 1) * mult], single)


def test_doc_conv_feature_groups_concatenate_separate_convolutions():
    inp, kernel = _ints((2, 6, 5, 4)), _ints((6, 2, 2, 3))    # 3 groups of 2 input features
    out = lax.conv_general_dilated(inp, kernel, (1, 1), "VALID", feature_group_count=3)
    parts = [lax.conv(inp[:, 2 * g:2 * g + 2], kernel[2 * g:2 * g + 2], (1, 1), "VALID")
             for g in range(3)]
    np.testing.assert_array_equal(out, np.concatenate(parts, axis=1))


def test_doc_conv_batch_groups():
    # the output batch is input batch / batch_group_count; the output features are split
    # into batch_group_count groups, group g convolving batch slice g.
    inp, kernel = _ints((6, 3, 5, 4)), _ints((4, 3, 2, 2))
    out = lax.conv_general_dilated(inp, kernel, (1, 1), "VALID", batch_group_count=2)
    assert out.shape == (3, 4, 4, 3)
    parts = [lax.conv(inp[3 * g:3 * g + 3], kernel[2 * g:2 * g + 2], (1, 1), "VALID")
             for g in range(2)]
    np.testing.assert_array_equal(out, np.concatenate(parts, axis=1))


# ==========================================================================
# properties against the independent formulations
# ==========================================================================

def _random_dot_case():
    nb, nc = RNG.integers(0, 3), RNG.integers(0, 3)
    nlf, nrf = RNG.integers(0, 3), RNG.integers(0, 3)
    sizes = lambda k: [int(s) for s in RNG.integers(1, 4, size=k)]
    b, c, lf, rf = sizes(nb), sizes(nc), sizes(nlf), sizes(nrf)
    lhs_order = RNG.permutation(nb + nc + nlf)
    rhs_order = RNG.permutation(nb + nc + nrf)
    lhs_shape = [0] * (nb + nc + nlf)
    rhs_shape = [0] * (nb + nc + nrf)
    for i, s in enumerate(b + c + lf):
        lhs_shape[lhs_order[i]] = s
    for i, s in enumerate(b + c + rf):
        rhs_shape[rhs_order[i]] = s
    lb = tuple(int(d) for d in lhs_order[:nb])
    lc = tuple(int(d) for d in lhs_order[nb:nb + nc])
    rb = tuple(int(d) for d in rhs_order[:nb])
    rc = tuple(int(d) for d in rhs_order[nb:nb + nc])
    return lhs_shape, rhs_shape, ((lc, rc), (lb, rb))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint16,
                                   np.complex64, np.bool_])
def test_dot_general_matches_batched_matmul(dtype):
    for _ in range(40):
        lhs_shape, rhs_shape, dn = _random_dot_case()
        if dtype == np.bool_:
            lhs, rhs = RNG.random(lhs_shape) < 0.3, RNG.random(rhs_shape) < 0.3
            want = _dot_general_ref(lhs.astype(np.int64), rhs.astype(np.int64), dn) != 0
        else:
            lhs = _ints(lhs_shape, 0 if dtype == np.uint16 else -4, 5, dtype)
            rhs = _ints(rhs_shape, 0 if dtype == np.uint16 else -4, 5, dtype)
            if np.issubdtype(dtype, np.complexfloating):
                lhs = lhs + 1j * _ints(lhs_shape, dtype=dtype)
                rhs = rhs + 1j * _ints(rhs_shape, dtype=dtype)
            want = _dot_general_ref(lhs, rhs, dn)
        out = lax.dot_general(lhs, rhs, dn)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, want.astype(dtype))


def test_dot_general_float_values():
    for _ in range(30):
        lhs_shape, rhs_shape, dn = _random_dot_case()
        lhs = RNG.standard_normal(lhs_shape).astype(np.float32)
        rhs = RNG.standard_normal(rhs_shape).astype(np.float32)
        np.testing.assert_allclose(lax.dot_general(lhs, rhs, dn),
                                   _dot_general_ref(lhs.astype(np.float64),
                                                    rhs.astype(np.float64), dn),
                                   rtol=1e-5, atol=1e-5)


def _random_conv_case():
    n = int(RNG.integers(1, 4))
    groups = int(RNG.integers(1, 4))
    fgc, bgc = (groups, 1) if RNG.random() < 0.5 else (1, groups)
    batch = bgc * int(RNG.integers(1, 3))
    in_feat = int(RNG.integers(1, 3))
    out_feat = groups * int(RNG.integers(1, 3))
    spatial = [int(s) for s in RNG.integers(1, 6 if n < 3 else 4, size=n)]
    taps = [int(t) for t in RNG.integers(1, 4, size=n)]
    strides = [int(s) for s in RNG.integers(1, 4, size=n)]
    lhs_dil = [int(d) for d in RNG.integers(1, 3, size=n)]
    rhs_dil = [int(d) for d in RNG.integers(1, 3, size=n)]
    padding = [(int(lo), int(hi)) for lo, hi in RNG.integers(-1, 3, size=(n, 2))]
    for i in range(n):  # keep the padded base non-negative
        base = (spatial[i] - 1) * lhs_dil[i] + 1
        while sum(padding[i]) + base < 0:
            padding[i] = (padding[i][0] + 1, padding[i][1])
    dn = ConvDimensionNumbers(tuple(int(d) for d in RNG.permutation(n + 2)),
                              tuple(int(d) for d in RNG.permutation(n + 2)),
                              tuple(int(d) for d in RNG.permutation(n + 2)))
    lhs_logical = [batch, in_feat * fgc, *spatial]
    rhs_logical = [out_feat, in_feat, *taps]
    lhs_shape = [0] * (n + 2)
    rhs_shape = [0] * (n + 2)
    for i, d in enumerate(dn.lhs_spec):
        lhs_shape[d] = lhs_logical[i]
    for i, d in enumerate(dn.rhs_spec):
        rhs_shape[d] = rhs_logical[i]
    return dict(lhs_shape=lhs_shape, rhs_shape=rhs_shape, strides=strides, padding=padding,
                lhs_dil=lhs_dil, rhs_dil=rhs_dil, dn=dn, fgc=fgc, bgc=bgc)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex128])
def test_conv_general_dilated_matches_explicit_loop(dtype):
    for _ in range(60):
        c = _random_conv_case()
        lhs, rhs = _ints(c["lhs_shape"], dtype=dtype), _ints(c["rhs_shape"], dtype=dtype)
        if np.issubdtype(dtype, np.complexfloating):
            lhs = lhs + 1j * _ints(c["lhs_shape"], dtype=dtype)
            rhs = rhs + 1j * _ints(c["rhs_shape"], dtype=dtype)
        out = lax.conv_general_dilated(lhs, rhs, c["strides"], c["padding"], c["lhs_dil"],
                                       c["rhs_dil"], c["dn"], c["fgc"], c["bgc"])
        want = _conv_ref(lhs, rhs, c["strides"], c["padding"], c["lhs_dil"], c["rhs_dil"],
                         c["dn"], c["fgc"], c["bgc"])
        assert out.dtype == dtype and out.shape == want.shape, c
        np.testing.assert_array_equal(out, want, err_msg=str(c))
        # the shape rule agrees with the reference semantics without running them
        traced = make_graph(lambda a, b: lax.conv_general_dilated(
            a, b, c["strides"], c["padding"], c["lhs_dil"], c["rhs_dil"], c["dn"], c["fgc"],
            c["bgc"]))(lhs, rhs)
        assert traced.out_avals[0].dimensions == want.shape


def test_conv_float32_values():
    for _ in range(20):
        c = _random_conv_case()
        lhs = RNG.standard_normal(c["lhs_shape"]).astype(np.float32)
        rhs = RNG.standard_normal(c["rhs_shape"]).astype(np.float32)
        out = lax.conv_general_dilated(lhs, rhs, c["strides"], c["padding"], c["lhs_dil"],
                                       c["rhs_dil"], c["dn"], c["fgc"], c["bgc"])
        want = _conv_ref(lhs, rhs, c["strides"], c["padding"], c["lhs_dil"], c["rhs_dil"],
                         c["dn"], c["fgc"], c["bgc"], dtype=np.float64)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_conv_string_dimension_numbers_match_the_default_layout():
    inp, kernel = _ints((2, 3, 6, 5)), _ints((4, 3, 3, 2))
    want = lax.conv_general_dilated(inp, kernel, (2, 1), [(1, 0), (0, 1)], (1, 2), (2, 1))
    nhwc = lax.conv_general_dilated(inp.transpose(0, 2, 3, 1), kernel.transpose(2, 3, 1, 0),
                                    (2, 1), [(1, 0), (0, 1)], (1, 2), (2, 1),
                                    ("NHWC", "HWIO", "NHWC"))
    np.testing.assert_array_equal(nhwc, want.transpose(0, 2, 3, 1))
    # spatial parameters follow the order of the spatial letters in the rhs spec
    whio = lax.conv_general_dilated(inp.transpose(0, 2, 3, 1), kernel.transpose(3, 2, 1, 0),
                                    (1, 2), [(0, 1), (1, 0)], (2, 1), (1, 2),
                                    ("NHWC", "WHIO", "NCHW"))
    np.testing.assert_array_equal(whio, want)


def test_conv_dimension_numbers_forms():
    dn = lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    lhs_spec, rhs_spec, out_spec = dn          # unpacks like jax's NamedTuple
    assert (lhs_spec, rhs_spec, out_spec) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert hash(dn) == hash(ConvDimensionNumbers([0, 3, 1, 2], [3, 2, 0, 1], [0, 3, 1, 2]))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == \
        ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    # the 3-D spec with arbitrary spatial letters
    dn3 = lax.conv_dimension_numbers((1,) * 5, (1,) * 5, ("NDHWC", "DHWIO", "NCDHW"))
    assert dn3 == ConvDimensionNumbers((0, 4, 1, 2, 3), (4, 3, 0, 1, 2), (0, 1, 2, 3, 4))


def test_padtype_to_pads_same_and_same_lower():
    assert lax.padtype_to_pads((7, 6), (4, 3), (1, 1), "SAME") == ((1, 2), (1, 1))
    assert lax.padtype_to_pads((7, 6), (4, 3), (1, 1), "SAME_LOWER") == ((2, 1), (1, 1))
    assert lax.padtype_to_pads((7,), (3,), (2,), "VALID") == ((0, 0),)
    inp, kernel = _ints((1, 1, 7)), _ints((1, 1, 4))
    same = lax.conv(inp, kernel, (1,), "SAME")
    lower = lax.conv_general_dilated(inp, kernel, (1,), "SAME_LOWER")
    np.testing.assert_array_equal(same, lax.conv_with_general_padding(inp, kernel, (1,),
                                                                      [(1, 2)], None, None))
    np.testing.assert_array_equal(lower, lax.conv_with_general_padding(inp, kernel, (1,),
                                                                       [(2, 1)], None, None))


def test_conv_with_zero_sized_output_and_inputs():
    out = lax.conv(np.ones((2, 3, 2, 2), np.float32), np.ones((4, 3, 3, 3), np.float32),
                   (1, 1), "VALID")
    assert out.shape == (2, 4, 0, 0) and out.dtype == np.float32
    out = lax.conv(np.ones((0, 3, 4), np.float32), np.ones((2, 3, 2), np.float32), (1,), "VALID")
    assert out.shape == (0, 2, 3)
    out = lax.conv(np.ones((1, 0, 4)), np.ones((2, 0, 2)), (1,), "VALID")
    np.testing.assert_array_equal(out, np.zeros((1, 2, 3)))


# ==========================================================================
# element types, preferred_element_type and precision
# ==========================================================================

def test_preferred_element_type_accumulates_in_the_wider_type():
    a = np.full((1, 64), 100, np.int8)
    out = lax.dot_general(a, a.T, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
    assert out.dtype == np.int32 and int(out[0, 0]) == 640000
    wrapped = lax.dot(a, a.T)            # int8 arithmetic wraps around, as XLA's does
    assert wrapped.dtype == np.int8 and int(wrapped[0, 0]) == np.int64(640000).astype(np.int8)
    # conv with an i8 -> i32 accumulation (StableHLO's si8 example has this result type)
    x = np.full((1, 1, 8), 100, np.int8)
    k = np.full((1, 1, 8), 100, np.int8)
    assert int(lax.conv(x, k, (1,), "VALID", preferred_element_type=np.int32)[0, 0, 0]) == 80000


def test_preferred_element_type_float_and_int_to_float():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = lax.dot(a, a.T, preferred_element_type=np.float64)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a.astype(np.float64) @ a.T.astype(np.float64))
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert lax.dot(i, i.T, preferred_element_type=np.float32).dtype == np.float32
    words = lax.dot(a, a.T, preferred_element_type=PT.BF16)
    assert np.asarray(words).dtype == np.uint16
    np.testing.assert_array_equal(bf16_to_f32(words), a @ a.T)  # small integers are exact


def test_f16_products_are_summed_in_f32_and_rounded_once():
    a = np.full((1, 3000), 1.0, np.float16)       # an f16 running sum would stop at 2048
    out = lax.dot(a, a.T)
    assert out.dtype == np.float16 and float(out[0, 0]) == 3000.0


def test_pred_dot_is_or_of_ands():
    a = np.array([[True, False], [False, False]])
    b = np.array([[True, True], [True, False]])
    np.testing.assert_array_equal(lax.dot(a, b), [[True, True], [False, False]])


def test_precision_forms_are_canonicalised():
    a = np.ones((2, 2), np.float32)
    g = make_graph(lambda x: lax.dot(x, x, precision="highest"))(a)
    assert g.equations[-1].params["precision"] == (Precision.HIGHEST, Precision.HIGHEST)
    g = make_graph(lambda x: lax.dot(x, x, precision=(Precision.HIGH, "DEFAULT")))(a)
    assert g.equations[-1].params["precision"] == (Precision.HIGH, Precision.DEFAULT)
    assert "precision={HIGH,DEFAULT}" in g.as_text()
    with pytest.raises(ValueError, match="precision"):
        lax.dot(a, a, precision="fast-ish")


def test_python_scalars_and_mixed_types_promote():
    a = np.arange(3, dtype=np.float32)
    assert lax.dot(a, np.arange(3, dtype=np.int32)).dtype == np.float32
    out = lax.conv(np.ones((1, 1, 3), np.float16), np.ones((1, 1, 2), np.float32), (1,), "VALID")
    assert out.dtype == np.float32


# ==========================================================================
# shape errors, raised at trace time
# ==========================================================================

F32 = np.float32


@pytest.mark.parametrize("lhs_shape, rhs_shape, dn, match", [
    ((2, 3), (3, 4), (((2,), (0,)), ((), ())), r"dot_general: lhs_contracting_dimensions \(2,\): "
                                               r"2 is out of range for rank 2.*f32\[2,3\]"),
    ((2, 3), (4, 4), (((1,), (0,)), ((), ())), r"contracting dimension sizes differ: lhs "
                                               r"dimension 1 is 3, rhs dimension 0 is 4"),
    ((2, 3), (3, 4), (((1,), (0, 1)), ((), ())), r"must have the same length"),
    ((2, 3, 4), (3, 3, 4), (((2,), (2,)), ((0,), (0,))), r"batch dimension sizes differ"),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), ())), r"lhs_batch_dimensions \(0,\) and "
                                                       r"rhs_batch_dimensions \(\) must have"),
    ((2, 3, 4), (2, 4, 5), (((0,), (0,)), ((0,), (0,))), r"contracting \(0,\) and batch \(0,\) "
                                                         r"dimensions must be distinct"),
    ((3, 3), (3, 3), (((0, 0), (0, 1)), ((), ())), r"must be distinct"),
    ((2, 3), (3, 4), (((-1,), (0,)), ((), ())), r"-1 is out of range"),
])
def test_dot_general_shape_errors(lhs_shape, rhs_shape, dn, match):
    _trace_error(lambda a, b: lax.dot_general(a, b, dn), np.ones(lhs_shape, F32),
                 np.ones(rhs_shape, F32), match=match)


def test_dot_general_parameter_errors():
    a = np.ones((2, 2), F32)
    _trace_error(lambda x: lax.dot_general(x, x, ((1,), (0,))), a,
                 match=r"dot_general: dimension_numbers must be \(\(lhs_contracting")
    _trace_error(lambda x: dot_general_p.bind(x, x.astype(np.float64),
                                              dimension_numbers=(((1,), (0,)), ((), ()))), a,
                 match=r"operand element types must be equal, got f32 and f64")
    i = np.ones((2, 2), np.int32)
    _trace_error(lambda x: lax.dot(x, x, preferred_element_type=np.int16), i,
                 match=r"preferred_element_type s16 must not be narrower than the operand "
                       r"type s32")
    _trace_error(lambda x: lax.dot(x, x, preferred_element_type=np.uint32), i,
                 match=r"preferred_element_type u32 is incompatible with operand type s32")
    _trace_error(lambda x: lax.dot(x, x, preferred_element_type=np.int32), a,
                 match=r"preferred_element_type s32 is incompatible with operand type f32")


def test_preferred_element_type_follows_xla_on_narrowing():
    # XLA lets a real float result be narrower than its operands (jax does not) ...
    a = np.array([[1.5, 2.0]], np.float32)
    out = lax.dot(a, a.T, preferred_element_type=np.float16)
    assert out.dtype == np.float16 and float(out[0, 0]) == 6.25
    # ... but not an integer or complex one
    c = np.ones((2, 2), np.complex128)
    _trace_error(lambda x: lax.dot(x, x, preferred_element_type=np.complex64), c,
                 match=r"preferred_element_type c64 must not be narrower than the operand "
                       r"type c128")


def test_dot_rank_and_size_errors():
    _trace_error(lambda a, b: lax.dot(a, b), np.ones((2, 3, 4), F32), np.ones((4,), F32),
                 match=r"dot: operands must have rank 1 or 2, got ranks 3 and 1")
    _trace_error(lambda a, b: lax.dot(a, b), np.ones((2, 3), F32), np.ones((4, 2), F32),
                 match=r"dot_general: contracting dimension sizes differ: lhs dimension 1 is "
                       r"3, rhs dimension 0 is 4 \(operands: f32\[2,3\]")


def _conv_error(lhs_shape, rhs_shape, match, **kw):
    kw.setdefault("window_strides", (1,) * (len(lhs_shape) - 2))
    kw.setdefault("padding", "VALID")
    _trace_error(lambda a, b: lax.conv_general_dilated(a, b, **kw), np.ones(lhs_shape, F32),
                 np.ones(rhs_shape, F32), match=match)


@pytest.mark.parametrize("lhs_shape, rhs_shape, kw, match", [
    ((1, 4, 5, 5), (2, 4, 3), {}, r"lhs and rhs must have the same rank, got 4 and 3"),
    ((1, 6, 5), (4, 4, 2), {"feature_group_count": 4},
     r"input feature dimension \(6\) must be divisible by feature_group_count \(4\)"),
    ((1, 6, 5), (4, 2, 2), {"feature_group_count": 2},
     r"input feature dimension \(6\) / feature_group_count \(2\) must equal the kernel input "
     r"feature dimension \(2\).*f32\[1,6,5\].*f32\[4,2,2\]"),
    ((1, 6, 5), (4, 3, 2), {},
     r"input feature dimension \(6\) / feature_group_count \(1\) must equal"),
    ((1, 6, 5), (5, 3, 2), {"feature_group_count": 2},
     r"kernel output feature dimension \(5\) must be divisible by feature_group_count \(2\)"),
    ((4, 3, 5), (5, 3, 2), {"batch_group_count": 2},
     r"kernel output feature dimension \(5\) must be divisible by batch_group_count \(2\)"),
    ((3, 3, 5), (4, 3, 2), {"batch_group_count": 2},
     r"input batch dimension \(3\) must be divisible by batch_group_count \(2\)"),
    ((4, 4, 5), (4, 2, 2), {"batch_group_count": 2, "feature_group_count": 2},
     r"at most one of feature_group_count \(2\) and batch_group_count \(2\) may be > 1"),
    ((1, 3, 5, 5), (4, 3, 2, 2), {"window_strides": (1,)},
     r"window_strides \(1,\) must have one entry per spatial dimension \(2\)"),
    ((1, 3, 5), (4, 3, 2), {"window_strides": (0,)}, r"window_strides \(0,\) must be positive"),
    ((1, 3, 5), (4, 3, 2), {"rhs_dilation": (0,)}, r"rhs_dilation \(0,\) must be positive"),
    ((1, 3, 5), (4, 3, 2), {"padding": [(-4, -2)]},
     r"padding \(-4, -2\) of spatial dimension 0 leaves a negative base size \(-1\)"),
    ((1, 3, 5), (4, 3, 0), {}, r"kernel spatial dimension 2 has size 0"),
    ((1, 3, 5), (4, 3, 2), {"feature_group_count": 0}, r"feature_group_count 0 must be positive"),
    ((1, 3, 5), (4, 3, 2), {"dimension_numbers": ConvDimensionNumbers((0, 1, 1), (0, 1, 2),
                                                                      (0, 1, 2))},
     r"dimension_numbers lhs_spec \(0, 1, 1\) must be a permutation of 0..2"),
    ((1, 3, 5), (4, 3, 2), {"dimension_numbers": ("NCH", "OIW", "NCH")},
     r"spatial letters must be the same"),
    ((1, 3, 5), (4, 3, 2), {"dimension_numbers": ("NCHW", "OIH", "NCH")},
     r"spec 'NCHW' must have one letter per dimension of the rank-3 operands"),
    ((1, 3, 5), (4, 3, 2), {"dimension_numbers": ("NNH", "OIH", "NCH")},
     r"spec 'NNH' must contain 'N' and 'C' exactly once"),
    ((1, 3, 5), (4, 3, 2), {"padding": "SAME", "lhs_dilation": (2,)},
     r"string padding 'SAME' is not defined with lhs_dilation \(2,\)"),
    ((1, 3, 5), (4, 3, 2), {"padding": "FULL"}, r"padding 'FULL' must be 'SAME'"),
    ((1, 3, 5), (4, 3, 2), {"padding": [1, 2]}, r"padding must be a string or \(low, high\)"),
    ((3,), (3,), {}, r"operands must have rank >= 2"),
])
def test_conv_shape_errors(lhs_shape, rhs_shape, kw, match):
    _conv_error(lhs_shape, rhs_shape, match, **kw)


def test_conv_operand_type_errors():
    _trace_error(lambda a, b: conv_general_dilated_p.bind(
        a, b, window_strides=(1,), padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
        dimension_numbers=ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)),
        feature_group_count=1, batch_group_count=1),
        np.ones((1, 2, 3), F32), np.ones((1, 2, 2), np.int32),
        match=r"conv_general_dilated: operand element types must be equal, got f32 and s32")
    _trace_error(lambda a: lax.conv(a, a, (1,), "VALID", preferred_element_type=np.int8),
                 np.ones((1, 1, 3), np.int32),
                 match=r"preferred_element_type s8 must not be narrower")


# ==========================================================================
# tracing and printing
# ==========================================================================

def test_ops_trace_and_print():
    a, b = np.ones((2, 3, 4), F32), np.ones((2, 4, 5), F32)
    text = make_graph(lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))),
                                                   preferred_element_type=np.float64))(a, b
                                                                                        ).as_text()
    assert "f64[2,3,5]{2,1,0} dot_general(" in text
    assert "dimension_numbers={{{2},{1}},{{0},{0}}}" in text and "preferred_element_type=f64" in text
    x, k = np.ones((1, 5, 5, 3), F32), np.ones((3, 3, 3, 8), F32)
    g = make_graph(lambda x, k: lax.conv_general_dilated(
        x, k, (2, 2), "SAME", rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"),
        precision=Precision.HIGHEST))(x, k)
    text = g.as_text()
    assert "f32[1,3,3,8]{3,2,1,0} conv_general_dilated(" in text
    assert "window_strides={2,2}, padding={{1,1},{2,2}}" in text
    assert ("dimension_numbers=ConvDimensionNumbers(lhs_spec={0,3,1,2}, rhs_spec={3,2,0,1}, "
            "out_spec={0,3,1,2})") in text
    for fn in (lambda x, k: lax.conv(x, k, (1,), "VALID"),
               lambda x, k: lax.conv_with_general_padding(x, k, (1,), [(1, 1)], (2,), (1,))):
        assert "conv_general_dilated(" in make_graph(fn)(np.ones((1, 2, 4), F32),
                                                          np.ones((3, 2, 2), F32)).as_text()
    assert "dot_general(" in make_graph(lambda v: lax.dot(v, v))(np.ones(3, F32)).as_text()


def test_conformance_mapping_reverses_the_window():
    # StableHLO's window_reversal runs the kernel's spatial dimensions backwards.
    from tests.conformance.harness import OpCall, TensorType
    from tests.conformance.ops_dot_conv import _convolution_op
    x, k = _ints((1, 5, 4, 2)), _ints((3, 2, 2, 4))
    dn = {"input_batch_dimension": 0, "input_feature_dimension": 3,
          "input_spatial_dimensions": [1, 2], "kernel_input_feature_dimension": 2,
          "kernel_output_feature_dimension": 3, "kernel_spatial_dimensions": [0, 1],
          "output_batch_dimension": 0, "output_feature_dimension": 3,
          "output_spatial_dimensions": [1, 2]}
    call = OpCall("convolution", [x, k], {"dimension_numbers": dn,
                                          "window_reversal": [True, False]},
                  result_types=[TensorType((1, 3, 3, 4), PT.S64)])
    want = lax.conv_general_dilated(x, k[::-1], (1, 1), "VALID",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_array_equal(_convolution_op(call), want)


def test_graph_evaluation_matches_eager():
    from numxla.tracer.graph import eval_graph
    x, k = _ints((2, 4, 5, 4)), _ints((3, 2, 2, 4))
    fn = lambda x, k: lax.conv_general_dilated(x, k, (1, 2), [(1, 0), (0, 2)], (2, 1), (1, 1),
                                               ("NHWC", "HWIO", "NCHW"), feature_group_count=2)
    g = make_graph(fn)(x, k)
    np.testing.assert_array_equal(eval_graph(g, x, k)[0], fn(x, k))


# ==========================================================================
# the NumPy layer
# ==========================================================================

@pytest.mark.parametrize("a_shape, b_shape", [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 5, 3), (4, 3, 6)),
    ((2, 5, 3), (3,)), ((), (3, 4)), ((2, 3), ()),
])
def test_numpy_dot_inner_outer(a_shape, b_shape):
    a, b = _ints(a_shape), _ints(b_shape)
    np.testing.assert_array_equal(xnp.dot(a, b), np.dot(a, b))
    np.testing.assert_array_equal(xnp.outer(a, b), np.outer(a, b))
    # inner contracts the last axes: give b's last axis a's length
    c = _ints(b_shape[:-1] + a_shape[-1:]) if a_shape and b_shape else b
    np.testing.assert_array_equal(xnp.inner(a, c), np.inner(a, c))


def test_numpy_vdot_tensordot():
    a, b = _ints((2, 3)), _ints((3, 2))
    assert int(xnp.vdot(a, b)) == np.vdot(a, b)
    x, y = _ints((2, 3, 4)), _ints((3, 4, 5))
    np.testing.assert_array_equal(xnp.tensordot(x, y), np.tensordot(x, y))
    z = _ints((4, 2))
    np.testing.assert_array_equal(xnp.tensordot(x, z, 1), np.tensordot(x, z, 1))
    np.testing.assert_array_equal(xnp.tensordot(x, y, 0), np.tensordot(x, y, 0))
    np.testing.assert_array_equal(xnp.tensordot(x, y, ((1, 2), (0, 1))),
                                  np.tensordot(x, y, ((1, 2), (0, 1))))
    np.testing.assert_array_equal(xnp.tensordot(x, y, (-2, 0)), np.tensordot(x, y, (-2, 0)))
    _trace_error(lambda p, q: xnp.tensordot(p, q, 4), x, y, match=r"tensordot: axes=4 must be")


def test_numpy_vdot_conjugates_its_first_operand():
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([2 - 1j, 1 + 1j], np.complex64)
    np.testing.assert_allclose(xnp.vdot(a, b), np.vdot(a, b))


@pytest.mark.parametrize("spec, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk,kl,li", [(2, 3), (3, 4), (4, 2), (2, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bik", [(1, 3, 4), (6, 4, 2)]),            # size-1 labels broadcast
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 2, 3, 4), (4, 5)]),
    ("i...,...i", [(3, 1, 2), (4, 2, 3)]),
    ("ij->ji", [(3, 4)]), ("ij", [(3, 4)]), ("ji", [(3, 4)]),
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("iji->j", [(3, 2, 3)]),
    ("ij->", [(3, 4)]), ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("ij,kj->ikj", [(3, 4), (2, 4)]), ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]),
    ("a b, b c -> c a", [(2, 3), (3, 4)]),
])
def test_numpy_einsum_matches_numpy(spec, shapes):
    ops = [_ints(s) for s in shapes]
    got = xnp.einsum(spec, *ops)
    want = np.einsum(spec.replace(" ", ""), *ops)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_numpy_einsum_traces_to_dot_general_and_errors():
    text = make_graph(lambda a, b: xnp.einsum("bij,bjk->bik", a, b))(
        np.ones((2, 3, 4), F32), np.ones((2, 4, 5), F32)).as_text()
    assert "dot_general(" in text
    _trace_error(lambda a, b: xnp.einsum("ij,jk->ik", a, b), np.ones((2, 3), F32),
                 np.ones((4, 5), F32), match=r"einsum: label 'j' has sizes 3 and 4")
    _trace_error(lambda a: xnp.einsum("ij,jk->ik", a), np.ones((2, 3), F32),
                 match=r"einsum: subscripts 'ij,jk->ik' name 2 operands, got 1")
    _trace_error(lambda a: xnp.einsum("ijk->i", a), np.ones((2, 3), F32),
                 match=r"einsum: subscripts term 'ijk' does not match an operand of rank 2")
    _trace_error(lambda a: xnp.einsum("ij->iz", a), np.ones((2, 3), F32),
                 match=r"einsum: output labels \['z'\] appear in no operand")
