"""Walkthrough s59 (issue 38, "words a reviewer should not need"): counts said as a sentence says
them through the one helper, analyst notes that name what matched in words (never a regex), the
paused state as labelled fields, and no internal ids in what the pages say."""
from __future__ import annotations

import ast
import re

import pytest

from pipeline.state import counted
from tests.support import ROOT, offline_rca


def test_counted_says_one_thing_and_many_things():
    assert counted(1, "signature") == "1 signature"
    assert counted(3, "signature") == "3 signatures"
    assert counted(0, "finding") == "0 findings"
    assert counted(2, "branch", "branches") == "2 branches"
    assert counted(1.5, "minute") == "1.5 minutes"


def test_the_analysts_note_says_1_signature_found(offline_analyst):
    """Defect 2: the offline analyst's first note read "(1 signatures found)"."""
    rca = offline_rca(offline_analyst, "java.net.ConnectException: Connection refused")
    assert rca.notes[0].endswith("(1 signature found)"), rca.notes
    rca = offline_rca(offline_analyst, "ENOSPC: no space left on device, write '/var/lib/app/cache.bin'")
    assert rca.notes[0].endswith("(2 signatures found)"), rca.notes


# reviewer-facing modules: the pages, the workbench's parts, and the analyst's and the review's sentences
SAID_BY = [*ROOT.glob("app_pages/*.py"), ROOT / "app.py", *ROOT.glob("workbench/*.py"), *ROOT.glob("pipeline/analyst/*.py"),
           *ROOT.glob("pipeline/review/*.py"), ROOT / "pipeline/engine/nodes.py", ROOT / "pipeline/cli/review.py"]
HAND_PLURAL = re.compile(r"[a-z]\((?:s|es)\)")


def _strings(path):
    """The string literals of a module (f-strings' literal parts too), docstrings left out."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


@pytest.mark.parametrize("path", SAID_BY, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reviewer_facing_text_counts_with_a_hand_made_plural(path):
    """Defect 2: "secret(s)", "finding(s)", "event(s)", "revision(s)": a count goes through `counted`."""
    found = [(line, text) for line, text in _strings(path) if HAND_PLURAL.search(text) and "http(s)" not in text]
    assert not found, found


REGEX_SYNTAX = re.compile(r"\bre:|\(\?[a-z]+\)|\\[dswb]|\[\^|\]\+|\.\*")


def test_a_category_a_reviewer_set_is_noted_with_what_matched_in_words_never_a_regex(offline_analyst):
    """Defect 3: after a reviewer set the category (an edit, a fork), the note naming what the evidence
    supports instead quoted the doc's raw signatures ("re:could not connect to server: Connection
    refused"); it says what they matched in the events, and names the doc so the page titles it."""
    from pipeline.knowledge.retrieval import find_similar
    from pipeline.state import IncidentState
    from tests.support import analyst_events
    from workbench.literal import analysis_text

    line = "psycopg2.OperationalError: could not connect to server: Connection refused"
    state = IncidentState(incident_id="INC-t", service="svc", evidence=analyst_events(line, line))
    state = state.model_copy(update={"similar_docs": find_similar(offline_analyst.kb, state.evidence)})
    rca = offline_analyst.set_by_reviewer(state, "dns_resolution", "ann")
    notes = "\n".join(rca.notes)
    assert "could not connect to server: Connection refused" in notes, notes
    assert not REGEX_SYNTAX.search(notes), notes
    shown = analysis_text(notes)
    assert "the doc \u201c" in shown and "python-connection-refused" not in shown, shown


@pytest.mark.parametrize("signature, evidence, said", [
    (r"re:could not connect to server: Connection refused", "x: could not connect to server: Connection refused", "could not connect to server: Connection refused"),
    (r"re:dial tcp [\d.:\[\]a-f]+: connect: connection refused", "dial tcp 10.0.3.9:6379: connect: connection refused", "dial tcp 10.0.3.9:6379: connect: connection refused"),
    (r"re:dial tcp [\d.:\[\]a-f]+: connect: connection refused", "", "dial tcp …: connect: connection refused"),
    (r"re:(?i)(read|write) tcp [^ ]+: broken pipe", "", "read/write tcp …: broken pipe"),
    ("No space left on device", "ENOSPC", "No space left on device"),
])
def test_a_signature_is_said_by_what_it_matched_or_its_words(signature, evidence, said):
    from pipeline.services import signature_words

    assert signature_words(signature, evidence) == said


def test_the_state_tab_shows_the_paused_state_as_labelled_fields_and_its_json_behind_an_expander(app, paused_engine):
    """Defect 4: the State tab was the paused state's raw JSON (`rca.doc_ids`, `awaiting_approval`, node
    names); it is read as labelled fields in the reviewer's words now, the JSON one click away."""
    from tests.support import open_incident, open_tab, texts
    from workbench.state_view import RAW_LABEL

    row = next(r for r in paused_engine.records.incidents() if r["service"] == "inventory-service")
    open_incident(app, row["incident_id"])
    open_tab(app, row["incident_id"], "State")
    raw = next(e for e in app.expander if e.label == RAW_LABEL)
    assert len(raw.get("json")) == len(app.get("json")) == 1  # the JSON only behind the expander
    said = texts(app)
    state = paused_engine.records.incident(row["incident_id"])["summary"]
    category = row["category"].replace("_", " ")
    assert f"Category: {category}" in said and f"Confidence: {row['confidence']:.0%}" in said, said
    for label in ("Root cause", "Analyst notes", "Steps that ran", "Steps"):
        assert label in [c.value for c in app.caption], label
    assert "Root cause analysis: " in said  # the steps in words, not "rca: …"
    tab = next(t for t in app.tabs if t.label == "State")
    outside = "\n".join(str(e.value) for kind in ("text", "caption", "markdown") for e in tab.get(kind))
    internal = re.findall(r"\b(?:rca|rag|propose_fix|awaiting_approval|doc_ids|root_cause)\b|\bre:|\b[a-z]+_[a-z_]+\b", outside)
    assert not internal, internal
    assert state["recommendation"]["action"][:40] in said


HEX_RUN = re.compile(r"\b[0-9a-f]{8,}\b")


def test_a_saved_edit_names_its_checkpoint_as_history_does_and_history_shows_no_hash(app, paused_engine):
    """Defect 5: "Saved as a new checkpoint in the history (9c1f03e2)" named the checkpoint by its id's
    hex digits, and History's diff showed the proposal's 64-digit hash before and after; the message
    names it as History's chart does ("#7 …"), and the diff leaves the hash out (its plan and diff say
    what changed)."""
    from tests.support import as_reviewer, open_incident, open_tab, said

    row = next(r for r in paused_engine.records.incidents() if r["service"] == "inventory-service")
    incident = row["incident_id"]
    as_reviewer(app, "alice")
    open_incident(app, incident)
    open_tab(app, incident, "State")
    form = f"incident_state_{paused_engine.records.incident(incident)['pending_interrupt_id'][:12]}"
    app.selectbox(key=f"{form}_rca.category").set_value("upstream_timeout")
    app.button(key=f"{form}_save").click().run()
    message = said(app, "success")
    assert re.search(r"Saved as a new checkpoint in the history, #\d+ ", message), message
    assert not HEX_RUN.search(message), message
    open_tab(app, incident, "History & time travel")
    cells = [str(v) for d in app.dataframe for col in d.value.columns for v in d.value[col]]
    assert not [c for c in cells if HEX_RUN.search(c)], [c for c in cells if HEX_RUN.search(c)]


def test_a_steps_note_is_said_without_its_hash():
    from workbench.audit_words import trace_words

    assert trace_words("propose_fix: no diff · 7e2178976152") == "Fix proposal: no diff"
    assert trace_words("code_fix: attempt 1 · 7e2178976152 (already recorded)") == "Recorded fix: attempt 1 (already recorded)"
