"""Log text as the reviewer sees it: tables and literal text, never markdown or HTML."""
from __future__ import annotations

import html
from typing import Sequence

import pandas as pd

from pipeline.services import readable_line
from pipeline.state import TEMPLATE_PLACEHOLDER, readable_title, visible

EVIDENCE_COLUMNS = ("trigger", "time", "host", "level", "service", "message", "exception", "trace_id")
# a finding's own characters stand out; the rest of a quoted match is tinted lightly
_MARKS = {2: "background:#ffd54f;color:#000;border-radius:2px;padding:0 1px;font-weight:600",
          1: "background:rgba(255,213,79,0.28);color:inherit"}


def text_heading(text: str, level: int = 5) -> str:
    """An HTML heading showing `text` literally, for st.html: markdown would turn a URL inside a
    log line into a link even with every markdown character escaped (GFM autolinks)."""
    return (f"<div role='heading' aria-level='{level}' style='font-size:1.15rem;font-weight:600;"
            f"line-height:1.4;white-space:normal;overflow-wrap:anywhere;margin:0 0 0.25rem 0'>"
            f"{html.escape(visible(str(text)))}</div>")


def evidence_ids(log_window: list[dict], evidence: list[dict]) -> list[str]:
    """The event ids of `evidence_frame`'s rows, in its order (oldest first)."""
    events = {e["event_id"]: e for e in log_window}
    for e in evidence:
        events.setdefault(e["event_id"], e)
    order = sorted(events, key=lambda i: str(events[i].get("time") or "")[:23].replace("T", " "))
    return order


def evidence_rows(log_window: list[dict], evidence: list[dict]) -> list[dict]:
    """The log window around the incident as rows, oldest first; `trigger` marks the incident's own
    events. Triggering events missing from the window (it is bounded) are added so none is hidden."""
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
    rows.sort(key=lambda r: r["time"])  # stable, as pandas' sort_values(kind="stable") was, at half the cost
    return rows


def evidence_frame(log_window: list[dict], evidence: list[dict], rows: list[dict] | None = None) -> pd.DataFrame:
    """`evidence_rows` as a table (of `rows` when given: they were read already)."""
    return pd.DataFrame.from_records(evidence_rows(log_window, evidence) if rows is None else rows,
                                     columns=list(EVIDENCE_COLUMNS))


def with_stack(events: list[dict], *, but: frozenset[str] = frozenset()) -> list[dict]:
    """Events that carry a stack trace, oldest first, one per distinct trace text (none of `but`'s)."""
    seen, out = set(but), []
    for e in sorted(events, key=lambda e: str(e.get("time"))):
        stack = e.get("stack")
        if stack and stack not in seen:
            seen.add(stack)
            out.append(e)
    return out


def stacks_of(log_window: list[dict], evidence: list[dict]) -> tuple[list[dict], list[dict]]:
    """The Evidence tab's stack traces: the incident's own events' (its triggering events), and apart
    the traces only the window's other lines carry, which are context (issue 38.5: when the incident's
    events carried none, a neighbouring incident's trace was shown as if it were this one's)."""
    own = with_stack(evidence)
    mine = {e["event_id"] for e in evidence}
    neighbours = with_stack([e for e in log_window if e["event_id"] not in mine],
                            but=frozenset(e["stack"] for e in own))
    return own, neighbours


def display_title(doc: dict) -> str:
    """The incident's title in the log's words: the stored title when it is an example line's own
    words (from where they begin, a lead timestamp skipped), else (an incident stored by an earlier
    release, a template) its first event's first line, else the template with the miner's
    placeholders (`<NUM>`, `<STR>`, ...) shown as `…`."""
    stored = str(doc.get("title") or "")
    if stored and not TEMPLATE_PLACEHOLDER.search(stored):
        return stored
    for event in doc.get("evidence") or []:
        line = str(event.get("message") or "").strip().splitlines()
        if line:
            exception = str(event.get("exception") or "").rsplit(".", 1)[-1]
            return f"{exception}: {line[0]}" if exception and exception not in line[0] else line[0]
    return readable_title(doc.get("title") or doc.get("incident_id") or "")


def marked_segments(text: str, strong: list[tuple[int, int]], light: list[tuple[int, int]]) -> list[tuple[str, int]]:
    """`text` cut into (piece, level) runs: 2 inside a `strong` span, 1 inside a `light` one, else 0.
    Spans may overlap and may run past the text (they are clipped)."""
    levels = [0] * len(text)
    for spans, level in ((light, 1), (strong, 2)):
        for start, end in spans:
            for i in range(max(0, start), min(len(text), end)):
                levels[i] = max(levels[i], level)
    runs: list[tuple[str, int]] = []
    for char, level in zip(text, levels):
        if runs and runs[-1][1] == level:
            runs[-1] = (runs[-1][0] + char, level)
        else:
            runs.append((char, level))
    return runs


def marked_html(text: str, strong: list[tuple[int, int]], light: Sequence[tuple[int, int]] = ()) -> str:
    """A log line as HTML for st.html: every piece escaped here, the matched spans wrapped in
    <mark>; the text itself can add no element, link or style."""
    body = "".join(html.escape(visible(piece)) if not level
                   else f"<mark style='{_MARKS[level]}'>{html.escape(visible(piece))}</mark>"
                   for piece, level in marked_segments(str(text), list(strong), list(light)))
    return (f"<div style='font-family:ui-monospace,Menlo,Consolas,monospace;font-size:0.85rem;white-space:pre-wrap;"
            f"overflow-wrap:anywhere;line-height:1.45'>{body}</div>")


def quoted_lines(rca: dict, events: list[dict]) -> list[dict]:
    """The log lines the RCA rests on, one per distinct text (deduplicated, with how many events
    said it), each with the spans of its findings (`strong`) and of its matched signatures (`light`)."""
    by_id = {e.get("event_id"): e for e in events}
    strong: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for finding in rca.get("findings") or []:
        if finding.get("kind") == "error":
            continue  # an error statement spans its whole line: marking it all would mark nothing
        for span in finding.get("spans") or []:
            strong.setdefault((span.get("event_id"), span.get("field")), []).append((span["start"], span["end"]))
    lines, seen = [], {}
    for quote in rca.get("quotes") or []:
        text = str(quote.get("text") or "")
        key = (quote.get("field"), text)
        spans = [tuple(s) for s in quote.get("spans") or []]
        event = by_id.get(quote.get("event_id")) or {}
        # a JSON object's text is quoted in words (`status=502 path=/api`): its findings' spans lie in the raw line
        raw = text in str(event.get(quote.get("field") or "message") or text)
        mine = strong.get((quote.get("event_id"), quote.get("field")), []) if raw else []
        light = [s for s in spans if s not in mine]
        if key in seen:
            seen[key]["count"] += int(quote.get("count") or 1)
            continue
        seen[key] = {"text": text, "field": quote.get("field") or "message", "count": int(quote.get("count") or 1),
                     "event_id": quote.get("event_id"),
                     "strong": mine, "light": light, "time": str(event.get("time") or "")[:19].replace("T", " "),
                     "host": event.get("host") or ""}
        lines.append(seen[key])
    if not lines:  # an RCA without quotes (older records): the incident's own lines, deduplicated
        for event in events:
            text = str(event.get("message") or "")
            if ("message", text) in seen:
                seen[("message", text)]["count"] += 1
                continue
            seen[("message", text)] = {"text": text, "field": "message", "count": 1, "light": [],
                                       "event_id": event.get("event_id"),
                                       "strong": strong.get((event.get("event_id"), "message"), []),
                                       "time": str(event.get("time") or "")[:19].replace("T", " "),
                                       "host": event.get("host") or ""}
            lines.append(seen[("message", text)])
    return lines


def findings_frame(rca: dict) -> pd.DataFrame:
    """The RCA's concrete findings as rows of text: what, the value, how many events show it, where."""
    # a value that is a JSON line (a Node log's whole record as its error) by its words, not its braces
    rows = [{"finding": str(f.get("kind") or "").replace("_", " "), "value": readable_line(str(f.get("value") or "")),
             # text: a count of events, always shown (a number column drew blank cells here)
             "events": str(len(f.get("event_ids") or [])),
             "seen in": ", ".join(sorted({s.get("field") or "message" for s in f.get("spans") or []})) or "—",
             "from": f.get("source") or ""}
            for f in rca.get("findings") or []]
    return pd.DataFrame(rows, columns=["finding", "value", "events", "seen in", "from"])


CONTEXT_LINES = 10  # log lines shown before and after a quoted line when jumping to its context


def context_frame(frame: pd.DataFrame, event_ids: list[str], event_id: str,
                  lines: int = CONTEXT_LINES) -> tuple[pd.DataFrame, int] | None:
    """The log window's rows around one event (`lines` before and after, in time order), with a
    `here` column marking it, and its position in the window; None when the window lacks it."""
    if event_id not in event_ids:
        return None
    at = event_ids.index(event_id)
    part = frame.iloc[max(0, at - lines): at + lines + 1].copy()
    part.insert(0, "here", [i == at for i in part.index])
    return part, at
