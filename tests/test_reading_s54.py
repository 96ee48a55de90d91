"""Layouts and level columns read by their shape (issue 34, session 54): Android logcat's formats
without a date (`brief`, `process`, `thread`), with the message below its header (`long`) or with
seconds since 1970 (`epoch`); a network device's `%FAC-SEV-MNEMONIC:` line from its own buffer, after
its host column, or behind a relay's syslog header; and a level column decorated as loggers write
it (`{WARN}`, Telegraf's `W!`) or naming itself (`level:INFO`, `[severity=warn]`). Every line here
was written for these tests in the manner of the formats named (no third-party text), with near
misses that must stay unread."""
from __future__ import annotations

from pipeline.ingest.levels import normalize_level
from tests.support import read_lines, utc


def test_logcat_brief_lines_read_their_priority_tag_and_pid_without_a_time(tmp_path):
    events = read_lines(tmp_path, [
        "I/PlaybackSvc( 4410): queue restored with 18 tracks",
        "D/ExoCodec ( 4410): decoder flushed after seek",
        "W/PlaybackSvc( 4410): audio focus lost, pausing",
        "E/Downloader(13807): chunk 7 failed: HTTP 503",
        "A/libfoo  ( 4410): assertion failed in mixer.c",
    ])
    assert [e.level for e in events] == ["INFO", "DEBUG", "WARN", "ERROR", "FATAL"]
    assert [e.service for e in events][:4] == ["PlaybackSvc", "ExoCodec", "PlaybackSvc", "Downloader"]
    assert events[3].message == "chunk 7 failed: HTTP 503" and events[3].fields["pid"] == "13807"
    assert all(e.fields.get("time_inferred") for e in events)  # brief writes no time: none is made up


def test_logcat_process_and_thread_lines(tmp_path):
    events = read_lines(tmp_path, [
        "I( 2201) Wi-Fi scan returned 14 networks  (WifiScanner)",
        "W( 2201) scan throttled by the foreground app  (WifiScanner)",
        "E( 3090) GPS fix lost after 120 s  (LocationSvc)",
    ])
    assert [(e.level, e.service, e.message) for e in events] == [
        ("INFO", "WifiScanner", "Wi-Fi scan returned 14 networks"),
        ("WARN", "WifiScanner", "scan throttled by the foreground app"),
        ("ERROR", "LocationSvc", "GPS fix lost after 120 s")]
    events = read_lines(tmp_path, ["V( 2201: 2230) sensor hub woke", "E( 2201: 2231) sensor hub timed out"])
    assert [(e.level, e.fields.get("tid"), e.message) for e in events] == [
        ("DEBUG", "2230", "sensor hub woke"), ("ERROR", "2231", "sensor hub timed out")]


def test_logcat_tag_lines(tmp_path):
    events = read_lines(tmp_path, ["I/PlaybackSvc: queue restored", "W/ExoCodec   : frame dropped",
                                   "E/Downloader : chunk 9 failed"])
    assert [(e.level, e.service, e.message) for e in events] == [
        ("INFO", "PlaybackSvc", "queue restored"), ("WARN", "ExoCodec", "frame dropped"),
        ("ERROR", "Downloader", "chunk 9 failed")]
    # prose with a slash after a capital: no priority and tag
    events = read_lines(tmp_path, ["I/O: the disk returned a short read", "A/B test: variant 2 wins",
                                   "W/o retries: giving up"])
    assert [e.fields.get("format") for e in events] == ["text"] * 3


def test_logcat_long_takes_the_message_from_below_its_header(tmp_path):
    events = read_lines(tmp_path, [
        "[ 2025-02-11 07:45:01.250  1402: 1455 W/BatteryStats ]",
        "wakelock held for 600000 ms by sync adapter",
        "",
        "[ 2025-02-11 07:45:02.004  5120: 5120 E/PhotoEditor ]",
        "Render failed",
        "java.lang.OutOfMemoryError: Failed to allocate 48 MB",
        "\tat org.example.photo.Render.run(Render.java:88)",
        "",
        "[ 02-11 07:45:03.777  1000: 1402: 1460 I/BatteryStats ]",
        "charging resumed",
        "",
    ])
    assert [(e.level, e.service) for e in events] == [("WARN", "BatteryStats"), ("ERROR", "PhotoEditor"),
                                                      ("INFO", "BatteryStats")]
    assert events[0].time == utc(2025, 2, 11, 7, 45, 1, 250000)
    assert events[0].message == "wakelock held for 600000 ms by sync adapter"
    assert events[1].message == "Render failed" and "OutOfMemoryError" in (events[1].stack or "")
    assert events[2].message == "charging resumed" and events[2].fields["uid"] == "1000"


def test_logcat_epoch_seconds_are_the_time_and_monotonic_seconds_are_not(tmp_path):
    events = read_lines(tmp_path, [
        "1739260001.250  1402  1455 W BatteryStats: wakelock held too long",
        "1739260002.004  5120  5120 E PhotoEditor: render failed",
    ])
    assert events[0].time == utc(2025, 2, 11, 7, 46, 41, 250000) and events[0].level == "WARN"
    assert events[1].message == "render failed" and events[1].service == "PhotoEditor"
    # `-v nsec`: nine digits of the second
    events = read_lines(tmp_path, ["02-11 07:45:01.250123456  1402  1455 I BatteryStats: charging",
                                   "02-11 07:45:02.004000001  1402  1455 W BatteryStats: hot"])
    assert [e.time.microsecond for e in events] == [250123, 4000] and events[1].level == "WARN"


def test_prose_shaped_like_a_logcat_tag_stays_prose(tmp_path):
    # `I/O error(5):` is a sentence, not priority I of a tag `O error`
    events = read_lines(tmp_path, ["I/O error(5): retrying the read", "E( a note in brackets", "F(x) = 12"])
    assert [e.fields.get("format") for e in events] == ["text"] * 3
    assert all(e.service != "O" and "tag" not in e.fields for e in events)


def test_a_device_message_code_from_its_own_buffer_after_a_host_or_behind_a_relay(tmp_path):
    # the device's buffer: a clock mark and the time, no priority or sequence number
    events = read_lines(tmp_path, [
        ".Sep  9 03:14:15.926: %OSPFV3-5-ADJCHG: Process 7, Nbr 10.9.9.9 on Vlan20 from LOADING to FULL",
        "*Sep  9 03:14:16.001: %STACKMGR-4-SWITCH_REMOVED: Switch 2 has been removed from the stack",
    ])
    assert [e.level for e in events] == ["INFO", "WARN"]
    assert events[0].time.replace(year=2000) == utc(2000, 9, 9, 3, 14, 15, 926000)
    assert events[1].message.startswith("%STACKMGR-4-SWITCH_REMOVED:")
    # the host column before the code, with the year first or after the day
    events = read_lines(tmp_path, [
        "2025 Sep  9 03:14:15 spine-2 %VPC-2-PEER_KEEP_ALIVE_RECV_FAIL: peer keep-alive receive has failed",
        "2025 Sep  9 03:14:19 spine-2 %VPC-6-PEER_KEEP_ALIVE_RECV_SUCCESS: peer keep-alive receive is back",
    ])
    assert [(e.level, e.host, e.time) for e in events] == [
        ("FATAL", "spine-2", utc(2025, 9, 9, 3, 14, 15)), ("INFO", "spine-2", utc(2025, 9, 9, 3, 14, 19))]
    assert events[0].message.startswith("%VPC-2-PEER_KEEP_ALIVE_RECV_FAIL:")
    # the code's severity is the line's level, not that of the relay's priority (local6.notice here)
    events = read_lines(tmp_path, ["<181>Sep  9 2025 03:14:15 edge-fw1: %PIX-3-733100: Object drop rate exceeded"])
    assert (events[0].host, events[0].level, events[0].time) == ("edge-fw1", "ERROR", utc(2025, 9, 9, 3, 14, 15))
    # a relay's RFC 3164 header, then the device's numbered line with its own clock
    events = read_lines(tmp_path, [
        "Sep  9 03:14:16 172.16.4.1 88412: Sep  9 03:14:15.880 CEST: %SW_MATM-4-MACFLAP_NOTIF: Host 0011.2233.4455 flapping",
    ])
    assert events[0].host == "172.16.4.1" and events[0].level == "WARN"
    assert events[0].message.startswith("%SW_MATM-4-MACFLAP_NOTIF: Host")
    assert events[0].time.microsecond == 880000


def test_a_percent_in_a_syslog_message_is_no_device_code(tmp_path):
    events = read_lines(tmp_path, ["Sep  9 03:14:15 build-7 cron[881]: %s placeholder left in job 12",
                                   "Sep  9 03:14:16 build-7 cron[881]: 100% of jobs done"])
    assert [(e.service, e.host) for e in events] == [("cron", "build-7"), ("cron", "build-7")]


_WORDS = ["index loaded in 40 ms", "replica lag at 2 s", "segment merge aborted", "snapshot taken", "cache probe"]


def _column(values: list[str], before_time: bool = False) -> list[str]:
    stamp = "2025-09-09T03:14:1{i}.500Z"
    return [(f"{v} {stamp.format(i=i)} {m}" if before_time else f"{stamp.format(i=i)} {v} {m}")
            for i, (v, m) in enumerate(zip(values, _WORDS))]


def test_a_level_column_in_braces_or_with_an_exclamation_mark(tmp_path):
    for column in (["{info}", "{warn}", "{error}", "{info}", "{debug}"], ["I!", "W!", "E!", "I!", "D!"]):
        for before in (False, True):
            events = read_lines(tmp_path, _column(column, before))
            assert [e.level for e in events] == ["INFO", "WARN", "ERROR", "INFO", "DEBUG"], (column, before)
            assert events[2].message == "segment merge aborted"
    assert normalize_level("{WARN}") == "WARN" and normalize_level("E!") == "ERROR"


def test_a_level_column_that_names_itself(tmp_path):
    for column in (["level:info", "level:warn", "level:error", "level:info", "level:debug"],
                   ["[severity=INFO]", "[severity=WARNING]", "[severity=ERROR]", "[severity=INFO]", "[severity=DEBUG]"],
                   ['lvl="info"', 'lvl="warn"', 'lvl="error"', 'lvl="info"', 'lvl="debug"']):
        events = read_lines(tmp_path, _column(column))
        assert [e.level for e in events] == ["INFO", "WARN", "ERROR", "INFO", "DEBUG"], column
        assert events[3].message == "snapshot taken" and events[3].host is None


def test_columns_near_a_level_column_stay_what_they_are(tmp_path):
    # words with an exclamation mark that are no levels, and a key that names no level
    events = read_lines(tmp_path, _column(["Go!", "Stop!", "Go!", "Wait!", "Go!"]))
    assert all(e.level is None or e.fields.get("level_inferred") for e in events)
    events = read_lines(tmp_path, _column(["mode:fast", "mode:slow", "mode:fast", "mode:slow", "mode:fast"]))
    assert [e.level for e in events] == [None, None, "ERROR", None, None]  # only the guess from `aborted`
    # a host whose name starts like a level key is still the host
    events = read_lines(tmp_path, ["Sep  9 03:14:15 leveldb-3 compactd[77]: compaction done",
                                   "Sep  9 03:14:16 leveldb-3 compactd[77]: compaction started"])
    assert [e.host for e in events] == ["leveldb-3", "leveldb-3"]


def test_a_syslog_frame_may_open_with_its_octet_count(tmp_path):
    events = read_lines(tmp_path, [
        "74 <13>1 2025-09-09T03:14:15.250Z ci-3 runner 4410 - - job 88 picked up",
        "70 <11>1 2025-09-09T03:14:16Z ci-3 runner 4410 - - job 88 lost its lease",
    ])
    assert [(e.service, e.host, e.level, e.message) for e in events] == [
        ("runner", "ci-3", "INFO", "job 88 picked up"), ("runner", "ci-3", "ERROR", "job 88 lost its lease")]
    events = read_lines(tmp_path, ["52 <28>Sep  9 03:14:15 nas-2 smartd[512]: sector count rising"])
    assert (events[0].service, events[0].host, events[0].level) == ("smartd", "nas-2", "WARN")


def test_a_level_joined_to_the_thread_its_bracket_names(tmp_path):
    events = read_lines(tmp_path, [
        "[07:01:10] [Tick-Loop/INFO]: world saved in 212 ms",
        "[07:01:11] [Net-IO #2/WARN]: client 17 sent an oversized packet",
        "[07:01:12] [Tick-Loop/ERROR]: entity 991 update threw",
    ])
    assert [(e.level, e.fields.get("thread"), e.message) for e in events] == [
        ("INFO", "Tick-Loop", "world saved in 212 ms"), ("WARN", "Net-IO #2", "client 17 sent an oversized packet"),
        ("ERROR", "Tick-Loop", "entity 991 update threw")]
    # a path in brackets is no level
    events = read_lines(tmp_path, ["2025-09-09 03:14:15 [api/v1] cache primed",
                                   "2025-09-09 03:14:16 [api/v2] cache primed"])
    assert [e.level for e in events] == [None, None]


def test_a_zone_after_an_iso_time_is_the_times_not_a_host(tmp_path):
    events = read_lines(tmp_path, ["2025-09-09T03:14:15.500 CEST INFO indexer: batch 4 committed",
                                   "2025-09-09T03:14:16.500 CEST ERROR indexer: batch 5 rejected"])
    assert [e.time for e in events] == [utc(2025, 9, 9, 1, 14, 15, 500000), utc(2025, 9, 9, 1, 14, 16, 500000)]
    assert [e.host for e in events] == [None, None] and [e.level for e in events] == ["INFO", "ERROR"]


def test_an_underscore_between_the_date_and_the_clock(tmp_path):
    # a shell script's `date +%F_%T`
    events = read_lines(tmp_path, ["2025-09-09_03:14:15 backup: started", "2025-09-09_03:14:59 backup: failed, disk full"])
    assert [e.time for e in events] == [utc(2025, 9, 9, 3, 14, 15), utc(2025, 9, 9, 3, 14, 59)]


def test_dmesg_decoded_facility_and_level_columns(tmp_path):
    events = read_lines(tmp_path, [
        "kern  :notice: [    0.412000] random: crng init done",
        "kern  :warn  : [    3.100500] thermal: CPU0 throttled",
        "user  :err   : [   42.000001] watchdogd: ping missed",
        "kern  :crit  : [   60.250000] EDAC: uncorrectable memory error",
    ])
    assert [e.level for e in events] == ["INFO", "WARN", "ERROR", "FATAL"]
    assert events[1].message == "thermal: CPU0 throttled" and events[2].fields["facility"] == "user"
    # a colon-joined pair that is no facility and severity stays text
    events = read_lines(tmp_path, ["note  :todo  : rotate the keys"])
    assert events[0].fields.get("format") == "text"


def test_level_words_a_level_column_writes_beside_level_names(tmp_path):
    # Apple's unified log: Default (its notice level) and Fault beside Info, Error, Debug
    events = read_lines(tmp_path, [
        "2025-09-09 03:14:15.100000+0200 0x2f10     Default     0x0      311    0    backupd: snapshot created",
        "2025-09-09 03:14:16.200000+0200 0x2f11     Fault       0x0      311    0    backupd: volume vanished",
        "2025-09-09 03:14:17.300000+0200 0x2f12     Info        0x0      402    0    mdworker: index pass done",
        "2025-09-09 03:14:18.400000+0200 0x2f13     Error       0x0      402    0    mdworker: file unreadable",
        "2025-09-09 03:14:19.500000+0200 0x2f14     Default     0x0      311    0    backupd: idle",
    ])
    assert [e.level for e in events] == ["INFO", "ERROR", "INFO", "ERROR", "INFO"]
    # loguru's SUCCESS, between INFO and WARNING
    events = read_lines(tmp_path, [f"2025-09-09 03:14:1{i}.000 | {lv:<8} | jobs.run:main:{i} - step {i}"
                                   for i, lv in enumerate(["INFO", "SUCCESS", "WARNING", "ERROR"])])
    assert [e.level for e in events] == ["INFO", "INFO", "WARN", "ERROR"]


def test_a_column_of_default_alone_is_no_level(tmp_path):
    # a namespace or profile column that always says `default`
    events = read_lines(tmp_path, [f"2025-09-09T03:14:1{i}Z default web-{i} request {i} served" for i in range(5)])
    assert all(e.level is None or e.fields.get("level_inferred") for e in events)


def test_an_empty_name_closed_by_the_headers_colon_is_not_the_messages(tmp_path):
    # Ruby's Logger without a progname: `SEVERITY -- : message`
    events = read_lines(tmp_path, [
        "I, [2025-09-09T03:14:15.100200 #77]  INFO -- : mailer queue drained",
        "E, [2025-09-09T03:14:16.100200 #77] ERROR -- : SMTP relay refused the message",
        "I, [2025-09-09T03:14:17.100200 #77]  INFO -- : mailer idle",
    ])
    assert [e.message for e in events] == ["mailer queue drained", "SMTP relay refused the message", "mailer idle"]


def test_rfc5424_with_its_message_glued_to_the_structured_data_and_a_lower_case_stamp(tmp_path):
    events = read_lines(tmp_path, [
        '<86>1 2025-09-09T03:14:15.250Z vault-2 authd 61 LOGIN [req@4 id="a1"][peer@4 ip="10.1.1.1"]token renewed',
        "<83>1 2025-09-09t03:14:16.5z vault-2 authd 61 - - token store sealed",
    ])
    assert [(e.service, e.host, e.level, e.message) for e in events] == [
        ("authd", "vault-2", "INFO", "token renewed"), ("authd", "vault-2", "ERROR", "token store sealed")]
    assert events[1].time == utc(2025, 9, 9, 3, 14, 16, 500000) and not events[1].fields.get("time_inferred")
    # a NILVALUE structured data is still followed by its space: `-msg` is no message after `-`
    events = read_lines(tmp_path, ["<86>1 2025-09-09T03:14:15Z vault-2 authd 61 - -token renewed"])
    assert events[0].fields.get("format") != "syslog5424" or events[0].message != "token renewed"


def test_numbered_blocks_of_key_value_lines_are_one_record_each(tmp_path):
    # a tool printing each record as a numbered block, its description below its keys
    events = read_lines(tmp_path, [
        "Record[0]:",
        "  Channel: Setup",
        "  Origin: UpdateAgent",
        "  Date: 2025-09-09T03:14:15.250",
        "  Level: Warning",
        "  Computer: kiosk-12",
        "  Description:",
        "Update 7 was deferred: the battery is below 40%.",
        "",
        "Record[1]:",
        "  Channel: Setup",
        "  Origin: UpdateAgent",
        "  Date: 2025-09-09T03:20:00.000",
        "  Level: Error",
        "  Computer: kiosk-12",
        "  Description:",
        "Update 7 failed to install.",
        "The package signature did not verify.",
        "",
    ])
    assert [(e.time, e.level, e.host, e.message) for e in events] == [
        (utc(2025, 9, 9, 3, 14, 15, 250000), "WARN", "kiosk-12", "Update 7 was deferred: the battery is below 40%."),
        (utc(2025, 9, 9, 3, 20), "ERROR", "kiosk-12",
         "Update 7 failed to install. The package signature did not verify.")]
    assert events[1].fields["Origin"] == "UpdateAgent" and events[1].fields["block"] == "Record[1]"


def test_a_numbered_line_without_key_value_lines_opens_no_block(tmp_path):
    events = read_lines(tmp_path, ["Step[1]:", "copy the files", "Step[2]:", "restart the service"])
    assert [e.fields.get("format") for e in events] == ["text"] * 4
    events = read_lines(tmp_path, ["2025-09-09 03:14:15 INFO queue opened", "Item[3]:",
                                   "  size: 12", "  owner: batch", "2025-09-09 03:14:16 INFO queue closed"])
    assert "block" not in [e.fields.get("format") for e in events]
