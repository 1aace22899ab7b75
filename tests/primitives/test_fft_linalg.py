"""fft, cholesky and triangular_solve: the documents' examples, shape errors at trace
time, and properties against independent formulations (explicit DFT sums,
numpy.linalg, scipy.linalg)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg

import numxla.primitives as lax
from numxla.primitives import FftType, Transpose
from numxla.tracer import make_graph
from numxla.primitives.fft_linalg import cholesky_p, triangular_solve_p
from numxla.tracer.core import ShapeError, impl_rules
from numxla.tracer.shapes import bf16_from_f32, bf16_to_f32

RNG = np.random.default_rng(20240603)


def _complex(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# -- independent FFT formulations: explicit DFT matrices applied axis by axis --------------

def _dft_matrix(n: int, inverse: bool) -> np.ndarray:
    k = np.arange(n)
    sign = 1 if inverse else -1
    w = np.exp(sign * 2j * np.pi * np.outer(k, k) / n)
    return w / n if inverse else w


def _dft_along(x: np.ndarray, axis: int, inverse: bool) -> np.ndarray:
    w = _dft_matrix(x.shape[axis], inverse)
    return np.moveaxis(np.tensordot(np.moveaxis(x, axis, -1), w.T, axes=1), -1, axis)


def _dft(x, k, inverse=False):
    out = x.astype(np.complex128)
    for axis in range(x.ndim - k, x.ndim):
        out = _dft_along(out, axis, inverse)
    return out


def _c2r(spectrum: np.ndarray, n: int) -> np.ndarray:
    """The real inverse DFT of length n from its n // 2 + 1 non-redundant terms:
    x[t] = (X0 + 2 sum_{0<k<n/2} Re(X_k e^{2 pi i k t / n}) + [n even] X_{n/2} (-1)^t) / n,
    where the DC and Nyquist terms contribute their real parts only."""
    t = np.arange(n)
    out = np.zeros(spectrum.shape[:-1] + (n,))
    for k in range(n // 2 + 1):
        term = spectrum[..., k:k + 1] * np.exp(2j * np.pi * k * t / n)
        weight = 1 if k == 0 or 2 * k == n else 2
        out += weight * term.real
    return out / n


def _irfft_reference(x, lengths):
    k = len(lengths)
    out = x.astype(np.complex128)
    for axis in range(x.ndim - k, x.ndim - 1):  # the outer axes first, complex -> complex
        out = _dft_along(out, axis, inverse=True)
    return _c2r(out, lengths[-1])


def _random_fft_case():
    k = int(RNG.integers(1, 4))
    batch = tuple(int(d) for d in RNG.integers(1, 4, size=int(RNG.integers(0, 3))))
    lengths = tuple(int(d) for d in RNG.integers(1, 7, size=k))
    return batch, lengths


# -- fft --------------------------------------------------------------------------------

def test_fft_spec_example_impulse_is_flat():
    x = np.array([1, 0, 0, 0], np.complex64)
    out = lax.fft(x, FftType.FFT, [4])
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, [1, 1, 1, 1])


def test_rfft_lengths_16_and_17_share_a_shape_that_irfft_tells_apart():
    # The document: RFFT(fft_length=[16]) has the output shape of RFFT(fft_length=[17]).
    x16, x17 = RNG.standard_normal(16), RNG.standard_normal(17)
    s16, s17 = lax.fft(x16, "rfft", [16]), lax.fft(x17, "RFFT", [17])
    assert s16.shape == s17.shape == (9,)
    np.testing.assert_allclose(lax.fft(s16, "IRFFT", [16]), x16, atol=1e-12)
    np.testing.assert_allclose(lax.fft(s17, "IRFFT", [17]), x17, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_and_ifft_match_explicit_dft_sums(dtype):
    for _ in range(25):
        batch, lengths = _random_fft_case()
        x = _complex(batch + lengths, dtype)
        k = len(lengths)
        fwd, inv = lax.fft(x, FftType.FFT, lengths), lax.fft(x, "ifft", lengths)
        assert fwd.dtype == inv.dtype == dtype and fwd.shape == inv.shape == x.shape
        tol = 1e-5 if dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(fwd, _dft(x, k), rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(inv, _dft(x, k, inverse=True), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype, out_dtype", [(np.float32, np.complex64),
                                              (np.float64, np.complex128)])
def test_rfft_is_the_non_redundant_half_of_the_dft(dtype, out_dtype):
    for _ in range(25):
        batch, lengths = _random_fft_case()
        x = RNG.standard_normal(batch + lengths).astype(dtype)
        out = lax.fft(x, FftType.RFFT, lengths)
        assert out.dtype == out_dtype
        assert out.shape == batch + lengths[:-1] + (lengths[-1] // 2 + 1,)
        want = _dft(x, len(lengths))[..., :lengths[-1] // 2 + 1]
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype, out_dtype", [(np.complex64, np.float32),
                                              (np.complex128, np.float64)])
def test_irfft_matches_the_real_inverse_dft(dtype, out_dtype):
    for _ in range(25):
        batch, lengths = _random_fft_case()
        x = _complex(batch + lengths[:-1] + (lengths[-1] // 2 + 1,), dtype)
        out = lax.fft(x, FftType.IRFFT, lengths)
        assert out.dtype == out_dtype and out.shape == batch + lengths
        tol = 1e-5 if dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(out, _irfft_reference(x, lengths), rtol=tol, atol=tol)


def test_fft_round_trips():
    for _ in range(10):
        batch, lengths = _random_fft_case()
        x = RNG.standard_normal(batch + lengths)
        np.testing.assert_allclose(lax.fft(lax.fft(x, "RFFT", lengths), "IRFFT", lengths), x,
                                   atol=1e-12)
        z = _complex(batch + lengths)
        np.testing.assert_allclose(lax.fft(lax.fft(z, "FFT", lengths), "IFFT", lengths), z,
                                   atol=1e-12)


def test_fft_keeps_zero_sized_dimensions():
    assert lax.fft(np.zeros((3, 0), np.float32), "RFFT", [0]).shape == (3, 0)
    assert lax.fft(np.zeros((3, 0), np.complex64), "IRFFT", [0]).shape == (3, 0)
    assert lax.fft(np.zeros((0, 4), np.complex64), "FFT", [4]).shape == (0, 4)
    assert lax.fft(np.zeros((0, 4), np.float64), "RFFT", [4]).dtype == np.complex128


@pytest.mark.parametrize("x, fft_type, lengths, message", [
    (np.zeros(4, np.complex64), "FFT", [], r"fft: fft_lengths \(\) must have 1 to 3 entries"),
    (np.zeros((2,) * 4, np.complex64), "FFT", [2, 2, 2, 2], r"must have 1 to 3 entries"),
    (np.zeros(4, np.complex64), "FFT", [2, 4], r"rank >= 2, got rank 1.*c64\[4\]"),
    (np.zeros(4, np.float32), "FFT", [4], r"FFT needs a complex operand, got f32"),
    (np.zeros(4, np.float32), "IFFT", [4], r"IFFT needs a complex operand"),
    (np.zeros(4, np.complex64), "RFFT", [4], r"RFFT needs an f32 or f64 operand, got c64"),
    (np.zeros(4, np.float16), "RFFT", [4], r"RFFT needs an f32 or f64 operand, got f16"),
    (np.zeros(4, np.float32), "IRFFT", [4], r"IRFFT needs a complex operand"),
    (np.zeros((3, 5), np.complex64), "FFT", [3, 4], r"dimension 1 is 5.*c64\[3,5\]"),
    (np.zeros((3, 5), np.float32), "RFFT", [4], r"RFFT needs the trailing dimensions to match"),
    (np.zeros((3, 5), np.complex64), "IRFFT", [2, 8], r"dimension 0 is 3"),
    (np.zeros((3, 4), np.complex64), "IRFFT", [3, 8], r"fft_lengths\[-1\] // 2 \+ 1 = 5, got 4"),
])
def test_fft_shape_errors_at_trace_time(x, fft_type, lengths, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(lambda v: lax.fft(v, fft_type, lengths))(x)


def test_fft_rejects_an_unknown_fft_type():
    with pytest.raises(ShapeError, match="fft: fft_type must be one of FFT, IFFT, RFFT, IRFFT"):
        lax.fft(np.zeros(4, np.complex64), "DCT", [4])


# -- cholesky ---------------------------------------------------------------------------------

def _hermitian_pd(batch, n, dtype):
    m = _complex(batch + (n, n)) if np.dtype(dtype).kind == "c" else \
        RNG.standard_normal(batch + (n, n))
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)).astype(dtype)


def _spoil(a: np.ndarray, keep_lower: bool) -> np.ndarray:
    """``a`` with garbage in the triangle an op must not read."""
    garbage = RNG.standard_normal(a.shape).astype(a.dtype) * 100
    n = a.shape[-1]
    mask = np.tril(np.ones((n, n), bool)) if keep_lower else np.triu(np.ones((n, n), bool))
    return np.where(mask, a, garbage)


def test_cholesky_spec_example():
    a = np.array([[1, 2, 3], [2, 20, 26], [3, 26, 70]], np.float32)
    np.testing.assert_allclose(lax.cholesky(a, lower=True),
                               [[1, 0, 0], [2, 4, 0], [3, 5, 6]], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_matches_numpy_reading_one_triangle(dtype, lower):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    for batch, n in [((), 1), ((), 5), ((3,), 4), ((2, 2), 6), ((2,), 0)]:
        a = _hermitian_pd(batch, n, dtype)
        out = lax.cholesky(_spoil(a, keep_lower=lower), lower=lower)
        assert out.dtype == dtype and out.shape == a.shape
        l_ref = np.linalg.cholesky(a.astype(np.complex128 if np.dtype(dtype).kind == "c"
                                            else np.float64))
        want = l_ref if lower else np.conj(np.swapaxes(l_ref, -1, -2))
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
        zero = np.triu(out, 1) if lower else np.tril(out, -1)
        assert not zero.any(), "the triangle not computed is zeros"


def test_cholesky_of_a_non_positive_definite_matrix_is_all_nan_for_that_matrix_only():
    good = _hermitian_pd((), 3, np.float64)
    bad = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # eigenvalue -1
    out = lax.cholesky(np.stack([good, bad, good]))
    assert np.isnan(out[1]).all()
    np.testing.assert_allclose(out[0], np.linalg.cholesky(good))
    np.testing.assert_allclose(out[2], np.linalg.cholesky(good))
    assert np.isnan(lax.cholesky(np.array([[-4.0]], np.float32))).all()


def test_cholesky_low_precision_types_are_computed_in_f32():
    a = _hermitian_pd((2,), 4, np.float64)
    want = np.linalg.cholesky(a)
    out16 = lax.cholesky(a.astype(np.float16))
    assert out16.dtype == np.float16
    np.testing.assert_allclose(out16.astype(np.float64), want, rtol=5e-3, atol=5e-3)
    # Eager NumPy values cannot carry bf16 (it is stored as uint16 words), so the
    # reference semantics are called as a compiled graph's interpreter would.
    out_bf16 = bf16_to_f32(impl_rules[cholesky_p](bf16_from_f32(a), lower=True))
    np.testing.assert_allclose(out_bf16, want, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("a, message", [
    (np.ones(3, np.float32), r"cholesky: 'a' must have rank >= 2, got rank 1.*f32\[3\]"),
    (np.ones((2, 3), np.float32), r"minor dimensions of 'a' must have equal size, got 2 and 3"),
    (np.ones((2, 2), np.int32), r"element type s32 is not allowed"),
])
def test_cholesky_shape_errors_at_trace_time(a, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(lax.cholesky)(a)


# -- triangular_solve ------------------------------------------------------------------------

def _triangular(batch, m, dtype, lower):
    """A well-conditioned triangular matrix (dominant diagonal), garbage in the other half."""
    is_complex = np.dtype(dtype).kind == "c"
    a = _complex(batch + (m, m)) if is_complex else RNG.standard_normal(batch + (m, m))
    a = a * 0.5 + np.eye(m) * (2 + m)
    return _spoil(a.astype(dtype), keep_lower=lower)


def _op_dense(a, lower, unit_diagonal, transpose, conjugate):
    """op(a) as a dense matrix, from the triangle that is read."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        m = a.shape[-1]
        t = t * (1 - np.eye(m)) + np.eye(m)
    if conjugate:
        t = np.conj(t)
    return np.swapaxes(t, -1, -2) if transpose else t


# (transpose_a as passed, conjugate_a) -> (transpose?, conjugate?) of op(a)
_TRANSPOSE_FORMS = {
    (False, False): (False, False), (True, False): (True, False),
    (True, True): (True, True), (False, True): (False, True),
    ("NO_TRANSPOSE", False): (False, False), ("TRANSPOSE", False): (True, False),
    ("ADJOINT", False): (True, True), (Transpose.ADJOINT, False): (True, True),
}


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
def test_triangular_solve_every_flag_combination_matches_numpy_linalg(dtype):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    for (left, lower, unit), ((transpose_a, conjugate_a), (tr, cj)) in itertools.product(
            itertools.product([True, False], repeat=3), _TRANSPOSE_FORMS.items()):
        batch, m, k = (2,) if lower else (), 4, 3
        a = _triangular(batch, m, dtype, lower)
        if unit:  # the diagonal must not be read
            a = a + np.eye(m, dtype=dtype) * 7
        b_shape = batch + ((m, k) if left else (k, m))
        b = (_complex(b_shape) if np.dtype(dtype).kind == "c" else
             RNG.standard_normal(b_shape)).astype(dtype)
        x = lax.triangular_solve(a, b, left_side=left, lower=lower, unit_diagonal=unit,
                                 transpose_a=transpose_a, conjugate_a=conjugate_a)
        assert x.dtype == dtype and x.shape == b.shape
        conj = cj and np.dtype(dtype).kind == "c"
        op = _op_dense(a, lower, unit, tr, conj).astype(np.complex128)
        want = (np.linalg.solve(op, b) if left else
                np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)),
                            -1, -2))
        np.testing.assert_allclose(x, want, rtol=tol, atol=tol,
                                   err_msg=f"left={left} lower={lower} unit={unit} "
                                           f"transpose_a={transpose_a} conj={conjugate_a}")


def test_triangular_solve_left_side_matches_scipy_solve_triangular():
    for trans, option in [(0, "NO_TRANSPOSE"), (1, "TRANSPOSE"), (2, "ADJOINT")]:
        for lower, unit in itertools.product([True, False], repeat=2):
            a = _triangular((3,), 5, np.complex128, lower)
            b = _complex((3, 5, 2))
            x = lax.triangular_solve(a, b, left_side=True, lower=lower, unit_diagonal=unit,
                                     transpose_a=option)
            for i in range(3):
                want = scipy.linalg.solve_triangular(a[i], b[i], trans=trans, lower=lower,
                                                     unit_diagonal=unit)
                np.testing.assert_allclose(x[i], want, rtol=1e-10, atol=1e-12)


def test_triangular_solve_spec_style_diagonal_example():
    a = np.diag([2.0, 4.0, 5.0]).astype(np.float32)
    b = np.array([[7.0], [8.0], [9.0]], np.float32)
    np.testing.assert_allclose(lax.triangular_solve(a, b, left_side=True, lower=True),
                               [[3.5], [2.0], [1.8]], rtol=1e-6)
    np.testing.assert_allclose(lax.triangular_solve(a, b, left_side=True, unit_diagonal=True),
                               b)


def test_triangular_solve_with_a_zero_on_the_diagonal_gives_non_finite_values():
    a = np.array([[1.0, 0.0], [1.0, 0.0]])
    x = lax.triangular_solve(a, np.array([[1.0], [3.0]]), left_side=True, lower=True)
    assert x[0, 0] == 1.0 and not np.isfinite(x[1, 0])


def test_triangular_solve_low_precision_types():
    a = _triangular((), 4, np.float64, True)
    b = RNG.standard_normal((4, 2))
    want = scipy.linalg.solve_triangular(a, b, lower=True)
    x16 = lax.triangular_solve(a.astype(np.float16), b.astype(np.float16), left_side=True,
                               lower=True)
    assert x16.dtype == np.float16
    np.testing.assert_allclose(x16.astype(np.float64), want, rtol=1e-2, atol=1e-2)
    x_bf16 = impl_rules[triangular_solve_p](
        bf16_from_f32(a), bf16_from_f32(b), left_side=True, lower=True, unit_diagonal=False,
        transpose_a=Transpose.NO_TRANSPOSE, conjugate_a=False)
    np.testing.assert_allclose(bf16_to_f32(x_bf16), want, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("a, b, kwargs, message", [
    (np.eye(3, dtype=np.float32), np.ones((3, 2), np.float64), {},
     r"'a' and 'b' must have the same element type, got f32 and f64"),
    (np.eye(3, dtype=np.int32), np.ones((3, 3), np.int32), {}, r"element type s32 is not"),
    (np.ones(3), np.ones(3), {}, r"'a' must have rank >= 2, got rank 1"),
    (np.ones((3, 2)), np.ones((3, 2)), {}, r"minor dimensions of 'a' must have equal size"),
    (np.eye(3), np.ones((2, 3, 2)), {},
     r"equal rank, got 2 and 3 .*f64\[3,3\]\{1,0\}, f64\[2,3,2\]"),
    (np.eye(3), np.ones((3, 2)), {"left_side": False},
     r"shared dimension does not match: a is 3x3 but b.dimensions\[-1\] \(left_side=False\)"),
    (np.eye(3), np.ones((2, 3)), {"left_side": True}, r"b.dimensions\[-2\] \(left_side=True\)"),
    (np.ones((2, 3, 3)), np.ones((4, 3, 1)), {"left_side": True},
     r"batch dimensions of 'a' \(2,\) and 'b' \(4,\) must be equal"),
])
def test_triangular_solve_shape_errors_at_trace_time(a, b, kwargs, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(lambda x, y: lax.triangular_solve(x, y, **kwargs))(a, b)


def test_triangular_solve_rejects_an_unknown_transpose_option():
    message = "triangular_solve: transpose_a must be one of NO_TRANSPOSE, TRANSPOSE"
    with pytest.raises(ShapeError, match=message):
        lax.triangular_solve(np.eye(2), np.ones((2, 2)), transpose_a="HERMITIAN")


# -- tracing -----------------------------------------------------------------------------

def test_ops_trace_and_print_with_their_parameters():
    def f(x, a, b):
        spectrum = lax.fft(x, "rfft", [8])
        l = lax.cholesky(a)
        return spectrum, lax.triangular_solve(l, b, left_side=True, lower=True,
                                              transpose_a="ADJOINT")

    text = make_graph(f)(np.zeros((2, 8), np.float32), np.eye(3, dtype=np.float32),
                         np.ones((3, 1), np.float32)).as_text()
    assert "fft(" in text and "fft_type=RFFT" in text and "fft_lengths={8}" in text
    assert "c64[2,5]" in text
    assert "cholesky(" in text and "lower=true" in text
    assert "triangular_solve(" in text and "transpose_a=ADJOINT" in text
    assert "left_side=true" in text
