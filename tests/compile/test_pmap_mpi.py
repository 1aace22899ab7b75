"""pmap's MPI backend under ``mpiexec -n 2`` and ``-n 4`` (the runtime comes
from PyPI: the ``mpi`` extra, part of the test extra)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).with_name("mpi_program.py")


@pytest.mark.parametrize("ranks", [2, 4])
def test_collectives_on_mpi_ranks(ranks):
    mpiexec = Path(sys.executable).with_name("mpiexec")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONWARNINGS="ignore")
    run = subprocess.run([str(mpiexec), "--oversubscribe", "-n", str(ranks), sys.executable,
                          str(PROGRAM)], env=env, capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert sorted(line for line in run.stdout.splitlines() if line.startswith("OK rank")) == \
        [f"OK rank {r}" for r in range(ranks)], out[-4000:]


def test_data_parallel_script_on_two_ranks():
    root = Path(__file__).resolve().parents[2]
    mpiexec = Path(sys.executable).with_name("mpiexec")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONWARNINGS="ignore", PYTHONPATH=str(root))
    run = subprocess.run([str(mpiexec), "--oversubscribe", "-n", "2", sys.executable,
                          str(root / "data_parallel.py"), "--mpi", "--steps", "3"], env=env,
                         capture_output=True, text=True, timeout=600, cwd=root)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    (line,) = [ln for ln in run.stdout.splitlines() if "bit-identical on all 2 replicas" in ln]
    assert float(line.rsplit(" ", 1)[1]) < 1e-4
