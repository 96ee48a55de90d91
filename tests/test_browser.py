"""One real-browser journey: `streamlit run app.py` on a free loopback port with a temp data dir,
driven by headless Chromium through Playwright. Opens an incident from the inbox, enters a
reviewer name, approves with a double click (one decision), sees the fix proposal, replays from
an earlier checkpoint and sees the new branch; log text with markup shows literally.

Screenshots go to test-artifacts/ on failure; with INCIDENTIQ_SCREENSHOTS=1 the pages are also
saved to docs/screenshots/ for the README.
"""
from __future__ import annotations

import contextlib
import json
import os
import re

import pytest

from pipeline.ingest.files import ingest_path
from tests.support import CHROMIUM, CHROMIUM_ARGS, ROOT, settle, streamlit_app

ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "docs" / "screenshots"
HOSTILE = "<script>document.write(document.cookie)</script> see [docs](http://evil.example/phish)"

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium (CI installs it; `apt-get install chromium`)",
                allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else __import__(
    "playwright.sync_api", fromlist=["sync_playwright"])


@pytest.fixture
def server(paused_engine, tmp_path):
    """`streamlit run app.py` on the paused engine's data dir, poller off; yields its base URL and
    the incidents the journey uses."""
    journey = {"incident": _by_service(paused_engine, "checkout-api")}
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(json.dumps({"_time": "2026-11-28T12:00:00Z", "service": "web-shop", "level": "ERROR",
                                   "message": HOSTILE}) + "\n")
    ingest_path(paused_engine, hostile)
    journey["hostile"] = _by_service(paused_engine, "web-shop")
    if os.environ.get("INCIDENTIQ_SCREENSHOTS") == "1":
        ingest_path(paused_engine, ROOT / "samples" / "pos-day.jsonl")  # a fuller inbox to show
    with streamlit_app(paused_engine.settings.data_dir, tmp_path) as url:
        yield {**journey, "url": url}


def _by_service(engine, service: str) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == service)


def shoot(page, name: str, element=None) -> None:
    """With INCIDENTIQ_SCREENSHOTS=1, save the page (or one element of it) for the README."""
    if os.environ.get("INCIDENTIQ_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (element or page).screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@contextlib.contextmanager
def artifacts_on_failure(page, name: str):
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        raise


def button(page, name: str):
    """A Streamlit button by its exact text (widgets' own icon buttons are not counted)."""
    return page.locator('button[data-testid^="stBaseButton"]').filter(
        has_text=re.compile(rf"^\s*{re.escape(name)}\s*$"))


def choose(page, label: str, text: str) -> None:
    """Pick the option containing `text` in the selectbox labelled `label` (typing filters it)."""
    box = page.get_by_label(label, exact=True).first
    if text in box.input_value():
        return  # already chosen (the list would not open for its own value)
    box.click()
    box.fill(text)
    page.get_by_role("option").filter(has_text=text).first.click()
    settle(page)


@pytest.mark.timeout(240)
def test_reviewer_opens_approves_and_replays_an_incident_in_a_browser(server, paused_engine):
    from playwright.sync_api import expect, sync_playwright

    incident, hostile, url = server["incident"], server["hostile"], server["url"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM) if CHROMIUM.exists() else None,
                                    args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            with artifacts_on_failure(page, "browser-journey"):
                page.goto(url)
                expect(page.get_by_text("Open incident")).to_be_visible(timeout=60_000)
                settle(page)
                expect(page.get_by_text("Awaiting", exact=True)).to_be_visible()
                shoot(page, "inbox")

                choose(page, "Open incident", incident)
                button(page, "Open").click()
                expect(page.get_by_role("heading", name=incident)).to_be_visible(timeout=30_000)
                settle(page)
                expect(page.get_by_text("Enter your name in the sidebar to decide.")).to_be_visible()

                page.get_by_label("Your name", exact=True).fill("alice")
                page.get_by_label("Your name", exact=True).press("Enter")
                settle(page)
                approve = button(page, "Approve")
                expect(approve).to_be_enabled()
                approve.dblclick()  # a double click sends one decision
                expect(page.get_by_text("Approval recorded for alice")).to_be_visible(timeout=60_000)
                settle(page)
                expect(page.get_by_text("Fix proposal", exact=True)).to_be_visible()
                expect(page.get_by_text("approved — fix proposed (not applied)", exact=True).first).to_be_visible()
                row = paused_engine.records.incident(incident)
                assert row["status"] == "fix_proposed"
                assert [a["reviewer"] for a in paused_engine.records.audit(incident)
                        if a["action"] == "approve"] == ["alice"]
                page.set_viewport_size({"width": 1400, "height": 2200})
                settle(page)
                shoot(page, "incident")

                page.get_by_role("tab", name="History & time travel").click()
                settle(page)
                choose(page, "Checkpoint", "· rca ·")
                button(page, "Replay from here…").filter(visible=True).click()
                settle(page)
                expect(page.get_by_text("code_fix is not among them")).to_be_visible()
                button(page, "Confirm replay").click()
                expect(page.get_by_text("a new branch, now awaiting approval")).to_be_visible(
                    timeout=60_000)
                settle(page)
                expect(page.locator("text=branch 1").first).to_be_attached()
                assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"
                shoot(page, "history", page.get_by_test_id("stTabs").last)

                page.goto(f"{url}/incident?incident={hostile}")
                expect(page.get_by_role("heading", name=hostile)).to_be_visible(timeout=30_000)
                settle(page)
                expect(page.get_by_text(HOSTILE).first).to_be_visible()  # literal, tags and link included
                links = page.locator('a[href*="evil.example"]')
                assert links.count() == 0, [links.nth(i).evaluate(
                    "e => e.parentElement.parentElement.outerHTML.slice(0, 400)") for i in range(links.count())]
                assert not page.evaluate(  # the log's <script> is text, never an element
                    "[...document.scripts].some(s => s.textContent.includes('document.cookie'))")

                page.set_viewport_size({"width": 1400, "height": 1000})
                page.goto(f"{url}/operations")
                expect(page.get_by_text("Storage")).to_be_visible(timeout=30_000)
                settle(page)
                shoot(page, "operations")
        finally:
            browser.close()
