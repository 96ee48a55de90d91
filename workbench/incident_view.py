"""The read-only parts of the incident page: header, RCA with findings and quoted evidence,
recommendation, recorded fix, evidence window and audit.

Everything that comes from logs or the analyst is shown as text (st.text, st.code, dataframes)
or escaped before it reaches a markdown-rendering element.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone

import pandas as pd
import streamlit as st

from pipeline.errors import MASK
from pipeline.state import counted, names_service

from workbench.evidence_view import (CONTEXT_LINES, EVIDENCE_COLUMNS, context_frame, display_title, evidence_frame,
                                     evidence_ids, evidence_rows, findings_frame, marked_html, quoted_lines,
                                     text_heading, stacks_of)
from workbench.event_counts import events_metric
from workbench.inbox_view import is_escalated, sla_text
from workbench.audit_words import (AUDIT_WIDTHS, WRAP_CHARS, audit_sentence, categories_in_text, category_words, field_words, note_words,
                                   wrap_chars)
from workbench.literal import analysis_text, escape_markdown, plain
from workbench.provenance import hand_set_confidence_words, status_words
from workbench.similar_docs_view import similar_docs

STATUS_COLORS = {"awaiting_approval": "orange", "in_revision": "violet", "analyzing": "blue", "failed": "red",
                 "fix_proposed": "green", "approved": "gray", "rejected": "gray", "expired": "gray",
                 "merged": "gray"}
SEVERITY_COLORS = {"critical": "red", "high": "orange", "medium": "yellow", "low": "gray"}
STACKS_SHOWN = 20
QUOTES_SHOWN = 8
FINDINGS_ORDER = ("finding", "events", "value", "seen in", "from")
# px, summing to the analysis column at 1440 px (~540); "pool waiting" whole, the grid stretches them
FINDINGS_WIDTHS = {"finding": 110, "events": 55, "value": 200, "seen in": 80, "from": 75}


def sla_basis(doc: dict, sla_from: str) -> str:
    """What the SLA deadline is counted from, as it was for this incident: its opening here when the
    setting says so or when it was backfilled (its log already past the SLA), else its first event."""
    if doc.get("backfilled"):
        return "from when it was opened here: its log was already past the SLA then"
    return "from the first event seen" if sla_from == "first_seen" else "from when it was opened here"


def header(doc: dict, *, sla_from: str = "opened") -> None:
    """Id, title (in the log's words), status, severity, service, first/last seen, event count and SLA."""
    st.title(doc["incident_id"])
    st.html(text_heading(display_title(doc)))
    badges = st.container(horizontal=True, vertical_alignment="center")
    badges.badge(status_words(doc["status"], doc.get("fix") or doc.get("proposal")), color=STATUS_COLORS.get(doc["status"], "blue"))
    badges.badge(f"severity {doc['severity']}", color=SEVERITY_COLORS.get(doc["severity"], "gray"))
    # a source that names no service (an Apache error log) is said so, not "service unknown"
    badges.text(plain(f"service {doc['service']}" if names_service(doc["service"]) else "no service named"))
    if doc.get("assignee"):
        badges.text(plain(f"on it: {doc['assignee']}"))
    now = datetime.now(timezone.utc)
    cols = st.columns(4)
    events_metric(cols[0], doc)
    cols[1].metric("First seen (UTC)", _clock(doc.get("first_seen")), help=_short_time(doc.get("first_seen")))
    cols[2].metric("Last seen (UTC)", _clock(doc.get("last_seen")), help=_short_time(doc.get("last_seen")))
    sla = sla_text(doc, now)  # "2h 3m left", "5m late" or "decided": the number fits a narrow column
    late = "Escalated, SLA overdue by" if is_escalated(doc) else "SLA overdue by"
    label = late if sla.endswith(" late") else ("SLA left" if sla.endswith(" left") else "SLA")
    cols[3].metric(label, sla.removesuffix(" late").removesuffix(" left"),
                   help=f"due {_short_time(doc.get('sla_deadline'))} UTC, counted {sla_basis(doc, sla_from)}")
    st.caption(f"Seen from {_short_time(doc.get('first_seen'))} to {_short_time(doc.get('last_seen'))} UTC · "
               f"opened {_short_time(doc.get('created_at'))} UTC · SLA due {_short_time(doc.get('sla_deadline'))} UTC "
               f"(counted {sla_basis(doc, sla_from)})")
    if doc.get("last_error"):
        st.error("The run failed; the poller retries it. The error:")
        st.code(plain(doc["last_error"]), language=None, wrap_lines=True)  # may quote model or log text


def _clock(value: str | None) -> str:
    return str(value or "—")[11:19] or "—"


def _short_time(value: str | None) -> str:
    return str(value or "—")[:19].replace("T", " ")


CONTEXT_KEY = "incident_context"  # {incident_id: event_id}: the quoted line whose context the Evidence tab shows


SCROLL_KEY = "incident_context_scroll"  # a jump not yet scrolled to: its number (each jump's script is new)
# moves the page to the context block once it is drawn (the tab below the analysis is a screen down)
_SCROLL_JS = """<script>/* jump %d */
(() => { let tries = 0; const timer = setInterval(() => {
  const block = document.querySelector(".st-key-incident_context_block");
  if (block) block.scrollIntoView({block: "start"});
  if (block || ++tries > 50) clearInterval(timer);
}, 100); })();
</script>"""


def _jump_to_context(incident_id: str, event_id: str) -> None:
    st.session_state.setdefault(CONTEXT_KEY, {})[incident_id] = event_id
    st.session_state[f"incident_tab_{incident_id}"] = "Evidence"
    st.session_state[SCROLL_KEY] = int(st.session_state.get("incident_context_jumps") or 0) + 1
    st.session_state["incident_context_jumps"] = st.session_state[SCROLL_KEY]


def _whole_window(incident_id: str) -> None:
    st.session_state.get(CONTEXT_KEY, {}).pop(incident_id, None)


def evidence(doc: dict) -> None:
    """The log window as a table with the incident's own events tinted, and their stack traces; after
    a jump from a quoted line, the lines around it first."""
    window, own = doc.get("log_window") or [], doc.get("evidence") or []
    rows = evidence_rows(window, own)
    frame = evidence_frame(window, own, rows)
    wanted = st.session_state.get(CONTEXT_KEY, {}).get(doc["incident_id"])
    around = context_frame(frame, evidence_ids(window, own), wanted) if wanted else None
    if around is not None:
        part, at = around
        with st.container(key="incident_context_block"):
            st.markdown(f"**Context of the quoted line**: line {at + 1} of the {len(frame)}-line window, "
                        f"{CONTEXT_LINES} lines either side")
            st.dataframe(plain(part), hide_index=True, width="stretch", key="incident_context_table",
                         column_order=("here", *EVIDENCE_COLUMNS),
                         column_config={"here": st.column_config.CheckboxColumn("Quoted",
                                                                                help="the line you came from"),
                                        "trigger": st.column_config.CheckboxColumn("Trigger"),
                                        "message": st.column_config.TextColumn("Message", width="large")})
            st.button("Show the whole window", key="incident_context_close", on_click=_whole_window,
                      args=(doc["incident_id"],))
        jump = st.session_state.pop(SCROLL_KEY, None)
        if jump:  # our script only: no data goes into it
            st.html(_SCROLL_JS % int(jump), unsafe_allow_javascript=True)
        return
    leader(doc.get("leader"))
    # counted over the rows' text: pandas' str.count cost ~1 ms a column on every run of the page
    masked = sum(str(row[c]).count(MASK) for row in rows for c in ("host", "service", "message", "exception"))
    triggering = sum(row["trigger"] for row in rows)
    st.caption(f"{counted(triggering, 'triggering event')} (ticked) in a window of {counted(len(frame), 'log line')}"
               + (f" · {counted(masked, 'secret')} shown as {MASK}" if masked else ""))
    # no Styler: tinting the rows cost ~0.3 s of every rerun with this tab open (pandas renders
    # each cell's style); the ticked Trigger column says the same
    st.dataframe(plain(frame), hide_index=True, width="stretch", key="incident_evidence_table",
                 column_order=EVIDENCE_COLUMNS,
                 column_config={"trigger": st.column_config.CheckboxColumn("Trigger", help="this incident's own event",
                                                                           pinned=True),
                                "message": st.column_config.TextColumn("Message", width="large")})
    own, neighbours = stacks_of(doc.get("log_window") or [], doc.get("evidence") or [])
    for stacks, title, key in (
            (own, "Stack traces", "incident_stack_pick"),
            (neighbours, "Context: stack traces of the window's other lines, not this incident's events",
             "incident_context_stack_pick")):
        if stacks:
            with st.expander(f"{title} ({len(stacks)} distinct)", expanded=stacks is own and len(stacks) == 1):
                # options are plain text (not markdown), so log text may name them
                names = [plain(_event_name(e)) for e in stacks]
                chosen: int = st.selectbox("Stack trace of", range(len(stacks)), key=key,
                                           format_func=names.__getitem__) or 0
                st.code(plain(stacks[chosen]["stack"]), language=None, wrap_lines=True)


def leader(lead: dict | None) -> None:
    """The incident's leader: its earliest cause-side error, and why it was chosen."""
    if not lead:
        return
    st.markdown(f"**Leader**: {escape_markdown(lead.get('service', ''))} at {_short_time(lead.get('time'))}: "
                f"{escape_markdown(lead.get('message', ''))}")
    st.caption(f"Why it leads: {escape_markdown(lead.get('reason', ''))}")


def _event_name(event: dict) -> str:
    return (f"{str(event.get('time'))[11:23]} · {event.get('host') or '?'} · "
            f"{event.get('exception') or event.get('level') or 'error'}")


def confidence_color(confidence: float) -> str:
    """A sequential scale: red and orange for low confidence, green then blue for high."""
    for bound, color in ((0.3, "#d9534f"), (0.5, "#f0883e"), (0.8, "#4caf50")):
        if confidence < bound:
            return color
    return "#2b7bb9"


def confidence_bar(confidence: float, threshold: float) -> str:
    """The RCA's confidence as a bar on the sequential scale with the code-fix threshold marked
    (HTML for st.html; only numbers go in)."""
    pct, mark = round(confidence * 100), round(threshold * 100)
    return (f"<div style='display:flex;align-items:center;gap:0.6rem;font-size:0.9rem'>"
            f"<span>confidence <b>{pct}%</b></span>"
            f"<div style='position:relative;flex:1;min-width:120px;max-width:320px;height:10px;background:#eceff3;"
            f"border-radius:5px'><div style='width:{pct}%;height:100%;background:{confidence_color(confidence)};"
            f"border-radius:5px'></div><div title='code-fix threshold' style='position:absolute;left:{mark}%;"
            f"top:-3px;width:2px;height:16px;background:#333'></div></div>"
            f"<span style='color:#777;font-size:0.8rem'>code fix from {threshold:.2f}</span></div>")


def rca(doc: dict, *, code_fix_min_confidence: float, edited: dict[str, str] | None = None) -> None:
    """Category, root cause and confidence; the concrete findings; the log lines the analysis rests
    on with the findings highlighted; the similar docs. `edited` marks fields a person changed."""
    edited = edited or {}
    found = doc.get("rca")
    st.subheader("Root cause analysis")
    if not found:
        st.info("No analysis yet: the run has not reached the RCA.")
        return
    if found.get("warning"):
        # plain text: the warning names what the model answered
        st.text(plain(f"⚠ {found['warning']}"))
    human = sorted(f for f in edited if f.startswith("rca.") or f == "severity")
    badges = st.container(horizontal=True, vertical_alignment="center")
    badges.badge(category_words(found["category"]), color="violet", icon=":material/category:")  # as the edit form says it
    if human:
        badges.badge("human-edited", color="orange", icon=":material/edit:")
    badges.text(f"Analyst: {found.get('analyst') or 'offline'}")
    st.html(confidence_bar(found["confidence"], code_fix_min_confidence))
    if "rca.category" in edited and "rca.confidence" not in edited:
        st.caption(hand_set_confidence_words(found, edited["rca.category"]))
    if human:
        st.text("Edited by a person: " + ", ".join(f"{field_words(f)} ({edited[f]})" for f in human))
    # as text: the log's words it quotes may hold markup of their own, which must not style the page;
    # the backticks of the analyst's `code spans` dropped (analysis_text), shown as text they read as stray
    st.text(plain(analysis_text(found["root_cause"])))
    findings(found)
    quoted_evidence(found, doc.get("evidence") or [], incident_id=doc["incident_id"])
    if found.get("notes"):
        st.caption("Analyst notes")
        # categories in words, as everywhere on the page ("which is upstream rate limited", not its code)
        st.text(plain(categories_in_text(analysis_text("\n".join(f"• {note}" for note in found["notes"])))))
    similar_docs(doc.get("similar_docs") or [], matched=found.get("doc_ids") or [],
                 evidence="\n".join(str(line) for line in found.get("evidence") or []))


def findings(found: dict) -> None:
    """The RCA's concrete findings (column, table, key, host, file:line, pool, timeout …) as a table."""
    frame = findings_frame(found)
    st.markdown("**Findings**")
    if frame.empty:
        st.caption("No concrete finding: the analysis names no value the log lines show.")
        return
    # the analysis column is ~540 px wide at 1440: pixel widths keep every column in view (a "large"
    # value column pushed events, seen in and from off the grid's right edge: "events" read empty)
    st.dataframe(plain(frame), hide_index=True, width="stretch", key="incident_findings_table",
                 column_order=FINDINGS_ORDER,
                 column_config={"finding": st.column_config.TextColumn(width=FINDINGS_WIDTHS["finding"]),
                                "events": st.column_config.TextColumn(width=FINDINGS_WIDTHS["events"],
                                                                      help="events that show it"),
                                "value": st.column_config.TextColumn(width=FINDINGS_WIDTHS["value"]),
                                "seen in": st.column_config.TextColumn(width=FINDINGS_WIDTHS["seen in"]),
                                "from": st.column_config.TextColumn(width=FINDINGS_WIDTHS["from"],
                                                                    help="where the analyst found it")})
    if found.get("dropped_findings"):
        dropped = found["dropped_findings"]
        st.caption(f"{counted(dropped, 'finding')} the analyst named {'was' if dropped == 1 else 'were'} dropped: no log line "
                   f"shows {'it' if dropped == 1 else 'them'}.")


def quoted_evidence(found: dict, events: list[dict], *, incident_id: str | None = None) -> None:
    """The log lines the analysis rests on, whole and deduplicated, findings highlighted (escaped HTML)."""
    lines = quoted_lines(found, events)
    st.markdown(f"**Evidence it rests on** ({len(lines)} distinct log line{'s' if len(lines) != 1 else ''})")
    if not lines:
        st.caption("none")
        return
    st.caption("Highlighted: the findings (bold) and the matched error signatures (tinted).")
    for i, line in enumerate(lines[:QUOTES_SHOWN]):
        with st.container(border=True):
            where = " · ".join(x for x in (line["time"], line["host"], line["field"]) if x)
            head = st.container(horizontal=True, vertical_alignment="center")
            head.caption(escape_markdown(f"{where} · ×{line['count']}"))  # the host is the log's words
            if incident_id and line.get("event_id"):
                head.button("Context in the log", key=f"incident_context_{i}", type="tertiary",
                            icon=":material/manage_search:", on_click=_jump_to_context,
                            args=(incident_id, line["event_id"]), help="the log window around this line (Evidence tab)")
            st.html(marked_html(line["text"], line["strong"], line["light"]))
    if len(lines) > QUOTES_SHOWN:
        st.caption(f"{len(lines) - QUOTES_SHOWN} more distinct lines are in the Evidence tab.")


_REVISION = re.compile(r"^\(revision \d+\)\s*$")


def action_lead(action: str, steps: list[str]) -> str:
    """What the recommended action says besides its first step: the analyst writes the action as the
    cause followed by step 1, which the numbered steps show right below (each is said once). "" when
    nothing is left but a revision number (the caption under the steps has it)."""
    first = str(steps[0]).strip() if steps else ""
    text = str(action).strip()
    if not first or not text.endswith(first):
        return text
    lead = text[:-len(first)].rstrip()
    if not lead or _REVISION.match(lead):
        return ""
    return lead + " see step 1 below." if lead.endswith(":") else lead


def recommendation(doc: dict, *, edited: dict[str, str] | None = None) -> None:
    st.subheader("Recommendation")
    rec = doc.get("recommendation")
    if not rec:
        st.info("No recommendation yet.")
        return
    human = sorted(f for f in edited or {} if f.startswith("recommendation."))
    if human:
        st.badge("human-edited", color="orange", icon=":material/edit:")
        st.text("Edited by a person: " + ", ".join(f"{field_words(f)} ({edited[f]})" for f in human))
    lead = action_lead(rec["action"], rec.get("steps") or [])
    if lead:
        st.text(plain(analysis_text(lead)))
    if rec.get("steps"):
        st.text(plain(analysis_text("\n".join(f"{i}. {' '.join(str(step).split())}"
                                               for i, step in enumerate(rec["steps"], 1)))))
    st.caption(f"risk {rec.get('risk')} · revision {rec.get('revision', 0)}")
    if rec.get("feedback"):
        st.caption("Reviewer feedback this revision answers")
        st.text(plain(rec["feedback"]))


def proposal_view(proposal: dict) -> None:
    """A fix proposal: its plan, its diff rendered as a diff and the file it changes."""
    if proposal.get("plan"):
        st.text(plain(analysis_text("\n".join(f"• {step}" for step in proposal["plan"]))))
    if proposal.get("diff"):
        st.caption(escape_markdown(f"Proposed change to {proposal.get('target_file') or 'the code'}"))
        st.code(plain(proposal["diff"]), language="diff", wrap_lines=True)


def fix(doc: dict) -> None:
    """After approval, the recorded fix proposal (the approved hash). Before it, the pending
    proposal is shown beside the Approve button (workbench.decision_panel). A proposal is never
    said to have fixed anything."""
    recorded = doc.get("fix")
    if not recorded:
        return
    st.subheader("Fix proposal")
    st.caption(f"Recorded on approval — proposal {str(recorded.get('hash') or '')[:12]}; "
               "nothing was applied to any repository.")
    proposal_view(recorded)


WRAP_LINE_PX, WRAP_MAX_LINES = 21, 6


def wrapped_row_height(texts: list[str], chars: int = WRAP_CHARS) -> int | None:
    """A table row tall enough for the longest text wrapped in a column of `chars` a line (a large
    one's by default; a cell's text wraps only in rows taller than 4 rem, 64 px); None (one line)
    when each fits on one line."""
    longest = max((len(t) for t in texts), default=0)
    if longest <= chars:
        return None
    lines = min(-(-longest // chars), WRAP_MAX_LINES)
    return max(lines * WRAP_LINE_PX + 12, 70)


def audit(rows: list[dict], exports: dict[str, str] | None, incident_id: str, proposal: dict | None = None,
          names: dict[str, str] | None = None) -> None:
    """Every human action on this incident, in sentences (who did what, what changed); the recorded
    values as they are in the exports (CSV or JSON)."""
    if not rows:
        st.info("No human action yet.")
        return
    frame = pd.DataFrame([{"at": str(r["at"])[:19].replace("T", " "),
                           "what happened": (said := audit_sentence(r, proposal)),
                           # a note the sentence says already (a refusal's reason) is not said twice
                           "note": "" if (r.get("note") or "").strip() in said else note_words(r.get("note"), names),
                           # as History names it ("#5 root cause analysis"); one older than History's
                           # window is said so, never by its id's hex digits
                           "checkpoint after": (names or {}).get(r.get("checkpoint_after") or "")
                           or ("an earlier one" if r.get("checkpoint_after") else "")} for r in rows])
    # the sentences wrap in rows tall enough for the longest (they were cut at one line)
    what_chars, note_chars = wrap_chars(AUDIT_WIDTHS["what happened"]), wrap_chars(AUDIT_WIDTHS["note"])
    heights = [wrapped_row_height(list(frame["what happened"]), what_chars),
               wrapped_row_height(list(frame["note"]), note_chars)]
    st.dataframe(plain(frame), hide_index=True, width="stretch", key="incident_audit_table",
                 row_height=max((h for h in heights if h), default=None),
                 column_config={name: st.column_config.TextColumn(width=px) for name, px in AUDIT_WIDTHS.items()})
    # … and an entry longer than its row reads in full below (an edit lists every field it changed)
    longer = [r for r in frame.itertuples(index=False)
              if len(r[1]) > what_chars * WRAP_MAX_LINES or len(r[2]) > note_chars * WRAP_MAX_LINES]
    if longer:
        with st.expander(f"{len(longer)} {'entry is' if len(longer) == 1 else 'entries are'} longer than a row: "
                         "read in full"):
            for at, what, note, _ in longer:
                st.text(plain(f"{at}: {what}" + (f"\nNote: {note}" if note else "")))
    if exports:
        buttons = st.container(horizontal=True)
        for fmt, mime in (("csv", "text/csv"), ("json", "application/json")):
            if fmt in exports:
                buttons.download_button(f"Download audit ({fmt.upper()})", exports[fmt],
                                        file_name=f"{incident_id}-audit.{fmt}", mime=mime,
                                        key=f"incident_audit_download_{fmt}", on_click="ignore")
