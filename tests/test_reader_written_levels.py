"""Levels, times and record bounds headers write in ways the learnt layout had missed (issue 34):
Monolog's `channel.LEVEL:`, Celery's `[stamp: LEVEL/process]`, a `[Level]` after a pid or a channel,
TAI64N labels, a file whose lines write their dates in several spellings. The lines are written here
in the manner of those loggers' documented formats (no third-party text)."""
from __future__ import annotations

from tests.support import read_lines as _write, utc



def test_monologs_channel_dot_level_is_the_level_and_the_channel_the_service(tmp_path):
    events = _write(tmp_path, [
        "[2024-03-01T08:00:01.123456+00:00] app.INFO: User 5 logged in {\"user\":5} []",
        "[2024-03-01T08:00:02.123456+00:00] request.CRITICAL: Uncaught exception: payment gateway down [] []",
        "[2024-03-01 08:00:03] local.WARNING: Cache miss for key users  "])
    assert [(e.level, e.service) for e in events] == [("INFO", "app"), ("FATAL", "request"), ("WARN", "local")]
    assert events[0].message.startswith("User 5 logged in")
    assert all("level_inferred" not in e.fields for e in events)


def test_celerys_bracket_gives_the_time_and_the_level(tmp_path):
    events = _write(tmp_path, [
        "[2024-03-01 08:00:01,123: INFO/MainProcess] Connected to redis://localhost:6379/0",
        "[2024-03-01 08:00:02,456: WARNING/MainProcess] worker ready after a failed retry",
        "[2024-03-01 08:00:03,789: ERROR/ForkPoolWorker-1] Task tasks.add[abc] raised unexpected: ValueError('x')"])
    assert [(e.time, e.level) for e in events] == [
        (utc(2024, 3, 1, 8, 0, 1, 123000), "INFO"), (utc(2024, 3, 1, 8, 0, 2, 456000), "WARN"),
        (utc(2024, 3, 1, 8, 0, 3, 789000), "ERROR")]
    assert events[0].message == "Connected to redis://localhost:6379/0"


def test_a_bracketed_level_after_a_pid_or_a_channel_is_written_not_guessed(tmp_path):
    events = _write(tmp_path, [
        "[2024-03-01 08:00:01 +0000] [17] [INFO] Booting worker after the old one failed",
        "[2024-03-01 08:00:02,580] ERROR in app: Exception on /api/users [POST]",
        "2024-03-01 08:00:03.025198 mon.a mon.0 10.0.0.4:6789/0 7 : audit [DBG] from='admin' cmd='status': dispatch"])
    assert [e.level for e in events] == ["INFO", "ERROR", "DEBUG"]
    assert "level_inferred" not in events[0].fields and "level_inferred" not in events[2].fields


def test_a_tai64n_label_is_the_records_time(tmp_path):
    # multilog writes 2^62 + 10 + the Unix second, then the nanosecond, in hex
    events = _write(tmp_path, ["@4000000065e18b0a1dcd6500 tcpserver: status: 1/30",
                               "@4000000065e18b0b00000000 tcpserver: pid 2616 from 192.0.2.40"])
    assert [e.time for e in events] == [utc(2024, 3, 1, 8, 0, 0, 500000), utc(2024, 3, 1, 8, 0, 1)]
    assert [e.service for e in events] == ["tcpserver", "tcpserver"]
    assert all("time_inferred" not in e.fields for e in events)


def test_each_line_is_read_by_the_layout_whose_time_it_writes(tmp_path):
    """MySQL's error log as its versions wrote it, in one file: a layout learnt from the others reads
    the ISO line's first two words as its time; that line is read by a layout of its own."""
    events = _write(tmp_path, [
        "2024-03-01T08:00:01.954078Z 0 [Warning] System table is expected to be transactional.",
        "240301 08:00:02  InnoDB: Shutdown completed; log sequence number 1595675",
        "2024-03-01  8:00:03 0 [Warning] You need to use --log-bin to make --expire-logs-days work.",
        "2024-03-01 18:00:04 139651251140544 [Note] InnoDB: The InnoDB memory heap is disabled",
        "2024-03-01  8:00:05 139651251140544 [Note] InnoDB: The InnoDB memory heap is disabled"])
    assert [e.time for e in events] == [utc(2024, 3, 1, 8, 0, 1, 954078), utc(2024, 3, 1, 8, 0, 2),
                                        utc(2024, 3, 1, 8, 0, 3), utc(2024, 3, 1, 18, 0, 4), utc(2024, 3, 1, 8, 0, 5)]

    assert all("time_inferred" not in e.fields for e in events)
    assert events[0].level == "WARN" and events[0].message == "System table is expected to be transactional."


def test_records_that_open_with_dates_in_several_spellings_keep_their_second_lines(tmp_path):
    """No one layout reads such a file, yet each record opens with a dated time: a line without one
    continues the record before it (IBM MQ's error log: a header line, then `EXPLANATION:`)."""
    events = _write(tmp_path, [
        "17/11/2024  10:32:29 - Process(2132.1) User(mqm) Program(runmqchi) AMQ9542: Queue manager is ending.",
        "EXPLANATION: The program will end because the queue manager is quiescing. ACTION: None.",
        "2024-11-18 19:21:00 - Process(26971.1) User(root) Program(setmqinst) AMQ6287: MQ V9.0.0.0.",
        "EXPLANATION: MQ system information: Host Info :- Linux ACTION: None."])
    assert len(events) == 2
    assert [e.time for e in events] == [utc(2024, 11, 17, 10, 32, 29), utc(2024, 11, 18, 19, 21)]
    assert all("EXPLANATION:" in f"{e.message}\n{e.stack}" for e in events)


def test_a_header_line_after_a_tab_is_a_record_of_its_own_and_a_traces_frames_still_continue(tmp_path):
    events = _write(tmp_path, [
        "2024/03/01 08:00:01 [ERROR] agent: failed to sync remote state",
        "\tat agent.sync(state.go:12)",
        "\t2024/03/01 08:00:05 [INFO] serf: EventMemberJoin: node-2 10.0.255.5",
        "2024/03/01 08:00:06 [WARN] agent: check is now critical"])
    assert [(e.time, e.level) for e in events] == [
        (utc(2024, 3, 1, 8, 0, 1), "ERROR"), (utc(2024, 3, 1, 8, 0, 5), "INFO"), (utc(2024, 3, 1, 8, 0, 6), "WARN")]
    assert events[0].stack.strip() == "at agent.sync(state.go:12)"
    assert events[1].message == "serf: EventMemberJoin: node-2 10.0.255.5"


def test_dotnets_console_record_takes_its_message_from_the_padded_line_below_its_header(tmp_path):
    """Microsoft.Extensions.Logging's console formatter: `level: Category[EventId]`, the message under it."""
    events = _write(tmp_path, [
        "info: Microsoft.Hosting.Lifetime[14]",
        "      Now listening on: http://localhost:5000",
        "warn: Microsoft.AspNetCore.HttpsPolicy.HttpsRedirectionMiddleware[3]",
        "      Failed to determine the https port for redirect.",
        "fail: Microsoft.AspNetCore.Server.Kestrel[13]",
        "      Connection id \"0HMV\": An unhandled exception was thrown by the application.",
        "      System.InvalidOperationException: the order service is down",
        "         at Orders.Api.Program.Main()"])
    assert [(e.level, e.service, e.message) for e in events] == [
        ("INFO", "Microsoft.Hosting.Lifetime", "Now listening on: http://localhost:5000"),
        ("WARN", "Microsoft.AspNetCore.HttpsPolicy.HttpsRedirectionMiddleware",
         "Failed to determine the https port for redirect."),
        ("ERROR", "Microsoft.AspNetCore.Server.Kestrel",
         "Connection id \"0HMV\": An unhandled exception was thrown by the application.")]
    assert events[2].exception == "System.InvalidOperationException"
    assert all("level_inferred" not in e.fields for e in events)


def test_a_stamp_alone_on_its_line_takes_its_message_from_the_next_line(tmp_path):
    """Oracle's alert log writes each record's time on a line of its own."""
    events = _write(tmp_path, ["2024-03-01T08:00:01.123456+00:00", "Starting ORACLE instance (normal)",
                               "2024-03-01T08:00:02.123456+00:00",
                               "ORA-00600: internal error code, arguments: [kcratr_nab_less_than_odr]"])
    assert [(e.time, e.message) for e in events] == [
        (utc(2024, 3, 1, 8, 0, 1, 123456), "Starting ORACLE instance (normal)"),
        (utc(2024, 3, 1, 8, 0, 2, 123456), "ORA-00600: internal error code, arguments: [kcratr_nab_less_than_odr]")]


def test_an_iso_ordinal_date_is_read_as_its_calendar_day(tmp_path):
    """ISO 8601's `yyyy-ddd` (the year's day), in a colon-joined header and in a learnt one."""
    events = _write(tmp_path, ["2012-025T10:22:40,672:DEBUG:cache warmed", "2014-333T16:56:38,344:WARN:disk at 91%"])
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2012, 1, 25, 10, 22, 40, 672000), "DEBUG", "cache warmed"),
        (utc(2014, 11, 29, 16, 56, 38, 344000), "WARN", "disk at 91%")]
    events = _write(tmp_path, ["2024-061T08:00:01.5Z web-1 payments: charge declined",
                               "2024-061T08:00:02.5Z web-1 payments: charge accepted"])
    assert [e.time for e in events] == [utc(2024, 3, 1, 8, 0, 1, 500000), utc(2024, 3, 1, 8, 0, 2, 500000)]


def test_weblogics_angled_stamp_is_read_whole_not_as_a_year_and_a_clock(tmp_path):
    """A spelling read by dateutil must write its month and day: `2019 11:37:16 AM` alone is not the first
    of January; the column's `####<` and `>` decoration are not the time's."""
    events = _write(tmp_path, [
        "####<Mar 15, 2019 11:37:16 AM UTC> <Info> <Server> <host1> <AdminServer> <main> <<WLS Kernel>> <> <> "
        "<1552649836123> <BEA-000365> <Server state changed to RUNNING.>",
        "####<Mar 15, 2019 11:37:17 AM UTC> <Error> <Deployer> <host1> <AdminServer> <main> <<WLS Kernel>> <> <> "
        "<1552649837123> <BEA-149205> <Failed to initialize the application.>"])
    assert [(e.time, e.level) for e in events] == [(utc(2019, 3, 15, 11, 37, 16), "INFO"),
                                                   (utc(2019, 3, 15, 11, 37, 17), "ERROR")]


def test_a_month_first_slashed_date_with_a_two_digit_year(tmp_path):
    """WebSphere's `[3/15/19 11:37:16:123 UTC]`: month, day, two-digit year, milliseconds after a colon."""
    events = _write(tmp_path, ["[3/15/19 11:37:16:123 UTC] 00000001 WsServerImpl  I   WSVR0001I: Server open",
                               "[3/15/19 11:37:17:456 UTC] 00000022 ServletWrappe E   SRVE0068E: An exception was thrown"])
    assert [(e.time, e.level) for e in events] == [(utc(2019, 3, 15, 11, 37, 16, 123000), "INFO"),
                                                   (utc(2019, 3, 15, 11, 37, 17, 456000), "ERROR")]


def test_a_space_padded_hour_and_a_level_word_in_the_prose_of_a_line_learnt_alone(tmp_path):
    """SSSD writes `(2024-03-01  8:00:01):` (the hour padded with a blank); a layout learnt from that one
    line does not take `debug` in `Starting with debug level` as its level column."""
    events = _write(tmp_path, ["(2024-03-01  8:00:01): [sssd] [server_setup] (0x0400): Starting with debug level = 0x0070",
                               "(Fri Mar  1 08:00:02 2024) [sssd[nss]] [nss_cmd_getpwnam] (0x0200): Running command [17]"])
    assert [e.time for e in events] == [utc(2024, 3, 1, 8, 0, 1), utc(2024, 3, 1, 8, 0, 2)]
    assert events[0].message == "Starting with debug level = 0x0070"


def test_a_level_written_as_a_header_after_a_prefix_of_words_is_the_level(tmp_path):
    """PostgreSQL's log_line_prefix may put the database, application and user before the level
    (`%m [%p] %d %a %u `): a layout learnt from one such line still reads `LOG:` and `ERROR:` as its level."""
    events = _write(tmp_path, ["2024-03-01 08:00:02.311 UTC [4121] shop psql alice ERROR:  relation \"orders\" does not exist"])
    assert [(e.level, e.message) for e in events] == [("ERROR", 'relation "orders" does not exist')]
