"""Issue 39, item 4: log text and people's text never become markup in the reviewer's browser, and
no page makes the browser ask anything of a host other than the app's.

Every field a page shows holds the same hostile text (the log's host, service, message and
exception; a comment, a rejection reason, a change request and a reviewer's name). Each page and
each incident tab is opened in headless Chromium with every request routed: one to a host other
than loopback is refused and counted. On each view: no link or image pointing at the hostile
text's host, no KaTeX, no element whose whole text is one of the hostile text's marked words (what
bold, emphasis, a colour, a link or a tag would make of them), no emoji from a `:shortcode:`.
"""
from __future__ import annotations

import json
import os
import re
from urllib.parse import urlsplit

import pytest

from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from tests.support import CHROMIUM, browser_page, browser_site, settle

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

MARKS = ("BOLDMARK", "EMMARK", "LINKMARK", "IMGMARK", "REDMARK", "TAGMARK", "CODEMARK")
HOSTILE = ("**BOLDMARK** _EMMARK_ [LINKMARK](https://evil.example/l) ![IMGMARK](https://evil.example/i.png) "
           ":red[REDMARK] $KATEXMARK^2$ <b>TAGMARK</b> <img src=https://evil.example/h.png> `CODEMARK` "
           "https://evil.example/auto www.evil.example mail@evil.example :smile: :material/home:")
NAME = "**BOLDMARK** [LINKMARK](https://evil.example/n) :red[REDMARK] $x$ www.evil.example"  # ≤ 80 characters
LOOPBACK = ("127.0.0.1", "localhost")
NOT_LOOPBACK = re.compile(r"^(?![a-z][a-z0-9+.-]*://(127\.0\.0\.1|localhost)(:\d+)?([/?#]|$))", re.IGNORECASE)

# what the current view shows that markup made of the hostile text
RENDERED_JS = """(marks) => {
  const out = [];
  for (const a of document.querySelectorAll('a[href]'))
    if (a.href.includes('evil.example')) out.push('link ' + a.href);
  for (const i of document.querySelectorAll('img[src], source[srcset]'))
    if ((i.src || i.srcset || '').includes('evil.example')) out.push('image ' + (i.src || i.srcset));
  for (const k of document.querySelectorAll('.katex, .katex-display, math'))
    out.push('katex ' + k.textContent.slice(0, 60));
  for (const e of document.body.querySelectorAll('*')) {
    if (['SCRIPT', 'STYLE'].includes(e.tagName)) continue;
    const t = e.textContent.trim();
    if (marks.includes(t)) out.push(e.tagName.toLowerCase() + ' around ' + t);
  }
  if (document.body.innerText.includes('\\u{1F604}')) out.push('emoji :smile:');
  return out;
}"""


def _events() -> list[dict]:
    """The small fixture's HikariCP incident with every text field hostile, and one incident of a
    hostile service (a quarter hour later: the two share their hostile words, which would otherwise
    join them as one outage)."""
    base = {"level": "ERROR", "exception": f"java.sql.SQLTransientConnectionException {HOSTILE}"}
    lines = [{**base, "_time": f"2026-11-28T11:00:0{i}Z", "service": "payments-api", "host": HOSTILE,
              "message": f"HikariPool-1 - Connection is not available, request timed out after 3000{i}ms. {HOSTILE}"}
             for i in range(3)]
    lines += [{**base, "_time": f"2026-11-28T11:15:0{i}Z", "service": HOSTILE, "host": HOSTILE,
               "message": f"AttributeError: 'NoneType' object has no attribute 'quantity' {HOSTILE}"} for i in range(3)]
    return lines


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The app on a data dir whose incidents and people's words are all hostile text."""
    work = tmp_path_factory.mktemp("hostile-ui")
    log = work / "hostile.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in _events()) + f"{{\"broken\": {HOSTILE}\n")
    with browser_site(work) as site:
        engine = site["engine"]
        ingest_path(engine, log)
        review = ReviewService(engine)
        rows = {r["incident_id"]: r for r in engine.records.incidents()}
        hostile = sorted(i for i, r in rows.items() if HOSTILE in str(review.incident(i).get("evidence")))
        assert len(hostile) >= 2, rows
        first, second = hostile[0], hostile[1]
        review.comment(first, text=HOSTILE, reviewer=NAME)
        review.assign(first, to=NAME, reviewer=NAME)
        review.revise(first, reviewer=NAME, feedback=HOSTILE)
        review.reject(second, reviewer=NAME, reason=HOSTILE)
        site["hostile"] = hostile
        yield site


def _views(site) -> list[tuple[str, tuple[str, ...]]]:
    """(URL path, its incident tabs to open in turn) of every page and every tab of the hostile
    incidents: a page is loaded once, its tabs clicked one after another as a reviewer does."""
    views: list[tuple[str, tuple[str, ...]]] = [("/?show=all", ()), ("/operations", ()), ("/knowledge", ()),
                                                ("/backtests", ())]
    for incident in site["hostile"]:
        views.append((f"/incident?incident={incident}",
                      ("Evidence", "History & time travel", "State", "Graph", "Audit trail")))
    return views


@pytest.mark.timeout(600)
def test_no_page_renders_log_or_people_text_as_markup_or_fetches_from_it(site):
    from playwright.sync_api import expect

    outside: list[str] = []

    def only_loopback(route):
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    found: dict[str, list[str]] = {}
    with browser_page(site["browser"], "hostile-text") as page:
        # only requests to another host are routed (a loopback one goes on without a round trip to
        # this process); the handler checks the host again all the same
        page.route(NOT_LOOPBACK, only_loopback)
        page.goto(site["url"])
        settle(page)
        page.get_by_label("Your name", exact=True).fill(NAME)
        page.get_by_label("Your name", exact=True).press("Enter")
        settle(page)
        for path, tabs in _views(site):
            page.goto(site["url"] + path)
            settle(page)
            if "incident=" in path:
                expect(page.get_by_text("Evidence it rests on").first).to_be_visible()
            for tab in (None, *tabs):
                if tab:
                    page.get_by_role("tab", name=tab).click()
                    settle(page)
                rendered = page.evaluate(RENDERED_JS, list(MARKS))
                if rendered:
                    found[f"{path} {tab or ''}"] = rendered
        shown = page.content()
    assert found == {}
    assert outside == []
    assert "BOLDMARK" in shown  # the hostile text is on the last view, as text
