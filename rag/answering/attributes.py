"""Kinds of table attributes: the question the model answers for an attribute, and what a value of it must look like.

A table's attributes are free text ("task, dataset, metric, best result"), but a few kinds recur, and
a small model fills them badly without guidance: it gives a research area as the dataset, a capability
as the metric, "strong gains" as the best result. An attribute whose name says its kind (a word of the
name, e.g. "datasets used" is a dataset) is asked as that kind's question, and the value the model wrote
is checked; a value that fails the check is dropped (the cell shows "not stated"), exactly as a value no
sentence holds is. An attribute of no known kind is asked plainly ("What is the colour of the logo of
this paper?") and not checked, so any attribute still works.

The question and the check are defined together so the prompt and the code cannot disagree on what a
dataset or a result is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag.answering.facts import numbers
from rag.corpus.tokens import VALUE_NAME

_DATA_NOUN = re.compile(
    r"\b(?:data|datasets?|data ?sets?|benchmarks?|corpus|corpora|collections?|suites?|images|videos|texts|"
    r"documents|recordings|scans|samples|trajectories|environments|games|tasks? suite|splits?|annotations|"
    r"records|cohorts?|patients|simulations|instances|problems|questions)\b",
    re.I,
)
_MEASURE_NOUN = re.compile(
    r"\b(?:accuracy|error|precision|recall|f1|score|loss|risk|likelihood|perplexity|rate|time|runtime|latency|"
    r"throughput|speed-?up|returns?|rewards?|regret|correlation|distance|divergence|similarity|fidelity|"
    r"complexity|match|success|cost|memory|auc|auroc|iou|dice|bleu|rouge|fid|psnr|ssim|mae|mse|rmse|"
    r"calibration|coverage|agreement|variance|bias|gap)\b",
    re.I,
)


def has_number(value: str) -> bool:
    """A figure: digits or a number word ("seven")."""
    return bool(numbers(value))


def is_data(value: str) -> bool:
    """Names data: a proper name (WildBox, ImageNet-1k) or a noun for data ("real patient data",
    "five reasoning benchmarks"), not a field or a task ("3D biomedical image segmentation")."""
    return bool(VALUE_NAME.search(value) or _DATA_NOUN.search(value))


def is_measure(value: str) -> bool:
    """Names a measure: a measure noun ("empirical risk", "Brier score") or a name (AP@50, ECE, pass@k),
    not a capability ("end-to-end vulnerability discovery")."""
    return bool(VALUE_NAME.search(value) or _MEASURE_NOUN.search(value))


@dataclass(frozen=True, kw_only=True)
class AttributeKind:
    """Attributes whose name has one of ``words`` (a regex over the lower-cased name)."""

    words: str
    question: str  # "{attribute}" is replaced by the attribute's name
    check: Callable[[str], bool] | None = None

    def matches(self, attribute: str) -> bool:
        return re.search(rf"\b(?:{self.words})\b", attribute.lower()) is not None


# first match wins: "result metric" is a metric, "dataset size" a number
KINDS: tuple[AttributeKind, ...] = (
    AttributeKind(
        words=r"metrics?|measures?|evaluation",
        question="Which evaluation measure (metric) does the paper report its results in?",
        check=is_measure,
    ),
    AttributeKind(
        words=r"size|number|count|how many|parameters",
        question="What is the {attribute}? Give the number.",
        check=has_number,
    ),
    AttributeKind(
        words=r"results?|scores?|accuracy|performance|improvements?|gains?|speed-?ups?",
        question="What is the best {attribute} the paper reports (a number)?",
        check=has_number,
    ),
    AttributeKind(
        words=r"datasets?|data ?sets?|benchmarks?|corpus|corpora",
        question="What data are the paper's experiments run on (a named dataset or benchmark, or a description)?",
        check=is_data,
    ),
    AttributeKind(words=r"tasks?|problems?", question="What task or problem does the paper address?"),
    AttributeKind(
        words=r"methods?|approach|technique|algorithm",
        question="What method or approach does the paper propose or use? "
        "Describe it in a few words, not just its name.",
    ),
    AttributeKind(
        words=r"domains?|field|application",
        question="What kind of data or application area do the paper's experiments concern?",
    ),
    AttributeKind(
        words=r"findings?|conclusions?|claims?|contributions?",
        question="What is the paper's main finding: what do the authors find, prove or show?",
    ),
    AttributeKind(words=r"limitations?|weakness(?:es)?", question="What limitation does the abstract state?"),
)


def kind_of(attribute: str) -> AttributeKind | None:
    """The kind an attribute name says, else None."""
    return next((k for k in KINDS if k.matches(attribute)), None)


def value_fits(attribute: str, value: str) -> bool:
    """Whether ``value`` is of the attribute's kind (always, for an attribute of no known kind)."""
    kind = kind_of(attribute)
    return kind is None or kind.check is None or kind.check(value)


def question_for(attribute: str) -> str:
    """The question the model answers for one attribute: its kind's, else "What is the <attribute> of this paper?"."""
    kind = kind_of(attribute)
    if kind is None:
        return f"What is the {attribute} of this paper?"
    return kind.question.replace("{attribute}", re.sub(r"^(?:best|top|highest|main)\s+", "", attribute, flags=re.I))
