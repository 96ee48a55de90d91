import re
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.correlation import _MASKS, TEMPLATE_CHARS, fingerprint, incident_id, template, title
from pipeline.state import LogEvent

OPENED = datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)


def event(message: str, *, service: str = "pos-api", exception: str | None = None) -> LogEvent:
    return LogEvent(event_id="e", time=OPENED, message=message, service=service, exception=exception)


def same(a: str, b: str, **kwargs) -> bool:
    return fingerprint(event(a, **kwargs)) == fingerprint(event(b, **kwargs))


# Pairs of real-world lines that differ only in variable parts: each pair must share a template.
SAME_PROBLEM = {
    "java hikari": (
        "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
        "HikariPool-2 - Connection is not available, request timed out after 30004ms.",
    ),
    "java hikari stats": (
        "HikariPool-1 - Connection is not available, request timed out after 30000ms "
        "(total=10, active=10, idle=0, waiting=42)",
        "HikariPool-1 - Connection is not available, request timed out after 30001ms "
        "(total=10, active=10, idle=0, waiting=7)",
    ),
    "java npe": (
        'Cannot invoke "com.acme.pos.Order.getTotal()" because "<local4>" is null',
        'Cannot invoke "com.acme.pos.Order.getTotal()" because "<local7>" is null',
    ),
    "java object hash": (
        "Failed to lock com.acme.pos.Cart@1a2b3c4d held by pool-1-thread-23",
        "Failed to lock com.acme.pos.Cart@7f8e9d0c held by pool-4-thread-7",
    ),
    "python keyerror": ("KeyError: 'customer_id'", "KeyError: 'x'"),
    "psycopg value": (
        'psycopg.errors.InvalidTextRepresentation: invalid input syntax for type uuid: "abc"',
        'psycopg.errors.InvalidTextRepresentation: invalid input syntax for type uuid: "12-x"',
    ),
    "psycopg unique": (
        'duplicate key value violates unique constraint "orders_pkey" DETAIL: Key (id)=(123) already exists.',
        'duplicate key value violates unique constraint "orders_pkey" DETAIL: Key (id)=(98765) already exists.',
    ),
    "python path": (
        "OSError: [Errno 28] No space left on device: /var/lib/pos/exports/export-2026-11-28.csv",
        "OSError: [Errno 28] No space left on device: /var/lib/pos/exports/export-2026-11-29.csv",
    ),
    "node econnrefused": (
        "Error: connect ECONNREFUSED 10.0.3.7:5432",
        "Error: connect ECONNREFUSED 10.0.4.12:5432",
    ),
    "node ipv6": ("Error: connect ECONNREFUSED ::1:5432", "Error: connect ECONNREFUSED [2001:db8::7]:5432"),
    "go dial timeout": (
        "request_id=01HF8Z3K9Q7X2M4N5P6R8S0T1V trace=4bf92f3577b34da6a3ce929d0e0e4736 "
        "dial tcp 10.1.2.3:443: i/o timeout after 1m30.5s",
        "request_id=01HF8Z4AB0C1D2E3F4G5H6J7K8 trace=00f067aa0ba902b7a3ce929d0e0e4736 "
        "dial tcp 10.1.9.77:443: i/o timeout after 45s",
    ),
    "go url": (
        'Get "https://payments.example.com/v1/charges?id=ch_1": context deadline exceeded',
        'Get "https://payments.example.com/v1/charges?id=ch_2": context deadline exceeded',
    ),
    "go unquoted url": (
        "Get https://payments.example.com/v1/charges?id=ch_1&expand=customer: i/o timeout",
        "Get https://payments.example.com/v1/charges?id=ch_77: i/o timeout",
    ),
    "uuid and email": (
        "order 550e8400-e29b-41d4-a716-446655440000 for ana@example.com rejected",
        "order 6ba7b810-9dad-11d1-80b4-00c04fd430c8 for bo.lee+pos@shop.example.org rejected",
    ),
    "postgres server log": (
        '2026-11-28 10:01:02.123 UTC [4242] ERROR:  duplicate key value violates unique constraint "orders_pkey"',
        '2026-11-29 23:59:59.999 UTC [17] ERROR:  duplicate key value violates unique constraint "orders_pkey"',
    ),
    "postgres deadlock detail": (
        "Process 4242 waits for ShareLock on transaction 99812; blocked by process 4243.",
        "Process 17 waits for ShareLock on transaction 100004; blocked by process 18.",
    ),
    "nginx upstream timeout": (
        '2026/11/28 10:01:02 [error] 1234#1234: *5678 upstream timed out (110: Connection timed out) '
        'while reading response header from upstream, client: 10.0.0.5, server: pos.example.com, '
        'request: "GET /api/orders?id=5 HTTP/1.1", upstream: "http://10.0.3.7:8080/api/orders?id=5", '
        'host: "pos.example.com"',
        '2026/11/28 11:42:13 [error] 1240#1240: *91 upstream timed out (110: Connection timed out) '
        'while reading response header from upstream, client: 192.168.1.77, server: pos.example.com, '
        'request: "GET /api/orders?id=8812 HTTP/1.1", upstream: "http://10.0.3.9:8080/api/orders?id=8812", '
        'host: "pos.example.com"',
    ),
    "nginx unquoted upstream": (
        "upstream prematurely closed connection, client: 10.0.0.5, upstream: http://10.0.3.7:8080/api/pay?cart=1",
        "upstream prematurely closed connection, client: 2001:db8::5, upstream: http://10.0.3.8:8080/api/pay?cart=2",
    ),
    "syslog prefix": (
        "Nov 28 10:01:02 web-1 kernel: Out of memory: Killed process 4242 (java) total-vm:8388608kB",
        "Dec  3 09:00:00 web-2 kernel: Out of memory: Killed process 17 (java) total-vm:4194304kB",
    ),
    "windows path and hex": (
        r"Access violation at 0x7ffd1234 reading C:\Program Files\Pos\data\cache-1.bin",
        r"Access violation at 0x0000beef reading C:\Users\ana\AppData\pos\cache-2.bin",
    ),
    "sizes and percentages": (
        "heap usage 1.5GB (93.2%) exceeds threshold",
        "heap usage 900MB (88%) exceeds threshold",
    ),
    "bearer token": (
        "rejected token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 for tenant 12",
        "rejected token eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ for tenant 9",
    ),
}

# Pairs that look alike but mean different things: each pair must NOT share a template.
DIFFERENT_PROBLEM = {
    "timeout vs refused": ("dial tcp 10.1.2.3:443: i/o timeout", "dial tcp 10.1.2.3:443: connection refused"),
    "route": ("GET /api/orders/12 returned 500", "GET /api/payments/12 returned 500"),
    "unique vs fk": (
        'duplicate key value violates unique constraint "orders_pkey"',
        'insert or update on table "order_items" violates foreign key constraint "order_items_order_id_fkey"',
    ),
    "hikari vs oom": (
        "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
        "java.lang.OutOfMemoryError: Java heap space",
    ),
    "nginx timeout vs closed": (
        "2026/11/28 10:01:02 [error] 1#1: *5 upstream timed out (110: Connection timed out), client: 10.0.0.5",
        "2026/11/28 10:01:02 [error] 1#1: *5 upstream prematurely closed connection, client: 10.0.0.5",
    ),
    "host name": ("getaddrinfo ENOTFOUND payments.internal", "getaddrinfo ENOTFOUND ledger.internal"),
    "apostrophe prose": ("can't reach payments: it's down", "can't reach ledger: it's down"),
}


@pytest.mark.parametrize("a, b", SAME_PROBLEM.values(), ids=SAME_PROBLEM.keys())
def test_lines_differing_only_in_variable_parts_share_a_fingerprint(a, b):
    assert template(a) == template(b)
    assert same(a, b)


@pytest.mark.parametrize("a, b", DIFFERENT_PROBLEM.values(), ids=DIFFERENT_PROBLEM.keys())
def test_lines_with_different_meaning_do_not(a, b):
    assert template(a) != template(b)
    assert not same(a, b)


@pytest.mark.parametrize("message, expected", [
    ("HikariPool-1 - Connection is not available, request timed out after 30000ms.",
     "HikariPool-<NUM> - Connection is not available, request timed out after <NUM>."),
    ("KeyError: 'customer_id'", "KeyError: <STR>"),
    ("Error: connect ECONNREFUSED 10.0.3.7:5432", "Error: connect ECONNREFUSED <IP>"),
    ("2026-11-28T10:01:02.5+01:00 job 42 failed", "<TS> job <NUM> failed"),
    ("Nov 28 10:01:02 host cron[77]: done", "<TS> host cron[<NUM>]: done"),
    ("2026/11/28 10:01:02 [error] 1#1: x", "<TS> [error] <NUM>#<NUM>: x"),
    ("GET https://api.example.com/v1/items?page=2&size=50 failed",
     "GET https://api.example.com/v1/items?<QUERY> failed"),
    ("read /srv/app/orders/service.py line 12", "read <PATH> line <NUM>"),
    ("id 550e8400-e29b-41d4-a716-446655440000 trace 4bf92f3577b34da6", "id <UUID> trace <HEX>"),
    ("  spaced \t out\n  message  ", "spaced out message"),
])
def test_template_masks_variable_parts_with_placeholders(message, expected):
    assert template(message) == expected


def test_service_and_exception_are_part_of_the_fingerprint():
    assert not same_event(event("boom", service="orders"), event("boom", service="payments"))
    assert not same_event(event("boom", exception="KeyError"), event("boom", exception="ValueError"))
    assert same_event(event("boom", exception="KeyError"), event("boom", exception="KeyError"))


def same_event(a: LogEvent, b: LogEvent) -> bool:
    return fingerprint(a) == fingerprint(b)


def test_only_the_first_line_of_a_message_counts():
    a = event("Traceback (most recent call last):\n  File \"/app/a.py\", line 3\nKeyError: 'x'")
    b = event("Traceback (most recent call last):\n  File \"/app/b.py\", line 9\nValueError: bad")
    assert fingerprint(a) == fingerprint(b)
    assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(a))


def test_incident_id_format_and_stability():
    fp = fingerprint(event("boom"))
    first = incident_id(fp, OPENED)
    assert re.fullmatch(r"INC-20261128-[0-9a-f]{6}", first)
    assert incident_id(fp, OPENED) == first
    assert incident_id(fp, OPENED.astimezone(timezone(timedelta(hours=-8)))) == first


def test_incident_reopened_the_same_day_gets_another_id():
    fp = fingerprint(event("boom"))
    assert incident_id(fp, OPENED) != incident_id(fp, OPENED + timedelta(minutes=45))


def test_different_fingerprints_get_different_ids():
    assert incident_id("a" * 16, OPENED) != incident_id("b" * 16, OPENED)


def test_incident_id_date_is_the_utc_date():
    late_evening_in_la = datetime(2026, 11, 27, 23, 30, tzinfo=timezone(timedelta(hours=-8)))
    assert incident_id("a" * 16, late_evening_in_la).startswith("INC-20261128-")


def test_title_names_the_exception_and_the_lines_own_words():
    e = event("Cannot invoke \"Order.getTotal()\" because \"<local4>\" is null",
              exception="java.lang.NullPointerException")
    assert title(e) == "NullPointerException: Cannot invoke \"Order.getTotal()\" because \"<local4>\" is null"


def test_title_does_not_repeat_an_exception_already_in_the_message():
    e = event("KeyError: 'customer_id'\nTraceback ...", exception="KeyError")
    assert title(e) == "KeyError: 'customer_id'"


@pytest.mark.parametrize("line, starts", [
    # nginx's error log: the level tag, then the process's pid#tid and *connection, then the message
    ("2026/11/28 10:00:01 [alert] 2211#0: *58 768 worker_connections are not enough", "768 worker_connections are"),
    ("2026/11/28 10:00:01 [error] 31#31: open() \"/x\" failed (2: No such file)", "open() \"/x\" failed"),
    ("10:00:01.231 4242 0x7f3a 'cart' lock wait timeout exceeded", "'cart' lock wait timeout"),
    ("Nov 28 10:00:01 disk quota exceeded on /var", "disk quota exceeded on /var"),
    # a leading level in brackets is the event's level, not the title's first word (walkthrough s49)
    ("[ERROR] plugin/kubernetes: Failed to watch", "plugin/kubernetes: Failed"),
    ("2026-11-28T10:00:01Z [warn] upstream is slow", "upstream is slow"),
    ("12345", "12345"),  # nothing but numbers: kept whole
    # a tag naming a value the header carries (an address, a pid) says nothing; a tag of words does
    ("[client 222.166.160.184] Directory index forbidden by rule: /var/www/html/", "Directory index forbidden"),
    ("2026-01-01 10:00:00 [pid 4411] [client 10.1.2.3:5555] client denied by server configuration",
     "client denied by server"),
    ("[mod_jk] child 12 died", "[mod_jk] child 12 died"),
    ("[client 10.1.2.3]", "[client 10.1.2.3]"),  # nothing but tags: kept whole
])
def test_a_title_starts_where_the_lines_words_do(line, starts):
    """The inbox shows a title's first ~45 characters: a lead timestamp, pid or counter says nothing."""
    assert title(event(line)).startswith(starts) and "<" + "NUM>" not in title(event(line))


@pytest.mark.parametrize("line, exception, expected", [
    # a JSON line the shipper cut off: the message key's words as far as they go, not `time":"2026…`
    ('{"_time":"2026-11-28T12:20:41.503Z","service":"checkout-api","host":"checkout-api-7f9c6b8d94-mzqzw",'
     '"level":"ERROR","logger":"com.example.ApiExceptionHandler","message":"POST /api/v1/checkout fai', None,
     "POST /api/v1/checkout fai…"),
    # a JSON record with no message key: its own pairs, without what the event already says
    ('{"_time":"2026-11-28T08:21:17.250Z","service":"loyalty-service","host":"loyalty-7f5-r7gnt","level":"ERROR",'
     '"exception":"AxiosError","path":"/v1/points/award","http_status":502}', "AxiosError",
     "AxiosError: path=/v1/points/award http_status=502"),
    ('{"ts": 1764300000, "msg": "db down", "attempt": 3}', None, "db down"),
])
def test_a_json_record_the_reader_could_not_take_apart_is_titled_by_its_words(line, exception, expected):
    """The inbox's title of a line kept whole as its message (cut off, or with no message key) reads as
    words, not quotes and braces."""
    assert title(event(line, exception=exception)) == expected


def test_title_is_short():
    e = event("upstream failed " + "with a very long explanation " * 20, exception="UpstreamError")
    assert len(title(e)) <= 120 and title(e).startswith("UpstreamError: upstream failed")


@pytest.mark.timeout(60)  # the guard: a backtracking mask on 256 KiB would run for far longer
@pytest.mark.parametrize("unit", ['\\"', "1.", "a1_-+/", "/a", "a:"])
def test_a_hostile_256k_line_is_templated_from_its_head_only(unit):
    line = unit * (256 * 1024 // len(unit))
    assert template(line) == template(line[:TEMPLATE_CHARS])


def template_reference(message: str) -> str:
    """`template` as it is specified: every mask of _MASKS in turn."""
    message = message[:TEMPLATE_CHARS]
    for pattern, placeholder in _MASKS:
        message = pattern.sub(placeholder, message)
    return message.strip()


def test_template_skipping_masks_that_cannot_match_is_the_reference_text():
    # `template` skips a mask when the text lacks what every match needs; it must stay the text of
    # running every mask (the fingerprints of incidents opened before the miner depend on it)

    messages = [m for pair in (*SAME_PROBLEM.values(), *DIFFERENT_PROBLEM.values()) for m in pair] + [
        "no digits, no quotes: plain words only", "id=7f9c2ba4e88f827d616045507605853e user@example.com",
        "[2001:db8::1]:8443 refused; fe80::1%eth0 too", "GET /a/b.json?x=1&y=2: 503", "0XDEADBEEF at 12:34:56.789",
        "2026/11/28 10:01:02 and Nov  3 09:00:00 and 2026-11-28T10:01:02.5+01:00", "\t tabs \n and  spaces ",
        "token abcdefghij0123456789abcdef== len 1.2.3 30000ms 5GB 93%", r"C:\Program Files\x.bin", "'q' \"w\"",
    ]
    for message in messages:
        template.cache_clear()
        assert template(message) == template_reference(message), message
