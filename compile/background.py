"""Background compiles: the kernels of a program are compiled by worker
processes (:mod:`compile.worker`) into the disk cache, on other cores and
outside this process's GIL, while calls are served by tier 0 or the
process waits for a full compile.

The workers are **compile servers**: processes on Unix sockets, shared by
every process of the user that runs this build of numxla, started on first
use and ended after ``NUMXLA_COMPILE_SERVER_IDLE`` seconds (default 600)
without a connection.  A server pays for importing Numba and initialising
LLVM once, so a fresh process's compile does not: its kernels compile in
warm servers, one per core, and it loads the machine code from the disk
cache.  ``NUMXLA_COMPILE_SERVER=0`` uses worker processes of this process's
own instead (children on pipes, gone with it).

:meth:`CompileService.submit` returns a ``Future`` that resolves to the
compile's seconds, or fails with :class:`BackgroundCompileError` giving the
reason (the compile failed, the worker died or could not start): the
caller then stays on tier 0, or compiles here.  A worker that dies is
replaced for later requests, at most :data:`MAX_RESTARTS` times.
"""
from __future__ import annotations

import atexit
import base64
import collections
import contextlib
import fcntl
import functools
import hashlib
import itertools
import json
import os
import pickle
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Iterable, Sequence

import numxla

from .tiers import log, log_level

__all__ = ["BackgroundCompileError", "CompileService", "service", "use_service", "MAX_RESTARTS",
           "compile_in_parallel", "PARALLEL_MIN_KERNELS"]

MAX_RESTARTS = 3
_SERVER_START_SECONDS = 60


class BackgroundCompileError(RuntimeError):
    """A background compile did not produce code (the reason is the message)."""


def default_command() -> list[str]:
    return [sys.executable, "-c", "from numxla.compile.worker import main; main()"]


def _package_env() -> dict[str, str]:
    """The environment of a worker: this one, the package importable."""
    env = dict(os.environ)
    root = str(Path(numxla.__file__).resolve().parent.parent)  # the folder holding numxla/
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


# -- the two kinds of worker ------------------------------------------------------------

class _PipeWorker:
    """A child process answering on its stdin/stdout."""

    def __init__(self, command: Sequence[str]):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1,
                                        env=_package_env())
        self.pid = self.process.pid
        self.pending: dict[int, Future] = {}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True,
                                       name="numxla-compile-stderr")
        self._drain.start()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, line: str) -> None:
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def replies(self) -> Iterable[str]:
        return self.process.stdout

    def ended(self) -> tuple[bool, str]:
        """After the replies end: whether it died, and how."""
        code = self.process.wait()
        self._drain.join(2)  # its last words, read to the end of its stderr
        reason = f"the compile worker (pid {self.pid}) exited with {_exit_text(code)}"
        tail = "".join(self.stderr_tail).strip().splitlines()[-3:]
        return code != 0, reason + (": " + " | ".join(tail) if tail else "")

    def why_stopped(self, error: Exception) -> str:
        """Why a request could not be written: how it died, when it did."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(2)  # its pipe closes before it can be reaped
        return self.ended()[1] if not self.alive else \
            f"the compile worker stopped reading ({error})"

    def close(self, wait: float | None = None) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        if wait:
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                pass

    def _drain_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr_tail.append(line)


class _ServerWorker:
    """A connection to a compile server (started if none listens)."""

    def __init__(self, index: int):
        self.path = _server_path(index)
        self.connection = _connect(self.path)
        self.pid = _peer_pid(self.connection)
        self._out = self.connection.makefile("w")
        self._in = self.connection.makefile("r")
        self.pending: dict[int, Future] = {}
        self._closed = False

    @property
    def alive(self) -> bool:
        return not self._closed

    def send(self, line: str) -> None:
        self._out.write(line)
        self._out.flush()

    def replies(self) -> Iterable[str]:
        try:
            yield from self._in
        except OSError:
            return
        finally:
            self._closed = True

    def ended(self) -> tuple[bool, str]:
        return bool(self.pending), (f"the compile server (pid {self.pid}, {self.path}) "
                                    f"closed the connection")

    def why_stopped(self, error: Exception) -> str:
        return f"the compile worker stopped reading ({error})"

    def close(self, wait: float | None = None) -> None:
        for future in list(self.pending.values()) if wait else ():
            try:
                future.exception(timeout=wait)  # the server finishes what it has
            except TimeoutError:
                break
        self._closed = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _server_dir() -> Path:
    """A directory of the user's own for the servers' sockets and logs
    (``NUMXLA_COMPILE_SERVER_DIR``, or one in the temporary directory)."""
    path = Path(os.environ.get("NUMXLA_COMPILE_SERVER_DIR") or
                Path(tempfile.gettempdir()) / f"numxla-{os.getuid()}")
    path.mkdir(mode=0o700, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise BackgroundCompileError(f"{path} is not private to this user: no compile server")
    return path


@functools.lru_cache(maxsize=1)
def _package_key() -> str:
    from .cache import _build_key
    sources = sorted(Path(__file__).parent.rglob("*.py"))
    return hashlib.sha256(_build_key().encode() +
                          b"".join(p.read_bytes() for p in sources)).hexdigest()


def _server_path(index: int) -> str:
    """The socket of server ``index`` of this build of numxla (the compile
    package's sources: a server runs the code it started with), this Python
    and these Numba settings (``NUMBA_*``: they shape the code it compiles)."""
    numba_settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("NUMBA_"))
    key = hashlib.sha256(f"{_package_key()}|{sys.executable}|{numba_settings}".encode())
    return str(_server_dir() / f"{key.hexdigest()[:16]}-{index}.sock")


def _connect(path: str) -> socket.socket:
    """A connection to the server at ``path``, started if none listens there."""
    connection = _try_connect(path)
    if connection is None:
        process = _spawn_server(path)
        deadline = time.monotonic() + _SERVER_START_SECONDS
        while connection is None and time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                log_tail = Path(path + ".log").read_text(errors="replace").strip()[-300:]
                raise BackgroundCompileError(f"the compile server at {path} exited with "
                                             f"{_exit_text(process.returncode)}: {log_tail}")
            time.sleep(0.02)
            connection = _try_connect(path)
    if connection is None:
        raise BackgroundCompileError(f"no compile server started at {path} within "
                                     f"{_SERVER_START_SECONDS} s (see {path}.log)")
    return connection


def _spawn_server(path: str) -> subprocess.Popen | None:
    """Start a server at ``path`` unless one listens there or is starting
    (one starter at a time: a lock file beside the socket); the process
    started, if any."""
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        listening = _try_connect(path)
        if listening is not None:
            listening.close()
            return None
        if _starting(path):
            return None
        try:
            os.unlink(path)  # a server that is gone left its socket
        except FileNotFoundError:
            pass
        idle = float(os.environ.get("NUMXLA_COMPILE_SERVER_IDLE", "600"))
        with open(path + ".log", "ab") as log:
            code = f"from numxla.compile.worker import serve; serve({path!r}, {idle!r})"
            process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=log,
                                       env=_package_env(), start_new_session=True)
        Path(path + ".starting").write_text(f"{process.pid} {time.time()}")
        return process


def _starting(path: str) -> bool:
    """Whether a server for ``path`` was started moments ago and may still be
    importing (it has not bound its socket yet)."""
    try:
        pid, started = Path(path + ".starting").read_text().split()
        os.kill(int(pid), 0)
        return time.time() - float(started) < _SERVER_START_SECONDS
    except (OSError, ValueError):
        return False


def _try_connect(path: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        return connection
    except OSError:
        connection.close()
        return None


def _peer_pid(connection: socket.socket) -> int | None:
    try:
        import struct
        creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                      struct.calcsize("3i"))
        return struct.unpack("3i", creds)[0]
    except (OSError, AttributeError):
        return None


def servers_enabled() -> bool:
    return os.environ.get("NUMXLA_COMPILE_SERVER", "1").strip().lower() not in ("0", "false",
                                                                                 "no", "off")


# -- the service ------------------------------------------------------------------------

class CompileService:
    """Workers and the requests in flight to them: a request goes to the
    least busy worker, and another worker joins (up to ``workers``) when
    every one is busy — independent kernels compile in parallel.  With a
    ``command``, workers are children running it on pipes (tests use stand-ins)."""

    def __init__(self, command: Sequence[str] | None = None, workers: int | None = None,
                 servers: bool | None = None):
        self.command = list(command) if command is not None else default_command()
        self.servers = (command is None and servers_enabled()) if servers is None else servers
        self.max_workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._workers: list = []
        self._ids = itertools.count()
        self.deaths = 0

    @property
    def pid(self) -> int | None:
        """The first working worker's process id (None before any)."""
        workers = [w for w in self._workers if w.alive]
        return workers[0].pid if workers else None

    def warm(self) -> bool:
        """Whether a worker is running (no start-up to wait for): one of this
        process's, or a compile server listening for any process."""
        if any(w.alive for w in self._workers):
            return True
        if not self.servers:
            return False
        try:
            connection = _try_connect(_server_path(0))
        except BackgroundCompileError:
            return False
        if connection is not None:
            connection.close()
        return connection is not None

    def start(self) -> None:
        """Start compile servers for later compiles (of this process or
        another) without waiting for them; nothing without servers."""
        if not self.servers:
            return
        try:
            for index in range(self.max_workers):
                _spawn_server(_server_path(index))
        except (OSError, BackgroundCompileError):
            pass

    def submit(self, path: str, function: str, types: tuple) -> Future:
        """Compile ``function`` of the generated module at ``path`` (or of the
        library kernel module at ``path``) for the Numba argument ``types``,
        into the disk cache."""
        future: Future = Future()
        request = {"path": str(path), "function": function,
                   "types": base64.b64encode(pickle.dumps(types)).decode()}
        worker = None
        with self._lock:
            try:
                worker = self._worker()
                request["id"] = key = next(self._ids)
                worker.pending[key] = future
                worker.send(json.dumps(request) + "\n")
            except (OSError, BackgroundCompileError, ValueError) as error:
                for w in self._workers:
                    w.pending.pop(request.get("id"), None)
                if not isinstance(error, BackgroundCompileError):  # it died: say how
                    error = BackgroundCompileError(
                        worker.why_stopped(error) if worker is not None
                        else f"the compile worker stopped reading ({error})")
                future.set_exception(error)
        return future

    def _worker(self):
        """The least busy working worker; a new one if all are busy and there is room."""
        self._workers = [w for w in self._workers if w.alive]
        idle = min(self._workers, key=lambda w: len(w.pending), default=None)
        if idle is not None and (not idle.pending or len(self._workers) >= self.max_workers):
            return idle
        if self.deaths > MAX_RESTARTS:
            if idle is not None:
                return idle
            raise BackgroundCompileError(f"the compile worker died {self.deaths} times; "
                                         f"not restarted")
        try:
            if self.servers:
                used = {w.path for w in self._workers}
                index = next(i for i in itertools.count() if _server_path(i) not in used)
                worker = _ServerWorker(index)
            else:
                worker = _PipeWorker(self.command)
        except (OSError, BackgroundCompileError) as error:
            self.deaths += 1
            if idle is not None:
                return idle
            raise error if isinstance(error, BackgroundCompileError) else \
                BackgroundCompileError(f"could not start the compile worker: {error}") from None
        self._workers.append(worker)
        threading.Thread(target=self._read_replies, args=(worker,), daemon=True,
                         name="numxla-compile-replies").start()
        return worker

    def _read_replies(self, worker) -> None:
        for line in worker.replies():
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
        # end of the replies: the worker exited (or was killed); fail what it still had
        died, reason = worker.ended()
        with self._lock:
            self.deaths += died
            lost = list(worker.pending.values())
            worker.pending.clear()
        for future in lost:
            if not future.done():
                future.set_exception(BackgroundCompileError(reason + " before finishing"))

    def close(self, wait: float | None = None) -> None:
        """Let the workers go: each finishes the requests it has (the cache is
        filled even after this process is gone); ``wait``: seconds to wait for
        them to finish (benchmarks use it, so that no compile runs on after them)."""
        with self._lock:
            workers, self._workers = self._workers, []
        for worker in workers:
            worker.close(wait)


def _exit_text(code: int) -> str:
    if code < 0:
        import signal
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


# -- full compiles ------------------------------------------------------------------------

# A full compile (``tiered=False``) of at least this many kernels starts
# workers when none is running (one starts in ~1 s: fewer are quicker
# compiled here); with a worker running, every kernel goes to the workers.
PARALLEL_MIN_KERNELS = 8


# A worker that answers no request for this long is left behind by a full
# compile, which compiles the rest itself: never wait forever on a worker.
STALL_SECONDS = 120.0


def compile_in_parallel(calls: Sequence, *, here: bool, meanwhile: Sequence = ()) -> None:
    """Compile the kernel ``calls`` (``program.KernelCall``) in the workers,
    one request in flight per worker, taking them from the back — and on
    this thread from the front when ``here``; each finished kernel's code is
    loaded at once, while the workers build the rest.  What a worker fails
    to build, or does not build within :data:`STALL_SECONDS`, is compiled here.
    The calls ``meanwhile`` are loaded (or compiled) on this thread first."""
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
                future = service().submit(call.kernel.path, call.kernel.function, call.types)
                seconds = future.result(timeout=STALL_SECONDS)
            except (BackgroundCompileError, TimeoutError):
                return  # left to this thread below
            log.log(log_level(), "kernel %s: compiled by a worker in %.2f s",
                    call.kernel.module.__name__, seconds)
            call.has_code(built=True)  # load it while the workers build the rest

    feeders = [threading.Thread(target=feed_worker, daemon=True, name="numxla-compile-feed")
               for _ in range(service().max_workers)]
    for feeder in feeders:
        feeder.start()
    for call in meanwhile:
        call.compile()  # loads what the disk cache holds
    while here:
        with lock:
            if not queue:
                break
            call = queue.popleft()
        call.compile()
    for feeder in feeders:
        feeder.join()
    for call in [*sent, *queue]:
        if not call.has_code(built=True):  # loads what the workers wrote; compiles the rest
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
