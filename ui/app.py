"""The Gradio web UI: chat with streamed, verified answers; clickable citations; sources; paper x attribute
tables; claim checks; corpus upload.

``build_app(assistant)`` builds the :class:`gradio.Blocks` without serving it (tests drive it directly);
``launch(...)`` serves it. The parts: :mod:`rag.ui.layout` (the component tree), :mod:`rag.ui.handlers`
(the event callbacks) and :mod:`rag.ui.rendering` (HTML of answers, sources and tables; every piece of abstract
text, title, question and model output is escaped there before it becomes HTML). This module wires them.

Stable API for ``gradio_client``: ``/ask`` (question, k, hybrid, venue, year, mode, temperature, history, kind)
-> ``Answer.to_json()``; ``/table`` (attributes, query, venue, year, k) -> ``Table.to_json()``;
``/check`` (claim, k) -> ``ClaimCheck.summary()`` (``rag check --json``).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from rag import Assistant, RagError, check_bind
from rag.ui.handlers import Handlers, browser_secret, filter_choices
from rag.ui.layout import COPY_JS, THEME, Layout, build_layout
from rag.ui.rendering import (
    format_abstract_html,
    format_answer_html,
    format_backend_markdown,
    format_copy_text,
    format_list_html,
    format_message_html,
    format_papers_html,
    format_sources_html,
    format_table_html,
    format_verdict_html,
    format_waiting_html,
)

# the renderers the tests and tools use, importable from here as before the split
__all__ = [
    "auth_pair",
    "build_app",
    "format_abstract_html",
    "format_answer_html",
    "format_copy_text",
    "format_list_html",
    "format_message_html",
    "format_papers_html",
    "format_sources_html",
    "format_table_html",
    "format_verdict_html",
    "format_waiting_html",
    "launch",
]


def _answer_workers(settings: Any) -> int:
    """Gradio workers for answers: every question the LLM line holds, plus 4 for extractive answers."""
    return int(settings.llm.max_concurrent + settings.llm.max_waiting + 4)


def build_app(assistant: Assistant) -> gr.Blocks:
    """The whole UI for ``assistant`` (not launched)."""
    settings = assistant.settings
    handlers = Handlers(assistant)
    try:
        papers = assistant.papers()
    except RagError:
        papers = []
    venues, years = filter_choices(papers)
    app = gr.Blocks(title="rag-abstracts: grounded answers over abstracts", analytics_enabled=False)
    with app:
        layout = build_layout(
            settings,
            papers=papers,
            venues=venues,
            years=years,
            backend=lambda: format_backend_markdown(assistant),
            secret=browser_secret(settings.conversations_dir()),
        )
        _wire_chat(app, layout, handlers, _answer_workers(settings))
        _wire_corpus_and_table(layout, handlers, _answer_workers(settings))
        _wire_check(layout, handlers, _answer_workers(settings))
    return app


def _wire_chat(app: gr.Blocks, ui: Layout, h: Handlers, workers: int) -> None:
    """The chat's events: asking (three ways), feedback, conversations, copying.

    ``workers`` is one limit for every way of asking (Gradio's own limit is per event): room for all who may
    wait for the LLM (Assistant.llm_queue bounds those and tells them their place) and a few extractive answers.
    """
    chat, knobs = ui.chat, ui.settings
    chat_inputs = [
        chat.question,
        chat.chatbot,
        ui.history_state,
        ui.answers_state,
        knobs.k,
        knobs.hybrid,
        knobs.venue,
        knobs.year,
        knobs.mode,
        knobs.temperature,
        knobs.kind,
    ]
    chat_outputs = [
        chat.chatbot,
        ui.history_state,
        ui.answers_state,
        ui.sources,
        chat.copy_text,
        chat.question,
        chat.feedback_note,
    ]
    # only the ways of asking write the note under the question box (its limit, or why a question was refused)
    ask_outputs = [*chat_outputs, chat.question_note]
    conv_outputs = [ui.conv_id, chat.conv_list, chat.export_md, chat.export_bib, chat.export_csv, chat.export_answer]
    view_outputs = [*chat_outputs, *conv_outputs]
    for trigger, fn in (
        (chat.question.submit, h.respond),
        (chat.ask_btn.click, h.respond),
        (chat.chatbot.example_select, h.run_example),
    ):
        trigger(
            fn,
            chat_inputs,
            ask_outputs,
            api_visibility="private",
            concurrency_id="answers",
            concurrency_limit=workers,
        ).then(h.save_conversation, [ui.answers_state, ui.conv_id], conv_outputs, api_visibility="private")
    # Stop frees the answer's LLM slot at once (the next question in line starts) and the chat says it stopped
    # (not Gradio's `cancels`, which marks every output of the cancelled event as an error)
    chat.stop_btn.click(h.stop_answer, None, None, api_visibility="private", concurrency_limit=None)
    chat.chatbot.like(h.on_feedback, [ui.answers_state], [chat.feedback_note], api_visibility="private")
    chat.clear_btn.click(h.clear_chat, None, view_outputs, api_visibility="private")
    chat.conv_open.click(h.open_conversation, [chat.conv_list], view_outputs, api_visibility="private")
    chat.conv_delete.click(h.delete_conversation, [chat.conv_list, ui.conv_id], view_outputs, api_visibility="private")
    app.load(h.restore, [ui.conv_id], view_outputs, api_visibility="private")
    chat.copy_btn.click(None, [chat.copy_text], None, js=COPY_JS)


def _wire_corpus_and_table(ui: Layout, h: Handlers, workers: int) -> None:
    """The Corpus tab (filter, upload), the Table tab (streamed, with Stop), the ``/ask`` and ``/table`` endpoints."""
    corpus, table, knobs = ui.corpus, ui.table, ui.settings
    corpus.paper_query.change(
        lambda q: format_papers_html(h.assistant.papers(), q),
        [corpus.paper_query],
        [corpus.papers_html],
        api_visibility="private",
    )
    corpus.ingest_btn.click(
        h.upload,
        [corpus.files, corpus.paper_query],
        [corpus.ingest_status, corpus.papers_html, knobs.venue, knobs.year],
        api_visibility="private",
    ).then(h.refresh_table_filters, None, [table.venue, table.year], api_visibility="private")
    table.button.click(
        h.make_table,
        [table.attributes, table.query, table.venue, table.year, table.k],
        [table.status, table.html, table.csv, table.md],
        api_visibility="private",
        concurrency_id="answers",
        concurrency_limit=workers,
    )
    # Stop, as on the Check tab: the table's stream is closed after the paper being read, freeing the LLM's slot
    table.stop.click(h.stop_table, None, [table.status], api_visibility="private", concurrency_limit=None)
    gr.api(h.ask, api_name="ask", concurrency_id="answers", concurrency_limit=workers)
    gr.api(h.table, api_name="table", concurrency_id="answers", concurrency_limit=workers)


def _wire_check(ui: Layout, h: Handlers, workers: int) -> None:
    """The "Check a claim" tab (the box, Enter or the button; Stop) and the ``/check`` API endpoint."""
    check = ui.check
    for trigger in (check.claim.submit, check.button.click):
        trigger(
            h.check_claim,
            [check.claim, check.k],
            [check.status, check.result],
            api_visibility="private",
            concurrency_id="answers",
            concurrency_limit=workers,
        )
    # Stop ends the running check after the paper being judged: its stream is closed, which frees the LLM's slot
    # (not Gradio's `cancels`, which marks every output of the cancelled event as an error)
    check.stop.click(h.stop_check, None, [check.status], api_visibility="private", concurrency_limit=None)
    gr.api(h.check, api_name="check", concurrency_id="answers", concurrency_limit=workers)


# ---------------------------------------------------------------------------------------------- serving
def auth_pair(assistant: Assistant) -> tuple[str, str] | None:
    secret = assistant.settings.ui.auth
    if secret is None:
        return None
    user, _, password = secret.get_secret_value().partition(":")
    return user, password


def launch(
    assistant: Assistant, host: str | None = None, port: int | None = None, *, block: bool = True, quiet: bool = False
) -> gr.Blocks:
    """Serve the UI (default host/port from ``settings.ui``). ``block=False`` returns once it is up."""
    ui = assistant.settings.ui
    host = host or ui.host
    port = port or ui.port
    auth = auth_pair(assistant)
    check_bind(assistant.settings, host, "ui")
    app = build_app(assistant)
    app.queue(default_concurrency_limit=2)
    app.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        prevent_thread_lock=not block,
        quiet=quiet,
        footer_links=["api"],
        show_error=True,
        theme=THEME,
    )
    return app
