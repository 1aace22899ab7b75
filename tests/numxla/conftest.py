"""Fixtures of the JAX-facade tests: JAX's element-type modes, with ``jit`` on
tier 0 (``NUMXLA_TIERED=reference``: traced, evaluated without compiling)."""
import pytest

from numxla.tracer.config import config


@pytest.fixture
def x64(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", True)
    monkeypatch.setenv("NUMXLA_TIERED", "reference")


@pytest.fixture
def x64_off(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)
    monkeypatch.setenv("NUMXLA_TIERED", "reference")
