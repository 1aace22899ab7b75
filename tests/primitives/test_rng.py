"""rng_bit_generator (XLA's exact bits), rng_uniform and rng_normal.

The exact-bit vectors below were produced by XLA:CPU (jaxlib 0.10.2 compiling a
``stablehlo.rng_bit_generator`` module), offline; the block ciphers are also
checked against the known-answer vectors of Random123, their reference
implementation.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.primitives.rng import RandomAlgorithm, philox4x32, rng_uniform_p, threefry2x32
from tests.conformance.harness import OpCall, load_cases, to_array
from tests.conformance.ops_rng import rng_call
from numxla.tracer import make_graph
from numxla.tracer.config import config
from numxla.tracer.core import ShapeError, bf16_array
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

U64_MAX = 2 ** 64 - 1

# (algorithm, state words, shape, dtype, new state words, bits as unsigned words)
XLA_VECTORS = [
    ("THREE_FRY", [1, 2], (3, 5), "uint8", [1, 11],
     [84, 59, 211, 3, 211, 96, 52, 173, 229, 23, 208, 130, 101, 78, 242]),
    ("THREE_FRY", [U64_MAX, U64_MAX - 1], (4, 1, 3), "uint16", [U64_MAX, 4],
     [33586, 38652, 31172, 53585, 11239, 64319, 57697, 65390, 26264, 60055, 58343, 23174]),
    ("THREE_FRY", [16045690984503098046, 12345], (), "uint32", [16045690984503098046, 12346],
     [1622272878]),
    ("THREE_FRY", [U64_MAX, U64_MAX - 1], (2, 3), "uint64", [U64_MAX, 4],
     [7225411326129570610, 13474818356711888636, 5645538382004713924, 17621154428984418657,
      9682708305750523758, 11360711067955521176]),
    ("THREE_FRY", [1, 2], (2, 3), "int32", [1, 5],
     [43444564, 3979645651, 1672743891, 2150618427, 3745730563, 4240503393]),
    ("PHILOX", [1, 2], (5,), "uint32", [1, 4],
     [2100602697, 2847456232, 2074354647, 800269529, 1828267006]),
    ("PHILOX", [16045690984503098046, 12345], (5,), "uint64", [16045690984503098046, 12348],
     [618708270129061502, 14053481001034739293, 12816868122665858267, 9590548225311501155,
      16149493957166806395]),
    ("PHILOX", [1, U64_MAX - 1, U64_MAX], (2, 3), "uint8", [1, 0, 0],
     [11, 113, 89, 48, 145, 2]),
    ("PHILOX", [5, U64_MAX - 2, 7], (3, 3, 3), "uint16", [5, 4, 8],
     [60388, 39689, 13948, 19255, 47708, 18099, 53263, 43157, 37919, 20887, 849, 15426,
      15911, 11399, 37658, 53291, 43597, 11174, 51262, 4781, 5512, 52224, 58356, 7928, 45375,
      52662, 64477]),
    ("PHILOX", [U64_MAX, U64_MAX - 1], (2, 1), "float32", [U64_MAX, U64_MAX],
     [25431128, 3820715433]),
    ("DEFAULT", [3, 4, 5], (4, 1, 3), "int8", [3, 7, 5],
     [167, 176, 103, 210, 232, 172, 29, 36, 218, 230, 142, 149]),
    ("DEFAULT", [1, 2], (1,), "float16", [1, 3], [42825]),
    ("DEFAULT", [1, 2], (0, 4), "uint32", [1, 2], []),
]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.mark.parametrize("algorithm, state, shape, dtype, new_state, words", XLA_VECTORS,
                         ids=[f"{v[0]}-{v[3]}-{v[2]}" for v in XLA_VECTORS])
def test_xla_bits(algorithm, state, shape, dtype, new_state, words):
    key, bits = lax.rng_bit_generator(np.array(state, np.uint64), shape, dtype, algorithm)
    assert key.dtype == np.uint64 and key.tolist() == new_state
    assert bits.shape == shape and bits.dtype == np.dtype(dtype)
    assert bits.reshape(-1).view(_UNSIGNED[bits.dtype.itemsize]).tolist() == words


def test_jax_style_u32_key_is_little_endian_u64_pairs():
    state = np.array([U64_MAX, U64_MAX - 1], np.uint64)
    new64, bits64 = lax.rng_bit_generator(state, (4, 1, 3), np.uint16, "THREE_FRY")
    new32, bits32 = lax.rng_bit_generator(state.view(np.uint32), (4, 1, 3), np.uint16,
                                          "THREE_FRY")
    assert new32.dtype == np.uint32 and new32.shape == (4,)
    np.testing.assert_array_equal(new32.view(np.uint64), new64)
    np.testing.assert_array_equal(bits32, bits64)


def test_spec_example():
    (case,) = [c for c in load_cases() if c["id"].startswith("spec/rng_bit_generator")]
    key, bits = lax.rng_bit_generator(to_array(case["inputs"][0]), (2, 2), np.uint64,
                                      RandomAlgorithm.RNG_THREE_FRY)
    assert key.tolist() == [1, 6]
    assert bits.reshape(-1).tolist() == [9236835810183407956, 16087790271692313299,
                                         18212823393184779219, 2658481902456610144]


# -- the block ciphers against Random123's known answers -----------------------------------

def _hex(words):
    return [f"{int(w):08x}" for w in words]


@pytest.mark.parametrize("key, counter, expected", [
    ((0, 0), (0, 0), ["6b200159", "99ba4efe"]),
    ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, ["1cb996fc", "bb002be7"]),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), ["c4923a9c", "483df7a0"]),
])
def test_threefry2x32_20_known_answers(key, counter, expected):
    assert _hex(threefry2x32(key, counter)) == expected


@pytest.mark.parametrize("key, counter, expected", [
    ((0, 0), (0, 0, 0, 0), ["6627e8d5", "e169c58d", "bc57ac4c", "9b00dbd8"]),
    ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 4, ["408f276d", "41c83b0e", "a20bc7c6", "6d5451fd"]),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     ["d16cfe09", "94fdcceb", "5001e420", "24126ea1"]),
])
def test_philox4x32_10_known_answers(key, counter, expected):
    assert _hex(philox4x32(key, counter)) == expected


# -- properties of the streams ---------------------------------------------------------------

@pytest.mark.parametrize("algorithm, dtype, first", [
    ("THREE_FRY", np.uint64, 3), ("PHILOX", np.uint64, 4), ("PHILOX", np.uint32, 8)])
def test_the_new_state_continues_the_stream(algorithm, dtype, first):
    """One block per u64 (THREE_FRY), two per 128-bit Philox block: drawing n
    then m values equals drawing n + m (for whole Philox blocks)."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        state = rng.integers(0, 2 ** 63, size=2, dtype=np.uint64)
        _, whole = lax.rng_bit_generator(state, (first + 12,), dtype, algorithm)
        state2, head = lax.rng_bit_generator(state, (first,), dtype, algorithm)
        _, tail = lax.rng_bit_generator(state2, (12,), dtype, algorithm)
        np.testing.assert_array_equal(np.concatenate([head, tail]), whole)


@pytest.mark.parametrize("algorithm", ["THREE_FRY", "PHILOX"])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 4, 3)])
def test_narrow_and_signed_types_reuse_the_unsigned_words(algorithm, shape):
    """8/16-bit outputs are the low bits of the 32-bit words; signed and float
    outputs are the unsigned words of their width, bitcast."""
    state = np.array([0x1234, 0xFEDC], np.uint64)
    new32, words32 = lax.rng_bit_generator(state, shape, np.uint32, algorithm)
    _, words64 = lax.rng_bit_generator(state, shape, np.uint64, algorithm)
    for dtype, unsigned in [(np.uint8, np.uint8), (np.int16, np.uint16), (np.float16, np.uint16),
                            (np.int32, np.uint32), (np.float32, np.uint32)]:
        new, bits = lax.rng_bit_generator(state, shape, dtype, algorithm)
        np.testing.assert_array_equal(new, new32)
        np.testing.assert_array_equal(bits.view(unsigned), (words32 & 0xFFFFFFFF).astype(unsigned))
    for dtype in (np.int64, np.float64):
        _, bits = lax.rng_bit_generator(state, shape, dtype, algorithm)
        np.testing.assert_array_equal(bits.view(np.uint64), words64)


def test_default_is_philox_as_on_xla_cpu():
    state = np.array([42, 43], np.uint64)
    for a, b in zip(lax.rng_bit_generator(state, (9,), np.uint32),
                    lax.rng_bit_generator(state, (9,), np.uint32, "RNG_PHILOX")):
        np.testing.assert_array_equal(a, b)


def test_bits_look_uniform():
    _, bits = lax.rng_bit_generator(np.array([5, 0], np.uint64), (64, 1000), np.uint32,
                                    "THREE_FRY")
    ones = np.unpackbits(bits.view(np.uint8)).mean()
    assert abs(ones - 0.5) < 0.005
    uniform = lax.uniform_from_bits(bits)
    assert uniform.dtype == np.float32 and 0 <= uniform.min() and uniform.max() < 1
    assert abs(uniform.mean() - 0.5) < 0.01


def test_uniform_from_bits_endpoints():
    np.testing.assert_array_equal(
        lax.uniform_from_bits(np.array([0, 2 ** 32 - 1], np.uint32)), [0.0, 1 - 2.0 ** -23])
    np.testing.assert_array_equal(
        lax.uniform_from_bits(np.array([0, 0xFFFF], np.uint16), np.float16), [0.0, 1 - 2.0 ** -10])


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key, kwargs, message", [
    (np.zeros(2, np.int64), {}, r"rng_bit_generator: algorithm RNG_DEFAULT needs an initial "
                                r"state of u64\[2\] or u64\[3\] \(or JAX's u32 form\), got s64\[2\]"),
    (np.zeros((2, 2), np.uint64), {}, r"got u64\[2,2\]"),
    (np.zeros(3, np.uint64), {"algorithm": "THREE_FRY"},
     r"algorithm RNG_THREE_FRY needs an initial state of u64\[2\] \(.*\), got u64\[3\]"),
    (np.zeros(4, np.uint64), {"algorithm": "PHILOX"}, r"u64\[2\] or u64\[3\] .*got u64\[4\]"),
    (np.zeros(3, np.uint32), {}, r"got u32\[3\]"),
    (np.zeros(8, np.uint32), {"algorithm": "THREE_FRY"}, r"got u64\[4\]"),
    (np.zeros(2, np.uint64), {"dtype": np.bool_}, r"dtype pred is not supported"),
    (np.zeros(2, np.uint64), {"dtype": np.complex64}, r"dtype c64 is not supported"),
    (np.zeros(2, np.uint64), {"shape": (2, -1)}, r"shape \(2, -1\) has a negative dimension"),
])
def test_rng_bit_generator_errors(key, kwargs, message):
    shape = kwargs.pop("shape", (3,))
    with pytest.raises(ShapeError, match=message):
        make_graph(lambda k: lax.rng_bit_generator(k, shape, **kwargs))(key)


def test_unknown_algorithm():
    with pytest.raises(ValueError, match="unknown algorithm 'MERSENNE'"):
        lax.rng_bit_generator(np.zeros(2, np.uint64), (2,), algorithm="MERSENNE")


def test_algorithm_names():
    assert RandomAlgorithm.of("three_fry") is RandomAlgorithm.RNG_THREE_FRY
    assert RandomAlgorithm.of("RNG_PHILOX") is RandomAlgorithm.RNG_PHILOX
    assert RandomAlgorithm.of("DEFAULT") is RandomAlgorithm.RNG_DEFAULT
    assert RandomAlgorithm.of(1) is RandomAlgorithm.RNG_THREE_FRY


# -- tracing ---------------------------------------------------------------------------------

def test_ops_trace_and_print():
    def f(key, lo, hi):
        new_key, bits = lax.rng_bit_generator(key, (2, 3), np.uint8, "PHILOX")
        return new_key, bits, lax.rng_uniform(lo, hi, (4,)), lax.rng_normal(lo, hi, (2, 2))
    text = make_graph(f)(np.zeros(3, np.uint64), np.float32(0), np.float32(1)).as_text()
    assert re.search(r"\(u64\[3\]\{0\}, u8\[2,3\]\{1,0\}\) rng_bit_generator\(%key\), "
                     r"shape=\{2,3\}, dtype=(?i:u8), algorithm=RNG_PHILOX", text)
    assert re.search(r"f32\[4\]\{0\} rng_uniform\(%lo, %hi\), shape=\{4\}, dtype=(?i:f32)", text)
    assert re.search(r"f32\[2,2\]\{1,0\} rng_normal\(%lo, %hi\), shape=\{2,2\}", text)


# -- rng_uniform / rng_normal ------------------------------------------------------------------

def test_uniform_float_range_and_moments():
    lax.seed_rng(1)
    x = lax.rng_uniform(np.float32(-2), np.float32(3), (200, 100))
    assert x.dtype == np.float32 and x.shape == (200, 100)
    assert x.min() >= -2 and x.max() < 3
    assert abs(x.mean() - 0.5) < 0.05 and abs(x.var() - 25 / 12) < 0.05


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64, np.int64])
def test_uniform_integers_cover_the_half_open_range(dtype):
    lax.seed_rng(2)
    x = lax.rng_uniform(dtype(3), dtype(9), (3000,))
    assert x.dtype == dtype
    assert sorted(set(x.tolist())) == [3, 4, 5, 6, 7, 8]


def test_uniform_signed_range_crossing_zero():
    lax.seed_rng(3)
    x = lax.rng_uniform(np.int8(-100), np.int8(100), (20000,))
    assert x.min() == -100 and x.max() == 99


def test_uniform_narrow_floats_never_reach_b():
    lax.seed_rng(4)
    h = lax.rng_uniform(np.float16(0), np.float16(1), (100000,))
    assert h.dtype == np.float16 and h.max() < 1 and h.min() >= 0
    b = lax.rng_uniform(_bf16(1.0), _bf16(2.0), (100000,))
    values = bf16_to_f32(np.asarray(b))
    assert values.min() >= 1 and values.max() == 2 - 2 ** -7


def _bf16(v: float):
    return bf16_array(bf16_from_f32(np.float32(v)))


def test_normal_moments():
    lax.seed_rng(5)
    x = lax.rng_normal(np.array(1.5), np.array(2.0), (100000,))
    assert x.dtype == np.float64
    assert abs(x.mean() - 1.5) < 0.03 and abs(x.std() - 2.0) < 0.03
    h = lax.rng_normal(np.float16(0), np.float16(1), (10000,))
    assert h.dtype == np.float16 and abs(float(h.astype(np.float32).std()) - 1) < 0.05


def test_seed_rng_makes_draws_reproducible():
    lax.seed_rng(11)
    a = lax.rng_normal(0.0, 1.0, (5,))
    lax.seed_rng(11)
    np.testing.assert_array_equal(lax.rng_normal(0.0, 1.0, (5,)), a)


def test_python_scalars_give_f32(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)  # (with x64: f64 and s64, as JAX's)
    assert lax.rng_uniform(0.0, 1.0, (3,)).dtype == np.float32
    assert lax.rng_uniform(0, 10, (3,)).dtype == np.int32


@pytest.mark.parametrize("call, message", [
    (lambda a: lax.rng_uniform(a, 1.0, (2,)), r"rng_uniform: a must be a scalar, got f32\[3\]"),
    (lambda a: lax.rng_normal(np.int32(0), np.int32(1), (2,)),
     r"rng_normal: mu/sigma element type s32 is not allowed \(expected float\)"),
    (lambda a: lax.rng_uniform(np.complex64(0), np.complex64(1), (2,)),
     r"rng_uniform: a/b element type c64 is not allowed"),
    (lambda a: lax.rng_uniform(0.0, 1.0, (-1,)), r"shape \(-1,\) has a negative dimension"),
    (lambda a: rng_uniform_p.bind(np.float32(0), np.array(1.0), shape=(2,), dtype=PT.F32),
     r"rng_uniform: a and b must have the output's element type f32, got f32 and f64"),
])
def test_distribution_errors(call, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(call)(np.zeros(3, np.float32))


def test_spec_rng_case_values_lie_in_a_b():
    """stablehlo.rng's values are implementation-defined: check shape and range."""
    (case,) = [c for c in load_cases() if c["op"] == "rng"]
    call = OpCall("rng", [to_array(s) for s in case["inputs"]], case["attributes"])
    out = rng_call(call)
    assert out.shape == (3, 3) and out.dtype == np.int32
    assert out.min() >= 0 and out.max() < 2
