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

A value is also checked against its paper (:func:`fits_paper`): the name of the paper's own contribution
(a name its title gives, or one its abstract introduces: "we propose MaskGen", "what we coin the Symmetry
Lottery") is not the paper's dataset unless the abstract introduces it as data ("We introduce WildBox, a
dataset and benchmark ..."), is never its task (a task is the problem, not the paper's answer to it), and a
name introduced as data is not its method.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rag.answering.facts import numbers
from rag.corpus import normalise_text
from rag.corpus.tokens import VALUE_NAME, title_names

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


_INTRODUCE = (
    r"\b(?:introduc|present|releas|propos|contribut|construct|curat|build|built|creat|develop|design|coin|"
    r"term|call|dub|name)\w*"
)


def _introduction_matches(name: str, abstract: str) -> list[re.Match[str]]:
    """Where ``abstract`` introduces ``name``: a verb of introducing ("we present", "we coin") followed, within two
    lower-case words or articles, by the name (group ``name``); each match from a few words before the verb (not
    across a comma: "For finite data, we propose X" is another clause; "a new dataset called X" is not) to a few
    after the name, within its sentence.
    The words between are truly lower-case: "propose Selective Social Learning" does not introduce "Social
    Learning"; and the name must be written as one: "a designed social learning mechanism" introduces no name."""
    if not name.strip():
        return []
    pattern = re.compile(
        rf"(?:[\w-]+[^\w,;:()]+){{0,4}}?(?i:{_INTRODUCE})\W+(?:[a-z]+\W+){{0,2}}?[*_\"“']?(?P<name>(?i:{re.escape(name.strip())}))"
        rf"(?![\w-])(?:\W+\w+){{0,6}}"
    )
    sentences = re.split(r"(?<=[.!?])\s+", normalise_text(abstract))
    return [
        m
        for sentence in sentences
        for m in pattern.finditer(sentence)
        if m.group("name") != m.group("name").lower() or any(c.isdigit() for c in m.group("name"))
    ]


def _introduced(name: str, abstract: str) -> list[str]:
    """The passages of ``abstract`` that introduce ``name`` (see :func:`_introduction_matches`)."""
    return [m.group(0) for m in _introduction_matches(name, abstract)]


def _own_name(value: str, title: str, abstract: str) -> bool:
    """``value`` is what the paper calls its own contribution: a name of its title, or introduced in its abstract."""
    v = " ".join(value.split()).strip(" *_").lower()
    head = title.split(":", 1)[0] if ":" in title else ""  # "WildBox: A Dataset ..." is called WildBox
    names = [*title_names(title)[1:-1], head]  # its short names, not the whole title (a task may be the title)
    if any(v == " ".join(n.split()).strip().lower() for n in names if n.strip()):
        return True
    return bool(VALUE_NAME.search(value) or value[:1].isupper()) and bool(_introduced(value, abstract))


# after the name, only an apposition or a head noun says what it is: "WildBox, a dataset and ...", "X (XB): a
# benchmark", "the X corpus"; not the words that follow ("X (OLD-Net) taking only RGB images as input")
_APPOSITION = re.compile(
    rf"^(?:\s*\([^)]*\))?(?:\s*[,:(–—-]\s*(?:an?|the|our)\s+(?:[\w-]+\s+){{0,3}}?|\s+){_DATA_NOUN.pattern}", re.I
)


def _introduced_as_data(value: str, abstract: str) -> bool:
    """The abstract introduces ``value`` as data, in the words around the name: "We introduce WildBox, a dataset
    and benchmark ...", "we present a dataset called X" (a data word before the name, or in an apposition after
    it; not a data word elsewhere in the sentence: "we propose X, taking only RGB images as input")."""
    for m in _introduction_matches(value, abstract):
        before = m.string[m.start() : m.start("name")]
        after = m.string[m.end("name") : m.end()]
        if _DATA_NOUN.search(before) or _APPOSITION.search(after):
            return True
    return False


def fits_paper(attribute: str, value: str, title: str, abstract: str) -> bool:
    """Whether ``value`` is of the attribute's kind for this paper (see the module docstring): the paper's own
    named contribution is its dataset only when introduced as data, never its task; data it introduces is not
    its method."""
    kind = kind_of(attribute)
    if kind is None or kind.own_work == "any":
        return True
    if kind.own_work == "not data":
        return not _introduced_as_data(value, abstract)
    if not _own_name(value, title, abstract):
        return True
    return kind.own_work == "if data" and _introduced_as_data(value, abstract)


def has_number(value: str) -> bool:
    """A figure: digits or a number word ("seven")."""
    return bool(numbers(value))


# a number that is part of a name: "pass@1", "top-1", "GPT-4", "AP-BEV@0.50" (a metric's or model's variant)
_NAME_NUMBER = re.compile(r"(?<=[A-Za-z])[@-]\d+(?:[.,]\d+)*")


def figures(value: str) -> set[str]:
    """The numbers of ``value`` that stand on their own, not inside a name ("pass@1" has none, "8.68 AP@50" 8.68)."""
    return numbers(_NAME_NUMBER.sub(" ", value))


def has_figure(value: str) -> bool:
    """A result: a number of its own ("8.68±0.47 AP-BEV@0.50", "seven of ten tasks"), not only a name's digits."""
    return bool(figures(value))


def counts_data(value: str, sentence: str) -> bool:
    """Every figure of ``value`` counts data in ``sentence`` ("12,326 failed trajectories", "three environments"):
    the size of what was used, not a result."""
    counted = {
        n
        for m in re.finditer(rf"(\S+)(?=\s+(?:[\w-]+\s+){{0,2}}?{_DATA_NOUN.pattern})", sentence, re.I)
        for n in figures(m.group(1))
    }
    found = figures(value)
    return bool(found) and found <= counted


def is_data(value: str) -> bool:
    """Names data: a proper name (WildBox, ImageNet-1k) or a noun for data ("real patient data",
    "five reasoning benchmarks"), not a field or a task ("3D biomedical image segmentation")."""
    return bool(VALUE_NAME.search(value) or _DATA_NOUN.search(value))


# words that say how data was obtained or how much of it, or that it is data: none of them names a kind of data
_HOW_OR_WHAT = re.compile(
    r"(?:data|datasets?|data ?sets?|benchmarks?|scenarios?|settings?|experiments?|synthetic|real|real-world|world|"
    r"observational|experimental|empirical|simulated|challenging|public|publicly|available|standard|popular|"
    r"several|multiple|various|diverse|large-scale|small-scale|practical|existing|new|different|and|or|of|the|a|an)",
    re.I,
)


# a way of learning or a family of models: "(deep | reinforcement | quantum machine) learning", "MoE architectures"
_LEARNING_HEAD = re.compile(r"\b(?:learning|architectures?)\W*$", re.I)


def names_learning(value: str) -> bool:
    """Each part of ``value`` names a way of learning or a family of models ("Quantum machine learning (QML)",
    "Large-scale deep learning, MoE architectures"): how a paper learns, its method's field, not what data it
    learns from."""
    parts = [p for p in re.split(r"[,;/]|\band\b", re.sub(r"\([^)]*\)", " ", value)) if p.strip()]
    return bool(parts) and all(_LEARNING_HEAD.search(p) for p in parts)


def is_domain(value: str) -> bool:
    """Names a kind of data or an area ("time series", "real patient data", "mobile applications"), not data
    described only by how it was obtained ("observational data", "synthetic and real-world data", "practical
    scenarios"), nor a way of learning ("multi-agent reinforcement learning": :func:`names_learning`)."""
    return any(not _HOW_OR_WHAT.fullmatch(w) for w in re.findall(r"[\w-]+", value)) and not names_learning(value)


# the head noun of data named only by the words around it: "Real patient data", "Indoor and outdoor datasets"
_DATA_HEAD = re.compile(r"\b(?:data|datasets?|data ?sets|benchmarks?|scenarios?|settings?|experiments?)\W*$", re.I)


def vague_domain(value: str) -> bool:
    """A domain value whose head noun is a word for data or a setting ("Real patient data", "multi-turn editing
    scenarios"): the words before it may name a kind of data, or only where it came from."""
    return _DATA_HEAD.search(value) is not None


# what a finding is not: the paper's contribution defined ("WiREBench is a unique benchmark ..."), its method
# described ("PUDA tailors a risk estimator ..."), or what ought to be ("X should be a first-class object")
_NOT_FINDING = re.compile(
    r"^(?:the\s+proposed\s+|our\s+|this\s+)?[\w()-]+(?:\s+[\w()-]+){0,3}?\s+(?:(?:is|are)\s+(?:a|an)\s|"
    r"(?:uses?|employs?|leverages?|combines?|integrates?|consists?|comprises?|relies|builds?|tailors?|adopts?|"
    r"incorporates?|contains?)\b)|\b(?:should|must|ought\s+to)\b",
    re.I,
)


def is_finding(value: str) -> bool:
    """States something found, proved or shown ("DLR outperforms prior latent reasoning baselines", "router updates
    freeze after one step"), not the contribution defined or described, nor a recommendation."""
    return _NOT_FINDING.search(value) is None


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
    #: the paper's own named contribution as a value: "any" (allowed), "if data" (only when the abstract
    #: introduces it as data), "never"; "not data": no name the abstract introduces as data
    own_work: Literal["any", "if data", "never", "not data"] = "any"
    #: an abstract states one, often in a description rather than a name ("five reasoning benchmarks"; every
    #: empirical paper has a task, a method and a finding): when the model says "not stated", it is asked again
    #: without that option, and the value check (``check``), the paper and the sentence that holds it decide
    described: bool = False
    #: a statement (a finding): a value is a clause, and one the model reworded is shown as the abstract's sentence
    #: that holds half of it (rag.answering.table); other values are phrases, located as they are
    statement: bool = False
    #: asked when no value of the kind is stated (the model names none, or none is kept): a broader question whose
    #: answer counts only when the paper's title names it too ("Knowledge graph completion" for a paper whose
    #: experiments are on "real-world benchmark datasets"), never a field the title does not name ("machine learning")
    area_question: str | None = None
    #: a result: a figure that counts the data in its sentence ("12,326 trajectories") is a size, not a result
    result: bool = False
    #: asked when the model's value is not of the kind for its paper (:func:`fits_paper`: a method that is the
    #: paper's data) or fails ``sharper_check`` (a finding given as the contribution described): a sharper question
    #: whose answer, when a sentence states it and it passes both, takes the value's place; otherwise the value
    #: stands (or the cell stays empty)
    sharper: str | None = None
    sharper_check: Callable[[str], bool] | None = None

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
        check=has_figure,
        result=True,
    ),
    AttributeKind(
        words=r"datasets?|data ?sets?|benchmarks?|corpus|corpora",
        question="What data are the paper's experiments run on (a named dataset or benchmark, or a description)?",
        check=is_data,
        own_work="if data",
        described=True,
    ),
    AttributeKind(
        words=r"tasks?|problems?",
        question="What task or problem does the paper address?",
        own_work="never",
        described=True,
    ),
    AttributeKind(
        words=r"methods?|approach|technique|algorithm",
        question="What method or approach does the paper propose or use? "
        "Describe it in a few words, not just its name.",
        own_work="not data",
        described=True,
        sharper="What technique, model or analysis do the authors propose or evaluate? Describe it in a few words.",
    ),
    AttributeKind(
        words=r"domains?|field|application",
        question="What kind of data or application area do the paper's experiments concern?",
        area_question="What application area or field is the paper about?",
        check=is_domain,
        own_work="never",
        described=True,
    ),
    AttributeKind(
        words=r"findings?|conclusions?|claims?|contributions?",
        question="What is the paper's main finding: what do the authors find, prove or show?",
        described=True,
        statement=True,
        sharper="What result do the paper's experiments or analysis show?",
        sharper_check=is_finding,
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


def fits_sentence(attribute: str, value: str, sentence: str) -> bool:
    """Whether ``value`` is of the attribute's kind as ``sentence`` (the one that states it) uses it: a result is
    not a count of the data (:func:`counts_data`)."""
    kind = kind_of(attribute)
    return not (kind is not None and kind.result and counts_data(value, sentence))


def described(attribute: str) -> bool:
    """Whether a description of the attribute fills its cell (see :attr:`AttributeKind.described`)."""
    kind = kind_of(attribute)
    return kind is not None and kind.described


def area_question(attribute: str) -> str | None:
    """The attribute's broader question for when no value is stated (see :attr:`AttributeKind.area_question`)."""
    kind = kind_of(attribute)
    return kind.area_question if kind is not None else None


def sharper(attribute: str, value: str, title: str, abstract: str) -> str | None:
    """The sharper question for a stated ``value`` that is not of its kind for the paper or fails the kind's
    check (see :attr:`AttributeKind.sharper`), else None."""
    kind = kind_of(attribute)
    if kind is None or kind.sharper is None:
        return None
    passes = kind.sharper_check is None or kind.sharper_check(value)
    return None if passes and fits_paper(attribute, value, title, abstract) else kind.sharper


def statement(attribute: str) -> bool:
    """Whether the attribute's value is a statement (see :attr:`AttributeKind.statement`)."""
    kind = kind_of(attribute)
    return kind is not None and kind.statement


def question_for(attribute: str) -> str:
    """The question the model answers for one attribute: its kind's, else "What is the <attribute> of this paper?"."""
    kind = kind_of(attribute)
    if kind is None:
        return f"What is the {attribute} of this paper?"
    return kind.question.replace("{attribute}", re.sub(r"^(?:best|top|highest|main)\s+", "", attribute, flags=re.I))
