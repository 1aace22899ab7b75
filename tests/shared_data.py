"""Where the tests find other projects' data, never copied into this
repository: the conformance vectors in ``NUMXLA_CONFORMANCE_DIR`` (default
``../shared/conformance`` beside the checkout) and the specification's
seeds in ``NUMXLA_SEEDS_DIR`` (default ``seeds`` beside the conformance
directory).

A test that needs them skips, with the reason, when they are absent — a
clone of the repository alone passes — unless ``NUMXLA_REQUIRE_SHARED=1``
(``.ci/run`` sets it): then their absence is an error, so CI cannot pass
by skipping them.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["conformance_file", "seeds_dir"]

_ROOT = Path(__file__).resolve().parents[1]


def _conformance_dir() -> Path:
    return Path(os.environ.get("NUMXLA_CONFORMANCE_DIR") or
                _ROOT.parent / "shared" / "conformance")


def _missing(what: str, path: Path, variable: str):
    reason = f"{what} not found at {path} (set {variable})"
    if os.environ.get("NUMXLA_REQUIRE_SHARED", "") not in ("", "0"):
        raise RuntimeError(f"NUMXLA_REQUIRE_SHARED is set, but {reason}")
    pytest.skip(reason, allow_module_level=True)


def conformance_file(name: str) -> Path:
    """A file of the conformance vectors (a skip, or an error, when absent)."""
    path = _conformance_dir() / name
    if not path.is_file():
        _missing(f"the conformance vectors' {name}", path, "NUMXLA_CONFORMANCE_DIR")
    return path


def seeds_dir() -> Path:
    """The specification's seeds (a skip, or an error, when absent)."""
    path = Path(os.environ.get("NUMXLA_SEEDS_DIR") or _conformance_dir().parent / "seeds")
    if not path.is_dir():
        _missing("the specification's seeds", path, "NUMXLA_SEEDS_DIR")
    return path
