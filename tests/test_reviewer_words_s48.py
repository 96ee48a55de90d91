"""Issue 38 item 6, words a reviewer should not need: a JSON line with no message field is read as
its pairs (not its `{"_time": ...}` text) wherever a line is quoted; a hypothesis says what it rests
on in words, not event ids; a source that names no service is said so in the incident's header."""
from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.analyst.offline import OfflineAnalyst
from pipeline.incidents.leading import Leader
from pipeline.ingest.events import normalize
from pipeline.ingest.readable import readable_line
from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.knowledge.index import KnowledgeBase
from pipeline.knowledge.retrieval import find_similar
from pipeline.state import IncidentState


def _json_line(i: int) -> str:
    return json.dumps({"_time": f"2027-05-01T10:00:0{i}Z", "service": "loyalty-service", "status": 502,
                       "path": "/api/points"})


def _events():
    return [normalize({"time": f"2027-05-01T10:00:0{i}Z", "service": "loyalty-service", "message": _json_line(i),
                       "level": "ERROR"}, source="t", position=str(i)) for i in range(3)]


@pytest.fixture(scope="module")
def analysed() -> IncidentState:
    analyst = OfflineAnalyst(KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder()))
    state = IncidentState(incident_id="INC-j", service="loyalty-service", evidence=_events())
    state = state.model_copy(update={"similar_docs": find_similar(analyst.kb, state.evidence)})
    state = state.model_copy(update={"rca": analyst.rca(state), "severity": "high"})
    return state.model_copy(update={"recommendation": analyst.recommend(state)})


def test_a_json_line_without_a_message_reads_as_its_pairs_without_the_time():
    assert readable_line(_json_line(0)) == "status=502 path=/api/points"
    assert readable_line("plain words 42") == "plain words 42"


def test_the_root_cause_notes_quotes_and_steps_quote_the_line_in_words(analysed):
    rca, rec = analysed.rca, analysed.recommendation
    said = [rca.root_cause, *rca.notes, *rca.evidence, *(q.text for q in rca.quotes), rec.action, *rec.steps]
    assert not [s for s in said if '{"_time"' in s]
    assert "status=502 path=/api/points" in rca.root_cause
    assert any("status=502 path=/api/points" in s for s in rec.steps)


def test_the_leader_line_is_in_words():
    assert Leader.of(_events()[0], "p").message == "status=502 path=/api/points"


def test_a_hypothesis_says_what_it_rests_on_in_words_not_ids(analysed):
    hypotheses = [n for n in analysed.rca.notes if n.startswith("hypothesis")]
    ids = {e.event_id for e in analysed.evidence}
    assert hypotheses
    for note in hypotheses:
        assert not any(i in note for i in ids)
        assert re.search(r"Rests on \d+ lines? of loyalty-service from 10:00:0\d\.", note), note


def _header(service: str) -> None:
    from workbench.incident_view import header

    header({"incident_id": "INC-1", "title": "boom", "status": "open", "severity": "high", "service": service,
            "event_count": 3, "first_seen": "2027-05-01T10:00:00+00:00", "last_seen": "2027-05-01T10:00:02+00:00",
            "opened_at": "2027-05-01T10:00:00+00:00"})


def test_the_header_says_no_service_named_rather_than_service_unknown():
    at = AppTest.from_function(_header, args=("unknown",)).run(timeout=10)
    texts = [t.value for t in at.text]
    assert "no service named" in texts and not any("unknown" in t for t in texts), (at.exception, texts)
    at = AppTest.from_function(_header, args=("checkout-api",)).run(timeout=10)
    assert "service checkout-api" in [t.value for t in at.text]


def test_a_quote_in_words_carries_no_highlight_of_the_raw_lines_offsets():
    from workbench.evidence_view import quoted_lines

    event = {"event_id": "e1", "message": _json_line(0), "time": "2027-05-01T10:00:00+00:00"}
    rca = {"findings": [{"kind": "http_status", "spans": [{"event_id": "e1", "field": "message", "start": 70,
                                                           "end": 73}]}],
           "quotes": [{"event_id": "e1", "field": "message", "text": "status=502 path=/api/points", "spans": []}]}
    assert quoted_lines(rca, [event])[0]["strong"] == []
    plain = {**event, "message": "upstream answered 502 for /api/points"}
    rca["findings"][0]["spans"][0].update(start=18, end=21)
    rca["quotes"][0]["text"] = plain["message"]
    assert quoted_lines(rca, [plain])[0]["strong"] == [(18, 21)]
