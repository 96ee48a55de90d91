"""A header's level found by its role (issue 34, session 52): a column whose values, over the
source's lines, are a small vocabulary of levels (initials in either case, a logger's own cuts of
level names) is the level column, and a column of letters that are not all level initials (a CRI
tag, a stream, a thread letter) is not; an Erlang/OTP report header is one record with its level.
The lines are written here in the manner of the loggers named (no third-party text)."""
from __future__ import annotations

from pipeline.ingest.layout import _letter_column, _level_vocabulary
from pipeline.ingest.levels import abbreviated_level, normalize_level
from tests.support import read_lines, utc

_MESSAGES = ["server listening on :8080", "loaded 12 routes", "config key foo deprecated",
             "accepted connection from 10.0.0.5", "upstream timed out after 30s", "request done in 12ms"]


def _lines(column: list[str], layout: str = "2024-03-01 08:00:0{i}.123 {v} {m}") -> list[str]:
    return [layout.format(i=i, v=v, m=m) for i, (v, m) in enumerate(zip(column, _MESSAGES))]


def test_lower_case_initials_in_a_column_are_the_level(tmp_path):
    # a console writer's one-letter levels in lower case, after the time
    events = read_lines(tmp_path, _lines(list("idwiei")))
    assert [e.level for e in events] == ["INFO", "DEBUG", "WARN", "INFO", "ERROR", "INFO"]
    assert events[1].message == "loaded 12 routes" and events[1].time == utc(2024, 3, 1, 8, 0, 1, 123000)


def test_capital_initials_with_critical_and_trace_and_brackets_are_the_level(tmp_path):
    # Python's `%(levelname).1s` (C for CRITICAL), bracketed
    events = read_lines(tmp_path, _lines(["[I]", "[T]", "[W]", "[I]", "[E]", "[C]"]))
    assert [e.level for e in events] == ["INFO", "DEBUG", "WARN", "INFO", "ERROR", "FATAL"]
    assert events[5].message == "request done in 12ms"


def test_a_loggers_own_cuts_of_level_names_are_read_in_its_level_column(tmp_path):
    events = read_lines(tmp_path, _lines(["INFO", "DBUG", "WRNG", "INFO", "EROR", "FATL"]))
    assert [e.level for e in events] == ["INFO", "DEBUG", "WARN", "INFO", "ERROR", "FATAL"]
    assert events[5].message == "request done in 12ms"


def test_a_letter_column_that_is_not_all_level_initials_is_no_level(tmp_path):
    # a stream column (O stdout, E stderr): `O` starts no level, so `E` is no ERROR either
    lines = [f"2024-03-01 08:00:0{i}.123 {s} request {i} done" for i, s in enumerate("OEOOEO")]
    events = read_lines(tmp_path, lines)
    assert [e.level for e in events] == [None] * 6
    # a thread or shard letter (A B C ...): `B` starts no level, so `A` is no FATAL
    lines = [f"2024-03-01 08:00:0{i}.123 {s} request {i} done" for i, s in enumerate("ABCADB")]
    assert [e.level for e in read_lines(tmp_path, lines)] == [None] * 6


def test_the_column_rule_itself():
    assert _letter_column(list("iwedi")) and _letter_column(["[I]", "[E]"])
    assert not _letter_column(list("PFPF"))  # a CRI partial/full tag
    assert not _letter_column(list("FFFF"))  # every line `F`: a tag, not a log of fatal lines
    assert not _letter_column(list("EEEE"))
    assert _letter_column(list("IIII"))  # glog's INFO-only file
    assert not _letter_column(["i", "W", "e"])  # one case, not a mix
    assert _level_vocabulary(["INFO", "WRN", "FATL"]) and not _level_vocabulary(["war", "dug"])
    assert not _level_vocabulary(["INFO", "INFO"])  # one level shows no vocabulary of levels


def test_a_constant_fatal_letter_column_makes_no_fatal_records(tmp_path):
    # a container runtime's full-line tag `F` after its stream, in a header no known format reads
    lines = [f"2024-03-01 08:00:0{i}.5 stdout F {m}" for i, m in enumerate(_MESSAGES)]
    events = read_lines(tmp_path, lines)
    assert all(e.level != "FATAL" for e in events)


def test_an_abbreviation_is_read_only_as_a_cut_of_one_level_name():
    assert [abbreviated_level(t) for t in ("FATL", "EROR", "WRNG", "NTC", "EMRG", "dbg")] == [
        "FATAL", "ERROR", "WARN", "INFO", "FATAL", "DEBUG"]
    assert [abbreviated_level(t) for t in ("GET", "API", "TCP", "Fatl", "FATALS")] == [None] * 5
    assert normalize_level("FATL") is None  # outside a level column a cut is not read
    assert normalize_level("c") == "FATAL"  # `%(levelname).1s` of CRITICAL


def test_an_erlang_report_header_is_one_record_with_its_level_and_body(tmp_path):
    events = read_lines(tmp_path, [
        "",
        "=INFO REPORT==== 12-Mar-2019::10:00:00 ===",
        "    application: mnesia",
        "    exited: stopped",
        "",
        "=ERROR REPORT==== 12-Mar-2019::10:00:01.250 ===",
        "** Generic server <0.123.0> terminating",
        "** Last message in was {'EXIT',<0.80.0>,killed}",
        "",
        "=WARNING REPORT==== 12-Mar-2019::10:00:02 ===",
        "closing AMQP connection <0.1234.0> (10.0.0.1:5000 -> 10.0.0.2:5672):",
        "client unexpectedly closed TCP connection",
    ])
    assert [(e.time, e.level) for e in events] == [
        (utc(2019, 3, 12, 10, 0, 0), "INFO"), (utc(2019, 3, 12, 10, 0, 1, 250000), "ERROR"),
        (utc(2019, 3, 12, 10, 0, 2), "WARN")]
    assert events[1].message == "** Generic server <0.123.0> terminating"
    assert "Last message in was" in (events[1].stack or "")
    assert events[2].message.startswith("closing AMQP connection")
    assert events[0].message.startswith("application: mnesia")


def test_a_column_of_angle_bracketed_syslog_severities_is_the_level(tmp_path):
    # the kernel's and systemd's `<6>` severity prefix, written after a time
    events = read_lines(tmp_path, _lines(["<6>", "<7>", "<4>", "<6>", "<3>", "<2>"]))
    assert [e.level for e in events] == ["INFO", "DEBUG", "WARN", "INFO", "ERROR", "FATAL"]
    assert events[0].message == "server listening on :8080"
    # `<3>` on every line is a tag, not a log of errors only
    events = read_lines(tmp_path, [f"2024-03-01 08:00:0{i} <3> request {i} done" for i in range(6)])
    assert all(e.level is None for e in events)


def test_a_bracket_that_holds_time_level_and_module_is_one_header_column(tmp_path):
    # Rust's env_logger: `[time LEVEL module] msg`; the bracket closes after the module, not the time
    events = read_lines(tmp_path, [
        "[2024-03-01T08:00:00Z INFO  my_app] server started",
        "[2024-03-01T08:00:01Z DEBUG my_app::db] loaded routes",
        "[2024-03-01T08:00:03Z ERROR my_app::net] upstream closed"])
    assert [(e.level, e.message) for e in events] == [
        ("INFO", "server started"), ("DEBUG", "loaded routes"), ("ERROR", "upstream closed")]
    assert events[1].time == utc(2024, 3, 1, 8, 0, 1)


def test_a_level_cut_joined_to_a_bracketed_stamp_is_the_level(tmp_path):
    # log15's terminal format: `DBUG[03-01|08:00:01] msg`
    events = read_lines(tmp_path, [
        "INFO[03-01|08:00:00] server started                 port=8080",
        "DBUG[03-01|08:00:01] loaded routes                  n=12",
        "EROR[03-01|08:00:03] upstream closed                err=EOF"])
    assert [e.level for e in events] == ["INFO", "DEBUG", "ERROR"]
    assert events[1].message.startswith("loaded routes")


def test_one_erlang_report_that_opens_the_file_heads_all_the_lines_below_it(tmp_path):
    events = read_lines(tmp_path, [
        "=ERROR REPORT==== 12-Mar-2019::10:00:01.123456 ===",
        "** Generic server x terminating",
        "** Reason: badarg",
        "** State: {state, undefined}"])
    assert len(events) == 1
    assert (events[0].time, events[0].level) == (utc(2019, 3, 12, 10, 0, 1, 123456), "ERROR")
    assert events[0].message == "** Generic server x terminating" and "badarg" in (events[0].stack or "")
