"""The compile worker: a separate process that compiles generated kernels
into the disk cache, so the process that asked never waits for Numba.

It takes one request per line (JSON: ``id``, ``path`` of a generated module
in the cache and ``function`` (``graph_fn``) — or of a library kernel's
module in :mod:`compile.kernels` and its name —, ``types``: the Numba
argument types, pickled and base64-encoded) and answers one line per request (``id``,
``ok``, ``seconds`` or ``error``).  Compiling with ``cache=True`` writes
Numba's index and machine code beside the module, where the asking process
loads them (:func:`compile.cache.load_module`).

Two ways to run it:

* :func:`main` — a child of one process, on its stdin/stdout; it ends when
  its stdin closes, after finishing the requests it has read (the cache is
  filled even when the asking process has exited);
* :func:`serve` — a *compile server* on a Unix socket, shared by every
  process of the user that runs this build of numxla
  (:mod:`compile.background` starts it): it pays for importing Numba and
  initialising LLVM once, so a fresh process's compile does not; it ends
  after ``idle`` seconds without a connection.
"""
from __future__ import annotations

import base64
import json
import os
import pickle
import socket
import sys
import threading
import time
from pathlib import Path

_kernels: dict = {}  # (path, function) -> Kernel or LibraryKernel
_compiling = threading.Lock()


def compile_request(request: dict) -> float:
    """Compile ``request``'s function for its argument types; returns the seconds taken."""
    from .kernel import Kernel, library_kernel
    start = time.perf_counter()
    path, function = request["path"], request["function"]
    kernel = _kernels.get((path, function))
    if kernel is None:  # a generated module in the asking process's cache directory
        kernel = _kernels[(path, function)] = (  # (where it loads the code), or a library kernel
            Kernel(Path(path).read_text(), directory=str(Path(path).parent))
            if function == Kernel.function else library_kernel(path, function))
    kernel.compile(pickle.loads(base64.b64decode(request["types"])))
    return time.perf_counter() - start


def answer(line: str) -> str:
    """The reply line to one request line (every failure is reported, not fatal)."""
    request = json.loads(line)
    try:
        with _compiling:
            reply = {"id": request["id"], "ok": True, "seconds": compile_request(request)}
    except BaseException as error:  # noqa: BLE001
        reply = {"id": request["id"], "ok": False, "error": f"{type(error).__name__}: {error}"}
    return json.dumps(reply) + "\n"


def main() -> None:
    """Answer requests on stdin until it closes (compiling on after the
    asking process has gone, for the disk cache)."""
    replies = sys.stdout
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    _answer_all(sys.stdin, replies)


def _answer_all(requests, replies) -> None:
    """Answer every request line; once ``replies`` cannot be written (the
    asking process has gone), go on compiling: the disk cache is filled for
    its next run."""
    listening = True
    for line in requests:
        if not line.strip():
            continue
        reply = answer(line)
        if listening:
            try:
                replies.write(reply)
                replies.flush()
            except OSError:
                listening = False


def serve(path: str, idle: float) -> None:
    """Answer requests on the Unix socket ``path`` (one thread per
    connection, one compile at a time) until ``idle`` seconds pass with no
    connection open."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    os.chmod(path, 0o600)
    _warm_up()  # clients that connect meanwhile wait in the backlog
    open_connections, last = [0], [time.monotonic()]
    state = threading.Lock()

    def handle(connection: socket.socket) -> None:
        """Answer one client's requests (:func:`_answer_all`)."""
        try:
            with connection, connection.makefile("r") as requests, \
                    connection.makefile("w") as replies:
                _answer_all(requests, replies)
        except OSError:
            pass
        finally:
            with state:
                open_connections[0] -= 1
                last[0] = time.monotonic()

    listener.settimeout(1.0)
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except socket.timeout:
                with state:
                    if not open_connections[0] and time.monotonic() - last[0] > idle:
                        return
                continue
            connection.settimeout(None)
            with state:
                open_connections[0] += 1
            threading.Thread(target=handle, args=(connection,), daemon=True).start()
    finally:
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass


def _warm_up() -> None:
    """Import the compiler and compile a trivial function: Numba's one-time
    start-up (LLVM, the target context) is paid before the first request."""
    from numba import njit

    import numxla.compile  # noqa: F401  (the lowering rules, the kernels)
    njit(lambda x: x + 1)(1)


if __name__ == "__main__":
    main()
