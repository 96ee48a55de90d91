"""Load the History tab's element bundles while the reviewer reads the incident.

Streamlit's frontend loads an element's JavaScript only when a page first draws that element, anew
in every page load: the History tab's Vega-Lite timeline needs about 0.9 MB of it (the chart
element, vega-embed and their parts), which the browser fetched, compiled and ran after the tab's
click, before the timeline could be drawn. A small script (st.html with its JavaScript allowed, as
workbench/inbox_actions.py's key listener) imports those same modules once the browser is idle
after the incident page is drawn; the tab's click then finds them loaded. Nothing changes but when
they load: a bundle whose file is not found (another Streamlit version names its files
differently) is simply not warmed."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import streamlit as st

# the lazily loaded modules the History tab draws with: the chart element, vega-embed (which the
# chart element itself loads only when it draws), JSON, the toggle and the number input of the fork form
BUNDLES = ("ArrowVegaLiteChart", "embed", "vega-interpreter", "Json", "Checkbox", "NumberInput")

_SCRIPT = """<style>.st-key-incident_warmup{display:none}</style><script>
(() => {
  if (window.__iiqWarmed) return;  // once a page load: an imported module stays loaded
  window.__iiqWarmed = true;
  const index = document.querySelector('script[src*="/static/js/index."]');
  if (!index) return;
  const warm = () => %s.forEach(file => import(new URL("./" + file, index.src).href).catch(() => {}));
  if (window.requestIdleCallback) window.requestIdleCallback(warm, {timeout: 3000}); else setTimeout(warm, 1000);
})();
</script>"""


@cache
def bundle_files() -> tuple[str, ...]:
    """The file names of BUNDLES in the installed Streamlit's frontend (name.hash.js), those found once."""
    static = Path(st.__file__).parent / "static" / "static" / "js"
    found = [sorted(static.glob(f"{name}.*.js")) for name in BUNDLES]
    return tuple(files[0].name for files in found if len(files) == 1)


def warm_history_bundles() -> None:
    """The script that imports the History tab's bundles once the page is idle (no data goes into it)."""
    files = bundle_files()
    if files:
        with st.container(key="incident_warmup"):
            st.html(_SCRIPT % json.dumps(list(files)), unsafe_allow_javascript=True)
