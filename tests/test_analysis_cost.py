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


def test_an_events_text_is_worked_out_once_per_analysis(engine):
    # issue 37.4: rag, rca's supports and quotes, recommend and the fix plan each read the events'
    # text; it is worked out once per event content
    from pipeline.knowledge import retrieval

    state = _state(engine.kb)
    analyst = OfflineAnalyst(engine.kb)
    retrieval._event_text.cache_clear()
    retrieval.evidence_text(state.evidence)
    state = state.model_copy(update={"rca": analyst.rca(state)})
    state = state.model_copy(update={"recommendation": analyst.recommend(state)})
    analyst.fix_plan(state)
    info = retrieval._event_text.cache_info()
    assert info.misses == len(state.evidence) and info.hits > 0, info


def test_an_events_text_follows_its_content():
    # the cache is keyed by everything the text reads: another message, error field or trace is
    # another text, and fields the text does not hold change nothing
    from pipeline.knowledge.retrieval import event_text

    raw = {"_time": "2026-11-28T10:00:00Z", "service": "api", "level": "ERROR", "exception": "OSError",
           "message": "[Errno 28] No space left on device"}
    first = event_text(normalize(raw, source="t", position="0"))
    assert event_text(normalize(raw, source="t", position="1")) == first
    assert "ENOSPC" not in first
    other = event_text(normalize({**raw, "message": "[Errno 13] Permission denied"}, source="t", position="2"))
    assert "Permission denied" in other and "No space" not in other
    coded = event_text(normalize({**raw, "error": {"code": "ENOSPC"}}, source="t", position="3"))
    assert "ENOSPC" in coded
    assert event_text(normalize({**raw, "error": {"code": "EACCES"}}, source="t", position="4")) != coded
    traced = event_text(normalize({**raw, "stack": "Traceback (most recent call last):\nOSError: disk"},
                                  source="t", position="5"))
    assert "OSError: disk" in traced


def test_a_docs_matched_signatures_are_its_own_and_follow_a_reload(engine):
    # Doc.matched_signatures keeps its answers per doc: the same text answers the same, and a doc
    # reloaded with other signatures (a new Doc) answers by its new ones, not the old doc's answers
    import dataclasses

    from pipeline.knowledge.index import MATCH_CACHE_TEXTS, _pattern

    doc = next(d for d in engine.kb.docs if any(s.startswith("re:") for s in d.signatures))
    text = "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available"
    first = doc.matched_signatures(text)
    assert doc.matched_signatures(text) == first == doc.matched_signatures(text, lowered=text.lower())
    first.append("changed by a caller")  # a caller's list is its own
    assert doc.matched_signatures(text) != first
    reloaded = dataclasses.replace(doc, signatures=("connection is not available",),
                                   patterns=(_pattern("connection is not available"),))
    assert reloaded.matched_signatures(text) == ["connection is not available"]
    nothing = dataclasses.replace(doc, signatures=("no such words",), patterns=(None,))
    assert nothing.matched_signatures(text) == []
    for n in range(3 * MATCH_CACHE_TEXTS):  # bounded
        doc.matched_signatures(f"{text} {n}")
    assert len(doc._matched) <= MATCH_CACHE_TEXTS


def test_a_bursts_texts_of_one_reading_are_read_once(monkeypatch):
    # issue 37.1/37.4: a merge re-reads up to 50 events whose texts differ only in their numbers;
    # each masked reading is decided once, and every text still counts toward its category
    from pipeline.analyst import ideas

    events = [normalize({"_time": f"2026-11-28T10:00:{i:02d}Z", "service": "orders-api", "level": "ERROR",
                         "message": f"could not acquire a connection from the pool: timed out after 30000ms"
                                    f" (request {981_231 + i})"}, source="t", position=str(i)) for i in range(20)]
    read = []
    original = ideas._idea_of
    monkeypatch.setattr(ideas, "_idea_of", lambda tokens, *a: read.append(tokens) or original(tokens, *a))
    worded = ideas.categories_worded(events)
    assert len(read) == 1
    monkeypatch.setattr(ideas, "_idea_of", original)
    assert worded == ideas.categories_worded(events) and worded, worded
    assert sum(n for _, n in worded.values()) == len(events)
