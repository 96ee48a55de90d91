"""What the whole log says beside the incident's errors (issue 36, end to end, session 53): the warning the
grouping found leading an incident (another writer's: a client library's logger, not the failing service's) is
read as the service's own warnings are; a producer's outbound backlog follows its broker refused when the refusal
is said first; and a status answered (a 403's exception class) whose line says another cause in its words (a rate
limit exceeded) is that cause's, not the status's."""
from __future__ import annotations

import json

import pytest

from pipeline.analyst import ideas
from pipeline.analyst.callee_lines import LEADS
from pipeline.engine.nodes import leading_warning
from pipeline.errors import IncidentNotFound
from pipeline.knowledge.retrieval import find_similar
from pipeline.state import IncidentState
from tests.support import THRESHOLD, analyst_events, offline_rca

# apache/kafka clients/src/main/java/org/apache/kafka/clients/NetworkClient.java (WARN, the client's network
# thread's logger) and ProducerBatch's expiry, logged by the sending service's listener
_BROKER = ("[Producer clientId=orders-producer] Connection to node 1 (kafka-0.kafka-headless.prod.svc/10.244.2.9:9092) "
           "could not be established. Node may not be available.")
_EXPIRED = ("Exception thrown when sending a message with key='4711' to topic orders.placed:\n"
            "org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s) for orders.placed-0:120001 ms has "
            "passed since batch creation")


def _expiring(analyst, window: list[dict], *, leads: bool = False):
    errors = [{"service": "o.s.k.support.LoggingProducerListener", "time": f"2026-01-05T08:02:0{n}Z", "level": "ERROR",
               "message": _EXPIRED} for n in (4, 6)]
    events = analyst_events(*errors, *window)
    if leads:  # as retrieval marks the incident's leading warning
        events = [*events[:2], *(e.model_copy(update={"fields": {LEADS: True}}) for e in events[2:])]
    state = IncidentState(incident_id="INC-t", service=errors[0]["service"], evidence=events[:2], log_window=events)
    return analyst.rca(state.model_copy(update={"similar_docs": find_similar(analyst.kb, state.evidence)}))


def _broker_warning() -> dict:
    return {"service": "org.apache.kafka.clients.NetworkClient", "time": "2026-01-05T08:00:04Z", "level": "WARN",
            "message": _BROKER}


def test_the_incidents_leading_warning_of_another_writer_is_read_and_its_refusal_said_first_is_the_cause(
        offline_analyst):
    # alone, the expiring batches named a backlog confidently (0.62 on the outage bed)
    alone = _expiring(offline_analyst, [])
    assert alone.category == "queue_backlog" and alone.confidence >= THRESHOLD
    led = _expiring(offline_analyst, [_broker_warning()], leads=True)
    assert led.category == "connection_refused" and led.confidence < THRESHOLD, (led.category, led.notes)
    # another writer's warning the grouping did not find leading the incident is not the service's own: not read
    other = _expiring(offline_analyst, [_broker_warning()])
    assert (other.category, other.confidence) == (alone.category, alone.confidence)


class _Records:
    def __init__(self, leader):
        self.leader = leader

    def incident_fields(self, incident_id, *columns):
        if self.leader is IncidentNotFound:
            raise IncidentNotFound(incident_id)
        # as the records store gives it: the stored JSON decoded (Records.incident_fields)
        return {"leader": json.loads(self.leader) if isinstance(self.leader, str) else self.leader}


def test_retrieval_marks_the_incidents_leading_warning_only():
    warned = {"event_id": "e1", "pattern": "warn:abc", "service": "NetworkClient", "time": "2026-01-05T08:00:04+00:00",
              "message": _BROKER, "position": "log@10", "rank": 0}
    lead = leading_warning(_Records(json.dumps(warned)), "INC-1")
    assert lead is not None and lead.level == "WARN" and lead.fields == {LEADS: True}
    assert (lead.event_id, lead.service, lead.message) == ("e1", "NetworkClient", _BROKER)
    # an error leading (it is in the evidence), no leader, or no such incident: nothing added
    assert leading_warning(_Records(json.dumps({**warned, "pattern": "abc"})), "INC-1") is None
    assert leading_warning(_Records(None), "INC-1") is None
    assert leading_warning(_Records(IncidentNotFound), "INC-1") is None


# Spring's WebClientResponseException ("403 Forbidden from GET <uri>") with GitHub's own body for a rate limit
_FORBIDDEN = ("GET https://api.github.com/repos/acme/payments/pulls failed\norg.springframework.web.reactive.function."
              "client.WebClientResponseException$Forbidden: 403 Forbidden from GET https://api.github.com/repos/acme/"
              "payments/pulls, body={\"message\":\"API rate limit exceeded for installation ID 31804455.\"}")


def test_a_forbidden_answer_saying_a_rate_limit_is_the_rate_limit_not_confidently(offline_analyst):
    rca = offline_rca(offline_analyst, _FORBIDDEN, _FORBIDDEN.replace("payments", "web"))
    assert rca.category == "upstream_rate_limited" and rca.confidence < THRESHOLD, (rca.category, rca.notes)
    assert any("how the failure was answered" in note for note in rca.notes)
    # the same answer saying its credentials are bad stays the login's
    bad = offline_rca(offline_analyst, _FORBIDDEN.replace("API rate limit exceeded for installation ID 31804455.",
                                                          "Bad credentials"))
    assert bad.category == "upstream_auth_failure"


# HikariCP's acquire timeout with its pool's counts (HikariPool.java logPoolState's `(total=, active=, idle=,
# waiting=)`), and PostgreSQL's own login failure for the pool's user
_POOL = "HikariPool-1 - Connection is not available, request timed out after 30000ms (total={n}, active={n}, idle=0, waiting=8)"
_LOGIN = 'FATAL:  password authentication failed for user "v-ledger-q8Zx1"'


def test_a_pool_that_never_opened_a_connection_is_what_keeps_it_from_opening_them(offline_analyst):
    def rca(n):
        return offline_rca(offline_analyst, {"service": "postgres", "message": _LOGIN},
                           *({"service": "ledger", "message": _POOL.format(n=n)} for _ in range(3)),
                           {"service": "postgres", "message": _LOGIN})
    # no connection open at all: the login failing is why, though the pool's lines outnumber it
    empty = rca(0)
    assert empty.category == "upstream_auth_failure" and empty.confidence < THRESHOLD, (empty.category, empty.notes)
    # a pool full of connections in use was drained by demand: still the pool's (capped: a login failed before it)
    assert rca(10).category == "db_pool_exhausted"


@pytest.mark.parametrize("line, named", [
    # a data file the service was given to load, missing (postfix's dict_open, ClamAV's cli_loaddbdir)
    ("postfix/smtpd[20114]: fatal: open database /etc/postfix/sasl_passwd.db: No such file or directory", True),
    ("LibClamAV Error: cli_loaddbdir: No supported database files found in /var/lib/clamav", True),
    # a table missing is the schema's, a database file locked is no file missing, a page's file is no database's
    ("sqlite3.OperationalError: no such table: users (database file app.db)", False),
    ("database file is locked: not written", False),
    ('open() "/var/www/html/favicon.ico" failed (2: No such file or directory)', False),
])
def test_a_data_file_the_service_loads_said_missing_is_its_configuration(line, named):
    assert ("config_missing" in ideas.categories_worded(analyst_events(line))) is named


def test_a_servers_handling_of_a_request_timing_out_is_a_timeout():
    # kube-apiserver's filters (staging/src/k8s.io/apiserver/pkg/server/filters: `timeout or abort while handling`)
    line = 'E1014 12:00:00.701882 1 wrap.go:54] timeout or abort while handling: method=LIST URI="/api/v1/secrets?limit=500"'
    assert "upstream_timeout" in ideas.categories_worded(analyst_events(line))
    assert "upstream_timeout" not in ideas.categories_worded(analyst_events("error while handling: payload invalid"))


@pytest.mark.parametrize("line, named", [
    # AWS's service error (its `AccessDeniedException` with the service's own message), as ECS passes it on
    ("unable to retrieve secret from asm: AccessDeniedException: Access to KMS is not allowed", True),
    ("access to the requested bucket is not permitted for this role", True),
    # a file's permission, an HTTP method, a browser origin: no dependency refusing credentials
    ("open /var/data/app.db: access to the file is not allowed", False),
    ("405: access with method DELETE not allowed", False),
])
def test_access_to_a_dependency_said_not_allowed_is_its_credentials(line, named):
    assert ("upstream_auth_failure" in ideas.categories_worded(analyst_events(line))) is named


def test_a_server_saying_its_client_reset_the_connection_names_no_cause(offline_analyst):
    # PostgreSQL's pqcomm.c (`could not receive data from client: %m`): the client it served went away (a rollout)
    gone = offline_rca(offline_analyst, "LOG:  could not receive data from client: Connection reset by peer",
                       "LOG:  unexpected EOF on client connection with an open transaction")
    assert gone.category == "unknown", (gone.category, gone.notes)
    # a client's own call reset by the server it called is a failure on its side
    lost = offline_rca(offline_analyst, "psycopg2.OperationalError: could not receive data from server: Connection "
                                        "reset by peer")
    assert lost.category == "connection_refused"


@pytest.mark.parametrize("line, named", [
    ("PUT /v1/carts/77 failed: 412 Precondition Failed (etag mismatch)", True),
    # gRPC's FAILED_PRECONDITION (a status for any state the call finds otherwise: Temporal's no poller)
    ("query getStatus failed: io.grpc.StatusRuntimeException: FAILED_PRECONDITION: no poller seen for task queue "
     "recently, worker may be down", False),
])
def test_a_grpc_failed_precondition_is_no_lost_race(line, named):
    assert ("concurrency_conflict" in ideas.categories_worded(analyst_events(line))) is named
