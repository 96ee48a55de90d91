"""What every page shares in one browser session: the cached runtime, the reviewer's identity,
and showing our errors as messages (never a traceback)."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import streamlit as st

from pipeline import config
from pipeline.errors import Conflict, IncidentIQError
from workbench.runtime import Workbench, open_workbench, stop_workbench

REVIEWER_KEY = "app_reviewer_name"


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


@contextlib.contextmanager
def reported(container=None) -> Iterator[None]:
    """Run an action; our errors become a message in the page (conflicts as a warning)."""
    where = container or st
    try:
        yield
    except Conflict as exc:
        where.warning(exc.message, icon="⚠️")
    except IncidentIQError as exc:
        where.error(exc.message, icon="🚫")


def flash(scope: str, kind: str, text: str) -> None:
    """Keep a message for the next time `show_flashes(scope)` runs (callbacks run before the page)."""
    st.session_state.setdefault("app_flash", {}).setdefault(scope, []).append((kind, text))


def show_flashes(scope: str) -> None:
    """Show and forget the messages kept for `scope`; their text is escaped (it may quote data)."""
    from workbench.evidence_view import escape_markdown

    for kind, text in st.session_state.get("app_flash", {}).pop(scope, []):
        getattr(st, kind)(escape_markdown(text))


def report_error(scope: str, exc: IncidentIQError, *, doing: str) -> None:
    """Keep one of our errors as a message: conflicts as warnings, the rest as errors."""
    kind = "warning" if isinstance(exc, Conflict) else "error"
    flash(scope, kind, f"{doing} failed: {exc.message}")
