"""Lowerings of RngBitGenerator, RngUniform and RngNormal.

RngBitGenerator is generated as plain unsigned integer arithmetic, bit for
bit what ``primitives.rng`` (and XLA's RngBitGeneratorExpander) computes:

* THREE_FRY: Threefry-2x32, 20 rounds; block ``j`` encrypts ``counter + j``.
  64-bit outputs take one block per element (``lo | hi << 32``); narrower
  outputs take the two words of a block for two neighbouring elements of the
  split dimension (XLA's SplitShapeIntoHalves).  New state: ``[key, counter + blocks]``.
* PHILOX: Philox-4x32, 10 rounds; block ``j`` encrypts the 128-bit counter
  ``(lo + j, hi + carry)``; its four words go to four consecutive elements
  (two 64-bit elements).  New state: ``[key, lo + blocks(, hi + carry)]``.

The ciphers are the Numba functions ``threefry2x32_words`` and
``philox4x32_words`` below (compiled once and cached on disk; generated
modules import every public Numba function of the kernel modules), called
once per block from the generated loop.

Numba promotes ``uint32`` arithmetic to ``uint64``, so the 32-bit words are
kept in ``uint64`` variables and masked (``& 0xFFFFFFFF``) after every
addition and shift; every constant is a typed ``np.uint64`` (mixing
``uint64`` with a Python int would give float64).  Bits are stored into an
unsigned view of the output buffer (float and signed outputs are the bits
bitcast), addressed through the output's layout.

RngUniform/RngNormal are stateful with implementation-defined values: here
Numba's own per-thread NumPy generator (``np.random.random``,
``np.random.standard_normal``), with XLA's distributions as the reference
defines them (integers: ``a + bits mod (b - a)`` in wrap-around arithmetic;
floats: ``a + (b - a) * U`` computed in f64, never reaching ``b``).  Seed it
with :func:`compile.kernels.random_bits.seed`.
"""
from __future__ import annotations

import math


from numxla.primitives import rng
from numxla.tracer.graph import Equation
from numxla.tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, dtype_name
from ..layout_index import linear_index_expr
from ..registry import lowerings

__all__: list[str] = []

_M = "np.uint64(0xFFFFFFFF)"


def _u(value: int) -> str:
    return f"np.uint64({int(value) % 2 ** 64})"


def _emit_threefry(ctx: LoweringContext, k: tuple[str, str], x: tuple[str, str]) -> None:
    """Encrypt the words named ``x`` in place under key words ``k``."""
    ctx.emit(f"{x[0]}, {x[1]} = threefry2x32_words({k[0]}, {k[1]}, {x[0]}, {x[1]})")


def _emit_philox(ctx: LoweringContext, k: tuple[str, str], x: list[str]) -> None:
    """Philox-4x32-10 on the words named ``x`` (in place), key words ``k``."""
    ctx.emit(f"{', '.join(x)} = philox4x32_words({k[0]}, {k[1]}, {', '.join(x)})")


# --------------------------------------------------------------------------
# RngBitGenerator
# --------------------------------------------------------------------------

_HALF_CONVERSIONS = {PrimitiveType.F16: ("f16_to_f32", "f32_to_f16"),
                     PrimitiveType.BF16: ("bf16_to_f32", "f32_to_bf16")}
_UNSIGNED = {8: "np.uint8", 16: "np.uint16", 32: "np.uint32", 64: "np.uint64"}


def _unravel(ctx: LoweringContext, flat: str, dims: tuple[int, ...]) -> list[str]:
    """Row-major logical index of the flat position ``flat``."""
    index, stride = [], math.prod(max(d, 1) for d in dims)  # (empty: never runs)
    for d in dims:
        stride //= max(d, 1)
        index.append(f"(({flat} // {stride}) % {d})" if stride > 1 else f"({flat} % {d})")
    return index


def _lower_rng_bit_generator(ctx: LoweringContext, eq: Equation) -> None:
    (key,) = eq.inputs
    new_state, out = eq.outputs
    dims: tuple[int, ...] = tuple(eq.params["shape"])
    t: PrimitiveType = eq.params["dtype"]
    algorithm = rng._resolve(eq.params["algorithm"])
    width = t.bit_width
    nwords = key.aval.dimensions[0]

    state = [ctx.fresh("st") for _ in range(nwords)]
    for i, s in enumerate(state):
        ctx.emit(f"{s} = np.uint64({ctx.read(key, [str(i)])})")
    ctx.alloc(out)
    bits = ctx.fresh("bits")
    ctx.emit(f"{bits} = {ctx.name(out)}.view({_UNSIGNED[width]})")
    mask = _u(2 ** width - 1) if width < 64 else None
    out_shape = out.aval.shape

    def store(index: list[str], word: str) -> None:
        value = f"({word} & {mask})" if mask else word
        ctx.emit(f"{bits}[{linear_index_expr(out_shape, index)}] = {value}")

    k0, k1 = ctx.fresh("k"), ctx.fresh("k")
    ctx.emit(f"{k0} = {state[0]} & {_M}")
    ctx.emit(f"{k1} = {state[0]} >> {_u(32)}")

    if algorithm is rng.RandomAlgorithm.RNG_THREE_FRY:
        if width == 64:
            blocks = math.prod(dims)
        else:
            split, half = rng._split_in_halves(dims)
            blocks = math.prod(half)
        j, ctr, x0, x1 = (ctx.fresh(p) for p in ("j", "ctr", "x", "x"))
        with ctx.block(f"for {j} in range({blocks}):" if blocks else "if False:"):
            ctx.emit(f"{ctr} = {state[1]} + np.uint64({j})")
            ctx.emit(f"{x0} = {ctr} & {_M}")
            ctx.emit(f"{x1} = {ctr} >> {_u(32)}")
            _emit_threefry(ctx, (k0, k1), (x0, x1))
            if width == 64:
                store(_unravel(ctx, j, dims), f"({x0} | ({x1} << {_u(32)}))")
            elif not dims:
                store([], x0)
            else:
                h = _unravel(ctx, j, half)
                for w, word in enumerate((x0, x1)):
                    s = f"(2 * {h[split]} + {w})"
                    index = h[:split] + [s] + h[split + 1:]
                    if dims[split] % 2 and w == 1:
                        with ctx.block(f"if {s} < {dims[split]}:"):
                            store(index, word)
                    else:
                        store(index, word)
        ctx.alloc(new_state)
        ctx.write(new_state, ["0"], state[0])
        ctx.write(new_state, ["1"], f"{state[1]} + {_u(blocks)}")
        return

    # PHILOX
    n = math.prod(dims)
    per = 4 if width <= 32 else 2
    blocks = -(-n // per)
    lo = state[1]
    hi = state[2] if nwords == 3 else state[0]
    j, clo, chi = ctx.fresh("j"), ctx.fresh("clo"), ctx.fresh("chi")
    x = [ctx.fresh("x") for _ in range(4)]
    with ctx.block(f"for {j} in range({blocks}):" if blocks else "if False:"):
        ctx.emit(f"{clo} = {lo} + np.uint64({j})")
        ctx.emit(f"{chi} = {hi} + {_u(1)} if {clo} < {lo} else {hi}")
        ctx.emit(f"{x[0]} = {clo} & {_M}")
        ctx.emit(f"{x[1]} = {clo} >> {_u(32)}")
        ctx.emit(f"{x[2]} = {chi} & {_M}")
        ctx.emit(f"{x[3]} = {chi} >> {_u(32)}")
        _emit_philox(ctx, (k0, k1), x)
        words = x if per == 4 else [f"({x[0]} | ({x[1]} << {_u(32)}))",
                                    f"({x[2]} | ({x[3]} << {_u(32)}))"]
        e = ctx.fresh("e")
        for w, word in enumerate(words):
            ctx.emit(f"{e} = {j} * {per} + {w}")
            if n % per:
                with ctx.block(f"if {e} < {n}:"):
                    store(_unravel(ctx, e, dims), word)
            else:
                store(_unravel(ctx, e, dims), word)
    end = ctx.fresh("end")
    ctx.emit(f"{end} = {lo} + {_u(blocks)}")
    ctx.alloc(new_state)
    ctx.write(new_state, ["0"], state[0])
    ctx.write(new_state, ["1"], end)
    if nwords == 3:
        ctx.write(new_state, ["2"], f"{hi} + {_u(1)} if {end} < {lo} else {hi}")


# --------------------------------------------------------------------------
# RngUniform / RngNormal
# --------------------------------------------------------------------------

def _random_u64() -> str:
    """Source text of 64 uniformly random bits (two 32-bit draws)."""
    return ("((np.uint64(np.random.randint(0, 4294967296)) << np.uint64(32)) | "
            "np.uint64(np.random.randint(0, 4294967296)))")


def _lower_rng_uniform(ctx: LoweringContext, eq: Equation) -> None:
    a, b = eq.inputs
    (out,) = eq.outputs
    t: PrimitiveType = eq.params["dtype"]
    ctx.alloc(out)
    shape = out.aval.shape
    av, bv = ctx.fresh("ua"), ctx.fresh("ub")
    ctx.emit(f"{av} = {ctx.read(a, [])}")
    ctx.emit(f"{bv} = {ctx.read(b, [])}")
    if t is PrimitiveType.PRED:  # [false, true) holds only false; b <= a: a
        with ctx.loops(shape) as idx:
            ctx.write(out, idx, av)
        return
    if t.is_integral:
        width = t.bit_width
        mask = _u(2 ** width - 1)
        ua, span, view = ctx.fresh("uu"), ctx.fresh("span"), ctx.fresh("uv")
        ctx.emit(f"{ua} = np.uint64({av}) & {mask}")
        ctx.emit(f"{span} = (np.uint64({bv}) - {ua}) & {mask}")
        ctx.emit(f"{view} = {ctx.name(out)}.view({_UNSIGNED[width]})")
        r = ctx.fresh("rb")
        with ctx.loops(shape) as idx:
            ctx.emit(f"{r} = {_random_u64()} & {mask}")
            ctx.emit(f"if {span} != np.uint64(0):")
            ctx.emit(f"    {r} = {r} % {span}")
            ctx.emit(f"{view}[{linear_index_expr(shape, idx)}] = ({ua} + {r}) & {mask}")
        return
    lo, hi, v = ctx.fresh("lo"), ctx.fresh("hi"), ctx.fresh("rv")
    ctx.emit(f"{lo} = np.float64({av})")
    ctx.emit(f"{hi} = np.float64({bv})")
    compute = dtype_name(t)
    below = ctx.fresh("below")
    half = _HALF_CONVERSIONS.get(t)
    if half:  # the 16-bit value just below b, from its word (sign and magnitude)
        to_f32, from_f32 = half
        word = ctx.fresh("bw")
        ctx.emit(f"{word} = np.uint16({from_f32}({bv}))")
        ctx.emit(f"{below} = {to_f32}(np.uint16(0x8001) if ({word} & np.uint16(0x7FFF)) == "
                 f"np.uint16(0) else ({word} + np.uint16(1) if {word} & np.uint16(0x8000) "
                 f"else {word} - np.uint16(1)))")
    else:
        ctx.emit(f"{below} = np.nextafter({compute}({bv}), {compute}(-np.inf))")
    with ctx.loops(shape) as idx:
        ctx.emit(f"{v} = {compute}({lo} + ({hi} - {lo}) * np.random.random())")
        if half:  # the value as stored
            ctx.emit(f"{v} = {half[0]}({half[1]}({v}))")
        # rounding to a narrower type may reach b, which [a, b) excludes
        ctx.emit(f"if {hi} > {lo} and np.float64({v}) >= {hi}:")
        ctx.emit(f"    {v} = {below}")
        ctx.write(out, idx, v)


def _lower_rng_normal(ctx: LoweringContext, eq: Equation) -> None:
    mu, sigma = eq.inputs
    (out,) = eq.outputs
    t: PrimitiveType = eq.params["dtype"]
    ctx.alloc(out)
    m, s = ctx.fresh("mu"), ctx.fresh("sg")
    ctx.emit(f"{m} = np.float64({ctx.read(mu, [])})")
    ctx.emit(f"{s} = np.float64({ctx.read(sigma, [])})")
    with ctx.loops(out.aval.shape) as idx:
        ctx.write(out, idx, f"{dtype_name(t)}({m} + {s} * np.random.standard_normal())")


lowerings[rng.rng_bit_generator_p] = _lower_rng_bit_generator
lowerings[rng.rng_uniform_p] = _lower_rng_uniform
lowerings[rng.rng_normal_p] = _lower_rng_normal
