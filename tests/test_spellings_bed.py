"""Times and levels as logging libraries themselves define them (issue 34; the generated bed
tests/data/outside/spellings, written by tools/spellings_bed.py, which names each format's source):
a log in any of those spellings, in any of the positions loggers put a time, gets each record's own
time and level; a number or a clock that is no time stays none."""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from pipeline.ingest.levels import normalize_level
from pipeline.ingest.reading import LogFile, Parsing
from pipeline.ingest.timestamps import TimeRules, read_any_time, read_written_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import outside  # noqa: E402
from tools import spellings_bed  # noqa: E402

UTC = timezone.utc
NOW = TimeRules(now=datetime(2026, 12, 6, 2, 0, tzinfo=UTC))


def _events(tmp_path: Path, text: str) -> list:
    log = tmp_path / "app.log"
    log.write_text(text, encoding="utf-8")
    reader = LogFile(log, max_bytes=1 << 20, parsing=Parsing(timezone="UTC"))
    return [item for item, _ in reader.scan(0, final=True, settled=True) if getattr(item, "event_id", None) is not None]


def test_the_generated_bed_is_what_its_generator_writes(tmp_path):
    spellings_bed.generate(tmp_path)
    for rel in ("go-time/RFC1123Z/json.log", "log4j2/ISO8601_OFFSET_DATE_TIME_HH/start.log", "levels/zerolog-console.log"):
        assert (tmp_path / rel).read_bytes() == (spellings_bed.BED / rel).read_bytes()
        expected = rel + ".expected.json"
        assert json.loads((tmp_path / expected).read_text()) == json.loads((spellings_bed.BED / expected).read_text())


def test_a_time_field_in_any_spelling_a_library_defines_is_read():
    cases = {
        "Sun, 06 Dec 2026 01:02:03 GMT": "2026-12-06T01:02:03+00:00",           # RFC 1123, .NET "R"
        "Mon Jan  2 15:04:05 2026": "2026-01-02T15:04:05+00:00",                 # ANSIC, Python's %c
        "Mon, 02 Jan 2026 15:04:05 +0530": "2026-01-02T09:34:05+00:00",          # RFC1123Z
        "2026-12-06 01:02:03.456789123 +0000 UTC": "2026-12-06T01:02:03.456789+00:00",  # Go's Time.String
        "12/6/2026 1:02:03 AM": "2026-12-06T01:02:03+00:00",                     # .NET "G" en-US
        "2026-12-06T01:02:03,781-07": "2026-12-06T08:02:03.781000+00:00",        # log4j2 OFFSET_DATE_TIME_HH
        "20261206010203456": "2026-12-06T01:02:03.456000+00:00",                 # log4j2 COMPACT
        "01:02:03,456": "2026-12-06T01:02:03.456000+00:00",                      # log4j2 ABSOLUTE: today
        "1:02AM": "2026-12-06T01:02:00+00:00",                                   # Go's Kitchen
    }
    for written, instant in cases.items():
        got = read_written_time(written, NOW)
        assert got is not None and got.isoformat() == instant, written


def test_json_and_logfmt_lines_with_such_a_time_get_it(tmp_path):
    events = _events(tmp_path, '{"time": "Sun, 06 Dec 2026 01:02:03 GMT", "level": "warn", "msg": "pool low"}\n'
                               'ts="Mon, 07 Dec 2026 11:02:03 +0530" level=error msg="pool empty"\n')
    assert [e.time.isoformat() for e in events] == ["2026-12-06T01:02:03+00:00", "2026-12-07T05:32:03+00:00"]


def test_a_relayed_line_keeps_its_own_stamp_not_the_relays_year_less_second(tmp_path):
    events = _events(tmp_path, "<134>Dec  6 01:02:03 web-01 orders[42]: 2026-12-06T06:32:03.4567891+05:30 INFO up\n"
                               "<131>Dec  6 01:02:04 web-01 orders[42]: 2026-12-06T06:32:04.0000001+05:30 ERROR down\n")
    assert [e.time.isoformat() for e in events] == ["2026-12-06T01:02:03.456789+00:00", "2026-12-06T01:02:04+00:00"]


def test_a_time_of_day_after_a_level_word_and_epoch_micro_and_nanoseconds_open_records(tmp_path):
    clock = _events(tmp_path, "INFO  01:02:03,456 started\nWARN  01:02:04,000 slow\nERROR 01:02:05,120 failed\n")
    assert [(e.level, e.time.strftime("%H:%M:%S.%f")) for e in clock] == [
        ("INFO", "01:02:03.456000"), ("WARN", "01:02:04.000000"), ("ERROR", "01:02:05.120000")]
    nanos = _events(tmp_path, "1796518923456789123 INFO started\n1796518924000000000 ERROR failed\n")
    assert [e.time.isoformat() for e in nanos] == ["2026-12-06T01:02:03.456789+00:00", "2026-12-06T01:02:04+00:00"]


def test_the_libraries_own_level_names_are_levels(tmp_path):
    assert [normalize_level(n) for n in ("dbug", "trce", "PNC", "INFO+2", "ERROR+4", "DEBUG-4")] == [
        "DEBUG", "DEBUG", "FATAL", "INFO", "ERROR", "DEBUG"]
    erlang = _events(tmp_path, "2026-12-06T01:02:03.456789+00:00 emergency: disk gone\n"
                               "2026-12-06T01:02:04.456789+00:00 notice: mounted\n")
    assert [e.level for e in erlang] == ["FATAL", "INFO"]
    golog = _events(tmp_path, "2026/12/06 01:02:03 WARN  pool low\n2026/12/06 01:02:04 INFO  pool ok\n")
    assert [e.level for e in golog] == ["WARN", "INFO"]


def test_counters_ids_and_bare_clocks_are_no_times():
    # HealthApp's step counters, ids, a 10-digit number outside 2001-2033, a ratio, a version, a pid
    for text in ("12345678", "2345678901", "30002312", "99999999999999999", "10:30", "1.2.3", "4242"):
        assert read_any_time(text) is None, text
    assert read_written_time("10:30", NOW) is None  # neither seconds nor AM/PM: no clock


def test_the_bed_reads_at_least_nine_in_ten_records_of_a_sample_of_its_files():
    right = records = 0
    for rel in ("go-time/RFC1123/json.log", "go-time/Kitchen/after-level.log", "log4j2/COMPACT/start.log",
                "log4j2/ABSOLUTE/after-level.log", "dotnet/o-offset/syslog.log", "epoch/nanos/bracket.log",
                "python/strftime-c/logfmt.log", "levels/erlang-logger.log", "levels/dotnet-console-simple.log"):
        figures = outside.Figures(module=rel, part="generated")
        log = spellings_bed.BED / rel
        outside.measure_file(log, log.with_name(log.name + ".expected.json"), figures)
        right, records = right + figures.right, records + figures.records
    assert records >= 40 and right >= 0.9 * records


def test_a_source_whose_slashed_dates_put_the_day_first_reads_every_line_day_first(tmp_path):
    # log4j2's US_MONTH_DAY_YEAR4_TIME is dd/MM/yyyy: 23/11 says so, and 06/12 is then the 6th of December
    events = _events(tmp_path, "06/12/2026 01:02:03.456 INFO up\n23/11/2026 14:34:02.781 ERROR down\n"
                               "09/03/2026 09:05:07.000 WARN slow\n")
    assert [e.time.date().isoformat() for e in events] == ["2026-12-06", "2026-11-23", "2026-03-09"]


def test_a_relays_year_less_second_gives_way_to_the_bodys_finer_clock_of_the_same_second(tmp_path):
    events = _events(tmp_path, "<134>Dec  6 01:02:03 web-01 orders[42]: 01:02:03,456 INFO up\n"
                               "<131>Dec  6 01:02:04 web-01 orders[42]: 01:02:04,120 ERROR down\n"
                               "<131>Dec  6 01:02:05 web-01 orders[42]: 11:00:00,500 ERROR another clock\n")
    assert [e.time.strftime("%H:%M:%S.%f") for e in events] == ["01:02:03.456000", "01:02:04.120000", "01:02:05.000000"]


def test_serilogs_console_bracket_gives_the_time_of_day_and_the_level(tmp_path):
    events = _events(tmp_path, "[01:02:03 INF] up\n[01:02:04 WRN] slow\n[01:02:05 ERR] down\n")
    assert [(e.time.strftime("%H:%M:%S"), e.level) for e in events] == [
        ("01:02:03", "INFO"), ("01:02:04", "WARN"), ("01:02:05", "ERROR")]
