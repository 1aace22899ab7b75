"""Background compiles: the kernels of a program are compiled by worker
processes (:mod:`compile.worker`) into the disk cache, on other cores and
outside this process's GIL, while calls are served by tier 0.

:class:`CompileService` starts a worker when a request finds every running
one busy (up to one per core, at most four) and keeps them warm: a worker
pays for importing Numba and initialising LLVM once, off the critical path.  :meth:`CompileService.submit` returns a
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

__all__ = ["BackgroundCompileError", "CompileService", "service", "use_service", "MAX_RESTARTS",
           "compile_in_parallel", "PARALLEL_MIN_KERNELS"]

MAX_RESTARTS = 3


class BackgroundCompileError(RuntimeError):
    """A background compile did not produce code (the reason is the message)."""


def default_command() -> list[str]:
    return [sys.executable, "-c", "from compile.worker import main; main()"]


class _Worker:
    """One worker process, the requests in flight to it and its last words."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.pending: dict[int, Future] = {}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


class CompileService:
    """Worker processes and the requests in flight to them: a request goes
    to the least busy worker, and a new worker starts (up to ``workers``)
    when every running one is busy — independent kernels compile in parallel."""

    def __init__(self, command: Sequence[str] | None = None, workers: int | None = None):
        self.command = list(command) if command is not None else default_command()
        self.max_workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._workers: list[_Worker] = []
        self._ids = itertools.count()
        self.deaths = 0

    @property
    def pid(self) -> int | None:
        """The first running worker's process id (None before any started)."""
        workers = [w for w in self._workers if w.alive]
        return workers[0].process.pid if workers else None

    def start(self) -> None:
        """Start a worker now (they are otherwise started by requests)."""
        with self._lock:
            self._worker()

    def submit(self, path: str, function: str, types: tuple) -> Future:
        """Compile ``function`` of the generated module at ``path`` for the
        Numba argument ``types``, into the disk cache."""
        future: Future = Future()
        request = {"path": str(path), "function": function,
                   "types": base64.b64encode(pickle.dumps(types)).decode()}
        with self._lock:
            try:
                worker = self._worker()
                request["id"] = key = next(self._ids)
                worker.pending[key] = future
                worker.process.stdin.write(json.dumps(request) + "\n")
                worker.process.stdin.flush()
            except (OSError, BackgroundCompileError, ValueError) as error:
                for worker in self._workers:
                    worker.pending.pop(request.get("id"), None)
                if not isinstance(error, BackgroundCompileError):  # it died: say how
                    code = worker.process.poll()
                    error = BackgroundCompileError(
                        f"the compile worker (pid {worker.process.pid}) "
                        + (f"exited with {_exit_text(code)}" if code is not None else
                           f"stopped reading ({error})"))
                future.set_exception(error)
        return future

    def _worker(self) -> _Worker:
        """The least busy running worker; a new one if all are busy and there is room."""
        self._workers = [w for w in self._workers if w.alive]
        idle = min(self._workers, key=lambda w: len(w.pending), default=None)
        if idle is not None and (not idle.pending or len(self._workers) >= self.max_workers):
            return idle
        if self.deaths > MAX_RESTARTS:
            if idle is not None:
                return idle
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
            if idle is not None:
                return idle
            raise BackgroundCompileError(f"could not start the compile worker: {error}") from None
        worker = _Worker(process)
        self._workers.append(worker)
        threading.Thread(target=self._read_replies, args=(worker,), daemon=True,
                         name="numxla-compile-replies").start()
        threading.Thread(target=self._drain_stderr, args=(worker,), daemon=True,
                         name="numxla-compile-stderr").start()
        return worker

    def _read_replies(self, worker: _Worker) -> None:
        process = worker.process
        for line in process.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                future = worker.pending.pop(reply.get("id"), None)
            if future is None:
                continue
            if reply.get("ok"):
                future.set_result(float(reply.get("seconds", 0.0)))
            else:
                future.set_exception(BackgroundCompileError(reply.get("error", "unknown error")))
        # end of output: the worker exited (or was killed); fail what it still had
        code = process.wait()
        with self._lock:
            if code != 0:
                self.deaths += 1
            lost = list(worker.pending.values())
            worker.pending.clear()
        if lost:
            reason = (f"the compile worker (pid {process.pid}) exited with "
                      f"{_exit_text(code)} before finishing")
            tail = "".join(worker.stderr_tail).strip().splitlines()[-3:]
            if tail:
                reason += ": " + " | ".join(tail)
            for future in lost:
                if not future.done():
                    future.set_exception(BackgroundCompileError(reason))

    @staticmethod
    def _drain_stderr(worker: _Worker) -> None:
        for line in worker.process.stderr:
            worker.stderr_tail.append(line)

    def close(self, wait: float | None = None) -> None:
        """Close the workers' input: each finishes the requests it has, then
        exits (the cache is filled even after this process is gone);
        ``wait``: seconds to wait for them to exit (benchmarks use it, so
        that no compile runs on after them)."""
        with self._lock:
            workers, self._workers = self._workers, []
        for worker in workers:
            try:
                worker.process.stdin.close()
            except OSError:
                pass
        for worker in workers if wait else ():
            try:
                worker.process.wait(wait)
            except subprocess.TimeoutExpired:
                pass


def _exit_text(code: int) -> str:
    if code < 0:
        import signal
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


# A full compile (``tiered=False``) of at least this many kernels shares them
# with a worker process: it starts in ~1 s, so fewer are quicker compiled here.
PARALLEL_MIN_KERNELS = 8


def compile_in_parallel(calls: Sequence) -> None:
    """Compile the kernel ``calls`` (``program.KernelCall``) here and in a
    worker at once: this thread takes them from the front, a worker from the
    back, one at a time; what a worker fails to build is compiled here."""
    queue = collections.deque(calls)
    lock = threading.Lock()
    sent: list = []

    def feed_worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                call = queue.pop()
            sent.append(call)
            try:
                service().submit(call.kernel.path, "graph_fn", call.types).result()
            except BackgroundCompileError:
                return  # left to this thread below

    helper = threading.Thread(target=feed_worker, daemon=True, name="numxla-compile-feed")
    helper.start()
    while True:
        with lock:
            if not queue:
                break
            call = queue.popleft()
        call.compile()
    helper.join()
    for call in sent:
        if not call.has_code():  # loads what the worker wrote; compiles what it did not
            call.compile()


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
