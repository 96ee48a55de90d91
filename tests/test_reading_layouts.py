"""A layout per line, not per file (issue 34.3), and records that span lines by the layout (34.4):
a file read through the product's reader (`LogFile`, as `ingest` and the poller read) gives each
record its own time, level, service and message, whichever of the source's layouts wrote it.
The lines are written here in the manner of the loggers named (no third-party text)."""
from __future__ import annotations


from tests.support import read_log as read, utc


def test_two_interleaved_layouts_are_each_read_with_their_own_header(tmp_path):
    # an application's logback lines and, in the same file, a sidecar's lines in a layout no known
    # format holds (a bracketed dotted date, an angle-bracketed level, a `component:` tag)
    lines = []
    for i in range(40):
        lines.append(f"2024-03-01 08:{i:02d}:00,{i:03d} {'ERROR' if i % 5 == 0 else 'INFO '} [main] "
                     f"com.shop.Cart - cart {i} {'failed to total' if i % 5 == 0 else 'totalled'}")
        lines.append(f"[01.03.2024 08:{i:02d}:30] <{'warn' if i % 4 == 0 else 'info'}> billing-agent: "
                     f"queue depth {i * 3}")
    path = tmp_path / "mixed.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    assert len(events) == 80
    for i in range(40):
        app, side = events[2 * i], events[2 * i + 1]
        assert "time_inferred" not in app.fields and "time_inferred" not in side.fields
        assert app.time == utc(2024, 3, 1, 8, i, 0, i * 1000)
        assert app.level == ("ERROR" if i % 5 == 0 else "INFO")
        assert app.message == f"cart {i} {'failed to total' if i % 5 == 0 else 'totalled'}"
        assert side.time == utc(2024, 3, 1, 8, i, 30)
        assert side.level == ("WARN" if i % 4 == 0 else "INFO")
        assert side.service == "billing-agent"
        assert side.message == f"queue depth {i * 3}"


def test_a_layout_that_changes_mid_file_without_rotation_is_learnt_from_its_own_lines(tmp_path):
    # 300 lines of a `|`-separated layout (past the 200 lines a layout is learnt from), then the
    # application is upgraded and writes a day-first layout with a one-letter level, in the same file
    first = [f"2024-03-01 08:{i // 60:02d}:{i % 60:02d} | {'WARN' if i % 7 == 0 else 'INFO'} | api | "
             f"request {i} served" for i in range(300)]
    later = [f"14/03/2024 09:15:{i:02d}.{i * 10:03d} {'EWI'[i % 3]} [worker-{i % 2}] job {i} "
             f"{['failed: timeout', 'retried', 'done'][i % 3]}" for i in range(30)]
    path = tmp_path / "upgraded.log"
    path.write_text("\n".join(first + later) + "\n")
    events = read(path)
    assert len(events) == 330
    for i, event in enumerate(events[:300]):
        assert event.time == utc(2024, 3, 1, 8, i // 60, i % 60)
        assert event.level == ("WARN" if i % 7 == 0 else "INFO")
        assert (event.service, event.message) == ("api", f"request {i} served")
    for i, event in enumerate(events[300:]):
        assert "time_inferred" not in event.fields
        assert event.time == utc(2024, 3, 14, 9, 15, i, i * 10_000)
        assert event.level == ["ERROR", "WARN", "INFO"][i % 3]
        assert event.message == f"job {i} {['failed: timeout', 'retried', 'done'][i % 3]}"
        assert not event.message.startswith(("14/03", "E ", "W ", "I "))


def test_java_util_logging_records_take_their_level_and_message_from_the_second_line(tmp_path):
    # Tomcat <= 7 (java.util.logging's SimpleFormatter, `%1$tb %1$td, %1$tY %1$tl:%1$tM:%1$tS %1$Tp
    # %2$s%n%4$s: %5$s%6$s%n`): a header of time and class + method, then `LEVEL: message`
    path = tmp_path / "catalina.out"
    path.write_text(
        "Mar 02, 2014 8:11:10 AM org.apache.catalina.startup.HostConfig deployDirectory\n"
        "INFO: Deploying web application directory /opt/tomcat/webapps/shop\n"
        "Mar 02, 2014 8:11:13 AM org.apache.catalina.core.StandardContext startInternal\n"
        "SEVERE: Context [/shop] startup failed due to previous errors\n"
        "java.lang.IllegalStateException: no datasource\n"
        "\tat com.shop.Boot.init(Boot.java:12)\n"
        "Mar 02, 2014 12:14:04 PM org.apache.catalina.startup.Catalina start\n"
        "WARNING: Server startup in 12985 ms\n")
    events = read(path)
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2014, 3, 2, 8, 11, 10), "INFO", "Deploying web application directory /opt/tomcat/webapps/shop"),
        (utc(2014, 3, 2, 8, 11, 13), "ERROR", "Context [/shop] startup failed due to previous errors"),
        (utc(2014, 3, 2, 12, 14, 4), "WARN", "Server startup in 12985 ms")]
    assert events[1].service == "org.apache.catalina.core.StandardContext"
    assert events[1].exception == "java.lang.IllegalStateException"
    assert events[1].stack.startswith("java.lang.IllegalStateException: no datasource\n\tat com.shop.Boot")


def test_a_gc_logs_unindented_continuations_belong_to_the_record_before(tmp_path):
    # JDK 8's -XX:+PrintGCDetails -XX:+PrintGCDateStamps: a collection's lines after its first start
    # without a header, and without indentation
    first = ("2018-06-30T16:35:26.632+0500: 224.671: [GC (Allocation Failure) 2018-06-30T16:35:26.632+0500: "
             "224.671: [ParNew")
    path = tmp_path / "gc.log"
    path.write_text(
        f"{first}\n"
        "Desired survivor size 17432576 bytes, new threshold 6 (max 6)\n"
        "- age   1:    3447528 bytes,    3447528 total\n"
        ": 139776K->17472K(157248K), 0.0271239 secs] 139776K->20125K(506816K), 0.0272064 secs] "
        "[Times: user=0.05 sys=0.01, real=0.03 secs]\n"
        "2018-06-30T16:35:27.100+0500: 225.139: Total time for which application threads were stopped: "
        "0.0283760 seconds, Stopping threads took: 0.0000702 seconds\n")
    events = read(path)
    assert len(events) == 2
    assert events[0].time == utc(2018, 6, 30, 11, 35, 26, 632000)
    body = events[0].message + "\n" + (events[0].stack or "")
    assert "Desired survivor size" in body and "- age   1:" in body and ": 139776K->17472K" in body
    assert events[1].time == utc(2018, 6, 30, 11, 35, 27, 100000)
    assert events[1].message.startswith("225.139: Total time")


def test_a_go_panic_is_one_record_ending_where_the_next_header_starts(tmp_path):
    # Go's standard log (a message printed with newlines in it continues on unindented lines), then
    # the runtime's panic dump (`panic: ...`, a blank line, `goroutine N [state]:`, unindented
    # function names with indented file lines, `exit status 2`)
    path = tmp_path / "worker.log"
    path.write_text(
        "2024/05/06 10:00:00 starting worker pool size=4\n"
        "2024/05/06 10:00:01 job 1 done, config now:\n"
        "workers=4\n"
        "queue=jobs\n"
        "panic: runtime error: index out of range [5] with length 3\n"
        "\n"
        "goroutine 7 [running]:\n"
        "main.(*Pool).run(0xc000010000, 0x5)\n"
        "\t/src/app/pool.go:42 +0x1d\n"
        "main.main()\n"
        "\t/src/app/main.go:17 +0x65\n"
        "exit status 2\n"
        "2024/05/06 10:00:05 restarted by supervisor\n")
    events = read(path)
    assert [e.message for e in events] == ["starting worker pool size=4", "job 1 done, config now:",
                                           "panic: runtime error: index out of range [5] with length 3",
                                           "restarted by supervisor"]
    assert events[1].stack == "workers=4\nqueue=jobs"
    panic = events[2]
    assert panic.exception == "panic" and panic.level in ("ERROR", "FATAL")
    assert panic.stack.startswith("goroutine 7 [running]:") and panic.stack.endswith("exit status 2")
    assert events[3].time == utc(2024, 5, 6, 10, 0, 5) and "time_inferred" not in events[3].fields


BACKGROUND = ["checkpoint starting: time", 'automatic vacuum of table "shop.public.orders": index scans: 1',
              "database system is ready to accept connections"]


def test_postgresql_with_debians_prefix_reads_level_and_message_and_sql_is_no_stack_trace(tmp_path):
    # Debian's default log_line_prefix, '%m [%p] %q%u@%d ' (postgresql-common): a session's lines
    # carry user@db, a background process's (after %q) do not
    from pipeline.incidents.opening import OpeningRule

    lines = []
    for i in range(6):
        lines += [
            f"2024-01-02 10:11:{i:02d}.100 UTC [{100 + i}] app@shop LOG:  duration: 1.{i} ms  statement: SELECT id,",
            "\t\tname",
            "\tFROM users",
            f"\tWHERE id = {i};",
            f"2024-01-02 10:11:{i:02d}.200 UTC [98] LOG:  {BACKGROUND[i % 3]}",
            f"2024-01-02 10:11:{i:02d}.300 UTC [{200 + i}] postgres@postgres ERROR:  relation \"t{i}\" does not exist",
            f"2024-01-02 10:11:{i:02d}.400 UTC [{200 + i}] postgres@postgres STATEMENT:  SELECT * FROM t{i};",
        ]
    path = tmp_path / "postgresql-16-main.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    assert len(events) == 24
    rule = OpeningRule()
    for i in range(6):
        statement, checkpoint, error, sql = events[4 * i: 4 * i + 4]
        assert statement.time == utc(2024, 1, 2, 10, 11, i, 100000)
        assert statement.level == "INFO" and statement.stack is None
        assert statement.message == f"duration: 1.{i} ms  statement: SELECT id,\n\t\tname\n\tFROM users\n\tWHERE id = {i};"
        assert (checkpoint.level, checkpoint.message) == ("INFO", BACKGROUND[i % 3])
        assert (error.level, error.message) == ("ERROR", f'relation "t{i}" does not exist')
        assert (sql.level, sql.message) == ("INFO", f"SELECT * FROM t{i};")
        assert not rule.opens(statement) and not rule.opens(checkpoint) and not rule.opens(sql)
        assert rule.opens(error)
    assert not any("@" in e.message.split(":")[0] or "LOG:" in e.message for e in events)


def test_a_syslog_file_of_long_indented_records_keeps_its_format_and_its_messages_whole(tmp_path):
    # the indented lines continue records and say nothing of the header: syslog reads every record's
    # first line, so the file is syslog and the program's own text (a time of its own first) is the
    # message, not read as a second header; syslogd's own `--- last message repeated ---` has no host
    record = ["Dec 13 11:35:28 mac-mini updater[214]: 2016-12-13 11:35:28.420 updater[214/0x7000] [lvl=2] "
              "checking for updates using engine <Engine:0x1003"]
    record += [f"\t\tstore{n}=<Store:0x10{n} path=\"/var/db/store{n}\">" for n in range(12)]
    path = tmp_path / "system.log"
    path.write_text("\n".join(record + ["Dec 13 11:35:29 mac-mini updater[214]: 2016-12-13 11:35:29.001 "
                                        "updater[214/0x7000] [lvl=2] done",
                                        "Apr  4 03:39:57 --- last message repeated 1 time ---"]) + "\n")
    events = read(path)
    assert [e.fields["format"] for e in events] == ["syslog"] * 3
    assert events[0].message.startswith("2016-12-13 11:35:28.420 updater[214/0x7000] [lvl=2] checking")
    assert events[0].service == "updater" and events[0].stack.count("\n") == 11
    assert events[1].message == "2016-12-13 11:35:29.001 updater[214/0x7000] [lvl=2] done"
    assert events[2].message == "--- last message repeated 1 time ---" and events[2].host is None
    assert (events[2].time.month, events[2].time.day, events[2].time.hour) == (4, 4, 3)


def test_a_cisco_style_message_code_gives_the_level_it_writes(tmp_path):
    # `%FACILITY[-SUB]-SEVERITY-MNEMONIC`: the digit is the syslog severity, whether the code is read
    # as the syslog tag (ASA) or stays in the message (IOS's `*Mar  1 ...: %LINK-3-UPDOWN:`)
    path = tmp_path / "asa.log"
    path.write_text(
        "Jul 15 13:38:14 10.0.0.1 : %ASA-6-302013: Built inbound TCP connection 1 for dmz:a/80 to in:b/80\n"
        "Jul 15 13:38:15 10.0.0.1 : %ASA-4-106023: Deny tcp src outside:c/9 dst inside:d/22\n"
        "Jul 15 13:38:16 10.0.0.1 : %ASA-3-710003: TCP access denied by ACL from e/1 to outside:f/443\n")
    assert [e.level for e in read(path)] == ["INFO", "WARN", "ERROR"]
    path = tmp_path / "ios.log"
    path.write_text("*Mar  1 18:46:11: %LINK-3-UPDOWN: Interface Ethernet0/0, changed state to down\n"
                    "*Mar  1 18:46:12: %SYS-5-CONFIG_I: Configured from console by vty0\n")
    assert [e.level for e in read(path)] == ["ERROR", "INFO"]


def test_a_layout_learnt_later_never_shadows_the_files_own_and_unread_lines_are_not_swallowed(tmp_path):
    # a logback file (a known format), then a proxy's lines (bracketed, tight columns: learnt from
    # them) and a line in a layout nothing here learns, each between two of the file's own lines
    own = [f"2024-03-01 08:{i % 60:02d}:00,{i % 1000:03d} INFO  [main] com.shop.App - tick {i}" for i in range(260)]
    proxy = [f"[2024-03-01 09:{i:02d}:02.123][12][warning][upstream] host {i} unhealthy" for i in range(5)]
    odd = "09:30:01.123 [error] GenServer Billing.Worker terminating"  # Elixir's Logger: a time, no date
    lines = own[:250]
    for i in range(5):
        lines += [proxy[i], own[250 + i]]
    lines += [odd, own[255]]
    path = tmp_path / "app.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    assert len(events) == len(lines)  # no line joined another: each opens with a time of its own
    for event in events:
        if event.message.startswith("tick"):
            assert event.fields["format"] == "log4j" and event.service == "com.shop.App"
            assert event.level == "INFO" and not event.stack
    learnt = [e for e in events if "unhealthy" in e.message]
    assert [(e.time, e.level, e.message) for e in learnt] == [
        (utc(2024, 3, 1, 9, i, 2, 123000), "WARN", f"host {i} unhealthy") for i in range(5)]
    # a time of day without a date is a header too: its line teaches the set a layout of its own
    assert events[-2].message == "GenServer Billing.Worker terminating" and events[-2].level == "ERROR"
    assert events[-2].time.time().isoformat() == "09:30:01.123000" and "time_inferred" not in events[-2].fields


def test_a_bracketed_time_in_a_spelling_no_shape_knows_is_read_from_its_words(tmp_path):
    # PHP-FPM's `[01-Mar-2024 08:00:03] WARNING: [pool www] ...`: python-dateutil reads the bracket's
    # two words; the layout's time takes both, not the first alone
    path = tmp_path / "php-fpm.log"
    path.write_text("".join(f"[0{1 + i % 9}-Mar-2024 08:00:{i:02d}] {'WARNING' if i % 2 else 'NOTICE'}: "
                            f"[pool www] child {100 + i} exited with code 0\n" for i in range(12)))
    events = read(path)
    assert [(e.time, e.level) for e in events] == [
        (utc(2024, 3, 1 + i % 9, 8, 0, i), "WARN" if i % 2 else "INFO") for i in range(12)]
    assert all(e.message.endswith(f"child {100 + i} exited with code 0") for i, e in enumerate(events))
    assert not any(e.message.startswith(("[0", "WARNING", "NOTICE")) for e in events)


def test_an_uncaught_exception_after_an_info_record_is_a_record_of_its_own_and_opens(tmp_path):
    # the JVM prints an uncaught exception to the same stream as the logger: in a source whose records
    # open with a header, it is still no continuation of the INFO line before it
    from pipeline.incidents.opening import OpeningRule

    path = tmp_path / "stdout.log"
    path.write_text(
        "2024-03-01 08:00:00,101 INFO  [main] com.shop.App - started\n"
        "some line the app printed without a header\n"
        "Exception in thread \"main\" java.lang.NullPointerException: cart\n"
        "\tat com.shop.App.main(App.java:10)\n"
        "2024-03-01 08:00:01,202 INFO  [main] com.shop.App - stopped\n")
    events = read(path)
    assert [e.message.split("\n")[0] for e in events] == [
        "started", 'Exception in thread "main" java.lang.NullPointerException: cart', "stopped"]
    assert events[0].message == "started\nsome line the app printed without a header"
    assert events[1].exception == "java.lang.NullPointerException" and OpeningRule().opens(events[1])
    assert not OpeningRule().opens(events[0])


def test_a_time_that_shares_its_bracket_with_other_words_is_read(tmp_path):
    # Ruby's Logger: `E, [2024-03-01T08:00:01.123456 #1234] ERROR -- billing: charge 1 failed`
    levels = ["INFO", "ERROR", "WARN", "DEBUG"]
    path = tmp_path / "production.log"
    path.write_text("".join(f"{levels[i % 4][0]}, [2024-03-01T08:00:{i:02d}.123456 #{1230 + i % 3}]  "
                            f"{levels[i % 4]:>5} -- billing: charge {i} done\n" for i in range(12)))
    events = read(path)
    assert [(e.time, e.level, e.service, e.message) for e in events] == [
        (utc(2024, 3, 1, 8, 0, i, 123456), levels[i % 4], "billing", f"charge {i} done") for i in range(12)]


def test_the_layout_command_shows_every_layout_of_the_sample_and_that_records_open_with_the_header(tmp_path, capsys):
    from tests.support import cli_json

    path = tmp_path / "postgresql.log"
    path.write_text("".join(
        f"2024-01-02 10:11:{i:02d}.100 UTC [{100 + i}] app@shop LOG:  statement: SELECT {i}\n"
        f"2024-01-02 10:11:{i:02d}.200 UTC [98] LOG:  {BACKGROUND[i % 3]}\n" for i in range(6)))
    data = cli_json(capsys, "layout", str(path))
    assert data["format"] == "learned" and data["headed"] is True
    assert data["columns"] == ["time", "pid", "other", "level"]
    assert [other["columns"] for other in data["more_layouts"]] == [["time", "pid", "level"]]


def test_a_printed_json_body_continues_its_record_and_a_json_line_is_its_own(tmp_path):
    path = tmp_path / "app.log"
    path.write_text('2024-03-01 08:00:00,101 INFO  [main] com.shop.App - config:\n{\n  "pool": 4\n}\n'
                    '{"time": "2024-03-01T08:00:01Z", "level": "error", "msg": "json line"}\n'
                    "2024-03-01 08:00:02,101 INFO  [main] com.shop.App - done\n")
    events = read(path)
    assert [e.message for e in events] == ['config:\n{\n  "pool": 4\n}', "json line", "done"]
    assert events[1].level == "ERROR" and events[1].time == utc(2024, 3, 1, 8, 0, 1)


def test_a_level_first_layout_interleaved_with_another_is_read_with_its_own_level_and_time(tmp_path):
    # a Go program's standard `log` lines and, in the same stream, a Java server's log4j lines whose
    # header writes the level and the thread before the time (`%-5level [%thread] %date %file:%line - `):
    # an INFO that says a peer is `DOWN` stays INFO, a WARN that says operations `timed out` stays WARN
    path = tmp_path / "mixed.log"
    path.write_text(
        "2026/11/14 16:20:01 writer: flushed 512 events in 38ms\n"
        "2026/11/14 16:20:02 writer: flushed 498 events in 41ms\n"
        "2026/11/14 16:20:02 api: GET /users/1182/feed 200 (21ms)\n"
        "WARN  [Service Thread] 2026-11-14 16:20:03,877 GCInspector.java:282 - Old Generation GC in 9211ms\n"
        "2026/11/14 16:20:04 writer: insert batch failed: no response received within timeout period\n"
        "INFO  [GossipStage:1] 2026-11-14 16:20:05,310 Gossiper.java:1105 - InetAddress /10.4.1.22:7000 is now DOWN\n"
        "WARN  [ScheduledTasks:1] 2026-11-14 16:20:06,118 MonitoringTask.java:173 - 41 operations timed out\n")
    events = read(path)
    assert [e.level for e in events][3:] == ["WARN", "ERROR", "INFO", "WARN"]
    assert events[5].time == utc(2026, 11, 14, 16, 20, 5, 310_000)
    assert events[5].message == "InetAddress /10.4.1.22:7000 is now DOWN"
    assert "level_inferred" not in events[5].fields


def test_a_word_colon_after_a_free_status_word_is_the_messages_not_the_component(tmp_path):
    # a job runner's `[job N] [schedule] STATUS ACTION: detail`: the action word after a status word is
    # what the record says happened, not the program that wrote it; `host tag[pid]:` stays a header
    path = tmp_path / "jobs.log"
    path.write_text('2024-03-05 09:10:11 [job 7] START: source "/srv/a"\n'
                    '2024-03-05 09:10:11 [job 7] [nightly] DONE COPY: source "/srv/a", 1200 files, 3.1 MB/s\n'
                    '2024-03-05 09:10:12 [job 7] [nightly] FAILED VERIFY: source "/srv/b", checksum mismatch\n'
                    '2024-03-05 09:10:15 [job 8] START: source "/srv/c"\n'
                    '2024-03-05 09:10:16 [job 8] [weekly] DONE COPY: source "/srv/c", 80 files, 2.0 MB/s\n'
                    '2024-03-05 09:10:19 [job 8] [weekly] DONE PRUNE: source "/srv/c", 4 snapshots\n')
    events = read(path)
    assert events[2].message == '[nightly] FAILED VERIFY: source "/srv/b", checksum mismatch'
    assert events[2].fields["thread"] == "job 7" and events[2].time == utc(2024, 3, 5, 9, 10, 12)
    assert not any(e.service in ("COPY", "VERIFY", "PRUNE", "START") for e in events)
    syslog_like = tmp_path / "edge.log"
    syslog_like.write_text("2024-03-05 09:10:11 edge cron[101]: job started\n"
                           "2024-03-05 09:10:12 edge backupd[7]: copy done, 1200 files\n")
    assert [(e.host, e.service, e.message) for e in read(syslog_like)] == [
        ("edge", "cron", "job started"), ("edge", "backupd", "copy done, 1200 files")]


def test_a_level_word_among_the_times_bracket_columns_is_the_level(tmp_path):
    """dd-trace-dotnet's simple text formatter: `[time | service | INF] message | exception`; the
    level is the capitalised level word among the bracket's `|`-cut columns, not one guessed from
    the word `Exception` in the message."""
    path = tmp_path / "tracer.log"
    path.write_text("[2000-01-01 04:00:00.000 +00:00 | DD_TRACE_DOTNET | INF] This is log number 1 | System.Exception: boom\n"
                    "[2000-01-01 04:00:01.000 +00:00 | DD_TRACE_DOTNET | WRN] Slow flush\n")
    events = read(path)
    assert [e.level for e in events] == ["INFO", "WARN"]
    assert events[0].message.startswith("This is log number 1") and events[0].time == utc(2000, 1, 1, 4, 0, 0)
