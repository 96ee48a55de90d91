"""Narrow windows: the inbox's default columns need about 1,000 px of main area, which a window
narrower than NARROW_PX does not have beside the open sidebar (at 1024 px only the id and a cut
Title showed). There, as Streamlit itself does below 768 px, the sidebar starts closed (one click
on its arrow opens it), and the main area's side margins narrow from 5 rem to NARROW_MARGIN_PX, so the
default columns are whole at 1024 px, the page's and the table's scrollbars drawn (inbox_view.COLUMN_PX). A reviewer who opens or closes the sidebar keeps the choice:
Streamlit stores it (localStorage `stSidebarCollapsed-…`), and a stored choice is never overridden.
"""
from __future__ import annotations

import streamlit as st

# the window below which the sidebar starts closed: a 1024 px window (the sidebar's 300 px would
# leave the grid the id and a cut Title). Between this and ~1430 px the open sidebar still cuts the
# last default columns, but it holds the sign-in and the reviewer's name: a laptop's 1280 px window
# keeps it open, and its columns scroll
NARROW_PX = 1100
# the main area's side margins below NARROW_PX (Streamlit's own on a phone are 16 px)
NARROW_MARGIN_PX = 16

_HTML = """<style>
@media (max-width: %(narrow)dpx) {
  [data-testid="stMainBlockContainer"] { padding-left: %(margin)dpx; padding-right: %(margin)dpx; }
}
</style><script>
(() => {
  if (window.__iiqNarrow) return;  // once a page load: after it, the sidebar is the reviewer's
  window.__iiqNarrow = true;
  if (window.innerWidth >= %(narrow)d) return;
  const stored = () => Object.keys(window.localStorage).filter(k => k.startsWith("stSidebarCollapsed-"));
  if (stored().length) return;  // the reviewer chose before
  let tries = 0;
  const close = () => {
    const sidebar = document.querySelector('[data-testid="stSidebar"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (sidebar && button && sidebar.getAttribute("aria-expanded") !== "false") {
      button.click();
      // Streamlit stores the click as the reviewer's choice: it was not, and a wider window opens it again
      setTimeout(() => stored().forEach(k => window.localStorage.removeItem(k)), 0);
    } else if (!sidebar || !button) {
      if (tries++ < 100) setTimeout(close, 50);
    }
  };
  close();
})();
</script>"""


def fit_narrow_windows() -> None:
    """The style and script above, in a hidden container (no data goes into them)."""
    with st.container(key="narrow_window"):
        st.html("<style>.st-key-narrow_window{display:none}</style>" + _HTML % {"narrow": NARROW_PX, "margin": NARROW_MARGIN_PX},
                unsafe_allow_javascript=True)
