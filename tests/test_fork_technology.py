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


def test_a_java_services_fork_to_a_timeout_gets_the_java_doc_though_a_go_dependency_says_it_too(kb):
    java = _event(0, "checkout-api", exception="org.springframework.web.client.ResourceAccessException",
                  message='I/O error on POST request for "http://payments-gateway:8080/v1/payments": Read timed out',
                  stack="Caused by: java.net.SocketTimeoutException: Read timed out\n\tat java.base/java.net.Socket"
                        "InputStream.read(SocketInputStream.java:168)")
    pool = _event(1, "checkout-api", exception="java.sql.SQLTransientConnectionException",
                  message="HikariPool-1 - Connection is not available, request timed out after 30000ms.")
    go = _event(2, "payments-gateway", message='psp authorize: Post "https://psp.example/v1/auth": context deadline '
                                               "exceeded (Client.Timeout exceeded while awaiting headers)")
    retrieved = [ErrorDoc(doc_id=d, title=d, category=kb.by_id[d].category, score=s)
                 for d, s in (("java-hikari-pool-exhausted", 0.43), ("go-http-client-timeout", 0.45),
                              ("java-socket-read-timeout", 0.55))]
    state = IncidentState(incident_id="INC-t", service="checkout-api", evidence=[java, pool, go],
                          similar_docs=retrieved)
    forked = _forked(kb, state, "upstream_timeout")
    assert cause_doc(kb, forked).doc_id == "java-socket-read-timeout"
    steps = " ".join(OfflineAnalyst(kb).recommend(forked).steps)
    assert not any(word in steps for word in GO_ADVICE), steps


def test_a_fork_to_a_category_with_no_doc_for_the_runtime_says_its_advice_is_by_analogy(kb):
    ruby = _event(0, "orders-rb", message="Net::ReadTimeout with #<TCPSocket:(closed)>",
                  stack="/app/lib/pricing_client.rb:42:in `fetch'")
    assert "ruby" in technology.shown_by([ruby])  # and no upstream_timeout doc is written for Ruby
    forked = _forked(kb, IncidentState(incident_id="INC-t", service="orders-rb", evidence=[ruby]), "upstream_timeout")
    rec = OfflineAnalyst(kb).recommend(forked)
    assert rec.steps[0].startswith("By analogy: the evidence shows ruby") and rec.action.startswith("By analogy")
    assert not any(word in " ".join(rec.steps) for word in GO_ADVICE)


def test_a_step_quotes_a_json_line_by_its_words():
    line = json.dumps({"_time": "2026-11-28T08:21:17.250Z", "service": "loyalty-service", "level": "ERROR",
                       "exception": "AxiosError", "path": "/v1/points/award", "http_status": 502})
    event = _event(0, "loyalty-service", message=line, exception="AxiosError")
    errors = specifics.statements([event])
    assert errors and errors[0].value.startswith('{"')  # the finding is the event's own text (its span)
    step = specifics.summary(errors)
    assert '{"' not in step and "path=/v1/points/award http_status=502" in step
    assert '{"' not in specifics.sentence(errors, [], [event])


def test_a_fork_to_another_category_has_a_root_cause_of_that_category_set_by_the_reviewer(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    before = state_of(paused_engine, inc)
    after_rca = next(h for h in service.history(inc, limit=200) if h["writes_by"] == ["rca"])["checkpoint_id"]
    service.fork(inc, checkpoint_id=after_rca, reviewer="ann", edits={"rca.category": "upstream_timeout"})
    rca = state_of(paused_engine, inc).rca
    kb = paused_engine.kb
    assert rca.category == "upstream_timeout" and rca.root_cause.startswith("Set by reviewer ann to upstream timeout")
    # the old category's paragraph is gone; the doc the analysis rests on (the ✓) is the new category's
    old_why = kb.by_id[before.rca.doc_ids[0]].root_cause.split(".")[0]
    assert old_why not in rca.root_cause
    assert rca.doc_ids and kb.by_id[rca.doc_ids[0]].category == "upstream_timeout"
    assert any("as set by reviewer ann" in n for n in rca.notes)
    # still the reviewer's doing: the fork's audit entry and its update checkpoint name what they set
    fork = next(a for a in paused_engine.records.audit(inc) if a["action"] == "fork")
    assert fork["reviewer"] == "ann" and fork["after"]["edited"] == ["rca.category"]
    made = next(h for h in service.history(inc, limit=200) if h["source"] == "update")
    assert made["human_action"] == "fork"


def test_a_fork_to_a_category_no_event_shows_says_the_reviewer_set_it_and_quotes_the_events_not_its_doc(kb):
    """Walkthrough s57 (36-audit.png): the demo's psycopg DNS failure forked to upstream_timeout read "Why this
    happens: nginx forwarded a request to a backend … proxy_read_timeout" and "Read the upstream address and
    request URI … find the slow backend", false of a Python service that never resolved its database's name.
    The root cause says who set it and what the events say, no paragraph of the category's doc; the
    recommendation asks to confirm it on the incident's own lines first."""
    from tests.support import ROOT

    lines = [json.loads(line) for line in (ROOT / "samples" / "pos-day.jsonl").read_text().splitlines()
             if "could not translate host name" in line][:3]
    events = [normalize(raw, source="test", position=str(i)) for i, raw in enumerate(lines)]
    state = IncidentState(incident_id="INC-t", service="inventory-service", evidence=events)
    analysed = state.model_copy(update={"rca": OfflineAnalyst(kb).rca(state), "severity": "high"})
    assert analysed.rca.category == "dns_resolution"
    rca = OfflineAnalyst(kb).set_by_reviewer(analysed, "upstream_timeout", "carol")
    assert not rca.supported and rca.root_cause.startswith("Set by reviewer carol to upstream timeout")
    assert "could not translate host name" in rca.root_cause, rca.root_cause  # the events' own words
    assert "Why this happens" not in rca.root_cause and "nginx" not in rca.root_cause, rca.root_cause
    forked = analysed.model_copy(update={"rca": rca})
    rec = OfflineAnalyst(kb).recommend(forked)
    assert rec.action.startswith("Confirm upstream timeout first: a reviewer set it"), rec.action
    assert "could not translate host name" in rec.steps[0]
    assert "If it is confirmed: " in rec.action and not rec.action.startswith("Read the upstream address")
