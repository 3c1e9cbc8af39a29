"""What kind of question this is: a lookup, a list/count over the collection, a comparison, or yes/no.

The kind picks the answer path: a lookup retrieves the few most relevant papers; a list scans every
candidate paper and judges each; a comparison gives each paper its own share of the evidence; a
yes/no question is answered yes / no / not stated with the deciding sentence. Recognition is by the
question's form (rules, no model call: it costs nothing and is the same every time) and can always be
overridden (``ask(..., kind=...)``, ``rag ask --kind``). Its accuracy is measured on labelled sets
(eval/data/question_kinds_dev.jsonl, question_kinds_fresh.jsonl and a held-out split; ``python -m
rag.evaluation.bench kinds``), and each rule's worth by ``python -m rag.evaluation.bench ablation``.

Order matters: a polite wrapper is peeled off first ("Could you list ...", "Can you tell me whether
..."), then list forms win ("Are there papers on X?" wants papers, not a yes), then explicit
comparisons, then the yes/no form, then choices between named things ("Which is larger, X or Y?"),
then weak comparison words, which count only when the question names two or more indexed papers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import get_args

from rag.types import QuestionKind

KINDS: tuple[QuestionKind, ...] = get_args(QuestionKind)

_PAPERS = (
    r"(?:papers?|works?|studies|study|articles?|abstracts?|publications?|contributions?|submissions?|ones"
    r"|research|literature|approaches|methods)"
)
_PAPER_NOUN = (
    r"(?:papers?|works?(?=\s+(?:on|about|that|which|in|from|using|related|dealing|with|to)\b|\s*[?.,]|$)|studies|articles?"
    r"|abstracts?|publications?|submissions?)"
)
_NOT_MOD = (
    r"(?:the|a|an|this|that|these|those|is|are|was|were|does|do|did|can|could|has|have|will|would"
    r"|papers?|works?|studies|articles?|abstracts?|publications?)"
)
_MOD = rf"(?:(?!{_NOT_MOD}\b)[\w&@+.'’-]+\s+)"  # a modifier word before "papers": not an article or a verb
_WRAPPER = re.compile(
    r"^\W*(?:(?:hi|hello|hey|ok|okay|so|and|also|now|then|btw|quick\s+(?:question|q)|i'?m\s+curious|just\s+curious)"
    r"\s*[,!:\-–]?\s+)*"
    r"(?:(?:please|kindly)\s+|(?:could|can|would|will)\s+you\s+(?:please\s+)?|do\s+you\s+know\s+|"
    r"i\s+(?:was|am|'m)\s+wondering\s+|i\s+wonder\s+|i(?:'d|\s+would)\s+like\s+to\s+know\s+|i\s+want\s+to\s+know\s+|"
    r"(?:let\s+me\s+know|tell\s+me|show\s+me|explain|check|see|find\s+out|confirm|verify)\s+"
    r"(?=whether\b|if\b|which\b|what\b|how\b|why\b|who\b|where\b|when\b)|"
    r"tell\s+me\s+)+",
    re.I,
)
_AUX = (
    r"(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|may|might|must|shall"
    r"|isn't|aren't|doesn't|don't|didn't|can't|won't|wasn't|weren't|hasn't|haven't)"
)
# The rules are named data: each table maps a rule's name to one regex alternative, and the classifier
# joins a table's alternatives into one pattern. ``python -m rag.evaluation.bench ablation`` scores the
# classifier without each rule in turn (``classify_question(..., without={name})``); a rule stays only
# while it helps on the held-out or fresh labelled questions (docs/benchmarks.md#question-kinds).
LIST_RULES: dict[str, str] = {
    # "Which papers ...", "Which NeurIPS 2026 papers ...", "Which of the papers ...", "which ones ..."
    "which-papers": (
        rf"(?:^|[,;:]\s*|\b(?:and|also)\s+)(?:which|what)\s+(?:of\s+(?:the|these|those|all)\s+)?{_MOD}{{0,3}}{_PAPER_NOUN}\b"
    ),
    "which-ones": r"(?:^|[,;:]\s*)which\s+ones\b",
    "which-works": r"(?:^|[,;:]\s*)(?:which|what)\s+(?:other\s+)?works?\b(?!\s+(?:best|better|well|worse))",
    # "What are the/some papers ..."
    "what-are-the-papers": rf"\bwhat\s+(?:are|were)\s+(?:the|some|all|any)\s+(?:\w+\s+){{0,2}}{_PAPER_NOUN}\b",
    # "How many (of the) papers ..."
    "how-many-papers": (
        rf"\bhow\s+many\s+(?:of\s+)?(?:the\s+|these\s+|those\s+|this\s+)?(?:[\w&@+.-]+(?:'s|’s)\s+)?{_MOD}{{0,3}}{_PAPER_NOUN}\b"
    ),
    # "List / Name / Find / Show / Give me (all) papers ...", "List the papers ..."
    "list-papers": (
        rf"^(?:list|name|find|show|give(?:\s+me)?|enumerate|identify|count|return|retrieve|get|recommend|suggest|"
        rf"search\s+for|look\s+for|point\s+me\s+to)\s+(?:me\s+)?(?:(?:all|every|each|the|any|some|a\s+few)\s+)*"
        rf"(?:[\w&@+.'’-]+\s+){{0,3}}(?:{_PAPERS}|stuff|things|anything|everything|something)\b"
    ),
    # "Are there (any) papers ...", "Is there a/any work ...", "Do/Does any papers ..."
    "are-there-papers": rf"^(?:are|is)\s+there\s+(?:any\s+|some\s+|other\s+|a\s+|an\s+)?(?:\w+\s+){{0,2}}{_PAPERS}\b",
    "do-any-papers": (
        rf"^(?:do|does|did)\s+(?:any|some|several|many|other)\s+(?:of\s+the\s+)?(?:\w+\s+)?{_PAPER_NOUN}\b"
    ),
    # "I'm looking for papers on ...", "any papers on X?"
    "looking-for-papers": (
        rf"\b(?:looking\s+for|searching\s+for|interested\s+in|need|want)\s+(?:\w+\s+){{0,2}}{_PAPER_NOUN}\b"
    ),
    "any-papers": rf"^(?:any|all|some|other)\s+{_MOD}{{0,3}}{_PAPER_NOUN}\b",
    "surveys-on": r"^(?:surveys?|reviews?|overviews?)\s+(?:on|of|about)\b",
    # "Papers that use ...?", "papers about X"
    "papers-that": rf"^{_PAPER_NOUN}\s+(?:that|which|on|about|using|with|in|for|where)\b",
    # search-box style: a plural paper noun, then anything but an auxiliary ("papers use X", "studies reporting Y")
    "plural-papers-first": (
        r"^(?:papers|studies|articles|publications|abstracts|works(?!\s+(?:best|better|well|worse)\b))\s+"
        rf"(?!{_AUX}\b)[a-z]"
    ),
}
# a topic followed by "papers" and nothing else: "gnn papers?", "membership inference attack papers"
TOPIC_RULES: dict[str, str] = {
    "topic-papers": (
        r"^(?!.*\b(?:the|this|that)\b)[^?]{1,80}?\s(?:papers|works|studies|articles|publications)\s*\??\s*$"
    ),
}
COMPARE_RULES: dict[str, str] = {
    "compare-x-and-y": r"\b(?:compare|contrast)\s+(?:the\s+)?\S.*\s(?:and|with|to|against)\s",
    "difference-between": r"\b(?:comparison|differences?|similarit(?:y|ies))\s+(?:between|of|among|across)\b",
    "versus": r"\b(?:versus|vs\.?)\s",
    "rank-them": r"\brank\s+(?:them|these|the)\b",
    # per-paper answers: "each paper", "each of the methods"
    "each-paper": (
        r"\beach\s+(?:of\s+(?:the|these|those)\s+)?(?:[\w&@+.-]+\s+){0,2}(?:paper|one|method|study|work|approach|benchmark)s?\b"
    ),
    # "How do the papers on X differ / compare / approach ...", "how do the X papers differ"
    "how-do-papers-differ": (
        rf"\bhow\s+(?:do|did|does)\s+(?:the\s+)?(?:[\w&@+.'’-]+\s+){{0,3}}{_PAPER_NOUN}\b.*\b(?:differ|compare|approach|relate)"
    ),
    "what-separates": r"\b(?:what|how)\s+(?:separates|distinguishes)\b",
    "differ-from": r"\bdiffer(?:s|ent)?\s+from\b",
    # two things, then "each": "How do X and Y each explain ...", "X and Y: what does each ..."
    "x-and-y-each": r"\band\b[^?]*\beach\b(?!\s+other)",
}
# a choice between named things: "Which is larger, X or Y?"
CHOICE_RULES: dict[str, str] = {
    "which-is-x-or-y": (
        r"\bwhich\s+(?:one\s+|of\s+(?:the\s+)?(?:two|them|these|both)\s+)?(?:is|has|was|does|do|needs?|works?|gives?|reports?|scales?"
        r"|achieves?|targets?|uses?|requires?)\b[^?]*,\s*[^?]*\bor\b"
    ),
}
# weak signals: a comparison only when the question also names two or more indexed papers
NAMED_RULES: dict[str, str] = {
    "compare-if-named": (
        r"\b(?:differ|differs|different|difference|compare[sd]?|comparison|similar|both|versus|vs|relative\s+to|better|worse"
        r"|larger|smaller|bigger|more|fewer)\b"
    ),
}
# a yes/no question starts with an auxiliary verb (or "whether"/"if" once a wrapper is peeled off),
# at the start or after a leading clause ("In soft-routing MoEs, does sigmoid gating ...")
YESNO_RULES: dict[str, str] = {
    "aux-first": rf"^(?:{_AUX}|whether|if)\s+\S",
    "aux-after-clause": rf"^[^?]{{0,200}}?(?:,|\s[-–:])\s*{_AUX}\s+(?!you\b)\S",
}
# "Is it X or Y?" and "Is it X, or does it Y?" ask which, not whether ("Does it need X or Y?" stays yes/no)
ALTERNATIVE_RULES: dict[str, str] = {
    "comma-or": r",\s*or\s+(?!not\b)",
    "is-it-x-or-y": r"^(?:is|are|was|were)\b[^?]*\s(?:or|rather than)\s+(?!not\b)\S+(?:\s+\S+){0,2}\s*\??\s*$",
}
# the tables of the classifier, in the order it consults them; a rule's full name is "table/name"
TABLES: dict[str, dict[str, str]] = {
    "list": LIST_RULES,
    "compare": COMPARE_RULES,
    "yesno": YESNO_RULES,
    "alternative": ALTERNATIVE_RULES,
    "choice": CHOICE_RULES,
    "topic": TOPIC_RULES,
    "named": NAMED_RULES,
}
RULES: tuple[str, ...] = tuple(f"{table}/{name}" for table, rules in TABLES.items() for name in rules)


@functools.cache
def _pattern(table: str, without: frozenset[str] = frozenset()) -> re.Pattern[str] | None:
    """The alternatives of ``table`` but those named in ``without``, as one pattern (None: none left)."""
    kept = [rule for name, rule in TABLES[table].items() if f"{table}/{name}" not in without]
    return re.compile("|".join(kept), re.I) if kept else None


def _search(table: str, text: str, without: frozenset[str]) -> bool:
    pattern = _pattern(table, without & _NAMES[table])
    return bool(pattern and pattern.search(text))


_NAMES = {table: frozenset(f"{table}/{name}" for name in rules) for table, rules in TABLES.items()}
_TOPIC_PAPERS = re.compile(TOPIC_RULES["topic-papers"], re.I)  # list_predicate reads it too


def _body(question: str) -> str:
    """The question without polite wrappers: 'Could you list ...' -> 'list ...'."""
    q = " ".join(question.split())
    body = _WRAPPER.sub("", q, count=1)
    return body or q


def classify_question(question: str, *, named_papers: int = 0, without: Iterable[str] = ()) -> QuestionKind:
    """The kind of ``question`` from its form. ``named_papers`` is how many indexed papers it names by
    title or acronym: with two or more, weak comparison words ("differ", "both", "larger") make it a comparison.
    ``without`` names rules (of :data:`RULES`) to leave out, for measuring what each one is worth."""
    off = frozenset(without)
    q = " ".join(question.split())
    body = _body(q)
    if _search("list", body, off) or _search("list", q, off):
        return "list"
    if _search("compare", body, off):
        return "compare"
    if _search("yesno", body, off) and not _search("alternative", body, off):
        return "yesno"
    if _search("choice", body, off):
        return "compare"
    if _search("topic", body, off):
        return "list"
    # "the X paper ... the Y paper" names two papers as surely as two titles do
    mentions = len(re.findall(rf"\b{_PAPER_NOUN}\b|\bfindings\b", body, re.I))
    if max(named_papers, mentions, named_papers + mentions) >= 2 and (
        _search("named", body, off) or re.search(r"\band\b", body)
    ):
        return "compare"
    return "lookup"


_LIST_LEAD = re.compile(
    rf"^(?:(?:so|and|also|now|then)\s+)?(?:which|what|how\s+many)\s+(?:of\s+(?:the|these|those)\s+)?{_MOD}{{0,3}}"
    rf"{_PAPER_NOUN}\s+|^(?:list|name|find|show|give(?:\s+me)?|enumerate|identify|count|get|recommend|search\s+for|"
    rf"look\s+for)\s+(?:me\s+)?(?:(?:all|every|each|the|any|some)\s+)*{_MOD}{{0,3}}{_PAPER_NOUN}\s+(?:that\s+|which\s+)?"
    rf"|^(?:are|is)\s+there\s+(?:any\s+|some\s+|other\s+|a\s+|an\s+)?{_PAPER_NOUN}\s+(?:that\s+|which\s+)?"
    rf"|^(?:any|all|some)\s+{_PAPER_NOUN}\s+(?:that\s+|which\s+)?|^{_PAPER_NOUN}\s+(?:that\s+|which\s+)?",
    re.I,
)
_LIST_TAIL = re.compile(
    r"(?:,\s*|\s+)(?:and\s+)?(?:which|what)\s+(?:ones|are\s+they|papers|are\s+those)\b.*$|\s*[?.!]+\s*$", re.I
)
_VERB_FORMS = {"are": "Is", "were": "Was", "have": "Does this paper have", "do": "Does this paper"}


def list_predicate(question: str) -> str:
    """A list question turned into the yes/no question each candidate paper is judged by:
    "Which papers use reinforcement learning?" -> "Does this paper use reinforcement learning?";
    "How many papers are about X, and which ones?" -> "Is this paper about X?". (A question of
    another form is asked as it is, about "this paper".)"""
    body = _LIST_TAIL.sub("", _body(question))
    topic = re.match(r"^(.{1,80}?)\s+(?:papers|works|studies|articles|publications)$", body, re.I)
    if topic and _TOPIC_PAPERS.search(question.strip()):
        return f"Is this paper about {topic.group(1)}?"
    rest = _LIST_LEAD.sub("", body, count=1).strip()
    if not rest or rest == body:
        return f"Does this paper answer the question: {question.strip()}"
    first, _, tail = rest.partition(" ")
    word = first.lower()
    if word in ("are", "were"):
        return f"{_VERB_FORMS[word]} this paper {tail}?"
    if word in ("have", "do"):
        return f"{_VERB_FORMS[word]} {tail}?"
    if word in ("on", "about", "in", "for", "from", "with", "using", "by", "that", "which"):
        lead = {"that": "", "which": ""}.get(word)
        return f"Is this paper {rest if lead is None else tail}?"
    return f"Does this paper {rest}?"


def topic_predicate(query: str) -> str:
    """What a paper must be to belong to a table's query, as the list judge asks it: the predicate of a list
    question ("papers that use RL" -> "Does this paper use RL?"), else the query taken as a topic
    ("benchmarks for AI agents" -> "Is this paper about benchmarks for AI agents?")."""
    body = _LIST_TAIL.sub("", _body(query))
    if body and _LIST_LEAD.match(body):
        return list_predicate(query)
    return f"Is this paper about {body or query.strip()}?"


# "How do the papers on X differ ...", "Compare the works that use X", "What do the studies about X find?":
# the papers a comparison means when it names none. The topic ends where the comparison's own verb starts.
_COMPARE_TOPIC = re.compile(
    r"\b(?:the|these|those|all|both)\s+(?:\w+\s+){0,2}?(?:papers|works|studies|articles|publications|abstracts)\s+"
    r"(?P<rel>on|about|in|for|using|with|that|which|studying|proposing|addressing|tackling)\s+"
    r"(?P<topic>.{2,80}?)"
    r"(?=\s+(?:differ|compare|contrast|relate|agree|disagree|vary|each|say|find|propose|approach|handle|tackle|"
    r"address|do|does|have|are|is)\b|\s*[?,;:.]|\s+(?:in|on)\s+(?:their|how|what|terms)\b|$)",
    re.I,
)


def compare_topic(question: str) -> tuple[str, str] | None:
    """A comparison that names no paper but a topic ("How do the papers on reasoning differ?"): the topic
    ("reasoning", what to retrieve by) and the yes/no question a paper must pass to belong to it ("Is this paper
    about reasoning?"); None when the question gives no such topic."""
    m = _COMPARE_TOPIC.search(" ".join(question.split()))
    if m is None:
        return None
    rel, topic = m.group("rel").lower(), m.group("topic").strip()
    if rel in ("that", "which"):
        copula = re.match(r"(?:is|are|were|was)\s+(.+)", topic, re.I)
        return topic, (f"Is this paper {copula.group(1)}?" if copula else f"Does this paper {topic}?")
    if rel in ("on", "about", "in", "for"):
        return topic, f"Is this paper about {topic}?"
    return topic, f"Is this paper {rel} {topic}?"
