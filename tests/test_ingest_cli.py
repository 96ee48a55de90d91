"""`python -m pipeline ingest | list | show | deadletters` per CONTRACT §5, and bad input end to end
(through the CLI's entry point in this process; the exit codes and stderr from a real process)."""
from __future__ import annotations

import json

from tests.support import FIXTURES, cli_here as cli, run_cli, stored_bodies

VALID = [
    {"_time": "2026-11-28T10:00:00Z", "service": "checkout-api", "level": "ERROR",
     "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
     "exception": "java.sql.SQLTransientConnectionException"},
    {"@timestamp": "2026-11-28T11:00:00+01:00", "app": "inventory-service", "log_level": "error",
     "msg": "AttributeError: 'NoneType' object has no attribute 'quantity'", "exception_type": "AttributeError"},
    {"time": 1795860000, "sourcetype": "loyalty-service", "severity": "WARNING", "message": "slow partner call"},
]


def write_bad_input(path):
    lines = [json.dumps(VALID[0]).encode(),
             b'{"_time": "2026-11-28T10:00:01Z", "message": "trunc',
             b"[1, 2, 3]",
             b'"just a string"',
             json.dumps({"_time": "2026-11-28T10:00:02Z", "service": "x"}).encode(),
             json.dumps({"_time": "yesterday", "message": "bad time"}).encode(),
             json.dumps(VALID[1]).encode(),
             json.dumps({"_time": "2026-11-28T10:00:03Z", "message": "x" * (10 * 1024 * 1024)}).encode(),
             b'{"_time": "2026-11-28T10:00:04Z", "message": "nul\x00byte"}',
             b'{"_time": "2026-11-28T10:00:05Z", "message": "bad \xff\xfe utf8"}',
             json.dumps({"message": "no time at all"}).encode(),
             json.dumps(VALID[2]).encode()]
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_only_what_is_not_text_is_dead_lettered_and_every_other_line_is_an_event(tmp_path, data_dir):
    source = tmp_path / "mixed.jsonl"
    write_bad_input(source)
    result = cli(data_dir, "ingest", str(source), "--json")
    assert result.returncode == 0, result.stderr
    counts = json.loads(result.stdout)
    assert counts["events"] == 9 and counts["rejected"] == 3
    assert counts["incidents_new"] == 2  # the WARN line and the unparsed ones are context, not incidents
    letters = json.loads(cli(data_dir, "deadletters", "--json").stdout)
    reasons = " | ".join(d["reason"] for d in letters)
    for expected in ("exceeds", "NUL", "UTF-8"):
        assert expected.lower() in reasons.lower(), expected
    assert all(d["position"] and len(d["raw"]) <= 2100 for d in letters)
    assert len({d["position"] for d in letters}) == 3
    # lines that are text but not events of CONTRACT §1 are kept whole, with what could be read
    bodies = stored_bodies(data_dir)
    messages = {e["message"] for e in bodies}
    assert {"trunc…", "[1, 2, 3]", '"just a string"', "bad time", "no time at all"} <= messages
    cut = next(e for e in bodies if e["message"] == "trunc…")  # a record cut off keeps what it wrote before the cut
    assert cut["fields"]["truncated"] is True and cut["time"].startswith("2026-11-28T10:00:01")
    bad_time = next(e for e in bodies if e["message"] == "bad time")
    assert bad_time["fields"]["time_raw"] == "yesterday" and bad_time["fields"]["time_inferred"]


def test_ingesting_the_same_input_again_reports_zeros(data_dir):
    first = json.loads(cli(data_dir, "ingest", str(FIXTURES / "small.jsonl"), "--json").stdout)
    assert first["events"] == 10 and first["incidents_new"] == 4
    second = json.loads(cli(data_dir, "ingest", str(FIXTURES / "small.jsonl"), "--json").stdout)
    assert second == {"events": 0, "rejected": 0, "incidents_new": 0, "incidents_updated": 0}


def test_a_copy_of_the_same_events_creates_no_duplicates(tmp_path, data_dir):
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((FIXTURES / "small.jsonl").read_bytes())
    cli(data_dir, "ingest", str(FIXTURES / "small.jsonl"))
    again = json.loads(cli(data_dir, "ingest", str(copy), "--json").stdout)
    assert again["events"] == 0 and again["incidents_new"] == 0


def test_new_matching_events_update_the_open_incident(tmp_path, data_dir):
    cli(data_dir, "ingest", str(FIXTURES / "small.jsonl"))
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({**VALID[0], "_time": "2026-11-28T10:09:00Z",
                                "message": VALID[0]["message"].replace("30000", "30017")}) + "\n")
    counts = json.loads(cli(data_dir, "ingest", str(more), "--json").stdout)
    assert counts == {"events": 1, "rejected": 0, "incidents_new": 0, "incidents_updated": 1}


def test_list_and_show_json_shapes(data_dir):
    cli(data_dir, "ingest", str(FIXTURES / "small.jsonl"))
    rows = json.loads(cli(data_dir, "list", "--json").stdout)
    required = {"incident_id", "status", "service", "severity", "category", "confidence", "event_count",
                "created_at", "updated_at", "sla_deadline"}
    assert rows and all(required <= set(r) for r in rows)
    assert all(r["incident_id"].startswith("INC-2026112") for r in rows)
    shown = json.loads(cli(data_dir, "show", rows[0]["incident_id"], "--json").stdout)
    assert {"incident_id", "status", "service", "severity", "event_count", "rca", "recommendation", "pending",
            "decision", "fix"} <= set(shown)
    assert set(shown["rca"]) >= {"category", "root_cause", "confidence"}
    assert shown["pending"]["interrupt_id"] and shown["pending"]["checkpoint_id"]


def test_list_filters_by_status(data_dir):
    cli(data_dir, "ingest", str(FIXTURES / "small.jsonl"))
    assert json.loads(cli(data_dir, "list", "--status", "fix_proposed", "--json").stdout) == []


def test_exit_codes_and_errors_on_stderr(tmp_path, data_dir):
    missing = run_cli(data_dir, "show", "INC-20990101-abcdef", "--json")
    assert missing.returncode == 4 and missing.stdout == "" and "not found" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    no_file = cli(data_dir, "ingest", str(tmp_path / "nope.jsonl"))
    assert no_file.returncode == 2 and "no such file" in no_file.stderr
    bad_usage = cli(data_dir, "list", "--status", "bogus")
    assert bad_usage.returncode == 2
