"""The audit trail's sentences as a reviewer reads them, on rows shaped as the review service records
them (a second reviewer's approval, a fork that corrected the category, an edit): what changed for
the incident, never the graph's interrupt ids, the store's idempotency keys and change ids, a
decision's time and sign-in, the list of edited paths (`rca.category`) or a node's name
(`propose_fix`); the exports keep all of it."""
from __future__ import annotations

from workbench.audit_words import audit_sentence, note_words

APPROVE = {
    "action": "approve", "reviewer": "bob", "note": None,
    "before": {"status": "awaiting_approval", "decision.action": None, "decision.reviewer": None,
               "decision.interrupt_id": None, "decision.decided_at": None, "decision.approvals": None,
               "decision.auth": None, "decision.proposal_hash": None, "outcome": None, "proposal_hash": None,
               "fix.attempt": None, "fix.hash": None, "fix.idempotency_key": None},
    "after": {"status": "fix_proposed", "decision.action": "approve", "decision.reviewer": "bob",
              "decision.interrupt_id": "44cd0de0e306ad66abb40a6cf2df727f",
              "decision.decided_at": "2026-12-06T10:33:49.073027Z", "decision.approvals": [{"by": "bob"}],
              "decision.auth": "cli", "decision.proposal_hash": "f163df9fd2ac8935", "outcome": "fix_proposed",
              "proposal_hash": "f163df9fd2ac8935", "fix.attempt": 1, "fix.hash": "f163df9fd2ac8935",
              "fix.idempotency_key": "INC-1:304a9606bd56"},
}
FORK = {
    "action": "fork", "reviewer": "ann",
    "note": "forked from checkpoint 1f1f1603-d04d-6116-8003-014d802402a0: re-ran recommend, propose_fix, approval "
            "[this checkpoint's analysis rests on 3 events]",
    "before": {"rca.category": "unknown", "status": "awaiting_approval"},
    "after": {"rca.category": "connection_refused", "status": "awaiting_approval",
              "change_id": "1a43b413dfcf40338a1fe562b102aa60", "edited": ["rca.category"]},
}
EDIT = {
    "action": "edit", "reviewer": "ann", "note": "as_node=rca",
    "before": {"rca.category": "null_reference", "proposal.hash": "bf530e37", "proposal.change.kind": "null_guard",
               "proposal.change.line": 31},
    "after": {"rca.category": "data_integrity", "proposal.hash": "2c4178a2", "proposal.change.kind": None,
              "proposal.change.line": None, "change_id": "75660a59bd9a", "edited": ["rca.category"],
              "reran": ["recommend", "propose_fix"]},
}


def test_an_approval_says_who_approved_and_what_the_status_became():
    assert audit_sentence(APPROVE) == "bob approved: status awaiting approval → approved — fix proposed (not applied)"


def test_the_audits_status_is_the_headers_words_for_a_plan_without_a_diff():
    """33-audit-d82911.png: the audit said "→ fix proposed" where the header said "approved — plan
    recorded, no diff": the same status reads the same in both (provenance.status_words)."""
    from workbench.provenance import status_words

    recorded = {"hash": "f163df9fd2ac8935", "plan": ["No diff: …"], "diff": ""}
    said = audit_sentence(APPROVE, recorded)
    assert said == f"bob approved: status awaiting approval → {status_words('fix_proposed', recorded)}", said
    assert "plan recorded, no diff" in said
    other = {"hash": "0000", "diff": ""}  # another branch's recorded fix: not this approval's
    assert "fix proposed (not applied)" in audit_sentence(APPROVE, other)


def test_a_fork_in_the_decision_panel_says_what_it_set_in_words():
    """"carol forked with category at …" (32-after-fork): now who forked the run, setting what to what."""
    from workbench.provenance import decision_lines

    lines = decision_lines({}, [{**FORK, "reviewer": "carol", "at": "2026-12-06T16:42:17"}])
    assert lines == ["carol forked the run, setting the category to connection refused, at 2026-12-06 16:42:17 UTC."]


def test_the_decision_panel_names_the_analysis_by_its_time_and_revision_not_its_id():
    """05-incident-top.png: "Deciding on analysis 0eb80220d934"."""
    from workbench.decision_panel import analysis_words

    doc = {"pending": {"interrupt_id": "0eb80220d934aaaa"}, "revisions": 0, "revisions_left": 2,
           "head_created_at": "2026-12-06T16:42:17.123+00:00"}
    assert analysis_words(doc) == "Deciding on the analysis of 2026-12-06 16:42:17 UTC (the analyst's first) · 2 revisions left"
    assert analysis_words({**doc, "revisions": 1, "revisions_left": 1}).endswith("(revision 1) · 1 revision left")


def test_a_fork_and_an_edit_say_the_category_change_in_words():
    fork, edit = audit_sentence(FORK), audit_sentence(EDIT)
    assert fork == "ann forked the run, setting the category to connection refused (was unknown)", fork
    assert edit == "ann edited the analysis, setting the category to data integrity (was null reference)", edit
    for text in (fork, edit):
        assert "rca." not in text and "change id" not in text and "reran" not in text and "hash" not in text


def test_a_forks_note_names_the_steps_and_the_checkpoint_as_the_table_does():
    """The "checkpoint after" column shows a checkpoint's last 8 characters: the note names it the same way."""
    note = note_words(FORK["note"])
    assert note.startswith("forked from checkpoint 802402a0: re-ran the recommendation, the fix proposal and the "
                           "approval"), note
    assert "propose_fix" not in note and "1f1f1603" not in note


def test_a_fork_says_what_the_reviewer_set_not_every_field_the_analysis_redid():
    """b-audit-java.png: "doc ids none → node-axios-timeout; supported True → False; warning none → …"."""
    row = {"action": "fork", "reviewer": "carol",
           "before": {"rca.category": "unknown", "rca.confidence": 0.16, "rca.doc_ids": [], "rca.supported": True,
                      "rca.warning": None, "rca.root_cause": "Inconclusive: no known cause."},
           "after": {"rca.category": "upstream_timeout", "rca.confidence": 0.3, "rca.doc_ids": ["node-axios-timeout"],
                     "rca.supported": False, "rca.warning": "set by a reviewer: no event shows upstream timeout",
                     "rca.root_cause": "Set by reviewer carol to upstream_timeout.", "edited": ["rca.category"]}}
    said = audit_sentence(row)
    assert said == ("carol forked the run, setting the category to upstream timeout (was unknown); no event of "
                    "the incident shows it, so its confidence is capped at 30%"), said
    assert audit_sentence({**row, "after": {**row["after"], "rca.supported": True, "rca.confidence": 0.49}}) == (
        "carol forked the run, setting the category to upstream timeout (was unknown); the analysis was redone "
        "for it (confidence 49%)")


def test_a_notes_recorded_time_is_written_as_the_page_writes_times():
    """b-c890ef-audit.png: "rests on 50 events up to 2026-11-28T12:22:25.456614+00:00"."""
    note = note_words("forked from checkpoint 1f1f1603-d04d-6116-8003-014d802402a0: re-ran approval [this "
                      "checkpoint's analysis rests on 50 events up to 2026-11-28T12:22:25.456614+00:00]")
    assert "up to 2026-11-28 12:22:25 UTC]" in note and "T12" not in note, note


def test_categories_findings_and_confidences_are_said_in_words_not_codes():
    """Issue 38.8: History's "Root cause analysis: connection_refused @ 0.95", the diff's findings as a
    JSON blob with event ids, and "the category db_deadlock stands" in a revision note."""
    from workbench.audit_words import changes_frame, note_words, trace_words

    assert trace_words("rca: connection_refused @ 0.95") == "Root cause analysis: connection refused, confidence 95%"
    frame = changes_frame([
        {"field": "rca.category", "before": None, "after": "db_schema_mismatch"},
        {"field": "rca.findings", "before": None, "after": [
            {"kind": "error", "value": "java.net.ConnectException: Connection refused", "event_ids": ["a1", "b2"]}]}])
    assert list(frame["after"]) == ["db schema mismatch", "error: java.net.ConnectException: Connection refused (2 events)"]
    assert note_words("agreed; the category db_deadlock stands") == "agreed; the category db deadlock stands"



def test_the_history_diff_says_a_decision_and_its_time_in_words():
    """Walkthrough s55: History's "Changes at #11 approval" read `decision approve` and `decided at
    2026-12-07T11:05:17.482396Z`, an action code and a raw ISO time where the audit says "approved" and
    "2026-12-07 11:05:17 UTC"."""
    from workbench.audit_words import changes_frame

    frame = changes_frame([{"field": "decision.action", "before": None, "after": "approve"},
                           {"field": "decision.decided_at", "before": None, "after": "2026-12-07T11:05:17.482396Z"},
                           {"field": "decision.note", "before": None, "after": "at 2026-12-07T11:05 we agreed"}])
    assert list(frame["after"]) == ["approved", "2026-12-07 11:05:17 UTC", "at 2026-12-07T11:05 we agreed"]



def test_a_refused_action_says_why_once_in_the_audit_table(monkeypatch):
    """Walkthrough s55: a refused approval's reason filled "what happened" ("ann's approval was refused: …")
    and "note" again, word for word, in every refused row."""
    from workbench import incident_view

    why = "INC-20261128-6898db: a two-person approval must be given by the person (ann signed in)"
    rows = [{"at": "2026-12-07T11:05:30+00:00", "reviewer": "ann", "action": "refused:approve", "note": why,
             "checkpoint_after": None},
            {"at": "2026-12-07T11:06:30+00:00", "reviewer": "bob", "action": "reject", "note": "a known flap",
             "checkpoint_after": None}]
    shown: dict = {}
    monkeypatch.setattr(incident_view.st, "dataframe", lambda frame, **kw: shown.update(frame=frame, **kw))
    incident_view.audit(rows, None, "INC-20261128-6898db")
    frame = shown["frame"]
    assert why in frame["what happened"][0] and frame["note"][0] == "", list(frame["note"])
    assert frame["note"][1] == "a known flap"


def test_analysis_text_says_categories_and_docs_in_a_reviewers_words_and_quotes_without_their_event_hash():
    """Walkthrough s57: a revised root cause ended "…(18 events say so), which is dns_resolution."; fix
    plans (the incident page, the backtest report, the blind pairwise cards) said "the fix hints of doc
    mysql-lock-wait-timeout (db_deadlock) apply to no file"; History's diff showed a quote as
    "90770f48aecb323516a3b502: message: GET /v1/stock/…", the event's hash first."""
    from workbench.audit_words import changes_frame
    from workbench.literal import analysis_text
    from workbench.pairwise_view import fix_lines

    assert analysis_text("the events say so (18 events say so), which is dns_resolution.").endswith(
        "which is dns resolution.")
    plan = "No diff: the fix hints of doc mysql-lock-wait-timeout (db_deadlock) apply to no file of the source tree."
    said = analysis_text(plan)
    assert "mysql-lock-wait-timeout" not in said and "db_deadlock" not in said
    assert "\u201cMySQL 1205: Lock wait timeout exceeded\u201d (db deadlock)" in said
    assert "doc no-such-doc" in analysis_text("doc no-such-doc")  # an id no shipped doc has stays
    card = "\n".join(fix_lines({"fix_proposed": True, "fix": {"plan": [plan]}}))
    assert "mysql-lock-wait-timeout" not in card and "Lock wait timeout exceeded" in card
    frame = changes_frame([{"field": "rca.quotes", "before": None, "after": [
        {"event_id": "90770f48aecb323516a3b502", "field": "message", "text": "GET /v1/stock/428 failed"}]}])
    assert list(frame["after"]) == ["message: GET /v1/stock/428 failed"]


def test_a_quote_that_spans_two_lines_loses_its_backticks_and_no_other_pair_is_made():
    """Walkthrough s58: the demo's first incident quoted a PostgreSQL error with its "\\n  Position: 78"
    line; the code-span reader skipped that span and paired the wrong backticks, so half the root cause
    read "`org.postgresql… endpoint POST /api/v1/checkout`"."""
    from workbench.literal import analysis_text

    text = ("The deepest cause in the trace: `PSQLException: ERROR: column \"gift_card_id\" does not exist\n"
            "  Position: 78`. They name endpoint `POST /api/v1/checkout`.")
    said = analysis_text(text)
    assert "`" not in said, said
    assert said.startswith("The deepest cause in the trace: PSQLException: ERROR: column") and "Position: 78." in said
    assert said.endswith("They name endpoint POST /api/v1/checkout.")
    # a paragraph break still ends a span: a lone backtick before one stays as written
    assert analysis_text("a ` b\n\nc `d`") == "a ` b\n\nc d"


def test_a_doc_the_analyst_names_with_its_title_is_titled_once():
    """Walkthrough s58: "matches the doc “Postgres: column ... (SQLSTATE 42703)”: Postgres: column ...
    (SQLSTATE 42703) (1 signatures found)": the analyst's note already gives the title after the id."""
    from workbench.literal import analysis_text, doc_titles

    doc_id, title = next(iter(doc_titles().items()))
    said = analysis_text(f"matches doc {doc_id}: {title} (1 signatures found)")
    assert said == f"matches the doc \u201c{title}\u201d (1 signature found)", said
    assert analysis_text(f"matches doc {doc_id}: {title} (2 signatures found)").endswith("(2 signatures found)")


def test_history_says_what_an_unchanged_step_wrote_with_its_docs_titled():
    """Walkthrough s58: "Changes at #12 fix proposal … The fix proposal step wrote the proposal: No diff: no
    machine-applicable fix hint of doc go-envconfig-required-key-missing applies …", a doc by its id where the
    incident page names it by its title."""
    from workbench.checkpoint_view import unchanged_writes
    from workbench.literal import doc_titles

    doc_id, title = next(iter(doc_titles().items()))
    detail = {"runs": [{"node": "propose_fix", "output": {"proposal": {
        "plan": [f"No diff: no fix hint of doc {doc_id} applies to `Orders.java:46`"]}}}]}
    said = unchanged_writes(detail)
    assert doc_id not in said and title[:20] in said and "`" not in said, said
