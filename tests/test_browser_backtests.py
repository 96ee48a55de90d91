"""Real-browser journey of the Backtests page: `streamlit run app.py` driven by headless Chromium.
Open a backtest, read its chart's labels and its figures' labels (at 1024 px) whole, open one of its disagreements, land on the
incident's time travel at the checkpoint the backtest started from; a link to a checkpoint the
incident does not have says so; after a pairwise judgment the next pair opens on an empty form.

One `streamlit run app.py` and one Chromium for the module (tests/support.py's browser_site) on the
small fixture's incidents decided four ways, with both journeys' backtests: the pairwise one first, so
the one the Backtests page opens on (the newest) is the first journey's."""
from __future__ import annotations

import os
import re

import pytest

from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.report import report
from pipeline.backtest.run import run_backtest
from pipeline.review.service import ReviewService
from tests.support import CHROMIUM, artifacts_on_failure, browser_site, cut_figure_labels, settle
from tests.test_backtest import decided, docs_without
from workbench.timeline import checkpoint_numbers

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The app on the small fixture's incidents decided four ways (test_backtest.decided) and two
    backtests: `pairwise`, whose candidate lacks three categories (three incidents with two different
    answers: the one after the first judgment is another), then `disagreements`, whose candidate
    lacks the approved one's category (the newest, which the page opens on)."""
    from tests.test_backtest_pairwise import LACKING

    work = tmp_path_factory.mktemp("backtests-ui")
    with browser_site(work) as site:
        engine = site["engine"]
        site["ids"] = decided(engine)
        site["pairwise"] = run_backtest(engine, candidate_for(engine, docs=docs_without(work / "pairwise", *LACKING)),
                                        status="all")
        site["disagreements"] = run_backtest(engine, candidate_for(
            engine, docs=docs_without(work / "disagreements", "upstream_rate_limited")), status="all")
        yield site


def test_a_disagreement_opens_the_incident_at_the_checkpoint_used(site):
    from playwright.sync_api import expect

    ids, run, url = site["ids"], site["disagreements"], site["url"]
    rows = report(site["engine"], run.backtest_id)["disagreements"]
    index = [r["incident_id"] for r in rows].index(ids["approved"])
    checkpoint = rows[index]["checkpoint_id"]
    page = site["browser"].new_page(viewport={"width": 1400, "height": 1400})
    try:
        with artifacts_on_failure(page, "browser-backtests"):
            page.goto(f"{url}/backtests")
            expect(page.get_by_role("heading", name="Backtests")).to_be_visible(timeout=60_000)
            settle(page)
            # named by its candidate and when it started, never its id (walkthrough s49)
            expect(page.get_by_role("combobox", name="Backtest")).to_have_value(
                re.compile(r"^docs .*, started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
            expect(page.get_by_text(f"{ids['approved']} — changes a category reviewers approved")).to_be_visible()
            # the chart's outcome labels are whole and inside the chart (they were cut under the bars)
            chart = page.get_by_test_id("stPlotlyChart").first
            labels = chart.locator("g.ytick text")
            expect(labels.first).to_be_visible(timeout=30_000)
            words = labels.evaluate_all("labels => labels.map(label => label.textContent)")  # SVG: no innerText
            assert set(words) >= {"approved as analysed", "rejected",
                                                     "approved after a person changed the analysis"}
            frame = chart.bounding_box()
            for label in labels.all():
                box = label.bounding_box()
                assert frame["x"] <= box["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"], box
            # at 1024 px with the sidebar open the summary's figures wrap, each label whole (five
            # columns cut them: "Agreement, ca…", "Fix newly e…")
            assert not (cut := cut_figure_labels(page)), cut
            page.set_viewport_size({"width": 1400, "height": 1400})
            page.get_by_role("button", name=re.compile("Time travel")).nth(index).click()
            expect(page.get_by_role("heading", name=ids["approved"])).to_be_visible(timeout=30_000)
            settle(page)
            expect(page.get_by_role("tab", name="History & time travel")).to_have_attribute(
                "aria-selected", "true")
            expect(page.get_by_role("combobox", name="Checkpoint", exact=True)).to_have_value(
                re.compile("^" + re.escape(f"#{checkpoint_numbers(ReviewService(site['engine']).tree(ids['approved']))[checkpoint]} · ")),
                timeout=30_000)  # the options name a checkpoint by its number (no id)
            assert "checkpoint=" not in page.url and f"incident={ids['approved']}" in page.url
            # a link naming a checkpoint the incident does not have says so where it lands (the top of
            # the page: 51b-bad-checkpoint-msg.png found it ~3,500 px down, in the tab), then shows the newest
            page.goto(f"{url}/incident?incident={ids['approved']}&checkpoint=not-a-checkpoint")
            said = page.get_by_text("The link's checkpoint not-a-checkpoint is not one of this incident's "
                                    "checkpoints: the History & time travel tab below shows the newest.")
            expect(said).to_be_visible(timeout=60_000)
            expect(said).to_be_in_viewport()
    finally:
        page.close()


def test_the_next_pair_opens_on_an_empty_form_after_a_judgment(site):
    """After "Record the judgment" the next incident's two answers came with the last judgment's choice
    and reason still filled in (the browser kept the widgets' values): one more click recorded them
    again for an incident nobody had read. The next form is empty, and Record without a choice is refused."""
    from playwright.sync_api import expect

    from pipeline.store import judgments

    run, url = site["pairwise"], site["url"]
    page = site["browser"].new_page(viewport={"width": 1400, "height": 1400})
    page.context.add_cookies([{"name": "iiq_reviewer", "value": "ann", "url": url}])
    try:
        with artifacts_on_failure(page, "browser-pairwise"):
            page.goto(f"{url}/backtests?backtest={run.backtest_id}")
            # the pairwise review is a tab of its own (blind: the report names whose answer is whose)
            page.get_by_role("tab", name="Pairwise review (blind)").click(timeout=60_000)
            expect(page.get_by_role("heading", name="Pairwise review")).to_be_visible(timeout=60_000)
            settle(page)
            page.get_by_text("equally good (or bad)").click()
            page.get_by_label("Why (required)").fill("the same cause in other words")
            page.get_by_role("button", name="Record the judgment").click()
            expect(page.get_by_text(re.compile(r"^Recorded for INC-"))).to_be_visible(timeout=60_000)
            settle(page)
            expect(page.get_by_label("Why (required)")).to_have_value("")
            expect(page.get_by_role("radio", name="equally good (or bad)")).not_to_be_checked()
            page.get_by_role("button", name="Record the judgment").click()
            expect(page.get_by_text("Choose A, B or equal.")).to_be_visible(timeout=60_000)
            assert len(judgments.of_backtest(site["engine"].records, run.backtest_id)) == 1
    finally:
        page.close()


def test_the_picker_does_not_say_running_once_the_backtest_has_finished(site):
    """Walkthrough s51: the picker read "running 2/6" for a backtest that had finished (the page had
    rerun: its caption said done). A keyed selectbox's browser keeps the label it was picked with, so the
    picker names the backtest by what does not change; where it is, the caption under it says."""
    import socket
    import subprocess

    from playwright.sync_api import expect

    from pipeline.store import backtests
    from pipeline.store.owners import _process_start

    records, url = site["engine"].records, site["url"]
    worker = subprocess.Popen(["sleep", "120"])  # a worker that has claimed it and is analysing
    owner = f"{socket.gethostname()}:{worker.pid}:{_process_start(worker.pid)}:test"
    backtests.create(records, backtest_id="bt-finishing", candidate="the live analyst", candidate_key="k-finishing",
                     selection=list(site["ids"].values())[:2], owner=owner)
    page = site["browser"].new_page(viewport={"width": 1400, "height": 1000})
    try:
        with artifacts_on_failure(page, "browser-backtests-finished"):
            page.goto(f"{url}/backtests?backtest=bt-finishing")
            picker = page.get_by_role("combobox", name="Backtest")
            expect(picker).to_have_value(re.compile(r"^the live analyst, started .* UTC$"), timeout=60_000)
            expect(page.get_by_text(re.compile(r"^Candidate: the live analyst · running"))).to_be_visible()
            settle(page)
            backtests.finish(records, "bt-finishing", owner)
            worker.kill()
            worker.wait()
            # the runs panel's two-second tick sees it end and reruns the page
            expect(page.get_by_text(re.compile(r"^Candidate: the live analyst · done"))).to_be_visible(timeout=60_000)
            settle(page)
            assert "running" not in picker.input_value()
    finally:
        page.close()
        if worker.poll() is None:
            worker.kill()
            worker.wait()
