"""Reviewers' corrections as labelled eval cases (`eval --from-decisions`): an incident approved
after an edit of its category or root cause, labelled with the category approved; an incident
rejected with a reason, labelled `unknown` (the reviewer said the named cause is not supported;
the category they rejected is kept as `rejected_category`). Same JSONL shape as knowledge/eval,
split `decisions`, written under the data dir (never into the repository)."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pipeline.backtest.human import human_outcome
from pipeline.engine import Engine
from pipeline.state import LogEvent
from pipeline.store import backtests

DECISIONS_FILE = "eval-decisions.jsonl"
MAX_EVENTS = 12


def decision_cases(engine: Engine, *, since: datetime | None = None) -> list[dict]:
    """The eval cases of the reviewers' corrections, oldest decision first."""
    cases = []
    for incident_id in backtests.decided_incidents(engine.records, since=since):
        row = engine.records.incident(incident_id)
        human = human_outcome(row, engine.records.audit(row["incident_id"]))
        corrected = {"rca.category", "rca.root_cause"} & set(human["edits"])
        decision = human["decision"]
        if human["outcome"] == "approved_after_edits" and corrected:
            expected = row["category"]
            note = f"approved by {decision.get('reviewer')} after editing {', '.join(sorted(corrected))}"
            extra = {"edits": {k: human["edits"][k] for k in sorted(corrected)}}
        elif human["outcome"] == "rejected" and decision.get("note"):
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
