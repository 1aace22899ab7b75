"""numxla with JAX's names: ``import numxla as jax``.

The transforms (``jit``, ``grad``, ``vmap``...), the array layers
(``numxla.numpy`` is ``primitives.numpy``, ``numxla.lax`` is ``primitives``)
and the libraries JAX programs reach for (``random``, ``nn``, ``tree_util``,
``debug``, ``scipy``) under the spellings of ``jax``.  Submodules load on
first use.
"""
from __future__ import annotations

import importlib
import os as _os
import sys
from typing import Any, Callable

import numpy as _np

# Installed, tracer/ primitives/ compile/ autodiff/ sit inside this package (pyproject's
# package-dir).  In a source checkout they are this folder's siblings: look there too.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(__path__[0], "compile")) and _os.path.isfile(
        _os.path.join(_checkout, "compile", "__init__.py")):
    __path__.append(_checkout)

import numxla.primitives as _lax
import numxla.primitives.numpy as _jnp
from numxla.autodiff import grad, jacfwd, jacrev, jvp, value_and_grad, vjp, vmap
from numxla.autodiff.custom import checkpoint, custom_jvp, custom_vjp, remat
from numxla.compile import jit, pmap
from numxla.primitives.side_effects import stop_gradient
from numxla.tracer import pytree as _pytree
from numxla.tracer.config import config

from numxla.tracer.core import FLOAT0 as float0

from ._api import (ShapeDtypeStruct, block_until_ready, checkpoint_policies, clear_caches,
                   closure_convert, custom_gradient, default_backend, default_device,
                   default_matmul_precision, device_count, device_get, device_put, devices,
                   disable_jit, ensure_compile_time_eval, eval_shape, hessian, jacobian,
                   linear_transpose, linearize, local_device_count, local_devices, make_jaxpr,
                   make_mesh, named_call, named_scope, print_environment_info, process_count,
                   process_index, pure_callback, typeof)
from ._compat import *  # noqa: F401,F403  (settings as context managers, process queries...)
from ._compat import __all__ as _compat_names
from . import _aliases
from ._shard_map import shard_map
from .sharding import NamedSharding, P, reshard, set_mesh

# ``import numxla.numpy as jnp`` and ``numxla.lax``: the existing modules under JAX's names
sys.modules[__name__ + ".numpy"] = _jnp
sys.modules[__name__ + ".lax"] = _lax
for _sub in ("linalg", "fft"):  # import numxla.numpy.linalg as la
    sys.modules[f"{__name__}.numpy.{_sub}"] = getattr(_jnp, _sub)
numpy = _jnp
lax = _lax
_aliases.install()  # ``sys.modules["jax"] = numxla``: ``import jax.numpy`` finds numxla.numpy
# ``jax.Array``: the type of every numxla array (eager, compiled, traced), for isinstance
Array = _jnp.ndarray

tree_map: Callable[..., Any] = _pytree.tree_map
tree_leaves = _pytree.tree_leaves
tree_structure = _pytree.tree_structure

_SUBMODULES = ("random", "nn", "tree_util", "tree", "debug", "scipy", "dtypes", "errors",
               "example_libraries", "experimental", "typing", "ops", "flatten_util", "sharding",
               "ad_checkpoint", "custom_derivatives", "distributed", "image", "profiler",
               "stages", "custom_batching", "test_util")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'numxla' has no attribute {name!r}")


__all__ = ["jit", "grad", "value_and_grad", "vmap", "jvp", "vjp", "jacfwd", "jacrev", "hessian",
           "linearize", "pmap", "device_put", "device_get", "block_until_ready", "Array",
           "ShapeDtypeStruct", "eval_shape", "make_jaxpr", "stop_gradient", "custom_jvp",
           "custom_vjp", "checkpoint", "remat", "config", "devices", "local_devices",
           "device_count", "local_device_count", "process_index", "process_count",
           "default_backend", "numpy", "lax", "tree_map", "tree_leaves", "tree_structure",
           "jacobian", "linear_transpose", "pure_callback", "custom_gradient", "closure_convert",
           "disable_jit", "ensure_compile_time_eval", "default_matmul_precision",
           "default_device", "named_scope", "named_call", "typeof", "clear_caches",
           "print_environment_info", "checkpoint_policies", "float0", "make_mesh", "shard_map",
           "NamedSharding", "P", "reshard", "set_mesh", *_compat_names,
           *_SUBMODULES]
del _np
