"""Write one fileset of the outside test bed (tests/data/outside, issue 34) from a capture.

    python tools/outside_bed.py CAPTURE.json [...]

A capture is what was read by hand from the stored index of public repositories (the project's
search tools; nothing is fetched here, and nothing at test time): the log's text as the index gave
it (a JSON string, so tabs, CRs and non-ASCII bytes survive), its source path and commit, the
expected file's path and commit, and the records taken from that expected file with their
`log.offset`:

    {"bed": "filebeat-xpack/<module>/<fileset>/<name>.log",   # relative to the bed (or its sealed/)
     "sealed": false,
     "log": {"path": ..., "commit": <40 hex>}, "expected": {"path": ..., "commit": <40 hex>},
     "timezone": null, "note": "...",                          # note: optional
     "text": "<the first records' lines of the log>",
     "records": [{"offset": <log.offset>, "time": ..., "level": ..., "message": ...}, ...]}

It writes `<name>.log` (the text, as UTF-8) and `<name>.log.expected.json` in the bed's layout
(tests/data/outside/README.md), with each record's line number worked out from its offset, and
refuses a record whose offset is not the start of a line of the text or whose message (for a
non-JSON line) is not in the record's text (`"check_message": false` where the expected message
is joined from parts of several lines, as CRI partial lines are). Whether a module is sealed is `bench.outside.sealed_by_seed`
of its name (the team's own ten modules are always open); material from other projects than
Filebeat is always sealed, but for projects taken open as a whole (`bench.outside.OPEN_PROJECTS`: Elastic
integrations' packages, a-z); the capture must agree (a mismatch is refused). For other projects the
capture's `log` and `expected` also name the `repo` (both are usually the same spec or test file). Captures are not kept in the repository:
the bed's files and README say where each came from.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.outside import BED, OPEN_PROJECTS, SEALED_DIR_NAME, SEEDED_PROJECTS, SEEN, sealed_by_seed  # noqa: E402

_SPACE = re.compile(r"\s+")
FIELDS = ("offset", "line", "time", "level", "message", "year_written")


def _record_line(record: dict) -> str:
    kept = {k: record[k] for k in FIELDS if k in record and record[k] is not None}
    return "  " + json.dumps(kept, ensure_ascii=False)


def render(capture: dict) -> tuple[bytes, str]:
    """(log bytes, expected.json text) of a capture; raises ValueError on a record that does not fit."""
    for side in ("log", "expected"):
        if not re.fullmatch(r"[0-9a-f]{40}", capture[side]["commit"]):
            raise ValueError(f"{side} commit must be 40 hex digits")
    data = capture["text"].encode("utf-8")
    if not data.endswith(b"\n"):
        data += b"\n"
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10][:-1]
    records = []
    offsets = sorted(r["offset"] for r in capture["records"])
    for record in capture["records"]:
        if record["offset"] not in starts:
            raise ValueError(f"offset {record['offset']} is not the start of a line")
        later = [o for o in offsets if o > record["offset"]]
        text = data[record["offset"]:later[0] if later else len(data)].decode("utf-8")
        message = record.get("message")
        if message is not None and capture.get("check_message", True) and not text.lstrip().startswith("{") \
                and _SPACE.sub(" ", message).strip() not in _SPACE.sub(" ", text):
            raise ValueError(f"the message {message!r} is not in the record at {record['offset']}")
        records.append({**record, "line": starts.index(record["offset"])})
    head = {"log": capture["log"], "expected": capture["expected"], "timezone": capture.get("timezone")}
    if capture.get("note"):
        head["note"] = capture["note"]
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append(' "records": [')
    lines.append(",\n".join(_record_line(r) for r in records))
    lines += [" ]", "}"]
    return data, "\n".join(lines) + "\n"


def write(capture: dict, bed: Path = BED) -> Path:
    project, module = capture["bed"].split("/")[:2]
    seen = {p.name.split("-", 1)[0] for p in SEEN.iterdir() if p.is_dir()}
    sealed = sealed_by_seed(module) and module not in seen  # the team's ten are open: it has seen them
    if project in OPEN_PROJECTS:
        sealed = False  # taken open as a whole (bench.outside.OPEN_PROJECTS)
    elif project not in SEEDED_PROJECTS:
        sealed = True  # other projects' parser test data is all sealed hold-out
    if sealed != bool(capture.get("sealed")):
        raise ValueError(f"{module}: the seeded hash says {'sealed' if sealed else 'open'}")
    log = (bed / SEALED_DIR_NAME if capture.get("sealed") else bed) / capture["bed"]
    data, expected = render(capture)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(data)
    log.with_name(log.name + ".expected.json").write_text(expected, encoding="utf-8")
    return log


def main(argv: list[str]) -> int:
    for name in argv:
        capture = json.loads(Path(name).read_text(encoding="utf-8"))
        log = write(capture)
        print(f"{log.relative_to(ROOT)}: {len(capture['records'])} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
