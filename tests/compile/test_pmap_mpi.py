"""pmap's MPI backend under ``mpiexec -n 2`` and ``-n 4`` (the runtime comes
from PyPI: the ``mpi`` extra, part of the test extra).  Programs run under
``python -m mpi4py``, so a rank that fails an assertion aborts the job
instead of leaving the others waiting."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).with_name("mpi_program.py")
FAULTS = Path(__file__).with_name("mpi_fault_program.py")


def _mpiexec(ranks: int, *args: str, options: tuple = (), timeout: float = 600, **env: str
             ) -> subprocess.CompletedProcess:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONWARNINGS="ignore",
               PYTHONPATH=str(ROOT), **env)
    # the ranks share one machine: no libfabric transport (its start costs ~1 s a
    # launch), unless the environment picks the transports
    env.setdefault("OMPI_MCA_btl", "^ofi")
    return subprocess.run([str(mpiexec), *options, "--oversubscribe", "-n", str(ranks),
                           sys.executable, "-m", "mpi4py", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _ok_ranks(run: subprocess.CompletedProcess) -> list[int]:
    return sorted(int(line.split()[2]) for line in run.stdout.splitlines()
                  if line.startswith("OK rank"))


@pytest.mark.parametrize("ranks", [2, 4])
def test_collectives_on_mpi_ranks(ranks):
    # -n 2 also runs 2 replicas per rank (NUMXLA_DEVICE_COUNT=2: 4 replicas)
    run = _mpiexec(ranks, str(PROGRAM))
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert _ok_ranks(run) == list(range(ranks)), out[-4000:]


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_a_dead_rank_is_an_error_on_the_others(how):
    # ULFM keeps the survivors running; its failure detector, quick here: a
    # heartbeat every 0.5 s (the ranks' pulse every 0.25 s), dead after 3 s of silence
    run = _mpiexec(4, str(FAULTS), how, options=("--with-ft", "ulfm"), timeout=240,
                   OMPI_MCA_mpi_ft_detector_period="0.5", OMPI_MCA_mpi_ft_detector_timeout="3")
    out = run.stdout + run.stderr
    assert _ok_ranks(run) == [0, 1, 3], out[-4000:]


def test_data_parallel_script_on_two_ranks():
    run = _mpiexec(2, "data_parallel.py", "--mpi", "--steps", "3")
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    (line,) = [ln for ln in run.stdout.splitlines() if "bit-identical on all 2 replicas" in ln]
    assert float(line.rsplit(" ", 1)[1]) < 1e-4
