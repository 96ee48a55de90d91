"""Zones as loggers write them after a time: an offset with seconds and their fraction (Python's
`%z` since 3.7, loguru's `ZZ`), a name before or after its offset, the well-known abbreviations that
name one offset, and the ambiguous ones that are not guessed (CONTRACT §1); and a clock dashed
after its date (`2018-06-09 01-02-03`)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.ingest.timestamps import leading_time, offset_zone, parse_time, read_any_time
from tests.support import read_lines, utc

UTC = timezone.utc


@pytest.mark.parametrize("text, expected", [
    ("2018-06-09 01:02:03 +01:49:03", datetime(2018, 6, 8, 23, 13, tzinfo=UTC)),
    ("2018-06-09 01:02:03 +014903", datetime(2018, 6, 8, 23, 13, tzinfo=UTC)),
    ("2018-06-09 01:02:03 +020030.099000", datetime(2018, 6, 8, 23, 1, 32, 901000, tzinfo=UTC)),
    ("2018-06-09T01:02:03-00:00:30", datetime(2018, 6, 9, 1, 2, 33, tzinfo=UTC)),
])
def test_an_offset_with_seconds_and_a_fraction_is_read_to_the_microsecond(text, expected):
    assert read_any_time(text) == expected
    assert parse_time(text) == expected  # a JSON value spelt so reads the same


@pytest.mark.parametrize("text, hours", [
    ("2018-06-09 01:02:03 EST -0500", -5), ("2018-06-09 01:02:03 ABC +01:00", 1),  # the offset says it
    ("2023-07-01 14:00:00 +0200 CEST", 2), ("2023-01-01 13:00:00 CET", 1), ("2023-01-01 13:00:00 NZDT", 13),
    ("2023-01-01 13:00:00 ACST", 9.5), ("2023-01-01 13:00:00 HKT", 8),
])
def test_a_zone_name_before_or_after_its_offset_and_the_unambiguous_names_alone(text, hours):
    wall = datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S")
    assert read_any_time(text) == (wall - timedelta(hours=hours)).replace(tzinfo=UTC)


@pytest.mark.parametrize("name", ["IST", "CST", "BST", "AST"])
def test_an_ambiguous_zone_name_is_not_guessed_the_sources_zone_reads_it(name):
    paris = timezone(timedelta(hours=1))
    assert offset_zone(name) is None
    assert read_any_time(f"2023-01-01 13:00:00 {name}", tz=paris) == datetime(2023, 1, 1, 12, tzinfo=UTC)
    # the offset written beside it is read
    assert read_any_time(f"2023-01-01 13:00:00 {name} +0530") == datetime(2023, 1, 1, 7, 30, tzinfo=UTC)


def test_a_level_word_before_a_number_is_no_zone_name():
    # the stamp opening a line is 10:00 UTC, not 10:00 at -12:34 with its level lost
    assert leading_time("2024-01-01 10:00:00 INFO -1234 retries left") == datetime(2024, 1, 1, 10, tzinfo=UTC)
    assert leading_time("2024-01-01 10:00:00 EST -0500 retries left") == datetime(2024, 1, 1, 15, tzinfo=UTC)


def test_an_offset_of_sixty_minutes_or_seconds_is_no_offset():
    with pytest.raises(ValueError):
        offset_zone("+0160")
    with pytest.raises(ValueError):
        offset_zone("+010060")


def test_a_dashed_clock_after_the_date_is_read_and_a_dashed_date_alone_is_not_a_clock():
    assert read_any_time("2018-06-09 01-02-03") == datetime(2018, 6, 9, 1, 2, 3, tzinfo=UTC)
    assert read_any_time("2018-06-09T01-02-03.250 EST -0500") == datetime(2018, 6, 9, 6, 2, 3, 250000, tzinfo=UTC)
    assert read_any_time("2018-06-09 01-02-2030") is None


def test_a_file_of_dashed_clocks_and_zones_gets_each_records_own_time(tmp_path):
    lines = ["2018-06-09 01-02-03 EST -0500 INFO worker started on port 8080",
             "2018-06-09 01-02-04 EST -0500 ERROR worker failed: disk full",
             "2018-06-09 09-02-05 +020030 INFO worker restarted after 3 attempts"]
    events = read_lines(tmp_path, lines)
    assert [e.time for e in events] == [utc(2018, 6, 9, 6, 2, 3), utc(2018, 6, 9, 6, 2, 4),
                                        utc(2018, 6, 9, 7, 1, 35)]
    assert all(e.message.startswith("worker") for e in events) and events[1].level == "ERROR"
