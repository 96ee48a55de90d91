"""The file source tails JSONL files: growth, partial lines, rotation, truncation, folders."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.errors import SourceError
from pipeline.ingest.events import DeadLetter
from pipeline.composition import open_source
from pipeline.sources.file import FileSource
from tests.support import make_settings

MAX = 262_144


def line(n: int, message: str = "payment declined for order") -> str:
    return json.dumps({"_time": f"2026-11-28T10:{n // 60:02d}:{n % 60:02d}Z", "service": "checkout-api",
                       "level": "ERROR", "message": f"{message} {n}"}) + "\n"


def write(path: Path, text: str, mode: str = "a") -> None:
    with open(path, mode, encoding="utf-8") as f:
        f.write(text)


def numbers(items) -> list[int]:
    return [int(i.message.rsplit(" ", 1)[1]) for i in items]


def drain(source: FileSource, cursor: str | None) -> tuple[list, str | None]:
    """Read until the source has nothing more ready, as the poller does."""
    got = []
    while True:
        batch = source.read(cursor)
        got += batch.items
        cursor = batch.cursor or cursor
        if not batch.more:
            return got, cursor


def test_appended_lines_are_read_once(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1) + line(2))
    src = FileSource(log, max_bytes=MAX)
    got, cursor = drain(src, None)
    assert numbers(got) == [1, 2]
    assert drain(src, cursor)[0] == []
    write(log, line(3))
    got, cursor = drain(src, cursor)
    assert numbers(got) == [3]


def test_a_new_source_object_resumes_from_the_stored_cursor(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1))
    _, cursor = drain(FileSource(log, max_bytes=MAX), None)
    write(log, line(2))
    got, _ = drain(FileSource(log, max_bytes=MAX), cursor)  # as after a restart
    assert numbers(got) == [2]


def test_a_partial_last_line_waits_for_its_newline(tmp_path):
    log = tmp_path / "app.jsonl"
    full = line(2)
    write(log, line(1) + full[:25])
    src = FileSource(log, max_bytes=MAX)
    got, cursor = drain(src, None)
    assert numbers(got) == [1]
    got, cursor = drain(src, cursor)
    assert got == []
    write(log, full[25:])
    got, _ = drain(src, cursor)
    assert numbers(got) == [2]


def test_rotation_finishes_the_old_file_then_reads_the_new_one_from_the_start(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1))
    src = FileSource(log, max_bytes=MAX, rotated_grace=0.0)
    _, cursor = drain(src, None)
    write(log, line(2))  # written before the rotation, not read yet
    log.rename(tmp_path / "app.jsonl.1")
    write(log, line(3) + line(4), mode="w")
    got, cursor = drain(src, cursor)
    assert numbers(got) == [2, 3, 4]
    write(log, line(5))
    got, _ = drain(src, cursor)
    assert numbers(got) == [5]


def test_a_rotated_file_still_being_written_keeps_its_partial_line_until_quiet(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1))
    clock = [1_000_000_000.0]
    src = FileSource(log, max_bytes=MAX, rotated_grace=30.0, clock=lambda: clock[0])
    _, cursor = drain(src, None)
    old = tmp_path / "app.jsonl.1"
    log.rename(old)
    tail = line(2)
    write(old, tail[:20])  # the writer has not reopened its log yet
    write(log, line(3), mode="w")
    os.utime(old, (clock[0], clock[0]))
    got, cursor = drain(src, cursor)
    assert numbers(got) == [3]
    write(old, tail[20:])  # the writer finishes its line in the rotated file
    os.utime(old, (clock[0], clock[0]))
    got, cursor = drain(src, cursor)
    assert numbers(got) == [2]
    clock[0] += 60
    assert drain(src, cursor)[0] == []


def test_rotation_before_the_new_file_exists_is_not_an_error(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1))
    src = FileSource(log, max_bytes=MAX)
    _, cursor = drain(src, None)
    write(log, line(2))
    log.rename(tmp_path / "app.jsonl.1")
    got, cursor = drain(src, cursor)
    assert numbers(got) == [2]
    write(log, line(3), mode="w")
    got, _ = drain(src, cursor)
    assert numbers(got) == [3]


def test_truncation_restarts_at_zero(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1) + line(2) + line(3))
    src = FileSource(log, max_bytes=MAX)
    _, cursor = drain(src, None)
    write(log, line(4), mode="w")  # truncated in place (copytruncate): same inode, smaller
    got, _ = drain(src, cursor)
    assert numbers(got) == [4]


def test_truncation_then_regrowth_past_the_old_offset_is_noticed(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1))
    src = FileSource(log, max_bytes=MAX)
    _, cursor = drain(src, None)
    write(log, line(7, "stock reservation failed") + line(8), mode="w")  # bigger than before, new content
    got, _ = drain(src, cursor)
    assert numbers(got) == [7, 8]


def test_a_folder_is_tailed_file_by_file_and_a_rename_within_it_keeps_its_offset(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write(folder / "a.jsonl", line(1))
    write(folder / "b.jsonl", line(2))
    src = FileSource(folder, max_bytes=MAX)
    got, cursor = drain(src, None)
    assert sorted(numbers(got)) == [1, 2]
    (folder / "a.jsonl").rename(folder / "a-2026-11-28.jsonl")
    write(folder / "a-2026-11-28.jsonl", line(3))
    write(folder / "c.jsonl", line(4))
    got, _ = drain(src, cursor)
    assert sorted(numbers(got)) == [3, 4]


def test_lines_that_are_not_text_become_dead_letters_with_their_position(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, line(1) + "{not json\n" + "bin\x00ary\n" + line(2))
    got, _ = drain(FileSource(log, max_bytes=MAX), None)
    dead = [i for i in got if isinstance(i, DeadLetter)]
    assert len(got) == 4 and len(dead) == 1
    assert dead[0].position == f"{log.absolute()}@{len(line(1)) + len('{not json') + 1}" and "NUL" in dead[0].reason
    # text that is not JSON is still an event: the line is its message
    assert [i.message for i in got if not isinstance(i, DeadLetter)][1] == "{not json"


def test_big_backlogs_come_in_batches_that_say_more_is_ready(tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, "".join(line(n) for n in range(25)))
    src = FileSource(log, max_bytes=MAX, batch_lines=10)
    first = src.read(None)
    assert len(first.items) == 10 and first.more
    got, _ = drain(src, first.cursor)
    assert numbers(first.items + got) == list(range(25))


def test_a_missing_path_is_a_source_error_until_it_appears(tmp_path):
    src = FileSource(tmp_path / "later.jsonl", max_bytes=MAX)
    with pytest.raises(SourceError, match="no such file"):
        src.read(None)
    write(tmp_path / "later.jsonl", line(1))
    assert numbers(src.read(None).items) == [1]


def test_the_file_spec_opens_a_file_source(tmp_path):
    src = open_source(f"file:{tmp_path / 'app.jsonl'}", make_settings(tmp_path))
    assert isinstance(src, FileSource) and src.name == f"file:{tmp_path / 'app.jsonl'}"


def test_the_lines_behind_are_kept_up_without_recounting_the_unread_file(tmp_path, monkeypatch):
    # issue 37.2: after every batch the source said how many lines were left by counting the
    # newlines of the whole unread file again (up to 16 MiB a batch, at 2,000 lines/s)
    import pipeline.sources.file as file_source

    counted: list[int] = []
    newlines = file_source._newlines

    def counting(path, offset, length):
        counted.append(length)
        return newlines(path, offset, length)
    monkeypatch.setattr(file_source, "_newlines", counting)
    log = tmp_path / "app.jsonl"
    write(log, "".join(line(n) for n in range(400)))
    src = FileSource(log, max_bytes=MAX, batch_lines=10)
    cursor, behind, batches = None, [], 0
    while True:
        batch = src.read(cursor)
        cursor, batches = batch.cursor or cursor, batches + 1
        behind.append(batch.lines_behind)
        if batches == 20:  # the writer goes on meanwhile, some lines ending in a partial one
            write(log, "".join(line(n) for n in range(400, 450)) + line(450)[:20])
        if not batch.more:
            break
    # every read says exactly what is left (the partial line counts once its newline comes)...
    assert behind[:20] == [400 - 10 * k for k in range(1, 21)]
    assert behind[20:44] == [450 - 10 * k for k in range(21, 45)] and set(behind[44:]) == {0}
    assert numbers(drain(src, cursor)[0]) == []
    # ...and the newlines were counted over about the file's bytes once, not the unread file per batch
    assert sum(counted) < 2.5 * log.stat().st_size


def test_beyond_the_counted_span_the_lines_behind_are_estimated_as_the_span_moves_on(tmp_path, monkeypatch):
    import pipeline.sources.file as file_source

    log = tmp_path / "app.jsonl"
    write(log, "".join(line(n) for n in range(300)))
    monkeypatch.setattr(file_source, "COUNT_BYTES", 50 * len(line(150)))  # about 50 lines counted
    src = FileSource(log, max_bytes=MAX, batch_lines=20)
    cursor, left = None, 300
    while True:
        batch = src.read(cursor)
        cursor, left = batch.cursor or cursor, left - len(batch.items)
        assert abs(batch.lines_behind - left) <= max(2, left // 50), (batch.lines_behind, left)
        if not batch.more:
            break
    assert left == 0 and batch.lines_behind == 0


def test_a_finished_files_unterminated_last_line_is_read_once_the_file_is_quiet(tmp_path):
    """A copied log (Loghub's files end without a newline) kept its last line unread and the poller
    "lagging" for ever: once nobody writes the file for `rotated_grace`, the line is read, once."""
    import time

    log = tmp_path / "app.jsonl"
    write(log, line(1) + line(2).rstrip("\n"))
    now = [time.time()]
    src = FileSource(log, max_bytes=MAX, rotated_grace=30.0, clock=lambda: now[0])
    got, cursor = drain(src, None)
    assert numbers(got) == [1]  # just written: its writer may be mid-line
    now[0] += 31
    got, cursor = drain(src, cursor)
    assert numbers(got) == [2]
    batch = src.read(cursor)
    assert batch.items == [] and not batch.lines_behind and not batch.bytes_behind
