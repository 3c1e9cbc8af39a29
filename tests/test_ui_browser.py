"""The UI in a real browser: Playwright drives Debian's chromium (/usr/bin/chromium, never a downloaded
browser) against the app served on 127.0.0.1.

One server for the module, on the seed abstracts plus an abstract carrying an XSS payload. Its default
answer mode is *extractive* (cited sentences, no LLM), which the upload and XSS tests use; only
``test_seed_question_streams_a_cited_answer`` switches the settings to the real embedded LLM
(Qwen2.5-Coder-1.5B via llama.cpp; 20-60 s per answer on a loaded 2-core machine).
Screenshots (and the downloaded Markdown export) go to ``test-artifacts/`` (gitignored; CI keeps them as
artefacts). Each page starts with the browser's localStorage cleared: the UI reopens the conversation a
browser had open, which ``test_conversation_survives_a_reload_and_reopens_from_the_list`` relies on.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag import Assistant, Settings
from tests.conftest import ROOT, free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts"
XSS = {
    "id": "xss-1",
    "title": "Quokkanet <img src=x onerror=\"window.__xss='title'\">",
    "abstract": "We present Quokkanet, a detector of marsupials in camera-trap images. "
    "<script>window.__xss='script'</script> Quokkanet reaches 91.2% recall on the Quokka-9 benchmark. "
    "<img src=x onerror=\"window.__xss='img'; alert('xss')\"> Code is public.",
    "venue": "ICML",
    "year": 2025,
}

if not Path(CHROMIUM).exists():  # `make test` installs it; say so rather than fail obscurely
    pytest.skip(f"{CHROMIUM} missing: apt-get install -y chromium", allow_module_level=True)


def serve(
    data_dir: Path,
    embeddings: Any,
    corpus: list[Path],
    chat_model: Any = None,
    mode: str = "extractive",
    llm: dict[str, Any] | None = None,
    check: dict[str, Any] | None = None,
) -> Iterator[str]:
    """The UI on ``corpus`` (extractive answers by default), served on 127.0.0.1 while the generator lives."""
    from rag.ui.app import launch

    settings = Settings(data_dir=data_dir, answer={"mode": mode}, llm=llm or {}, check=check or {})
    assistant = Assistant(settings, embeddings=embeddings, chat_model=chat_model)
    assistant.ingest(corpus)
    port = free_port()
    app = launch(assistant, "127.0.0.1", port, block=False, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    app.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    yield from serve_seed_plus(tmp_path_factory.mktemp("ui-browser"), XSS, minilm, embedding_cache)


def serve_seed_plus(tmp: Path, record: dict[str, Any], minilm: Any, embedding_cache: Any) -> Iterator[str]:
    """The UI (extractive answers) on the seed abstracts plus ``record``."""
    from rag.models.embedding import CachedEmbeddings

    (tmp / "extra.jsonl").write_text(json.dumps(record) + "\n")
    corpus = [Assistant.bundled_corpus(), tmp / "extra.jsonl"]
    yield from serve(tmp / "data", CachedEmbeddings(minilm, embedding_cache), corpus)


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=ARGS, headless=True, viewport={"width": 1400, "height": 1000}
        )
        yield ctx
        ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


def open_page(browser_context: Any, url: str) -> Iterator[Any]:
    """A page on ``url`` that records dialogs (``page.dialogs``) and requests (``page.requested``)."""
    page = browser_context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.requested = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    page.on("request", lambda r: page.requested.append(r.url))  # type: ignore[attr-defined]
    page.goto(url)
    page.wait_for_selector("#rag-question textarea", timeout=60_000)
    # the browser remembers the open conversation (localStorage) and reopens it on load: start each test afresh
    page.evaluate("() => localStorage.clear()")
    page.reload()
    page.wait_for_selector("#rag-question textarea", timeout=60_000)
    yield page
    page.close()


@pytest.fixture
def page(browser_context: Any, server: str) -> Iterator[Any]:
    yield from open_page(browser_context, server)


def ask(page: Any, question: str) -> None:
    page.locator("#rag-question textarea").fill(question)
    page.click("#rag-ask")


def upload(page: Any, path: Path, attempts: int = 3) -> None:
    """Give ``path`` to the Corpus tab's upload box, as a user picking it, and wait until the box shows its name.
    The tab mounts its components when first shown; in two full runs on loaded machines the name never appeared in
    60 s, while the same test alone passes in 15 s: most likely the file was given before the box listened, and
    was dropped without a word. The user's remedy is to pick the file again, and so is this one's."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.locator("#rag-upload").wait_for(state="visible", timeout=30_000)
    for attempt in range(1, attempts + 1):
        page.locator("#rag-upload input[type=file]").set_input_files(str(path))
        try:
            page.wait_for_selector(f"#rag-upload :text('{path.name}')", timeout=20_000)
            return
        except PlaywrightTimeout:
            if attempt == attempts:
                raise


def bot_text(page: Any) -> str:
    bots = page.locator("#rag-chat [data-testid='bot']")
    return str(bots.last.inner_text()) if bots.count() else ""


def test_seed_question_streams_a_cited_answer(page: Any) -> None:
    """Real embedded LLM (answer mode switched to 'llm' in the settings): streamed answer, a citation
    marker, and clicking it shows the highlighted supporting sentence in the sources panel."""
    page.click("#rag-settings button, #rag-settings .label-wrap")
    page.get_by_label("llm", exact=True).check()
    t0 = time.perf_counter()
    ask(page, "How many 3D bounding box annotations does WildBox have?")
    page.wait_for_function(
        """() => { const b = document.querySelectorAll("#rag-chat [data-testid='bot']");
                   if (!b.length) return false; const t = b[b.length - 1].innerText.trim();
                   return t.length > 0 && !/^(Searching|Writing|Reading)/.test(t); }""",
        timeout=300_000,
    )
    first_token = time.perf_counter() - t0
    marker = page.locator("#rag-chat a.rag-cite").first
    marker.wait_for(timeout=300_000)
    page.wait_for_selector("#rag-sources mark.rag-support", timeout=60_000)
    total = time.perf_counter() - t0
    (ARTIFACTS / "ui-llm-timing.json").write_text(json.dumps({"first_token_s": first_token, "answer_s": total}))
    assert "237,505" in bot_text(page) or "237505" in bot_text(page)
    marker.click()
    active = page.locator("#rag-sources .rag-source.rag-active")
    assert active.count() == 1
    mark = active.locator("mark.rag-support").first
    assert mark.is_visible() and mark.evaluate(
        "e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }"
    )
    assert "WildBox" in active.inner_text()
    page.screenshot(path=str(ARTIFACTS / "ui-seed-answer.png"), full_page=True)


def test_uploaded_jsonl_can_be_asked_about(page: Any, tmp_path: Path) -> None:
    """Extractive mode (no LLM): upload a JSONL in the Corpus tab, then ask about it."""
    f = tmp_path / "new_papers.jsonl"
    f.write_text(
        json.dumps(
            {
                "id": "zx-1",
                "title": "Zorblax: Counting Penguins from Orbit",
                "venue": "CVPR",
                "year": 2026,
                "abstract": "We introduce Zorblax, a satellite dataset of 48,211 annotated emperor penguin colonies. "
                "A simple density model counts penguins within 4% of ground counts.",
            }
        )
        + "\n"
    )
    page.get_by_role("tab", name="Corpus").click()
    upload(page, f)
    page.click("#rag-ingest")
    page.wait_for_selector("#rag-ingest-status :text('1 added')", timeout=120_000)
    page.locator("#rag-paper-query textarea, #rag-paper-query input").first.fill("zorblax")
    page.wait_for_selector("#rag-papers :text('1 of 21 papers')", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "ui-upload.png"), full_page=True)
    page.get_by_role("tab", name="Chat").click()
    ask(page, "How many emperor penguin colonies does Zorblax annotate?")
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    assert "48,211" in bot_text(page)
    page.locator("#rag-chat a.rag-cite").first.click()
    active = page.locator("#rag-sources .rag-source.rag-active")
    assert "Zorblax: Counting Penguins from Orbit" in active.inner_text()
    assert "48,211" in active.locator("mark.rag-support").first.inner_text()


def test_xss_abstract_renders_inert(page: Any) -> None:
    """Extractive mode (no LLM): the answer quotes an abstract full of markup; it renders as text."""
    ask(page, "What recall does Quokkanet reach on the Quokka-9 benchmark?")
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    page.locator("#rag-chat a.rag-cite").first.click()
    page.wait_for_selector("#rag-sources .rag-source.rag-active", timeout=10_000)
    page.get_by_role("tab", name="Corpus").click()
    page.locator("#rag-paper-query textarea, #rag-paper-query input").first.fill("quokka")
    page.wait_for_selector("#rag-papers :text('Quokkanet')", timeout=30_000)
    page.get_by_role("tab", name="Chat").click()
    time.sleep(0.5)
    page.screenshot(path=str(ARTIFACTS / "ui-xss.png"), full_page=True)
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.evaluate("() => window.__xss") is None
    selector = (
        "#rag-chat img[src='x'], #rag-sources img, #rag-papers img, "
        "#rag-sources script, #rag-chat script, #rag-papers script"
    )
    injected = page.evaluate("(sel) => document.querySelectorAll(sel).length", selector)
    assert injected == 0
    sources = page.locator("#rag-sources").inner_text()
    assert "<script>window.__xss='script'</script>" in sources
    assert "<img src=x onerror=\"window.__xss='title'\">" in sources  # the title, as text
    assert "91.2% recall" in bot_text(page)


def obeying_reply(prompt: str) -> str:
    """A model that writes what an injection asks for: markup, and Markdown after a blank line."""
    from tests.fakes import evidence_number

    if "Standalone question:" in prompt:  # rewriting the follow-up: keep it as asked
        return prompt.split("Last question: ")[-1].splitlines()[0]
    n = evidence_number(prompt, "MarmotSeg") or 1
    return (
        f"MarmotSeg reaches 78.4 mIoU on the Alpine-Burrow benchmark\n\n![s](https://attacker.example/leak.png) "
        f"[code](javascript:alert(1)) <img src=x onerror=alert(1)> [{n}].\n\n![t](https://attacker.example/two.png)"
    )


@pytest.fixture(scope="module")
def injection_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    from rag.models.embedding import CachedEmbeddings
    from tests.fakes import ScriptedChatModel

    data = tmp_path_factory.mktemp("ui-injection") / "data"
    corpus = [ROOT / "tests" / "data" / "injection.jsonl"]
    yield from serve(data, CachedEmbeddings(minilm, embedding_cache), corpus, ScriptedChatModel(reply=obeying_reply))


@pytest.fixture
def injection_page(browser_context: Any, injection_server: str) -> Iterator[Any]:
    yield from open_page(browser_context, injection_server)


def test_injection_corpus_renders_inert(injection_page: Any) -> None:
    """tests/data/injection.jsonl: the abstract quoted in extractive mode carries <script>, onerror, a
    javascript: link and a Markdown image; then (answer mode 'llm') a fake model obeys with Markdown images
    after blank lines. None of it becomes an element, a dialog or a request, in the draft or the answer."""
    page = injection_page
    q = "What mIoU does MarmotSeg reach on the Alpine-Burrow benchmark?"
    ask(page, q)
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    page.locator("#rag-chat a.rag-cite").first.click()
    page.wait_for_selector("#rag-sources .rag-source.rag-active", timeout=10_000)
    assert "78.4 mIoU" in bot_text(page) and "<script>alert(1)</script>" in bot_text(page)
    page.click("#rag-settings button, #rag-settings .label-wrap")
    page.get_by_label("llm", exact=True).check()
    ask(page, q)
    page.locator("#rag-chat a.rag-cite[href^='#rag-src-2-']").first.wait_for(timeout=120_000)
    time.sleep(0.5)
    page.screenshot(path=str(ARTIFACTS / "ui-injection.png"), full_page=True)
    assert "![s](https://attacker.example/leak.png)" in bot_text(page)  # shown as text
    assert page.dialogs == []  # type: ignore[attr-defined]
    injected = (
        "#rag-chat img, #rag-sources img, #rag-chat script, #rag-sources script, a[href^='javascript' i], [onerror]"
    )
    assert page.evaluate("(sel) => document.querySelectorAll(sel).length", injected) == 0
    assert not [u for u in page.requested if "attacker.example" in u]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def paths_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    """The seed abstracts and the XSS one, answered in 'llm' mode by a fake that serves the list judge and
    fills table rows from the abstract it is shown (tests/fakes.py PathsReply)."""
    from rag.models.embedding import CachedEmbeddings
    from tests.fakes import PathsReply, ScriptedChatModel, asked_attribute, table_cell_prompt

    tmp = tmp_path_factory.mktemp("ui-paths")
    (tmp / "xss.jsonl").write_text(json.dumps(XSS) + "\n")
    paths = PathsReply(judge=r"(?i)marsupial")

    def reply(prompt: str) -> str:  # Quokkanet's task as its abstract states it (its own name is no task)
        if asked_attribute(prompt, ["task"]) and "Quokkanet" in str(table_cell_prompt(prompt)):
            return "a detector of marsupials in camera-trap images"
        return paths(prompt)

    fake = ScriptedChatModel(reply=reply)
    corpus = [Assistant.bundled_corpus(), tmp / "xss.jsonl"]
    yield from serve(tmp / "data", CachedEmbeddings(minilm, embedding_cache), corpus, fake, mode="llm")


@pytest.fixture
def paths_page(browser_context: Any, paths_server: str) -> Iterator[Any]:
    yield from open_page(browser_context, paths_server)


def test_list_answer_and_table_tab_render_inert_and_download(paths_page: Any) -> None:
    """A list question whose one confirmed paper has markup in its title and abstract; then the Table tab:
    a value opens to its quote, markup stays text, and the CSV and Markdown downloads hold the table."""
    page = paths_page
    ask(page, "Which papers detect marsupials?")
    page.locator("#rag-chat ul.rag-items a.rag-cite").first.wait_for(timeout=120_000)
    assert "1 paper matches (" in bot_text(page) and "Quokkanet <img src=x" in bot_text(page)
    page.screenshot(path=str(ARTIFACTS / "ui-list.png"), full_page=True)
    page.get_by_role("tab", name="Table").click()
    page.locator("#rag-table-attributes textarea").fill("task, metric")
    page.locator("#rag-table-query textarea").fill("marsupials camera-trap Quokka-9")
    page.click("#rag-table-make")
    page.wait_for_selector("#rag-table table.rag-table", timeout=120_000)
    first = page.locator("#rag-table details.rag-cell").first
    first.locator("summary").click()
    quote = first.locator("blockquote")
    assert quote.is_visible() and "We present Quokkanet" in quote.inner_text()
    table_text = page.locator("#rag-table").inner_text()
    assert "<script>window.__xss='script'</script>" in table_text and "not stated" in table_text
    page.screenshot(path=str(ARTIFACTS / "ui-table.png"), full_page=True)
    with page.expect_download() as csv_download:
        page.click("#rag-table-csv")
    csv_text = Path(csv_download.value.path()).read_text(encoding="utf-8")
    assert csv_text.startswith("n,paper_id,title,task,task (quote),metric,metric (quote)")
    with page.expect_download() as md_download:
        page.click("#rag-table-md")
    assert "References:" in Path(md_download.value.path()).read_text(encoding="utf-8")
    assert page.dialogs == [] and page.evaluate("() => window.__xss") is None  # type: ignore[attr-defined]
    injected = "#rag-chat img[src='x'], #rag-table img, #rag-chat script, #rag-table script, [onerror]"
    assert page.evaluate("(sel) => document.querySelectorAll(sel).length", injected) == 0


# ------------------------------------------------------------------ readable math, saved conversations, exports
MATH = {
    "id": "math-1",
    "title": "WombatNet: $\\mathcal{O}(n^2)$ counting <img src=x onerror=\"window.__xss='mtitle'\">",
    "abstract": "We present WombatNet, a counter of wombats in thermal drone footage. "
    "WombatNet reaches 93.1$\\pm$0.4\\% recall on the Burrow-7 benchmark at $\\mathcal{O}(n^2)$ cost, "
    "with $\\alpha_{t+1} \\leq 0.5$ and \\emph{no} labels. "
    "Its report links $\\href{javascript:window.__xss='href'}{here}$ and "
    "$<img src=x onerror=\"window.__xss='math'\">$ for reproducibility.",
    "venue": "ICCV",
    "year": 2025,
}


@pytest.fixture(scope="module")
def reader_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    """Extractive answers (no LLM) over the seed abstracts plus one whose math carries markup."""
    yield from serve_seed_plus(tmp_path_factory.mktemp("ui-reader"), MATH, minilm, embedding_cache)


@pytest.fixture
def reader_page(browser_context: Any, reader_server: str) -> Iterator[Any]:
    yield from open_page(browser_context, reader_server)


def injected_count(page: Any) -> int:
    sel = "#rag-chat img, #rag-sources img, #rag-chat script, #rag-sources script, a[href^='javascript' i], [onerror]"
    return int(page.evaluate("(sel) => document.querySelectorAll(sel).length", sel))


def test_math_renders_in_the_answer_and_the_source_card_and_stays_inert(reader_page: Any) -> None:
    page = reader_page
    ask(page, "What recall does WombatNet reach on the Burrow-7 benchmark?")
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    answer = page.locator("#rag-chat [data-testid='bot']").last
    assert "93.1±0.4% recall" in answer.inner_text() and "\\pm" not in answer.inner_text()
    assert answer.locator(".rag-math").count() >= 1
    assert answer.locator(".rag-math sup").first.inner_text() == "2"  # O(n²), set as a superscript
    page.locator("#rag-chat a.rag-cite").first.click()
    card = page.locator("#rag-sources .rag-source.rag-active")
    marks = card.locator("mark.rag-support").all_inner_texts()
    assert any("93.1±0.4% recall" in m and m.endswith("labels.") for m in marks)  # the whole rendered sentence
    assert card.locator(".rag-math sub").first.inner_text() == "t+1"
    assert card.locator("em").first.inner_text() == "no"
    assert card.locator(".rag-rel").inner_text().startswith("cited · support ")  # what cited it, not the cosine
    assert "supports the answer's sentence" in str(card.locator(".rag-rel").get_attribute("title"))
    text = card.inner_text()
    assert "<img src=x onerror=" in text and "hrefjavascript" in text  # shown as text
    time.sleep(0.5)
    page.screenshot(path=str(ARTIFACTS / "ui-math.png"), full_page=True)
    assert page.dialogs == [] and page.evaluate("() => window.__xss") is None  # type: ignore[attr-defined]
    assert injected_count(page) == 0


def test_conversation_survives_a_reload_and_reopens_from_the_list(reader_page: Any) -> None:
    page = reader_page
    ask(page, "How many 3D bounding box annotations does WildBox have?")
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    page.wait_for_selector("#rag-export-md", state="visible", timeout=30_000)  # saved: the downloads appear
    page.reload()
    page.wait_for_selector("#rag-chat a.rag-cite", timeout=60_000)
    assert "237,505" in bot_text(page)
    assert page.locator("#rag-sources mark.rag-support").count() >= 1  # the sources came back with it
    page.screenshot(path=str(ARTIFACTS / "ui-conversation-reloaded.png"), full_page=True)
    page.click("#rag-clear")
    page.wait_for_function("() => !document.querySelector('#rag-chat a.rag-cite')", timeout=30_000)
    page.locator("#rag-conversations input").click()
    page.get_by_role("option", name=re.compile("How many 3D bounding box")).first.click()
    page.click("#rag-conv-open")
    page.wait_for_selector("#rag-chat a.rag-cite", timeout=30_000)
    assert "237,505" in bot_text(page)


def saved(page: Any, questions: int) -> None:
    """Wait until the conversation is saved with ``questions`` questions (the list shows "... · n Q")."""
    page.wait_for_function(
        "(n) => { const b = document.querySelector('#rag-conversations input');"
        " return b && b.value.endsWith(' ' + n + ' Q'); }",
        arg=questions,
        timeout=30_000,
    )


def two_saved_answers(page: Any, first: str, second: str) -> None:
    """Ask ``first`` then ``second``, each time until the answer is cited and the conversation saved."""
    ask(page, first)
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    saved(page, 1)
    ask(page, second)
    page.locator("#rag-chat a.rag-cite[href^='#rag-src-2-']").first.wait_for(timeout=120_000)
    saved(page, 2)


def test_downloaded_export_has_references_that_resolve(reader_page: Any) -> None:
    page = reader_page
    two_saved_answers(
        page,
        "What recall does WombatNet reach on the Burrow-7 benchmark?",
        "How many 3D bounding box annotations does WildBox have?",
    )
    with page.expect_download() as md_download:
        page.click("#rag-export-md")
    md = Path(md_download.value.path()).read_text(encoding="utf-8")
    (ARTIFACTS / "ui-export.md").write_text(md, encoding="utf-8")
    body, refs = md.split("## References")
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    entries = dict(re.findall(r'<a id="ref-(\d+)"></a>\[\d+\] ([^\n]*)', refs))
    assert markers and markers == {int(n) for n in entries}  # every marker has its entry, and no entry is unused
    assert any("WombatNet" in e and "ICCV, 2025" in e and "`math-1`" in e for e in entries.values())
    assert any(e.startswith("WildBox") for e in entries.values())
    assert "93.1±0.4% recall" in md and "\\<img src=x" in md  # readable, and markup escaped
    with page.expect_download() as bib_download:
        page.click("#rag-export-bib")
    bib = Path(bib_download.value.path()).read_text(encoding="utf-8")
    assert bib.count("@") == len(entries) and "booktitle = {ICCV}" in bib
    with page.expect_download() as csv_download:
        page.click("#rag-export-csv")
    rows = Path(csv_download.value.path()).read_text(encoding="utf-8").splitlines()
    assert rows[0] == "n,title,paper_id,venue,year,url,quote" and any(",math-1,ICCV,2025," in r for r in rows)
    with page.expect_download() as answer_download:
        page.click("#rag-export-answer")
    last = Path(answer_download.value.path()).read_text(encoding="utf-8")
    assert last.startswith("# How many 3D bounding box") and "What recall does" not in last  # the last answer alone
    assert re.search(r'<a id="ref-1"></a>\[1\] WildBox', last)
    page.screenshot(path=str(ARTIFACTS / "ui-export.png"), full_page=True)


# ------------------------------------------------------------------ limits and offline looks (issue 30)
WIDE = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}
# the controls that must never overlap one another (the chat's scroll area included: messages and their
# icons scrolled up must not reach the chat's label or its top icons)
CONTROLS = [
    "#rag-chat > .wrapper > label",
    "#rag-chat .top-panel",
    "#rag-chat .bubble-wrap",
    "#rag-question textarea",
    "#rag-ask",
    "#rag-question-note p",
    "#rag-copy",
    "#rag-clear",
    "#rag-export-md",
    "#rag-export-bib",
    "#rag-export-csv",
    "#rag-export-answer",
    "#rag-conversations",
    "#rag-conv-open",
    "#rag-conv-delete",
    "[role=tab]",
]
# the other tabs: every button, field and label (the upload's label floats over its own drop zone by design)
TAB_CONTROLS = [
    "button:not(#rag-upload button)",
    "input:not([type=file]):not([type=range])",
    "textarea",
    "[role=tab]",
    "label:not(#rag-upload label)",
]
OVERLAPS = """(sels) => {
  const boxes = [];
  for (const sel of sels) for (const e of document.querySelectorAll(sel)) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && e.checkVisibility()) boxes.push({sel: sel, e: e, r: r});
  }
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    if (boxes[i].e.contains(boxes[j].e) || boxes[j].e.contains(boxes[i].e)) continue;  // one holds the other
    const a = boxes[i].r, b = boxes[j].r;
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 1 && h > 1) hits.push(boxes[i].sel + " over " + boxes[j].sel);
  }
  return {hits: hits, found: boxes.length};
}"""
# where a saved conversation's name may run: the input's text area must end before the dropdown's arrow
NAME_ROOM = """() => {
  const input = document.querySelector("#rag-conversations input");
  const arrow = document.querySelector("#rag-conversations .icon-wrap");
  const textRight = input.getBoundingClientRect().right - parseFloat(getComputedStyle(input).paddingRight);
  return {textRight: textRight, arrowLeft: arrow.getBoundingClientRect().left,
          clipped: input.scrollWidth > input.clientWidth, ellipsis: getComputedStyle(input).textOverflow};
}"""
# a card's first highlighted sentence: where it sits in its abstract's scrolling box
MARK_IN_BOX = """(card) => {
  const box = card.querySelector(".rag-abstract"), mark = box.querySelector("mark");
  const b = box.getBoundingClientRect(), m = mark.getBoundingClientRect();
  return {depth: m.top - b.top + box.scrollTop, boxHeight: box.clientHeight,
          inBox: m.top >= b.top - 1 && m.bottom <= b.bottom + 1,
          inViewport: m.top >= 0 && m.bottom <= window.innerHeight};
}"""


def own_host_only(page: Any) -> None:
    """Every request the page made went to the UI's own server."""
    from urllib.parse import urlsplit

    hosts = {urlsplit(u).hostname for u in page.requested if not u.startswith(("data:", "blob:"))}
    assert hosts and hosts <= {"127.0.0.1", "localhost"}, hosts


def test_empty_and_over_long_questions_get_a_one_line_message(page: Any) -> None:
    """Extractive mode: nothing is asked; the note under the box says why, the long question is not cut."""
    note = page.locator("#rag-question-note")
    assert "At most 2,000 characters; a longer question is refused, never shortened." in note.inner_text()
    ask(page, "   ")
    page.wait_for_selector("#rag-question-note .rag-error", timeout=30_000)
    assert note.inner_text().strip().splitlines() == ["Type a question first: the box is empty."]
    page.screenshot(path=str(ARTIFACTS / "ui-limit-empty.png"))
    question = " ".join(["Which papers detect wildlife from drone video?"] * 110)
    box = page.locator("#rag-question textarea")
    box.fill(question)
    assert box.input_value() == question  # the browser cuts nothing
    page.wait_for_selector("#rag-question-note .rag-limit.rag-over", timeout=10_000)
    assert f"{len(question):,} / 2,000 characters" in note.inner_text()
    page.click("#rag-ask")
    page.wait_for_selector("#rag-question-note :text('the limit is 2000')", timeout=60_000)
    page.wait_for_selector("#rag-question-note .rag-limit.rag-over", timeout=10_000)  # the count, filled in again
    assert note.inner_text().strip().splitlines() == [
        f"{len(question):,} / 2,000 characters · The question has {len(question)} characters; "
        "the limit is 2000 (RAG_ANSWER__MAX_QUESTION_CHARS). Shorten it and ask again."
    ]
    assert box.input_value() == question  # given back whole, to be shortened
    assert page.locator("#rag-chat [data-testid='user'], #rag-chat [data-testid='bot']").count() == 0
    note.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "ui-limit-too-long.png"))
    own_host_only(page)


def test_page_uses_the_system_fonts_and_asks_no_other_host(page: Any) -> None:
    """Extractive mode: an answer, a citation opened, every tab shown; no font file and no other host."""
    ask(page, "How many 3D bounding box annotations does WildBox have?")
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    page.locator("#rag-chat a.rag-cite").first.click()
    for tab in ("Table", "Corpus", "Chat"):
        page.get_by_role("tab", name=tab).click()
        time.sleep(0.3)
    fonts = [u for u in page.requested if re.search(r"\.(woff2?|ttf|otf)(\?|$)|fonts\.g", u)]  # type: ignore[attr-defined]
    assert fonts == []
    families = page.evaluate(
        "() => ['.gradio-container', '#rag-ask', '#rag-chat .message', '#rag-sources .rag-source']"
        ".map((s) => getComputedStyle(document.querySelector(s)).fontFamily)"
    )
    assert all(f.startswith("system-ui") for f in families), families
    page.screenshot(path=str(ARTIFACTS / "ui-system-fonts.png"))
    own_host_only(page)


def test_no_controls_overlap_wide_or_on_a_phone(page: Any) -> None:
    """Extractive mode: two answers (the chat scrolls), a saved conversation with a long name; at
    1400x1000 and at 390 px wide, no two controls overlap and the name ends before the dropdown arrow."""
    two_saved_answers(
        page,
        "How many 3D bounding box annotations does WildBox have in its drone video of the African savanna?",
        "What does MaskGen do for 3D biomedical image segmentation?",
    )
    for name, size in (("wide", WIDE), ("phone", PHONE)):
        page.set_viewport_size(size)
        time.sleep(0.5)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.locator("#rag-chat").scroll_into_view_if_needed()
        page.evaluate("() => { const w = document.querySelector('#rag-chat .bubble-wrap'); w.scrollTop = 120; }")
        time.sleep(0.3)
        found = page.evaluate(OVERLAPS, CONTROLS)
        assert found["hits"] == [] and found["found"] >= 14, (name, found)
        page.screenshot(path=str(ARTIFACTS / f"ui-layout-{name}-chat.png"))
        room = page.evaluate(NAME_ROOM)
        assert room["textRight"] <= room["arrowLeft"] + 1 and room["ellipsis"] == "ellipsis", (name, room)
        page.locator("#rag-conversations").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"ui-layout-{name}-conversations.png"))
        for tab in ("Check a claim", "Table", "Corpus"):
            page.get_by_role("tab", name=tab).click()
            time.sleep(0.5)
            found = page.evaluate(OVERLAPS, TAB_CONTROLS)
            assert found["hits"] == [] and found["found"] >= 10, (name, tab, found)
            assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
            shot = tab.split()[0].lower()
            page.screenshot(path=str(ARTIFACTS / f"ui-layout-{name}-{shot}.png"), full_page=True)
        page.get_by_role("tab", name="Chat").click()
    page.set_viewport_size(WIDE)


def test_source_card_shows_its_cited_sentence_when_it_opens(page: Any) -> None:
    """Extractive mode: the cited sentence sits deep in WildBox's long abstract; the card's abstract is
    scrolled to it when the sources render, and again when [1] is clicked (wide and phone)."""
    ask(page, "What does fine-tuning on WildBox recover performance to?")
    page.locator("#rag-chat a.rag-cite").first.wait_for(timeout=120_000)
    card = page.locator("#rag-sources .rag-source").first
    page.wait_for_function(
        "() => { const b = document.querySelector('#rag-sources .rag-abstract'); return b && b.scrollTop > 0; }",
        timeout=10_000,
    )
    where = card.evaluate(MARK_IN_BOX)
    assert where["depth"] > where["boxHeight"] and where["inBox"], where  # it needed the scroll, and got it
    for name, size in (("wide", WIDE), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.evaluate("() => document.querySelector('#rag-sources .rag-abstract').scrollTop = 0")
        page.locator("#rag-chat a.rag-cite").first.click()
        page.wait_for_selector("#rag-sources .rag-source.rag-active", timeout=10_000)
        time.sleep(0.5)
        where = page.locator("#rag-sources .rag-source.rag-active").evaluate(MARK_IN_BOX)
        assert where["inBox"] and where["inViewport"], (name, where)
        page.screenshot(path=str(ARTIFACTS / f"ui-source-card-{name}.png"))
    page.set_viewport_size(WIDE)


# ------------------------------------------------------------------ the claim check (issue 28)
def quokka_judge(prompt: str) -> dict[str, float]:
    """A one-token judge, a little slow (progress shows): supports an excerpt about Quokkanet, refutes one
    about WildBox, else not stated."""
    time.sleep(0.4)
    m = re.search(r"Excerpt: (.*)\n", prompt)
    excerpt = m.group(1) if m else ""
    if "Quokkanet" in excerpt:
        return {"Yes": 0.85, "No": 0.05, "Not": 0.1}
    if "WildBox" in excerpt:
        return {"Yes": 0.1, "No": 0.75, "Not": 0.15}
    return {"Yes": 0.1, "No": 0.1, "Not": 0.8}


@pytest.fixture(scope="module")
def check_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    """The seed abstracts and the XSS one, judged by a label fake (tests/fakes.py LabelChatModel)."""
    from rag.models.embedding import CachedEmbeddings
    from tests.fakes import LabelChatModel

    tmp = tmp_path_factory.mktemp("ui-check")
    (tmp / "xss.jsonl").write_text(json.dumps(XSS) + "\n")
    corpus = [Assistant.bundled_corpus(), tmp / "xss.jsonl"]
    judge = LabelChatModel(probs=quokka_judge)
    # named as a model the bundled stance head was not fitted on: the fake's label probabilities are then the
    # stances as they are, and what this tests (the tab) does not move each time the head is refitted
    llm = {"model": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
    # every paper goes through the (slow) fake, so that progress and Stop are seen between papers: papers far from
    # the claim would otherwise be judged at once without it (check.skip_far, tested in tests/test_check.py)
    check = {"skip_far": False}
    yield from serve(
        tmp / "data", CachedEmbeddings(minilm, embedding_cache), corpus, judge, mode="llm", llm=llm, check=check
    )


@pytest.fixture
def check_page(browser_context: Any, check_server: str) -> Iterator[Any]:
    yield from open_page(browser_context, check_server)


def test_check_tab_streams_stances_shows_the_meter_and_fits_wide_and_on_a_phone(check_page: Any) -> None:
    """The Check tab: status and progress while papers are judged, each paper with its stance and quote (markup
    from an abstract stays text), the verdict in words with its meter; no overlap at 1400x1000 or 390 px."""
    page = check_page
    page.get_by_role("tab", name="Check a claim").click()
    page.locator("#rag-claim textarea").fill("WildBox and Quokkanet detect animals with 3D boxes.")
    page.locator("#rag-check-k input[type=number]").fill("5")
    page.locator("#rag-check-k input[type=number]").press("Enter")
    page.click("#rag-check-btn")
    page.wait_for_selector("#rag-check-status :text('Judging paper')", timeout=60_000)
    page.wait_for_selector("#rag-check-result .rag-stance", timeout=60_000)  # papers appear while judging
    progress = page.locator("#rag-check-status").inner_text()
    page.wait_for_selector("#rag-check-result .rag-claim-verdict", timeout=120_000)
    assert re.search(r"Judging paper \d of 5…", progress), progress
    result = page.locator("#rag-check-result").inner_text()
    assert "Checked 5 papers in " in page.locator("#rag-check-status").inner_text()
    assert page.locator("#rag-check-result .rag-stance").count() == 5
    assert "Mixed evidence" in result and "1 support" in result and "1 refute" in result and "3 not stated" in result
    assert re.search(r"supports \d\.\d\d", result) and re.search(r"refutes \d\.\d\d", result)  # calibrated
    assert "Quokkanet <img src=x" in result  # the title's markup, shown as text
    meter = page.locator("#rag-check-result .rag-meter")
    assert meter.get_attribute("role") == "img" and meter.get_attribute("aria-label") == (
        "1 support, 1 refute, 3 not stated"
    )
    assert page.dialogs == [] and page.evaluate("() => window.__xss") is None  # type: ignore[attr-defined]
    injected = "#rag-check-result img, #rag-check-result script, [onerror]"
    assert page.evaluate("(sel) => document.querySelectorAll(sel).length", injected) == 0
    for name, size in (("wide", WIDE), ("phone", PHONE)):
        page.set_viewport_size(size)
        time.sleep(0.5)
        found = page.evaluate(OVERLAPS, [*TAB_CONTROLS, "#rag-check-result .rag-meter", "#rag-check-status p"])
        assert found["hits"] == [] and found["found"] >= 6, (name, found)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=str(ARTIFACTS / f"ui-check-{name}.png"), full_page=True)
    page.set_viewport_size(WIDE)
    own_host_only(page)


def test_stop_ends_a_check_between_papers_and_frees_the_model(check_page: Any) -> None:
    """Stop during a 20-paper check: no more papers appear, no verdict; the next check runs to its verdict."""
    page = check_page
    page.get_by_role("tab", name="Check a claim").click()
    page.locator("#rag-claim textarea").fill("Quokkanet detects marsupials.")
    k = page.locator("#rag-check-k input[type=number]")
    k.fill("20")
    k.press("Enter")
    page.click("#rag-check-btn")
    page.wait_for_selector("#rag-check-result .rag-stance", timeout=60_000)
    page.click("#rag-check-stop")
    page.wait_for_selector("#rag-check-status :text('Stopped after')", timeout=10_000)
    shown = page.locator("#rag-check-result .rag-stance").count()
    time.sleep(2.5)  # about six more papers, were it still judging
    assert page.locator("#rag-check-result .rag-stance").count() == shown < 20
    assert page.locator("#rag-check-result .rag-claim-verdict").count() == 0
    page.screenshot(path=str(ARTIFACTS / "ui-check-stopped.png"))
    k.fill("2")
    k.press("Enter")
    page.click("#rag-check-btn")
    page.wait_for_selector("#rag-check-result .rag-claim-verdict", timeout=60_000)
    assert "Checked 2 papers in " in page.locator("#rag-check-status").inner_text()


# ------------------------------------------------------------------ what qualified a listed paper (issue 30)
def dataset_judge(prompt: str) -> dict[str, float]:
    """The list judge: yes (0.91) to a paper whose text speaks of a benchmark or dataset, else no (0.95)."""
    from tests.fakes import judged_paper

    paper = judged_paper(prompt) or ""
    return {"Yes": 0.91, "No": 0.09} if re.search(r"(?i)\b(benchmark|dataset)\b", paper) else {"Yes": 0.05, "No": 0.95}


@pytest.fixture(scope="module")
def list_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    """The seed abstracts, list questions judged by a label fake (tests/fakes.py LabelChatModel)."""
    from rag.models.embedding import CachedEmbeddings
    from tests.fakes import LabelChatModel

    tmp = tmp_path_factory.mktemp("ui-list")
    judge = LabelChatModel(probs=dataset_judge)
    embeddings = CachedEmbeddings(minilm, embedding_cache)
    yield from serve(tmp / "data", embeddings, [Assistant.bundled_corpus()], judge, mode="llm")


def test_a_listed_papers_card_shows_the_judges_figure_not_off_topic(browser_context: Any, list_server: str) -> None:
    """Issue 30: WildBox's passage is far from "Which papers introduce a new dataset or benchmark?" (cosine 0.15,
    once shown as "match: off-topic"), yet the judge listed it: its card says so, with the judge's figure."""
    page = next(open_page(browser_context, list_server))
    ask(page, "Which papers introduce a new dataset or benchmark?")
    page.wait_for_selector("#rag-sources h4:text('Listed papers')", timeout=120_000)
    cards = page.locator("#rag-sources .rag-source")
    assert cards.count() >= 2
    wildbox = cards.filter(has_text="WildBox").first
    figure = wildbox.locator(".rag-rel")
    assert figure.inner_text() == "listed · judge 0.91"
    assert "said yes with this probability" in str(figure.get_attribute("title"))
    panel = page.locator("#rag-sources").inner_text()
    assert "off-topic" not in panel and "match:" not in panel and "similarity" not in panel
    assert "judge = the model's probability that the paper meets the question's criterion." in panel
    assert [c.locator(".rag-rel").inner_text() for c in cards.all()] == ["listed · judge 0.91"] * cards.count()
    time.sleep(0.5)
    page.screenshot(path=str(ARTIFACTS / "ui-list-relevance.png"), full_page=True)
    page.close()


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    """The bundled abstracts answered in 'llm' mode by a fake that takes 1.5 s per call (the list judge: Yes to
    benchmarks; a lookup: the WildBox sentence), so a list question is a long wait."""
    from rag.models.embedding import CachedEmbeddings
    from tests.fakes import PathsReply, ScriptedChatModel, evidence_number

    def wildbox(prompt: str) -> str:
        return f"WildBox comprises 237,505 3D bounding box annotations [{evidence_number(prompt, 'WildBox') or 1}]."

    judge = PathsReply(judge=r"(?i)\bbenchmark\b", other=wildbox)
    fake = ScriptedChatModel(reply=lambda prompt: (time.sleep(1.5), judge(prompt))[1])
    tmp = tmp_path_factory.mktemp("ui-slow")
    yield from serve(tmp / "data", CachedEmbeddings(minilm, embedding_cache), [Assistant.bundled_corpus()], fake, "llm")


@pytest.fixture
def slow_page(browser_context: Any, slow_server: str) -> Iterator[Any]:
    yield from open_page(browser_context, slow_server)


def clock(page: Any) -> tuple[str, int]:
    """The chat's status line: what is being done, and the seconds since the question."""
    line = page.locator("#rag-chat .rag-step").last.inner_text()
    m = re.search(r"^(.*?) · (\d+) s$", line)
    assert m, line
    return m.group(1), int(m.group(2))


def test_status_line_counts_the_seconds_and_stop_frees_the_model(slow_page: Any) -> None:
    """A list question judged paper by paper: the bubble's status line names the paper being judged and its clock
    moves on; Stop ends it at once (no answer kept) and the next question is answered."""
    page = slow_page
    ask(page, "Which papers introduce a new benchmark?")
    page.wait_for_selector("#rag-chat .rag-step:text('Judging paper')", timeout=60_000)
    doing, seconds = clock(page)
    assert re.fullmatch(r"Judging paper \d+ of \d+…", doing), doing
    time.sleep(3.2)
    assert clock(page)[1] >= seconds + 2  # the elapsed time moves on, at least once a second
    page.screenshot(path=str(ARTIFACTS / "ui-chat-status.png"))
    page.click("#rag-stop")
    page.wait_for_selector("#rag-chat .rag-stopped", timeout=3_000)
    assert "Stopped after" in bot_text(page) and page.locator("#rag-chat .rag-step").count() == 0
    page.screenshot(path=str(ARTIFACTS / "ui-chat-stopped.png"))
    ask(page, "How many 3D bounding box annotations does WildBox have?")
    page.wait_for_function(
        "() => [...document.querySelectorAll(\"#rag-chat [data-testid='bot']\")].pop()?.innerText.includes('237,505')",
        timeout=30_000,
    )
    page.wait_for_selector("#rag-chat .rag-step", state="detached", timeout=30_000)  # verified: no status line left
    assert "237,505" in bot_text(page) and page.locator("#rag-chat a.rag-cite").count() >= 1


# ------------------------------------------------------------------ the table follows its query (issue 30)
def slow_paths_reply(prompt: str) -> str:
    """Every paper qualifies and each cell copies its abstract (tests/fakes.py PathsReply), a little slowly, so
    rows arrive one by one."""
    from tests.fakes import PathsReply

    time.sleep(0.3)
    return PathsReply(judge=r".")(prompt)


@pytest.fixture(scope="module")
def table_server(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Iterator[str]:
    from rag.models.embedding import CachedEmbeddings
    from tests.fakes import ScriptedChatModel

    tmp = tmp_path_factory.mktemp("ui-table")
    fake = ScriptedChatModel(reply=slow_paths_reply)
    corpus = [Assistant.bundled_corpus()]
    yield from serve(tmp / "data", CachedEmbeddings(minilm, embedding_cache), corpus, fake, mode="llm")


@pytest.fixture
def table_page(browser_context: Any, table_server: str) -> Iterator[Any]:
    yield from open_page(browser_context, table_server)


def test_table_rows_stream_in_with_status_and_stop_keeps_them(table_page: Any) -> None:
    """The Table tab with a query: a status line with the time from the start, rows appearing one by one while
    papers are judged, Stop ends it with its rows kept (no more come); the next table runs to its end."""
    page = table_page
    rows = "#rag-table table.rag-table tbody tr"
    page.get_by_role("tab", name="Table").click()
    page.locator("#rag-table-attributes textarea").fill("task")
    page.locator("#rag-table-query textarea").fill("machine learning")
    t0 = time.monotonic()
    page.click("#rag-table-make")
    page.wait_for_selector("#rag-table-status :text('Judging paper')", timeout=30_000)
    assert re.search(r"Judging paper \d+ of \d+… · \d+ s", page.locator("#rag-table-status").inner_text())
    page.wait_for_selector(rows, timeout=60_000)  # the first row, while the others are still being judged
    first_row = time.monotonic() - t0
    assert page.locator(rows).count() < 5 and page.locator("#rag-table-csv").is_hidden()
    page.wait_for_function(f"() => document.querySelectorAll('{rows}').length >= 2", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "ui-table-streaming.png"), full_page=True)
    page.click("#rag-table-stop")
    page.wait_for_selector("#rag-table-status :text('Stopped after')", timeout=10_000)
    shown = page.locator(rows).count()
    time.sleep(2.0)  # about three more rows, were it still running
    assert 2 <= page.locator(rows).count() == shown < 7, (shown, first_row)
    assert f"Stopped after {shown} rows." in page.locator("#rag-table-status").inner_text()
    page.screenshot(path=str(ARTIFACTS / "ui-table-stopped.png"), full_page=True)
    page.click("#rag-table-make")  # the same table again, to its end: the stopped one let go of the model
    page.wait_for_selector("#rag-table-status :text('in the collection')", timeout=60_000)
    status = page.locator("#rag-table-status").inner_text()
    assert re.search(r"\d+ rows: read \d+ papers of the 19 in the collection, in \d+ s\.", status), status
    assert page.locator("#rag-table-csv").is_visible()
