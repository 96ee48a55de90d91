"""Measured analysis quality: the `eval` command, its figures, and the offline analyzer's behaviour
on hand-written events (none of them taken from the eval set)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.analyst.offline import OfflineAnalyst, calibrated_confidence, doc_support
from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.analyst.evaluation import COMMITTED_LATEST, CaseResult, figures
from pipeline.ingest.events import normalize
from pipeline.knowledge.index import KnowledgeBase
from pipeline.state import IncidentState
from tests.test_durability import cli

START = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def analyst() -> OfflineAnalyst:
    return OfflineAnalyst(KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder()))


def rca(analyst, *events: dict):
    evidence = [normalize({"_time": (START + timedelta(seconds=i)).isoformat(), "service": "checkout-api",
                           "level": "ERROR", **e}) for i, e in enumerate(events)]
    return analyst.rca(IncidentState(incident_id="INC-test", evidence=evidence))


def test_eval_command_prints_the_figures_and_keeps_the_committed_ones(tmp_path):
    committed = COMMITTED_LATEST.read_bytes() if COMMITTED_LATEST.exists() else None
    result = cli(tmp_path / "data", "eval", "--split", "tune", "--limit", "10", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    tune = report["splits"]["tune"]
    assert tune["cases"] == 10 and report["analyst"] == "offline"
    for key in ("accuracy", "accuracy_at_3", "unknown_recall", "calibration_gap", "confidence_right",
                "confidence_wrong", "confusion"):
        assert key in tune
    assert 0.0 <= tune["accuracy"] <= 1.0 and sum(map(sum, (r.values() for r in tune["confusion"].values()))) == 10
    latest = json.loads((tmp_path / "data" / "eval-latest.json").read_text())
    assert latest["splits"]["tune"]["cases"] == 10
    # a quick subset never replaces the figures of the whole set that the README and the app show
    assert (COMMITTED_LATEST.read_bytes() if COMMITTED_LATEST.exists() else None) == committed


def test_eval_human_output_has_the_table_and_the_confusion(tmp_path):
    cases = tmp_path / "cases.jsonl"
    event = {"_time": "2026-11-28T10:00:00Z", "service": "pos", "level": "ERROR"}
    rows = [
        {"id": "t-1", "expected": "disk_full", "split": "tune",
         "events": [{**event, "message": "write /var/spool/x: no space left on device"}]},
        {"id": "t-2", "expected": "unknown", "split": "tune",
         "events": [{**event, "message": "basket total did not add up"}]},
        {"id": "h-1", "expected": "dns_resolution", "split": "holdout",
         "events": [{**event, "message": "flux capacitor misaligned"}]},
    ]
    cases.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = cli(tmp_path / "data", "eval", "--cases", str(cases))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "accuracy" in out and "acc@3" in out and "unk.recall" in out and "gap" in out
    assert "Confusion (all)" in out and "dns_resolution" in out
    assert "h-1" not in out  # held-out misses are reported only in aggregate


def test_eval_rejects_a_bad_limit(tmp_path):
    result = cli(tmp_path / "data", "eval", "--limit", "0")
    assert result.returncode == 2 and "--limit" in result.stderr


def test_figures_define_accuracy_at_3_unknown_recall_and_the_calibration_gap():
    results = [
        CaseResult("a", "tune", "disk_full", "disk_full", 0.9, ["disk_full", "out_of_memory"]),
        CaseResult("b", "tune", "upstream_timeout", "db_pool_exhausted", 0.5, ["db_pool_exhausted", "upstream_timeout"]),
        CaseResult("c", "tune", "unknown", "unknown", 0.1, ["config_missing"]),
        CaseResult("d", "tune", "unknown", "dns_resolution", 0.4, ["dns_resolution"]),
    ]
    fig = figures(results)
    assert fig["accuracy"] == 0.5
    assert fig["accuracy_at_3"] == 1.0 and fig["accuracy_at_3_cases"] == 2  # unknown cases have no doc
    assert fig["unknown_recall"] == 0.5 and fig["unknown_precision"] == 1.0
    assert fig["confidence_right"] == 0.5 and fig["confidence_wrong"] == 0.45 and fig["calibration_gap"] == 0.05
    assert fig["confusion"]["upstream_timeout"] == {"db_pool_exhausted": 1}


def test_nothing_matching_is_unknown_with_low_confidence(analyst):
    result = rca(analyst, {"message": "promotion engine returned state 7 for basket 8812"},
                 {"message": "promotion engine returned state 7 for basket 8815"})
    assert result.category == "unknown" and result.confidence <= 0.3 and result.doc_ids == []


def test_pool_acquire_timeout_is_pool_exhaustion_not_an_upstream_timeout(analyst):
    hikari = rca(analyst, {"exception": "org.springframework.jdbc.CannotGetJdbcConnectionException",
                           "message": "Failed to obtain JDBC Connection; request timed out",
                           "stack": "Caused by: java.sql.SQLTransientConnectionException: HikariPool-3 - Connection is "
                                    "not available, request timed out after 5001ms."})
    go = rca(analyst, {"message": "GET /v1/stock failed", "error": "get stock: acquire connection: context deadline exceeded"})
    assert hikari.category == "db_pool_exhausted" and go.category == "db_pool_exhausted"


def test_401_from_a_dependency_is_an_auth_failure_not_a_rate_limit(analyst):
    axios = rca(analyst, {"exception": "AxiosError", "message": "Request failed with status code 401"})
    requests = rca(analyst, {"message": "loyalty sync failed: 401 Client Error: Unauthorized for url: "
                                        "https://loyalty.example.com/api/members"})
    throttled = rca(analyst, {"exception": "AxiosError", "message": "Request failed with status code 429"})
    assert axios.category == requests.category == "upstream_auth_failure"
    assert throttled.category == "upstream_rate_limited"


def test_confidence_is_lower_when_two_categories_are_nearly_tied(analyst):
    alone = rca(analyst, {"message": "write failed: [Errno 28] No space left on device"})
    contested = rca(analyst, {"message": "write failed: [Errno 28] No space left on device"},
                    {"message": "container receipt-writer terminated: reason OOMKilled, exit code 137"})
    assert alone.category == "disk_full" and contested.category in ("disk_full", "out_of_memory")
    assert contested.confidence < alone.confidence
    assert any("also consistent with" in line for line in contested.evidence)
    assert calibrated_confidence(2.0, 2.0, coverage=1.0) < calibrated_confidence(2.0, 0.0, coverage=1.0) - 0.2


def test_thin_support_gets_less_confidence_than_strong_support(analyst):
    thin = rca(analyst, {"message": "upload failed", "error": "EPIPE"})
    strong = rca(analyst, {"message": "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
                           "exception": "java.sql.SQLTransientConnectionException"})
    assert thin.confidence < 0.6 < strong.confidence


def test_a_clue_only_in_the_stack_trace_counts(analyst):
    result = rca(analyst, {"message": "Unhandled exception in request /api/price", "exception": "ServletException",
                           "stack": "jakarta.servlet.ServletException: Request processing failed\n\tat x.y(Z.java:1)\n"
                                    "Caused by: java.net.UnknownHostException: pricing-db.internal"})
    assert result.category == "dns_resolution"


def test_fast_signature_matching_finds_what_the_docs_declare(analyst):
    # doc_support skips regexes whose required text is absent; on every doc's own examples it must
    # find exactly what Doc.matched_signatures finds
    kb = analyst.kb
    for text in [d.body for d in kb.docs]:
        lowered = text.lower()
        for doc in kb.docs:
            assert doc_support(doc, text, lowered)[1] == doc.matched_signatures(text, lowered=lowered), doc.doc_id
