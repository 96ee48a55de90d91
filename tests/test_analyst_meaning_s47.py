"""Causes in other libraries' words (issue 36, session 47's blind bed): the meaning of a line, not a
doc's wording, names a category below the code-fix line; a trace's frames are code that ran, not what
failed; a client that went away, or a server that serves no such service, names no cause; and a
refusal said before the timeouts it leads to is their cause."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    ("worker aborted: terminate called after throwing an instance of 'std::bad_alloc'", "out_of_memory"),
    ("task 12 killed: exceeding memory limits (4.1 GB of 4 GB used)", "out_of_memory"),
    ("segment write failed: not enough space to reserve 4.00 MiB", "disk_full"),
    ("PutObject refused: request was throttled and denied, retry later", "upstream_rate_limited"),
    ("backend answered: request rate exceeded for this account", "upstream_rate_limited"),
    ("catalog watch failed: response code 403 for the ACL token presented", "upstream_auth_failure"),
    ("feed item skipped: Expected BEGIN_OBJECT but was STRING at path $.items[2]", "serialization_error"),
    ("startup failed: the setting `mail_relay` isn't defined", "config_missing"),
    ("cannot serve HTTPS: no server certificate was specified for the listener", "config_missing"),
    ("RpcException: Status(StatusCode=DeadlineExceeded) calling /stock.v1.Inventory/Reserve", "upstream_timeout"),
])
def test_a_cause_in_other_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("line", [
    "NameError: name 'settings' is not defined",  # a script's variable, not a setting
    "ReferenceError: env is not defined",
    "keepalive skipped: could not set socket option SO_KEEPALIVE",  # an option set by code, not a setting missing
])
def test_code_that_names_an_undefined_variable_is_no_missing_setting(line):
    assert "config_missing" not in ideas.categories_worded(analyst_events(line))


def test_a_lock_wait_past_its_time_is_a_databases_when_the_incident_names_one(offline_analyst):
    lock = "ERROR 40ZZ9: a lock could not be obtained within the time requested"
    rca = offline_rca(offline_analyst, {"level": "INFO", "message": "embedded database opened at /srv/pos/data"}, lock)
    assert rca.category == "db_deadlock" and rca.confidence < THRESHOLD
    # a job scheduler's lock, no database named: not a deadlock of transactions
    assert "db_deadlock" not in ideas.categories_worded(analyst_events("job lock could not be obtained in time"))


def test_a_pools_acquire_timeout_is_a_connection_pools_when_the_incident_names_one(offline_analyst):
    acquire = "POST /pay failed: PoolAcquireTimeoutException: acquire has been pending for more than the timeout"
    rca = offline_rca(offline_analyst, {"level": "INFO", "message": "jdbc pool 'orders' started, maxSize=10"}, acquire)
    assert rca.category == "db_pool_exhausted" and rca.confidence < THRESHOLD
    # a worker pool's acquire is an executor's
    assert "db_pool_exhausted" not in ideas.categories_worded(analyst_events(
        {"level": "INFO", "message": "jdbc pool 'orders' started"},
        "worker pool acquire pending past its timeout: all worker threads busy"))


def test_a_traces_frames_are_not_read_for_its_cause():
    line = ("ERROR 40ZZ9: a record could not be read\n\tat org.example.locks.ConcurrentLockSet.lock(Unknown Source)\n"
            "\tat org.example.store.OptimisticUpdate.apply(Unknown Source)")
    assert "concurrency_conflict" not in ideas.categories_worded(analyst_events(line))


def test_a_client_that_went_away_names_no_cause(offline_analyst):
    rca = offline_rca(offline_analyst, {"level": "INFO", "message": "GET /files/big.tar 200 (client went away)"},
                      "proxy: aborting with incomplete response: write tcp 10.1.0.4:443->203.0.113.7:51234: "
                      "write: broken pipe")
    assert rca.category == "unknown"


def test_a_server_that_serves_no_such_service_is_not_called_a_version_skew(offline_analyst):
    unknown_service = offline_rca(offline_analyst, "rpc error: code = Unimplemented desc = unknown service shop.v3.Cart")
    assert unknown_service.category != "dependency_mismatch" or unknown_service.confidence < THRESHOLD
    unknown_method = offline_rca(offline_analyst, "rpc error: code = Unimplemented desc = unknown method Checkout "
                                                  "for service shop.v3.Cart")
    assert unknown_method.category == "dependency_mismatch"


def test_a_refusal_said_before_the_timeouts_is_their_cause(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "WARN", "message": "connect attempt 3 failed: Connection refused: kv-2.internal/10.9.0.12:11210"},
                      "GetRequest failed: request timed out after 2500ms, retried 9 times (endpoint not available)")
    assert rca.category == "connection_refused"


def test_a_connection_pool_counted_at_its_maximum_is_the_cause_of_the_timeouts_beside_it(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "db connection pool 'main' configured: min 2, max 30"},
                      "GET /api/carts/12 failed: connection request timed out after 10s",
                      {"level": "INFO", "message": "health: pool in use 30/30, waiting 14"})
    assert rca.category == "db_pool_exhausted" and rca.confidence < THRESHOLD


@pytest.mark.parametrize("lines, category", [
    (["enqueue failed: put rejected", {"level": "INFO", "message": "queue INVOICES depth 2000 maxdepth 2000"}],
     "queue_backlog"),
    (["request stalled", {"level": "INFO", "message": "worker pool busy 64/64"}], "resource_exhaustion"),
    # a resource named inside a setting's compound word, in no library's spelling in particular
    (["enqueue failed", {"level": "INFO", "message": "stats: CURRDEPTH(900) MAXDEPTH(900)"}], "queue_backlog"),
    (["request stalled", {"level": "INFO", "message": "stats: workerthreads in use 32/32"}], "resource_exhaustion"),
    # a pool nobody calls a database's, and a size configured equal to its minimum, say nothing
    (["request stalled", {"level": "INFO", "message": "object pool in use 8/8"}], None),
    (["request stalled", {"level": "INFO", "message": "jdbc pool started: minSize=10 maxSize=10"}], None),
])
def test_a_resource_counted_at_its_maximum_is_its_categorys(lines, category):
    from pipeline.analyst.capacity import categories_at_capacity
    found = categories_at_capacity(analyst_events(*lines))
    assert list(found) == ([category] if category else [])
    # a healthy log's metrics line alone opens nothing and names nothing
    assert categories_at_capacity(analyst_events(*[{**x, "level": "INFO"} if isinstance(x, dict) else
                                                   {"level": "INFO", "message": x} for x in lines])) == {}


def test_the_bound_a_resource_is_counted_at_is_the_setting_named(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "datasource 'orders' ready: minIdle=2, maxPoolSize=25"},
                      "GET /orders/7 gave up after 5s",
                      {"level": "INFO", "message": "datasource metrics: active 25/25, waiting 40"})
    assert "maxPoolSize=25" in {f.value for f in rca.findings if f.kind == "setting"}


@pytest.mark.parametrize("line, category", [
    ("sync aborted: the bearer token expired at 10:02:11Z", "upstream_auth_failure"),
    ("SELECT failed: no such table: ledger_entries", "db_schema_mismatch"),
    ("bootstrap failed: environment variable QUEUE_URL is not set", "config_missing"),
    ("translate call failed: Quota exceeded for quota metric 'Requests per minute'", "upstream_rate_limited"),
])
def test_more_plain_wordings_name_their_cause(line, category):
    assert list(ideas.categories_worded(analyst_events(line))) == [category]


@pytest.mark.parametrize("line, not_named", [
    ("render failed: SyntaxError: Invalid or unexpected token", "upstream_auth_failure"),
    ("upload failed: Disk quota exceeded", "upstream_rate_limited"),
    ("send failed: cannot publish, the topic's backlog quota exceeded", "upstream_rate_limited"),
])
def test_a_parsers_token_and_a_disks_quota_are_not_a_dependencys_refusal(line, not_named):
    assert not_named not in ideas.categories_worded(analyst_events(line))


def test_the_peer_a_context_line_names_by_its_url_is_named_with_its_scheme(offline_analyst):
    rca = offline_rca(offline_analyst, {"level": "INFO", "message": "connecting amqps://mq-1.internal:5671 as svc-orders"},
                      "login failed: authentication rejected for user svc-orders")
    assert "amqps://mq-1.internal:5671" in {f.value for f in rca.findings if f.kind == "address"}
