"""The UI's event callbacks (:class:`Handlers`) and what they share: question options, feedback, conversations.

Gradio calls the bound methods of one :class:`Handlers` per app (wired in :func:`rag.ui.app.build_app`); the
tests call them the same way, found by name. ``ask`` and ``table`` are also the app's API (``gradio_client``).
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import queue
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args

import gradio as gr

from rag import (
    Answer,
    AnswerEvent,
    Assistant,
    CheckEvent,
    Conversation,
    ConversationStore,
    ErrorEvent,
    ItemEvent,
    ListItem,
    Paper,
    PaperStance,
    ProgressEvent,
    QuestionError,
    QuestionKind,
    QueuedEvent,
    Quote,
    RagError,
    Relevance,
    RowEvent,
    SearchHit,
    StanceEvent,
    StatusEvent,
    StepEvent,
    Stop,
    StoppedError,
    Table,
    TableEvent,
    TableRow,
    TableStatusEvent,
    TokenEvent,
    Turn,
    listed_relevance,
)
from rag.ui.rendering import (
    esc,
    format_check_html,
    format_check_status_html,
    format_copy_text,
    format_count,
    format_limit_html,
    format_list_progress_html,
    format_message_html,
    format_papers_html,
    format_paragraphs_html,
    format_reading_html,
    format_sources_html,
    format_step_html,
    format_stopped_html,
    format_table_html,
    format_waiting_html,
    write_conversation_files,
    write_table_files,
)

KINDS: tuple[QuestionKind, ...] = get_args(QuestionKind)
TICK = 1.0  # seconds: the chat's status line moves on at least this often while an answer is made
DOWNLOADS = 4  # conversation as Markdown, BibTeX, CSV; the last answer as Markdown


def answer_record(answer: Answer, settings: dict[str, Any]) -> dict[str, Any]:
    """What the chat keeps per answer: the JSON the feedback file gets, the settings, and the whole Answer
    (``_answer``) so the conversation can be saved and reopened with its citations and sources."""
    return answer.to_json() | {"settings": settings, "_answer": answer.model_dump(mode="json")}


def conversation_turns(answers: dict[Any, dict[str, Any]]) -> list[Turn]:
    """The chat's answers (keyed by message index) as the turns of a saved conversation, in order."""
    ordered = sorted(answers.items(), key=lambda kv: int(kv[0]))
    return [
        Turn(answer=Answer.model_validate(r["_answer"]), settings=r.get("settings") or {})
        for _, r in ordered
        if "_answer" in r
    ]


def conversation_view(conv: Conversation) -> tuple[list[dict[str, str]], list[tuple[str, str]], dict[int, Any]]:
    """A saved conversation as the chat shows it: messages, the history follow-ups read, the answers state."""
    messages: list[dict[str, str]] = []
    history: list[tuple[str, str]] = []
    answers: dict[int, Any] = {}
    for turn, t in enumerate(conv.turns, 1):
        a = t.answer
        messages.append({"role": "user", "content": esc(a.question)})
        messages.append({"role": "assistant", "content": format_message_html(a, turn)})
        answers[len(messages) - 1] = answer_record(a, t.settings)
        history += [("user", a.question), ("assistant", a.text)]
    return messages, history, answers


def conversation_choices(store: ConversationStore, user: str | None) -> list[tuple[str, str]]:
    return [(c.label, c.id) for c in store.list(user)]


def _user(request: gr.Request | None) -> str | None:
    """The logged-in user (with ``RAG_UI__AUTH``), else None: everything is kept under ``local``."""
    name = getattr(request, "username", None) if request is not None else None
    return str(name) if name else None


def browser_secret(folder: Path) -> str:
    """The key the browser's saved conversation id is encrypted with, kept in ``folder`` so that the id still
    opens after the server restarts (Gradio's default is a new random key per launch)."""
    path = folder / ".browser-key"
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        pass
    key = secrets.token_hex(16)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(key, encoding="ascii")
    except OSError:
        pass  # a read-only data dir: the id is forgotten when the server restarts, the conversations are not
    return key


def parse_kind(value: str | None) -> QuestionKind | None:
    """The "Answer as" choice -> ``kind`` (None: recognised from the question)."""
    v = (value or "").strip().lower().replace("/", "").replace("-", "")
    if v in ("", "auto"):
        return None
    for kind in KINDS:
        if v == kind:
            return kind
    raise gr.Error(f"Answer as must be auto, {', '.join(KINDS)}; got {value!r}.")


def parse_filters(venue: str | None, year: str | int | float | None) -> dict[str, Any]:
    """Venue/year inputs -> the metadata filter ``Assistant.stream`` takes (empty inputs: no filter)."""
    filters: dict[str, Any] = {}
    if venue and str(venue).strip():
        filters["venue"] = str(venue).strip()
    if year not in (None, ""):
        text = str(year).strip()
        if text:
            try:
                filters["year"] = int(float(text))
            except ValueError:
                raise gr.Error(f"Year must be a number, got {text!r}.") from None
    return filters


def oversized_upload(paths: list[Path], limit: int) -> str | None:
    """The message for the first file larger than ``limit`` bytes (checked before anything is read), else None."""
    for p in paths:
        try:
            size = p.stat().st_size
        except OSError:
            continue  # a vanished upload: ingesting it says so
        if size > limit:
            return (
                f"{p.name} is {_size(size)}; the limit is {_size(limit)}. "
                "Split the file, or raise RAG_UI__MAX_UPLOAD_BYTES."
            )
    return None


def _size(n: int) -> str:
    return f"{n:,} bytes" + (f" ({n / 1e6:.1f} MB)" if n >= 100_000 else "")


def append_feedback(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line (the eval harness reads this file line by line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False)
    with _FEEDBACK_LOCK, path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


_FEEDBACK_LOCK = threading.Lock()


def _retrieval_mode(assistant: Assistant, hybrid: bool) -> Literal["hybrid", "dense"] | None:
    """Hybrid on: dense + BM25; off: dense alone (a configured non-hybrid mode is kept)."""
    if hybrid:
        return "hybrid"
    return "dense" if assistant.settings.retrieval.mode == "hybrid" else None


def filter_choices(papers: list[Paper]) -> tuple[list[str], list[str]]:
    """The venue and year filters' choices: "" (no filter), then those of ``papers``."""
    venues = sorted({p.venue for p in papers if p.venue})
    years = sorted({str(p.year) for p in papers if p.year}, reverse=True)
    return [""] + venues, [""] + years


_END = object()


def _ticking(events: Iterable[Any], stop: Stop, every: float = TICK) -> Iterator[Any]:
    """``events``, read in a thread of their own, with ``None`` after every ``every`` seconds without one, and at
    once when ``stop`` is set: a model call can take many seconds, and the elapsed time must move on meanwhile."""
    inbox: queue.Queue[Any] = queue.Queue()

    def pump() -> None:
        try:
            for event in events:
                inbox.put(event)
        except BaseException as e:  # the stream turns errors into its last event; anything else is passed on
            inbox.put(e)
        finally:
            inbox.put(_END)

    threading.Thread(target=pump, name="rag-answer", daemon=True).start()
    stop.on_set(lambda: inbox.put(None))
    while True:
        try:
            item = inbox.get(timeout=every)
        except queue.Empty:
            yield None
            continue
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


class _Progress:
    """The bubble of an answer being made: what it shows so far (the place in line, the sentences being read, the
    draft, the papers confirmed) and under it the status line, what is done now and the seconds since ``t0``."""

    def __init__(self, turn: int, t0: float) -> None:
        self.turn, self.t0 = turn, t0
        self.body, self.step = "", "Searching the abstracts…"
        self.queued = False
        self.text = ""
        self.items: list[ListItem] = []

    def show(self, event: Any) -> dict[str, str]:
        """The bubble after ``event`` (``None``: a second passed, only the clock moves on)."""
        match event:
            case StepEvent():
                self.step = event.text
                if self.queued:  # a slot is ours: the place in line goes
                    self.body, self.queued = "", False
            case QueuedEvent(position=position, waited=waited):  # the place in line is the status
                self.body, self.step, self.queued = format_waiting_html(position, waited), "", True
            case StatusEvent(evidence=evidence):
                self.body = format_reading_html(evidence, self.turn) if evidence else ""
                self.step = self.step or "Reading the abstracts…"
            case TokenEvent(text=token):
                self.text += token
                self.body = format_paragraphs_html(self.text, self.turn)
            case ItemEvent(item=item, checked=checked, total=total):
                self.items.append(item)
                self.body = format_list_progress_html(self.items, checked, total)
            case ProgressEvent(checked=checked, total=total):
                self.body = format_list_progress_html(self.items, checked, total)
        line = format_step_html(self.step, time.monotonic() - self.t0) if self.step else ""
        return {"role": "assistant", "content": self.body + line}


class Handlers:
    """The event callbacks of one app over ``assistant``; conversations are kept in its settings' folder."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self.settings = assistant.settings
        self.feedback_path = self.settings.feedback_path()
        self.store = ConversationStore(self.settings.conversations_dir())
        # the answers and claim checks running, by browser session: Stop (stop_answer, stop_check) sets theirs
        self._answers: dict[str | None, Stop] = {}
        self._checks: dict[str | None, Stop] = {}
        self._checks_lock = threading.Lock()
        # tables running, by browser session (under the same lock)
        self._tables: dict[str | None, Stop] = {}

    def respond(
        self,
        question: str,
        messages: list[dict[str, Any]],
        history: list[tuple[str, str]],
        answers: dict[int, dict[str, Any]],
        k: float,
        hybrid: bool,
        venue: str,
        year: str,
        mode: str,
        temperature: float,
        kind: str = "auto",
        request: gr.Request | None = None,
    ) -> Iterator[tuple[Any, ...]]:
        """The chat's answer to ``question``, streamed. Each update: messages, history, answers, sources,
        copy text, the question box, the feedback note, and the note under the question box (its limit, or why
        the question was refused: an empty one, or one over ``settings.answer.max_question_chars``).

        Until the answer is done its bubble ends with a status line, what is being done and the seconds since
        the question, updated at least once a second; Stop (:meth:`stop_answer`) ends it at once."""
        limit = self.settings.answer.max_question_chars
        hint = format_limit_html(limit)
        question = (question or "").strip()
        try:
            self.assistant.check_question(question)
        except QuestionError as e:  # refused before "Searching…"; an over-long question is given back whole
            empty = e.code == "empty_question"
            note = "Type a question first: the box is empty." if empty else f"{e} Shorten it and ask again."
            yield messages, history, answers, gr.skip(), gr.skip(), question, gr.skip(), format_limit_html(limit, note)
            return
        filters = parse_filters(venue, year)
        answer_as = parse_kind(kind)
        turn = len(answers) + 1
        messages = list(messages) + [
            {"role": "user", "content": esc(question)},
            {"role": "assistant", "content": "<em>Searching the abstracts…</em>"},
        ]
        before = messages
        yield messages, history, answers, gr.skip(), gr.skip(), "", "", hint
        session = getattr(request, "session_hash", None)
        stop = Stop()
        with self._checks_lock:
            self._answers[session] = stop
        events = self.assistant.stream(
            question,
            history=history or None,
            k=int(k) if k else None,
            filters=filters or None,
            mode="extractive" if mode == "extractive" else "llm",
            retrieval_mode=_retrieval_mode(self.assistant, hybrid),
            temperature=float(temperature),
            kind=answer_as,
            stop=stop,
        )
        t0 = time.monotonic()
        try:
            first = next(events)
        except QuestionError as e:  # refused before any work (too long): the question goes back to the box
            self._forget(self._answers, session, stop)
            yield (
                before[:-2],
                history,
                answers,
                gr.skip(),
                gr.skip(),
                question,
                gr.skip(),
                format_limit_html(limit, f"{e} Shorten it and ask again."),
            )
            return
        progress = _Progress(turn, t0)
        knobs: dict[str, Any] = {"k": int(k) if k else None, "hybrid": hybrid, "filters": filters, "mode": mode}
        knobs |= {"temperature": float(temperature), "kind": answer_as}
        reading: tuple[list[SearchHit], list[Quote]] | None = None
        listed: dict[str, Relevance] = {}
        try:
            for event in _ticking(itertools.chain([first], events), stop):
                if stop.is_set() and not isinstance(event, AnswerEvent):
                    messages[-1] = {"role": "assistant", "content": format_stopped_html(time.monotonic() - t0)}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", "", hint
                    break
                match event:
                    case StatusEvent(sources=sources, evidence=evidence):
                        # the sentences about to be read, at once: highlighted in the panel, listed in the bubble
                        messages[-1] = progress.show(event)
                        reading = (sources, evidence)
                        sources_html = format_sources_html(None, turn, sources, evidence)
                        yield messages, history, answers, sources_html, gr.skip(), "", "", hint
                    case ItemEvent(item=item) if reading is not None:
                        # a paper confirmed: its card says what listed it at once, not its similarity
                        messages[-1] = progress.show(event)
                        listed[item.paper_id] = listed_relevance(item, judged=mode != "extractive")
                        shown = any(h.paper_id == item.paper_id for h in reading[0])
                        panel = format_sources_html(None, turn, *reading, listed=listed) if shown else gr.skip()
                        yield messages, history, answers, panel, gr.skip(), "", "", hint
                    case AnswerEvent(answer=answer):
                        messages[-1] = {"role": "assistant", "content": format_message_html(answer, turn)}
                        answers = dict(answers)
                        answers[len(messages) - 1] = answer_record(answer, knobs)
                        history = list(history) + [("user", question), ("assistant", answer.text)]
                        yield (
                            messages,
                            history,
                            answers,
                            format_sources_html(answer, turn),
                            format_copy_text(answer),
                            "",
                            "",
                            hint,
                        )
                    case ErrorEvent(error=error):
                        messages[-1] = {"role": "assistant", "content": f'<p class="rag-error">{esc(str(error))}</p>'}
                        yield messages, history, answers, gr.skip(), gr.skip(), "", "", hint
                    case _:  # a tick (None), a step, the place in line, the draft, a paper judged
                        messages[-1] = progress.show(event)
                        yield messages, history, answers, gr.skip(), gr.skip(), "", "", hint
        finally:
            self._forget(self._answers, session, stop)
            stop.set()  # a no-op once the stream has ended; frees the slot if Gradio dropped this generator early

    def stop_answer(self, request: gr.Request | None = None) -> None:
        """Stop: the running answer of this browser ends now, its LLM slot freed for the next question in line."""
        with self._checks_lock:
            stop = self._answers.get(getattr(request, "session_hash", None))
        if stop is not None:
            stop.set()

    def _forget(self, running: dict[str | None, Stop], session: str | None, stop: Stop) -> None:
        with self._checks_lock:
            if running.get(session) is stop:
                del running[session]

    def on_feedback(self, data: gr.LikeData, answers: dict[int | str, dict[str, Any]]) -> str:
        index = data.index[0] if isinstance(data.index, (list, tuple)) else data.index
        record = answers.get(int(index)) or answers.get(str(index))
        if record is None:
            return "No answer to rate."
        record = {k: v for k, v in record.items() if k != "_answer"}
        liked = data.liked
        rating = (
            "up" if liked is True or liked == "Like" else "down" if liked is False or liked == "Dislike" else str(liked)
        )
        append_feedback(
            self.feedback_path,
            {"time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "rating": rating} | record,
        )
        return f"Thanks: feedback saved ({rating})."

    def clear_chat(self) -> tuple[Any, ...]:
        hidden = gr.update(visible=False, value=None)
        return ([], [], {}, format_sources_html(None, 0), "", "", "", "", gr.update(value=None)) + (hidden,) * DOWNLOADS

    def downloads(self, conv: Conversation | None) -> tuple[Any, ...]:
        if conv is None or not conv.turns:
            return (gr.update(visible=False, value=None),) * DOWNLOADS
        return tuple(gr.update(value=str(p), visible=True) for p in write_conversation_files(conv))

    def save_conversation(
        self, answers: dict[Any, dict[str, Any]], conv_id: str | None, request: gr.Request
    ) -> tuple[Any, ...]:
        """After each answer: the chat so far saved as the current conversation (a new one if there is none)."""
        turns = conversation_turns(answers)
        if not turns:
            return (gr.skip(),) * (2 + DOWNLOADS)
        user = _user(request)
        old = self.store.load(user, conv_id) if conv_id else None
        conv = Conversation(title=turns[0].answer.question, turns=turns)
        if old is not None:
            conv = conv.model_copy(update={"id": old.id, "created": old.created})
        conv = self.store.save(user, conv)
        return (
            conv.id,
            gr.update(choices=conversation_choices(self.store, user), value=conv.id),
            *self.downloads(conv),
        )

    def open_conversation(self, conv_id: str | None, request: gr.Request) -> tuple[Any, ...]:
        user = _user(request)
        conv = self.store.load(user, conv_id) if conv_id else None
        choices = gr.update(choices=conversation_choices(self.store, user), value=conv.id if conv else None)
        if conv is None or not conv.turns:
            return (*self.clear_chat()[:8], choices, *self.clear_chat()[9:])
        messages, history, answers = conversation_view(conv)
        last = conv.turns[-1].answer
        return (
            messages,
            history,
            answers,
            format_sources_html(last, len(conv.turns)),
            format_copy_text(last),
            "",
            "",
            conv.id,
            choices,
            *self.downloads(conv),
        )

    def restore(self, conv_id: str | None, request: gr.Request) -> tuple[Any, ...]:
        """On page load: reopen the conversation this browser had open, and list the saved ones. What the user
        may have typed meanwhile (the load event can finish after the first keystrokes) is left alone."""
        view = self.open_conversation(conv_id, request)
        return (*view[:5], gr.skip(), gr.skip(), *view[7:])

    def delete_conversation(self, selected: str | None, current: str | None, request: gr.Request) -> tuple[Any, ...]:
        user = _user(request)
        if selected:
            self.store.delete(user, selected)
        if selected and selected == current:
            cleared = self.clear_chat()
            return (*cleared[:8], gr.update(choices=conversation_choices(self.store, user), value=None), *cleared[9:])
        listed = gr.update(choices=conversation_choices(self.store, user), value=current or None)
        return (*(gr.skip(),) * 8, listed) + (gr.skip(),) * DOWNLOADS

    def refresh_papers(self, query: str) -> tuple[str, Any, Any]:
        ps = self.assistant.papers()
        v, y = filter_choices(ps)
        return format_papers_html(ps, query), gr.update(choices=v), gr.update(choices=y)

    def upload(
        self, files: list[Any] | None, query: str, progress: gr.Progress = gr.Progress()
    ) -> tuple[str, str, Any, Any]:
        if not files:
            return "Choose a file first.", gr.skip(), gr.skip(), gr.skip()
        paths = [Path(getattr(f, "name", f)) for f in files]

        def report(done: int, total: int) -> None:
            progress((done, max(total, 1)), desc="Embedding chunks", unit="chunks")

        error = oversized_upload(paths, self.settings.ui.max_upload_bytes)
        if error is None:
            try:
                progress(0, desc="Validating files")
                r = self.assistant.ingest(paths, progress=report).to_json()
            except RagError as e:
                error = str(e)
        if error is not None:
            for p in paths:  # uploads sit in a temp dir: show the user's file name
                error = error.replace(str(p), p.name)
            return (f'<p class="rag-error">Nothing was indexed. {esc(error)}</p>', gr.skip(), gr.skip(), gr.skip())
        names = ", ".join(p.name for p in paths)
        status = (
            f"<p>Indexed {esc(names)}: {r['papers_seen']} papers read, {r['added']} added, {r['updated']} updated, "
            f"{r['unchanged']} unchanged.</p>"
        )
        return (status, *self.refresh_papers(query))

    def make_table(
        self, attributes: str, query: str, venue: str, year: str, k: float, request: gr.Request | None = None
    ) -> Iterator[tuple[Any, Any, Any, Any]]:
        """The Table tab, streamed: each update is the status line (what is being done, for how long), the table
        so far (rows as they are filled), and the two download buttons (shown with the finished table). Stop
        (:meth:`stop_table`) frees the LLM at once (the next question in line starts); the rows filled stay."""
        hidden = gr.update(visible=False, value=None)
        session = getattr(request, "session_hash", None)
        t0 = time.monotonic()
        rows: list[TableRow] = []

        def so_far() -> str:
            if not rows:
                return format_table_html(None)
            return format_table_html(Table(attributes=[c.attribute for c in rows[0].cells], rows=list(rows)))

        stop = Stop()
        with self._checks_lock:
            self._tables[session] = stop
        try:
            events = self.assistant.table_stream(
                attributes or "",
                query=(query or "").strip() or None,
                where=parse_filters(venue, year) or None,
                k=int(k) if k else None,
                stop=stop,
            )
            for event in events:
                took = time.monotonic() - t0
                match event:
                    case QueuedEvent(position=position, waited=waited):
                        yield format_waiting_html(position, waited), gr.skip(), hidden, hidden
                    case TableStatusEvent(stage=stage, text=text):
                        # "Filling row 3" says it already; while judging, the rows so far are worth saying
                        shown = (
                            f"{text} {format_count(len(rows), 'row')} so far" if rows and stage == "judging" else text
                        )
                        yield format_check_status_html(shown, took), gr.skip(), hidden, hidden
                    case RowEvent(row=row):
                        rows.append(row)
                        yield gr.skip(), so_far(), hidden, hidden
                    case TableEvent(table=result):
                        csv_path, md_path = write_table_files(result)
                        done = (
                            f"{format_count(len(result.rows), 'row')}: read {format_count(result.checked, 'paper')} "
                            f"of the {result.collection_size} in the collection, in {took:.0f} s."
                        )
                        yield (
                            format_check_status_html(done),
                            format_table_html(result),
                            gr.update(value=str(csv_path), visible=True),
                            gr.update(value=str(md_path), visible=True),
                        )
                    case ErrorEvent(error=StoppedError()):
                        stopped = f"Stopped after {format_count(len(rows), 'row')}."
                        yield format_check_status_html(stopped), so_far(), hidden, hidden
                    case ErrorEvent(error=error):
                        yield format_check_status_html(str(error), error=True), gr.skip(), hidden, hidden
        except RagError as e:  # refused before any work (bad attributes, empty index, too long a query)
            yield format_check_status_html(str(e), error=True), so_far(), hidden, hidden
        finally:
            self._forget(self._tables, session, stop)

    def stop_table(self, request: gr.Request | None = None) -> Any:
        """Stop: the running table of this browser ends now, its LLM slot freed for the next question in line."""
        with self._checks_lock:
            stop = self._tables.get(getattr(request, "session_hash", None))
        if stop is None:
            return gr.skip()
        stop.set()
        return format_check_status_html("Stopping…")

    def check_claim(self, claim: str, k: float = 0, request: gr.Request | None = None) -> Iterator[tuple[str, str]]:
        """The Check tab: ``claim`` checked against the ``k`` most relevant abstracts, streamed. Each update is
        the status line (what is being done, for how long) and the result (each paper as it is judged, then
        the verdict and its meter). Stop (:meth:`stop_check`) frees the LLM at once; the papers judged stay shown."""
        claim = (claim or "").strip()
        if not claim:
            yield format_check_status_html("Type a claim first: the box is empty.", error=True), gr.skip()
            return
        session = getattr(request, "session_hash", None)
        t0 = time.monotonic()
        yield format_check_status_html("Searching the abstracts…", 0.0), format_check_html([])
        papers: list[PaperStance] = []
        stop = Stop()
        with self._checks_lock:
            self._checks[session] = stop
        try:
            events = self.assistant.check_stream(claim, k=int(k) if k else None, stop=stop)
            for event in events:
                took = time.monotonic() - t0
                if stop.is_set():
                    stopped = f"Stopped after {format_count(len(papers), 'paper')}: no verdict."
                    yield format_check_status_html(stopped), gr.skip()
                    return
                match event:
                    case QueuedEvent(position=position, waited=waited):
                        yield format_waiting_html(position, waited), gr.skip()
                    case StatusEvent(sources=sources):
                        found = f"Judging paper 1 of {len(sources)}…" if sources else "No paper found."
                        yield format_check_status_html(found, took), gr.skip()
                    case StanceEvent(paper=paper, checked=checked, total=total):
                        papers.append(paper)
                        doing = f"Judging paper {checked + 1} of {total}…" if checked < total else "Weighing…"
                        yield format_check_status_html(doing, took), format_check_html(papers)
                    case CheckEvent(check=check):
                        done = f"Checked {format_count(check.checked, 'paper')} in {took:.1f} s."
                        yield format_check_status_html(done), format_check_html(papers, check)
                    case ErrorEvent(error=error):
                        yield format_check_status_html(str(error), error=True), gr.skip()
        except RagError as e:  # refused before any work (empty index, too long a claim)
            yield format_check_status_html(str(e), error=True), format_check_html(papers)
        finally:
            self._forget(self._checks, session, stop)
            stop.set()  # a no-op once the stream has ended; frees the slot if Gradio dropped this generator early

    def stop_check(self, request: gr.Request | None = None) -> Any:
        """Stop: the running check of this browser lets go of the LLM at once (the next question in line starts);
        it ends once the paper being judged is done, its papers staying shown."""
        with self._checks_lock:
            stop = self._checks.get(getattr(request, "session_hash", None))
        if stop is None:
            return gr.skip()
        stop.set()
        return format_check_status_html("Stopped: the model is free for the next question; no verdict.")

    def check(self, claim: str, k: int = 0) -> dict[str, Any]:
        """Check ``claim`` against the ``k`` most relevant abstracts (0: the configured number): the verdict,
        the counts, and each paper's stance, probability and deciding quote (``rag check --json``)."""
        try:
            return self.assistant.check(claim, k=int(k) or None).summary()
        except RagError as e:
            raise gr.Error(str(e)) from e

    def refresh_table_filters(self) -> tuple[Any, Any]:
        v, y = filter_choices(self.assistant.papers())
        return gr.update(choices=v), gr.update(choices=y)

    def run_example(
        self,
        ex: gr.SelectData,
        _question: str,
        messages: list[dict[str, Any]],
        history: list[tuple[str, str]],
        answers: dict[int, dict[str, Any]],
        k: float,
        hybrid: bool,
        venue: str,
        year: str,
        mode: str,
        temperature: float,
        kind: str = "auto",
        request: gr.Request | None = None,
    ) -> Iterator[tuple[Any, ...]]:
        yield from self.respond(
            ex.value["text"], messages, history, answers, k, hybrid, venue, year, mode, temperature, kind, request
        )

    def ask(
        self,
        question: str,
        k: int = 0,
        hybrid: bool = True,
        venue: str = "",
        year: str = "",
        mode: str = "",
        temperature: float = -1.0,
        history: list[list[str]] | None = None,
        kind: str = "auto",
    ) -> dict[str, Any]:
        """Answer ``question`` from the indexed abstracts: the answer, its citations and sources (Answer JSON).
        ``temperature`` < 0 keeps the configured one. ``history`` is the conversation so far,
        ``[["user", "..."], ["assistant", "..."]]``; the endpoint keeps no state between calls.
        ``kind``: auto (from the question's form), lookup, list, compare or yesno."""
        if any(not isinstance(t, (list, tuple)) or len(t) != 2 for t in history or []):
            raise gr.Error('history must be a list of [role, text] pairs, e.g. [["user", "What is WildBox?"]].')
        turns = [(str(t[0]), str(t[1])) for t in history or []]
        try:
            answer = self.assistant.ask(
                question,
                history=turns or None,
                k=int(k) or None,
                filters=parse_filters(venue, year) or None,
                mode="extractive" if mode == "extractive" else ("llm" if mode == "llm" else None),
                retrieval_mode=_retrieval_mode(self.assistant, hybrid),
                temperature=None if temperature is None or temperature < 0 else float(temperature),
                kind=parse_kind(kind),
            )
        except RagError as e:
            raise gr.Error(str(e)) from e
        return answer.to_json()

    def table(self, attributes: str, query: str = "", venue: str = "", year: str = "", k: int = 0) -> dict[str, Any]:
        """A paper x attribute table (``attributes``: "task, dataset, metric"): one row per paper, each value
        with the sentence of the abstract that states it, null when none does (Table JSON)."""
        try:
            result = self.assistant.table(
                attributes, query=query or None, where=parse_filters(venue, year) or None, k=int(k) or None
            )
        except RagError as e:
            raise gr.Error(str(e)) from e
        return result.to_json()
