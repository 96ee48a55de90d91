"""Causes in still other words (issue 36, session 49's blind bed): a record said to exist already, a
certificate or its chain said invalid, a storage said full, a message queue said full, a format's value
that cannot be converted, a module the release lacks and a call that did not complete within its timeout
are each named by the meaning of the line, below the code-fix line; and the near misses of those words
are not."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    ("upsert refused: an entry with key 'plan-gold' already exists in the catalogue", "data_integrity"),
    ("SchemaError.UniqueBroken: item 4410 already exists with attribute `email`", "data_integrity"),
    ("handshake to payments-gw failed: the remote certificate is invalid (chain has an untimely link)",
     "tls_certificate"),
    ("HTTP 507 from the blob gateway: storage full, free some objects first", "disk_full"),
    ("publish aborted: outbound message queue is full (2000 pending)", "queue_backlog"),
    ("consumer fault: the XML value could not be converted to Int32 at /order/qty", "serialization_error"),
    ("boot failed after release 2.3: module Poison is not available", "dependency_mismatch"),
    ("render job: the quote lookup did not complete within 3s", "upstream_timeout"),
    ("commit failed: restart transaction: TxnRetryError: serializable read of key /ledger/9 pushed by a newer writer",
     "concurrency_conflict"),
    ("secrets fetch: GET https://kv.internal:8200/v1/app/db -> Code: 403. Errors: permission denied",
     "upstream_auth_failure"),
    ("rates poll failed: OSError: [Errno 111] Connect call failed ('10.4.0.9', 6379)", "connection_refused"),
    ("billing-export.service: Failed with result 'oom-kill'.", "out_of_memory"),
    ("cluster health: HEALTH_ERR 2 full osd(s)", "disk_full"),
    ("(Repo.InsertError) constraint error when inserting struct: accounts_handle_index (unique_constraint)",
     "data_integrity"),
    ("** (exit) exited in: GenServer.call(Ledger.Gateway, {:post, 9}, 5000)\n    ** (EXIT) time out", "upstream_timeout"),
    ("** (Repo.StaleEntryError) attempted to delete a stale struct: %Cart{}", "concurrency_conflict"),
    ("(TransportError) non-existing domain for smtp.mailer.internal", "dns_resolution"),
    ("-ERR 'Authorization Violation' for user 'ingest'", "upstream_auth_failure"),
    ("spawn refused: too many processes (system_limit)", "resource_exhaustion"),
    ("publish dropped: queue 'invoices' length 90000 exceeds its max-length", "queue_backlog"),
])
def test_a_cause_in_other_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("line, category", [
    ("migration 0042 failed: table invoices already exists", "data_integrity"),  # a table made twice: a migration's
    ("Unhandled exception. System.InvalidOperationException: Unable to start the HTTPS listener. No server "
     "certificate was specified", "tls_certificate"),  # an exception's name is not the certificate said invalid
    ("worker pool task queue is full: 300 tasks waiting", "queue_backlog"),  # a pool's tasks, not messages
    ("listen socket accept queue full, SYNs dropped", "queue_backlog"),  # a kernel's accept queue
    ("payload rejected: json field 'qty' is not an integer", "dependency_mismatch"),
    ("Deadlock found when trying to get lock; try restarting transaction", "concurrency_conflict"),  # a deadlock's
    ("open /srv/keys/app.pem: permission denied", "upstream_auth_failure"),  # a file's EACCES: no dependency's 403
    ("dial tcp 10.4.0.9:6379: connect call failed after timeout 5s", "connection_refused"),  # a connect timing out
    ("Jobs\\Sync has been attempted too many times. (Queue\\MaxAttemptsExceededException)",
     "queue_backlog"),  # a job's attempts used up, not a queue's length
    ("stream ORDERS: message size 9 MB exceeds the maximum payload", "queue_backlog"),  # a message too large
])
def test_a_near_miss_is_not_that_cause(line, category):
    assert category not in ideas.categories_worded(analyst_events(line))


def test_versions_that_do_not_fit_together_name_the_versions_the_change_line_says(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "ledger 4.2.0 rolled out (deps: replaced msgpack-lite with msgpackr 1.10.1)"},
                      "boot failed: module msgpack-lite is not available, took 1.2 s",
                      {"level": "INFO", "message": "GET /health 200 in 2.4ms"})
    assert rca.category == "dependency_mismatch"
    named = [f.value for f in rca.findings if f.kind == "version"]
    assert named == ["ledger 4.2.0", "msgpackr 1.10.1"]  # a time (`took 1.2 s`) is no version
    assert "msgpackr 1.10.1" in rca.root_cause
