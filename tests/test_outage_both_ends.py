"""One failure told twice, one incident (issue 35, session 52): a database's error naming the client application it
served (PostgreSQL's `application_name`) and that client's error; one process's two lines of one failure (syslog's
`klogind[19272]:` writing the failure, then what came of it in a line naming nothing). The lines are written here."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 11, 28, 13, 9, 17, tzinfo=timezone.utc)
DETAIL = ("Process 2294 waits for ShareLock on transaction 99815355; blocked by process 5709. Process 5709 waits for"
          " ShareLock on transaction 99815354; blocked by process 2294.")


def _event(n: int, seconds: float, service: str, host: str, message: str, **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level="ERROR", message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))


def _incident_of(engine) -> dict[str, str]:
    return {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}


def _database(n: int, seconds: float, client: str) -> LogEvent:
    return _event(n, seconds, "orders-db", "orders-db-0", "deadlock detected", sql_state_code="40P01",
                  application_name=client, detail=DETAIL)


def _client(n: int, seconds: float, service: str) -> LogEvent:
    return _event(n, seconds, service, f"{service}-7c9d5f6b8-q2xlm",
                  "POST /v1/orders/88418153/reservations failed: (psycopg2.errors.DeadlockDetected) deadlock detected\n"
                  f"DETAIL:  {DETAIL}\n(Background on this error at: https://sqlalche.me/e/20/e3q8)")


@pytest.mark.parametrize("database_first", [True, False])
def test_a_databases_error_naming_its_client_and_the_clients_error_are_one_incident_led_by_the_database(
        engine, database_first):
    lines = [_database(1, 0.0, "reservations"), _client(2, 0.02, "reservations")]
    engine.incidents.store_batch(lines if database_first else lines[::-1], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]
    assert incidents_by_first_seen(engine)[0]["leader"]["event_id"] == "ev-1"


def test_a_databases_error_naming_one_client_does_not_take_another_clients_error(engine):
    engine.incidents.store_batch([_database(1, 0.0, "reservations"), _client(2, 0.02, "billing")], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def _daemon(n: int, seconds: float, pid: str, message: str) -> LogEvent:
    return _event(n, seconds, "klogind", "combo", message, pid=pid, tag=f"klogind[{pid}]")


def test_one_processs_second_line_naming_nothing_is_its_failures_line(engine):
    engine.incidents.store_batch([
        _daemon(1, 0.0, "19272", "Authentication failed from 163.27.187.39 (163.27.187.39): Permission denied in replay"
                " cache code"),
        _daemon(2, 0.0, "19272", "Kerberos authentication failed"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


@pytest.mark.parametrize("pid, seconds", [("19288", 0.0), ("19272", 30.0)])
def test_another_process_or_a_later_line_is_not_that_failures_line(engine, pid, seconds):
    engine.incidents.store_batch([
        _daemon(1, 0.0, "19272", "Authentication failed from 163.27.187.39 (163.27.187.39): Permission denied in replay"
                " cache code"),
        _daemon(2, seconds, pid, "Kerberos authentication failed"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def _proxy(n: int, seconds: float, message: str) -> LogEvent:
    return _event(n, seconds, "nginx", "lb-1", message)


NO_LIVE = ("2025/03/13 02:10:06 [error] 29#29: *1035 no live upstreams while connecting to upstream, client: 203.0.113.14,"
           " server: shop.example, request: \"GET / HTTP/1.1\", upstream: \"http://shop_backend/\"")
ANSWERED = '198.51.100.22 - - [13/Mar/2025:02:10:10 +0000] "POST /checkout HTTP/1.1" 502 157 "-" "Mozilla/5.0" rt=0.000'


def test_a_writers_5xx_answer_joins_the_one_incident_its_own_error_is_in_seconds_later(engine):
    engine.incidents.store_batch([_proxy(1, 0.0, NO_LIVE), _proxy(2, 4.0, ANSWERED)], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_a_writers_5xx_answer_joins_neither_when_its_errors_are_in_two_incidents(engine):
    engine.incidents.store_batch([
        _proxy(1, 0.0, NO_LIVE),
        _proxy(2, 1.0, "2025/03/13 02:10:07 [crit] 29#29: *1036 open() \"/var/cache/nginx/a.tmp\" failed (28: No space"
               " left on device)"),
        _proxy(3, 5.0, ANSWERED),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]
    assert of["ev-3"] not in (of["ev-1"], of["ev-2"])


def test_a_processs_line_naming_a_peer_by_its_address_is_a_failure_of_its_own(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "sshd", "bastion", "Invalid user webmaster from 173.234.31.186", pid="24200"),
        _event(2, 1.0, "sshd", "bastion", "Failed password for invalid user webmaster from 173.234.31.186 port 38926 ssh2",
               pid="24200"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def _go(n: int, seconds: float, message: str, host: str = "indexer-1") -> LogEvent:
    return _event(n, seconds, "indexer", host, message)


REFUSED = "bulk index failed: dial tcp 10.0.4.2:9200: connect: connection refused; retrying in 1s (attempt 1/5)"
GAVE_UP = "giving up after 5 attempts: dial tcp 10.0.4.2:9200: connect: connection refused"


def test_a_writers_line_naming_nothing_just_after_its_last_error_is_that_failures_end(engine):
    # (session 53) the exit a retrying program writes in the second its last attempt failed, 15 s after its first
    engine.incidents.store_batch([_go(1, 0.0, REFUSED), _go(2, 15.0, GAVE_UP), _go(3, 15.2, "exit status 1")],
                                 cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"] == of["ev-3"]
    assert incidents_by_first_seen(engine)[0]["leader"]["event_id"] == "ev-1"


@pytest.mark.parametrize("seconds, host, message", [
    (20.0, "indexer-1", "exit status 1"),  # written later: no conclusion of that failure
    (15.2, "indexer-2", "exit status 1"),  # another writer's
    (15.2, "indexer-1", "flush failed: connection to cache:6379 timed out"),  # a failure of its own
])
def test_a_later_another_writers_or_a_failure_naming_line_is_not_that_failures_end(engine, seconds, host, message):
    engine.incidents.store_batch([_go(1, 0.0, REFUSED), _go(2, 15.0, GAVE_UP), _go(3, seconds, message, host)],
                                 cursor=None)
    of = _incident_of(engine)
    assert of["ev-3"] != of["ev-1"]


def test_a_writers_line_naming_nothing_joins_neither_when_its_errors_just_before_are_in_two_incidents(engine):
    other = "TLS handshake with api.partner.example:443 failed: x509: certificate has expired or is not yet valid"
    engine.incidents.store_batch([_go(1, 0.0, GAVE_UP), _go(2, 0.5, other), _go(3, 10.0, GAVE_UP), _go(4, 10.5, other),
                                  _go(5, 11.0, "exit status 1")], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]
    assert of["ev-5"] not in (of["ev-1"], of["ev-2"])


def _relay(n: int, seconds: float, client: str, address: str) -> LogEvent:
    return _event(n, seconds, "postfix", "mx-relay-1", f"NOQUEUE: reject: MAIL from {client}[{address}]: 452 4.3.1"
                  f" Insufficient system storage; proto=ESMTP helo=<{client.split('.')[0]}>")


HELPDESK = ('production.ERROR: Expected response code "250" but got code "452", with message "452 4.3.1 Insufficient'
            ' system storage".')


@pytest.mark.parametrize("relay_first", [True, False])
def test_a_relays_later_refusal_naming_a_client_ties_that_clients_error_led_by_the_relay(engine, relay_first):
    # (session 53) Postfix names the client it refused as `name[address]`, each refusal another client: the pattern's
    # later error names the client whose own error of it is read before or after
    relay = [_relay(1, 0.0, "notifier-2.internal", "10.3.1.22"), _relay(3, 6.0, "helpdesk-1.internal", "10.3.4.8")]
    client = [_event(2, 4.0, "helpdesk", "helpdesk-1", HELPDESK)]
    engine.incidents.store_batch(relay + client if relay_first else client + relay, cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"] == of["ev-3"]
    assert incidents_by_first_seen(engine)[0]["leader"]["service"] == "postfix"


@pytest.mark.parametrize("named", ["notifier-2.internal", "unknown"])
def test_a_relays_refusals_naming_other_clients_or_none_do_not_take_a_clients_error(engine, named):
    engine.incidents.store_batch([_relay(1, 0.0, named, "10.3.1.22"), _relay(3, 6.0, named, "10.3.1.23"),
                                  _event(2, 4.0, "helpdesk", "helpdesk-1", HELPDESK)], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-3"] != of["ev-2"]



def _solr(n: int, seconds: float, logger: str, message: str, exception: str) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=logger, host=None, level="ERROR",
                    message=message, source="solr.log", position=f"solr.log@{n}", exception=exception, fields={})


ZK = "Cannot talk to ZooKeeper - Updates are disabled."


@pytest.mark.parametrize("second, raised, one", [
    ("org.apache.solr.common.SolrException", "org.apache.solr.common.SolrException", True),
    ("org.apache.solr.common.SolrException", "org.apache.lucene.index.CorruptIndexException", False),
])
def test_a_class_read_as_the_service_is_the_files_application_for_its_own_ties(engine, second, raised, one):
    # (session 53) a layout's column holding a logger's class (`o.a.s.h.RequestHandlerBase`) is no service: two classes of
    # one file raising one exception class are one application's failure; another exception class is not tied by it
    engine.incidents.store_batch([
        _solr(1, 0.0, "o.a.s.h.RequestHandlerBase", f"org.apache.solr.common.SolrException: {ZK}", second),
        _solr(2, 0.01, "o.a.s.s.HttpSolrCall", f"null:{raised}: index segments_9 is corrupt", raised),
    ], cursor=None)
    of = _incident_of(engine)
    assert (of["ev-1"] == of["ev-2"]) is one


def _django(n: int, seconds: float, message: str) -> LogEvent:
    return _event(n, seconds, "account-svc", "account-svc-0", message)


NOTIFY = ("send email verification failed: HTTPConnectionPool(host='notifications', port=80): Max retries exceeded with"
          " url: /v1/send (Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection"
          " refused'))")


@pytest.mark.parametrize("answer", ["Internal Server Error: /api/signup", "Bad Gateway: /api/signup"])
def test_a_writers_5xx_said_by_its_reason_phrase_joins_the_incident_its_error_is_in(engine, answer):
    # (session 53) Django logs a request it answered 500 as `Internal Server Error: /path`, no number: a 5xx all the same
    engine.incidents.store_batch([_django(1, 0.0, NOTIFY), _django(2, 21.0, answer)], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]
    assert incidents_by_first_seen(engine)[0]["leader"]["event_id"] == "ev-1"
