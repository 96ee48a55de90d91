"""Causes in still other words (issue 36, session 48's blind bed): a query's column or table the engine
cannot resolve, a commit lost to a conflicting write, a remedy asking for an environment variable, an
authorization refused, a scheduler's task capacity reached and a receiver not draining are each named by
the meaning of the line, below the code-fix line; and a doc's weak signature the events' own words agree
with is not outranked by another category's ideas alone."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas, specifics
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
    ("GET /fx -> 502: the rates backend did not reply in 1500ms", "upstream_timeout"),
    ("quote lookup failed: no response within 4 seconds from the tax backend", "upstream_timeout"),
    ("translate call failed: got 429 from the glossary API, slow down", "upstream_rate_limited"),
    ("ingest: 8000 files waiting, the indexers cannot keep up", "queue_backlog"),
    ("cart body rejected: invalid type: sequence, expected a map at line 3", "serialization_error"),
    ("install aborted: conflicting peer dependency: chart-kit@4 wants ui-core@^2, found ui-core@3.1",
     "dependency_mismatch"),
])
def test_a_cause_in_other_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("line, category", [
    ("lookup failed: no record found in table customers for id 9", "db_schema_mismatch"),  # a row absent
    ("deploy: merge conflict in chart/values.yaml, commit aborted", "concurrency_conflict"),  # files, not data
    ("lock conflict on row 12: transaction rolled back by the lock manager", "concurrency_conflict"),  # a lock wait
    ("MaxRetriesExceededError: cannot retry task reports.render again", "resource_exhaustion"),  # retries used up
    ("task 7 exceeded its memory limit of 2 GB and was stopped", "resource_exhaustion"),  # memory's, not workers'
    ("upgrade halted: node ip-10-0-3-4 is not draining, 3 pods left", "queue_backlog"),  # a node drain
    ("ERROR: unable to resolve host ledger-table-2.prod", "db_schema_mismatch"),  # a host's name, not a table
    ("401 Unauthorized: token expired; export a fresh one by setting the API_TOKEN env variable",
     "config_missing"),  # a dependency refused what it was given: the remedy does not make it a missing setting
    ("spawn failed: error setting environment for child process: E2BIG", "config_missing"),  # no variable asked for
    ("invalid type for setting max_workers: expected int", "serialization_error"),  # a setting's, not a payload's
    ("container can't resolve dependencies of the MailService: argument at index [1] unknown",
     "dependency_mismatch"),  # code's wiring, not packages' versions
])
def test_a_near_miss_is_not_that_cause(line, category):
    assert category not in ideas.categories_worded(analyst_events(line))


def test_a_weak_signature_the_words_agree_with_outranks_another_categorys_ideas_alone(offline_analyst):
    rca = offline_rca(offline_analyst,
                      "push to https://tsdb.example:8428 failed (401 Unauthorized): bearer token rejected",
                      {"level": "WARN", "message": "send buffer overflow: 300 samples dropped"})
    assert rca.category == "upstream_auth_failure"


@pytest.mark.parametrize("line, maxima", [
    ("pgx stats: total_conns=12 idle_conns=0 waiting=7", {"12"}),  # none free, callers waiting: 12 is all
    ("pgx stats: total_conns=12 idle_conns=0 waiting=0", set()),  # none free but none waiting: it may grow
    ("hikari.pool.active=30 hikari.pool.max.size=30", {"30"}),  # a bound named with a qualifier after `max`
    ("volume /srv/spool 100% used (19.5G/19.5G)", {"19.5G"}),  # sizes with their unit
])
def test_a_resource_counted_at_its_maximum(line, maxima):
    assert set(specifics.counted_at_max(line)) == maxima


def test_a_pools_connections_none_free_with_callers_waiting_make_its_bare_timeouts_the_pools(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "pgx pool for postgres://orders-db:5432/orders opened: max_conns=12"},
                      "GET /orders/77 -> 504: query timed out in connector",
                      "GET /orders/78 -> 504: query timed out in connector",
                      {"level": "INFO", "message": "pgx stats: total_conns=12 idle_conns=0 waiting=7"})
    assert rca.category == "db_pool_exhausted" and rca.confidence < THRESHOLD
    assert "max_conns=12" in rca.root_cause  # the pool's size, the bound reached


@pytest.mark.parametrize("line, function", [
    ("TypeError: Cannot read properties of null (reading 'sku')\n    at async Basket.addLine (/srv/basket/lib/basket.js:88:14)"
     "\n    at Router.handle (/srv/basket/lib/router.js:20:3)", "Basket.addLine"),
    ('Traceback (most recent call last):\n  File "/srv/invoices/render.py", line 41, in render_totals\n'
     "    total = order.lines[0].price\nAttributeError: 'NoneType' object has no attribute 'lines'", "render_totals"),
    ("java.lang.NullPointerException: Cannot invoke \"String.trim()\" because \"name\" is null\n"
     "\tat shop.billing.InvoiceWriter.header(InvoiceWriter.java:57)", "InvoiceWriter.header"),
])
def test_a_null_read_names_the_function_its_frame_runs(offline_analyst, line, function):
    rca = offline_rca(offline_analyst, line)
    assert rca.category == "null_reference" and f"in `{function}` at" in rca.root_cause


def test_the_sql_statement_a_database_error_ran_is_named(offline_analyst):
    rca = offline_rca(offline_analyst, "ERROR: deadlock detected\nDETAIL: Process 71 waits for ShareLock on transaction 5; "
                                       "blocked by process 72.\nHINT: See server log for query details.\n"
                                       "CONTEXT: while updating tuple (0,7) in relation \"wallets\"\n"
                                       "STATEMENT: UPDATE wallets SET credit = credit + 5 WHERE id = 9")
    assert "UPDATE wallets SET credit = credit + 5 WHERE id = 9" in rca.root_cause
