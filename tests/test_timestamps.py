"""One set of time rules (pipeline/ingest/timestamps.py) for every reader and source: the same time
written in a file, in a JSON event or in a Splunk result is the same moment, whichever reads it."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.ingest.events import normalize
from pipeline.ingest.formats import SourceParser, parse_record
from pipeline.ingest.layout import learn
from pipeline.ingest.timestamps import TimeRules, parse_time, read_any_time
from tests.test_sources_splunk import T0, TOKEN, Clock, FakeSplunk, source_for

UTC = timezone.utc
MOMENT = datetime(2026, 11, 28, 10, 1, 2, 123000, tzinfo=UTC)
EPOCH_S = MOMENT.timestamp()
# the moment in whole nanoseconds, as a writer's integer (not the float `EPOCH_S * 1e9`, 0.19 µs short)
EPOCH_NS = int(MOMENT.replace(microsecond=0).timestamp()) * 10**9 + MOMENT.microsecond * 1000


@pytest.mark.parametrize("value", [EPOCH_S, round(EPOCH_S * 1e3), round(EPOCH_S * 1e6), EPOCH_NS,
                                   str(round(EPOCH_S * 1e3)), f"{EPOCH_S:.3f}"])
def test_an_epoch_is_the_same_moment_in_a_file_a_json_event_and_a_learnt_layout(value):
    line = json.dumps({"time": value, "level": "error", "msg": "boom"})
    assert parse_time(value) == MOMENT
    assert parse_record(line).time == MOMENT  # a file's JSON line
    assert normalize({"_time": value, "message": "boom"}).time == MOMENT  # a JSON event (Splunk, evaluation)


def test_a_learnt_layout_reads_epoch_milliseconds_as_the_json_reader_does():
    lines = [f"{round(EPOCH_S * 1e3) + i} ERROR worker-{i % 3} job failed {i}" for i in range(20)]
    layout = learn(lines)
    assert layout is not None and layout.time_shape == "epoch"
    assert layout.read_time(lines[0].split()[0]) == parse_time(lines[0].split()[0]) == MOMENT


@pytest.mark.parametrize("text, expected", [
    ("2026-11-28T10:01:02.123Z", MOMENT),
    ("2026-11-28 11:01:02,123 +0100", MOMENT),
    ("2026-11-28T11:01:02.123+01", MOMENT),
    ("20261128T100102.123Z", MOMENT),  # ISO's basic form: a JSON event read it, a file's line did not
    ("2026-11-28T10:01:02.123+25:00", None),  # an offset of a day or more is no offset
    ("0001-01-01T00:00:00+14:00", None),  # a date UTC cannot hold
])
def test_iso_strings_read_alike_in_a_file_and_in_a_json_event(text, expected):
    assert parse_time(text) == expected
    assert parse_record(json.dumps({"time": text, "msg": "boom"})).time == expected
    if expected is not None:
        assert normalize({"_time": text, "message": "boom"}).time == expected


def test_a_time_without_an_offset_is_read_in_the_sources_zone_in_every_spelling():
    rules = TimeRules(timezone=SourceParser(timezone="Europe/Berlin").options.timezone)
    berlin = MOMENT  # 11:01:02 in Berlin in November is 10:01:02 UTC
    assert parse_time("2026-11-28 11:01:02.123", rules) == berlin
    assert read_any_time("28/Nov/2026:11:01:02.123", tz=rules.timezone) == berlin
    line = "2026-11-28 11:01:02,123 ERROR [main] com.shop.Cart: boom"
    assert parse_record(line, timezone="Europe/Berlin").time == berlin


def test_a_year_less_time_is_never_more_than_a_day_ahead_in_any_reader():
    now = datetime(2027, 1, 1, 0, 30, tzinfo=UTC)
    syslog = parse_record("Dec 31 23:59:59 host1 cron[1]: job failed", now=now)
    glog = parse_record("E1231 23:59:59.000000  42 main.cc:10] job failed", now=now)
    learnt = read_any_time("Dec 31 23:59:59", now=now)
    assert syslog.time == glog.time == learnt == datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert syslog.time <= now + timedelta(days=1)


def test_a_splunk_result_whose_raw_json_writes_epoch_milliseconds_is_stored_with_that_time(monkeypatch):
    # Splunk results were sorted by one time parser and stored by another, which read every epoch as
    # seconds: a pino line (`time` in ms) was a dead letter from Splunk though a file's copy was read
    monkeypatch.setenv("SPLUNK_TOKEN", TOKEN)
    fake = FakeSplunk()
    try:
        first = fake.add(T0 - 100, "Read timed out calling payments after 30000ms")
        second = fake.add(T0 - 90, "Read timed out calling payments after 30001ms")
        for entry, offset in ((first, 100), (second, 90)):
            millis = (T0 - offset) * 1000 + 250
            entry["result"]["_raw"] = json.dumps({"level": 50, "time": millis, "pid": 1, "hostname": "co-1",
                                                  "msg": entry["result"]["message"]})
        items = source_for(fake, Clock()).read(None).items
    finally:
        fake.close()
    assert [type(i).__name__ for i in items] == ["LogEvent", "LogEvent"]
    expected = [datetime.fromtimestamp(T0 - 100.0 + 0.25, tz=UTC), datetime.fromtimestamp(T0 - 90.0 + 0.25, tz=UTC)]
    assert [i.time for i in items] == expected
    assert items[0].time == parse_record(first["result"]["_raw"]).time


# -- what one rule set changed: each header format treats an unreadable time alike ---------------

YEAR_ONE = {  # a first moment of year 1, which UTC cannot hold when read at +14:00
    "apache": ("[Mon Jan 01 00:00:00 0001] [error] disk full", "Mon Jan 01 00:00:00 0001"),
    "golog": ("0001/01/01 00:00:00 disk full", "0001/01/01 00:00:00"),
    "syslog": ("<11>Jan  1 00:00:00 host1 app[1]: disk full", "Jan  1 00:00:00"),
    "glog": ("E0101 00:00:00.000000  42 main.cc:10] disk full", "0101 00:00:00.000000"),
    "logcat": ("01-01 00:00:00.000  1  2 E Tag: disk full", "01-01 00:00:00.000"),
    "bracket-time": ("[1.1 00:00:00] proxy.exe - disk full", "1.1 00:00:00"),
    "log4j": ("0001-01-01 00:00:00,123 ERROR [main] com.shop.Disk: disk full", "0001-01-01 00:00:00,123"),
}


@pytest.mark.parametrize("layout", sorted(YEAR_ONE))
def test_a_header_time_utc_cannot_hold_is_kept_raw_in_its_own_format(layout):
    # it was read so only by log4j; the others gave the line up to `text` (glog's to a learnt
    # layout that read it in the year 2041)
    line, written = YEAR_ONE[layout]
    record = parse_record(line, timezone="Etc/GMT-14", year=1)
    assert (record.format, record.time, record.fields["time_raw"]) == (layout, None, written)
    assert record.message == "disk full"


def test_an_nginx_line_with_an_impossible_date_keeps_it_as_time_raw():
    record = parse_record("2024/13/45 03:04:05 [error] 7#0: *1 upstream timed out")
    assert (record.format, record.time, record.level_name) == ("nginx", None, "ERROR")
    assert record.fields["time_raw"] == "2024/13/45 03:04:05"


@pytest.mark.parametrize("line", ['time=2026-11-28 level=error msg="disk full"',
                                  '{"time": "2026-11-28", "level": "error", "msg": "disk full"}'])
def test_a_date_alone_is_its_midnight_in_the_sources_zone_as_a_json_event_reads_it(line):
    assert parse_record(line, timezone="Europe/Berlin").time == datetime(2026, 11, 27, 23, tzinfo=UTC)
    assert normalize({"_time": "2026-11-28", "message": "x"}).time == datetime(2026, 11, 28, tzinfo=UTC)


@pytest.mark.parametrize("line, expected", [
    # a twelve-hour clock after an ISO date: PM is the afternoon, not the service
    ("2024-03-01 8:00:00 PM ERROR billing payment failed", datetime(2024, 3, 1, 20, tzinfo=UTC)),
    ("2024-03-01 12:05:00 AM ERROR billing payment failed", datetime(2024, 3, 1, 0, 5, tzinfo=UTC)),
    # a dotted date of numbers is day first, with a two-digit year too
    ("01.03.24 08:00:00 ERROR billing payment failed", datetime(2024, 3, 1, 8, tzinfo=UTC)),
    ("1.3.2024 08:00:00 ERROR billing payment failed", datetime(2024, 3, 1, 8, tzinfo=UTC)),
    # the CJK date, its fields marked 年 月 日
    ("2024年03月01日 08:00:00 ERROR billing payment failed", datetime(2024, 3, 1, 8, tzinfo=UTC)),
])
def test_twelve_hour_dotted_and_cjk_dates_are_read_as_their_writers_mean(line, expected):
    record = parse_record(line)
    assert record.time == expected
    assert record.level == "ERROR" and record.message == "billing payment failed"


@pytest.mark.parametrize("line, message", [
    ("2024-03-01 08:00:00 AMQP connection lost", "AMQP connection lost"),  # a word starting AM is a word
    ("2024-03-01 08:00:00 PMS sync started", "PMS sync started"),
])
def test_a_word_that_starts_like_am_or_pm_stays_in_the_message(line, message):
    record = parse_record(line)
    assert record.time == datetime(2024, 3, 1, 8, tzinfo=UTC) and record.message == message
