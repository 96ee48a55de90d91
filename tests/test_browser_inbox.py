"""Browser journeys of the inbox (issue 23): "Back to the inbox" lands on the inbox's rows, from an
incident opened by a row and from one opened by a URL; the table reads without scrolling sideways
at 1440 and 1024 px, its Title column in view with most of its text.

One `streamlit run app.py` for the module (tests/support.py's streamlit_app), headless Chromium.
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


# a column's place in the grid (canvas): the header's column separators, as tests/test_browser.py's
# STATUS_JS finds them, and the rightmost text pixel of the column in each row
COLUMN_JS = """(name) => {
  const grid = document.querySelector('[data-testid="stDataFrame"]');
  const canvas = grid.querySelector('canvas[data-testid="data-grid-canvas"]');
  const ctx = canvas.getContext('2d');
  const ratio = canvas.width / canvas.getBoundingClientRect().width;
  const headers = [...grid.querySelectorAll('[role="columnheader"]')].map(h => h.textContent.trim());
  const line = ctx.getImageData(0, Math.round(3 * ratio), canvas.width, 1).data;
  const colour = x => line.slice(4 * x, 4 * x + 3).join(',');
  const background = colour(Math.round(canvas.width / 2) - 1);
  const edges = [0];
  for (let x = 1; x < canvas.width; x++) if (colour(x) !== background && colour(x - 1) === background) edges.push(x);
  const column = headers.indexOf(name) + 1;
  const left = edges[column], right = edges[column + 1] ?? canvas.width;
  const rows = [];
  for (let y = 36 * ratio + 17 * ratio, r = 0; y < canvas.height && r < 15; y += 35 * ratio, r++) {
    const cells = ctx.getImageData(left, Math.round(y) - 4, right - left, 8).data;
    let last = -1;
    for (let i = 0; i < cells.length; i += 4) if (cells[i] < 140 && cells[i + 1] < 140) last = Math.max(last, (i / 4) % (right - left));
    rows.push(last);
  }
  return {headers, left: left / ratio, right: right / ratio, visible: canvas.width / ratio,
          textRight: rows.filter(x => x > 0).map(x => x / ratio)};
}"""


@pytest.mark.timeout(180)
@pytest.mark.parametrize("width", [1440, 1024])
def test_the_inbox_title_is_in_view_with_most_of_its_text(page, site, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(site["url"])
    on_the_inbox(page, site)
    title = page.evaluate(COLUMN_JS, "Title")
    assert title["headers"][:2] == ["Incident", "Title"], title
    assert 0 < title["left"] < title["right"] <= title["visible"] + 1, title  # in view, not off to the side
    assert title["right"] - title["left"] >= 300, title  # ~45 characters, not ~15
    assert title["textRight"] and max(title["textRight"]) > 200, title  # long titles use the room
    for name in ("Status", "Severity", "Category"):  # what a reviewer triages by is in view too
        column = page.evaluate(COLUMN_JS, name)
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
