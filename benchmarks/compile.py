"""Compile-time benchmark of issue 12: the first call of a jitted function in a
fresh process, numxla against JAX.

    python benchmarks/compile.py [--only SUBSTRING] [--json FILE]

Every figure is one fresh Python process timing its first call (trace +
compile + run, result in hand), after importing the library and building
the inputs:

* ``JAX``: ``jax.jit`` (JAX keeps no disk cache by default: always cold);
* ``first result``: numxla's default, tiered ``jit`` with an empty graph
  cache: the call returns what the fast path computes while the compiled
  program builds in the background;
* ``full compile``: ``jit(f, tiered=False)`` with an empty graph cache: the
  call waits for the compiled program;
* ``warm``: ``tiered=False`` again, with the cache the full compile filled.

numxla's shared helpers (the ``@njit`` kernels the generated code calls,
cached by Numba beside their modules) are compiled once before any
measurement, as they are on a machine that has run numxla before.  Rows
are the workloads of the issue's table: the MLP forward (64-wide tanh
layers, batch 32), ``jit(value_and_grad(loss))`` of it, and the CNN
training step (conv 3x3, ``batch_norm_training``, relu per layer; 2x2 max
pool; dense) on 12x12x1 images, batch 32.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ROWS = [("MLP forward", "mlp", 1), ("MLP forward", "mlp", 4), ("MLP forward", "mlp", 16),
        ("MLP value_and_grad", "mlp_grad", 1), ("MLP value_and_grad", "mlp_grad", 16),
        ("CNN train step", "cnn_step", 1), ("CNN train step", "cnn_step", 2),
        ("CNN train step", "cnn_step", 4)]

# One probe: build the workload with (lax, xnp) and time its first call.
_PROBE = r"""
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
from benchmarks.compile import build
kind, depth, lib = {kind!r}, {depth}, {lib!r}
if lib == "jax":
    import jax, jax.numpy as jnp
    fn, args = build(kind, depth, jax.lax, jnp, jax.value_and_grad)
    f = jax.jit(fn)
    block = jax.block_until_ready
else:
    from numxla import primitives as lax
    import numxla.primitives.numpy as xnp
    from numxla.autodiff import value_and_grad
    from numxla.compile import jit
    fn, args = build(kind, depth, lax, xnp, value_and_grad)
    f = jit(fn, tiered=(lib == "tiered"))
    block = lambda r: [np.asarray(x) for x in __import__("numxla.tracer", fromlist=["pytree"]).pytree.tree_leaves(r)]
start = time.perf_counter()
block(f(*args))
print(time.perf_counter() - start)
if lib != "jax":  # let no background compile run on into the next probe
    from numxla.compile.background import service
    service().close(wait=600)
"""


def build(kind: str, depth: int, lax, xnp, value_and_grad):
    """The function of one row and its arguments (NumPy arrays)."""
    import numpy as np
    rng = np.random.default_rng(0)

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    if kind in ("mlp", "mlp_grad"):
        params = [(f32(64, 64, scale=0.125), f32(64, scale=0.1)) for _ in range(depth)]
        x = f32(32, 64)

        def forward(params, x):
            for w, b in params:
                x = xnp.tanh(x @ w + b)
            return x
        if kind == "mlp":
            return forward, (params, x)

        def loss(params, x):
            return xnp.mean(xnp.square(forward(params, x)))
        return value_and_grad(loss), (params, x)

    # the CNN training step: depth x (conv 3x3 SAME, batch norm, relu), max pool, dense
    features, classes = 8, 4
    params = {"convs": [(f32(3, 3, 1 if i == 0 else features, features, scale=0.3),
                         np.ones(features, np.float32), np.zeros(features, np.float32))
                        for i in range(depth)],
              "dense": f32(6 * 6 * features, classes, scale=0.05),
              "bias": np.zeros(classes, np.float32)}
    x = f32(32, 12, 12, 1)
    one_hot = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, 32)]

    def batch_norm(y, scale, offset):
        if hasattr(lax, "batch_norm_training"):
            return lax.batch_norm_training(y, scale, offset, epsilon=1e-5, feature_index=3)[0]
        mean = xnp.mean(y, axis=(0, 1, 2))
        var = xnp.mean(xnp.square(y - mean), axis=(0, 1, 2))
        return (y - mean) * lax.rsqrt(var + 1e-5) * scale + offset

    def loss(params, x, one_hot):
        y = x
        for kernel, scale, offset in params["convs"]:
            y = lax.conv_general_dilated(y, kernel, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            y = xnp.maximum(batch_norm(y, scale, offset), 0.0)
        y = lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = y.reshape(y.shape[0], -1) @ params["dense"] + params["bias"]
        shifted = logits - xnp.max(logits, axis=1, keepdims=True)
        log_probs = shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=1, keepdims=True))
        return -xnp.sum(log_probs * one_hot) / x.shape[0]
    return value_and_grad(loss), (params, x, one_hot)


def probe(kind: str, depth: int, lib: str, cache_dir: str, servers: str | None = None) -> float:
    """Seconds to the first result in a fresh process (``servers``: the
    directory of the compile servers it may use; None: no servers)."""
    env = dict(os.environ, NUMXLA_CACHE_DIR=cache_dir, JAX_PLATFORMS="cpu",
               NUMXLA_COMPILE_SERVER="1" if servers else "0",
               NUMXLA_COMPILE_SERVER_DIR=servers or "", NUMXLA_COMPILE_SERVER_IDLE="300")
    env.pop("NUMXLA_TIERED", None)
    code = _PROBE.format(root=str(ROOT), kind=kind, depth=depth, lib=lib)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"probe {kind} depth {depth} ({lib}) failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def have_jax() -> bool:
    try:
        import jax  # noqa: F401
        return True
    except ImportError:
        return False


def measure(kind: str, depth: int, with_jax: bool, servers: str) -> dict:
    """One row: JAX; numxla tiered; full compiles with warm compile servers
    (``servers``, started before), with none, and from the warm disk cache."""
    row = {"jax": probe(kind, depth, "jax", "/nonexistent") if with_jax else None}
    with tempfile.TemporaryDirectory() as cache:
        row["first_result"] = probe(kind, depth, "tiered", cache, servers)
    with tempfile.TemporaryDirectory() as cache:
        row["full_compile"] = probe(kind, depth, "compiled", cache, servers)
    with tempfile.TemporaryDirectory() as cache:
        row["full_compile_alone"] = probe(kind, depth, "compiled", cache)
        row["warm"] = probe(kind, depth, "compiled", cache)
    return row


def _fmt(t: float | None) -> str:
    return "—" if t is None else f"{t:.2f} s"


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None else f"{a / b:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="rows whose name contains this")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    with_jax = have_jax()
    servers = tempfile.mkdtemp(prefix="numxla-bench-servers-")
    os.chmod(servers, 0o700)
    with tempfile.TemporaryDirectory() as cache:  # the shared helpers compiled; servers warm
        probe("cnn_step", 1, "compiled", cache, servers)
        probe("mlp_grad", 1, "compiled", cache, servers)
    print("| workload | depth | JAX first call | numxla first result | ratio (≤ 0.5x) | "
          "numxla full compile | ratio (≤ 2x) | full compile, no server | ratio | warm cache |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = {}
    for name, kind, depth in ROWS:
        if args.only not in f"{name} {depth}":
            continue
        row = measure(kind, depth, with_jax, servers)
        results[f"{name} {depth}"] = row
        print(f"| {name} | {depth} | {_fmt(row['jax'])} | {_fmt(row['first_result'])} | "
              f"{_ratio(row['first_result'], row['jax'])} | {_fmt(row['full_compile'])} | "
              f"{_ratio(row['full_compile'], row['jax'])} | {_fmt(row['full_compile_alone'])} | "
              f"{_ratio(row['full_compile_alone'], row['jax'])} | {_fmt(row['warm'])} |",
              flush=True)
    for name in ("MLP forward",):
        one, sixteen = results.get(f"{name} 1"), results.get(f"{name} 16")
        if one and sixteen:
            print(f"\n{name}: full compile depth 16 / depth 1 = "
                  f"{sixteen['full_compile'] / one['full_compile']:.2f}x (≤ 1.5x)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
