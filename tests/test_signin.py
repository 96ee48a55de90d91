"""Who may do what in the web app (AppTest from app.py): the demo banner and the remembered name,
OIDC sign-in through st.user with roles from its claim, every deciding control disabled with its
reason for whoever may not use it (and the service refusing anyway), the inbox's partial
approvals, escalations and assignees, and comments shown literally."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.clock import ManualClock
from pipeline.errors import NotPermitted, UnknownIdentity
from pipeline.unattended import escalation
from pipeline.review.identity import actor_from_claims
from pipeline.review.service import ReviewService
from tests.support import (APP, TIMEOUT, as_reviewer, by_category, choose_decision, open_incident, open_tab,
                           pending, said, texts)

ANN = {"is_logged_in": True, "email": "ann@example.com", "name": "Ann", "sub": "ann", "roles": ["reviewer"]}
VIC = {"is_logged_in": True, "email": "vic@example.com", "name": "Vic", "sub": "vic", "roles": ["viewer"]}
ADA = {"is_logged_in": True, "email": "ada@example.com", "name": "Ada", "sub": "ada", "roles": ["admin"]}
HOSTILE = "<script>alert(document.cookie)</script> see [docs](http://evil.example/phish)"


@pytest.fixture
def start(paused_engine, monkeypatch):
    """Run the app as a browser session would: `start(user)` with st.user's claims (None: no [auth])."""
    from streamlit.testing.v1 import AppTest

    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")

    def run(user: dict | None = None):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        if user is not None:
            at.user = user
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    yield run
    session._runtime.clear()


def _incident(engine) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == "checkout-api")


def _key(engine, incident_id: str, action: str) -> str:
    return f"incident_{pending(engine, incident_id)[:12]}_{action}"


def _sidebar_text(at) -> str:
    return "\n".join(str(e.value) for kind in ("text", "caption", "markdown", "error")
                     for e in getattr(at.sidebar, kind))


# -- demo mode -----------------------------------------------------------------------------------

def test_demo_mode_is_bannered_and_the_typed_name_acts_with_its_role(start, paused_engine):
    at = start()
    assert "Demo mode: names are self-declared, not verified" in said(at, "warning")
    as_reviewer(at, "alice")
    assert "Acting as alice · role: admin · demo (not verified)" in _sidebar_text(at)
    incident = _incident(paused_engine)
    open_incident(at, incident)
    at.button(key=_key(paused_engine, incident, "approve")).click().run()
    decision = [a for a in paused_engine.records.audit(incident) if a["action"] == "approve"]
    assert [(a["reviewer"], a["auth"]) for a in decision] == [("alice", "demo")]


def test_the_typed_name_is_written_to_a_browser_cookie_percent_encoded(start):
    at = start()
    assert not at.sidebar.html  # nothing typed, nothing remembered: no script
    as_reviewer(at, 'ann "</script><b>x')
    scripts = [h.value for h in at.sidebar.html]
    assert len(scripts) == 1
    assert 'iiq_reviewer=ann%20%22%3C%2Fscript%3E%3Cb%3Ex; path=/; max-age=2592000; samesite=lax' in scripts[0]
    assert scripts[0].count("</script>") == 1  # the name cannot close the script early
    at.run()
    assert not at.sidebar.html  # written once, not on every run
    as_reviewer(at, "")
    assert "iiq_reviewer=; path=/; max-age=0" in at.sidebar.html[0].value  # a cleared name forgets it


def test_without_a_name_nothing_can_be_decided_and_the_reason_is_shown(start, paused_engine):
    at = start()
    incident = _incident(paused_engine)
    open_incident(at, incident)
    assert at.button(key=_key(paused_engine, incident, "approve")).disabled
    assert at.button(key="incident_people_assign").disabled
    assert "Enter your name in the sidebar to decide." in texts(at)
    assert "Enter your name in the sidebar to assign." in texts(at)


# -- oidc (st.user) ----------------------------------------------------------------------------

def test_signed_in_the_sidebar_names_the_person_and_role_and_there_is_no_banner(start):
    at = start(ANN)
    assert "Ann (ann@example.com)" in _sidebar_text(at)
    assert "Role: reviewer · signed in (oidc)" in _sidebar_text(at)
    assert "Demo mode" not in said(at, "warning")
    assert not [t for t in at.sidebar.text_input if t.key == "app_reviewer_name"]
    assert at.sidebar.button(key="app_logout").label == "Log out"


def test_a_viewer_sees_every_deciding_control_disabled_with_the_reason(start, paused_engine):
    at = start(VIC)
    incident = _incident(paused_engine)
    open_incident(at, incident)
    for action, choice in (("approve", "Approve"), ("reject", "Reject"), ("revise", "Changes"), ("edit_approve", "Edit")):
        choose_decision(at, paused_engine, incident, choice)  # the panel shows one decision at a time
        assert at.button(key=_key(paused_engine, incident, action)).disabled, action
    open_tab(at, incident, "History & time travel")  # only the open tab is computed
    assert at.button(key="incident_replay").disabled
    assert at.button(key="incident_people_assign").disabled
    assert at.button(key=f"incident_comment_{incident}_submit").disabled
    shown = texts(at)
    assert "Your role (viewer) may not decide: that needs reviewer." in shown
    assert "Your role (viewer) may not replay or fork: that needs admin." in shown
    # and the service refuses a viewer whatever the page shows, with an audited refusal
    settings = paused_engine.settings.model_copy(update={"auth": "oidc"})
    with pytest.raises(NotPermitted):
        ReviewService(paused_engine).approve(incident, actor=actor_from_claims(VIC, settings))
    assert [a["action"] for a in paused_engine.records.audit(incident)] == ["refused:approve"]
    assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"


def test_a_signed_in_person_no_claim_or_file_names_is_a_viewer(start, paused_engine):
    at = start({k: v for k, v in ANN.items() if k != "roles"})
    assert "Role: viewer · signed in (oidc)" in _sidebar_text(at)
    incident = _incident(paused_engine)
    open_incident(at, incident)
    assert at.button(key=_key(paused_engine, incident, "approve")).disabled


def test_a_reviewer_decides_but_only_an_admin_replays(start, paused_engine):
    incident = _incident(paused_engine)
    at = open_incident(start(ANN), incident)
    assert not at.button(key=_key(paused_engine, incident, "approve")).disabled
    open_tab(at, incident, "History & time travel")  # only the open tab is computed
    assert at.button(key="incident_replay").disabled
    at.button(key=_key(paused_engine, incident, "approve")).click().run()
    decision = [a for a in paused_engine.records.audit(incident) if a["action"] == "approve"]
    assert [(a["reviewer"], a["auth"]) for a in decision] == [("ann@example.com", "oidc")]

    other = paused_engine.records.incidents(status="awaiting_approval")[0]["incident_id"]
    admin = open_tab(open_incident(start(ADA), other), other, "History & time travel")
    assert not admin.button(key="incident_replay").disabled


def test_signed_out_nothing_can_be_decided_and_typed_names_are_refused(start, paused_engine):
    at = start({"is_logged_in": False})
    assert at.sidebar.button(key="app_login").label == "Log in to decide"
    incident = _incident(paused_engine)
    open_incident(at, incident)
    assert at.button(key=_key(paused_engine, incident, "approve")).disabled
    assert "Sign in to decide." in texts(at)
    # the app's engine knows names are verified here: a typed name is no way around the sign-in
    from workbench import session

    review = session._runtime(str(paused_engine.settings.data_dir.resolve()), "demo", "off", "oidc").review
    with pytest.raises(UnknownIdentity):
        review.approve(incident, reviewer="ann@example.com")
    assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"


def test_oidc_without_an_auth_section_says_what_is_missing_and_decides_nothing(start, paused_engine, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_AUTH", "oidc")
    at = start()
    assert "INCIDENTIQ_AUTH=oidc needs an [auth] section" in _sidebar_text(at)
    assert not [t for t in at.sidebar.text_input if t.key == "app_reviewer_name"]
    incident = _incident(paused_engine)
    open_incident(at, incident)
    assert at.button(key=_key(paused_engine, incident, "approve")).disabled


# -- the inbox --------------------------------------------------------------------------------

def _inbox_rows(at) -> dict:
    frame = at.dataframe(key="inbox_table").value
    return {r["incident_id"]: r for r in frame.to_dict("records")}


def test_the_inbox_shows_a_partial_approval_and_the_second_person_completes_it(start, paused_engine, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_TWO_PERSON", "critical,changes_files")
    paused_engine.settings = paused_engine.settings.model_copy(update={"two_person": ("critical", "changes_files")})
    incident = by_category(paused_engine, "db_pool_exhausted")
    at = open_incident(start(ANN), incident)
    at.button(key=_key(paused_engine, incident, "approve")).click().run()
    assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"
    assert "1 of 2 approvals: ann@example.com (oidc)" in texts(at)

    bob = start({**ANN, "email": "bob@example.com", "name": "Bob", "sub": "bob"})
    assert _inbox_rows(bob)[incident]["people"] == "1 of 2 approvals: ann@example.com"
    open_incident(bob, incident)
    bob.button(key=_key(paused_engine, incident, "approve")).click().run()
    assert paused_engine.records.incident(incident)["status"] == "fix_proposed"
    assert "Approved by ann@example.com (oidc)" in texts(bob) and "bob@example.com (oidc)" in texts(bob)


def test_an_escalated_incident_is_highlighted_apart_from_overdue_ones(start, paused_engine):
    from workbench.inbox_view import ESCALATED_TINT, OVERDUE_TINT, highlight_overdue, inbox_frame

    later = datetime.now(timezone.utc) + timedelta(days=10)
    paused_engine.records.clock = ManualClock(later)
    first = escalation.run(paused_engine, limit=1).escalated
    assert len(first) == 1
    at = start(ANN)
    rows = _inbox_rows(at)
    assert rows[first[0]]["status"] == "escalated"  # in the status: the SLA column stays narrow
    assert all(r["status"] == "awaiting approval" for i, r in rows.items() if i != first[0])
    # ten days on, every open incident is overdue; only the escalated one is amber
    frame = inbox_frame(ReviewService(paused_engine).inbox(status="awaiting_approval"), later)
    styles = highlight_overdue(frame)._compute().ctx
    tints = {frame.iloc[i]["incident_id"]: "; ".join(f"{k}: {v}" for k, v in styles[(i, 0)])
             for i in range(len(frame))}
    assert tints[first[0]] == ESCALATED_TINT
    assert {t for i, t in tints.items() if i != first[0]} == {OVERDUE_TINT}


def test_the_inbox_shows_the_assignee_and_filters_to_my_incidents(start, paused_engine):
    incident = _incident(paused_engine)
    at = open_incident(start(ANN), incident)
    at.button(key="incident_people_assign").click().run()
    assert "On it: ann@example.com" in texts(at)
    assert paused_engine.records.incident(incident)["assignee"] == "ann@example.com"

    inbox = start(ANN)
    rows = _inbox_rows(inbox)
    assert rows[incident]["people"] == "on it: ann@example.com" and len(rows) > 1
    inbox.selectbox(key="inbox_assignee").set_value("ann@example.com").run()
    assert list(_inbox_rows(inbox)) == [incident]

    at.button(key="incident_people_unassign").click().run()
    assert paused_engine.records.incident(incident)["assignee"] is None
    assert [a["action"] for a in paused_engine.records.audit(incident)] == ["assign", "unassign"]


def test_a_comment_is_stored_audited_and_shown_literally(start, paused_engine):
    incident = _incident(paused_engine)
    at = open_incident(start(ANN), incident)
    at.text_area(key=f"incident_comment_{incident}_text").input(HOSTILE)
    at.button(key=f"incident_comment_{incident}_submit").click().run()
    assert not at.exception
    assert [c["text"] for c in paused_engine.records.query(
        "SELECT text FROM comments WHERE incident_id = $1", (incident,))] == [HOSTILE]
    assert [a["action"] for a in paused_engine.records.audit(incident)] == ["comment"]
    assert HOSTILE in [c.value for c in at.code]  # literal text in a code block
    assert not [m.value for m in at.markdown if "evil.example" in m.value or "<script>" in m.value]
    assert "Ann (ann@example.com, oidc)" in texts(at)
