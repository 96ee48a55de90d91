"""`ingest` on a terminal shows its progress (lines/s, time left); piped or with --json it prints what it did before."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import termios

from tests.support import cli


def _write(path, n):
    path.write_text("".join(json.dumps({"_time": f"2026-11-28T10:{i // 60 % 60:02d}:{i % 60:02d}Z", "service": "svc",
                                        "level": "INFO", "message": f"request {i} served"}) + "\n"
                            for i in range(n)))


def test_ingest_on_a_terminal_shows_a_progress_bar_and_piped_output_is_unchanged(tmp_path, data_dir, capsys,
                                                                                  monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    source = tmp_path / "events.jsonl"
    _write(source, 1200)
    code, out, err = cli(capsys, "ingest", str(source))
    assert code == 0 and out.startswith("1200 events stored") and "lines/s" not in err  # not a terminal

    import sys

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    terminal = os.fdopen(follower, "w", buffering=1)
    try:
        monkeypatch.setattr(sys, "stderr", terminal)
        again = tmp_path / "more.jsonl"
        _write(again, 1200)
        code, out, _ = cli(capsys, "ingest", str(again), "--json")
        assert code == 0 and json.loads(out)["events"] == 0  # same content ids: nothing new, no bar
        terminal.flush()
        os.set_blocking(leader, False)
        try:
            assert b"lines/s" not in os.read(leader, 65536)
        except BlockingIOError:
            pass  # nothing was written to the terminal
        _write(again, 1300)
        code, out, _ = cli(capsys, "ingest", str(again))
        terminal.flush()
        drawn = _drained(leader).decode("utf-8", "replace")
    finally:
        monkeypatch.undo()
        terminal.close()
        os.close(leader)
    assert code == 0 and "events stored" in out
    assert "ingest" in drawn and "lines/s" in drawn and "1.30k/1.30k" in drawn.replace(" ", ""), drawn[-400:]
    assert "knowledge index" in drawn


def _drained(leader: int) -> bytes:
    """Everything written to the terminal so far: a pty hands its buffer over in pieces."""
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
