"""What each hand rule earns: question kinds and changed-fact checks without each rule, held-out, fresh and dev.

    python -m rag.evaluation.bench ablation [--part kinds] [--part claims] [--show]

The hand rules are named data: the regex alternatives of rag/answering/kinds.py (``kinds.RULES``, "table/name")
and the opposite-word pairs of rag/answering/facts.py (``facts.OPPOSITES``). For each rule this scores the
product without it (``classify_question(..., without={rule})``; verification inside ``facts.rules_off([rule])``)
on the three splits of eval/bench/_splits.py: held-out (eval/data/heldout/, frozen), fresh (written over SciFact
and ml_abstracts before the rules were read) and dev (what the rules were written against). No LLM: the kinds
come from the pipeline's first step, the claims are given to verification as the model's answer (bench claims).

* kinds: the change in accuracy (right answers gained or lost) per split, and how many of the 135 questions of
  the answer-quality sets (eval/data/neurips2026_gold.jsonl, 58, and neurips2026_check.jsonl, 77) change kind;
* claims: the change in rejected perturbed claims per kind (number, entity, negation), unsupported claims
  rejected, and true claims shown. A claim is re-checked without a pair only when that pair found a problem
  in it (``rules_off`` reports which did): elsewhere the pair changes nothing.

A rule is marked ``remove`` when its removal costs nothing on held-out and fresh (no right answer lost, no
rejection lost) and changes no gold kind; ``keep`` when it helps on either. Then the candidates are removed
together, one at a time (those that help nowhere first, then those that help only on dev), each kept out only
while the total still costs nothing on held-out and fresh: the last lines name the rules to take out of the
code and what taking them all out does.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import Any

from rag.answering import facts, kinds
from rag.answering.kinds import classify_question
from rag.evaluation.bench._splits import CLAIMS, DATA, KINDS, indexed, load_rows
from rag.evaluation.bench.claims import KINDS as CLAIM_KINDS
from rag.evaluation.bench.claims import cases, shown
from rag.evaluation.bench.kinds import Recognised, recognise
from rag.evaluation.bench.suite import Output

NEEDS_LLM = False
ORDER = ("heldout", "fresh", "dev")
# the answer-quality sets (rag eval): a removal must not change the kind of any of their questions
GOLD = (DATA / "neurips2026_gold.jsonl", DATA / "neurips2026_check.jsonl")


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument(
        "--part", action="append", choices=("kinds", "claims"), help="Which rules (repeatable; default: both)."
    )
    ap.add_argument("--show", action="store_true", help="List the questions and claims each removal changes.")


def _signed(n: int) -> str:
    return f"{n:+d}" if n else "0"


# ----------------------------------------------------------------------------------------------- kinds


def _kinds_right(got: list[Recognised], without: Iterable[str]) -> list[bool]:
    return [classify_question(r.standalone, named_papers=r.named_papers, without=without) == r.label for r in got]


def _kinds_cost(
    sets: dict[str, list[Recognised]], gold: list[Recognised], without: frozenset[str]
) -> tuple[dict[str, int], list[str]]:
    """Right answers gained (+) or lost (-) per split without the rules ``without``, and the gold questions
    whose kind changes."""
    delta = {s: sum(_kinds_right(got, without)) - sum(_kinds_right(got, ())) for s, got in sets.items()}
    changed = [
        r.question
        for r in gold
        if classify_question(r.standalone, named_papers=r.named_papers, without=without)
        != classify_question(r.standalone, named_papers=r.named_papers)
    ]
    return delta, changed


def ablate_kinds(show: bool) -> tuple[str, dict[str, Any]]:
    sets: dict[str, list[Recognised]] = {}
    for split in ORDER:
        with indexed(KINDS[split].corpus) as a:
            sets[split] = recognise(a, load_rows(KINDS[split].path))
    with indexed(None) as a:  # the gold questions' kinds, recognised as the product does
        gold = recognise(a, [{"question": r["question"], "kind": "?"} for g in GOLD for r in load_rows(g)])
    for split, got in sets.items():  # the bench's own call of the classifier is the pipeline's
        assert all(classify_question(r.standalone, named_papers=r.named_papers) == r.kind for r in got), split
    size = {s: len(got) for s, got in sets.items()}
    base = {s: sum(_kinds_right(got, ())) for s, got in sets.items()}
    lines = [
        "| rule | held-out | fresh | dev | gold changed | verdict |",
        "|---|---|---|---|---|---|",
    ]
    per_rule: dict[str, Any] = {}
    candidates = []
    for rule in kinds.RULES:
        delta, changed = _kinds_cost(sets, gold, frozenset([rule]))
        costs = delta["heldout"] < 0 or delta["fresh"] < 0 or changed
        verdict = "keep" if costs else "remove"
        if not costs:
            candidates.append(rule)
        per_rule[rule] = {"delta": delta, "gold_changed": changed, "verdict": verdict}
        lines.append(
            f"| `{rule}` | {_signed(delta['heldout'])} | {_signed(delta['fresh'])} | {_signed(delta['dev'])} "
            f"| {len(changed)} | {verdict} |"
        )
        if show:
            for split, got in sets.items():
                for r, right in zip(got, _kinds_right(got, [rule])):
                    if right != (r.kind == r.label):
                        lines.append(f"  - {split}: {'gains' if right else 'loses'} {r.label}: {r.question}")
    # the rules that help nowhere go first, those that help only on dev last (so the fewest dev answers are lost)
    candidates.sort(key=lambda rule: -per_rule[rule]["delta"]["dev"])
    removed = _greedy(candidates, lambda off: _kinds_acceptable(*_kinds_cost(sets, gold, off)))
    delta, changed = _kinds_cost(sets, gold, frozenset(removed))
    head = [
        "question kinds, right answers gained (+) or lost (-) without each rule "
        f"(held-out {base['heldout']}/{size['heldout']}, fresh {base['fresh']}/{size['fresh']}, "
        f"dev {base['dev']}/{size['dev']} with every rule; gold changed: of the {len(gold)} gold and check questions)",
        "",
    ]
    tail = [
        "",
        f"removed together ({len(removed)} of {len(kinds.RULES)} rules): held-out {_signed(delta['heldout'])}, "
        f"fresh {_signed(delta['fresh'])}, dev {_signed(delta['dev'])}, gold kinds changed {len(changed)}",
        "rules to remove: " + (", ".join(f"`{r}`" for r in removed) or "none"),
    ]
    figures = {
        "with_every_rule": {s: {"right": base[s], "n": size[s]} for s in sets},
        "rules": per_rule,
        "removed_together": {"rules": removed, "delta": delta, "gold_changed": changed},
    }
    return "\n".join(head + lines + tail), figures


def _kinds_acceptable(delta: dict[str, int], changed: list[str]) -> bool:
    return delta["heldout"] >= 0 and delta["fresh"] >= 0 and not changed


def _greedy(candidates: list[str], acceptable: Callable[[frozenset[str]], bool]) -> list[str]:
    """The candidates removed one at a time, each kept out only while the removal still costs nothing."""
    removed: list[str] = []
    for rule in candidates:
        if acceptable(frozenset([*removed, rule])):
            removed.append(rule)
    return removed


# ----------------------------------------------------------------------------------------------- claims


class _ClaimRun:
    """The claims of one split over its corpus: each claim's outcome with every pair and the pairs that fired."""

    def __init__(self, split: str) -> None:
        self.split = split
        self.rows = load_rows(CLAIMS[split].path)
        self.items = [(r["question"], kind, claim) for r in self.rows for kind, claim in cases(r)]
        self.corpus = CLAIMS[split].corpus

    def run(self, assistant: Any) -> None:
        self.assistant = assistant
        self.base: list[bool] = []
        self.fired: list[set[str]] = []
        for question, _, claim in self.items:
            with facts.rules_off() as fired:
                self.base.append(shown(assistant, question, claim))
            self.fired.append(set(fired))

    def outcome(self, off: frozenset[str]) -> list[bool]:
        """Whether each claim is shown with the pairs ``off`` left out (re-checked only where one fired)."""
        out = []
        for (question, _, claim), base, fired in zip(self.items, self.base, self.fired):
            if fired & off:
                with facts.rules_off(off):
                    out.append(shown(self.assistant, question, claim))
            else:
                out.append(base)
        return out

    def delta(self, off: frozenset[str]) -> Counter[str]:
        """Per claim kind, right answers gained (+) or lost (-): a true claim is right when shown, any
        other when not."""
        after = self.outcome(off) if off else self.base
        d: Counter[str] = Counter()
        for (_, kind, _), b, a in zip(self.items, self.base, after):
            if a != b:
                d[kind] += (1 if a else -1) if kind == "true" else (-1 if a else 1)
        return d

    def totals(self) -> dict[str, tuple[int, int]]:
        right: Counter[str] = Counter()
        n: Counter[str] = Counter()
        for (_, kind, _), s in zip(self.items, self.base):
            n[kind] += 1
            right[kind] += s if kind == "true" else not s
        return {k: (right[k], n[k]) for k in CLAIM_KINDS if n[k]}


def _claims_cell(d: Counter[str]) -> str:
    return ", ".join(f"{k} {d[k]:+d}" for k in CLAIM_KINDS if d[k]) or "0"


def _claims_costs(deltas: dict[str, Counter[str]]) -> bool:
    """A removal costs when a perturbed or unsupported claim is no longer rejected, or a true claim no
    longer shown, on held-out or fresh."""
    return any(v < 0 for s in ("heldout", "fresh") for v in deltas[s].values())


def ablate_claims(show: bool) -> tuple[str, dict[str, Any]]:
    runs = {split: _ClaimRun(split) for split in ORDER}
    with ExitStack() as stack:
        for r in runs.values():
            r.run(stack.enter_context(indexed(r.corpus)))
        lines = ["| pair | held-out | fresh | dev | verdict |", "|---|---|---|---|---|"]
        per_rule: dict[str, Any] = {}
        candidates = []
        for name in facts.OPPOSITES:
            deltas = {s: r.delta(frozenset([name])) for s, r in runs.items()}
            fired = {s: sum(name in f for f in r.fired) for s, r in runs.items()}
            costs = _claims_costs(deltas)
            verdict = "keep" if costs else "remove"
            if not costs:
                candidates.append(name)
            per_rule[name] = {"delta": {s: dict(d) for s, d in deltas.items()}, "fired": fired, "verdict": verdict}
            cells = " | ".join(f"{_claims_cell(deltas[s])} ({fired[s]} fired)" for s in ORDER)
            lines.append(f"| `{name}` | {cells} | {verdict} |")
            if show:
                for s, r in runs.items():
                    lines += [f"  - {s} {k}: {c}" for (_, k, c), f in zip(r.items, r.fired) if name in f]
        candidates.sort(key=lambda name: -sum(per_rule[name]["delta"]["dev"].values()))
        removed = _greedy(candidates, lambda off: not _claims_costs({s: r.delta(off) for s, r in runs.items()}))
        joint = {s: r.delta(frozenset(removed)) for s, r in runs.items()}
        totals = {s: r.totals() for s, r in runs.items()}
    head = [
        "changed-fact claims, right answers gained (+) or lost (-) without each opposite-word pair (true: shown; "
        "number, entity, negation, unsupported: rejected); 'fired': claims in which the pair found a problem",
        "",
        "with every pair: "
        + "; ".join(f"{s} " + ", ".join(f"{k} {right}/{n}" for k, (right, n) in totals[s].items()) for s in ORDER),
        "",
    ]
    tail = [
        "",
        f"removed together ({len(removed)} of {len(facts.OPPOSITES)} pairs): "
        + "; ".join(f"{s} {_claims_cell(joint[s])}" for s in ORDER),
        "pairs to remove: " + (", ".join(f"`{r}`" for r in removed) or "none"),
    ]
    figures = {
        "with_every_rule": totals,
        "rules": per_rule,
        "removed_together": {"rules": removed, "delta": {s: dict(d) for s, d in joint.items()}},
    }
    return "\n".join(head + lines + tail), figures


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    parts = args.part or ["kinds", "claims"]
    if "kinds" in parts:
        text, figures["kinds"] = ablate_kinds(args.show)
        out.table("kinds.md", text)
    if "claims" in parts:
        text, figures["claims"] = ablate_claims(args.show)
        out.table("claims.md", "\n" + text)
    return figures
