"""`assign`, `unassign`, `comment`, `whoami`, `token`, `notifications` (CONTRACT §5): who is on an
incident, what people said, who the CLI acts as, API tokens, and the notification outbox."""
from __future__ import annotations

from pipeline.cli import emit, engine_from_env
from pipeline.cli.identity import acting, actor_of, identity_args


def register(sub) -> None:
    p = sub.add_parser("assign", help="put a person on an incident (\"on it: ann\")")
    p.add_argument("incident_id")
    p.add_argument("--to", required=True, metavar="USER")
    identity_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_assign)

    p = sub.add_parser("unassign", help="take an incident off whoever had it")
    p.add_argument("incident_id")
    identity_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_unassign)

    p = sub.add_parser("comment", help="add a plain-text comment to an incident")
    p.add_argument("incident_id")
    p.add_argument("--text", required=True)
    identity_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_comment)

    p = sub.add_parser("whoami", help="who the CLI acts as here, with which roles")
    identity_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_whoami)

    p = sub.add_parser("token", help="make an API token: prints it once, and the line for the tokens file")
    p.add_argument("--name", required=True)
    p.add_argument("--role", required=True, help="viewer, reviewer or admin")
    p.add_argument("--user", help="the person the token acts as (default: token:<name>)")
    p.add_argument("--expires", metavar="ISO8601", help="when it stops working, e.g. 2027-06-30T00:00:00Z")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_token)

    p = sub.add_parser("notifications", help="the notification outbox: what was told to whom (hosts only), and its state")
    p.add_argument("incident_id", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_notifications)


def _service():
    from pipeline.review.service import ReviewService

    return ReviewService(engine_from_env(sync_knowledge=False))


def _on_it(doc) -> str:
    return f"{doc['incident_id']}: " + (f"on it: {doc['assignee']}" if doc.get("assignee") else "nobody on it")


def cmd_assign(args) -> int:
    service = _service()
    with acting(service, args, "assign") as actor:
        doc = service.assign(args.incident_id, to=args.to, actor=actor)
    emit(args, doc, _on_it)
    return 0


def cmd_unassign(args) -> int:
    service = _service()
    with acting(service, args, "unassign") as actor:
        doc = service.unassign(args.incident_id, actor=actor)
    emit(args, doc, _on_it)
    return 0


def cmd_comment(args) -> int:
    service = _service()
    with acting(service, args, "comment") as actor:
        comment = service.comment(args.incident_id, text=args.text, actor=actor)
    emit(args, comment, lambda c: f"{args.incident_id}: comment {c['id']} by {c['by']}")
    return 0


def cmd_whoami(args) -> int:
    engine = engine_from_env(sync_knowledge=False)
    actor = actor_of(engine, args)
    emit(args, actor.as_json(), lambda a: f"{a['id']} ({a['auth']}{', via ' + a['via'] if a['via'] else ''}):"
                                          f" {', '.join(a['roles']) or 'no roles'}")
    return 0


def cmd_token(args) -> int:
    import json

    from pipeline.clock import parse_iso
    from pipeline.errors import UsageError
    from pipeline.review.identity import ROLES, new_token

    if args.role not in ROLES:
        raise UsageError(f"unknown role {args.role!r}; roles are {', '.join(ROLES)}")
    if args.expires:
        try:
            parse_iso(args.expires.replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"--expires must be an ISO 8601 time, got {args.expires!r}") from None
    token, digest = new_token()
    entry = {"name": args.name, "sha256": digest, "role": args.role}
    if args.user:
        entry["user"] = args.user
    if args.expires:
        entry["expires"] = args.expires
    toml = "[[tokens]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items())
    emit(args, {"token": token, "entry": entry, "toml": toml},
         lambda d: f"token (shown once, keep it secret): {d['token']}\n"
                   f"add to INCIDENTIQ_TOKENS_FILE (only its hash is stored):\n{d['toml']}")
    return 0


def cmd_notifications(args) -> int:
    from pipeline.store import outbox

    engine = engine_from_env(sync_knowledge=False)
    if args.incident_id:
        engine.records.incident(args.incident_id)
    rows = [{k: r[k] for k in ("id", "kind", "incident_id", "target_host", "status", "attempts", "last_error",
                               "created_at", "sent_at", "idempotency_key")}
            for r in outbox.rows(engine.records, incident_id=args.incident_id)]
    emit(args, rows, lambda rs: "\n".join(
        f"{r['created_at'][:19]}  {r['kind']:<10} {r['incident_id'] or '-':<22} → {r['target_host']:<24} "
        f"{r['status']:<8} tries {r['attempts']}" + (f"  ({r['last_error']})" if r["last_error"] else "")
        for r in rs) or "no notifications")
    return 0
