"""numxla's main job (README, first command): trace a function, print its
graph, compile it with Numba, run it on inputs in two layouts, and check the
result against NumPy."""
from __future__ import annotations

import time

import numpy as np

import primitives.numpy as xnp
from compile import device_put, jit


def layer(params, x):
    """A dense tanh layer and a summary of its activations."""
    h = xnp.tanh(x @ params["w"] + params["b"])
    return {"activations": h, "mean": xnp.mean(h, axis=0), "total": h.sum()}


def main() -> None:
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((4, 3)).astype(np.float32),
              "b": np.zeros(3, np.float32)}
    x = rng.standard_normal((5, 4)).astype(np.float32)

    f = jit(layer)
    print("The traced graph (HLO-like text):\n")
    print(f.lower(params, x).as_text())

    start = time.perf_counter()
    out = f(params, x)
    print(f"first call (trace + Numba compile, or load from the disk cache): "
          f"{time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    out = f(params, x)
    print(f"second call: {(time.perf_counter() - start) * 1e6:.0f} us\n")

    expected = np.tanh(x @ params["w"] + params["b"])
    np.testing.assert_allclose(np.asarray(out["activations"]), expected, rtol=1e-5, atol=1e-6)
    print("activations:\n", np.asarray(out["activations"]))
    print("mean over the batch:", np.asarray(out["mean"]))
    print("total:", float(out["total"]))

    # The same function, reading x from a column-major, 2x2-tiled buffer.
    x_tiled = device_put(x, "{0,1:T(2,2)}")
    print(f"\nx as {x_tiled.xla_shape}: physical buffer of {x_tiled.buffer.size} elements")
    print(x_tiled.buffer)
    out_tiled = f(params, x_tiled)
    np.testing.assert_allclose(np.asarray(out_tiled["activations"]), expected,
                               rtol=1e-5, atol=1e-6)
    print("same result from the tiled layout: OK (matches NumPy)")


if __name__ == "__main__":
    main()
