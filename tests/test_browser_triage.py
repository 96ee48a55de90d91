"""Browser journeys of the inbox's triage: the severity, service and order a reviewer chose survive a
visit to an incident (its "Back to the inbox" button and the browser's Back), and `j` / `k` pressed
faster than the app reruns all count, the chosen row highlighted in the table.

One `streamlit run app.py` for the module (tests/support.py's streamlit_app), headless Chromium, on
the small fixture's incidents paused at approval.
"""
from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.support import CHROMIUM, browser_page, browser_site, choose, settle

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with browser_site(tmp_path_factory.mktemp("triage-ui")) as site:
        yield site


@pytest.fixture
def page(site, request):
    with browser_page(site["browser"], f"triage-{request.node.name}") as page:
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
    choose(page, "Sort", "most severe first")
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
