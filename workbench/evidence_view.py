"""Log text as the reviewer sees it: tables and literal text, never markdown or HTML."""
from __future__ import annotations

import html
import re

import pandas as pd

EVIDENCE_COLUMNS = ("trigger", "time", "host", "level", "service", "message", "exception", "trace_id")
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def escape_markdown(text: str) -> str:
    """Text that Streamlit's markdown shows literally (links, emphasis and tags stay text)."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", str(text))


def text_heading(text: str, level: int = 5) -> str:
    """An HTML heading showing `text` literally, for st.html: markdown would turn a URL inside a
    log line into a link even with every markdown character escaped (GFM autolinks)."""
    return (f"<div role='heading' aria-level='{level}' style='font-size:1.15rem;font-weight:600;"
            f"line-height:1.4;white-space:normal;overflow-wrap:anywhere;margin:0 0 0.25rem 0'>"
            f"{html.escape(str(text))}</div>")


def plain_label(text: str, limit: int = 90) -> str:
    """One line of text safe to put in a widget or expander label (labels render markdown)."""
    one_line = " ".join(str(text).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    return escape_markdown(one_line)


def evidence_frame(log_window: list[dict], evidence: list[dict]) -> pd.DataFrame:
    """The log window around the incident, oldest first; `trigger` marks the incident's own events.

    Triggering events missing from the window (it is bounded) are added so none is hidden.
    """
    triggers = {e["event_id"] for e in evidence}
    events = {e["event_id"]: e for e in log_window}
    for e in evidence:
        events.setdefault(e["event_id"], e)
    rows = [{
        "trigger": event_id in triggers,
        "time": str(e.get("time") or "")[:23].replace("T", " "),
        "host": e.get("host") or "",
        "level": e.get("level") or "",
        "service": e.get("service") or "",
        "message": e.get("message") or "",
        "exception": e.get("exception") or "",
        "trace_id": e.get("trace_id") or "",
    } for event_id, e in events.items()]
    frame = pd.DataFrame.from_records(rows, columns=list(EVIDENCE_COLUMNS))
    return frame.sort_values("time", kind="stable").reset_index(drop=True)


def highlight_triggers(frame: pd.DataFrame):
    """A Styler that tints the triggering events."""
    def tint(row):
        style = "background-color: rgba(255, 170, 0, 0.20)" if row["trigger"] else ""
        return [style] * len(row)

    return frame.style.apply(tint, axis=1)


def with_stack(events: list[dict]) -> list[dict]:
    """Events that carry a stack trace, oldest first, one per distinct trace text."""
    seen, out = set(), []
    for e in sorted(events, key=lambda e: str(e.get("time"))):
        stack = e.get("stack")
        if stack and stack not in seen:
            seen.add(stack)
            out.append(e)
    return out
