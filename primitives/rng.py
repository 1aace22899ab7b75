"""Random numbers: RngBitGenerator (THREE_FRY and PHILOX with XLA's exact bits),
RngUniform and RngNormal.

``rng_bit_generator(key, shape, dtype, algorithm)`` is a pure function of its
state.  XLA expands it (``RngBitGeneratorExpander`` over the generators of
``xla/hlo/builder/lib/prng.cc``); this module reproduces that expansion in
vectorised NumPy ``uint32`` arithmetic, bit for bit:

* THREE_FRY: state ``u64[2]`` = ``[key, counter]``.  Threefry-2x32 with 20
  rounds encrypts ``counter + i`` (split into its low and high 32-bit words)
  under ``key`` (likewise split).  64-bit outputs join the two result words
  (``lo | hi << 32``), one block per element; narrower outputs take both words
  of a block for two neighbouring elements of a split dimension (see
  :func:`_split_in_halves`).  The new state is ``[key, counter + blocks]``.
* PHILOX: state ``u64[2]`` = ``[key, counter_lo]`` (the 128-bit counter's
  high word is the key itself, as XLA's expander reverses the state) or
  ``u64[3]`` = ``[key, counter_lo, counter_hi]``.  Philox-4x32 with 10 rounds
  turns each 128-bit counter value into four 32-bit words, dealt to
  consecutive elements (pairs of words for 64-bit outputs).
* RNG_DEFAULT is PHILOX, as on XLA:CPU.

Outputs narrower than 32 bits truncate the 32-bit words; signed and
floating-point outputs are the unsigned words of their width, bitcast.
The user function also takes a key in JAX's form, ``u32[4]`` (``u32[6]``
for a 3-word Philox state), and bitcasts it to and from ``u64`` as JAX does.

``rng_uniform``/``rng_normal`` are XLA's stateful RngUniform/RngNormal: their
values are implementation-defined, here drawn from a module-level NumPy
generator that :func:`seed_rng` reseeds.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

from ._util import as_int_tuple, check_kinds
from .dtypes import canonical_type
from .elementwise import promote

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform", "rng_normal", "seed_rng",
           "uniform_from_bits", "threefry2x32", "philox4x32"]


class RandomAlgorithm(enum.Enum):
    """XLA's ``RandomAlgorithm`` (its proto numbers)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    @classmethod
    def of(cls, value: Any) -> "RandomAlgorithm":
        """The enum from itself, its number, or a name (``"THREE_FRY"``, ``"rng_philox"``)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            name = value.upper()
            name = name if name.startswith("RNG_") else "RNG_" + name
            if name in cls.__members__:
                return cls[name]
        elif isinstance(value, (int, np.integer)) and int(value) in (0, 1, 2):
            return cls(int(value))
        raise ValueError(f"rng_bit_generator: unknown algorithm {value!r} (expected one of "
                         f"{', '.join(cls.__members__)}, THREE_FRY, PHILOX or DEFAULT)")


# XLA:CPU's choice for RNG_DEFAULT (RngBitGeneratorExpander(RNG_PHILOX)).
DEFAULT_ALGORITHM = RandomAlgorithm.RNG_PHILOX

_U32 = np.uint32
_U64 = np.uint64


# --------------------------------------------------------------------------
# the block ciphers
# --------------------------------------------------------------------------

_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_THREEFRY_PARITY = 0x1BD11BDA


def _rotl32(v: np.ndarray, distance: int) -> np.ndarray:
    return (v << _U32(distance)) | (v >> _U32(32 - distance))


def threefry2x32(key: tuple[Any, Any], counter: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011) on ``uint32`` words.

    ``key`` and ``counter`` are pairs of ``uint32`` arrays (or scalars) that
    broadcast together; returns the two encrypted words.
    """
    k0, k1 = (np.asarray(k, _U32) for k in key)
    x0, x1 = (np.asarray(c, _U32) for c in counter)
    schedule = (k0, k1, k0 ^ k1 ^ _U32(_THREEFRY_PARITY))
    with np.errstate(over="ignore"):
        x0, x1 = x0 + schedule[0], x1 + schedule[1]
        for block in range(5):
            for rotation in _THREEFRY_ROTATIONS[block % 2]:
                x0 = x0 + x1
                x1 = _rotl32(x1, rotation) ^ x0
            # key injection after every 4 rounds: words s+1, s+2 and the round count
            x0 = x0 + schedule[(block + 1) % 3]
            x1 = x1 + schedule[(block + 2) % 3] + _U32(block + 1)
    return x0, x1


_PHILOX_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_PHILOX_WEYL = (0x9E3779B9, 0xBB67AE85)


def philox4x32(key: tuple[Any, Any], counter: tuple[Any, Any, Any, Any]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Philox-4x32 with 10 rounds (Salmon et al. 2011) on ``uint32`` words.

    ``counter`` is four ``uint32`` words (least significant first), ``key``
    two; returns the four output words.
    """
    k0, k1 = (np.asarray(k, _U32) for k in key)
    x = [np.asarray(c, _U32) for c in counter]
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = x[0].astype(_U64) * _U64(_PHILOX_MULTIPLIERS[0])
            p1 = x[2].astype(_U64) * _U64(_PHILOX_MULTIPLIERS[1])
            hi0, lo0 = (p0 >> _U64(32)).astype(_U32), p0.astype(_U32)
            hi1, lo1 = (p1 >> _U64(32)).astype(_U32), p1.astype(_U32)
            x = [hi1 ^ x[1] ^ k0, lo1, hi0 ^ x[3] ^ k1, lo0]
            k0, k1 = k0 + _U32(_PHILOX_WEYL[0]), k1 + _U32(_PHILOX_WEYL[1])
    return x[0], x[1], x[2], x[3]


def _split_u64(v: Any) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(v, _U64)
    return (v & _U64(0xFFFFFFFF)).astype(_U32), (v >> _U64(32)).astype(_U32)


def _join_u32(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(_U64) | (hi.astype(_U64) << _U64(32))


# --------------------------------------------------------------------------
# XLA's bit generators: state words -> (bits, new state words)
# --------------------------------------------------------------------------

def _split_in_halves(dims: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """XLA's SplitShapeIntoHalves: the dimension whose elements are taken in
    pairs from one 64-bit block (the first even one, else the first largest),
    and the block shape (that dimension halved, rounded up).  Scalars use a
    block shape ``[1]``."""
    if not dims:
        return 0, (1,)
    even = [i for i, d in enumerate(dims) if d % 2 == 0]
    split = even[0] if even else int(np.argmax(dims))
    half = dims[:split] + (-(-dims[split] // 2),) + dims[split + 1:]
    return split, half


def _counters(start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``start + i`` for ``i < n`` in wrap-around u64 arithmetic, as (lo, hi) words."""
    with np.errstate(over="ignore"):
        return _split_u64(_U64(start) + np.arange(n, dtype=_U64))


def _threefry_bits(key: int, counter: int, dims: tuple[int, ...], width: int
                   ) -> tuple[np.ndarray, int]:
    """THREE_FRY words of ``width`` (32 or 64) bits and the number of blocks used."""
    if width == 64:
        blocks = int(np.prod(dims, dtype=np.int64))
        x0, x1 = threefry2x32(_split_u64(key), _counters(counter, blocks))
        return _join_u32(x0, x1).reshape(dims), blocks
    split, half = _split_in_halves(dims)
    blocks = int(np.prod(half, dtype=np.int64))
    x0, x1 = threefry2x32(_split_u64(key), _counters(counter, blocks))
    if not dims:
        return x0.reshape(()), blocks
    # the two words of block j fill elements 2j and 2j+1 of the split dimension
    pairs = np.stack([x0.reshape(half), x1.reshape(half)], axis=split + 1)
    full = pairs.reshape(dims[:split] + (2 * half[split],) + dims[split + 1:])
    return np.take(full, np.arange(dims[split]), axis=split), blocks


def _philox_bits(key: int, counter: tuple[int, int], dims: tuple[int, ...], width: int
                 ) -> tuple[np.ndarray, tuple[int, int]]:
    """PHILOX words of ``width`` bits and the new 128-bit counter (lo, hi)."""
    n = int(np.prod(dims, dtype=np.int64))
    blocks = -(-n // (4 if width == 32 else 2))
    lo, hi = counter
    low_words = _counters(lo, blocks)
    # the high half of the counter carries where the low half wrapped around
    carried = np.arange(blocks) >= 2 ** 64 - lo
    high_words = _split_u64(np.where(carried, (hi + 1) % 2 ** 64, hi).astype(_U64))
    words = philox4x32(_split_u64(key), low_words + high_words)
    if width == 64:
        words = (_join_u32(words[0], words[1]), _join_u32(words[2], words[3]))
    # output words are dealt round-robin: block 0's words first, then block 1's...
    flat = np.stack(words, axis=1).reshape(-1)[:n]
    end = lo + blocks
    return flat.reshape(dims), (end % 2 ** 64, (hi + end // 2 ** 64) % 2 ** 64)


# bit width -> the unsigned NumPy type of that width
_UNSIGNED_OF_WIDTH = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _generate(algorithm: RandomAlgorithm, state: list[int], dims: tuple[int, ...], width: int
              ) -> tuple[np.ndarray, list[int]]:
    key = state[0]
    if algorithm is RandomAlgorithm.RNG_THREE_FRY:
        bits, blocks = _threefry_bits(key, state[1], dims, width)
        return bits, [key, state[1] + blocks]
    counter = (state[1], state[2]) if len(state) == 3 else (state[1], key)
    bits, (lo, hi) = _philox_bits(key, counter, dims, width)
    return bits, ([key, lo, hi] if len(state) == 3 else [key, lo])


# --------------------------------------------------------------------------
# RngBitGenerator
# --------------------------------------------------------------------------

rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)

# algorithm -> admitted numbers of u64 state words
_STATE_WORDS = {RandomAlgorithm.RNG_THREE_FRY: (2,), RandomAlgorithm.RNG_PHILOX: (2, 3)}


def _resolve(algorithm: RandomAlgorithm) -> RandomAlgorithm:
    return DEFAULT_ALGORITHM if algorithm is RandomAlgorithm.RNG_DEFAULT else algorithm


@rng_bit_generator_p.def_abstract_eval
def _rng_bit_generator_rule(key: AbstractValue, *, shape: tuple[int, ...], dtype: PT,
                            algorithm: RandomAlgorithm) -> list[AbstractValue]:
    op = "rng_bit_generator"
    allowed = _STATE_WORDS[_resolve(algorithm)]
    if key.element_type is not PT.U64 or key.ndim != 1 or key.dimensions[0] not in allowed:
        sizes = " or ".join(f"u64[{n}]" for n in allowed)
        raise ShapeError(op, f"algorithm {algorithm.name} needs an initial state of {sizes} "
                             f"(or JAX's u32 form), got {key.shape}", key)
    if any(d < 0 for d in shape):
        raise ShapeError(op, f"shape {shape} has a negative dimension", key)
    if dtype.is_complex or dtype is PT.PRED or not dtype.is_array or \
            dtype.bit_width not in _UNSIGNED_OF_WIDTH:
        raise ShapeError(op, f"dtype {dtype.short_name} is not supported (expected an integer "
                             f"or floating-point type of 8, 16, 32 or 64 bits)", key)
    return [key.strip_layout().strong(), array_value(dtype, shape)]


@rng_bit_generator_p.def_impl
def _rng_bit_generator_impl(key: np.ndarray, *, shape, dtype: PT, algorithm):
    width = dtype.bit_width
    words, new_state = _generate(_resolve(algorithm), [int(w) for w in key], tuple(shape),
                                 64 if width == 64 else 32)
    bits = words.astype(_UNSIGNED_OF_WIDTH[width])  # narrower types keep the low bits
    return np.array([w % 2 ** 64 for w in new_state], _U64), bits.view(dtype.numpy_dtype)


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: Any = RandomAlgorithm.RNG_DEFAULT) -> tuple[Any, Any]:
    """XLA's RngBitGenerator: ``(new_key, bits)`` of ``shape`` and ``dtype``.

    ``key`` is the initial state (``u64[2]``; ``u64[3]`` for PHILOX; or
    JAX's ``u32[4]``/``u32[6]``, little-endian word pairs, and the new key
    comes back in that form); ``algorithm`` a :class:`RandomAlgorithm` or its
    name.  The bits are XLA's exactly (see the module docstring).
    """
    params = dict(shape=as_int_tuple("rng_bit_generator", "shape", shape),
                  dtype=canonical_type(dtype), algorithm=RandomAlgorithm.of(algorithm))
    aval = abstractify(key)
    if aval.element_type is not PT.U32 or aval.ndim != 1 or aval.dimensions[0] % 2:
        return rng_bit_generator_p.bind(key, **params)
    from .elementwise import bitcast_convert_type
    from .shape_ops import reshape
    words = aval.dimensions[0]
    state = bitcast_convert_type(reshape(key, (words // 2, 2)), PT.U64)
    new_state, bits = rng_bit_generator_p.bind(state, **params)
    return reshape(bitcast_convert_type(new_state, PT.U32), (words,)), bits


def uniform_from_bits(bits: Any, dtype: Any = np.float32) -> np.ndarray:
    """Uniform floats in [0, 1) from random bits, as XLA's
    ConvertRandomBitsToUniformFloatingPoint does: the top mantissa-many bits
    scaled by 2**-mantissa (f16 from u16 bits: 10 bits as the mantissa of a
    number in [1, 2), minus 1).  ``bits`` must be unsigned and at least as
    wide as the mantissa.  NumPy helper (not traced)."""
    bits = np.asarray(bits)
    t = canonical_type(dtype)
    if bits.dtype.kind != "u" or not t.is_floating:
        raise TypeError(f"uniform_from_bits: needs unsigned bits and a float dtype, got "
                        f"{bits.dtype} and {t.short_name}")
    if t is PT.F16 and bits.dtype == np.uint16:
        words = (bits & np.uint16(0x3FF)) | np.uint16(15 << 10)
        return words.view(np.float16) - np.float16(1.0)
    mantissa = {PT.F16: 10, PT.BF16: 7, PT.F32: 23, PT.F64: 52}[t]
    width = bits.dtype.itemsize * 8
    if mantissa > width:
        raise TypeError(f"uniform_from_bits: {bits.dtype} bits are too narrow for "
                        f"{t.short_name}'s {mantissa} mantissa bits")
    top = (bits >> bits.dtype.type(width - mantissa)).astype(np.float64)
    values = top * 2.0 ** -mantissa
    return bf16_from_f32(values.astype(np.float32)) if t is PT.BF16 else \
        values.astype(t.numpy_dtype)


# --------------------------------------------------------------------------
# RngUniform and RngNormal (stateful, implementation-defined values)
# --------------------------------------------------------------------------

_generator = np.random.default_rng()


def seed_rng(seed: int | None) -> None:
    """Reseed the generator behind ``rng_uniform`` and ``rng_normal``."""
    global _generator
    _generator = np.random.default_rng(seed)


def _distribution_rule(op: str, kinds: tuple[str, ...], names: tuple[str, str]):
    """XLA's Rng shape rule: two scalar parameters of the output's element type."""
    def rule(a: AbstractValue, b: AbstractValue, *, shape: tuple[int, ...], dtype: PT
             ) -> AbstractValue:
        for name, v in zip(names, (a, b)):
            if v.ndim != 0:
                raise ShapeError(op, f"{name} must be a scalar, got {v.shape}", a, b)
        if not a.element_type is b.element_type is dtype:
            raise ShapeError(op, f"{names[0]} and {names[1]} must have the output's element "
                                 f"type {dtype.short_name}, got {a.element_type.short_name} "
                                 f"and {b.element_type.short_name}", a, b)
        check_kinds(op, a, kinds, what=f"{names[0]}/{names[1]}")
        if any(d < 0 for d in shape):
            raise ShapeError(op, f"shape {shape} has a negative dimension", a, b)
        return array_value(dtype, shape)
    return rule


rng_uniform_p = Primitive("rng_uniform", has_side_effect=True)
rng_normal_p = Primitive("rng_normal", has_side_effect=True)
rng_uniform_p.def_abstract_eval(_distribution_rule(
    "rng_uniform", ("pred", "signed", "unsigned", "float"), ("a", "b")))
rng_normal_p.def_abstract_eval(_distribution_rule("rng_normal", ("float",), ("mu", "sigma")))


def _as_f64(x: np.ndarray, t: PT) -> np.ndarray:
    return (bf16_to_f32(x) if t is PT.BF16 else x).astype(np.float64)


def _from_f64(values: np.ndarray, t: PT) -> np.ndarray:
    return bf16_from_f32(values.astype(np.float32)) if t is PT.BF16 else \
        values.astype(t.numpy_dtype)


def _below(b: np.ndarray, t: PT) -> np.ndarray:
    """The largest value of type ``t`` below ``b`` (in ``t``'s storage dtype)."""
    if t is PT.BF16:
        word = int(b)
        if word in (0, 0x8000):          # +-0: the smallest negative subnormal
            return np.uint16(0x8001)
        return np.uint16(word + 1 if word & 0x8000 else word - 1)
    return np.nextafter(b, b.dtype.type(-np.inf))


@rng_uniform_p.def_impl
def _rng_uniform_impl(a: np.ndarray, b: np.ndarray, *, shape, dtype: PT):
    if dtype is PT.PRED:
        # [false, true) holds only false; b <= a is implementation-defined: a
        return np.full(shape, bool(a))
    if dtype.is_integral:
        # XLA's UniformIntDistribution: a + (bits mod (b - a)) in wrap-around
        # arithmetic (b <= a is implementation-defined; this is what it gives)
        unsigned = _UNSIGNED_OF_WIDTH[dtype.bit_width]
        span = b.astype(unsigned) - a.astype(unsigned)
        bits = _generator.integers(0, np.iinfo(unsigned).max, size=shape, dtype=unsigned,
                                   endpoint=True)
        dist = bits % span if span else bits
        return (a.astype(unsigned) + dist).view(dtype.numpy_dtype)
    lo, hi = _as_f64(a, dtype), _as_f64(b, dtype)
    values = _from_f64(lo + (hi - lo) * _generator.random(shape), dtype)
    if hi > lo:  # rounding to a narrow type may reach b, which [a, b) excludes
        values = np.where(_as_f64(values, dtype) >= hi, _below(b, dtype), values)
    return values


@rng_normal_p.def_impl
def _rng_normal_impl(mu: np.ndarray, sigma: np.ndarray, *, shape, dtype: PT):
    m, s = _as_f64(mu, dtype), _as_f64(sigma, dtype)
    return _from_f64(m + s * _generator.standard_normal(shape), dtype)


def _distribution(prim: Primitive, op: str, x: Any, y: Any, shape: Sequence[int]) -> Any:
    shape = as_int_tuple(op, "shape", shape)
    x, y = promote(x, y)
    return prim.bind(x, y, shape=shape, dtype=abstractify(x).element_type)


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """XLA's RngUniform: values uniformly distributed over [a, b) (``b <= a`` is
    implementation-defined).  ``a`` and ``b`` are scalars of one type."""
    return _distribution(rng_uniform_p, "rng_uniform", a, b, shape)


def rng_normal(mu: Any, sigma: Any, shape: Sequence[int]) -> Any:
    """XLA's RngNormal: values drawn from N(mu, sigma); floating-point scalars."""
    return _distribution(rng_normal_p, "rng_normal", mu, sigma, shape)
