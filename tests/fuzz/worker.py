"""The worker process: runs programs one after another, as the runner sends them.

Requests arrive on stdin, responses leave on the file descriptor given as
the first argument; each message is a pickle preceded by its length (8 bytes).
A request is ``("run", program)`` — reference, sensitivity runs, trace,
compile, run, compare; the response a dict with ``status`` (``pass``,
``mismatch``, ``rejected``, ``error``), ``phase`` and ``detail`` — or
``("values", program)``: every value of the program, by the reference.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import struct
import sys
import time
import traceback
import warnings

import numpy as np


def send(fd: int, message) -> None:
    data = pickle.dumps(message)
    data = struct.pack("<Q", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def receive(stream):
    header = stream.read(8)
    if len(header) < 8:
        return None
    (n,) = struct.unpack("<Q", header)
    return pickle.loads(stream.read(n))


def _arguments(program):
    from numxla.tracer.core import bf16_array
    return [bf16_array(i.value.copy()) if i.type == "bf16" else np.array(i.value, copy=True)
            for i in program.inputs]


def _function(program, **kwargs):
    import numxla.primitives as lax
    namespace = {"lax": lax, "np": np, "_n": kwargs.pop("hook", None),
                 "_r": kwargs.pop("record", None)}
    code = compile(program.source(**kwargs), f"<fuzz program {program.seed}>", "exec")
    exec(code, namespace)  # noqa: S102 - running generated programs is the point
    return namespace["f"]


def _failure(status: str, phase: str, error: BaseException) -> dict:
    from numxla.tracer.core import ShapeError
    expected = isinstance(error, (ShapeError, NotImplementedError))
    frames = traceback.extract_tb(error.__traceback__)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ours = [f for f in frames if f.filename.startswith(root) and "/tests/fuzz/" not in f.filename]
    where = next((f"{os.path.relpath(f.filename, root)}:{f.lineno} in {f.name}"
                  for f in reversed(ours)), "")
    message = f"{type(error).__name__}: {error}".splitlines()[0][:400]
    return {"status": "rejected" if expected else status, "phase": phase,
            "detail": message, "where": where,
            "key": f"{phase}: {type(error).__name__}: {where}"}


def run(program) -> dict:
    """Run one program: reference, sensitivity runs, then trace, compile and run it."""
    from numxla.compile import jit
    from numxla.tracer.shapes import parse_layout

    from .compare import NOISE_RUNS, Perturb, accumulation, mismatch

    def mark(phase: str) -> None:  # the runner reads where a crash happened off the log
        print(f"[fuzz] program {program.seed}: {phase}", file=sys.stderr, flush=True)

    mark("reference")
    args = _arguments(program)
    try:
        want = _function(program)(*args)
        noisy = []
        for k in range(NOISE_RUNS):
            with accumulation(k):
                noisy.append(_function(program, noise=True, hook=Perturb(k))(
                    *_arguments(program)))
    except Exception as e:  # noqa: BLE001 - every exception is a result
        return _failure("error", "reference", e)
    f = _function(program)
    jitted = jit(f, tiered=False, in_layouts=program.in_layouts(),
                 out_layouts=program.out_layouts)
    phase = "trace"
    try:
        mark(phase)
        lowered = jitted.lower(*args)
        phase = "compile"
        mark(phase)
        compiled = lowered.compile()
        phase = "run"
        mark(phase)
        got = compiled(*_arguments(program))
        phase = "result"  # the compiled results as NumPy arrays
        arrays = [np.asarray(r) for r in got]
    except Exception as e:  # noqa: BLE001
        return _failure("error", phase, e)
    avals = program.avals()
    for k, (name, layout) in enumerate(zip(program.outputs, program.out_layouts)):
        t = avals[name][0]
        shape_of = getattr(got[k], "xla_shape", None)
        if layout is not None and shape_of is not None and \
                shape_of.layout != parse_layout(layout):
            return {"status": "mismatch", "phase": "run", "key": "run: output layout",
                    "detail": f"result {k}: layout {shape_of.layout}, asked for {layout}"}
        problem = mismatch(arrays[k], want[k], [n[k] for n in noisy], t)
        if problem:
            return {"status": "mismatch", "phase": "run", "key": f"run: mismatch {t}",
                    "detail": f"result {k} ({t}{list(np.shape(arrays[k]))}): {problem}"}
    return {"status": "pass", "phase": "run", "detail": "", "key": "pass"}


def values(program) -> dict:
    """The values of ``program`` by the reference (storage form): every one,
    or those computed before the reference failed."""
    record = {}
    try:
        _function(program, returns="all", record=record)(*_arguments(program))
    except Exception:  # noqa: BLE001, S110 - a failing reference still gives what came before
        pass
    return {k: np.asarray(v) for k, v in record.items()}


def main() -> None:
    fd = int(sys.argv[1])
    faulthandler.enable()
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    import numxla.compile  # noqa: F401  (pay the imports before the first program)
    import numxla.primitives  # noqa: F401
    send(fd, {"status": "ready", "pid": os.getpid()})
    while True:
        request = receive(sys.stdin.buffer)
        if request is None:
            return
        kind, program = request
        start = time.perf_counter()
        try:
            response = run(program) if kind == "run" else {"values": values(program)}
        except Exception as e:  # noqa: BLE001 - a bug here must not look like a crash
            response = {"status": "error", "phase": "harness", "detail": repr(e)[:400],
                        "key": "harness", "where": traceback.format_exc()[-800:]}
        response["seconds"] = time.perf_counter() - start
        send(fd, response)


if __name__ == "__main__":
    main()
