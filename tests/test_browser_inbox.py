"""Browser journeys of the inbox (issue 23): "Back to the inbox" lands on the inbox's rows, from an
incident opened by a row and from one opened by a URL; the table reads without scrolling sideways
at 1440 and 1024 px, its Title column in view with most of its text.

One `streamlit run app.py` for the module (tests/support.py's streamlit_app), headless Chromium.
"""
from __future__ import annotations

import os
import re

import pytest

from tests.support import CHROMIUM, GRID_COLUMN_JS, browser_page, browser_site, settle

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The app on a data dir with the small fixture's incidents paused at approval, and one browser."""
    with browser_site(tmp_path_factory.mktemp("inbox-ui")) as site:
        yield site


@pytest.fixture
def page(site, request):
    with browser_page(site["browser"], f"inbox-{request.node.name}") as page:
        yield page


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




@pytest.mark.timeout(180)
@pytest.mark.parametrize("width", [1440, 1024])
def test_the_inbox_title_is_in_view_with_most_of_its_text(page, site, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(site["url"])
    on_the_inbox(page, site)
    title = page.evaluate(GRID_COLUMN_JS, "Title")
    drawn = [x for x in title["textRight"] if x > 0]  # rows with text
    assert title["headers"][:2] == ["Incident", "Title"], title
    assert 0 < title["left"] < title["right"] <= title["visible"] + 1, title  # in view, not off to the side
    assert title["right"] - title["left"] >= 300, title  # ~45 characters, not ~15
    assert drawn and max(drawn) > 200, title  # long titles use the room
    for name in ("Status", "Severity", "Category"):  # what a reviewer triages by is in view too
        column = page.evaluate(GRID_COLUMN_JS, name)
        assert column["right"] <= column["visible"] + 1, (name, column)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.timeout(180)
def test_keys_move_down_the_inbox_and_enter_opens_the_chosen_row(page, site):
    """Streamlit has no key events: a keydown listener on the page clicks hidden buttons (j, Enter)."""
    from playwright.sync_api import expect

    page.goto(site["url"])
    on_the_inbox(page, site)
    box = page.get_by_label("Open incident", exact=True).first
    first = box.input_value()
    page.locator("h1").first.click()  # the focus on the page, not in a text box
    page.keyboard.press("j")
    settle(page)
    expect(box).not_to_have_value(first, timeout=30_000)
    chosen = box.input_value()
    page.locator("h1").first.click()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=chosen)).to_be_visible(timeout=60_000)
    assert f"incident={chosen}" in page.url
