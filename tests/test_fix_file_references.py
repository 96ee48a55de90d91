"""Reading file references out of evidence is linear in its size, so approving an
incident with a huge log line cannot hold the incident's claim for minutes."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.analyst.fixes import FileRef, file_refs
from pipeline.state import IncidentState, LogEvent

HOSTILE = ["a" * 262_144, "a/" * 131_072, "a." * 131_072, "x.js" * 65_536 + "z", "/a.go" * 52_000,
           "(" + "a." * 131_072, 'File "' + "a" * 262_144]


def state_with(message: str, stack: str | None = None) -> IncidentState:
    event = LogEvent(event_id="e1", time=datetime(2026, 11, 28, tzinfo=timezone.utc), message=message, stack=stack,
                     service="checkout-api", level="ERROR")
    return IncidentState(incident_id="INC-20261128-000001", fingerprint="f", service="checkout-api", evidence=[event])


@pytest.mark.timeout(20)  # each of these took minutes with the quadratic patterns
@pytest.mark.parametrize("text", HOSTILE, ids=["word", "slashes", "dots", "js", "go", "paren", "py"])
def test_a_256_kib_line_of_path_characters_is_read_at_once(text):
    assert file_refs(state_with(text)) == []


@pytest.mark.timeout(20)
def test_references_after_a_huge_prefix_are_still_found():
    stack = "\n".join(["a" * 200_000 + " at total (/app/src/cart.js:12:5)",
                       "    at com.pos.CartService.total(CartService.java:88)",
                       '  File "/app/inventory/stock.py", line 41, in reserve',
                       "main.handler(...)\n\t/app/cmd/server/main.go:77 +0x1d"])
    assert file_refs(state_with("TypeError: x is undefined", stack)) == [
        FileRef("CartService.java", 88), FileRef("/app/inventory/stock.py", 41),
        FileRef("/app/src/cart.js", 12), FileRef("/app/cmd/server/main.go", 77)]
