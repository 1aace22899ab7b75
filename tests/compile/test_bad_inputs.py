"""The JAX/NumPy habits a user brings, through ``jit``: each input either
gives the right answer (checked against NumPy) or an error naming the
problem, never a wrong answer or a crash."""
import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.compile import jit

_A = np.arange(12, dtype=np.float32).reshape(3, 4)


def _read_only(a):
    a = a.copy()
    a.setflags(write=False)
    return a


@pytest.fixture(scope="module")
def affine():
    return jit(lambda x: x * 2 + 1)


@pytest.mark.parametrize("value", [
    2.0, 3, True, np.array(2.0, np.float32), np.ones((0, 3), np.float32),
    _A[:, ::2], _A[::-1], np.asfortranarray(_A), _read_only(_A),
    np.array([np.nan, np.inf, -np.inf, -0.0], np.float32),
    np.broadcast_to(np.float32(1), (3, 4)), np.arange(3), np.array([200], np.uint8),
    np.array([1 + 2j], np.complex64), np.ones(3, ">f4"), np.ones(3, np.float16),
], ids=["float", "int", "bool", "0-d", "zero-size", "non-contiguous", "negative-stride",
        "fortran", "read-only", "nan-inf", "broadcast-view", "int64", "u8-wraps", "complex",
        "big-endian", "f16"])
def test_array_likes_compute_as_numpy(affine, value):
    got = np.asarray(affine(value))
    with np.errstate(over="ignore"):
        expected = np.asarray(value) * 2 + 1  # (u8 wraps, as XLA's integers do)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("value, error, pattern", [
    (np.array([1, "a"], dtype=object), ValueError, "unsupported dtype 'object'"),
    (np.zeros(2, dtype=[("a", "f4")]), ValueError, "unsupported dtype"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), ValueError, "unsupported dtype 'datetime64"),
    ("abc", TypeError, "str is not a valid numxla value"),
    (np.ma.array([1.0, 2.0], mask=[0, 1]), TypeError, "masked array"),
])
def test_values_without_an_element_type_are_refused(affine, value, error, pattern):
    with pytest.raises(error, match=pattern):
        affine(value)


def test_wrong_arguments_and_structures():
    add = jit(lambda d: d["a"] + d["b"])
    np.testing.assert_array_equal(np.asarray(add({"a": np.ones(2), "b": np.ones(2)})), [2, 2])
    with pytest.raises(KeyError):
        add({"a": np.ones(2), "c": np.ones(2)})
    with pytest.raises(TypeError, match=r"shapes \(2,\), \(3,\)"):
        add({"a": np.ones(2), "b": np.ones(3)})
    scaled = jit(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(TypeError, match="static argument 1 must be hashable, got list"):
        scaled(np.ones(2), [1, 2])
    with pytest.raises(TypeError, match="static argument 1 must be hashable, got ndarray"):
        scaled(np.ones(2), np.ones(2))
    one = jit(lambda x: x)
    with pytest.raises(TypeError, match="positional argument"):
        one(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        one()


def test_shape_errors_name_op_and_shapes():
    with pytest.raises(TypeError, match=r"dot_general: contracting dimension sizes differ.*"
                                        r"f64\[2,3\].*f64\[4,5\]"):
        jit(lambda a, b: a @ b)(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(TypeError, match=r"reshape: new_sizes \(7,\) has 7 elements"):
        jit(lambda a: a.reshape(7))(np.ones(6))
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 6"):
        jit(lambda a: a[10])(np.ones(6))
    with pytest.raises(IndexError, match="boolean mask index must be concrete"):
        jit(lambda a: a[a > 2])(np.arange(6.0))
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        jit(lambda a: a + 2 ** 40)(np.ones(2, np.int32))
    with pytest.raises(TypeError, match="list is not a valid numxla value"):
        lax.add([1.0], [2.0])
    np.testing.assert_array_equal(np.asarray(jit(lambda a: a[1:3])(np.arange(6.0))), [1, 2])
    assert float(xnp.sum(np.array([1.0, 2.0]))) == 3.0


def test_static_arguments_by_position_or_keyword():
    """JAX completes static_argnums and static_argnames from each other."""
    x = np.ones(2, np.float32)
    by_name = jit(lambda v, n: v * n, static_argnames="n")
    by_number = jit(lambda v, n: v * n, static_argnums=1)
    for f in (by_name, by_number):
        np.testing.assert_array_equal(np.asarray(f(x, 3)), [3, 3])
        np.testing.assert_array_equal(np.asarray(f(x, n=4)), [4, 4])
    keyword_only = jit(lambda v, *, k: v * k, static_argnames="k")
    np.testing.assert_array_equal(np.asarray(keyword_only(x, k=2)), [2, 2])
    with pytest.raises(TypeError, match="must be hashable"):
        by_name(x, n=[1])
