"""Session 55's reading mechanisms, each with its near misses: a slashed date's order learnt from the
source's sample (pipeline/ingest/date_order.py), a relay's year-less header giving way to the body's
own time when the body writes the header's second finer in digits alone or its date in the order the
header's month and day say, and epochs of whole digits read exactly."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.ingest.date_order import decide, in_order, sample_order
from pipeline.ingest.formats import parse_lines
from pipeline.ingest.layout import learn
from pipeline.ingest.timestamps import TimeRules, agreeing_opening_time, finer_opening_time, from_epoch, parse_time, read_written_time

UTC = timezone.utc
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
DAY_FIRST_TWO = ["06/12/26 01:02:03.456", "09/03/26 09:05:07.000", "23/11/26 14:34:02.781", "17/08/26 12:00:00.120"]


def _times(lines: list[str]) -> list[datetime | None]:
    return [r.time for r in parse_lines(lines, now=NOW)]


# -- the order of a sample's dates --------------------------------------------------------------------

@pytest.mark.parametrize("triples, order", [
    ([("23", "11", "26"), ("06", "12", "26")], "dmy"),  # one year as dd/MM/yy, two as yy/MM/dd; MM/dd/yy is no date
    ([("11", "23", "26"), ("12", "06", "26")], "mdy"),  # a second number past 12: the month comes first
    ([("26", "11", "23"), ("26", "12", "06")], "ymd"),  # the first number constant, the last varies: yy/MM/dd
    ([("06", "12", "2026"), ("23", "11", "2026")], "dmy"),
    ([("06", "12", "2026"), ("09", "03", "2026")], None),  # near miss: four-digit years, both orders dates
    ([("06", "12", "26")], None),  # near miss: one date reads in every order with one year
    ([], None),
])
def test_the_order_of_a_sources_dates_is_what_its_dates_together_say(triples, order):
    assert decide(triples) == order


def test_the_sample_order_looks_at_the_first_slashed_date_before_a_clock_in_each_line():
    assert sample_order([f"INFO {t} ok" for t in DAY_FIRST_TWO]) == "dmy"
    # near misses: a path or a fraction is no date; a date without a clock after it is not a stamp
    assert sample_order(["GET /api/23/11/26 200", "ratio 23/11/26", "due 23/11/26 at noon"]) is None


def test_a_date_is_rewritten_in_the_order_only_where_it_is_a_date_in_it():
    assert in_order("06/12/2026 01:02:03", "dmy") == "2026-12-06 01:02:03"
    assert in_order("[06/12/26 01:02:03]", "dmy") == "[2026-12-06 01:02:03]"
    assert in_order("06/12/26", "dmy", alone=True) == "2026-12-06"
    assert in_order("06/12/2026 01:02:03", None) == "06/12/2026 01:02:03"
    assert in_order("13/13/2026 01:02:03", "dmy") == "13/13/2026 01:02:03"  # no month 13: left as written
    assert in_order("06/12/2026 01:02:03", "ymd") == "06/12/2026 01:02:03"  # a four-digit year is never first
    assert in_order("06/12/2026", "dmy") == "06/12/2026"  # near miss: not a stamp (no clock) unless `alone`


def test_a_json_value_and_a_known_header_read_their_dates_in_the_sources_order():
    json_lines = [f'{{"@timestamp": "{t}", "level": "info", "message": "m"}}' for t in DAY_FIRST_TWO]
    assert _times(json_lines)[0] == datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC)
    log4j = [f"{t} INFO  [main] com.example.App - m" for t in DAY_FIRST_TWO]
    assert _times(log4j)[1] == datetime(2026, 3, 9, 9, 5, 7, tzinfo=UTC)
    # near miss: a source whose dates do not tell reads each as its spelling does (yy/MM/dd)
    same_day = [f"06/12/26 01:02:0{i} INFO  [main] com.example.App - m" for i in range(4)]
    assert _times(same_day)[0] == datetime(2006, 12, 26, 1, 2, 0, tzinfo=UTC)


def test_a_rule_is_read_with_the_order_it_is_given():
    rules = TimeRules(date_order="dmy")
    assert read_written_time("06/12/2026 01:02:03", rules) == datetime(2026, 12, 6, 1, 2, 3, tzinfo=UTC)
    assert read_written_time("06/12/2026 01:02:03") == datetime(2026, 6, 12, 1, 2, 3, tzinfo=UTC)


def test_a_learnt_layout_of_two_digit_dates_takes_the_order_its_sample_says():
    lines = [f"{t} [worker-{i}] job step {i} done" for i, t in enumerate(DAY_FIRST_TWO * 3)]
    layout = learn(lines)
    assert layout is not None and layout.time_shape == "day-month-slashed"
    assert layout.read_time("23/11/26 14:34:02.781") == datetime(2026, 11, 23, 14, 34, 2, 781000, tzinfo=UTC)
    # near miss: a yy/MM/dd source over several days keeps yy/MM/dd
    ymd = [f"26/11/{d:02d} 10:00:00.000 [w] job step done" for d in (20, 21, 22, 23, 24, 25)]
    layout = learn(ymd)
    assert layout is not None and layout.time_shape == "yy-slashed"


# -- a relay's header and the body's own time ----------------------------------------------------------

HEADER = datetime(2026, 12, 6, 1, 2, 3, tzinfo=UTC)


@pytest.mark.parametrize("body, expected", [
    ("1796518923456 INFO started", datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC)),  # epoch ms
    ("1796518923456789 INFO started", datetime(2026, 12, 6, 1, 2, 3, 456789, tzinfo=UTC)),  # epoch µs
    ("1796518923456789123 INFO started", datetime(2026, 12, 6, 1, 2, 3, 456789, tzinfo=UTC)),  # epoch ns
    ("20261206010203456 INFO started", datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC)),  # log4j2's COMPACT
    ("01:02:03.456 INFO started", datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC)),
    ("1796518924456 INFO started", None),  # near miss: another second
    ("1796518923 INFO started", None),  # near miss: the same second, no finer
    ("4242 INFO started 1796518923456", None),  # near miss: not what opens the body
])
def test_the_body_writes_the_headers_second_finer_in_digits_alone(body, expected):
    assert finer_opening_time(body, HEADER) == expected


def test_the_headers_month_and_day_decide_the_bodys_date_order():
    assert agreeing_opening_time("06/12/2026 01:02:03.456 INFO m", HEADER) == datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC)
    assert agreeing_opening_time("06/12/26 01:02:03.456 INFO m", HEADER) == datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC)
    assert agreeing_opening_time("07/12/2026 01:02:03.456 INFO m", HEADER) is None  # near miss: no order agrees
    lines = ["<134>Dec  6 01:02:03 web-01 orders[4242]: 06/12/2026 01:02:03.456 INFO Started",
             "<132>Mar  9 09:05:07 web-01 orders[4242]: 09/03/2026 09:05:07.000 WARN Pool in use"]
    assert _times(lines) == [datetime(2026, 12, 6, 1, 2, 3, 456000, tzinfo=UTC), datetime(2026, 3, 9, 9, 5, 7, tzinfo=UTC)]
    # near miss: a body dated far from its header in the only order it reads keeps its own date
    far = ["<134>Dec  6 01:02:03 web-01 orders[4242]: 2025-01-02T03:04:05Z replayed record"]
    assert _times(far) == [datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)]


# -- epochs of whole digits ----------------------------------------------------------------------------

def test_an_epoch_of_whole_digits_is_read_exactly_not_through_a_float():
    assert from_epoch(1793480398999999999) == datetime(2026, 10, 31, 20, 59, 58, 999999, tzinfo=UTC)
    assert parse_time("1793480398999999999") == datetime(2026, 10, 31, 20, 59, 58, 999999, tzinfo=UTC)
    assert parse_time(1793480398999) == datetime(2026, 10, 31, 20, 59, 58, 999000, tzinfo=UTC)
    assert parse_time(1793480398.5) == datetime(2026, 10, 31, 20, 59, 58, 500000, tzinfo=UTC)  # a float as before
    assert from_epoch(1793480398, "s") == datetime(2026, 10, 31, 20, 59, 58, tzinfo=UTC)
    assert from_epoch(10**30) is None


def test_a_relayed_stamp_with_a_two_digit_year_is_the_records_own_time():
    lines = ["<134>Dec  6 01:02:03 web-01 orders[4242]: 06 Dec 26 01:02 UTC INFO Started",
             "<132>Mar  9 09:05:07 web-01 orders[4242]: 09 Mar 26 02:05 -0700 WARN Pool in use"]
    assert _times(lines) == [datetime(2026, 12, 6, 1, 2, tzinfo=UTC), datetime(2026, 3, 9, 9, 5, tzinfo=UTC)]
    # near misses: numbers that open a body without a clock after them, or a clock alone, are no stamp
    # (the header's time stays)
    others = ["<134>Dec  6 01:02:03 web-01 orders[4242]: 12 Dec 26 items left",
              "<134>Dec  6 01:02:03 web-01 orders[4242]: 1:02AM INFO Started"]
    assert _times(others) == [datetime(2026, 12, 6, 1, 2, 3, tzinfo=UTC)] * 2
