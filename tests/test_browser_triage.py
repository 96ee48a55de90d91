"""Browser journeys of the inbox's triage: the severity, service and order a reviewer chose survive a
visit to an incident (its "Back to the inbox" button and the browser's Back), and `j` / `k` pressed
faster than the app reruns all count, the chosen row highlighted in the table; on the incident page, a
related incident opens from its row, and "Context in the log" moves the page to the lines it built.

One `streamlit run app.py` for the module (tests/support.py's streamlit_app), headless Chromium, on
the small fixture's incidents paused at approval.
"""
from __future__ import annotations

import json
import os
import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.support import (CHROMIUM, FIXTURES, browser_page, browser_site, choose, open_incident_options, select_first_row,
                           settle, wait_for)

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The small fixture's problems in three regions (12 incidents paused at approval): more rows than
    five key presses move over."""
    work = tmp_path_factory.mktemp("triage-ui")
    log = work / "regions.jsonl"
    with log.open("w") as out:
        for region in ("eu", "us", "ap"):
            for line in (FIXTURES / "small.jsonl").read_text().splitlines():
                event = json.loads(line)
                # each region its own machines: one host's programs failing together are one failure
                # (CONTRACT §2, one machine one failure), three regions' copies are three
                out.write(json.dumps({**event, "service": f"{event['service']}-{region}",
                                      "host": f"{event['host']}-{region}"}) + "\n")
    with browser_site(work, log) as site:
        assert len(site["rows"]) >= 7, site["rows"]
        from pipeline.review.service import ReviewService
        from pipeline.services import related_of

        related_of(ReviewService(site["engine"])).catch_up(batches=None)  # what the poller does after a poll
        yield site


@pytest.fixture
def page(site, request):
    with browser_page(site["browser"], f"triage-{request.node.name}", request=request) as page:
        yield page


def inbox_drawn(page) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name="Inbox")).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stDataFrame")).to_be_visible(timeout=30_000)
    settle(page)


def showing(page) -> str:
    """The caption under the table: "Showing 1–2" (narrowed) or "Showing 1–5 of 5 awaiting approval"."""
    return page.get_by_text(re.compile(r"^Showing \d")).first.inner_text().split(" · ")[0]


def view(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


@pytest.mark.timeout(300)
def test_the_triage_survives_a_visit_to_an_incident_and_back(page, site):
    """Severity, service and order chosen in "Filter, sort and columns" are still the view after
    "Back to the inbox" and after the browser's Back: the same rows, the same URL, the same widgets."""
    from playwright.sync_api import expect

    rows = site["rows"]
    service = max({r["service"] for r in rows}, key=lambda s: sum(r["service"] == s for r in rows))
    severity = next(r["severity"] for r in rows if r["service"] == service)
    page.goto(site["url"])
    inbox_drawn(page)
    everything = showing(page)
    page.get_by_text("Filter, sort and columns").click()
    settle(page)
    choose(page, "Service", service)
    page.get_by_label("Severity", exact=True).first.click()
    page.get_by_role("option").filter(has_text=severity).first.click()
    settle(page)
    page.keyboard.press("Escape")
    # chosen at once after the severity: its rerun may carry the URL from before the severity's run
    # reached the browser, which must not undo the choice (app_pages/inbox.py, _view_from_url)
    choose(page, "Sort", "most severe first")
    expect(page).to_have_url(re.compile(r"[?&]sort=severity"))  # the URL follows the run that drew it
    narrowed, chosen = showing(page), view(page)
    assert narrowed != everything, (narrowed, everything)
    assert chosen["service"] == service and chosen["sev"] == severity and chosen["sort"] == "severity", chosen

    for leave in ("button", "browser"):
        page.locator(".st-key-inbox_open_button button").click()
        expect(page.get_by_role("button", name=re.compile("Back to the inbox"))).to_be_visible(timeout=60_000)
        settle(page)
        if leave == "button":
            page.get_by_role("button", name=re.compile("Back to the inbox")).click()
        else:
            page.go_back()
        inbox_drawn(page)
        expect(page.get_by_text(re.compile(r"^Showing \d")).first).to_contain_text(narrowed, timeout=30_000)
        assert view(page) == chosen, (leave, view(page), chosen)
        assert page.get_by_label("Service", exact=True).first.input_value() == service, leave
        assert page.get_by_label("Sort", exact=True).first.input_value() == "most severe first", leave


def tinted_rows(page, rows: int) -> list[int]:
    """The table's rows drawn blue (the chosen row's tint), by their pixels: the grid is a canvas.
    Each row is 35 px under a 35 px header; a row's blue is measured in its Title cell's empty end."""
    import io

    from PIL import Image

    grid = page.get_by_test_id("stDataFrame").bounding_box()
    shot = Image.open(io.BytesIO(page.screenshot(clip=grid))).convert("RGB")
    scale = shot.width / grid["width"]
    out = []
    for i in range(rows):
        y = int((35 + 35 * i + 4) * scale)
        pixels = [shot.getpixel((int(x * scale), y)) for x in range(20, int(grid["width"]) - 20, 7)]
        r, g, b = (sum(p[k] for p in pixels) / len(pixels) for k in range(3))
        if b - r > 25:
            out.append(i)
    return out



@pytest.mark.timeout(300)
def test_five_j_presses_faster_than_reruns_all_count_and_the_chosen_row_is_highlighted(page, site):
    from playwright.sync_api import expect

    page.goto(site["url"])
    inbox_drawn(page)
    ids = open_incident_options(page)
    assert len(ids) >= 7, ids
    box = page.get_by_label("Open incident", exact=True).first
    assert box.input_value() == ids[0]
    page.locator("h1").first.click()  # the focus on the page, not in a text box
    for _ in range(5):
        page.keyboard.press("j")
        page.wait_for_timeout(150)
    expect(box).to_have_value(ids[5], timeout=30_000)
    settle(page)
    expect(box).to_have_value(ids[5])  # and no late press moves it on
    # the table shows it: the chosen row is its selected row
    assert tinted_rows(page, 7) == [5]
    page.locator("h1").first.click()
    page.keyboard.press("k")
    page.keyboard.press("k")
    expect(box).to_have_value(ids[3], timeout=30_000)
    settle(page)
    assert tinted_rows(page, 7) == [3]
    page.locator("h1").first.click()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=ids[3])).to_be_visible(timeout=60_000)


def open_incident_page(page, site, incident_id: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{site['url']}/incident?incident={incident_id}")
    expect(page.get_by_role("heading", name=incident_id)).to_be_visible(timeout=60_000)
    settle(page)


@pytest.mark.timeout(300)
def test_a_related_incident_opens_from_its_row_in_nearest_by_evidence(page, site):
    """The same error in another region's service is the nearest by evidence; its row opens it."""
    from playwright.sync_api import expect

    mine = next(r for r in site["rows"] if r["service"] == "checkout-api-eu")
    twins = {r["incident_id"] for r in site["rows"] if r["service"].startswith("checkout-api-")} - {mine["incident_id"]}
    open_incident_page(page, site, mine["incident_id"])
    page.get_by_text("Related incidents").click()
    near = page.locator(f".st-key-incident_related_near_{mine['incident_id']}").get_by_test_id("stDataFrame")
    expect(near).to_be_visible(timeout=30_000)
    select_first_row(page, near, f"() => {json.dumps(sorted(twins))}.some(i => location.search.includes(i))")
    opened = next(i for i in twins if i in page.url)
    expect(page.get_by_role("heading", name=opened)).to_be_visible(timeout=60_000)


@pytest.mark.timeout(300)
def test_context_in_the_log_moves_the_page_to_the_lines_around_the_quoted_one(page, site):
    from playwright.sync_api import expect

    incident = next(r for r in site["rows"] if r["service"] == "checkout-api-us")["incident_id"]
    page.set_viewport_size({"width": 1440, "height": 900})
    open_incident_page(page, site, incident)
    page.get_by_role("button", name=re.compile("Context in the log")).first.click()
    block = page.locator(".st-key-incident_context_block")
    expect(block).to_be_attached(timeout=60_000)
    expect(block.get_by_text("Context of the quoted line")).to_be_visible(timeout=30_000)
    page.wait_for_timeout(1500)  # a scroll that is coming has come
    top = block.bounding_box()["y"]
    assert -5 <= top < 900 / 2, top  # in view, at the top (a fraction of a pixel above): not a screen below



@pytest.mark.timeout(300)
def test_a_keyed_reject_that_empties_the_view_stays_confirmed_past_the_next_refresh(page, site):
    """`r`, a reason and Confirm on a view narrowed to one incident: the incident leaves the view, and the
    page says the rejection was recorded, still after the inbox's next timed refresh (which came a moment
    after the decision's run in a new user's walkthrough, and took the confirmation with it)."""
    from playwright.sync_api import expect

    from app_pages.inbox import ACTION_MESSAGE_SECONDS, REFRESH_SECONDS

    assert ACTION_MESSAGE_SECONDS >= REFRESH_SECONDS + 8  # the slack this test's wait relies on
    target = next(r for r in site["rows"] if not r["service"].startswith("checkout-api-"))["incident_id"]
    records = site["engine"].records
    statuses = lambda: {r["incident_id"]: r["status"] for r in records.incidents()}  # noqa: E731
    before = statuses()
    page.context.add_cookies([{"name": "iiq_reviewer", "value": "ann", "url": site["url"]}])  # the sidebar's name
    page.goto(f"{site['url']}/?show=awaiting&q={target}")
    inbox_drawn(page)
    # the view is the link's, narrowed to the target, when the key is pressed (a run once drew the whole
    # inbox here, its search empty, and `r` asked about its first row: that is said here, not as a
    # missing confirmation a minute later)
    expect(page.get_by_role("textbox", name="Search", exact=True)).to_have_value(target, timeout=30_000)
    assert showing(page) == "Showing 1–1 of 1 that match", showing(page)
    page.locator("h1").first.click()  # the focus on the page, not in a text box
    page.keyboard.press("r")
    reason = page.get_by_label("Reason for the rejection")
    expect(reason).to_be_visible(timeout=30_000)
    expect(page.get_by_text(f"Reject {target} \u201c")).to_be_visible(timeout=1_000)  # the key asks about the target
    reason.fill("a known flap, handled upstream")
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_role("button", name="Confirm reject").click()
    # the decision is the target's and nobody else's (said before what the page shows of it)
    decided = wait_for(lambda: {i: s for i, s in statuses().items() if s != before[i]}, timeout=60, step=0.25)
    assert list(decided) == [target], decided
    recorded = page.get_by_text(f"Rejection of {target} recorded")
    expect(recorded).to_be_visible(timeout=60_000)
    expect(page.get_by_text("No incident matches this search.")).to_be_visible(timeout=30_000)
    page.wait_for_timeout((REFRESH_SECONDS + 1.5) * 1000)  # past the fragment's next refresh
    expect(recorded).to_be_visible(timeout=1_000)
