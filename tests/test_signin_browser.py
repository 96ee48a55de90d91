"""Sign-in in a real browser: `streamlit run app.py` with an `[auth]` section pointing at a real
OpenID Connect provider on loopback (tests/oidc/provider.mjs, oidc-provider on node), driven by
headless Chromium through Playwright. Ann (reviewer) signs in, approves, the audit names her with
`oidc`; she signs out and can no longer decide; Vic (viewer) sees the controls disabled. And in
demo mode the typed name survives a reload and a new tab of the same browser.

Screenshots go to test-artifacts/ on failure.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.errors import UnknownIdentity
from pipeline.review.service import ReviewService
from tests.support import (alert, CHROMIUM, CHROMIUM_ARGS, ROOT, artifacts_on_failure, free_port, process, settle,
                           streamlit_app, wait_http)

NODE = shutil.which("node") or "/usr/bin/node"
OIDC_DIR = ROOT / "tests" / "oidc"
CI = bool(os.environ.get("CI"))

if not CI:  # on CI every part is installed by .ci/run, and a missing one must fail, not skip
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium", allow_module_level=True)
    if not Path(NODE).exists():
        pytest.skip("needs node for the OpenID Connect provider", allow_module_level=True)
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("authlib", reason="Streamlit's sign-in needs Authlib (requirements.txt)")


def _npm_ci() -> None:
    """Install the provider's pinned packages once (offline-safe: skipped when already there)."""
    if (OIDC_DIR / "node_modules" / "oidc-provider").exists():
        return
    npm = shutil.which("npm") or "/usr/bin/npm"
    subprocess.run([npm, "ci", "--prefix", str(OIDC_DIR), "--no-audit", "--no-fund"], check=True,
                   capture_output=True, timeout=300)


@pytest.fixture
def signin(paused_engine, tmp_path):
    """The OpenID Connect provider and the app configured to sign in with it; yields the app's URL."""
    _npm_ci()
    app_port, idp_port = free_port(), free_port()
    while idp_port == app_port:  # two binds to port 0 may be given the same port once it is free again
        idp_port = free_port()
    redirect = f"http://localhost:{app_port}/oauth2callback"
    log = tmp_path / "provider.log"
    with process([NODE, str(OIDC_DIR / "provider.mjs"), "--port", str(idp_port), "--redirect", redirect],
                 log=log) as idp:
        wait_http(f"http://127.0.0.1:{idp_port}/.well-known/openid-configuration", idp, log)
        secrets = f"""
[auth]
redirect_uri = "{redirect}"
cookie_secret = "test-only-cookie-secret-9b1f2e7c4d"
client_id = "incidentiq"
client_secret = "incidentiq-test-secret"
server_metadata_url = "http://127.0.0.1:{idp_port}/.well-known/openid-configuration"
client_kwargs = {{ prompt = "login" }}
"""
        with streamlit_app(paused_engine.settings.data_dir, tmp_path, port=app_port, secrets=secrets):
            yield f"http://localhost:{app_port}"


def button(page, name: str):
    """A Streamlit button by its exact text."""
    return page.locator('button[data-testid^="stBaseButton"]').filter(
        has_text=re.compile(rf"^\s*{re.escape(name)}\s*$"))


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM) if CHROMIUM.exists() else None,
                                     args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def sign_in(page, url: str, who: str) -> None:
    """From a signed-out page: the app's button, the provider's login form, back to the app."""
    from playwright.sync_api import expect

    page.goto(url)
    settle(page)
    button(page, "Log in to decide").click()
    page.wait_for_url(re.compile(r"/interaction/"), timeout=30_000)
    page.fill('input[name="login"]', who)
    page.fill('input[name="password"]', "any password")
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(rf"^{re.escape(url)}/?(\?.*)?$"), timeout=30_000)
    settle(page)
    expect(page.get_by_test_id("stSidebar").get_by_text(f"({who}@example.com)")).to_be_visible(timeout=30_000)


def _paused(engine) -> list[str]:
    return [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]


@pytest.mark.timeout(300)
def test_sign_in_decide_sign_out_and_a_viewer_cannot_decide(signin, paused_engine):
    from playwright.sync_api import expect

    url = signin
    first, second = _paused(paused_engine)[:2]
    with browser() as chromium:
        page = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        with artifacts_on_failure(page, "signin-journey"):
            sign_in(page, url, "ann")
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar.get_by_text("Role: reviewer · signed in (oidc)")).to_be_visible()
            expect(page.get_by_text("Demo mode")).to_have_count(0)

            page.goto(f"{url}/incident?incident={first}")  # a deep link keeps the sign-in
            settle(page)
            approve = button(page, "Approve")
            expect(approve).to_be_enabled(timeout=30_000)
            approve.click()
            settle(page)
            # a name is shown literally: an e-mail carries a WORD JOINER after its @ (no mailto link)
            # the message box, not the toast that says it again (session 57)
            expect(alert(page, re.compile("Approval recorded for ann@\u2060?example\\.com"))).to_be_visible(
                timeout=60_000)
            expect(page.get_by_text(re.compile(r"Approved by ann@example\.com \(oidc\)"))).to_be_visible()
            decided = [(a["reviewer"], a["auth"]) for a in paused_engine.records.audit(first) if a["action"] == "approve"]
            assert decided == [("ann@example.com", "oidc")]
            page.get_by_role("tab", name="Audit trail").click()
            expect(page.get_by_test_id("stDataFrame").filter(has_text="approve")).to_have_count(1)

            button(page, "Log out").click()
            page.wait_for_url(re.compile(r"/session/end"), timeout=30_000)  # the provider asks to confirm
            page.get_by_role("button", name=re.compile("Yes, sign me out")).click()
            page.wait_for_url(re.compile(rf"^{re.escape(url)}/?(\?.*)?$"), timeout=30_000)
            settle(page)
            expect(button(page, "Log in to decide")).to_be_visible(timeout=30_000)

            page.goto(f"{url}/incident?incident={second}")
            settle(page)
            expect(button(page, "Approve")).to_be_disabled(timeout=30_000)
            expect(page.get_by_text("Sign in to decide.")).to_be_visible()
            expect(page.locator('button[data-testid^="stBaseButton"]').filter(has_text="I'm on it")).to_be_disabled()
            # signed out is no one: the service refuses a typed name when names are verified
            paused_engine.settings = paused_engine.settings.model_copy(update={"auth": "oidc"})
            review = ReviewService(paused_engine)
            with pytest.raises(UnknownIdentity):
                review.approve(second, reviewer="ann@example.com")
            assert paused_engine.records.incident(second)["status"] == "awaiting_approval"

        viewer = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        with artifacts_on_failure(viewer, "signin-viewer"):
            sign_in(viewer, url, "vic")
            expect(viewer.get_by_test_id("stSidebar").get_by_text("Role: viewer · signed in (oidc)")).to_be_visible()
            viewer.goto(f"{url}/incident?incident={second}")
            settle(viewer)
            expect(button(viewer, "Approve")).to_be_disabled(timeout=30_000)
            expect(viewer.get_by_text("Your role (viewer) may not decide: that needs reviewer.")).to_be_visible()
    assert paused_engine.records.incident(second)["status"] == "awaiting_approval"


@pytest.mark.timeout(240)
def test_in_demo_mode_the_typed_name_survives_a_reload_and_a_new_tab(paused_engine, tmp_path):
    from playwright.sync_api import expect

    incident = _paused(paused_engine)[0]
    with streamlit_app(paused_engine.settings.data_dir, tmp_path) as url, browser() as chromium:
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        with artifacts_on_failure(page, "demo-name"):
            page.goto(url)
            settle(page)
            expect(page.get_by_text("Demo mode: names are self-declared, not verified")).to_be_visible()
            name = page.get_by_label("Your name", exact=True)
            name.fill("dora")
            name.press("Enter")
            settle(page)
            expect(page.get_by_text("Acting as dora")).to_be_visible()

            page.reload()
            settle(page)
            expect(page.get_by_label("Your name", exact=True)).to_have_value("dora", timeout=30_000)

            tab = context.new_page()  # a deep link in a new tab of the same browser
            tab.goto(f"{url}/incident?incident={incident}")
            settle(tab)
            expect(tab.get_by_text("Acting as dora")).to_be_visible(timeout=30_000)
            expect(button(tab, "Approve")).to_be_enabled()
        other = chromium.new_context().new_page()  # another browser knows no name
        other.goto(url)
        settle(other)
        expect(other.get_by_label("Your name", exact=True)).to_have_value("")
