"""Pairwise review of a backtest (issue 38.3, after LangSmith's pairwise annotation queues, over
the durable record): a reviewer sees the live analyst's and the candidate's answer for one incident
as A and B in a random order, chooses the better or `equal` with a reason, and may name the right
category. The judgments are rows of the records store (store/judgments.py), counted in the
backtest's report and exported as labelled eval cases with the reviewers' corrections.

An incident whose two answers are identical (the same category, confidence, root cause and fix)
has nothing to prefer: it is not offered for judgment, counts as equal without one (`identical`),
and a preference recorded between identical answers counts as `equal`."""
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
    """The results with both answers there, each with its `live` and `candidate` side ({category,
    confidence, root_cause, fix_proposed}), the outcome, the approved category and whether the two
    answers are `identical` (then not for judging)."""
    out = []
    for r in backtests.results(engine.records, backtest_id):  # BacktestNotFound is the caller's
        if not _both(r):
            continue
        out.append({"incident_id": r["incident_id"], "title": r["title"], "checkpoint_id": r["checkpoint_id"],
                    "outcome": r["outcome"],
                    "human_category": r["human_category"], "human_edit": r["human_edit"],
                    "live": {**_side(r, "old"), "fix": r.get("old_fix") or {}},
                    "candidate": {**_side(r, "new"), "fix": r.get("new_fix") or {}}, "identical": _identical(r)})
    return out


def identical_ids(results: list[dict[str, Any]]) -> set[str]:
    """The incidents of a backtest's result rows whose two answers are identical."""
    return {r["incident_id"] for r in results if _both(r) and _identical(r)}


def _both(r: dict) -> bool:
    return not r["skipped"] and r["old_category"] is not None and r["new_category"] is not None


def _identical(r: dict) -> bool:
    # as a reviewer sees them: the confidence to two places
    def shown(side: dict) -> dict:
        return {**side, "confidence": None if side["confidence"] is None else round(side["confidence"], 2)}
    return shown(_side(r, "old")) == shown(_side(r, "new"))


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
    pair = next((p for p in pairs(engine, backtest_id) if p["incident_id"] == incident_id), None)
    if pair is None:
        raise UsageError(f"backtest {backtest_id} has no two answers of {incident_id} to compare")
    if pair["identical"] and (choice if a_side == "named" else judgments.preferred_side(choice, a_side)) != "equal":
        raise UsageError(f"the two answers of {incident_id} are identical: neither can be better (they count as "
                         "equal without a judgment)")
    # a pasted token or key never reaches the records (nor the export that carries the reason)
    return judgments.record(engine.records, backtest_id=backtest_id, incident_id=incident_id, reviewer=actor.id,
                            a_side=a_side, choice=choice, reason=redact(reason), correction=correction)


def tally(rows: list[dict[str, Any]], identical: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """The report's counts: judgments, incidents judged, and which side they preferred (a preference
    between identical answers counts as equal), and `identical`: the incidents whose two answers
    are identical, counted as equal without a judgment."""
    rows = [counted(r, identical) for r in rows]
    preferred = [r["preferred"] for r in rows]
    return {"judgments": len(rows), "incidents": len({r["incident_id"] for r in rows}),
            "candidate_preferred": preferred.count("candidate"), "live_preferred": preferred.count("live"),
            "equal": preferred.count("equal"), "identical": len(identical),
            "corrections": sum(bool(r["correction"]) for r in rows), "rows": rows}


def counted(judgment: dict[str, Any], identical: set[str] | frozenset[str]) -> dict[str, Any]:
    """A judgment as it counts: one of identical answers prefers neither."""
    return {**judgment, "preferred": "equal"} if judgment["incident_id"] in identical else judgment


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
    same = {i for i, p in by_incident.items() if p["identical"]}
    out, unlabelled = [], []
    for j in judgments.of_backtest(engine.records, backtest_id):
        pair = by_incident.get(j["incident_id"])
        if pair is None:
            continue
        j = counted(j, same)
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
