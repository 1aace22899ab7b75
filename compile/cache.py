"""Compiled-code cache on disk.

Numba's ``cache=True`` needs a real source file, so each generated kernel
module is written to ``<cache dir>/k_<hash>.py`` — named by the hash of its
source, so an entry can never be stale for other source — and imported from
there; Numba keeps its compiled code in ``__pycache__`` beside it and a new
process loads it instead of compiling.

The cache directory is ``$NUMXLA_CACHE_DIR`` or ``~/.cache/numxla``, with a
sub-directory per (numxla, Numba, llvmlite, Python, CPU, kernel helpers'
source) so that no entry is read by a build that did not write it.  It is created private to the user
(mode 0700).  Files are written to a temporary name and linked into place,
so two processes filling the cache at once never see a partial file, and a
file already present is never rewritten (which would change its timestamp
and invalidate Numba's index).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import platform
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

__all__ = ["cache_dir", "load_module", "NUMXLA_VERSION"]

NUMXLA_VERSION = "0.1.0"

_lock = threading.Lock()
_modules: dict[str, ModuleType] = {}


@functools.lru_cache(maxsize=1)
def _build_key() -> str:
    import llvmlite
    import numba
    try:
        from llvmlite import binding
        cpu = binding.get_host_cpu_name()
    except Exception:  # pragma: no cover - depends on the LLVM build
        cpu = platform.machine()
    # Compiled graphs embed the kernel helpers' code, which Numba's index does
    # not track: a change to any of them must start a fresh cache.
    kernels = Path(__file__).parent / "kernels"
    helpers = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(kernels.glob("*.py"))))
    parts = (NUMXLA_VERSION, numba.__version__, llvmlite.__version__,
             platform.python_version(), cpu, platform.machine(), helpers.hexdigest())
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def cache_dir() -> Path:
    root = os.environ.get("NUMXLA_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "numxla")
    path = Path(root) / _build_key()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    for p in (Path(root), path):
        try:
            if p.stat().st_mode & 0o077:
                os.chmod(p, 0o700)
        except OSError:
            pass
    return path


def _write_once(path: Path, text: str) -> None:
    if path.exists():
        if path.read_text() == text:
            return
        path.unlink(missing_ok=True)  # a corrupted or foreign entry: replace it
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            os.link(tmp, path)  # atomic; fails if another process won the race
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)


def load_module(source: str) -> ModuleType:
    """Import generated ``source`` from the disk cache (writing it if new)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    name = f"numxla_k_{digest}"
    with _lock:
        module = _modules.get(name)
        if module is not None:
            return module
        path = cache_dir() / f"k_{digest}.py"
        _write_once(path, source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception:
            sys.modules.pop(name, None)
            raise
        _modules[name] = module
        return module
