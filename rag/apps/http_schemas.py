"""Request and response bodies of the HTTP API (pydantic): what the OpenAPI schema at ``/openapi.json`` shows."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag import ClaimVerdict, MetaValue, QuestionKind, Stance

MODEL_ID = "rag-abstracts"


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "text"
    text: str = ""


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text for p in self.content if p.type == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """OpenAI chat-completions request. The last user message is the question; earlier user/assistant
    messages are the conversation (a follow-up is rewritten into a standalone question); system
    messages are ignored (the answer prompt is fixed). Other OpenAI fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(default=None, description=f"Ignored; responses say {MODEL_ID!r}.")
    messages: list[ChatMessage] = Field(min_length=1, description="The conversation; must contain a user message.")
    stream: bool = Field(default=False, description="Server-sent events: `data: {chunk}` lines, then `data: [DONE]`.")
    k: int | None = Field(default=None, ge=1, le=20, description="Papers retrieved (default RAG_RETRIEVAL__K).")
    filters: dict[str, MetaValue] | None = Field(
        default=None, description='Metadata filter, e.g. {"venue": "NeurIPS"}.'
    )
    mode: Literal["llm", "extractive"] | None = Field(
        default=None, description="'extractive': cited sentences, no LLM."
    )
    kind: QuestionKind | None = Field(
        default=None,
        description="Answer as a lookup, a list (every paper judged, `rag.items`), a comparison (per paper) or "
        "yes/no (`rag.verdict`); null: recognised from the question (`rag.kind` says which).",
    )


def where_as_filters(data: Any) -> Any:
    """A request body with ``where`` (the CLI's word) renamed ``filters``; both at once is an error."""
    if isinstance(data, dict) and "where" in data:
        if "filters" in data:
            raise ValueError("give the filter as filters or as where, not both")
        data = {("filters" if key == "where" else key): value for key, value in data.items()}
    return data


class TableRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attributes: (
        Annotated[str, Field(max_length=2000)]
        | Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=50)]
    ) = Field(description='The columns: "task, dataset, metric, best result", or a list of names.')
    query: str | None = Field(
        default=None,
        description="Rows: the papers that match it (retrieved, each confirmed by the list judge), at most k "
        "(default: every paper, up to k).",
    )
    filters: dict[str, MetaValue] | None = Field(
        default=None, description='Metadata filter, e.g. {"venue": "NeurIPS"} (also accepted as `where`).'
    )
    k: int | None = Field(
        default=None, ge=1, le=200, description="Rows at most (default RAG_ANSWER__TABLE_MAX_PAPERS)."
    )
    format: Literal["json", "csv", "md"] = Field(
        default="json", description="json: the table below; csv or md: text/csv or text/markdown with the references."
    )
    stream: bool = Field(
        default=False,
        description="Server-sent events: `status` (at once, then before each paper judged and row filled), one "
        "`row` per row as it is filled, then `table` (the JSON response) or `error`; then `[DONE]`. JSON only.",
    )

    @model_validator(mode="before")
    @classmethod
    def _where_means_filters(cls, data: Any) -> Any:
        """``where`` (the CLI's word, ``rag table --where``) is accepted for ``filters``."""
        return where_as_filters(data)

    @model_validator(mode="after")
    def _stream_is_json(self) -> TableRequest:
        if self.stream and self.format != "json":
            raise ValueError("stream: true sends the table as JSON events; leave format at json (or do not stream).")
        return self


class TableCellOut(BaseModel):
    attribute: str
    value: str | None = Field(description="None: the abstract does not state it (never guessed).")
    quote: str = Field(description="The sentence of the abstract that states the value ('' when not stated).")
    span: tuple[int, int] | None = Field(description="Character span of the quote in the abstract.")


class TableRowOut(BaseModel):
    n: int = Field(description="Reference number of the paper ([n] in the Markdown export).")
    paper_id: str
    title: str
    cells: list[TableCellOut]


class TableResponse(BaseModel):
    """``Assistant.table(...).to_json()``: one row per paper, one cell per attribute."""

    attributes: list[str]
    rows: list[TableRowOut]
    query: str | None
    checked: int = Field(description="Papers read.")
    collection_size: int = Field(description="Papers in the (filtered) collection.")
    timings: dict[str, float]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="Free-text query.")
    k: int | None = Field(default=None, ge=1, le=100, description="Papers returned (default RAG_RETRIEVAL__K).")
    filters: dict[str, MetaValue] | None = Field(default=None, description='Metadata filter, e.g. {"year": 2018}.')
    mode: Literal["hybrid", "dense", "bm25"] | None = Field(default=None, description="Retriever (default hybrid).")


class SearchHitOut(BaseModel):
    paper_id: str
    title: str
    score: float = Field(description="Fused (RRF) score, for ranking; not comparable across questions.")
    rank: int | None = Field(default=None, description="1-based position in the fused ranking.")
    similarity: float | None = Field(default=None, description="Cosine similarity of the best chunk to the query.")
    match: str = Field(default="keyword", description="strong / good / weak / off-topic (from similarity).")
    text: str
    metadata: dict[str, Any]


class SearchResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[SearchHitOut]


class PaperOut(BaseModel):
    paper_id: str
    title: str
    abstract: str
    authors: list[str]
    venue: str | None
    year: int | None
    url: str | None
    metadata: dict[str, Any]


class PapersResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[PaperOut]


class IngestResponse(BaseModel):
    files: list[str]
    papers_seen: int
    added: int
    updated: int
    unchanged: int
    removed: int
    chunks_written: int
    embedded: int


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = MODEL_ID


class ModelsResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class ChatChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatChoiceMessage
    finish_reason: Literal["stop"] = "stop"


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatResponse(BaseModel):
    """An OpenAI ``chat.completion``, plus ``rag``: the verified answer exactly as ``rag ask --json`` prints it
    (answer, refused, citations [n, paper_id, title, text, span, quote, support, judged, judge], sources (each with
    ``relevance``: basis, value, label, level, text), unsupported, ...)."""

    model_config = ConfigDict(extra="allow")
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage
    rag: dict[str, Any] = Field(description="Verified answer, citations and sources (`rag ask --json`).")


class CheckRequest(BaseModel):
    """``rag check`` over HTTP: the claim, how many papers to judge, a metadata filter, whole or streamed."""

    model_config = ConfigDict(extra="forbid")
    claim: str = Field(description='The statement to check, e.g. "WildBox provides 3D bounding box annotations."')
    k: int | None = Field(default=None, ge=1, le=50, description="Papers judged (default RAG_CHECK__K).")
    filters: dict[str, MetaValue] | None = Field(
        default=None, description='Metadata filter, e.g. {"venue": "NeurIPS"} (also accepted as `where`).'
    )
    stream: bool = Field(
        default=False,
        description="Server-sent events: `data: {event}` lines (status, one stance per paper, check or error), "
        "then `data: [DONE]`.",
    )

    @model_validator(mode="before")
    @classmethod
    def _where_means_filters(cls, data: Any) -> Any:
        """``where`` (the CLI's word, ``rag check --where``) is accepted for ``filters``."""
        return where_as_filters(data)


class CheckPaperOut(BaseModel):
    paper_id: str = Field(description="The corpus id of the paper (a BEIR record's _id).")
    title: str
    stance: Stance = Field(description="supports, refutes or not stated.")
    probability: float = Field(description="The judge's probability of that stance, 0..1.")
    quote: str = Field(description="The deciding sentence, verbatim from the abstract.")
    span: tuple[int, int] = Field(description="Character span of the quote in the abstract.")


class CheckResponse(BaseModel):
    """``ClaimCheck.summary()``, exactly ``rag check --json``: papers in order of relevance."""

    claim: str
    verdict: ClaimVerdict = Field(description="supported, refuted, mixed or not enough evidence.")
    counts: dict[str, int] = Field(description="Papers that support, refute, or do not state the claim (decided).")
    papers: list[CheckPaperOut]
