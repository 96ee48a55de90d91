"""`backtest`: a candidate analyst over past incidents, on copies of their checkpoints before rca
(never the live run), with the report against what the reviewers decided (CONTRACT §5)."""
from __future__ import annotations

import re
import signal
import threading
from datetime import datetime, timedelta, timezone

from pipeline.cli import emit, path_arg, terminal
from pipeline.cli.identity import identity_args
from pipeline.state import counted

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
    review = p.add_argument_group("pairwise review of a backtest's two answers (CONTRACT §5)")
    review.add_argument("--pairs", metavar="ID", help="the incidents of a backtest with both answers, each as A and B "
                                                      "in a random order (a_side names A), and the judgments so far")
    review.add_argument("--judge", metavar="ID", help="record your judgment of one incident of backtest ID")
    review.add_argument("--incident", metavar="INC", help="with --judge: the incident judged")
    review.add_argument("--prefer", choices=("live", "candidate", "equal"),
                        help="with --judge: the better answer, named (no blind order)")
    review.add_argument("--pick", choices=("A", "B", "equal"), help="with --judge and --a-side: the better of A and B")
    review.add_argument("--a-side", choices=("live", "candidate"), help="with --pick: the answer shown as A")
    review.add_argument("--reason", metavar="TEXT", help="with --judge: why (required)")
    review.add_argument("--category", metavar="CATEGORY", help="with --judge: the right category, when both are wrong")
    review.add_argument("--judgments", metavar="ID", help="list the judgments of a backtest")
    review.add_argument("--export", metavar="ID", help="write a backtest's judgments as labelled eval cases (JSONL)")
    review.add_argument("--out", type=path_arg, metavar="FILE",
                        help="with --export: where (default: eval-pairwise-ID.jsonl in the data dir)")
    identity_args(p)
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
    if args.pairs or args.judge or args.judgments or args.export:
        return _pairwise(engine, args)
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


def _pairwise(engine, args) -> int:
    """--pairs, --judge, --judgments, --export: pairwise review (pipeline/backtest/pairwise.py)."""
    from pipeline.backtest import pairwise
    from pipeline.backtest.decisions import write_cases
    from pipeline.cli.identity import actor_of
    from pipeline.errors import UsageError
    from pipeline.store import backtests, judgments

    if args.pairs:
        backtests.backtest(engine.records, args.pairs)  # BacktestNotFound
        done = {(j["incident_id"], j["reviewer"]) for j in judgments.of_backtest(engine.records, args.pairs)}
        shown, identical = [], 0
        for pair in pairwise.pairs(engine, args.pairs):
            if pair["identical"]:  # nothing to prefer: equal without a judgment
                identical += 1
                continue
            a_side = pairwise.shown_order()
            b_side = "candidate" if a_side == "live" else "live"
            shown.append({"incident_id": pair["incident_id"], "a_side": a_side, "A": pair[a_side], "B": pair[b_side],
                          "judged_by": sorted(who for inc, who in done if inc == pair["incident_id"])})
        emit(args, shown, lambda rows: _pairs_text(rows, identical))
        return 0
    if args.judge:
        if not args.incident:
            raise UsageError("--judge needs --incident INC")
        if (args.prefer is None) == (args.pick is None):
            raise UsageError("--judge needs one of --prefer (live, candidate, equal) and --pick (A, B, equal)")
        if args.pick is not None and args.pick != "equal" and args.a_side is None:
            raise UsageError("--pick A or B needs --a-side: which answer was shown as A")
        a_side, choice = ("named", args.prefer) if args.prefer else (args.a_side or "named", args.pick)
        row = pairwise.judge(engine, actor_of(engine, args), backtest_id=args.judge, incident_id=args.incident,
                             a_side=a_side, choice=choice, reason=args.reason or "", correction=args.category)
        emit(args, row, lambda r: f"{r['reviewer']} preferred {r['preferred']} on {r['incident_id']}"
                                  + (f" (right category: {r['correction']})" if r["correction"] else ""))
        return 0
    if args.judgments:
        rep = report_of_judgments(engine, args.judgments)
        emit(args, rep, lambda r: "\n".join(
            [f"candidate preferred {r['candidate_preferred']}, live preferred {r['live_preferred']}, "
             f"equal {r['equal']} ({counted(r['judgments'], 'judgment')} of {counted(r['incidents'], 'incident')})"]
            + [f"  {j['incident_id']}  {j['reviewer']}: {j['preferred']}"
               + (f", right category {j['correction']}" if j["correction"] else "") + f" — {j['reason']}"
               for j in r["rows"]]))
        return 0
    out = pairwise.cases(engine, args.export)
    path = write_cases(out["cases"], args.out or engine.settings.data_dir / f"eval-pairwise-{args.export}.jsonl")
    emit(args, {"written": str(path), "cases": len(out["cases"]), "unlabelled": out["unlabelled"]},
         lambda r: f"{r['cases']} labelled cases written to {r['written']}"
                   + "".join(f"\n  not labelled: {u['incident_id']} ({u['reviewer']}): {u['why']}"
                             for u in r["unlabelled"]))
    return 0


def _pairs_text(rows: list[dict], identical: int) -> str:
    lines = [f"{r['incident_id']}  A: {r['A']['category']}  B: {r['B']['category']}  (A is {r['a_side']})"
             + (f"  judged by {', '.join(r['judged_by'])}" if r["judged_by"] else "") for r in rows]
    lines = lines or ["no incident of this backtest has two different answers to judge"]
    if identical:
        lines.append(f"{counted(identical, 'incident')} with identical answers {'is' if identical == 1 else 'are'} not listed "
                     "(equal, nothing to judge)")
    return "\n".join(lines)


def report_of_judgments(engine, backtest_id: str) -> dict:
    from pipeline.backtest.pairwise import identical_ids, tally
    from pipeline.store import backtests, judgments

    backtests.backtest(engine.records, backtest_id)  # BacktestNotFound
    return tally(judgments.of_backtest(engine.records, backtest_id),
                 identical_ids(backtests.results(engine.records, backtest_id)))
