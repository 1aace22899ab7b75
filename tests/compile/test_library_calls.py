"""Library calls (``library_rules`` in compile/registry.py): equations a
program runs by calling a pre-compiled kernel with the geometry at run time
instead of generated code — batch norms, BLAS products (one, or loops of
them: batched products), convolutions (operands packed by strided copies
where needed; integer ones through ``conv_loop``), ``rev`` and non-bitcast
transposes, and results returned in another dense layout.  Each is checked against NumPy formulas or against the
reference semantics (the same function run un-jitted, op by op on NumPy),
in the layouts and sizes that take a library call and in those that fall
back to generated code."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff import value_and_grad
from numxla.compile import device_put, jit
from numxla.compile.kernel import Kernel, LibraryKernel
from numxla.compile.registry import LIBRARY_MAX_ELEMENTS

from .util import check_all, relaid

rng = np.random.default_rng(5)


def compiled(fn, *args, **options):
    return jit(fn, tiered=False, **options).lower(*args).compile()


def library_functions(program) -> set[str]:
    """The library kernels a compiled program calls, as ``module.function``."""
    return {f"{c.kernel.module.__name__}.{c.kernel.function}" for c in program.program.calls
            if isinstance(c.kernel, LibraryKernel)}


def generated_kernels(program) -> int:
    return len({id(c.kernel) for c in program.program.calls if isinstance(c.kernel, Kernel)})


# -- batch norm --------------------------------------------------------------------------------

def batch_norm_both_ways(x, scale, offset, dy, feature_index):
    y, mean, var = lax.batch_norm_training(x, scale, offset, epsilon=1e-3,
                                           feature_index=feature_index)
    grads = lax.batch_norm_grad(x, scale, mean, var, dy, epsilon=1e-3,
                                feature_index=feature_index)
    inferred = lax.batch_norm_inference(x, scale, offset, mean, var, epsilon=1e-3,
                                        feature_index=feature_index)
    return (y, mean, var, inferred, *grads)


def numpy_batch_norm(x, scale, offset, dy, fi):
    """The batch norm formulas in f64."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    axes = tuple(d for d in range(x.ndim) if d != fi)
    shape = [1] * x.ndim
    shape[fi] = -1
    mean, var = x.mean(axes), x.var(axes)
    sd = np.sqrt(var + 1e-3).reshape(shape)
    xhat = (x - mean.reshape(shape)) / sd
    y = xhat * scale.reshape(shape) + offset.reshape(shape)
    dscale, doffset = (dy * xhat).sum(axes), dy.sum(axes)
    dx = scale.reshape(shape) / sd * (dy - dy.mean(axes).reshape(shape) -
                                      xhat * (dy * xhat).mean(axes).reshape(shape))
    return y, mean, var, y, dx, dscale, doffset


def batch_norm_args(shape, fi, dtype):
    x = (rng.standard_normal(shape) * 3 + 5).astype(dtype)
    c = shape[fi]
    return (x, rng.uniform(0.5, 2, c).astype(dtype), rng.standard_normal(c).astype(dtype),
            rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fi", [3, 1, 0])  # features minor, in the middle, major
def test_batch_norms_in_dense_layouts_are_library_calls(dtype, fi):
    args = batch_norm_args((4, 6, 5, 3), fi, dtype)
    program = compiled(lambda x, s, o, dy: batch_norm_both_ways(x, s, o, dy, fi), *args)
    suffix = "f64" if dtype == np.float64 else "f32"
    assert {f"numxla.compile.kernels.norm.batch_norm_training_{suffix}",
            "numxla.compile.kernels.norm.batch_norm_grad",
            "numxla.compile.kernels.norm.batch_norm_inference"} <= library_functions(program)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    for got, want in zip(program(*args), numpy_batch_norm(*args, fi)):
        np.testing.assert_allclose(np.asarray(got), want, **tol)


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_relaid_batch_norms(shift):
    """Every value re-laid out (permuted, tiled, padded): library calls where
    the operand and its results share a dense layout, generated code elsewhere."""
    args = batch_norm_args((4, 6, 5, 3), 2, np.float32)
    fn = lambda x, s, o, dy: batch_norm_both_ways(x, s, o, dy, 2)
    for got, want in zip(relaid(fn, args, shift)(*args), numpy_batch_norm(*args, 2)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("case", ["large", "tiled", "f16"])
def test_batch_norms_beyond_the_library_are_generated(case):
    shape = (LIBRARY_MAX_ELEMENTS // 64 + 1, 8, 8, 1) if case == "large" else (4, 6, 5, 3)
    dtype = np.float16 if case == "f16" else np.float32
    x, scale, offset, dy = batch_norm_args(shape, 3, dtype)
    layout = "{3,2,1,0:T(2,2)}" if case == "tiled" else None
    args = (x if layout is None else device_put(x, layout), scale, offset, dy)
    fn = lambda x, s, o, dy: batch_norm_both_ways(x, s, o, dy, 3)
    program = compiled(fn, *args, in_layouts=(layout, None, None, None))
    assert not any("norm" in name for name in library_functions(program))
    tol = 2e-2 if dtype == np.float16 else 2e-4
    for got, want in zip(program(*args), numpy_batch_norm(x, scale, offset, dy, 3)):
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)


def test_a_graph_of_library_calls_has_no_generated_kernel():
    args = batch_norm_args((4, 6, 5, 3), 3, np.float32)[:3]
    program = compiled(lambda x, s, o: lax.batch_norm_training(x, s, o, epsilon=1e-3,
                                                               feature_index=3), *args)
    assert generated_kernels(program) == 0 and program.program.calls


# -- products and convolutions -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_products_of_strided_operands_call_blas_directly(dtype):
    a = rng.standard_normal((7, 5)).astype(dtype)
    b = rng.standard_normal((6, 5)).astype(dtype)
    program = compiled(lambda a, b: (a @ b.T, b @ a.T), a, b)
    assert library_functions(program) == {"numxla.compile.kernels.blas.dot_blas_call"}
    assert generated_kernels(program) == 0
    got1, got2 = program(a, b)
    tol = 1e-5 if dtype != np.float64 else 1e-12
    np.testing.assert_allclose(np.asarray(got1), a @ b.T, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(got2), b @ a.T, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 6, 5), (4, 7, 1)])
def test_batched_products_loop_over_blas_in_the_library(shape):
    """Batch dimensions are the library's loops around BLAS: one kernel for
    every shape, no generated code."""
    a = rng.standard_normal(shape).astype(np.float32)
    batch = tuple(range(a.ndim - 2))
    program = compiled(lambda a: lax.dot_general(a, a, (((a.ndim - 1,), (a.ndim - 1,)),
                                                        (batch, batch))), a)
    assert library_functions(program) == {"numxla.compile.kernels.blas.dot_blas_loops"}
    assert generated_kernels(program) == 0
    np.testing.assert_allclose(np.asarray(program(a)), np.einsum("...ij,...kj->...ik", a, a),
                               rtol=1e-5, atol=1e-5)


def test_products_looping_over_a_contraction_accumulate():
    """A contraction over two dimensions whose strides do not fold is a loop
    over K: the library's product accumulates after its first step."""
    a = rng.standard_normal((6, 4, 70)).astype(np.float64)
    b = rng.standard_normal((70, 4, 65)).astype(np.float64)
    fn = lambda a, b: lax.dot_general(a, b, (((1, 2), (1, 0)), ((), ())))  # noqa: E731
    program = compiled(fn, a, b)
    np.testing.assert_allclose(np.asarray(program(a, b)), np.einsum("mjk,kjn->mn", a, b),
                               rtol=1e-10, atol=1e-10)


def conv_loss(x, w, numbers):
    y = lax.conv_general_dilated(x, w, (1, 2), ((1, 1), (0, 1)), dimension_numbers=numbers)
    return xnp.sum(xnp.square(y)) * 0.5


@pytest.mark.parametrize("numbers", [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"),
                                     ("NHWC", "OIHW", "NCHW")])
def test_convolutions_and_their_gradients_with_packed_operands(numbers):
    """Forward and both gradients (the input's through ``rev`` of the kernel,
    the kernel's a convolution over the batch): conv_blas, after strided
    copies where an operand is not in a layout it reads."""
    lhs = {"NHWC": (3, 7, 6, 4), "NCHW": (3, 4, 7, 6)}[numbers[0]]
    rhs = {"HWIO": (3, 2, 4, 5), "OIHW": (5, 4, 3, 2)}[numbers[1]]
    x = rng.standard_normal(lhs).astype(np.float32)
    w = (rng.standard_normal(rhs) * 0.3).astype(np.float32)
    fn = value_and_grad(lambda x, w: conv_loss(x, w, numbers), argnums=(0, 1))
    program = compiled(fn, x, w)
    names = library_functions(program)
    assert "numxla.compile.kernels.conv.conv_blas_call" in names
    check_all(program(x, w), fn(x, w))  # against the reference semantics
    if numbers[0] == "NCHW":  # its features are not minor: packed
        assert "numxla.compile.kernels.copy.strided_copy" in names


def test_relaid_convolutions_against_the_reference():
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 3, 4)) * 0.3).astype(np.float32)
    fn = value_and_grad(lambda x, w: conv_loss(x, w, ("NHWC", "HWIO", "NHWC")), argnums=(0, 1))
    for shift in range(3):
        check_all(relaid(fn, (x, w), shift)(x, w), fn(x, w))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_convolutions_call_the_library_loop(dtype):
    """Integer convolutions take the library's conv_loop with the geometry at
    run time (no generated kernel); integers wrap in their type."""
    x = rng.integers(-50, 50, (2, 5, 4, 3)).astype(dtype)
    w = rng.integers(-9, 9, (2, 3, 3, 4)).astype(dtype)
    program = compiled(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")), x, w)
    assert library_functions(program) == {"numxla.compile.kernels.conv.conv_loop"}
    assert generated_kernels(program) == 0
    want = np.zeros((2, 4, 2, 4), dtype)
    for i in range(4):
        for j in range(2):
            want[:, i, j] = np.einsum("nhwc,hwco->no", x[:, i:i + 2, j:j + 3], w)
    np.testing.assert_array_equal(np.asarray(program(x, w)), want)


# -- copies ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16, np.complex128])
def test_rev_and_transposes_are_strided_copies(dtype):
    x = (rng.standard_normal((4, 3, 5)) * 4).astype(dtype)

    def fn(x):
        return lax.rev(x, (0, 2)), lax.transpose(x, (2, 0, 1)), lax.rev(x, (1,))
    program = compiled(fn, x)
    assert library_functions(program) == {"numxla.compile.kernels.copy.strided_copy"}
    a, b, c = program(x)
    np.testing.assert_array_equal(np.asarray(a), x[::-1, :, ::-1])
    np.testing.assert_array_equal(np.asarray(b), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(c), x[:, ::-1])


@pytest.mark.parametrize("layout", ["{0,1,2}", "{1,2,0}", "{2,1,0:T(2,2)}"])
def test_copies_in_other_layouts(layout):
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    program = compiled(lambda x: (lax.rev(x, (1, 2)), lax.transpose(x, (1, 2, 0))),
                       device_put(x, layout), in_layouts=layout)
    a, b = program(device_put(x, layout))
    np.testing.assert_array_equal(np.asarray(a), x[:, ::-1, ::-1])
    np.testing.assert_array_equal(np.asarray(b), x.transpose(1, 2, 0))


def test_compile_workers_build_library_kernels(tmp_path):
    """A worker asked for a library kernel (its module's path and function)
    compiles it into Numba's cache beside the module; other paths are refused."""
    import base64
    import pickle

    from numba import typeof

    from numxla.compile import worker
    from numxla.compile.kernel import library_kernel
    from numxla.compile.kernels import copy
    types = (typeof(np.empty(0, np.complex64)),) * 2 + (typeof(np.empty(0, np.int64)),)
    request = {"path": copy.__file__, "function": "strided_copy",
               "types": base64.b64encode(pickle.dumps(types)).decode()}
    assert worker.compile_request(request) >= 0
    assert library_kernel(copy.__file__, "strided_copy").has_code(types)
    (tmp_path / "copy.py").write_text("")
    with pytest.raises(ValueError):
        library_kernel(str(tmp_path / "copy.py"), "strided_copy")
