"""Element types, input values with XLA's edge cases, layouts, and their Python text.

Everything here is NumPy only (no numxla import), so the generator and the
shrinker run without Numba.  bf16 values are stored as their uint16 words.
"""
from __future__ import annotations

import math

import numpy as np

SIGNED = ("s8", "s16", "s32", "s64")
UNSIGNED = ("u8", "u16", "u32", "u64")
FLOATS = ("f16", "bf16", "f32", "f64")
COMPLEX = ("c64", "c128")
INTS = SIGNED + UNSIGNED
ALL_TYPES = ("pred",) + INTS + FLOATS + COMPLEX

STORAGE = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "c64": np.complex64, "c128": np.complex128}
BITS = {"pred": 8, "s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32,
        "u64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128}
COMPONENT = {"c64": "f32", "c128": "f64"}
# the machine epsilon of each floating type (of the component type for complex)
EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52,
       "c64": 2.0 ** -23, "c128": 2.0 ** -52}


def kind(t: str) -> str:
    """numxla's element-type kinds: pred, signed, unsigned, float, complex."""
    return ("pred" if t == "pred" else "signed" if t in SIGNED else "unsigned" if t in UNSIGNED
            else "float" if t in FLOATS else "complex")


def of_kinds(kinds: str) -> tuple[str, ...]:
    """The types of the kinds named by letters: p(red) s(igned) u(nsigned) f(loat) c(omplex)."""
    letters = {"pred": "p", "signed": "s", "unsigned": "u", "float": "f", "complex": "c"}
    return tuple(t for t in ALL_TYPES if letters[kind(t)] in kinds)


# -- values --------------------------------------------------------------------------------

def _int_edges(t: str) -> np.ndarray:
    """0, small values, the extremes, and shift amounts around the bit width."""
    info = np.iinfo(STORAGE[t])
    bits = BITS[t]
    values = [0, 1, 2, 3, -1, -2, -7, info.min, info.max, info.min + 1, info.max - 1,
              bits - 1, bits, bits + 1, 2 * bits, 5]
    wrapped = [(v - int(info.min)) % 2 ** bits + int(info.min) for v in values]
    return np.array(wrapped, dtype=STORAGE[t])


def _float_edges(t: str) -> list[float]:
    tiny = {"f16": 6e-08, "bf16": 9.2e-41, "f32": 1e-45, "f64": 5e-324}[t]
    big = {"f16": 65504.0, "bf16": 3.38e38, "f32": 3.4028235e38, "f64": 1.7976931348623157e308}[t]
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, math.nan, math.inf, -math.inf,
            tiny, -tiny, big, -big, 1e-3, 100.0, 0.1]


def bf16_words(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to nearest-even bf16, as uint16 words (NaN stays a NaN
    of its sign)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, 0x7FC0 | ((bits >> 16) & 0x8000), rounded).astype(np.uint16)


def bf16_values(words: np.ndarray) -> np.ndarray:
    return (np.asarray(words, np.uint16).astype(np.uint32) << 16).view(np.float32)


def random_values(rng: np.random.Generator, t: str, shape: tuple[int, ...],
                  edge_rate: float = 0.3) -> np.ndarray:
    """Random values of type ``t`` (storage form), a fraction of them edge cases."""
    n = int(np.prod(shape, dtype=np.int64))
    if t == "pred":
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if t in INTS:
        info = np.iinfo(STORAGE[t])
        small = rng.integers(-4 if t in SIGNED else 0, 9, n)
        wide = rng.integers(info.min, info.max, n, dtype=STORAGE[t], endpoint=True)
        pick = rng.random(n)
        out = np.where(pick < 0.3, wide, small).astype(STORAGE[t])
        edges = _int_edges(t)
        mask = rng.random(n) < edge_rate
        out[mask] = rng.choice(edges, int(mask.sum()))
        return out.reshape(shape)
    base = t if t in FLOATS else COMPONENT[t]
    parts = []
    for _ in range(2 if t in COMPLEX else 1):
        scale = np.where(rng.random(n) < 0.2, 100.0, 3.0)
        v = rng.standard_normal(n) * scale
        v = np.where(rng.random(n) < 0.3, np.round(v * 2) / 2, v)  # exact halves: rounding ties
        edges = np.array(_float_edges(base), np.float64)
        mask = rng.random(n) < edge_rate
        v[mask] = rng.choice(edges, int(mask.sum()))
        parts.append(v)
    if t == "bf16":
        return bf16_words(parts[0].astype(np.float32)).reshape(shape)
    if t in COMPLEX:
        out = np.empty(n, STORAGE[t])
        out.real, out.imag = parts
        return out.reshape(shape)
    with np.errstate(over="ignore"):
        return parts[0].astype(STORAGE[t]).reshape(shape)


def index_values(rng: np.random.Generator, t: str, shape: tuple[int, ...], bound: int
                 ) -> np.ndarray:
    """Index values, mostly in ``[0, bound)``, some out of range on either side."""
    n = int(np.prod(shape, dtype=np.int64))
    lo = 0 if t in UNSIGNED else -2
    v = rng.integers(lo, max(bound, 0) + 3, n)
    v = np.where(rng.random(n) < 0.6, rng.integers(0, max(bound, 1), n), v)
    return v.astype(STORAGE[t]).reshape(shape)


# -- Python text of values ---------------------------------------------------------------------

def _float_text(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def scalar_text(t: str, v) -> str:
    """A Python expression for one scalar of type ``t`` (``np``, ``lax`` in scope)."""
    if t == "pred":
        return f"np.bool_({bool(v)})"
    if t in INTS:
        return f"np.{np.dtype(STORAGE[t]).name}({int(v)})"
    if t == "bf16":
        return f"lax.convert_element_type(np.float32({_num(float(v))}), 'bf16')"
    if t in COMPLEX:
        c = complex(v)
        return (f"np.{np.dtype(STORAGE[t]).name}(complex({_num(c.real)}, {_num(c.imag)}))")
    return f"np.{np.dtype(STORAGE[t]).name}({_num(float(v))})"


def _num(v: float) -> str:
    text = _float_text(v)
    return {"nan": "np.nan", "inf": "np.inf", "-inf": "-np.inf"}.get(text, text)


def array_text(t: str, a: np.ndarray) -> str:
    """``arr(type, shape, flat values)``: the repro scripts' helper builds the array."""
    flat = np.asarray(a).reshape(-1)
    if t == "pred" or t in INTS or t == "bf16":
        items = [str(int(x)) for x in flat]
    elif t in COMPLEX:
        items = [f"({_num(x.real)}, {_num(x.imag)})" for x in flat]
    else:
        items = [_num(float(x)) for x in flat]
    return f"arr({t!r}, {tuple(a.shape)!r}, [{', '.join(items)}])"


ARR_SOURCE = '''\
def arr(t, shape, flat):
    """An input array: bf16 as uint16 words, complex as (real, imag) pairs."""
    if t == "bf16":
        return bf16_array(np.array(flat, np.uint16).reshape(shape))
    dtype = np.dtype({"pred": "bool", "f16": "float16", "f32": "float32", "f64": "float64",
                      "c64": "complex64", "c128": "complex128"}.get(t) or
                     ("int" if t[0] == "s" else "uint") + t[1:])
    if dtype.kind == "c":
        out = np.empty(len(flat), dtype)
        out.real, out.imag = [p[0] for p in flat], [p[1] for p in flat]
        return out.reshape(shape)
    return np.array(flat, np.float64 if dtype.kind == "f" else None).astype(dtype).reshape(shape)
'''


# -- layouts -----------------------------------------------------------------------------------

def random_layout(rng: np.random.Generator, t: str, shape: tuple[int, ...]) -> str | None:
    """Layout text for an array of ``shape``: ``None`` (the default) half the
    time, else a permutation with, sometimes, tiles (``*`` combined
    dimensions included), padded dimensions, a padding value and a tail alignment."""
    if rng.random() < 0.45:
        return None
    rank = len(shape)
    m2m = list(range(rank - 1, -1, -1))
    if rank > 1 and rng.random() < 0.7:
        m2m = [int(d) for d in rng.permutation(rank)]
    attrs = ""
    if rng.random() < 0.4:
        attrs += "T" + "".join(_tile(rng, rank) for _ in range(1 + (rng.random() < 0.3)))
    if rank and rng.random() < 0.15:
        attrs += "PD(" + ",".join(str(d + int(rng.integers(0, 3))) for d in shape) + ")"
    if attrs and rng.random() < 0.3:
        attrs += f"PV({_padding_value(rng, t)})"
    if rng.random() < 0.1:
        attrs += f"L({int(rng.choice([2, 3, 4, 16]))})"
    if not attrs and m2m == list(range(rank - 1, -1, -1)):
        return None
    return "{" + ",".join(map(str, m2m)) + (":" + attrs if attrs else "") + "}"


def _tile(rng: np.random.Generator, rank: int) -> str:
    n = int(rng.integers(1, min(rank, 2) + 2)) if rank else 1
    sizes = [str(int(rng.choice([1, 2, 2, 3, 4, 8]))) for _ in range(n)]
    if n > 1 and rng.random() < 0.2:
        sizes[int(rng.integers(0, n - 1))] = "*"
    if rng.random() < 0.05:
        sizes[-1] = "128"
    return "(" + ",".join(sizes) + ")"


def _padding_value(rng: np.random.Generator, t: str) -> str:
    if t == "pred":
        return str(int(rng.integers(0, 2)))
    if t in UNSIGNED:
        return str(int(rng.integers(0, 10)))
    if t in INTS:
        return str(int(rng.integers(-9, 10)))
    return str(rng.choice(["-1.5", "0", "7", "nan", "-inf"]))
