"""Operations: the poller per source, arrivals, decisions and how long they took, SLA, dead
letters and the size of the stores."""
from datetime import datetime, timedelta, timezone

import pandas as pd
import plotly.express as px
import streamlit as st

from pipeline.state import counted
from workbench import session
from workbench.figures import figure_row
from workbench.inbox_view import duration
from workbench.layout_words import layout_words
from workbench.literal import escape_markdown, plain

WINDOWS = {"last hour": (timedelta(hours=1), "minute"), "last 24 hours": (timedelta(hours=24), "hour"),
           "last 7 days": (timedelta(days=7), "hour")}
FREQ = {"minute": "min", "hour": "h"}
DEAD_LETTERS_SHOWN = 500
# what a table shows where a value is not known (a source that cannot say its backlog, a poll not yet
# timed): nothing, rather than Streamlit's "None"
NOT_KNOWN = ""

workbench = session.workbench()


def _every_bucket(frame: pd.DataFrame, since: datetime, until: datetime, bucket: str) -> pd.DataFrame:
    """Counts per bucket over the whole window, empty buckets as 0 (a sparse series misdraws)."""
    full = pd.date_range(pd.Timestamp(since).floor(FREQ[bucket]), pd.Timestamp(until).floor(FREQ[bucket]),
                         freq=FREQ[bucket], name="time")
    return frame.reindex(full, fill_value=0)


def _round(value):
    return round(value, 1) if isinstance(value, (int, float)) else None


operations = workbench.operations
now = datetime.now(timezone.utc)

st.title("Operations")
window = st.segmented_control("Window", list(WINDOWS), default="last 24 hours", required=True,
                              key="operations_window", persist_state="session")
span, bucket = WINDOWS[window]
since = now - span

counts = workbench.review.counts()
tiles = figure_row()
tiles.metric("Open incidents", sum(counts.get(s, 0) for s in ("analyzing", "awaiting_approval", "in_revision",
                                                              "failed")), width="content")
tiles.metric("Awaiting approval", counts.get("awaiting_approval", 0), width="content")
tiles.metric("SLA overdue", operations.overdue_count(now), width="content")
tiles.metric("Failed runs", counts.get("failed", 0), width="content")
tiles.metric("Dead letters", operations.dead_letter_count(), width="content")

st.subheader("Grouping funnel")
funnel = operations.funnel(since)
steps = figure_row()
steps.metric("Lines read", funnel["lines"], help="log records stored or rejected (a stack trace is one record)",
             width="content")
steps.metric("Incident events", funnel["events"], help="events that opened or joined an incident", width="content")
steps.metric("Patterns", funnel["patterns"], help="the distinct patterns of those events", width="content")
steps.metric("Incidents", funnel["incidents"], help="incidents opened", width="content")
ratio = funnel["dedup_ratio"]
st.caption(f"Since {str(funnel['since'])[:10]} (UTC, whole days): lines → events → patterns → incidents"
           + (f"; dedup ratio {ratio:.1%} (incident events that opened no incident of their own)"
              if ratio is not None else ""))

st.subheader("Pollers")
status = operations.poller_status()
if not status:
    st.info("No poller has run on this data dir yet." + ("" if workbench.poller else
                                                          " This web app runs none (INCIDENTIQ_POLLER=off)."))
else:
    def ago(stamp):
        return duration(now - datetime.fromisoformat(stamp)) + " ago" if stamp else "never"

    st.dataframe(pd.DataFrame([{
        "source": s["source"], "state": s["state"],
        # which process reads it (host:pid): on PostgreSQL each source is leased to one poller
        "held by": ":".join((s.get("held_by") or "").split(":")[:2]), "last poll": ago(s.get("last_poll_at")),
        # the backlog the last poll left: lines not read yet (blank where the source cannot say) and
        # the age of the oldest of them (for a file, at least this old)
        "lines behind": s.get("lines_behind"), "oldest unread (s)": _round(s.get("lag_seconds")),
        "latency (ms)": _round(s.get("latency_ms")), "polls": s.get("polls"),
        "errors": s.get("errors"), "events read": s.get("events_read"), "dead letters": s.get("dead_letters"),
        "last error": s.get("last_error") or "", "last error at": (s.get("last_error_at") or "")[:19],
    } for s in status]), hide_index=True, width="stretch", key="operations_pollers", placeholder=NOT_KNOWN,
        column_config={"lines behind": st.column_config.NumberColumn("lines behind", format="%d")})

left, right = st.columns(2)
with left:
    st.subheader("Arrivals")
    arrivals = pd.DataFrame(operations.arrivals(since, bucket=bucket), columns=["bucket", "events", "incidents"])
    if arrivals.empty:
        st.caption("Nothing arrived in this window.")
    else:
        arrivals["time"] = pd.to_datetime(arrivals["bucket"], utc=True)
        arrivals = _every_bucket(arrivals.set_index("time")[["events", "incidents"]], since, now, bucket).reset_index()
        long = arrivals.melt(id_vars="time", value_vars=["events", "incidents"], var_name="what", value_name="count")
        # events outnumber incidents by far: one panel each, with its own scale
        fig = px.bar(long, x="time", y="count", color="what", facet_row="what",
                     labels={"time": f"per {bucket} (UTC)"})
        fig.update_yaxes(matches=None, title=None)
        fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
        fig.update_layout(height=340, margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False)
        st.plotly_chart(fig, key="operations_arrivals")
    polls = pd.DataFrame(operations.poll_series(since))
    if not polls.empty:
        polls["time"] = pd.to_datetime(polls["at"])
        fig = px.line(polls, x="time", y="latency_ms", color="source", labels={"latency_ms": "poll latency (ms)"})
        fig.update_layout(height=220, margin={"l": 10, "r": 10, "t": 10, "b": 10})
        st.plotly_chart(fig, key="operations_latency")
with right:
    st.subheader("Decisions")
    decided = pd.DataFrame(operations.decisions(since))
    if decided.empty:
        st.caption("No decision in this window.")
    else:
        decided["time"] = pd.to_datetime(decided["at"], utc=True).dt.floor(FREQ[bucket])
        per = (_every_bucket(decided.groupby(["time", "action"]).size().unstack("action", fill_value=0),
                             since, now, bucket)
               .reset_index().melt(id_vars="time", var_name="action", value_name="decisions"))
        fig = px.bar(per, x="time", y="decisions", color="action", labels={"time": f"per {bucket} (UTC)"},
                     color_discrete_map={"approve": "#54a24b", "reject": "#e45756", "revise": "#b279a2"})
        fig.update_layout(height=260, margin={"l": 10, "r": 10, "t": 10, "b": 10}, legend_title=None)
        st.plotly_chart(fig, key="operations_decisions")
        decided["minutes to decision"] = decided["waited_seconds"] / 60
        fig = px.histogram(decided, x="minutes to decision", color="action", nbins=30,
                           color_discrete_map={"approve": "#54a24b", "reject": "#e45756", "revise": "#b279a2"})
        fig.update_layout(height=260, margin={"l": 10, "r": 10, "t": 10, "b": 10}, legend_title=None)
        st.plotly_chart(fig, key="operations_time_to_decision")
        st.caption(f"Median time to decision: {duration(timedelta(seconds=float(decided['waited_seconds'].median())))}")

st.subheader("Dead letters")
dead = operations.dead_letters(limit=DEAD_LETTERS_SHOWN)
if not dead:
    st.caption("No input line was rejected.")
else:
    st.dataframe(plain(pd.DataFrame([{"at": d["created_at"][:19], "source": d["source"], "position": d["position"],
                                      "reason": d["reason"], "line": d["raw"][:500]} for d in dead])),
                 hide_index=True, width="stretch", key="operations_dead_letters", placeholder=NOT_KNOWN,
                 column_config={"line": st.column_config.TextColumn("line", width="large")})
    st.caption(f"The first {min(len(dead), DEAD_LETTERS_SHOWN)} rejected lines, oldest first.")

st.subheader("Parsing per source")
layouts = operations.source_layouts()
if not layouts:
    st.caption("No file source has been read yet.")
for item in layouts:
    lay = item["layout"]
    with st.expander(escape_markdown(f"{item['source']} — {item['format']} ({lay.get('why', '')})")):  # a file's name
        st.caption(f"Reads {lay.get('share', 0):.0%} of the first {counted(lay.get('sample_size', 0), 'line')};"
                   f" learnt {item['learned_at'][:19].replace('T', ' ')} UTC.")  # as the page writes times
        st.text(plain(layout_words(lay)))  # text: the example's values are the log's words, never markdown
        st.text(plain(lay.get("line", "")))  # text: a log line is never markdown
        if lay.get("pattern") and st.toggle("Show it as a pattern (for INCIDENTIQ_LOG_PATTERN)",
                                            key=f"operations_pattern_{item['source']}"):
            st.code(plain(lay["pattern"]), language=None)
        st.dataframe(plain(pd.DataFrame([{"field": k, "value": str(v)} for k, v in lay.get("fields", {}).items()])),
                     hide_index=True, width="stretch", key=f"operations_layout_{item['source']}", placeholder=NOT_KNOWN)
st.caption("Override a learnt layout with INCIDENTIQ_LOG_PATTERN (a regex with named groups).")

st.subheader("Storage")
sizes = operations.storage_sizes()
stores = figure_row()
for name, size in sizes.items():
    stores.metric(name, f"{size / 1_048_576:.1f} MiB" if size >= 1_048_576 else f"{size / 1024:.0f} KiB",
                  width="content")
st.text(f"In {operations.storage_location()}.")  # text: a URL or path is never markdown
