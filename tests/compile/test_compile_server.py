"""Compile servers (compile/background.py, compile/worker.py): a fresh
process's kernels compile in warm server processes shared by every process
of the user, and come back through the disk cache; the servers end when
idle.  Each process here is a fresh one with servers enabled, in a socket
directory of the test's own."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent("""
    import numpy as np
    import numxla.primitives.numpy as xnp
    from numxla.compile import jit
    from numxla.compile.kernel import compile_counts
    x = np.linspace(-2, 2, 60, dtype=np.float32).reshape(6, 10)
    w = np.linspace(-1, 1, 50, dtype=np.float32).reshape(10, 5)
    out = jit(lambda x, w: xnp.tanh(x @ w * 0.8125) + xnp.sum(x), tiered=False)(x, w)
    want = np.tanh(x @ w * 0.8125) + x.sum()
    assert np.allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5), (out, want)
    print(compile_counts()["compiled_here"], compile_counts()["compiled"])
""")


def run(env: dict) -> tuple[int, int]:
    """Kernels compiled in the process itself, and for it (there or by a server)."""
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=REPO, check=True,
                         capture_output=True, text=True, timeout=300)
    here, total = out.stdout.split()
    return int(here), int(total)


def listening(directory: Path) -> list[Path]:
    found = []
    for path in directory.glob("*.sock"):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
            found.append(path)
        except OSError:
            pass
        finally:
            probe.close()
    return found


def test_a_fresh_process_compiles_in_warm_servers_which_end_when_idle(tmp_path):
    servers = tmp_path / "servers"
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMXLA_COMPILE_SERVER="1",
               NUMXLA_COMPILE_SERVER_DIR=str(servers), NUMXLA_COMPILE_SERVER_IDLE="4",
               NUMXLA_TIERED="0")
    here, total = run(dict(env, NUMXLA_CACHE_DIR=str(tmp_path / "cache1")))
    assert here == total >= 1            # no server was running: compiled here, one started
    deadline = time.monotonic() + 120
    while not listening(servers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert listening(servers), "no compile server came up"
    here, total = run(dict(env, NUMXLA_CACHE_DIR=str(tmp_path / "cache2")))
    assert here == 0 and total >= 1      # an empty cache, every kernel built by the servers
    assert oct(servers.stat().st_mode & 0o777) == oct(0o700)
    deadline = time.monotonic() + 60   # (no probing now: a connection is activity)
    while list(servers.glob("*.sock")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not list(servers.glob("*.sock")), "the compile servers did not end when idle"
