"""Levels written in ways a reader met in other projects' parser tests (issue 34): a level word that
opens a text line wins over the words after it; OpenTelemetry's SeverityNumber (1-24) and its stepped
severity texts (`INFO2`); a JSON record with a level number between a scheme's steps and a level word
under another key; a remembered level key that is empty on one record; a component colon-joined to
its level; a line that opens with a dated time no layout reads; a TAI64N label without its `@`. The lines are written here in
the manner of those loggers' documented formats (no third-party text)."""
from __future__ import annotations

from pipeline.ingest.levels import leading_level, normalize_level
from tests.support import read_lines as _write



def test_a_level_word_that_opens_a_line_is_its_level_not_the_words_after_it(tmp_path):
    events = _write(tmp_path, [
        "INFO request completed after a retry on error: timeout",
        "WARN: connection error, retrying",
        "Information: service started",
        "dbg cache miss",
        "WARNING:root:disk at 91%",
    ])
    assert [e.level for e in events] == ["INFO", "WARN", "INFO", "DEBUG", "WARN"]
    assert all("level_inferred" not in e.fields for e in events)


def test_prose_that_opens_with_a_level_like_word_is_not_read_as_a_level():
    assert leading_level("Alert sent to the on-call engineer") is None
    assert leading_level("Notice that the cache was cold") is None
    assert leading_level("info request failed, retrying") == "INFO"
    assert leading_level("Warning disk almost full") == "WARN"
    assert leading_level("Log rotated") is None
    assert leading_level("Alert: disk full") == "FATAL"


def test_opentelemetry_severity_numbers_and_stepped_texts(tmp_path):
    events = _write(tmp_path, [
        '{"severityNumber": 1, "body": "a"}', '{"severityNumber": 13, "body": "b"}',
        '{"severityNumber": "17", "body": "c"}', '{"severityNumber": 21, "body": "d"}',
        '{"severityText": "INFO4", "body": "e"}', '{"severityText": "ERROR2", "body": "f"}',
    ])
    assert [e.level for e in events] == ["DEBUG", "WARN", "ERROR", "FATAL", "INFO", "ERROR"]
    assert normalize_level(9, scheme="otel") == "INFO" and normalize_level(25, scheme="otel") is None


def test_a_level_word_wins_over_a_number_between_the_steps_and_serilogs_own_level_over_a_property(tmp_path):
    events = _write(tmp_path, [
        '{"level": 35, "severity": "warn", "msg": "custom pino level"}',
        '{"level": 30, "severity": "error", "msg": "a step of pino wins"}',
        '{"@l": "Error", "level": 30, "msg": "serilog event with a level property"}',
    ])
    assert [e.level for e in events] == ["WARN", "INFO", "ERROR"]


def test_a_remembered_level_key_empty_on_one_record_gives_way_to_another(tmp_path):
    events = _write(tmp_path, [
        '{"severityText": "Notice", "severityNumber": 9, "body": "a"}',
        '{"severityText": "", "severityNumber": 17, "body": "b"}',
    ])
    assert [e.level for e in events] == ["INFO", "ERROR"]


def test_a_component_colon_joined_to_its_level_gives_the_level_and_the_component(tmp_path):
    events = _write(tmp_path, [
        "Bridge:info  2025-12-22 12:00:00: started",
        "Bridge:warn  2025-12-22 12:00:01: queue full",
        "Bridge:error  2025-12-22 12:00:02: failure",
    ])
    assert [(e.level, e.service) for e in events] == [("INFO", "Bridge"), ("WARN", "Bridge"), ("ERROR", "Bridge")]


def test_a_line_opening_with_a_dated_time_no_layout_reads_is_a_record_of_its_own(tmp_path):
    events = _write(tmp_path, [
        "2020-01-01 18:11:00,000 WARN first",
        "2020-01-01 18:11:01,000 WARN second",
        "20200101T181102 WARN third, in basic ISO 8601",
    ])
    assert len(events) == 3 and "third" in events[2].message and "third" not in events[1].message


def test_a_tai64n_label_without_its_at_sign_is_read_as_the_same_time(tmp_path):
    events = _write(tmp_path, ["@4000000050d506482dbdf024 first", "4000000050d506482dbdf024 second"])
    assert [e.message for e in events] == ["first", "second"]
    assert events[0].time == events[1].time and "time_inferred" not in events[1].fields


def test_a_bracketed_level_in_any_case_that_opens_a_line_is_its_level(tmp_path):
    events = _write(tmp_path, ["[info] connection error, retried", "<warn> queue failing over", "[main] plain"])
    assert [e.level for e in events][:2] == ["INFO", "WARN"]
    assert leading_level("[main] failed") is None and leading_level("<html> body") is None


def test_a_year_less_leap_day_is_read_in_the_latest_leap_year(tmp_path):
    events = _write(tmp_path, ["Feb 28 23:59:59 host app: before", "Feb 29 01:15:43 host app: leap day"])
    assert (events[1].time.month, events[1].time.day) == (2, 29) and "time_inferred" not in events[1].fields


def test_an_opentelemetry_records_body_is_its_message_but_a_requests_json_body_is_not(tmp_path):
    events = _write(tmp_path, [
        '{"timeUnixNano": "1700000000000000000", "severityText": "WARN", "body": "throttled"}',
        '{"time": "2024-01-01T00:00:01Z", "method": "POST", "body": "{\\"a\\": 1}", "path": "/y"}',
    ])
    assert (events[0].level, events[0].message) == ("WARN", "throttled")
    assert events[1].message != '{"a": 1}'
