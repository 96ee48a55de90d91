"""What a file source is read with, described for people (CLI `layout`, the Operations page) and
kept per source (`pipeline.store.layouts`).

`describe(parser, line)` says which format reads the source (a known fast path, a layout learnt
from its first lines, or INCIDENTIQ_LOG_PATTERN's), how much of the sample it read, and one line
split into its fields: the header's time, level, component (the service), host, pid and thread,
then the message.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from pipeline.errors import UsageError
from pipeline.ingest.formats import SourceParser
from pipeline.ingest.reading import LogFile, Parsing

if TYPE_CHECKING:
    from pipeline.store.records import Records

log = logging.getLogger(__name__)


def _why(parser: SourceParser) -> str:
    if parser.format == "custom":
        return "INCIDENTIQ_LOG_PATTERN"
    if parser.format == "learned":
        return "learnt from the first lines: no known format read them"
    if parser.format == "text":
        return "no format or layout read the lines: each line is its message"
    return "a known format"


def describe(parser: SourceParser, line: str | None) -> dict:
    """The parser's format and layout, and `line` split into its fields."""
    layout = parser.layout
    data: dict[str, Any] = {
        "format": parser.format or "text", "why": _why(parser), "share": round(parser.share, 3),
        "sample_size": getattr(parser, "sample_size", 0),
        "pattern": layout.pattern if layout is not None else (
            parser.options.pattern.pattern if parser.format == "custom" and parser.options.pattern else None),
        "columns": list(layout.columns) if layout is not None else [],
        "time_shape": layout.time_shape if layout is not None else None,
        "line": line or "", "fields": {},
        # the other layouts its sample showed (pipeline/ingest/layout_set.py), and whether a line
        # without the header continues the record before it (pipeline/ingest/headed.py)
        "more_layouts": [{"pattern": other.pattern, "columns": list(other.columns)}
                         for other in parser.set.layouts if other is not layout],
        "headed": parser.headed,
    }
    if line:
        rec = parser.parse(line)
        fields = {"time": rec.time.isoformat() if rec.time else None, "level": rec.level,
                  "level_name": rec.level_name, "service": rec.service, "host": rec.host}
        for key in ("component", "logger", "pid", "thread", "tag", "module", "client"):
            if rec.fields.get(key) is not None:
                fields[key] = rec.fields[key]
        fields["message"] = rec.message
        data["fields"] = {k: v for k, v in fields.items() if v is not None}
    return data


def layout_of_file(path: Path, *, pattern: str | None = None, log_format: str | None = None,
                   timezone: str | None = None, line: int = 0) -> dict:
    """What `ingest PATH` would read the file with (UsageError when it is not a readable file)."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"not a file: {path}")
    log_file = LogFile(path, max_bytes=1 << 20, parsing=Parsing(format=log_format, pattern=pattern, timezone=timezone))
    sample = log_file._sample()
    parser = log_file.parsing.parser(sample)
    lines = [s for s in sample if s.strip() and not s[:1].isspace()]
    chosen = lines[min(max(line, 0), len(lines) - 1)] if lines else None
    return {"path": str(path), **describe(parser, chosen)}


def remember_in(open_records: Callable[[], Records],
                scrub: Callable[[str], str] | None = None) -> Callable[[str, str, SourceParser, str | None], None]:
    """A `Parsing.on_learn` that keeps each source's layout (`describe`) in the records store
    `open_records` opens (pipeline/composition.py passes the data dir's), its sample line and fields
    through `scrub` (the secrets' masking, which lives above this package). Keeping it is a courtesy
    to the reviewer: a failure is logged, never a failed read."""
    def remember(source: str, file_identity: str, parser: SourceParser, line: str | None) -> None:
        from pipeline.store.layouts import save_layout

        description = describe(parser, line)
        if scrub is not None:
            description = {**description, "line": scrub(str(description.get("line") or "")),
                           "fields": {k: scrub(v) if isinstance(v, str) else v
                                      for k, v in (description.get("fields") or {}).items()}}
        records = None
        try:
            # once per file identity: a connection of its own, closed at once, holds no lock for long
            records = open_records()
            save_layout(records, source=source, file_identity=file_identity,
                        format=description.get("format", "text"), layout=description)
        except Exception as exc:  # noqa: BLE001 - a display aid must not stop ingestion
            log.warning("could not keep the layout of %s: %s", source, exc)
        finally:
            if records is not None:
                records.close()

    return remember
