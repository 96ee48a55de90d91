"""Pairwise review of a backtest (issue 38.3, after LangSmith's pairwise annotation queues, over
the durable record): a reviewer sees the live analyst's and the candidate's answer for one incident
as A and B in a random order, chooses the better or `equal` with a reason, and may name the right
category. The judgments are rows of the records store (store/judgments.py), counted in the
backtest's report and exported as labelled eval cases with the reviewers' corrections."""
from __future__ import annotations

import random
from typing import Any

from pipeline.backtest.decisions import MAX_EVENTS, _event
from pipeline.engine import Engine
from pipeline.errors import UsageError
from pipeline.redaction import redact
from pipeline.review.identity import Actor
from pipeline.state import CATEGORIES
from pipeline.store import backtests, judgments

PAIRWISE_SPLIT = "pairwise"
REASON_CHARS = 2000


def pairs(engine: Engine, backtest_id: str) -> list[dict[str, Any]]:
    """The results a reviewer can judge (both answers there), each with its `live` and `candidate`
    side ({category, confidence, root_cause, fix_proposed}), the outcome and the approved category."""
    out = []
    for r in backtests.results(engine.records, backtest_id):  # BacktestNotFound is the caller's
        if r["skipped"] or r["old_category"] is None or r["new_category"] is None:
            continue
        out.append({"incident_id": r["incident_id"], "title": r["title"], "checkpoint_id": r["checkpoint_id"],
                    "outcome": r["outcome"],
                    "human_category": r["human_category"], "human_edit": r["human_edit"],
                    "live": _side(r, "old"), "candidate": _side(r, "new")})
    return out


def _side(r: dict, prefix: str) -> dict[str, Any]:
    return {"category": r[f"{prefix}_category"], "confidence": r[f"{prefix}_confidence"],
            "root_cause": r[f"{prefix}_root_cause"], "fix_proposed": r[f"{prefix}_proposal_hash"] is not None}


def shown_order(rng: random.Random | None = None) -> str:
    """Which side to show as A: live or candidate, at random (the order is stored with the judgment)."""
    return (rng or random.SystemRandom()).choice(judgments.SIDES)


def judge(engine: Engine, actor: Actor, *, backtest_id: str, incident_id: str, a_side: str, choice: str,
          reason: str, correction: str | None = None) -> dict[str, Any]:
    """Record `actor`'s judgment of one incident of a backtest (their earlier one of it is replaced).
    `a_side` is the side shown as A (`named` when the sides were named, `choice` then live,
    candidate or equal); a reason is required; `correction`, a category, when both are wrong."""
    actor.require("judge")
    reason = (reason or "").strip()
    if not reason:
        raise UsageError("say why: a pairwise judgment needs a reason")
    if len(reason) > REASON_CHARS:
        raise UsageError(f"the reason is {len(reason)} characters long; at most {REASON_CHARS}")
    correction = (correction or "").strip() or None
    if correction is not None and correction not in CATEGORIES:
        raise UsageError(f"the right category {correction!r} is not one of the categories")
    if a_side not in judgments.ORDERS:
        raise UsageError(f"the side shown as A is one of {', '.join(judgments.ORDERS)}, not {a_side!r}")
    allowed = (*judgments.SIDES, "equal") if a_side == "named" else judgments.CHOICES
    if choice not in allowed:
        raise UsageError(f"the choice is one of {', '.join(allowed)}, not {choice!r}")
    backtests.backtest(engine.records, backtest_id)  # BacktestNotFound
    if incident_id not in {p["incident_id"] for p in pairs(engine, backtest_id)}:
        raise UsageError(f"backtest {backtest_id} has no two answers of {incident_id} to compare")
    # a pasted token or key never reaches the records (nor the export that carries the reason)
    return judgments.record(engine.records, backtest_id=backtest_id, incident_id=incident_id, reviewer=actor.id,
                            a_side=a_side, choice=choice, reason=redact(reason), correction=correction)


def tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's counts: judgments, incidents judged, and which side they preferred."""
    preferred = [r["preferred"] for r in rows]
    return {"judgments": len(rows), "incidents": len({r["incident_id"] for r in rows}),
            "candidate_preferred": preferred.count("candidate"), "live_preferred": preferred.count("live"),
            "equal": preferred.count("equal"), "corrections": sum(bool(r["correction"]) for r in rows),
            "rows": rows}


def label(judgment: dict[str, Any], pair: dict[str, Any]) -> tuple[str | None, str]:
    """The expected category of a judged incident, and where it comes from: the reviewer's
    correction, else the category reviewers approved, else the preferred side's (or both sides'
    when equal and the same); None when the judgment names none."""
    if judgment["correction"]:
        return judgment["correction"], f"corrected by {judgment['reviewer']}"
    if pair["human_category"]:
        return pair["human_category"], "approved by the reviewers"
    if judgment["preferred"] in judgments.SIDES:
        return pair[judgment["preferred"]]["category"], f"the {judgment['preferred']} answer {judgment['reviewer']} preferred"
    if pair["live"]["category"] == pair["candidate"]["category"]:
        return pair["live"]["category"], f"both answers, judged equal by {judgment['reviewer']}"
    return None, "judged equal with different categories and no correction"


def cases(engine: Engine, backtest_id: str) -> dict[str, Any]:
    """The backtest's judgments as labelled eval cases (knowledge/eval's JSONL shape, split
    `pairwise`), each with both answers, the judgment and the reviewers' corrections of the live
    run (`human_edit`); `unlabelled`: the judgments that name no category."""
    by_incident = {p["incident_id"]: p for p in pairs(engine, backtest_id)}
    out, unlabelled = [], []
    for j in judgments.of_backtest(engine.records, backtest_id):
        pair = by_incident.get(j["incident_id"])
        if pair is None:
            continue
        expected, source = label(j, pair)
        if expected is None:
            unlabelled.append({"incident_id": j["incident_id"], "reviewer": j["reviewer"], "why": source})
            continue
        events = [_event(e) for e in engine.records.events_of(j["incident_id"], limit=MAX_EVENTS)]
        if not events:
            unlabelled.append({"incident_id": j["incident_id"], "reviewer": j["reviewer"], "why": "no events kept"})
            continue
        out.append({"id": f"pairwise-{backtest_id}-{j['incident_id']}-{j['reviewer']}", "expected": expected,
                    "split": PAIRWISE_SPLIT, "note": f"{source}; {j['reviewer']}: {j['reason']}",
                    "incident_id": j["incident_id"], "backtest_id": backtest_id,
                    "judgment": {k: j[k] for k in ("reviewer", "preferred", "a_side", "choice", "reason",
                                                   "correction", "judged_at")},
                    "live": pair["live"], "candidate": pair["candidate"], "approved_category": pair["human_category"],
                    "corrections": pair["human_edit"], "events": events})
    return {"cases": out, "unlabelled": unlabelled}
