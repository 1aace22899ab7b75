"""How much of ``jax.numpy`` and ``jax.numpy.linalg`` ``primitives.numpy`` covers,
counted against JAX's public names kept as data in ``tests/data`` (written
offline from the installed JAX; the header line says which version and how).
A failure lists the names that are missing."""
from __future__ import annotations

from pathlib import Path

import pytest

import numxla.primitives.numpy as xnp
DATA = Path(__file__).resolve().parents[1] / "data"

# The names that are not covered, and why (kept short: the test prints the full list).
NOT_COVERED = {
    "roots": "needs the eigenvalues of a non-symmetric (companion) matrix",
    "ufunc": "JAX's ufunc class (reduce/accumulate/outer/at of any function)",
    "frompyfunc": "makes a ufunc",
    "eig": "a non-symmetric eigensolver: no op for it",
    "eigvals": "a non-symmetric eigensolver: no op for it",
}


def _names(filename: str) -> list[str]:
    lines = (DATA / filename).read_text().splitlines()
    assert lines[0].startswith("#") and "JAX" in lines[0], "the header names the JAX version"
    return [line.strip() for line in lines[1:] if line.strip()]


def _coverage(module, filename: str) -> tuple[float, list[str], int]:
    names = _names(filename)
    missing = [n for n in names if not hasattr(module, n)]
    return 1 - len(missing) / len(names), missing, len(names)


@pytest.mark.parametrize("module, filename, required", [
    (xnp, "jax_numpy_names.txt", 0.85),
    (xnp.linalg, "jax_numpy_linalg_names.txt", 0.80),
], ids=["numpy", "linalg"])
def test_coverage_of_jax_public_names(module, filename, required):
    covered, missing, total = _coverage(module, filename)
    assert covered >= required, (
        f"{module.__name__} has {total - len(missing)} of the {total} public names of "
        f"{filename} ({covered:.1%}, required {required:.0%}); missing: {', '.join(missing)}")


def test_the_name_lists_are_sorted_and_distinct():
    for filename in ("jax_numpy_names.txt", "jax_numpy_linalg_names.txt"):
        names = _names(filename)
        assert names == sorted(set(names)), filename


def test_every_uncovered_name_is_accounted_for():
    """Apart from the narrow element types numxla has no type for (float8,
    float6, float4, int1..int4), the names still missing are the ones listed
    above, with their reasons."""
    _, missing, _ = _coverage(xnp, "jax_numpy_names.txt")
    _, missing_linalg, _ = _coverage(xnp.linalg, "jax_numpy_linalg_names.txt")
    narrow = {n for n in missing if n.startswith(("float4", "float6", "float8", "int1", "int2",
                                                  "int4", "uint1", "uint2", "uint4"))}
    assert set(missing + missing_linalg) - narrow <= set(NOT_COVERED), \
        sorted(set(missing + missing_linalg) - narrow - set(NOT_COVERED))


def test_all_lists_only_what_exists():
    assert [n for n in xnp.__all__ if not hasattr(xnp, n)] == []
    assert [n for n in xnp.linalg.__all__ if not hasattr(xnp.linalg, n)] == []
