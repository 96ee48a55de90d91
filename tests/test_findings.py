"""Findings: the RCA names the incident's own entities, found in its evidence with their spans, and
quotes log lines (not signatures), once per distinct line; a model's findings must occur in the evidence."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.analyst.findings import extract, locate, named_in_request
from pipeline.analyst.model import FindingAnswer, grounded_findings
from pipeline.evaluation import load_cases
from pipeline.ingest.events import normalize
from pipeline.ingest.readable import readable_line
from pipeline.unattended.file_ingest import ingest_path
from pipeline.state import IncidentState
from tests.support import ROOT, by_category, ingest_one, state_of

START = datetime(2026, 11, 28, 10, tzinfo=timezone.utc)


def events(*raw: dict):
    return [normalize({"_time": (START + timedelta(seconds=i)).isoformat(), "service": "svc", "level": "ERROR", **e})
            for i, e in enumerate(raw)]


def values(found, kind):
    return [f.value for f in found if f.kind == kind]


@pytest.mark.parametrize("message, kind, value", [
    ('ERROR: column "gift_card_id" of relation "orders" does not exist', "column", "gift_card_id"),
    ('ERROR: column "gift_card_id" of relation "orders" does not exist', "table", "orders"),
    ("Unknown column 'loyalty_tier' in 'field list'", "column", "loyalty_tier"),
    ('relation "order_lines" does not exist', "table", "order_lines"),
    ("config: required environment variable PSP_MERCHANT_ID is not set", "key", "PSP_MERCHANT_ID"),
    ("Could not resolve placeholder 'pos.tax.api-token' in value", "key", "pos.tax.api-token"),
    ('could not translate host name "inventory-db.pos.svc.cluster.local" to address', "host",
     "inventory-db.pos.svc.cluster.local"),
    ("Connect to kafka-1.pos.svc.cluster.local:9092 failed: Connection refused", "port", "9092"),
    ("HikariPool-1 - Connection is not available, request timed out after 30000ms (total=10, active=10, idle=0, "
     "waiting=20)", "pool_waiting", "20"),
    ("HikariPool-1 - Connection is not available, request timed out after 30000ms", "timeout", "30000ms"),
    ("Request failed with status code 429", "http_status", "429"),
    ("cannot import name 'DeclarativeBase' from 'sqlalchemy.orm'", "dependency", "sqlalchemy.orm"),
    ("ERROR: deadlock detected (SQLSTATE 40P01)", "sqlstate", "40P01"),
    ("[Errno 28] No space left on device: '/var/receipts/1.pdf'", "errno", "28"),
])
def test_general_patterns_find_the_entity_with_its_span(message, kind, value):
    found = extract(events({"message": message}))
    assert value in values(found, kind)
    finding = next(f for f in found if f.kind == kind and f.value == value)
    span = finding.spans[0]
    assert span.field == "message" and message[span.start:span.end] == value


def test_a_source_file_and_line_is_not_a_host_and_port_and_library_frames_are_left_out():
    stack = ("TypeError: Cannot read properties of undefined (reading 'profile')\n"
             "    at awardPoints (/srv/loyalty-service/src/points.js:31:23)\n"
             "    at parse (/srv/loyalty-service/node_modules/redis-parser/lib/parser.js:179:12)")
    found = extract(events({"message": "boom", "stack": stack}))
    assert values(found, "host") == [] and values(found, "port") == []
    assert values(found, "file_line") == ["/srv/loyalty-service/src/points.js:31"]


def test_a_burst_counts_every_event_carrying_a_finding():
    burst = events(*({"message": f"column \"gift_card_id\" of relation \"orders\" does not exist (req {i})"}
                     for i in range(5)))
    column = next(f for f in extract(burst) if f.kind == "column")
    assert column.event_ids == [e.event_id for e in burst]


def test_the_demo_rcas_name_their_entities_and_quote_log_lines(engine):
    ingest_path(engine, ROOT / "samples" / "pos-day.jsonl")
    schema = state_of(engine, by_category(engine, "db_schema_mismatch")).rca
    assert schema.root_cause.startswith("Column `gift_card_id` is missing in `orders`")
    assert {("column", "gift_card_id"), ("table", "orders")} <= {(f.kind, f.value) for f in schema.findings}
    config = state_of(engine, by_category(engine, "config_missing")).rca
    assert "`PSP_MERCHANT_ID`" in config.root_cause and "Read the key from the startup error" not in config.root_cause[:80]
    pool = state_of(engine, by_category(engine, "db_pool_exhausted")).rca
    assert "total=10, active=10, idle=0" in pool.root_cause
    for row in engine.records.incidents():
        rca = state_of(engine, row["incident_id"]).rca
        assert not any(line.startswith(("signature", "re:")) or "'re:" in line for line in rca.evidence)
        assert len({q.text for q in rca.quotes}) == len(rca.quotes)  # each line once
        state = state_of(engine, row["incident_id"])
        by_id = {e.event_id: e for e in state.evidence}
        for quote in rca.quotes:  # a quote is a line of the event it names, and its spans lie in it
            event = by_id[quote.event_id]
            said = getattr(event, quote.field) if quote.field != "stack" else event.stack
            assert quote.text in said or quote.text in readable_line(said)  # a JSON object's text: in its words
            assert all(0 <= s < e <= len(quote.text) for s, e in quote.spans)


def test_eval_tune_cases_mostly_get_a_concrete_cause(analyst_kb):
    from pipeline.analyst.offline import OfflineAnalyst

    analyst = OfflineAnalyst(analyst_kb)
    named, known = 0, 0
    for case in load_cases(split="tune"):
        evidence = [normalize(e, source="eval", position=str(i)) for i, e in enumerate(case.events)]
        rca = analyst.rca(IncidentState(incident_id=case.case_id, evidence=evidence))
        for finding in rca.findings:  # every finding lies in the evidence where it says
            event = next(e for e in evidence if e.event_id == finding.spans[0].event_id)
            span = finding.spans[0]
            text = {"message": event.message, "stack": event.stack, "exception": event.exception}.get(
                span.field, str((event.fields or {}).get(span.field[7:], "")))
            path, _, line = finding.value.rpartition(":")
            if finding.kind == "file_line":  # the span runs from the path to the line number as printed
                assert text[span.start:span.end].startswith(path) and text[span.start:span.end].endswith(line)
            else:
                assert text[span.start:span.end] == finding.value
        if rca.category != "unknown":
            known += 1
            named += bool(rca.findings) and "`" in rca.root_cause.split(". ")[0]
    assert known >= 40 and named / known >= 0.6, (named, known)


def test_the_rules_text_test_skips_only_texts_they_cannot_match(monkeypatch):
    """A rule runs only on text holding the plain text it requires; over every eval case and the
    sample day, what is found is what every rule run on every text finds."""
    import dataclasses

    from pipeline.analyst import findings
    from pipeline.ingest.events import DeadLetter, read_jsonl

    corpus = [[normalize(e, source="eval", position=str(i)) for i, e in enumerate(case.events)]
              for case in [*load_cases(split="tune"), *load_cases(split="holdout")]]  # never the sealed holdout2
    corpus += [[item] for _, item in read_jsonl(ROOT / "samples" / "pos-day.jsonl", max_bytes=1 << 20, final=True)
               if not isinstance(item, DeadLetter)]  # the day holds bad lines on purpose
    assert sum(bool(r.needs) for r in findings.RULES) >= 30  # most rules are tested by their text
    fast = [extract(evidence) for evidence in corpus]
    monkeypatch.setattr(findings, "RULES", tuple(dataclasses.replace(r, needs="") for r in findings.RULES))
    assert [extract(evidence) for evidence in corpus] == fast
    assert sum(len(found) for found in fast) > 100


@pytest.mark.parametrize("regex, ignore_case, needs", [
    (r"column (?P<c>\w+) does not exist", True, " does not exist"),
    (r"SQLSTATE[\s:=\[]*(?P<s>[0-9A-Z]{5})\b", True, "sqlstate"),
    (r"KeyError: '(?P<k>\w+)'", False, "KeyError: '"),
    (r"timeouts? of (?P<t>\d+)", True, "timeout"),  # `s?` may be absent
    (r"a|b", True, ""),  # a top-level alternation requires nothing
    (r"\[Errno (?P<e>\d+)\]", True, "[errno "),
    (r"\n\tat x", True, "at x"),  # an escaped letter is no literal
])
def test_required_text_of_a_rule(regex, ignore_case, needs):
    from pipeline.analyst.findings import required_text

    assert required_text(regex, ignore_case=ignore_case) == needs


@pytest.fixture(scope="module")
def analyst_kb():
    from pipeline.knowledge.embeddings import HashedNgramEmbedder
    from pipeline.knowledge.index import KnowledgeBase

    return KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder())


def test_locate_finds_only_verbatim_values():
    evidence = events({"message": "column \"gift_card_id\" of relation \"orders\" does not exist"})
    assert locate("gift_card_id", evidence)[0] == [evidence[0].event_id]
    assert locate("gift_card", evidence)[0] == [evidence[0].event_id]  # a substring occurs
    assert locate("loyalty_tier", evidence) == ([], [])


def test_model_findings_not_in_the_evidence_are_dropped_and_counted():
    state = IncidentState(incident_id="INC-1", evidence=events({"message": "HikariPool-1 - Connection is not available"}))
    kept, dropped = grounded_findings([FindingAnswer(kind="pool_name", value="HikariPool-1"),
                                       FindingAnswer(kind="column", value="gift_card_id")], state)
    assert [(f.kind, f.value, f.source) for f in kept] == [("pool_name", "HikariPool-1", "model")]
    assert kept[0].spans[0].start == 0 and dropped == 1


def test_the_model_rca_keeps_only_grounded_findings(model_engine, stub, tmp_path):
    inc = ingest_one(model_engine, tmp_path)
    rca = state_of(model_engine, inc).rca
    assert [(f.kind, f.value) for f in rca.findings] == [("pool_name", "HikariPool-1")]
    assert rca.dropped_findings == 1  # the scripted model also claimed a column no log line shows
    prompt = next(r for r in stub.chat_requests() if r.schema_name == "RCAAnswer").text()
    assert "findings:" in prompt and "copied exactly" in prompt


def test_a_reviewer_request_names_entities():
    found = named_in_request("the column is loyalty_tier, and the table is `order_lines`")
    assert [(f.kind, f.value, f.source) for f in found] == [("column", "loyalty_tier", "reviewer"),
                                                             ("table", "order_lines", "reviewer")]


def test_a_client_or_own_side_host_and_port_is_no_finding():
    def found(text, kind):
        return values(extract(events({"message": text})), kind)
    assert found("Too many parts (300). (from 10.220.5.17:48812) (in query: INSERT)", "port") == []
    assert found('10.91.7.7:51122 - "POST /api/v1/query HTTP/1.1" 500', "host") == []
    assert found("dial tcp 10.0.0.5:50051: connect: connection refused", "port") == ["50051"]
