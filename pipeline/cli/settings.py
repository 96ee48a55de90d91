"""`settings [--markdown | --json]`: the declared settings (pipeline/config.py), never their values:
the Markdown table docs/REFERENCE.md and docs/CONTRACT.md §6 hold (tests/test_docs.py checks they match)."""
from __future__ import annotations

import argparse

from pipeline.cli import terminal


def register(sub) -> None:
    p = sub.add_parser("settings", help="the declared settings: the docs' table (--markdown) or JSON")
    shape = p.add_mutually_exclusive_group()
    shape.add_argument("--markdown", action="store_true", help="the docs' table (the default)")
    shape.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_settings)


def cmd_settings(args: argparse.Namespace) -> int:
    from pipeline import config
    from pipeline.cli import emit

    if args.json:
        emit(args, config.declarations(), str)
    else:
        terminal.out(config.markdown_table())
    return 0
