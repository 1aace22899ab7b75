"""Benchmarks of issues 4 and 5: numxla's ``jit`` against ``jax.jit`` on the CPU
(when JAX is installed: ``pip install -e ".[bench]"``) and against NumPy, in
one process, as medians after warm-up.

    python benchmarks/run.py [--threads N] [--repeats R] [--only SUBSTRING]

Both libraries get the same thread count (environment variables set before
either is imported).  Ratios are numxla / other: below 1 means numxla is faster.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pin_threads(n: int) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(n)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen={'true' if n > 1 else 'false'}"
                               f" intra_op_parallelism_threads={n}").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")


def median_time(fn, args, repeats: int, block=lambda r: r) -> float:
    for _ in range(3):
        block(fn(*args))
    times = []
    budget = time.perf_counter() + 20.0
    for _ in range(repeats):
        start = time.perf_counter()
        block(fn(*args))
        times.append(time.perf_counter() - start)
        if time.perf_counter() > budget and len(times) >= 5:
            break
    return statistics.median(times)


def jax_version(workload, fn):
    """JAX arrays are row-major: a column-major input is handed over as the
    row-major buffer of its transpose (the same bytes) and transposed back
    inside the function, where XLA fuses the transpose into its consumer."""
    if workload.layouts == "{0,1}":
        return (lambda xt: fn(xt.T)), (lambda x: x.T.copy())
    return fn, (lambda x: x)


def run_workloads(args) -> list[tuple[str, float, float | None, float | None]]:
    import numpy as np
    sys.path.insert(0, str(ROOT))
    import numxla.primitives as lax
    import numxla.primitives.numpy as xnp
    from numxla.compile import device_put, jit
    from numxla.tracer import pytree
    from benchmarks.workloads import WORKLOADS
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    rows = []
    for w in WORKLOADS:
        if args.only and args.only not in w.name:
            continue
        inputs = w.inputs()
        ours = jit(w.build(lax, xnp), in_layouts=w.layouts)
        our_args = inputs if w.layouts is None else tuple(device_put(x, w.layouts) for x in inputs)
        t_ours = median_time(ours, our_args, args.repeats)
        expected = [np.asarray(leaf) for leaf in pytree.tree_leaves(ours(*our_args))]
        t_jax = t_numpy = None
        if jax is not None:
            fn, adapt = jax_version(w, w.build(jax.lax, jnp))
            jitted = jax.jit(fn)
            jax_args = jax.device_put(jax.tree_util.tree_map(adapt, inputs))
            got = jax.tree_util.tree_leaves(jitted(*jax_args))
            for ours_leaf, jax_leaf in zip(expected, got, strict=True):
                np.testing.assert_allclose(ours_leaf, np.asarray(jax_leaf), rtol=2e-3,
                                           atol=2e-3, err_msg=w.name)
            t_jax = median_time(jitted, jax_args, args.repeats, jax.block_until_ready)
        if w.numpy:
            t_numpy = median_time(w.build(None, np), inputs, args.repeats)
        rows.append((w.name, t_ours, t_jax, t_numpy))
        print(_row(rows[-1]), flush=True)
    return rows


_COMPILE_PROBE = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
from benchmarks.workloads import mlp_forward, mlp_params, _f32
params, x = mlp_params(), _f32(256, 784)
if {use_jax}:
    import jax, jax.numpy as jnp
    f = jax.jit(mlp_forward(jax.lax, jnp))
    start = time.perf_counter(); f(params, x).block_until_ready()
else:
    from numxla import primitives as lax
    import numxla.primitives.numpy as xnp
    from numxla.compile import jit
    f = jit(mlp_forward(lax, xnp), tiered=False)   # the full compile (compile.py has tiers)
    start = time.perf_counter(); f(params, x)
print(time.perf_counter() - start)
"""


def compile_probe(use_jax: bool, cache_dir: str) -> float:
    env = dict(os.environ, NUMXLA_CACHE_DIR=cache_dir, NUMXLA_COMPILE_SERVER="0")
    out = subprocess.run([sys.executable, "-c", _COMPILE_PROBE.format(root=str(ROOT),
                                                                       use_jax=use_jax)],
                         env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def run_compile(args) -> list[tuple[str, float, float | None, None]]:
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
    with tempfile.TemporaryDirectory() as cache:
        cold = compile_probe(False, cache)
        warm = compile_probe(False, cache)
    jax_cold = compile_probe(True, cache) if have_jax else None
    rows = [("compile MLP forward, cold cache", cold, jax_cold, None),
            ("compile MLP forward, warm cache", warm, jax_cold, None)]
    for row in rows:
        print(_row(row), flush=True)
    return rows


def _fmt_time(t: float | None) -> str:
    if t is None:
        return "—"
    return f"{t * 1e3:.3f} ms" if t < 1 else f"{t:.2f} s"


def _row(row) -> str:
    from benchmarks.workloads import TARGETS
    name, ours, jax_t, numpy_t = row
    ratio = lambda other: "—" if other is None else f"{ours / other:.2f}x"
    target = TARGETS.get(name)
    verdict = "" if jax_t is None or target is None else (
        " ✓" if ours / jax_t <= target else " ✗")
    return (f"| {name} | {_fmt_time(ours)} | {_fmt_time(jax_t)} | {ratio(jax_t)} | "
            f"{'—' if target is None else f'≤ {target}x'}{verdict} | "
            f"{_fmt_time(numpy_t)} | {ratio(numpy_t)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time probes")
    parser.add_argument("--json", help="also write the rows to this file (for notebooks)")
    args = parser.parse_args()
    pin_threads(args.threads)
    print(f"threads: {args.threads}; medians of up to {args.repeats} runs after 3 warm-up calls")
    print("| workload | numxla | JAX jit | numxla/JAX | target | NumPy | numxla/NumPy |")
    print("|---|---|---|---|---|---|---|")
    rows = run_workloads(args)
    if not args.no_compile and (not args.only or args.only in "compile"):
        rows += run_compile(args)
    if args.json:
        import json
        import platform
        from benchmarks.workloads import TARGETS
        records = [{"workload": name, "numxla_s": ours, "jax_s": jax_t, "numpy_s": numpy_t,
                    "target": TARGETS.get(name)} for name, ours, jax_t, numpy_t in rows]
        Path(args.json).write_text(json.dumps(
            {"threads": args.threads, "machine": platform.processor() or platform.machine(),
             "rows": records}, indent=1) + "\n")


if __name__ == "__main__":
    main()
