"""Run the StableHLO / XLA conformance vectors (shared/conformance) against numxla.

Each case names a StableHLO op (or a small program of them) with inputs and
expected results.  ``OPS`` maps a StableHLO op name to a function calling
numxla's op set; families register their mappings in ``ops_<family>.py``
with :func:`register`.  A mapping receives an :class:`OpCall` and returns
one value or a tuple of values.

Regions (reduce computations, loop bodies, comparators) become Python
callables that run their ops through the same table, so the computations
numxla traces are built from the case's own text.
"""
from __future__ import annotations

import functools
import importlib
import json
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import PrimitiveType, bf16_from_f32, bf16_to_f32

from ..shared_data import conformance_file


# dtypes of the case file -> numxla element types
DTYPES = {
    "i1": PrimitiveType.PRED, "i8": PrimitiveType.S8, "i16": PrimitiveType.S16,
    "i32": PrimitiveType.S32, "i64": PrimitiveType.S64, "ui8": PrimitiveType.U8,
    "ui16": PrimitiveType.U16, "ui32": PrimitiveType.U32, "ui64": PrimitiveType.U64,
    "f16": PrimitiveType.F16, "bf16": PrimitiveType.BF16, "f32": PrimitiveType.F32,
    "f64": PrimitiveType.F64, "complex<f32>": PrimitiveType.C64,
    "complex<f64>": PrimitiveType.C128,
}
# Element types outside XLA's PrimitiveType list in the seeds (4-bit, 2-bit
# integers and 8-bit floats): cases using them are out of numxla's scope.


# Spec examples whose expected values are wrong in the source (the spec's
# text, not XLA): the corrected expectation, computed with NumPy from the inputs.
ERRATA: dict[str, tuple[str, Callable[..., list[np.ndarray]]]] = {
    "spec/divide/spec example (divide)#26": (
        "17.1 / 3 is 5.7, not 5.6667 (the interpreter test with these inputs expects 5.7)",
        lambda lhs, rhs: [lhs / rhs]),
    "spec/power/spec example (power)#59": (
        "10000.0 ** 10 is 1e40, finite in f64 (the spec says inf); 3 ** -1 in f64 is 1/3",
        lambda lhs, rhs: [np.power(lhs, rhs)]),
    "spec/tan/spec example (tan)#85": (
        "the spec gives tan of exact pi/2 and 3pi/2, not of its literal inputs 1.57079632, "
        "4.71238898", lambda x: [np.tan(x)]),
}


@functools.lru_cache(maxsize=None)
def load_cases() -> tuple[dict, ...]:
    cases = json.loads(conformance_file("stablehlo_cases.json").read_text())
    for case in cases:
        if case["id"] in ERRATA:
            _, corrected = ERRATA[case["id"]]
            with np.errstate(all="ignore"):
                values = corrected(*[to_array(spec) for spec in case["inputs"]])
            for expected, value in zip(case["expected"], values):
                expected["data"] = [str(v) if not np.isfinite(v) else float(v)
                                    for v in np.asarray(value).reshape(-1)]
                expected["errata"] = ERRATA[case["id"]][0]
    return tuple(cases)


# -- tensors ----------------------------------------------------------------------

def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return {"inf": np.inf, "-inf": -np.inf, "nan": np.nan, "-nan": -np.nan}[value]
    return value


def to_array(spec: dict) -> np.ndarray:
    """A tensor of the case file as a NumPy array of numxla's storage dtype."""
    t = DTYPES[spec["dtype"]]
    shape = tuple(spec["shape"])
    data = spec["data"]
    if t.is_complex:
        pairs = np.array([_scalar(v) for v in data], dtype=np.float64).reshape(-1, 2)
        arr = (pairs[:, 0] + 1j * pairs[:, 1]).astype(t.numpy_dtype)
    elif t is PrimitiveType.BF16:
        if "bits" in spec:
            words = np.array([int(b, 16) for b in spec["bits"]], dtype=np.uint16)
        else:
            words = bf16_from_f32(np.array([_scalar(v) for v in data], dtype=np.float32))
        return bf16_array(words.reshape(shape))
    elif "bits" in spec and t.is_floating:
        words = np.array([int(b, 16) for b in spec["bits"]],
                         dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[t.bit_width])
        arr = words.view(t.numpy_dtype)
    elif t is PrimitiveType.PRED:
        arr = np.array(data, dtype=bool)
    else:
        arr = np.array([_scalar(v) for v in data], dtype=np.float64 if t.is_floating
                       else object).astype(t.numpy_dtype)
    if arr.size == 0:
        arr = np.zeros(0, t.numpy_dtype)
    return arr.reshape(shape)


_TENSOR = re.compile(r"tensor<(?:([0-9x]*)x)?([a-z0-9<>]+)>")


@dataclass(frozen=True)
class TensorType:
    """A StableHLO result type such as ``tensor<2x3xf32>``."""

    dimensions: tuple[int, ...]
    element_type: PrimitiveType | None  # None for tokens

    @property
    def dtype(self):
        return self.element_type.numpy_dtype if self.element_type else None


def parse_type(text: str) -> TensorType:
    if "token" in text:
        return TensorType((), None)
    if text.strip().startswith("tuple<"):
        return TensorType((), PrimitiveType.TUPLE)
    text = text.strip()
    m = re.fullmatch(r"tensor<(.*)>", text)
    if not m:
        raise ValueError(f"unsupported type {text!r}")
    body = m.group(1)
    parts = body.split("x")
    # the element type may itself contain 'x' only for complex<...>
    if body.startswith("complex") or "complex" in body:
        head, _, elem = body.rpartition("complex")
        dims = [p for p in head.split("x") if p]
        elem = "complex" + elem
    else:
        dims, elem = parts[:-1], parts[-1]
    return TensorType(tuple(int(d) for d in dims), DTYPES.get(elem))


_OUT_OF_SCOPE = re.compile(r'(?<![a-wyz0-9])(u?i[24]|f8E[0-9A-Za-z]+)(?![0-9])')


def uses_out_of_scope_dtype(case: dict) -> bool:
    """Whether the case uses an element type outside the seeds' PrimitiveType list."""
    return bool(_OUT_OF_SCOPE.search(json.dumps(case)))


# -- the op table -------------------------------------------------------------------

@dataclass
class OpCall:
    """One StableHLO op to run: its operands, attributes, regions and result types."""

    name: str
    operands: list[Any]
    attributes: dict[str, Any]
    regions: list[Callable[..., Any]] = field(default_factory=list)
    result_types: list[TensorType] = field(default_factory=list)
    raw_regions: list[dict] = field(default_factory=list)
    functions: dict[str, dict] = field(default_factory=dict)  # callees (func.call)


OPS: dict[str, Callable[[OpCall], Any]] = {}


def register(*names: str):
    """Register a mapping for the StableHLO ops ``names``."""
    def deco(fn):
        for n in names:
            if n in OPS:
                raise ValueError(f"{n} is mapped twice")
            OPS[n] = fn
        return fn
    return deco


@functools.lru_cache(maxsize=None)
def load_mappings() -> None:
    """Import every ``ops_*.py`` module beside this one."""
    package = Path(__file__).parent
    for info in pkgutil.iter_modules([str(package)]):
        if info.name.startswith("ops_"):
            importlib.import_module(f"tests.conformance.{info.name}")


def _strip(op: str) -> str:
    return op.removeprefix("stablehlo.")


def ops_used(case: dict) -> set[str]:
    """Every op name the case needs (its own, its program's, its regions')."""
    found: set[str] = set()

    def walk(ops):
        for o in ops:
            if o["op"] not in ("stablehlo.return", "func.return", "stablehlo.constant"):
                found.add(_strip(o["op"]))
            for r in o.get("regions", ()):
                walk(r["ops"])

    if "program" in case:
        walk(case["program"]["ops"])
    else:
        found.add(case["op"])
    for r in case.get("regions", ()):
        walk(r["ops"])
    for fn in case.get("functions", {}).values():
        walk(fn["ops"])
    return found


# -- running ------------------------------------------------------------------------

def _constant_env(case: dict) -> dict[str, Any]:
    return {name: to_array(spec) for name, spec in case.get("captured_constants", {}).items()}


def make_region(region: dict, outer: dict[str, Any], case: dict) -> Callable[..., Any]:
    """A Python callable running ``region``'s ops (returning a tuple if several results)."""
    def fn(*args):
        env = dict(outer)
        env.update({a["name"]: x for a, x in zip(region.get("args", ()), args)})
        results = run_ops(region["ops"], env, case)
        return results[0] if len(results) == 1 else tuple(results)
    fn.__name__ = "region"
    return fn


def run_ops(ops: Sequence[dict], env: dict[str, Any], case: dict) -> list[Any]:
    """Run a list of ops in ``env``; returns the operands of the final return."""
    for o in ops:
        name = _strip(o["op"])
        if name in ("return", "func.return"):
            return [env[x] for x in o["operands"]]
        if name == "constant":
            env[o["results"][0]] = to_array(o["value"])
            continue
        if name not in OPS:
            raise NotImplementedError(f"no mapping for stablehlo.{name}")
        call = OpCall(
            name=name,
            operands=[env[x] for x in o.get("operands", [])],
            attributes=o.get("attributes", {}),
            regions=[make_region(r, env, case) for r in o.get("regions", [])],
            result_types=[parse_type(t) for t in o.get("result_types", [])],
            raw_regions=o.get("regions", []), functions=case.get("functions", {}))
        out = OPS[name](call)
        results = o.get("results", [])
        if len(results) == 1:
            env[results[0]] = out
        else:
            for r, v in zip(results, out):
                env[r] = v
    return []


def run_case(case: dict, wrap: Callable[[Callable], Callable] | None = None) -> list[Any]:
    """Run a single-op or program case; returns its results in ``expected`` order.

    ``wrap`` (e.g. ``compile.jit``) wraps the function of the case's inputs.
    """
    load_mappings()
    inputs = [to_array(spec) for spec in case["inputs"]]
    consts = _constant_env(case)

    if "program" in case:
        names = [spec["name"] for spec in case["inputs"]]
        wanted = [e["value"] for e in case["expected"]]

        def fn(*args):
            env = dict(consts)
            env.update(zip(names, args))
            run_ops(case["program"]["ops"], env, case)
            return [env[w] for w in wanted]
    else:
        def fn(*args):
            env = dict(consts)
            call = OpCall(
                name=case["op"], operands=list(args), attributes=case["attributes"],
                regions=[make_region(r, env, case) for r in case.get("regions", [])],
                result_types=[parse_type(t) for t in case.get("result_types", [])],
                raw_regions=case.get("regions", []), functions=case.get("functions", {}))
            out = OPS[case["op"]](call)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            return [outs[e.get("result_index", 0)] for e in case["expected"]]

    if wrap is not None:
        fn = wrap(fn)
    return list(fn(*inputs))


def check_results(case: dict, results: Sequence[Any]) -> None:
    """Assert ``results`` match the case's expectations (eq, almost_eq, close)."""
    for expected, got in zip(case["expected"], results):
        want = to_array(expected)
        got = np.asarray(got)  # (bf16: the raw words)
        where = f"{case['id']} result {expected.get('value')}"
        assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
        t = DTYPES[expected["dtype"]]
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
        if t is PrimitiveType.BF16:
            got, want = bf16_to_f32(got), bf16_to_f32(want)
        check = expected.get("check", "eq")
        if check == "eq":
            if t.is_floating or t.is_complex:
                np.testing.assert_array_equal(got, want, err_msg=where)
            else:
                assert np.array_equal(got, want), f"{where}: {got} != {want}"
        elif check == "almost_eq":
            tol = expected.get("tolerance", 1e-4)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=where)
        else:  # close: produced by XLA:CPU, a few ulp
            rtol = {PrimitiveType.F16: 2e-3, PrimitiveType.BF16: 1e-2}.get(t, 1e-5)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=where)
