"""What the offline analyst hands a reviewer beyond a category (issue 36): operational causes get a
runbook step and never a code fix, a borrowed doc carries no other stack's steps, the root cause
names what the events name before the doc's "why", and an incident no cause fits gets an
evidence report whose hypotheses cite its own events and whose steps follow from them."""
from __future__ import annotations

import pytest

from pipeline.analyst import evidence_report
from pipeline.analyst.evidence_report import Hypothesis, cited
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.analyst.technology import evidence_stack, foreign_step, shown_by
from pipeline.engine.nodes import fix_eligible, not_eligible_reason
from pipeline.ingest.events import normalize
from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.knowledge.index import KnowledgeBase
from pipeline.analyst.cause_doc import cause_doc
from pipeline.knowledge.retrieval import find_similar
from pipeline.state import IncidentState
from tests.support import THRESHOLD


@pytest.fixture(scope="module")
def kb():
    return KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder())


@pytest.fixture(scope="module")
def analyst(kb):
    return OfflineAnalyst(kb)


def _events(service: str, *lines, host: str | None = None):
    out = []
    for i, line in enumerate(lines):
        raw = {"message": line} if isinstance(line, str) else dict(line)
        out.append(normalize({"time": f"2026-01-05T08:00:{i:02d}Z", "level": "ERROR", "service": service,
                              **({"host": host} if host else {}), **raw}, source="test", position=str(i)))
    return out


def _analysed(analyst, kb, service: str, *lines, **kw) -> IncidentState:
    state = IncidentState(incident_id="INC-t", service=service, evidence=_events(service, *lines, **kw))
    state = state.model_copy(update={"similar_docs": find_similar(kb, state.evidence)})
    state = state.model_copy(update={"rca": analyst.rca(state), "severity": "high"})
    return state.model_copy(update={"recommendation": analyst.recommend(state)})


DNS = ('psycopg2.OperationalError: could not translate host name "inventory-db.pos.svc.cluster.local" to address: '
       'Name or service not known')
FULL = "OSError: [Errno 28] No space left on device: '/var/receipts/2026/11/28/r-1.pdf'"
OOM_KILLED = "Container receipts-worker in pod receipts-worker-7c9 was OOMKilled (exit code 137), memory limit 512Mi"
HEAP = ("java.lang.OutOfMemoryError: Java heap space\n\tat com.pos.reports.ReportBuilder.build(ReportBuilder.java:88)")


@pytest.mark.parametrize("service, line, named", [
    ("inventory-service", DNS, "inventory-db.pos.svc.cluster.local"),
    ("receipts-worker", FULL, "/var/receipts/2026/11/28/r-1.pdf"),
    ("receipts-worker", OOM_KILLED, "512Mi"),
])
def test_an_operational_cause_gets_a_runbook_step_naming_the_evidence_and_no_code_fix(analyst, kb, service, line,
                                                                                     named):
    state = _analysed(analyst, kb, service, line, line)
    assert state.rca.category != "unknown"
    assert not fix_eligible(state, THRESHOLD) and not fix_eligible(state, 0.0)
    assert "operational cause" in not_eligible_reason(state, THRESHOLD)
    first = state.recommendation.steps[0]
    assert first.startswith("Runbook (operational, no code change)") and named in first
    assert "operationally" in state.recommendation.action


def test_a_heap_exhausted_in_code_is_still_a_code_cause(analyst, kb):
    state = _analysed(analyst, kb, "reports-java", {"message": "java.lang.OutOfMemoryError: Java heap space",
                                                    "stack": HEAP}, {"message": "java.lang.OutOfMemoryError: Java heap space",
                                                                     "stack": HEAP})
    assert state.rca.category == "out_of_memory"
    assert "operational cause" not in not_eligible_reason(state, THRESHOLD)
    assert not state.recommendation.steps[0].startswith("Runbook")


def test_a_network_policy_named_in_the_events_is_operational_whatever_the_category(analyst, kb):
    state = _analysed(analyst, kb, "orders-java",
                      "java.net.ConnectException: Connection refused: payments.pos.svc.cluster.local/10.43.1.2:8080",
                      "egress to payments.pos.svc.cluster.local:8080 denied by network policy default-deny")
    assert state.rca.category != "unknown"
    # (whatever its confidence: a lone refusal is capped below the threshold, pipeline/analyst/earned.py)
    assert not fix_eligible(state, 0.0) and "network policy" in not_eligible_reason(state, 0.0)
    assert ":8080" in state.recommendation.steps[0]  # the peer the events name


KAFKA = ("kafka error: kafka-1.pos.svc.cluster.local:9092/1: Connect to ipv4#10.42.5.21:9092 failed: Connection "
         "refused (after 0ms in state CONNECT, 28 identical error(s) suppressed)")


def test_a_kafka_refusal_gets_no_other_stacks_advice(analyst, kb):
    state = _analysed(analyst, kb, "receipts-worker", *[{"message": KAFKA, "logger": "receipts.worker"}] * 3)
    assert state.rca.category == "connection_refused"
    advice = " ".join([state.recommendation.action, *state.recommendation.steps, *analyst.fix_plan(state)])
    for other in ("SQLAlchemy", "redis-py", "Celery", "HikariCP", "axios"):
        assert other not in advice
    assert state.recommendation.steps  # the doc's stack-neutral steps stay


@pytest.mark.parametrize("step, foreign", [
    ("Use pool_pre_ping (SQLAlchemy) / health_check_interval (redis-py) so dead pooled connections are replaced.", True),
    ("Add retries with backoff at connection setup (Celery broker_connection_retry, tenacity).", True),
    ("Identify host:port in the error and check the dependency's pods, endpoints and logs.", False),
    ("Verify bootstrap.servers and that Kafka's advertised.listeners are reachable from clients.", False),
])
def test_a_step_naming_only_technologies_the_evidence_does_not_show_is_another_stacks(step, foreign):
    assert foreign_step(step, evidence_stack(_events("receipts-worker", KAFKA))) is foreign


def test_a_java_service_forked_to_another_category_gets_no_go_client_code_in_its_advice(analyst, kb):
    """A reviewer forks a Java service's incident to upstream_timeout; no similar doc of that category
    was retrieved, so the category's doc written for the events' own stack (Java's) is taken, not its
    first (Go's net/http, session 46): no step or hint names Go code (`http.Client`, `DialContext`,
    `context.WithTimeout`)."""
    trace = "java.lang.IllegalStateException: order 7 not found\n\tat com.pos.orders.OrderService.get(OrderService.java:41)"
    state = _analysed(analyst, kb, "orders-java", {"message": "java.lang.IllegalStateException: order 7 not found",
                                                    "stack": trace})
    forked = state.model_copy(update={"rca": state.rca.model_copy(update={"category": "upstream_timeout", "doc_ids": []}),
                                      "similar_docs": []})
    assert cause_doc(kb, forked).doc_id == "java-socket-read-timeout"
    steps = analyst.recommend(forked).steps
    advice = " ".join([*steps, *analyst.fix_plan(forked)])
    for go in ("http.Client", "DialContext", "context.WithTimeout"):
        assert go not in advice
    assert any("circuit breaker" in step for step in steps)  # the Java doc's own step


def test_a_node_service_whose_lines_only_node_writes_forked_to_a_category_gets_nodes_advice(analyst, kb):
    """Issue 38.1: the demo's loyalty-service logs `Unhandled promise rejection: [object Object]` (no
    stack, no file): words and a stringified object only a JavaScript runtime writes. Forked from
    inconclusive to upstream_timeout, its recommendation was Go's (`Post "https://..."`, the category's
    first doc) and to out_of_memory Go's pprof: the events showed no technology the cues knew."""
    line = {"message": "Unhandled promise rejection: [object Object]", "reason": {}, "pid": 7}
    state = _analysed(analyst, kb, "loyalty-service", line, line)
    assert "node" in shown_by(state.evidence)
    for category in ("upstream_timeout", "out_of_memory"):
        forked = state.model_copy(update={"rca": state.rca.model_copy(update={"category": category, "doc_ids": []})})
        assert "node" in cause_doc(kb, forked).systems  # a doc written for Node (k8s' OOMKilled names it too)
        advice = " ".join([analyst.recommend(forked).action, *analyst.recommend(forked).steps])
        for go in ("Post \"https://", "pprof", "net/http"):
            assert go not in advice


def test_the_root_cause_names_the_events_specifics_before_the_docs_why(analyst, kb):
    trace = ("org.springframework.dao.DataAccessResourceFailureException: could not open\n"
             "\tat com.pos.orders.OrderRepository.save(OrderRepository.java:41)\n"
             "Caused by: java.net.UnknownHostException: orders-db.pos.svc.cluster.local: Name or service not known")
    state = _analysed(analyst, kb, "orders-java",
                      {"message": "java.net.UnknownHostException: orders-db.pos.svc.cluster.local", "stack": trace},
                      {"message": "java.net.UnknownHostException: orders-db.pos.svc.cluster.local", "stack": trace})
    cause = state.rca.root_cause
    assert "orders-db.pos.svc.cluster.local" in cause
    assert "The first error came from orders-java at 2026-01-05T08:00:00+00:00" in cause
    assert "`java.net.UnknownHostException: orders-db.pos.svc.cluster.local: Name or service not known`" in cause
    assert cause.index("orders-db") < cause.index("Why this happens:")


UNKNOWN_A = ("Widget frobnication stalled for batch 7781 on shelf-3", "Widget frobnication stalled for batch 7782 on shelf-3",
             {"message": "Reconciler gave up on ledger 12 after frobnication stall", "level": "WARN"})
UNKNOWN_B = ("Planet alignment check returned 4 for orbit 9 via gateway astro-gw.example.net",
             "Planet alignment check returned 5 for orbit 9 via gateway astro-gw.example.net")


def test_an_incident_no_cause_fits_gets_an_evidence_report(analyst, kb):
    state = _analysed(analyst, kb, "shelf-service", *UNKNOWN_A, host="shelf-3")
    rca = state.rca
    assert rca.category == "unknown" and rca.confidence <= evidence_report.INCONCLUSIVE_CONFIDENCE
    assert rca.root_cause.startswith("Inconclusive:")
    assert "3 events in 2 patterns, 2 of them errors or warnings" in rca.root_cause
    assert "the first, \"Widget frobnication stalled for batch 7781 on shelf-3\", came from shelf-service" in rca.root_cause
    assert any(n.startswith("pattern ×2 (shelf-service; first 2026-01-05T08:00:00") for n in rca.notes)
    hypotheses = [n for n in rca.notes if n.startswith("hypothesis")]
    ids = {e.event_id for e in state.evidence}
    assert 1 <= len(hypotheses) <= 3
    report = evidence_report.build(state.evidence, rca.findings, list(state.similar_docs))
    assert report.hypotheses and all(h.event_ids and set(h.event_ids) <= ids for h in report.hypotheses)
    for note in hypotheses:
        assert "Rests on " in note and " of shelf-service from 08:00:" in note  # in words, not event ids
        assert "Confirmed if" in note and "refuted if" in note
    assert [q.text for q in rca.quotes][:2] == ["Widget frobnication stalled for batch 7781 on shelf-3",
                                                "Widget frobnication stalled for batch 7782 on shelf-3"]


def test_an_inconclusive_recommendation_follows_from_its_report_not_a_boilerplate(analyst, kb):
    a = _analysed(analyst, kb, "shelf-service", *UNKNOWN_A).recommendation
    b = _analysed(analyst, kb, "astro-service", *UNKNOWN_B).recommendation
    assert a.steps != b.steps and a.action != b.action
    assert any("astro-gw.example.net" in s for s in b.steps)
    for rec in (a, b):
        assert not any("trace id" in s for s in rec.steps)  # these events carry none
        assert rec.steps[0].startswith("Check hypothesis 1:")


def test_a_hypothesis_citing_no_event_of_the_incident_is_dropped():
    events = _events("svc", "one", "two")
    kept = cited([Hypothesis("rests on nothing", (), "x", "y"),
                  Hypothesis("rests on another incident", ("elsewhere-1",), "x", "y"),
                  Hypothesis("rests on one", (events[0].event_id, "elsewhere-2"), "x", "y")], events)
    assert [(h.statement, h.event_ids) for h in kept] == [("rests on one", (events[0].event_id,))]


@pytest.mark.parametrize("service, line, category", [
    ("orders-service", "Failed to acquire database connection - pool exhausted", "db_pool_exhausted"),
    ("orders-service", "ConnectionPoolExhausted: All connections in use", "db_pool_exhausted"),
    ("orders-service", "Could not acquire connection from pool after 30s", "db_pool_exhausted"),
    ("billing-service", "ERROR SSL certificate expired", "tls_certificate"),
    ("billing-service", "ExpiredCertException: Certificate expired on 2024-08-03", "tls_certificate"),
    ("report-api", "POST /api/reports/generate 503 Service Unavailable: Service timeout after 30s", "upstream_timeout"),
])
def test_a_cause_in_other_words_is_named_with_capped_confidence(analyst, kb, service, line, category):
    state = _analysed(analyst, kb, service, line, line, line)
    assert state.rca.category == category
    assert state.rca.confidence <= 0.45 and not fix_eligible(state, THRESHOLD)


@pytest.mark.parametrize("line", [
    "Connection pool created with 10 connections",  # a pool, no exhaustion
    "Certificate for api.example.com renewed, valid until 2027-01-01",  # a certificate, nothing wrong
    "Resolved 3 hosts for the upstream in 2ms",
])
def test_the_words_of_one_idea_alone_name_nothing(analyst, kb, line):
    assert _analysed(analyst, kb, "svc", line, line).rca.category == "unknown"


def _at(service: str, second: int, message: str, level: str = "ERROR", host: str = "rack-2"):
    return normalize({"time": f"2026-01-05T08:{second // 60:02d}:{second % 60:02d}Z", "level": level,
                      "service": service, "host": host, "message": message}, source="window", position=f"w{second}")


def _report_state(analyst, kb, evidence, window) -> IncidentState:
    state = IncidentState(incident_id="INC-w", service=evidence[0].service, evidence=evidence, log_window=window)
    state = state.model_copy(update={"similar_docs": find_similar(kb, state.evidence)})
    state = state.model_copy(update={"rca": analyst.rca(state), "severity": "high"})
    return state.model_copy(update={"recommendation": analyst.recommend(state)})


def test_the_evidence_report_says_which_patterns_are_new_and_which_rose_against_the_window_before(analyst, kb):
    """The lines the store holds before the incident are its baseline: a pattern never written there
    is new in this source, one written there less often rose; hypotheses and steps follow from them."""
    before = [_at("spool-service", 200 + 20 * i, f"Spool sweep deferred {i} jobs on rack-2", "WARN") for i in range(4)]
    evidence = [_at("spool-service", 300 + i, f"Spool sweep deferred {10 + i} jobs on rack-2", "WARN")
                for i in range(6)]
    evidence += [_at("spool-service", 310 + i, f"Ledger seal mismatch on volume v{i}") for i in range(3)]
    state = _report_state(analyst, kb, evidence, [*before, *evidence])
    rca = state.rca
    assert rca.category == "unknown" and rca.root_cause.startswith("Inconclusive:")
    assert "Against the 4 stored lines of the 1.7 minutes before" in rca.root_cause
    assert 'new in this source: "Ledger seal mismatch on volume v0" (×3)' in rca.root_cause  # the log's words, not v#
    assert 'rose from 2 to 6: "Spool sweep deferred 10 jobs on rack-2"' in rca.root_cause
    hypotheses = [n for n in rca.notes if n.startswith("hypothesis")]
    new_one = next(n for n in hypotheses if "The new pattern" in n)
    assert "Rests on 3 lines of spool-service from " in new_one  # the new pattern's lines, in words
    assert any("rose from 2 in the previous window to 6" in n for n in hypotheses)
    assert any("The new pattern" in s for s in state.recommendation.steps)
    # the same errors without a baseline: nothing is called new or risen
    alone = _report_state(analyst, kb, evidence, evidence).rca
    assert "new in this source" not in alone.root_cause and "rose from" not in alone.root_cause


def test_a_hypothesis_resting_only_on_a_context_line_is_dropped(analyst, kb):
    """The nearest doc shares a word with an INFO line only ("request"): that is no evidence of it,
    so its hypothesis cites no event and is dropped; every kept one rests on problem lines."""
    state = _analysed(analyst, kb, "thumb-api", {"message": "thumbnail request 77 accepted", "level": "INFO"},
                      {"message": "#\n# A fatal error has been detected by the runtime:\n#\n#  SIGILL (0x4) at "
                                  "pc=0x00007f11, pid=1\n#\n# Problematic frame:\n# C  [libheif.so.1+0x2a10]",
                       "level": "FATAL"},
                      "worker exited with code 132")
    assert state.rca.category == "unknown" and "SIGILL (0x4)" in state.rca.root_cause
    problem_ids = {e.event_id for e in state.evidence if e.level != "INFO"}
    hypotheses = [n for n in state.rca.notes if n.startswith("hypothesis")]
    assert hypotheses and not any("It may be" in n for n in hypotheses)
    report = evidence_report.build(state.evidence, state.rca.findings, list(state.similar_docs))
    assert all(set(h.event_ids) <= problem_ids for h in report.hypotheses)


def test_a_doc_with_no_fix_hint_for_the_evidences_technology_proposes_no_code_fix(analyst, kb):
    # the Kafka client's refusal rests on a doc whose only hint is SQLAlchemy's and redis-py's: a
    # proposal would be "No diff" and nothing to do, above the code-fix line (issue 36.5)
    state = _analysed(analyst, kb, "receipts-worker", *[{"message": KAFKA, "logger": "receipts.worker"}] * 3)
    assert state.rca.category == "connection_refused" and state.rca.supported
    assert fix_eligible(state, 0.0)  # eligible by everything but its plan's technology
    assert not fix_eligible(state, 0.0, kb)
    reason = not_eligible_reason(state, 0.0, kb)
    assert "no fix hint" in reason and "kafka" in reason


def test_a_doc_with_a_fix_hint_for_the_evidences_technology_still_proposes_one(analyst, kb):
    state = _analysed(analyst, kb, "reports-java", {"message": "java.lang.OutOfMemoryError: Java heap space",
                                                    "stack": HEAP}, {"message": "java.lang.OutOfMemoryError: Java heap space",
                                                                     "stack": HEAP})
    assert fix_eligible(state, 0.0, kb) and not_eligible_reason(state, 0.0, kb) == ""


def test_the_why_leaves_out_a_symptom_of_its_doc_the_events_do_not_show(analyst, kb):
    # a refusal is not a reset: the doc's sentence on "Connection reset by peer" is no part of the why
    state = _analysed(analyst, kb, "receipts-worker", *[{"message": KAFKA, "logger": "receipts.worker"}] * 3)
    why = state.rca.root_cause.split("Why this happens:")[1]
    assert "refused" in why and "reset" not in why.lower()
    reset = _analysed(analyst, kb, "orders-py", "ConnectionResetError: [Errno 104] Connection reset by peer",
                      "ConnectionResetError: [Errno 104] Connection reset by peer")
    assert "Connection reset by peer" in reset.rca.root_cause.split("Why this happens:")[1]


APACHE = ("[client 10.0.0.7] File does not exist: /var/www/html/shop/cart.php",
          "[client 10.0.0.9] File does not exist: /var/www/html/shop/cart.php",
          {"message": "mod_jk child workerEnv in error state 6", "level": "WARN"})


@pytest.mark.parametrize("lines", [APACHE, (FULL,), UNKNOWN_A])
def test_lines_whose_source_names_no_service_are_never_said_to_come_from_a_service_named_unknown(analyst, kb,
                                                                                                lines):
    """An Apache error log's lines carry no service (stored as `unknown`): no sentence names it as one."""
    state = _analysed(analyst, kb, "unknown", *lines)
    rca, rec = state.rca, state.recommendation
    said = "\n".join([rca.root_cause, *rca.notes, rec.action, *rec.steps])
    for wrong in ("from unknown", "Investigate unknown", "owners of unknown", "Handle unknown", "of unknown",
                  "(unknown", "unknown's", "where unknown", "unknown was"):
        assert wrong not in said, wrong
    assert "a source that names no service" in said or "the program that wrote these lines" in said


def test_a_change_logged_just_before_the_first_problem_is_a_hypothesis_to_check_first(analyst, kb):
    change = {"message": "pricing-rules 7.4.1 deployed to eu-west by ci", "level": "INFO", "service": "deployer"}
    errors = ["quote 5512 priced at 0.00 (expected > 0)", "quote 5513 priced at 0.00 (expected > 0)"]
    state = _analysed(analyst, kb, "pricing", change, *errors)
    assert state.rca.category == "unknown"
    hypotheses = [n for n in state.rca.notes if n.startswith("hypothesis")]
    assert hypotheses[0].startswith('hypothesis 1: The change "pricing-rules 7.4.1 deployed to eu-west by ci" (deployer,')
    assert "Rests on 1 line of deployer from 08:00:00" in hypotheses[0]
    assert "pricing-rules 7.4.1 deployed" in state.recommendation.steps[0]
    # logged after the first problem, a change started nothing
    later = _analysed(analyst, kb, "pricing", *errors, change)
    assert not any("The change" in n for n in later.rca.notes)


def test_lines_with_no_problem_are_not_called_errors_and_the_first_is_the_first_the_log_wrote(analyst, kb):
    same_second = [{"message": line, "level": "INFO", "time": "2026-01-05T08:00:00Z"}
                   for line in ("POST /basket/items", "basket 77 saved in 3ms", "Sent 201 in 5ms", "Sent 200 in 2ms")]
    state = _analysed(analyst, kb, "basket", *same_second)
    assert state.rca.category == "unknown"
    assert "none of them an error or a warning; the first, \"POST /basket/items\"" in state.rca.root_cause
    assert not any("error pattern" in n for n in state.rca.notes)


def test_the_pattern_said_most_often_is_named_when_it_is_not_the_first(analyst, kb):
    state = _analysed(analyst, kb, "ledger", "ledger sealing stalled for shard 3",
                      "ledger checksum drifted on shard 4", "ledger checksum drifted on shard 9",
                      "ledger checksum drifted on shard 12")
    assert state.rca.category == "unknown"
    assert 'the most frequent, "ledger checksum drifted on shard 4" (×3)' in state.rca.root_cause
    one = _analysed(analyst, kb, "ledger", "ledger sealing stalled for shard 3", "ledger checksum drifted on shard 4")
    assert "most frequent" not in one.rca.root_cause  # each said once: none is more frequent
