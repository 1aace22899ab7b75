"""Loop fusion (compile/fusion.py) and layout assignment
(compile/layout_assignment.py): fused graphs compute what the reference
semantics compute — the same function run eagerly, op by op, on NumPy — for
special values, 16-bit floats (rounded after every op, as the reference
does), trig arguments beyond the fast reduction's bound, non-default and
tiled layouts; and the optimised graph text and the generated code show that
the chains became single loops and the transposes bitcasts."""
from __future__ import annotations

import re

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.compile import device_put, jit
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import PrimitiveType as PT

rng = np.random.default_rng(5)


def chain(x):
    return xnp.tanh(2 * x + 1) * xnp.exp(-x) + 0.5 * xnp.sin(x)


def buffers_allocated(compiled) -> int:
    """Buffers allocated per call: by the kernels, or by the program for its results."""
    return len(re.findall(r"\b(?:empty_buf|zeros_buf|empty)\(", compiled.source))


def specials(dtype) -> np.ndarray:
    values = [0.0, -0.0, 1.0, -1.5, 3.0, 100.0, -80.0, np.inf, -np.inf, np.nan, 1e-40,
              3.0e6, -1.0e30, 1.0e30, 0.25]
    return np.concatenate([np.asarray(values), rng.standard_normal(49) * 4]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_chain_is_one_loop_and_matches_reference(dtype):
    x = specials(dtype)
    compiled = jit(chain).lower(x).compile()
    assert buffers_allocated(compiled) == 1          # the result only
    text = compiled.as_text()
    assert text.count("fused into %add") == 11     # every op but the root (3 broadcasts)
    assert "one loop nest computes this and 11 fused op(s)" in text
    with np.errstate(all="ignore"):
        expected = np.asarray(chain(x))                 # eager: op by op, reference semantics
    got = np.asarray(compiled(x))
    ulps = 4 if dtype == np.float32 else 2
    np.testing.assert_array_max_ulp(got[np.isfinite(expected)],
                                    expected[np.isfinite(expected)], maxulp=ulps * 8)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[np.isinf(expected)], expected[np.isinf(expected)])


def test_huge_trig_arguments_in_a_fused_loop_take_the_exact_path():
    x = np.array([1e30, -3e9, 0.5, 2.0 ** 29 + 1, 7e12], np.float32)
    f = jit(lambda x: xnp.sin(x) * 2 + xnp.cos(x))
    got = np.asarray(f(x))
    expected = (np.sin(x.astype(np.float64)) * 2 + np.cos(x.astype(np.float64))).astype(np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("t", [PT.F16, PT.BF16])
def test_sixteen_bit_chains_round_after_every_op(t):
    values = rng.standard_normal(64).astype(np.float32) * 3
    x = bf16_array(values) if t is PT.BF16 else values.astype(np.float16)
    f = lambda x: xnp.exp(x * x - 1) + xnp.tanh(x) * 3
    got = np.asarray(jit(f)(x))
    expected = np.asarray(f(x))
    np.testing.assert_array_equal(got, expected)   # bit-exact: same roundings, same order


@pytest.mark.parametrize("layout", [None, "{0,1}", "{1,0:T(2,2)}", "{0,1:T(4,8)(2,1)}"])
def test_reductions_of_fused_expressions_in_every_layout(layout):
    x = rng.standard_normal((37, 150)).astype(np.float32)
    arg = x if layout is None else device_put(x, layout)

    def f(x):
        e = xnp.exp(x - 1)
        return xnp.sum(e, axis=1), xnp.max(x * 2 + 1, axis=0), xnp.sum(xnp.where(x > 0, x, 0.0))
    compiled = jit(f, in_layouts=layout).lower(arg).compile()
    assert f"_buf({x.size}," not in compiled.source   # no intermediate of x's size
    rows, cols, total = (np.asarray(r) for r in compiled(arg))
    np.testing.assert_allclose(rows, np.exp(x - 1).sum(axis=1), rtol=2e-5)
    np.testing.assert_array_equal(cols, (x * 2 + 1).max(axis=0))
    np.testing.assert_allclose(total, np.where(x > 0, x, 0).sum(), rtol=2e-5)


def test_expensive_values_with_several_uses_are_materialised_cheap_ones_are_not():
    def f(x):
        e = xnp.exp(x)          # expensive, used twice: one buffer
        c = x * 2 + 1           # cheap, used twice: recomputed in both loops
        return xnp.sum(e * c, axis=0), e - c
    x = rng.standard_normal((8, 9)).astype(np.float32)
    compiled = jit(f).lower(x).compile()
    text = compiled.as_text()
    exp_line = next(line for line in text.splitlines() if " exp(" in line)
    assert "fused" not in exp_line and "{1,0}" in exp_line
    mul_line = next(line for line in text.splitlines() if " mul(" in line)
    assert "fused into %reduce_sum" in mul_line and "%sub" in mul_line
    s, d = (np.asarray(r) for r in compiled(x))
    np.testing.assert_allclose(s, (np.exp(x) * (x * 2 + 1)).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(d, np.exp(x) - (x * 2 + 1), rtol=1e-6, atol=1e-6)


def test_results_are_materialised_even_when_consumed():
    def f(x):
        y = x + 1
        return y, xnp.sum(y)
    x = np.arange(6, dtype=np.float32)
    y, s = jit(f)(x)
    np.testing.assert_array_equal(np.asarray(y), x + 1)
    assert float(s) == 21.0


def test_broadcasts_and_iota_fuse_as_index_remapping():
    def f(x, b):
        return x * b[None, :] + lax.broadcasted_iota(np.float32, x.shape, 0)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    compiled = jit(f, in_layouts=("{0,1}", None)).lower(device_put(x, "{0,1}"), b).compile()
    assert buffers_allocated(compiled) == 1
    expected = x * b + np.arange(5, dtype=np.float32)[:, None]
    np.testing.assert_allclose(np.asarray(compiled(device_put(x, "{0,1}"), b)), expected,
                               rtol=1e-6)


def test_transpose_becomes_a_bitcast_and_elementwise_results_follow_operand_layouts():
    def f(x, y):
        t = x.T                   # x is column-major: x.T is row-major, the same buffer
        z = xnp.exp(y) + 1        # y column-major: z takes its layout, then feeds a dot
        return t @ z.T, z @ x
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = rng.standard_normal((5, 6)).astype(np.float32)
    args = (device_put(x, "{0,1}"), device_put(y, "{0,1}"))
    compiled = jit(f, in_layouts=("{0,1}", "{0,1}")).lower(*args).compile()
    text = compiled.as_text()
    assert re.search(r"%transpose\.\d+ = f32\[4,6\]\{1,0\} transpose\(%x\)", text)
    assert re.search(r"%add\.\d+ = f32\[5,6\]\{0,1\} add", text)
    assert re.search(r"# %transpose\.\d+ = f32\[4,6\]\{1,0\} transpose\(%x\).*: a bitcast",
                     compiled.source)
    a, b = (np.asarray(r) for r in compiled(*args))
    np.testing.assert_allclose(a, x.T @ (np.exp(y) + 1).T, rtol=1e-5)
    np.testing.assert_allclose(b, (np.exp(y) + 1) @ x, rtol=1e-5)


def test_heavy_fused_loops_run_on_threads_and_match_the_serial_reference():
    x = rng.standard_normal(1 << 21).astype(np.float32) * 3
    x[12345] = 1e30                     # past the fast trig bound: the exact re-run, in prange
    compiled = jit(chain).lower(x).compile()
    assert "in prange(" in compiled.source and "parallel=True" in compiled.source
    got = np.asarray(compiled(x))
    expected = np.asarray(chain(x))
    np.testing.assert_allclose(got, expected, rtol=5e-6, atol=1e-6)
    small = jit(chain).lower(x[:1000]).compile()      # too little work for threads
    assert "prange(" not in small.source.split("def graph_fn")[1]
