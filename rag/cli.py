"""The ``rag`` command line. Library errors become one-line messages and exit code 1, never tracebacks."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from rag.errors import RagError

F = TypeVar("F", bound=Callable[..., Any])


def _friendly(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RagError as e:
            raise click.ClickException(str(e)) from e
        except ValueError as e:  # bad --where and similar user input
            raise click.ClickException(str(e)) from e

    return wrapper  # type: ignore[return-value]


def _assistant(ctx: click.Context) -> Any:
    from rag.assistant import Assistant
    from rag.settings import get_settings

    obj = ctx.ensure_object(dict)
    if "assistant" not in obj:
        obj["assistant"] = Assistant.from_settings(get_settings(**obj.get("overrides", {})))
    return obj["assistant"]


def _progress_bar(desc: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "b" not in bar:
            bar["b"] = tqdm(total=total, desc=desc, unit="chunk", file=sys.stderr, disable=None)
        bar["b"].n = done
        bar["b"].refresh()

    def close() -> None:
        if "b" in bar:
            bar["b"].close()

    return update, close


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data-dir", type=click.Path(path_type=Path), help="Index location (default: RAG_DATA_DIR or a per-user data dir).")
@click.pass_context
def cli(ctx: click.Context, data_dir: Path | None) -> None:
    """Grounded question answering over research-paper abstracts."""
    ctx.ensure_object(dict)["overrides"] = {"data_dir": data_dir} if data_dir else {}


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--rebuild", is_flag=True, help="Delete the index first and build it again.")
@click.option("--prune", is_flag=True, help="Remove papers that are not in the given sources.")
@click.option("--json", "as_json", is_flag=True, help="Print the ingest report as JSON.")
@click.pass_context
@_friendly
def ingest(ctx: click.Context, paths: tuple[Path, ...], rebuild: bool, prune: bool, as_json: bool) -> None:
    """Read abstracts (txt, JSONL, JSON, CSV, BEIR corpus) and index them."""
    assistant = _assistant(ctx)
    update, close = _progress_bar("embedding")
    try:
        report = assistant.ingest(paths, prune=prune, rebuild=rebuild, progress=update)
    finally:
        close()
    if as_json:
        click.echo(json.dumps(report.to_json()))
    else:
        r = report.to_json()
        click.echo(
            f"{r['papers_seen']} papers read: {r['added']} added, {r['updated']} updated, {r['unchanged']} unchanged, "
            f"{r['removed']} removed; {r['chunks_written']} chunks written, {r['embedded']} newly embedded."
        )


@cli.command()
@click.argument("query")
@click.option("-k", type=click.IntRange(1, 100), default=None, help="Number of papers (default from settings).")
@click.option("--where", multiple=True, metavar="KEY=VALUE", help="Metadata filter, repeatable (venue=NeurIPS, year=2018).")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "bm25"]), default=None, help="Retriever (default hybrid).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {paper_id, title, score, text, metadata}.")
@click.pass_context
@_friendly
def search(ctx: click.Context, query: str, k: int | None, where: tuple[str, ...], mode: str | None, as_json: bool) -> None:
    """Find the papers most relevant to QUERY."""
    from rag.retrieve import parse_where

    hits = _assistant(ctx).search(query, k=k, where=parse_where(list(where)), mode=mode)
    if as_json:
        click.echo(json.dumps([h.to_json() for h in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("No matching papers.")
    for i, h in enumerate(hits, 1):
        meta = ", ".join(str(h.metadata[k]) for k in ("venue", "year") if h.metadata.get(k) is not None)
        click.echo(f"{i}. {h.title}" + (f" ({meta})" if meta else "") + f"  [{h.paper_id}, score {h.score:.4f}]")
        snippet = " ".join(h.text.split())
        click.echo(f"   {snippet[:240]}{'…' if len(snippet) > 240 else ''}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print {papers, chunks, embedding_model, dimension, bytes}.")
@click.pass_context
@_friendly
def stats(ctx: click.Context, as_json: bool) -> None:
    """Papers, chunks, embedding model and index size."""
    s = _assistant(ctx).stats()
    if as_json:
        click.echo(json.dumps(s))
    else:
        for key, value in s.items():
            click.echo(f"{key}: {value}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
@_friendly
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the effective settings (secrets masked)."""
    from rag.settings import get_settings

    data = get_settings(**ctx.obj.get("overrides", {})).masked()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return

    def walk(d: dict[str, Any], prefix: str = "") -> None:
        for key, value in d.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            else:
                click.echo(f"{prefix}{key} = {value}")

    walk(data)


@cli.command()
@click.option("--question", default="drone footage of zebras in 3D", show_default=True)
@click.pass_context
@_friendly
def demo(ctx: click.Context, question: str) -> None:
    """Index the bundled NeurIPS 2026 abstracts and run a sample search."""
    from rag.ingest import bundled_corpus

    ctx.invoke(ingest, paths=(bundled_corpus(),), rebuild=False, prune=False, as_json=False)
    click.echo(f"\nSearch: {question}")
    ctx.invoke(search, query=question, k=3, where=(), mode=None, as_json=False)


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
