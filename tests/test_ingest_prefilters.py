"""The literal pre-tests that spare a regex search on the ingest path decide exactly what the search
alone decided (issue 37.3): each is compared with the check as it was before it, on lines written
here (not from the beds: other systems, other wording), near misses included."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.incidents import leading, recovery
from pipeline.incidents.leading import CAUSE, states_failure
from pipeline.incidents.line_names import HEAD_CHARS, first_line
from pipeline.incidents.saturation import saturated
from pipeline.state import LogEvent

T = datetime(2026, 12, 7, 9, 0, tzinfo=timezone.utc)


def _event(message: str, level: str | None = "INFO") -> LogEvent:
    return LogEvent(event_id="e1", time=T, message=message, service="ledger-sync", level=level)


def _states_failure_before(event: LogEvent) -> bool:
    """`states_failure` as its searches alone decide it, no stem sparing any line: `_WARN_CAUSE` on the line without
    a thing's name, or a quantity at its bound (`saturation.saturated`, which has its own pre-tests)."""
    head = first_line(event.message)[:400]
    stated = leading._WARN_CAUSE.search(leading._THING.sub(" ", head)) or saturated(head)
    return bool(stated) and leading.leader_rank(event) == CAUSE


STATING = [
    "ledger-sync could not connect to 10.4.2.9:5432",
    "Unable to connect to settlement store",
    "CANNOT CONNECT to tile cache",
    "replica feed: connection lost",
    "lost connection to quorum peer 3",
    "spool volume /var/spool/fax disk full",
    "worker 7: out of shared memory",
    "Rate exceeded for table invoices",
    "max open streams reached on gateway",
    "reached the max_streams limit",
    "inflight 400 (limit 400)",
    "queue depth 90 (threshold 50) for tiles",
    "DNS: could not resolve tiles.internal",
    "TLS handshake failed with 10.0.0.7",
    "x509: certificate has expired for mail relay",
    "session could not be established with vault",
    "permission denied writing /srv/tiles",
    "pool exhausted after 30s",
    "too many open files in tile renderer",
    "ldap is down since 08:12",
    "not enough replicas to serve writes",
    "Verbindung zu ſtore refused",  # a long s: not ASCII, so the wide stems alone decide
    "Zugriff verweigert: denied für Benutzer Jörg",
]
NEAR_MISSES = [
    "Connecting to ResourceManager at node-3:8032",
    "MemoryStore started with capacity 2.1 GB",
    "max heap set to 4g",
    "connected to broker tiles-1",
    "session established with vault",
    "cache: 30 whitelisted hosts",
    "limits loaded from /etc/tiles.conf",
    "threshold set to 50 (default)",
    "available workers: 8",
    "Verbindung zu Server hergestellt (max 5)",
    "reloaded certificate for api.tiles.example",
]


@pytest.mark.parametrize("message", STATING + NEAR_MISSES)
@pytest.mark.parametrize("level", ["INFO", None])
def test_states_failure_decides_as_the_search_alone(message, level):
    event = _event(message, level)
    assert states_failure(event) == _states_failure_before(event)


def test_the_narrow_stems_spare_the_near_misses_and_keep_the_failures():
    # each near miss that passes the wide stems (it used to be searched) passes none of the narrow ones
    for message in NEAR_MISSES[:-2]:
        lowered = message.lower()
        if any(stem in lowered for stem in leading._STATED_STEMS):
            assert not any(stem in lowered for stem in leading._FAILURE_STEMS), message
        assert not states_failure(_event(message)), message
    assert sum(states_failure(_event(m)) for m in STATING) >= len(STATING) // 2


def _says_back(head: str) -> bool:
    """The searches `recovery.recovered` runs on a line of an erring writer: whether it says it came back."""
    return bool(recovery._RECOVERED.search(head)
                or (recovery._LATER_ATTEMPT.search(head) and not recovery._STILL_TRYING.search(head)))


BACK = [
    "tile cache reconnected to 10.0.0.7",
    "Session RE-ESTABLISHED with vault",
    "feed restored after failover",
    "upload of part 7 done after 3 retries",
    "getQuote ok on attempt 2",
    "quote ok (try 3)",
    "attempt=4 ok",
    "mail relay back online",
    "Auftrag übermittelt after 2 attempts",  # not ASCII: searched as before
]
NOT_BACK = [
    "tile renderer started",
    "retrying in 5s",
    "cache warmed: 30 entries",
    "Backend pool sized to 8",
    "drained 4 sockets",
]


@pytest.mark.parametrize("head", BACK + NOT_BACK)
def test_recovered_stems_hold_wherever_its_searches_match(head):
    spared = head.isascii() and not recovery.holds_any(head.lower(), recovery._BACK_STEMS)
    assert not (spared and _says_back(head))
    assert _says_back(head) == (head in BACK)


NOTICES = [
    "PendingDeprecationWarning: the tiles API will change",
    "render() is deprecated and will be removed",
    "FutureWarning: Series.swapaxes",
    "cache misses for tile 4/5/6, loading from store",
    "missed the cache for invoice 88",
    "quote not found in cache",
    "nightly export still running, skipping this run",
    "skipped: previous compaction already in progress",
    "caché miss für Kachel 4",  # not ASCII: searched as before
]
NOT_NOTICES = ["tile render failed", "cached 30 tiles", "skipper thread started", "deprecation budget 5"]


@pytest.mark.parametrize("head", NOTICES + NOT_NOTICES)
def test_notice_words_hold_wherever_a_notice_search_matches(head):
    from pipeline.incidents import notices

    searched = bool(notices._DEPRECATION.search(head) or notices._CACHE_MISS.search(head)
                    or notices._SKIPPED_OVERLAP.search(head))
    spared = head.isascii() and not any(word in head.lower() for word in notices._NOTICE_WORDS)
    assert not (spared and searched)
    assert searched == (head in NOTICES[:-1])


def _status_before(event: LogEvent) -> int | None:
    """`recovery.status_of` searched without its word gates."""
    for key, value in event.fields.items():
        for k, v in (value.items() if isinstance(value, dict) else [(key, value)]):
            if recovery._STATUS_KEY.match(str(k)) and str(v).isdigit() and 100 <= int(v) < 600:
                return int(v)
    match = recovery._STATUS_TEXT.search(first_line(event.message)[:HEAD_CHARS])
    return int(next(g for g in match.groups() if g)) if match else None


STATUSES = [
    ("tile GET answered status=503", {}),
    ('"GET /tiles/4 HTTP/1.1" 200 512', {}),
    ("Completed 204 No Content in 3ms", {}),
    ("proxy returned 502 for /quote", {}),
    ("render failed", {"Status_Code": "500"}),
    ("render failed", {"http": {"status_code": "404"}}),
    ("render failed", {"stätus": "500"}),  # a name not ASCII: matched as before
    ("render failed", {"state": "500", "statusline": "200"}),
    ("sent 3 tiles", {}),
    ("tile cache warm", {"pid": "500"}),
]


@pytest.mark.parametrize("message,fields", STATUSES)
def test_status_of_reads_what_its_searches_alone_read(message, fields):
    event = LogEvent(event_id="e1", time=T, message=message, service="tiles", level="ERROR", fields=fields)
    assert recovery.status_of(event) == _status_before(event)


@pytest.mark.parametrize("head", ["order 8812 already been applied", "duplicate submission c0ffee ignored",
                                  "returning the existing order 8812", "ALREADY SEEN event 5", "order applied",
                                  "replayed 3 duplicates"])
def test_already_words_hold_wherever_already_matches(head):
    spared = head.isascii() and not recovery.holds_any(head.lower(), recovery._ALREADY_WORDS)
    assert not (spared and recovery._ALREADY.search(head))


def _scrubbed_before(item: LogEvent, secrets: list[str]):
    """`redaction.scrubbed` of an event as it was: its parts gathered, then the one look."""
    from pipeline import redaction

    texts = {name: value for name in ("message", "service", "host", "exception", "stack", "trace_id")
             if (value := getattr(item, name))}
    parts, flat = list(texts.values()), True
    for key, value in item.fields.items():
        parts.append(str(key))
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, (dict, list)):
            flat = False
    message = texts.get("message")
    if (flat and not (message and redaction._holds(message.lower(), redaction._NEEDLES))
            and all(map(redaction._clean, parts[1:] if message else parts))
            and not (secrets and any(s in "\n".join(parts) for s in secrets))):
        return item, 0
    return redaction._scrubbed_event(item, secrets)


SCRUB_CASES = [
    dict(message="tile 4/5/6 rendered"),
    dict(message="fetch https://ops:hunter22@tiles.example/v1 failed"),
    dict(message="tile rendered", host="token=abcd1234efgh"),
    dict(message="tile rendered", service="tiles-s3cr3tvalue"),
    dict(message="tile rendered", fields={"thread": "render-3", "pid": 42}),
    dict(message="tile rendered", fields={"api_key": "abcd1234efgh5678"}),
    dict(message="tile rendered", fields={"passwd": "x"}),
    dict(message="tile rendered", fields={"ctx": {"password": "hunter22"}}),
    dict(message="tile rendered", fields={"list": ["Bearer abcdefgh12345678"]}),
    dict(message="tile rendered", fields={"note": "Authorization: Basic dXNlcjpwYXNz"}),
    dict(message="tile rendered", stack="\tat Tiles.render\nCaused by: token=abcd1234efgh"),
    dict(message="tile rendered", exception="AuthError", trace_id="eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU"),
    dict(message="", fields={"x": "s3cr3tvalue"}),
    dict(message="tile rendered", fields={"empty": "", "n": None}),
    dict(message="split secret", host="s3cr3t", fields={"value": "value"}),  # a secret across two parts joined
]


@pytest.mark.parametrize("case", SCRUB_CASES)
@pytest.mark.parametrize("secrets", [[], ["s3cr3tvalue"], ["s3cr3t\nvalue"]])
def test_scrubbed_masks_what_it_masked_before(case, secrets):
    from pipeline.redaction import scrubbed

    event = LogEvent(event_id="e1", time=T, level="ERROR", **{"service": "tiles", **case})
    new, n_new = scrubbed(event, secrets)
    old, n_old = _scrubbed_before(event, secrets)
    assert n_new == n_old
    assert new.model_dump() == old.model_dump()
    assert (new is event) == (old is event)
