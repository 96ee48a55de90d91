"""The audit log: every human action with reviewer, time, checkpoints and before/after, as CSV and JSON."""
from __future__ import annotations

import csv
import io
import json
from datetime import datetime

from pipeline.review.service import ReviewService
from tests.support import by_category, cli


def _every_action(engine) -> dict[str, str]:
    """Edit, revise and approve one incident, reject another, then replay and fork the first."""
    service = ReviewService(engine)
    pool, null_ref = by_category(engine, "db_pool_exhausted"), by_category(engine, "null_reference")
    row = engine.records.incident(pool)
    service.edit(pool, reviewer="ann", edits={"rca.confidence": 0.8})
    service.revise(pool, reviewer="ann", feedback="mention the leak detector")
    service.approve(pool, reviewer="bob", note="go")
    service.reject(null_ref, reviewer="cy", reason="fixed upstream already")
    gate = next(h for h in service.history(pool, limit=100) if h["next"] == ["recommend"])["checkpoint_id"]
    service.replay(pool, checkpoint_id=gate, reviewer="dee")
    assert row["severity"] != "high"
    service.fork(pool, checkpoint_id=gate, reviewer="eve", edits={"severity": "high"})
    return {"pool": pool, "null_ref": null_ref, "confidence": row["confidence"], "severity": row["severity"]}


def test_audit_csv_lists_every_action_with_before_and_after(paused_engine, capsys):
    ids = _every_action(paused_engine)
    code, out, err = cli(capsys, "audit", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["action"], r["reviewer"]) for r in rows] == [
        ("edit", "ann"), ("revise", "ann"), ("approve", "bob"), ("reject", "cy"), ("replay", "dee"), ("fork", "eve")]
    for row in rows:
        datetime.fromisoformat(row["at"])
        assert row["checkpoint_before"] and row["checkpoint_after"] and row["checkpoint_before"] != row["checkpoint_after"]
        before, after = json.loads(row["before"]), json.loads(row["after"])
        assert before != after and "status" in before and "status" in after
    by_action = {r["action"]: (json.loads(r["before"]), json.loads(r["after"]), r) for r in rows}
    assert by_action["edit"][0]["rca.confidence"] == ids["confidence"] and by_action["edit"][1]["rca.confidence"] == 0.8
    assert by_action["revise"][1]["revisions"] == 1
    assert by_action["approve"][1]["status"] == "fix_proposed" and by_action["approve"][2]["note"] == "go"
    assert by_action["reject"][1]["status"] == "rejected" and by_action["reject"][2]["incident_id"] == ids["null_ref"]
    assert (by_action["replay"][0]["status"], by_action["replay"][1]["status"]) == ("fix_proposed", "awaiting_approval")
    assert (by_action["fork"][0]["severity"], by_action["fork"][1]["severity"]) == (ids["severity"], "high")


def test_audit_json_of_one_incident_holds_only_its_actions(paused_engine, capsys):
    ids = _every_action(paused_engine)
    code, out, err = cli(capsys, "audit", ids["null_ref"], "--format", "json")
    assert code == 0, err
    (entry,) = json.loads(out)
    assert entry["action"] == "reject" and entry["note"] == "fixed upstream already"
    assert entry["before"]["decision.action"] is None and entry["after"]["decision.action"] == "reject"


def test_history_names_the_human_action_behind_each_checkpoint(paused_engine):
    ids = _every_action(paused_engine)
    made = {h["human_action"] for h in ReviewService(paused_engine).history(ids["pool"], limit=100)}
    assert made == {None, "edit", "revise", "approve", "replay", "fork"}


def test_audit_of_unknown_incident_exits_4_and_bad_format_exits_2(paused_engine, capsys):
    assert cli(capsys, "audit", "INC-20990101-000000")[0] == 4
    assert cli(capsys, "audit", "--format", "xml")[0] == 2
