"""What kind of question this is: a lookup, a list/count over the collection, a comparison, or yes/no.

The kind picks the answer path: a lookup retrieves the few most relevant papers; a list scans every
candidate paper and judges each; a comparison gives each paper its own share of the evidence; a
yes/no question is answered yes / no / not stated with the deciding sentence. Recognition is by the
question's form (rules, no model call: it costs nothing and is the same every time) and can always be
overridden (``ask(..., kind=...)``, ``rag ask --kind``). Its accuracy is measured on labelled sets
(eval/data/question_kinds*.jsonl; ``python -m rag.evaluation.bench kinds``).

Order matters: a polite wrapper is peeled off first ("Could you list ...", "Can you tell me whether
..."), then list forms win ("Are there papers on X?" wants papers, not a yes), then explicit
comparisons, then the yes/no form, then choices between named things ("Which is larger, X or Y?"),
then weak comparison words, which count only when the question names two or more indexed papers.
"""

from __future__ import annotations

import re
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
_LIST = re.compile(
    "|".join(
        [
            # "Which papers ...", "Which NeurIPS 2026 papers ...", "Which of the papers ...", "which ones ..."
            rf"(?:^|[,;:]\s*|\b(?:and|also)\s+)(?:which|what)\s+(?:of\s+(?:the|these|those|all)\s+)?{_MOD}{{0,3}}{_PAPER_NOUN}\b",
            r"(?:^|[,;:]\s*)which\s+ones\b|(?:^|[,;:]\s*)(?:which|what)\s+(?:other\s+)?works?\b(?!\s+(?:best|better|well|worse))",
            r"^(?:what|which)\s+(?:\w+\s+)?(?:work|research)\s+(?:exists|is\s+there|has\s+been\s+done)\b",
            # "What are the/some papers ...", "Who has worked on ..."
            rf"\bwhat\s+(?:are|were)\s+(?:the|some|all|any)\s+(?:\w+\s+){{0,2}}{_PAPER_NOUN}\b",
            # "How many (of the) papers ..."
            rf"\bhow\s+many\s+(?:of\s+)?(?:the\s+|these\s+|those\s+|this\s+)?(?:[\w&@+.-]+(?:'s|’s)\s+)?{_MOD}{{0,3}}{_PAPER_NOUN}\b",
            # "List / Name / Find / Show / Give me (all) papers ...", "List the papers ...", "a list of works on ..."
            rf"^(?:list|name|find|show|give(?:\s+me)?|enumerate|identify|count|return|retrieve|get|recommend|suggest|"
            rf"search\s+for|look\s+for|point\s+me\s+to)\s+(?:me\s+)?(?:(?:all|every|each|the|any|some|a\s+few)\s+)*"
            rf"(?:[\w&@+.'’-]+\s+){{0,3}}(?:{_PAPERS}|stuff|things|anything|everything|something)\b",
            rf"\blist\s+of\s+(?:\w+\s+){{0,2}}{_PAPERS}\b",
            # "Are there (any) papers ...", "Is there a/any work ...", "Do/Does any papers ..."
            rf"^(?:are|is)\s+there\s+(?:any\s+|some\s+|other\s+|a\s+|an\s+)?(?:\w+\s+){{0,2}}{_PAPERS}\b",
            rf"^(?:do|does|did)\s+(?:any|some|several|many|other)\s+(?:of\s+the\s+)?(?:\w+\s+)?{_PAPER_NOUN}\b",
            # "I'm looking for papers on ...", "I need everything on ...", "any papers on X?"
            rf"\b(?:looking\s+for|searching\s+for|interested\s+in|need|want)\s+(?:\w+\s+){{0,2}}{_PAPER_NOUN}\b",
            r"\b(?:need|want|find|show|give\s+me)\s+(?:everything|anything|all(?:\s+the)?\s+(?:work|research))\s+(?:on|about|related)\b",
            rf"^(?:any|all|some|other)\s+{_MOD}{{0,3}}{_PAPER_NOUN}\b",
            r"^(?:surveys?|reviews?|overviews?)\s+(?:on|of|about)\b",
            r"\b(?:anyone|anybody|someone|somebody)\s+(?:working|work|worked|published|looking)\s+(?:on|at|about)\b",
            # "Papers that use ...?", "papers about X"
            rf"^{_PAPER_NOUN}\s+(?:that|which|on|about|using|with|in|for|where)\b",
        ]
    ),
    re.I,
)
# a topic followed by "papers" and nothing else: "gnn papers?", "membership inference attack papers"
_TOPIC_PAPERS = re.compile(
    r"^(?!.*\b(?:the|this|that)\b)[^?]{1,80}?\s(?:papers|works|studies|articles|publications)\s*\??\s*$", re.I
)
_COMPARE = re.compile(
    "|".join(
        [
            r"^(?:compare|contrast|juxtapose)\b",
            r"\b(?:compare|contrast)\s+(?:the\s+)?\S.*\s(?:and|with|to|against)\s",
            r"\b(?:comparison|differences?|similarit(?:y|ies))\s+(?:between|of|among|across)\b",
            r"\bside[\s-]+by[\s-]+side\b|\bstacks?\s+up\b|\bin\s+common\b|\bhead[\s-]+to[\s-]+head\b",
            r"\b(?:versus|vs\.?)\s",
            r"\b(?:table|chart)\s+(?:comparing|that\s+compares|of\s+the\s+differences)\b",
            r"^rank\b|\brank\s+(?:them|these|the)\b",
            # per-paper answers: "... in each?", "What does each explain?", "for each of the ...", "each paper"
            r"\b(?:in|for|of|by|to)\s+each\s*[?.]?\s*$|\b(?:what|how)\s+(?:does|do|did)\s+each\b|\bfor\s+each\s+(?:of\s+)?(?:the\s+)?",
            r"\beach\s+(?:of\s+(?:the|these|those)\s+)?(?:[\w&@+.-]+\s+){0,2}(?:paper|one|method|study|work|approach|benchmark)s?\b",
            r"\beach\s+of\s+(?:the|these|those|them)\b|\bdifferently\b|\bpros\s+and\s+cons\b|\btrade-?offs?\s+between\b",
            # "How do the papers on X differ / compare / approach ...", "how do the X papers differ"
            rf"\bhow\s+(?:do|did|does)\s+(?:the\s+)?(?:[\w&@+.'’-]+\s+){{0,3}}{_PAPER_NOUN}\b.*\b(?:differ|compare|approach|relate)",
            r"\b(?:what|how)\s+(?:separates|distinguishes)\b|\bdiffer(?:s|ent)?\s+from\b|\bcompare\s*\??\s*$",
            # two things, then "each": "How do X and Y each explain ...", "X and Y: what does each ..."
            r"\band\b[^?]*\beach\b(?!\s+other)",
            # plural papers, then "similar / alike / differ": "How are the three benchmark papers similar?"
            rf"\b{_PAPER_NOUN}\b[^?]*\b(?:similar|alike|differ|different)\b|\balike\b",
        ]
    ),
    re.I,
)
# a choice between named things: "Which is larger, X or Y?", "X or Y, which ...", "Between X and Y, which ..."
_CHOICE = re.compile(
    r"\bwhich\s+(?:one\s+|of\s+(?:the\s+)?(?:two|them|these|both)\s+)?(?:is|has|was|does|do|needs?|works?|gives?|reports?|scales?"
    r"|achieves?|targets?|uses?|requires?)\b[^?]*,\s*[^?]*\bor\b"
    r"|\bor\s+[^?,]{1,60},\s*which\b|^between\s+.+\band\b.+,\s*which\b|\bwhich\s+of\s+[^?]+\s+and\s+[^?]+\b"
    r"|^[^,?]{1,60}\s+or\s+[^,?]{1,60}[:?,]\s*which\b|\bwhich\s+(?:approach|method|benchmark|dataset|paper|one)\b[^?]*,\s*[^?]*\bor\b",
    re.I,
)
# weak signals: a comparison only when the question also names two or more indexed papers
_COMPARE_IF_NAMED = re.compile(
    r"\b(?:differ|differs|different|difference|compare[sd]?|comparison|similar|both|versus|vs|relative\s+to|better|worse"
    r"|larger|smaller|bigger|more|fewer)\b",
    re.I,
)
_AUX = (
    r"(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|may|might|must|shall"
    r"|isn't|aren't|doesn't|don't|didn't|can't|won't|wasn't|weren't|hasn't|haven't)"
)
# a yes/no question starts with an auxiliary verb (or "whether"/"if" once a wrapper is peeled off),
# at the start or after a leading clause ("In soft-routing MoEs, does sigmoid gating ...")
_YESNO = re.compile(rf"^(?:{_AUX}|whether|if)\s+\S|^[^?]{{0,200}}?(?:,|\s[-–:])\s*{_AUX}\s+(?!you\b)\S", re.I)
# "Is it X or Y?" and "Is it X, or does it Y?" ask which, not whether ("Does it need X or Y?" stays yes/no)
_ALTERNATIVE = re.compile(
    r",\s*or\s+(?!not\b)|\sor\s+(?:on|in|by|with|from|for|to|as|at)\s"
    r"|^(?:is|are|was|were)\b[^?]*\s(?:or|rather than)\s+(?!not\b)\S+(?:\s+\S+){0,2}\s*\??\s*$",
    re.I,
)
_WH = re.compile(r"^(?:what|which|who|whom|whose|where|when|why|how|explain|describe|summari[sz]e|define)\b", re.I)


def _body(question: str) -> str:
    """The question without polite wrappers: 'Could you list ...' -> 'list ...'."""
    q = " ".join(question.split())
    body = _WRAPPER.sub("", q, count=1)
    return body or q


def classify_question(question: str, *, named_papers: int = 0) -> QuestionKind:
    """The kind of ``question`` from its form. ``named_papers`` is how many indexed papers it names by
    title or acronym: with two or more, weak comparison words ("differ", "both", "larger") make it a comparison."""
    q = " ".join(question.split())
    body = _body(q)
    if _LIST.search(body) or _LIST.search(q):
        return "list"
    if _COMPARE.search(body):
        return "compare"
    if not _WH.search(body) and _YESNO.search(body) and not _ALTERNATIVE.search(body):
        return "yesno"
    if _CHOICE.search(body):
        return "compare"
    if _TOPIC_PAPERS.search(body):
        return "list"
    # "the X paper ... the Y paper" names two papers as surely as two titles do
    mentions = len(re.findall(rf"\b{_PAPER_NOUN}\b|\bfindings\b", body, re.I))
    if max(named_papers, mentions, named_papers + mentions) >= 2 and (
        _COMPARE_IF_NAMED.search(body) or re.search(r"\band\b", body)
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
