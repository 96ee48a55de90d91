"""A page asked for by its URL as a fresh server's first request still runs inside app.py (its
sidebar, the runtime it opens): why the pages live in `app_pages/` and not `pages/`.

Streamlit 1.67 decides once a process, before any script runs, whether the entrypoint's folder
has a `pages/` directory (runtime/pages_manager.py, `PagesManager.uses_pages_directory`); until a
script calls `st.navigation` (commands/navigation.py turns the flag off), each run goes through
the legacy multipage router (runtime/scriptrunner/script_runner.py, `_mpa_v1`), which runs a file
of `pages/` named by the URL by itself. The second case here is that behaviour, shown on a two-page
app: it fails once Streamlit stops reading `pages/` beside an `st.navigation` app, and the
folder may then be renamed.
"""
from __future__ import annotations

import os

import pytest

from tests.support import CHROMIUM, CHROMIUM_ARGS, artifacts_on_failure, settle, streamlit_app

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

ENTRYPOINT = '''
import streamlit as st

page = st.navigation([st.Page("{folder}/home.py", default=True), st.Page("{folder}/other.py", url_path="other")])
st.sidebar.markdown("entrypoint ran")
page.run()
'''


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _first_visit(browser, url: str, name: str, *, page_says: str) -> str:
    """The text shown at `url`, the first URL a fresh server is asked for, once the page drew
    `page_says` (its own text; a first run opening the runtime takes seconds) and finished its run."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        with artifacts_on_failure(page, name):
            page.goto(url)
            expect(page.get_by_text(page_says)).to_be_visible(timeout=90_000)
            settle(page)
            return page.locator("body").inner_text()
    finally:
        page.close()


def test_an_incident_url_as_a_fresh_servers_first_request_opens_inside_app_py(browser, data_dir, tmp_path):
    with streamlit_app(data_dir, tmp_path) as url:
        shown = _first_visit(browser, f"{url}/incident", "fresh_incident_url", page_says="No incidents yet.")
    # the sidebar app.py draws around every page, from the runtime it opens
    assert f"Data dir: {data_dir}" in shown and "Poller off" in shown, shown


@pytest.mark.parametrize("folder, entrypoint_runs", [("app_pages", True), ("pages", False)])
def test_streamlit_runs_a_pages_folders_file_alone_on_a_fresh_servers_first_request(browser, tmp_path, folder,
                                                                                     entrypoint_runs):
    project = tmp_path / "project"
    (project / folder).mkdir(parents=True)
    (project / "app.py").write_text(ENTRYPOINT.format(folder=folder))
    (project / folder / "home.py").write_text('import streamlit as st\nst.markdown("home page")\n')
    (project / folder / "other.py").write_text('import streamlit as st\nst.markdown("other page")\n')
    with streamlit_app(tmp_path / "data", tmp_path, script=project / "app.py") as url:
        shown = _first_visit(browser, f"{url}/other", f"fresh_{folder}_url", page_says="other page")
    assert ("entrypoint ran" in shown) is entrypoint_runs, shown
