"""Kernels: generated Numba modules, compiled once per source and shared.

A :class:`Kernel` is one generated module (``graph_fn``: a cluster of a
program, or a whole graph) imported from the disk cache.  Kernels are
interned by source text: every program holding a cluster of the same
generated code — the layers of a deep model, another model, another
process through the disk cache — shares one Numba dispatcher and its
machine code.  A :class:`LibraryKernel` is a pre-compiled kernel of
:mod:`compile.kernels` that programs call directly (a library call),
compiled once per argument types into Numba's cache beside its module.
:func:`compile_counts` says how many kernels this process
compiled and how many it loaded, for the tests and ``NUMXLA_LOG_COMPILES``.
"""
from __future__ import annotations

import functools
import importlib
import threading
import time
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue
from numxla.tracer.shapes import PrimitiveType, Shape

from . import kernels
from .cache import has_cached_code, load_cached_overload, load_code_of, load_module
from .extern import ensure_for_source
from .runtime import to_buffer
from .tiers import log, log_level

__all__ = ["Kernel", "kernel_for", "LibraryKernel", "library_kernel", "library_kernel_of",
           "module_source", "buffer_type", "kernel_buffer",
           "compile_counts"]

_lock = threading.Lock()
_kernels: dict[str, "Kernel"] = {}
_counts = {"compiled": 0, "compiled_here": 0, "loaded": 0, "library_loaded": 0}


def compile_counts() -> dict[str, int]:
    """Kernels compiled for this process (``compiled``: here or by a worker;
    ``compiled_here``: by Numba in this process), generated kernels found
    already compiled in the disk cache (``loaded``), and library kernels
    found in Numba's cache beside their modules (``library_loaded``)."""
    return dict(_counts)


class Kernel:
    """One generated module and its ``graph_fn`` dispatcher (``directory``:
    the cache directory it lives in, when not this process's)."""
    function = "graph_fn"

    def __init__(self, source: str, directory: str | None = None):
        self.source = source
        self.module = load_module(source, load_code=False, directory=directory)
        self.path = self.module.__file__
        self.fn = self.module.graph_fn
        self.lines = source.count("\n")

    def _load(self) -> None:
        """The helpers the code calls through a symbol (registered before the
        code is linked), then whatever code the disk cache holds."""
        ensure_for_source(self.source)
        load_code_of(self.module)

    def has_code(self, types: tuple, *, built: bool = False) -> bool:
        """Whether machine code for argument ``types`` is loaded (from the disk
        cache, or compiled here): a call will not wait for Numba.  ``built``:
        a worker has just compiled it for this process (counted as compiled)."""
        if types in self.fn.overloads:
            return True
        if not has_cached_code(self.fn):
            return False
        self._load()
        if types in self.fn.overloads or load_cached_overload(self.fn, types):
            _counts["compiled" if built else "loaded"] += 1
            return True
        return False

    def compile(self, types: tuple) -> float:
        return _compile_here(self, types, f"kernel {self.module.__name__} "
                                          f"({self.lines} generated lines)")


class LibraryKernel:
    """A ``cache=True`` Numba function of :mod:`compile.kernels` that programs
    call directly: ``path`` and ``function`` name it to a compile worker."""
    source = None

    def __init__(self, fn: Any):
        from . import blas_preload
        blas_preload.preload(blas_preload.BLAS)  # what loading its code imports, cheaply
        self.fn = fn
        self.function = fn.py_func.__name__
        self.module = importlib.import_module(fn.py_func.__module__)
        self.path = self.module.__file__

    def has_code(self, types: tuple, *, built: bool = False) -> bool:
        """Whether machine code for ``types`` is loaded, or now loaded from Numba's cache."""
        if types in self.fn.overloads:
            return True
        if load_cached_overload(self.fn, types):
            _counts["compiled" if built else "library_loaded"] += 1
            return True
        return False

    def compile(self, types: tuple) -> float:
        return _compile_here(self, types,
                             f"library kernel {self.module.__name__}.{self.function}")

    def _load(self) -> None:
        """(Its helpers are linked into it: nothing to register.)"""


def _compile_here(kernel: "Kernel | LibraryKernel", types: tuple, what: str) -> float:
    """Compile ``kernel`` for ``types`` here, unless its code is loaded; the seconds taken."""
    if kernel.has_code(types):
        return 0.0
    start = time.perf_counter()
    kernel._load()
    kernel.fn.compile(types)
    seconds = time.perf_counter() - start
    _counts["compiled"] += 1
    _counts["compiled_here"] += 1
    log.log(log_level(), "%s: compiled in %.2f s", what, seconds)
    return seconds


_library_kernels: dict[int, LibraryKernel] = {}


def library_kernel_of(fn: Any) -> LibraryKernel:
    """The library kernel of the Numba function ``fn`` (one per function)."""
    with _lock:
        kernel = _library_kernels.get(id(fn))
        if kernel is None:
            kernel = _library_kernels[id(fn)] = LibraryKernel(fn)
        return kernel


def library_kernel(path: str, function: str) -> LibraryKernel:
    """The library kernel ``function`` of the module of :mod:`compile.kernels`
    at ``path`` (how a compile worker finds what a client asks for)."""
    from pathlib import Path
    module = importlib.import_module(f"{kernels.__name__}.{Path(path).stem}")
    if Path(module.__file__).resolve() != Path(path).resolve():
        raise ValueError(f"{path} is not a module of {kernels.__name__}")
    return library_kernel_of(getattr(module, function))


def kernel_for(body: str, *, parallel: bool) -> Kernel:
    """The kernel of the generated function ``body`` (one per distinct source)."""
    source = module_source(body, parallel=parallel)
    with _lock:
        kernel = _kernels.get(source)
        if kernel is None:
            kernel = _kernels[source] = Kernel(source)
        return kernel


@functools.lru_cache(maxsize=1)
def _helper_imports() -> str:
    """Import lines for every public Numba function of the kernel modules:
    the scalar helpers generated code may call (``div_signed``, ``exp_f32``...)."""
    import pkgutil
    from numba.core.registry import CPUDispatcher
    from numba.extending import _Intrinsic
    lines, seen = [], {}
    for info in sorted(pkgutil.iter_modules(kernels.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        exported = set(getattr(module, "__all__", ()))
        names = sorted(n for n, v in vars(module).items() if not n.startswith("_") and (
            (isinstance(v, CPUDispatcher) and getattr(v, "__module__", None) == module.__name__)
            or (n in exported and isinstance(v, (_Intrinsic, int, float)))))
        for n in names:
            if n in seen:
                raise RuntimeError(f"kernel helper {n} is defined in {seen[n]} and {info.name}")
            seen[n] = info.name
        if names:
            lines.append(f"from {module.__name__} import {', '.join(names)}")
    return "\n".join(lines)


def module_source(body: str, *, parallel: bool) -> str:
    """A generated module: the helper imports, then ``body`` (``def graph_fn``) jitted."""
    flags = ", parallel=True" if parallel else ""
    header = ("# Generated by numxla.compile: one kernel of a compiled program.\n"
              "import math\nimport cmath\n\nimport numpy as np\n"
              "from numba import njit, prange\n\n"
              f"{_helper_imports()}\n\n\n"
              f"@njit(cache=True, error_model='numpy', nogil=True, no_cfunc_wrapper=True{flags})\n")
    return header + body


def buffer_type(shape: Shape) -> Any:
    """The Numba type of the buffer (or tuple of buffers) holding a value of ``shape``."""
    from numba.core import types as nt
    from numba.np.numpy_support import from_dtype
    if shape.is_token:
        return nt.Array(nt.boolean, 1, "C")
    if shape.is_tuple:
        return nt.BaseTuple.from_types([buffer_type(s) for s in shape.tuple_shapes])
    return nt.Array(from_dtype(storage_dtype(shape)), 1, "C")


def storage_dtype(shape: Shape) -> np.dtype:
    """The element type of the buffer of an array ``shape`` (uint16 words for f16 and bf16)."""
    return np.dtype(np.uint16) if shape.element_type is PrimitiveType.F16 else shape.dtype


def kernel_buffer(value: Any, aval: AbstractValue) -> np.ndarray:
    """``value``'s physical buffer as kernels take it: writable, f16 as its
    uint16 words (Numba has no f16 arithmetic)."""
    buffer = to_buffer(value, aval)
    if not buffer.flags.writeable:
        buffer = buffer.copy()
    return buffer.view(np.uint16) if buffer.dtype == np.float16 else buffer


def argument_types(shapes: Sequence[Shape], *, workspace: bool = False,
                   sizes: bool = False) -> tuple:
    """The Numba types of a kernel's arguments: buffers of ``shapes``, then
    the workspace (uint8) and the run-time sizes (int64) when it takes them."""
    from numba.core import types as nt
    extra = [nt.Array(nt.uint8, 1, "C")] if workspace else []
    if sizes:
        extra.append(nt.Array(nt.int64, 1, "C"))
    return tuple([buffer_type(s) for s in shapes] + extra)
