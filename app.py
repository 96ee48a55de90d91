"""IncidentIQ Workbench: `streamlit run app.py`.

The entrypoint declares the pages, opens the runtime of the data dir once per process (the
services the pages go through, and the background poller of INCIDENTIQ_SOURCE, `demo` by default) and draws
the sidebar every page shares. The pages live in `app_pages/`: with a folder named `pages/`,
Streamlit's first run of a process would execute a page requested by URL (/incident?...)
without this script, so without the runtime's sidebar.
"""
from pathlib import Path

import streamlit as st

from pipeline.errors import IncidentIQError
from workbench import identity, session
from workbench.literal import escape_markdown
from workbench.health import poller_light
from workbench.narrow_window import fit_narrow_windows

# a local image: a :material/...: page icon makes the browser fetch the favicon from a font CDN
# About is the one menu item (.streamlit/config.toml: toolbarMode "minimal"); no help or bug-report links
# to the internet
st.set_page_config(page_title="IncidentIQ Workbench", page_icon=str(Path(__file__).parent / "workbench" / "icon.png"),
                   layout="wide", menu_items={"About": "**IncidentIQ Workbench**: review what an AI incident analyst "
                                                       "proposes, before anything happens."})

PAGES = [
    st.Page("app_pages/inbox.py", title="Inbox", icon=":material/inbox:", default=True),
    st.Page("app_pages/incident.py", title="Incident", icon=":material/troubleshoot:", url_path="incident"),
    st.Page("app_pages/knowledge.py", title="Knowledge", icon=":material/menu_book:", url_path="knowledge"),
    st.Page("app_pages/operations.py", title="Operations", icon=":material/monitoring:", url_path="operations"),
    st.Page("app_pages/backtests.py", title="Backtests", icon=":material/compare_arrows:", url_path="backtests"),
]
navigation = st.navigation(PAGES)
# the page this browser session is on, for a page's refreshing fragment whose timer outlives it
# (app_pages/inbox.py): a fragment rerun does not run this script, a page's run does
st.session_state["app_page"] = navigation.title

try:
    workbench = session.workbench()
except IncidentIQError as exc:
    st.error(f"The workbench could not open its data dir: {exc.message}")
    st.stop()

try:
    identity.banner()
    with st.sidebar:
        st.markdown("**You**")
        identity.sidebar(workbench.settings)
        st.divider()
        poller_light(workbench)
        st.caption(f"Data dir: {escape_markdown(workbench.data_dir)}")
    fit_narrow_windows()  # a hidden element of the main area: the sidebar closed below 1100 px
    navigation.run()
except IncidentIQError as exc:  # anything of ours a page did not handle: a message, not a traceback
    st.error(escape_markdown(exc.message))
