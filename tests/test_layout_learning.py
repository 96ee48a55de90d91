"""A layout no format list holds is learnt from the file's first lines; the header's
time, level and component are read as written; the message is what follows the header; the
Filebeat fixtures (elastic/beats, tests/data/filebeat/NOTICE) are read as Filebeat reads them."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.unattended.file_ingest import ingest_file
from pipeline.ingest.formats import SourceParser, exception_in, parse_record
from pipeline.ingest.layout import learn
from pipeline.ingest.parsing_check import fixtures_report
from pipeline.store.layouts import source_layouts
from tests.support import cli, cli_json

FIXTURES = Path(__file__).parent / "data" / "filebeat"

# Layouts written in the manner of systems the format list does not know (invented lines).
UNSEEN = {
    "dotted-and-epoch": [
        f"- {1700000000 + i} 2023.11.14 N{i % 3}-R7 2023-11-14-22.13.{20 + i:02d}.{i:06d} N{i % 3}-R7 RAS "
        f"{'KERNEL' if i % 2 else 'APP'} {'INFO' if i % 4 else 'FATAL'} cache line {i} corrected" for i in range(12)],
    "windows-padded": [
        f"2023-11-14 22:13:{i:02d}, {'Info' if i % 3 else 'Error'}                  {'CBS' if i % 2 else 'CSI'}"
        f"    {'Failed to load the store' if i == 4 else f'Session {i} initialised'}" for i in range(12)],
    "pipes-compact": [
        f"20231114-22:13:{i:02d}:{i * 7:03d}|Step_{'LSC' if i % 2 else 'SPU'}|3000{i % 2}|onStep {i} steps"
        for i in range(12)],
    "syslog-after-epoch": [
        f"{'-' if i != 7 else 'KERNDTLB'} {1700000000 + i} 2023.11.14 dn{i % 9} Nov 14 22:13:{20 + i:02d} " + [
            f"dn{i % 9}/dn{i % 9} crond(pam_unix)[{2900 + i}]: session closed for user root",
            f"dn{i % 9}/dn{i % 9} kernel: e1000: eth0: NIC Link is Up 1000 Mbps",
            "local@admin1 /apps/x86_64/sbin/gmetad[1682]: data_thread() got no answer from any datasource",
            f"dn{i % 9}/dn{i % 9} ntpd[{1000 + i}]: synchronized to 10.100.18.250, stratum 3"][i % 4]
        for i in range(24)],
    "file-prefixed": [
        f"svc-api.log.1.2023-11-14_13:00:00 2023-11-14 22:13:{i:02d}.{i:03d} 25{i % 3} INFO svc.api.server "
        f"[req-{i:04d} user{i} - - -] 10.0.0.{i} \"GET /v2/items HTTP/1.1\" status: 200" for i in range(12)],
}


@pytest.mark.parametrize("name", sorted(UNSEEN))
def test_a_layout_never_seen_is_learnt_and_read_header_by_header(name):
    lines = UNSEEN[name]
    parser = SourceParser()
    assert parser.detect(lines) == "learned"
    records = [parser.parse(line) for line in lines]
    assert all(r.time is not None and r.time.year == 2023 and r.time.minute == 13 for r in records)
    assert len({r.time for r in records}) == len(records)  # each line its own time, not the file's
    for line, r in zip(lines, records):
        assert line.endswith(r.message) and len(r.message) < len(line) * 0.8  # the header is cut off
        assert r.service not in (None, "unknown")  # the component names the service
    if name == "windows-padded":
        # the header's level wins over the words: an Info line saying "Failed" is not an error
        assert [r.level_name for r in records[:5]] == ["ERROR", "INFO", "INFO", "ERROR", "INFO"]
        assert records[4].message == "Failed to load the store" and records[4].service == "CSI"
    if name == "dotted-and-epoch":
        assert records[0].level_name == "FATAL" and records[1].level_name == "INFO"
        assert records[1].service == "KERNEL" and records[0].message == "cache line 0 corrected"
    if name == "pipes-compact":
        assert records[3].message == "onStep 3 steps" and records[3].service == "Step_LSC"
        assert records[3].time == datetime(2023, 11, 14, 22, 13, 3, 21000, tzinfo=timezone.utc)
    if name == "file-prefixed":
        assert records[5].message.startswith("10.0.0.5 ") and records[5].service == "svc.api.server"


def test_no_layout_is_invented_for_lines_without_a_leading_time():
    assert learn(["just some words here", "and more words", "nothing with a clock"]) is None
    parser = SourceParser()
    assert parser.detect(["just some words here", "and more words"]) == "text"


@pytest.mark.parametrize("spelling, expected", [
    ("2023-11-14T22:13:05.123+02:00 web api started", datetime(2023, 11, 14, 20, 13, 5, 123000, timezone.utc)),
    ("2023/11/14 22:13:05 web api started", datetime(2023, 11, 14, 22, 13, 5, tzinfo=timezone.utc)),
    ("14.11.2023 22:13:05 web api started", datetime(2023, 11, 14, 22, 13, 5, tzinfo=timezone.utc)),
    ("1700000000 web api started", datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)),
    ("14/Nov/2023:22:13:05 +0100 web api started", datetime(2023, 11, 14, 21, 13, 5, tzinfo=timezone.utc)),
    ("2023-11-14 22:13:05.123 CEST web api started", datetime(2023, 11, 14, 20, 13, 5, 123000, timezone.utc)),
])
def test_the_many_timestamp_spellings_are_read_in_the_header(spelling, expected):
    layout = learn([spelling] * 3)
    assert layout is not None
    m = layout.match(spelling)
    assert layout.read_time(m["time"]) == expected
    assert m["message"].endswith("started")


def test_the_filebeat_fixtures_are_read_as_filebeat_reads_them():
    report = fixtures_report(FIXTURES)
    assert len(report["modules"]) >= 10 and report["lines"] >= 100
    assert report["share"] >= 0.95, report  # time, level and message right where Filebeat has them
    by = {m["module"]: m for m in report["modules"]}
    assert by["mysql-error"]["right"] == by["mysql-error"]["lines"]  # a layout learnt, not a fast path


def test_spring_boot_default_layout_keeps_its_header_out_of_the_message():
    r = parse_record("2024-01-02 03:04:05.123 ERROR 4711 --- [nio-8080-exec-3] o.a.c.c.C.[.[.[/].[dispatcherServlet]"
                     "    : Servlet.service() threw exception")
    assert r.message == "Servlet.service() threw exception" and r.level_name == "ERROR"
    assert r.service == "o.a.c.c.C.[.[.[/].[dispatcherServlet]" and r.fields["thread"] == "nio-8080-exec-3"


def test_half_read_json_layouts_are_read_whole():
    pino = parse_record(json.dumps({"level": 50, "time": 1704164645000, "pid": 1, "hostname": "h",
                                    "name": "checkout", "msg": "boom"}))
    assert pino.service == "checkout"
    ecs = parse_record(json.dumps({"@timestamp": "2024-01-02T03:04:05Z", "log": {"level": "error"},
                                   "ecs": {"version": "8.0"}, "host": {"hostname": "web-1"}, "message": "x"}))
    assert ecs.host == "web-1"
    clef = parse_record(json.dumps({"@t": "2024-01-02T03:04:05Z", "@mt": "Order {OrderId} failed for {Customer}",
                                    "OrderId": 42, "Customer": "ann", "Application": "orders-api", "@l": "Error"}))
    assert clef.message == "Order 42 failed for ann" and clef.service == "orders-api"
    assert clef.fields["message_template"] == "Order {OrderId} failed for {Customer}"
    assert exception_in("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n"
                        "httpx.ReadTimeout: timed out") == "httpx.ReadTimeout"
    assert exception_in("fetch failed: httpx.ReadTimeout: timed out") == "httpx.ReadTimeout"


def test_an_unseen_layout_is_ingested_whole_kept_per_source_and_relearnt_when_replaced(engine, tmp_path, capsys):
    log = tmp_path / "unseen.log"
    lines = UNSEEN["windows-padded"]
    log.write_text("\n".join(lines) + "\n\x00binary line\n", encoding="utf-8")
    counts = ingest_file(engine, log)
    events = sorted((json.loads(e.model_dump_json()) for e in engine.records.all_events()), key=lambda e: e["time"])
    dead = engine.records.query("SELECT * FROM dead_letters")
    assert len(events) + len(dead) == len(lines) + 1  # nothing lost
    assert all(e["time"].startswith("2023-11-14T22:13") for e in events)  # the header's time, not mtime
    assert {e["service"] for e in events} == {"CBS", "CSI"}
    assert not any(e["message"].startswith("2023") for e in events)
    assert ingest_file(engine, log).events == 0 and counts.events == len(lines)  # re-ingest adds nothing
    kept = {row["source"]: row for row in source_layouts(engine.records)}
    row = kept[f"file:{log.resolve()}"]
    assert row["format"] == "learned" and row["layout"]["fields"]["service"] == "CSI"
    # replaced by a file of another layout: learnt again
    log.write_text("\n".join(UNSEEN["pipes-compact"]) + "\n", encoding="utf-8")
    ingest_file(engine, log)
    row = {r["source"]: r for r in source_layouts(engine.records)}[f"file:{log.resolve()}"]
    assert row["layout"]["columns"][0] == "time" and row["layout"]["fields"]["service"] == "Step_SPU"
    shown = cli_json(capsys, "layout", log)
    assert shown["format"] == "learned" and shown["fields"]["message"] == "onStep 0 steps"
    code, out, _ = cli(capsys, "parsing", "--fixtures", FIXTURES)
    assert code == 0 and "Filebeat fixtures:" in out and "mysql-error" in out


def test_a_splunk_sourcetype_s_layout_is_learnt_from_its_first_results():
    from pipeline.sources.splunk import _events

    lines = UNSEEN["windows-padded"]
    results = [({"_raw": raw, "_time": f"2023-11-14T22:13:{i:02d}Z", "_cd": f"1:{i}", "_bkt": "b",
                 "sourcetype": "cbs", "host": "w1", "source": "cbs.log"}, raw) for i, raw in enumerate(lines)]
    events = _events(results)
    assert [e.message for e in events][4] == "Failed to load the store"  # the header is not the message
    assert events[1].level == "INFO" and events[0].level == "ERROR"  # the header's level, not the words


def test_a_record_before_any_timed_one_takes_the_first_time_a_line_writes_not_the_mtime(tmp_path):
    from pipeline.ingest.reading import LogFile

    log = tmp_path / "boot.log"
    log.write_text("starting up the service\n" + "\n".join(UNSEEN["windows-padded"][:6]) + "\n", encoding="utf-8")
    items = LogFile(log, max_bytes=1 << 16).read(0, final=True, settled=True, budget=100).items
    assert len(items) == 7
    assert items[0].time == items[1].time and items[0].fields["time_inferred"] == "first timed line"


def test_a_spelling_no_shape_knows_is_read_by_dateutil_and_twelve_hour_clocks_count():
    lines = [f"2024-Mar-12 10:00:{i:02d} ERROR billing.Invoice: invoice {i} failed" for i in range(10)]
    layout = learn(lines)
    assert layout is not None and layout.time_shape == "dateutil"
    fields = layout.split(lines[3])
    assert fields["time"] == "2024-Mar-12 10:00:03" and fields["level"] == "ERROR"
    assert layout.read_time(fields["time"]) == datetime(2024, 3, 12, 10, 0, 3, tzinfo=timezone.utc)
    pm = [f"Tuesday, 12 March 2024 10:00:{i:02d} PM host1 app[3]: x {i}" for i in range(10)]
    record = SourceParser()
    record.detect(pm)
    assert record.parse(pm[3]).time == datetime(2024, 3, 12, 22, 0, 3, tzinfo=timezone.utc)


def test_incidentiq_log_pattern_overrides_a_learnt_layout_and_reads_its_time_spelling(tmp_path):
    from pipeline.ingest.reading import Parsing
    from pipeline.ingest.source_layout import layout_of_file

    log = tmp_path / "app.log"
    log.write_text("\n".join(UNSEEN["pipes-compact"]) + "\n", encoding="utf-8")
    assert Parsing().parser(UNSEEN["pipes-compact"]).format == "learned"
    pattern = r"^(?P<time>[^|]+)\|(?P<component>[^|]+)\|(?P<pid>\d+)\|(?P<message>.*)$"
    shown = layout_of_file(log, pattern=pattern)
    assert shown["format"] == "custom" and shown["why"] == "INCIDENTIQ_LOG_PATTERN" and shown["share"] == 1.0
    assert shown["fields"]["service"] == "Step_SPU" and shown["fields"]["message"] == "onStep 0 steps"
    assert shown["fields"]["time"] == "2023-11-14T22:13:00+00:00"
