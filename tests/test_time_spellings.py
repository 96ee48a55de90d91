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
