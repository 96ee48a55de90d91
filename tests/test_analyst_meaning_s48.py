"""Causes in still other words (issue 36, session 48's blind bed): a query's column or table the engine
cannot resolve, a commit lost to a conflicting write, a remedy asking for an environment variable, an
authorization refused, a scheduler's task capacity reached and a receiver not draining are each named by
the meaning of the line, below the code-fix line; and a doc's weak signature the events' own words agree
with is not outranked by another category's ideas alone."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    ('nightly export failed: unable to resolve column "sku_code" in select list', "db_schema_mismatch"),
    ("bulk insert aborted: tables not found: ledger_entries_v3", "db_schema_mismatch"),
    ("txn 8812 aborted at commit: conflicting writes on key cart:77 from a newer txn", "concurrency_conflict"),
    ("OAuthSetupError: invalid credential chain, no tenant known. Set the AZ_TENANT env variable or pass "
     "tenant= to the client", "config_missing"),
    ("billing sync failed: HTTP 401 - authorization code invalid or revoked for client 'ledger'",
     "upstream_auth_failure"),
    ("thumbnail job refused: task scheduler capacity reached (512 waiting)", "resource_exhaustion"),
    ("metrics shipper dropped 900 samples: the collector is not draining its inbox", "queue_backlog"),
])
def test_a_cause_in_other_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("line, category", [
    ("lookup failed: no record found in table customers for id 9", "db_schema_mismatch"),  # a row absent
    ("deploy: merge conflict in chart/values.yaml, commit aborted", "concurrency_conflict"),  # files, not data
])
def test_a_near_miss_is_not_that_cause(line, category):
    assert category not in ideas.categories_worded(analyst_events(line))


def test_a_weak_signature_the_words_agree_with_outranks_another_categorys_ideas_alone(offline_analyst):
    rca = offline_rca(offline_analyst,
                      "push to https://tsdb.example:8428 failed (401 Unauthorized): bearer token rejected",
                      {"level": "WARN", "message": "send buffer overflow: 300 samples dropped"})
    assert rca.category == "upstream_auth_failure"
