"""Containers' prefixed lines mixed with another writer's own in one file (issue 34: several layouts in one
file; CONTRACT §1): each prefixed line is its container's, the other lines are read as a file of them alone
would be. The lines are written here in the manner of a CI runner's job trace and `docker compose up`."""
from __future__ import annotations

from tests.support import read_lines as _write, utc

TRACE = ["2026-12-03T02:10:{:02d}.401832Z 01E Error: state lock held by job {}", "2026-12-03T02:10:{:02d}.402000Z 01E   Who: runner {}"]


def _mixed(prefixed_every: int, rounds: int = 6) -> list[str]:
    lines = []
    for i in range(rounds):
        lines += [TRACE[0].format(i * 4, i), TRACE[1].format(i * 4 + 1, i)]
        if i % prefixed_every == 0:
            lines += [f"resizer-1  | {{\"time\":\"2026-12-03T02:10:{i * 4 + 2:02d}.000Z\",\"level\":\"ERROR\",\"msg\":\"resize failed {i}\"}}",
                      "resizer-1  | fatal error: runtime: out of memory",
                      "resizer-1  | ",
                      "resizer-1  | goroutine 41 [running]:",
                      "resizer-1  | \t/usr/local/go/src/image/png/reader.go:452 +0x2a5"]
    return lines


def test_prefixed_lines_among_another_writers_are_their_containers_and_the_rest_keep_their_own_layout(tmp_path):
    events = _write(tmp_path, _mixed(2))  # 15 of 27 lines prefixed: under the share a prefixed file needs
    resizer = [e for e in events if e.service == "resizer"]
    trace = [e for e in events if e.service != "resizer"]
    # every container line is the container's: its JSON read (time, level, message), its panic one record
    assert [(e.time, e.level, e.message) for e in resizer if e.message.startswith("resize failed")] == [
        (utc(2026, 12, 3, 2, 10, i * 4 + 2), "ERROR", f"resize failed {i}") for i in range(0, 6, 2)]
    assert sum(e.message.startswith("fatal error: runtime: out of memory") for e in resizer) == 3
    # the job trace's lines keep their own times and never hold a container's line
    assert [e.time for e in trace if "state lock held" in e.message] == [
        utc(2026, 12, 3, 2, 10, i * 4, 401832) for i in range(6)]
    assert not any("resizer-1" in (e.message + (e.stack or "")) or "runtime: out of memory" in (e.stack or "")
                   for e in trace)


def test_a_file_with_too_few_prefixed_lines_is_read_as_one_writers(tmp_path):
    # one container burst of four lines among many others' lines: under five prefixed lines, no mixed reading
    lines = [TRACE[0].format(i % 60, i) for i in range(20)] + \
        [f"resizer-1  | line {i}" for i in range(4)]
    events = _write(tmp_path, lines)
    assert not any(e.service == "resizer" for e in events)
    # a table's `a | b` cells (no padding before the bar) are no prefix, whatever their share
    table = [f"2026-12-03 02:10:{i:02d} INFO row|{i}|done" for i in range(10)]
    assert all(e.service != "row" for e in _write(tmp_path, table))
