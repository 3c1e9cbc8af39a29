"""External benchmarks in the same harness: BEIR SciFact (retrieval) and PubMedQA PQA-L (answers).

.venv/bin/python -m rag.evaluation.external scifact  [--limit N] [--out DIR] [--data DIR]
.venv/bin/python -m rag.evaluation.external pubmedqa [--limit N] [--mode extractive] [--out DIR] [--data DIR]

The data (not shipped) is read from --data or $RAG_SHARED_DATA: DIR/scifact/, DIR/pubmedqa/pqal_dev.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Literal

from rag import Answer, Assistant, Paper, RagError, Settings, get_settings
from rag.evaluation import metrics as M
from rag.evaluation.shared_data import shared_data as shared_data

Progress = Callable[[int, int], None] | None


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for i, line in enumerate(path.read_text().splitlines()):
        parts = line.split("\t")
        if i == 0 and not parts[-1].strip().isdigit():
            continue  # header
        qid, did, score = parts[0], parts[1], int(parts[2])
        if score > 0:
            qrels[qid][did] = score
    return qrels


def load_queries(path: Path, keep: set[str]) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        q = json.loads(line)
        if str(q["_id"]) in keep:
            out[str(q["_id"])] = q["text"]
    return out


def _ci(values: Sequence[float | None], stat: Any = None) -> dict[str, Any]:
    vals = [v for v in values if v is not None]
    lo, hi = M.bootstrap_ci(vals, stat=stat or M.mean)
    return {"value": (stat or M.mean)(vals), "ci_low": lo, "ci_high": hi, "n": len(vals)}


# ---------------------------------------------------------------------- SciFact


def scifact_settings(settings: Settings) -> Settings:
    """The data dir and collection that the `retrieval` benchmark fills, so nothing is embedded twice."""
    return settings.model_copy(
        update={"data_dir": Path.home() / ".cache" / "rag-abstracts" / "bench-scifact", "collection": "scifact"}
    )


def run_scifact(
    assistant: Assistant,
    data: Path | None = None,
    limit: int = 0,
    modes: Sequence[Literal["bm25", "dense", "hybrid"]] = ("bm25", "dense", "hybrid"),
    progress: Progress = None,
) -> dict[str, Any]:
    """nDCG@10, recall@10/100 and MRR per retriever on the SciFact train queries, with bootstrap CIs.

    ``data``: the BEIR scifact folder (default: ``$RAG_SHARED_DATA/scifact``)."""
    data = shared_data("scifact") if data is None else data
    rep = assistant.ingest([data / "corpus.jsonl.gz"])
    qrels = load_qrels(data / "qrels" / "train.tsv")
    queries = load_queries(data / "queries_train.jsonl", set(qrels))
    qids = sorted(queries, key=int)[: limit or None]
    out: dict[str, Any] = {
        "benchmark": "scifact-train",
        "queries": len(qids),
        "corpus": rep.papers_seen,
        "newly_embedded": rep.embedded,
        "retrievers": {},
    }
    done, total = 0, len(qids) * len(modes)
    for mode in modes:
        nd, r10, r100, rr, lat = [], [], [], [], []
        for qid in qids:
            t = time.perf_counter()
            ranked = [h.paper_id for h in assistant.search(queries[qid], k=100, mode=mode)]
            lat.append(time.perf_counter() - t)
            nd.append(M.ndcg_at(ranked, qrels[qid], 10))
            r10.append(M.recall_at(ranked, qrels[qid], 10))
            r100.append(M.recall_at(ranked, qrels[qid], 100))
            rr.append(M.reciprocal_rank(ranked, qrels[qid]))
            done += 1
            if progress:
                progress(done, total)
        out["retrievers"][mode] = {
            "ndcg@10": _ci(nd),
            "recall@10": _ci(r10),
            "recall@100": _ci(r100),
            "mrr": _ci(rr),
            "latency_p50_s": M.percentile(lat, 50),
        }
    return out


def scifact_markdown(res: dict[str, Any]) -> str:
    lines = [
        f"SciFact train: {res['queries']} queries, {res['corpus']} abstracts (bootstrap 95% CI)",
        "",
        "| retriever | nDCG@10 | R@10 | R@100 | MRR | p50 (k=100) |",
        "|---|---|---|---|---|---|",
    ]

    def cell(d: dict[str, Any]) -> str:
        return f"{d['value']:.3f} [{d['ci_low']:.3f}, {d['ci_high']:.3f}]"

    for mode, r in res["retrievers"].items():
        cells = " | ".join(cell(r[m]) for m in ("ndcg@10", "recall@10", "recall@100", "mrr"))
        lines.append(f"| {mode} | {cells} | {1000 * r['latency_p50_s']:.0f} ms |")
    return "\n".join(lines)


# ---------------------------------------------------------------------- PubMedQA

_NEG = re.compile(
    r"\b(no|not|none|neither|nor|cannot|can't|doesn't|does not|did not|didn't|isn't|is not|aren't|are not|"
    r"was not|were not|without|fail(?:s|ed)? to|no significant|unrelated|lack of|absence of|insufficient)\b"
)
_HEDGE = re.compile(
    r"\b(maybe|may or may not|unclear|uncertain|inconclusive|mixed|partially|partly|limited evidence|remains to be|"
    r"further (?:studies|research)|not clear|possibly|might)\b"
)


def load_pubmedqa(path: Path) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = []
    for pmid, rec in data.items():
        ctx = rec["CONTEXTS"]
        if isinstance(ctx, str):
            ctx = ast.literal_eval(ctx)  # this copy stores the list as its Python repr
        items.append(
            {"id": str(pmid), "question": rec["QUESTION"], "abstract": " ".join(ctx), "label": rec["final_decision"]}
        )
    return items


def pubmedqa_papers(items: Sequence[dict[str, Any]]) -> list[Paper]:
    # the title must not be the question (that would leak the answer's paper into BM25): a neutral one
    return [
        Paper(
            paper_id=it["id"], title=f"PubMed {it['id']}", abstract=it["abstract"], source=f"pqal_dev.json:{it['id']}"
        )
        for it in items
    ]


def classify_decision(answer: Answer) -> str:
    """yes/no/maybe from the answer. A refusal is "maybe" (the abstracts were judged insufficient).

    1. The model's own first word, when it followed the instruction (read from the raw sentences,
       because a bare "Yes." carries no claim and is not in the verified text).
    2. Else cues in the verified text: a hedge -> maybe; a negation -> no; otherwise yes.
    """
    if answer.verdict is not None:  # the yes/no path decided it
        return {"yes": "yes", "no": "no"}.get(answer.verdict, "maybe")
    if answer.refused:
        return "maybe"
    first = answer.sentences[0].text if answer.sentences else answer.text
    m = re.match(r"\W*(yes|no|maybe)\b", first.strip().lower())
    if m:
        return m.group(1)
    text = answer.text.lower()
    if _HEDGE.search(text):
        return "maybe"
    if _NEG.search(text):
        return "no"
    return "yes"


PUBMEDQA_SEED = 20261201


def run_pubmedqa(
    assistant: Assistant,
    path: Path | None = None,
    limit: int = 20,
    progress: Progress = None,
    start: int = 0,
    only: Collection[str] | None = None,
) -> dict[str, Any]:
    """Retrieval (own abstract at rank 1 / in top k, MRR) on all questions; answers on the first ``limit``
    (of ``only`` these ids when given: e.g. a dev split that nothing was fitted on).

    ``path``: PQA-L questions (default: ``$RAG_SHARED_DATA/pubmedqa/pqal_dev.json``)."""
    items = load_pubmedqa(shared_data("pubmedqa/pqal_dev.json") if path is None else path)
    rep = assistant.ingest_papers(pubmedqa_papers(items))
    k = assistant.settings.retrieval.k
    hit1, hitk, rr = [], [], []
    for it in items:
        ranked = [h.paper_id for h in assistant.search(it["question"], k=10)]
        hit1.append(float(ranked[:1] == [it["id"]]))
        hitk.append(M.recall_at(ranked, [it["id"]], k))
        rr.append(M.reciprocal_rank(ranked, [it["id"]]))
    rows = []
    # a fixed-seed shuffle, so that --start/--limit slices (calibration, test) are random samples, never the first N
    order = random.Random(PUBMEDQA_SEED).sample(items, len(items))
    order = [it for it in order if only is None or it["id"] in only]
    chosen = order[start : start + limit if limit else None]
    for i, it in enumerate(chosen):
        t = time.perf_counter()
        try:
            ans = assistant.ask(it["question"], kind="yesno")
            err = None
        except RagError as e:
            ans, err = None, f"{type(e).__name__}: {e}"
        lat = time.perf_counter() - t
        pred = classify_decision(ans) if ans else "maybe"
        cited = list(dict.fromkeys(c.paper_id for c in ans.citations)) if ans else []
        rows.append(
            {
                "id": it["id"],
                "label": it["label"],
                "pred": pred,
                "correct": pred == it["label"],
                "refused": bool(ans is None or ans.refused),
                "cited_own": it["id"] in cited,
                "cited_only_own": cited == [it["id"]],
                "cited": cited,
                "answer": ans.text if ans else err,
                "latency": lat,
                "error": err,
                # for threshold replay (rag.evaluation.external.pubmedqa_tuning)
                "best_relevance": max((h.dense_score for h in ans.sources if h.dense_score is not None), default=None)
                if ans
                else None,
                "supports": [s.support for s in ans.sentences] if ans else [],
                "verdict_probabilities": ans.verdict_probabilities if ans else {},
            }
        )
        if progress:
            progress(i + 1, len(chosen))
    labels = [r["label"] for r in rows]
    majority = max(set(labels), key=labels.count) if labels else None
    return {
        "benchmark": "pubmedqa-pqal-dev",
        "questions_indexed": len(items),
        "newly_embedded": rep.embedded,
        "answer_mode": assistant.settings.answer.mode,
        "answered_n": len(rows),
        "start": start,
        "retrieval": {"hit@1": _ci(hit1), f"recall@{k}": _ci(hitk), "mrr": _ci(rr)},
        "accuracy": _ci([float(r["correct"]) for r in rows]),
        "accuracy_when_answered": _ci([float(r["correct"]) for r in rows if not r["refused"]]),
        "refusal_rate": _ci([float(r["refused"]) for r in rows]),
        "cited_own_abstract": _ci([float(r["cited_own"]) for r in rows if not r["refused"]]),
        "cited_only_own_abstract": _ci([float(r["cited_only_own"]) for r in rows if not r["refused"]]),
        "majority_baseline": {"label": majority, "accuracy": labels.count(majority) / len(labels) if labels else None},
        "latency_p50_s": M.percentile([r["latency"] for r in rows], 50),
        "latency_p95_s": M.percentile([r["latency"] for r in rows], 95),
        "thresholds": {
            "min_relevance": assistant.settings.answer.min_relevance,
            "min_support": assistant.settings.answer.min_support,
        },
        "tuning": pubmedqa_tuning(rows)
        if assistant.settings.answer.min_relevance == 0 and assistant.settings.answer.min_support == 0
        else None,
        "label_counts": {x: labels.count(x) for x in ("yes", "no", "maybe")},
        "pred_counts": {x: sum(r["pred"] == x for r in rows) for x in ("yes", "no", "maybe")},
        "rows": rows,
    }


def pubmedqa_tuning(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Replay min_relevance / min_support on rows asked with both at 0: a question is still answered when
    its best cosine and its best sentence support reach them, else it becomes "maybe" (a refusal).
    Approximate: the yes/no/maybe read from the answer is kept as is when some sentence survives."""
    grid = []
    for r in [round(0.05 * i, 2) for i in range(11)]:
        for s in [round(0.05 * i, 2) for i in range(19)]:
            ok = [
                (row["best_relevance"] or 0) >= r and max(row["supports"], default=0) >= s and not row["refused"]
                for row in rows
            ]
            pred = [row["pred"] if a else "maybe" for row, a in zip(rows, ok)]
            right = [p == row["label"] for p, row in zip(pred, rows)]
            answered = [i for i, a in enumerate(ok) if a]
            grid.append(
                {
                    "min_relevance": r,
                    "min_support": s,
                    "coverage": len(answered) / len(rows) if rows else None,
                    "accuracy": sum(right) / len(rows) if rows else None,
                    "precision": sum(right[i] for i in answered) / len(answered) if answered else None,
                }
            )
    return {"grid": grid}


def pubmedqa_markdown(res: dict[str, Any]) -> str:
    def c(d: dict[str, Any]) -> str:
        if d["value"] is None:
            return "n/a"
        return f"{d['value']:.3f} [{d['ci_low']:.3f}, {d['ci_high']:.3f}] (n={d['n']})"

    r = res["retrieval"]
    lines = [
        f"PubMedQA PQA-L dev: retrieval over all {res['questions_indexed']} questions; "
        f"answers ({res['answer_mode']}) on the first {res['answered_n']}",
        "",
        "| metric | value [95% CI] |",
        "|---|---|",
    ]
    for name, d in r.items():
        lines.append(f"| retrieval {name} (own abstract) | {c(d)} |")
    for name in ("accuracy", "accuracy_when_answered", "refusal_rate", "cited_own_abstract", "cited_only_own_abstract"):
        lines.append(f"| {name} | {c(res[name])} |")
    mb = res["majority_baseline"]
    lines.append(f"| majority-class baseline ({mb['label']}) | {fmt_float(mb['accuracy'])} |")
    lines.append(
        f"| latency p50 / p95 | {fmt_float(res['latency_p50_s'], 1)} s / {fmt_float(res['latency_p95_s'], 1)} s |"
    )
    lines.append(f"\nlabels {res['label_counts']}, predictions {res['pred_counts']}")
    return "\n".join(lines)


def fmt_float(x: float | None, d: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{d}f}"


def pubmedqa_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"data_dir": Path.home() / ".cache" / "rag-abstracts" / "bench-pubmedqa", "collection": "pubmedqa"}
    )


def write_benchmark(res: dict[str, Any], md: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{res['benchmark']}.json").write_text(json.dumps(res, indent=2, ensure_ascii=False, allow_nan=False))
    (out / f"{res['benchmark']}.md").write_text(md + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("benchmark", choices=["scifact", "pubmedqa"])
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--mode", choices=["llm", "extractive"], default=None)
    ap.add_argument("--out", type=Path, default=Path("eval-out"))
    ap.add_argument("--data", type=Path, help="Folder holding scifact/ and pubmedqa/ (default: $RAG_SHARED_DATA).")
    args = ap.parse_args(argv)
    try:
        data = shared_data("scifact" if args.benchmark == "scifact" else "pubmedqa/pqal_dev.json", args.data)
    except RagError as e:
        ap.exit(2, f"{e}\n")
    base = get_settings(**({"answer": {"mode": args.mode}} if args.mode else {}))
    if args.benchmark == "scifact":
        res = run_scifact(Assistant.from_settings(scifact_settings(base)), data, limit=args.limit)
        md = scifact_markdown(res)
    else:
        res = run_pubmedqa(Assistant.from_settings(pubmedqa_settings(base)), data, limit=args.limit or 20)
        md = pubmedqa_markdown(res)
    write_benchmark(res, md, args.out)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
