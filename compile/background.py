"""Background compiles: the generated code of a program is compiled by a
worker process (:mod:`compile.worker`) into the disk cache, on another core
and outside this process's GIL, while calls are served by tier 0.

:class:`CompileService` starts the worker the first time it is needed and
keeps it warm: the worker pays for importing Numba and initialising LLVM
once, off the critical path.  :meth:`CompileService.submit` returns a
``Future`` that resolves to the compile's seconds, or fails with
:class:`BackgroundCompileError` giving the reason (the compile failed, the
worker died, or could not start): the caller then stays on tier 0.  A worker
that dies is restarted for later requests, at most :data:`MAX_RESTARTS` times.
"""
from __future__ import annotations

import atexit
import base64
import collections
import itertools
import json
import os
import pickle
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Sequence

__all__ = ["BackgroundCompileError", "CompileService", "service", "use_service", "MAX_RESTARTS"]

MAX_RESTARTS = 3


class BackgroundCompileError(RuntimeError):
    """A background compile did not produce code (the reason is the message)."""


def default_command() -> list[str]:
    return [sys.executable, "-c", "from compile.worker import main; main()"]


class CompileService:
    """One worker process and the requests in flight to it."""

    def __init__(self, command: Sequence[str] | None = None):
        self.command = list(command) if command is not None else default_command()
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._pending: dict[int, Future] = {}
        self._ids = itertools.count()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self.deaths = 0

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None else None

    def start(self) -> None:
        """Start the worker now (it is otherwise started by the first request)."""
        with self._lock:
            self._ensure_process()

    def submit(self, path: str, function: str, types: tuple) -> Future:
        """Compile ``function`` of the generated module at ``path`` for the
        Numba argument ``types``, into the disk cache."""
        future: Future = Future()
        request = {"path": str(path), "function": function,
                   "types": base64.b64encode(pickle.dumps(types)).decode()}
        with self._lock:
            try:
                process = self._ensure_process()
                request["id"] = key = next(self._ids)
                self._pending[key] = future
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
            except (OSError, BackgroundCompileError, ValueError) as error:
                self._pending.pop(request.get("id"), None)
                future.set_exception(error if isinstance(error, BackgroundCompileError) else
                                     BackgroundCompileError(f"the compile worker is gone: {error}"))
        return future

    def _ensure_process(self) -> subprocess.Popen:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if self.deaths > MAX_RESTARTS:
            raise BackgroundCompileError(f"the compile worker died {self.deaths} times; "
                                         f"not restarted")
        package_root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        try:
            process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
        except OSError as error:
            self.deaths += 1
            raise BackgroundCompileError(f"could not start the compile worker: {error}") from None
        self._process = process
        threading.Thread(target=self._read_replies, args=(process,), daemon=True,
                         name="numxla-compile-replies").start()
        threading.Thread(target=self._drain_stderr, args=(process,), daemon=True,
                         name="numxla-compile-stderr").start()
        return process

    def _read_replies(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                future = self._pending.pop(reply.get("id"), None)
            if future is None:
                continue
            if reply.get("ok"):
                future.set_result(float(reply.get("seconds", 0.0)))
            else:
                future.set_exception(BackgroundCompileError(reply.get("error", "unknown error")))
        # end of output: the worker exited (or was killed); fail what it still had
        code = process.wait()
        with self._lock:
            if self._process is process:
                self._process = None
            if code != 0:
                self.deaths += 1
            lost = [f for key, f in list(self._pending.items())]
            self._pending.clear()
        if lost:
            reason = (f"the compile worker (pid {process.pid}) exited with "
                      f"{_exit_text(code)} before finishing")
            tail = "".join(self._stderr_tail).strip().splitlines()[-3:]
            if tail:
                reason += ": " + " | ".join(tail)
            for future in lost:
                if not future.done():
                    future.set_exception(BackgroundCompileError(reason))

    def _drain_stderr(self, process: subprocess.Popen) -> None:
        for line in process.stderr:
            self._stderr_tail.append(line)

    def close(self) -> None:
        """Close the worker's input: it finishes the requests it has, then
        exits (the cache is filled even after this process is gone)."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass


def _exit_text(code: int) -> str:
    if code < 0:
        import signal
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


_service: CompileService | None = None
_service_lock = threading.Lock()


def service() -> CompileService:
    """The process's compile service (created on first use)."""
    global _service
    with _service_lock:
        if _service is None:
            _service = CompileService()
        return _service


def use_service(new: CompileService | None) -> CompileService | None:
    """Replace the process's compile service (tests use a stand-in worker);
    returns the previous one."""
    global _service
    with _service_lock:
        previous, _service = _service, new
    return previous


@atexit.register
def _close_at_exit() -> None:
    if _service is not None:
        _service.close()
