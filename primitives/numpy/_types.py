"""NumPy-style layer: scalar types, dtype functions, constants and small
NumPy helpers that ``jax.numpy`` re-exports.

* Scalar types (``float32``, ``int32``, ``bfloat16``, ``bool_``...) are, as in
  JAX, classes that stand for a dtype (``np.dtype(xnp.float32)``,
  ``x.astype(xnp.float32)``) and build arrays when called
  (``xnp.float32(3)``).  ``bfloat16`` has a NumPy dtype only where
  ``ml_dtypes`` is installed; the functions here accept it everywhere.
* Abstract types (``floating``, ``integer``...) are NumPy's.
* ``result_type``/``promote_types`` follow JAX's promotion (Python scalars
  are weak); ``finfo``/``iinfo`` know bf16.
* ``ndarray`` is the type of numxla arrays for ``isinstance``: traced values,
  NumPy arrays and compiled results.
"""
from __future__ import annotations

import builtins
import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from numxla.tracer.config import canonicalize_type
from numxla.tracer.core import Tracer, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from ..dtypes import canonical_type, result_type as _result_type

__all__ = [
    "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "uint", "int_", "float16", "bfloat16", "float32", "float64", "float_", "single", "double",
    "complex64", "complex128", "complex_", "csingle", "cdouble", "generic", "number",
    "integer", "signedinteger", "unsignedinteger", "inexact", "floating", "complexfloating",
    "character", "flexible", "object_", "dtype", "ndarray", "finfo", "iinfo", "can_cast",
    "promote_types", "result_type", "issubdtype", "isdtype", "iscomplexobj", "isrealobj",
    "isscalar", "iterable", "size", "e", "pi", "inf", "nan", "euler_gamma", "newaxis",
    "s_", "index_exp", "printoptions", "get_printoptions", "set_printoptions",
    "ComplexWarning", "save", "savez", "element_type",
]

try:  # bf16 as a NumPy dtype, only where someone has installed ml_dtypes
    import ml_dtypes as _ml_dtypes
    _BF16_DTYPE: Any = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    _BF16_DTYPE = None


# -- scalar types ------------------------------------------------------------------------------

class _ScalarMeta(type):
    """JAX's scalar types: ``xnp.float32(x)`` is ``asarray(x, float32)``; the
    class itself is a dtype-like (its ``dtype`` attribute)."""

    def __call__(cls, x: Any = 0) -> Any:
        from ._core import asarray
        return asarray(x, dtype=cls)

    def __repr__(cls) -> str:
        return f"<class 'numxla.numpy.{cls.__name__}'>"

    def __eq__(cls, other: Any) -> bool:
        return cls is other or (isinstance(other, _ScalarMeta) and
                                cls._numxla_type is other._numxla_type)

    def __hash__(cls) -> int:
        return hash(cls._numxla_type)


def _scalar_type(name: str, t: PT) -> type:
    dtype_ = _BF16_DTYPE if t is PT.BF16 else t.numpy_dtype
    return _ScalarMeta(name, (), {"dtype": dtype_, "_numxla_type": t,
                                  "__doc__": f"JAX's ``{name}`` scalar type ({t.short_name})."})


bool_ = bool = _scalar_type("bool", PT.PRED)  # noqa: A001 (JAX's names)
int8, int16 = _scalar_type("int8", PT.S8), _scalar_type("int16", PT.S16)
int32, int64 = _scalar_type("int32", PT.S32), _scalar_type("int64", PT.S64)
uint8, uint16 = _scalar_type("uint8", PT.U8), _scalar_type("uint16", PT.U16)
uint32, uint64 = _scalar_type("uint32", PT.U32), _scalar_type("uint64", PT.U64)
float16, bfloat16 = _scalar_type("float16", PT.F16), _scalar_type("bfloat16", PT.BF16)
float32, float64 = _scalar_type("float32", PT.F32), _scalar_type("float64", PT.F64)
complex64, complex128 = _scalar_type("complex64", PT.C64), _scalar_type("complex128", PT.C128)
uint, int_, float_, complex_ = uint64, int64, float64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128

generic, number, integer = np.generic, np.number, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
character, flexible, object_ = np.character, np.flexible, np.object_
dtype = np.dtype


def element_type(dtype_like: Any) -> PT:
    """A dtype argument as an element type: NumPy dtypes and names, XLA names,
    numxla's scalar types (``bfloat16`` too); 64-bit types narrow to 32 bits
    unless x64 is enabled, as in JAX."""
    t = getattr(dtype_like, "_numxla_type", None)
    if t is None:
        t = canonical_type(dtype_like)
    return canonicalize_type(t)


def _np_dtype(t: PT) -> Any:
    """The NumPy dtype of an element type (bf16: ml_dtypes' if installed, else the
    ``bfloat16`` scalar type)."""
    if t is PT.BF16:
        return _BF16_DTYPE if _BF16_DTYPE is not None else bfloat16
    return t.numpy_dtype


def _type_of(x: Any) -> PT:
    """The element type of a value or a dtype-like."""
    if isinstance(x, (_ScalarMeta, np.dtype, str, PT)) or (isinstance(x, type) and
                                                            issubclass(x, np.generic)):
        return element_type(x)
    return abstractify(x).element_type


# -- isinstance(x, xnp.ndarray) ---------------------------------------------------------------

class _ArrayMeta(type):
    def __instancecheck__(cls, x: Any) -> builtins.bool:
        return isinstance(x, (Tracer, np.ndarray)) or (
            hasattr(x, "xla_shape") and hasattr(x, "shape") and hasattr(x, "dtype")) or \
            hasattr(type(x), "__numxla_aval__")


class ndarray(metaclass=_ArrayMeta):
    """The type of numxla arrays, for ``isinstance`` (JAX's ``jax.Array``):
    traced values, NumPy arrays and compiled results are instances."""


# -- dtype functions -------------------------------------------------------------------------

_BF16_INFO = SimpleNamespace(
    bits=16, dtype=bfloat16, eps=2.0 ** -7, epsneg=2.0 ** -8, machep=-7, negep=-8,
    max=3.3895313892515355e38, min=-3.3895313892515355e38, tiny=2.0 ** -126,
    smallest_normal=2.0 ** -126, smallest_subnormal=2.0 ** -133, resolution=0.01,
    precision=2, nexp=8, nmant=7, maxexp=128, minexp=-126)


def finfo(dtype_like: Any) -> Any:
    """NumPy's ``finfo`` of a floating type (of a complex type: its parts'); bf16 too."""
    t = _type_of(dtype_like)
    if t is PT.BF16:
        return _BF16_INFO
    return np.finfo(t.numpy_dtype)


def iinfo(int_type: Any) -> np.iinfo:
    """NumPy's ``iinfo`` of an integer type."""
    return np.iinfo(_type_of(int_type).numpy_dtype)


def result_type(*args: Any) -> Any:
    """The dtype JAX's promotion gives ``args`` (arrays, scalars or dtypes;
    Python scalars and the types ``int``, ``float``, ``complex`` are weak)."""
    values = []
    for a in args:
        if a is int or a is float or a is complex:   # Python's types: weak, as their values
            a = a(0)
        if isinstance(a, (_ScalarMeta, np.dtype, str, PT)) or (isinstance(a, type) and
                                                                issubclass(a, np.generic)):
            values.append(abstractify(np.zeros((), _np_dtype(element_type(a)))
                                      if element_type(a) is not PT.BF16 else
                                      _bf16_aval()))
        else:
            values.append(a)
    return _np_dtype(_result_type(*values)[0])


def _bf16_aval() -> Any:
    from numxla.tracer.core import array_value
    return array_value(PT.BF16, ())


def promote_types(a: Any, b: Any) -> Any:
    """The dtype two dtypes promote to, by JAX's lattice."""
    return result_type(a, b)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    """NumPy's ``can_cast`` between dtypes (of values: their dtypes)."""
    src, dst = _type_of(from_), _type_of(to)
    if PT.BF16 in (src, dst):
        if src is dst:
            return True
        wider = {PT.F32, PT.F64, PT.C64, PT.C128}
        return dst in wider if src is PT.BF16 else src in (PT.PRED, PT.S8, PT.U8)
    return builtins.bool(np.can_cast(src.numpy_dtype, dst.numpy_dtype, casting))


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """NumPy's ``issubdtype``, knowing that bf16 is ``floating``."""
    if isinstance(arg1, _ScalarMeta) and arg1._numxla_type is PT.BF16 or \
            (_BF16_DTYPE is not None and arg1 == _BF16_DTYPE):
        if isinstance(arg2, _ScalarMeta):
            return arg2._numxla_type is PT.BF16
        return isinstance(arg2, type) and arg2 in (np.generic, np.number, np.inexact,
                                                   np.floating)
    a1 = arg1.dtype if isinstance(arg1, _ScalarMeta) else arg1
    a2 = arg2.dtype if isinstance(arg2, _ScalarMeta) and arg2.dtype is not None else arg2
    return builtins.bool(np.issubdtype(a1, a2))


_KINDS = {
    "bool": lambda t: t is PT.PRED,
    "signed integer": lambda t: t.is_signed,
    "unsigned integer": lambda t: t.is_unsigned,
    "integral": lambda t: t.is_signed or t.is_unsigned,
    "real floating": lambda t: t.is_floating,
    "complex floating": lambda t: t.is_complex,
    "numeric": lambda t: t is not PT.PRED,
}


def isdtype(dtype_like: Any, kind: Any) -> builtins.bool:
    """The array API's ``isdtype``: ``kind`` is a dtype, a kind name
    ("bool", "signed integer", "unsigned integer", "integral",
    "real floating", "complex floating", "numeric") or a tuple of them."""
    t = _type_of(dtype_like)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; expected one of {list(_KINDS)}")
            if _KINDS[k](t):
                return True
        elif element_type(k) is t:
            return True
    return False


def iscomplexobj(x: Any) -> builtins.bool:
    """Whether ``x`` has a complex type (whatever its values)."""
    return _type_of(x).is_complex


def isrealobj(x: Any) -> builtins.bool:
    return not iscomplexobj(x)


def isscalar(element: Any) -> builtins.bool:
    """JAX's ``isscalar``: Python and NumPy scalars, and rank-0 arrays."""
    if isinstance(element, (np.generic, builtins.bool, int, float, complex)):
        return True
    try:
        return abstractify(element).ndim == 0
    except TypeError:
        return False


def iterable(y: Any) -> builtins.bool:
    try:
        iter(y)
    except TypeError:
        return False
    return True


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements (along ``axis``)."""
    dims = abstractify(a if not isinstance(a, (list, tuple)) else np.asarray(a)).dimensions
    return math.prod(dims) if axis is None else dims[axis]


# -- constants and NumPy's helpers -------------------------------------------------------------

e, pi, inf, nan = np.e, np.pi, np.inf, np.nan
euler_gamma = float(np.euler_gamma)
newaxis = None
s_, index_exp = np.s_, np.index_exp
printoptions, get_printoptions, set_printoptions = (np.printoptions, np.get_printoptions,
                                                    np.set_printoptions)
ComplexWarning = np.exceptions.ComplexWarning
save, savez = np.save, np.savez
