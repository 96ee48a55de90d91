"""The poller's health light in the sidebar, read from what the poller records (OperationsService.poller_status)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import streamlit as st

from workbench.literal import escape_markdown
from workbench.inbox_view import duration
from workbench.runtime import Workbench

LAG_WARN_SECONDS = 120


def light(workbench: Workbench, status: list[dict]) -> tuple[str, str, str]:
    """(color, headline, detail) for the sidebar: green polling, orange lagging or standing by,
    red failing, gray off or stopped."""
    if workbench.poller is None:
        if workbench.poller_error:
            return "red", "Poller not started", workbench.poller_error
        return "gray", "Poller off", "INCIDENTIQ_POLLER=off: showing what is in the data dir"
    # the poller's source name is canonical (a `file:` source names its absolute path)
    row = next((r for r in status if r["source"] == workbench.poller.source.name), None)  # its first source
    if not workbench.poller.alive:
        return "red", "Poller stopped", (row or {}).get("last_error") or "the poller thread ended"
    if workbench.poller.restarts and (row is None or row["state"] != "running"):
        return "red", f"Poller restarted {workbench.poller.restarts}×", workbench.poller.last_crash or ""
    if row is None:
        return "orange", "Poller starting", f"source {workbench.source}"
    last = row.get("last_poll_at")
    ago = f"last poll {duration(datetime.now(timezone.utc) - datetime.fromisoformat(last))} ago" if last else "no poll yet"
    if row["state"] == "error":
        return "red", "Poller failing", f"{ago}; {row.get('last_error') or 'see Operations'}"
    if row["state"] == "standby":
        return "orange", "Poller standing by", "another process polls this data dir"
    lag = row.get("lag_seconds")
    if lag is not None and lag > LAG_WARN_SECONDS:
        return "orange", "Poller lagging", f"{ago}; {duration_text(lag)} behind the source"
    return "green", f"Polling {workbench.source}", ago


def duration_text(seconds: float) -> str:
    return duration(timedelta(seconds=seconds))


def poller_light(workbench: Workbench) -> None:
    """Draw the light; an error's text (it may quote what the source sent) is shown as text.
    A poller thread that died is restarted here, on the next page a reviewer opens."""
    if workbench.poller is not None:
        workbench.poller.ensure_running()
    color, headline, detail = light(workbench, workbench.operations.poller_status())
    st.markdown(f":{color}[●] **{escape_markdown(headline)}**")
    if color == "red":
        st.code(detail, language=None, wrap_lines=True)
    else:
        st.caption(escape_markdown(detail))
