"""A cause's word counts only when it is said of the cause's object (issue 36, the fifth outside bed):
a refusal of a login, a resolver's timeout, are not a refused connection nor an upstream's timeout,
so another category's signature in such a line names nothing at or above the code-fix threshold;
the same words said of the category's own object keep their confidence."""
from __future__ import annotations

import pytest

from tests.support import THRESHOLD, offline_rca


@pytest.mark.parametrize("line, named", [
    # what is refused is a login, not a connection
    ("java.net.ConnectException: Connection refused: login failed, invalid credentials", "connection_refused"),
    # what timed out is the resolver, not an upstream call
    ("dial udp 10.0.0.2:53: DNS resolver timeout: context deadline exceeded", "upstream_timeout"),
    # the resolver's query timed out; the signature's deadline is the same statement's
    ("resolver: query for api.partner.io timed out: context deadline exceeded", "upstream_timeout"),
    # what ran out of time is the wait for a lock, not a call
    ("failed to acquire advisory lock \"migrations\": context deadline exceeded", "upstream_timeout"),
    # ENOSPC from inotify_add_watch(2) is the watches' limit, said in a full disk's words
    ("inotify_add_watch(/var/log/app): No space left on device: raise fs.inotify.max_user_watches", "disk_full"),
])
def test_a_signature_said_of_another_categorys_object_stays_below_the_fix_line(offline_analyst, line, named):
    rca = offline_rca(offline_analyst, line, line)
    assert rca.confidence < THRESHOLD
    assert any("object" in note and "to decide" in note for note in rca.notes)


@pytest.mark.parametrize("line, category", [
    ("dial tcp 10.0.0.4:5432: connect: connection refused", "connection_refused"),
    ("OSError: [Errno 28] No space left on device: '/data/exports/eod.csv'", "disk_full"),
    # the pool's own connection timed out; the workers said after its timeout setting are not what did
    ("sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00",
     "db_pool_exhausted"),
    ("Get \"https://api.partner.io/v1\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
     "upstream_timeout"),
])
def test_the_same_words_said_of_the_categorys_own_object_stay_confident(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line, line)
    assert rca.category == category and rca.confidence >= THRESHOLD


@pytest.mark.parametrize("line, category", [
    ("java.sql.SQLException: ORA-01017: invalid username/password; logon denied", "upstream_auth_failure"),
    ("order failed: 429 urn:ietf:params:acme:error:rateLimited: too many new orders recently", "upstream_rate_limited"),
    ("BulkheadRejectedException: The bulkhead semaphore and queue are full and execution was rejected.",
     "resource_exhaustion"),
    ("IllegalStateException: Insufficient configured threads: required=264 < max=200 for QueuedThreadPool",
     "resource_exhaustion"),
])
def test_a_login_a_rate_limit_and_a_full_bulkhead_are_named_below_the_fix_line(offline_analyst, line, category):
    """Named by the ideas of their cause in any wording, never at the code-fix line."""
    rca = offline_rca(offline_analyst, line, line)
    assert rca.category == category and rca.confidence < THRESHOLD


PROBE_TIMEOUT = {"level": "WARN", "service": "kubelet",
                 "message": "Readiness probe failed: Get \"http://10.2.0.7:8080/ready\": context deadline exceeded "
                            "(Client.Timeout exceeded while awaiting headers)"}


def test_a_platforms_probe_of_the_service_timing_out_is_inconclusive_not_a_timeout_to_fix(offline_analyst):
    # the kubelet is the caller and the service the callee: it did not answer, no event says why
    rca = offline_rca(offline_analyst, PROBE_TIMEOUT, PROBE_TIMEOUT)
    assert rca.category == "unknown" and rca.root_cause.startswith("Inconclusive")
    assert any("probes of the service itself" in note for note in rca.notes)
    # the service's own call timing out is its upstream's timeout
    own = {**PROBE_TIMEOUT, "level": "ERROR", "service": "svc",
           "message": PROBE_TIMEOUT["message"].replace("Readiness probe failed", "inventory call failed")}
    rca = offline_rca(offline_analyst, own, own)
    assert rca.category == "upstream_timeout" and rca.confidence >= THRESHOLD
    # a probe that names why (the service's certificate expired) keeps that cause
    expired = {**PROBE_TIMEOUT, "message": "Readiness probe failed: Get \"https://10.2.0.7:8443/ready\": x509: "
               "certificate has expired or is not yet valid: current time 2026-01-05T08:00:00Z is after "
               "2026-01-01T00:00:00Z"}
    assert offline_rca(offline_analyst, expired, expired).category == "tls_certificate"
