"""The inbox page through AppTest: what a reviewer sees first and how an incident is opened."""
from tests.support import open_incident, paused_ids, texts


def _listed(at) -> list[str]:
    return list(at.dataframe(key="inbox_table").value["incident_id"]) if at.dataframe else []


def test_inbox_lists_the_incidents_awaiting_approval_by_sla(app, paused_engine):
    expected = [r["incident_id"] for r in paused_engine.records.incidents(status="awaiting_approval", order="inbox")]
    assert len(expected) == 4
    assert _listed(app) == expected
    awaiting = next(m for m in app.metric if m.label == "Awaiting")
    assert awaiting.value == "4"


def test_search_narrows_the_inbox_to_matching_incidents(app, paused_engine):
    app.text_input(key="inbox_search").input("loyalty").run()
    listed = _listed(app)
    assert len(listed) == 1
    assert paused_engine.records.incident(listed[0])["service"] == "loyalty-service"


def test_decided_filter_shows_closed_incidents_only(app, paused_engine):
    from pipeline.review.service import ReviewService

    first = paused_ids(paused_engine)[0]
    ReviewService(paused_engine).reject(first, reviewer="bob", reason="noise")
    app.button_group(key="inbox_filter").set_value("decided").run()
    assert _listed(app) == [first]


def test_opening_an_incident_from_the_inbox_shows_its_page(app, paused_engine):
    target = paused_ids(paused_engine)[1]
    app.selectbox(key="inbox_pick").select(target).run()
    app.button(key="inbox_open_button").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.query_params.get("incident") in (target, [target])
    assert target in texts(app)


def test_an_unknown_incident_is_a_message_not_a_traceback(app):
    open_incident(app, "INC-20990101-ffffff")
    assert any("not found" in e.value for e in app.error)


def test_the_reviewers_filter_and_search_survive_a_visit_to_an_incident(app, paused_engine):
    app.button_group(key="inbox_filter").set_value("all").run()
    app.text_input(key="inbox_search").input("inventory").run()
    open_incident(app, paused_ids(paused_engine)[0])
    app.switch_page("app_pages/inbox.py").run()
    assert app.button_group(key="inbox_filter").value == "all"
    assert app.text_input(key="inbox_search").value == "inventory"
    assert [paused_engine.records.incident(i)["service"] for i in _listed(app)] == ["inventory-service"]
