"""Browser journeys of the inbox: "Back to the inbox" lands on the inbox's rows, from an
incident opened by a row and from one opened by a URL; the table reads without scrolling sideways
at 1440 px with the sidebar open (every default column whole in view, the Title with ~45
characters), and at 1024 px too, where the sidebar starts closed (a reviewer's choice kept).

One `streamlit run app.py` for the module (tests/support.py's streamlit_app), headless Chromium, on
real-length rows: long service names, incidents opened five hours ago of which the critical and
high ones are escalated, one with a person on it and one half approved under the two-person rule.
"""
from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.unattended import escalation
from pipeline.review.service import ReviewService
from tests.support import CHROMIUM, FIXTURES, grid_column, browser_page, browser_site, open_incident_options, select_first_row, settle

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


LONG_SERVICES = {"checkout-api": "checkout-payments-reconciliation-api", "inventory-service": "inventory-reservation-service",
                 "loyalty-service": "loyalty-points-ledger-service", "promo-engine": "promotions-pricing-engine"}
# what a reviewer triages by, first
TRIAGE = ["Incident", "Title", "Status", "Severity", "Category", "Conf."]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The app on a data dir with the small fixture's incidents (long service names) paused at
    approval, opened five hours ago: the critical and high ones escalated, the first one assigned,
    a critical one half approved; and one browser."""
    work = tmp_path_factory.mktemp("inbox-ui")
    log = work / "long-names.jsonl"
    with log.open("w") as out:
        for line in (FIXTURES / "small.jsonl").read_text().splitlines():
            event = json.loads(line)
            out.write(json.dumps({**event, "service": LONG_SERVICES.get(event["service"], event["service"])}) + "\n")
    with browser_site(work, log, opened_at=datetime.now(timezone.utc) - timedelta(hours=5, minutes=7)) as site:
        engine = site["engine"]
        assert escalation.run(engine).escalated, "no incident past its SLA: the rows would not be real-length"
        engine.settings = engine.settings.model_copy(update={"two_person": ("critical",)})
        review = ReviewService(engine)
        first, critical = site["rows"][0]["incident_id"], next(r for r in site["rows"] if r["severity"] == "critical")
        review.assign(first, to="ann.longname@example.com", reviewer="ann.longname@example.com")
        review.approve(critical["incident_id"], reviewer="bob.reviewer@example.com")
        yield site


@pytest.fixture
def page(site, request):
    with browser_page(site["browser"], f"inbox-{request.node.name}", request=request) as page:
        yield page


def on_the_inbox(page, site) -> None:
    """The inbox is drawn: its title, its table and the rows' ids to open."""
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name="Inbox")).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stDataFrame")).to_be_visible(timeout=30_000)
    settle(page)
    assert "/incident" not in page.url and "incident=" not in page.url, page.url
    options = open_incident_options(page)
    assert {r["incident_id"] for r in site["rows"]} <= set(options), options


def back(page) -> None:
    page.get_by_role("button", name=re.compile("Back to the inbox")).click()
    settle(page)


@pytest.mark.timeout(180)
def test_back_from_an_incident_opened_by_a_row_lands_on_the_inbox(page, site):
    from playwright.sync_api import expect

    page.goto(site["url"])
    on_the_inbox(page, site)
    select_first_row(page, page.get_by_test_id("stDataFrame").first, "() => location.search.includes('incident=')")
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




def whole_in_view(page, name: str) -> dict:
    """The grid's column `name`, asserted drawn and ending inside the grid's visible width."""
    column = grid_column(page, name)
    assert column["drawn"], (name, column)  # the grid draws only what is in view: not off to the side
    assert 0 < column["left"] < column["right"] <= column["visible"] + 1, (name, column)
    # its own separator ends it, or it is the last column and the grid does not scroll sideways
    assert column["closed"] or column["scroll"]["width"] <= column["scroll"]["visible"] + 1, (name, column)
    return column


def sidebar_width(page) -> float:
    return page.get_by_test_id("stSidebar").bounding_box()["width"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("width, height", [(1440, 900), (1024, 768)])
def test_the_inbox_title_is_in_view_with_most_of_its_text(page, site, width, height):
    page.set_viewport_size({"width": width, "height": height})
    page.goto(site["url"])
    on_the_inbox(page, site)
    title = whole_in_view(page, "Title")
    drawn = [x for x in title["textRight"] if x > 0]  # rows with text
    assert title["headers"][:2] == ["Incident", "Title"], title
    assert title["right"] - title["left"] >= 300, title  # ~45 characters, not ~15
    assert drawn and max(drawn) > 200, title  # long titles use the room
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def every_default_column_is_whole(page) -> None:
    """No sideways scrolling of the grid: the default columns all end inside its visible width,
    and the short ones' texts (escalated rows' SLA, long categories) are not cut by their edge."""
    grid = grid_column(page, "Incident")
    assert grid["scroll"]["width"] <= grid["scroll"]["visible"] + 1, grid  # nothing off to the side
    assert grid["headers"] == [*TRIAGE, "SLA"], grid  # every default column, triage first
    for name in grid["headers"]:
        column = whole_in_view(page, name)
        texts = [x for x in column["textRight"] if x >= 0]
        assert texts, (name, column)  # every row has a value in it (escalated rows too)
        if name not in ("Title", "Conf."):  # short texts are whole: their last pixel short of the edge (glide clips there)
            assert max(texts) < column["right"] - column["left"] - 2, (name, column)
    title = grid_column(page, "Title")
    assert title["right"] - title["left"] >= 300, title


@pytest.mark.timeout(180)
def test_at_1440_px_with_the_sidebar_open_every_default_column_is_whole_in_view(page, site):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(site["url"])
    on_the_inbox(page, site)
    assert sidebar_width(page) > 200
    every_default_column_is_whole(page)


@pytest.mark.timeout(180)
def test_at_1024_px_every_default_column_is_whole_in_view_and_the_sidebar_is_one_click_away(page, site):
    """At 1024 px the open sidebar left the grid the id and a cut Title: a first visit starts with
    it closed (its arrow opens it), and the reviewer's own choice is kept through a reload."""
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(site["url"])
    on_the_inbox(page, site)
    page.wait_for_function("document.querySelector('[data-testid=stSidebar]').getBoundingClientRect().right <= 0")
    every_default_column_is_whole(page)
    page.get_by_test_id("stExpandSidebarButton").click()  # the reviewer opens it: theirs to keep
    page.wait_for_function("document.querySelector('[data-testid=stSidebar]').getBoundingClientRect().width > 200")
    page.reload()
    on_the_inbox(page, site)
    page.wait_for_timeout(1000)  # the narrow-window script has run by now
    assert sidebar_width(page) > 200


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
