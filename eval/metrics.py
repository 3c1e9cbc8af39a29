"""Evaluation metrics: pure functions over ids, texts and numbers (no model, no I/O).

Every function returns a float in [0, 1] (or seconds for latency), or ``None`` when the metric is
undefined for the input (e.g. precision with nothing answered). ``None`` becomes ``null`` in JSON
and "n/a" in the Markdown report: the harness never produces NaN.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Collection, Mapping, Sequence

# ---------------------------------------------------------------------- separation


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """The probability that a positive scores above a negative (ties count half): the ROC AUC of a score."""
    if not len(positives) or not len(negatives):
        return None
    wins = sum((x > z) + 0.5 * (x == z) for x in positives for z in negatives)
    return float(wins / (len(positives) * len(negatives)))


# ---------------------------------------------------------------------- retrieval


def ndcg_at(ranked: Sequence[str], rel: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with graded relevance ``rel`` (BEIR convention: gain = relevance, log2 discount)."""
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], rel: Mapping[str, int] | set[str] | Sequence[str], k: int) -> float:
    """Share of the relevant ids found in the first ``k`` ranked ids."""
    relevant = set(rel)
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def reciprocal_rank(ranked: Sequence[str], rel: Mapping[str, int] | set[str] | Sequence[str]) -> float:
    """1 / rank of the first relevant id (0 when none is ranked); the mean over queries is MRR."""
    relevant = set(rel)
    for i, d in enumerate(ranked):
        if d in relevant:
            return 1.0 / (i + 1)
    return 0.0


# ---------------------------------------------------------------------- citations


def citation_precision(cited: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the distinct cited papers that are gold papers; None when nothing is cited."""
    c = set(cited)
    return len(c & set(gold)) / len(c) if c else None


def citation_recall(cited: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the gold papers that are cited; None when there is no gold paper."""
    g = set(gold)
    return len(set(cited) & g) / len(g) if g else None


# ---------------------------------------------------------------------- answer text

_NUM_SEP = re.compile(r"(?<=\d)[,\u2009\u202f](?=\d{3}\b)")


def normalise_answer(text: str) -> str:
    """Lower-case, thousands separators removed ("237,505" -> "237505"), LaTeX/Markdown noise
    dropped, whitespace collapsed, so that keyword matching is about content, not formatting."""
    t = text.lower()
    t = _NUM_SEP.sub("", t)
    t = re.sub(r"[*_$`{}]", "", t)
    t = t.replace("\\pm", "±")
    t = re.sub(r"(\d)\s*(?:\\times|×|x|times)(?![a-z])", r"\1×", t)  # "20$\times$", "20x", "20 times" -> "20×"
    t = t.replace("\\", "")
    t = t.replace("\u2013", "-").replace("\u2014", "-").replace("\u2019", "'")
    return re.sub(r"\s+", " ", t).strip()


def keyword_group_found(text: str, group: str) -> bool:
    """A group is alternatives separated by ``|``; it is found when any alternative occurs in the text.

    Matching is after :func:`normalise_answer`; an alternative must start a word (so it may be a
    stem: "interfer" matches "interference"), and one ending in a digit must end the number, so
    "65" does not match "650" or "65.3", and "237,505" matches "237505".
    """
    t = normalise_answer(text)
    for alt in group.split("|"):
        a = normalise_answer(alt)
        end = r"(?![\d]|[.,]\d)" if a[-1:].isdigit() else ""
        if a and re.search(rf"(?<![\w.]){re.escape(a)}{end}", t):
            return True
    return False


def keyword_score(text: str, groups: Sequence[str]) -> float | None:
    """Share of keyword groups found; None when there are no groups."""
    return sum(keyword_group_found(text, g) for g in groups) / len(groups) if groups else None


def answer_correct(text: str, groups: Sequence[str]) -> bool:
    """Correct when every keyword group is found (a question without groups: any answer is correct)."""
    return all(keyword_group_found(text, g) for g in groups)


def supported_rate(supported_flags: Sequence[bool]) -> float | None:
    """Share of the answer's claims that the verifier found supported; None when there are none."""
    return sum(bool(x) for x in supported_flags) / len(supported_flags) if supported_flags else None


def answer_verdict(text: str, verdict: str | None = None) -> str | None:
    """The yes/no verdict of an answer: ``verdict`` when the system gave one ("yes", "no", "not stated"),
    else "yes" or "no" when the text starts with that word, else None (no verdict)."""
    if verdict:
        return verdict
    m = re.match(r"[\W_]*(yes|no)\b", normalise_answer(text))
    return m.group(1) if m else None


# ---------------------------------------------------------------------- lists


def list_scores(
    returned: Sequence[str], expected: Collection[str], borderline: Collection[str] = ()
) -> tuple[float | None, float, float]:
    """(precision, recall, F1) of the returned paper ids against the expected set.

    Duplicates count once and borderline papers are ignored on both sides (removed from both sets).
    Nothing expected and nothing returned is a perfect answer: (1, 1, 1). Nothing returned while
    something was expected: precision None (undefined), recall 0, F1 0. Something returned while
    nothing was expected: precision 0, recall 1 (nothing was missed), F1 0.
    """
    skip = set(borderline)
    got = set(returned) - skip
    gold = set(expected) - skip
    if not got and not gold:
        return 1.0, 1.0, 1.0
    hits = len(got & gold)
    precision = hits / len(got) if got else None
    recall = hits / len(gold) if gold else 1.0
    p = precision or 0.0
    f1 = 2 * p * recall / (p + recall) if p + recall else 0.0
    return precision, recall, f1


def count_correct(returned: int, expected: int, borderline: int = 0) -> bool:
    """A "how many" answer of ``returned`` papers is right when it lies between the expected count and
    the expected count plus the borderline papers (each may be counted either way)."""
    return expected <= returned <= expected + borderline


# ---------------------------------------------------------------------- comparisons


def comparison_coverage(
    papers: Sequence[tuple[str, Sequence[str]]],
    citations: Sequence[tuple[int, str]],
    sentences: Sequence[tuple[str, Sequence[int], bool]],
) -> list[bool]:
    """Per named paper ``(paper_id, keyword groups)``: is it covered by the answer?

    ``citations`` are the answer's verified citations as ``(n, paper_id)``; ``sentences`` are
    ``(text, markers, supported)``. A paper is covered when at least one supported sentence cites it
    (one of its markers is a citation that resolves to the paper) and every keyword group is found
    in the text of the supported sentences that cite it.
    """
    out = []
    for pid, groups in papers:
        texts = _supported_citing(pid, citations, sentences)
        out.append(bool(texts) and answer_correct(" ".join(texts), groups))
    return out


def _supported_citing(
    pid: str, citations: Sequence[tuple[int, str]], sentences: Sequence[tuple[str, Sequence[int], bool]]
) -> list[str]:
    markers = {n for n, cited in citations if cited == pid}
    return [text for text, ns, ok in sentences if ok and markers & set(ns)]


def supported_citations(
    paper_ids: Sequence[str],
    citations: Sequence[tuple[int, str]],
    sentences: Sequence[tuple[str, Sequence[int], bool]],
) -> list[bool]:
    """Per named paper: does at least one supported sentence of the answer cite it (whatever it says)?"""
    return [bool(_supported_citing(pid, citations, sentences)) for pid in paper_ids]


# ---------------------------------------------------------------------- tables


def find_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` occurs in ``text`` (runs of whitespace match any whitespace); None if nowhere."""
    words = quote.split()
    if not words:
        return None
    m = re.search(r"\s+".join(map(re.escape, words)), text)
    return (m.start(), m.end()) if m else None


def spans_overlap(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    """Two character spans share at least one character."""
    return a is not None and b is not None and max(a[0], b[0]) < min(a[1], b[1])


_SPAN_STOPWORDS = {"with", "from", "that", "this", "than", "into", "over", "their", "which", "while", "both"}


def value_span(abstract: str, value: str, quote: str = "") -> tuple[int, int] | None:
    """Where a table value itself sits in the abstract: verbatim (case-insensitive; inside its quote
    when it has one), else the stretch of the quote from the first to the last of the value's words
    (4+ letters, not glue words) found there; None when neither. Not the whole quote: a vague value taken from the
    sentence that holds the gold support ("a principled strategy") must not count as that support."""
    q = find_span(abstract, quote) if quote else None
    lo, hi = q if q is not None else (0, len(abstract))
    words = value.split()
    if words:
        m = re.compile(r"\s+".join(map(re.escape, words)), re.I).search(abstract, lo, hi)
        if m:
            return m.start(), m.end()
    if q is None:
        return None
    hits = [
        m.span()
        for w in set(re.findall(r"[^\W_]{4,}", value)) - _SPAN_STOPWORDS
        for m in re.finditer(rf"(?<![^\W_]){re.escape(w)}", abstract[lo:hi], re.I)
    ]
    return (lo + min(a for a, _ in hits), lo + max(b for _, b in hits)) if hits else None


def with_definitions(value: str, abstract: str) -> str:
    """``value`` followed by what the abstract defines each name in it as: "CoCHI" -> "CoCHI (Class-oriented
    Causal Head Intervention)" when the abstract writes "CoCHI (Class-oriented ...)" or "... (CoCHI)".
    A method given by its name is the method the abstract describes under that name."""
    text = re.sub(r"[*_]{1,2}|\\emph\{|\}", "", abstract)
    extra = []
    for name in dict.fromkeys(re.findall(r"[A-Za-z][\w&-]*[A-Z][\w&-]*", value)):
        e = re.escape(name)
        after = re.search(rf"(?<![\w-]){e}\s*\(([^()]{{3,80}})\)", text)
        if after:
            extra.append(after.group(1))
        before = re.search(rf"((?:[\w-]+\s+){{1,{sum(c.isupper() for c in name)}}})\({e}\)", text)
        if before:
            extra.append(before.group(1).strip())
    return " ".join([value, *extra])


def cell_correct(
    value: str | None,
    *,
    not_stated: bool,
    value_keywords: Sequence[str] = (),
    value_span: tuple[int, int] | None = None,
    support_span: tuple[int, int] | None = None,
    abstract: str = "",
) -> bool:
    """A gold ``not_stated`` cell is right when the table leaves it empty (``value`` None). A stated
    cell is right when the table gives a value that matches every keyword group (names the abstract
    defines read with their definitions: :func:`with_definitions`), or whose own place in the abstract
    (``value_span``, see :func:`value_span`) overlaps the gold support (``support_span``)."""
    if not_stated:
        return value is None
    if value is None:
        return False
    text = with_definitions(value, abstract) if abstract else value
    return answer_correct(text, value_keywords) or spans_overlap(value_span, support_span)


def value_supported(quote: str, abstract: str) -> bool:
    """A shown table value is supported when its quote is a non-empty verbatim substring of the paper's
    abstract (whitespace-insensitive)."""
    return find_span(abstract, quote) is not None


# ---------------------------------------------------------------------- abstention (LitQA2-style)


def abstention_metrics(
    answerable: Sequence[bool], answered: Sequence[bool], correct: Sequence[bool]
) -> dict[str, float | None]:
    """LitQA2-style scores over one run.

    ``correct[i]`` is whether the *answer* was right (for an unanswerable question, answering is never
    right). Then: precision = correct / answered, accuracy = correct / all answerable (refusing an
    answerable question counts as wrong), coverage = answered / all, refusal recall = refused
    unanswerable / unanswerable, false-refusal rate = refused answerable / answerable, and
    ``decision_accuracy`` credits a refusal of an unanswerable question as right (correct answers +
    right refusals over all).
    """
    n = len(answerable)
    ans = [i for i in range(n) if answered[i]]
    good = [i for i in ans if answerable[i] and correct[i]]
    a_idx = [i for i in range(n) if answerable[i]]
    u_idx = [i for i in range(n) if not answerable[i]]
    return {
        "precision": len(good) / len(ans) if ans else None,
        "accuracy": len(good) / len(a_idx) if a_idx else None,
        "coverage": len(ans) / n if n else None,
        "refusal_recall": sum(not answered[i] for i in u_idx) / len(u_idx) if u_idx else None,
        "false_refusal_rate": sum(not answered[i] for i in a_idx) / len(a_idx) if a_idx else None,
        "decision_accuracy": (len(good) + sum(not answered[i] for i in u_idx)) / n if n else None,
    }


def risk_coverage(confidence: Sequence[float], correct: Sequence[bool]) -> list[tuple[float, float, float]]:
    """Selective-prediction curve: for each threshold t (each distinct confidence, high to low),
    answer only when confidence >= t. Returns ``(t, coverage, risk)`` with risk = 1 - precision."""
    n = len(confidence)
    out = []
    for t in sorted(set(confidence), reverse=True):
        kept = [c for conf, c in zip(confidence, correct) if conf >= t]
        out.append((t, len(kept) / n, 1 - sum(kept) / len(kept)))
    return out


# ---------------------------------------------------------------------- summaries


def mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default); None for no values."""
    vals = sorted(values)
    if not vals:
        return None
    pos = (len(vals) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def bootstrap_ci(
    values: Sequence[float | None],
    stat: Callable[[Sequence[float]], float | None] = mean,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of ``stat`` over the non-None ``values`` (fixed seed: reproducible)."""
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return None, None
    rng = random.Random(seed)
    stats = []
    for _ in range(n_resamples):
        s = stat([vals[rng.randrange(len(vals))] for _ in vals])
        if s is not None:
            stats.append(s)
    alpha = (1 - level) / 2 * 100
    return percentile(stats, alpha), percentile(stats, 100 - alpha)


def paired_bootstrap_delta(
    a: Sequence[float | None], b: Sequence[float | None], n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float | None, float | None, float | None]:
    """Mean of (b - a) over the items both define, with a paired percentile-bootstrap CI."""
    diffs = [float(y) - float(x) for x, y in zip(a, b) if x is not None and y is not None]
    if not diffs:
        return None, None, None
    lo, hi = bootstrap_ci(diffs, n_resamples=n_resamples, seed=seed, level=level)
    return sum(diffs) / len(diffs), lo, hi


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score 95 % interval of a proportion ``hits / n`` (sound at 0, 1 and small n)."""
    if n <= 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
