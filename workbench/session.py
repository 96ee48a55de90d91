"""What every page shares in one browser session: the cached runtime, the reviewer's identity,
and showing our errors as messages (never a traceback)."""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Iterator

import streamlit as st

from pipeline import config
from pipeline.errors import Conflict, IncidentIQError
from pipeline.services import Actor
from workbench import identity
from workbench.runtime import Workbench, open_workbench, stop_workbench

REVIEWER_KEY = identity.NAME_KEY
ACTING_KEY = "app_acting"


def warm_streamlit() -> None:
    """What Streamlit loads on the first run that needs it, loaded by the runtime's background warm-up
    instead: the emoji catalog, whose one regular expression over every emoji is compiled by the first
    message (st.success, st.warning, …) with a character outside ASCII in it ("Approval recorded …
    — …"): 150-280 ms of one reviewer's click at load 6-8, once per process."""
    import streamlit.emojis  # noqa: F401


# the runtime `_runtime` last returned, under the settings it was asked for (with the working dir, which a
# relative data dir is resolved against), until its cache entry is released: a page's run asks for the
# runtime about ten times, and each of the cache's lookups (the path resolved, the arguments hashed) cost
# 0.8-1.5 ms at load 9, 10-15 ms of every run, a pick in the History tab or a tab's click alike
_current: dict[tuple, Workbench] = {}


def _released(workbench: Workbench) -> None:
    _current.clear()
    stop_workbench(workbench)


@st.cache_resource(show_spinner="Opening the data dir…", max_entries=1, on_release=_released)
def _runtime(data_dir: str, source: str, poller_mode: str, auth: str) -> Workbench:
    # one runtime per process; a new data dir (tests) releases the old one and stops its poller
    return open_workbench(data_dir=data_dir, source=source, poller_mode=poller_mode, auth=auth, warm=warm_streamlit)


def workbench() -> Workbench:
    """The runtime of the configured data dir, created once per process."""
    # the sign-in mode is part of the settings: it decides the role of a person nobody maps
    data_dir = config.raw("INCIDENTIQ_DATA_DIR")
    # the working dir only for a relative data dir (the default ./data): os.getcwd() lets go of the
    # interpreter lock, and a page's run asks about ten times, each a wait for it back under load
    asked = (data_dir, config.raw("INCIDENTIQ_SOURCE"), config.raw("INCIDENTIQ_POLLER") or "on",
             identity.mode(), "" if data_dir and os.path.isabs(data_dir) else os.getcwd())
    known = _current.get(asked)
    if known is not None and not known.stopped:  # released meanwhile (a new data dir, "Clear caches"): asked again
        return known
    got = _runtime(str(Path(asked[0]).resolve()), asked[1], asked[2], asked[3])
    _current.clear()
    _current[asked] = got
    return got


def keep_values(*keys: str) -> None:
    """Keep the values of widgets a run may not draw (a folded expander drawn only while open):
    Streamlit drops a widget's value from the session when a run does not draw it, unless it was
    set again in that run."""
    for name in keys:
        if name in st.session_state:
            st.session_state[name] = st.session_state[name]


def actor() -> Actor | None:
    """Who acts in this browser session (workbench/identity.py), or None: signed out, or no name."""
    return identity.actor(workbench().settings)


def blocked(action: str) -> str | None:
    """Why this session may not `action` (the reason a disabled control shows), or None when it may."""
    return identity.blocked(workbench().settings, action)


def reviewer() -> str | None:
    """The acting person's id (kept for callers that only name who acts; pass `actor()` to the services)."""
    who = actor()
    return who.id if who else None


# Callbacks that act (decide, edit, replay, fork) read everything they need from st.session_state
# first and then touch only plain objects. With Streamlit's fast reruns a second click starts a
# new run in another thread while the first callback is still acting, and in the first run every
# later st.* call *and every session-state access* raises StopException: a decision already sent
# would then lose its message, or a marker set without its decision would block the retry.


def message_box(scope: str) -> list:
    """The list of (kind, text) messages kept for `scope`; get it before acting, append after."""
    return st.session_state.setdefault("app_flash", {}).setdefault(scope, [])


TOAST_ICONS = {"success": ":material/check_circle:", "info": ":material/info:", "warning": ":material/warning:",
               "error": ":material/error:"}


def show_messages(scope: str, *, keep_seconds: float = 0.0, toast: bool = False) -> None:
    """Show the messages kept for `scope` and empty the list in place (an acting callback may
    still hold it). Their text is escaped: it may quote data.

    With `keep_seconds`, the runs of the next `keep_seconds` show them again (unless newer ones came):
    a page that refreshes on a timer (the inbox, every 5 s) would otherwise drop a decision's
    confirmation at its next refresh, which may come a moment after the decision's own run.

    With `toast`, each new message is also a toast, in view wherever the page is scrolled (walkthrough
    s57: a fork's confirmation was drawn at the top of its tab while the page sat at its bottom)."""
    from workbench.literal import escape_markdown

    box = message_box(scope)
    shown, box[:] = list(box), []
    if toast:
        for kind, text in shown:
            st.toast(escape_markdown(text), icon=TOAST_ICONS.get(kind))
    if keep_seconds > 0:
        kept, now = st.session_state.setdefault("app_flash_kept", {}), time.monotonic()
        if shown:
            kept[scope] = (now, shown)
        elif scope in kept and now - kept[scope][0] < keep_seconds:
            shown = kept[scope][1]
        else:
            kept.pop(scope, None)
    for kind, text in shown:
        getattr(st, kind)(escape_markdown(text))


def forget_messages(scope: str) -> None:
    """Drop what `show_messages(scope, keep_seconds=...)` keeps showing (what it said no longer holds)."""
    st.session_state.get("app_flash_kept", {}).pop(scope, None)


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
