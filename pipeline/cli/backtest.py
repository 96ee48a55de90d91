"""`backtest`: a candidate analyst over past incidents, on copies of their checkpoints before rca
(never the live run), with the report against what the reviewers decided (CONTRACT §5)."""
from __future__ import annotations

import re
import signal
import threading
from datetime import datetime, timedelta, timezone

from pipeline.cli import emit, path_arg, terminal

_SINCE = re.compile(r"^(\d+(?:\.\d+)?)([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def register(sub) -> None:
    p = sub.add_parser("backtest", help="re-analyse past incidents with a candidate analyst and compare with the "
                                        "live analysis and the reviewers' decisions (never touches the live run)")
    p.add_argument("--since", metavar="AGE|DATE", help="incidents opened in the last AGE (30d, 12h, 90m) or since "
                                                       "an ISO date (default: every incident)")
    p.add_argument("--status", choices=("decided", "paused", "all"), default="decided",
                   help="decided (default), paused at the gate, or both")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--model", metavar="NAME", help="the candidate: this chat model (needs an endpoint)")
    which.add_argument("--docs", type=path_arg, metavar="DIR", help="the candidate: the error docs of DIR")
    which.add_argument("--settings", type=path_arg, metavar="FILE",
                       help="the candidate: a TOML file of settings (CODE_FIX_MIN_CONFIDENCE = 0.7, ...)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N incidents (oldest first)")
    p.add_argument("--resume", metavar="ID", help="continue an interrupted backtest (the same command also does)")
    p.add_argument("--report", metavar="ID", help="print the report of a backtest already run")
    p.add_argument("--list", action="store_true", help="list the backtests, newest first")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_backtest)


def parse_since(text: str | None, now: datetime) -> datetime | None:
    """`30d`, `12h`, `90m` before now, or an ISO date or time (UTC when it names no zone)."""
    from pipeline.errors import UsageError

    if text is None:
        return None
    m = _SINCE.match(text.strip())
    if m:
        return now - timedelta(**{_UNITS[m.group(2)]: float(m.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--since {text!r}: give an age (30d, 12h, 90m) or an ISO date") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def cmd_backtest(args) -> int:
    from pipeline.backtest.report import report, report_text
    from pipeline.cli import engine_from_env
    from pipeline.store import backtests

    engine = engine_from_env(sync_knowledge=False)
    if args.list:
        rows = backtests.backtests(engine.records)
        emit(args, rows, lambda rs: "\n".join(
            f"{r['backtest_id']}  {r['status']:<8} {r['done']}/{r['total']}  {r['started_at']}  {r['candidate']}"
            for r in rs) or "no backtests")
        return 0
    if args.report:
        emit(args, report(engine, args.report), report_text)
        return 0
    from pipeline.backtest.candidate import candidate_for
    from pipeline.backtest.run import run_backtest

    if threading.current_thread() is threading.main_thread():
        # Ctrl-C, or the Backtests page's Cancel (SIGINT), stops at once (the incident in hand is redone) and
        # releases the backtest for a resume, even when started with SIGINT ignored (a detached child)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    candidate = candidate_for(engine, model=args.model, docs=args.docs, settings_file=args.settings)
    since = parse_since(args.since, engine.records.clock.now())

    def progress(incident_id: str) -> None:
        if not args.json:
            terminal.err(f"analysed {incident_id}\n")

    run = run_backtest(engine, candidate, status=args.status, since=since, limit=args.limit, resume=args.resume,
                       progress=progress)
    rep = report(engine, run.backtest_id)
    rep["run"] = run.as_json()
    emit(args, rep, report_text)
    return 0
