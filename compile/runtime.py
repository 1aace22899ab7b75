"""The runtime ``Array``: a 1-D physical buffer plus its XLA ``Shape``.

The buffer holds the elements in the order the shape's layout defines
(``minor_to_major``, padding, tiles); ``np.asarray(array)`` gives the logical
ndarray (a zero-copy view for the default layout).  ``device_put`` makes an
``Array`` with a chosen layout.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer.core import (OPERATOR_NAMES, AbstractValue, DeviceArrayMethods, abstractify,
                                array_repr, bf16_display, eager_getitem, operator_ufunc, to_numpy)
from numxla.tracer.shapes import (Layout, PrimitiveType, Shape, bf16_to_f32, from_physical, parse_layout,
                           to_physical)

__all__ = ["Array", "device_put", "as_layout", "to_buffer"]


def as_layout(layout: Any, rank: int) -> Layout:
    """A ``Layout`` from a ``Layout``, layout text (``"{0,1}"``), shape text
    (``"f32[3,5]{0,1:T(2,2)}"``, whose layout is taken) or a
    ``minor_to_major`` sequence."""
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, Shape):
        return layout.layout
    if isinstance(layout, str):
        text = layout.strip()
        if text.startswith("{"):
            return parse_layout(text)
        from numxla.tracer.shapes import parse_shape
        return parse_shape(text).layout
    if layout is None:
        return Layout.default(rank)
    if not isinstance(layout, (tuple, list)) or \
            not all(isinstance(d, (int, np.integer)) for d in layout):
        raise TypeError(f"a layout is a Layout, layout text such as '{{0,1}}', shape text or "
                        f"a minor_to_major sequence of ints; got {layout!r}")
    return Layout(tuple(int(d) for d in layout))


class Array(DeviceArrayMethods):
    """An array in a physical buffer laid out as ``xla_shape.layout`` says."""

    __array_priority__ = 100

    def __init__(self, buffer: np.ndarray, xla_shape: Shape):
        if buffer.ndim != 1 or buffer.size != xla_shape.physical_size:
            raise ValueError(f"Array: buffer of {buffer.size} elements does not hold "
                             f"{xla_shape} ({xla_shape.physical_size} physical elements)")
        self.buffer = buffer
        self.xla_shape = xla_shape

    @classmethod
    def wrap(cls, buffer: np.ndarray, xla_shape: Shape) -> "Array":
        """An Array over a buffer known to fit (the compiled code's results)."""
        out = cls.__new__(cls)
        out.buffer = buffer
        out.xla_shape = xla_shape
        return out

    # -- array protocol -------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.xla_shape.dimensions

    @property
    def dtype(self) -> np.dtype:
        return self.xla_shape.element_type.numpy_dtype

    @property
    def ndim(self) -> int:
        return len(self.xla_shape.dimensions)

    @property
    def size(self) -> int:
        return self.xla_shape.size

    @property
    def layout(self) -> Layout:
        return self.xla_shape.layout

    def __numxla_aval__(self) -> AbstractValue:
        return AbstractValue(self.xla_shape)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.asarray(from_physical(self.buffer, self.xla_shape))  # (bf16: uint16 words)
        return out if dtype is None else out.astype(dtype, copy=False)

    def block_until_ready(self) -> "Array":
        return self

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError("JAX arrays are immutable and do not support in-place item assignment. "
                        "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of an unsized Array")
        return self.shape[0]

    def values(self) -> np.ndarray:
        """The logical elements as a NumPy array (bf16 widened to f32, which
        NumPy can compute with; ``np.asarray`` gives bf16's raw words)."""
        out = np.asarray(self)
        if self.xla_shape.element_type is PrimitiveType.BF16:
            return bf16_to_f32(out)
        return out

    def __repr__(self) -> str:
        """JAX's ``Array([...], dtype=...)``; a layout other than the default is shown."""
        bf16 = self.xla_shape.element_type is PrimitiveType.BF16
        default = self.layout == Layout.default(self.ndim)
        return array_repr(self.values(), "bfloat16" if bf16 else None,
                          "" if default else f", shape={self.xla_shape}")

    def __str__(self) -> str:
        bf16 = self.xla_shape.element_type is PrimitiveType.BF16
        return str(bf16_display(self.values()) if bf16 else self.values())

    def __format__(self, spec: str) -> str:
        values = self.values()
        return format(values[()] if values.ndim == 0 else values, spec) if spec else str(values)

    def _scalar(self, kind: str) -> np.ndarray:
        if self.size != 1:
            raise TypeError(f"only an Array of one element converts to {kind}; this one is "
                            f"{self.xla_shape}")
        return self.values().reshape(())

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        t = self.xla_shape.element_type
        if not (t.is_integral or t is PrimitiveType.PRED):
            raise TypeError(f"an Array of {t.name.lower()} cannot be used as an index "
                            "(only integer Arrays can)")
        return int(self._scalar("an index"))

    def __bool__(self) -> bool:
        return bool(self.values())  # NumPy's rule: one element, else ValueError

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's operator ufuncs compute as the operators do (JAX's promotion:
        ``np.float64(2) * x`` is f32 without x64); other NumPy functions see the
        logical values (bf16 as f32), never raw words."""
        routed = operator_ufunc(ufunc, method, inputs, kwargs)
        if routed is not NotImplemented:
            return routed
        inputs = tuple(x.values() if isinstance(x, Array) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.values() if isinstance(x, Array) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getitem__(self, index):
        """NumPy's indexing of the values, as an eager array (a traced index traces)."""
        if self.xla_shape.element_type is PrimitiveType.BF16:
            from numxla.tracer.core import OPERATORS
            return OPERATORS["__getitem__"](self, index)
        return eager_getitem(np.asarray(self), index, self)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getattr__(self, name: str) -> Any:
        """The array methods of the op set (``.sum()``, ``.T``, ``.reshape``...)."""
        from numxla.tracer.core import OPERATORS
        method = OPERATORS.get(f"attr:{name}") if not name.startswith("_") else None
        if method is None:
            raise AttributeError(f"'Array' object has no attribute {name!r}")
        return method(self)

    def item(self, *index: int) -> Any:
        return self.values().item(*index)

    def tolist(self) -> Any:
        return self.values().tolist()

    def copy(self) -> "Array":
        return Array.wrap(self.buffer.copy(), self.xla_shape)

    def __divmod__(self, other: Any) -> tuple:
        return self // other, self % other

    def __round__(self, ndigits: int | None = None) -> Any:
        return round(self._scalar("a rounded number").item(), ndigits)

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes

    @property
    def itemsize(self) -> int:
        return self.buffer.itemsize


def _operator(name: str):
    def method(self, *args):
        from numxla.tracer.core import OPERATORS, is_operand
        if args and not is_operand(args[0]):
            return NotImplemented  # Python asks the other operand (e.g. pytest.approx)
        return OPERATORS[name](self, *args)
    method.__name__ = name
    return method


for _name in OPERATOR_NAMES:
    setattr(Array, _name, _operator(_name))
Array.__hash__ = None  # compared element-wise, as NumPy's and JAX's arrays: not hashable


def device_put(x: Any, layout: Any = None) -> Array:
    """Put ``x`` in a physical buffer with ``layout`` (default major-to-minor).
    The element type is ``x``'s own (a bf16 array stays bf16; a Python float
    becomes f32, as under ``jit``)."""
    aval = abstractify(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    if not aval.shape.is_array or any(aval.shape.dynamic_dimensions or ()):
        raise TypeError(f"device_put: expected a static array, got {aval.shape}")
    arr = np.asarray(x, dtype=aval.dtype)
    shape = Shape(aval.element_type, aval.dimensions, as_layout(layout, arr.ndim))
    return Array(to_physical(arr, shape), shape)


def to_buffer(x: Any, aval: AbstractValue) -> np.ndarray:
    """The physical buffer of argument ``x`` for a parameter of type ``aval``."""
    if isinstance(x, Array) and x.xla_shape == aval.shape:
        return x.buffer
    arr = to_numpy(x, aval)
    if aval.shape.layout == Layout.default(arr.ndim):
        return np.ascontiguousarray(arr).reshape(-1)
    return to_physical(arr, aval.shape)
