"""INCIDENTIQ_CRITICAL_SERVICES: whole-word service patterns, empty by default, the demo's list
only for the demo source; the prompts describe the task, never the user's business."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.analyst import prompts
from pipeline.knowledge.retrieval import is_critical_service, severity_for
from pipeline.config import SETTINGS, Settings, critical_services
from pipeline.state import LogEvent

DEMO = next(s for s in SETTINGS if s.name == "INCIDENTIQ_CRITICAL_SERVICES").demo


@pytest.fixture(autouse=True)
def _unset(monkeypatch):
    monkeypatch.delenv("INCIDENTIQ_CRITICAL_SERVICES", raising=False)


@pytest.mark.parametrize("service, critical", [
    ("pos-api", True), ("postgres-primary", False), ("checkout-api", True), ("payments-gateway", True),
    ("orders-db", True), ("inventory-service", False), ("purchase-order-sync", True), ("repository", False),
])
def test_demo_patterns_match_whole_words_of_the_service_name(service, critical):
    assert is_critical_service(service, critical_services("demo")) is critical


def test_a_pattern_may_name_the_whole_service_with_a_glob():
    assert is_critical_service("pos-api", ("pos-*",))
    assert not is_critical_service("postgres-primary", ("pos-*",))
    assert is_critical_service("Billing.API", ("billing",))


def test_default_is_empty_and_the_demo_list_applies_only_to_the_demo_source(monkeypatch):
    assert DEMO and critical_services("demo") == tuple(DEMO.split(","))
    assert critical_services("file:/var/log/app.jsonl") == ()
    assert critical_services("splunk") == ()
    monkeypatch.setenv("INCIDENTIQ_CRITICAL_SERVICES", "")  # set to empty: the demo's list is off too
    assert critical_services("demo") == ()
    monkeypatch.setenv("INCIDENTIQ_CRITICAL_SERVICES", " Ledger , pos-* ,ledger")
    assert critical_services("splunk") == ("ledger", "pos-*")
    assert Settings.from_env(source="splunk").critical_services == ("ledger", "pos-*")


def _errors(service: str) -> list[LogEvent]:
    return [LogEvent(event_id=f"e{i}", time=datetime(2026, 11, 28, 10, 0, i, tzinfo=timezone.utc),
                     message="boom", service=service, level="ERROR") for i in range(3)]


def test_a_critical_service_raises_a_high_incident_to_critical_and_postgres_is_not_pos():
    demo = critical_services("demo")
    assert severity_for(_errors("pos-api"), "pos-api", "high", critical_services=demo) == "critical"
    assert severity_for(_errors("postgres-primary"), "postgres-primary", "high", critical_services=demo) == "high"
    assert severity_for(_errors("pos-api"), "pos-api", "high") == "high"  # no setting: no policy


def test_prompts_describe_the_task_not_a_business():
    text = " ".join([prompts.RCA_SYSTEM, prompts.RCA_USER, prompts.RECOMMEND_SYSTEM, prompts.FIX_PLAN_SYSTEM]).lower()
    assert not any(word in text for word in ("retail", "point-of-sale", "point of sale", "checkout", "store"))
