"""``jax.dtypes``: the dtype helpers JAX programs call (``canonicalize_dtype``,
``float0``, ``result_type``, ``issubdtype``, ``bfloat16``...)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as _jnp
from numxla.tracer.config import canonicalize_type as _canonicalize_type
from numxla.tracer.core import FLOAT0 as float0
from numxla.tracer.shapes import PrimitiveType as _PT

__all__ = ["canonicalize_dtype", "float0", "result_type", "issubdtype", "bfloat16", "finfo",
           "iinfo", "is_weakly_typed", "dtype", "prng_key", "extended"]

bfloat16 = _jnp.bfloat16
finfo = _jnp.finfo
iinfo = _jnp.iinfo
issubdtype = _jnp.issubdtype
dtype = _jnp.dtype


class extended(np.generic):  # noqa: N801 (JAX's name)
    """JAX's abstract extended dtype: a NumPy scalar type, so that
    ``issubdtype`` (NumPy's and numxla's) places key dtypes under it."""


class prng_key(extended):  # noqa: N801
    """JAX's abstract key dtype: the dtype of ``numxla.random.key`` arrays
    (``key<fry>``) is a subtype."""


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """``dtype`` as values of it are stored: 64-bit types narrowed unless x64 is on."""
    return _canonicalize_type(_PT.from_dtype(np.dtype(dtype))).numpy_dtype


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    out = _jnp.result_type(*args)
    if return_weak_type_flag:
        from numxla.primitives.dtypes import result_type as _rt
        return out, _rt(*args)[1]
    return out


def is_weakly_typed(x: Any) -> bool:
    from numxla.tracer.core import abstractify
    return abstractify(x).weak_type
