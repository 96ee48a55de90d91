"""The outside test bed for reading logs (issue 34): other projects' log fixtures with what their own
parsers expect, measured through the product's reader (`pipeline.ingest.reading.LogFile`).

Layout: `tests/data/outside/<project>/<module>/<fileset>/<name>.log` beside `<name>.log.expected.json`
(its source path, commit and licence are in tests/data/outside/README.md), and the sealed hold-out,
the same under `tests/data/outside/sealed/`. The team's own ten Filebeat modules
(tests/data/filebeat, already tuned on) are measured beside them as `seen`.

What counts as right, per expected record (the record that starts at the expected byte offset):
- time: the event's own time (not one inferred from another record or the file) is the expected
  instant, zone-aware, to the millisecond; where the expected instant has no fraction of a second
  (the other parser dropped it) to the second; where the line writes no year (`year_written` false),
  month, day and time of day; where it writes no date (`date_written` false), the time of day.
- level: our level (DEBUG/INFO/WARN/ERROR/FATAL) equals the expected level mapped by the same
  `normalize_level`; a record whose expected level is absent or maps to none is not counted, nor is
  one whose file names a `level_scale` that is no log level's (a CEF severity 0-10 says how bad a
  security event is, not DEBUG to FATAL: `10` is not bunyan's trace).
- message: after folding whitespace, the expected message is contained in ours (message and stack),
  also when leading `[tag]` columns are left out of both (MySQL's `[MY-010116] [Server]`, which
  Filebeat keeps in the message and our reader takes as fields); or, where the expected message is
  the record's whole text (the other parser kept the raw line), ours is a non-empty tail of it. A
  record without an expected message is not counted.
- all three: every field counted for the record is right; a record we did not produce (no event
  starts at its offset) is wrong in every field it counts.

The sealed part is read only by `bench/parsing.py --sealed`, which passes SEALED_UNSEAL; its files
must have the pinned SEALED_SHA256, so an edit is refused instead of measured (tests/test_outside_bed.py).
"""
from __future__ import annotations

import calendar
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.ingest.levels import normalize_level
from pipeline.ingest.reading import LogFile, Parsing

ROOT = Path(__file__).resolve().parents[1]
BED = ROOT / "tests" / "data" / "outside"
SEEN = ROOT / "tests" / "data" / "filebeat"
SEALED_DIR_NAME = "sealed"
SEAL_SEED = "incidentiq-outside-bed-2026-12"
SEEDED_PROJECTS = ("filebeat", "filebeat-xpack")  # sealed or open by sealed_by_seed; other projects' data is sealed, but for the open parts the README lists
# projects taken open as a whole: Elastic integrations' packages (l-z by session 43, a-k by session 44)
OPEN_PROJECTS = ("integrations",)
# The integrations packages split before measuring (session 43 for l-z, session 44 for a-k, one rule):
# a held package's failures are never looked at while tuning; its figures are printed as totals only.
HELD_SEED = "s43-reader-split"
SEALED_SHA256 = "2d290a45484e172c58cfbad1dd5108e0c60b08c8dd822fa80d78a1224299045c"
SEALED_UNSEAL = "bench/parsing.py --sealed"
# the generated bed of the spellings libraries define (tools/spellings_bed.py): measured on its own
# (`spellings_report`), never in the open part's totals, so those stay comparable across sessions
SPELLINGS = "spellings"
BELOW = 0.80  # a module under this share of records right is counted as failing
_SPACE = re.compile(r"\s+")
_TAGS = re.compile(r"^(?:\[[^\]]*\]\s*)+")  # leading `[tag]` columns one reader keeps and another takes as fields
# abbreviations Filebeat's tests write as `event.timezone` (Go's zone names), as offsets
_ABBREVIATIONS = {"UTC": "+00:00", "GMT": "+00:00", "CET": "+01:00", "CEST": "+02:00", "EST": "-05:00",
                  "EDT": "-04:00", "CST": "-06:00", "CDT": "-05:00", "PST": "-08:00", "PDT": "-07:00"}


class SealedBed(Exception):
    """The sealed part was asked for without the unseal token, or its files were changed."""


def sealed_by_seed(module: str) -> bool:
    """Whether a module belongs to the sealed hold-out: a seeded hash of its name, about one in three."""
    return int(hashlib.sha256(f"{SEAL_SEED}:{module}".encode()).hexdigest(), 16) % 3 == 0


def held_package(name: str) -> bool:
    """Whether an integrations package is in the held third: a seeded hash of its name."""
    return int(hashlib.sha256(f"{HELD_SEED}:{name}".encode()).hexdigest(), 16) % 3 == 0


def seal_digest(root: Path) -> str:
    """sha256 over the sealed part's files: each relative path and its bytes, in path order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@dataclass
class Figures:
    module: str
    part: str  # open, seen or sealed
    files: int = 0
    records: int = 0
    right: int = 0
    counted: dict = field(default_factory=lambda: {"time": 0, "level": 0, "message": 0})
    good: dict = field(default_factory=lambda: {"time": 0, "level": 0, "message": 0})

    @property
    def share(self) -> float:
        return self.right / self.records if self.records else 0.0


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _instant(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00").replace(",", "."))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)  # Filebeat's tests run in UTC


def time_right(ours: datetime | None, expected: str, *, year_written: bool = True, date_written: bool = True) -> bool:
    """The event's time against the expected instant (module doc)."""
    if ours is None:
        return False
    want = _instant(expected)
    got = ours if ours.tzinfo else ours.replace(tzinfo=timezone.utc)
    if not date_written:  # a time of day alone (log4j2's ABSOLUTE, Go's Kitchen): its wall clock in the expected zone
        got = got.astimezone(want.tzinfo)
        got = got.replace(year=want.year, month=want.month, day=want.day)
    if not year_written:
        got, want = got.astimezone(timezone.utc), want.astimezone(timezone.utc)
        # a leap day moves to the expected year when that year has one (a year-less `Feb 29` is read
        # in the latest leap year, the fixture's may be an earlier one)
        got = got.replace(year=want.year) if (got.month, got.day) != (2, 29) or calendar.isleap(want.year) else got
    if want.microsecond == 0:
        return got.replace(microsecond=0) == want
    return abs(got - want) < timedelta(milliseconds=1)


def message_right(ours: str, expected: str, raw: str) -> bool:
    """Our message (and stack) against the expected message (module doc)."""
    exp, mine = _fold(expected), _fold(ours)
    if exp in mine or (_TAGS.sub("", exp) or exp) in _TAGS.sub("", mine):
        return True
    return exp == _fold(raw) and bool(mine) and exp.endswith(mine)


def _expected(path: Path) -> tuple[str | None, list[dict]]:
    """(zone, records) of an expected file: ours, or the team's Filebeat-shaped ones (`@timestamp`...)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        records = data["records"]
        if data.get("level_scale") is not None:  # severities on another scale than log levels: not counted
            records = [{k: v for k, v in r.items() if k != "level"} for r in records]
        return data.get("timezone"), records
    log = path.with_name(path.name.removesuffix("-expected.json")).read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(log) if b == 10]
    zone = next((e["event.timezone"] for e in data if e.get("event.timezone")), None)
    records = []
    for n, e in enumerate(data):
        line = e.get("line", n)
        records.append({"offset": starts[line], "time": e.get("@timestamp"), "level": e.get("log.level"),
                        "message": e.get("message")})
    return zone, records


def zone_name(zone: str | None) -> str:
    """The zone a fixture's times are read in, as the setting INCIDENTIQ_SOURCE_TZ takes it: an
    offset such as `-02:00` is the IANA `Etc/GMT+2` (whose sign is the other way round)."""
    found = re.fullmatch(r"([+-])(\d{2}):?00", _ABBREVIATIONS.get(zone or "", zone or ""))
    if not found:
        return zone or "UTC"
    hours = int(found[2])
    return "UTC" if hours == 0 else f"Etc/GMT{'-' if found[1] == '+' else '+'}{hours}"


def measure_file(log: Path, expected_path: Path, figures: Figures) -> None:
    """Read one log through the product's reader and count each expected record's fields."""
    zone, expected = _expected(expected_path)
    reader = LogFile(log, max_bytes=1 << 20, parsing=Parsing(timezone=zone_name(zone)))
    events = {}
    for item, _after in reader.scan(0, final=True, settled=True):
        position = getattr(item, "position", "")
        if getattr(item, "event_id", None) is not None:
            events[int(position.rsplit("@", 1)[1])] = item
    data = log.read_bytes()
    starts = sorted(events)
    figures.files += 1
    for exp in expected:
        figures.records += 1
        event = events.get(exp["offset"])
        later = [s for s in starts if s > exp["offset"]]
        raw = data[exp["offset"]:later[0] if later else len(data)].decode("utf-8", "replace")
        ok = True
        checks = []
        if exp.get("time"):
            checks.append(("time", event is not None and "time_inferred" not in event.fields
                           and time_right(event.time, exp["time"], year_written=exp.get("year_written", True),
                                          date_written=exp.get("date_written", True))))
        want_level = normalize_level(exp["level"]) if exp.get("level") is not None else None
        if want_level is not None:
            checks.append(("level", event is not None and event.level == want_level))
        if exp.get("message") is not None:
            ours = "" if event is None else event.message + ("\n" + event.stack if event.stack else "")
            checks.append(("message", event is not None and message_right(ours, exp["message"], raw)))
        for name, good in checks:
            figures.counted[name] += 1
            figures.good[name] += good
            ok &= good
        figures.right += ok


def _fileset_logs(folder: Path):
    for log in sorted(folder.rglob("*.log")):
        for expected in (log.with_name(log.name + ".expected.json"), log.with_name(log.name + "-expected.json")):
            if expected.exists():
                yield log, expected


def _modules(root: Path, part: str, *, skip: tuple[str, ...] = ()) -> list[Figures]:
    out = []
    if not root.is_dir():
        return out
    for project in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in skip):
        for module in sorted(p for p in project.iterdir() if p.is_dir()):
            figures = Figures(module=f"{project.name}/{module.name}", part=part)
            for log, expected in _fileset_logs(module):
                measure_file(log, expected, figures)
            if figures.files:
                out.append(figures)
    return out


def _seen_modules(root: Path) -> list[Figures]:
    """The team's ten (`<module>-<fileset>` folders), one line per module."""
    by_module: dict[str, Figures] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        module = folder.name.split("-", 1)[0]
        figures = by_module.setdefault(module, Figures(module=f"filebeat/{module}", part="seen"))
        for log, expected in _fileset_logs(folder):
            measure_file(log, expected, figures)
    return [f for f in by_module.values() if f.files]


def _totals(modules: list[Figures]) -> dict:
    records = sum(m.records for m in modules)
    out = {"modules": len(modules), "records": records, "right": sum(m.right for m in modules),
           "below": sum(m.share < BELOW for m in modules)}
    for name in ("time", "level", "message"):
        out[name] = [sum(m.good[name] for m in modules), sum(m.counted[name] for m in modules)]
    out["share"] = round(out["right"] / records, 4) if records else 0.0
    return out


def report(*, sealed: bool = False, token: str | None = None, root: Path = BED, seen: Path = SEEN) -> dict:
    """Per module figures and totals: the open part and the team's ten, or (unsealed) the sealed part."""
    if sealed:
        folder = root / SEALED_DIR_NAME
        if token != SEALED_UNSEAL:
            raise SealedBed(f"the sealed part ({folder}) is read only by `{SEALED_UNSEAL}`")
        if seal_digest(folder) != SEALED_SHA256:
            raise SealedBed(f"{folder}: the sealed part was changed (its sha256 is not the pinned one)")
        modules = _modules(folder, "sealed")
        return {"part": "sealed", "modules": [_row(m) for m in modules], "total": _totals(modules)}
    new = _modules(root, "open", skip=(SEALED_DIR_NAME, SPELLINGS))
    known = _seen_modules(seen)
    return {"part": "open", "modules": [_row(m) for m in new + known], "total": _totals(new + known),
            "total_new": _totals(new), "total_seen": _totals(known)}


def integrations_split(root: Path = BED) -> dict:
    """The integrations part by half of the alphabet (a-k brought in by session 44, l-z by 43) and by
    the held split: totals of each, and per-package rows of the tuned parts only."""
    modules = _modules(root, "open", skip=(SEALED_DIR_NAME, SPELLINGS))
    groups: dict[str, list[Figures]] = {}
    for m in modules:
        project, name = m.module.split("/", 1)
        if project != "integrations":
            continue
        half = "a-k" if name[:1] <= "k" else "l-z"
        groups.setdefault(f"{half} {'held' if held_package(name) else 'tuned'}", []).append(m)
    return {"totals": {k: _totals(v) for k, v in sorted(groups.items())},
            "tuned_rows": [_row(m) for k, v in sorted(groups.items()) if k.endswith("tuned") for m in v]}


def spellings_report(root: Path = BED) -> dict:
    """The generated spellings bed: per source (and `levels`) figures, and per position of the time
    in the line, with totals (its README section says what each file holds)."""
    folder = root / SPELLINGS
    by_source, by_position = [], {}
    for source in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        figures = Figures(module=f"{SPELLINGS}/{source.name}", part="generated")
        for log, expected in _fileset_logs(source):
            position = Figures(module=log.stem if source.name != "levels" else "levels", part="generated")
            measure_file(log, expected, figures)
            measure_file(log, expected, position)
            into = by_position.setdefault(position.module, Figures(module=position.module, part="generated"))
            into.files += 1
            into.records += position.records
            into.right += position.right
            for name in position.counted:
                into.counted[name] += position.counted[name]
                into.good[name] += position.good[name]
        by_source.append(figures)
    return {"part": "generated", "modules": [_row(m) for m in by_source],
            "positions": [_row(m) for m in by_position.values()], "total": _totals(by_source)}


def _held_row(row: dict) -> bool:
    project, _, name = row["module"].partition("/")
    return project == "integrations" and held_package(name)


def _row(m: Figures) -> dict:
    return {**asdict(m), "share": round(m.share, 4)}


def _pct(good: int, counted: int) -> str:
    return f"{good / counted:6.1%}" if counted else "     -"


def human(data: dict, *, totals_only: bool = False) -> str:
    """The report as a table: per module records, time, level, message and all-three right."""
    out = [f"Outside test bed ({data['part']} part): records  time  level  message  all-three"]
    if not totals_only:
        held = [m for m in data.get("modules", []) if _held_row(m)]
        if held:
            out.append(f"  ({len(held)} held integrations packages: totals only, see `integrations_split`)")
        for m in data.get("modules", []):
            if _held_row(m):
                continue
            c, g = m["counted"], m["good"]
            flag = "  < 80%" if m["share"] < BELOW else ""
            out.append(f"  {m['module']:28} {m['part']:6} {m['records']:4}  {_pct(g['time'], c['time'])} "
                       f"{_pct(g['level'], c['level'])} {_pct(g['message'], c['message'])}  "
                       f"{m['share']:6.1%}{flag}")
    for key, title in (("total_new", "fixtures new to the team"), ("total_seen", "the team's ten"), ("total", "all")):
        if key in data:
            t = data[key]
            out.append(f"  total, {title}: {t['modules']} modules, {t['records']} records; time "
                       f"{_pct(*t['time']).strip()}, level {_pct(*t['level']).strip()}, message "
                       f"{_pct(*t['message']).strip()}; all three {t['right']}/{t['records']} "
                       f"({t['share']:.1%}); modules below 80%: {t['below']}")
    return "\n".join(out)
