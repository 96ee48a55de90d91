"""A layout per line, not per file (issue 34.3), and records that span lines by the layout (34.4):
a file read through the product's reader (`LogFile`, as `ingest` and the poller read) gives each
record its own time, level, service and message, whichever of the source's layouts wrote it.
The lines are written here in the manner of the loggers named (no third-party text)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pipeline.ingest.reading import LogFile, Parsing


def read(path: Path) -> list:
    reader = LogFile(path, max_bytes=1 << 20, parsing=Parsing())
    items = [item for item, _after in reader.scan(0, final=True, settled=True)]
    assert all(hasattr(item, "event_id") for item in items), "no dead letters in these files"
    return items


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)


def test_two_interleaved_layouts_are_each_read_with_their_own_header(tmp_path):
    # an application's logback lines and, in the same file, a sidecar's lines in a layout no known
    # format holds (a bracketed dotted date, an angle-bracketed level, a `component:` tag)
    lines = []
    for i in range(40):
        lines.append(f"2024-03-01 08:{i:02d}:00,{i:03d} {'ERROR' if i % 5 == 0 else 'INFO '} [main] "
                     f"com.shop.Cart - cart {i} {'failed to total' if i % 5 == 0 else 'totalled'}")
        lines.append(f"[01.03.2024 08:{i:02d}:30] <{'warn' if i % 4 == 0 else 'info'}> billing-agent: "
                     f"queue depth {i * 3}")
    path = tmp_path / "mixed.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    assert len(events) == 80
    for i in range(40):
        app, side = events[2 * i], events[2 * i + 1]
        assert "time_inferred" not in app.fields and "time_inferred" not in side.fields
        assert app.time == utc(2024, 3, 1, 8, i, 0, i * 1000)
        assert app.level == ("ERROR" if i % 5 == 0 else "INFO")
        assert app.message == f"cart {i} {'failed to total' if i % 5 == 0 else 'totalled'}"
        assert side.time == utc(2024, 3, 1, 8, i, 30)
        assert side.level == ("WARN" if i % 4 == 0 else "INFO")
        assert side.service == "billing-agent"
        assert side.message == f"queue depth {i * 3}"


def test_a_layout_that_changes_mid_file_without_rotation_is_learnt_from_its_own_lines(tmp_path):
    # 300 lines of a `|`-separated layout (past the 200 lines a layout is learnt from), then the
    # application is upgraded and writes a day-first layout with a one-letter level, in the same file
    first = [f"2024-03-01 08:{i // 60:02d}:{i % 60:02d} | {'WARN' if i % 7 == 0 else 'INFO'} | api | "
             f"request {i} served" for i in range(300)]
    later = [f"14/03/2024 09:15:{i:02d}.{i * 10:03d} {'EWI'[i % 3]} [worker-{i % 2}] job {i} "
             f"{['failed: timeout', 'retried', 'done'][i % 3]}" for i in range(30)]
    path = tmp_path / "upgraded.log"
    path.write_text("\n".join(first + later) + "\n")
    events = read(path)
    assert len(events) == 330
    for i, event in enumerate(events[:300]):
        assert event.time == utc(2024, 3, 1, 8, i // 60, i % 60)
        assert event.level == ("WARN" if i % 7 == 0 else "INFO")
        assert (event.service, event.message) == ("api", f"request {i} served")
    for i, event in enumerate(events[300:]):
        assert "time_inferred" not in event.fields
        assert event.time == utc(2024, 3, 14, 9, 15, i, i * 10_000)
        assert event.level == ["ERROR", "WARN", "INFO"][i % 3]
        assert event.message == f"job {i} {['failed: timeout', 'retried', 'done'][i % 3]}"
        assert not event.message.startswith(("14/03", "E ", "W ", "I "))
