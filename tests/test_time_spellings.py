"""Timestamps in spellings real loggers write, each read from lines of other projects' public data
(source, commit and licence beside each): a file in any of them gets each record's own time, not
the file's modification time or a neighbour's.

- HealthApp (`20171223-22:16:0:119`, unpadded fields, milliseconds after a colon): logpai/loghub
  `HealthApp/HealthApp_2k.log` at bc5be362f34b89cbc32aad2aec92a4879cdb67fc; Loghub's licence: free
  for research with a reference to https://github.com/logpai/loghub.
- auditd (`msg=audit(1485893834.891:18877201):`): elastic/beats
  `filebeat/module/auditd/log/test/test.log` at feab9bb403b6acc16d6083b353233c403bdffd79; Apache
  License 2.0 (beats outside x-pack).
- Tomcat <= 7 / java.util.logging (`Aug 29, 2009 12:03:57 AM`, Elasticsearch's CATALINA_DATESTAMP):
  elastic/elasticsearch `x-pack/plugin/text-structure/src/test/java/org/elasticsearch/xpack/
  textstructure/structurefinder/TimestampFormatFinderTests.java` at
  8e231d2e5fe906f0cf8fa3785f5d7fb1619a650b (Elastic License 2.0): its sample line and its expected
  epoch for `May 15, 2018 5:14:56 PM` (its tests run at Europe/London).
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.ingest.formats import SourceParser, parse_record
from pipeline.ingest.reading import LogFile
from pipeline.ingest.timestamps import read_any_time

UTC = timezone.utc

HEALTHAPP = [  # consecutive lines of HealthApp_2k.log (two runs of them)
    "20171223-22:15:34:848|Step_LSC|30002312|onStandStepChanged 3589",
    "20171223-22:15:34:851|Step_LSC|30002312|onExtend:1514038535000 1 0 4",
    "20171223-22:15:35:11|Step_SPUtils|30002312| getTodayTotalDetailSteps = 1514038440000##7015##548365##8661##13026##27177962",
    "20171223-22:15:35:12|Step_SPUtils|30002312|setTodayTotalDetailSteps=1514038440000##7017##548365##8661##13121##27179330",
    "20171223-22:15:35:20|Step_ExtSDM|30002312|calculateCaloriesWithCache totalCalories=126989",
    "20171223-22:15:35:22|Step_ExtSDM|30002312|calculateAltitudeWithCache totalAltitude=240",
    "20171223-22:15:35:23|Step_ScreenUtil|30002312|isScreenOn true",
    "20171223-22:15:35:96|Step_StandReportReceiver|30002312|onReceive action: android.intent.action.SCREEN_ON",
    "20171223-22:15:35:104|Step_ExtSDM|30002312|calculateCaloriesWithCache totalCalories=126989",
    "20171223-22:15:59:849|Step_LSC|30002312|onStandStepChanged 3626",
    "20171223-22:15:59:865|Step_LSC|30002312|onExtend:1514038560000 1 0 4",
    "20171223-22:16:0:119|Step_LSC|30002312|processHandleBroadcastAction action:android.intent.action.TIME_TICK",
    "20171223-22:16:0:150|Step_SPUtils|30002312| getTodayTotalDetailSteps = 1514038440000##7053##548365##8661##16256##27202475",
    "20171223-22:16:0:159|Step_ExtSDM|30002312|calculateCaloriesWithCache totalCalories=127782",
    "20171223-22:16:1:150|Step_SPUtils|30002312| getTodayTotalDetailSteps = 1514038500000##7054##548458##8661##16256##27204469",
    "20171223-22:17:0:123|Step_LSC|30002312|processHandleBroadcastAction action:android.intent.action.TIME_TICK",
]

AUDITD = [  # the first lines of beats' auditd test.log, with the times its expected.json gives
    ("type=MAC_IPSEC_EVENT msg=audit(1485893834.891:18877201): op=SPD-delete auid=4294967295 ses=4294967295 res=1"
     " src=192.168.2.0 src_prefixlen=24 dst=192.168.0.0 dst_prefixlen=16", 1485893834.891),
    ('type=PROCTITLE msg=audit(1451781471.394:194438): proctitle="bash"', 1451781471.394),
    ("type=PROCTITLE msg=audit(1451781471.394:194440): proctitle=737368643A206275726E205B707269765D", 1451781471.394),
]


def test_healthapp_unpadded_fields_give_every_line_its_own_time_in_order():
    # the 16:0:119 line was refused by the learnt layout (read as text, timed by its neighbour) and
    # 35:11 was read as 35.110, after 35:96
    parser = SourceParser()
    parser.detect(HEALTHAPP * 2)
    records = [parser.parse(line) for line in HEALTHAPP]
    assert {r.format for r in records} == {"learned"}
    times = [r.time for r in records]
    assert times == sorted(times)
    assert times[2] == datetime(2017, 12, 23, 22, 15, 35, 11000, tzinfo=UTC)
    assert times[11] == datetime(2017, 12, 23, 22, 16, 0, 119000, tzinfo=UTC)
    assert records[11].message == "processHandleBroadcastAction action:android.intent.action.TIME_TICK"


def test_auditd_lines_take_the_time_of_their_audit_stamp():
    for line, epoch in AUDITD:
        record = parse_record(line)
        assert record.time is not None and abs(record.time.timestamp() - epoch) < 1e-6, line


def test_tomcat_month_day_comma_year_with_am_pm_is_read_in_the_sources_zone():
    assert read_any_time("May 15, 2018 5:14:56 PM", tz=SourceParser(timezone="Europe/London").options.timezone) \
        == datetime.fromtimestamp(1526400896000 / 1000, tz=UTC)
    lines = ["Aug 29, 2009 12:03:57 AM org.apache.tomcat.util.http.Parameters processParameters WARNING: Parameters:"
             " Invalid chunk ignored."] * 3 + [
             "Aug 29, 2009 1:03:57 PM org.apache.catalina.startup.Catalina start INFO: Server startup in 117 ms"] * 3
    parser = SourceParser()
    parser.detect(lines)
    first, last = parser.parse(lines[0]), parser.parse(lines[-1])
    assert parser.format == "learned" and parser.layout.time_shape == "month-day-comma-year"
    assert first.time == datetime(2009, 8, 29, 0, 3, 57, tzinfo=UTC)  # 12 AM is midnight
    assert last.time - first.time == timedelta(hours=13)


# Spellings and layouts from Elastic integrations' pipeline tests (tests/data/outside/integrations,
# its README: source, commits, Elastic License 2.0): each line with the instant its expected file gives.
INTEGRATIONS = [
    # MySQL 5.x error log: yymmdd and a clock with colons (read as 2009-12-16 before)
    ("161209 14:18:50 [Warning] Using unique option prefix myisam-recover instead of myisam-recover-options",
     datetime(2016, 12, 9, 14, 18, 50, tzinfo=UTC)),
    # Snort's fast alert: month/day, a dash, the clock; no year (2021 given as the year)
    ("05/30-19:09:10.917356  [**] [1:527:8] BAD-TRAFFIC same SRC/DST [**] {UDP} 0.0.0.0:68 -> 255.255.255.255:67",
     datetime(2021, 5, 30, 19, 9, 10, 917356, tzinfo=UTC)),
    # pfSense's syslog: a priority, the time, then `tag[pid]:` with no host
    ("<29>Jul  3 21:42:57 openvpn[66026]: 10.170.120.149:37849 peer info: IV_PLAT=android",
     datetime(2021, 7, 3, 21, 42, 57, tzinfo=UTC)),
    # Vectra: a tag before a JSON object whose time is a quoted epoch
    ('vectra_json_health -: {"type": "heartbeat_check", "result": "success", "vectra_timestamp": "1676367490"}',
     datetime(2023, 2, 14, 9, 38, 10, tzinfo=UTC)),
]


def test_integrations_spellings_give_each_line_its_own_time():
    for line, when in INTEGRATIONS:
        assert parse_record(line, year=2021).time == when, line
    assert read_any_time("30/05/2021 19:09:10") == datetime(2021, 5, 30, 19, 9, 10, tzinfo=UTC)  # day first where it must be


def test_a_pipe_inside_key_value_messages_is_no_column_separator_and_a_joined_prefix_ends_in_its_level():
    santa = [f"[2022-05-12T11:38:0{i}.923Z] I santad: action=EXEC|decision=ALLOW|reason=BINARY|pid={i}|path=/usr/x"
             for i in range(3)]
    parser = SourceParser()
    parser.detect(santa)
    record = parser.parse(santa[1])
    assert record.time == datetime(2022, 5, 12, 11, 38, 1, 923000, tzinfo=UTC) and record.level_name == "INFO"
    rds = ["2022-06-16 17:58:40 UTC::@:[7770]:LOG:  checkpoint starting: time",
           '2019-03-10 03:54:59 UTC:10.0.0.123(52834):postgres@tstdb:[20175]:ERROR: column "wrong" does not exist']
    parser = SourceParser()
    parser.detect(rds)
    first, second = (parser.parse(line) for line in rds)
    assert (first.level_name, first.message) == ("INFO", "checkpoint starting: time")
    assert (second.level_name, second.message) == ("ERROR", 'column "wrong" does not exist')


def test_a_headerless_csv_with_its_date_and_clock_in_two_columns_reads_both():
    dhcp = ["01,04/19/20,13:11:13,Stopped,,,", "00,04/19/20,12:43:06,Started,,,",
            "30,09/20/21,09:16:15,DNS Update Request,172.28.43.169,host.test.com,,,0,6,,,,,,,,,0",
            "31,09/20/21,09:18:00,DNS Update Failed,172.28.43.159,host2.test.com,,,0,6,,,,,,,,,10054",
            "24,11/20/20,00:00:05,Database Cleanup Begin,,,,,0,6,,,,,,,,,0"]
    parser = SourceParser(timezone="America/New_York")
    parser.detect(dhcp)
    records = [parser.parse(line) for line in dhcp]
    assert records[0].time == datetime(2020, 4, 19, 17, 11, 13, tzinfo=UTC)
    assert records[3].time == datetime(2021, 9, 20, 13, 18, 0, tzinfo=UTC) and records[3].message == "DNS Update Failed"


# Spellings and pairs from the Elastic integrations part of the outside bed (tests/data/outside/integrations,
# ELv2: its README), and lines written here in the same vendors' layouts
def test_a_date_written_with_colons_is_read_in_a_header_and_after_a_relay():
    assert read_any_time("2023:04:28-00:00:01") == datetime(2023, 4, 28, 0, 0, 1, tzinfo=UTC)  # Sophos UTM
    assert read_any_time("2023:04:28 00:00:01") == datetime(2023, 4, 28, 0, 0, 1, tzinfo=UTC)  # EXIF's spelling
    assert read_any_time("2023:13:28 00:00:01") is None
    utm = ["2023:04:28-00:00:01 sophos-test-vm1 named[7442]: trust-anchor-telemetry '_test-1/IN' from 89.160.20.129",
           "2023:04:28-02:03:58 sophos-test-vm1 named[7442]: clients-per-query increased to 15"]
    parser = SourceParser()
    parser.detect(utm)
    assert [parser.parse(line).time for line in utm] == [datetime(2023, 4, 28, 0, 0, 1, tzinfo=UTC),
                                                         datetime(2023, 4, 28, 2, 3, 58, tzinfo=UTC)]


def test_digits_that_are_no_date_in_one_order_are_read_in_the_next():
    assert read_any_time("03/19/26 14:55:47") == datetime(2026, 3, 19, 14, 55, 47, tzinfo=UTC)  # not yy/MM/dd
    assert read_any_time("17/06/09 20:10:40") == datetime(2017, 6, 9, 20, 10, 40, tzinfo=UTC)  # Spark's yy/MM/dd


def test_a_header_to_the_second_takes_its_records_finer_time_of_the_same_second(tmp_path):
    # IBM MQ's AMQERR log: the header's stamp, then `Time(…)` with milliseconds, on the line or below it
    log = tmp_path / "AMQERR01.LOG"
    log.write_text(
        "03/19/26 14:55:47 - Process(460.1) User(root) Program(crtmqm) Host(6bfb28d6779a) Time(2026-03-19T14:55:47.163Z)"
        " AMQ8001I: IBM MQ queue manager 'QM1' created.\n"
        "10/13/22 06:13:07 - Process(6437.52) User(mqm) Program(amqrmppa)\n"
        "                    VRMF(9.2.1.0) QMgr(QM1)\n"
        "                    Time(2022-10-13T06:13:07.215Z)\n"
        "AMQ9999E: Channel 'CLIENT.CONN' to host '1.2.3.4' ended abnormally.\n"
        "10/13/22 06:13:09 - Process(6437.52) User(mqm) Program(amqrmppa) Time(2022-10-13T06:13:01.500Z)\n")
    times = [item.time for item, _ in LogFile(log, max_bytes=1 << 20).scan(0, final=True, settled=True)]
    assert times == [datetime(2026, 3, 19, 14, 55, 47, 163000, tzinfo=UTC),
                     datetime(2022, 10, 13, 6, 13, 7, 215000, tzinfo=UTC),
                     datetime(2022, 10, 13, 6, 13, 9, tzinfo=UTC)]  # another second is not the header's


def test_a_date_and_a_clock_in_two_pairs_are_one_time_and_a_level_name_written_whole_is_the_level():
    fortimail = ("<190>date=2023-02-06,time=19:10:00.391,device_id=FEVM02TM23000064,log_id=0700001767,type=kevent,"
                 "subtype=config,pri=information, user=admin,msg=\"Added 'Test_copy' to 'log setting'\"")
    record = parse_record(fortimail)
    assert (record.time, record.level_name) == (datetime(2023, 2, 6, 19, 10, 0, 391000, tzinfo=UTC), "INFO")
    # a relay's year-less header before the device's own `date=` and `time=` pairs
    relayed = ["Aug 19 09:51:11 192.0.2.254 local0.info date=2010-08-19 time=09:52:00 devid=FGT60 type=event "
               "subtype=admin pri=information user=admin action=login status=success msg=\"User admin login\"",
               "Aug 19 10:07:11 192.0.2.254 local0.info date=2010-08-19 time=10:07:59 devid=FGT60 type=event "
               "subtype=admin pri=warning user=admin action=logout status=success msg=\"GUI session timeout\""]
    parser = SourceParser()
    parser.detect(relayed)
    records = [parser.parse(line) for line in relayed]
    assert [(r.time, r.level_name) for r in records] == [(datetime(2010, 8, 19, 9, 52, tzinfo=UTC), "INFO"),
                                                         (datetime(2010, 8, 19, 10, 7, 59, tzinfo=UTC), "WARN")]
    # a date alone with no clock pair after it leaves the later pairs to be read
    alone = parse_record('Aug 19 09:51:11 gw app: date=2010-08-19 devid=FGT60 timestamp="2010-08-19 09:52:01" msg="x"')
    assert alone.time == datetime(2010, 8, 19, 9, 52, 1, tzinfo=UTC)


def test_a_relayed_rfc5424_header_dates_a_year_less_syslog_header():
    pulse = ["Oct 19 09:11:09 pcs-node0 1 2021-10-19T09:11:09+02:00 10.5.2.3 PulseSecure: - - - 2021-10-19 09:11:09"
             " - pcs-node0 - [127.0.0.1] System()[] - No new virus signature list available",
             "Oct 19 09:18:34 pcs-node0 1 2021-10-19T09:18:34+02:00 10.5.2.3 PulseSecure: - - - 2021-10-19 09:18:34"
             " - pcs-node0 - [127.0.0.1] System()[] - Integrity Checker Tool: Periodic Scan Started!"]
    parser = SourceParser(timezone="Europe/Berlin")
    parser.detect(pulse)
    assert [parser.parse(line).time for line in pulse] == [datetime(2021, 10, 19, 7, 11, 9, tzinfo=UTC),
                                                          datetime(2021, 10, 19, 7, 18, 34, tzinfo=UTC)]
