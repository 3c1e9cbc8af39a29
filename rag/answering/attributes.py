"""Kinds of table attributes: what the model is told an attribute means, and what a value of it must look like.

A table's attributes are free text ("task, dataset, metric, best result"), but a few kinds recur, and
a small model fills them badly without a word of guidance: it gives a research area as the dataset,
a capability as the metric, "strong gains" as the best result. An attribute whose name says its kind
(a word of the name, e.g. "datasets used" is a dataset) gets a short hint in the prompt and a check on
the value the model wrote; a value that fails the check is dropped (the cell shows "not stated"),
exactly as a value no sentence holds is. Attributes of no known kind get neither: they are filled as
before, so any attribute still works.

The hint and the check are defined together so the prompt and the code cannot disagree on what a
dataset or a result is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag.answering.facts import numbers

# a name: an inner capital, letters and digits mixed, an acronym, '@' or '&' (ImageNet, GPT-4, COCO, AP@50,
# Who&When); a dimension such as "3D" alone is no name
_NAME = re.compile(r"(?<![\w@&-])(?!\d[Dd]\b)(?=[\w@&.-]*(?:[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|[A-Z]{2}|@|&))\w[\w@&.-]*")
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
    return bool(_NAME.search(value) or _DATA_NOUN.search(value))


def is_measure(value: str) -> bool:
    """Names a measure: a measure noun ("empirical risk", "Brier score") or a name (AP@50, ECE, pass@k),
    not a capability ("end-to-end vulnerability discovery")."""
    return bool(_NAME.search(value) or _MEASURE_NOUN.search(value))


@dataclass(frozen=True)
class AttributeKind:
    """Attributes whose name has one of ``words`` (a regex over the lower-cased name)."""

    words: str
    hint: str
    check: Callable[[str], bool] | None = None

    def matches(self, attribute: str) -> bool:
        return re.search(rf"\b(?:{self.words})\b", attribute.lower()) is not None


# first match wins: "result metric" is a metric, "dataset size" a number
KINDS: tuple[AttributeKind, ...] = (
    AttributeKind(r"metrics?|measures?|evaluation", "named evaluation measure", is_measure),
    AttributeKind(r"size|number|count|how many|parameters", "a number", has_number),
    AttributeKind(
        r"results?|scores?|accuracy|performance|improvements?|gains?|speed-?ups?", "best number reported", has_number
    ),
    AttributeKind(r"datasets?|data ?sets?|benchmarks?|corpus|corpora", "named data used in experiments", is_data),
    AttributeKind(r"tasks?|problems?", "the problem studied"),
    AttributeKind(r"methods?|approach|technique|algorithm", "the approach proposed or used"),
    AttributeKind(r"domains?|field|application", "kind of data or application"),
    AttributeKind(r"findings?|conclusions?|claims?|contributions?", "the headline conclusion"),
    AttributeKind(r"limitations?|weakness(?:es)?", "a weakness the abstract states"),
)


def kind_of(attribute: str) -> AttributeKind | None:
    """The kind an attribute name says, else None."""
    return next((k for k in KINDS if k.matches(attribute)), None)


def form_line(attribute: str) -> str:
    """The attribute's line in the prompt: ``"dataset (named data used in experiments):"``."""
    kind = kind_of(attribute)
    return f"{attribute} ({kind.hint}):" if kind else f"{attribute}:"


def value_fits(attribute: str, value: str) -> bool:
    """Whether ``value`` is of the attribute's kind (always, for an attribute of no known kind)."""
    kind = kind_of(attribute)
    return kind is None or kind.check is None or kind.check(value)
