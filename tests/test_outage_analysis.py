"""The outage bed's end-to-end analysis score (`outages --analyse`, unattended/outage_analysis.py): each
labelled cause's incident, as the bed picks it, is analysed through the product's graph with the offline
analyst, and its category scored against the label; a healthy control's confidently named incidents are
counted. A tiny bed of its own: a database refusal labelled right, a full disk labelled as something
else (a confident wrong name), a cause without a label (not scored) and a healthy control with one
error."""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.unattended import outage_analysis, outage_bed
from tests.support import cli_json


def _record(second: int, level: str, service: str, message: str) -> dict:
    return {"time": f"2026-12-06T10:00:{second:02d}Z", "level": level, "service": service, "host": f"{service}-1",
            "message": message}


def _scenario(folder: Path, name: str, records: list[dict], causes: list[dict]) -> None:
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    spec = {"log": f"{name}.jsonl", "description": name, "healthy": not causes, "causes": causes}
    (folder / f"{name}.json").write_text(json.dumps(spec), encoding="utf-8")


REFUSED = ("org.postgresql.util.PSQLException: Connection to orders-db:5432 refused. Check that the hostname and"
           " port are correct and that the postmaster is accepting TCP/IP connections.")
DISK = "OSError: [Errno 28] No space left on device: '/var/lib/exports/report-1.csv'"


def _bed(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "tiny"
    folder.mkdir()
    _scenario(folder, "refused", [
        _record(0, "INFO", "orders", "GET /api/orders/1 200 12ms"),
        _record(1, "ERROR", "orders", REFUSED),
        _record(2, "ERROR", "orders", REFUSED),
        _record(3, "INFO", "orders", "GET /api/orders/2 200 9ms"),
    ], [{"name": "C1", "lines": [2, 3], "leader": 2}])
    _scenario(folder, "disk_and_more", [
        _record(0, "ERROR", "exporter", DISK),
        _record(1, "ERROR", "exporter", DISK),
        _record(30, "ERROR", "mailer", "smtplib.SMTPAuthenticationError: (535, b'5.7.8 Username and Password not"
                                       " accepted')"),
    ], [{"name": "DISK", "lines": [1, 2], "leader": 1}, {"name": "MAIL", "lines": [3], "leader": 3}])
    _scenario(folder, "healthy", [
        _record(0, "INFO", "web", "GET / 200 3ms"),
        _record(1, "ERROR", "web", "OSError: [Errno 28] No space left on device: '/tmp/upload-7.part'"),
        # said again: a lone line is named below the code-fix threshold (pipeline/analyst/earned.py)
        _record(2, "ERROR", "web", "OSError: [Errno 28] No space left on device: '/tmp/upload-8.part'"),
        _record(3, "INFO", "web", "GET / 200 2ms"),
    ], [])
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"tiny/refused": {"C1": {"category": "connection_refused"}},
                                  "tiny/disk_and_more": {"DISK": {"category": "out_of_memory", "note": "wrong on purpose"}},
                                  "elsewhere/refused": {"C1": {"category": "disk_full"}}}), encoding="utf-8")
    return folder, labels


def test_each_labelled_cause_is_scored_on_its_incidents_analysis(tmp_path):
    folder, labels = _bed(tmp_path)
    summary = outage_analysis.measure([folder], labels=labels)
    a = summary["analysis"]
    rows = {(r["scenario"], r["cause"]): r for r in a["causes"]}
    assert set(rows) == {("tiny/refused", "C1"), ("tiny/disk_and_more", "DISK")}  # MAIL has no label
    refused, disk = rows["tiny/refused", "C1"], rows["tiny/disk_and_more", "DISK"]
    assert (refused["expected"], refused["predicted"], refused["status"]) == (
        "connection_refused", "connection_refused", "awaiting_approval")
    assert (disk["expected"], disk["predicted"]) == ("out_of_memory", "disk_full")
    assert disk["confidence"] >= a["threshold"] and disk["title"]
    assert a["overall"] == a["folders"]["tiny"] == {
        "causes": 2, "top1_right": 1, "top1": 0.5, "named_wrong": 1, "named_wrong_confident": 1, "no_analysis": 0,
        "healthy_incidents": 1, "healthy_named_confident": 1}
    assert a["confusions"] == [{"expected": "out_of_memory", "predicted": "disk_full", "count": 1,
                                "example": disk["title"]}]


def test_the_grouping_figures_are_the_beds_own(tmp_path):
    folder, labels = _bed(tmp_path)
    assert outage_analysis.measure([folder], labels=labels)["orders"] == outage_bed.measure([folder])["orders"]


def test_the_command_line_scores_the_analysis_with_a_labels_file(tmp_path, capsys):
    folder, labels = _bed(tmp_path)
    summary = cli_json(capsys, "outages", str(folder), "--analyse", "--labels", str(labels))
    assert summary["analysis"]["overall"]["top1_right"] == 1
    assert "analysis" not in cli_json(capsys, "outages", str(folder))
