"""A NumPy-style layer over the XLA op set (``import primitives.numpy as xnp``).

Functions broadcast like NumPy, promote element types like JAX (Python
scalars are weak) and accept traced values, NumPy arrays and Python scalars
alike.  The modules here also define the Python operators and array methods
of traced values (``x + 1``, ``x @ w``, ``x[1:, None]``, ``x.T``, ``x.sum(0)``)
by filling ``tracer.core.OPERATORS``.

* ``_core``: arithmetic, broadcasting, ``where``, ``matmul``, ``sum``/``mean``, reshaping;
* ``_math``: element-wise math (``sin``, ``abs``, ``clip``, ``power``...);
* ``_indexing``: indexing, slicing, joining, array creation;
* ``_reductions``: ``max``/``min``/``prod``/``argmax``/``sort``...;
* ``_linalg``: linear algebra and convolutions;
* ``_gather_indexing``: advanced indexing, ``take``, ``x.at[...]`` updates (gather/scatter).
"""
from ._core import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._gather_indexing import *  # noqa: F401,F403
from . import _core, _gather_indexing, _indexing, _linalg, _math, _reductions

__all__ = (_core.__all__ + _math.__all__ + _indexing.__all__ + _reductions.__all__
           + _linalg.__all__ + _gather_indexing.__all__)
