"""`poll [--once] [--interval S]`: the configured source's poller in the foreground (CONTRACT §5).

Ctrl-C or SIGTERM stop it after the current step and release the lease, so another poller
(the web app's) takes over at once; a second Ctrl-C stops it hard.
"""
from __future__ import annotations

import signal
import sys
import threading
from datetime import datetime

from pipeline.cli import emit, engine_from_env, terminal


def register(sub) -> None:
    p = sub.add_parser("poll", help="run the configured source's poller in the foreground (the web app runs the same one)")
    p.add_argument("--once", action="store_true", help="poll once, print what it did and exit (exit 3 if another poller works this data dir)")
    p.add_argument("--interval", type=float, metavar="S", help="seconds between polls (default: INCIDENTIQ_POLL_INTERVAL)")
    p.add_argument("--json", action="store_true", help="with --once: print the poll report as JSON")
    p.set_defaults(handler=cmd_poll)


def cmd_poll(args) -> int:
    from pipeline.errors import Conflict
    from pipeline.unattended.poller import Poller
    from pipeline.composition import open_sources

    from pipeline.config import within

    if args.interval is not None:  # the range INCIDENTIQ_POLL_INTERVAL has: inf or 1e300 never polls
        within("INCIDENTIQ_POLL_INTERVAL", args.interval, what="--interval")
    engine = engine_from_env()
    poller = Poller(engine, open_sources(engine.settings.source, engine.settings), args.interval)
    if args.once:
        try:
            report = poller.poll_once()
        finally:
            poller.close()
        if report.standby:
            raise Conflict(f"another poller ({report.holder}) is working on this data dir")
        emit(args, report.as_json(), _report_text)
        return 0
    stop = threading.Event()
    _stop_on_signals(stop)
    terminal.err(f"polling {poller.label} every {poller.interval:g}s into "
                     f"{engine.settings.data_dir} (Ctrl-C to stop)\n")
    poller.run_supervised(stop, on_report=_printer())
    terminal.err("stopped\n")
    return 0


def _stop_on_signals(stop: threading.Event) -> None:
    def handle(signum, _frame):
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C stops hard

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)


def _printer():
    """Prints polls that did something, errors, and changes between working and standing by."""
    last = {"state": None}

    def show(report) -> None:
        state = "standby" if report.standby else "error" if report.error else "running"
        stamp = datetime.now().strftime("%H:%M:%S")
        if report.error:
            terminal.err(f"{stamp} error: {report.error}\n")
        elif state != last["state"] and report.standby:
            terminal.out(f"{stamp} standby: another poller ({report.holder}) works this data dir; waiting\n")
        elif report.busy or (state != last["state"] and last["state"] is not None):
            terminal.out(f"{stamp} {_report_text(report.as_json())}\n")
        sys.stdout.flush()
        last["state"] = state

    return show


def _report_text(r: dict) -> str:
    if r["standby"]:
        return f"standby: another poller ({r['holder']}) works this data dir"
    runs = ", ".join(f"{r[f'runs_{k}']} {k}" for k in ("started", "resumed", "merged", "retried", "failed")
                     if r[f"runs_{k}"])
    # what reached a person this poll (the JSON has the same counts): only when something did
    told = ", ".join(f"{r[k]} {k}" for k in ("announced", "escalated", "expired") if r.get(k))
    return (f"{r['source']}: {r['events']} events, {r['rejected']} rejected, {r['incidents_new']} new incidents, "
            f"{r['incidents_updated']} updated; runs: {runs or 'none'}{'; ' + told if told else ''}"
            f"{_backlog(r)} ({r['latency_ms']:.0f} ms)")


def _backlog(r: dict) -> str:
    """What the source still holds after this poll, where it says."""
    if r.get("lines_behind") is None and r.get("lag_seconds") is None:
        return ""
    lines = "" if r.get("lines_behind") is None else f"{r['lines_behind']} lines, "
    return f"; behind: {lines}oldest unread {r.get('lag_seconds') or 0:.1f} s"
