"""`parsing` and `layout`: how lines are read.

- `parsing [--fixtures DIR] [--loghub DIR]`: the outside measure of parsing
  (`pipeline.ingest.parsing_check`): per Filebeat module, the lines whose time, level and message
  are as Filebeat expects; per Loghub system, messages free of header text, the service, own times.
- `layout PATH`: the layout a log file is read with (a known format, or the one learnt from its
  first lines, or INCIDENTIQ_LOG_PATTERN's), with a sample line split into its fields.
"""
from __future__ import annotations

import os
from pathlib import Path

from pipeline.cli import emit, path_arg

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "filebeat"
LOGHUB = Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k"))


def register(sub) -> None:
    p = sub.add_parser("parsing", help="how lines are read: Filebeat fixtures and Loghub systems")
    p.add_argument("--fixtures", type=path_arg, metavar="DIR", default=None,
                   help=f"Filebeat fixture folders (default {FIXTURES.relative_to(ROOT)})")
    p.add_argument("--loghub", type=path_arg, metavar="DIR", default=None,
                   help="Loghub systems with structured CSVs (default INCIDENTIQ_LOGHUB_DIR or ../shared/data/loghub-2k)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_parsing)
    p = sub.add_parser("layout", help="the layout a log file is read with, and a sample line split into fields")
    p.add_argument("path", type=path_arg, metavar="PATH")
    p.add_argument("--line", type=int, default=0, help="which of the first lines to split (default the first)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_layout)


def cmd_parsing(args) -> int:
    from pipeline.errors import UsageError
    from pipeline.ingest.parsing_check import fixtures_report, human, loghub_report

    report = {}
    both = args.fixtures is None and args.loghub is None
    fixtures = args.fixtures or (FIXTURES if both else None)
    loghub = args.loghub or (LOGHUB if both and LOGHUB.is_dir() else None)
    for path in (fixtures, loghub):
        if path is not None and not Path(path).is_dir():
            raise UsageError(f"not a folder: {path}")
    if fixtures is not None:
        report["fixtures"] = fixtures_report(fixtures)
    if loghub is not None:
        report["loghub"] = loghub_report(loghub)
    emit(args, report, human)
    return 0


def cmd_layout(args) -> int:
    from pipeline.config import Settings
    from pipeline.ingest.source_layout import layout_of_file

    settings = Settings.from_env()
    data = layout_of_file(Path(args.path), pattern=settings.log_pattern, log_format=settings.log_format,
                          timezone=settings.source_tz, line=args.line)
    emit(args, data, _layout_text)
    return 0


def _layout_text(data: dict) -> str:
    out = [f"file     {data['path']}", f"format   {data['format']}  (reads {data['share']:.0%} of the first "
           f"{data['sample_size']} lines; {data['why']})"]
    if data.get("pattern"):
        out.append(f"pattern  {data['pattern']}")
    if data.get("columns"):
        out.append(f"columns  {' | '.join(data['columns'])}")
    out.append(f"line     {data['line']}")
    for key, value in data["fields"].items():
        out.append(f"  {key:<10} {value}")
    return "\n".join(out)
