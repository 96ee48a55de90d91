"""A confident name only for the deepest cause shown (issue 36, the sixth outside bed): a server's own
worker limit reached before its callers' timeouts leaves the timeout undecided, a peer that crashed
on a signal leaves its connection reset undecided; and the ideas name a version constraint not met
a record failing its validation and a secret key missing, each below the code-fix line. Lines are this file's own."""
from __future__ import annotations

import pytest

from tests.support import THRESHOLD, offline_rca


def _rca(offline_analyst, *lines):
    """Each line `LEVEL text`, one second apart."""
    return offline_rca(offline_analyst, *lines, leveled=True)


TIMEOUT = ("ERROR 2026/01/05 08:00:09 [error] 7#7: *310 upstream timed out (110: Connection timed out) while "
           "reading response header from upstream, upstream: \"http://10.4.0.9:8080/report\"")
RESET = ("ERROR 2026/01/05 08:00:09 [error] 7#7: *311 recv() failed (104: Connection reset by peer) while "
         "reading response header from upstream, upstream: \"http://10.4.0.9:8080/report\"")


def test_a_servers_worker_limit_reached_before_its_callers_timeout_leaves_the_timeout_undecided(offline_analyst):
    alone = _rca(offline_analyst, TIMEOUT, TIMEOUT)
    assert alone.category == "upstream_timeout" and alone.confidence >= THRESHOLD
    rca = _rca(offline_analyst, "WARN AH00161: server reached MaxRequestWorkers setting, consider raising it",
               TIMEOUT, TIMEOUT)
    assert rca.confidence < THRESHOLD
    assert any("resource_exhaustion" in note and "symptom" in note for note in rca.notes)


def test_a_connection_reset_by_a_peer_that_crashed_on_a_signal_is_undecided(offline_analyst):
    alone = _rca(offline_analyst, RESET, RESET)
    assert alone.category == "connection_refused" and alone.confidence >= THRESHOLD
    rca = _rca(offline_analyst, "WARN worker 4120 terminated by signal 6 (SIGABRT), core dumped", RESET, RESET)
    assert rca.confidence < THRESHOLD
    assert any("crashed" in note for note in rca.notes)
    # a kill is no crash: a reset after SIGTERM keeps its name
    assert _rca(offline_analyst, "WARN worker 4120 terminated by signal 15 (SIGTERM)", RESET, RESET).confidence >= THRESHOLD


@pytest.mark.parametrize("line, category", [
    ("ERROR resolve: package left-pad 2.1.0 in the lockfile does not satisfy the version constraint ^3.0", "dependency_mismatch"),
    ("ERROR InvoiceForm validation failed: field `dueDate` is required", "data_integrity"),
    ("ERROR peer certificate validation failed for ldap.corp.example", "tls_certificate"),
    ("ERROR boot aborted: MissingSigningKeyError raised by TokenService.start", "config_missing"),
])
def test_the_ideas_name_a_version_constraint_a_records_validation_and_a_missing_key_below_the_fix_line(offline_analyst, line, category):
    rca = _rca(offline_analyst, line, line)
    assert rca.category == category and rca.confidence < THRESHOLD


GATEWAY_TIMEOUT = {"service": "gateway", "message": "upstream request timeout calling orders-api: context deadline "
                                                    "exceeded (Client.Timeout exceeded while awaiting headers)"}
REDIS_REFUSED = {"service": "cart", "message": "dial tcp 10.0.0.5:6379: connect: connection refused"}
POOL_TIMEOUT = "HikariPool-1 - Connection is not available, request timed out after 30000ms."
HEAP = {"service": "orders-api", "message": "java.lang.OutOfMemoryError: Java heap space"}
OOM_KILLED = {"level": "WARN", "service": "kubelet",
              "message": "Container redis in pod redis-0 was OOMKilled (exit code 137)"}
NULL_KEY = {"message": "request failed", "stack": "java.lang.NullPointerException: Cannot invoke \"String.length()\" "
            "because \"apiKey\" is null\n\tat com.acme.Client.sign(Client.java:40)"}
DEADLOCK = "MySQLTransactionRollbackException: Deadlock found when trying to get lock; try restarting transaction"


@pytest.mark.parametrize("raws, cause", [
    # the callee's heap logged after its caller's first timeout: the clocks of two services order nothing
    ([GATEWAY_TIMEOUT, GATEWAY_TIMEOUT, HEAP, GATEWAY_TIMEOUT], "out_of_memory"),
    # the cache's container OOM-killed amid its clients' refusals
    ([REDIS_REFUSED, OOM_KILLED, REDIS_REFUSED, REDIS_REFUSED], "out_of_memory"),
    # a setting left unset, read as null
    ([NULL_KEY, "Required environment variable PARTNER_API_KEY is not set"], "config_missing"),
    # transactions stuck on a lock hold the pool's connections
    ([POOL_TIMEOUT, DEADLOCK, POOL_TIMEOUT, POOL_TIMEOUT], "db_deadlock"),
    # a pool that cannot open connections has none to give: the database refusing them, then the queue's drops
    ([*["Postgrex.Protocol (#PID<0.412.0>) failed to connect: ** (DBConnection.ConnectionError) tcp connect "
        "(10.4.0.7:5432): connection refused - :econnrefused"] * 2,
      *["** (DBConnection.ConnectionError) connection not available and request was dropped from queue after "
        "2210ms."] * 4], "connection_refused"),
])
def test_a_callers_failure_beside_the_state_that_produces_it_names_that_state_below_the_fix_line(offline_analyst,
                                                                                                  raws, cause):
    rca = offline_rca(offline_analyst, *raws)
    assert rca.category == cause and rca.confidence < THRESHOLD
    # the notes say which is taken for the cause and why (what its callers see, or its lines first)
    assert any("what callers see" in note or "came first" in note for note in rca.notes)


def test_a_pool_drained_in_the_timing_out_service_itself_leaves_the_direction_undecided(offline_analyst):
    # its calls to a slow dependency hold its connections, or its drained pool slows what it serves: either way
    own_timeout = {**GATEWAY_TIMEOUT, "service": "api"}
    rca = offline_rca(offline_analyst, own_timeout, {"service": "api", "message": POOL_TIMEOUT}, own_timeout)
    assert rca.category in ("upstream_timeout", "db_pool_exhausted") and rca.confidence < THRESHOLD
    assert any("same service" in note for note in rca.notes)
    # said by the service it calls, the drained pool is the cause
    rca = offline_rca(offline_analyst, GATEWAY_TIMEOUT, {"service": "orders-api", "message": POOL_TIMEOUT},
                      GATEWAY_TIMEOUT)
    assert rca.category == "db_pool_exhausted" and rca.confidence < THRESHOLD


def test_a_callers_timeout_alone_keeps_its_name(offline_analyst):
    rca = offline_rca(offline_analyst, GATEWAY_TIMEOUT, GATEWAY_TIMEOUT)
    assert rca.category == "upstream_timeout" and rca.confidence >= THRESHOLD


def test_an_earlier_failure_that_cannot_produce_the_later_one_is_not_taken_for_its_cause(offline_analyst):
    # a client's own HTTP pool full, then the API's 429s: a full pool does not rate-limit anyone
    pool_full = {"level": "WARN", "message": "Connection pool is full, discarding connection: api.partner.io. "
                                             "Connection pool size: 10"}
    limited = ("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
               "https://api.partner.io/v2/items")
    rca = offline_rca(offline_analyst, pool_full, pool_full, limited, limited)
    assert rca.category == "upstream_rate_limited"
    # a client's own setting left unset, then its connections refused: the server is not listening
    unset = {"level": "WARN", "message": "environment variable REDIS_PASSWORD is not set; connecting without auth"}
    refused = "redis.exceptions.ConnectionError: Error 111 connecting to redis:6379. Connection refused."
    assert offline_rca(offline_analyst, unset, refused, refused).category == "connection_refused"


HIKARI = "ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms."
READ_TIMEOUT = "ERROR java.net.SocketTimeoutException: Read timed out calling http://orders-api:8080/api/orders"


def test_the_chain_of_causes_is_followed_to_its_first_link(offline_analyst):
    # a name that does not resolve, then the pool with no connection to give, then its callers' timeouts:
    # the pool is the timeouts' cause and the name the pool's, so the name is the cause (session 46: the
    # walk stopped at the pool)
    rca = _rca(offline_analyst, "ERROR java.net.UnknownHostException: pg-main.internal", HIKARI, TIMEOUT,
               READ_TIMEOUT, READ_TIMEOUT, TIMEOUT)
    assert rca.category == "dns_resolution" and rca.confidence < THRESHOLD


def test_a_state_said_before_the_failure_it_produces_leaves_that_failure_undecided(offline_analyst):
    alone = _rca(offline_analyst, HIKARI, HIKARI)
    assert alone.category == "db_pool_exhausted" and alone.confidence >= THRESHOLD
    # the name's one line, weaker than the pool's two, came first: the pool may be its symptom
    rca = _rca(offline_analyst, "ERROR Temporary failure in name resolution for pg-main.internal", HIKARI, HIKARI)
    assert rca.confidence < THRESHOLD
    assert any("dns_resolution" in note and "symptom" in note for note in rca.notes)


VERSION_SKEW = {"service": "ledgerd", "message": "ledgerd: on-disk format version 3 is incompatible with this release "
                                                 "(version 4); run the upgrade tool"}


def test_the_refused_callees_own_failure_said_first_is_the_refusals_cause(offline_analyst):
    refused = {"service": "checkout", "message": "POST http://ledgerd.payments.internal:9400/v1/post failed: connect "
                                                 "ECONNREFUSED 10.4.0.9:9400"}
    rca = offline_rca(offline_analyst, VERSION_SKEW, refused)
    assert rca.category == "dependency_mismatch" and rca.confidence < THRESHOLD
    assert any("connection_refused" in note and "symptom" in note for note in rca.notes)
    # a refusal of another host: the earlier failure is not what refused it
    other = {**refused, "message": refused["message"].replace("ledgerd.", "fxrates.")}
    assert offline_rca(offline_analyst, VERSION_SKEW, other).category == "connection_refused"


def test_the_timed_out_callees_worker_limit_said_first_is_the_timeouts_cause_and_quoted(offline_analyst):
    full = {"service": "uwsgi-reports", "level": "WARN",
            "message": "listen queue full: reached the max workers limit (16), requests wait"}
    timeout = {"service": "envoy", "message": "upstream request timeout: cluster=uwsgi-reports path=/reports/q3"}
    rca = offline_rca(offline_analyst, full, timeout)
    assert rca.category == "resource_exhaustion" and rca.confidence < THRESHOLD
    assert "reached the max workers limit (16)" in rca.root_cause  # the warning that says the cause is quoted
    # a timeout of another cluster: its own failure
    other = {**timeout, "message": timeout["message"].replace("uwsgi-reports", "billing")}
    assert offline_rca(offline_analyst, full, other).category == "upstream_timeout"
