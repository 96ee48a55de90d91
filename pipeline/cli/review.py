"""`approve`, `reject`, `revise`, `edit`, `history`, `replay`, `fork`, `audit` (CONTRACT §5).

Each command calls one ReviewService method; conflicts and refusals exit 3, bad input 2, unknown
ids 4. Who acts is the CLI's actor (pipeline/cli/identity.py): `--token` / INCIDENTIQ_TOKEN, else the
local operator `cli:<os user>`, optionally `--as` a named person (`--reviewer` is the old name).
"""
from __future__ import annotations

from pipeline.review.audit import FORMATS
from pipeline.state import counted
from pipeline.cli import emit, engine_from_env, parse_set, terminal
from pipeline.cli.identity import acting, identity_args


def register(sub) -> None:
    p = sub.add_parser("approve", help="resume the paused run with an approval of its fix proposal")
    _decision_args(p)
    p.add_argument("--expect-proposal", dest="expect_proposal", metavar="HASH",
                   help="the fix proposal you reviewed (its hash, from show); a different pending one exits 3")
    p.add_argument("--note")
    p.add_argument("--set", action="append", metavar="FIELD=JSON",
                   help="correct a field before approving (edit-then-approve); repeatable")
    p.set_defaults(handler=cmd_approve)

    p = sub.add_parser("reject", help="resume with a rejection; the run ends without a fix")
    _decision_args(p)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=cmd_reject)

    p = sub.add_parser("revise", help="ask for changes: the analysis (root cause, recommendation, fix proposal) is redone with the feedback")
    _decision_args(p)
    p.add_argument("--feedback", required=True)
    p.set_defaults(handler=cmd_revise)

    p = sub.add_parser("edit", help="edit the paused state (validated; a new checkpoint of source update)")
    _decision_args(p)
    p.add_argument("--set", action="append", metavar="FIELD=JSON", required=True)
    p.add_argument("--as-node", dest="as_node", help="rca (redo the recommendation) or recommend; by default the fork rule: rca for an edit of the analysis only, else recommend")
    p.set_defaults(handler=cmd_edit)

    p = sub.add_parser("history", help="checkpoints newest first")
    p.add_argument("incident_id")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--before", metavar="CHECKPOINT", help="page: checkpoints older than this one")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_history)

    p = sub.add_parser("replay", help="re-run from a past checkpoint (the approval gate fires again)")
    p.add_argument("incident_id")
    p.add_argument("--checkpoint", required=True)
    identity_args(p)
    p.add_argument("--with-current-evidence", dest="with_current_evidence", action="store_true",
                   help="merge the incident's events stored since that checkpoint before re-running")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_replay)

    p = sub.add_parser("fork", help="branch from a past checkpoint with edited values and run the branch")
    p.add_argument("incident_id")
    p.add_argument("--checkpoint", required=True)
    identity_args(p)
    p.add_argument("--set", action="append", metavar="FIELD=JSON", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_fork)

    p = sub.add_parser("audit", help="every human action: who, when, what, before/after")
    p.add_argument("incident_id", nargs="?")
    p.add_argument("--format", choices=FORMATS, help="json or csv (default: a table)")
    p.set_defaults(handler=cmd_audit)


def _decision_args(p) -> None:
    p.add_argument("incident_id")
    identity_args(p)
    p.add_argument("--expect-interrupt", dest="expect_interrupt", metavar="ID",
                   help="the interrupt you reviewed; a different pending one exits 3")
    p.add_argument("--json", action="store_true")


def _service():
    from pipeline.review.service import ReviewService

    return ReviewService(engine_from_env(sync_knowledge=False))


def _partial_text(doc) -> str:
    got, needed = len(doc.get("approvals") or []), doc.get("approvals_needed") or 1
    if doc["status"] == "awaiting_approval" and got and got < needed:
        return f"; approval {got} of {needed} recorded ({', '.join(a['by'] for a in doc['approvals'])}):" \
               " a second reviewer must approve" + (f" (note: {doc['approvals_limit']})"
                                                    if doc.get("approvals_limit") else "")
    return ""


def _outcome_text(doc) -> str:
    line = f"{doc['incident_id']}: {doc['status']}"
    if doc.get("pending"):
        line += f" (pending interrupt {doc['pending']['interrupt_id']})"
    if doc.get("fix") and doc["status"] == "fix_proposed":
        line += (f"; fix proposal {str(doc['fix'].get('hash') or '')[:12]} recorded (attempt "
                 f"{doc['fix'].get('attempt')}): a proposal for a person to apply, nothing was changed")
    return line


def cmd_approve(args) -> int:
    service = _service()
    with acting(service, args, "approve") as actor:
        doc = service.approve(args.incident_id, actor=actor, expect_interrupt=args.expect_interrupt,
                              note=args.note, edits=parse_set(args.set) or None,
                              expect_proposal=args.expect_proposal)
    emit(args, doc, lambda d: _outcome_text(d) + _partial_text(d))
    return 0


def cmd_reject(args) -> int:
    service = _service()
    with acting(service, args, "reject") as actor:
        doc = service.reject(args.incident_id, actor=actor, reason=args.reason, expect_interrupt=args.expect_interrupt)
    emit(args, doc, _outcome_text)
    return 0


def cmd_revise(args) -> int:
    service = _service()
    with acting(service, args, "revise") as actor:
        doc = service.revise(args.incident_id, actor=actor, feedback=args.feedback,
                             expect_interrupt=args.expect_interrupt)
    emit(args, doc, lambda d: _outcome_text(d) + f"; {counted(d['revisions_left'], 'revision')} left")
    return 0


def cmd_edit(args) -> int:
    service = _service()
    with acting(service, args, "edit") as actor:
        doc = service.edit(args.incident_id, actor=actor, edits=parse_set(args.set), as_node=args.as_node,
                           expect_interrupt=args.expect_interrupt)
    emit(args, doc, _outcome_text)
    return 0


MAX_HISTORY_LIMIT = 10_000


def cmd_history(args) -> int:
    from pipeline.errors import UsageError

    if not 1 <= args.limit <= MAX_HISTORY_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_HISTORY_LIMIT}")
    rows = _service().history(args.incident_id, limit=args.limit, before=args.before)
    emit(args, rows, _history_text)
    return 0


def _history_text(rows) -> str:
    if not rows:
        return "no checkpoints"
    lines = [f"{'CHECKPOINT':<38} {'STEP':>4} {'SOURCE':<7} {'BR':>2} {'NEXT':<18} {'BY':<10} CHANGES"]
    for r in rows:
        mark = "*" if r["is_pending"] else ("·" if r["on_current_branch"] else " ")
        by = r["human_action"] or ",".join(r["writes_by"]) or "-"
        changed = ", ".join(c["field"] for c in r["changes"][:4]) + (" …" if len(r["changes"]) > 4 else "")
        lines.append(f"{mark}{r['checkpoint_id']:<37} {r['step']:>4} {r['source']:<7} {r['branch']:>2} "
                     f"{','.join(r['next']) or '-':<18} {by:<10} {changed}")
    return "\n".join(lines)


def cmd_replay(args) -> int:
    service = _service()
    with acting(service, args, "replay") as actor:
        doc = service.replay(args.incident_id, checkpoint_id=args.checkpoint, actor=actor,
                             with_current_evidence=args.with_current_evidence)
    emit(args, doc, _outcome_text)
    return 0


def cmd_fork(args) -> int:
    service = _service()
    with acting(service, args, "fork") as actor:
        doc = service.fork(args.incident_id, checkpoint_id=args.checkpoint, actor=actor, edits=parse_set(args.set))
    emit(args, doc, _outcome_text)
    return 0


def cmd_audit(args) -> int:
    service = _service()
    if args.format:
        terminal.out(service.export_audit(args.incident_id, fmt=args.format).rstrip("\n") + "\n")
        return 0
    rows = service.audit(args.incident_id)
    if not rows:
        terminal.out("no audit entries\n")
    for r in rows:
        changed = ", ".join(k for k in r["after"] if r["before"].get(k) != r["after"].get(k))
        terminal.out(f"{r['at']}  {r['incident_id']}  {r['action']:<7} by {r['reviewer']}: {changed}"
                         + (f"  ({r['note']})" if r["note"] else "") + "\n")
    return 0
