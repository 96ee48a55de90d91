"""Internal words never reach a reviewer: no status codes or interrupt ids in a refused
decision's message, no miner placeholders (`<NUM>`, `<STR>`) in the CLI's titles."""
from __future__ import annotations

import re

from pipeline.errors import NotAwaitingApproval, StaleInterrupt, StaleProposal
from tests.support import cli, ingest_one

PLACEHOLDER = re.compile(r"<(?:NUM|STR|EMAIL|IP|HEX|UUID|PATH|URL)>")


def test_conflict_messages_say_statuses_in_words_and_name_no_interrupt_id():
    interrupt = "8f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f"
    for error in (NotAwaitingApproval("INC-1", "fix_proposed"), StaleInterrupt("INC-1", interrupt, "ffff" * 8),
                  StaleProposal("INC-1", "a" * 64, "b" * 64)):
        assert "fix_proposed" not in error.message and "_" not in error.message.replace("INC-1", "")
        assert interrupt[:8] not in error.message and "ffff" not in error.message and "aaaa" not in error.message
    assert "approved, with a fix proposal" in NotAwaitingApproval("INC-1", "fix_proposed").message


def test_the_cli_shows_a_title_in_the_logs_words_not_the_miners_placeholders(engine, tmp_path, capsys):
    events = [{"_time": f"2026-11-28T10:00:0{i}Z", "service": "checkout-api", "level": "ERROR",
               "message": f"Payment {4000 + i} for user{i}@shop.example failed after {120 + i} ms"} for i in range(3)]
    incident = ingest_one(engine, tmp_path, events)
    code, out, _ = cli(capsys, "show", incident)
    assert code == 0
    title = out.splitlines()[1]
    assert not PLACEHOLDER.search(title), title
    assert "failed after" in title


def test_approve_is_not_offered_again_to_someone_who_already_approved(paused_engine, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.support import APP, TIMEOUT, as_reviewer, by_category, choose_decision, open_incident, said
    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    monkeypatch.setenv("INCIDENTIQ_TWO_PERSON", "critical,changes_files")
    session._runtime.clear()
    try:
        app = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        incident = by_category(paused_engine, "db_pool_exhausted")
        as_reviewer(app, "ann")
        open_incident(app, incident)
        choose_decision(app, paused_engine, incident, "Approve")
        interrupt = paused_engine.records.incident(incident)["pending_interrupt_id"]
        app.button(key=f"incident_{interrupt[:12]}_approve").click().run()
        assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"  # one of two
        # said as the first of two, not "the incident is now awaiting approval" (as if nothing happened)
        message = said(app, "success")
        assert "Approval recorded for ann (1 of 2); a different person must approve" in message, message
        assert "now awaiting approval" not in message
        app.run()
        assert not [b for b in app.button if b.key == f"incident_{interrupt[:12]}_approve"]
        assert "approved this analysis already" in " ".join(str(i.value) for i in app.info)
        as_reviewer(app, "bob")
        assert [b for b in app.button if b.key == f"incident_{interrupt[:12]}_approve"]
    finally:
        session._runtime.clear()
