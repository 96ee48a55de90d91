"""How well lines are read, measured on labelled logs written by others (`python -m pipeline parsing
--fixtures DIR | --loghub DIR`, and bench/parsing.py on the team's test bed).

- Filebeat fixtures (`<root>/<module>/<file>.log` beside `<file>.log-expected.json`; the test bed's
  are tests/data/filebeat, from elastic/beats, see the NOTICE there): per module, the lines whose
  time, level and message are what Filebeat's own pipeline expects. Each field is compared where the expected record holds it: the time
  to the millisecond (read in the fixture's `event.timezone`, as Filebeat's tests do); the level as
  written or as the same normalised level; the message whitespace-trimmed, a record's continuation
  lines included, and also counted right when the only difference is leading `[tag]` columns on
  either side (MySQL's error code and subsystem, which Filebeat keeps in the message and the header
  reading takes as fields; Apache's `[client ...]`, which Filebeat takes as a field and the message
  keeps, as Loghub's ground truth does).
- Loghub systems (`<root>/<System>/<System>_2k.log` and its `_structured.csv`): the share of events
  whose message is the structured Content exactly (no header text left in it, so none in a title),
  the events whose message still holds header text, the share with a service where the CSV has a
  Component, and the share that got their own line's time (hours, minutes and seconds as the line
  writes them, or the line's epoch seconds) rather than one inferred.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pipeline.ingest.formats import SourceParser
from pipeline.ingest.timestamps import offset_zone
from pipeline.ingest.levels import normalize_level

_TAGS = re.compile(r"^(?:\[[^\]]*\]\s*)+")


@dataclass
class ModuleFigures:
    module: str
    files: int = 0
    lines: int = 0  # expected records
    right: int = 0  # time, level and message all right where expected
    time_checked: int = 0
    time_right: int = 0
    level_checked: int = 0
    level_right: int = 0
    message_checked: int = 0
    message_right: int = 0

    @property
    def share(self) -> float:
        return self.right / self.lines if self.lines else 0.0


def _records(lines: list[str], parser: SourceParser) -> dict[int, Any]:
    from pipeline.ingest.reading import _starts_record, record_joiner

    joiner = record_joiner(parser, _starts_record(parser))
    out = []
    for n, line in enumerate(lines):
        out += joiner.feed(n, line)
    out += joiner.flush()
    return {r.position: parser.parse(r.text) for r in out if r.text.strip() and not parser.consume_directive(r.text)}


def _tz(name: str | None):
    if not name:
        return timezone.utc
    try:
        return offset_zone(name) or timezone.utc
    except ValueError:
        return timezone.utc


def _same_message(ours: str, stack: str | None, expected: str) -> bool:
    exp = expected.strip()
    candidates = {ours.strip(), (ours + ("\n" + stack if stack else "")).strip()}
    if exp in candidates:
        return True
    bare = _TAGS.sub("", exp).strip()
    return bare in candidates or bare in {_TAGS.sub("", c).strip() for c in candidates}


def _same_level(record, expected: str) -> bool:
    raw = str(record.level) if record.level is not None else ""
    if raw.strip("[]:").lower() == expected.lower():
        return True
    return record.level_name is not None and normalize_level(expected) == record.level_name


def check_fixture(log: Path, expected_path: Path, figures: ModuleFigures) -> None:
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    lines = log.read_text(encoding="utf-8").splitlines()
    zone = next((e.get("event.timezone") for e in expected if e.get("event.timezone")), None)
    parser = SourceParser(timezone=_tz(zone))
    parser.detect(lines)
    records = _records(lines, parser)
    figures.files += 1
    for n, exp in enumerate(expected):
        figures.lines += 1
        rec = records.get(exp.get("line", n))  # the record that starts on the expected record's line
        if rec is None:
            continue
        ok = True
        if "@timestamp" in exp:
            figures.time_checked += 1
            want = datetime.fromisoformat(exp["@timestamp"].replace("Z", "+00:00").replace(",", "."))
            if want.tzinfo is None:
                want = want.replace(tzinfo=timezone.utc)  # Filebeat's tests run in UTC unless they say
            got = rec.time
            good = got is not None and abs(got - want) < timedelta(milliseconds=1)
            figures.time_right += good
            ok &= good
        if "log.level" in exp:
            figures.level_checked += 1
            good = _same_level(rec, str(exp["log.level"]))
            figures.level_right += good
            ok &= good
        if "message" in exp:
            figures.message_checked += 1
            good = _same_message(rec.message, rec.stack, str(exp["message"]))
            figures.message_right += good
            ok &= good
        figures.right += ok


def fixtures_report(root: Path) -> dict:
    modules: list[ModuleFigures] = []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        figures = ModuleFigures(folder.name)
        for log in sorted(folder.glob("*.log")):
            expected = log.with_name(log.name + "-expected.json")
            if expected.exists():
                check_fixture(log, expected, figures)
        if figures.files:
            modules.append(figures)
    lines = sum(m.lines for m in modules)
    right = sum(m.right for m in modules)
    return {"modules": [{**asdict(m), "share": round(m.share, 4)} for m in modules],
            "lines": lines, "right": right, "share": round(right / lines, 4) if lines else 0.0}


# -- Loghub ------------------------------------------------------------------------------------

def _own_time(record, row: dict) -> bool:
    """Whether the record's time is one its line writes: its epoch seconds (BGL, HPC, Thunderbird
    write one) or its hours, minutes and seconds as a time column writes them."""
    if record.time is None or record.fields.get("time_inferred"):
        return False
    t = record.time
    for key in ("Timestamp", "Time"):
        if (row.get(key) or "").isdigit() and int(t.timestamp()) == int(row[key]):
            return True
    text = " ".join(v or "" for k, v in row.items() if k in ("Date", "Day", "Time", "Month"))
    return bool(re.search(rf"{t.hour:02d}[:.]?{t.minute:02d}[:.]?{t.second:02d}", text))


def loghub_report(root: Path) -> dict:
    systems = []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        logs = list(folder.glob("*_2k.log"))
        structured = list(folder.glob("*_2k.log_structured.csv"))
        if not logs or not structured:
            continue
        lines = logs[0].read_text(encoding="utf-8", errors="replace").splitlines()
        with open(structured[0], newline="", encoding="utf-8", errors="replace") as f:
            rows = list(csv.DictReader(f))
        parser = SourceParser(timezone=timezone.utc)
        parser.detect(lines)
        exact = header_left = served = own = 0
        has_component = bool(rows) and "Component" in rows[0]
        for line, row in zip(lines, rows):
            rec = parser.parse(line)
            content = row["Content"].strip()
            message = rec.message.strip()
            exact += message == content
            header_left += message != content and message.endswith(content) and len(message) > len(content)
            served += rec.service is not None
            own += _own_time(rec, row)
        n = min(len(lines), len(rows))
        systems.append({"system": folder.name, "format": parser.format, "lines": n,
                        "message_exact": round(exact / n, 4), "header_in_message": header_left,
                        "service": round(served / n, 4) if has_component else None,
                        "own_time": round(own / n, 4)})
    return {"systems": systems}


def human(report: dict) -> str:
    out = []
    if "fixtures" in report:
        fx = report["fixtures"]
        out.append(f"Filebeat fixtures: {fx['right']}/{fx['lines']} lines right ({fx['share']:.1%}) "
                   f"over {len(fx['modules'])} modules")
        for m in fx["modules"]:
            out.append(f"  {m['module']:24} {m['right']:3}/{m['lines']:<3} {m['share']:6.1%}  time "
                       f"{m['time_right']}/{m['time_checked']}  level {m['level_right']}/{m['level_checked']}  "
                       f"message {m['message_right']}/{m['message_checked']}")
    if "loghub" in report:
        out.append("Loghub systems: message = Content, header text left in messages, service, own time")
        for s in report["loghub"]["systems"]:
            service = "-" if s["service"] is None else f"{s['service']:.1%}"
            out.append(f"  {s['system']:12} {s['format']:12} message {s['message_exact']:6.1%}  header-left "
                       f"{s['header_in_message']:4}  service {service:>6}  own time {s['own_time']:6.1%}")
    return "\n".join(out)
