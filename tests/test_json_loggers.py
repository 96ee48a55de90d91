"""Any JSON or logfmt logger: each key's role told by its name and its value (issue 34.1).

The logs are other projects' test data (tests/data/loggers/README.md: source, commit, licence):
MongoDB 4.4's structured log and a `journalctl -o json` event, from elastic/beats (Apache 2.0)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pipeline.incidents.opening import opens_incident
from pipeline.ingest.formats import SourceParser
from pipeline.ingest.reading import LogFile

LOGGERS = Path(__file__).parent / "data" / "loggers"


def events_of(path: Path) -> list:
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


def test_mongodb_44_records_have_their_own_time_level_and_component():
    events = events_of(LOGGERS / "mongodb-ubuntu-4.4.4-json.log")
    assert len(events) == 10
    first = events[0]
    assert first.time == datetime(2021, 3, 22, 21, 21, 20, 349000, tzinfo=timezone.utc)  # {"$date": ...}
    assert "time_inferred" not in first.fields
    assert (first.level, first.service, first.message) == ("INFO", "STORAGE", "MongoDB starting")
    failed = events[7]  # "s":"I", "msg":"Authentication failed", written at +03:00
    assert failed.time == datetime(2022, 7, 5, 10, 13, 20, 632000, tzinfo=timezone.utc)
    assert (failed.level, failed.service, failed.message) == ("INFO", "ACCESS", "Authentication failed")
    assert "level_inferred" not in failed.fields
    assert not any(opens_incident(e) for e in events)  # an INFO line saying "failed" opens nothing


def test_a_journalctl_json_event_reads_message_priority_identifier_host_and_realtime():
    (event,) = events_of(LOGGERS / "journalctl-sample-event.jsonl")
    assert event.message == "Count: 0000000001"
    assert event.time == datetime.fromtimestamp(1724080855.230058, tz=timezone.utc)  # __REALTIME_TIMESTAMP, µs
    assert "time_inferred" not in event.fields
    assert event.level == "INFO"  # PRIORITY "6": syslog's info
    assert event.service == "TestRestartsJournalctlOnError"  # SYSLOG_IDENTIFIER
    assert event.host == "millennium-falcon"  # _HOSTNAME
    assert event.fields["__MONOTONIC_TIMESTAMP"] == "11765948774"  # a clock since boot is no time


def test_journald_priorities_are_syslog_severities():
    parser = SourceParser()
    levels = [parser.parse(f'{{"MESSAGE":"m","PRIORITY":"{p}","__REALTIME_TIMESTAMP":"1724080855230058"}}').level_name
              for p in range(8)]
    assert levels == ["FATAL", "FATAL", "FATAL", "ERROR", "WARN", "INFO", "INFO", "DEBUG"]


def test_a_key_is_taken_for_a_role_only_when_its_value_fits():
    parser = SourceParser()
    record = parser.parse('{"msg":"served","responseTime":26,"created_at":"2024-05-01T10:00:00Z",'
                          '"priority":"high","s":"maybe not a level"}')
    assert record.time == datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)  # not 26 s after 1970
    assert record.fields["responseTime"] == 26 and record.fields["priority"] == "high"
    assert record.level is None and record.fields["s"] == "maybe not a level"


def test_an_unknown_loggers_names_are_read_by_their_words():
    parser = SourceParser()
    record = parser.parse('{"eventTimestamp":1714557600123,"logSeverity":"warning","logMessage":"disk almost full",'
                          '"serviceName":"billing","hostName":"db-3","otelTraceID":"4bf92f3577b34da6a3ce929d0e0e4736"}')
    assert record.time == datetime(2024, 5, 1, 10, 0, 0, 123000, tzinfo=timezone.utc)  # epoch ms by magnitude
    assert (record.level_name, record.message, record.service, record.host) == ("WARN", "disk almost full",
                                                                                "billing", "db-3")
    assert record.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"


def test_a_bunyan_error_object_gives_the_exception_and_its_stack():
    parser = SourceParser()
    record = parser.parse('{"name":"api","hostname":"h","pid":1,"level":50,"msg":"request failed","time":'
                          '"2024-05-01T10:00:00.000Z","v":0,"err":{"message":"boom","name":"TypeError",'
                          '"stack":"TypeError: boom\\n    at handler (/app/index.js:10:5)"}}')
    assert (record.level_name, record.exception, record.message) == ("ERROR", "TypeError", "request failed")
    assert record.stack.startswith("TypeError: boom")


def test_logfmt_keys_are_read_the_same_way():
    parser = SourceParser()
    record = parser.parse('ts=2024-05-01T10:00:00Z severity_text=error msg="upstream closed" '
                          'hostname=edge-1 component=proxy')
    assert (record.level_name, record.host, record.service) == ("ERROR", "edge-1", "proxy")


def test_a_key_set_seen_once_is_remembered_for_the_source():
    parser = SourceParser()
    line = '{{"t":{{"$date":"2021-03-22T21:21:2{n}.349+00:00"}},"s":"W","c":"NETWORK","msg":"slow {n}"}}'
    parser.parse(line.format(n=0))
    remembered = dict(parser.options.key_roles)
    assert any(roles == {"level": ("s",), "service": ("c",)} for roles in remembered.values())  # each role's key path
    assert parser.parse(line.format(n=1)).level_name == "WARN"
    assert parser.options.key_roles == remembered  # the second record found its roles there
    assert SourceParser().options.key_roles == {}  # another source starts with none


def test_a_key_that_held_a_role_holds_it_again_in_a_new_key_set():
    # zap's short keys (go.uber.org/zap's zapcore encoder tests): a record with added context keys is
    # a new key set, and its one-word `M` keeps the message over `T`'s words (a time before 1990)
    parser = SourceParser()
    parser.parse('{"L":"info","T":0,"N":"main","C":"foo.go:42","M":"hello","S":"fake-stack"}')
    record = parser.parse('{"L":"info","T":"1970-01-01 00:00:00 +0000 UTC","N":"main","C":"foo.go:42",'
                          '"M":"hello","extra":"1s","S":"fake-stack"}')
    assert (record.message, record.level_name) == ("hello", "INFO")
    # what held a role is taken again only where its value can hold it: a request's JSON body is no message
    parser = SourceParser()
    parser.parse('{"ts":"2024-01-01T00:00:00Z","severity":"WARN","body":"throttled"}')
    assert parser.parse('{"ts":"2024-01-01T00:00:01Z","severity":"INFO","body":"{\\"a\\": 1}","path":"/x"}'
                        ).message != '{"a": 1}'
