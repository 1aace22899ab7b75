"""The runner: long-lived worker subprocesses that run programs one after another.

A :class:`Pool` keeps up to ``jobs`` workers (``python -m tests.fuzz.worker``),
each in its own process group with ``NUMXLA_COMPILE_SERVER=0``,
``NUMXLA_TIERED=0`` and ``NUMXLA_ENABLE_X64=1`` (64-bit inputs keep their types).  Work comes as *tasks*: generators that yield requests
(``("run", program)`` or ``("values", program)``), receive each response and
return a final value — one request for a program of the main run, many for
the shrinker.  A worker that dies mid-request gives that request a ``crash``
response (with the tail of its log: faulthandler's traceback), one that
answers nothing within ``timeout`` seconds a ``hang`` (it is sent SIGABRT so
its log shows where, then killed); either way a fresh worker takes its place.
"""
from __future__ import annotations

import collections
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Iterable, Iterator
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STARTUP_SECONDS = 120.0

Task = Generator[tuple[str, Any], dict, Any]


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(NUMXLA_COMPILE_SERVER="0", NUMXLA_TIERED="0", NUMXLA_ENABLE_X64="1",
               PYTHONFAULTHANDLER="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    return env


class Worker:
    """One worker process, its response pipe and its log."""

    def __init__(self):
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        read, write = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.worker", str(write)], stdin=subprocess.PIPE,
            stdout=self.log, stderr=self.log, pass_fds=(write,), cwd=ROOT, env=worker_env(),
            start_new_session=True)
        os.close(write)
        self.fd = read
        self.buffer = b""
        self.ready = False
        self.job: tuple | None = None        # (task id, task, request)
        self.stopped = False
        self.deadline = time.monotonic() + STARTUP_SECONDS

    def send(self, request, timeout: float) -> None:
        data = pickle.dumps(request)
        self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
        self.proc.stdin.flush()
        self.deadline = time.monotonic() + timeout

    def read(self) -> list | None:
        """Complete messages received so far; None once the worker has gone."""
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            return None
        self.buffer += chunk
        out = []
        while len(self.buffer) >= 8:
            (n,) = struct.unpack("<Q", self.buffer[:8])
            if len(self.buffer) < 8 + n:
                break
            out.append(pickle.loads(self.buffer[8:8 + n]))
            self.buffer = self.buffer[8 + n:]
        return out

    def tail(self, n: int = 3000) -> str:
        """The end of the log, without the phase marks of earlier programs."""
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - (1 << 16)))
        lines = self.log.read().decode(errors="replace").splitlines()
        marks = [i for i, line in enumerate(lines) if line.startswith("[fuzz] ")]
        lines = [line for i, line in enumerate(lines) if i not in marks[:-1]]
        return "\n".join(lines)[-n:]

    def phase(self) -> str:
        """The phase of the program it was running (the last mark in its log)."""
        marks = [line for line in self.tail().splitlines() if line.startswith("[fuzz] ")]
        return marks[-1].rsplit(": ", 1)[-1] if marks else "?"

    def stop(self, abort: bool = False) -> None:
        """End the worker and its children (its process group)."""
        if self.stopped:
            return
        self.stopped = True
        if abort and self.proc.poll() is None:
            try:  # faulthandler writes the stack of every thread to the log
                os.kill(self.proc.pid, signal.SIGABRT)
                self.proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        os.close(self.fd)
        self.proc.stdin.close()

    def close(self) -> None:
        self.stop()
        self.log.close()


class Pool:
    def __init__(self, jobs: int = 2, timeout: float = 60.0):
        self.jobs, self.timeout = max(1, jobs), timeout
        self.workers: list[Worker] = []
        self.restarts = 0

    def __enter__(self) -> Pool:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        for w in self.workers:
            w.close()
        self.workers = []

    def _replace(self, worker: Worker) -> None:
        worker.close()
        self.workers.remove(worker)
        self.restarts += 1

    def drive(self, tasks: Iterable[tuple[Any, Task]]) -> Iterator[tuple[Any, Any]]:
        """Run the tasks, ``jobs`` requests at a time; yield ``(task id, result)``
        as each task finishes."""
        pending = iter(tasks)
        queue: collections.deque = collections.deque()
        finished: list = []
        exhausted = False

        def advance(task_id, task: Task, response) -> None:
            try:
                request = task.send(response)
            except StopIteration as stop:
                finished.append((task_id, stop.value))
            else:
                queue.append((task_id, task, request))

        while True:
            while not queue and not exhausted and \
                    sum(w.job is not None for w in self.workers) < self.jobs:
                nxt = next(pending, None)
                if nxt is None:
                    exhausted = True
                else:
                    advance(nxt[0], nxt[1], None)
            while len(self.workers) < self.jobs and (queue or not exhausted):
                self.workers.append(Worker())
            for w in self.workers:
                if w.ready and w.job is None and queue:
                    w.job = queue.popleft()
                    w.send(w.job[2], self.timeout)
            yield from finished
            finished.clear()
            busy = [w for w in self.workers if w.job is not None or not w.ready]
            if not busy:
                if exhausted and not queue:
                    return
                continue
            wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            readable, _, _ = select.select([w.fd for w in busy], [], [], wait)
            for w in busy:
                if w.fd in readable:
                    self._receive(w, advance)
                elif time.monotonic() > w.deadline:
                    self._expire(w, advance)

    def _receive(self, w: Worker, advance) -> None:
        messages = w.read()
        if messages is None:  # the worker died
            code = w.proc.wait()
            what = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
            if not w.ready:
                raise RuntimeError(f"a fuzz worker died starting ({what}):\n{w.tail()}")
            job = w.job
            if job is None:
                self._replace(w)
                return
            tail, phase = w.tail(), w.phase()
            self._replace(w)
            advance(job[0], job[1], {"status": "crash", "phase": phase, "seconds": None,
                                     "detail": f"the worker died ({what}) in {phase}; its log "
                                               f"ends:\n{tail}",
                                     "key": f"crash: {what} in {phase}"})
            return
        for message in messages:
            if message.get("status") == "ready":
                w.ready = True
            elif w.job is not None:
                job, w.job = w.job, None
                advance(job[0], job[1], message)

    def _expire(self, w: Worker, advance) -> None:
        if w.job is None:
            raise RuntimeError(f"a fuzz worker did not start in {STARTUP_SECONDS} s:\n{w.tail()}")
        job = w.job
        w.stop(abort=True)
        phase = w.phase()
        detail = f"no result within {self.timeout:g} s, in {phase}; the worker's log ends:\n" \
                 f"{w.tail()}"
        self._replace(w)
        advance(job[0], job[1], {"status": "hang", "phase": phase, "detail": detail,
                                 "key": f"hang in {phase}", "seconds": self.timeout})


def single(program) -> Task:
    """The task of one run of ``program``."""
    response = yield ("run", program)
    return response
