"""A folder's symlinks to files elsewhere are not read; a new bad line at a byte
offset used before (the file was rewritten) is dead-lettered, not silently dropped."""
from __future__ import annotations

import json
import os

from pipeline.unattended.file_ingest import ingest_path
from pipeline.ingest.events import iter_paths
from pipeline.unattended.poller import Poller
from pipeline.sources.file import FileSource

LINE = {"_time": "2026-11-28T10:00:00Z", "level": "ERROR", "service": "checkout-api", "message": "boom"}


def test_a_symlink_to_a_file_outside_the_folder_is_not_ingested(engine, tmp_path):
    outside = tmp_path / "secret.log"
    outside.write_text("root:x:0:0:SECRET-CONTENT\n")
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    (folder / "app.jsonl").write_text(json.dumps(LINE) + "\n")
    os.symlink(outside, folder / "evil.log")
    os.symlink(folder / "app.jsonl", folder / "sub" / "current.jsonl")  # inside: fine
    os.symlink(tmp_path / "missing.log", folder / "dangling.log")
    assert [p.name for p in iter_paths(folder)] == ["app.jsonl", "current.jsonl"]
    ingest_path(engine, folder)
    assert engine.records.dead_letters() == []
    assert "SECRET-CONTENT" not in json.dumps([e.model_dump(mode="json") for e in engine.records.all_events()])


def test_the_file_tailer_does_not_follow_a_symlink_out_of_its_folder(engine, tmp_path):
    outside = tmp_path / "secret.log"
    outside.write_text("SECRET-CONTENT\n")
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "app.jsonl").write_text(json.dumps(LINE) + "\n")
    os.symlink(outside, folder / "evil.log")
    Poller(engine, FileSource(folder, max_bytes=engine.settings.max_event_bytes), interval=0.05).poll_once()
    assert engine.records.dead_letters() == []
    # plain text is an event now, so the secret would show there had it been read
    assert "SECRET-CONTENT" not in json.dumps([e.model_dump(mode="json") for e in engine.records.all_events()])


def test_a_new_bad_line_at_an_offset_used_before_is_dead_lettered(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    # not text (invalid UTF-8): what is still a dead letter now that any text line is an event
    log.write_bytes(b"not \xff text, first version\n")
    ingest_path(engine, log)
    log.write_bytes(b"{broken \xfe, second version\n")  # rewritten in place: same path, same offset 0
    ingest_path(engine, log)
    log.write_bytes(b"not \xff text, first version\n")  # the first line again: already a dead letter
    ingest_path(engine, log)
    letters = engine.records.dead_letters()
    assert [d["raw"] for d in letters] == ["not \ufffd text, first version", "{broken \ufffd, second version"]
    assert all(d["position"].startswith(f"{log}@0") for d in letters)
