"""`python -m pipeline`: a thin shell over the engine (CONTRACT §5).

Each command parses its arguments, calls one domain function, prints the result, and turns
our errors into one line on stderr and an exit code: 0 ok, 2 usage, 3 conflict, 4 not found.
Command groups live in small modules that each provide `register(subparsers)`.
"""
from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any, Callable

from pipeline.cli import terminal
from pipeline.errors import IncidentIQError

COMMAND_MODULES = ("pipeline.cli.records", "pipeline.cli.review", "pipeline.cli.people", "pipeline.cli.poll",
                   "pipeline.cli.eval", "pipeline.cli.grouping", "pipeline.cli.prune", "pipeline.cli.settings",
                   "pipeline.cli.backtest", "pipeline.cli.parsing", "pipeline.cli.regroup")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 with usage; keep it to one clear line
        terminal.err(f"error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m pipeline", description="IncidentIQ Workbench engine")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def emit(args: argparse.Namespace, data: Any, human: Callable[[Any], str]) -> None:
    """Print one JSON document with --json, human text otherwise."""
    if getattr(args, "json", False):
        terminal.out(json.dumps(data, indent=2, default=str) + "\n")
    else:
        text = human(data)
        if text:
            terminal.out(text.rstrip("\n") + "\n")


# the records stores a command opened (engine_from_env, records_from_env), closed by `main` when the
# command ends: `main` also runs in-process (the tests call it), where a PostgreSQL session
# left open would stay until the collector found it
_opened: list[Any] = []


def engine_from_env(**kwargs):
    """The engine for INCIDENTIQ_DATA_DIR (opened lazily so `--help` stays fast); its records store
    is closed when the command ends."""
    from pipeline.composition import open_engine

    engine = open_engine(**kwargs)
    _opened.append(engine.records)
    return engine


def records_from_env():
    """The records store of INCIDENTIQ_DATA_DIR alone: for commands that only read records (list,
    show, deadletters), which then start without the graph, the knowledge index or Chroma; closed
    when the command ends."""
    from pipeline.config import Settings
    from pipeline.composition import open_records

    records = open_records(Settings.from_env())
    _opened.append(records)
    return records


def parse_set(values: list[str] | None) -> dict:
    """`--set FIELD=JSON` pairs into a dict; a bad pair is a usage error."""
    from pipeline.errors import UsageError

    edits = {}
    for item in values or []:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--set expects FIELD=JSON, got {item!r}")
        try:
            edits[name.strip()] = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--set {name}: value is not JSON ({exc.msg}); quote strings, e.g. {name}='\"text\"'") from exc
        except RecursionError:
            raise UsageError(f"--set {name}: value is nested too deeply") from None
    return edits


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except IncidentIQError as exc:
        terminal.err(f"error: {exc.message}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        terminal.err("interrupted\n")
        return 130
    finally:
        while _opened:
            _opened.pop().close()


def console() -> int:
    """The `incidentiq` console script and `python -m pipeline`: one entry point."""
    from pipeline.gc_tuning import tune_garbage_collector

    tune_garbage_collector()  # a process of ours: its runs allocate many short-lived objects
    terminal.log_to_terminal()
    return main()


def path_arg(text: str) -> Path:
    return Path(text)
