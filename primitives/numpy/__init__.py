"""A NumPy-style layer over the XLA op set (``import primitives.numpy as xnp``).

Functions broadcast like NumPy, promote element types like JAX (Python
scalars are weak) and accept traced values, NumPy arrays and Python scalars
alike.  The modules here also define the Python operators and array methods
of traced values (``x + 1``, ``x @ w``, ``x[1:, None]``, ``x.T``, ``x.sum(0)``)
by filling ``tracer.core.OPERATORS``.

* ``_core``: arithmetic, broadcasting, ``where``, ``matmul``, ``sum``/``mean``, reshaping;
* ``_math``: element-wise math (``sin``, ``abs``, ``clip``, ``power``...);
* ``_ufuncs``: more element-wise math (``arcsin``, ``hypot``, ``frexp``, ``gcd``, ``i0``...);
* ``_predicates``: ``isclose``, ``allclose``, ``array_equal``, ``nan_to_num``...;
* ``_types``: scalar types (``float32``...), dtype functions, constants;
* ``_indexing``: indexing, slicing, joining, array creation;
* ``_creation``: ``array``, grids, triangles and diagonals, window functions;
* ``_shaping``: more joining, splitting and rearranging (``block``, ``rot90``, ``insert``...);
* ``_functional``: ``select``, ``piecewise``, ``vectorize``, ``apply_along_axis``, ``put``...;
* ``_reductions``: ``max``/``min``/``prod``/``argmax``/``sort``...;
* ``_jax_reductions``: the reductions with JAX's signatures (``where``, ``initial``, ``dtype``);
* ``_statistics``: NaN-aware reductions, quantiles, ``average``, ``cov``...;
* ``_set_ops``: value-dependent shapes (``nonzero``, ``unique``, set operations...);
* ``_histograms``: ``searchsorted``, ``digitize``, histograms;
* ``_polynomial``: polynomials, ``convolve``, ``diff``, ``gradient``, ``interp``...;
* ``_linalg``: products (``dot``, ``einsum``, ``cross``, ``kron``...);
* ``_gather_indexing``: advanced indexing, ``take``, ``x.at[...]`` updates (gather/scatter);
* ``linalg`` (public): ``numpy.linalg`` on ``_decompositions`` (LU, QR, Jacobi eigh and SVD,
  built from the op set) and ``_spectral`` (the eigh- and SVD-based functions);
* ``fft`` (public): ``numpy.fft`` on the Fft op.
"""
from ._core import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._ufuncs import *  # noqa: F401,F403
from ._predicates import *  # noqa: F401,F403
from ._types import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._shaping import *  # noqa: F401,F403
from ._functional import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._set_ops import *  # noqa: F401,F403
from ._histograms import *  # noqa: F401,F403
from ._polynomial import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._gather_indexing import *  # noqa: F401,F403
from ._jax_reductions import *  # noqa: F401,F403  (JAX's signatures, over _core's and _reductions')
from . import (_core, _creation, _functional, _gather_indexing, _histograms, _indexing,  # noqa: E402
               _linalg, _math, _polynomial, _predicates, _reductions, _set_ops, _shaping,
               _statistics, _types, _ufuncs, _jax_reductions)
from . import fft, linalg  # noqa: F401,E402

_MODULES = (_core, _math, _ufuncs, _predicates, _types, _indexing, _creation, _shaping, _functional,
            _reductions, _statistics, _set_ops, _histograms, _polynomial, _linalg,
            _gather_indexing, _jax_reductions)
__all__ = [name for module in _MODULES for name in module.__all__] + ["fft", "linalg"]
