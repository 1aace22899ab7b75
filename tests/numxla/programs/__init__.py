"""JAX programs in the style of JAX's examples and docs, each a module whose
``main(jax)`` takes the ``jax`` module (real JAX, or numxla as ``import
numxla as jax``) and returns a tree of results.

``tests/data/jax_program_results.json`` holds what real JAX (x64 off, CPU)
returns; tests/numxla/test_programs.py runs each program on numxla and
compares.  Regenerate the file with JAX installed (nothing here imports it):

    python -c "import jax, tests.numxla.programs as p; p.record(jax)"
"""
from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import sys
from typing import Any, Iterator

import numpy as np

PROGRAMS = ("mnist_mlp", "vae", "kernel_lsq", "gaussian_process", "dp_sgd", "rnn_scan",
            "neural_ode", "hvp", "adam_tree", "custom_rules", "control_flow",
            "indexing_linalg", "random_idioms", "dtypes_printing", "mcmc", "cnn", "stax_mnist",
            "transformer", "x64", "quickstart", "sharp_bits", "pytrees", "vmap_axes",
            "advanced_autodiff", "custom_derivatives", "loops_scan", "numpy_breadth",
            "lax_idioms", "nn_scipy", "api_sharding", "remat_state", "pmap_spmd", "advi",
            "logdensity_batching", "convolutions", "random_distributions", "jit_compilation",
            "autodiff_cookbook", "odeint_fit", "cg_poisson", "type_promotion")

# (rtol, atol) where a program's results go through ill-conditioned steps (a log-likelihood
# near 0 from terms of order 1): f32 rounding differs between any two implementations.
# odeint_fit: a pendulum started near its unstable equilibrium, integrated for 10 s in f32;
# numxla's steps land on the requested times (JAX interpolates between steps): at t=10
# numxla is within 3e-6 of an f64 solution, JAX 1.2e-5
TOLERANCES = {"gaussian_process": (2e-4, 1e-4), "odeint_fit": (1e-4, 5e-5)}

RESULTS_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "data",
                            "jax_program_results.json")


def _number(v: Any) -> Any:
    """A JSON-safe number: NaN and infinities as strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v


def flatten(tree: Any, path: str = "") -> dict[str, Any]:
    """``{path: record}`` for every leaf of a result: dicts (by sorted key),
    lists and tuples (namedtuples included) and leaves: str, bool, int,
    float, None, or arrays as ``["array", dtype, shape, values]``. Written
    here, not with either library's tree_util, so both are judged alike."""
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for k in sorted(tree, key=str):
            out.update(flatten(tree[k], f"{path}/{k}"))
        return out
    if isinstance(tree, (list, tuple)):  # lists and tuples alike; a namedtuple by its name
        kind = type(tree).__name__ if hasattr(type(tree), "_fields") else "seq"
        out = {f"{path}:{kind}": len(tree)}
        for i, v in enumerate(tree):
            out.update(flatten(v, f"{path}/{i}"))
        return out
    for kind in (str, bool, int, float, type(None)):
        if type(tree) is kind:
            return {path: [kind.__name__, _number(tree)]}
    if not (hasattr(tree, "dtype") and hasattr(tree, "shape")):
        raise TypeError(f"{path}: unexpected result type {type(tree).__name__}")
    arr = np.asarray(tree)
    values = [_number(v) for v in arr.astype(np.float64 if arr.dtype.kind in "fbiu" else
                                              arr.dtype).ravel().tolist()] \
        if arr.dtype.kind != "c" else [[v.real, v.imag] for v in arr.ravel().tolist()]
    return {path: ["array", str(arr.dtype), list(arr.shape), values]}


# the modules a program may import from ``jax`` (``from jax.scipy import stats``...)
_SUBMODULES = ("numpy", "numpy.linalg", "numpy.fft", "lax", "random", "nn", "nn.initializers",
               "tree_util", "tree", "debug", "scipy", "scipy.special", "scipy.stats",
               "scipy.linalg", "dtypes", "errors", "example_libraries",
               "example_libraries.optimizers", "example_libraries.stax", "flatten_util", "ops",
               "experimental", "experimental.shard_map", "experimental.mesh_utils", "sharding",
               "ad_checkpoint", "test_util")


@contextlib.contextmanager
def as_jax(module: Any) -> Iterator[None]:
    """While the block runs, ``import jax`` (and ``jax.numpy``, ``from jax
    import lax``...) gives ``module`` and its submodules, unless ``module``
    is JAX itself.  Whatever was under those names before is put back."""
    if module.__name__ == "jax":
        yield
        return
    for sub in _SUBMODULES:
        importlib.import_module(f"{module.__name__}.{sub}")
    prefix = module.__name__ + "."
    alias = {"jax": module}
    alias.update({"jax." + k[len(prefix):]: m for k, m in list(sys.modules.items())
                  if k.startswith(prefix)})
    saved = {k: m for k, m in sys.modules.items() if k == "jax" or k.startswith("jax.")}
    for k in saved:
        del sys.modules[k]
    sys.modules.update(alias)
    try:
        yield
    finally:  # (submodules imported in the block were aliased by numxla's import hook)
        for k in [k for k in sys.modules if k == "jax" or k.startswith("jax.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def run(name: str, jax: Any) -> dict[str, Any]:
    """Program ``name`` run on ``jax`` (a module: JAX, or numxla standing in
    for it), its results flattened."""
    module = importlib.import_module(f"{__name__}.{name}")
    with as_jax(jax):
        return flatten(module.main(jax))


def record(jax: Any, path: str = RESULTS_PATH) -> None:
    """Run every program on real JAX and write the results file."""
    import jax.example_libraries.optimizers  # noqa: F401  (JAX loads these lazily)
    import jax.example_libraries.stax  # noqa: F401
    import jax.flatten_util  # noqa: F401
    import jax.numpy  # noqa: F401
    import jax.scipy.linalg  # noqa: F401
    import jax.scipy.special  # noqa: F401
    import jax.scipy.stats  # noqa: F401
    import jaxlib
    data = {"jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
            "command": 'python -c "import jax, tests.numxla.programs as p; p.record(jax)"',
            "results": {name: run(name, jax) for name in PROGRAMS}}
    with open(path, "w") as f:
        json.dump(data, f, indent=0, sort_keys=True)
        f.write("\n")


def expected(name: str) -> dict[str, Any]:
    with open(RESULTS_PATH) as f:
        return json.load(f)["results"][name]


def _close(got: list, want: list, rtol: float, atol: float) -> bool:
    def num(v: Any) -> Any:
        return float(v) if isinstance(v, str) else v
    g = np.array([num(v) for v in got], dtype=np.float64)
    w = np.array([num(v) for v in want], dtype=np.float64)
    return g.shape == w.shape and bool(np.all(np.isclose(g, w, rtol=rtol, atol=atol,
                                                         equal_nan=True)))


def compare(got: dict[str, Any], want: dict[str, Any], rtol: float = 1e-4,
            atol: float = 1e-5) -> list[str]:
    """The differences between two flattened results: missing or extra
    leaves, other kinds, dtypes or shapes, and values beyond the tolerance
    (floats; everything else exactly)."""
    problems = [f"{k}: missing" for k in want if k not in got]
    problems += [f"{k}: unexpected" for k in got if k not in want]
    for k in want:
        if k not in got:
            continue
        g, w = got[k], want[k]
        if isinstance(w, int) or w[0] != "array":  # container length or Python scalar
            ok = g == w or (isinstance(w, list) and w[0] == "float" and g[0] == "float"
                            and _close([g[1]], [w[1]], rtol, atol))
            if not ok:
                problems.append(f"{k}: got {g!r:.200}, JAX gives {w!r:.200}")
            continue
        if g[0] != "array" or g[1:3] != w[1:3]:
            problems.append(f"{k}: got {g[:3]!r:.200}, JAX gives {w[:3]!r:.200}")
            continue
        exact = w[1][0] in "biu" or w[1] == "bool"
        flat = (lambda vs: [x for v in vs for x in (v if isinstance(v, list) else [v])])
        if (g[3] != w[3]) if exact else not _close(flat(g[3]), flat(w[3]), rtol, atol):
            problems.append(f"{k}: values {g[3]!r:.300} differ from JAX's {w[3]!r:.300}")
    return problems
