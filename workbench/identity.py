"""Who is using this browser session, and what they may do: the sign-in mode, the actor, the
reason a control is disabled, and the sidebar's identity block.

Two modes (docs/USAGE.md "Signing in to the web app"). `oidc` whenever `[auth]` is configured in
`.streamlit/secrets.toml` (Streamlit then has `st.user.is_logged_in`), whatever INCIDENTIQ_AUTH
says, so the secrets file alone decides whether names are verified; also when INCIDENTIQ_AUTH=oidc
without `[auth]`, where nobody can sign in and nothing can be decided. Otherwise `demo`: a typed
name, remembered for the browser in a cookie so a reload, a deep link or a new tab keeps it.

Signed out (oidc) or nameless (demo), a person reads every page and decides nothing: each deciding
control is disabled with the reason, and the review service refuses anyway.
"""
from __future__ import annotations

import json
from urllib.parse import quote, unquote

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pipeline import config
from pipeline.config import Settings
from pipeline.errors import Refused
from pipeline.services import Actor, actor_from_claims, demo_actor

NAME_KEY = "app_reviewer_name"
COOKIE = "iiq_reviewer"
COOKIE_WRITTEN_KEY = "app_reviewer_cookie"
COOKIE_DAYS = 30
NAME_CHARS = 80  # a self-declared name: enough for "Firstname Lastname (team)", never a pasted page
DEMO_BANNER = "Demo mode: names are self-declared, not verified"
VERBS = {"approve": "decide", "reject": "decide", "revise": "decide", "edit": "edit", "replay": "replay or fork",
         "fork": "replay or fork", "assign": "assign", "unassign": "assign", "comment": "comment",
         "judge": "judge backtest answers"}


_RUN_USER: dict[str, tuple[int, dict]] = {}  # session id -> (the run's cursors' id, st.user as a dict)


def _user() -> dict:
    """st.user as a dict, read once per script run: each read of st.user looks the secrets' [auth]
    section up again, and a page asked 15 times per rerun (~60 ms of a click under load)."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return st.user.to_dict()
    run = id(ctx.cursors)  # a new dict each run (ScriptRunContext.reset)
    kept = _RUN_USER.get(ctx.session_id)
    if kept is None or kept[0] != run:
        kept = _RUN_USER[ctx.session_id] = (run, st.user.to_dict())
        if len(_RUN_USER) > 1000:  # sessions come and go: keep the table small
            _RUN_USER.pop(next(iter(_RUN_USER)))
    return kept[1]


def auth_configured() -> bool:
    """`[auth]` is set up for Streamlit's sign-in (st.user then always carries `is_logged_in`)."""
    return "is_logged_in" in _user()


def mode() -> str:
    """`oidc` when `[auth]` is configured or INCIDENTIQ_AUTH=oidc, else `demo`."""
    return "oidc" if auth_configured() else config.raw("INCIDENTIQ_AUTH")


def signed_in() -> bool:
    return bool(_user().get("is_logged_in"))


def typed_name() -> str:
    return str(st.session_state.get(NAME_KEY) or "").strip()


def actor(settings: Settings) -> Actor | None:
    """The person acting in this session, or None (signed out, no name, or a sign-in without identity)."""
    try:
        if mode() == "oidc":
            return actor_from_claims(dict(_user()), settings) if signed_in() else None
        name = typed_name()
        return demo_actor(name, settings) if name and len(name) <= NAME_CHARS else None
    except Refused:
        return None


def blocked(settings: Settings, action: str) -> str | None:
    """Why this session may not `action` (one sentence for a disabled control), or None when it may."""
    verb = VERBS.get(action, action)
    if mode() == "oidc":
        if not auth_configured():
            return ("Sign-in is not configured: INCIDENTIQ_AUTH=oidc needs an [auth] section in "
                    ".streamlit/secrets.toml, so nobody can decide here.")
        if not signed_in():
            return f"Sign in to {verb}."
    elif not typed_name():
        # a narrow window starts with the sidebar closed (workbench/narrow_window.py): say how to open it
        return f"Enter your name in the sidebar to {verb}. Closed, it opens with » at the top left."
    elif len(typed_name()) > NAME_CHARS:
        return f"Your name is {len(typed_name())} characters long; shorten it to at most {NAME_CHARS} to {verb}."
    who = actor(settings)
    if who is None:
        return "Your sign-in names no email or subject: sign out and in again."
    if not who.may(action):
        need = "admin" if action in ("replay", "fork", "settings") else "reviewer"
        return f"Your role ({', '.join(who.roles) or 'none'}) may not {verb}: that needs {need}."
    return None


# -- the sidebar ---------------------------------------------------------------------------------

def banner() -> None:
    """The demo banner at the top of every page (nothing in oidc mode)."""
    if mode() == "demo":
        st.warning(f"{DEMO_BANNER}: anyone may act as anyone. Configure sign-in ([auth] in "
                   ".streamlit/secrets.toml) to verify who decides.", icon=":material/badge:")


def sidebar(settings: Settings) -> None:
    """Who you are and your role; sign in / out (oidc) or your name (demo)."""
    if mode() == "oidc":
        _oidc_block(settings)
    else:
        _demo_block(settings)


def _oidc_block(settings: Settings) -> None:
    if not auth_configured():
        st.error(blocked(settings, "approve"))
        return
    if not signed_in():
        st.caption("Signed out: you can read, not decide.")
        st.button("Log in to decide", on_click=st.login, key="app_login", type="primary")
        return
    who = actor(settings)
    if who is None:
        st.error(blocked(settings, "approve"))
    else:
        st.text(f"{who.name} ({who.id})")
        st.caption(f"Role: {', '.join(who.roles)} · signed in (oidc)")
    st.button("Log out", on_click=st.logout, key="app_logout")


def _demo_block(settings: Settings) -> None:
    cookie = st.context.cookies.get(COOKIE)
    remembered = unquote(cookie).strip() if isinstance(cookie, str) else ""  # (AppTest's client has no cookies)
    if NAME_KEY not in st.session_state and COOKIE_WRITTEN_KEY not in st.session_state:
        # a new browser session (reload, deep link, new tab): the name this browser typed last
        st.session_state[NAME_KEY] = remembered
    st.session_state.setdefault(COOKIE_WRITTEN_KEY, remembered)
    st.text_input("Your name", key=NAME_KEY, persist_state="session", placeholder="recorded with each decision",
                  help="Self-declared (demo mode): every decision, edit, replay and fork is recorded in the audit "
                       "trail under this name. This browser remembers it.")
    who = actor(settings)
    if who is not None:
        # plain text: a name is what someone typed ("**boss**", a link) and reads as typed
        st.text(f"Acting as {who.name} · role: {', '.join(who.roles)} · demo (not verified)")
    elif len(typed_name()) > NAME_CHARS:
        st.error(f"A name holds at most {NAME_CHARS} characters (this one has {len(typed_name())}).")
    name = typed_name()[:NAME_CHARS]
    if name != st.session_state[COOKIE_WRITTEN_KEY]:
        _remember(name)
        st.session_state[COOKIE_WRITTEN_KEY] = name


def _remember(name: str) -> None:
    """Write (or, for no name, clear) the browser's cookie: st.context.cookies only reads.

    The value is percent-encoded, so the script holds only [A-Za-z0-9%._~-] of what was typed."""
    value = quote(name, safe="")
    age = COOKIE_DAYS * 86400 if name else 0
    cookie = json.dumps(f"{COOKIE}={value}; path=/; max-age={age}; samesite=lax")
    st.html(f"<script>document.cookie = {cookie};</script>", unsafe_allow_javascript=True)
