"""A backtest's report: the candidate against the live analysis and the humans' outcome."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from pipeline.backtest.human import APPROVED, OUTCOME_WORDS, OUTCOMES
from pipeline.backtest.pairwise import identical_ids, tally
from pipeline.engine import Engine
from pipeline.state import counted, grade
from pipeline.store import backtests, judgments


def verdict(r: dict) -> str:
    """How the candidate's category stands to the humans' outcome:
    agrees | changes_approved | fixes_correction | repeats_correction | other_than_correction |
    changes_rejected | repeats_rejected | changes | same | skipped. A correction is an approved
    category other than the analyst's own answer, whoever made it (an edit, a fork, a revision)."""
    if r["skipped"]:
        return "skipped"
    old, new, human = r["old_category"], r["new_category"], r["human_category"]
    if r["outcome"] in APPROVED:
        if old is not None and human is not None and old != human:
            return "fixes_correction" if new == human else "repeats_correction" if new == old else "other_than_correction"
        return "agrees" if new == human else "changes_approved"
    if r["outcome"] == "rejected":
        return "repeats_rejected" if new == old else "changes_rejected"
    return "same" if new == old else "changes"


# the candidate says other than what the reviewers stand behind
DISAGREEING = ("changes_approved", "repeats_correction", "other_than_correction")


def report(engine: Engine, backtest_id: str) -> dict:
    """Summary, per outcome and per category, the corrections, the newly eligible fixes, and each
    disagreement (old, new, what the human decided) with the checkpoint it started from."""
    records = engine.records
    head = backtests.backtest(records, backtest_id)
    rows = backtests.results(records, backtest_id)
    for r in rows:
        r["verdict"] = verdict(r)
        r["outcome_words"] = OUTCOME_WORDS.get(r["outcome"], r["outcome"])
        r["who_did_what"] = step_words(r["human_decision"])
        r["category_changed"] = not r["skipped"] and r["old_category"] != r["new_category"]
        r["newly_fix_eligible"] = not r["skipped"] and r["old_proposal_hash"] is None and r["new_proposal_hash"] is not None
        r["fix_no_longer_eligible"] = not r["skipped"] and r["old_proposal_hash"] is not None and r["new_proposal_hash"] is None
    analysed = [r for r in rows if not r["skipped"]]
    by_outcome = {}
    for outcome in OUTCOMES:
        of = [r for r in analysed if r["outcome"] == outcome]
        if of:
            by_outcome[outcome] = {"words": OUTCOME_WORDS[outcome], "incidents": len(of),
                                   "same_category": sum(not r["category_changed"] for r in of),
                                   "changed_category": sum(r["category_changed"] for r in of),
                                   "agrees_with_human": sum(r["verdict"] in ("agrees", "fixes_correction") for r in of)}
    labelled = [r for r in analysed if r["human_category"]]
    per_category: dict[str, dict] = {}
    for r in labelled:
        c = per_category.setdefault(r["human_category"], {"incidents": 0, "live_agreed": 0, "candidate_agrees": 0})
        c["incidents"] += 1
        c["live_agreed"] += r["old_category"] == r["human_category"]
        c["candidate_agrees"] += r["new_category"] == r["human_category"]
    confusion: dict[str, Counter] = defaultdict(Counter)
    for r in labelled:
        confusion[r["human_category"]][r["new_category"] or "none"] += 1
    verdicts = Counter(r["verdict"] for r in rows)
    keep = ("incident_id", "checkpoint_id", "outcome", "verdict", "old_category", "new_category", "human_category",
            "old_confidence", "new_confidence", "old_root_cause", "new_root_cause", "old_proposal_hash",
            "new_proposal_hash", "human_decision", "human_edit", "newly_fix_eligible", "fix_no_longer_eligible",
            "outcome_words", "who_did_what",
            "old_fix", "new_fix")
    disagreements = [{k: r[k] for k in keep} for r in analysed if r["verdict"] in DISAGREEING]
    # where the candidate differs from the live analysis without going against the reviewers
    changes = [{k: r[k] for k in keep} for r in analysed if r["verdict"] not in DISAGREEING
               and (r["category_changed"] or r["newly_fix_eligible"] or r["fix_no_longer_eligible"])]
    return {
        "backtest": {k: head[k] for k in ("backtest_id", "candidate", "status", "started_at", "finished_at", "total",
                                          "done")},
        "summary": {
            "incidents": len(rows), "analysed": len(analysed), "skipped": len(rows) - len(analysed),
            "category_changed": sum(r["category_changed"] for r in analysed),
            "labelled": len(labelled),
            "live_agreement": _share(sum(r["old_category"] == r["human_category"] for r in labelled), len(labelled)),
            "candidate_agreement": _share(sum(r["new_category"] == r["human_category"] for r in labelled), len(labelled)),
            # graded as `eval` grades (docs/CONTRACT.md §3), against the category the reviewers approved
            "live_graded": _graded(labelled, "old"),
            "candidate_graded": _graded(labelled, "new"),
            "candidate_precision_at_fix_threshold": _precision(labelled, engine.deps.code_fix_min_confidence),
            "newly_fix_eligible": sum(r["newly_fix_eligible"] for r in analysed),
            "fix_no_longer_eligible": sum(r["fix_no_longer_eligible"] for r in analysed),
        },
        "verdicts": dict(verdicts),
        "by_outcome": by_outcome,
        "per_category": dict(sorted(per_category.items())),
        "confusion": {k: dict(v) for k, v in sorted(confusion.items())},
        "corrections": {
            "better": [r["incident_id"] for r in rows if r["verdict"] == "fixes_correction"],
            "same_mistake": [r["incident_id"] for r in rows if r["verdict"] == "repeats_correction"],
            "worse": [r["incident_id"] for r in rows if r["verdict"] == "other_than_correction"],
        },
        "newly_fix_eligible": [r["incident_id"] for r in analysed if r["newly_fix_eligible"]],
        "disagreements": disagreements,
        "changes": changes,
        "skipped": [{"incident_id": r["incident_id"], "why": r["skipped"]} for r in rows if r["skipped"]],
        # reviewers' pairwise judgments of the two answers (backtest/pairwise.py)
        "pairwise": tally(judgments.of_backtest(records, backtest_id), identical_ids(rows)),
    }


def _share(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def _graded(labelled: list[dict], side: str) -> float | None:
    """The mean grade (pipeline.state.grade) of the old or new categories, as a share of 100."""
    return _share(sum(grade(r["human_category"], r[f"{side}_category"] or "unknown") for r in labelled),
                  100 * len(labelled))


def _precision(labelled: list[dict], threshold: float) -> float | None:
    """Of the candidate's categories named at or above the code-fix threshold, the share reviewers approved."""
    named = [r for r in labelled if (r["new_category"] or "unknown") != "unknown"
             and (r["new_confidence"] or 0.0) >= threshold]
    return _share(sum(r["new_category"] == r["human_category"] for r in named), len(named))


def report_text(rep: dict) -> str:
    """The report as the CLI prints it."""
    b, s = rep["backtest"], rep["summary"]
    lines = [f"Backtest {b['backtest_id']}: {b['candidate']} — {b['status']}, {b['done']}/{b['total']} incidents",
             f"  analysed {s['analysed']}, skipped {s['skipped']}; category changed on {s['category_changed']}",
             f"  agreement with what reviewers approved ({s['labelled']} labelled): live "
             f"{_pct(s['live_agreement'])}, candidate {_pct(s['candidate_agreement'])}; graded live "
             f"{_pct(s['live_graded'])}, candidate {_pct(s['candidate_graded'])}; candidate precision at the "
             f"code-fix threshold {_pct(s['candidate_precision_at_fix_threshold'])}",
             f"  code fix newly eligible: {s['newly_fix_eligible']}; no longer eligible: {s['fix_no_longer_eligible']}",
             "", f"{'human outcome':<40} {'incidents':>9} {'same':>5} {'changed':>7} {'agrees':>6}"]
    for o in rep["by_outcome"].values():
        lines.append(f"{o['words']:<40} {o['incidents']:>9} {o['same_category']:>5} {o['changed_category']:>7}"
                     f" {o['agrees_with_human']:>6}")
    if rep["per_category"]:
        lines += ["", f"{'approved category':<24} {'incidents':>9} {'live':>5} {'candidate':>9}"]
        for cat, c in rep["per_category"].items():
            lines.append(f"{cat:<24} {c['incidents']:>9} {c['live_agreed']:>5} {c['candidate_agrees']:>9}")
    corr = rep["corrections"]
    lines += ["", f"reviewers' category corrections: candidate matches {len(corr['better'])}, repeats the corrected "
                  f"category {len(corr['same_mistake'])}, names a third {len(corr['worse'])}"]
    pw = rep["pairwise"]
    if pw["judgments"] or pw["identical"]:
        lines += ["", f"pairwise review: {counted(pw['judgments'], 'judgment')} of {counted(pw['incidents'], 'incident')}; candidate "
                      f"preferred {pw['candidate_preferred']}, live preferred {pw['live_preferred']}, equal "
                      f"{pw['equal']}; right category named {pw['corrections']}; {counted(pw['identical'], 'incident')} "
                      "with identical answers (equal, not for judging)"]
    for key, title in (("disagreements", "Disagreements with the reviewers"),
                       ("changes", "Other changes from the live analysis")):
        if rep[key]:
            lines += ["", f"{title} (live analyst → candidate; who did what):"]
        for d in rep[key]:
            lines.append(f"  {d['incident_id']:<22} {d['old_category'] or '-'} → {d['new_category'] or '-'}"
                         f"  [{d['verdict']}; {'; '.join(d['who_did_what']) or '-'};"
                         f" approved {d['human_category'] or '-'}]"
                         + ("  fix newly eligible" if d["newly_fix_eligible"] else "")
                         + f"  checkpoint {d['checkpoint_id']}")
    for sk in rep["skipped"]:
        lines.append(f"  skipped {sk['incident_id']}: {sk['why']}")
    return "\n".join(lines)


def _recorded_changes(before: dict, after: dict) -> list[str]:
    """"rca.category unknown → connection_refused": the fields by their recorded names (the CLI's report)."""
    return [f"{name} {before.get(name) or '-'} → {after.get(name) or '-'}" for name in after]


def step_words(decision: dict | None,
               changes_words: Callable[[dict, dict], list[str]] = _recorded_changes) -> list[str]:
    """Who did what, one sentence each: the steps of a result's human decision (backtest/human.py).
    `changes_words` words a step's fields from their values before and after (the Backtests page
    passes the audit's, which says "category unknown → connection refused")."""
    out = []
    for step in (decision or {}).get("steps") or []:
        by, action = step["by"], step["action"]
        fields = step["fields"]
        changed = ", ".join(changes_words({name: c["from"] for name, c in fields.items()},
                                          {name: c["to"] for name, c in fields.items()}))
        if action == "fork":
            out.append(f"{by} forked the run" + (f" and set the {changed}" if changed else ""))
        elif action == "edit":
            out.append(f"{by} edited the {changed or 'recommendation'}")
        elif action == "replay":
            out.append(f"{by} re-ran the analysis")
        elif action == "revise":
            out.append(f"{by} asked for changes" + (f": {step['note']}" if step.get("note") else ""))
        elif action == "merge":
            what = f"merged it into {step['into']}" if step.get("into") else f"merged {step.get('merged') or 'another'} into it"
            out.append(f"{by} {what}" + (f": {step['note']}" if step.get("note") else ""))
        elif action == "approve_partial":
            out.append(f"{by} gave the first of two approvals")
        elif action == "approve":
            out.append(f"{by} approved" + (f" after editing the {changed}" if changed else ""))
        elif action == "reject":
            out.append(f"{by} rejected" + (f": {step['note']}" if step.get("note") else ""))
        elif action == "expire":
            out.append("expired undecided" + (f" ({step['note']})" if step.get("note") else ""))
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
