"""Level names and numbers from every common logger map to the five levels."""
from __future__ import annotations

import pytest

from pipeline.ingest.levels import at_least, infer_level, normalize_level


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
