"""The claim check where people use it: `rag check`, ``POST /v1/check`` (JSON and SSE) and the UI's Check tab.

The judge is :class:`tests.fakes.LabelChatModel`, a one-token fake that gives label probabilities from the
excerpt it is shown (supports one that names WildBox, refutes one about quantum computing), so each test
checks what our code did with the stances the pipeline produced: order, quotes, counts, errors, escaping.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from pydantic import SecretStr

from rag import Assistant, ClaimCheck, PaperStance
from rag.apps.cli import cli
from rag.apps.http_api import create_app
from rag.ui.rendering import format_check_html, format_meter_html
from tests.fakes import LabelChatModel

DATA = Path(__file__).parent / "data"
CLAIM = "WildBox provides 3D bounding box annotations."
SUMMARY_KEYS = {"claim", "verdict", "counts", "papers"}
PAPER_KEYS = {"paper_id", "title", "stance", "probability", "quote", "span"}


# the judge's label probabilities by a word of the excerpt it is shown (the first that occurs decides)
JUDGED_BY_WORD = [
    ("wildbox", {"Yes": 0.8, "No": 0.1, "Not": 0.1}),
    ("quantum", {"Yes": 0.1, "No": 0.7, "Not": 0.2}),
    ("", {"Yes": 0.2, "No": 0.1, "Not": 0.7}),
]


def by_words(prompt: str) -> dict[str, float]:
    """Supports an excerpt that names WildBox, refutes one that names quantum computing, else not stated."""
    excerpt = m.group(1).lower() if (m := re.search(r"Excerpt: (.*)\n", prompt)) else ""
    return next(probs for word, probs in JUDGED_BY_WORD if word in excerpt)


def judged(seed: Any, probs: Any = by_words, **settings: Any) -> tuple[Assistant, LabelChatModel]:
    """An assistant over the seed abstracts whose judge is a label fake; ``settings`` update the settings' groups
    (``check={"k": 3}``, ``server={"api_token": ...}``)."""
    fake = LabelChatModel(probs=probs)
    s = seed.settings
    for group, values in settings.items():
        s = s.model_copy(update={group: getattr(s, group).model_copy(update=values)})
    return Assistant(s, embeddings=seed.embeddings, chat_model=fake), fake


def broken(prompt: str) -> dict[str, float]:
    raise ConnectionError("Connection refused")


# ------------------------------------------------------------------ rag check
def invoke(assistant: Any, *args: str) -> Any:
    return CliRunner().invoke(cli, list(args), obj={"assistant": assistant}, catch_exceptions=False)


def test_cli_streams_each_judged_paper_then_the_verdict_with_the_counts(seed_assistant: Any) -> None:
    a, fake = judged(seed_assistant)
    r = invoke(a, "check", CLAIM, "-k", "4")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    rows = [line for line in lines if re.match(r"\[\d\] ", line)]
    # one judgement per paper, but for those too far from the claim to ask (check.skip_far)
    not_asked = sum("(not asked: far from the claim)" in row for row in rows)
    assert len(rows) == 4 == sum("It is false that" not in p for p in fake.prompts) + not_asked
    assert [row.split("]")[0] for row in rows] == ["[1", "[2", "[3", "[4"]
    m = re.match(r'\[1\] supports \d\.\d\d  WildBox — "(.+)"$', rows[0])  # the calibrated probability
    assert m and "WildBox" in m.group(1), rows[0]
    assert all(re.match(r"\[\d\] (supports|refutes|not stated) \d\.\d\d", row) for row in rows)
    supports = sum(" supports " in row and "(not counted)" not in row for row in rows)
    stated = sum(" not stated " in row for row in rows)
    assert lines[-1] == f"Verdict: supported — {supports} support, 0 refute, {stated} not stated (4 papers judged)."


def test_cli_json_is_the_documented_summary_in_order_of_relevance(seed_assistant: Any) -> None:
    a, _ = judged(seed_assistant)
    r = invoke(a, "check", CLAIM, "-k", "3", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert set(data) == SUMMARY_KEYS and data["claim"] == CLAIM and data["verdict"] == "supported"
    assert [set(p) for p in data["papers"]] == [PAPER_KEYS] * 3
    hits = a.search(CLAIM, k=3)
    assert [p["paper_id"] for p in data["papers"]] == [h.paper_id for h in hits]  # the corpus ids, by relevance
    abstracts = {p.paper_id: p.abstract for p in a.papers()}
    for p in data["papers"]:
        s, e = p["span"]
        assert abstracts[p["paper_id"]][s:e] == p["quote"]
    assert data["counts"] == {"supports": 1, "refutes": 0, "not stated": 2}


def small_judged(make_assistant: Any) -> Assistant:
    """The 10 test abstracts (venue and year metadata) with the label fake as judge."""
    base = make_assistant()
    base.ingest([DATA / "abstracts.jsonl"])
    return Assistant(base.settings, embeddings=base.embeddings, chat_model=LabelChatModel(probs=by_words))


def test_cli_where_filters_the_papers_judged(make_assistant: Any) -> None:
    a = small_judged(make_assistant)
    icml = {p.paper_id for p in a.papers() if p.venue == "ICML"}
    data = json.loads(
        invoke(a, "check", "Attention kernels speed up protein models.", "--where", "venue=ICML", "--json").stdout
    )
    assert data["papers"] and {p["paper_id"] for p in data["papers"]} <= icml
    r = invoke(a, "check", "Attention kernels speed up protein models.", "--where", "venue=Nowhere")
    assert r.exit_code == 0 and r.stdout.splitlines() == [
        "No paper found to judge.",
        "",
        "Verdict: not enough evidence — 0 support, 0 refute, 0 not stated (0 papers judged).",
    ]


@pytest.mark.parametrize(
    ("args", "probs", "message"),
    [
        (("check", "   "), by_words, "Error: "),
        (("check", CLAIM, "--where", "venue"), by_words, "Error: Filter 'venue' is not key=value"),
        (("check", CLAIM, "-k", "2"), broken, "Error: "),
    ],
)
def test_cli_errors_are_one_line_and_exit_1(
    seed_assistant: Any, args: tuple[str, ...], probs: Any, message: str
) -> None:
    a, _ = judged(seed_assistant, probs)
    r = CliRunner().invoke(cli, list(args), obj={"assistant": a})
    assert r.exit_code == 1 and r.output.startswith(message) and "Traceback" not in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 or args[1] == CLAIM  # a failed judge: the papers before it stay


def test_cli_empty_index_names_the_fix(make_assistant: Any) -> None:
    r = CliRunner().invoke(cli, ["check", CLAIM], obj={"assistant": make_assistant()})
    assert r.exit_code == 1 and "rag ingest" in r.output and "Traceback" not in r.output


# ------------------------------------------------------------------ POST /v1/check
def sse(r: Any) -> list[Any]:
    data = [line.removeprefix("data: ") for line in r.text.split("\n\n") if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


def test_http_json_is_the_summary_and_the_stream_sends_each_paper_then_the_check(seed_assistant: Any) -> None:
    a, _ = judged(seed_assistant)
    api = TestClient(create_app(a))
    r = api.post("/v1/check", json={"claim": CLAIM, "k": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body == a.check(CLAIM, k=3).summary() and set(body) == SUMMARY_KEYS
    r = api.post("/v1/check", json={"claim": CLAIM, "k": 3, "stream": True})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = sse(r)
    assert [e["type"] for e in events] == ["status", "stance", "stance", "stance", "check"]
    assert [e["checked"] for e in events[1:4]] == [1, 2, 3] and {e["total"] for e in events[1:4]} == {3}
    assert [e["paper"]["paper_id"] for e in events[1:4]] == [p["paper_id"] for p in body["papers"]]
    assert [p["paper_id"] for p in events[0]["papers"]] == [p["paper_id"] for p in body["papers"]]
    assert events[-1]["check"] == body
    assert set(events[1]["paper"]) >= PAPER_KEYS and events[1]["paper"]["stance"] == "supports"


def test_http_where_is_accepted_for_filters_and_unknown_keys_are_400(make_assistant: Any) -> None:
    a = small_judged(make_assistant)
    api = TestClient(create_app(a))
    venue = "ICML"
    icml = {p.paper_id for p in a.papers() if p.venue == venue}
    r = api.post("/v1/check", json={"claim": CLAIM, "k": 5, "where": {"venue": venue}})
    assert r.status_code == 200 and r.json()["papers"]
    assert {p["paper_id"] for p in r.json()["papers"]} <= icml < {p.paper_id for p in a.papers()}
    r = api.post("/v1/check", json={"claim": CLAIM, "filters": {"colour": "red"}})
    assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_filter_key"
    r = api.post("/v1/check", json={"claim": CLAIM, "where": {"venue": venue}, "filters": {"venue": venue}})
    assert r.status_code == 422


def test_http_errors_map_as_on_the_chat_endpoint(seed_assistant: Any, make_assistant: Any) -> None:
    a, fake = judged(seed_assistant)
    api = TestClient(create_app(a))
    for claim in ("   ", "x" * 5000):
        r = api.post("/v1/check", json={"claim": claim})
        chat = api.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": claim}]})
        assert r.status_code == chat.status_code == 400, r.text
        err = r.json()["error"]
        assert err["param"] == "claim" and err["code"] == chat.json()["error"]["code"] and err["message"]
    assert fake.prompts == []
    assert api.post("/v1/check", json={"claim": CLAIM, "k": 0}).status_code == 422
    empty = TestClient(create_app(make_assistant()))
    r = empty.post("/v1/check", json={"claim": CLAIM})
    assert r.status_code == 409 and r.json()["error"]["code"] == "empty_index"
    down, _ = judged(seed_assistant, broken)
    api = TestClient(create_app(down))
    r = api.post("/v1/check", json={"claim": CLAIM, "k": 2})
    assert r.status_code == 502 and r.json()["error"]["code"] == "backend_error"
    events = sse(api.post("/v1/check", json={"claim": CLAIM, "k": 2, "stream": True}))
    assert [e["type"] for e in events] == ["status", "error"]  # headers sent: the error travels in-band
    assert events[-1]["error"]["code"] == "backend_error"


def test_http_check_needs_the_token_when_one_is_set(seed_assistant: Any) -> None:
    a, fake = judged(seed_assistant, server={"api_token": SecretStr("s3cret-token")})
    api = TestClient(create_app(a))
    r = api.post("/v1/check", json={"claim": CLAIM, "k": 1})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer" and fake.prompts == []
    r = api.post("/v1/check", json={"claim": CLAIM, "k": 1}, headers={"Authorization": "Bearer s3cret-token"})
    assert r.status_code == 200 and len(r.json()["papers"]) == 1


def test_openapi_documents_the_check_endpoint(seed_assistant: Any) -> None:
    schema = TestClient(create_app(seed_assistant)).get("/openapi.json").json()
    op = schema["paths"]["/v1/check"]["post"]
    assert {"200", "400", "409", "422", "502", "503"} <= set(op["responses"])
    assert "text/event-stream" in op["responses"]["200"]["content"]
    props = schema["components"]["schemas"]["CheckRequest"]["properties"]
    assert {"claim", "k", "filters", "stream"} <= set(props)
    paper = schema["components"]["schemas"]["CheckPaperOut"]["properties"]
    assert set(paper) == PAPER_KEYS


# ------------------------------------------------------------------ the UI's Check tab
def _check_tab(assistant: Assistant) -> Any:
    from rag.ui.handlers import Handlers

    return Handlers(assistant)


def test_ui_check_shows_status_at_once_then_each_paper_then_the_verdict_meter(seed_assistant: Any) -> None:
    a, _ = judged(seed_assistant)
    steps = list(_check_tab(a).check_claim(CLAIM, 3))
    statuses = [s for s, _ in steps]
    assert "Searching the abstracts…" in statuses[0]
    assert any("Judging paper 1 of 3…" in s for s in statuses)
    assert any("Judging paper 3 of 3…" in s for s in statuses) and "Checked 3 papers in " in statuses[-1]
    results = [r for _, r in steps if isinstance(r, str)]
    counts = [r.count('class="rag-stance ') for r in results]
    assert counts[-1] == 3 and [c for c in counts if c] == sorted(c for c in counts if c)  # papers appear one by one
    final = results[-1]
    assert '<div class="rag-verdict rag-verdict-supported">Supported</div>' in final
    assert 'role="img" aria-label="1 support, 0 refute, 2 not stated"' in final  # the meter says it in words
    assert "1 support</li>" in final and "2 not stated</li>" in final
    assert re.search(r"\[1\] supports \d\.\d\d", final) and "WildBox" in final
    far = sum(not p.asked for p in a.check(CLAIM, k=3).papers)  # papers too far from the claim say so
    assert far and final.count("(not asked: far from the claim)") == far


def test_ui_check_refuses_an_empty_claim_and_reports_errors_in_one_line(seed_assistant: Any) -> None:
    a, fake = judged(seed_assistant)
    (status, _result), *rest = list(_check_tab(a).check_claim("   ", 3))
    assert not rest and "Type a claim first" in status and "rag-error" in status and fake.prompts == []
    steps = list(_check_tab(a).check_claim("x" * 5000, 3))
    assert "rag-error" in steps[-1][0] and "limit" in steps[-1][0] and fake.prompts == []
    down, _ = judged(seed_assistant, broken)
    steps = list(_check_tab(down).check_claim(CLAIM, 2))
    assert 'class="rag-error"' in steps[-1][0]


def test_ui_check_escapes_titles_and_quotes_from_abstracts() -> None:
    paper = PaperStance(
        n=1,
        paper_id="x<1>",
        title='Evil <img src=x onerror="alert(1)">',
        stance="refutes",
        probability=0.71,
        quote="It fails. <script>window.__xss = 1</script>",
        span=(0, 10),
        decided=True,
    )
    check = ClaimCheck(
        claim="c", verdict="refuted", counts={"supports": 0, "refutes": 1, "not stated": 0}, papers=[paper], checked=1
    )
    for html in (format_check_html([paper]), format_check_html([paper], check)):
        assert "<script>" not in html and "<img" not in html
        assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html and "&lt;img src=x" in html
    assert "Refuted" in format_check_html([paper], check) and "[1] refutes 0.71" in format_check_html([paper])


def test_meter_parts_are_proportional_and_labelled_in_words() -> None:
    html = format_meter_html({"supports": 3, "refutes": 1, "not stated": 6})
    assert re.findall(r"width: ([\d.]+)%", html) == ["30.0", "10.0", "60.0"]
    assert "3 support</li>" in html and "1 refute</li>" in html and "6 not stated</li>" in html
    assert 'aria-label="3 support, 1 refute, 6 not stated"' in html
    assert "width" not in format_meter_html({"supports": 0, "refutes": 0, "not stated": 0})


def test_ui_stop_ends_the_check_after_the_paper_being_judged(seed_assistant: Any) -> None:
    a, fake = judged(seed_assistant)
    tab, browser = _check_tab(a), SimpleNamespace(session_hash="s1")
    steps = tab.check_claim(CLAIM, 5, browser)
    while 'class="rag-stance ' not in str(next(steps)[1]):  # up to the first paper judged
        pass
    assert "Stopped: the model is free for the next question" in tab.stop_check(browser)
    rest = list(steps)
    assert "Stopped after 1 paper: no verdict." in rest[-1][0]
    assert sum("It is false that" not in p for p in fake.prompts) == 1  # (and at most its opposite)
    assert tab.stop_check(browser) is not None and tab._checks == {}  # nothing runs: Stop does nothing
