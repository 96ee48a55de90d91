"""Browser journeys of the inbox (issue 23): "Back to the inbox" lands on the inbox's rows, from an
incident opened by a row and from one opened by a URL; the table reads without scrolling sideways
at 1440 and 1024 px, its Title column in view with most of its text.

One `streamlit run app.py` for the module (tests/support.py's streamlit_app), headless Chromium.
"""
from __future__ import annotations

import os
import re

import pytest

from pipeline.ingest.files import ingest_path
from pipeline.store import checkpoints
from tests.support import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, FIXTURES, make_settings, settle, streamlit_app

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The app on a data dir with the small fixture's incidents paused at approval, and one browser."""
    from pipeline.engine import open_engine
    from playwright.sync_api import sync_playwright

    tmp = tmp_path_factory.mktemp("inbox-ui")
    engine = open_engine(make_settings(tmp / "data"))
    ingest_path(engine, FIXTURES / "small.jsonl")
    rows = engine.records.incidents()
    try:
        with streamlit_app(tmp / "data", tmp) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield {"url": url, "rows": rows, "browser": browser}
            browser.close()
    finally:
        engine.records.close()
        checkpoints.close_all()


@pytest.fixture
def page(site, request):
    page = site["browser"].new_page(viewport={"width": 1440, "height": 1000})
    try:
        yield page
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"inbox-{request.node.name}.png"), full_page=True)
        page.close()


def on_the_inbox(page, site) -> None:
    """The inbox is drawn: its title, its table and the rows' ids to open."""
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name="Inbox")).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stDataFrame")).to_be_visible(timeout=30_000)
    settle(page)
    assert "/incident" not in page.url and "incident=" not in page.url, page.url
    box = page.get_by_label("Open incident", exact=True).first
    box.click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    assert {r["incident_id"] for r in site["rows"]} <= set(options), options


def back(page) -> None:
    page.get_by_role("button", name=re.compile("Back to the inbox")).click()
    settle(page)


@pytest.mark.timeout(180)
def test_back_from_an_incident_opened_by_a_row_lands_on_the_inbox(page, site):
    from playwright.sync_api import expect

    page.goto(site["url"])
    on_the_inbox(page, site)
    grid = page.get_by_test_id("stDataFrame").locator("canvas").first.bounding_box()
    page.mouse.click(grid["x"] + 16, grid["y"] + 35 + 17)  # the first row's selection box
    expect(page.get_by_role("button", name=re.compile("Back to the inbox"))).to_be_visible(timeout=30_000)
    assert "incident=" in page.url
    back(page)
    on_the_inbox(page, site)


@pytest.mark.timeout(180)
def test_back_from_an_incident_opened_by_its_url_lands_on_the_inbox(page, site):
    from playwright.sync_api import expect

    incident = site["rows"][0]["incident_id"]
    page.goto(f"{site['url']}/incident?incident={incident}")
    expect(page.get_by_role("heading", name=incident)).to_be_visible(timeout=60_000)
    settle(page)
    back(page)
    on_the_inbox(page, site)
    page.reload()  # and the inbox stays: Back left no incident behind to reopen
    on_the_inbox(page, site)
