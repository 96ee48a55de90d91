"""Session 59's readings of layouts nobody here has written (issue 34), each with a near miss that
must not be read so: a time closed by a semicolon; a Windows FILETIME opening the line."""
from __future__ import annotations

from datetime import datetime, timezone

from pipeline.ingest.timestamps import read_any_time
from tests.support import read_lines, utc


def test_a_time_closed_by_a_semicolon_is_the_records_time(tmp_path):
    # date(1)'s order with a fraction, the message after `; ` (tailviewer's weekday-first fixture)
    events = read_lines(tmp_path, ["Fri May 05 08:46:44.257 2017; Created.", "Fri May 05 08:46:45.001 2017; Opened."])
    assert [e.time for e in events] == [utc(2017, 5, 5, 8, 46, 44, 257000), utc(2017, 5, 5, 8, 46, 45, 1000)]
    assert [e.message for e in events] == ["Created.", "Opened."]
    assert all("time_inferred" not in e.fields for e in events)


def test_a_semicolon_inside_a_word_after_a_year_is_no_time(tmp_path):
    # the year must close its column: `2017x;` is no year, the line no record of that time
    events = read_lines(tmp_path, ["Fri May 05 08:46:44.257 2017x; Created."])
    assert events[0].time != utc(2017, 5, 5, 8, 46, 44, 257000)


def test_a_windows_filetime_opening_lines_is_their_time(tmp_path):
    # LDAP's and Active Directory's 100-ns ticks since 1601 (gravwell's timegrinder reads them)
    events = read_lines(tmp_path, ["132862922580000000 ldap lastLogon alice",
                                   "131562761990000000 ldap pwdLastSet bob"])
    assert [e.time for e in events] == [utc(2022, 1, 10, 12, 44, 18), utc(2017, 11, 27, 17, 9, 59)]
    assert events[0].message == "ldap lastLogon alice"
    assert read_any_time("132862922580000001") == datetime(2022, 1, 10, 12, 44, 18, 0, tzinfo=timezone.utc)


def test_eighteen_digits_outside_filetimes_years_are_no_time():
    # ticks of 1999 or 2034, and epoch nanoseconds' own 18 digits, are not read as a FILETIME
    assert read_any_time("125000000000000000") is None  # 1997 in ticks
    assert read_any_time("137000000000000000") is None  # 2035 in ticks
    assert read_any_time("13286292258000000") is None  # seventeen digits
    assert read_any_time("960000000000000000") == datetime(2000, 6, 3, 2, 40, tzinfo=timezone.utc)  # epoch ns


ZEEK = "CQsz7E4Wiy30uCtBR3 199.58.81.140 37358 198.46.205.70 9998 data_before_established\t- F bro"


def test_an_indented_line_opening_with_the_sources_epoch_stamp_is_a_record(tmp_path):
    # Zeek/Bro lines whose first column is epoch seconds with a fraction, one printed after blanks
    events = read_lines(tmp_path, [f"1511802599.453396 {ZEEK}", f" 1511802600.100000 {ZEEK}",
                                   f"\t   1511802601.250000 {ZEEK}"])
    assert [e.time for e in events] == [utc(2017, 11, 27, 17, 9, 59, 453396), utc(2017, 11, 27, 17, 10, 0, 100000),
                                        utc(2017, 11, 27, 17, 10, 1, 250000)]
    assert all("time_inferred" not in e.fields for e in events)


def test_an_indented_number_under_a_dated_record_continues_it(tmp_path):
    # a count, or an epoch in a source whose header is no epoch, is a detail line of the record before
    events = read_lines(tmp_path, ["2024-03-01 10:00:00,000 ERROR app - batch failed, ids:",
                                   "    1511802600.100000 rows skipped",
                                   "    1511802600 rows read",
                                   "2024-03-01 10:00:01,000 INFO app - next"])
    assert len(events) == 2 and "rows skipped" in events[0].stack and "rows read" in events[0].stack


def test_a_word_after_an_iso_time_with_no_syslog_tag_is_the_message_not_a_host(tmp_path):
    # a console's lines stamped with an ISO time (.NET Aspire's console logs): no `tag:` follows
    # the first word, so nothing says it is a host
    events = read_lines(tmp_path, ["2024-08-19T06:10:01.000Z Hello world 2", "2024-08-19T06:10:02.000Z Hello world 3"])
    assert [e.message for e in events] == ["Hello world 2", "Hello world 3"]
    assert [e.host for e in events] == [None, None]
    assert events[0].time == utc(2024, 8, 19, 6, 10, 1)


def test_rsyslogs_iso_lines_with_a_tag_keep_their_host_and_program(tmp_path):
    events = read_lines(tmp_path, ["2024-08-19T06:10:01.000Z web-1 sshd[42]: Accepted publickey for alice",
                                   "2024-08-19T06:10:02.000Z web-1 CRON[43]: (root) CMD (run-parts)"])
    assert [(e.host, e.service, e.message) for e in events] == [
        ("web-1", "sshd", "Accepted publickey for alice"), ("web-1", "CRON", "(root) CMD (run-parts)")]
    # the classic stamp keeps its host without a tag (`Mar  7 04:02:16 avas some text`), as before
    bsd = read_lines(tmp_path, ["Mar  7 04:02:16 avas last message repeated 2 times"])
    assert bsd[0].host == "avas"


def test_a_date_of_numbers_either_order_reads_is_read_nearest_the_sources_plain_dates(tmp_path):
    # a mixed file (robotframework's log-line parser): its ISO and month-named dates say July 2, so
    # `02-07-2025` is July 2, as a person reading the file would take it
    events = read_lines(tmp_path, ["[2025-07-02 13:45:01,234] INFO     main.api     Starting up",
                                   '[02/Jul/2025:13:45:04 +0000] "GET /health HTTP/1.1" 200 42',
                                   "2025-07-02 13:45:05 ERROR    user.auth         Invalid login",
                                   "02-07-2025 13:45:10 ERROR    http.client       Timeout while contacting"])
    assert events[3].time == utc(2025, 7, 2, 13, 45, 10)
    assert events[3].message == "Timeout while contacting"


def test_the_same_numbers_among_dates_of_another_month_are_read_month_first(tmp_path):
    # the evidence decides, not a habit: among lines of 2025-02-07, `02-07-2025` is February 7
    events = read_lines(tmp_path, ["[2025-02-07 13:45:01,234] INFO     main.api     Starting up",
                                   "2025-02-07 13:45:05 ERROR    user.auth         Invalid login",
                                   "02-07-2025 13:45:10 ERROR    http.client       Timeout while contacting"])
    assert events[2].time == utc(2025, 2, 7, 13, 45, 10)


def test_the_order_of_slashed_and_dashed_dates_is_decided_apart_and_only_on_evidence():
    from datetime import date

    from pipeline.ingest.date_order import decide, sample_order

    lines = ["nginx 2022/01/10 12:44:18", "10/01/2022 12:44:04,12345", "1-10-2022 12:44:04.12345"]
    assert sample_order(lines) == "dmy" and sample_order(lines, "-") == "mdy"
    # without a date written plainly, a date both orders read stays undecided (as before)
    assert sample_order(["10/01/2022 12:44:04 a", "11/02/2022 12:44:04 b"]) is None
    # a number over 12 still decides before any nearness does
    assert decide([("13", "01", "2022")], [date(2022, 1, 1)]) == "dmy"
    assert decide([("01", "13", "2022")], [date(2022, 12, 31)]) == "mdy"


def test_a_logcat_long_header_padded_wider_is_still_a_header(tmp_path):
    events = read_lines(tmp_path, ["[     1517266949.472     5755:601     I/Tag     ]", "started", "",
                                   "[ 1517266950.001 5755:601 E/Tag ]", "failed"])
    assert [(e.time, e.level, e.service, e.message) for e in events] == [
        (utc(2018, 1, 29, 23, 2, 29, 472000), "INFO", "Tag", "started"),
        (utc(2018, 1, 29, 23, 2, 30, 1000), "ERROR", "Tag", "failed")]


def test_a_bracketed_line_with_a_padded_word_that_is_no_priority_is_no_logcat_header(tmp_path):
    events = read_lines(tmp_path, ["[     1517266949.472     5755:601     Info/Tag     ]"])
    assert events[0].level != "INFO" or events[0].service != "Tag"


def test_javascripts_date_string_is_read_with_its_gmt_offset(tmp_path):
    # Node's and browsers' `String(new Date())`: the year before the clock, the offset after `GMT`
    events = read_lines(tmp_path, [
        "Thu Nov 24 2016 12:00:00 GMT+0100 (Central European Standard Time) INFO job started",
        "Thu Nov 24 2016 12:00:05 GMT+0100 (Central European Standard Time) ERROR job failed"])
    assert [e.time for e in events] == [utc(2016, 11, 24, 11, 0, 0), utc(2016, 11, 24, 11, 0, 5)]
    assert [e.message for e in events] == ["job started", "job failed"] and events[1].level == "ERROR"


def test_a_year_before_a_clock_without_gmts_offset_is_read_as_before(tmp_path):
    # no `GMT±hhmm`: the source's zone, the word after the clock the message's
    events = read_lines(tmp_path, ["Thu Nov 24 2016 12:00:00 GMTX job started"])
    assert events[0].time == utc(2016, 11, 24, 12, 0, 0)


def test_a_cef_event_without_a_syslog_header_is_a_record_of_its_own(tmp_path):
    events = read_lines(tmp_path, [
        "Sep 19 08:26:10 host CEF:0|security|threatmanager|1.0|100|worm stopped|10|src=10.0.0.1",
        "CEF:0|security|threatmanager|1.0|100|detected a worm|10|src=10.0.0.2 act=blocked",
        "Sep 19 08:26:12 host CEF:0|security|threatmanager|1.0|100|worm stopped|10|src=10.0.0.3"])
    assert len(events) == 3 and "detected a worm" in events[1].message


def test_a_line_naming_cef_without_its_header_continues_the_record(tmp_path):
    events = read_lines(tmp_path, [
        "Sep 19 08:26:10 host collector[12]: parse failed for the line below",
        "CEF:0 header expected, got garbage",
        "Sep 19 08:26:12 host collector[12]: next"])
    assert len(events) == 2 and "header expected" in (events[0].stack or events[0].message)


def test_a_lower_case_word_opening_a_go_log_message_stays_the_messages(tmp_path):
    # Go's standard log writes no level: `error` opening the message is its first word
    events = read_lines(tmp_path, ["2023/04/28 07:28:46 error encoding and sending metric family: write tcp: wsasend:",
                                   "2023/04/28 07:28:47 starting exporter"])
    assert events[0].message.startswith("error encoding and sending metric family")


def test_go_log_levels_in_capitals_or_with_a_colon_are_still_levels(tmp_path):
    events = read_lines(tmp_path, ["2023/04/28 07:28:46 ERROR encoding failed", "2023/04/28 07:28:47 warn: slow scrape",
                                   "2023/04/28 07:28:48 INFO+2 notice"])
    assert [(e.level, e.message) for e in events] == [("ERROR", "encoding failed"), ("WARN", "slow scrape"),
                                                       ("INFO", "notice")]


def test_kibanas_display_time_is_read(tmp_path):
    # a log copied out of Kibana's Discover: `MMM D, YYYY @ HH:mm:ss.SSS`
    events = read_lines(tmp_path, ["Mar 1, 2024 @ 10:00:00.123 ERROR payment timed out",
                                   "Mar 1, 2024 @ 10:00:01.456 INFO retry scheduled"])
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2024, 3, 1, 10, 0, 0, 123000), "ERROR", "payment timed out"),
        (utc(2024, 3, 1, 10, 0, 1, 456000), "INFO", "retry scheduled")]


def test_an_at_sign_elsewhere_is_no_part_of_the_shape():
    from pipeline.ingest.timestamps import SHAPE_RE

    assert SHAPE_RE["month-day-comma-year"].match("Mar 1, 2024 @@ 10:00:00") is None
    assert SHAPE_RE["month-day-comma-year"].match("Mar 1, 2024 10:00:00 @") is None
    assert read_any_time("Mar 1, 2024 @ 25:00:00") is None


def test_a_clock_with_its_am_pm_then_a_level_gives_the_level(tmp_path):
    # a time of day with AM/PM as .NET's `h:mm:ss tt` writes it, the level column after it
    words = ["ERROR", "INFO", "WARN", "INFO"]
    events = read_lines(tmp_path, [f"{h}:00:0{i} {ap} {words[i]} job {i} ran" for i, (h, ap)
                                   in enumerate([("12", "AM"), ("1", "PM"), ("11", "AM"), ("3", "PM")])])
    assert [(e.level, e.message) for e in events] == [("ERROR", "job 0 ran"), ("INFO", "job 1 ran"),
                                                      ("WARN", "job 2 ran"), ("INFO", "job 3 ran")]
    assert [e.time.hour for e in events] == [0, 13, 11, 15]


def test_a_word_am_after_a_clock_is_the_messages_when_it_is_no_am_pm(tmp_path):
    events = read_lines(tmp_path, ["10:00:00 ERROR AM radio lost", "10:00:01 INFO AM radio back"])
    assert [(e.level, e.message) for e in events] == [("ERROR", "AM radio lost"), ("INFO", "AM radio back")]


def test_javas_zoned_date_time_with_its_region_is_read_by_its_offset(tmp_path):
    # ZonedDateTime.toString(): the offset, then the region in brackets
    events = read_lines(tmp_path, ["2024-03-01T10:00:00.123-05:00[America/New_York] INFO job done",
                                   "2024-03-01T10:00:01.123-05:00[America/New_York] ERROR job failed"])
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2024, 3, 1, 15, 0, 0, 123000), "INFO", "job done"), (utc(2024, 3, 1, 15, 0, 1, 123000), "ERROR", "job failed")]


def test_a_bracketed_word_glued_to_a_time_is_no_region():
    from pipeline.ingest.timestamps import SHAPE_RE

    assert SHAPE_RE["iso8601"].match("2024-03-01T10:00:00Z[main]") is None
    assert SHAPE_RE["iso8601"].match("2024-03-01T10:00:00[Europe/Paris]") is None  # a region needs its offset


def test_a_level_between_asterisks_is_the_level_column(tmp_path):
    # Apache Sling's and Adobe Experience Manager's error.log: `*ERROR* [thread] logger message`
    words = ["ERROR", "INFO", "WARN", "INFO", "DEBUG"]
    events = read_lines(tmp_path, [f"01.03.2024 10:00:0{i}.123 *{words[i]}* [qtp123-4{i}] com.day.cq.Foo{i} step {i} ran"
                                   for i in range(5)])
    assert [e.level for e in events] == ["ERROR", "INFO", "WARN", "INFO", "DEBUG"]
    assert events[1].message == "step 1 ran" and events[1].time == utc(2024, 3, 1, 10, 0, 1, 123000)


def test_a_word_between_asterisks_that_names_no_level_is_the_messages(tmp_path):
    events = read_lines(tmp_path, [f"2024-03-01 10:00:0{i} *{w}* step {i} ran" for i, w in
                                   enumerate(["important", "urgent", "note", "todo"])])
    assert [e.level for e in events] == [None, None, None, None]
    assert events[0].message == "*important* step 0 ran"


def test_a_javascript_date_string_as_a_json_value_is_the_time(tmp_path):
    events = read_lines(tmp_path, [
        '{"timestamp": "Fri Mar 01 2024 10:00:00 GMT+0100 (Central European Standard Time)", "level": "error", "message": "boom"}'])
    assert events[0].time == utc(2024, 3, 1, 9, 0, 0) and events[0].message == "boom"


def test_cloud_loggings_text_payload_is_the_message(tmp_path):
    # Google Cloud Logging's LogEntry as exported: the text a program wrote is `textPayload`
    events = read_lines(tmp_path, ['{"severity": "ERROR", "textPayload": "db connection refused", '
                                   '"timestamp": "2024-03-01T10:00:00.123Z", "logName": "projects/p/logs/app"}'])
    assert (events[0].level, events[0].message) == ("ERROR", "db connection refused")


def test_a_payload_that_is_no_text_is_not_the_message(tmp_path):
    # a request's payload beside the message key stays a field
    events = read_lines(tmp_path, ['{"time": "2024-03-01T10:00:00Z", "level": "info", "msg": "request in", '
                                   '"requestPayload": "{\\"id\\": 1}"}'])
    assert events[0].message == "request in"


def test_db2s_offset_in_minutes_after_its_microseconds_is_read(tmp_path):
    # IBM Db2's db2diag.log: `2024-03-01-10.00.00.123456+060` (the offset in minutes)
    events = read_lines(tmp_path, ["2024-03-01-10.00.00.123456+060 I12345F678          LEVEL: Error",
                                   "PID     : 1234                 TID : 5678          PROC : db2sysc 0", "",
                                   "2024-03-01-10.00.01.123456-330 I12346F678          LEVEL: Warning"])
    assert [e.time for e in events] == [utc(2024, 3, 1, 9, 0, 0, 123456), utc(2024, 3, 1, 15, 30, 1, 123456)]
    assert [e.level for e in events] == ["ERROR", "WARN"]


def test_three_digits_after_a_shorter_fraction_are_no_offset():
    from pipeline.ingest.timestamps import SHAPE_RE

    assert SHAPE_RE["iso8601"].match("2024-03-01-10.00.00.123+060") is None
    assert SHAPE_RE["iso8601"].match("2024-03-01-10.00.00.123456+0600") is not None  # an offset of hours and minutes


def test_a_slashed_date_after_its_weekday_is_read_in_the_order_that_falls_on_it(tmp_path):
    # 1 March 2024 was a Friday, 3 January a Wednesday: a person reads `Fri 01/03/2024` day first
    events = read_lines(tmp_path, ["Fri 01/03/2024 10:00:00 INFO job done", "Fri 01/03/2024 10:00:05 ERROR job failed"])
    assert [e.time for e in events] == [utc(2024, 3, 1, 10, 0, 0), utc(2024, 3, 1, 10, 0, 5)]


def test_a_weekday_that_fits_the_month_first_reading_or_neither_keeps_month_first(tmp_path):
    assert read_lines(tmp_path, ["Wed 01/03/2024 10:00:00 INFO job done"])[0].time == utc(2024, 1, 3, 10, 0, 0)
    # 4 March 2024 was a Monday and 3 April a Wednesday: `Thu` fits neither, so it says nothing
    assert read_lines(tmp_path, ["Thu 03/04/2024 10:00:00 INFO job done"])[0].time == utc(2024, 3, 4, 10, 0, 0)
