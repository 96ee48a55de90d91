"""Text that quotes log data or the URL is never rendered as markdown (no live
links, no remote images), and the page icon needs no fetch."""
from __future__ import annotations

from pathlib import Path

from pipeline.review.service import ReviewService
from tests.support import as_reviewer, open_incident, open_tab
from tests.support import ROOT

HOSTILE = "see [the runbook](https://evil.example/x) ![p](https://evil.example/p.png) <img src=x>"


def _unescaped_markdown(text: str) -> bool:
    """Markdown that would render a link or an image: an unescaped `](` or `![`."""
    import re

    return bool(re.search(r"(?<!\\)\]\(|(?<!\\)!\[", text))


def test_the_fork_confirmation_shows_edited_values_as_text(app, paused_engine):
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    checkpoint = next(h for h in ReviewService(paused_engine).history(incident, limit=100)
                      if h["writes_by"] == ["rca"])["checkpoint_id"]
    open_tab(app, incident, "History & time travel")  # only the open tab is computed
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    picker.select(checkpoint).run()  # by its value: the options name no id (session 57)
    form = f"incident_fork_{checkpoint[-12:]}"
    app.session_state[f"{form}_open"] = True  # the fork form is drawn while its expander is open
    app.run()
    app.text_area(key=f"{form}_rca.root_cause").input(HOSTILE)
    app.button(key=f"{form}_submit").click().run()
    assert not app.exception
    rendered = [str(e.value) for kind in ("warning", "markdown", "caption", "info") for e in getattr(app, kind)]
    # the page's own link to the checkpoint is a markdown link; the edited value must not become one
    rendered = [t for t in rendered if not t.startswith("[Link to this checkpoint](")]
    assert rendered and not any(_unescaped_markdown(t) for t in rendered)
    assert any(HOSTILE in c.value for c in app.code), [c.value[:300] for c in app.code]


def test_an_incident_id_in_the_url_is_echoed_as_text(app):
    app.switch_page("app_pages/incident.py")
    app.query_params["incident"] = "[x](https://evil.example) ![i](https://evil.example/i.png)"
    app.run()
    assert not app.exception
    errors = [str(e.value) for e in app.error]
    assert errors and not any(_unescaped_markdown(e) for e in errors)


def test_the_page_icon_is_a_local_image():
    source = (ROOT / "app.py").read_text()
    assert ":material/" not in source.split("set_page_config", 1)[1].split(")", 1)[0]
    assert Path(ROOT / "workbench" / "icon.png").read_bytes().startswith(b"\x89PNG")
