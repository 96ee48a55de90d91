"""`ingest`, `list`, `show`, `deadletters`."""
from __future__ import annotations

from pipeline.cli import emit, engine_from_env, path_arg, records_from_env
from pipeline.cli.progress import INDEX_BAR, count_lines, progress_bar, progress_shown
from pipeline.state import STATUS_ALIASES, STATUSES, counted, readable_title, status_named


def register(sub) -> None:
    p = sub.add_parser("ingest", help="read a log file or a folder's *.log, *.jsonl and *.json files "
                       "(any format INCIDENTIQ_LOG_FORMAT names, or a layout learnt from the file) and run new "
                       "incidents to the approval gate")
    p.add_argument("path", type=path_arg, help="a log file, or a folder searched for log files")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_ingest)

    p = sub.add_parser("list", help="incidents, newest first")
    # the 0.1 names (fixed, not_eligible) are accepted as aliases of fix_proposed and approved
    p.add_argument("--status", choices=(*STATUSES, *STATUS_ALIASES), type=str)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("show", help="one incident")
    p.add_argument("incident_id")
    p.add_argument("--json", action="store_true")
    p.add_argument("--nearest", action="store_true",
                   help="with --json: also the nearest past incidents by evidence (opens the evidence index)")
    p.add_argument("--related-limit", type=int, default=10, metavar="N", help="related incidents per page (10)")
    p.add_argument("--related-before", metavar="INC", help="the next page: related incidents older than INC")
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("deadletters", help="rejected input lines with position and reason")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_deadletters)


def cmd_ingest(args) -> int:
    from pipeline.errors import UsageError
    from pipeline.unattended.file_ingest import ingest_path

    if not args.path.exists():
        raise UsageError(f"no such file or folder: {args.path}")
    bar = not args.json and progress_shown()
    engine = engine_from_env(sync_knowledge=not bar)
    if bar:  # the knowledge index is brought up to date as open_engine would, with a bar
        with progress_bar(total=1.0, unit="", desc="knowledge index", bar_format=INDEX_BAR) as kb_bar:
            engine.kb.sync(progress=lambda fraction, _text: kb_bar.update(max(0.0, fraction - kb_bar.n)))
        with progress_bar(total=count_lines(args.path), unit=" lines", desc="ingest") as lines_bar:
            counts = ingest_path(engine, args.path, on_batch=lines_bar.update)
            # records of several lines (a stack trace) count once: the files are read to their end
            lines_bar.update(max(0, lines_bar.total - lines_bar.n))
    else:
        counts = ingest_path(engine, args.path)
    counts = counts.as_json()
    emit(args, counts, lambda c: (f"{c['events']} events stored, {c['rejected']} rejected, "
                                  f"{c['incidents_new']} new incidents, {c['incidents_updated']} updated"
                                  + (f", {c['redacted']} secrets redacted" if c.get("redacted") else "")))
    return 0


def cmd_list(args) -> int:
    from pipeline.review.documents import list_row

    status = status_named(args.status) if args.status else None
    rows = [list_row(r) for r in records_from_env().incidents(status=status)]
    emit(args, rows, _list_text)
    return 0


def _list_text(rows) -> str:
    if not rows:
        return "no incidents"
    lines = [f"{'INCIDENT':<22} {'STATUS':<18} {'SEVERITY':<9} {'CATEGORY':<22} {'CONF':>5} {'EVENTS':>6}  SERVICE"]
    for r in rows:
        conf = f"{r['confidence']:.2f}" if r["confidence"] is not None else "-"
        lines.append(f"{r['incident_id']:<22} {r['status']:<18} {r['severity']:<9} {(r['category'] or '-'):<22} "
                     f"{conf:>5} {r['event_count']:>6}  {r['service']}")
    return "\n".join(lines)


def cmd_show(args) -> int:
    from pipeline.config import Settings
    from pipeline.review.documents import show_document

    # the records alone (no graph, no Chroma); the docs are read only if a policy asks for hints
    records, settings = records_from_env(), Settings.from_env()
    doc = show_document(records, settings, args.incident_id, doc_hints=_doc_hints)
    if args.json:
        from pipeline.review.related import RelatedIncidents

        # same fingerprint always (one index range of the records); nearest by evidence with
        # --nearest only, so a plain `show` stays off Chroma
        related = RelatedIncidents(records=records, settings=settings)
        if args.nearest:
            related.catch_up(batches=None)  # asked for here and now, with no poller to have done it
        doc["related"] = related.related(
            args.incident_id, limit=args.related_limit, before=args.related_before, nearest=5 if args.nearest else 0)
    emit(args, doc, _show_text)
    return 0


def _doc_hints(doc_id: str) -> list:
    from pipeline.knowledge.index import DEFAULT_DOCS_DIR, load_docs, parse_doc

    # a doc's file is named by its id: parse that one, and all of them only if it is not so
    for path in DEFAULT_DOCS_DIR.glob(f"*/{doc_id}.md"):
        doc = parse_doc(path)
        if doc.doc_id == doc_id:
            return list(doc.fix_hints)
    docs = {d.doc_id: d for d in load_docs()}
    return list(docs[doc_id].fix_hints) if doc_id in docs else []


def _show_text(d) -> str:
    lines = [f"{d['incident_id']}  {d['status']}  {d['severity']}  {d['service']}  ({counted(d['event_count'], 'event')})",
             f"  {readable_title(d['title'])}"]  # "Column … not found": the miner's <STR> is not a word
    if d.get("events_since_analysis"):
        lines.append(f"  {d['events_since_analysis']} events arrived since the analysis")
    if d.get("link"):
        lines.append(f"  {d['link']['text'][:1].upper()}{d['link']['text'][1:]}")
    for other in d.get("linked_from") or []:
        lines.append(f"  {other['text']}")
    if d["rca"]:
        lines.append(f"RCA: {d['rca']['category']} (confidence {d['rca']['confidence']:.2f}, analyst {d['rca']['analyst']})")
        if d["rca"].get("warning"):
            lines.append(f"  Warning: {d['rca']['warning']}")
        lines.append(f"  {d['rca']['root_cause']}")
        if d["rca"].get("findings"):
            lines.append("Findings:")
            lines += [f"  {f['kind']}: {f['value']}  ({counted(len(f['event_ids']), 'event')}"
                      + (", named by a reviewer" if f.get("source") == "reviewer" else "") + ")"
                      for f in d["rca"]["findings"]]
        lines.append("Evidence:")
        lines += [f"  - {e}" for e in d["rca"].get("evidence") or []]
        lines += [f"  ({n})" for n in d["rca"].get("notes") or []]
    if d["recommendation"]:
        lines.append(f"Recommendation: {d['recommendation']['action']}")
    for n, request in enumerate(d.get("requests") or [], 1):
        lines.append(f"Revision {n} asked: {request}")
    if d["pending"]:
        lines.append(f"Pending: interrupt {d['pending']['interrupt_id']} at checkpoint {d['pending']['checkpoint_id']}")
        proposal = d.get("proposal")
        if proposal:
            lines.append(f"Fix proposal to approve: {proposal['hash']} (approve --expect-proposal {proposal['hash']})")
            lines += [f"  - {s}" for s in proposal.get("plan", [])]
            if proposal.get("diff"):
                lines.append(proposal["diff"].rstrip("\n"))
        else:
            lines.append("No code fix is eligible: an approval records the analysis only.")
        got = ", ".join(f"{a['by']} at {a['at'][:19]}" for a in d.get("approvals") or [])
        lines.append(f"Approvals: {len(d.get('approvals') or [])} of {d.get('approvals_needed', 1)}"
                     + (f" ({got})" if got else ""))
        if d.get("approvals_limit"):
            lines.append(f"Note: {d['approvals_limit']}")
    if d.get("assignee"):
        lines.append(f"On it: {d['assignee']}")
    if d.get("backfilled"):
        lines.append(f"Backfilled: its log was past the SLA when it was opened; the SLA counts from"
                     f" {d['created_at'][:19]}, due {d['sla_deadline'][:19]}")
    if d.get("escalated_at"):
        lines.append(f"Escalated at {d['escalated_at'][:19]} (SLA deadline {d['sla_deadline'][:19]} passed)")
    if d["decision"]:
        lines.append(f"Decision: {d['decision']['action']} by {d['decision']['reviewer']}"
                     + (f" (proposal {d['decision']['proposal_hash'][:12]})" if d["decision"].get("proposal_hash") else ""))
    if d["fix"]:
        lines.append(f"Fix proposal recorded {str(d['fix'].get('hash') or '')[:12]} (a proposal: nothing was applied):")
        lines += [f"  - {s}" for s in d["fix"].get("plan", [])]
        if d["fix"].get("diff"):
            lines.append(d["fix"]["diff"])
    if d["last_error"]:
        lines.append(f"Last error: {d['last_error']}")
    for c in d.get("comments") or []:
        lines.append(f"Comment by {c['by']} at {c['at'][:19]}: {c['text']}")
    return "\n".join(lines)


def cmd_deadletters(args) -> int:
    rows = records_from_env().dead_letters()
    emit(args, rows, lambda rs: "\n".join(f"{r['position']}: {r['reason']}" for r in rs) or "no dead letters")
    return 0
