"""What every page shares in one browser session: the cached runtime, the reviewer's identity,
and showing our errors as messages (never a traceback)."""
from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Iterator

import streamlit as st

from pipeline import config
from pipeline.errors import Conflict, IncidentIQError
from workbench.runtime import Workbench, open_workbench, stop_workbench

REVIEWER_KEY = "app_reviewer_name"
ACTING_KEY = "app_acting"


@st.cache_resource(show_spinner="Opening the data dir…", max_entries=1, on_release=stop_workbench)
def _runtime(data_dir: str, source: str, poller_mode: str) -> Workbench:
    # one runtime per process; a new data dir (tests) releases the old one and stops its poller
    return open_workbench(data_dir=data_dir, source=source, poller_mode=poller_mode)


def workbench() -> Workbench:
    """The runtime of the configured data dir, created once per process."""
    return _runtime(str(Path(config.raw("INCIDENTIQ_DATA_DIR")).resolve()), config.raw("INCIDENTIQ_SOURCE"),
                    config.raw("INCIDENTIQ_POLLER") or "on")


def auth_configured() -> bool:
    """Streamlit auth is set up (st.user then carries `is_logged_in`)."""
    return "is_logged_in" in st.user.keys()


def reviewer() -> str | None:
    """Who decides: the logged-in user when auth is configured, else the name entered this session."""
    if auth_configured():
        if not st.user.get("is_logged_in"):
            return None
        return str(st.user.get("email") or st.user.get("name") or "").strip() or None
    name = str(st.session_state.get(REVIEWER_KEY) or "").strip()
    return name or None


def reviewer_widget() -> None:
    """The sidebar's identity block: login/logout with auth, a name field otherwise."""
    if auth_configured():
        if st.user.get("is_logged_in"):
            st.caption(f"Signed in as {reviewer()}")
            st.button("Log out", on_click=st.logout, key="app_logout")
        else:
            st.button("Log in to decide", on_click=st.login, key="app_login", type="primary")
        return
    st.text_input("Your name", key=REVIEWER_KEY, persist_state="session", placeholder="recorded with each decision",
                  help="Every decision, edit, replay and fork is recorded in the audit trail under this name.")


# Callbacks that act (decide, edit, replay, fork) read everything they need from st.session_state
# first and then touch only plain objects. With Streamlit's fast reruns a second click starts a
# new run in another thread while the first callback is still acting, and in the first run every
# later st.* call *and every session-state access* raises StopException: a decision already sent
# would then lose its message, or a marker set without its decision would block the retry.


def message_box(scope: str) -> list:
    """The list of (kind, text) messages kept for `scope`; get it before acting, append after."""
    return st.session_state.setdefault("app_flash", {}).setdefault(scope, [])


def show_messages(scope: str) -> None:
    """Show the messages kept for `scope` and empty the list in place (an acting callback may
    still hold it). Their text is escaped: it may quote data."""
    from workbench.evidence_view import escape_markdown

    box = message_box(scope)
    shown, box[:] = list(box), []
    for kind, text in shown:
        getattr(st, kind)(escape_markdown(text))


def error_message(exc: IncidentIQError, *, doing: str) -> tuple[str, str]:
    """One of our errors as a message: conflicts as warnings, the rest as errors."""
    return ("warning" if isinstance(exc, Conflict) else "error"), f"{doing} failed: {exc.message}"


def acting_registry() -> dict:
    """Incidents this browser session is acting on right now (get it before acting)."""
    return st.session_state.setdefault(ACTING_KEY, {})


@contextlib.contextmanager
def acting_on(registry: dict, incident_id: str) -> Iterator[None]:
    """Mark an action on the incident as running; the page waits for it (`wait_while_acting`)
    instead of drawing a half-changed incident in a second click's run."""
    registry[incident_id] = time.monotonic()
    try:
        yield
    finally:
        registry.pop(incident_id, None)


def wait_while_acting(incident_id: str, timeout: float = 120.0) -> None:
    """Return once no action of this session on the incident is running (or after `timeout`)."""
    registry = acting_registry()
    deadline = time.monotonic() + timeout
    while incident_id in registry and time.monotonic() < deadline:
        time.sleep(0.05)
