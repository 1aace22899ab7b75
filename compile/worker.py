"""The compile worker: a separate process that compiles generated modules
into the disk cache, so the process that asked never waits for Numba.

It reads one request per line on stdin (JSON: ``id``, ``path`` of a
generated module in the cache, ``function`` (``graph_fn``), ``types``: the Numba argument
types, pickled and base64-encoded) and answers one line per request on
stdout (``id``, ``ok``, ``seconds`` or ``error``).  Compiling with
``cache=True`` writes Numba's index and machine code beside the module,
where the asking process loads them (:func:`compile.cache.load_module`).
The worker ends when its stdin closes, after finishing the requests it
has read: the cache is filled even when the asking process has exited.
"""
from __future__ import annotations

import base64
import json
import pickle
import sys
import time
from pathlib import Path


def compile_request(request: dict) -> float:
    """Compile ``request``'s function for its argument types; returns the seconds taken."""
    from .kernel import Kernel
    start = time.perf_counter()
    kernel = _kernels.get(request["path"])
    if kernel is None:
        kernel = _kernels[request["path"]] = Kernel(Path(request["path"]).read_text())
    kernel.compile(pickle.loads(base64.b64decode(request["types"])))
    return time.perf_counter() - start


_kernels: dict = {}  # path -> Kernel


def main() -> None:
    replies = sys.stdout
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            reply = {"id": request["id"], "ok": True, "seconds": compile_request(request)}
        except BaseException as error:  # noqa: BLE001 - every failure is reported, not fatal
            reply = {"id": request["id"], "ok": False,
                     "error": f"{type(error).__name__}: {error}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
