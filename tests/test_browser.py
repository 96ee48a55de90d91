"""Real-browser journeys: one `streamlit run app.py` for the module on a free loopback port with a temp
data dir (tests/support.py's browser_site), driven by one headless Chromium through Playwright.

The review: opens an incident from the inbox, enters a reviewer name, approves with a double click
(one decision), sees the fix proposal, replays from an earlier checkpoint and sees the new branch;
log text with markup shows literally. The inbox and the shell: the view (filter, search) is in
the URL through a reload, a visit to an incident and Back; a deep link; the Status column whole
at 1440 px and the filters inside the page at 1024 px; a toolbar without developer items. Every
request either journey makes goes to loopback (fonts and icons are served by the app).

Screenshots go to test-artifacts/ on failure; with INCIDENTIQ_SCREENSHOTS=1 the pages are also
saved to docs/screenshots/ for the README.
"""
from __future__ import annotations

import json
import os
import re

import pytest

from pipeline.unattended.file_ingest import ingest_path
from tests.support import (CHROMIUM, ROOT, alert, artifacts_on_failure, browser_site, choose, cut_figure_labels, grid_column,
                           paused_ids, settle)

SCREENSHOTS = ROOT / "docs" / "screenshots"
HOSTILE = "<script>document.write(document.cookie)</script> see [docs](http://evil.example/phish)"

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium (CI installs it; `apt-get install chromium`)",
                allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else __import__(
    "playwright.sync_api", fromlist=["sync_playwright"])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One `streamlit run app.py` and one Chromium for the module (tests/support.py's browser_site) on
    the small fixture's incidents paused at approval, plus a hostile one; yields its URL, its engine
    (the journeys read and decide through it), the browser and the incidents the journeys use. The
    inbox journey only reads, so it goes first; the review decides, and its replay leaves its incident
    awaiting approval again."""
    work = tmp_path_factory.mktemp("browser-journeys")
    with browser_site(work) as site:
        engine = site["engine"]
        hostile = work / "hostile.jsonl"
        hostile.write_text(json.dumps({"_time": "2026-11-28T12:00:00Z", "service": "web-shop", "level": "ERROR",
                                       "message": HOSTILE}) + "\n"
                           # a long service name and category widen the inbox's columns, as a real day does
                           + json.dumps({"_time": "2026-11-28T12:01:00Z", "service": "payments-gateway-eu-west-1",
                                         "level": "ERROR", "message": "FATAL: password authentication failed for user "
                                         "\"ledger\" upstream_auth_failure at ledger-db.internal:5432"}) + "\n")
        ingest_path(engine, hostile)
        if os.environ.get("INCIDENTIQ_SCREENSHOTS") == "1":
            ingest_path(engine, ROOT / "samples" / "pos-day.jsonl")  # a fuller inbox to show
        site["incident"] = _by_service(engine, "checkout-api")
        site["hostile"] = _by_service(engine, "web-shop")
        yield site


LOOPBACK = ("127.0.0.1", "localhost")


def record_requests(page) -> list[str]:
    """Every URL the page asks for from now on (documents, scripts, fonts, images, websockets)."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("websocket", lambda ws: seen.append(ws.url))
    return seen


def outside_loopback(urls: list[str]) -> list[str]:
    from urllib.parse import urlsplit

    return [u for u in urls if not u.startswith(("data:", "blob:", "about:")) and urlsplit(u).hostname not in LOOPBACK]


def _by_service(engine, service: str) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == service)


def shoot(page, name: str, element=None) -> None:
    """With INCIDENTIQ_SCREENSHOTS=1, save the page (or one element of it) for the README."""
    if os.environ.get("INCIDENTIQ_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (element or page).screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def button(page, name: str):
    """A Streamlit button by its exact text (widgets' own icon buttons are not counted)."""
    return page.locator('button[data-testid^="stBaseButton"]').filter(
        has_text=re.compile(rf"^\s*{re.escape(name)}\s*$"))


@pytest.mark.timeout(180)
def test_the_inbox_view_lives_in_the_url_and_the_shell_fits_and_stays_local(site):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    paused_engine = site["engine"]
    url, inventory = site["url"], _by_service(paused_engine, "inventory-service")
    page = site["browser"].new_page(viewport={"width": 1440, "height": 1000})
    requests = record_requests(page)
    segment = page.get_by_test_id("stButtonGroup").first.locator("button")
    search = page.get_by_role("textbox", name="Search", exact=True)
    try:
        with artifacts_on_failure(page, "inbox-journey"):
            page.goto(url)
            expect(page.get_by_text("Open incident")).to_be_visible(timeout=60_000)
            settle(page)
            assert page.url.endswith("/?show=awaiting")
            awaiting = len(paused_ids(paused_engine))
            expect(segment.filter(has_text=f"Awaiting approval ({awaiting})")).to_have_attribute(
                "aria-checked", "true")
            expect(page.get_by_text(f"Showing 1–{awaiting} of {awaiting} awaiting approval", exact=False)).to_be_visible()

            # 1440 px: the Status column whole, inside the table's visible part, no text clipped
            status = grid_column(page, "Status")
            assert status["headers"][:3] == ["Incident", "Title", "Status"], status
            assert 0 < status["left"] < status["right"] <= status["visible"], status
            assert status["textRight"] and all(0 < x < status["right"] - status["left"] - 4
                                               for x in status["textRight"]), status
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")

            # the toolbar: no Deploy, and the menu holds no developer item (only About)
            assert page.get_by_text("Deploy", exact=True).count() == 0
            page.get_by_test_id("stMainMenu").click()
            items = page.get_by_test_id("stMainMenuList")
            expect(items.get_by_text("About", exact=True)).to_be_visible()
            for item in ("Rerun", "Clear cache", "Record screen", "Print", "Settings"):
                assert items.get_by_text(item, exact=True).count() == 0, item
            page.keyboard.press("Escape")

            # the view goes into the URL, survives a reload, a visit to an incident and Back
            segment.filter(has_text=re.compile(r"^All \(")).click()
            settle(page)
            # its id: one match, however full the inbox. A rerun landing while the box is typed in
            # (the inbox refreshes itself) can redraw it and drop the Enter: type it again then
            for attempt in range(3):
                search.fill(inventory)
                search.press("Enter")
                settle(page)
                try:
                    page.wait_for_url(re.compile(rf"\?show=all&q={inventory}$"), timeout=20_000)
                    break
                except PlaywrightTimeout:
                    if attempt == 2:
                        raise
            expect(page.get_by_text("Showing 1–1", exact=False)).to_be_visible()
            page.reload()
            expect(search).to_have_value(inventory, timeout=60_000)
            settle(page)
            expect(segment.filter(has_text=re.compile(r"^All \("))).to_have_attribute("aria-checked", "true")
            choose(page, "Open incident", inventory)
            button(page, "Open").click()
            expect(page.get_by_role("heading", name=inventory)).to_be_visible(timeout=30_000)
            assert f"incident={inventory}" in page.url
            page.go_back()
            page.wait_for_url(re.compile(rf"\?show=all&q={inventory}$"), timeout=15_000)
            expect(search).to_have_value(inventory, timeout=30_000)
            settle(page)
            assert "incident=" not in page.url
            expect(page.get_by_text("Showing 1–1", exact=False)).to_be_visible()

            page.goto(f"{url}/?show=decided")  # a deep link
            expect(segment.filter(has_text="Decided (0)")).to_have_attribute("aria-checked", "true",
                                                                               timeout=60_000)
            expect(page.get_by_text("No incidents here.")).to_be_visible()

            # 1024 px: every filter whole inside the page, nothing to scroll sideways
            page.set_viewport_size({"width": 1024, "height": 900})
            page.goto(f"{url}/?show=awaiting")
            expect(page.get_by_text("Open incident")).to_be_visible(timeout=60_000)
            settle(page)
            strip = page.get_by_test_id("stButtonGroup").first.bounding_box()  # the Show choices (bulk actions below)
            for i in range(segment.count()):
                box = segment.nth(i).bounding_box()
                assert strip["x"] <= box["x"] and box["x"] + box["width"] <= min(strip["x"] + strip["width"], 1024) + 1
                assert segment.nth(i).evaluate("e => e.scrollWidth <= e.clientWidth"), segment.nth(i).inner_text()
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
            for box in (page.get_by_label("Assignee", exact=True).first.bounding_box(), search.bounding_box()):
                assert box["x"] + box["width"] <= 1024

            assert len(requests) > 20 and outside_loopback(requests) == []
    finally:
        page.close()


@pytest.mark.timeout(240)
def test_reviewer_opens_approves_and_replays_an_incident_in_a_browser(site):
    from playwright.sync_api import expect

    incident, hostile, url, paused_engine = site["incident"], site["hostile"], site["url"], site["engine"]
    page = site["browser"].new_page(viewport={"width": 1400, "height": 1000})
    requests = record_requests(page)
    try:
        with artifacts_on_failure(page, "browser-journey"):
            page.goto(url)
            expect(page.get_by_text("Open incident")).to_be_visible(timeout=60_000)
            settle(page)
            expect(page.get_by_test_id("stButtonGroup").first.get_by_text(re.compile(r"^Awaiting approval \(\d+\)$"))
                   ).to_be_visible()
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
            # the rerun after the name can take long on a busy machine, and while it runs the
            # page holds the old (disabled) Approve beside the new one: wait for one, then enabled
            expect(approve).to_have_count(1, timeout=60_000)
            expect(approve).to_be_enabled(timeout=60_000)
            approve.dblclick()  # a double click sends one decision
            # walkthrough s57 (14-approve.png): the page sat mid-way, the message above the viewport: a toast too.
            # The toast first: it goes after a few seconds, and waiting for the message box before it could
            # outlast it on a busy machine (a fresh-clone CI run of session 58 saw it gone)
            expect(page.get_by_test_id("stToastText").get_by_text("Approval recorded for alice")).to_be_in_viewport(
                timeout=60_000)
            expect(alert(page, "Approval recorded for alice")).to_be_visible(timeout=60_000)
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
            choose(page, "Checkpoint", "· root cause analysis ·")
            button(page, "Replay from here…").filter(visible=True).click()
            settle(page)
            expect(page.get_by_text("The recorded fix is not among them")).to_be_visible()
            button(page, "Confirm replay").click()
            expect(alert(page, "a new branch, now awaiting approval")).to_be_visible(
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
            # at 1024 px with the sidebar open the figures wrap, each label whole (five equal columns
            # cut "Awaiting approval")
            assert not (cut := cut_figure_labels(page)), cut
            assert len(requests) > 20 and outside_loopback(requests) == []
    finally:
        page.close()
