"""Session 57's structural readings, each with its near misses: a companion line that repeats its
record's header and writes a label that is no level of the source (PostgreSQL's DETAIL/HINT/
STATEMENT after an ERROR) continues that record; a syslog tag `[host ]program[pid]:` after another
layout's header names the service; a level word where a mixed file's other lines write a host is
the level; logcat's `long` format as ddmlib writes it."""
from __future__ import annotations

from pipeline.ingest.multiline import MultilineJoiner
from tests.support import read_lines

PG = "2024-03-01 10:00:01.200 UTC [1234] app@shop"


def _records(lines, labels=None):
    joiner = MultilineJoiner(labels=labels) if labels is not None else MultilineJoiner()
    return [r.text for r in joiner.join(enumerate(lines))]


def test_an_errors_detail_hint_and_statement_lines_are_its_record(tmp_path):
    events = read_lines(tmp_path, [
        "2024-03-01 10:00:00.123 UTC [1234] app@shop LOG:  connection received: host=10.0.0.1",
        f'{PG} ERROR:  duplicate key value violates unique constraint "users_pkey"',
        f"{PG} DETAIL:  Key (id)=(42) already exists.",
        f"{PG} HINT:  Use another id.",
        f"{PG} STATEMENT:  INSERT INTO users (id) VALUES (42);",
        "2024-03-01 10:00:02.000 UTC [1240] app@shop LOG:  checkpoint starting: time",
    ])
    assert [e.level for e in events] == ["INFO", "ERROR", "INFO"]
    error = events[1]
    assert error.message == 'duplicate key value violates unique constraint "users_pkey"'
    assert "Key (id)=(42) already exists." in error.stack and "INSERT INTO users" in error.stack


def test_a_companion_after_a_fatal_with_an_indented_line_joins_it_and_the_next_record_opens():
    head = "2022-04-12 00:24:24.741 UTC [9158] postgres@postgres"
    lines = [f'{head} FATAL:  password authentication failed for user "postgres"',
             f'{head} DETAIL:  User "postgres" has no password assigned.',
             '        Connection matched pg_hba.conf line 96: "host all all 127.0.0.1/32 md5"',
             "2022-04-12 00:25:37.732 UTC [9163] postgres@postgres FATAL:  password authentication failed"]
    assert len(_records(lines)) == 2


def test_near_misses_stay_records_of_their_own():
    same = "2018-09-27 06:57:02.779 UTC [20194] [user=postgres,db=postgres,app=psql]"
    # a level under the same header: two records of one process in one millisecond
    assert len(_records([f"{same} ERROR:  canceling statement due to user request",
                         f"{same} LOG:  duration: 3000.019 ms  statement: SELECT pg_sleep(3);"])) == 2
    # another process (pid) or another time: another record
    assert len(_records([f"{PG} ERROR:  boom", PG.replace("1234", "1235") + " DETAIL:  other"])) == 2
    assert len(_records([f"{PG} ERROR:  boom", PG.replace("01.200", "01.201") + " DETAIL:  other"])) == 2
    # the first `WORD:` of a message under a header of one second is no level slot (Windows' CBS)
    cbs = "2016-09-28 04:30:31, Info                  CBS    SQM:"
    assert len(_records([f"{cbs} Cleaning up report files", f"{cbs} Requesting upload"])) == 2
    # a header without a time is no process's header
    assert len(_records(["[1127]: [8-1] db=app ERROR:  boom", "[1127]: [8-1] db=app DETAIL:  why"])) == 2


def test_a_label_the_source_uses_as_a_level_is_learnt_from_its_own_lines():
    from pipeline.ingest import companion_lines

    sample = [f"2024-03-01 10:00:0{i}.000 UTC [{i}] AUDIT:  session {i}" for i in range(4)]
    counts = companion_lines.label_counts(sample + [f"{PG} ERROR:  boom", f"{PG} DETAIL:  why"])
    assert counts["AUDIT"] == [4, 0] and counts["DETAIL"] == [0, 1]
    assert companion_lines.is_level("AUDIT", counts) and not companion_lines.is_level("DETAIL", counts)
    lines = [f"{PG} ERROR:  boom", f"{PG} AUDIT:  session 9"]
    assert len(_records(lines, counts)) == 2  # the source's own level word opens a record
    assert len(_records(lines)) == 1  # unknown to the source: a companion


def test_a_syslog_tag_after_another_layouts_header_names_the_service(tmp_path):
    events = read_lines(tmp_path, [
        "2024/03/01 10:00:00 web01 nginx[1234]: connect() failed (111: Connection refused)",
        "2024/03/01 10:00:01 web01 sshd[2201]: Accepted publickey for deploy from 10.0.0.5",
        "2024/03/01 10:00:02 cron[3000]: (root) CMD (run-parts /etc/cron.hourly)",
    ])
    assert [(e.service, e.fields.get("pid"), e.message) for e in events] == [
        ("nginx", "1234", "connect() failed (111: Connection refused)"),
        ("sshd", "2201", "Accepted publickey for deploy from 10.0.0.5"),
        ("cron", "3000", "(root) CMD (run-parts /etc/cron.hourly)")]
    assert events[0].host == "web01"


def test_program_tag_near_misses():
    from pipeline.ingest.program_tags import program_tag

    assert program_tag("web01 nginx[1234]: upstream timed out")[:3] == ("web01", "nginx", "1234")
    assert program_tag("http: panic serving [::1]:54143: test panic") is None  # a message's `word:`
    assert program_tag("success: process entered RUNNING state") is None
    assert program_tag("array[i]: out of range") is None  # no pid of digits
    assert program_tag("Thread[main]: started") is None


def test_python_loggers_in_a_mixed_file_are_the_service_and_their_level_is_read(tmp_path):
    events = read_lines(tmp_path, [
        "2024-03-01 10:00:00 web01 nginx[1234]: upstream timed out (110: Connection timed out)",
        "2024-03-01 10:00:01,123 INFO app.server: listening on port 8080",
        "2024-03-01 10:00:02 web01 sshd[2201]: Accepted publickey for deploy",
        "2024-03-01 10:00:03,200 ERROR app.worker: job 17 failed",
        "2024-03-01 10:00:04 web01 systemd[1]: Started Session 42 of user deploy.",
        "2024-03-01 10:00:05,200 WARNING app.db: slow query",
    ])
    python = events[1::2]
    assert [(e.level, e.service, e.message) for e in python] == [
        ("INFO", "app.server", "listening on port 8080"), ("ERROR", "app.worker", "job 17 failed"),
        ("WARN", "app.db", "slow query")]
    assert all(e.host is None for e in python)


def test_logcat_long_with_a_thread_in_hex_and_a_four_digit_fraction(tmp_path):
    events = read_lines(tmp_path, [
        "[ 08-11 19:11:07.132   495:0x1ef D/dtag     ]", "debug message", "",
        "[ 08-11 21:15:35.7524  540:0x21c W/wtag     ]", "warning message", ""])
    assert [(e.level, e.service, e.message, e.fields.get("tid")) for e in events] == [
        ("DEBUG", "dtag", "debug message", "0x1ef"), ("WARN", "wtag", "warning message", "0x21c")]
    assert events[1].time.microsecond == 752400


def test_the_slot_finder_is_the_label_pattern_at_a_fraction_of_its_cost():
    from pipeline.ingest import companion_lines

    for line in [f"{PG} ERROR:  boom", "x ERROR:", "ERROR: x", " _AB: x", " ABC:x", "a ABCDEFGHIJKLM: x",
                 "[1]:LOG:  x", "a-WARNING:\tq", " AB: CD: x", " ABC ABC: x", "12:00:01 host FATAL:"]:
        found = companion_lines._LABEL.search(line, 0, companion_lines.LABEL_REACH)
        assert companion_lines.label(line) == (found and (found.start(1), found.group(1))), line
