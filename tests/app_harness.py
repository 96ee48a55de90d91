"""Driving the workbench with streamlit.testing.v1.AppTest from app.py, on a temp data dir with
incidents already ingested (the `paused_engine` fixture) and the background poller off."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")
INCIDENT_PAGE = "app_pages/incident.py"
TIMEOUT = 60


@pytest.fixture
def app(paused_engine, monkeypatch):
    """The workbench app on the paused engine's data dir, first run done, poller off."""
    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    yield at
    session._runtime.clear()  # releases the cached runtime (stops a poller had one started)


def as_reviewer(at: AppTest, name: str) -> AppTest:
    """Type the reviewer's name in the sidebar, as a person would."""
    return at.sidebar.text_input(key="app_reviewer_name").input(name).run()


def open_incident(at: AppTest, incident_id: str) -> AppTest:
    at.switch_page(INCIDENT_PAGE)
    at.query_params["incident"] = incident_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    """Everything the page says in messages, text, markdown and captions, for assertions
    (markdown escapes removed: `as\\_node` reads `as_node`)."""
    parts = []
    for kind in ("success", "info", "warning", "error", "text", "markdown", "caption", "title", "code"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return unescape("\n".join(parts))


def said(at: AppTest, kind: str) -> str:
    """The messages of one kind (success, info, warning, error), markdown escapes removed."""
    return unescape(" ".join(str(e.value) for e in getattr(at, kind)))


def unescape(text: str) -> str:
    import re

    return re.sub(r"\\(.)", r"\1", text)
