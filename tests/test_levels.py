"""Level names and numbers from every common logger map to the five levels."""
from __future__ import annotations

import pytest

from pipeline.ingest.levels import _KEYWORDS, JVM_FLAG, Level, at_least, infer_level, normalize_level


@pytest.mark.parametrize("raw, level", [
    ("WARNING", "WARN"), ("warn", "WARN"), ("W", "WARN"), ("SEVERE", "ERROR"), ("err", "ERROR"),
    ("E", "ERROR"), ("CRITICAL", "FATAL"), ("panic", "FATAL"), ("F", "FATAL"), ("emerg", "FATAL"),
    ("notice", "INFO"), ("Information", "INFO"), ("I", "INFO"), ("trace", "DEBUG"),
    ("verbose", "DEBUG"), ("FINE", "DEBUG"), ("finer", "DEBUG"), ("D", "DEBUG"), ("V", "DEBUG"),
    ("A", "FATAL"), ("[ERROR]", "ERROR"), ("<warn>", "WARN"), (" Info ", "INFO"),
])
def test_level_names_map_to_the_five_levels(raw, level):
    assert normalize_level(raw) == level


@pytest.mark.parametrize("number, level", [
    (0, "FATAL"), (1, "FATAL"), (2, "FATAL"), (3, "ERROR"), (4, "WARN"), (5, "INFO"), (6, "INFO"),
    (7, "DEBUG"), ("3", "ERROR"),
])
def test_small_numbers_are_syslog_severities(number, level):
    assert normalize_level(number) == level


@pytest.mark.parametrize("number, level", [
    (10, "DEBUG"), (20, "DEBUG"), (30, "INFO"), (35, "INFO"), (40, "WARN"), (50, "ERROR"),
    (60, "FATAL"), (50.0, "ERROR"), ("50", "ERROR"),
])
def test_bunyan_and_pino_numbers(number, level):
    assert normalize_level(number) == level


def test_a_known_scheme_overrides_the_guess_by_size():
    assert normalize_level(3, scheme="syslog") == "ERROR"
    assert normalize_level(5, scheme="bunyan") is None


@pytest.mark.parametrize("raw", ["", "  ", "banana", 8, 9, 250, -1, True, None, ["ERROR"]])
def test_unknown_levels_are_none_not_a_guess(raw):
    assert normalize_level(raw) is None


@pytest.mark.parametrize("line, level", [
    ("Kernel panic - not syncing", "FATAL"),
    ("java.lang.NullPointerException at Foo", "ERROR"),
    ("Connection refused by 10.0.0.1", "ERROR"),
    ("request failed after 3 retries", "ERROR"),
    ("disk usage warning: 91%", "WARN"),
    ("session opened for user root", None),
])
def test_levels_are_inferred_from_keywords_for_lines_without_one(line, level):
    assert infer_level(line) == level


def test_inference_needs_whole_words():
    assert infer_level("terrorist errorless") is None


def test_at_least_orders_levels():
    assert at_least("FATAL", "ERROR") and at_least("ERROR", "ERROR")
    assert not at_least("WARN", "ERROR") and not at_least(None, "DEBUG")


BANNER = "Picked up JAVA_TOOL_OPTIONS: -XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"


def test_a_jvm_options_banner_is_no_error_and_names_no_exception():
    from pipeline.ingest.formats import exception_in

    assert infer_level(BANNER) is None
    assert exception_in(BANNER) is None
    assert infer_level(BANNER + " then OutOfMemoryError: Java heap space") == "ERROR"  # a real one still counts
    assert exception_in("java.lang.OutOfMemoryError: Java heap space -XX:+HeapDumpOnOutOfMemoryError") \
        == "java.lang.OutOfMemoryError"


def test_the_demo_days_jvm_banner_opens_no_incident(engine, tmp_path):
    """samples/pos-day.jsonl's plain-text JVM line, between JSON lines, as the demo source reads it:
    it opened an incident whose finding was "class ExitOnOutOfMemoryError"."""
    from pipeline.unattended.file_ingest import ingest_path

    log = tmp_path / "banner.jsonl"
    ok = '{"_time":"2026-11-28T03:01:03.200Z","service":"checkout-api","level":"INFO","message":"started"}'
    log.write_text(f"{ok}\n{BANNER}\n{ok}\n")
    ingest_path(engine, log)
    assert engine.records.incidents() == []


def infer_level_reference(text: str, *, default: Level | None = None) -> Level | None:
    """`infer_level` as it is specified: every keyword pattern searched."""
    head = JVM_FLAG.sub(" ", text[:2_000])
    for level, pattern in _KEYWORDS:
        if pattern.search(head):
            return level
    return default


def test_keyword_guess_skipping_patterns_without_their_words_is_the_reference_guess():
    # infer_level skips a level's pattern when an ASCII text holds none of its words; the guess
    # must be the one of searching every pattern (non-ASCII texts are searched as before)
    texts = ["all good", "Connection refused", "request timed out", "TimeOut waiting", "KeyError: 'x'",
             "kernel panic - not syncing", "oom-killer invoked", "Retrying in 5s", "DEPRECATED api", "trace id 5",
             "could not open", "can't connect", "-XX:+ExitOnOutOfMemoryError set", "segmentation fault (core dumped)",
             "ſevere trouble", "\u212aernel panic", "caf\u00e9 failed", "FailedPrecondition", "errorless terror", "",
             # the time words spelled out (issue 37.3): a lifetime or a response time is no timeout
             "tunnel lifetime 00:12, 400 bytes sent", "response time 20ms", "Time Out reading socket", "probe TIMEDOUT",
             "session Timed Out", "timeouts: 0", "overtime paid", "time  out (two spaces)"]
    for text in texts:
        assert infer_level(text) == infer_level_reference(text), text
        assert infer_level(text, default="INFO") == infer_level_reference(text, default="INFO"), text
