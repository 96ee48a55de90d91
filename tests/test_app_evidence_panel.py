"""The analysis's evidence filled in: the findings' event counts shown, the similar docs
led by the one the analysis rests on."""
from __future__ import annotations

from pipeline.review.service import ReviewService
from tests.support import open_incident
from workbench.evidence_view import evidence_ids, quoted_lines


def _frame(at, *columns: str):
    return next(d.value for d in at.dataframe if list(d.value.columns)[:len(columns)] == list(columns))


def test_findings_show_their_event_counts_and_the_matched_doc_leads_the_similar_docs(app, paused_engine):
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "loyalty-service")
    open_incident(app, incident)
    findings = _frame(app, "finding", "value", "events")
    assert findings["events"].tolist() and all(str(n).isdigit() and int(n) > 0 for n in findings["events"])
    matched = paused_engine.records.incident(incident)["summary"]["rca"]["doc_ids"][0]
    docs = _frame(app, "score", "doc")
    assert docs["doc"].iloc[0] == matched and docs["rests on"].tolist() == [True] + [False] * (len(docs) - 1)
    rest = docs["score"].iloc[1:].tolist()  # first because the analysis rests on it; the others best first
    assert rest == sorted(rest, reverse=True)


def test_the_findings_table_keeps_its_event_counts_in_view(app, paused_engine):
    """In the browser the counts were off the grid's right edge (a "large" value column took the
    row): the counts come right after the finding, and the columns' widths fit the analysis column
    (~540 px at 1440) so the grid has none off its edge."""
    import json

    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    open_incident(app, incident)
    table = next(d for d in app.dataframe if "finding" in list(d.value.columns))
    assert list(table.proto.column_order)[:2] == ["finding", "events"]
    widths = {name: json.loads(table.proto.columns).get(name, {}).get("width") for name in table.proto.column_order}
    assert all(isinstance(w, int) for w in widths.values()) and sum(widths.values()) <= 540, widths


def test_a_quoted_line_jumps_to_its_context_in_the_log_window(app, paused_engine):
    """From an evidence line to the source around it: the Evidence tab opens on the window's lines
    either side of it, the line itself marked; "Show the whole window" goes back to all of it."""
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    doc = ReviewService(paused_engine).incident(incident)
    first = quoted_lines(doc["rca"], doc["evidence"])[0]
    order = evidence_ids(doc["log_window"], doc["evidence"])
    at = order.index(first["event_id"])
    open_incident(app, incident)
    app.button(key="incident_context_0").click().run()
    assert not app.exception
    assert app.session_state[f"incident_tab_{incident}"] == "Evidence"
    around = next(d.value for d in app.dataframe if list(d.value.columns)[:2] == ["here", "trigger"])
    assert len(around) == min(at, 10) + 1 + min(len(order) - at - 1, 10)
    here = around[around["here"]]
    assert len(here) == 1 and here["trigger"].iloc[0] and first["text"].startswith(here["message"].iloc[0][:40])
    app.button(key="incident_context_close").click().run()
    assert not any(list(d.value.columns)[:1] == ["here"] for d in app.dataframe)


def test_the_similar_docs_table_fits_the_analysis_column_with_its_mark(app, paused_engine):
    """At 1440 px the "✓ matched" after the doc's id was cut and the last column was off the grid's
    edge ("medium" and "large" columns, 950 px, in a ~540 px column): the mark is a column of its
    own, and every column's width is in pixels within the analysis column."""
    import json

    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    open_incident(app, incident)
    table = next(d for d in app.dataframe if list(d.value.columns)[:2] == ["score", "doc"])
    config = json.loads(table.proto.columns)
    shown = list(table.proto.column_order)
    assert shown[0] == "rests on" and config["rests on"]["label"] == "✓", config
    widths = {name: config.get(name, {}).get("width") for name in shown}
    assert all(isinstance(w, int) for w in widths.values()) and sum(widths.values()) <= 540, widths
    assert not [d for d in table.value["doc"] if "✓" in d or "matched" in d]  # no mark cut at the cell's edge
    assert max(len(d) for d in table.value["doc"]) * 7 <= widths["doc"]  # the ids whole (~7 px a character)
