"""A long comment and a long or marked-up name: a pasted comment over the limit is refused
with the limit named and stays in the box; the error names no CLI flag; a reviewer's name reads
literally (never as markdown) and is bounded."""
from __future__ import annotations

from tests.support import as_reviewer, open_incident, said, texts


def _incident(engine) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == "checkout-api")


def test_a_comment_over_the_limit_is_refused_with_the_limit_and_kept_in_the_box(app, paused_engine):
    incident = _incident(paused_engine)
    as_reviewer(app, "ann")
    open_incident(app, incident)
    pasted = ("A long post-mortem pasted from the wiki. " * 600)[:23_750]
    box = f"incident_comment_{incident}_text"
    assert "4,000" in texts(app)  # the limit is said before anyone pastes
    app.text_area(key=box).input(pasted)
    app.button(key=f"incident_comment_{incident}_submit").click().run()
    assert not app.exception
    error = said(app, "error")
    assert "at most 4,000 characters" in error and "23,750" in error
    assert "--" not in error
    assert app.text_area(key=box).value == pasted  # nothing lost: shorten it and send again
    assert paused_engine.records.audit(incident) == []


def test_an_empty_comment_is_refused_without_naming_a_cli_flag(app, paused_engine):
    incident = _incident(paused_engine)
    as_reviewer(app, "ann")
    open_incident(app, incident)
    app.button(key=f"incident_comment_{incident}_submit").click().run()
    error = said(app, "error")
    assert "is required" in error and "--text" not in error


def test_a_reviewer_name_reads_literally_and_is_bounded(app, paused_engine):
    as_reviewer(app, "**boss** [me](http://evil.example)")
    assert not [m.value for m in [*app.sidebar.markdown, *app.sidebar.caption] if "evil.example" in m.value
                and "\\[" not in m.value]
    assert "Acting as **boss** [me](http://evil.example)" in [t.value.split(" · ")[0] for t in app.sidebar.text]
    as_reviewer(app, "x" * 500)
    assert "at most 80 characters" in said(app, "error")
    incident = _incident(paused_engine)
    open_incident(app, incident)
    assert "shorten it to at most 80" in texts(app)
