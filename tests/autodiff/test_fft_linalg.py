"""Derivatives and batching of fft, cholesky and triangular_solve
(autodiff/fft_linalg.py), against finite differences and per-slice results."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp, vmap
from tests.autodiff.util import check_vmap
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import bf16_to_f32


def _rng(seed):
    return np.random.default_rng(seed)


def _complex(shape, seed):
    rng = _rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _fft_arg(fft_type, shape, lengths, seed=0):
    if fft_type == "RFFT":
        return _rng(seed).standard_normal(shape)
    if fft_type == "IRFFT":
        return _complex(shape[:-1] + (lengths[-1] // 2 + 1,), seed)
    return _complex(shape, seed)


FFT_CASES = [("FFT", (3, 4), (4,)), ("FFT", (2, 3, 4), (3, 4)), ("IFFT", (5,), (5,)),
             ("IFFT", (2, 2, 3, 2), (2, 3, 2)), ("RFFT", (3, 6), (6,)), ("RFFT", (2, 5), (5,)),
             ("RFFT", (3, 4, 5), (4, 5)), ("IRFFT", (3, 6), (6,)), ("IRFFT", (2, 5), (5,)),
             ("IRFFT", (2, 3, 4), (3, 4)), ("IRFFT", (2, 2, 3, 3), (2, 3, 3))]


@pytest.mark.parametrize("fft_type,shape,lengths", FFT_CASES)
def test_fft_grads(fft_type, shape, lengths):
    x = _fft_arg(fft_type, shape, lengths)
    check_grads(lambda x: lax.fft(x, fft_type, lengths), (x,), order=2, modes=("fwd", "rev"))


def test_irfft_grad_numpy():
    """d/dX sum(w * irfft(X)) written out: the weights' RFFT, conjugated,
    scaled by 1/n and doubled for the terms that stand for a conjugate pair."""
    n = 6
    x, w = _complex((4,), 1), _rng(2).standard_normal(n)
    g = grad(lambda x: lax.reduce_sum(lax.mul(lax.fft(x, "IRFFT", (n,)), w), (0,)))(x)
    want = np.conj(np.fft.rfft(w)) / n * np.array([1, 2, 2, 1])
    np.testing.assert_allclose(g, want, atol=1e-12)


def _spd(shape, seed, dtype=np.float64):
    rng = _rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    n = shape[-1]
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


def _sym(a):
    """Hermitian part of ``a``, inside the function as JAX's tests do: the
    perturbations of check_grads then stay Hermitian."""
    at = lax.transpose(a, (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2))
    if np.iscomplexobj(a):
        at = lax.complex(lax.real(at), lax.neg(lax.imag(at)))
    return lax.mul(lax.add(a, at), np.asarray(0.5, a.dtype))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 2, 2)])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_grads(shape, lower):
    a = _spd(shape, 3)
    check_grads(lambda a: lax.cholesky(_sym(a), lower=lower), (a,), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_complex_and_unsymmetrised_grads(lower):
    # Without symmetrising, the op reads one triangle (and the real part of the
    # diagonal): its derivative ignores the other, and the rules agree.
    check_grads(lambda a: lax.cholesky(a, lower=lower), (_spd((2, 3, 3), 4, np.complex128),),
                order=2, modes=("fwd", "rev"))
    check_grads(lambda a: lax.cholesky(_sym(a), lower=lower),
                (_spd((3, 3), 5, np.complex128),), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: lax.cholesky(a, lower=lower), (_spd((3, 3), 6),), order=2,
                modes=("fwd", "rev"))


def _triangular(shape, seed, dtype=np.float64):
    rng = _rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a + 3 * np.eye(shape[-1])   # well conditioned whichever triangle is read


TS_PARAMS = list(itertools.product([True, False], [True, False], [False, True],
                                   [False, True]))


@pytest.mark.parametrize("left_side,lower,transpose_a,unit_diagonal", TS_PARAMS)
def test_triangular_solve_grads(left_side, lower, transpose_a, unit_diagonal):
    a = _triangular((2, 3, 3), 7)
    b = _rng(8).standard_normal((2, 3, 2) if left_side else (2, 2, 3))
    check_grads(lambda a, b: lax.triangular_solve(a, b, left_side=left_side, lower=lower,
                                                  transpose_a=transpose_a,
                                                  unit_diagonal=unit_diagonal),
                (a, b), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, True), ("ADJOINT", False),
                                                     ("TRANSPOSE", False), ("ADJOINT", True)])
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_complex_grads(transpose_a, conjugate_a, left_side):
    a = _triangular((3, 3), 9, np.complex128)
    b = _complex((3, 2) if left_side else (2, 3), 10)
    check_grads(lambda a, b: lax.triangular_solve(a, b, left_side=left_side, lower=False,
                                                  transpose_a=transpose_a,
                                                  conjugate_a=conjugate_a),
                (a, b), order=2, modes=("fwd", "rev"))


# -- vmap ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fft_type,shape,lengths", FFT_CASES[::2])
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_fft_vmap(fft_type, shape, lengths, in_axis):
    x = np.moveaxis(_fft_arg(fft_type, (3, *shape), lengths, 11), 0, in_axis)
    check_vmap(lambda x: lax.fft(x, fft_type, lengths), (x,), in_axes=in_axis)


@pytest.mark.parametrize("in_axis", [0, 1, 3])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_vmap(in_axis, lower):
    a = np.moveaxis(_spd((3, 2, 4, 4), 12), 0, in_axis)
    check_vmap(lambda a: lax.cholesky(a, lower=lower), (a,), in_axes=in_axis)


@pytest.mark.parametrize("axes", [(0, 0), (2, None), (None, 1), (1, 2)])
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_vmap(axes, left_side):
    a = _triangular((2, 3, 3), 13)
    b = _rng(14).standard_normal((2, 3, 4) if left_side else (2, 4, 3))
    a_shape = (2, 3, 3)
    b_shape = b.shape
    a = np.moveaxis(np.stack([a, a + 0.1 * _rng(15).standard_normal(a_shape)]), 0, axes[0]) \
        if axes[0] is not None else a
    b = np.moveaxis(np.stack([b, _rng(16).standard_normal(b_shape)]), 0, axes[1]) \
        if axes[1] is not None else b
    check_vmap(lambda a, b: lax.triangular_solve(a, b, left_side=left_side, lower=True,
                                                 transpose_a=True),
               (a, b), in_axes=axes)


def test_bf16_cholesky_derivatives_and_vmap_match_f32():
    """The constant factors of the Cholesky rules are bf16 values, not uint16
    words: the derivatives are the f32 ones, to bf16 precision."""
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    da = np.array([[1.0, 0.5], [0.5, -1.0]], np.float32)

    def f(m):
        return lax.reduce_sum(lax.mul(lax.cholesky(m), lax.cholesky(m)), (0, 1))

    def close(got, want):
        np.testing.assert_allclose(bf16_to_f32(np.asarray(got)), want, rtol=2e-2, atol=1e-2)
    close(grad(f)(bf16_array(a)), grad(f)(a))
    close(jvp(f, (bf16_array(a),), (bf16_array(da),))[1], jvp(f, (a,), (da,))[1])
    batch = np.stack([a, 2 * a])
    close(vmap(grad(f))(bf16_array(batch)), vmap(grad(f))(batch))
