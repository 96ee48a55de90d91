"""Header kinds the reader missed on an outside bed (issue 34, session 44): a W3C `time` column with
no `date` column (its day is the `#Date:` directive's), Apache 2.4's `[module:level]` with an empty
module, header fields joined by colons instead of spaces, numbered debug levels in a level column.
Read through the product's reader (`LogFile`, as `ingest` and the poller read); every line is
written here in the manner of those loggers (no third-party text)."""
from __future__ import annotations


from tests.support import read_log as read, utc


def test_a_w3c_time_column_without_a_date_column_is_on_the_day_of_the_date_directive(tmp_path):
    path = tmp_path / "ftp.log"
    path.write_text("#Software: Some FTP Service 7.0\n#Version: 1.0\n#Date: 2019-03-04 22:10:00\n"
                    "#Fields: time c-ip cs-method cs-uri-stem sc-status\n"
                    "22:10:00 10.0.0.5 [7]USER deploy 331\n"
                    "22:31:12 10.0.0.5 [7]STOR build.tgz 226\n"
                    "00:02:09 10.0.0.5 [7]QUIT - 221\n"  # past midnight under the same header
                    "#Date: 2019-03-06 08:00:00\n"
                    "08:15:30 10.0.0.9 [8]USER ops 331\n")
    events = read(path)
    assert [e.time for e in events] == [utc(2019, 3, 4, 22, 10, 0), utc(2019, 3, 4, 22, 31, 12),
                                        utc(2019, 3, 5, 0, 2, 9), utc(2019, 3, 6, 8, 15, 30)]
    assert all("time_inferred" not in e.fields for e in events)
    assert "[7]STOR" in events[1].message and "22:31:12" not in events[1].message


def test_apache_24_levels_are_read_with_any_module_prefix_an_empty_one_included(tmp_path):
    path = tmp_path / "error.log"
    path.write_text(
        "[Mon Jan 06 09:00:01.100200 2020] [mpm_event:notice] [pid 11:tid 12] AH00489: server resuming\n"
        "[Mon Jan 06 09:00:02.000300 2020] [rewrite:warn] [pid 13] [client 10.1.1.1:5000] loop detected\n"
        "[Mon Jan 06 09:00:03.000400 2020] [:error] [pid 14] [client 10.1.1.2:5001] PHP Warning:  bad offset\n"
        "[Mon Jan 06 09:00:04.000500 2020] [http2:info] [pid 15] stream 3 closed by the peer after an error\n")
    events = read(path)
    assert [e.level for e in events] == ["INFO", "WARN", "ERROR", "INFO"]
    assert events[2].time == utc(2020, 1, 6, 9, 0, 3, 400)
    assert events[2].message.endswith("PHP Warning:  bad offset")


def test_a_stamp_joined_to_its_level_by_colons_gives_time_and_level(tmp_path):
    # Python's logging with format='%(asctime)s:%(levelname)s:%(message)s'
    path = tmp_path / "job.log"
    path.write_text("2021-05-06 07:08:09,101:INFO:nightly export started\n"
                    "2021-05-06 07:09:10,202:ERROR:export to the bucket timed out\n")
    events = read(path)
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2021, 5, 6, 7, 8, 9, 101000), "INFO", "nightly export started"),
        (utc(2021, 5, 6, 7, 9, 10, 202000), "ERROR", "export to the bucket timed out")]


def test_a_colon_joined_level_padded_to_its_column_width_is_still_the_level(tmp_path):
    # a formatter that pads the level to five characters before the colon (`INFO :`, `WARN :`,
    # `ERROR:`), lines of one file mixing widths
    path = tmp_path / "server.log"
    path.write_text("2021-05-06 07:08:09.101:INFO :svc.Boot:main: listening on 8080\n"
                    "2021-05-06 07:08:10.202:WARN :svc.Pool:main: pool nearly full\n"
                    "2021-05-06 07:08:11.303:ERROR:svc.Pool:main: pool exhausted\n")
    events = read(path)
    assert [(e.time, e.level) for e in events] == [(utc(2021, 5, 6, 7, 8, 9, 101000), "INFO"),
                                                   (utc(2021, 5, 6, 7, 8, 10, 202000), "WARN"),
                                                   (utc(2021, 5, 6, 7, 8, 11, 303000), "ERROR")]
    assert events[1].message.endswith("pool nearly full") and "07:08" not in events[1].message


def test_a_thread_level_time_header_joined_by_double_colons_reads_and_keeps_its_trace(tmp_path):
    # format='%(threadName)s::%(levelname)s::%(asctime)s::%(module)s::%(lineno)d::%(name)s::(%(funcName)s) %(message)s'
    path = tmp_path / "agent.log"
    path.write_text(
        "MainThread::INFO::2022-02-03 04:05:06,700::agent::30::agent.main::(start) agent 2.1 starting\n"
        "Worker-3::ERROR::2022-02-03 04:05:07,800::jobs::88::agent.jobs::(run) job 17 failed\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/agent/jobs.py", line 86, in run\n'
        "    self.step()\n"
        "OSError: disk full\n"
        "Worker-4::DEBUG::2022-02-03 04:05:08,900::jobs::12::agent.jobs::(poll) [10.2.3.4]::queue empty\n")
    events = read(path)
    assert [(e.time, e.level) for e in events] == [(utc(2022, 2, 3, 4, 5, 6, 700000), "INFO"),
                                                   (utc(2022, 2, 3, 4, 5, 7, 800000), "ERROR"),
                                                   (utc(2022, 2, 3, 4, 5, 8, 900000), "DEBUG")]
    assert events[0].message == "agent 2.1 starting"
    assert events[1].message.startswith("job 17 failed") and "OSError: disk full" in (events[1].stack or "")
    assert events[1].fields["thread"] == "Worker-3" and events[1].service == "agent.jobs"
    assert events[2].message == "[10.2.3.4]::queue empty"


def test_numbered_debug_levels_and_a_word_no_list_holds_leave_the_level_column_a_level_column(tmp_path):
    path = tmp_path / "daemon.log"
    words = ["notice", "debug1", "debug4", "info", "warning", "bogus", "error", "debug2"]
    path.write_text("".join(f"2023-08-09 10:00:0{i} {w} step {i} of the rollout\n" for i, w in enumerate(words)))
    events = read(path)
    assert [e.level for e in events] == ["INFO", "DEBUG", "DEBUG", "INFO", "WARN", None, "ERROR", "DEBUG"]
    assert [e.message for e in events] == [f"step {i} of the rollout" for i in range(8)]


def test_a_bracketed_level_after_a_slashed_stamp_wins_over_words_in_the_message(tmp_path):
    path = tmp_path / "edge.log"
    path.write_text("2020/02/03 04:05:06 [error] upstream said: fatal handshake alert\n"
                    "2020/02/03 04:05:07 [warn] retrying after a critical timeout\n")
    events = read(path)
    assert [(e.time, e.level) for e in events] == [(utc(2020, 2, 3, 4, 5, 6), "ERROR"), (utc(2020, 2, 3, 4, 5, 7), "WARN")]
    assert events[0].message == "upstream said: fatal handshake alert"


def test_network_device_syslog_with_sequence_numbers_clock_marks_and_year_first_stamps(tmp_path):
    path = tmp_path / "switch.log"
    path.write_text("<187>88231: Jun  2 11:04:05.250: %LINK-3-UPDOWN: Interface Te1/0/4, changed state to down\n"
                    "<189>88232: *Jun  2 11:04:07.001: %SYS-5-CONFIG_I: Configured from console by admin\n"
                    "<190>88233: .Jun  2 11:04:09.900: %SEC-6-IPACCESSLOGS: list 12 permitted 10.9.9.9 1 packet\n"
                    "<188>: 2019 Jun  2 13:04:11 CEST: %PLATFORM-4-TEMP: module 2 temperature high\n")
    events = read(path)
    assert [e.level for e in events] == ["ERROR", "INFO", "INFO", "WARN"]
    assert [e.time.strftime("%m-%d %H:%M:%S") for e in events[:3]] == ["06-02 11:04:05", "06-02 11:04:07",
                                                                       "06-02 11:04:09"]
    assert events[3].time == utc(2019, 6, 2, 11, 4, 11)  # CEST is +02:00
    assert events[1].message == "%SYS-5-CONFIG_I: Configured from console by admin"


def test_a_zone_written_after_a_year_less_device_time_is_that_times_zone(tmp_path):
    # a device buffer's `Mon dd hh:mm:ss.fff ZONE:` without a year: the abbreviation still names the
    # offset (EST is -05:00, CET +01:00), as it does when the year is written
    path = tmp_path / "switch.log"
    path.write_text("000101: Mar  3 09:15:00.125 EST: %LINK-3-UPDOWN: Interface Gi1/0/2, changed state to down\n"
                    "000102: Mar  3 15:16:01.500 CET: %SYS-5-CONFIG_I: Configured from console by admin\n")
    events = read(path)
    assert [e.time.strftime("%m-%d %H:%M:%S.%f") for e in events] == ["03-03 14:15:00.125000",
                                                                      "03-03 14:16:01.500000"]
    assert all("time_inferred" not in e.fields for e in events)


def test_syslog_with_a_space_after_the_priority_or_a_colon_after_the_clock(tmp_path):
    path = tmp_path / "relay.log"
    path.write_text("<11> Feb  9 08:00:01 gw1 pppd[77]: link went away\n"
                    "<14>Feb 9 08:00:02: gw1 pppd[77]: link is back\n"
                    "<12>Feb  9 08:00:03 gw1 pppd[77]: slow peer\n")
    events = read(path)
    assert [(e.time.strftime("%m-%d %H:%M:%S"), e.level, e.message) for e in events] == [
        ("02-09 08:00:01", "ERROR", "link went away"), ("02-09 08:00:02", "INFO", "link is back"),
        ("02-09 08:00:03", "WARN", "slow peer")]


def test_a_json_body_under_a_year_less_syslog_header_gives_its_own_dated_time(tmp_path):
    # the time key comes after a long value: the whole object is read, not its first characters
    detail = "x" * 600
    lines = [f'Apr {d} 09:00:0{d} node-7 sensor: {{"text": "probe {d} tripped {detail}", '
             f'"eventTime": "2021-04-0{d}T09:00:0{d}.250Z", "sev": "Warning"}}\n' for d in (1, 2)]
    path = tmp_path / "sensor.log"
    path.write_text("".join(lines))
    events = read(path)
    assert [e.time for e in events] == [utc(2021, 4, 1, 9, 0, 1, 250000), utc(2021, 4, 2, 9, 0, 2, 250000)]


def test_a_stamp_quoted_in_a_message_is_not_read_as_the_records_header(tmp_path):
    # a parser's error quoting the line it could not read; its trace repeats the quote
    quoted = "2019-07-08 01:02:03,004 TRACE Foo - bar"
    path = tmp_path / "collector.log"
    path.write_text(
        "2019-07-08 09:00:00,100 INFO Loader - reading input\n"
        f"2019-07-08 09:00:01,200 ERROR Loader - cannot parse line '{quoted}', reason : 'bad line {quoted}'\n"
        f"org.example.ParseException: cannot parse line '{quoted}'\n"
        + "".join(f"\tat org.example.Loader.step{i}(Loader.java:{i})\n" for i in range(20))
        + f"Caused by: org.example.ParseException: bad line {quoted}\n"
        + "".join(f"\tat org.example.Lexer.next{i}(Lexer.java:{i})\n" for i in range(20)))
    events = read(path)
    assert [(e.time, e.level) for e in events[:2]] == [(utc(2019, 7, 8, 9, 0, 0, 100000), "INFO"),
                                                       (utc(2019, 7, 8, 9, 0, 1, 200000), "ERROR")]
    assert events[1].message.startswith("Loader - cannot parse line")
    assert len(events) == 2 and "Caused by: org.example.ParseException" in (events[1].stack or "")


def test_syslog_with_a_wider_gap_an_address_after_the_host_or_an_empty_pid_keeps_its_header(tmp_path):
    # an appliance's syslog: a blank run before the host, the sender's address after its name, a tag
    # whose pid brackets are empty; the body's own dated stamp is the time, as under any year-less header
    path = tmp_path / "appliance.log"
    path.write_text("<30>Sep  4 10:11:12 dns-a.corp.example portal[]: 2023-09-04 08:11:12.120Z [ops]: session closed\n"
                    "<30>Sep  4 10:11:13  dns-b.corp.example 192.0.2.15 named: 2023-09-04 08:11:13.500Z zone reload done\n"
                    "<27>Sep  4 10:11:14 dns-a.corp.example 192.0.2.14 dhcpd: lease pool exhausted on net 7\n")
    events = read(path)
    assert [e.fields["format"] for e in events] == ["syslog"] * 3
    assert [(e.host, e.service) for e in events] == [("dns-a.corp.example", "portal"), ("dns-b.corp.example", "named"),
                                                      ("dns-a.corp.example", "dhcpd")]
    assert [e.fields.get("address") for e in events] == [None, "192.0.2.15", "192.0.2.14"]
    assert "pid" not in events[0].fields or events[0].fields["pid"] is None
    assert events[1].message == "2023-09-04 08:11:13.500Z zone reload done"
    assert events[1].time == utc(2023, 9, 4, 8, 11, 13, 500000)
    assert events[2].level == "ERROR" and events[2].message == "lease pool exhausted on net 7"
