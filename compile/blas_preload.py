"""Make SciPy's Cython BLAS/LAPACK tables importable without ``scipy.linalg``.

Numba-compiled code reaches BLAS (``np.dot``) and LAPACK through function
pointers that Numba's C helpers fetch, on first use, by importing
``scipy.linalg.cython_blas`` / ``scipy.linalg.cython_lapack``.  Importing
those runs ``scipy.linalg/__init__`` first, which pulls in ~80 modules
(``scipy._lib._array_api`` and, through it, ``numpy.f2py``): about 0.1 s on
an idle machine, 0.25 s on a busy one, paid by the first call of every
process that multiplies matrices, even when its compiled code came from the
disk cache.

The Cython modules themselves are self-contained extension modules (their
only dependency is the BLAS library SciPy ships).  :func:`preload` loads the
extension file directly under its full dotted name and registers it in
``sys.modules``, where Numba's import finds it (an import of a dotted name
already in ``sys.modules`` does not run its parents): 2-3 ms.  The module
object is the one SciPy's own import would use, so there is still one copy of
it in the process.  A one-shot import hook binds it as the attribute of
``scipy.linalg`` when (if ever) that package is imported, so
``scipy.linalg.cython_blas`` keeps working as usual.

Anything unexpected (no SciPy, another layout of the package, an error while
loading) leaves everything to the regular import.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading

__all__ = ["preload", "BLAS", "LAPACK"]

BLAS = "scipy.linalg.cython_blas"
LAPACK = "scipy.linalg.cython_lapack"

_PARENT = "scipy.linalg"
_lock = threading.Lock()
_preloaded: dict[str, object] = {}


def preload(*names: str) -> None:
    """Register each of ``names`` (``BLAS``, ``LAPACK``) in ``sys.modules``
    without importing ``scipy.linalg``; a no-op for those already there."""
    with _lock:
        for name in names:
            if name in sys.modules or name in _preloaded:
                continue
            if _PARENT in sys.modules:  # the package is loaded: a plain import is cheap
                continue
            module = _load_extension(name)
            if module is not None:
                _preloaded[name] = module
                _install_parent_hook()


def _load_extension(name: str):
    try:
        scipy_spec = importlib.util.find_spec("scipy")
        if scipy_spec is None or not scipy_spec.submodule_search_locations:
            return None
        leaf = name.rpartition(".")[2]
        for root in scipy_spec.submodule_search_locations:
            folder = os.path.join(root, "linalg")
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(folder, leaf + suffix)
                if os.path.isfile(path):
                    loader = importlib.machinery.ExtensionFileLoader(name, path)
                    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                    module = importlib.util.module_from_spec(spec)
                    sys.modules[name] = module
                    try:
                        loader.exec_module(module)
                    except BaseException:
                        sys.modules.pop(name, None)
                        raise
                    return module
    except Exception:
        return None
    return None


class _BindChildren(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """On the first import of ``scipy.linalg``, load it as usual, then bind the
    preloaded extension modules as its attributes (what the import system does
    for a submodule it loads itself)."""

    def __init__(self) -> None:
        self._real = None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PARENT or self._real is not None:
            return None
        self._remove()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        self._real = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        module.__spec__.loader = self._real
        module.__loader__ = self._real
        try:
            self._real.exec_module(module)
        finally:
            for name, child in _preloaded.items():
                leaf = name.rpartition(".")[2]
                if getattr(module, leaf, None) is None and sys.modules.get(name) is child:
                    setattr(module, leaf, child)

    def _remove(self) -> None:
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


_hook: _BindChildren | None = None


def _install_parent_hook() -> None:
    global _hook
    if _hook is None:
        _hook = _BindChildren()
        sys.meta_path.insert(0, _hook)
