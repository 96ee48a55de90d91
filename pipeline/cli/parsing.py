"""`parsing` and `layout`: how lines are read.

- `parsing --fixtures DIR | --loghub DIR`: how well your own labelled logs are read
  (`pipeline.ingest.parsing_check`): per Filebeat-style module folder, the lines whose time, level
  and message are as the `*-expected.json` beside them says; per Loghub-style system folder,
  messages free of header text, the service, own times. A folder is always named: the team's own measurement on
  the test bed is bench/parsing.py.
- `layout PATH`: the layout a log file is read with (a known format, or the one learnt from its
  first lines, or INCIDENTIQ_LOG_PATTERN's), with a sample line split into its fields.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.cli import emit, path_arg


def register(sub) -> None:
    p = sub.add_parser("parsing", help="how well labelled logs are read: Filebeat-style fixtures or Loghub-style systems")
    p.add_argument("--fixtures", type=path_arg, metavar="DIR", default=None,
                   help="a folder of module folders, each with FILE.log beside FILE.log-expected.json "
                        "(Filebeat's module test layout)")
    p.add_argument("--loghub", type=path_arg, metavar="DIR", default=None,
                   help="a folder of system folders, each with X_2k.log beside X_2k.log_structured.csv (Loghub's layout)")
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

    if args.fixtures is None and args.loghub is None:
        raise UsageError("parsing needs --fixtures DIR or --loghub DIR (the folders to measure)")
    for path in (args.fixtures, args.loghub):
        if path is not None and not Path(path).is_dir():
            raise UsageError(f"not a folder: {path}")
    report = {}
    if args.fixtures is not None:
        report["fixtures"] = fixtures_report(args.fixtures)
    if args.loghub is not None:
        report["loghub"] = loghub_report(args.loghub)
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
    for other in data.get("more_layouts") or []:
        out.append(f"also     {' | '.join(other['columns'])}  ({other['pattern']})")
    if data.get("headed"):
        out.append("records  open with the header; a line without one continues the record before it")
    out.append(f"line     {data['line']}")
    for key, value in data["fields"].items():
        out.append(f"  {key:<10} {value}")
    return "\n".join(out)
