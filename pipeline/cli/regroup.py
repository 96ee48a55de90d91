"""`patterns`, `split`, `merge` (CONTRACT §5): the reviewer controls grouping. Each calls one
ReviewService method (review/grouping.py); conflicts and refusals exit 3, bad input 2, unknown ids 4.
"""
from __future__ import annotations

from pipeline.cli import emit, engine_from_env
from pipeline.cli.identity import acting, identity_args
from pipeline.state import counted


def register(sub) -> None:
    p = sub.add_parser("patterns", help="an incident's member patterns (what split takes out), most events first")
    p.add_argument("incident_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_patterns)

    p = sub.add_parser("split", help="split a member pattern out of a paused incident into an incident of its own;"
                                     " both are analysed again")
    p.add_argument("incident_id")
    p.add_argument("--pattern", required=True, help="the member pattern (from `patterns`)")
    p.add_argument("--reason", required=True)
    p.add_argument("--expect-interrupt", dest="expect_interrupt", metavar="ID",
                   help="the interrupt you reviewed; a different pending one exits 3")
    identity_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_split)

    p = sub.add_parser("merge", help="merge a paused incident into another paused one, which is analysed again"
                                     " on both's events; the merged one ends `merged`")
    p.add_argument("incident_id", help="the incident merged away")
    p.add_argument("--into", required=True, metavar="INC", help="the incident that keeps them all")
    p.add_argument("--reason", required=True)
    p.add_argument("--expect-interrupt", dest="expect_interrupt", metavar="ID",
                   help="the interrupt of INCIDENT_ID you reviewed; a different pending one exits 3")
    p.add_argument("--expect-into-interrupt", dest="expect_into_interrupt", metavar="ID",
                   help="the interrupt of --into you reviewed; a different pending one exits 3")
    identity_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_merge)


def _service():
    from pipeline.review.service import ReviewService

    return ReviewService(engine_from_env(sync_knowledge=False))


def _state(doc) -> str:
    line = f"{doc['incident_id']}: {doc['status']} ({counted(doc['event_count'], 'event')})"
    if doc.get("pending"):
        line += f" (pending interrupt {doc['pending']['interrupt_id']})"
    if doc.get("link"):
        line += f"; {doc['link']['text']}"
    return line


def cmd_patterns(args) -> int:
    rows = _service().patterns(args.incident_id)
    emit(args, rows, lambda rs: "\n".join(
        f"{r['pattern']}  {r['events']} events{'  (opened with: stays)' if r['opening'] else ''}  {r['example']}"
        for r in rs))
    return 0


def cmd_split(args) -> int:
    service = _service()
    with acting(service, args, "split") as actor:
        out = service.split(args.incident_id, pattern=args.pattern, reason=args.reason, actor=actor,
                            expect_interrupt=args.expect_interrupt)
    out = {"incident": service.document(args.incident_id), "split": service.document(out["split"]["incident_id"])}
    emit(args, out, lambda o: f"{_state(o['incident'])}\n{_state(o['split'])}")
    return 0


def cmd_merge(args) -> int:
    service = _service()
    with acting(service, args, "merge") as actor:
        out = service.merge(args.incident_id, into=args.into, reason=args.reason, actor=actor,
                            expect_interrupt=args.expect_interrupt, expect_into_interrupt=args.expect_into_interrupt)
    out = {"incident": service.document(args.into), "merged": service.document(args.incident_id)}
    emit(args, out, lambda o: f"{_state(o['incident'])}\n{_state(o['merged'])}")
    return 0
