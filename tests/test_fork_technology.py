"""A fork to another category (issue 38's walkthrough): its recommendation rests on the new category's
doc written for the incident's own runtime, or says it explains by analogy, never another runtime's
advice silently; and its root cause agrees with the category a reviewer set, credited to them."""
from __future__ import annotations

import json

import pytest

from pipeline.analyst import specifics, technology
from pipeline.analyst.cause_doc import cause_doc
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.ingest.events import normalize
from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.knowledge.index import KnowledgeBase
from pipeline.review.service import ReviewService
from pipeline.state import ErrorDoc, IncidentState
from tests.support import by_category, state_of

GO_ADVICE = ("http.Client", "DialContext", "ResponseHeaderTimeout", "context.WithTimeout")


@pytest.fixture(scope="module")
def kb():
    return KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder())


def _event(i: int, service: str, **fields):
    return normalize({"time": f"2026-11-28T12:05:0{i}Z", "level": "ERROR", "service": service, **fields},
                     source="test", position=str(i))


def _forked(kb, state: IncidentState, category: str) -> IncidentState:
    """The state as the analyst left it, then its category edited (as_node rca: recommend re-runs)."""
    analysed = state.model_copy(update={"rca": OfflineAnalyst(kb).rca(state), "severity": "high"})
    return analysed.model_copy(update={"rca": analysed.rca.model_copy(update={"category": category})})


def test_a_line_of_axios_error_and_no_trace_shows_node():
    raw = {"_time": "2026-11-28T08:21:17.250Z", "service": "loyalty-service", "level": "ERROR",
           "exception": "AxiosError", "path": "/v1/points/award", "http_status": 502}
    event = _event(0, "loyalty-service", message=json.dumps(raw), exception="AxiosError")
    assert "node" in technology.shown_by([event])
