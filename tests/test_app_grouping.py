"""The incident page's Grouping panel (AppTest): a reviewer merges another paused incident into the
one on screen and splits its pattern back out, each with a reason; both incidents say where they
came from."""
from tests.support import as_reviewer, open_incident, said, texts


def _by_service(engine, service: str) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == service)


def test_merge_in_then_split_out_from_the_incident_page(app, paused_engine):
    kept, other = _by_service(paused_engine, "checkout-api"), _by_service(paused_engine, "promo-engine")
    events = paused_engine.records.incident(kept)["event_count"] + paused_engine.records.incident(other)["event_count"]
    as_reviewer(app, "alice")
    open_incident(app, kept)
    app.selectbox(key=f"grouping_{kept}_merge_choice").select(other)
    app.button(key=f"grouping_{kept}_merge").click().run()
    assert "a reason for the merge is required" in said(app, "error")
    assert paused_engine.records.incident(other)["status"] == "awaiting_approval"

    app.selectbox(key=f"grouping_{kept}_merge_choice").select(other)
    app.text_input(key=f"grouping_{kept}_merge_reason").input("one outage: the promo call fails at checkout")
    app.button(key=f"grouping_{kept}_merge").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert f"{other} merged into this incident" in said(app, "success")
    assert paused_engine.records.incident(other)["status"] == "merged"
    assert paused_engine.records.incident(kept)["event_count"] == events
    assert f"{other} was merged into it" in texts(app)
    (entry,) = [a for a in paused_engine.records.audit(kept) if a["action"] == "merge"]
    assert (entry["reviewer"], entry["note"]) == ("alice", "one outage: the promo call fails at checkout")

    (pattern,) = app.selectbox(key=f"grouping_{kept}_split_choice").options
    app.text_input(key=f"grouping_{kept}_split_reason").input("two causes after all")
    app.button(key=f"grouping_{kept}_split").click().run()
    assert not app.exception, [e.value for e in app.exception]
    (split,) = [r for r in paused_engine.records.incidents() if r["link_kind"] == "split"]
    assert f"Split out as {split['incident_id']}" in said(app, "success")
    assert split["linked_to"] == kept and split["status"] == "awaiting_approval" and split["service"] == "promo-engine"
    open_incident(app, split["incident_id"])
    assert f"Split out of {kept}" in texts(app)


def test_a_merged_incident_says_where_its_events_went_and_takes_no_decision(app, paused_engine):
    from pipeline.review.service import ReviewService

    kept, other = _by_service(paused_engine, "checkout-api"), _by_service(paused_engine, "promo-engine")
    ReviewService(paused_engine).merge(other, into=kept, reason="one outage", reviewer="ann")
    as_reviewer(app, "alice")
    open_incident(app, other)
    assert f"Merged into {kept}" in texts(app) and "merged into another incident" in texts(app)
    assert not [b for b in app.button if b.key and b.key.endswith(("_approve", "_reject", "_merge", "_split"))]
    app.switch_page("app_pages/inbox.py")
    app.query_params["show"] = "decided"
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    titles = list(app.dataframe(key="inbox_table").value["title"])
    assert any(t.startswith(f"merged into {kept} · ") for t in titles), titles
