"""Analysis cost (issue 36.3): the technologies the evidence shows are read once per incident, and
a burst's texts that differ only in their long numbers (ids, counts, ports) share one reading."""
from __future__ import annotations

from pipeline.analyst import technology
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.evaluation import EVAL_DIR, load_cases
from pipeline.ingest.events import normalize
from pipeline.state import IncidentState


def _state(kb, n: int = 3) -> IncidentState:
    events = [normalize({"_time": f"2026-11-28T10:00:0{i}Z", "service": "orders-api", "host": "o-1", "level": "ERROR",
                         "exception": "java.sql.SQLTransientConnectionException",
                         "message": f"HikariPool-1 - Connection is not available, request timed out after 30000ms. "
                                    f"(job {981_231 + i})"}, source="t", position=str(i)) for i in range(n)]
    return IncidentState(incident_id="cost-1", service="orders-api", evidence=events)


def test_the_technologies_are_read_once_per_incident(engine, monkeypatch):
    state = _state(engine.kb)
    analyst = OfflineAnalyst(engine.kb)
    read = []
    original = technology._event_text
    monkeypatch.setattr(technology, "_event_text", lambda event: read.append(event.event_id) or original(event))
    state = state.model_copy(update={"rca": analyst.rca(state)})
    state = state.model_copy(update={"recommendation": analyst.recommend(state)})
    analyst.fix_plan(state)
    # shown_by once (its category's support, by_analogy, the steps ask again) and the steps' words once
    assert len(read) <= 2 * len(state.evidence), read


def test_masked_numbers_read_the_same_technologies_as_the_texts():
    # every open eval case: the cues on the texts with their long numbers as zeros say what they say
    # on the texts themselves (the cache is shared by a burst's texts, never wrong for one of them)
    for case in load_cases(EVAL_DIR, split="all"):
        for i, raw in enumerate(case.events):
            event = normalize(raw, source=f"eval:{case.case_id}", position=str(i))
            text = technology._event_text(event)
            masked = technology._LONG_NUMBER.sub(technology._zeros, text)
            assert technology._named_in.__wrapped__(masked) == technology._named_in.__wrapped__(text), (case.case_id, text)
