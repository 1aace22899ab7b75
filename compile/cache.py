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

Loading is the first call's cost when the cache is warm, so it avoids what
Numba would do that a cached function does not need:

* Numba loads a cached overload lazily, in the first call, after
  *refreshing its target context* (importing and installing every lowering
  and typing registry it has: ~0.15-0.3 s, needed to compile, not to load).
  :func:`load_module` loads every cached overload of the module's functions
  right away, without that refresh: it initialises the runtime (NRT) the
  cached code links against, then does what Numba's own cache hit does
  (rebuild the compile result from the index entry matching the function's
  bytecode and this CPU, register it with the target context and the
  dispatcher, count a cache hit).  Any failure leaves the overload to
  Numba's usual lazy path, and a signature not in the index still compiles.
* Numba's BLAS calls (``np.dot``, ``dot_blas``, ``conv_blas``) import
  ``scipy.linalg.cython_blas`` on their first use, and so does Numba's first
  compilation in a process (to check that BLAS exists); that imports the
  whole ``scipy.linalg`` package.  :mod:`compile.blas_preload` registers the
  extension module alone (~3 ms instead of ~0.1-0.25 s).
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

__all__ = ["cache_dir", "load_module", "load_cached_overloads", "load_cached_overload",
           "NUMXLA_VERSION"]

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
    sources = sorted(kernels.glob("*.py")) + [Path(__file__).parent / "extern.py"]
    helpers = hashlib.sha256(b"".join(p.read_bytes() for p in sources))
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
            # helpers the code calls through a symbol: registered before it is linked
            from .extern import ensure_for_source
            ensure_for_source(source)
        except Exception:
            sys.modules.pop(name, None)
            raise
        loaded = 0
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) == name:
                loaded += load_cached_overloads(value)
        _preload_blas(source, compiling=not loaded)
        _modules[name] = module
        return module


# Calls in generated code that reach BLAS through Numba's helpers
# (``np.dot``, ``dot_blas``, ``conv_blas``).
_BLAS_MARKERS = ("np.dot(", "blas(", "dot_blas_")


def _preload_blas(source: str, compiling: bool) -> None:
    """Register SciPy's BLAS table before the first call needs it: when the
    code calls BLAS, or when Numba is about to compile (its first compilation
    in a process imports ``scipy.linalg.cython_blas`` to check for BLAS)."""
    if compiling or any(m in source for m in _BLAS_MARKERS):
        from . import blas_preload
        blas_preload.preload(blas_preload.BLAS)


def load_cached_overloads(dispatcher) -> int:
    """Load every overload of a ``cache=True`` Numba ``dispatcher`` that its
    on-disk index holds for the current function and CPU, without refreshing
    Numba's target context; returns how many (0 when there is nothing to
    load, when ``dispatcher`` is not a caching Numba dispatcher, or on any
    error — Numba then loads or compiles on the first call as usual)."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.dispatcher import Dispatcher
    except ImportError:  # pragma: no cover
        return 0
    if not isinstance(dispatcher, Dispatcher):
        return 0
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, FunctionCache) or not getattr(cache, "_enabled", False):
        return 0
    try:
        return _load_overloads(dispatcher, cache)
    except Exception:
        return 0


def load_cached_overload(dispatcher, args) -> bool:
    """:func:`load_cached_overloads` for the one signature ``args`` (a tuple of
    argument types): whether it is now loaded."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.dispatcher import Dispatcher
    except ImportError:  # pragma: no cover
        return False
    if not isinstance(dispatcher, Dispatcher):
        return False
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, FunctionCache) or not getattr(cache, "_enabled", False):
        return False
    try:
        return _load_overloads(dispatcher, cache, only=tuple(args)) > 0
    except Exception:
        return False


def _load_overloads(dispatcher, cache, only=None) -> int:
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import nrt
    index = cache._cache_file._load_index()  # {} when missing or stale
    if not index:
        return 0
    ctx = dispatcher.targetctx
    codegen = ctx.codegen()
    loaded = 0
    with global_compiler_lock:
        for key, data_name in index.items():
            sig = key[0]
            args = tuple(getattr(sig, "args", sig))
            if only is not None and args != only:
                continue
            # the key Numba would look up for sig: same bytecode, same CPU and options
            if cache._index_key(sig, codegen) != key:
                continue
            if args in dispatcher.overloads:
                continue
            try:
                data = cache._cache_file._load_data(data_name)
            except OSError:
                continue
            nrt.rtsys.initialize(ctx)  # what the cached code links against
            cres = cache._impl.rebuild(ctx, data)
            if cres.objectmode:
                continue
            ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            dispatcher.add_overload(cres)
            dispatcher._cache_hits[sig] += 1
            loaded += 1
    return loaded
