"""`ingest` and the `file:PATH` source share one tailer and one cursor format; cursors written by
the old `ingest` (`inode:head:offset`) still resume where they stopped."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.unattended.file_ingest import ingest_file, ingest_path
from pipeline.ingest.tail import Tailer
from pipeline.sources.file import FileSource

MAX = 262_144


def line(n: int) -> str:
    return json.dumps({"_time": f"2026-11-28T10:00:{n:02d}Z", "service": "checkout-api", "level": "ERROR",
                       "message": f"payment declined for order {n}"}) + "\n"


def old_cursor(file: Path, offset: int) -> str:
    """What the old `ingest` stored: inode, sha1 of the first 256 bytes as they were, offset."""
    return f"{file.stat().st_ino}:{hashlib.sha1(file.read_bytes()[:256]).hexdigest()[:12]}:{offset}"


def store_old_cursor(engine, file: Path, value: str) -> None:
    engine.incidents.store_batch([], cursor=(f"file:{file.resolve()}", value))


def test_a_data_dir_ingested_by_the_old_ingest_neither_re_reads_nor_loses_lines(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_text("".join(line(n) for n in range(1, 11)))  # > 256 bytes
    done = len("".join(line(n) for n in range(1, 6)))
    store_old_cursor(engine, log, old_cursor(log, done))  # as if lines 1-5 were ingested before the upgrade
    with log.open("a") as f:
        f.write(line(11))
    counts = ingest_path(engine, log)
    assert counts.events == 6  # lines 6-11, not 1-5 again
    cursor = engine.records.cursor(f"file:{log.resolve()}")
    assert json.loads(cursor)["files"][0]["off"] == log.stat().st_size  # converted to the shared format
    assert ingest_path(engine, log).events == 0


def test_an_old_cursor_of_a_short_file_that_grew_since_still_resumes(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_text(line(1))  # shorter than the 256 bytes the old head hashed
    store_old_cursor(engine, log, old_cursor(log, log.stat().st_size))
    with log.open("a") as f:
        f.write(line(2) + line(3))
    assert ingest_file(engine, log).events == 2


def test_an_old_cursor_of_a_file_rewritten_in_place_reads_it_again(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_text(line(1) + line(2))
    cursor = old_cursor(log, log.stat().st_size)
    with log.open("r+") as f:
        f.write(line(7) + line(8))  # same inode, same size, other content
    store_old_cursor(engine, log, cursor)
    assert ingest_file(engine, log).events == 2


def test_ingest_reads_a_partial_last_line_and_the_poller_waits_for_its_newline(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_text(line(1) + line(2).rstrip("\n"))
    polled = FileSource(log, max_bytes=MAX).read(None)
    assert len(polled.items) == 1
    assert len(Tailer(log, max_bytes=MAX, final=True).read(None).items) == 2
    assert ingest_file(engine, log).events == 2


def test_a_file_ingested_then_tailed_by_the_poller_is_not_read_again(engine, tmp_path):
    log = (tmp_path / "app.jsonl").resolve()
    log.write_text(line(1) + line(2))
    ingest_file(engine, log)
    source = FileSource(log, max_bytes=MAX)
    cursor = engine.records.cursor(source.name)  # the same key and format
    assert cursor and source.read(cursor).items == []
    with log.open("a") as f:
        f.write(line(3))
    assert [i.message for i in source.read(cursor).items] == ["payment declined for order 3"]


def test_ingest_stores_a_big_file_batch_by_batch_and_ends_at_its_end(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_text("".join(line(n) for n in range(1, 8)))
    assert ingest_file(engine, log, batch_lines=2).events == 7
    assert json.loads(engine.records.cursor(f"file:{log.resolve()}"))["files"][0]["off"] == log.stat().st_size


def test_ingest_finishes_a_rotated_file_before_the_new_one(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_text(line(1))
    ingest_file(engine, log)
    with log.open("a") as f:
        f.write(line(2))
    log.rename(tmp_path / "app.jsonl.1")  # rotated: not a log suffix, found only by its inode
    log.write_text(line(3))
    assert ingest_file(engine, log).events == 2


def test_ingest_waits_for_a_last_line_still_being_written_and_stores_it_whole(engine, tmp_path):
    """`ingest` of a file whose writer is mid-line: the line is stored as its writer finished it,
    not cut where the read happened to find it (the poller always held it back)."""
    import threading
    import time

    log = tmp_path / "app.jsonl"
    whole = line(2)
    log.write_text(line(1) + whole[:40])  # the writer is in the middle of line 2

    def finish():
        time.sleep(0.5)
        with log.open("a") as f:
            f.write(whole[40:])

    writer = threading.Thread(target=finish)
    writer.start()
    try:
        counts = ingest_file(engine, log)
    finally:
        writer.join()
    assert counts.events == 2 and counts.rejected == 0
    messages = sorted(e.message for e in engine.records.all_events())
    assert messages == ["payment declined for order 1", "payment declined for order 2"]
    assert ingest_path(engine, log).events == 0  # nothing left to read, nothing read twice


def test_a_line_still_growing_after_the_wait_is_held_back_for_the_next_ingest(tmp_path):
    import threading
    import time

    log = tmp_path / "app.jsonl"
    whole = line(2)
    log.write_text(line(1) + whole[:20])
    done = threading.Event()

    def trickle():  # a slow writer: a byte every 50 ms, the newline last
        with log.open("a") as f:
            for ch in whole[20:]:
                f.write(ch)
                f.flush()
                time.sleep(0.05)
        done.set()

    writer = threading.Thread(target=trickle)
    writer.start()
    try:
        # ingest waits twice `settle` (0.4 s here) for the line; the writer needs ~8 s
        read = Tailer(log, max_bytes=MAX, final=True, settle=0.2).read(None)
        assert not done.is_set()
        assert [e.message for e in read.items] == ["payment declined for order 1"]  # not a garbled line 2
    finally:
        writer.join()
    rest = Tailer(log, max_bytes=MAX, final=True, settle=0.2).read(read.cursor)
    assert [e.message for e in rest.items] == ["payment declined for order 2"]


_PAUSING_WRITER = r"""
import sys, time
path, done, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
first, second = sys.stdin.read().split("\x1e")
with open(path, "a") as log:  # a logger holding its file open, flushing a partial line
    log.write(first)
    log.flush()
    print("paused", flush=True)
    time.sleep(pause)
    log.write(second)
    log.flush()
open(done, "w").close()
"""


def test_a_writer_pausing_mid_line_longer_than_the_settle_time_is_never_cut(engine, tmp_path):
    """A real writer process that keeps its log open and pauses 7 s in the middle of a line (a
    block-buffered logger): neither `ingest` during the pause nor the poller stores a cut event;
    the line is stored once, whole, after its writer finishes it, and a re-ingest adds nothing."""
    import subprocess
    import sys
    import time

    log = (tmp_path / "app.jsonl").resolve()
    done = tmp_path / "done"
    whole = line(2)
    writer = subprocess.Popen([sys.executable, "-c", _PAUSING_WRITER, str(log), str(done), "7"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdin is not None and writer.stdout is not None
        writer.stdin.write(line(1) + whole[:40] + "\x1e" + whole[40:])
        writer.stdin.close()
        assert writer.stdout.readline().strip() == "paused"
        time.sleep(2.5)  # quiet for longer than the 2 s settle time, the writer still mid-line
        polled = FileSource(log, max_bytes=MAX).read(None)
        assert [e.message for e in polled.items] == ["payment declined for order 1"]
        during = ingest_file(engine, log)
        assert not done.exists(), "the writer finished during the wait: the pause was not tested"
        assert (during.events, during.rejected) == (1, 0)
        assert writer.wait(timeout=30) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    after = ingest_file(engine, log)
    assert (after.events, after.rejected) == (1, 0)
    messages = sorted(e.message for e in engine.records.all_events())
    assert messages == ["payment declined for order 1", "payment declined for order 2"]
    assert ingest_path(engine, log).events == 0


_ROTATED_WRITER = r"""
import sys
path = sys.argv[1]
with open(path, "a") as log:  # keeps writing to its file after it was renamed away (no reopen yet)
    for row in iter(sys.stdin.readline, ""):
        if row == "close\n":
            break
        log.write(row.rstrip("\n").replace("\\n", "\n"))
        log.flush()
        print("written", flush=True)
"""


def test_the_poller_does_not_cut_a_rotated_files_line_while_its_writer_still_holds_it(tmp_path):
    """A logger that has not reopened its file after rotation pauses mid-line longer than the
    rotated file's grace: the poller holds the line back while the writer holds the file, and
    reads it whole once the writer has finished it and closed the file."""
    import subprocess
    import sys
    import time

    log = (tmp_path / "app.jsonl").resolve()
    whole = line(2)
    writer = subprocess.Popen([sys.executable, "-c", _ROTATED_WRITER, str(log)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdin is not None and writer.stdout is not None

    def write(text: str) -> None:
        writer.stdin.write(text.replace("\n", "\\n") + "\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "written"

    try:
        write(line(1))
        source = FileSource(log, max_bytes=MAX, rotated_grace=0.3, settle=0.2)
        first = source.read(None)
        assert [e.message for e in first.items] == ["payment declined for order 1"]
        write(whole[:40])
        log.rename(tmp_path / "app.jsonl.1")  # rotated; the writer still holds the old inode
        log.write_text(line(3))
        time.sleep(1.0)  # the rotated file is quiet for longer than its grace and the settle time
        during = source.read(first.cursor)
        assert [e.message for e in during.items] == ["payment declined for order 3"]
        write(whole[40:])
        writer.stdin.write("close\n")
        writer.stdin.close()
        assert writer.wait(timeout=30) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    after = source.read(during.cursor)
    assert [e.message for e in after.items] == ["payment declined for order 2"]


def test_an_empty_folder_is_a_source_with_nothing_to_read_yet_and_a_missing_one_an_error(tmp_path):
    """A folder source its writers have not written into yet is healthy (the poller waits); a path that
    does not exist is the error."""
    import pytest

    from pipeline.errors import SourceError

    folder = tmp_path / "logs"
    folder.mkdir()
    tail = Tailer(folder, max_bytes=1_000_000).read(None)
    assert (tail.items, tail.cursor, tail.more) == ([], None, False)
    (folder / "app.log").write_text("2026-12-01T09:00:00Z ERROR first line\n")
    assert len(Tailer(folder, max_bytes=1_000_000, final=True).read(None).items) == 1
    with pytest.raises(SourceError, match="no such file or folder"):
        Tailer(tmp_path / "missing", max_bytes=1_000_000).read(None)
