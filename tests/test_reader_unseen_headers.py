"""Headers no known format and no earlier learnt layout covers (issue 34.3), read by the learnt
layout's general rules: a level written as its initial in any decoration, a syslog `<PRI>` glued
before another header, comma-separated header columns, a time column before ` | ` (no container
name), a known format that reads only the first columns of a longer header, and a time that closes
the line. The lines are written here in the manner of common loggers (no third-party text)."""
from __future__ import annotations

import json

import pytest

from tests.support import read_lines as _write, read_log as read, utc

LEVELS = ["INFO", "WARN", "ERROR", "INFO", "DEBUG", "INFO"]
MESSAGES = ["worker pool started size=4", "slow query took 812 ms on table orders",
            "connection refused to db.internal:5432", "request completed in 12 ms",
            "cache lookup key=user:7 hit=true", "checkpoint written to /var/lib/app/7.snap"]


def _lines(make):
    """The test's six lines, each made from its index, level and message."""
    return [make(i, level, message) for i, (level, message) in enumerate(zip(LEVELS, MESSAGES))]


def _read_right(events, *, second=0):
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2026, 5, 3, 12, 30, second + i), level, message)
        for i, (level, message) in enumerate(zip(LEVELS, MESSAGES))]
    assert all("time_inferred" not in e.fields for e in events)


def test_a_level_written_as_its_initial_in_brackets_or_with_a_colon(tmp_path):
    for decorate in ("[{}]", "({})"):
        lines = _lines(lambda i, level, message: f"2026-05-03 12:30:0{i}.000 {decorate.format(level[0])} scheduler: {message}")
        _read_right(_write(tmp_path, lines))
    # after a level closed by its colon, a `word:` is the message's first word until 20 lines show a column
    # of few values there (CONTRACT §1: PostgreSQL's `LOG:  statement: …` and `LOG:  duration: …`): six
    # lines keep it in the message, nothing lost
    lines = _lines(lambda i, level, message: f"2026-05-03 12:30:0{i}.000 {level[0]}: scheduler: {message}")
    events = _write(tmp_path, lines)
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2026, 5, 3, 12, 30, i), level, f"scheduler: {message}") for i, (level, message) in enumerate(zip(LEVELS, MESSAGES))]


_EPOCH = utc(2026, 5, 3, 12, 30, 0).timestamp()
# (id, a line of the layout from its index, level and message): each a header no bed had
HEADERS = [
    # comma-cut columns, the time's fraction after a comma
    ("comma-separated", lambda i, level, message: f"2026-05-03 12:30:0{i},000,{level},db-pool,{message}"),
    # digits before ` | ` are a time column, not a compose container's name
    ("epoch-before-bar", lambda i, level, message: f"{_EPOCH + i:.3f} | {level:<5} | auth | {message}"),
    # Go's standard logger prefix before a header of the program's own: the known format reads no level
    ("go-prefix-then-columns", lambda i, level, message: f"2026/05/03 12:30:0{i}.000 | {level:<5} | auth | {message}"),
    # Tornado's LogFormatter: `[%(levelname)1.1s %(asctime)s %(module)s:%(lineno)d] %(message)s`
    ("level-then-time-bracket", lambda i, level, message: f"[{level[0]} 260503 12:30:0{i} web:{2200 + i}] {message}"),
    # logfmt keys no name list holds: `logged_at` in a header spelling, Serilog's `@l`, `body`
    ("logfmt-by-values", lambda i, level, message:
        f'logged_at="03-May-2026 12:30:0{i}.000" @l={level.lower()} component=cache body="{message}" pid={90 + i}'),
]


@pytest.mark.parametrize("make", [m for _, m in HEADERS], ids=[n for n, _ in HEADERS])
def test_a_header_no_bed_had_gives_each_line_its_time_level_and_message(tmp_path, make):
    _read_right(_write(tmp_path, _lines(make)))


def test_a_syslog_priority_glued_before_a_header_of_another_layout_gives_the_level(tmp_path):
    severity = {"DEBUG": 7, "INFO": 6, "WARN": 4, "ERROR": 3}
    lines = _lines(lambda i, level, message: f"<{16 * 8 + severity[level]}>2026/05/03 12:30:0{i}.000 billing[{900 + i}]: {message}")
    events = _write(tmp_path, lines)
    _read_right(events)
    assert events[0].fields["facility"] == 16


def test_a_time_that_closes_the_line_after_a_level_and_the_message(tmp_path):
    # messages of different lengths, so the time is at no one column
    messages = ["pool started", "slow query took 812 ms on table orders", "connection refused",
                "request completed in 12 ms", "cache miss", "checkpoint written to /var/lib/app/7.snap"]
    lines = [f"{level:<5} auth: {message} @ 13/05/2026 12:30:1{i}.000"
             for i, (level, message) in enumerate(zip(LEVELS, messages))]
    events = _write(tmp_path, lines)
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2026, 5, 13, 12, 30, 10 + i), level, f"auth: {message}")
        for i, (level, message) in enumerate(zip(LEVELS, messages))]


def test_logcat_with_its_year_usec_zone_and_uid_modifiers_in_both_formats(tmp_path):
    # `adb logcat -v threadtime|time` with `-v year,usec,zone,uid` (AOSP liblog's logprint): one
    # file may hold several, as a device's captures appended to one another
    lines = ["11-28 10:00:00.123  1234  1234 D Tag     : plain threadtime",
             "11-28 10:00:01.456 I/Tag     (  190): plain time format",
             "2022-11-28 10:00:02.171 +0000  1000  1885  3066 E App  : threadtime with year, zone and uid",
             "2022-11-28 20:00:03.171997 +1000 W/App     ( 1080: 1179): time format with usec, zone and uid"]
    events = _write(tmp_path, lines)
    assert [(e.level, e.message, e.service) for e in events] == [
        ("DEBUG", "plain threadtime", "Tag"), ("INFO", "plain time format", "Tag"),
        ("ERROR", "threadtime with year, zone and uid", "App"), ("WARN", "time format with usec, zone and uid", "App")]
    assert events[2].time == utc(2022, 11, 28, 10, 0, 2, 171000)
    assert events[3].time == utc(2022, 11, 28, 10, 0, 3, 171997)
    assert events[3].fields["uid"] == "1080" and events[3].fields["pid"] == "1179"


def test_epochs_from_2000_on_and_fractions_finer_than_nanoseconds(tmp_path):
    # nine-digit seconds (before September 2001) and twelve-digit milliseconds, and a fraction of
    # twelve digits, as telegraf's and seqcli's parsers read them
    lines = ["999999999 value=1", "999999999999 value=2", "1466004605.123456789123 value=3"]
    events = _write(tmp_path, lines)
    assert [e.time for e in events] == [utc(2001, 9, 9, 1, 46, 39), utc(2001, 9, 9, 1, 46, 39, 999000),
                                       utc(2016, 6, 15, 15, 30, 5, 123457)]
    assert all("time_inferred" not in e.fields for e in events)


def test_a_stamp_with_the_year_before_the_months_name(tmp_path):
    # Cisco NX-OS and other vendors' syslog: `2022 Oct 19 11:34:01` after the priority
    lines = [f"<187>2022 Oct 19 11:34:0{i} switch-{i}: %ETHPORT-3-IF_DOWN: Interface Ethernet1/{i} is down"
             for i in range(3)]
    events = _write(tmp_path, lines)
    assert [e.time for e in events] == [utc(2022, 10, 19, 11, 34, i) for i in range(3)]
    assert {e.level for e in events} == {"ERROR"}


def test_an_aligned_key_value_block_whose_value_is_a_time_stays_in_its_record(tmp_path):
    # a service printing its settings under one header line: `Started:` holds a time, yet the line
    # is the block's, not a record of its own
    lines = ["2024/02/16 06:05:19.400  2136  3688  service starting",
             "2024/02/16 06:05:19.561  2136  5868  settings:",
             "Started:            2024/02/16 06:05:19.548 (UTC-8:00)",
             "Version:            15.50.5 (64-bit)",
             "Account:            SYSTEM",
             "2024/02/16 06:05:19.566  2136  3876  network is now connected"]
    events = _write(tmp_path, lines)
    assert len(events) == 3
    body = events[1].message + "\n" + (events[1].stack or "")
    assert "Started:            2024/02/16 06:05:19.548" in body and "Account:            SYSTEM" in body


def test_a_json_record_whose_message_key_no_name_says_is_the_text_rendered_from_its_values(tmp_path):
    # Falco: `output` is rendered from the record's `priority` and `output_fields`; `rule` is a
    # second text, the rule's name, which holds none of them
    rows = [{"output": f"18:49:1{i}.000000000: Warning Shell spawned in container (user=root container_id=c{i}f00)",
             "priority": "Warning", "rule": "Terminal shell in container", "time": f"2019-06-28T18:49:1{i}.000000000Z",
             "output_fields": {"container.id": f"c{i}f00", "user.name": "root"}} for i in range(3)]
    path = tmp_path / "falco.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    events = read(path)
    # the output opens with Falco's own header (`%evt.time: %priority`): read as an envelope's message is
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2019, 6, 28, 18, 49, 10 + i), "WARN", rows[i]["output"].split(" Warning ", 1)[1]) for i in range(3)]
    assert events[0].fields["rule"] == "Terminal shell in container"


def test_a_priority_before_version_0_is_not_read_as_rfc_5424(tmp_path):
    # RFC 5424's VERSION is a non-zero digit and up to two more
    formats = []
    for version in ("1", "0"):
        path = tmp_path / f"relay-{version}.log"
        path.write_text(f"<34>{version} 2003-10-11T22:14:15.003Z mymachine su - ID47 - 'su root' failed\n")
        formats += [e.fields["format"] for e in read(path)]
    assert formats[0] == "syslog5424" and formats[1] != "syslog5424"


def test_go_unix_and_ruby_dates_and_rfc_850_read_their_zone_and_year(tmp_path):
    # date(1)'s default and Go's UnixDate put the zone between the clock and the year; RubyDate an
    # offset there; RFC 850 a weekday, a dashed two-digit year and a zone name
    for stamp in ("Mon Jan  2 15:04:0{i} MST 2006", "Mon Jan 02 15:04:0{i} -0700 2006", "Monday, 02-Jan-06 15:04:0{i} MST"):
        lines = [f"{stamp.format(i=i)} {level} {message}" for i, (level, message) in enumerate(zip(LEVELS, MESSAGES))]
        events = _write(tmp_path, lines)
        assert [(e.time, e.level) for e in events] == [(utc(2006, 1, 2, 22, 4, i), level) for i, level in enumerate(LEVELS)]


def test_ltsv_labelled_tab_separated_fields(tmp_path):
    # LTSV (ltsv.org, fluentd's ltsv parser): `label:value` fields cut by tabs
    lines = _lines(lambda i, level, message: f"time:2026-05-03T12:30:0{i}Z\thost:web-1\tlevel:{level.lower()}\tmessage:{message}")
    events = _write(tmp_path, lines)
    _read_right(events)
    assert {e.host for e in events} == {"web-1"}


def test_a_closing_time_with_messages_of_one_length_is_still_no_header_column(tmp_path):
    # every message of four words: the time sits at one column, yet the words before it are prose
    messages = ["worker pool started now", "slow query on orders", "connection refused by db",
                "request completed in time", "cache lookup missed key", "checkpoint written to disk"]
    lines = [f"{level:<5} auth: {message} @ 13/05/2026 12:30:1{i}.000" for i, (level, message) in enumerate(zip(LEVELS, messages))]
    events = _write(tmp_path, lines)
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2026, 5, 13, 12, 30, 10 + i), level, f"auth: {message}") for i, (level, message) in enumerate(zip(LEVELS, messages))]


TRACE = ["java.io.IOException: disk full", "\tat com.shop.db.Pool.take(Pool.java:88)", "Caused by: java.net.ConnectException: refused"]


def _traced(lines, levels=LEVELS):
    """The lines with a Java trace printed after each ERROR line (its first line unindented)."""
    return [out for line, level in zip(lines, levels) for out in [line] + (TRACE if level == "ERROR" else [])]


def test_a_logfmt_record_followed_by_a_trace_keeps_its_pairs_and_the_trace_as_its_stack(tmp_path):
    lines = _lines(lambda i, level, message: f'ts=2026-05-03T12:30:0{i}Z level={level} msg="{message}" pid={90 + i}')
    events = _write(tmp_path, _traced(lines))
    _read_right(events)
    assert events[2].stack.startswith("java.io.IOException: disk full") and events[2].exception


def test_a_level_word_read_as_a_syslog_tag_is_the_level(tmp_path):
    # `host WRN: msg`: a component that is an upper-case level word is the line's level
    short = {"DEBUG": "DBG", "INFO": "INF", "WARN": "WRN", "ERROR": "ERR"}
    lines = _lines(lambda i, level, message: f"May  3 12:30:0{i} web-1 {short[level]}: {message}")
    events = _write(tmp_path, _traced(lines))
    assert [(e.level, e.message) for e in events] == list(zip(LEVELS, MESSAGES))
    assert not {e.service for e in events} & set(short.values())


def test_a_levelless_known_prefix_yields_to_level_columns_when_traces_lower_its_share(tmp_path):
    # Go's standard prefix, then `logger <LEVEL>`: with traces between, no reader reads 90% of the
    # lines, and the known format reads as many as the layout does
    levels = ["ERROR", "INFO", "ERROR", "WARN", "ERROR", "INFO"]
    lines = [f"2026/05/03 12:30:0{i}.000 auth.Handler <{level}> {message}" for i, (level, message) in enumerate(zip(levels, MESSAGES))]
    events = _write(tmp_path, _traced(lines, levels))
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2026, 5, 3, 12, 30, i), level, message) for i, (level, message) in enumerate(zip(levels, MESSAGES))]
