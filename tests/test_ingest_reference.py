"""Reading and storing a line faster must not change what is stored. The shared Loghub
logs, `bench/ingest.py`'s corpus (the logs repeated with shifted times, plus JSON events) and a
file of hostile lines are ingested through `ingest_file`, each into a fresh data dir, and what the
store then holds (every event's values, the dead letters, the incidents and the events each
gained, the miner's templates) is compared with what the code before the issue's speed-ups stored,
kept as digests in tests/data/ingest_reference.json: one per stored field, so a difference names
the part and the field that changed.

After a change that is meant to change what is stored, write the reference again and say why in
the commit: `.venv/bin/python -m tests.test_ingest_reference --write`.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.support import LOGHUB, ROOT, make_settings

REFERENCE = Path(__file__).resolve().parent / "data" / "ingest_reference.json"
CORPUS_LINES = 20_000
# year-less times (syslog, Proxifier) take the current year: the reference reads them in this one
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
EVENT_FIELDS = ("event_id", "time", "message", "service", "host", "level", "exception", "stack", "trace_id",
                "fields", "source", "position")



def hostile_bytes() -> bytes:
    """Lines the reader must refuse or read oddly, next to ordinary ones: each kind of dead letter
    (NUL, invalid UTF-8, binary, over the size limit), control and ANSI characters, a stack trace,
    blank and indented lines, JSON that is deep, broken or of the wrong shape."""
    lines = [
        b"2026-11-28 10:00:00,001 ERROR [main] com.shop.Cart: total failed",
        b"java.lang.IllegalStateException: cart is empty",
        b"\tat com.shop.Cart.total(Cart.java:88)",
        b"\tat com.shop.Api.handle(Api.java:12)",
        b"Caused by: java.lang.NullPointerException",
        b"\t... 3 more",
        b"",
        b"2026-11-28 10:00:01,002 WARN [pool-1] com.zaxxer.hikari.HikariPool: Connection is not available",
        b"2026-11-28 10:00:02,003 INFO [main] com.shop.Cart: ok \x00 with a NUL",
        b"2026-11-28 10:00:03,004 ERROR [main] com.shop.Cart: bad bytes \xff\xfe here",
        b"\x01\x02\x03\x04\x05\x06\x07\x08binary\x0e\x0f\x10\x11\x12\x13\x14",
        b"2026-11-28 10:00:04,005 ERROR [main] com.shop.Cart: " + b"x" * 300_000,
        b"2026-11-28 10:00:05,006 ERROR [main] com.shop.Cart: \x1b[31mred\x1b[0m and a \x07 bell",
        b"   indented line with no record before it in this batch",
        b"Traceback (most recent call last):",
        b'  File "app.py", line 3, in <module>',
        b"ValueError: bad value",
        b'{"_time": "2026-11-28T10:00:06Z", "level": "ERROR", "service": "x", "message": "bad \\ud800 text"}',
        b'{"_time": "2026-11-28T10:00:07Z", "level": "ERROR", "service": "y", "message": "deep", "extra": '
        + b'{"a": ' * 300 + b"1" + b"}" * 300 + b"}",
        b'{"_time": "2026-11-28T10:00:08Z", "level": "error", "message": "half a line',
        b"[1, 2, 3]",
        b'{"_time": "0001-01-01T00:00:00Z", "level": "ERROR", "service": "z", "message": "year one"}',
        b"Nov 28 10:00:09 host1 sshd[42]: error: PAM: authentication failure for root",
        b"no time, no level, just words",
        b"ERROR: a level with no time",
        b"2026-11-28 10:00:10,007 FATAL [main] com.shop.Cart: \xe2\x82\xac unicode \xf0\x9f\x98\x80 fine",
    ]
    return b"\n".join(lines) + b"\n"


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_ingest_for_reference", ROOT / "bench" / "ingest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digest(values) -> str:
    text = json.dumps(values, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def stored(data_dir: Path, files: list[Path], *, roots: dict[str, str]) -> dict:
    """Ingest `files` (in order) into a fresh engine on `data_dir`; digests of what it stored, the
    paths under `roots` written as their names (the reference does not depend on where it ran)."""
    from pipeline.composition import open_engine
    from pipeline.unattended.file_ingest import ingest_file
    from pipeline.store import checkpoints

    def local(text):
        if isinstance(text, str):
            for root, name in roots.items():
                text = text.replace(root, name)
        return text

    engine = open_engine(make_settings(data_dir), sync_knowledge=False)
    try:
        counts = [ingest_file(engine, f).as_json() for f in files]
        records = engine.records
        events = sorted((e.model_dump(mode="json") for e in records.all_events()), key=lambda e: e["event_id"])
        joined = sorted((r["event_id"], r["incident_id"]) for r in records.query(
            "SELECT event_id, incident_id FROM events WHERE incident_id IS NOT NULL"))
        letters = sorted((local(r["source"]), local(r["position"]), r["reason"], r["raw"]) for r in records.query(
            "SELECT source, position, reason, raw FROM dead_letters"))
        incidents = sorted(tuple(r) for r in records.query(
            "SELECT incident_id, fingerprint, title, service, severity, status, first_seen, last_seen, event_count"
            " FROM incidents"))
        templates = sorted(engine.incidents.templates().items())
    finally:
        engine.records.close()
        checkpoints.close_all()
    out: dict = {"counts": counts, "events": len(events), "dead_letters": len(letters), "incidents": len(incidents),
                 "templates": len(templates)}
    out["event_fields"] = {name: _digest([local(e[name]) for e in events]) for name in EVENT_FIELDS}
    out["event_incident"] = _digest(joined)
    out["dead_letter_rows"] = _digest(letters)
    out["incident_rows"] = _digest(incidents)
    out["template_texts"] = _digest(templates)
    return out


def part(name: str, tmp: Path) -> tuple[list[Path], dict[str, str]]:
    """One corpus: (files to ingest in order, paths to write as names)."""
    if name == "loghub":
        # ingest names a file by its resolved path: ../shared may be a symlink (a CI checkout's is)
        return (sorted(next(iter(sorted(p.glob("*.log")))) for p in LOGHUB.iterdir() if p.is_dir()),
                {str(LOGHUB.resolve()): "<loghub>", str(LOGHUB): "<loghub>"})
    folder = tmp / name
    folder.mkdir()
    if name == "bench_corpus":
        files = [Path(f) for f in _bench_module().write_corpus(LOGHUB, folder, CORPUS_LINES)["files"]]
        return files, {str(folder.resolve()): "<corpus>", str(folder): "<corpus>"}
    (folder / "app.log").write_bytes(hostile_bytes())
    return [folder / "app.log"], {str(folder.resolve()): "<hostile>", str(folder): "<hostile>"}


PARTS = ("loghub", "bench_corpus", "hostile")


def _pinned_now(monkeypatch) -> None:
    from pipeline.ingest import formats

    class Pinned(datetime):
        @classmethod
        def now(cls, tz=None):
            return NOW if tz is not None else NOW.replace(tzinfo=None)

    monkeypatch.setattr(formats, "datetime", Pinned)


@pytest.mark.usefixtures("needs_loghub")
@pytest.mark.parametrize("name", PARTS)
def test_ingest_stores_what_it_stored_before_the_speed_ups(name, tmp_path, monkeypatch):
    _pinned_now(monkeypatch)
    files, roots = part(name, tmp_path)
    got = stored(tmp_path / "data", files, roots=roots)
    want = json.loads(REFERENCE.read_text(encoding="utf-8"))[name]
    differing = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    differing += sorted(f"event_fields.{k}" for k in want.get("event_fields", {})
                        if got.get("event_fields", {}).get(k) != want["event_fields"][k])
    assert got == want, f"{name}: stored differently: {', '.join(differing)}"


def _write() -> None:
    import tempfile

    from _pytest.monkeypatch import MonkeyPatch

    patch = MonkeyPatch()
    _pinned_now(patch)
    reference = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in PARTS:
                files, roots = part(name, Path(tmp))
                reference[name] = stored(Path(tmp) / f"data-{name}", files, roots=roots)
    finally:
        patch.undo()
    REFERENCE.parent.mkdir(exist_ok=True)
    REFERENCE.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {REFERENCE}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m tests.test_ingest_reference --write")
    _write()
