"""Issue 39.2 and 39.10: work that grows with input is bounded. A fix proposal considers at most
MAX_REFS frames of its traces (each was compared with every one kept before it: 8 traces of
250 KB held a run for 397 s; bench/size_sweep.py times it), and a multi-line record past its caps
folds the rest of its lines into itself (tests/test_multiline.py) instead of cutting them into
records of their own: one ERROR line and 200,000 frames opened 201 incidents."""
from __future__ import annotations

from datetime import datetime, timezone

from pipeline.analyst import fixes
from pipeline.state import IncidentState, LogEvent
from tests.support import cli_json

FRAMES = 4_000  # a 250 KB trace's worth


def trace(n: int) -> LogEvent:
    stack = "\n".join(f"\tat com.pos.Cart{n}.step{i}(Cart{n}.java:{i + 1})" for i in range(FRAMES))
    return LogEvent(event_id=f"e{n}", time=datetime(2026, 11, 28, tzinfo=timezone.utc), service="checkout-api",
                    message="java.lang.NullPointerException", level="ERROR", stack=stack)


def test_a_proposal_considers_the_first_frames_of_its_traces_up_to_the_cap():
    state = IncidentState(incident_id="INC-20261128-000001", evidence=[trace(n) for n in range(8)])
    refs = fixes.file_refs(state)
    assert len(refs) == fixes.MAX_REFS < 8 * FRAMES
    assert refs == [fixes.FileRef("Cart0.java", i + 1) for i in range(fixes.MAX_REFS)]


def test_one_error_and_200000_frames_is_one_event_and_one_incident(data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    log = tmp_path / "app.log"
    with log.open("w") as f:
        f.write("2026-11-28 10:00:00,000 ERROR [main] com.pos.Cart - java.lang.NullPointerException: cart\n")
        f.writelines(f"\tat com.pos.Cart.step{i}(Cart.java:{i % 900 + 1})\n" for i in range(200_000))
    counts = cli_json(capsys, "ingest", str(log))
    assert (counts["events"], counts["incidents_new"]) == (1, 1)
