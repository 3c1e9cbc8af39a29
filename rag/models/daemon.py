"""The embedded LLM kept warm between commands: one llama.cpp server per user and model, shared by every
``rag`` process of that user, which stops by itself after ``keep_alive`` idle seconds (or on `rag llm stop`).

Loading Qwen2.5-Coder-1.5B and starting Python with the whole stack cost every `rag ask` ~15 s before the
first token; a warm server leaves only the question's own work. Files, in ``<cache_dir>/llm/`` (mode 0700):

=================  =============================================================================================
``<model>.json``   the state: pid, address, model, sha256, threads, ctx, keep_alive, start time (mode 0600)
``<model>.lock``   a file lock held to start, attach to, replace or stop the server: two processes never start
                   two servers for one model
``<model>.touch``  its mtime is the last use: clients touch it when they attach and before every request
``<model>.log``    llama.cpp's log of the current server (emptied at each start)
``key``            the API key every server of this user requires (mode 0600): other users of the machine
                   can reach 127.0.0.1, but cannot read the key
=================  =============================================================================================

The server is the child process of per-process mode (:mod:`rag.models.local_llm`), started in its own
session so that it outlives the command that started it. It watches its own activity (llama.cpp's
``/metrics`` counters, and the touch file's mtime) once a second and exits when both have been still for
``keep_alive`` seconds. Before exiting it takes the lock and looks once more, so a client that attached
meanwhile keeps it; a client that raced it anyway finds the server gone, and the next request starts a
new one (:meth:`DaemonServer.ensure`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from rag.errors import BackendError, ConfigError
from rag.models.llm_child import child_command, http_status

_MARKER = "--daemon-dir"  # in the command line of every daemon: how `stop` knows a pid is ours
_METRICS = (
    "llamacpp:prompt_tokens_total",
    "llamacpp:tokens_predicted_total",
    "llamacpp:n_decode_total",
    "llamacpp:requests_processing",
    "llamacpp:requests_deferred",
)


@dataclass(frozen=True)
class DaemonState:
    """What ``<model>.json`` records about the running server."""

    pid: int
    address: str  # http://127.0.0.1:PORT
    model: str
    model_path: str
    sha256: str
    threads: int
    ctx: int
    keep_alive: float
    started: float  # time.time()

    @classmethod
    def read(cls, path: Path) -> DaemonState | None:
        try:
            data = json.loads(path.read_text())
            return cls(**{k: data[k] for k in cls.__dataclass_fields__})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, path: Path) -> None:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(self), f)
        os.replace(tmp, path)


def process_alive(pid: int) -> bool:
    """Running: neither gone nor a zombie (a zombie still answers ``kill(pid, 0)``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process reusing the pid
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (not Linux): kill(pid, 0) is all we know


def _is_our_daemon(pid: int, run_dir: Path) -> bool:
    """``pid`` is a daemon started for ``run_dir`` (not a process that reused a dead daemon's pid)."""
    if not process_alive(pid):
        return False
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc: trust the state file
    return _MARKER.encode() in args and str(run_dir).encode() in args


def api_key(run_dir: Path) -> str:
    """This user's key for the daemons (created on first use, readable by the owner only)."""
    path = run_dir / "key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = "rag-" + secrets.token_urlsafe(24)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key


class DaemonServer:
    """A client's handle on the shared server of one model: attaches to it, or starts it, and follows it.

    Same surface as :class:`rag.models.local_llm.LocalLLMServer` (``start``, ``base_url``, ``pid``,
    ``is_healthy``, ``stop``, ``log_tail``), plus ``api_key``, :meth:`ensure` (called before every request)
    and :meth:`shutdown` (stops the shared server for everyone). ``stop`` only detaches: the server is shared.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        name: str,
        sha256: str,
        run_dir: Path,
        threads: int = 2,
        ctx: int = 4096,
        keep_alive: float = 300.0,
        startup_timeout: float = 120.0,
        binary: Path | None = None,
    ) -> None:
        if keep_alive <= 0:
            raise ConfigError("A shared LLM server needs RAG_LLM__KEEP_ALIVE > 0 (0 means one server per process).")
        self.model_path = Path(model_path)
        self.name = name
        self.sha256 = sha256
        self.run_dir = Path(run_dir)
        self.threads = threads
        self.ctx = ctx
        self.keep_alive = keep_alive
        self.startup_timeout = startup_timeout
        self.binary = binary  # llama.cpp built for this CPU (rag.models.native_llm), else xllamacpp
        self._lock = threading.RLock()
        self._state: DaemonState | None = None
        self._state_stamp: tuple[int, int] | None = None  # (inode, mtime_ns) of the state file we attached to
        self._proc: subprocess.Popen[bytes] | None = None  # when this process started it: polled, so no zombie
        self._key: str | None = None

    # ------------------------------------------------------------------ paths
    @property
    def state_path(self) -> Path:
        return self.run_dir / f"{self.name}.json"

    @property
    def lock_path(self) -> Path:
        return self.run_dir / f"{self.name}.lock"

    @property
    def touch_path(self) -> Path:
        return self.run_dir / f"{self.name}.touch"

    @property
    def log_path(self) -> Path:
        return self.run_dir / f"{self.name}.log"

    # ------------------------------------------------------------------ the LocalLLMServer surface
    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:PORT/v1`` of the server we are attached to, else None."""
        state = self._state
        return f"{state.address}/v1" if state else None

    @property
    def pid(self) -> int | None:
        state = self._state
        return state.pid if state and process_alive(state.pid) else None

    @property
    def api_key(self) -> str:
        if self._key is None:
            self._key = api_key(self.run_dir)
        return self._key

    def log_tail(self, lines: int = 20) -> list[str]:
        try:
            with self.log_path.open("rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 8192))
                return f.read().decode("utf-8", "replace").splitlines()[-lines:]
        except OSError:
            return []

    def is_healthy(self) -> bool:
        state = self._state
        return state is not None and process_alive(state.pid) and _health(state.address) == 200

    def start(self) -> str:
        """Attach to the running server, or start one (under the lock: one server per model); its base URL."""
        with self._lock, self._file_lock(self.startup_timeout + 30):
            state = self._live_state()
            if state is None or not self._compatible(state) or _health(state.address) != 200:
                if state is not None:
                    _terminate(state.pid)
                state = self._spawn()
            self._attach(state)
            return f"{state.address}/v1"

    def ensure(self) -> str:
        """The server's address now, checked cheaply (a stat and a signal 0) before each request; restarts it
        if it stopped (idle, crashed, `rag llm stop`) since we attached. Also records this use."""
        state = self._state
        if state is not None:
            try:
                st = self.state_path.stat()
                stamp: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
            except OSError:
                stamp = None
            if stamp == self._state_stamp and process_alive(state.pid):
                self.touch()
                return state.address
        return self.start().removesuffix("/v1")

    def touch(self) -> None:
        """Record a use: the server counts idle time from the latest touch or request."""
        try:
            os.utime(self.touch_path)
        except FileNotFoundError:
            self.touch_path.touch()
        except OSError:
            pass

    def stop(self, timeout: float = 10.0) -> None:
        """Detach (the server is shared: it stops itself when idle, or with :meth:`shutdown`)."""
        with self._lock:
            self._state = None
            self._state_stamp = None

    def shutdown(self, timeout: float = 10.0) -> DaemonState | None:
        """Stop the shared server (SIGTERM, SIGKILL after ``timeout`` s) for every process; what ran, or None."""
        with self._lock, self._file_lock(timeout + 30):
            state = DaemonState.read(self.state_path)
            if state is not None and _is_our_daemon(state.pid, self.run_dir):
                _terminate(state.pid, timeout)
            else:
                state = None
            self.state_path.unlink(missing_ok=True)
            self._state = None
            self._state_stamp = None
            self._reap()
            return state

    def status(self) -> DaemonState | None:
        """The running server's state (None when none runs); no lock taken, nothing started."""
        state = DaemonState.read(self.state_path)
        return state if state is not None and _is_our_daemon(state.pid, self.run_dir) else None

    def idle_seconds(self) -> float | None:
        """Seconds since the last recorded use (a client's touch; the server's own requests are not counted)."""
        try:
            return max(0.0, time.time() - self.touch_path.stat().st_mtime)
        except OSError:
            return None

    # ------------------------------------------------------------------ internals
    @contextlib.contextmanager
    def _file_lock(self, timeout: float) -> Iterator[None]:
        self.run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = FileLock(str(self.lock_path))
        try:
            lock.acquire(timeout=timeout)
        except Timeout as e:
            raise BackendError(
                f"Another process holds {self.lock_path} for more than {timeout:.0f} s while starting the LLM "
                "server; `rag llm status` shows it, `rag llm stop` ends it."
            ) from e
        try:
            yield
        finally:
            lock.release()

    def _live_state(self) -> DaemonState | None:
        self._reap()
        state = DaemonState.read(self.state_path)
        if state is None or not _is_our_daemon(state.pid, self.run_dir):
            return None
        return state

    def _compatible(self, state: DaemonState) -> bool:
        """The running server can serve us: the same weights and at least our context (threads are a detail)."""
        return state.sha256 == self.sha256 and state.ctx >= self.ctx and Path(state.model_path).is_file()

    def _attach(self, state: DaemonState) -> None:
        st = self.state_path.stat()
        self._state, self._state_stamp = state, (st.st_ino, st.st_mtime_ns)
        self.touch()

    def _reap(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            self._proc = None

    def _spawn(self) -> DaemonState:
        if not self.model_path.is_file():
            raise ConfigError(f"model file {self.model_path} not found; rag.models.local_llm.ensure_model() creates it")
        ready = self.run_dir / f"{self.name}.ready"
        ready.unlink(missing_ok=True)
        self.state_path.unlink(missing_ok=True)
        key_file = self.run_dir / "key"
        self.api_key  # noqa: B018  created before the child reads it
        cmd = child_command(self.model_path, threads=self.threads, ctx=self.ctx, binary=self.binary)
        cmd += [_MARKER, str(self.run_dir), "--name", self.name, "--keep-alive", repr(self.keep_alive)]
        cmd += ["--api-key-file", str(key_file), "--ready-file", str(ready)]
        with self.log_path.open("wb") as log:
            # its own session: Ctrl-C in the terminal, or the end of this command, does not reach it
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True
            )
        self._proc = proc
        deadline = time.monotonic() + self.startup_timeout
        address = None
        while address is None:
            if proc.poll() is not None:
                self._fail(f"the llama.cpp server exited with code {proc.returncode} while loading")
            if time.monotonic() > deadline:
                _terminate(proc.pid)
                self._fail(f"the llama.cpp server did not start within {self.startup_timeout:.0f} s")
            try:
                address = ready.read_text().strip() or None
            except FileNotFoundError:
                time.sleep(0.1)
        while _health(address) != 200:
            if proc.poll() is not None:
                self._fail(f"the llama.cpp server exited with code {proc.returncode}")
            if time.monotonic() > deadline:
                _terminate(proc.pid)
                self._fail(f"{address}/health not OK within {self.startup_timeout:.0f} s")
            time.sleep(0.2)
        state = DaemonState(
            pid=proc.pid,
            address=address,
            model=self.name,
            model_path=str(self.model_path),
            sha256=self.sha256,
            threads=self.threads,
            ctx=self.ctx,
            keep_alive=self.keep_alive,
            started=time.time(),
        )
        state.write(self.state_path)
        return state

    def _fail(self, what: str) -> None:
        tail = "\n".join(self.log_tail())
        raise BackendError(f"{what} (model {self.model_path}; log {self.log_path}). Last log lines:\n{tail}")


def _health(address: str) -> int:
    return http_status(f"{address}/health", 2.0)


def _terminate(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` s; returns once the process is gone (or a zombie)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while process_alive(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + timeout
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------- in the child
def parse_metrics(text: str) -> tuple[float, ...]:
    """The activity counters of llama.cpp's Prometheus text (:data:`_METRICS`, in order; 0 when absent)."""
    values = dict.fromkeys(_METRICS, 0.0)
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in values:
            with contextlib.suppress(ValueError):
                values[name] = float(value)
    return tuple(values.values())


def watch_idle(
    metrics: Callable[[], str],
    *,
    run_dir: Path,
    name: str,
    keep_alive: float,
    stopping: threading.Event,
    poll: float = 1.0,
) -> None:
    """Return when the server has been idle ``keep_alive`` s, or ``stopping`` is set, or it was replaced.

    Idle means: llama.cpp's counters unchanged and no request processing or waiting, and the touch file
    older than ``keep_alive``. The last look happens under the state lock; an idle server then removes
    its state file, so from then on clients start a new one instead of attaching to this one.
    """
    state_path = run_dir / f"{name}.json"
    touch_path = run_dir / f"{name}.touch"
    me = os.getpid()
    last_signature: tuple[float, ...] | None = None
    last_active = time.monotonic()

    def idle_for() -> float:
        nonlocal last_signature, last_active
        signature = parse_metrics(metrics())
        if signature != last_signature or signature[3] > 0 or signature[4] > 0:
            last_signature, last_active = signature, time.monotonic()
        try:
            touched = max(0.0, time.time() - touch_path.stat().st_mtime)
        except OSError:
            touched = float("inf")
        return min(time.monotonic() - last_active, touched)

    while not stopping.wait(poll):
        state = DaemonState.read(state_path)
        if state is not None and state.pid != me:  # replaced (another model file, a larger context)
            return
        if idle_for() < keep_alive:
            continue
        try:
            with FileLock(str(run_dir / f"{name}.lock"), timeout=poll):
                if idle_for() < keep_alive:  # a client attached while we waited for the lock
                    continue
                state = DaemonState.read(state_path)
                if state is not None and state.pid == me:
                    state_path.unlink(missing_ok=True)
                return
        except Timeout:  # someone is starting, attaching or stopping: look again next time
            continue


def child_options(argv: list[str]) -> dict[str, Any]:
    """The daemon options of the child's command line (none: per-process mode)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument(_MARKER, dest="run_dir", type=Path)
    parser.add_argument("--name")
    parser.add_argument("--keep-alive", type=float, default=0.0)
    parser.add_argument("--api-key-file", type=Path)
    parser.add_argument("--ready-file", type=Path)
    known, _rest = parser.parse_known_args(argv)
    return vars(known) if known.run_dir else {}


def announce_ready(ready_file: Path, address: str) -> None:
    tmp = ready_file.with_name(ready_file.name + ".tmp")
    tmp.write_text(address + "\n")
    os.replace(tmp, ready_file)


def main_loop(server: Any, options: dict[str, Any], stopping: threading.Event) -> None:
    """The daemon's life after loading: announce the address, then serve until idle or told to stop."""
    announce_ready(options["ready_file"], str(server.listening_address))
    try:
        watch_idle(
            server.handle_metrics,
            run_dir=options["run_dir"],
            name=options["name"],
            keep_alive=options["keep_alive"],
            stopping=stopping,
        )
    finally:
        options["ready_file"].unlink(missing_ok=True)
    print(f"rag: LLM daemon {os.getpid()} stops (idle or told to)", file=sys.stderr, flush=True)
