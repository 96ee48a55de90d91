"""Reviewers' corrections as labelled eval cases (`eval --from-decisions`): an incident approved
after a person changed its category or root cause (an edit, Edit & approve, or a fork), or after a
request for changes that moved the category away from the analyst's answer, labelled with the
category approved; an incident
rejected with a reason that denies the analysis ("not an outage", "not a deadlock") or names another
cause, labelled `unknown` (the category they rejected is kept as `rejected_category`). A rejection
whose reason does neither ("not our bug, the vendor rotated the cert": the cause right, the fault
someone else's) is no label: it is skipped, and said in `skipped` with why. The reason is read as a
request for changes is (pipeline/analyst/reading.py). Same JSONL shape as knowledge/eval,
split `decisions`, written under the data dir (never into the repository)."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from typing import cast

from pipeline.analyst.reading import read_requests
from pipeline.backtest.human import analysis_points, human_outcome
from pipeline.backtest.run import state_at
from pipeline.engine import Engine
from pipeline.state import LogEvent
from pipeline.store import backtests, checkpoints

DECISIONS_FILE = "eval-decisions.jsonl"
MAX_EVENTS = 12


def decision_cases(engine: Engine, *, since: datetime | None = None, skipped: list[dict] | None = None) -> list[dict]:
    """The eval cases of the reviewers' corrections, oldest decision first. `skipped`, when given, gets
    the decisions read and not made cases for a reason a reviewer would want said (incident_id, why)."""
    cases = []
    store = cast(checkpoints.CheckpointStore, engine.graph.checkpointer)  # ours, as the composition root compiles it
    for incident_id in backtests.decided_incidents(engine.records, since=since):
        row = engine.records.incident(incident_id)
        points = analysis_points(checkpoints.checkpoint_rows(store, incident_id))
        human = human_outcome(row, engine.records.audit(incident_id), points if points.start else None)
        corrected = {"rca.category", "rca.root_cause"} & set(human["edits"])
        decision = human["decision"]
        if human["outcome"] == "approved_after_edits" and corrected:
            expected = row["category"]
            how = "; ".join(f"{e['by']} {'forked and set' if e['how'] == 'fork' else 'edited'} {name}"
                            for name, e in sorted(human["edits"].items()) if name in corrected)
            note = f"approved by {_approvers(decision)} after {how}"
            extra = {"edits": {k: human["edits"][k] for k in sorted(corrected)}}
        elif human["outcome"] == "revised" and points.live is not None \
                and (analysed := state_at(engine, incident_id, points.live)).rca is not None \
                and analysed.rca.category != row["category"]:
            asked = ", ".join(sorted({s["by"] for s in decision["steps"] if s["action"] == "revise"}))
            expected = row["category"]
            note = f"approved by {_approvers(decision)} after {asked} asked for changes"
            extra = {"edits": {"rca.category": {"from": analysed.rca.category, "to": row["category"], "by": asked,
                                                "how": "revise"}},
                     "requests": decision["requests"]}
        elif human["outcome"] == "rejected" and decision.get("note"):
            why = _no_label(engine, row.get("category"), decision["note"])
            if why:
                if skipped is not None:
                    skipped.append({"incident_id": row["incident_id"], "why": f"rejected by "
                                    f"{decision.get('reviewer')}: “{decision['note']}”: {why}"})
                continue
            expected = "unknown"
            note = f"rejected by {decision.get('reviewer')}: {decision['note']}"
            extra = {"rejected_category": row["category"]}
        else:
            continue
        events = [_event(e) for e in engine.records.events_of(row["incident_id"], limit=MAX_EVENTS)]
        if not events:
            continue
        cases.append({"id": f"decision-{row['incident_id']}", "expected": expected, "split": "decisions",
                      "note": note, "incident_id": row["incident_id"], "decided_at": decision.get("at"),
                      **extra, "events": events})
    return cases


def _no_label(engine: Engine, category: str | None, reason: str) -> str | None:
    """Why a rejection's reason is no label, or None when it is one: it says the incident is not what
    it was named (any denial) or names another cause (a doc of another category, or a cause stated in
    words no doc of the rejected category matches). The reason is read as a request for changes is."""
    reading = read_requests(engine.kb, [reason])
    names_another = reading.doc.category != category if reading.doc is not None else bool(reading.cause)
    if reading.not_words or names_another:
        return None
    return (f"the reason neither denies {category or 'the named cause'} nor names another cause, so the "
            "case would say nothing of the analysis")


def _approvers(decision: dict) -> str:
    return " and ".join(decision.get("approvers") or [decision.get("reviewer") or "?"])


def write_cases(cases: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    tmp.replace(path)
    return path


def _event(e: LogEvent) -> dict:
    out = {"_time": e.time.isoformat(), "level": e.level, "service": e.service, "host": e.host,
           "message": e.message, "exception": e.exception, "stack": e.stack}
    return {k: v for k, v in out.items() if v is not None}
