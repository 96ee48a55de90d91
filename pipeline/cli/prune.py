"""`prune [--days N] [--json]`: compact the history of incidents decided long ago (see
pipeline/unattended/retention.py for what is kept)."""
from __future__ import annotations

from pipeline.cli import emit, engine_from_env


def register(sub) -> None:
    p = sub.add_parser("prune", help="compact incidents decided more than INCIDENTIQ_RETENTION_DAYS ago")
    p.add_argument("--days", type=float, metavar="N", help="instead of INCIDENTIQ_RETENTION_DAYS")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_prune)


def cmd_prune(args) -> int:
    from pipeline.errors import UsageError
    from pipeline.unattended.retention import prune

    if args.days is not None and not args.days >= 0:
        raise UsageError("--days must be zero or more")
    report = prune(engine_from_env(sync_knowledge=False), days=args.days).as_json()
    emit(args, report, lambda r: (f"{r['incidents_compacted']} incidents compacted: {r['checkpoints_removed']} checkpoints"
                                  f" and {r['events_removed']} event bodies removed, {r['context_events_removed']}"
                                  f" old context events, {r['pattern_days_removed']} old daily pattern counts" + (f"; in use, left for later: {', '.join(r['skipped'])}"
                                                           if r["skipped"] else "")))
    return 0
