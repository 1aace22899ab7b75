"""numxla under another name: after ``sys.modules["jax"] = numxla`` (the
usual way to run a JAX program on numxla without editing it), ``import
jax.numpy``, ``from jax.scipy.spatial.transform import Rotation`` and every
other submodule import give numxla's own module, the one ``numxla.numpy``...
names, rather than failing (``numxla.numpy`` is no folder of numxla) or
loading a second copy of a file under the other name (whose classes would
not be numxla's: ``isinstance`` and pytree registrations would break).

:class:`AliasFinder` sits on ``sys.meta_path``: for ``alias.rest`` where
``sys.modules[alias]`` is numxla and ``alias`` is not ``numxla``, it imports
``numxla.rest`` and hands that module over as ``alias.rest``."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

PACKAGE = __name__.rpartition(".")[0]


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        alias, _, rest = fullname.partition(".")
        if not rest or alias == PACKAGE or sys.modules.get(alias) is not sys.modules[PACKAGE]:
            return None
        own = f"{PACKAGE}.{rest}"
        if own not in sys.modules:
            try:
                if importlib.util.find_spec(own) is None:
                    return None                            # a ModuleNotFoundError, as usual
            except ModuleNotFoundError:
                return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        module = importlib.import_module(f"{PACKAGE}.{spec.name.partition('.')[2]}")
        self._own_spec = getattr(module, "__spec__", None)  # overwritten on import: put back
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._own_spec


def install() -> None:
    if not any(isinstance(f, AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())  # before the path finder: no second copy
