"""Optional LLM-judge metrics with Ragas-style definitions; used only when a judge endpoint is configured.

- faithfulness: share of the answer's statements (its sentences) that the judge says can be inferred
  from the cited sources' text;
- answer relevancy: mean cosine similarity between the question and questions the judge writes for
  the answer (embedded with the evaluated assistant's embedding model).

A judgement that fails (endpoint error, unparseable reply) is recorded as ``failed`` with the reason,
never as a number, so the aggregate is over successful judgements and the failures are counted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import SecretStr

from rag import Answer, ConfigError
from rag.errors import redact
from rag.evaluation.run import JudgeScore

FAITHFULNESS = """Context:
{context}

Statements:
{statements}

For each numbered statement, answer whether it can be inferred from the context alone.
Reply with one line per statement, exactly "<number>: yes" or "<number>: no"."""

RELEVANCY = """Answer:
{answer}

Write {n} different questions that this answer responds to, one per line, nothing else."""


class LLMJudge:
    """``judge(question, answer) -> {"faithfulness": JudgeScore, "answer_relevancy": JudgeScore}``."""

    def __init__(
        self,
        chat_model: Any,
        embed: Callable[[list[str]], Sequence[Sequence[float]]],
        n_questions: int = 3,
        api_key: str | None = None,
    ) -> None:
        self.chat_model = chat_model
        self.embed = embed
        self.n_questions = n_questions
        self.api_key = api_key

    def _failed(self, e: Exception) -> JudgeScore:
        # the reason goes into report.json: an endpoint that echoes the request's key must not put it there
        return JudgeScore(failed=True, reason=redact(f"{type(e).__name__}: {e}", self.api_key))

    def _ask(self, prompt: str) -> str:
        return str(self.chat_model.invoke(prompt).content)

    def faithfulness(self, answer: Answer) -> JudgeScore:
        statements = [
            re.sub(r"\s*\[\d+\]", "", s.text).strip() for s in answer.sentences if s.supported and s.text.strip()
        ]
        if not statements:
            return JudgeScore(failed=True, reason="no statements")
        context = "\n".join(f"- {s.text}" for s in answer.sources)
        try:
            reply = self._ask(
                FAITHFULNESS.format(
                    context=context, statements="\n".join(f"{i}. {s}" for i, s in enumerate(statements, 1))
                )
            )
        except Exception as e:  # an external service: record, do not stop the run
            return self._failed(e)
        verdicts = dict(re.findall(r"^\s*(\d+)\s*[:.)-]\s*(yes|no)\b", reply.lower(), re.M))
        if len(verdicts) < len(statements) or any(str(i) not in verdicts for i in range(1, len(statements) + 1)):
            return JudgeScore(failed=True, reason=f"unparseable verdicts: {reply[:200]!r}")
        return JudgeScore(value=sum(verdicts[str(i)] == "yes" for i in range(1, len(statements) + 1)) / len(statements))

    def answer_relevancy(self, question: str, answer: Answer) -> JudgeScore:
        try:
            reply = self._ask(RELEVANCY.format(answer=answer.text, n=self.n_questions))
            questions = [re.sub(r"^\s*(\d+[.)]|[-*])\s*", "", line).strip() for line in reply.splitlines()]
            questions = [q for q in questions if q][: self.n_questions]
            if not questions:
                return JudgeScore(failed=True, reason="no questions generated")
            vecs = np.asarray(self.embed([question] + questions), dtype=np.float64)
        except Exception as e:  # an external service: record, do not stop the run
            return self._failed(e)
        norms = np.linalg.norm(vecs, axis=1)
        if not np.all(norms > 0):
            return JudgeScore(failed=True, reason="zero embedding")
        sims = (vecs[1:] @ vecs[0]) / (norms[1:] * norms[0])
        return JudgeScore(value=float(np.clip(sims.mean(), 0.0, 1.0)))

    def __call__(self, question: str, answer: Answer) -> dict[str, JudgeScore]:
        return {"faithfulness": self.faithfulness(answer), "answer_relevancy": self.answer_relevancy(question, answer)}


def make_judge(
    embed: Callable[[list[str]], Sequence[Sequence[float]]], base_url: str | None = None, model: str | None = None
) -> LLMJudge | None:
    """A judge on ``base_url`` (else ``RAG_EVAL_JUDGE_BASE_URL``); None when no judge endpoint is configured."""
    base_url = base_url or os.environ.get("RAG_EVAL_JUDGE_BASE_URL")
    if not base_url:
        return None
    model = model or os.environ.get("RAG_EVAL_JUDGE_MODEL")
    if not model:
        raise ConfigError("A judge endpoint needs a model: set RAG_EVAL_JUDGE_MODEL or pass --judge-model.")
    from langchain_openai import ChatOpenAI  # the judge is an edge adapter: any OpenAI-compatible endpoint

    api_key = os.environ.get("RAG_EVAL_JUDGE_API_KEY")
    chat = ChatOpenAI(  # field names, not their aliases: see rag.models.providers.make_embeddings
        openai_api_base=base_url,
        model_name=model,
        openai_api_key=SecretStr(api_key or "none"),
        temperature=0.0,
        request_timeout=120,
        max_retries=1,
    )
    return LLMJudge(chat, embed, api_key=api_key)
