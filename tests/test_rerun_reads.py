"""What the incident page's rerun (approve's among them) does once, not twice: `plain` maps only the
text columns that change, and a fragment's first call, made by the page's own run, does not read the
incident again."""
import pandas as pd

from workbench.incident_reads import PageRun
from workbench.literal import plain


def test_plain_shows_hidden_characters_of_a_frame_and_leaves_the_frame_read_as_it_was():
    frame = pd.DataFrame({"name": ["eve\u202e", "bob"], "note": ["ok", "fine"], "n": [1, 2],
                          "lines": [["a\u200bb"], []]})
    shown = plain(frame)
    assert shown["name"].tolist() == ["eve\u2039U+202E\u203a", "bob"]
    assert shown["lines"].tolist() == [["a\u2039U+200B\u203ab"], []]
    assert shown["note"].tolist() == ["ok", "fine"] and shown["n"].tolist() == [1, 2]
    assert frame["name"].tolist() == ["eve\u202e", "bob"] and frame["lines"].tolist() == [["a\u200bb"], []]
    assert shown is not frame


def test_a_fragment_checks_the_incident_on_its_own_reruns_only():
    page = PageRun()
    assert page.fresh()  # the page's run: it read the incident a moment ago
    assert not page.fresh() and not page.fresh()  # the fragment's timer and clicks, same arguments


def test_approves_rerun_reads_the_incidents_record_once_for_the_decision_and_once_for_the_page(
        app, paused_engine, monkeypatch):
    from pipeline.review.reads import Reads
    from tests.support import as_reviewer, open_incident, said

    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    reads = []
    document = Reads.document
    monkeypatch.setattr(Reads, "document", lambda self, *a, **k: reads.append(a) or document(self, *a, **k))
    interrupt = paused_engine.records.incident(incident)["pending_interrupt_id"]
    app.button(key=f"incident_{interrupt[:12]}_approve").click().run()
    assert "Approval recorded for alice" in said(app, "success")
    # the decision's read-back and the page's incident; the live check and the tabs' check asked
    # again on the same run before (4 reads)
    assert len(reads) == 2, reads
