"""Browser journeys of the review controls, one app process for the module: the findings
highlighted in the log line, the fix proposal with its hash beside Approve, a refused Reject that
keeps its tab, a page that follows a decision made elsewhere, the timeline, Back, the toolbar in
viewer mode, a layout that holds at 1024 and 1440 px (screenshots with INCIDENTIQ_SCREENSHOTS=1);
then the journeys that decide: request changes (what the re-analysis changed) then approve, edit &
approve, and replay (the newer-evidence warning, "replay with current evidence") then a fork.

Started by tests/support.py's streamlit_app: `streamlit run app.py` on a loopback port, headless Chromium.
"""
from __future__ import annotations

import os
import re

import pytest

from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from tests.support import CHROMIUM, ROOT, alert, browser_page, browser_site, choose, settle

SCREENSHOTS = ROOT / "docs" / "screenshots"

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The app on a data dir with the small fixture's incidents paused at approval, its engine
    (for a second reviewer acting in another process' place) and one browser."""
    with browser_site(tmp_path_factory.mktemp("review-ui")) as site:
        site["ids"] = {r["service"]: r["incident_id"] for r in site["rows"]}
        yield site


@pytest.fixture
def page(site, request):
    with browser_page(site["browser"], f"review-{request.node.name}", request=request) as page:
        yield page


def shoot(page, name: str) -> None:
    if os.environ.get("INCIDENTIQ_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def open_incident(page, site, service: str, *, name: str | None = None) -> str:
    from playwright.sync_api import expect

    incident = site["ids"][service]
    page.goto(f"{site['url']}/incident?incident={incident}")
    expect(page.get_by_role("heading", name=incident)).to_be_visible(timeout=60_000)
    settle(page)
    if name:
        page.get_by_label("Your name", exact=True).fill(name)
        page.get_by_label("Your name", exact=True).press("Enter")
        settle(page)
    return incident


def button(page, text: str):
    return page.locator('button[data-testid^="stBaseButton"]').filter(has_text=re.compile(rf"^\s*{re.escape(text)}\s*$"))


def segment(page, text: str):
    """One choice of the decision panel's segmented control."""
    return page.get_by_test_id("stButtonGroup").locator("button").filter(
        has_text=re.compile(rf"^\s*{re.escape(text)}\s*$"))


@pytest.mark.timeout(120)
def test_the_finding_is_highlighted_in_the_log_line_and_the_proposal_hash_is_beside_approve(page, site):
    from playwright.sync_api import expect

    open_incident(page, site, "checkout-api")
    expect(page.locator("mark", has_text="HikariPool-1").first).to_be_visible()
    expect(page.get_by_text("Evidence it rests on")).to_be_visible()
    proposal = ReviewService(site["engine"]).incident(site["ids"]["checkout-api"])["proposal"]
    panel = page.get_by_test_id("stColumn").filter(has=button(page, "Approve")).last
    expect(panel.get_by_text(proposal["hash"][:12])).to_be_visible()
    expect(panel.get_by_text("maximum-pool-size: 30").first).to_be_visible()  # the diff, beside the button
    assert page.locator("text=<NUM>").count() == 0
    shoot(page, "incident-review")


@pytest.mark.timeout(120)
def test_a_refused_reject_keeps_the_reviewer_on_the_reject_tab(page, site):
    from playwright.sync_api import expect

    open_incident(page, site, "promo-engine", name="alice")
    reject = segment(page, "Reject")
    reject.click()
    settle(page)
    page.get_by_test_id("stForm").get_by_role("button", name="Reject", exact=True).click()
    settle(page)
    # still on Reject (its reason field there), the error beside it, not back on Approve
    expect(reject).to_have_attribute("aria-checked", "true")
    expect(alert(page, "a reason for the rejection is required")).to_be_visible()
    expect(page.get_by_label("Reason", exact=True)).to_be_visible()
    assert button(page, "Approve").count() == 0
    assert site["engine"].records.incident(site["ids"]["promo-engine"])["status"] == "awaiting_approval"


@pytest.mark.timeout(120)
def test_an_open_page_follows_a_decision_made_by_someone_else(page, site):
    from playwright.sync_api import expect

    incident = open_incident(page, site, "loyalty-service")
    expect(button(page, "Approve")).to_be_visible()
    ReviewService(site["engine"]).reject(incident, reviewer="bob", reason="a duplicate of another incident")
    # no reload: the page's live check notices the change and redraws
    expect(page.get_by_text("Rejected by bob")).to_be_visible(timeout=20_000)
    expect(page.get_by_text("Reason: a duplicate of another incident")).to_be_visible()


@pytest.mark.timeout(120)
def test_the_timeline_opens_on_order_spacing_and_a_click_picks_a_point_two_compare(page, site):
    from playwright.sync_api import expect

    open_incident(page, site, "checkout-api")
    page.get_by_role("tab", name="History & time travel").click()
    settle(page)
    expect(page.get_by_label("Checkpoint", exact=True).first).to_be_visible()
    chart = page.locator(".vega-embed").filter(has_text="checkpoint order")
    expect(chart).to_be_visible()
    expect(page.get_by_text("live head").first).to_be_attached()
    expect(page.get_by_text("Re-run from here…").or_(page.get_by_text("Replay from here…")).first).to_be_visible()
    shoot(page, "history-timeline")
    # a click on a point picks that checkpoint (the picker and its changes follow); a shift-click
    # on a second compares the two. The points are svg paths whose aria label holds the caption
    point = chart.locator('g.mark-symbol path[aria-label*="· root cause analysis ·"]').first
    rca = re.search(r"#(\d+) · ", point.get_attribute("aria-label")).group(1)  # its number, as the page names it
    point.click(force=True)  # force: the ring or a marker may lie on top; they pick the same checkpoint
    expect(page.get_by_text(f"Changes at #{rca} root cause analysis against the checkpoint before it")
           ).to_be_visible(timeout=30_000)
    settle(page)
    other = chart.locator('g.mark-symbol path[aria-label*="· intake ·"]').first
    intake = re.search(r"#(\d+) · ", other.get_attribute("aria-label")).group(1)
    other.click(force=True, modifiers=["Shift"])
    expect(page.get_by_text(f"From #{intake} intake to #{rca} root cause analysis")).to_be_visible(timeout=30_000)


@pytest.mark.timeout(120)
def test_the_timelines_javascript_is_loaded_while_the_incident_is_read(page, site):
    """Streamlit loads a chart's JavaScript (vega-embed, ~0.8 MB) only when a chart is first drawn: the
    incident page loads it once the browser is idle, so the History tab's click does not wait for it."""
    open_incident(page, site, "checkout-api")
    page.wait_for_function("() => performance.getEntriesByType('resource').some(e => /\\/embed\\.[^/]+\\.js$/.test(e.name))",
                           timeout=30_000)
    assert page.get_by_role("tab", name="History & time travel").get_attribute("aria-selected") == "false"
    assert page.locator(".vega-embed").count() == 0  # loaded, not drawn: no chart on the page yet


@pytest.mark.timeout(120)
def test_back_leaves_no_incident_in_the_url(page, site):
    open_incident(page, site, "checkout-api")
    page.get_by_role("button", name=re.compile("Back to the inbox")).click()
    settle(page)
    page.wait_for_function("() => !location.search.includes('incident=')", timeout=15_000)
    assert "incident=" not in page.url


@pytest.mark.timeout(180)
@pytest.mark.parametrize("width", [1024, 1440])
def test_the_incident_page_fits_from_1024_px(page, site, width):
    page.set_viewport_size({"width": width, "height": 1100})
    open_incident(page, site, "inventory-service")
    strip = page.get_by_role("tablist").bounding_box()
    for tab in ("Evidence", "History & time travel", "State", "Graph", "Audit trail"):
        box = page.get_by_role("tab", name=tab, exact=True).bounding_box()
        assert box and box["x"] >= strip["x"] and box["x"] + box["width"] <= strip["x"] + strip["width"] + 1, tab
    panel = page.get_by_test_id("stButtonGroup").bounding_box()
    for choice in ("Approve", "Reject", "Changes", "Edit"):  # each decision fully inside the panel
        box = segment(page, choice).bounding_box()
        assert box["x"] >= panel["x"] and box["x"] + box["width"] <= panel["x"] + panel["width"] + 1, choice
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1  # nothing cut off to the side
    shoot(page, f"incident-{width}")


@pytest.mark.timeout(180)
def test_a_state_edit_saved_in_its_tab_redraws_the_analysis_and_the_panel_above(page, site, tmp_path):
    """The tabs are a fragment (a tab click reruns and redraws only them); an edit saved in the State
    tab changes the analysis and the decision panel above them, so the page reruns whole: both say who
    edited what in the same redraw as the tab's "Saved", not seconds later when the live check notices."""
    from playwright.sync_api import expect

    engine = site["engine"]
    log = tmp_path / "ledger.jsonl"  # an incident of its own: the other tests' incidents stay unedited
    log.write_text("".join(
        f'{{"_time": "2026-11-28T11:00:0{i}Z", "service": "ledger-api", "host": "lg-1", "level": "ERROR", '
        f'"exception": "java.sql.SQLTransientConnectionException", "message": "HikariPool-1 - Connection is not '
        f'available, request timed out after 3000{i}ms."}}\n' for i in range(1, 4)))
    ingest_path(engine, log)
    site["ids"]["ledger-api"] = next(r["incident_id"] for r in engine.records.incidents() if r["service"] == "ledger-api")
    incident = open_incident(page, site, "ledger-api", name="erin")
    page.get_by_role("tab", name="State").click()
    settle(page)
    page.get_by_label("Confidence (0 to 1)").first.fill("0.41")
    button(page, "Save edits").click()
    expect(page.get_by_text(re.compile(r"^Saved as a new checkpoint .*The edit of confidence:"))).to_be_visible(
        timeout=60_000)
    # no waiting here: what the run that said "Saved" drew, before the live check's next look
    assert page.get_by_text("Edited by a person: confidence (erin)").count() == 1
    assert page.get_by_text(re.compile(r"erin edited confidence")).count() >= 1
    assert engine.records.incident(incident)["confidence"] == 0.41


# The journeys below decide their incidents, so they come after those that only look at them.

@pytest.mark.timeout(180)
def test_request_changes_shows_what_the_re_analysis_changed_then_approve(page, site):
    from playwright.sync_api import expect

    incident = open_incident(page, site, "promo-engine", name="alice")
    segment(page, "Changes").click()
    settle(page)
    page.get_by_label("Feedback", exact=True).fill("the promo rule table is missing: check the deploy")
    button(page, "Request changes (2 left)").click()
    expect(alert(page, "Request for changes recorded for alice")).to_be_visible(timeout=60_000)
    settle(page)
    assert site["engine"].records.incident(incident)["revisions"] == 1
    segment(page, "Changes").click()  # the new analysis opens on Approve
    settle(page)
    # every request, and what the re-analysis changed as before / after columns
    expect(page.get_by_text("1. the promo rule table is missing: check the deploy")).to_be_visible()
    changed = page.get_by_text(re.compile(r"Revision 1: what the re-analysis changed \(\d+ fields\)"))
    expect(changed).to_be_visible()
    expect(page.get_by_test_id("stExpander").filter(has=changed).get_by_test_id("stDataFrame")).to_be_visible()
    expect(button(page, "Request changes (1 left)")).to_be_visible()
    segment(page, "Approve").click()
    settle(page)
    button(page, "Approve").click()
    expect(alert(page, "Approval recorded for alice")).to_be_visible(timeout=60_000)
    assert site["engine"].records.incident(incident)["status"] in ("approved", "fix_proposed")


@pytest.mark.timeout(180)
def test_edit_and_approve_of_the_category_re_derives_the_recommendation_and_says_who_edited(page, site):
    from playwright.sync_api import expect

    incident = open_incident(page, site, "inventory-service", name="dana")
    before = site["engine"].records.incident(incident)["summary"]["recommendation"]["action"]
    segment(page, "Edit").click()
    settle(page)
    choose(page, "Category", "config missing")
    button(page, "Save edits and approve").click()
    expect(alert(page, re.compile("the recommendation and the fix proposal are done again from it, before the "
                                       "approval"))).to_be_visible(
        timeout=60_000)
    settle(page)
    row = site["engine"].records.incident(incident)
    assert row["category"] == "config_missing" and row["summary"]["recommendation"]["action"] != before
    # the decision panel's provenance and the mark on the RCA
    expect(page.get_by_text(re.compile(r"dana edited and approved category at"))).to_be_visible()
    expect(page.get_by_text("human-edited").first).to_be_visible()


def _option(review: ReviewService, incident: str, checkpoint_id: str) -> str:
    """What the History picker's option of a checkpoint starts with: its number as the chart numbers it
    (the options name no id)."""
    from workbench.timeline import checkpoint_numbers

    return f"#{checkpoint_numbers(review.tree(incident))[checkpoint_id]} · "


@pytest.mark.timeout(240)
def test_replay_warns_of_newer_evidence_and_uses_it_then_a_fork_re_runs_what_its_edit_changes(page, site,
                                                                                                tmp_path):
    from playwright.sync_api import expect

    engine, incident = site["engine"], site["ids"]["checkout-api"]
    review = ReviewService(engine)
    first_rca = next(h for h in reversed(review.history(incident, limit=100)) if h["writes_by"] == ["rca"])
    more = tmp_path / "more.jsonl"
    more.write_text('{"_time": "2026-11-28T10:00:40Z", "service": "checkout-api", "host": "co-3", "level": "ERROR",'
                    ' "exception": "java.sql.SQLTransientConnectionException", "message": "HikariPool-1 - Connection'
                    ' is not available, request timed out after 30001ms."}\n')
    ingest_path(engine, more)  # a newer event: the analysis re-ran on it; the first rca checkpoint did not see it
    events = engine.records.incident(incident)["event_count"]
    open_incident(page, site, "checkout-api", name="carol")
    page.get_by_role("tab", name="History & time travel").click()
    settle(page)
    choose(page, "Checkpoint", _option(review, incident, first_rca["checkpoint_id"]))
    button(page, "Replay from here…").filter(visible=True).click()
    settle(page)
    expect(page.get_by_text("the branch will not see those").first).to_be_visible()
    button(page, f"Replay with current evidence ({events} events)").click()
    expect(alert(page, f"on the current evidence ({events} events)")).to_be_visible(timeout=60_000)
    settle(page)
    assert review.tree(incident)["branches"] == 2

    gate = review.incident(incident)["head_checkpoint_id"]
    choose(page, "Checkpoint", _option(review, incident, gate))
    page.get_by_test_id("stExpander").filter(has_text="Fork from here with edits").click()
    choose(page, "Category", "db deadlock")
    button(page, "Fork from here…").click()
    settle(page)
    expect(page.get_by_text("runs again: recommendation → fix proposal → approval").first).to_be_visible()
    expect(page.get_by_text("The edit lands where its field is written").first).to_be_visible()
    button(page, "Confirm fork").click()
    # walkthrough s57 (35-after-fork.png): the page sat at its bottom, the message atop the tab: a toast too
    # (first: it goes after a few seconds, the message box stays)
    expect(page.get_by_test_id("stToastText").get_by_text(re.compile(r"carol forked from #\d+"))).to_be_in_viewport(
        timeout=60_000)
    expect(alert(page, re.compile(r"carol forked from #\d+ [a-z ]+, setting the category to db deadlock"))
           ).to_be_visible(timeout=60_000)
    settle(page)
    doc = review.incident(incident)
    assert doc["rca"]["category"] == "db_deadlock" and "DEADLOCK" in doc["recommendation"]["action"]
    # the whole page followed the fork, not just the timeline: the RCA and the panel say who changed it
    expect(page.get_by_text(re.compile(r"carol forked the run, setting the category to db deadlock, at")).first
           ).to_be_visible()
    expect(page.get_by_text(re.compile(r"Deciding on the analysis of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"))).to_be_visible()
