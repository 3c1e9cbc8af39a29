"""The ``rag`` command line. Library errors become one-line messages and exit code 1, never tracebacks."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import shutil
import sys
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, ParamSpec, TypeVar, get_args

import click

import rag  # rag.Assistant and rag.get_settings are looked up when a command runs: `rag --help` loads neither
from rag import (
    Answer,
    AnswerEvent,
    CheckEvent,
    CheckStreamEvent,
    ClaimCheck,
    ErrorEvent,
    Event,
    ItemEvent,
    PaperStance,
    ProgressEvent,
    QuestionKind,
    QueuedEvent,
    RagError,
    Relevance,
    RowEvent,
    StanceEvent,
    StatusEvent,
    StepEvent,
    Table,
    TableEvent,
    TableStatusEvent,
    TableStreamEvent,
    TokenEvent,
    format_bibtex,
    format_csv,
    format_display,
    format_markdown,
    format_relevance_legend,
    parse_where,
    readable_table,
    relevance_of,
)
from rag.apps import llm_commands, warm

P = ParamSpec("P")
R = TypeVar("R")


def _friendly(fn: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except RagError as e:
            raise click.ClickException(str(e)) from e
        except ValueError as e:  # bad --where and similar user input
            raise click.ClickException(str(e)) from e

    return wrapper


def _need_extra(extra: str, *modules: str) -> None:
    """End the command with the one-line fix when an optional extra (pyproject.toml) is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(
            f"this command needs {', '.join(missing)}, from the [{extra}] extra: pip install 'rag-abstracts[{extra}]'"
        )


def _settings(ctx: click.Context) -> Any:
    obj = ctx.ensure_object(dict)
    if "settings" not in obj:
        obj["settings"] = rag.get_settings(**obj.get("overrides", {}))
    return obj["settings"]


def _assistant(ctx: click.Context) -> Any:
    obj = ctx.ensure_object(dict)
    if "assistant" not in obj:
        obj["assistant"] = rag.Assistant.from_settings(_settings(ctx))
    return obj["assistant"]


def _warm_call(ctx: click.Context, call: str, request: dict[str, Any]) -> Any:
    """``warm.<call>(settings, request)``: an answer's events or search hits from the warm process (see
    :mod:`rag.apps.warm`), or None: then do it here, and :func:`_leave_warm` starts one for the next command."""
    obj = ctx.ensure_object(dict)
    if "assistant" in obj:  # injected (tests, embedding the CLI): answer with it
        return None
    settings = _settings(ctx)
    if not warm.supported() or settings.llm.keep_alive <= 0:
        return None
    try:
        return getattr(warm, call)(settings, request)
    except warm.WarmGone:
        obj["start_warm"] = True
        return None


def _leave_warm(ctx: click.Context) -> None:
    if ctx.ensure_object(dict).pop("start_warm", False):
        try:
            warm.spawn(_settings(ctx))
        except OSError as e:  # the answer is printed; the next command is only slower
            click.echo(f"(could not keep the answering stack warm: {e})", err=True)


def _stop_warm(ctx: click.Context) -> None:
    """Writing to an index stops the warm processes answering from it (the next question starts a fresh one)."""
    if warm.supported() and "assistant" not in ctx.ensure_object(dict):
        settings = _settings(ctx)
        warm.stop(settings, data_dir=settings.data_dir)


def _progress_bar(desc: str, unit: str = "chunk") -> tuple[Callable[[int, int], None], Callable[[], None]]:
    from tqdm import tqdm  # optional heavy dependency: only commands that show progress load it

    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "b" not in bar:
            bar["b"] = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None)
        bar["b"].n = done
        bar["b"].refresh()

    def close() -> None:
        if "b" in bar:
            bar["b"].close()

    return update, close


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data-dir", type=click.Path(path_type=Path), help="Index location (default: RAG_DATA_DIR or a per-user data dir)."
)
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
    _stop_warm(ctx)
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


@cli.command("export")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.pass_context
@_friendly
def export_cmd(ctx: click.Context, path: Path) -> None:
    """Write the whole index (vectors, texts, metadata) to one portable zip file."""
    info = _assistant(ctx).export_index(path)
    click.echo(f"Exported {info['papers']} papers ({info['chunks']} chunks, {info['bytes'] / 1e6:.1f} MB) to {path}.")


@cli.command("import")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--replace", is_flag=True, help="Overwrite a non-empty index.")
@click.pass_context
@_friendly
def import_cmd(ctx: click.Context, path: Path, replace: bool) -> None:
    """Load an index made by `rag export` (no embedding: the model and chunking settings must match)."""
    _stop_warm(ctx)
    info = _assistant(ctx).import_index(path, replace=replace)
    click.echo(f"Imported {info['papers']} papers ({info['chunks']} chunks) from {path}.")


@cli.command()
@click.argument("query")
@click.option("-k", type=click.IntRange(1, 100), default=None, help="Number of papers (default from settings).")
@click.option(
    "--where", multiple=True, metavar="KEY=VALUE", help="Metadata filter, repeatable (venue=NeurIPS, year=2018)."
)
@click.option(
    "--mode", type=click.Choice(["hybrid", "dense", "bm25"]), default=None, help="Retriever (default hybrid)."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {paper_id, title, score, text, metadata}.")
@click.pass_context
@_friendly
def search(
    ctx: click.Context, query: str, k: int | None, where: tuple[str, ...], mode: str | None, as_json: bool
) -> None:
    """Find the papers most relevant to QUERY."""
    request = {"query": query, "k": k, "where": parse_where(list(where)), "mode": mode}
    hits = _warm_call(ctx, "search_warm", request)
    if hits is None:
        hits = _assistant(ctx).search(query, k=k, where=request["where"], mode=mode)
    _leave_warm(ctx)
    if as_json:
        click.echo(json.dumps([h.to_json() for h in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("No matching papers.")
    for i, h in enumerate(hits, 1):
        meta = ", ".join(str(h.metadata[k]) for k in ("venue", "year") if h.metadata.get(k) is not None)
        click.echo(f"{i}. {_readable(h.title)}" + (f" ({meta})" if meta else "") + f"  [{h.paper_id}, {_match(h)}]")
        snippet = " ".join(_readable(h.text).split())
        click.echo(f"   {snippet[:240]}{'…' if len(snippet) > 240 else ''}")
    if hits and any(h.dense_score is not None for h in hits):
        click.echo("\nmatch: closeness in meaning (cosine similarity): strong >= 0.50, good >= 0.35, weak >= 0.22.")


def _match(hit: Any) -> str:
    """The relevance figure people are shown (the fused score and rank are in --json)."""
    return "keyword match" if hit.dense_score is None else f"match {hit.match} {hit.dense_score:.2f}"


KINDS: tuple[str, ...] = get_args(QuestionKind)


@cli.command()
@click.argument("question")
@click.option("-k", type=click.IntRange(1, 20), default=None, help="Papers retrieved (default from settings).")
@click.option("--where", multiple=True, metavar="KEY=VALUE", help="Metadata filter, repeatable.")
@click.option(
    "--mode", type=click.Choice(["llm", "extractive"]), default=None, help="'extractive': cited sentences, no LLM."
)
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default=None,
    help="Answer as a lookup, a list (every paper judged), a comparison (per paper) or yes/no "
    "(default: recognised from the question).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {answer, refused, citations, sources, ...} as JSON.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "md", "bib", "csv"]),
    default="text",
    show_default=True,
    help="json: as --json; md: Markdown with numbered references; bib: the cited papers as BibTeX; "
    "csv: the cited papers (n, title, paper_id, venue, year, url, quote).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write to this file instead of the terminal.",
)
@click.pass_context
@_friendly
def ask(
    ctx: click.Context,
    question: str,
    k: int | None,
    where: tuple[str, ...],
    mode: str | None,
    kind: str | None,
    as_json: bool,
    fmt: str = "text",
    output: Path | None = None,
) -> None:
    """Answer QUESTION from the indexed abstracts, with verified citations."""
    filters = parse_where(list(where))
    fmt = "json" if as_json else fmt
    request = {"question": question, "k": k, "filters": filters, "mode": mode, "kind": kind}
    events = _warm_call(ctx, "ask_warm", request)
    if events is None:
        events = _assistant(ctx).stream(question, k=k, filters=filters, mode=mode, kind=kind)
    # the step being done, on stderr when it is a terminal (stdout may be a file or a pipe); never with --json
    steps = _Live(sys.stderr) if fmt != "json" and sys.stderr.isatty() else None
    if fmt != "text" or output is not None:
        answer = _follow(events, None, steps)
        render = {
            "json": lambda a: json.dumps(a.to_json(), ensure_ascii=False, indent=2) + "\n",
            "md": format_markdown,
            "bib": format_bibtex,
            "csv": format_csv,
            "text": _answer_text,
        }[fmt]
        text = render(answer)
        if output is None:
            click.echo(text, nl=False)
        else:
            output.write_text(text, encoding="utf-8", newline="")
            click.echo(f"Wrote {output} ({fmt}).", err=True)
        _leave_warm(ctx)
        return
    answer = _follow(events, _Live(sys.stdout) if sys.stdout.isatty() else None, steps)
    _print_answer(answer, color=sys.stdout.isatty())
    if kind is None and answer.kind != "lookup":
        label = {"compare": "comparison", "yesno": "yes/no"}.get(answer.kind, answer.kind)
        click.echo(f"(answered as a {label} question; --kind chooses another way)", err=True)
    _leave_warm(ctx)


def _plain(text: str) -> str:
    """``text`` without control characters (an abstract must not be able to drive the terminal)."""
    return "".join(c if c == "\n" or unicodedata.category(c)[0] != "C" else " " for c in text.replace("\t", " "))


def _readable(text: str) -> str:
    """``text`` with its LaTeX and Markdown shown as Unicode (``$\\pm$`` → ±), without control characters."""
    return _plain(format_display(text))


def _one_line(text: str, limit: int) -> str:
    """``text`` on one line (its indentation kept), cut to ``limit`` characters."""
    indent = " " * (len(text) - len(text.lstrip(" ")))
    text = indent + " ".join(_plain(text).split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


class _Live:
    """What streams while an answer is made, at the bottom of a terminal: the sentences being read, the draft,
    the papers confirmed so far. It is erased before the verified answer is printed, so the screen ends with
    the answer alone (unless the block grew taller than the terminal: then it stays, above the answer)."""

    def __init__(self, out: IO[str], width: int | None = None, height: int | None = None) -> None:
        size = shutil.get_terminal_size()
        self.out, self.width, self.height = out, width or size.columns, height or size.lines
        self.rows = 0  # rows below the block's first one that the cursor has moved down
        self.col = 0  # columns used on the cursor's row
        self.status = ""  # the counter line under the list items, rewritten in place

    def write(self, text: str, **style: Any) -> None:
        text = _plain(text)
        for c in text:  # count the rows the terminal wraps the text into
            if c == "\n":
                self.rows, self.col = self.rows + 1, 0
                continue
            w = 0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
            if self.col + w > self.width:
                self.rows, self.col = self.rows + 1, 0
            self.col += w
        self.out.write(click.style(text, **style) if style else text)
        self.out.flush()

    def line(self, text: str, **style: Any) -> None:
        """One row (cut to the terminal's width), above the counter line if there is one."""
        status = self.status
        self.set_status("")
        if self.col:
            self.write("\n")
        self.write(_one_line(text, self.width - 1) + "\n", **style)
        self.set_status(status)

    def set_status(self, text: str) -> None:
        if self.status:
            self.out.write("\r\033[K")
            self.col = 0
        self.status = _one_line(text, self.width - 1)
        if self.status:
            self.write(self.status, dim=True)

    def clear(self) -> None:
        if self.rows >= self.height:  # scrolled past the top: the cursor cannot reach it, so keep it
            self.out.write("\n")
        else:
            self.out.write("\r" + (f"\033[{self.rows}A" if self.rows else "") + "\033[J")
        self.out.flush()
        self.rows = self.col = 0
        self.status = ""


def _follow(events: Iterable[Event], live: _Live | None, steps: _Live | None = None) -> Answer:
    """Consume a stream, showing it on ``live`` (a terminal) if given, else only the step being done on ``steps``
    (stderr, when a terminal); the verified answer, or raise its error."""
    shown = 0  # list items shown
    drafted = False
    t0 = time.monotonic()
    for event in events:
        if live is None:
            if steps is not None:
                if isinstance(event, StepEvent):
                    steps.set_status(f"{event.text} {time.monotonic() - t0:.0f} s")
                elif isinstance(event, AnswerEvent | ErrorEvent):
                    steps.clear()
            if isinstance(event, AnswerEvent):
                return event.answer
            if isinstance(event, ErrorEvent):
                raise event.error
            continue
        match event:
            case StatusEvent(evidence=evidence, sources=sources) if evidence:
                papers = len({q.paper_id for q in evidence})
                live.line(f"Reading {len(evidence)} sentences from {papers} of {len(sources)} papers found:", dim=True)
                for i, q in enumerate(evidence[:8]):  # the paper named once, its sentences under it
                    same = i > 0 and evidence[i - 1].n == q.n
                    text = format_display(q.text)
                    live.line(f"      {text}" if same else f"  [{q.n}] {format_display(q.title)}: {text}", dim=True)
                if len(evidence) > 8:
                    live.line(f"  … and {len(evidence) - 8} more", dim=True)
            case StepEvent() if not drafted:  # once the draft is being written, it shows the progress
                found = f"{shown} found · " if shown else ""
                live.set_status(f"{found}{event.text} {time.monotonic() - t0:.0f} s")
            case TokenEvent(text=text):
                if live.status:  # the draft goes on the status line's row
                    live.set_status("")
                drafted = drafted or bool(text)
                live.write(text)
            case ItemEvent(item=item, checked=checked, total=total):
                shown += 1
                live.line(f"[{shown}] {format_display(item.title)} — {format_display(item.quote)}")
                live.set_status(f"{shown} found, {checked} of {total} papers checked…")
            case ProgressEvent(checked=checked, total=total):
                live.set_status(f"{shown} found, {checked} of {total} papers checked…")
            case AnswerEvent(answer=answer):
                live.clear()
                return answer
            case ErrorEvent(error=error):
                # what was shown stays on screen: end its line so the error (which says it was discarded) stands apart
                live.set_status("")
                if live.col:
                    live.write("\n")
                raise error
    raise AssertionError("a stream ends with an AnswerEvent or an ErrorEvent")  # pragma: no cover


def _answer_text(answer: Answer) -> str:
    """What the terminal shows, as a string (``--output`` with the text format)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _print_answer(answer)
    return buf.getvalue()


def _print_answer(answer: Answer, color: bool = False) -> None:
    if answer.kind == "yesno" and answer.verdict is not None:
        verdict = {"yes": "Yes.", "no": "No.", "not stated": "Not stated."}[answer.verdict]
        click.echo(click.style(verdict, bold=True) if color else verdict)
        text = answer.text.removeprefix(verdict).lstrip()
    else:
        text = answer.text
    if answer.kind == "list" and not answer.refused:
        _print_list(answer)
        return
    click.echo(_readable(text))
    relevance = relevance_of(answer)  # what qualified each paper: the figure the UI and the JSON show too
    if answer.refused:
        if answer.sources:
            click.echo("\nClosest papers:")
            for h in answer.sources:
                click.echo(f"  - {_readable(h.title)}  [{h.paper_id}, {relevance[h.paper_id].text}]")
            _print_legend([relevance[h.paper_id] for h in answer.sources])
        return
    click.echo("")
    for c in answer.citations:
        click.echo(f"[{c.n}] {_readable(c.title)}  [{c.paper_id}, {relevance[c.paper_id].text}]")
        click.echo(f'    "{_one_line(format_display(c.quote), 301)}"')
    for s in answer.unsupported:
        click.echo(f"(dropped, not supported by the abstracts: {_readable(s)})")
    _print_legend([relevance[c.paper_id] for c in answer.citations])


def _print_legend(relevances: list[Relevance]) -> None:
    if legend := format_relevance_legend(relevances):
        click.echo(f"\n{legend}")


def _print_list(answer: Answer) -> None:
    """The count, what was checked, then each paper with the sentence that qualifies it."""
    checked, total = answer.checked or 0, answer.collection_size or 0
    n = len(answer.items)
    head = "No paper matches" if n == 0 else f"{n} {'paper matches' if n == 1 else 'papers match'}"
    click.echo(f"{head} ({checked} of {total:,} abstracts checked){':' if n else '.'}")
    relevance = relevance_of(answer)
    for item in answer.items:
        click.echo(f"\n[{item.n}] {_readable(item.title)}  [{item.paper_id}, {relevance[item.paper_id].text}]")
        click.echo(f'    "{_one_line(format_display(item.quote), 301)}"')
    _print_legend([relevance[i.paper_id] for i in answer.items])


@cli.command()
@click.argument("claim")
@click.option("-k", type=click.IntRange(1, 50), default=None, help="Papers judged (default RAG_CHECK__K, 10).")
@click.option("--where", multiple=True, metavar="KEY=VALUE", help="Metadata filter, repeatable (venue=NeurIPS).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {claim, verdict, counts, papers: [{paper_id, title, stance, probability, quote, span}]}.",
)
@click.pass_context
@_friendly
def check(ctx: click.Context, claim: str, k: int | None, where: tuple[str, ...], as_json: bool) -> None:
    """Check CLAIM against the most relevant abstracts: each paper supports it, refutes it or does not state
    it (with the judge's probability and the deciding sentence quoted), then the verdict with the counts."""
    filters = parse_where(list(where)) or None
    events = _warm_call(ctx, "check_warm", {"claim": claim, "k": k, "filters": filters})
    if events is None:
        events = _assistant(ctx).check_stream(claim, k=k, filters=filters)
    if as_json:
        result = _follow_check(events, show=False)
        click.echo(json.dumps(result.summary(), ensure_ascii=False, indent=2))
        _leave_warm(ctx)
        return
    result = _follow_check(events, show=True, live=_Live(sys.stderr) if sys.stderr.isatty() else None)
    _leave_warm(ctx)
    threshold = _settings_of(ctx).check.min_probability
    undecided = sum(not p.decided and p.stance != "not stated" for p in result.papers)
    if not result.papers:
        click.echo("No paper found to judge.")
    click.echo("")
    click.echo(format_check_verdict(result))
    if undecided:
        click.echo(f"({undecided} stance{'s' if undecided > 1 else ''} under {threshold:.2f} not counted)")


def _settings_of(ctx: click.Context) -> Any:
    """The settings of the assistant the command uses (an injected one's own, else the configured ones)."""
    obj = ctx.ensure_object(dict)
    return obj["assistant"].settings if "assistant" in obj else _settings(ctx)


def format_stance_line(paper: PaperStance) -> str:
    """One judged paper on one line: ``[3] supports 0.82  Title — "quote"``."""
    mark = "" if paper.decided or paper.stance == "not stated" else " (not counted)"
    mark += "" if paper.asked else " (not asked: far from the claim)"
    quote = " ".join(format_display(paper.quote).split())
    return f'[{paper.n}] {paper.stance} {paper.probability:.2f}{mark}  {format_display(paper.title)} — "{quote}"'


def format_check_verdict(result: ClaimCheck) -> str:
    """``Verdict: supported — 2 support, 0 refute, 8 not stated (10 papers judged).``"""
    c = result.counts
    return (
        f"Verdict: {result.verdict} — {c.get('supports', 0)} support, {c.get('refutes', 0)} refute, "
        f"{c.get('not stated', 0)} not stated ({result.checked} {'paper' if result.checked == 1 else 'papers'} judged)."
    )


def _follow_check(events: Iterable[CheckStreamEvent], *, show: bool, live: _Live | None = None) -> ClaimCheck:
    """Consume a claim check's stream: with ``show``, each paper printed as it is judged, and progress on
    ``live`` (a terminal's status line, on stderr); the finished check, or raise its error."""
    status = live.set_status if live is not None else (lambda _text: None)
    status("Searching the abstracts…")
    try:
        for event in events:
            match event:
                case QueuedEvent(position=position, waited=waited):
                    status(f"Waiting for the model: number {position} in line, {waited:.0f} s…")
                case StatusEvent(sources=sources):
                    status(f"Judging paper 1 of {len(sources)}…" if sources else "")
                case StanceEvent(paper=paper, checked=checked, total=total) if show:
                    status("")
                    click.echo(_plain(format_stance_line(paper)))
                    status(f"Judging paper {checked + 1} of {total}…" if checked < total else "")
                case CheckEvent(check=result):
                    return result
                case ErrorEvent(error=error):
                    raise error
    finally:
        status("")
    raise AssertionError("a check stream ends with a CheckEvent or an ErrorEvent")  # pragma: no cover


def _follow_table(events: Iterable[TableStreamEvent], live: _Live | None) -> Table:
    """Consume a table's stream, its progress on ``live`` (a terminal's status line, on stderr); the finished
    table, or raise its error."""
    status = live.set_status if live is not None else (lambda _text: None)
    rows = 0
    try:
        for event in events:
            match event:
                case QueuedEvent(position=position, waited=waited):
                    status(f"Waiting for the model: number {position} in line, {waited:.0f} s…")
                case TableStatusEvent(text=text):
                    status(f"{text} ({rows} {'row' if rows == 1 else 'rows'} so far)" if rows else text)
                case RowEvent():
                    rows += 1
                case TableEvent(table=table):
                    return table
                case ErrorEvent(error=error):
                    raise error
    finally:
        status("")
    raise AssertionError("a table stream ends with a TableEvent or an ErrorEvent")  # pragma: no cover


@cli.command()
@click.argument("attributes")
@click.option(
    "--query", "-q", default=None, help="Rows: the papers that match Q, confirmed by the judge (default: every paper)."
)
@click.option("--where", multiple=True, metavar="KEY=VALUE", help="Metadata filter, repeatable (venue=NeurIPS).")
@click.option(
    "-k", type=click.IntRange(1), default=None, help="Rows at most (default RAG_ANSWER__TABLE_MAX_PAPERS, 10)."
)
@click.option(
    "--format", "fmt", type=click.Choice(["md", "csv", "json"]), default="md", show_default=True, help="Output format."
)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write to FILE instead of stdout."
)
@click.pass_context
@_friendly
def table(
    ctx: click.Context,
    attributes: str,
    query: str | None,
    where: tuple[str, ...],
    k: int | None,
    fmt: str,
    out: Path | None,
) -> None:
    """Tabulate ATTRIBUTES ("task, dataset, metric, best result") over the papers: one row per paper, each
    value with the sentence of the abstract that states it; a value no sentence states stays empty (not stated)."""
    assistant = _assistant(ctx)
    filters = parse_where(list(where))
    events = assistant.table_stream(attributes, query=query, where=filters or None, k=k)
    result = _follow_table(events, _Live(sys.stderr) if sys.stderr.isatty() else None)
    if fmt == "json":
        text = json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n"
    else:
        shown = readable_table(result)
        text = shown.to_csv() if fmt == "csv" else shown.to_markdown()
    if out is None:  # a terminal gets no control characters from the abstracts; a pipe gets the data as it is
        click.echo(_plain(text.replace("\r\n", "\n")) if sys.stdout.isatty() else text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8", newline="")
    except OSError as e:
        raise click.ClickException(f"Cannot write {out}: {e.strerror or e}.") from e
    cells = [c for r in result.rows for c in r.cells]
    stated = sum(c.value is not None for c in cells)
    click.echo(
        f"Wrote {out}: {len(result.rows)} papers x {len(result.attributes)} attributes, "
        f"{stated} of {len(cells)} cells stated (the rest not stated in the abstracts)."
    )


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
    data = rag.get_settings(**ctx.obj.get("overrides", {})).masked()
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


@cli.command("eval")
@click.argument("gold")
@click.option(
    "--config",
    "configs",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='TOML with rag.toml sections (e.g. [retrieval] mode = "dense"); repeat to compare configs.',
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("eval-out"),
    show_default=True,
    help="Where report.json, report.md and the plots go.",
)
@click.option("--repeat", type=click.IntRange(1, 20), default=1, show_default=True, help="Ask every question N times.")
@click.option(
    "--corpus",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Abstracts the gold set is about (default: the bundled NeurIPS 2026 abstracts).",
)
@click.option(
    "--limit",
    type=click.IntRange(0),
    default=0,
    help="scifact: the first N questions; pubmedqa and gold files: N of a fixed-seed shuffle (0: all; pubmedqa: 20).",
)
@click.option(
    "--judge-url",
    envvar="RAG_EVAL_JUDGE_BASE_URL",
    default=None,
    help="OpenAI-compatible endpoint of an LLM judge (faithfulness, answer relevancy); none: no judge metrics.",
)
@click.option("--judge-model", envvar="RAG_EVAL_JUDGE_MODEL", default=None, help="Model name of the judge endpoint.")
@click.option("--start", type=click.IntRange(0), default=0, help="pubmedqa: answer from question START on.")
@click.option(
    "--data",
    "data_root",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="RAG_SHARED_DATA",
    default=None,
    help="scifact/pubmedqa: folder holding scifact/ and pubmedqa/ (default $RAG_SHARED_DATA).",
)
@click.option(
    "--baseline",
    type=click.Choice(["textbook"]),
    default=None,
    help="Also run the textbook LangChain chain (1,000-char chunks, Chroma, k=4, tutorial prompt) on the "
    "single-paper questions, same models, and report it side by side.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_friendly
def eval_(
    ctx: click.Context,
    gold: str,
    configs: tuple[Path, ...],
    out: Path,
    repeat: int,
    corpus: tuple[Path, ...],
    limit: int,
    judge_url: str | None,
    judge_model: str | None,
    data_root: Path | None,
    baseline: str | None,
    start: int,
    as_json: bool,
) -> None:
    """Score answers on GOLD (a gold JSONL file: questions, lists, comparisons or table cells), or run the
    `scifact` / `pubmedqa` benchmark."""
    _need_extra("eval", "matplotlib", *(("langchain_text_splitters", "langchain_chroma") if baseline else ()))
    from rag.evaluation import external as benchmarks  # deferred: the evaluation's dependencies (matplotlib)
    from rag.evaluation import harness  # deferred: as above

    base = ctx.obj.get("overrides", {})
    if gold in ("scifact", "pubmedqa"):
        settings = harness.settings_for(configs[0] if configs else None, base)
        update, close = _progress_bar(gold, "question")
        try:
            if gold == "scifact":
                res = benchmarks.run_scifact(
                    _assistant_for(benchmarks.scifact_settings(settings)),
                    limit=limit,
                    progress=update,
                    data=benchmarks.shared_data("scifact", data_root),
                )
                md = benchmarks.scifact_markdown(res)
            else:
                res = benchmarks.run_pubmedqa(
                    _assistant_for(benchmarks.pubmedqa_settings(settings)),
                    limit=limit or 20,
                    start=start,
                    progress=update,
                    path=benchmarks.shared_data("pubmedqa/pqal_dev.json", data_root),
                )
                md = benchmarks.pubmedqa_markdown(res)
        finally:
            close()
        benchmarks.write_benchmark(res, md, out)
        click.echo(json.dumps(res, indent=2) if as_json else md)
        return
    doc = harness.evaluate_gold(
        Path(gold),
        list(configs) or [None],
        out,
        repeat=repeat,
        corpus=list(corpus),
        base=base,
        judge_url=judge_url,
        judge_model=judge_model,
        progress_factory=lambda label: _progress_bar(label, "question"),
        baseline=baseline,
        sample=limit,
    )
    if as_json:
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        click.echo((out / "report.md").read_text(encoding="utf-8").split("\n## Per question")[0])
        click.echo(f"Report: {out / 'report.md'}")


def _assistant_for(settings: Any) -> Any:
    return rag.Assistant.from_settings(settings)


@cli.command()
@click.option(
    "--host", default=None, help="Address to bind (default RAG_UI__HOST, 127.0.0.1). Off loopback, a login is required."
)
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port (default RAG_UI__PORT, 7860).")
@click.pass_context
@_friendly
def ui(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Serve the chat web UI (Gradio) on HOST:PORT."""
    _need_extra("ui", "gradio")
    from rag.ui.app import launch  # deferred: gradio is an optional heavy dependency

    assistant = _assistant(ctx)
    # launch refuses a non-loopback host without a login before it serves anything; Gradio prints the URL
    launch(assistant, host=host or assistant.settings.ui.host, port=port or assistant.settings.ui.port)


@cli.command()
@click.option("--query", default="drone footage of zebras in 3D", show_default=True, help="Sample search.")
@click.option(
    "--question",
    default="How many 3D bounding box annotations does WildBox have?",
    show_default=True,
    help="Sample question answered by the LLM in the terminal (with --no-ui).",
)
@click.option("--no-ui", is_flag=True, help="Answer the sample question in the terminal instead of opening the web UI.")
@click.option("--no-llm", is_flag=True, help="With --no-ui: skip the LLM answer (search only).")
@click.option("--host", default=None, help="Address of the UI (default 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port of the UI (default 7860).")
@click.pass_context
@_friendly
def demo(
    ctx: click.Context, query: str, question: str, no_ui: bool, no_llm: bool, host: str | None, port: int | None
) -> None:
    """Index the bundled NeurIPS 2026 abstracts, run a sample search, then open the chat UI."""
    if not no_ui:
        _need_extra("ui", "gradio")  # before indexing, not after
    ctx.invoke(ingest, paths=(rag.Assistant.bundled_corpus(),), rebuild=False, prune=False, as_json=False)
    click.echo(f"\n$ rag search {query!r} -k 3")
    ctx.invoke(search, query=query, k=3, where=(), mode=None, as_json=False)
    if no_ui:
        if not no_llm:
            click.echo(f"\n$ rag ask {question!r}   (the embedded LLM starts on first use)")
            ctx.invoke(ask, question=question, k=None, where=(), mode=None, as_json=False)
        return
    click.echo("\n$ rag ui   (open the address below in a browser; the embedded LLM starts on the first question)")
    ctx.invoke(ui, host=host, port=port)


@cli.command()
@click.option(
    "--host",
    default=None,
    help="Address to bind (default RAG_SERVER__HOST, 127.0.0.1); non-loopback needs RAG_SERVER__API_TOKEN.",
)
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port (default RAG_SERVER__PORT, 8080).")
@click.pass_context
@_friendly
def serve(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Serve the HTTP API: OpenAI-compatible /v1/chat/completions with verified citations, search, ingest."""
    from rag.apps.http_api import serve as run_server  # deferred: fastapi and uvicorn load only for `rag serve`

    run_server(_assistant(ctx), host=host, port=port)  # refuses a non-loopback host without a token


cli.add_command(llm_commands.llm)


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
