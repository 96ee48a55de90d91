"""A healthy service's errors about its clients open nothing (issue 35, session 59; pipeline/incidents/clients.py): a
request answered 4xx at once (the client's input, card or token), a stranger on the internet failing a handshake or a
login, a client that went away, a start that raced its dependency and came good. And their near misses, which open,
with a real outage beside the noise that still opens one incident. The lines are written here in the manner of Spring,
FastAPI/uvicorn, Go's net/http, nginx, OpenSSH, Tomcat, socket.io and psycopg2, not copied from any bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.clients import answered_own_4xx, client_left, same_call_later, start_resolved, stranger
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 11, 3, 14, 20, 0, 120_000, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))


def _split(lines: list[LogEvent]) -> tuple[list[LogEvent], list[LogEvent]]:
    return [e for e in lines if e.level == "ERROR"], [e for e in lines if e.level != "ERROR"]


def _healed(found: set[int], lines: list[LogEvent]) -> set[str]:
    return {e.event_id for e in lines if id(e) in found}


def test_an_error_its_own_writer_answered_4xx_at_once_opens_nothing():
    lines = [
        _event(1, 0.0, "accounts", "acc-1", "c.e.a.web.SignupController : signup rejected for user_id=77120: email must"
               " be a well-formed email address"),
        _event(2, 0.01, "accounts", "acc-1", "c.e.a.web.RequestLog : POST /api/signup 400 4ms", level="INFO"),
        _event(3, 20.0, "payments", "pay-1", "charge failed for customer=cus_Q81x order=ord_5512: Your card was declined."),
        _event(4, 20.02, "payments", "pay-1", "POST /v1/charges 402 210ms", level="INFO"),
        # an API's error and the edge's 401 of its request (the error names no path: the answer that follows is its own)
        _event(5, 40.0, "api", "api-2", "c.a.api.security.JwtFilter : token rejected"),
        _event(6, 40.01, "nginx", "edge-1", '198.51.100.8 - - [03/Nov/2026:14:20:40 +0000] "GET /api/inbox HTTP/1.1" 401'
               ' 63 "-" "Mozilla/5.0"', level="INFO"),
    ]
    errors, others = _split(lines)
    assert _healed(answered_own_4xx(errors, others, 5.0), lines) == {"ev-1", "ev-3", "ev-5"}


@pytest.mark.parametrize("lines", [
    # a 5xx in the same second; a failure of this side answered 4xx (a timeout); an answer two seconds late
    [_event(1, 0.0, "accounts", "acc-1", "signup rejected for user_id=77120: email taken"),
     _event(2, 0.2, "accounts", "acc-1", "POST /api/signup 400 4ms", level="INFO"),
     _event(3, 0.3, "accounts", "acc-1", "POST /api/login 503 2ms", level="INFO")],
    [_event(1, 0.0, "api", "api-1", "token introspection timed out after 2000ms"),
     _event(2, 0.1, "api", "api-1", "GET /api/me 401 2003ms", level="INFO")],
    [_event(1, 0.0, "accounts", "acc-1", "signup rejected for user_id=77120: email taken"),
     _event(2, 2.5, "accounts", "acc-1", "POST /api/signup 400 4ms", level="INFO")],
    # one request's failure does not recur: every webhook's signature failing, answered 400 once, is an outage
    [_event(1, 0.0, "hooks", "hooks-1", "webhook signature verification failed: no signatures found matching the payload"),
     _event(2, 0.1, "hooks", "hooks-1", "POST /hooks/psp 400 3ms", level="INFO"),
     _event(3, 14.0, "hooks", "hooks-2", "webhook signature verification failed: no signatures found matching the payload"),
     _event(4, 29.0, "hooks", "hooks-1", "webhook signature verification failed: no signatures found matching the payload")],
])
def test_an_error_answered_4xx_opens_when_this_side_failed_or_it_recurs_unanswered(lines):
    errors, others = _split(lines)
    assert answered_own_4xx(errors, others, 5.0) == set()


def test_a_strangers_handshake_or_login_opens_nothing_and_a_private_clients_or_an_expired_certificate_opens():
    lines = [
        _event(1, 0.0, "gateway", "gw-1", "http: TLS handshake error from 185.220.101.34:51872: tls: client offered"
               " only unsupported versions: [302 301]"),
        _event(2, 9.0, "nginx", "edge-1", "*18240 SSL_do_handshake() failed (SSL: error:0A000102:SSL routines::unsupported"
               " protocol) while SSL handshaking, client: 167.94.138.120, server: 0.0.0.0:443"),
        _event(3, 12.0, "sshd", "bastion-2", "sshd[4410]: Failed password for invalid user oracle from 80.94.92.41 port"
               " 50122 ssh2"),
        # near misses: the same refusal met by a client inside the network (then the service refuses its own: an outage),
        # the server's certificate expired, a private client alone
        _event(4, 20.0, "gateway", "gw-2", "http: TLS handshake error from 45.155.205.233:40122: remote error: tls: bad"
               " certificate"),
        _event(5, 21.0, "gateway", "gw-2", "http: TLS handshake error from 10.0.4.11:41822: remote error: tls: bad"
               " certificate"),
        _event(6, 30.0, "gateway", "gw-1", "http: TLS handshake error from 92.118.39.7:40550: remote error: tls: expired"
               " certificate"),
        _event(7, 40.0, "sshd", "bastion-3", "sshd[4420]: Failed password for deploy from 10.0.0.15 port 50190 ssh2"),
    ]
    assert _healed(stranger(lines), lines) == {"ev-1", "ev-2", "ev-3"}
    # a guessed password beside a colleague's failing the same way on the same server: both the server's to look at
    lines.append(_event(8, 41.0, "sshd", "bastion-2", "sshd[4421]: Failed password for deploy from 10.0.0.16 port 50191 ssh2"))
    assert _healed(stranger(lines), lines) == {"ev-1", "ev-2"}


@pytest.mark.parametrize(("message", "left"), [
    ("Servlet.service() for servlet [dispatcherServlet] threw exception\norg.apache.catalina.connector."
     "ClientAbortException: java.io.IOException: Broken pipe", True),
    ("websocket closed abnormally code=1006 user_id=4412 session=ws-99812", True),
    ("socket.io client 9fK2xQ disconnected: ping timeout", True),
    # a server answering a client's socket (an ephemeral port) that went: Python's socketserver, a chat server's peer
    ("Exception occurred during processing of request from ('10.4.0.21', 51234)\nTraceback (most recent call last):\n"
     "BrokenPipeError: [Errno 32] Broken pipe", True),
    ("client 10.9.1.4:60122 disconnected: ping timeout", True),
    ('10.2.0.14 - - [03/Nov/2026:14:20:00 +0000] "GET /search?q=boots HTTP/1.1" 499 0 "-" "Mozilla/5.0"', True),
    ('10.2.0.14 - - [03/Nov/2026:14:20:00 +0000] "GET /search?q=boots HTTP/1.1" 502 0 "-" "Mozilla/5.0"', False),
    # near misses: a socket this side opened to another service and lost; a client's connection refused; a request
    # whose server lost its database; a broken pipe to a server's port
    ("Exception occurred during processing of request from ('10.4.0.21', 51234): psycopg2.OperationalError: server"
     " closed the connection unexpectedly", False),
    ("write to peer 10.4.0.9:9042 failed: broken pipe", False),
    ("websocket to ws://quotes:9001/stream closed code=1006", False),
    ("redis client connection refused: dial tcp 10.0.2.4:6379", False),
])
def test_a_client_that_went_away_opens_nothing(message, left):
    assert client_left(_event(1, 0.0, "chat", "chat-0", message)) is left


def test_a_start_that_raced_its_dependency_and_came_good_opens_nothing_and_one_that_fails_again_opens():
    lines = [
        _event(1, 0.0, "reports", "reports-0", "psycopg2.OperationalError: could not connect to server: Connection refused"),
        _event(2, 4.0, "reports", "reports-0", "Database is ready, migrations up to date", level="INFO"),
        _event(10, 0.0, "sessions", "sessions-0", "[ioredis] Unhandled error event: Error: connect ECONNREFUSED"
               " 10.96.8.3:6379"),
        _event(11, 1.5, "sessions", "sessions-0", "redis client ready", level="INFO"),
        _event(3, 0.0, "notifier", "notifier-1", "failed to connect to amqp://rabbitmq:5672: connection refused"),
        _event(4, 3.0, "notifier", "notifier-1", "connected to amqp://rabbitmq:5672", level="INFO"),
        _event(5, 50.0, "notifier", "notifier-1", "publish failed: channel closed"),
        # a start that came good too late, and one with no word that it came up
        _event(6, 0.0, "search", "search-0", "failed to connect to es:9200: connection refused"),
        _event(7, 45.0, "search", "search-0", "Started SearchApplication in 3.1 seconds", level="INFO"),
        _event(8, 0.0, "mailer", "mailer-0", "could not connect to smtp:25: connection refused"),
        _event(9, 2.0, "mailer", "mailer-0", "queue size 0", level="INFO"),
    ]
    errors, others = _split(lines)
    assert _healed(start_resolved(errors, others, 5.0), lines) == {"ev-1", "ev-10"}


def test_the_process_serving_a_stranger_writes_its_connections_other_lines_and_they_open_nothing():
    lines = [
        _event(1, 0.0, "sshd", "bastion-2", "reverse mapping checking getaddrinfo for dsl-77.example.net [80.94.92.41]"
               " failed - POSSIBLE BREAK-IN ATTEMPT!", pid=4410),
        _event(2, 1.0, "sshd", "bastion-2", "Invalid user oracle from 80.94.92.41", pid=4410),
        _event(3, 3.0, "sshd", "bastion-2", "Failed password for invalid user oracle from 80.94.92.41 port 50122 ssh2",
               pid=4410),
        _event(4, 4.0, "sshd", "bastion-2", "fatal: Read from socket failed: Connection reset by peer [preauth]", pid=4410),
        # another process, and the same process long after or naming a resource of this side's
        _event(5, 4.0, "sshd", "bastion-2", "error: Bind to port 22 on 0.0.0.0 failed: Address already in use.", pid=1),
        _event(6, 60.0, "sshd", "bastion-2", "fatal: Read from socket failed: Connection reset by peer", pid=4410),
        _event(7, 5.0, "sshd", "bastion-2", "error: fork: Cannot allocate memory: out of memory", pid=4410),
    ]
    assert _healed(stranger(lines), lines) == {"ev-1", "ev-2", "ev-3", "ev-4"}


def test_a_dependency_that_says_it_is_ready_after_its_clients_refusal_heals_it():
    lines = [
        _event(1, 0.0, "api", "api-0", "sqlalchemy.exc.OperationalError: connection to server at \"db\" (172.20.0.3),"
               " port 5432 failed: Connection refused"),
        _event(2, 2.0, "db", "db", "LOG:  database system is ready to accept connections", level="INFO"),
        # a dependency nobody named saying so heals nothing
        _event(3, 0.0, "worker", "worker-0", "failed to connect to cache-7:6379: connection refused"),
    ]
    errors, others = _split(lines)
    assert _healed(start_resolved(errors, others, 5.0), lines) == {"ev-1"}


def test_the_same_call_answered_2xx_later_heals_it_and_another_call_or_a_route_without_an_id_does_not():
    lines = [
        _event(1, 0.0, "checkout", "co-1", "fetch stock failed: GET http://inventory:8080/v1/stock/sku-4412 returned 503"),
        _event(2, 1.5, "checkout", "co-1", "GET http://inventory:8080/v1/stock/sku-4412 -> 200 in 42ms", level="INFO"),
        _event(3, 5.0, "checkout", "co-1", "fetch stock failed: GET http://inventory:8080/v1/stock/sku-9001 returned 503"),
        _event(4, 6.0, "checkout", "co-1", "GET http://inventory:8080/v1/stock/sku-1234 -> 200 in 40ms", level="INFO"),
        _event(5, 8.0, "checkout", "co-1", "GET /healthz failed: 503"),
        _event(6, 9.0, "checkout", "co-1", "GET /healthz 200 1ms", level="INFO"),
        _event(7, 9.5, "checkout", "co-1", "GET http://inventory:8080/v1/stock/sku-9001 -> 503 in 40ms", level="INFO"),
    ]
    errors, others = _split(lines)
    assert _healed(same_call_later(errors, others, 5.0), lines) == {"ev-1"}


def test_healthy_noise_opens_nothing_and_the_outage_beside_it_still_opens_one_incident(engine):
    noise = [
        _event(1, 0.0, "orders", "orders-2", "orders.api: bad quantity for user 5512: invalid literal for int() with"
               " base 10: 'two'"),
        _event(2, 0.01, "orders", "orders-2", 'INFO:     10.2.0.14:51234 - "POST /orders HTTP/1.1" 422 Unprocessable'
               " Entity", level="INFO"),
        _event(3, 3.0, "gateway", "gw-1", "http: TLS handshake error from 162.142.125.10:33816: tls: no cipher suite"
               " supported by both client and server"),
        _event(4, 6.0, "push", "push-1", "socket.io client 7hQ1 disconnected: ping timeout"),
        _event(5, 8.0, "notifier", "notifier-1", "failed to connect to amqp://rabbitmq:5672: connection refused"),
        _event(6, 10.0, "notifier", "notifier-1", "connected to amqp://rabbitmq:5672", level="INFO"),
    ]
    engine.incidents.store_batch(noise, cursor=None)
    assert incidents_by_first_seen(engine) == []
    # the database goes away: its callers' refusals and the 500 they answer are one incident, noise or not
    outage = [
        _event(11, 60.0, "billing", "billing-1", "failed to connect to postgres://db:5432/billing: dial tcp 10.0.3.9:5432:"
               " connect: connection refused"),
        _event(12, 60.2, "billing", "billing-1", "POST /invoices 500 3ms"),
        _event(13, 61.0, "gateway", "gw-1", "http: TLS handshake error from 71.6.199.23:41002: EOF"),
        _event(14, 62.0, "billing", "billing-1", "failed to connect to postgres://db:5432/billing: dial tcp 10.0.3.9:5432:"
               " connect: connection refused"),
        _event(15, 62.1, "billing", "billing-1", "POST /invoices 400 1ms", level="INFO"),
    ]
    engine.incidents.store_batch(outage, cursor=None)
    rows = incidents_by_first_seen(engine)
    assert [sorted(events_of(engine, r["incident_id"])) for r in rows] == [["ev-11", "ev-12", "ev-14"]]



@pytest.mark.parametrize("text", ["connection refused", "Could not connect to server", "couldn't connect", "failed to connect",
                                  "unable to connect", "cannot connect", "can't connect", "broker not ready",
                                  "not yet ready", "no such host", "Name or service not known", "ECONNREFUSED",
                                  "server selection timed out", "Is the server running on host",
                                  "Connection to node -1 (kafka-0/10.0.0.4:9092) could not be established",
                                  "upstream connect error or disconnect/reset before headers. reset reason: connection"
                                  " failure", "dial tcp 10.0.0.4:5432: connect: no route to host"])
def test_the_stems_that_spare_a_dependency_search_are_held_by_every_line_it_matches(text):
    from pipeline.incidents.clients import _reaching

    assert _reaching(text)


@pytest.mark.parametrize("message", ["org.apache.catalina.connector.ClientAbortException: java.io.IOException",
                                     "ws session 8f2a1c closed with code 1001", "close code 1006 for user 12",
                                     "websocket abnormal closure user=4", "socket going away session=9",
                                     "client 7 disconnected: ping timeout"])
def test_the_stems_that_spare_a_client_search_are_held_by_every_line_it_matches(message):
    assert client_left(_event(1, 0.0, "live", "live-0", message))


def test_a_line_saying_its_writer_is_up_heals_only_a_failure_to_reach_the_place_it_names():
    lines = [
        _event(1, 0.0, "mailer", "mail-0", "Could not send receipt for order 4411: Connection refused (mail-relay:25)"),
        _event(2, 3.0, "mailer", "mail-0", "Connected to smtp-backup:25", level="INFO"),
        _event(3, 0.0, "feed", "feed-0", "failed to connect to kafka-1:9092: connection refused"),
        _event(4, 3.0, "feed", "feed-0", "connected to kafka-1:9092", level="INFO"),
    ]
    errors, others = _split(lines)
    assert _healed(start_resolved(errors, others, 5.0), lines) == {"ev-3"}


def test_a_strangers_login_the_platform_refused_this_side_is_this_sides_failure():
    line = _event(1, 0.0, "klogind", "combo", "Authentication failed from 163.27.187.39 (163.27.187.39): Permission"
                  " denied in replay cache code")
    assert stranger([line]) == set()


@pytest.mark.parametrize("up", ["consumer group member is now healthy", "grpc server up and running",
                                "Serving securely on [::]:10250", "Started ApiApplication in 4.2 seconds"])
def test_a_start_says_it_came_up_in_the_words_servers_use(up):
    lines = [_event(1, 0.0, "api", "api-0", "Connection to node -1 (10.0.0.4:9092) could not be established."),
             _event(2, 5.0, "api", "api-0", up, level="INFO")]
    errors, others = _split(lines)
    assert _healed(start_resolved(errors, others, 5.0), lines) == {"ev-1"}
