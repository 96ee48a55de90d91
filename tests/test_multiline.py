"""Stack traces join the event they belong to; a partial last record waits."""
from __future__ import annotations

from pipeline.ingest.multiline import MultilineJoiner

JAVA = """2024-01-02 03:04:05,123 ERROR [main] com.acme.Svc: order failed
java.lang.IllegalStateException: boom
\tat com.acme.Svc.run(Svc.java:10)
\tat java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.io.IOException: disk
\tat com.acme.Io.write(Io.java:3)
\t... 12 more""".splitlines()

PYTHON = """2024-01-02 03:04:06,000 ERROR root: handler crashed
Traceback (most recent call last):
  File "app.py", line 3, in <module>
    main()
ValueError: bad value

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "app.py", line 5, in <module>
KeyError: 'x'""".splitlines()

GO = """panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.main()
\t/tmp/x.go:8 +0x1d
exit status 2""".splitlines()

NEXT = "2024-01-02 03:04:07,000 INFO next event"


def _records(lines):
    return list(MultilineJoiner().join(enumerate(lines)))


def test_a_java_stack_trace_joins_its_log_line():
    records = _records(JAVA + [NEXT])
    assert [r.text for r in records] == ["\n".join(JAVA), NEXT]
    assert records[0].position == 0 and records[0].lines == 7 and records[1].position == 7


def test_a_python_traceback_with_its_exception_line_and_chain_is_one_record():
    records = _records(PYTHON + [NEXT])
    assert len(records) == 2
    assert records[0].text.startswith("2024-01-02 03:04:06,000 ERROR root")
    assert records[0].text.endswith("KeyError: 'x'")
    assert "ValueError: bad value" in records[0].text
    assert records[1].text == NEXT


def test_a_go_panic_dump_is_one_record():
    records = _records(GO + [NEXT])
    assert len(records) == 2 and records[0].text.endswith("exit status 2")
    assert "main.main()" in records[0].text


def test_the_last_record_is_held_back_until_the_next_one_starts():
    joiner = MultilineJoiner()
    out = [r for i, line in enumerate(JAVA[:3]) for r in joiner.feed(i, line)]
    assert out == []  # the trace may still be growing
    assert joiner.pending_position == 0
    out = [r for i, line in enumerate(JAVA[3:], start=3) for r in joiner.feed(i, line)]
    assert out == []
    done = joiner.feed(7, NEXT)
    assert [r.text for r in done] == ["\n".join(JAVA)]
    assert joiner.pending_position == 7


def test_flush_releases_the_held_back_record():
    joiner = MultilineJoiner()
    for i, line in enumerate(PYTHON[:3]):
        joiner.feed(i, line)
    flushed = joiner.flush()
    assert [r.text for r in flushed] == ["\n".join(PYTHON[:3])]
    assert joiner.pending_position is None and joiner.flush() == []


def test_json_lines_are_never_joined():
    lines = ['{"msg": "a"}', '  {"msg": "indented"}', "\tat not.a.Frame(X.java:1)", '{"msg": "b"}']
    assert [r.text for r in _records(lines)] == lines


def test_lines_that_start_records_stay_apart():
    lines = ["Jun 14 15:16:01 combo sshd[1]: a", "Jun 14 15:16:02 combo sshd[1]: b",
             "[Sun Dec 04 04:47:44 2005] [error] c", "081109 203615 148 INFO dfs.X: d"]
    assert [r.text for r in _records(lines)] == lines


def test_newlines_and_trailing_blank_lines_are_not_kept():
    records = _records(["2024-01-02 03:04:05 ERROR x\r\n", "\tat a.B(C.java:1)\n", "", ""])
    assert [r.text for r in records] == ["2024-01-02 03:04:05 ERROR x\n\tat a.B(C.java:1)"]


def test_a_huge_record_keeps_its_first_lines_and_folds_the_rest_so_memory_stays_bounded():
    # issue 39.10: cut into records of their own, the rest of a trace opened incidents of their own
    joiner = MultilineJoiner(max_lines=3)
    lines = ["2024-01-02 03:04:05 ERROR x"] + ["\tat a.B(C.java:1)"] * 5 + ["2024-01-02 03:04:06 ERROR y"]
    first, second = joiner.join(enumerate(lines))
    assert (first.position, first.lines, first.last_position) == (0, 6, 5)
    assert first.text.split("\n") == lines[:3] + [
        "\t... 3 more lines not kept (a record keeps its first 3 lines, 262144 characters)"]
    assert (second.position, second.text) == (6, lines[6])


def test_a_record_past_its_character_cap_folds_too():
    joiner = MultilineJoiner(max_chars=100)
    lines = ["2024-01-02 03:04:05 ERROR x"] + ["\tat " + "a" * 40] * 4
    (record,) = joiner.join(enumerate(lines))
    assert record.lines == 5 and record.text.endswith("3 more lines not kept (a record keeps its first 1000 lines,"
                                                      " 100 characters)")


def test_a_report_after_a_whole_trace_is_a_record_of_its_own():
    """A Go panic's dump, then a Python traceback with no header, then a logger's line that ends with
    `Traceback (most recent call last):` and the traceback its exception line closes, then a JVM's
    exception (Ops Agent's language_exceptions test): four records, where a chained traceback stays one."""
    lines = ["2019/01/15 07:48:05 http: panic serving [::1]:54143: test panic", "goroutine 24 [running]:",
             "main.doPanic(0x12f0ea0)", "\t/src/httppanic.go:8 +0x39",
             "Traceback (most recent call last):", '  File "/app/x.py", line 5, in get', "    raise Exception('spam')",
             "Exception: ('spam',)",
             "2023-07-09 00:00:00,000 ERROR    some_app prefix: Traceback (most recent call last):",
             '  File "/app/x.py", line 5, in get', "    raise Exception('spam')", "Exception: ('spam',)",
             "java.lang.RuntimeException: boom", "\tat com.example.A.b(A.java:1)"]
    records = list(MultilineJoiner().join(enumerate(lines)))
    assert [r.position for r in records] == [0, 4, 8, 12]
    assert records[2].text.endswith("Exception: ('spam',)") and records[3].text.endswith("(A.java:1)")
    chained = ["2023-07-09 00:00:01,000 ERROR failed", "Traceback (most recent call last):",
               '  File "/app/y.py", line 1, in f', "KeyError: 'k'", "",
               "During handling of the above exception, another exception occurred:", "",
               "Traceback (most recent call last):", '  File "/app/y.py", line 3, in f', "ValueError: v"]
    assert [r.lines for r in MultilineJoiner().join(enumerate(chained))] == [10]


def test_the_lines_under_a_time_written_alone_are_its_records():
    """Oracle's alert log: each record's time on a line of its own, its message on the lines under it
    (Ops Agent's oracledb_alert test); a line with a header of its own still opens a record."""
    lines = ["2021-12-21T10:19:47.339827-05:00", "Thread 1 opened at log sequence 1",
             "Current log# 1 seq# 1 mem# 0: /u01/oracle/oradata/DB19C/redo01.log",
             "2021-12-21T10:19:48.339827-05:00", "Starting background process MMON",
             "2021-12-21 10:19:49 INFO another writer's line", "its own line"]
    records = list(MultilineJoiner().join(enumerate(lines)))
    assert [(r.position, r.lines) for r in records] == [(0, 3), (3, 2), (5, 1), (6, 1)]
