"""What ``rag eval`` does: build one assistant per ``--config``, index the corpus, run, tune, report.

rag eval eval/data/neurips2026_gold.jsonl --config a.toml --config b.toml --out eval-out
rag eval eval/data/neurips2026_gold.jsonl --baseline textbook   # + the textbook LangChain chain, side by side
rag eval eval/data/neurips2026_cross.jsonl     # list and comparison questions
rag eval eval/data/neurips2026_table.jsonl     # paper x attribute table cells
rag eval eval/data/ml1k_lists.jsonl --corpus /tmp/ml1k.jsonl   # a gold file over another corpus
rag eval scifact  [--limit N]      # BEIR SciFact train retrieval (shared data dir, nothing re-embedded)
rag eval pubmedqa [--limit N]      # PubMedQA PQA-L dev: retrieval on all 500, answers on the first N

The corpus is ``--corpus`` when given, else the one the gold file names in its corpus record (its
``path``, once built with its ``make`` command), else the bundled abstracts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rag import Assistant, ConfigError, Settings, get_settings
from rag.evaluation import tune
from rag.evaluation.baseline import BASELINES, compare_with_baseline, render_side_by_side, run_baseline
from rag.evaluation.dataset import EvalCase, GoldCase, GoldError, GoldSet, load_gold_set, resolve_cases
from rag.evaluation.judge import make_judge
from rag.evaluation.report import fmt, write_report
from rag.evaluation.run import EvalReport, Judge, run_eval

Progress = Callable[[int, int], None]


def load_config(path: Path | None) -> dict[str, Any]:
    """A --config TOML (same sections as rag.toml) as get_settings() keyword overrides."""
    if path is None:
        return {}
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config: {e}") from e


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def settings_for(config: Path | None, base: dict[str, Any] | None = None, **forced: Any) -> Settings:
    return get_settings(**_merge(_merge(base or {}, load_config(config)), forced))


def gold_collection(settings: Settings, corpus: Sequence[Path]) -> str:
    """A collection per (embedding, chunking, corpus) so configs that differ there never clash."""
    key = repr(
        (
            settings.embedding.provider,
            settings.embedding.model,
            settings.chunking.model_dump(),
            sorted(map(str, corpus)),
        )
    )
    return "eval-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def corpus_for(gold: GoldSet, given: Sequence[Path] = ()) -> list[Path]:
    """The corpus files to index: ``given`` (--corpus), else the gold file's corpus record, else the bundled
    abstracts. A named corpus that is not built yet is a :class:`GoldError` that says how to make it."""
    if given:
        return list(given)
    spec = gold.corpus
    if spec is None:
        return [Assistant.bundled_corpus()]
    if spec.path and Path(spec.path).expanduser().is_file():
        return [Path(spec.path).expanduser()]
    make = f"make it with `{spec.make}`, then " if spec.make else "build it, then "
    missing = f" ({spec.path} does not exist)" if spec.path else ""
    raise GoldError(
        f"{gold.path}:{spec.line}: this gold file is graded against the {spec.name} corpus{missing}: "
        f"{make}run `rag eval {gold.path} --corpus PATH`" + (f" (the default PATH is {spec.path})" if spec.path else "")
    )


def check_corpus(gold: GoldSet, corpus: Sequence[Path], papers: int) -> None:
    """The indexed corpus has as many papers as the gold file's corpus record says (a wrong or stale file)."""
    spec = gold.corpus
    if spec is not None and spec.papers is not None and papers != spec.papers:
        raise GoldError(
            f"{gold.path}:{spec.line}: the {spec.name} corpus has {spec.papers} papers, but "
            f"{', '.join(map(str, corpus))} gave {papers}" + (f"; rebuild it with `{spec.make}`" if spec.make else "")
        )


SAMPLE_SEED = 20261201
T = TypeVar("T")


def sample_cases(cases: Sequence[T], n: int, seed: int = SAMPLE_SEED) -> list[T]:
    """A fixed-seed random sample of ``n`` cases, kept in their original order (all when n >= their number)."""
    if n >= len(cases):
        return list(cases)
    keep = set(random.Random(seed).sample(range(len(cases)), n))
    return [c for i, c in enumerate(cases) if i in keep]


def evaluate_gold(
    gold: Path,
    configs: Sequence[Path | None],
    out: Path,
    *,
    repeat: int = 1,
    corpus: Sequence[Path] = (),
    base: dict[str, Any] | None = None,
    progress_factory: Callable[[str], tuple[Progress, Callable[[], None]]] | None = None,
    judge: Judge | None = None,
    judge_url: str | None = None,
    judge_model: str | None = None,
    assistants: Sequence[Assistant] | None = None,
    baseline: str | None = None,
    sample: int = 0,
) -> dict[str, Any]:
    """Run every config on the gold set and write the report. ``assistants`` (tests) replaces building them.

    ``sample`` > 0 keeps a fixed-seed random sample of that many cases (in file order), never the first N.

    ``baseline`` ("textbook") runs :mod:`rag.evaluation.baseline` on the single-paper questions right after
    the first config, with that assistant's papers, embeddings and chat model, and reports it beside it.
    """
    gold_set = load_gold_set(gold)
    if sample:
        gold_set = dataclasses.replace(gold_set, cases=sample_cases(gold_set.cases, sample))
    single = gold_set.of_type(EvalCase)
    if baseline is not None:
        if baseline not in BASELINES:
            raise ConfigError(f"unknown baseline {baseline!r}: choose one of {', '.join(BASELINES)}")
        if not single:
            raise ConfigError(f"--baseline {baseline} needs single-paper questions; {gold} has none")
    corpus_paths = [] if assistants is not None else corpus_for(gold_set, corpus)
    reports: list[EvalReport] = []
    baselines: list[EvalReport] = []
    resolved: list[GoldCase] = []
    for i, config in enumerate(configs):
        if assistants is not None:
            assistant = assistants[i]
        else:
            settings = settings_for(config, base)
            # the user's index is left alone: a separate data dir unless --data-dir was given
            data_dir = (
                settings.data_dir if "data_dir" in (base or {}) else Path(settings.cache_dir).expanduser() / "eval"
            )
            settings = settings.model_copy(
                update={"data_dir": data_dir, "collection": gold_collection(settings, corpus_paths)}
            )
            assistant = Assistant.from_settings(settings)
            assistant.ingest(corpus_paths, prune=True)
        papers = assistant.papers()
        check_corpus(gold_set, corpus_paths, len(papers))
        resolved = resolve_cases(gold_set.cases, papers, source=str(gold))
        run_judge = judge or make_judge(assistant.embeddings.embed_documents, judge_url, judge_model)
        label = config.stem if config is not None else "default"
        update, close = progress_factory(label) if progress_factory else (None, lambda: None)
        try:
            reports.append(
                run_eval(
                    assistant, resolved, repeat=repeat, progress=update, judge=run_judge, label=label, gold=str(gold)
                )
            )
        finally:
            close()
        if baseline is not None and i == 0:
            update, close = progress_factory(baseline) if progress_factory else (None, lambda: None)
            try:
                baselines.append(
                    run_baseline(
                        assistant,
                        [c for c in resolved if isinstance(c, EvalCase)],
                        baseline,
                        repeat=repeat,
                        progress=update,
                        gold=str(gold),
                    )
                )
            finally:
                close()
    extra: dict[str, Any] = {}
    extra_md: list[str] = []
    curves = None
    chosen_txt = ""
    if baselines:
        side = compare_with_baseline(reports[0], baselines[0], followups=sum(bool(c.history) for c in single))
        extra["baselines"] = [b.model_dump(mode="json") for b in baselines]
        extra["baseline_comparison"] = side.model_dump(mode="json")
        extra_md.append(render_side_by_side(side))
    # threshold tuning needs a run where nothing was filtered: both thresholds at 0
    by_id = {c.id: c for c in resolved if isinstance(c, EvalCase)}
    for rep in reports:
        ans = rep.settings.get("answer", {})
        if rep.rows and ans.get("min_relevance") == 0 and ans.get("min_support") == 0:
            tuning, tuning_md, curves, chosen_txt = tuning_section(rep, by_id)
            extra |= tuning
            extra_md.append(tuning_md)
            break
    doc = write_report(
        reports,
        out,
        extra=extra,
        extra_md="\n\n".join(extra_md),
        curves=curves,
        chosen=chosen_txt,
        baselines=baselines,
    )
    return doc


def tuning_section(rep: EvalReport, cases: dict[str, EvalCase]) -> tuple[dict[str, Any], str, Any, str]:
    points = tune.sweep(rep.rows, cases)
    best = tune.choose(points)
    current = next(p for p in points if p.min_relevance == 0.3 and p.min_support == 0.6)
    curves = {
        "by best relevance": tune.curve(rep.rows, cases, "relevance"),
        "by best support": tune.curve(rep.rows, cases, "support"),
    }
    chosen = f"chosen min_relevance={best.min_relevance}, min_support={best.min_support}"
    md = [
        "## Threshold tuning (replayed from the run with both thresholds at 0)",
        "",
        "| min_relevance | min_support | coverage | precision | accuracy | refusal recall | decision accuracy |",
        "|---|---|---|---|---|---|---|",
    ]
    top = sorted(points, key=lambda p: -(p.decision_accuracy or 0))[:8]
    for pid in list(dict.fromkeys([id(current), id(best)] + [id(p) for p in top])):
        p = next(x for x in points if id(x) == pid)
        tag = " (current)" * (p is current) + " (chosen)" * (p is best)
        md.append(
            f"| {p.min_relevance}{tag} | {p.min_support} | {fmt(p.coverage)} | {fmt(p.precision)} | "
            f"{fmt(p.accuracy)} | {fmt(p.refusal_recall)} | {fmt(p.decision_accuracy)} |"
        )
    md += ["", "![risk vs coverage](risk_coverage.png)"]
    extra = {
        "tuning": {
            "from_run": rep.label,
            "chosen": best.model_dump(),
            "current": current.model_dump(),
            "grid": [p.model_dump() for p in points],
            "curves": {k: [list(x) for x in v] for k, v in curves.items()},
        }
    }
    return extra, "\n".join(md), curves, chosen
