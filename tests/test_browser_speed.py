"""What a click costs in the browser, read from the page's websocket (bench/browser.py measures the
seconds; these pin the mechanisms): "Back to the inbox" runs the inbox's script only, not the
incident page's (and app.py's sidebar) before it.

One `streamlit run app.py` on the small fixture's incidents paused at approval, headless Chromium.
"""
from __future__ import annotations

import os
import re

import pytest

from tests.support import CHROMIUM, browser_page, browser_site, settle

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with browser_site(tmp_path_factory.mktemp("speed-ui")) as site:
        yield site


def _runs(payloads: list[bytes]) -> list[dict]:
    """The script runs the messages tell of, in order: {"fragment": bool, "elements": [kinds]}."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    runs: list[dict] = []
    for payload in payloads:
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            runs.append({"fragment": bool(msg.metadata.run.fragment_ids), "elements": []})
        elif kind == "delta" and runs:
            delta = msg.delta
            if delta.WhichOneof("type") == "new_element":
                element = delta.new_element
                runs[-1]["elements"].append(element.WhichOneof("type") + ":" + (
                    element.heading.body if element.WhichOneof("type") == "heading" else ""))
            else:
                runs[-1]["elements"].append(str(delta.WhichOneof("type")))
    return runs


@pytest.mark.timeout(180)
def test_back_to_the_inbox_runs_the_inbox_alone(site):
    """The click's run is the inbox's: the incident page does not run (drawing app.py's banner and
    sidebar, then switching) before it. Old code: a whole run of the incident page first."""
    from playwright.sync_api import expect

    incident = site["rows"][0]["incident_id"]
    with browser_page(site["browser"], "speed-back") as page:
        payloads: list[bytes] = []
        page.on("websocket", lambda ws: ws.on(
            "framereceived", lambda p: payloads.append(bytes(p)) if isinstance(p, (bytes, bytearray)) else None))
        page.goto(f"{site['url']}/incident?incident={incident}")
        expect(page.get_by_role("heading", name=incident)).to_be_visible(timeout=60_000)
        settle(page)
        first = len(payloads)
        page.get_by_role("button", name=re.compile("Back to the inbox")).click()
        expect(page.get_by_role("heading", name="Inbox")).to_be_visible(timeout=60_000)
        expect(page.get_by_test_id("stDataFrame")).to_be_visible(timeout=60_000)
        settle(page)
        runs = [r for r in _runs(payloads[first:]) if not r["fragment"]]  # the incident page's live refresh aside
        drawing = [r for r in runs if r["elements"]]
        assert drawing, runs
        assert any(e == "heading:Inbox" for e in drawing[0]["elements"]), (
            f"the first run that drew anything after Back was not the inbox's: {drawing[0]['elements'][:12]}")
