"""``jax_enable_x64``: off by default, as in JAX (the suite turns it on in
conftest for the op set's 64-bit tests; here each mode is set explicitly)."""
import numpy as np
import pytest

import numxla.primitives as lax
from numxla.compile import jit
from numxla.primitives.dtypes import canonical_type
from numxla.tracer.config import config
from numxla.tracer.shapes import PrimitiveType as PT


@pytest.fixture
def x64_off(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)


def test_64_bit_inputs_become_32_bit_without_x64(x64_off):
    doubled = jit(lambda x: x * 2)(np.ones(3))
    assert doubled.dtype == np.float32 and np.asarray(doubled).tolist() == [2, 2, 2]
    assert jit(lambda x: x + 1)(np.arange(3)).dtype == np.int32
    assert jit(lambda x: x + 1)(np.arange(3, dtype=np.uint64)).dtype == np.uint32
    assert jit(lambda x: x * 1j)(np.ones(2)).dtype == np.complex64
    assert lax.add(np.ones(2), np.ones(2)).dtype == np.float32
    assert canonical_type(np.float64) is PT.F32 and canonical_type("f64") is PT.F64
    # a value typed f64 by an op keeps its type, eagerly as under jit
    x = np.float32([1.5, 2.25])
    def f(v):
        wide = lax.convert_element_type(v, "f64")
        return lax.mul(wide, wide)
    assert f(x).dtype == np.float64 and jit(f)(x).dtype == np.float64


def test_x64_keeps_64_bit_types(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)
    config.update("jax_enable_x64", True)
    assert config.jax_enable_x64
    assert jit(lambda x: x * 2)(np.ones(3)).dtype == np.float64
    assert canonical_type(np.float64) is PT.F64
    config.update("enable_x64", False)
    assert not config.jax_enable_x64
    # JAX's other settings are accepted (so programs that set them run) and kept
    config.update("jax_platform_name", "cpu")
    assert config.jax_platform_name == "cpu" and config.jax_debug_nans is False
