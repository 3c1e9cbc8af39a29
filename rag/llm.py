"""The embedded LLM server as the commands see it: `rag llm status | start | stop | use`.

The shared server itself is :mod:`rag.models.daemon`; this module turns settings into a handle on it and its
state into plain data, so the apps (which may not import ``rag.models``) can show and control it. Nothing
here loads the model or imports the answering stack: `rag llm status` takes a fraction of a second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag.errors import ConfigError
from rag.models.daemon import DaemonServer
from rag.models.gguf import checked_gguf
from rag.models.local_llm import GGUF_MODELS, ensure_model, shared_server, user_model
from rag.models.native_llm import build, build_log, build_running, find_server, has_failed, start_background_build
from rag.settings import Settings


def _handle(settings: Settings) -> DaemonServer:
    s = settings.llm
    cache = Path(settings.cache_dir).expanduser().resolve()
    gguf = user_model(settings)
    if gguf is not None:
        return DaemonServer(
            gguf.info.path,
            name=gguf.server_name,
            sha256=gguf.identity,
            run_dir=cache / "llm",
            threads=s.threads,
            ctx=gguf.ctx,
            keep_alive=s.keep_alive or 1.0,
        )
    spec = GGUF_MODELS.get(s.model)
    if spec is None:
        raise ConfigError(f"unknown local model {s.model!r}; known: {', '.join(sorted(GGUF_MODELS))}")
    return DaemonServer(
        cache / "models" / f"{s.model}.gguf",
        name=s.model,
        sha256=spec.sha256,
        run_dir=cache / "llm",
        threads=s.threads,
        ctx=s.ctx,
        keep_alive=s.keep_alive or 1.0,  # a handle for status/stop works whatever keep_alive says
    )


def rss_mb(pid: int, *, children: bool = False) -> float | None:
    """Resident memory of process ``pid`` in MB (None if it is gone or not Linux); with ``children``, plus that
    of its child processes (the llama-server a native runtime runs: rag.models.native_llm)."""
    pids = [pid]
    if children:
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                pids += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    total = None
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total = (total or 0.0) + int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            continue
    return None if total is None else round(total, 1)


def llm_status(settings: Settings) -> dict[str, Any]:
    """Where answers come from and, for the shared embedded server, whether it runs: pid, address, model,
    threads, ctx, keep_alive, uptime_s, idle_s (since the last use), rss_mb, log."""
    s = settings.llm
    if s.base_url:
        return {"running": None, "mode": "endpoint", "endpoint": s.base_url, "model": s.model}
    mode = "shared" if s.keep_alive > 0 else "per-process"
    handle = _handle(settings)
    state = handle.status()
    out: dict[str, Any] = {"running": state is not None, "mode": mode, "model": s.model, "keep_alive": s.keep_alive}
    out |= model_file(settings)
    out["runtime"] = _runtime(settings, None if state is None else state.pid)
    out |= native_build_status(settings)
    if state is None:
        return out
    idle = handle.idle_seconds()
    return out | {
        "pid": state.pid,
        "address": state.address,
        "threads": state.threads,
        "ctx": state.ctx,
        "keep_alive": state.keep_alive,
        "uptime_s": round(time.time() - state.started, 1),
        "idle_s": None if idle is None else round(idle, 1),
        "rss_mb": rss_mb(state.pid, children=True),
        "log": str(handle.log_path),
    }


def model_file(settings: Settings) -> dict[str, Any]:
    """Which GGUF the embedded server runs: ``model_file`` (a path; None for the bundled model before its first
    assembly), ``model_name`` (``general.name``), ``own_model`` (RAG_LLM__GGUF is set) and ``ctx_note`` (set
    when the context was clamped to the model's)."""
    gguf = user_model(settings)
    if gguf is not None:
        name = gguf.info.name
        return {"model": name, "model_file": str(gguf.info.path), "model_name": name, "own_model": True} | (
            {"ctx_note": gguf.note} if gguf.note else {}
        )
    path = Path(settings.cache_dir).expanduser() / "models" / f"{settings.llm.model}.gguf"
    spec = GGUF_MODELS.get(settings.llm.model)
    name = spec.upstream if spec else settings.llm.model  # not read from the file: 150k vocabulary entries precede it
    return {"model_file": str(path) if path.is_file() else None, "model_name": name, "own_model": False}


def use_model(settings: Settings, path: Path | None) -> dict[str, Any]:
    """`rag llm use`: check the GGUF at ``path`` (None: the bundled model) as a start would, without starting
    anything; what it is (name, architecture, trained context, the context it would get, size, reasoning)."""
    if path is None:
        return {"bundled": True, "model": settings.llm.model}
    gguf = checked_gguf(path, settings.llm.ctx)
    info = gguf.info
    return {
        "bundled": False,
        "path": str(info.path),
        "model_name": info.name,
        "architecture": info.architecture,
        "trained_ctx": info.context_length,
        "ctx": gguf.ctx,
        "ctx_note": gguf.note,
        "size_mb": round(info.size / 2**20, 1),
        "chat_template": info.chat_template is not None,
        "reasoning": info.reasons,
    }


def _runtime(settings: Settings, pid: int | None) -> str:
    """Which llama.cpp serves (or will serve): "native" (built for this CPU by `rag llm build`) or "xllamacpp"."""
    if pid is not None:  # the running server: started with a native binary that has not failed since?
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            args = []
        if b"--binary" in args:
            binary = Path(args[args.index(b"--binary") + 1].decode())
            return "xllamacpp" if has_failed(binary) else "native"
        return "xllamacpp"
    native = settings.llm.native and find_server(Path(settings.cache_dir).expanduser()) is not None
    return "native" if native else "xllamacpp"


def native_build_status(settings: Settings) -> dict[str, Any]:
    """Whether a build of llama.cpp for this CPU is running now (``building``) and where a background build
    logs (``build_log``)."""
    cache = Path(settings.cache_dir).expanduser()
    return {"building": build_running(cache), "build_log": str(build_log(cache))}


_RUNTIME_NAMES = {"native": "llama.cpp compiled for this CPU", "xllamacpp": "the bundled llama.cpp wheel"}


def runtime_summary(settings: Settings) -> str:
    """One line for people: which llama.cpp serves the embedded LLM (or that an endpoint answers), and whether
    a faster build for this CPU is being compiled. For the UI's status line and `rag llm status`."""
    s = settings.llm
    if s.base_url:
        return f"LLM: the endpoint {s.base_url} ({s.model})"
    state = _handle(settings).status()
    line = f"LLM runtime: {_RUNTIME_NAMES[_runtime(settings, None if state is None else state.pid)]}"
    if native_build_status(settings)["building"]:
        line += "; a build for this CPU is compiling in the background (used from the next start of the LLM)"
    return line


def build_native(
    settings: Settings, *, jobs: int | None = None, force: bool = False, say: Callable[[str], None] = print
) -> Path:
    """Compile llama.cpp's server for this CPU into the cache (rag.models.native_llm.build); its path."""
    return build(Path(settings.cache_dir).expanduser(), jobs=jobs, force=force, say=say)


def start_native_build(settings: Settings, *, jobs: int | None = None) -> Path | None:
    """Start that build in a detached low-priority process (rag.models.native_llm.start_background_build);
    the path of its log, or None if the build exists or is running already."""

    return start_background_build(Path(settings.cache_dir).expanduser(), jobs=jobs)


def start_llm(settings: Settings) -> dict[str, Any]:
    """Start the shared server now (assembling the model on first use), or find it running; its status."""
    s = settings.llm
    if s.base_url:
        raise ConfigError(f"The LLM is the endpoint {s.base_url} (RAG_LLM_BASE_URL): there is no server to start.")
    if s.keep_alive <= 0:
        raise ConfigError(
            "RAG_LLM__KEEP_ALIVE is 0, so each command starts its own LLM server and stops it on exit; "
            "set it to the seconds a shared server should stay loaded (default 300)."
        )
    if s.gguf is None:
        ensure_model(s.model, Path(settings.cache_dir).expanduser(), progress=True)
    shared_server(settings)
    return llm_status(settings)


def stop_llm(settings: Settings) -> dict[str, Any] | None:
    """Stop the shared server of the configured model for every process; what ran (pid, address), or None."""
    if settings.llm.base_url:
        return None
    state = _handle(settings).shutdown()
    return None if state is None else {"pid": state.pid, "address": state.address, "model": state.model}
