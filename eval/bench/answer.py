"""Answer-latency benchmark of the embedded default LLM on this machine, beside a bare llama.cpp call.

    python -m rag.evaluation.bench answer [--repeat 1] [--fresh-cache]

Prints one table: model assembly time (first run, into a fresh cache dir with --fresh-cache), server
start time, prompt tokens per question, time to first token, full-answer time p50/p95 over the seed
questions, generation tokens/s, peak RSS of the whole process tree; and the same prompts sent by a bare
`openai` client straight to the llama.cpp server, so the pipeline's own overhead shows as a ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import openai
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage, convert_to_openai_messages

from rag import AnswerEvent, Assistant, TokenEvent, get_settings
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import percentile

QUESTIONS = [
    "How many 3D bounding box annotations does WildBox contain?",
    "How many protocols and subtasks does the WiREBench benchmark contain?",
    "How many failed trajectories does Who&When Pro contain?",
    "What does CoCHI stand for?",
    "Which two open-vocabulary monocular 3D architectures are evaluated on WildBox?",
    "Under the Standard Parameterisation, what happens to router updates in MoE training?",
    "In how many MARL environments is Selective Social Learning tested?",
    "What does MaskGen use to train robust segmentation models?",
    "What is the capital of France?",
    "Who are the authors of the WildBox paper?",
]

NEEDS_LLM = True


class TreeRSS:
    """Samples the summed RSS of this process and all its descendants."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _tree(pid: int) -> list[int]:
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            out.append(p)
            for task in Path(f"/proc/{p}/task").glob("*"):
                try:
                    todo += [int(c) for c in (task / "children").read_text().split()]
                except OSError:
                    pass
        return out

    def sample(self) -> int:
        total = 0
        for p in self._tree(os.getpid()):
            try:
                for line in Path(f"/proc/{p}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.sample())

    def __enter__(self) -> TreeRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class PromptRecorder(BaseCallbackHandler):
    """Keeps the messages of the last chat-model call it sees."""

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.messages = messages[0]


def prompt_of(assistant: Assistant, q: str) -> list[dict[str, Any]]:
    """The exact messages the pipeline sends for ``q`` (OpenAI format), from a dry run with a recording fake
    model on the same index and settings ([] when the question is refused before the LLM)."""
    recorder = PromptRecorder()
    dry = Assistant(
        assistant.settings,
        embeddings=assistant.embeddings,
        chat_model=FakeListChatModel(responses=["."], callbacks=[recorder]),
    )
    dry.ask(q)
    return list(convert_to_openai_messages(recorder.messages)) if recorder.messages else []


def pipeline_call(assistant: Assistant, q: str) -> dict[str, float]:
    t = time.perf_counter()
    first = None
    for ev in assistant.stream(q):
        if isinstance(ev, TokenEvent) and first is None:
            first = time.perf_counter() - t
        if isinstance(ev, AnswerEvent):
            ans = ev.answer
    total = time.perf_counter() - t
    gen = ans.timings.get("generation", 0.0) - ans.timings.get("first_token", 0.0)
    return {
        "refused": ans.refused,
        "early_refusal": "generation" not in ans.timings,
        "prompt_tokens": ans.tokens.get("prompt", 0),
        "completion_tokens": ans.tokens.get("completion", 0),
        "ttft": first or total,
        "total": total,
        "tok_s": max(0, ans.tokens.get("completion", 0) - 1) / gen if gen > 0 else 0.0,
    }


def bare_call(
    bare: openai.OpenAI, model: str, assistant: Assistant, messages: list[dict[str, Any]]
) -> dict[str, float]:
    """The same prompt, sent by a bare client to the same server (prompt built beforehand, not timed)."""
    t = time.perf_counter()
    first = None
    for chunk in bare.chat.completions.create(
        model=model,
        messages=messages,
        stream=True,  # type: ignore[arg-type]
        temperature=assistant.settings.llm.temperature,
        max_tokens=assistant.settings.llm.max_tokens,
    ):
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - t
    total = time.perf_counter() - t
    return {"bare_ttft": first or total, "bare_total": total}


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--repeat", type=int, default=1, help="Times each question is asked.")
    ap.add_argument(
        "--fresh-cache", action="store_true", help="Assemble the model into a new temp dir (first-run cost)."
    )


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:

    tmp = tempfile.TemporaryDirectory()
    overrides = {"data_dir": Path(tmp.name) / "data"}
    if args.fresh_cache:
        overrides["cache_dir"] = Path(tmp.name) / "cache"
    assistant = Assistant.from_settings(get_settings(**overrides))
    assistant.ingest([assistant.bundled_corpus()])
    with TreeRSS() as rss:
        started = assistant.start_llm()
        bare = openai.OpenAI(base_url=started["base_url"], api_key="local", timeout=600)
        model = assistant.settings.llm.model
        assistant.ask("What is WildBox?")  # warm the prompt cache once, as any running server would be
        rows = []
        for rep in range(args.repeat):
            for i, q in enumerate(QUESTIONS):
                # llama.cpp caches the last prompt, so whichever call goes second reads it for free:
                # alternate the order so the pipeline and the bare call each go first half of the time.
                messages = prompt_of(assistant, q)
                if not messages:  # refused before the LLM: nothing to compare
                    rows.append(pipeline_call(assistant, q) | {"q": q})
                    continue
                if (i + rep) % 2:
                    b = bare_call(bare, model, assistant, messages)
                    p = pipeline_call(assistant, q)
                else:
                    p = pipeline_call(assistant, q)
                    b = bare_call(bare, model, assistant, messages)
                rows.append(p | b | {"q": q})
    llm_rows = [r for r in rows if not r["early_refusal"]]
    print("| question | pipeline first / total (s) | bare first / total (s) | tokens out |", file=sys.stderr)
    for r in rows:
        bare = f"{r['bare_ttft']:.1f} / {r['bare_total']:.1f}" if "bare_total" in r else "-"
        print(
            f"| {r['q'][:50]} | {r['ttft']:.1f} / {r['total']:.1f} | {bare} | {r['completion_tokens']} |",
            file=sys.stderr,
        )
    print(
        f"\nEmbedded LLM {assistant.settings.llm.model}, threads={assistant.settings.llm.threads}, "
        f"{len(rows)} answers ({len(rows) - len(llm_rows)} refused before the LLM), load avg {os.getloadavg()[0]:.2f}"
    )
    print("| measure | value |")
    print("|---|---|")
    if "assemble_s" in started:
        print(f"| model assembly ({'first run' if args.fresh_cache else 'cached'}) | {started['assemble_s']:.1f} s |")
        print(f"| server start to healthy | {started['start_s']:.1f} s |")
    print(f"| prompt tokens per question (median) | {statistics.median(r['prompt_tokens'] for r in llm_rows):.0f} |")
    ttft = [r["ttft"] for r in llm_rows]
    print(f"| time to first token p50 / p95 | {percentile(ttft, 50):.1f} s / {percentile(ttft, 95):.1f} s |")
    total = [r["total"] for r in llm_rows]
    print(f"| full answer p50 / p95 | {percentile(total, 50):.1f} s / {percentile(total, 95):.1f} s |")
    print(f"| generation speed (median) | {statistics.median(r['tok_s'] for r in llm_rows):.1f} tokens/s |")
    bare_ttft = percentile([r["bare_ttft"] for r in llm_rows], 50)
    bare_total = percentile([r["bare_total"] for r in llm_rows], 50)
    print(f"| bare llama.cpp call, same prompt: first token p50 / full p50 | {bare_ttft:.1f} s / {bare_total:.1f} s |")
    ratio = sum(r["total"] for r in llm_rows) / max(1e-9, sum(r["bare_total"] for r in llm_rows))
    print(f"| pipeline / bare total time (sum over questions) | {ratio:.2f}x ({100 * (ratio - 1):+.0f} %) |")
    print(f"| peak RSS, whole process tree | {rss.peak / 2**30:.2f} GB |")
    print(f"| refused | {sum(r['refused'] for r in rows)} of {len(rows)} |")
    tmp.cleanup()
    return {
        "model": assistant.settings.llm.model,
        "threads": assistant.settings.llm.threads,
        "answers": len(rows),
        "prompt_tokens_median": statistics.median(r["prompt_tokens"] for r in llm_rows),
        "ttft_p50_s": percentile(ttft, 50),
        "ttft_p95_s": percentile(ttft, 95),
        "total_p50_s": percentile(total, 50),
        "total_p95_s": percentile(total, 95),
        "tokens_per_s_median": statistics.median(r["tok_s"] for r in llm_rows),
        "pipeline_over_bare": ratio,
        "peak_rss_gb": rss.peak / 2**30,
        "startup": started,
    }
