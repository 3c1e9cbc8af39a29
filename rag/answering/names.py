"""Which indexed papers a question names: by title, by the acronym in a title, or by a name its abstract uses.

A name is an exact signal that ranking can miss ("How large are the WildBox and Who&When Pro datasets?"): the
relevance gate lets a question through that names a retrieved paper, answers read the named papers first, and a
comparison compares the papers named. The patterns themselves are in :mod:`rag.corpus.tokens`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.corpus.tokens import name_tokens, title_names
from rag.types import SearchHit


def names_paper(question: str, title: str) -> bool:
    """True when the question names a paper by its title or by the name/acronym in it ('WildBox',
    'CoCHI', 'SSL'): short questions about a named method embed poorly but are plainly on topic."""
    q = question.lower()
    for name in set(title_names(title)):
        name = name.strip().lower()
        if len(name) >= 3 and len(name.split()) <= 6 and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", q):
            return True
    return False


def mentions_paper(question: str, hit: SearchHit) -> bool:
    """True when the question names the paper (:func:`names_paper`) or uses a name that its abstract
    defines or states ("the HTMP paper" for an abstract that says "(HTMP)"): a question that uses a
    paper's own terms is on topic however poorly it embeds. Only the relevance gate uses it; kinds are
    recognised from titles, so a name shared by many abstracts ("LLMs") never makes a comparison."""
    return names_paper(question, hit.title) or bool(names_used(question, hit))


def names_used(question: str, hit: SearchHit) -> list[str]:
    """The name-like tokens of ``question`` that the hit's title or abstract uses, as whole words."""
    text = f"{hit.title} {hit.abstract or hit.text}"
    return [n for n in name_tokens(question) if re.search(rf"(?<![\w-]){re.escape(n)}s?(?![\w-])", text)]


def named_papers(question: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
    """The papers among ``hits`` that ``question`` names, in the order it names them: by title or acronym
    (:func:`names_paper`); and, while fewer than two are named so, by a name-like token that exactly one of the
    hits uses ("the cfDNA paper"). A name many abstracts share ("LLMs") names none of them."""
    named = [h for h in hits if names_paper(question, h.title)]
    if len(named) < 2:
        ids = {h.paper_id for h in named}
        used = {h.paper_id: (h, set(names_used(question, h))) for h in hits}
        for name in name_tokens(question):
            users = [h for h, names in used.values() if name in names]
            if len(users) == 1 and users[0].paper_id not in ids:
                named.append(users[0])
                ids.add(users[0].paper_id)
    return sorted(named, key=lambda h: _first_mention(question, h))


def _first_mention(question: str, hit: SearchHit) -> int:
    """Where ``question`` first names ``hit``: by its title, or by a name that its abstract uses."""
    q = question.lower()
    names = title_names(hit.title)
    found = [q.find(n.strip().lower()) for n in names if n.strip() and n.strip().lower() in q]
    found += [question.find(t) for t in names_used(question, hit)]
    return min(found) if found else len(question)


def named_first(question: str, pool: Sequence[SearchHit], k: int, *, context: str = "") -> list[SearchHit]:
    """The ``k`` papers to answer from: those the question names (:func:`named_papers`) first, then the rest of
    ``pool`` in retrieval order. A name is an exact signal that ranking can miss: "How large are the WildBox and
    Who&When Pro datasets?" embeds far from the Who&When Pro abstract, which BM25 ranked first but fusion
    ranked 8th. ``pool`` is a retrieval deeper than ``k``, so a named paper just below the cut is found.

    ``context`` is the standalone form of a follow-up (it may carry the earlier question): its names count only
    when the follow-up itself names no paper, so "How many species does it cover?" after a question on WildBox
    leads with WildBox, while a follow-up that names its own paper is not answered about the earlier one."""
    named = named_papers(question, pool) or (named_papers(context, pool) if context else [])
    if not named:
        return list(pool[:k])
    ids = {h.paper_id for h in named}
    return [*named, *(h for h in pool if h.paper_id not in ids)][:k]  # each keeps its fused rank
