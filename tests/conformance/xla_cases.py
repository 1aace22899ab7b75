"""Run the cases transcribed from XLA's own C++ tests (shared/conformance/xla_tests).

Each case names an XlaBuilder call (``op``) with its ``params``, inputs and
expected outputs; ``build_part*.py`` beside the data documents what every
``op``/``params`` means.  ``OPS`` maps an op name to a small function of
``(params, *inputs)`` calling numxla's op set; ``op: program`` cases look up
their named program in :mod:`.xla_programs`.  Inputs come from the case
(inline data, hex ``bits``, ``npz`` arrays) or from the shared directory's
``xla_ref.generate`` (``gen`` specs); nothing of the shared data is copied here.

:func:`case_function` gives a case as a function of its inputs (what
``compile.jit`` wraps), :func:`layouts` its argument and result layouts, and
:func:`check_results` compares results with the case's expectations the way
XLA's literal comparison does (``tol`` = ErrorSpec(abs, rel); none: bitwise,
except that any NaN matches any NaN).  The s64/u64/f64/c128 cases need
``jax_enable_x64``, which tests/conftest.py turns on (``NUMXLA_ENABLE_X64=1``).
"""
from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import numxla.primitives as lax
from numxla.tracer.core import abstractify, bf16_array
from numxla.tracer.shapes import PrimitiveType as PT
from numxla.tracer.shapes import bf16_from_f32, bf16_to_f32

from ..shared_data import conformance_file

DTYPES = {t.value: t for t in PT if t not in (PT.TUPLE, PT.TOKEN)}


@functools.cache
def load_cases() -> tuple[dict, ...]:
    """Every case of ``xla_tests/cases.json`` (a skip when the data is absent)."""
    return tuple(json.loads(conformance_file("xla_tests/cases.json").read_text())["cases"])


@functools.cache
def _npz() -> dict[str, np.ndarray]:
    with np.load(conformance_file("xla_tests/cases_arrays.npz")) as data:
        return {key: data[key] for key in data.files}


@functools.cache
def _generate() -> Callable[[dict], np.ndarray]:
    """``xla_ref.generate``, imported from the shared directory."""
    directory = str(conformance_file("xla_tests/xla_ref.py").parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    from xla_ref import generate
    return generate


def source_file(case: dict) -> str:
    return case["source"].split(":")[0]


# -- tensors ----------------------------------------------------------------------

_SPECIAL = {"inf": np.inf, "-inf": -np.inf, "nan": np.nan, "-nan": -np.nan, "-0": -0.0}


def _float(value: Any) -> float:
    return _SPECIAL[value] if isinstance(value, str) else float(value)


def _stored(spec: dict) -> np.ndarray:
    """The spec's values in the NumPy type the transcription used (bf16: f32)."""
    t = DTYPES[spec["dtype"]]
    nd = np.dtype(np.float32) if t is PT.BF16 else np.dtype(t.numpy_dtype)
    shape = tuple(spec["shape"])
    if "gen" in spec:
        return _generate()({**spec, "dtype": "f32" if t is PT.BF16 else spec["dtype"]})
    if "npz" in spec:
        return _npz()[spec["npz"]]
    if "bits" in spec:
        words = np.array([int(b, 16) for b in spec["bits"]], dtype=f"u{nd.itemsize}")
        return words.view(nd).reshape(shape)
    data = spec["data"]
    if nd.kind == "c":
        values = [complex(_float(re), _float(im)) for re, im in data]
    elif nd.kind == "f":
        values = [_float(v) for v in data]
    else:
        values = data
    return np.array(values, dtype=nd).reshape(shape)


def to_array(spec: dict) -> np.ndarray:
    """A case tensor as a NumPy array of numxla's storage type (bf16: words)."""
    t = DTYPES[spec["dtype"]]
    arr = _stored(spec)
    if t is PT.BF16:
        if "bits" in spec:  # f32 words whose upper halves are the bf16 words
            return bf16_array((arr.view(np.uint32) >> 16).astype(np.uint16))
        return bf16_array(bf16_from_f32(np.asarray(arr, np.float32)))
    return np.array(arr, dtype=t.numpy_dtype)


def const(value: Any, like: Any) -> np.ndarray:
    """``value`` as a constant of ``like``'s element type."""
    t = abstractify(like).element_type
    if t is PT.BF16:
        return bf16_array(bf16_from_f32(np.asarray(value, np.float32)))
    return np.asarray(value, t.numpy_dtype)


def element_type(name: str) -> PT:
    return DTYPES[name]


# -- the op table ----------------------------------------------------------------

OPS: dict[str, Callable[..., Any]] = {}


def rule(*names: str):
    """Register the function of ``(params, *inputs)`` running the ops ``names``."""
    def deco(fn):
        for name in names:
            if name in OPS:
                raise ValueError(f"{name} is mapped twice")
            OPS[name] = fn
        return fn
    return deco


# scalar computations, by the names the transcriptions give them
COMPUTATIONS: dict[str, Callable[..., Any]] = {
    "add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min,
    "and": lax.bitwise_and, "or": lax.bitwise_or, "rhs": lambda a, b: b,
    "min_add_8": lambda a, b: lax.min(lax.add(a, b), const(8.0, a)),
}

UNARY = {
    "neg": lax.neg, "is_finite": lax.is_finite, "not": lax.bitwise_not,
    "population_count": lax.population_count, "clz": lax.clz, "cos": lax.cos, "sin": lax.sin,
    "tanh": lax.tanh, "exp": lax.exp, "log": lax.log, "sqrt": lax.sqrt, "real": lax.real,
    "imag": lax.imag, "floor": lax.floor, "ceil": lax.ceil, "square": lambda x: lax.mul(x, x),
}

BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
    "pow": lax.pow, "max": lax.max, "min": lax.min, "atan2": lax.atan2,
    "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
    "shift_left": lax.shift_left, "shift_right_arithmetic": lax.shift_right_arithmetic,
    "shift_right_logical": lax.shift_right_logical,
    "eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge,
    "eq_total_order": lax.eq_total_order, "ge_total_order": lax.ge_total_order,
}


@rule("unary")
def _unary(p, x):
    return UNARY[p["fn"]](x)


@rule("binary")
def _binary(p, x, y=None):
    if "const_rhs" in p:  # the divisor is a constant of the computation
        y = to_array(p["const_rhs"])
    bd = p.get("broadcast_dimensions")
    fn = BINARY[p["fn"]]
    return fn(x, y) if bd is None else fn(x, y, broadcast_dimensions=bd)


@rule("clamp")
def _clamp(p, lo, x, hi):
    return lax.clamp(lo, x, hi)


@rule("select")
def _select(p, pred, on_true, on_false):
    return lax.select(pred, on_true, on_false)


@rule("convert")
def _convert(p, x):
    return lax.convert_element_type(x, element_type(p["new_dtype"]))


@rule("bitcast_convert")
def _bitcast_convert(p, x):
    return lax.bitcast_convert_type(x, element_type(p["new_dtype"]))


@rule("reduce_precision")
def _reduce_precision(p, x):
    return lax.reduce_precision(x, p["exponent_bits"], p["mantissa_bits"])


@rule("iota")
def _iota(p):
    return lax.broadcasted_iota(element_type(p["dtype"]), p["shape"], p["dimension"])


@rule("broadcast")
def _broadcast(p, x):
    return lax.broadcast(x, p["sizes"])


@rule("broadcast_in_dim")
def _broadcast_in_dim(p, x):
    return lax.broadcast_in_dim(x, p["shape"], p["broadcast_dimensions"])


@rule("reshape")
def _reshape(p, x):
    """ReshapeTest: an optional negation, then Collapse, Transpose or Reshape(dims, sizes)."""
    if p.get("negate_first"):
        x = lax.neg(x)
    if p.get("collapse") is not None:
        return lax.collapse(x, p["collapse"])
    if p.get("new_sizes") is None:
        return lax.transpose(x, p["transpose_first"])
    return lax.reshape(x, p["new_sizes"], p.get("transpose_first"))


@rule("transpose")
def _transpose(p, x):
    return lax.transpose(x, p["permutation"])


@rule("rev")
def _rev(p, x):
    return lax.rev(x, p["dimensions"])


@rule("concatenate")
def _concatenate(p, *xs):
    return lax.concatenate(xs, p["dimension"])


@rule("slice")
def _slice(p, x):
    return lax.slice(x, p["start_indices"], p["limit_indices"], p["strides"])


@rule("dynamic_slice")
def _dynamic_slice(p, x, *starts):
    return lax.dynamic_slice(x, starts, p["slice_sizes"], allow_negative_indices=False)


@rule("dynamic_update_slice")
def _dynamic_update_slice(p, x, update, *starts):
    return lax.dynamic_update_slice(x, update, starts, allow_negative_indices=False)


@rule("pad")
def _pad(p, x, value):
    return lax.pad(x, value, p["padding_config"])


@rule("reduce")
def _reduce(p, x, init):
    return lax.reduce(x, init, COMPUTATIONS[p["computation"]], p["dimensions"])


VARIADIC = {  # reducers of (acc, x) pairs of tuples
    "add_add": lambda acc, x: (lax.add(acc[0], x[0]), lax.add(acc[1], x[1])),
    "add_mul": lambda acc, x: (lax.add(acc[0], x[0]), lax.mul(acc[1], x[1])),
    "add0_add0": lambda acc, x: (lax.add(acc[0], x[0]),) * 2,
    "argmax_gt": lambda acc, x: (lax.select(lax.gt(x[0], acc[0]), x[0], acc[0]),
                                 lax.select(lax.gt(x[0], acc[0]), x[1], acc[1])),
}


@rule("reduce_variadic")
def _reduce_variadic(p, *xs):
    if p.get("iota_index"):  # (values, init, index init): the u32 index is an iota
        a, init, index_init = xs
        index = lax.broadcasted_iota(PT.U32, abstractify(a).dimensions, 0)
        operands, inits = (a, index), (init, index_init)
    else:
        operands, inits = tuple(xs[:len(xs) // 2]), tuple(xs[len(xs) // 2:])
    return lax.reduce(operands, inits, VARIADIC[p["computation"]], p["dimensions"])


def _padding(padding):
    return padding if isinstance(padding, str) else [tuple(lh) for lh in padding]


def _window_args(p) -> dict:
    return {"window_dimensions": p["window_dimensions"], "window_strides": p["window_strides"],
            "padding": _padding(p["padding"]), "base_dilation": p.get("base_dilation"),
            "window_dilation": p.get("window_dilation")}


@rule("reduce_window")
def _reduce_window(p, x, init):
    if p.get("negate_first"):
        x = lax.neg(x)
    if p.get("broadcast_input"):  # the test's operand is a broadcast scalar
        dims = abstractify(x).dimensions
        x = lax.broadcast(lax.reshape(lax.slice(x, (0,) * len(dims), (1,) * len(dims)), ()),
                          dims)
    return lax.reduce_window(x, init, COMPUTATIONS[p["computation"]], **_window_args(p))


@rule("reduce_window_variadic")
def _reduce_window_variadic(p, *xs):
    n = len(xs) // 2
    return lax.reduce_window(tuple(xs[:n]), tuple(xs[n:]), VARIADIC[p["computation"]],
                             **_window_args(p))


@rule("select_and_scatter")
def _select_and_scatter(p, operand, source, init):
    if p.get("reshape_first"):
        r = p["reshape_first"]
        operand = lax.reshape(operand, r["new_sizes"], r["dimensions"])
    select = {"ge": lax.ge}[p["select"]]
    return lax.select_and_scatter(operand, select, p["window_dimensions"], p["window_strides"],
                                  _padding(p["padding"]), source, init,
                                  COMPUTATIONS[p["scatter"]])


def _through_f32(p, x):
    return lax.convert_element_type(x, PT.F32) if p.get("convert_through") else x


@rule("batch_norm_training")
def _batch_norm_training(p, x, scale, offset):
    out, mean, var = lax.batch_norm_training(_through_f32(p, x), scale, offset,
                                             p["epsilon"], p["feature_index"])
    return lax.convert_element_type(out, abstractify(x).element_type), mean, var


@rule("batch_norm_inference")
def _batch_norm_inference(p, x, scale, offset, mean, var):
    return lax.batch_norm_inference(x, scale, offset, mean, var, p["epsilon"],
                                    p["feature_index"])


@rule("batch_norm_grad")
def _batch_norm_grad(p, x, scale, mean, var, grad_out):
    gx, gs, go = lax.batch_norm_grad(_through_f32(p, x), scale, mean, var,
                                     _through_f32(p, grad_out), p["epsilon"],
                                     p["feature_index"])
    return lax.convert_element_type(gx, abstractify(x).element_type), gs, go


@rule("gather")
def _gather(p, operand, indices):
    dnums = lax.GatherDimensionNumbers(p["offset_dims"], p["collapsed_slice_dims"],
                                       p["start_index_map"])
    out = lax.gather(operand, indices, dnums, p["slice_sizes"],
                     index_vector_dim=p["index_vector_dim"])
    post = p.get("post")
    if post == "add_one":  # the Fused* tests add one to the gathered values
        return lax.add(out, const(1, out))
    return out if post is None else lax.reshape(out, post)


SCATTER_COMBINERS = {"replace": None, "add": lax.add, "mul": lax.mul}


def _scatter_dnums(p):
    return lax.ScatterDimensionNumbers(p["update_window_dims"], p["inserted_window_dims"],
                                       p["scatter_dims_to_operand_dims"])


@rule("scatter")
def _scatter(p, operand, indices, updates):
    if p.get("pre") == "double_all":  # WithFusedAdds: every operand is x + x
        operand, indices, updates = (lax.add(v, v) for v in (operand, indices, updates))
    out = lax.scatter(operand, indices, updates, _scatter_dnums(p),
                      update_computation=SCATTER_COMBINERS[p["computation"]],
                      unique_indices=bool(p.get("unique_indices")),
                      index_vector_dim=p["index_vector_dim"])
    return out[0] if isinstance(out, tuple) else out


@rule("scatter_variadic")
def _scatter_variadic(p, o0, o1, indices, u0, u1):
    assert p["computation"] == "replace"
    return lax.scatter((o0, o1), indices, (u0, u1), _scatter_dnums(p),
                       update_computation=lambda a0, a1, b0, b1: (b0, b1),
                       index_vector_dim=p["index_vector_dim"])


@rule("dot")
def _dot(p, a, b):
    return lax.dot(a, b)


def dot_dnums(dimension_numbers) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    return (tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))


@rule("dot_general")
def _dot_general(p, a, b):
    return lax.dot_general(a, b, dot_dnums(p["dimension_numbers"]))


@rule("conv")
def _conv(p, lhs, rhs):
    dn = p.get("dimension_numbers")
    return lax.conv_general_dilated(
        lhs, rhs, p["window_strides"], _padding(p["padding"]),
        dimension_numbers=lax.ConvDimensionNumbers(*map(tuple, dn)) if dn else None,
        feature_group_count=p.get("feature_group_count", 1))


@rule("cholesky")
def _cholesky(p, a):
    return lax.cholesky(a, lower=p["lower"])


@rule("triangular_solve")
def _triangular_solve(p, a, b):
    return lax.triangular_solve(a, b, left_side=p["left_side"], lower=p["lower"],
                                unit_diagonal=p["unit_diagonal"], transpose_a=p["transpose_a"])


def _lt(a, b):
    return lax.lt(a, b)


def _multi_element_lt(a, b):
    """sort_test MultiElementComparator: ``a < b`` computed through f32[2] values."""
    idx = lax.iota(PT.F32, 2)
    cmp = lax.lt(lax.add(lax.broadcast(a, (2,)), idx), lax.add(lax.broadcast(b, (2,)), idx))
    return lax.reshape(lax.slice(cmp, (0,), (1,)), ())


COMPARATORS = {"lt": _lt, "multi_element_lt": _multi_element_lt}


@rule("sort")
def _sort(p, x):
    return lax.sort(x, dimension=p["dimension"], is_stable=False,
                    comparator=COMPARATORS[p["comparator"]])


@rule("sort_variadic")
def _sort_variadic(p, *xs):  # the comparator reads operand 0: (lhs_0, rhs_0, ...)
    cmp = COMPARATORS[p["comparator"]]
    return lax.sort(xs, dimension=p["dimension"], is_stable=False,
                    comparator=lambda *args: cmp(args[0], args[1]))


@rule("map")
def _map(p, *xs):
    from .xla_programs import MAP_COMPUTATIONS
    return lax.map(xs, MAP_COMPUTATIONS[p["computation"]], p["dimensions"])


@rule("conditional")
def _conditional(p, index, *operands):
    from .xla_programs import BRANCHES
    computations = [BRANCHES[name] for name, _ in p["branches"]]
    branch_operands = [tuple(operands[i] for i in ix) for _, ix in p["branches"]]
    return lax.conditional(index, computations, branch_operands)


@rule("program")
def _program(p, *xs):
    from .xla_programs import PROGRAMS
    return PROGRAMS[p["name"]](p, *xs)


# -- running and checking ------------------------------------------------------------

def skip_reason(case: dict) -> str | None:
    """Why a case is out of scope, or None: its ``requires`` (element types
    numxla does not have), which two s4/u4 cases imply without the field."""
    required = case.get("requires") or sorted(
        {s["dtype"] for s in case["inputs"] + case["expected"]} - set(DTYPES))
    return f"requires {', '.join(required)}" if required else None


def case_function(case: dict) -> Callable[..., list]:
    """The case as a function of its inputs, returning its results in ``expected`` order."""
    op, params = case["op"], case["params"]
    if op not in OPS:
        raise NotImplementedError(f"no rule for op {op!r}")

    def run(*inputs):
        out = OPS[op](params, *inputs)
        return list(out) if isinstance(out, (tuple, list)) else [out]
    run.__name__ = f"case_{case['id']}"
    return run


def layouts(case: dict) -> tuple[list, list]:
    """The case's argument and result layouts (minor_to_major tuples or None):
    ``in_layouts`` per input, ``in_layout`` for the first input, ``out_layout``
    for the results."""
    p = case["params"]
    ins: list = [None] * len(case["inputs"])
    for k, layout in enumerate(p.get("in_layouts") or ()):
        ins[k] = tuple(layout) if layout is not None else None
    if p.get("in_layout") is not None:
        ins[0] = tuple(p["in_layout"])
    out = tuple(p["out_layout"]) if p.get("out_layout") is not None else None
    return ins, [out] * len(case["expected"])


def has_layouts(case: dict) -> bool:
    ins, outs = layouts(case)
    return any(x is not None for x in ins + outs)


def inputs_of(case: dict) -> list:
    """The case's inputs; those with a layout as ``compile.device_put`` arrays."""
    from numxla.compile import device_put
    ins, _ = layouts(case)
    return [to_array(spec) if layout is None else device_put(to_array(spec), layout)
            for spec, layout in zip(case["inputs"], ins)]


def run_eager(case: dict) -> list:
    with np.errstate(all="ignore"):
        return case_function(case)(*inputs_of(case))


def _near(got: np.ndarray, want: np.ndarray, tol: dict | None) -> np.ndarray:
    """XLA's literal comparison per element (floating point, real)."""
    with np.errstate(all="ignore"):  # (signalling NaNs)
        g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    if tol is None:  # bitwise, but any NaN matches any NaN
        return both_nan | ((g == w) & (np.signbit(g) == np.signbit(w)))
    with np.errstate(all="ignore"):
        err = np.where(np.isfinite(g) & np.isfinite(w), np.abs(g - w), np.inf)
        rel = np.where(w != 0, err / np.abs(w), np.inf)
    return both_nan | (g == w) | (err <= tol["abs"]) | (rel <= tol["rel"])


def _deviation(got: np.ndarray, want: np.ndarray, ok: np.ndarray) -> str:
    bad = np.flatnonzero(~ok.reshape(-1))
    g, w = got.reshape(-1), want.reshape(-1)
    with np.errstate(all="ignore"):
        diff = np.abs(g[bad].astype(np.complex128) - w[bad].astype(np.complex128))
    worst = bad[np.nanargmax(np.where(np.isnan(diff), np.inf, diff))] if diff.size else bad[0]
    index = np.unravel_index(worst, got.shape) if got.shape else ()
    return (f"{bad.size}/{ok.size} elements differ; max deviation {np.nanmax(diff):.4g} "
            f"at {tuple(int(i) for i in index)}: got {g[worst]!r}, want {w[worst]!r}")


def compare(case: dict, results: Sequence[Any], check_layouts: bool = False) -> list[str]:
    """The problems of ``results`` against the case's expectations (empty: they pass)."""
    expected = case["expected"]
    if len(results) != len(expected):
        return [f"{len(results)} results, {len(expected)} expected"]
    problems = []
    _, out_layouts = layouts(case)
    for k, (spec, got, layout) in enumerate(zip(expected, results, out_layouts)):
        shape = getattr(got, "xla_shape", None)
        if check_layouts and layout is not None and (
                shape is None or tuple(shape.layout.minor_to_major) != layout):
            problems.append(f"result {k}: layout of {shape or type(got).__name__} is not "
                            f"{{{','.join(map(str, layout))}}}")
        want, got = to_array(spec), np.asarray(got)
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"result {k}: {got.dtype}{list(got.shape)} is not "
                            f"{want.dtype}{list(want.shape)} ({spec['dtype']})")
            continue
        t = DTYPES[spec["dtype"]]
        if t is PT.BF16:
            got, want = bf16_to_f32(got), bf16_to_f32(want)
        if got.dtype.kind in "fc":
            parts = [(got.real, want.real), (got.imag, want.imag)] if got.dtype.kind == "c" \
                else [(got, want)]
            ok = np.logical_and.reduce([_near(g, w, case.get("tol")) for g, w in parts])
        else:
            ok = got == want
        if not np.all(ok):
            problems.append(f"result {k}: {_deviation(got, want, np.asarray(ok))}")
    return problems


def check_results(case: dict, results: Sequence[Any], check_layouts: bool = False) -> None:
    problems = compare(case, results, check_layouts)
    assert not problems, f"{case['source']} ({case['op']}): " + "; ".join(problems)
