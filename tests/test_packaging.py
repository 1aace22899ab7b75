"""One package: tracer/ primitives/ compile/ autodiff/ install as numxla.<folder>.

Nothing generic (``compile``, ``tracer``...) may be importable from an
installed numxla, and no module may import the folders under their bare
names: a second copy of ``tracer.core`` would hold classes that are not the
package's own.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("tracer", "primitives", "compile", "autodiff")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_installs_under_numxla():
    setup = _pyproject()
    assert setup["package-dir"] == {f"numxla.{name}": name for name in FOLDERS}
    wanted = {"numxla" + ("." + ".".join(init.parent.relative_to(ROOT / "numxla").parts)
                          if init.parent != ROOT / "numxla" else "")
              for init in (ROOT / "numxla").rglob("__init__.py")}
    for name in FOLDERS:
        wanted |= {".".join(("numxla",) + init.parent.relative_to(ROOT).parts)
                   for init in (ROOT / name).rglob("__init__.py")}
    assert set(setup["packages"]) == wanted


def test_no_module_imports_a_folder_by_its_bare_name():
    bare = re.compile(rf"^\s*(from|import)\s+({'|'.join(FOLDERS)})(\.|\s|$)", re.M)
    offenders = []
    for folder in (*FOLDERS, "numxla", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            offenders += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
                          for m in bare.finditer(path.read_text())]
    offenders += [f"{p.name}: {m.group(0).strip()}" for p in ROOT.glob("*.py")
                  for m in bare.finditer(p.read_text())]
    assert not offenders, offenders


def test_a_jit_run_loads_only_numxla_modules(tmp_path):
    code = ("import sys, numpy as np, numxla as nx\n"
            "y = nx.jit(lambda x: nx.numpy.sin(x) * 2, tiered=False)(np.ones(3, np.float32))\n"
            "assert np.allclose(np.asarray(y), 2 * np.sin(1.0))\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(FOLDERS)!r}))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_numxla_under_jax_s_name_imports_its_own_submodules(tmp_path):
    """``sys.modules["jax"] = numxla`` (running a JAX program unchanged):
    every submodule import gives numxla's module itself, not a failure nor a
    second copy of the file under the other name; unknown names still fail."""
    code = """
import sys, numxla
sys.modules["jax"] = numxla
import jax.numpy as jnp, jax.numpy.linalg, jax.lax.linalg, jax.nn.initializers
import jax.scipy.special, jax.scipy.stats.norm, jax.experimental.ode
from jax.scipy.spatial.transform import Rotation
from jax.example_libraries import stax
import numxla.scipy.spatial.transform as own
assert jnp is numxla.numpy and jax.numpy.linalg is numxla.numpy.linalg
assert Rotation is own.Rotation and own.__spec__.name == "numxla.scipy.spatial.transform"
assert jax.scipy.stats.norm is numxla.scipy.stats.norm and stax is numxla.example_libraries.stax
copies = [m for m in sys.modules if m.startswith("jax.") and sys.modules[m] is not
          sys.modules.get("numxla." + m[4:])]
assert not copies, copies
try:
    import jax.no_such_module
except ModuleNotFoundError as error:
    print(error)
"""
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "No module named 'jax.no_such_module'"
