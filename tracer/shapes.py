"""XLA's array type system: element types, shapes and layouts.

Follows XLA's "Shapes and Layout" and "Tiled layout" documents.

* ``Shape.dimensions`` are *logical*: dimension ``i`` is numbered as the user
  numbers it.  ``Layout.minor_to_major`` lists the dimensions from the fastest
  varying in memory to the slowest; the *physical* order (major-to-minor) is
  its reverse.  ``Layout.default(rank)`` is ``(rank-1, ..., 0)``: row-major.
* The *linear index* of an element is its position in the 1-D buffer:

  1. permute the logical index into physical order; the bounds are the
     dimension sizes, or ``padded_dimensions`` when set;
  2. apply each tile in turn to the most-minor dimensions of the current
     shape.  A ``'*'`` entry (``COMBINE``, -1) first merges its dimension into
     the next more-minor one (bound ``d_i * d_{i+1}``, index
     ``e_i * d_{i+1} + e_{i+1}``).  Then ``(e, d)`` becomes
     ``(e // t, e % t)`` with bounds ``(ceil(d / t), t)``, tile counts first.
     The next tile sees that (longer) shape.  A tile with more dimensions
     than the shape sees leading size-1 dimensions, as in XLA's
     ``ShapeUtil::ArraySize`` (so ``s32[]{:T(128)}`` is a 128-slot buffer);
  3. take the row-major index over the final bounds.  The buffer holds their
     product, rounded up to a multiple of ``L(n)``
     (``tail_padding_alignment_in_elements``) when set.

  Buffer slots no element maps to are *padding*; ``to_physical`` fills them
  with ``padding_value`` (0 when ``None``).

Shapes print and parse as XLA text, ``f32[3,5]{1,0:T(2,2)}``: see
``tracer/layout_text.py`` for the grammar (with our ``PD(..)``/``PV(..)``
notation for padding).
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import math
import operator
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

__all__ = [
    "PrimitiveType", "Tile", "Layout", "Shape", "COMBINE",
    "bf16_from_f32", "bf16_to_f32", "make_shape", "parse_shape", "parse_layout",
    "linear_index", "multi_index", "linear_index_map", "to_physical",
    "from_physical", "byte_strides", "byte_size",
]

COMBINE = -1
"""Tile entry ``'*'``: merge this dimension into the next more-minor one."""


# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

class PrimitiveType(enum.Enum):
    """XLA element types; the value is XLA's text name (``short_name``)."""

    PRED = "pred"
    S8 = "s8"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    C64 = "c64"
    C128 = "c128"
    TUPLE = "tuple"
    TOKEN = "token"

    @property
    def numpy_dtype(self) -> np.dtype | None:
        """Storage dtype; ``None`` for TUPLE/TOKEN.

        numpy has no bfloat16, so BF16 is stored as ``uint16`` words holding
        the upper 16 bits of the f32 bit pattern (see ``bf16_from_f32`` and
        ``bf16_to_f32``).
        """
        return _NUMPY_DTYPES.get(self)

    @property
    def short_name(self) -> str:
        return self.value

    @property
    def bit_width(self) -> int:
        """Bits per element as stored: PRED is 8, TUPLE/TOKEN are 0."""
        return _BIT_WIDTHS[self]

    @property
    def is_floating(self) -> bool:
        """F16, BF16, F32, F64."""
        return self in _FLOATING

    @property
    def is_complex(self) -> bool:
        return self in _COMPLEX

    @property
    def is_integral(self) -> bool:
        """Signed or unsigned integer (not PRED)."""
        return self in _SIGNED or self in _UNSIGNED

    @property
    def is_signed(self) -> bool:
        """Signed integer (XLA's IsSignedIntegralType); floats are neither."""
        return self in _SIGNED

    @property
    def is_unsigned(self) -> bool:
        """Unsigned integer (PRED is not)."""
        return self in _UNSIGNED

    @property
    def is_array(self) -> bool:
        """Everything but TUPLE and TOKEN."""
        return self not in (PrimitiveType.TUPLE, PrimitiveType.TOKEN)

    @classmethod
    def from_dtype(cls, dtype_like: Any) -> PrimitiveType:
        """``np.float32 -> F32``, ``bool -> PRED``; ``uint16`` is U16, never BF16."""
        if isinstance(dtype_like, PrimitiveType):
            return dtype_like
        try:
            dt = np.dtype(dtype_like)
        except TypeError:
            raise ValueError(f"unsupported dtype {dtype_like!r}") from None
        if dt.name == "bfloat16":  # ml_dtypes, if someone has it installed
            return cls.BF16
        found = _FROM_KIND.get((dt.kind, dt.itemsize))
        if found is None:
            raise ValueError(f"unsupported dtype {dt.name!r}: numxla has no element type for it")
        return found

    @classmethod
    def from_name(cls, name: str) -> PrimitiveType:
        """``'f32'``, ``'F32'``, ``'bf16'``, ``'pred'`` ... (XLA's text names)."""
        try:
            return cls(str(name).lower())
        except ValueError:
            raise ValueError(f"unknown element type {name!r}") from None


_P = PrimitiveType
_NUMPY_DTYPES = {
    _P.PRED: np.dtype(np.bool_), _P.S8: np.dtype(np.int8), _P.S16: np.dtype(np.int16),
    _P.S32: np.dtype(np.int32), _P.S64: np.dtype(np.int64), _P.U8: np.dtype(np.uint8),
    _P.U16: np.dtype(np.uint16), _P.U32: np.dtype(np.uint32), _P.U64: np.dtype(np.uint64),
    _P.F16: np.dtype(np.float16), _P.BF16: np.dtype(np.uint16), _P.F32: np.dtype(np.float32),
    _P.F64: np.dtype(np.float64), _P.C64: np.dtype(np.complex64),
    _P.C128: np.dtype(np.complex128),
}
_FLOATING = frozenset((_P.F16, _P.BF16, _P.F32, _P.F64))
_COMPLEX = frozenset((_P.C64, _P.C128))
_SIGNED = frozenset((_P.S8, _P.S16, _P.S32, _P.S64))
_UNSIGNED = frozenset((_P.U8, _P.U16, _P.U32, _P.U64))
_BIT_WIDTHS = {t: (8 * dt.itemsize) for t, dt in _NUMPY_DTYPES.items()}
_BIT_WIDTHS.update({_P.TUPLE: 0, _P.TOKEN: 0})
_FROM_KIND = {(dt.kind, dt.itemsize): t for t, dt in _NUMPY_DTYPES.items() if t is not _P.BF16}


def _as_element_type(x: Any) -> PrimitiveType:
    """PrimitiveType, XLA name ('f32'), numpy dtype name ('float32') or dtype-like."""
    if isinstance(x, PrimitiveType):
        return x
    if isinstance(x, str):
        try:
            return PrimitiveType.from_name(x)
        except ValueError:
            try:
                if np.dtype(x).name == x:  # 'float32', 'bool'; not codes like 'f8'
                    return PrimitiveType.from_dtype(x)
            except TypeError:
                pass
            raise
    return PrimitiveType.from_dtype(x)


def bf16_from_f32(x: Any) -> np.ndarray:
    """Round values (as f32) to bf16 words (uint16), to nearest even; NaN stays NaN."""
    f = np.asarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | 0x0040
    return np.where(np.isnan(f), quiet_nan, rounded).astype(np.uint16)


def bf16_to_f32(words: Any) -> np.ndarray:
    """Widen bf16 words (uint16) to float32 exactly."""
    w = np.asarray(words, dtype=np.uint16)
    return (w.astype(np.uint32) << np.uint32(16)).view(np.float32)


# --------------------------------------------------------------------------
# Tile, Layout
# --------------------------------------------------------------------------

def _int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an int, got {value!r}") from None


def _ints(values: Any, what: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValueError(f"{what} must be a sequence of ints, got {values!r}")
    return tuple(_int(v, f"{what}[{i}]") for i, v in enumerate(values))


def _fmt(values: Sequence[int]) -> str:
    return "[" + ",".join(map(str, values)) + "]"


@dataclass(frozen=True)
class Tile:
    """One tile: sizes over the most-minor physical dims; ``COMBINE`` (-1) is '*'."""

    dimensions: tuple[int, ...]
    COMBINE: ClassVar[int] = COMBINE

    def __post_init__(self) -> None:
        if isinstance(self.dimensions, (str, bytes)) or not isinstance(self.dimensions, Iterable):
            raise ValueError(f"Tile.dimensions must be a sequence, got {self.dimensions!r}")
        dims = tuple(COMBINE if d == "*" else _int(d, "tile dimension") for d in self.dimensions)
        if not dims:
            raise ValueError("a tile needs at least one dimension")
        for d in dims:
            if d < 1 and d != COMBINE:
                raise ValueError(f"tile dimension {d} must be >= 1 or '*' "
                                 f"in tile {_tile_text(dims)}")
        if dims[-1] == COMBINE:
            raise ValueError(f"tile {_tile_text(dims)} ends in '*': a combined dimension "
                             "merges into the next more-minor one, and there is none")
        object.__setattr__(self, "dimensions", dims)

    def __str__(self) -> str:
        return _tile_text(self.dimensions)


def _tile_text(dims: Sequence[int]) -> str:
    return "(" + ",".join("*" if d == COMBINE else str(d) for d in dims) + ")"


def _as_tile(t: Any) -> Tile:
    return t if isinstance(t, Tile) else Tile(t)


_NAN = float("nan")  # NaN padding values are canonicalised to this object so Layouts compare equal


@dataclass(frozen=True)
class Layout:
    """How an array is laid out in its 1-D buffer (see the module docstring)."""

    minor_to_major: tuple[int, ...]
    tiles: tuple[Tile, ...] = ()
    padded_dimensions: tuple[int, ...] | None = None
    padding_value: int | float | None = None
    element_size_in_bits: int = 0
    memory_space: int = 0
    tail_padding_alignment_in_elements: int = 0

    def __post_init__(self) -> None:
        m2m = _ints(self.minor_to_major, "minor_to_major")
        if sorted(m2m) != list(range(len(m2m))):
            raise ValueError(f"minor_to_major {_fmt(m2m)} is not a permutation "
                             f"of 0..{len(m2m) - 1}")
        tiles = self.tiles
        if isinstance(tiles, Tile):
            tiles = (tiles,)
        if isinstance(tiles, (str, bytes)) or not isinstance(tiles, Iterable):
            raise ValueError(f"Layout.tiles must be a sequence of tiles, got {tiles!r}")
        tiles = tuple(tiles)
        if any(isinstance(t, (int, np.integer, str)) for t in tiles):
            raise ValueError("Layout.tiles must be a sequence of tiles such as ((2, 2),), "
                             f"got {tiles!r}")
        tiles = tuple(_as_tile(t) for t in tiles)
        padded = self.padded_dimensions
        if padded is not None:
            padded = _ints(padded, "padded_dimensions")
            for i, p in enumerate(padded):
                if p < 0:
                    raise ValueError(f"padded_dimensions[{i}] must be >= 0, got {p}")
        pv = self.padding_value
        if pv is not None:
            if isinstance(pv, (int, np.integer, np.bool_)):  # bools become 0/1
                pv = int(pv)
            elif isinstance(pv, (float, np.floating)):
                pv = _NAN if math.isnan(pv) else float(pv)
            else:
                raise ValueError(f"padding_value must be an int, a float or None, got {pv!r}")
        for name in ("element_size_in_bits", "memory_space", "tail_padding_alignment_in_elements"):
            value = _int(getattr(self, name), name)
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "minor_to_major", m2m)
        object.__setattr__(self, "tiles", tiles)
        object.__setattr__(self, "padded_dimensions", padded)
        object.__setattr__(self, "padding_value", pv)

    @staticmethod
    def default(rank: int) -> Layout:
        """XLA's default: major-to-minor, ``minor_to_major == (rank-1, ..., 0)``."""
        return _default_layout(rank)

    @property
    def rank(self) -> int:
        return len(self.minor_to_major)

    def validate_for(self, dimensions: Sequence[int]) -> None:
        """Check this layout fits an array with these dimensions (ValueError if not)."""
        rank = len(dimensions)
        if self.rank != rank:
            raise ValueError(f"minor_to_major {_fmt(self.minor_to_major)} has rank {self.rank} "
                             f"but the shape has rank {rank}")
        if self.padded_dimensions is not None:
            padded = self.padded_dimensions
            if len(padded) != rank:
                raise ValueError(f"padded_dimensions {_fmt(padded)} has rank {len(padded)} "
                                 f"but the shape has rank {rank}")
            for i, (p, d) in enumerate(zip(padded, dimensions)):
                if p < d:
                    raise ValueError(f"padded_dimensions[{i}] = {p} is smaller than dimension {i} "
                                     f"of size {d}")

    def __str__(self) -> str:
        attrs = ""
        if self.tiles:
            attrs += "T" + "".join(map(str, self.tiles))
        if self.padded_dimensions is not None:
            attrs += "PD(" + ",".join(map(str, self.padded_dimensions)) + ")"
        if self.padding_value is not None:
            attrs += f"PV({self.padding_value!r})"
        if self.tail_padding_alignment_in_elements:
            attrs += f"L({self.tail_padding_alignment_in_elements})"
        if self.element_size_in_bits:
            attrs += f"E({self.element_size_in_bits})"
        if self.memory_space:
            attrs += f"S({self.memory_space})"
        m2m = ",".join(map(str, self.minor_to_major))
        return "{" + m2m + (":" + attrs if attrs else "") + "}"


@functools.lru_cache(maxsize=None)
def _default_layout(rank: int) -> Layout:
    return Layout(tuple(range(rank - 1, -1, -1)))


# --------------------------------------------------------------------------
# Shape
# --------------------------------------------------------------------------

_MAX_ELEMENTS = (1 << 63) - 1


class ShapeTooLarge(ValueError):
    """A shape with more elements than an int64 counts."""


@dataclass(frozen=True)
class Shape:
    """An array shape (element type, dimensions, layout), a tuple, or a token.

    Array shapes always carry a Layout (the default when ``None`` is given;
    a sequence of ints is taken as ``minor_to_major``); TUPLE and TOKEN
    shapes have ``layout=None`` and no dimensions.
    """

    element_type: PrimitiveType
    dimensions: tuple[int, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    # Bounded dynamic dimensions (XLA's ``f32[<=10]``): True where the size is
    # only a bound and the run-time size may be smaller.  Empty when all static.
    dynamic_dimensions: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        et = _as_element_type(self.element_type)
        dims = _ints(self.dimensions, "Shape.dimensions")
        subs = tuple(self.tuple_shapes)
        layout = self.layout
        dynamic = tuple(bool(d) for d in self.dynamic_dimensions)
        if dynamic and len(dynamic) != len(dims):
            raise ValueError(f"Shape.dynamic_dimensions has {len(dynamic)} entries for "
                             f"rank {len(dims)}")
        object.__setattr__(self, "dynamic_dimensions", dynamic if any(dynamic) else ())
        if et.is_array:
            for i, d in enumerate(dims):
                if d < 0:
                    raise ValueError(f"Shape.dimensions[{i}] must be >= 0, got {d}")
            if layout is None:
                layout = Layout.default(len(dims))
            elif not isinstance(layout, Layout):
                layout = Layout(layout)
            layout.validate_for(dims)
            if math.prod(dims) > _MAX_ELEMENTS:
                raise ShapeTooLarge(f"{et.short_name}{list(dims)} has {math.prod(dims)} "
                                    f"elements, more than an int64 counts (XLA's limit is "
                                    f"2^63 - 1)")
            if layout.padding_value is not None:
                padding_fill(layout.padding_value, et)
            if subs:
                raise ValueError(f"Shape.tuple_shapes must be empty for {et.short_name} arrays")
        else:
            if dims:
                raise ValueError(f"Shape.dimensions must be empty for {et.short_name} shapes")
            if layout is not None:
                raise ValueError(f"Shape.layout must be None for {et.short_name} shapes")
            if et is PrimitiveType.TOKEN and subs:
                raise ValueError("Shape.tuple_shapes must be empty for token shapes")
            for i, s in enumerate(subs):
                if not isinstance(s, Shape):
                    raise ValueError(f"Shape.tuple_shapes[{i}] must be a Shape, got {s!r}")
        object.__setattr__(self, "element_type", et)
        object.__setattr__(self, "dimensions", dims)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "tuple_shapes", subs)

    @staticmethod
    def tuple_of(shapes: Iterable[Shape]) -> Shape:
        return Shape(PrimitiveType.TUPLE, tuple_shapes=tuple(shapes))

    @staticmethod
    def token() -> Shape:
        return Shape(PrimitiveType.TOKEN)

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    @property
    def true_rank(self) -> int:
        """Number of dimensions of size > 1."""
        return sum(1 for d in self.dimensions if d > 1)

    @property
    def is_tuple(self) -> bool:
        return self.element_type is PrimitiveType.TUPLE

    @property
    def is_token(self) -> bool:
        return self.element_type is PrimitiveType.TOKEN

    @property
    def is_array(self) -> bool:
        return self.element_type.is_array

    @property
    def dtype(self) -> np.dtype | None:
        return self.element_type.numpy_dtype

    @property
    def size(self) -> int:
        """Number of logical elements."""
        self._require_array("size")
        return math.prod(self.dimensions)

    @property
    def physical_size(self) -> int:
        """Number of buffer elements, padding and partial tiles included."""
        self._require_array("physical_size")
        return _physical_size(self.dimensions, self.layout)

    @property
    def has_default_layout(self) -> bool:
        return self.is_array and self.layout == Layout.default(self.rank)

    def canonical_dimension(self, d: int) -> int:
        """Map a Python-style (possibly negative) dimension number into 0..rank-1."""
        d = _int(d, "dimension")
        if not -self.rank <= d < self.rank:
            raise ValueError(f"dimension {d} is out of range for rank {self.rank}")
        return d % self.rank

    def with_layout(self, layout: Layout | Sequence[int]) -> Shape:
        """Same shape, new layout (a Layout or a minor_to_major sequence)."""
        self._require_array("with_layout")
        return dataclasses.replace(self, layout=layout)

    def is_dynamic_dimension(self, d: int) -> bool:
        return bool(self.dynamic_dimensions) and self.dynamic_dimensions[d]

    def with_dimensions(self, dimensions: Sequence[int],
                        layout: Layout | Sequence[int] | None = None) -> Shape:
        """Same element type, new dimensions; default layout unless one is given."""
        self._require_array("with_dimensions")
        return Shape(self.element_type, dimensions, layout)

    def _require_array(self, what: str) -> None:
        if not self.is_array:
            raise ValueError(f"{what} is only defined for array shapes, not {self}")

    def __str__(self) -> str:
        if self.is_tuple:
            return "(" + ", ".join(map(str, self.tuple_shapes)) + ")"
        if self.is_token:
            return "token[]"
        dims = [f"<={d}" if self.is_dynamic_dimension(i) else str(d)
                for i, d in enumerate(self.dimensions)]
        text = f"{self.element_type.short_name}[{','.join(dims)}]"
        if self.rank == 0 and self.layout == Layout.default(0):
            return text
        return text + str(self.layout)


def make_shape(element_type: PrimitiveType | str | Any, dimensions: Sequence[int],
               minor_to_major: Sequence[int] | None = None, *, tiles: Sequence[Any] = (),
               padded_dimensions: Sequence[int] | None = None,
               padding_value: int | float | None = None,
               element_size_in_bits: int = 0, memory_space: int = 0) -> Shape:
    """Array shape; ``minor_to_major`` defaults to major-to-minor."""
    dims = _ints(dimensions, "dimensions")
    if minor_to_major is None:
        minor_to_major = Layout.default(len(dims)).minor_to_major
    layout = Layout(minor_to_major, tiles, padded_dimensions, padding_value,
                    element_size_in_bits, memory_space)
    return Shape(element_type, dims, layout)


# --------------------------------------------------------------------------
# Linear indexing
# --------------------------------------------------------------------------
# Coordinates are kept in physical (major-to-minor) order.  They are Python
# ints for single indices and broadcastable int64 arrays for whole maps.

def _physical_bounds(dimensions: Sequence[int], layout: Layout) -> list[int]:
    bounds = layout.padded_dimensions or dimensions
    return [bounds[d] for d in reversed(layout.minor_to_major)]


def _apply_tile(coords: list, bounds: list[int], tile: Tile) -> tuple[list, list[int]]:
    """One tiling step (module docstring, step 2)."""
    k = len(tile.dimensions)
    if k > len(bounds):  # XLA sees missing leading dims as size 1
        coords = [0] * (k - len(bounds)) + coords
        bounds = [1] * (k - len(bounds)) + bounds
    n = len(bounds) - k
    kept_c, kept_b, sizes = [], [], []
    cc, cb = 0, 1  # the pending '*' merge: index and bound so far
    for c, b, t in zip(coords[n:], bounds[n:], tile.dimensions):
        c, b = cc * b + c, cb * b
        if t == COMBINE:
            cc, cb = c, b
            continue
        cc, cb = 0, 1
        kept_c.append(c)
        kept_b.append(b)
        sizes.append(t)
    counts = [c // t for c, t in zip(kept_c, sizes)]
    within = [c % t for c, t in zip(kept_c, sizes)]
    return (coords[:n] + counts + within,
            bounds[:n] + [-(-b // t) for b, t in zip(kept_b, sizes)] + sizes)


@functools.lru_cache(maxsize=1024)
def _bounds_history(dimensions: tuple[int, ...], layout: Layout) -> tuple[tuple[int, ...], ...]:
    """Physical bounds before each tile, then the final bounds."""
    history = [_physical_bounds(dimensions, layout)]
    for tile in layout.tiles:
        history.append(_apply_tile([0] * len(history[-1]), history[-1], tile)[1])
    return tuple(map(tuple, history))


def _physical_size(dimensions: tuple[int, ...], layout: Layout) -> int:
    n = math.prod(_bounds_history(dimensions, layout)[-1])
    align = layout.tail_padding_alignment_in_elements
    return -(-n // align) * align if align > 1 else n


def _forward(dimensions: tuple[int, ...], layout: Layout, logical: Sequence[Any]) -> Any:
    coords = [logical[d] for d in reversed(layout.minor_to_major)]
    bounds = _physical_bounds(dimensions, layout)
    for tile in layout.tiles:
        coords, bounds = _apply_tile(coords, bounds, tile)
    linear = 0
    for c, b in zip(coords, bounds):  # row-major over the final bounds
        linear = linear * b + c
    return linear


def _require_array(shape: Shape, what: str) -> None:
    if not isinstance(shape, Shape):
        raise ValueError(f"{what} needs a Shape, got {shape!r}")
    shape._require_array(what)


def linear_index(shape: Shape, index: Sequence[int]) -> int:
    """Position of the logical element ``index`` in the physical buffer."""
    _require_array(shape, "linear_index")
    idx = _ints(index, "index")
    if len(idx) != shape.rank:
        raise ValueError(f"index {_fmt(idx)} has {len(idx)} entries but {shape} "
                         f"has rank {shape.rank}")
    for i, (e, d) in enumerate(zip(idx, shape.dimensions)):
        if not 0 <= e < d:
            raise ValueError(f"index {_fmt(idx)} is out of range in dimension {i} of {shape}")
    return int(_forward(shape.dimensions, shape.layout, idx))


def multi_index(shape: Shape, linear: int) -> tuple[int, ...]:
    """Inverse of ``linear_index``; ValueError for a padding slot or out of range."""
    _require_array(shape, "multi_index")
    linear = _int(linear, "linear index")
    if not 0 <= linear < shape.physical_size:
        raise ValueError(f"linear index {linear} is out of range for {shape} "
                         f"(buffer of {shape.physical_size} elements)")
    padding = ValueError(f"linear index {linear} is a padding slot of {shape}")
    layout = shape.layout
    *history, bounds = _bounds_history(shape.dimensions, layout)
    if linear >= math.prod(bounds):  # tail alignment
        raise padding
    coords = []
    for b in reversed(bounds):
        linear, c = divmod(linear, b)
        coords.append(c)
    coords.reverse()
    for tile, before in zip(reversed(layout.tiles), reversed(history)):  # undo the tiles
        k = len(tile.dimensions)
        extra = max(0, k - len(before))  # leading size-1 dims the tile added
        before = (1,) * extra + before
        n = len(before) - k
        sizes = [t for t in tile.dimensions if t != COMBINE]
        counts, within = coords[n:n + len(sizes)], coords[n + len(sizes):]
        merged = iter(q * t + r for q, t, r in zip(counts, sizes, within))
        out, group = [], []
        for b, t in zip(before[n:], tile.dimensions):  # split merged values over '*' groups
            group.append(b)
            if t == COMBINE:
                continue
            value = next(merged)
            if value >= math.prod(group):
                raise padding
            parts = []
            for g in reversed(group):
                value, c = divmod(value, g)
                parts.append(c)
            out.extend(reversed(parts))
            group = []
        coords = (coords[:n] + out)[extra:]
    result = [0] * shape.rank
    for c, d in zip(coords, reversed(layout.minor_to_major)):
        result[d] = c
    if any(c >= d for c, d in zip(result, shape.dimensions)):
        raise padding
    return tuple(result)


@functools.lru_cache(maxsize=256)
def _index_map(dimensions: tuple[int, ...], layout: Layout) -> np.ndarray:
    rank = len(dimensions)
    # One broadcastable arange per dimension: separable layouts never build
    # rank-sized index grids; '*' merges broadcast two of them together.
    logical = [np.arange(d, dtype=np.int64).reshape([d if i == j else 1 for j in range(rank)])
               for i, d in enumerate(dimensions)]
    lin = np.asarray(_forward(dimensions, layout, logical), dtype=np.int64)
    out = np.array(np.broadcast_to(lin, dimensions), dtype=np.int64)
    out.flags.writeable = False
    return out


def linear_index_map(shape: Shape) -> np.ndarray:
    """int64 array shaped like ``shape.dimensions``: each element's linear index.

    Cached per (dimensions, layout) and read-only.
    """
    _require_array(shape, "linear_index_map")
    return _index_map(shape.dimensions, shape.layout)


def _is_transpose_only(shape: Shape) -> bool:
    layout = shape.layout
    return (not layout.tiles and layout.tail_padding_alignment_in_elements <= 1
            and (layout.padded_dimensions is None or layout.padded_dimensions == shape.dimensions))


def _to_storage(x: np.ndarray, element_type: PrimitiveType) -> np.ndarray:
    if element_type is PrimitiveType.BF16 and x.dtype != np.uint16:
        return bf16_from_f32(x)  # by value; uint16 input is already bf16 words
    return x.astype(element_type.numpy_dtype, copy=False)


def padding_fill(pad: int | float, element_type: PrimitiveType) -> np.ndarray:
    """A layout's ``padding_value`` in ``element_type``'s storage form;
    ValueError when that type cannot hold it exactly (``PV(-1)`` on u8)."""
    with np.errstate(invalid="ignore", over="ignore"):
        try:
            fill = _to_storage(np.asarray(pad), element_type)
        except OverflowError:
            fill = None
    back = None if fill is None else \
        bf16_to_f32(fill) if element_type is PrimitiveType.BF16 else fill
    if back is None or not (back == pad or (np.isnan(back) and math.isnan(pad))):
        raise ValueError(f"layout padding_value {pad!r} is not representable as "
                         f"{element_type.short_name}")
    return fill


def _fill_value(shape: Shape) -> np.ndarray:
    pad = shape.layout.padding_value
    if pad is None:
        return np.zeros((), shape.dtype)
    return padding_fill(pad, shape.element_type)


def to_physical(x: Any, shape: Shape) -> np.ndarray:
    """Lay out the logical array ``x`` as ``shape``'s 1-D buffer (a new array).

    ``x`` is cast to ``shape.dtype``; for BF16, uint16 input is taken as bf16
    words and anything else is rounded by value.  Padding slots hold
    ``padding_value`` (0 when None; ValueError if the element type can't hold it).
    """
    _require_array(shape, "to_physical")
    x = np.asarray(x)
    if x.shape != shape.dimensions:
        raise ValueError(f"to_physical: array of shape {x.shape} does not match {shape}")
    x = _to_storage(x, shape.element_type)
    fill = _fill_value(shape)  # checked even when there is no padding
    if _is_transpose_only(shape):
        physical = np.transpose(x, tuple(reversed(shape.layout.minor_to_major)))
        return np.array(physical, order="C", copy=True).reshape(-1)
    out = np.full(shape.physical_size, fill, dtype=shape.dtype)
    out[linear_index_map(shape)] = x
    return out


def from_physical(buffer: Any, shape: Shape) -> np.ndarray:
    """The logical array (``shape.dimensions``) stored in ``shape``'s 1-D buffer.

    For untiled, unpadded layouts the result is a (transposed) view of ``buffer``.
    """
    _require_array(shape, "from_physical")
    buffer = np.asarray(buffer)
    if buffer.shape != (shape.physical_size,):
        raise ValueError(f"from_physical: buffer of shape {buffer.shape} does not match {shape} "
                         f"(expected ({shape.physical_size},))")
    if _is_transpose_only(shape):
        major_to_minor = tuple(reversed(shape.layout.minor_to_major))
        physical = buffer.reshape([shape.dimensions[d] for d in major_to_minor])
        return np.transpose(physical, np.argsort(major_to_minor))
    return buffer[linear_index_map(shape)]


def _element_bits(shape: Shape) -> int:
    return shape.layout.element_size_in_bits or shape.element_type.bit_width


def byte_strides(shape: Shape) -> tuple[int, ...]:
    """Bytes between neighbours along each logical dimension (untiled layouts only)."""
    _require_array(shape, "byte_strides")
    if shape.layout.tiles:
        raise ValueError(f"byte_strides is only defined for untiled layouts, not {shape}")
    bits = _element_bits(shape)
    if bits % 8:
        raise ValueError(f"byte_strides: elements of {shape} are {bits} bits, not whole bytes")
    strides = [0] * shape.rank
    stride = bits // 8
    bounds = _physical_bounds(shape.dimensions, shape.layout)
    for d, b in zip(shape.layout.minor_to_major, reversed(bounds)):
        strides[d] = stride
        stride *= b
    return tuple(strides)


def byte_size(shape: Shape) -> int:
    """Bytes of the buffer (padding included); tuples sum their elements, tokens are 0."""
    if shape.is_tuple:
        return sum(byte_size(s) for s in shape.tuple_shapes)
    if shape.is_token:
        return 0
    return -(-shape.physical_size * _element_bits(shape) // 8)


def parse_shape(text: str) -> Shape:
    """Parse shape text such as ``f32[3,5]{1,0:T(2,2)}`` or ``(f32[2]{0}, s32[])``."""
    from .layout_text import parse_shape as parse  # layout_text imports this module
    return parse(text)


def parse_layout(text: str) -> Layout:
    """Parse layout text such as ``{1,0:T(2,2)(2,1)}``."""
    from .layout_text import parse_layout as parse
    return parse(text)
