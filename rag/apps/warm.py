"""`rag ask` (and `rag search`, `rag check`) answered by a warm process: the whole answering stack kept loaded
between commands.

A warm LLM server (:mod:`rag.llm`) leaves each `rag ask` about 2.5 s of its own work before the model is asked:
Python imports (~1 s), the tokenizer (~0.45 s), opening Chroma (~0.8 s), the embedder and BM25. The first
`rag ask` of a configuration answers in its own process as before, then starts a *warm process* that loads
all of it once and listens on a Unix socket; later `rag ask` commands of the same user and configuration send
it their question and print its events as they come. It stops by itself after ``llm.keep_alive`` idle
seconds (the idle period of the LLM server), on `rag llm stop`, and when `rag ingest` or `rag import`
writes to its data directory; ``RAG_LLM__KEEP_ALIVE=0`` turns both off.

Files, in ``<cache_dir>/app/`` (mode 0700, so only this user can connect):

==================  ============================================================================================
``<fp>.sock``       the socket; ``<fp>`` is a hash of the effective settings (secrets included), of the code
                    (the package's file times) and of the Python executable: a process never answers for
                    other settings or an older build
``<fp>.json``       its state: pid, data_dir, started, keep_alive
``<fp>.lock``       held (flock) for the process's life: two commands never start two warm processes
``<fp>.log``        its log (tracebacks of anything unexpected)
==================  ============================================================================================

The protocol: the client sends one length-prefixed JSON request; the process answers with length-prefixed
pickled frames, one per event, as :meth:`rag.Assistant.stream` yields them. Pickle is safe here because the
client only unpickles what its own user's process, reached through a socket only that user can open, sends.
Errors travel as (class name, message, attributes) and are rebuilt as the same :class:`rag.RagError`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import rag  # rag.Assistant and rag.get_settings are looked up when used: a client of the warm process loads neither
from rag import errors
from rag.events import AnswerEvent, CheckEvent, CheckStreamEvent, ErrorEvent, Event

log = logging.getLogger("rag.warm")

_FRAME = struct.Struct("!I")
_MODULE = "rag.apps.warm"
_MAX_REQUEST = 1 << 20


def supported() -> bool:
    """Linux only: the processes are found and told apart through /proc (as the LLM server's are)."""
    return sys.platform.startswith("linux") and hasattr(socket, "AF_UNIX")


def run_dir(settings: Any) -> Path:
    return Path(settings.cache_dir).expanduser().resolve() / "app"


def _reveal(value: Any) -> Any:
    if hasattr(value, "get_secret_value"):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_reveal(v) for v in value]
    if isinstance(value, Path):
        return str(value.expanduser().resolve())
    return value


def _code_stamp() -> list[Any]:
    """The package's files and their modification times: an edited or upgraded install is another build."""
    root = Path(__file__).resolve().parents[1]
    stamp: list[Any] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith((".py", ".md", ".json", ".txt")):
                st = os.stat(os.path.join(dirpath, name))
                stamp.append([os.path.relpath(os.path.join(dirpath, name), root), st.st_mtime_ns, st.st_size])
    return stamp


def fingerprint(settings: Any) -> str:
    """A hash of everything that decides an answer: settings (secrets included), code, interpreter."""
    data = _reveal(settings.model_dump())
    blob = json.dumps([data, _code_stamp(), sys.executable], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


# ------------------------------------------------------------------ framing
def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_FRAME.pack(len(payload)) + payload)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _recv(sock: socket.socket, limit: int | None = None) -> bytes | None:
    head = _recv_exact(sock, _FRAME.size)
    if head is None:
        return None
    (n,) = _FRAME.unpack(head)
    if limit is not None and n > limit:
        raise ValueError(f"frame of {n} bytes")
    return _recv_exact(sock, n)


def _error_frame(e: BaseException) -> bytes:
    if isinstance(e, errors.RagError):
        attrs = {k: v for k, v in vars(e).items() if isinstance(v, str | int | float | bool | type(None))}
        return pickle.dumps(("error", type(e).__name__, str(e), attrs))
    return pickle.dumps(("error", "RagError", f"The warm rag process failed: {type(e).__name__}: {e}", {}))


def _rebuild_error(name: str, message: str, attrs: dict[str, Any]) -> errors.RagError:
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, errors.RagError)):
        cls = errors.RagError
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(attrs)
    return err


# ------------------------------------------------------------------ client
class WarmGone(Exception):
    """The warm process could not take the question (none runs, or it stopped before answering)."""


def _connect(path: Path) -> socket.socket | None:
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def _frames(sock: socket.socket, first: tuple[Any, ...], log_path: Path) -> Iterator[Any]:
    frame: tuple[Any, ...] | None = first
    try:
        while frame is not None:
            if frame[0] == "event":
                yield frame[1]
                if isinstance(frame[1], AnswerEvent | CheckEvent | ErrorEvent):
                    return
            elif frame[0] == "error":
                raise _rebuild_error(*frame[1:])
            raw = _recv(sock)
            if raw is None:
                raise errors.BackendError(
                    f"The warm rag process stopped while answering; ask again (its log: {log_path})."
                )
            frame = pickle.loads(raw)
    finally:
        sock.close()


def _first_frame(settings: Any, request: dict[str, Any]) -> tuple[socket.socket, tuple[Any, ...], Path]:
    fp = fingerprint(settings)
    d = run_dir(settings)
    sock = _connect(d / f"{fp}.sock")
    if sock is None:
        raise WarmGone
    try:
        _send(sock, json.dumps(request).encode())
        raw = _recv(sock)  # waits while the process loads or the question waits in line
    except OSError:
        raw = None
    if raw is None:
        sock.close()
        raise WarmGone
    return sock, pickle.loads(raw), d / f"{fp}.log"


def ask_warm(settings: Any, request: dict[str, Any]) -> Iterator[Event]:
    """The events of ``request`` (question, k, filters, mode, kind) from the warm process of ``settings``.

    Raises :class:`WarmGone` before yielding anything when no warm process takes it (the caller answers in
    its own process then); errors of the question itself are raised as the in-process path raises them."""
    return _frames(*_first_frame(settings, {"op": "ask"} | request))


def check_warm(settings: Any, request: dict[str, Any]) -> Iterator[CheckStreamEvent]:
    """The events of :meth:`rag.Assistant.check_stream` (claim, k, filters) from the warm process of ``settings``;
    :class:`WarmGone` and errors as :func:`ask_warm`."""
    return _frames(*_first_frame(settings, {"op": "check"} | request))


def search_warm(settings: Any, request: dict[str, Any]) -> list[Any]:
    """:meth:`rag.Assistant.search` (query, k, where, mode) in the warm process; :class:`WarmGone` as above."""
    sock, frame, _log = _first_frame(settings, {"op": "search"} | request)
    sock.close()
    if frame[0] == "error":
        raise _rebuild_error(*frame[1:])
    return list(frame[1])


def spawn(settings: Any) -> None:
    """Start the warm process of ``settings`` in the background (it exits at once if one already runs)."""
    d = run_dir(settings)
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(d, 0o700)
    fp = fingerprint(settings)
    data_dir = str(Path(settings.data_dir).expanduser().resolve())
    # appended to: a second command may start one while the first is still starting (it then exits at once)
    fd = os.open(d / f"{fp}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        subprocess.Popen(
            [sys.executable, "-m", _MODULE, "--fingerprint", fp, "--data-dir", data_dir, "--run-dir", str(d)],
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,  # outlives this command, and its Ctrl-C
            close_fds=True,
        )
    finally:
        os.close(fd)


def _states(settings: Any) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted(run_dir(settings).glob("*.json")):
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if _alive(int(state.get("pid", 0))):
            out.append((path, state))
    return out


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return _MODULE.encode() in args


def status(settings: Any) -> list[dict[str, Any]]:
    """Every warm process of this user: pid, data_dir, keep_alive, uptime_s, idle_s, same_settings, rss_mb."""
    from rag.llm import rss_mb  # deferred: loads the settings and the model code, which a client does not need

    now = time.time()
    mine = fingerprint(settings)  # once: it reads the package's file times
    out = []
    for path, state in _states(settings):
        try:
            idle = now - path.with_suffix(".sock").stat().st_atime
        except OSError:
            idle = None
        out.append(
            {
                "pid": state["pid"],
                "data_dir": state["data_dir"],
                "keep_alive": state["keep_alive"],
                "uptime_s": round(now - state["started"], 1),
                "idle_s": None if idle is None else round(max(0.0, idle), 1),
                "same_settings": path.stem == mine,
                "rss_mb": rss_mb(int(state["pid"])),
            }
        )
    return out


def stop(settings: Any, data_dir: Path | None = None, wait: float = 10.0) -> list[int]:
    """Stop the warm processes of this user (only those answering from ``data_dir`` if given); their pids.

    A process finishes the answers it is writing, then exits."""
    want = None if data_dir is None else str(Path(data_dir).expanduser().resolve())
    stopped = []
    for _path, state in _states(settings):
        if want is not None and state.get("data_dir") != want:
            continue
        pid = int(state["pid"])
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
            stopped.append(pid)
    deadline = time.monotonic() + wait
    while stopped and time.monotonic() < deadline and any(_alive(p) for p in stopped):
        time.sleep(0.05)
    return stopped


# ------------------------------------------------------------------ server
class _Server:
    def __init__(self, fp: str, data_dir: Path, directory: Path) -> None:
        self.settings = rag.get_settings(data_dir=data_dir)
        self.fp, self.dir = fp, directory
        self.sock_path = directory / f"{fp}.sock"
        self.state_path = directory / f"{fp}.json"
        self.keep_alive = float(self.settings.llm.keep_alive)
        self.ready = threading.Event()
        self.stopping = threading.Event()
        self.active = 0
        self.last_used = time.monotonic()
        self.guard = threading.Lock()
        self.assistant: Any = None
        self.load_error: BaseException | None = None

    def load(self) -> None:
        try:
            self.assistant = rag.Assistant.from_settings(self.settings)
            t0 = time.perf_counter()
            with contextlib.suppress(errors.RagError):  # an empty index: the questions will say so
                self.assistant.ask("warm up", mode="extractive")  # embedder, Chroma, BM25, tokenizer, prompts
            log.info("loaded in %.2f s", time.perf_counter() - t0)
        except BaseException as e:  # reported to every client, which then answers in its own process
            self.load_error = e
            self.stopping.set()  # the next command starts a fresh one
            log.error("loading failed: %s", traceback.format_exc())
        finally:
            self.ready.set()

    def handle(self, conn: socket.socket) -> None:
        with self.guard:
            self.active += 1
        try:
            raw = _recv(conn, limit=_MAX_REQUEST)
            if raw is None:
                return
            request = json.loads(raw)
            self.ready.wait()
            if self.load_error is not None:
                return  # closing without a frame: the client answers in its own process
            t0 = time.perf_counter()
            try:
                if request.get("op") == "search":
                    hits = self.assistant.search(
                        request["query"], k=request.get("k"), where=request.get("where"), mode=request.get("mode")
                    )
                    _send(conn, pickle.dumps(("hits", hits)))
                    log.info("searched in %.2f s", time.perf_counter() - t0)
                    return
                checking = request.get("op") == "check"
                events: Iterator[Any] = (
                    self.assistant.check_stream(request["claim"], k=request.get("k"), filters=request.get("filters"))
                    if checking
                    else self.assistant.stream(
                        request["question"],
                        k=request.get("k"),
                        filters=request.get("filters"),
                        mode=request.get("mode"),
                        kind=request.get("kind"),
                    )
                )
                for event in events:
                    if isinstance(event, ErrorEvent):
                        _send(conn, _error_frame(event.error))
                        log.info("question failed in %.2f s: %s", time.perf_counter() - t0, type(event.error).__name__)
                        return
                    _send(conn, pickle.dumps(("event", event)))
                log.info("%s in %.2f s", "checked" if checking else "answered", time.perf_counter() - t0)
            except Exception as e:
                if not isinstance(e, errors.RagError):
                    log.error("question failed: %s", traceback.format_exc())
                _send(conn, _error_frame(e))
        except OSError:
            pass  # the client went away (Ctrl-C): nothing to tell
        finally:
            conn.close()
            with self.guard:
                self.active -= 1
                self.last_used = time.monotonic()

    def idle(self) -> bool:
        with self.guard:
            return self.active == 0 and time.monotonic() - self.last_used > self.keep_alive

    def run(self) -> int:
        import fcntl  # optional: POSIX only (warm.supported() is false elsewhere)

        lock = open(self.dir / f"{self.fp}.lock", "w")  # noqa: SIM115 - held for the process's life
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log.info("another warm process runs for these settings")
            return 0
        self.sock_path.unlink(missing_ok=True)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(str(self.sock_path))
        os.chmod(self.sock_path, 0o600)
        srv.listen(64)
        srv.settimeout(0.5)
        state = {"pid": os.getpid(), "data_dir": str(self.settings.data_dir), "started": time.time()}
        self.state_path.write_text(json.dumps(state | {"keep_alive": self.keep_alive}))
        signal.signal(signal.SIGTERM, lambda *_: self.stopping.set())
        threading.Thread(target=self.load, daemon=True).start()
        try:
            while not self.stopping.is_set() and not self.idle():
                try:
                    conn, _ = srv.accept()
                except TimeoutError:
                    continue
                conn.settimeout(None)
                with self.guard:
                    self.last_used = time.monotonic()
                os.utime(self.sock_path)  # its atime is the last use `rag llm status` shows
                threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
        finally:
            srv.close()  # new commands answer in their own process from now on
            self.sock_path.unlink(missing_ok=True)
            self.state_path.unlink(missing_ok=True)
            deadline = time.monotonic() + 600
            while self.active and time.monotonic() < deadline:  # finish the answers being written
                time.sleep(0.1)
            lock.close()
        log.info("stopped")
        return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {_MODULE}", description="The warm process of `rag ask`.")
    ap.add_argument("--fingerprint", required=True)
    ap.add_argument("--data-dir", required=True, type=Path)
    ap.add_argument("--run-dir", required=True, type=Path)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    server = _Server(args.fingerprint, args.data_dir, args.run_dir)
    if fingerprint(server.settings) != args.fingerprint:
        log.error("the settings or code changed since the command that started this process; not serving")
        return 1
    return server.run()


if __name__ == "__main__":
    sys.exit(main())
