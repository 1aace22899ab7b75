"""The disk cache heals (compile/cache.py): a damaged entry costs a compile,
never a crash, and an unusable cache directory means compiling in memory.

Each case runs the same small program in fresh processes (imports cost
~0.5 s, compiles ~0.3 s a graph), against a cache filled once."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Three graphs (one a batched product of f16 operands, packed into f32 by
# generated code that calls BLAS through the extern ``dot_blas_f32`` entry);
# prints whether the results match NumPy, how many generated functions
# compiled instead of loading, the CacheWarnings and disk_cache_usable().
PROGRAM = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import numxla.primitives as lax
        from numxla.compile import jit
        from numxla.compile.cache import disk_cache_usable
        x = np.linspace(-1, 1, 12, dtype=np.float32)
        b = x.reshape(2, 2, 3).astype(np.float16)
        b32 = b.astype(np.float32)
        results = [(jit(lambda x: lax.exp(x) * 2 + x)(x), np.exp(x) * 2 + x),
                   (jit(lambda t: lax.dot_general(t, t, (((2,), (2,)), ((0,), (0,))),
                                                  preferred_element_type=np.float32))(b),
                    np.einsum("bij,bkj->bik", b32, b32)),
                   (jit(lambda x: lax.tanh(x) - 1)(x), np.tanh(x) - 1)]
    def misses(prefix):
        return sum(sum(v.stats.cache_misses.values()) for name, module in list(sys.modules.items())
                   if name.startswith(prefix) for v in vars(module).values()
                   if hasattr(v, "stats") and getattr(v, "__module__", None) == name)
    print(json.dumps({
        "ok": all(np.allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6) for got, want in results),
        "misses": misses("numxla_k_"), "kernel_misses": misses("numxla.compile."),
        "warnings": [str(w.message) for w in caught if w.category.__name__ == "CacheWarning"],
        "disk": disk_cache_usable()}))
""")


def run(cache: Path, script: str = PROGRAM, **env: str) -> dict:
    """``script`` in a fresh process on the cache ``cache``; it must exit 0
    (not die of a signal) and print one JSON line last."""
    inherited = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env = dict(inherited, NUMXLA_CACHE_DIR=str(cache), NUMXLA_TIERED="0",
               PYTHONPATH=str(REPO), **env)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, f"exit {out.returncode}:\n{out.stderr[-4000:]}"
    return json.loads(out.stdout.splitlines()[-1])


def corrupt(path: Path, how: str) -> None:
    """Damage ``path`` as a killed writer or a full disk would."""
    data = path.read_bytes()
    path.write_bytes({"half": data[:len(data) // 2], "empty": b"",
                      "garbage": random.Random(path.name).randbytes(len(data))}[how])


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A cache holding the program's three graphs."""
    cache = tmp_path_factory.mktemp("filled")
    first = run(cache)
    assert first["ok"] and first["misses"] == 3 and first["warnings"] == [] and first["disk"]
    return cache


def build_dir(cache: Path) -> Path:
    (directory,) = cache.iterdir()
    return directory


KINDS = ("source", "index", "data")
MODES = ("half", "empty", "garbage")


@pytest.mark.parametrize("how", MODES)
def test_a_damaged_entry_is_rebuilt(filled, tmp_path, how):
    # each graph gets one kind of file damaged (rotating over the three modes),
    # so every kind is damaged in every graph, the BLAS one included
    cache = tmp_path / "cache"
    shutil.copytree(filled, cache)
    directory = build_dir(cache)
    sources = sorted(directory.glob("k_*.py"))
    assert len(sources) == 3
    shift = MODES.index(how)
    for i, source in enumerate(sources):
        kind = KINDS[(i + shift) % 3]
        files = {"source": [source],
                 "index": list(directory.glob(f"__pycache__/{source.stem}.*.nbi")),
                 "data": list(directory.glob(f"__pycache__/{source.stem}.*.nbc"))}[kind]
        assert files
        for path in files:
            corrupt(path, how)
    healing, healed = run(cache), run(cache)
    # a rewritten source keeps its index valid: only the index and data cost a compile
    assert healing == {**healed, "misses": 2} and healed["misses"] == 0
    assert healed["ok"] and healed["warnings"] == [] and healed["disk"]
    assert [p.read_text() for p in sources] == \
        [p.read_text() for p in sorted(build_dir(filled).glob("k_*.py"))]


def test_damaged_kernel_helper_entries_are_rebuilt(tmp_path):
    # NUMBA_CACHE_DIR puts the kernel helpers' cache (normally in the source
    # tree) where it can be damaged: every index and data file, the extern
    # BLAS entry's included, all graphs' too, so the helpers compile lazily
    numba_cache = tmp_path / "numba"
    env = {"NUMBA_CACHE_DIR": str(numba_cache)}
    assert run(tmp_path / "cache", **env)["ok"]
    files = sorted(p for p in numba_cache.rglob("*") if p.suffix in (".nbi", ".nbc"))
    helpers = [p for p in files if not p.name.startswith("k_")]
    assert any(p.name.startswith("blas.dot_blas_call") for p in helpers)
    for i, path in enumerate(files):
        corrupt(path, MODES[i % 3])
    healing, healed = run(tmp_path / "cache", **env), run(tmp_path / "cache", **env)
    assert healing["ok"] and healing["misses"] == 3 and healing["kernel_misses"] > 0
    assert healed["ok"] and healed["misses"] == 0 and healed["kernel_misses"] == 0


def test_a_cache_root_that_is_a_file_means_compiling_in_memory(tmp_path):
    root = tmp_path / "cache"
    root.write_text("not a directory")
    out = run(root)
    assert out["ok"] and not out["disk"] and out["misses"] == 3
    (warning,) = out["warnings"]
    assert str(root) in warning and "Errno" in warning
    assert root.read_text() == "not a directory"


def _immutable(paths: list[Path], on: bool) -> bool:
    """``chattr +i`` (root ignores the mode bits, not this); whether it took."""
    flag = "+i" if on else "-i"
    return all(subprocess.run(["chattr", flag, str(p)], capture_output=True).returncode == 0
               for p in paths) if shutil.which("chattr") else False


def test_a_read_only_cache_means_compiling_in_memory(filled, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(filled, cache)
    dirs = [cache, build_dir(cache), build_dir(cache) / "__pycache__"]
    before = sorted(p.name for p in cache.rglob("*"))
    for d in dirs:
        d.chmod(0o500)
    locked = os.geteuid() != 0 or _immutable(dirs, True)
    try:
        if not locked:  # root, and no immutable flag here: a path under a file
            cache = tmp_path / "file"
            cache.write_text("")
            cache = cache / "cache"
        out = run(cache)
    finally:
        if os.geteuid() == 0:
            _immutable(dirs, False)
        for d in dirs:
            d.chmod(0o700)
    assert out["ok"] and not out["disk"] and out["misses"] == 3 and len(out["warnings"]) == 1
    if locked:
        assert sorted(p.name for p in (tmp_path / "cache").rglob("*")) == before


MID_RUN = textwrap.dedent("""
    import json, os, shutil, sys, warnings
    import numpy as np
    warnings.simplefilter("always")
    import numxla.primitives as lax
    from numxla.compile import cache, jit
    x = np.linspace(-1, 1, 12, dtype=np.float32)
    root = os.environ["NUMXLA_CACHE_DIR"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = jit(lambda x: lax.exp(x) * 2 + x)
        ok = [np.allclose(np.asarray(f(x)), np.exp(x) * 2 + x)]
        # deleted: re-created by the next module
        shutil.rmtree(root)
        ok.append(np.allclose(np.asarray(jit(lambda x: x * 3)(x)), x * 3))
        recreated = cache.disk_cache_usable() and len(list(cache.cache_dir().glob("k_*.py"))) == 1
        module = cache.load_module("from numba import njit\\n"
                                   "@njit(cache=True)\\ndef twice(v):\\n    return v * 2\\n")
        ok.append(module.twice(2) == 4)
        # replaced by a file: Numba's write of a new signature fails, and does not raise
        shutil.rmtree(root)
        open(root, "w").close()
        ok.append(module.twice(2.5) == 5.0)
        ok.append(np.allclose(np.asarray(jit(lambda x: x - 4)(x)), x - 4))
        ok.append(np.allclose(np.asarray(f(x)), np.exp(x) * 2 + x))
    print(json.dumps({"ok": ok, "recreated": recreated, "disk": cache.disk_cache_usable(),
                      "warnings": [str(w.message) for w in caught
                                   if issubclass(w.category, cache.CacheWarning)]}))
""")


def test_a_cache_directory_lost_mid_run(tmp_path):
    out = run(tmp_path / "cache", MID_RUN)
    assert out["ok"] == [True] * 6 and out["recreated"] and not out["disk"]
    assert len(out["warnings"]) == 1


def test_entries_are_stamped_with_the_sources_of_the_helpers_their_code_links(tmp_path):
    # compiled code links (or inlines) the helpers it calls, from other files
    # too: an entry must go stale when any of their sources changes, and only then
    import numpy as np
    import numxla.primitives as lax
    from numxla.compile import cache, jit
    from numxla.compile.kernels import blas
    assert cache.protect(blas.dot_blas_call)
    linked = cache.helper_modules(blas.dot_blas_call.py_func)
    assert {"kernels.blas", "kernels.scalar", "kernels.vecmath", "extern"} <= linked
    assert "kernels.linalg" not in linked
    stamp = blas.dot_blas_call._cache._cache_file._source_stamp
    assert stamp[1] == cache.helpers_digest(linked)

    def modules_of(fn, *args):
        program = jit(fn, tiered=False).lower(*args).compile()
        graph_fns = {c.kernel.fn for c in program.kernel_calls() if c.kernel.source}
        return set().union(*(cache.helper_modules(f.py_func) for f in graph_fns))
    x = np.linspace(0.5, 1, 8, dtype=np.float32)
    tanh = modules_of(lambda x: lax.tanh(x) * 2, x)
    assert "kernels.vecmath" in tanh and not tanh & {"kernels.linalg", "kernels.blas"}
    fft = modules_of(lambda x: lax.fft(x, "FFT", (8,)), x.astype(np.complex64))
    assert {"kernels.linalg", "extern"} <= fft
    # an edit of linalg.py makes the FFT graph's entry stale, not the tanh one's
    files = cache._helper_files()
    original = files["kernels.linalg"]
    before = [cache.helpers_digest(frozenset(m)) for m in (tanh, fft)]
    edited = tmp_path / "linalg.py"
    edited.write_text(original.read_text() + "\n# edited\n")
    try:
        files["kernels.linalg"] = edited
        cache.helpers_digest.cache_clear()
        after = [cache.helpers_digest(frozenset(m)) for m in (tanh, fft)]
    finally:
        files["kernels.linalg"] = original
        cache.helpers_digest.cache_clear()
    assert after[0] == before[0] and after[1] != before[1]
