"""Real logs in, nothing lost: the eight shared Loghub systems ingested as plain text,
GA of the template miner, and hand-written samples of the formats people ship."""
from __future__ import annotations

import json
import time

import pytest

from pipeline.unattended.file_ingest import ingest_path
from pipeline.incidents.grouping import load
from pipeline.incidents.batch import Incidents
from pipeline.incidents.opening import OpeningRule
from pipeline.ingest.reading import LogFile
from pipeline.state import LogEvent
from pipeline.store.records import Records
from tests.support import LOGHUB, LOGHUB_SYSTEMS, cli_here

SYSTEMS = LOGHUB_SYSTEMS


def count(engine, sql: str) -> int:
    return engine.records.query(sql)[0][0]


@pytest.mark.usefixtures("needs_loghub")
@pytest.mark.parametrize("system", SYSTEMS)
def test_a_plain_text_log_is_stored_whole_and_opens_one_incident_per_error_template(engine, system):
    log = load(LOGHUB / system)
    lines = [ln for ln in log.raw_log.read_bytes().splitlines() if ln.strip()]
    started = time.monotonic()
    counts = ingest_path(engine, log.raw_log).as_json()
    elapsed = time.monotonic() - started
    # every line is an event (none of these logs has continuation lines), none is refused, and
    # the identical lines Apache repeats within one second are each one
    assert counts["events"] == len(lines) == engine.records.event_count()
    assert counts["rejected"] == 0
    error_templates = log.error_templates(engine.incidents.opening)
    incidents = count(engine, "SELECT count(*) FROM incidents")
    assert incidents <= 2 * len(error_templates), (incidents, len(error_templates))
    assert (incidents > 0) == bool(error_templates)
    opened = count(engine, "SELECT count(*) FROM events WHERE incident_id IS NOT NULL")
    assert count(engine, "SELECT coalesce(sum(event_count), 0) FROM incidents") == opened
    print(f"{system}: {len(lines)} lines, {incidents} incidents for {len(error_templates)} error templates,"
          f" {elapsed:.1f}s")
    assert ingest_path(engine, log.raw_log).as_json() == {"events": 0, "rejected": 0, "incidents_new": 0,
                                                          "incidents_updated": 0}


@pytest.mark.usefixtures("needs_loghub")
def test_the_grouping_command_meets_the_ga_goal_on_the_shared_systems(data_dir):
    result = cli_here(data_dir, "grouping", str(LOGHUB), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert {r["system"] for r in summary["systems"]} == set(SYSTEMS)
    assert summary["mean_miner"] >= 0.90 and summary["min_miner"] >= 0.70 and summary["goal_met"]
    assert summary["mean_miner"] > summary["mean_baseline"]
    # in the same run: Drain3 with its defaults and with the Loghub benchmark's per-system settings
    assert all(r["drain3"] is not None and r["drain3_benchmark"] is not None for r in summary["systems"])
    assert summary["mean_miner"] >= 0.95 > summary["mean_drain3_benchmark"]
    # and on what our reader takes out of the raw lines, beside Drain3's benchmark settings on the same;
    # at or above those settings on every system, messages only and raw (issue 34.5)
    assert all(r["raw_miner"] is not None and r["raw_drain3_benchmark"] is not None for r in summary["systems"])
    assert summary["mean_raw_miner"] >= 0.95
    assert summary["below_drain3_benchmark"] == [] and summary["below_drain3_benchmark_raw"] == []


def test_the_grouping_command_refuses_a_folder_without_labelled_logs(tmp_path, data_dir):
    result = cli_here(data_dir, "grouping", str(tmp_path))
    assert result.returncode == 2 and "structured CSV" in result.stderr


# -- hand-written samples ------------------------------------------------------------------------

SAMPLES = {
    "pino.log": ['{"level":50,"time":1795860000000,"pid":7,"hostname":"web-1","msg":"payment failed: card declined"}'],
    "zap.log": ['{"level":"error","ts":1795860000.5,"caller":"pay/charge.go:42","msg":"charge failed","error":"EOF"}'],
    "structlog.log": ['{"event": "db timeout", "level": "error", "timestamp": "2026-11-28T10:00:00Z"}'],
    "serilog.clef": ['{"@t":"2026-11-28T10:00:00Z","@mt":"Order {Id} failed","@l":"Error","Id":5}'],
    "ecs.log": ['{"@timestamp":"2026-11-28T10:00:00Z","log.level":"error","message":"disk full","ecs.version":"1.6"}'],
    "bunyan.log": ['{"name":"api","hostname":"h","pid":1,"level":50,"msg":"boom","time":"2026-11-28T10:00:00Z","v":0}'],
    "gelf.log": ['{"version":"1.1","host":"h","short_message":"upstream refused","level":3,"timestamp":1795860000}'],
    "logfmt.log": ['time=2026-11-28T10:00:00Z level=error msg="queue full" queue=orders'],
    "syslog.log": ["<27>Nov 28 10:00:00 web-1 nginx[12]: connect() failed (111: Connection refused)"],
    "apache.log": ["[Sat Nov 28 10:00:00 2026] [error] [client 10.0.0.1] File does not exist: /var/www/x"],
    "log4j.log": ["2026-11-28 10:00:00,123 ERROR [main] com.shop.Checkout: payment failed"],
    "logcat.log": ["11-28 10:00:00.123  123  456 E ActivityManager: ANR in com.shop"],
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_common_format_becomes_an_error_event(tmp_path, name):
    path = tmp_path / name
    path.write_text("\n".join(SAMPLES[name]) + "\n")
    items = LogFile(path, max_bytes=262_144).read(0, final=True, settled=True, budget=100).items
    assert len(items) == 1 and isinstance(items[0], LogEvent), items
    assert items[0].level in ("ERROR", "FATAL"), (items[0].level, items[0].fields)
    assert items[0].message.strip()


def test_a_stack_trace_written_one_line_at_a_time_is_one_event(tmp_path, engine):
    path = tmp_path / "app.log"
    path.write_text("2026-11-28 10:00:00,001 ERROR [main] com.shop.Checkout: payment failed\n"
                    "java.lang.IllegalStateException: card processor gone\n"
                    "\tat com.shop.Pay.charge(Pay.java:42)\n"
                    "\tat com.shop.Checkout.run(Checkout.java:7)\n"
                    "Caused by: java.net.ConnectException: Connection refused\n"
                    "\t... 2 more\n"
                    "2026-11-28 10:00:01,000 INFO [main] com.shop.Checkout: next\n")
    counts = ingest_path(engine, path).as_json()
    assert counts["events"] == 2 and counts["incidents_new"] == 1
    event = engine.records.events_of(engine.records.incidents()[0]["incident_id"])[0]
    assert event.exception == "java.lang.IllegalStateException" and "Pay.java:42" in event.stack


def test_a_growing_file_holds_its_last_record_back_until_it_is_complete_or_quiet(tmp_path):
    from pipeline.sources.file import FileSource

    now = [time.time()]
    path = tmp_path / "app.log"
    path.write_text("2026-11-28 10:00:00,001 ERROR [main] com.shop.Checkout: payment failed\n"
                    "java.lang.IllegalStateException: card processor gone\n")
    source = FileSource(path, max_bytes=262_144, clock=lambda: now[0], settle=2.0)
    first = source.read(None)
    assert first.items == []  # its stack trace may still be being written
    with path.open("a") as f:
        f.write("\tat com.shop.Pay.charge(Pay.java:42)\n")
    now[0] += 10  # quiet since: the record is whole
    second = source.read(first.cursor)
    assert len(second.items) == 1 and "Pay.java:42" in second.items[0].stack
    assert source.read(second.cursor).items == []


def test_identical_lines_at_two_positions_are_two_events_and_a_reread_stores_nothing(tmp_path, engine):
    line = "[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6\n"
    path = tmp_path / "error_log"
    path.write_text(line * 3)
    assert ingest_path(engine, path).as_json()["events"] == 3
    engine.records.set_cursor(f"file:{path.resolve()}", "")  # a lost cursor: the file is read again
    assert ingest_path(engine, path).as_json()["events"] == 0
    rotated = tmp_path / "error_log.1"
    path.rename(rotated)  # a rename-rotation keeps the file's identity
    assert ingest_path(engine, rotated).as_json()["events"] == 0


def test_a_warn_line_with_a_known_error_signature_joins_its_error_twin_but_never_opens_an_incident_alone(tmp_path, engine):
    # CONTRACT §2 (the lead's ruling, session 42): a WARN never opens an incident by itself
    path = tmp_path / "app.log"
    warn = ("2026-11-28 10:00:{s:02d},001 WARN [main] com.zaxxer.hikari.pool: HikariPool-1 - Connection is not"
            " available, request timed out after 30000ms.\n")
    path.write_text(warn.format(s=0) + "2026-11-28 10:00:01,001 WARN [main] com.shop.Cache: cache warm-up slower than usual\n")
    assert ingest_path(engine, path).as_json()["incidents_new"] == 0
    with path.open("a") as out:
        out.write(warn.format(s=2).replace(" WARN ", " ERROR ") + warn.format(s=3))
    counts = ingest_path(engine, path).as_json()
    assert counts["incidents_new"] == 1
    events = engine.records.events_of(engine.records.incidents()[0]["incident_id"])
    assert sorted(e.level for e in events) == ["ERROR", "WARN"]  # the WARN twin joined the ERROR's incident
    only_levels = OpeningRule.of(floor="ERROR")
    assert [only_levels.opens(e) for e in sorted(events, key=lambda e: e.level)] == [True, False]


def test_the_miner_state_is_shared_by_two_stores_on_one_data_dir(tmp_path):
    path = tmp_path / "app.sqlite3"
    a, b = Incidents(Records(path)), Incidents(Records(path))

    def event(n: int, node: str) -> LogEvent:
        return LogEvent(event_id=f"e{n}", time=f"2026-11-28T10:00:0{n}Z", level="ERROR", service="dfs",
                        message=f"Exception in receiveBlock for block blk_{n}77 on {node}")

    a.store_batch([event(1, "node-a")], cursor=None)
    b.store_batch([event(2, "node-b")], cursor=None)  # learns what a saved, first
    a.store_batch([event(3, "node-c")], cursor=None)  # and a what b saved
    incidents = a.records.incidents()
    assert len(incidents) == 1 and incidents[0]["event_count"] == 3
    assert a.templates() == b.templates() and len(a.templates()) == 1
    a.records.close(), b.records.close()


def test_an_older_data_dir_is_not_duplicated_when_its_file_is_read_again(tmp_path, engine):
    """Events stored by a version that identified them by content are recognised by that id."""
    from pipeline.ingest.events import normalize

    obj = {"_time": "2026-11-28T10:00:00Z", "service": "checkout-api", "level": "ERROR", "message": "boom 1"}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    old = normalize(obj, source=str(path), position=f"{path}@0")  # as the older version stored it
    with engine.records.transaction() as conn:
        conn.execute("INSERT INTO events(event_id, incident_id, time, service, level, message, body, source,"
                     " position, stored_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                     (old.event_id, None, old.time.isoformat(), old.service, old.level, old.message,
                      old.model_dump_json(), old.source, old.position, "2026-11-28T10:00:00+00:00"))
        conn.execute("INSERT INTO store_meta(key, value) VALUES ('content_ids', 'yes') ON CONFLICT DO NOTHING")
    assert ingest_path(engine, path).as_json()["events"] == 0


# -- Splunk ----------------------------------------------------------------------------------------

def splunk_lines(results: list[dict]) -> list[str]:
    base = {"host": "co-1", "source": "/var/log/app.log", "sourcetype": "checkout"}
    return [json.dumps({"preview": False, "result": {**base, **r}}) for r in results]


def test_splunk_results_of_a_stack_trace_indexed_line_by_line_join_their_first_line():
    from pipeline.sources.splunk import SplunkSource

    source = SplunkSource(url="http://splunk.invalid:8089", query="index=main")
    t = "2026-11-28T10:00:00.000+00:00"
    items = source._results(splunk_lines([
        {"_bkt": "main~1", "_cd": "1:12", "_time": t, "_raw": "\tat com.shop.Pay.charge(Pay.java:42)"},
        {"_bkt": "main~1", "_cd": "1:10", "_time": t, "_raw": "2026-11-28 10:00:00,001 ERROR [main] com.shop.Pay: charge failed"},
        {"_bkt": "main~1", "_cd": "1:11", "_time": t, "_raw": "java.lang.IllegalStateException: gone"},
    ]))
    assert len(items) == 1 and isinstance(items[0], LogEvent)
    event = items[0]
    assert event.level == "ERROR" and event.message == "charge failed"
    assert event.exception == "java.lang.IllegalStateException" and "Pay.java:42" in event.stack


def test_identical_splunk_results_without_an_address_are_two_events_and_the_same_in_the_next_window():
    from pipeline.sources.splunk import SplunkSource

    source = SplunkSource(url="http://splunk.invalid:8089", query="index=main")
    same = {"_time": "2026-11-28T10:00:00.000+00:00", "_indextime": "1795860001", "_raw": "ERROR disk full on /data"}
    first = source._results(splunk_lines([{**same, "_serial": "0"}, {**same, "_serial": "1"}]))
    again = source._results(splunk_lines([{**same, "_serial": "5"}, {**same, "_serial": "9"}]))  # overlap re-read
    assert len({e.event_id for e in first}) == 2
    assert {e.event_id for e in first} == {e.event_id for e in again}


def test_json_that_cannot_be_stored_is_a_dead_letter_and_the_lines_after_it_are_read(tmp_path):
    path = tmp_path / "app.jsonl"
    deep = "{\"a\":" * 100 + "1" + "}" * 100
    path.write_text('{"_time":"2026-11-28T10:00:00Z","level":"error","message":"half \\ud800 a char"}\n'
                    f'{{"_time":"2026-11-28T10:00:01Z","level":"error","message":"deep","x":{deep}}}\n'
                    '{"_time":"9999-01-01T00:00:00Z","level":"error","message":"clock garbage"}\n'
                    '{"_time":"2026-11-28T10:00:03Z","level":"error","message":"fine"}\n')
    items = LogFile(path, max_bytes=262_144).read(0, final=True, settled=True, budget=100).items
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["DeadLetter", "DeadLetter", "LogEvent", "LogEvent"], items
    assert "surrogate" in items[0].reason and "nested deeper" in items[1].reason
    assert items[2].fields["time_raw"].startswith("9999") and items[2].time.year < 3000
