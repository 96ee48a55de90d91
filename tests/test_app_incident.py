"""The incident page as a demanding reviewer reads it (AppTest): findings and the log lines they rest
on, the fix proposal beside Approve (and the approval naming it), revisions, status words,
provenance of edits, tab memory, lazy tabs, time travel that says which evidence it uses, Back."""
import json
import re

from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from pipeline.state import readable_title
from tests.support import as_reviewer, choose_decision, open_incident, open_tab, said, texts, unescape
from workbench.conflicts import what_changed


def _by_service(engine, service: str) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == service)


def _form(engine, incident_id: str) -> str:
    return f"incident_{engine.records.incident(incident_id)['pending_interrupt_id'][:12]}"


def _frame(at, *columns: str):
    """The dataframe whose columns start with `columns` (display tables carry no key in AppTest)."""
    return next(d.value for d in at.dataframe if list(d.value.columns)[:len(columns)] == list(columns))


def _html(at) -> list[str]:
    # the narrow-window element (workbench/narrow_window.py) is page furniture, not the incident's
    return [h.proto.body for h in at.get("html") if "narrow_window" not in h.proto.body]


def test_findings_and_the_quoted_log_lines_come_first_with_the_finding_highlighted(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    open_incident(app, incident)
    findings = _frame(app, "finding", "value")
    assert ("pool name", "HikariPool-1") in set(zip(findings["finding"], findings["value"]))
    assert "30000ms" in set(findings["value"])
    lines = [b for b in _html(app) if "<mark" in b]
    # three events say the same line: it is shown once, whole, with the pool's name marked
    assert len(lines) == 1
    assert re.search(r"<mark[^>]*>HikariPool-1</mark>", lines[0])
    assert "request timed out after" in re.sub(r"<[^>]+>", "", lines[0])
    assert "×3" in texts(app)
    headings = [h.value for h in app.subheader]
    assert headings.index("Root cause analysis") < headings.index("Recommendation")


def test_the_title_is_the_first_events_words_not_the_template(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    assert "<NUM>" not in paused_engine.records.incident(incident)["title"]  # stored in the log's words
    open_incident(app, incident)
    heading = next(h for h in _html(app) if "role='heading'" in h)  # the page's first html is the narrow-window style
    assert "HikariPool-1 - Connection is not available, request timed out after 30000ms." in heading
    assert "NUM" not in heading and "&lt;" not in heading


def test_similar_docs_are_sorted_by_score_best_first(app, paused_engine):
    open_incident(app, _by_service(paused_engine, "checkout-api"))
    scores = list(_frame(app, "score", "doc")["score"])
    assert len(scores) > 1 and scores == sorted(scores, reverse=True)


def test_approve_shows_the_proposal_with_its_hash_and_the_approval_records_that_hash(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    proposal = ReviewService(paused_engine).incident(incident)["proposal"]
    as_reviewer(app, "alice")
    open_incident(app, incident)
    assert any(proposal["hash"][:12] in m.value for m in app.markdown)
    assert proposal["diff"].strip() in [c.value.strip() for c in app.code]
    button = app.button(key=f"{_form(paused_engine, incident)}_approve")
    assert button.label == "Approve"
    button.click().run()
    approval = next(a for a in paused_engine.records.audit(incident) if a["action"] == "approve")
    assert approval["after"]["proposal_hash"] == proposal["hash"]
    assert "approved — fix proposed (not applied)" in said(app, "success")
    assert not re.search(r"\bfixed\b", texts(app))
    assert "Fix proposal" in [h.value for h in app.subheader]  # the recorded one, same hash
    assert proposal["hash"][:12] in texts(app)


def test_a_proposal_that_changed_since_it_was_shown_is_named_in_the_conflict():
    shown = {"interrupt_id": "i1", "status": "awaiting_approval", "event_count": 3, "revisions": 0,
             "updated_at": "2026-11-28T10:00:00", "proposal_hash": "a" * 64}
    now = {"status": "awaiting_approval", "event_count": 3, "revisions": 0, "proposal": {"hash": "b" * 64}}
    assert what_changed(shown, now, []) == ("the fix proposal changed since you saw it (aaaaaaaaaaaa → bbbbbbbbbbbb); "
                                            "review the new proposal below.")


def test_a_refused_reject_keeps_the_reject_tab_open_with_the_error_there(app, paused_engine):
    incident = _by_service(paused_engine, "promo-engine")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    form = _form(paused_engine, incident)
    choose_decision(app, paused_engine, incident, "Reject")
    app.button(key=f"{form}_reject").click().run()
    assert app.session_state[f"{form}_tab"] == "Reject"
    assert "a reason for the rejection is required" in said(app, "error")
    assert app.button(key=f"{form}_reject")  # still on Reject, its reason field there to fill
    assert f"{form}_approve" not in [b.key for b in app.button]
    assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"


def test_a_rejection_shows_its_reason_and_who_rejected(app, paused_engine):
    incident = _by_service(paused_engine, "promo-engine")
    ReviewService(paused_engine).reject(incident, reviewer="bob", reason="not an incident: a promo typo")
    open_incident(app, incident)
    said_here = texts(app)
    assert "Rejected by bob" in said_here
    assert "Reason: not an incident: a promo typo" in said_here


def test_request_changes_lists_every_request_and_what_each_revision_changed(app, paused_engine):
    incident = _by_service(paused_engine, "loyalty-service")
    review = ReviewService(paused_engine)
    review.revise(incident, reviewer="bob", feedback="add a circuit breaker step")
    open_incident(app, incident)
    choose_decision(app, paused_engine, incident, "Changes")
    assert "1. add a circuit breaker step" in "\n".join(t.value for t in app.text)
    diff = _frame(app, "field", "before", "after")
    assert list(diff.columns) == ["field", "before", "after"]
    # the fields in the audit's words, as History's diff says them: no state path, no code name
    assert not [f for f in diff["field"] if "." in f or "_" in f], list(diff["field"])
    steps = diff[diff["field"] == "steps"].iloc[0]
    assert "add a circuit breaker step" in steps["after"] and "add a circuit breaker step" not in steps["before"]


def test_an_edit_marks_the_rca_human_edited_and_names_who(app, paused_engine):
    incident = _by_service(paused_engine, "inventory-service")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    assert "Edited by a person" not in texts(app)
    open_tab(app, incident, "State")
    form = f"incident_state_{paused_engine.records.incident(incident)['pending_interrupt_id'][:12]}"
    app.number_input(key=f"{form}_rca.confidence").set_value(0.41)
    app.button(key=f"{form}_save").click().run()
    assert paused_engine.records.incident(incident)["confidence"] == 0.41
    said_here = texts(app)
    assert "Edited by a person: confidence (alice)" in said_here  # the audit's word, not the state's path
    assert "alice edited confidence" in said_here  # the decision panel's provenance


def test_only_the_open_tab_is_computed_and_the_choice_is_kept(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    open_incident(app, incident)
    picker = f"incident_history_pick_{incident}"
    assert picker not in [s.key for s in app.selectbox]  # History not computed while closed
    open_tab(app, incident, "History & time travel")
    assert picker in [s.key for s in app.selectbox]
    assert "incident_evidence_table" not in [d.key for d in app.dataframe]
    app.run()  # another rerun (a message, a live refresh) stays on History
    assert picker in [s.key for s in app.selectbox]


def test_back_forgets_the_incident(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    open_incident(app, incident)
    app.button(key="incident_back").click().run()
    assert "incident" not in app.query_params
    assert "incident_current" not in app.session_state
    assert not [t for t in app.title if t.value == incident]


def _rca_checkpoint(engine, incident_id: str) -> str:
    return next(h for h in ReviewService(engine).history(incident_id, limit=100) if h["writes_by"] == ["rca"])[
        "checkpoint_id"]


def _one_more_pool_error(engine, tmp_path) -> None:
    """A fourth checkout-api pool error after the analysis (which saw 3)."""
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"_time": "2026-11-28T10:00:40Z", "service": "checkout-api", "host": "co-3",
                                "level": "ERROR", "exception": "java.sql.SQLTransientConnectionException",
                                "message": "HikariPool-1 - Connection is not available, request timed out after 30001ms."})
                    + "\n")
    ingest_path(engine, more)


def test_replay_says_which_evidence_the_branch_uses_and_offers_the_current_evidence(app, paused_engine, tmp_path):
    incident = _by_service(paused_engine, "checkout-api")
    checkpoint = _rca_checkpoint(paused_engine, incident)
    _one_more_pool_error(paused_engine, tmp_path)  # 4 events now; the rca checkpoint's analysis saw 3
    as_reviewer(app, "alice")
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    picker.select(checkpoint).run()
    app.button(key="incident_replay").click().run()
    confirm = said(app, "warning")
    assert "starts a new branch" in confirm
    assert "Evidence: 3 events up to 2026-11-28 10:00:05 UTC" in confirm
    assert "the incident now has 4, 1 of them newer: the branch will not see those" in confirm
    current = app.button(key="incident_confirm_current")
    assert current.label == "Replay with current evidence (4 events)"
    current.click().run()
    assert not app.exception
    replay = next(a for a in paused_engine.records.audit(incident) if a["action"] == "replay")
    assert replay["reviewer"] == "alice"
    assert len(ReviewService(paused_engine).incident(incident)["state"]["evidence"]) == 4
    assert "a new branch on the current evidence (4 events)" in said(app, "success")


def test_replay_from_the_newest_checkpoint_is_labelled_a_rerun(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    assert app.button(key="incident_replay").label == "Re-run from here…"
    app.button(key="incident_replay").click().run()
    assert "is a re-run on the current branch" in said(app, "warning")


def test_a_fork_that_edits_the_analysis_says_which_nodes_re_run(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    checkpoint = next(h for h in ReviewService(paused_engine).history(incident, limit=100)
                      if h["writes_by"] == ["recommend"])["checkpoint_id"]
    as_reviewer(app, "alice")
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    picker.select(checkpoint).run()
    form = f"incident_fork_{checkpoint[-12:]}"
    app.session_state[f"{form}_open"] = True  # the form is drawn while its expander is open
    app.run()
    app.selectbox(key=f"{form}_rca.category").select("db_deadlock")
    app.button(key=f"{form}_submit").click().run()
    confirm = said(app, "warning")
    assert "runs again: recommendation → fix proposal → approval" in confirm
    assert "the steps after it run again from it" in confirm
    # the form and its confirmation name steps, never nodes (walkthrough s58: "the confirmation names the nodes")
    from workbench.edit_form import AFTER

    assert "node" not in confirm and "node" not in AFTER["fork"]


def test_the_three_editors_are_one_form_with_the_same_words(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    from workbench.edit_form import WHAT_EDITS_DO

    choose_decision(app, paused_engine, incident, "Edit")
    assert WHAT_EDITS_DO in [c.value for c in app.caption]
    open_tab(app, incident, "State")
    assert [c.value for c in app.caption].count(WHAT_EDITS_DO) == 2  # Edit & approve and State
    open_tab(app, incident, "History & time travel")
    picked = app.selectbox(key=f"incident_history_pick_{incident}").value
    app.session_state[f"incident_fork_{picked[-12:]}_open"] = True  # the fork form is drawn while open
    app.run()
    assert [c.value for c in app.caption].count(WHAT_EDITS_DO) == 2  # Edit & approve and Fork


def test_the_audit_tab_shows_an_entry_added_elsewhere_even_one_that_changed_nothing_else(app, paused_engine):
    # the page keeps the audit rows until an entry is added; a refusal changes no record, only the audit
    from pipeline.review.service import ReviewService

    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    open_incident(app, incident)
    open_tab(app, incident, "Audit trail")
    assert "No human action yet." in [i.value for i in app.info]
    ReviewService(paused_engine).audit_refusal(incident, "approve", None, "mallory", "not signed in")
    app.run()
    table = next(d.value for d in app.dataframe if "what happened" in d.value.columns)
    assert list(table["what happened"]) == ["unverified:mallory's approval was refused: not signed in"]


def test_after_a_replay_on_older_evidence_the_header_counts_what_the_analysis_saw(app, paused_engine, tmp_path):
    """The header said "Events 24" while the quoted evidence said ×1: both now count the analysed events."""
    incident = _by_service(paused_engine, "checkout-api")
    checkpoint = _rca_checkpoint(paused_engine, incident)
    _one_more_pool_error(paused_engine, tmp_path)
    ReviewService(paused_engine).replay(incident, checkpoint_id=checkpoint, reviewer="alice")  # on the 3 it saw
    as_reviewer(app, "alice")
    open_incident(app, incident)
    events = next(m for m in app.metric if m.label.startswith("Events"))
    # the total, and what the analysis rests on as its basis: not "3 of 4" analysed, as if work were missing
    assert (events.label, events.value, events.delta) == ("Events", "4", "analysis based on 3 of them")
    quoted = [c.value for c in app.caption if "×" in c.value]
    assert quoted and sum(int(c.rsplit("×", 1)[1]) for c in quoted) == 3


def test_the_header_says_what_the_sla_is_counted_from(app, paused_engine):
    """The default counts the SLA from the incident's opening here: "(from first seen)" was false."""
    incident = _by_service(paused_engine, "checkout-api")
    open_incident(app, incident)
    caption = next(c.value for c in app.caption if "SLA due" in c.value)
    assert "counted from when it was opened here" in caption and "first seen" not in caption


def test_a_category_set_by_a_person_says_whose_confidence_the_number_is(app, paused_engine):
    from pipeline.review.service import ReviewService

    incident = _by_service(paused_engine, "checkout-api")
    # a category the events support (a timeout): the analyst scored it for her (edits.category_set)
    ReviewService(paused_engine).edit(incident, reviewer="ann", edits={"rca.category": "upstream_timeout"})
    open_incident(app, incident)
    said_about = [c.value for c in app.caption if "set the category by hand" in c.value]
    assert said_about and said_about[0].startswith("ann set the category by hand"), said_about
    assert "the analyst's confidence in it from the events" in said_about[0], said_about


def test_the_audit_trail_wraps_its_sentences_in_rows_tall_enough_to_read_them(app, paused_engine):
    """The "what happened" cells were cut at one line: a row taller than 64 px lets Streamlit wrap them."""
    import json
    import math

    from pipeline.review.service import ReviewService

    other = _by_service(paused_engine, "loyalty-service")
    ReviewService(paused_engine).edit(other, reviewer="bob", edits={"rca.category": "db_deadlock"})
    ReviewService(paused_engine).audit_refusal(other, "approve", None, "mallory", "not signed in, and the "
                                               "approval came from a browser tab opened before the edit, " * 4)
    open_incident(app, other)
    open_tab(app, other, "Audit trail")
    table = next(d for d in app.dataframe if "what happened" in d.value.columns)
    longest = max(len(t) for t in table.value["what happened"])
    shortest = min(len(t) for t in table.value["what happened"])
    assert 60 < shortest < longest  # more than one line of the column
    # about 43 characters a line of the 360 px column, 20 px a line
    assert table.proto.row_height > 64 and table.proto.row_height >= 20 * math.ceil(shortest / 43)
    # b-audit-java.png: "checkpoint after" was clipped at the right edge (400 + 400 px text columns):
    # the four columns fit the page's 980 px at 1440
    widths = {name: c["width"] for name, c in json.loads(table.proto.columns).items() if "width" in c}
    assert len(widths) == 4 and all(isinstance(w, int) for w in widths.values()) and sum(widths.values()) <= 960, widths
    # a sentence longer than six lines of its column reads in full below
    [entry] = [e for e in app.expander if "longer than a row" in e.label]
    assert any(longest_text in t.value for t in entry.text
               for longest_text in [max(table.value["what happened"], key=len)])


def test_the_audit_trail_reads_as_sentences_and_exports_as_csv_or_json(app, paused_engine):
    """No action codes (approve_partial), graph words (as_node=rca) or JSON blobs: who did what, what changed."""
    from pipeline.review.service import ReviewService

    review = ReviewService(paused_engine)
    paused_engine.settings = paused_engine.settings.model_copy(update={"two_person": ("critical",)})
    critical = next(r["incident_id"] for r in paused_engine.records.incidents() if r["severity"] == "critical")
    review.approve(critical, reviewer="ann")
    other = _by_service(paused_engine, "loyalty-service")
    before = paused_engine.records.incident(other)["category"]
    review.edit(other, reviewer="bob", edits={"rca.category": "db_deadlock"})
    seen = {}
    for incident in (critical, other):
        open_incident(app, incident)
        open_tab(app, incident, "Audit trail")
        table = next(d.value for d in app.dataframe if "what happened" in d.value.columns)
        seen[incident] = " | ".join([*table["what happened"], *table["note"]])
        assert not {"before", "after", "action"} & set(table.columns)
        assert {b.label for b in app.get("download_button")} == {"Download audit (CSV)", "Download audit (JSON)"}
    assert seen[critical].startswith("ann gave approval 1 of 2"), seen[critical]
    said = f"bob edited the analysis, setting the category to db deadlock (was {before.replace('_', ' ')})"
    assert said in seen[other], seen[other]
    assert "what follows the root cause analysis ran again" in seen[other]
    for text in seen.values():
        assert "approve_partial" not in text and "as_node" not in text and "{" not in text, text


def test_the_recommendation_says_its_first_step_once(app, paused_engine):
    """The recommendation repeated step 1 as the paragraph above the numbered steps (the analyst writes
    the action as the cause, then step 1): the paragraph keeps the cause, the step is said once."""
    incident = _by_service(paused_engine, "checkout-api")
    doc = ReviewService(paused_engine).incident(incident)
    first = doc["recommendation"]["steps"][0]
    assert doc["recommendation"]["action"].endswith(first)
    open_incident(app, incident)
    # what the page says outside "What the similar docs say" (whose doc remediation may list the same step)
    said_ = [unescape(m.value) for m in app.markdown] + [str(t.value) for t in app.text if not str(t.value).startswith("• ")]
    assert sum(s.count(first[:60]) for s in said_) == 1, said_
    assert any(s.startswith("HikariPool-1 is exhausted; requests gave up") and first[:20] not in s for s in said_)
    steps = next(str(t.value) for t in app.text if str(t.value).startswith("1. "))
    assert steps.splitlines()[1].startswith("2. ")  # a numbered list


def test_a_link_to_an_unknown_incident_names_it_and_offers_the_others_by_their_titles(app, paused_engine):
    """The page said "incident INC-… not found" over a list of bare ids: a new user could neither tell
    what went wrong with the link nor which incident to open instead."""
    open_incident(app, "INC-20990101-ffffff")
    [error] = [unescape(e.value) for e in app.error]
    assert error.startswith("The link's incident INC-20990101-ffffff was not found here"), error
    assert "go back to the inbox" in error
    assert any(b.label == "Back to the inbox" for b in app.button)
    pick = app.selectbox(key="incident_pick")
    row = paused_engine.records.incidents()[0]
    options = list(pick.options)  # the id, its status and its title
    assert f"{row['incident_id']} · awaiting approval · {readable_title(row['title'])[:80]}" in options, options


def test_the_analysis_names_its_category_in_words_as_the_edit_form_does(app, paused_engine):
    incident = _by_service(paused_engine, "checkout-api")
    category = paused_engine.records.incident(incident)["category"]
    assert "_" in category
    open_incident(app, incident)
    badges = [m.value for m in app.markdown if "badge[" in m.value and ":material/category:" in m.value]
    assert badges and category.replace("_", " ") in badges[0] and category not in badges[0], badges


def test_after_a_fork_the_panel_says_whose_analysis_it_is_and_that_its_confidence_is_capped(app, paused_engine):
    """a-node-top.png: carol's fork read "the analysis of … (the analyst's first)", and its 30% (capped: no
    event shows her category) "the analyst's confidence in its own answer"."""
    incident = _by_service(paused_engine, "checkout-api")
    ReviewService(paused_engine).fork(incident, checkpoint_id=_rca_checkpoint(paused_engine, incident),
                                      reviewer="carol", edits={"rca.category": "db_deadlock"})
    open_incident(app, incident)
    deciding = [unescape(c.value) for c in app.caption if "Deciding on" in c.value]
    assert deciding and "(forked by carol)" in deciding[0] and "analyst's first" not in deciding[0], deciding
    said_about = [c.value for c in app.caption if "set the category by hand" in c.value]
    assert said_about and "capped at" in said_about[0], said_about
    assert "its own answer" not in said_about[0]


def test_a_sampled_analysis_of_every_event_reads_as_done_not_as_missing_work():
    """After a replay on all 62 events the state quotes 50 (first 10, latest 40): "50 of 62" read as
    work left undone (issue 38.1); an older checkpoint's analysis still says what it rests on."""
    from workbench.event_counts import sample_words

    times = [f"2026-11-28T10:{m:02d}:00+00:00" for m in range(50)]
    doc = {"event_count": 62, "events_since_analysis": 0, "last_seen": "2026-11-28T10:49:00Z",
           "state": {"evidence": [{"time": t} for t in times]}}
    assert sample_words(doc) == "all analysed, 50 quoted as a sample"
    assert sample_words({**doc, "last_seen": "2026-11-28T11:30:00Z"}) is None  # newer events it never saw
    assert sample_words({**doc, "events_since_analysis": 12}) is None


def test_a_replay_is_a_persons_rerun_not_an_edit_nor_the_analysts_first(app, paused_engine, tmp_path):
    """72-1024-history.png: a replay on the current evidence was drawn as an orange "edited" point and
    the panel then said "(the analyst's first)" though bob had re-run it (issue 38.7)."""
    from workbench.timeline import RERUN, SOURCE_WORDS, kind_of

    incident = _by_service(paused_engine, "checkout-api")
    review = ReviewService(paused_engine)
    head = paused_engine.records.incident(incident)["pending_checkpoint_id"]
    review.replay(incident, checkpoint_id=head, reviewer="bob", with_current_evidence=True)
    kinds = {kind_of(n) for n in review.tree(incident)["nodes"] if n.get("human_action") == "replay"}
    assert RERUN in kinds and SOURCE_WORDS["update"] not in kinds, kinds
    open_incident(app, incident)
    deciding = [unescape(c.value) for c in app.caption if "Deciding on" in c.value]
    assert deciding and "(re-run by bob)" in deciding[0] and "analyst's first" not in deciding[0], deciding


def test_the_analysts_notes_say_categories_in_words(app, paused_engine):
    """A walkthrough (session 51): the answer to a request for changes read "the category null_reference
    stands" under Analyst notes, the code where the page says categories in words."""
    incident = _by_service(paused_engine, "loyalty-service")
    ReviewService(paused_engine).revise(incident, reviewer="bob", feedback="this is db pool exhaustion")
    open_incident(app, incident)
    shown = "\n".join(t.value for t in app.text)
    assert "Reviewer request 1" in shown, shown
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", shown.split("Reviewer request 1", 1)[1].split("\n")[0]), shown
