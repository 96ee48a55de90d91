"""The analyst backed by an OpenAI-compatible chat model (langchain-openai).

This module is the model's one boundary: every openai / httpx / langchain / pydantic error a
call can raise becomes an `AnalystError` here (worded by pipeline/openai_endpoint.py, which the
embeddings share), with a short message that carries neither the key nor the prompt, so the runner marks the run `failed` and shows why. The answer is asked for as
structured output and validated twice: by the answer schema (same category type and confidence
bounds as the state models) and then as the `RCA` / `Recommendation` the graph stores.

The chat client is built per call with the key read at that moment (`config.secret`), so no
client, and no key, outlives the call or sits in a module global, the engine or a checkpoint.
"""
from __future__ import annotations

from typing import Literal, TypeVar

from langchain_openai import ChatOpenAI
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.analyst.reading import read_requests
from pipeline.analyst import prompts
from pipeline.errors import AnalystError
from pipeline.openai_endpoint import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, MODEL_ERRORS, analyst_error, api_key
from pipeline.analyst.fixes import file_refs
from pipeline.knowledge.index import KnowledgeBase
from pipeline.analyst.findings import locate
from pipeline.analyst.technology import ANALOGY_CONFIDENCE, by_analogy
from pipeline.state import RCA, Category, ErrorDoc, Finding, FindingKind, IncidentState, Recommendation, Severity

UNKNOWN_MAX_CONFIDENCE = 0.3
MAX_EVIDENCE_ITEMS = 8
MAX_STEPS = 10
ITEM_CHARS = 500

StructuredMethod = Literal["json_schema", "function_calling"]
Answer = TypeVar("Answer", bound=BaseModel)


class FindingAnswer(BaseModel):
    """One concrete entity the evidence names."""

    model_config = ConfigDict(extra="forbid")

    kind: FindingKind = Field(description="what the value is: column, table, key, host, port, file_line, ...")
    value: str = Field(min_length=1, description="the value exactly as it appears in the log lines")


class RCAAnswer(BaseModel):
    """The root-cause analysis of one incident."""

    model_config = ConfigDict(extra="forbid")

    category: Category = Field(description="one of the categories offered in the prompt")
    root_cause: str = Field(min_length=1, description="what caused the errors, grounded in the evidence")
    confidence: float = Field(ge=0.0, le=1.0, description="probability in [0, 1] that the category is right")
    evidence: list[str] = Field(description="short quotes or facts from the log lines the answer rests on")
    doc_ids: list[str] = Field(description="ids of the retrieved docs relied on")
    findings: list[FindingAnswer] = Field(description="the concrete entities (column, key, host, file:line, "
                                                      "pool numbers, status code, ...) the cause names, "
                                                      "copied exactly from the log lines")


class RecommendationAnswer(BaseModel):
    """The action proposed for one incident."""

    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=1, description="the one thing to do first")
    steps: list[str] = Field(description="ordered, concrete steps")
    risk: Severity = Field(description="risk of leaving the incident as it is")


class FixPlanAnswer(BaseModel):
    """The plan of a code or configuration fix."""

    model_config = ConfigDict(extra="forbid")

    plan: list[str] = Field(description="ordered steps, ending with how to verify the fix")


class ModelAnalyst:
    """Analyst backed by an OpenAI-compatible chat model; see the module docstring."""

    def __init__(self, *, kb: KnowledgeBase, model: str, base_url: str | None,
                 timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_MAX_RETRIES,
                 method: StructuredMethod = "json_schema"):
        self.kb = kb  # the prompts use the retrieved docs in the state; kept for the seam's shape
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.method = method
        self.name = f"model:{model}"

    def rca(self, state: IncidentState) -> RCA:
        """Ask the model for the RCA; it may only name a retrieved doc's category, or unknown."""
        categories = allowed_categories(state.similar_docs)
        reading = read_requests(self.kb, state.feedback) if state.feedback else None
        answer = self._ask(RCAAnswer, prompts.rca_messages(state, categories, reading))
        # a category no retrieved doc supports is kept for the reviewer to judge, flagged, and
        # rests on no doc (code_fix reads doc_ids[0] as the doc of the category)
        supported = answer.category in categories
        confidence = answer.confidence
        if answer.category == "unknown" or not supported:
            # CONTRACT §3: an RCA without support says so with a low confidence
            confidence = min(confidence, UNKNOWN_MAX_CONFIDENCE)
        kept, dropped = grounded_findings(answer.findings, state)
        doc_ids = cited_doc_ids(answer.category, answer.doc_ids, state.similar_docs) if supported else []
        warning = None if supported else unsupported_warning(answer.category, categories)
        root_cause = prompts.clip(answer.root_cause, 2_000)
        # the doc the cause rests on, written for a technology the evidence does not show: the
        # model's cause is an analogy, said so and kept from the code-fix threshold (CONTRACT §3)
        analogy = by_analogy(state.evidence, self.kb.by_id.get(doc_ids[0])) if doc_ids else None
        if analogy is not None:
            confidence = min(confidence, ANALOGY_CONFIDENCE)
            root_cause, supported, warning = f"{analogy} {root_cause}", False, analogy
        return _validated(RCA, category=answer.category, root_cause=root_cause,
                          confidence=round(confidence, 2), evidence=_items(answer.evidence, MAX_EVIDENCE_ITEMS),
                          doc_ids=doc_ids, analyst=self.name, supported=supported, warning=warning,
                          findings=kept, dropped_findings=dropped)

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        """Ask the model for the action and steps; feedback (every request of the reviewers, the
        newest last) is addressed as data."""
        answer = self._ask(RecommendationAnswer, prompts.recommend_messages(state, feedback))
        return _validated(Recommendation, action=prompts.clip(answer.action, 1_000),
                          steps=_items(answer.steps, MAX_STEPS), risk=answer.risk,
                          revision=state.revisions + (1 if feedback else 0), feedback=feedback)

    def fix_plan(self, state: IncidentState) -> list[str]:
        """Ask the model for a code-fix plan (steps a developer applies by hand)."""
        files = [f"{ref.path}:{ref.line}" for ref in file_refs(state)]
        return _items(self._ask(FixPlanAnswer, prompts.fix_plan_messages(state, files)).plan, MAX_STEPS)

    def _chat(self) -> ChatOpenAI:
        # chat completions, not the Responses API: it is what OpenAI-compatible servers speak
        return ChatOpenAI(model=self.model, base_url=self.base_url, api_key=api_key(self.base_url),
                          timeout=self.timeout, max_retries=self.max_retries, use_responses_api=False)

    def _ask(self, schema: type[Answer], messages: list[tuple[str, str]]) -> Answer:
        runnable = self._chat().with_structured_output(schema, method=self.method)
        try:
            answer = runnable.invoke(messages)
        except MODEL_ERRORS as exc:
            raise analyst_error(exc, timeout=self.timeout, retries=self.max_retries) from exc
        if not isinstance(answer, schema):
            # a tool call whose arguments were not JSON parses to None rather than raising
            raise AnalystError(f"model answer could not be parsed (no valid {schema.__name__})")
        return answer


def unsupported_warning(category: str, allowed: list[str]) -> str:
    return (f"Unsupported: the model named {category}, which no retrieved doc supports (retrieved: "
            f"{', '.join(allowed)}). Check the evidence before approving; its confidence is capped at "
            f"{UNKNOWN_MAX_CONFIDENCE} and no code fix is proposed for it.")


MAX_FINDINGS = 12


def grounded_findings(answers: list[FindingAnswer], state: IncidentState) -> tuple[list[Finding], int]:
    """The model's findings whose value occurs verbatim in the evidence, located there; and how many
    were dropped because nothing in the evidence shows them (a finding must be seen, not guessed)."""
    kept: list[Finding] = []
    dropped = 0
    for answer in answers[:MAX_FINDINGS]:
        value = answer.value.strip()
        event_ids, spans = locate(value, state.evidence)
        if not event_ids:
            dropped += 1
            continue
        if not any((f.kind, f.value) == (answer.kind, value) for f in kept):
            kept.append(Finding(kind=answer.kind, value=value, event_ids=event_ids, spans=spans, source="model"))
    dropped += max(0, len(answers) - MAX_FINDINGS)
    return kept, dropped


def allowed_categories(docs: list[ErrorDoc]) -> list[str]:
    """The categories the model may answer: the retrieved docs', best first, then unknown."""
    out: list[str] = []
    for doc in docs:
        if doc.category not in out:
            out.append(doc.category)
    return [*out, "unknown"]


def cited_doc_ids(category: str, cited: list[str], docs: list[ErrorDoc]) -> list[str]:
    """Cited ids that were retrieved, the answer's category first; the best doc of it if none cited.

    The rca node and code_fix read `doc_ids[0]` as the doc the cause rests on, so it must be a
    retrieved doc of the answered category; `unknown` rests on no doc.
    """
    if category == "unknown":
        return []
    by_id = {d.doc_id: d for d in docs}
    known = list(dict.fromkeys(i for i in cited if i in by_id))
    ordered = [i for i in known if by_id[i].category == category] + [i for i in known if by_id[i].category != category]
    if not ordered or by_id[ordered[0]].category != category:
        best = next(d.doc_id for d in docs if d.category == category)
        ordered = [best] + [i for i in ordered if i != best]
    return ordered


def _items(values: list[str], limit: int) -> list[str]:
    return [prompts.clip(v.strip(), ITEM_CHARS) for v in values if v and v.strip()][:limit]


def _validated(model: type[Answer], **values) -> Answer:
    try:
        return model(**values)
    except ValidationError as exc:
        raise analyst_error(exc, timeout=0, retries=0) from exc
