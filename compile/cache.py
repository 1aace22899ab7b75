"""Compiled-code cache on disk.

Numba's ``cache=True`` needs a real source file, so each generated kernel
module is written to ``<cache dir>/k_<hash>.py`` — named by the hash of its
source, so an entry can never be stale for other source — and executed from
there; Numba keeps its compiled code in ``__pycache__`` beside it and a new
process loads it instead of compiling.

The cache directory is ``$NUMXLA_CACHE_DIR`` or ``~/.cache/numxla``, with a
sub-directory per (numxla, Numba, llvmlite, Python, CPU) so that no entry is
read by a build that did not write it; the kernel helpers' sources are in
each entry's stamp instead (below), so that editing one helper module
discards only the code that links it.  It is created private to the user
(mode 0700).  Files are written to a temporary name and renamed into place,
so two processes filling the cache at once never see a partial file.

The cache heals: a process killed mid-write or a full disk must cost a
compile, never a crash.

* Every file it reads is checked before use.  A module's source must equal
  what its name hashes (else it is rewritten), and the module is executed
  from the source in memory (no ``.pyc``).  Numba's index (``.nbi``) and
  code (``.nbc``) files of generated modules and of the kernel helpers
  carry a SHA-256 trailer (:func:`protect`); a data file's also covers its
  index key.  A file that fails the check, or that cannot be unpickled or
  rebuilt by LLVM, is deleted and counts as a miss: Numba compiles again
  and rewrites it.  Garbage object code is never linked.  An entry is
  stamped with Numba's stamp of its own file and with the sources of the
  helper modules its code links (:func:`helper_modules`: a helper's own
  module and what it imports, transitively; for generated code, those of
  the helpers it names): editing a helper makes every caller compile again
  rather than serve code linked to the old callee, and leaves the rest.  (Numba reads the
  checked files too: ``pickle`` ignores the trailer.)
* A directory that cannot be created or written (a file in the way, a
  read-only or full file system, deleted and not re-creatable) turns the
  disk cache off for the rest of the process, with one :class:`CacheWarning`:
  modules are then compiled in memory with caching off
  (:func:`disk_cache_usable` says which).  A failed write never raises into
  the caller.

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

import ast
import contextlib
import functools
import hashlib
import io
import itertools
import linecache
import os
import pickle
import platform
import re
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from types import ModuleType

from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.dispatcher import Dispatcher

__all__ = ["cache_dir", "load_module", "load_code_of", "has_cached_code",
           "load_cached_overloads", "load_cached_overload", "disk_cache_usable", "protect",
           "CacheWarning", "NUMXLA_VERSION"]

NUMXLA_VERSION = "0.1.0"

_lock = threading.Lock()
_modules: dict[tuple[str | None, str], ModuleType] = {}  # (directory, name)


class CacheWarning(UserWarning):
    """The disk cache is unusable: generated code is compiled in memory, uncached."""


@functools.lru_cache(maxsize=1)
def _build_key() -> str:
    import llvmlite
    import numba
    try:
        from llvmlite import binding
        cpu = binding.get_host_cpu_name()
    except Exception:  # pragma: no cover - depends on the LLVM build
        cpu = platform.machine()
    # (The kernel helpers' sources are not part of it: each entry is stamped
    # with those of the helpers its code links, :func:`helpers_digest`.)
    parts = (NUMXLA_VERSION, numba.__version__, llvmlite.__version__,
             platform.python_version(), cpu, platform.machine())
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


# -- what an entry's machine code depends on ----------------------------------------------

_COMPILE_DIR = Path(__file__).parent


@functools.lru_cache(maxsize=1)
def _helper_files() -> dict[str, Path]:
    """The files whose code compiled functions may link, by module name
    relative to this package: the kernel helpers (``kernels.blas``...) and
    :mod:`compile.extern` (the code of its entries' calls)."""
    files = {f"kernels.{p.stem}": p for p in sorted((_COMPILE_DIR / "kernels").glob("*.py"))}
    files["extern"] = _COMPILE_DIR / "extern.py"
    return files


_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_TOP_LEVEL = re.compile(r"^(?:def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


def _imported(module: str, source: str) -> set[str]:
    """The helper modules (names of :func:`_helper_files`) that ``module`` imports."""
    files = _helper_files()
    found = set()
    for dots, name, names in _IMPORT.findall(source):
        if dots:
            base = ("compile." + module).split(".")[:-len(dots)]
            target = ".".join(base + ([name] if name else []))
        else:
            target = name.removeprefix(__package__.rsplit(".", 1)[0] + ".")  # "numxla."
        target = target.removeprefix("compile.")
        candidates = [target] + [f"{target}.{n}" for n in re.findall(r"\w+", names)]
        found.update(c for c in candidates if c in files and c != module)
    return found


@functools.lru_cache(maxsize=1)
def _helper_graph() -> tuple[dict[str, frozenset[str]], dict[str, set[str]]]:
    """Each helper module's closure (itself and what it imports, transitively),
    and the modules defining each public top-level name of the kernel helpers
    (read off the sources with regular expressions: parsing them all would
    cost every process ~50 ms)."""
    imports, owner = {}, {}
    for module, path in _helper_files().items():
        source = path.read_text()
        imports[module] = _imported(module, source)
        if module == "extern":
            continue
        for name in filter(None, (a or b for a, b in _TOP_LEVEL.findall(source))):
            if not name.startswith("_"):
                owner.setdefault(name, set()).add(module)
    closure = {}
    for module in imports:
        seen, todo = set(), [module]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(imports[m])
        closure[module] = frozenset(seen)
    return closure, owner


def helper_modules(fn) -> frozenset[str]:
    """The helper modules whose code the compiled ``fn`` (a Python function)
    links: its own module's closure when it is a helper, and the closure of
    each helper it names (generated code names what it calls)."""
    closure, owner = _helper_graph()
    own = fn.__module__.removeprefix(f"{__package__}.")
    names, codes = set(), [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    used = {m for n in names for m in owner.get(n, ())} | ({own} if own in closure else set())
    return frozenset().union(*(closure[m] for m in used)) if used else frozenset()


@functools.lru_cache(maxsize=None)
def helpers_digest(modules: frozenset[str]) -> str:
    """The SHA-256 of the sources of ``modules`` (:func:`helper_modules`)."""
    files = _helper_files()
    digest = hashlib.sha256()
    for module in sorted(modules):
        digest.update(module.encode() + b"\0" + files[module].read_bytes() + b"\0")
    return digest.hexdigest()


def _root() -> str:
    return os.environ.get("NUMXLA_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "numxla")


def cache_dir() -> Path:
    """This build's cache directory, created (private to the user) if missing;
    raises ``OSError`` when it cannot be."""
    root = _root()
    path = Path(root) / _build_key()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    for p in (Path(root), path):
        try:
            if p.stat().st_mode & 0o077:
                os.chmod(p, 0o700)
        except OSError:
            pass
    return path


# -- whether the disk is used -------------------------------------------------------------

_failed: dict[str, OSError] = {}  # cache root -> the error that turned it off
_probed: set[str] = set()  # cache roots checked to be writable
_warned = threading.Lock()  # taken (never released) by the one warning


def disk_cache_usable() -> bool:
    """Whether generated modules are written to and loaded from the disk cache,
    so that another process (the compile worker) can hand code over through
    it.  A directory deleted meanwhile is re-created (True); once the cache
    root has failed (:class:`CacheWarning`) it is False for the rest of the
    process."""
    return _usable_dir() is not None


def _usable_dir() -> Path | None:
    """The cache directory (re-created if it was deleted), or None once the
    disk cache is off; the first call checks that Numba can write beside it."""
    root = _root()
    if root in _failed:
        return None
    try:
        directory = cache_dir()
        if root not in _probed:
            numba_dir = directory / "__pycache__"
            numba_dir.mkdir(mode=0o700, exist_ok=True)
            tempfile.TemporaryFile(dir=numba_dir).close()
            _probed.add(root)
        return directory
    except OSError as error:
        _give_up(error)
        return None


def _give_up(error: OSError) -> None:
    """Turn the disk cache (at the current root) off for the rest of the
    process, and say so: once a process."""
    root = _root()
    _failed.setdefault(root, error)
    if _warned.acquire(blocking=False):
        warnings.warn(f"numxla's disk cache {root} is unusable ({error}): generated code is "
                      "compiled in memory from now on, and not cached for other processes",
                      CacheWarning, stacklevel=3)


# -- generated modules --------------------------------------------------------------------

def _write_once(path: Path, text: str) -> None:
    """Make ``path`` hold ``text``: left alone when it does, else (new, or
    damaged: its name is the hash of what it must hold) written to a temporary
    name and renamed into place."""
    data = text.encode()
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def load_module(source: str, *, load_code: bool = True, directory: str | None = None
                ) -> ModuleType:
    """Import generated ``source`` from the disk cache (writing it if new), or
    compile it in memory when the cache is unusable; ``load_code``: also load
    its functions' machine code from the cache (:func:`load_code_of`), else
    leave that to a later call.  ``directory``: another process's cache
    directory to import it from (a compile server compiling for a client)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    name = f"numxla_k_{digest}"  # (Numba names its cache files after the module)
    with _lock:
        module = _modules.get((directory, name))
        if module is None:
            module = _modules[(directory, name)] = _import(name, source, f"k_{digest}.py",
                                                           directory)
    if load_code:
        load_code_of(module)
    return module


def _import(name: str, source: str, file_name: str, directory: str | None = None
            ) -> ModuleType:
    """Execute ``source`` as module ``name``: as the file ``file_name`` of the
    cache directory (or ``directory``), its functions' disk cache checked
    (:func:`protect`), or, when the directory is unusable, in memory with
    Numba's caching off."""
    directory = Path(directory) if directory is not None else _usable_dir()
    if directory is not None:
        try:
            _write_once(directory / file_name, source)
        except OSError as error:
            _give_up(error)
            directory = None
    if directory is not None:
        filename = str(directory / file_name)
        code = compile(source, filename, "exec")
    else:
        filename = f"<numxla in-memory {file_name}>"
        code = _without_disk_cache(source, filename)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = ModuleType(name)
    module.__file__ = filename
    module.__numxla_source__ = source
    sys.modules[name] = module
    try:
        exec(code, vars(module))
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _protect_kernels()  # imported by now; before any of the module's code is compiled
    for value in list(vars(module).values()):
        if getattr(value, "__module__", None) == name:
            protect(value)
    return module


def _without_disk_cache(source: str, filename: str):
    """``source`` compiled with every decorator's ``cache=`` argument False:
    Numba can only cache a function defined in a file."""
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                for keyword in getattr(decorator, "keywords", ()):
                    if keyword.arg == "cache":
                        keyword.value = ast.copy_location(ast.Constant(False), keyword.value)
    return compile(tree, filename, "exec")


def load_code_of(module: ModuleType) -> int:
    """Load the machine code the disk cache holds for ``module``'s functions
    (once per module); returns how many overloads were loaded.  Code that
    calls helpers through a symbol needs them registered first
    (``compile.extern.ensure_for_source``: :class:`compile.kernel.Kernel` does it)."""
    with _lock:
        if getattr(module, "__numxla_loaded__", False):
            return 0
        source = module.__numxla_source__
        loaded = 0
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) == module.__name__:
                loaded += load_cached_overloads(value)
        _preload_blas(source, compiling=not loaded)
        module.__numxla_loaded__ = True
        return loaded


def has_cached_code(dispatcher) -> bool:
    """Whether the disk cache's index lists any machine code for ``dispatcher``
    (cheap: reads the index, loads nothing)."""
    cache = _checked(dispatcher)
    return cache is not None and bool(cache._cache_file._load_index())


# Calls in generated code that reach BLAS through Numba's helpers
# (``np.dot``, ``dot_blas``, ``conv_blas``).
_BLAS_MARKERS = ("np.dot(", "blas(", "dot_blas_", "conv_blas_")


def _preload_blas(source: str, compiling: bool) -> None:
    """Register SciPy's BLAS table before the first call needs it: when the
    code calls BLAS, or when Numba is about to compile (its first compilation
    in a process imports ``scipy.linalg.cython_blas`` to check for BLAS)."""
    if compiling or any(m in source for m in _BLAS_MARKERS):
        from . import blas_preload
        blas_preload.preload(blas_preload.BLAS)


# -- loading machine code -----------------------------------------------------------------

def load_cached_overloads(dispatcher) -> int:
    """Load every overload of a ``cache=True`` Numba ``dispatcher`` that its
    on-disk index holds for the current function and CPU, without refreshing
    Numba's target context; returns how many (0 when there is nothing to
    load, when ``dispatcher`` is not a caching Numba dispatcher, or on any
    error — Numba then loads or compiles on the first call as usual)."""
    try:
        cache = _checked(dispatcher)
        return _load_overloads(dispatcher, cache) if cache is not None else 0
    except Exception:
        return 0


def load_cached_overload(dispatcher, args) -> bool:
    """:func:`load_cached_overloads` for the one signature ``args`` (a tuple of
    argument types): whether it is now loaded."""
    try:
        cache = _checked(dispatcher)
        return cache is not None and _load_overloads(dispatcher, cache, only=tuple(args)) > 0
    except Exception:
        return False


def _load_overloads(dispatcher, cache: "_CheckedCache", only=None) -> int:
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import nrt
    index = cache._cache_file._load_index()  # {} when missing, damaged or stale
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
            nrt.rtsys.initialize(ctx)  # what the cached code links against
            cres = cache.rebuild(ctx, key, data_name)
            if cres is None or cres.objectmode:
                continue
            ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            dispatcher.add_overload(cres)
            dispatcher._cache_hits[sig] += 1
            loaded += 1
    return loaded


# -- Numba's cache files, checked ---------------------------------------------------------

def protect(dispatcher) -> bool:
    """Give a ``cache=True`` Numba ``dispatcher`` the checked disk cache
    (:class:`_CheckedCache`; idempotent, loads nothing); whether it has it."""
    return _checked(dispatcher) is not None


def _checked(dispatcher) -> "_CheckedCache | None":
    """``dispatcher``'s disk cache, made a checked one; None if it has none."""
    if not isinstance(dispatcher, Dispatcher):
        return None
    cache = dispatcher._cache
    if type(cache) is FunctionCache:  # Numba's own (not a NullCache, nor someone else's)
        cache = dispatcher._cache = _CheckedCache(cache)
    return cache if isinstance(cache, _CheckedCache) and cache._enabled else None


_swept: set[str] = set()


def _protect_kernels() -> None:
    """Protect the dispatchers of this package's modules (the cached kernel
    helpers that generated code calls or links) before they compile or load:
    on import (``compile.jit`` imports the kernels first) and before a
    generated module runs (once per module, after its import has finished)."""
    prefix = f"{__package__}."
    for name, module in list(sys.modules.items()):
        if (name.startswith(prefix) and name not in _swept and module is not None
                and not getattr(getattr(module, "__spec__", None), "_initializing", False)):
            _swept.add(name)
            for value in list(vars(module).values()):
                protect(value)


_MAGIC = b"\0numxla-sha256"  # then the SHA-256 of (label, payload); label: the index key


class _CheckedFile(IndexDataCacheFile):
    """Numba's index and data files, each with a checksum trailer.  A file
    that is missing, fails the check or cannot be unpickled reads as a miss
    (and is deleted); Numba then compiles again and rewrites it."""

    def _save_index(self, overloads) -> None:
        self._write(self._index_path, pickle.dumps(self._version, protocol=-1) +
                    self._dump((self._source_stamp, overloads)))

    def _load_index(self) -> dict:
        payload = self._read(self._index_path)
        if payload is None:
            return {}
        try:
            version, rest = _unpickle_prefix(payload)
            if version != self._version:
                return {}
            stamp, overloads = pickle.loads(rest)
        except Exception:
            self.discard(self._index_path)
            return {}
        return overloads if stamp == self._source_stamp else {}

    def save(self, key, data) -> None:
        """Numba's save, the key written into the data file's checksum."""
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)
            overloads[key] = name
            self._save_index(overloads)
        self._write(self._data_path(name), self._dump(data), key)

    def load(self, key):
        name = self._load_index().get(key)
        return None if name is None else self.load_data(name, key)

    def load_data(self, name: str, key):
        """The data file ``name`` for index ``key``; None if missing or damaged."""
        path = self._data_path(name)
        payload = self._read(path, key)
        try:
            return None if payload is None else pickle.loads(payload)
        except Exception:
            self.discard(path)
            return None

    def _write(self, path: str, payload: bytes, key=None) -> None:
        with self._open_for_write(path) as f:
            f.write(payload)
            f.write(_MAGIC + _checksum(payload, key))

    def _read(self, path: str, key=None) -> bytes | None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        end = len(data) - len(_MAGIC) - 32
        if end < 0 or data[end:-32] != _MAGIC or data[-32:] != _checksum(data[:end], key):
            self.discard(path)
            return None
        return data[:end]

    @staticmethod
    def discard(path: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _checksum(payload: bytes, key) -> bytes:
    label = b"" if key is None else repr(key).encode()
    return hashlib.sha256(len(label).to_bytes(8, "little") + label + payload).digest()


def _unpickle_prefix(data: bytes):
    """The first pickled object in ``data``, and the bytes after it."""
    stream = io.BytesIO(data)
    return pickle.load(stream), stream.read()


class _CheckedCache(FunctionCache):
    """Numba's function cache over :class:`_CheckedFile`: an entry that LLVM
    cannot rebuild is deleted and compiled again, and a write that fails
    (directory gone, disk full) turns the disk cache off instead of raising."""

    def __init__(self, cache: FunctionCache):  # takes over ``cache``'s state
        vars(self).update(vars(cache))
        # Numba stamps an entry with its own file only; its code inlines or
        # links helpers of other files, so their sources count too
        stamp = (cache._cache_file._source_stamp, helpers_digest(helper_modules(cache._py_func)))
        self._cache_file = _CheckedFile(cache._cache_path, self._impl.filename_base, stamp)

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        name = self._cache_file._load_index().get(key)
        return None if name is None else self.rebuild(target_context, key, name)

    def rebuild(self, target_context, key, name: str):
        """The compile result in data file ``name`` (for index ``key``); None
        when it is missing, damaged or not rebuildable (then deleted)."""
        data = self._cache_file.load_data(name, key)
        if data is None:
            return None
        try:
            return self._impl.rebuild(target_context, data)
        except Exception:
            self._cache_file.discard(self._cache_file._data_path(name))
            return None

    def save_overload(self, sig, data) -> None:
        try:
            super().save_overload(sig, data)
        except OSError as error:
            _give_up(error)


_protect_kernels()
