"""The inbox as the reviewer reads it: statuses grouped into filters, rows with age and SLA, and
the view (filter, search, assignee, page) as URL query parameters."""
from __future__ import annotations

from datetime import date, datetime, timedelta

import pandas as pd

from pipeline.state import CLOSED_STATUSES, counted
from workbench.audit_words import category_words
from workbench.evidence_view import display_title

# filter -> statuses; the first is the default view (incidents waiting for a human). The filter's
# name is its value in the URL (?show=in-revision); FILTER_LABELS are its words, with its count.
FILTERS: dict[str, tuple[str, ...]] = {
    "awaiting": ("awaiting_approval",),
    "in-revision": ("in_revision",),
    "analyzing": ("analyzing",),
    "failed": ("failed",),
    "decided": CLOSED_STATUSES,
    "all": (),
}
DEFAULT_FILTER = "awaiting"
FILTER_LABELS = {"awaiting": "Awaiting approval", "in-revision": "In revision", "analyzing": "Analyzing",
                 "failed": "Failed", "decided": "Decided", "all": "All"}
PAGE_SIZE = 50
# every column a reviewer may show (Filter, sort and columns), in the inbox's order: what a reviewer
# reads and triages by first (the title right after the id, then status, severity, category,
# confidence and the SLA), then the service, the people on it, its events and age
COLUMNS = ("incident_id", "title", "status", "severity", "category", "confidence", "sla", "service",
           "people", "extent", "seen", "events", "age")
# the columns shown until a reviewer chooses: those that fit, whole and without scrolling the table
# sideways, at 1440 px with the sidebar open (tests/test_browser_inbox.py measures it); the rest are
# one choice away and a chosen set is kept in the URL (&cols=)
DEFAULT_COLUMNS = ("incident_id", "title", "status", "severity", "category", "confidence", "sla")
# the columns' widths in pixels, each holding its longest text as the grid draws it (Source Sans 14 px,
# bold on the chosen and escalated rows, after an 8 px padding: "awaiting approval", "medium",
# "dependency mismatch", "↺ 23h 59m late"), Status too (sized to its rows' texts, the Decided and All
# views' "approved · no code fix" pushed the SLA out of view at 1024 px). With the row's selection box
# (ROW_MARKER_PX) they sum to DEFAULT_GRID_PX: within the table's width at 1024 px with the page's and
# the table's scrollbars drawn (the sidebar closed and the margins narrow there: narrow_window), and
# at 1440 px with the sidebar open (1440 - 300 - 2 × 80 px margins - a 2 px border - 2 × 10 = 958 px); the Title's 300 keep about 45 characters in view
COLUMN_PX = {"incident_id": 140, "title": 300, "status": 122, "severity": 60, "category": 148, "confidence": 56,
             "sla": 100, "service": 170, "people": 190, "extent": 220, "seen": 70, "events": 60, "age": 60}
ROW_MARKER_PX = 32
DEFAULT_GRID_PX = ROW_MARKER_PX + sum(COLUMN_PX[c] for c in DEFAULT_COLUMNS)
TITLE_PX = COLUMN_PX["title"]
# columns of earlier releases a saved view (an old bookmark's &cols=) may still name: what shows them now
RENAMED_COLUMNS = {"approvals": "people", "assignee": "people"}
# a status in the inbox's words: none longer than "awaiting approval", which the Status column's width
# holds (a longer one, "approved · no code fix", cut the SLA at 1024 px in the Decided and All views),
# and never "fixed" for a proposal (nothing is applied)
STATUS_SHORT = {"awaiting_approval": "awaiting approval", "in_revision": "in revision",
                "fix_proposed": "fix proposed", "approved": "approved · no fix"}
# the view's URL query parameters: ?show=decided&q=checkout&assignee=ann&page=2, and the narrowing,
# order and columns a reviewer chose (&sev=critical,high&service=checkout-api&from=2026-11-28
# &to=2026-11-29&sort=severity&cols=incident_id,title,status): a bookmarked URL is a saved view
URL_PARAMS = ("show", "q", "assignee", "page", "sev", "service", "from", "to", "sort", "cols")
SEVERITY_CHOICES = ("critical", "high", "medium", "low")
SORT_LABELS = {"": "the view's own order", "sla": "SLA deadline first", "newest": "newest first",
               "oldest": "oldest first", "severity": "most severe first", "confidence": "most confident first",
               "events": "most events first"}
COLUMN_LABELS = {"incident_id": "Incident", "title": "Title", "status": "Status", "severity": "Severity",
                 "category": "Category", "confidence": "Conf.", "sla": "SLA", "service": "Service",
                 "people": "People", "extent": "Reach", "seen": "Seen", "events": "Events", "age": "Age"}
ANYONE = "anyone"
BACKFILLED_MARK = "↺"
OVERDUE_TINT = "background-color: rgba(255, 75, 75, 0.18)"
ESCALATED_TINT = "background-color: rgba(255, 170, 0, 0.30); font-weight: 600"
# the chosen row (j / k, "Open incident"): the table's cursor
CHOSEN_TINT = "background-color: rgba(28, 131, 225, 0.30); font-weight: 600"


def filter_count(counts: dict[str, int], label: str) -> int:
    """How many incidents a filter shows, from the per-status counts."""
    statuses = FILTERS[label] or tuple(counts)
    return sum(counts.get(s, 0) for s in statuses)


def filter_label(name: str, counts: dict[str, int]) -> str:
    """A filter as its option reads: "Awaiting approval (4)" (the same words and number as the
    caption under the table: "Showing 1–4 of 4 awaiting approval")."""
    return f"{FILTER_LABELS[name]} ({filter_count(counts, name)})"


def showing_text(first: int, shown: int, total: int | None, name: str, *, more: bool = False) -> str:
    """"Showing 1–50 of 120 awaiting approval"; a narrowed view (a search, one assignee, a severity…)
    has no stored count: "Showing 1–3 of 3 that match" on its last page, else "Showing 1–50 of more
    than 50 that match" (a bare "Showing 1–3" did not say how many matched)."""
    last = first + shown - 1
    span = f"{first}–{last}"
    if total is not None:
        return f"Showing {span} of {total} {FILTER_LABELS[name].lower()}"
    return f"Showing {span} of {'more than ' if more else ''}{last} that match"


def status_text(status: str) -> str:
    return STATUS_SHORT.get(status, status.replace("_", " "))


def view_from_url(params: dict[str, str]) -> tuple[dict, list[str]] | None:
    """The view a URL names (a reload, a deep link, Back), or None when it names none: {show, q,
    assignee, page}, each checked, with what was wrong with a bad value (it falls back to the default), each a
    clause that follows "In the link, "."""
    if not any(params.get(k) is not None for k in URL_PARAMS):
        return None
    problems = []
    show = params.get("show") or DEFAULT_FILTER
    if show not in FILTERS:
        problems.append(f"there is no filter named {show!r} (the filters: {', '.join(FILTERS)})")
        show = DEFAULT_FILTER
    raw_page = params.get("page") or "1"
    page = int(raw_page) if raw_page.isdigit() and 0 < len(raw_page) < 7 else 0
    if page < 1:
        problems.append(f"the page {raw_page!r} is not a page number")
        page = 1
    severities = [v for v in (params.get("sev") or "").split(",") if v]
    if set(severities) - set(SEVERITY_CHOICES):
        problems.append(f"the severity {params['sev']!r} is not among {', '.join(SEVERITY_CHOICES)}")
        severities = [v for v in severities if v in SEVERITY_CHOICES]
    dates = {}
    for name in ("from", "to"):
        raw = params.get(name) or ""
        try:
            dates[name] = date.fromisoformat(raw).isoformat() if raw else None
        except ValueError:
            problems.append(f"the {name} date {raw!r} is not a date (YYYY-MM-DD)")
            dates[name] = None
    sort = params.get("sort") or ""
    if sort not in SORT_LABELS:
        problems.append(f"there is no order named {sort!r} (the orders: {', '.join(o for o in SORT_LABELS if o)})")
        sort = ""
    columns = url_columns(params.get("cols") or "")
    if params.get("cols") and not columns:
        problems.append(f"there is no column among {params['cols']!r}")
    return {"show": show, "q": (params.get("q") or "").strip(), "assignee": params.get("assignee") or None,
            "page": page, "sev": severities, "service": params.get("service") or None, "from": dates["from"],
            "to": dates["to"], "sort": sort, "cols": shown_columns(columns)}, problems


def url_columns(text: str) -> list[str]:
    """The columns a URL's &cols= names that still exist, an old name as the column that shows it now
    ("approvals" -> "people"); a name no column has any more is passed over, not an error."""
    names = [RENAMED_COLUMNS.get(c, c) for c in text.split(",")]
    return [c for c in dict.fromkeys(names) if c in COLUMNS]


def shown_columns(chosen: list[str] | tuple[str, ...] | None) -> list[str]:
    """The columns to draw, in the inbox's order: those chosen (the default set when none), the id
    always first."""
    chosen = set(chosen or DEFAULT_COLUMNS) | {"incident_id"}
    return [c for c in COLUMNS if c in chosen]


def view_to_url(view: dict) -> dict[str, str]:
    """The query parameters of a view: the filter always (so the URL names the view), the rest
    only when not their default."""
    out = {"show": view["show"]}
    if view.get("q"):
        out["q"] = view["q"]
    if view.get("assignee"):
        out["assignee"] = view["assignee"]
    if int(view.get("page") or 1) > 1:
        out["page"] = str(view["page"])
    if view.get("sev"):
        out["sev"] = ",".join(v for v in SEVERITY_CHOICES if v in view["sev"])
    for name in ("service", "from", "to", "sort"):
        if view.get(name):
            out[name] = str(view[name])
    if view.get("cols") and shown_columns(view["cols"]) != list(DEFAULT_COLUMNS):
        out["cols"] = ",".join(shown_columns(view["cols"]))
    return out


def duration(delta: timedelta) -> str:
    """A compact human duration: 45s, 12m, 3h 05m, 2d 4h."""
    seconds = int(abs(delta.total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes}m"
    if days < 1:
        return f"{hours}h {minutes % 60:02d}m"
    return f"{days}d {hours % 24}h"


def is_overdue(row: dict, now: datetime) -> bool:
    """An open incident past its SLA deadline (decided ones are never overdue)."""
    return row["status"] not in CLOSED_STATUSES and datetime.fromisoformat(row["sla_deadline"]) < now


def is_escalated(row: dict) -> bool:
    """An open incident the poller escalated (its SLA ran out and people were told)."""
    return row["status"] not in CLOSED_STATUSES and bool(row.get("escalated_at"))


def sla_text(row: dict, now: datetime) -> str:
    """The time left before the decision is due, short enough for a narrow column: "3h 05m left",
    "2h 05m late" or "decided" (an escalation shows in the status: "escalated"); "↺ 23h 59m left"
    when backfilled: its log was already past the SLA when it was opened (the clock runs from then)."""
    if row["status"] in CLOSED_STATUSES:
        return "decided"
    left = datetime.fromisoformat(row["sla_deadline"]) - now
    text = f"{duration(left)} late" if left.total_seconds() < 0 else f"{duration(left)} left"
    # a mark, not a word: the default columns leave the SLA no room for one at 1440 px (the help says it)
    return f"{BACKFILLED_MARK} {text}" if row.get("backfilled") else text


def extent_text(row: dict) -> str:
    """How far an incident reaches: "2 patterns · 1 service · 14 events"."""
    return " · ".join((counted(int(row.get("pattern_count") or 1), "pattern"),
                       counted(int(row.get("service_count") or 1), "service"),
                       counted(int(row["event_count"]), "event")))


# about the characters of a title the Title column keeps in view (TITLE_PX): two titles alike that far
# look like one incident twice (sshd's pam_unix failures, one incident per remote host and user)
TITLE_IN_VIEW = 45


def told_apart(titles: list[str], *, lead_words: int = 2) -> list[str]:
    """The page's titles, each that shares its first TITLE_IN_VIEW characters with another's said by
    what tells it from them (issue 38.3): its first words, then `…` and its own words from the first
    word where the alike titles differ (`authentication failure; … rhost=218.188.2.4 user=guest`), the
    values the log's lines wrote. A title no other shares that far, or one alike to the end, is kept.
    `lead_words`: how many first words are kept before the `…` (a narrower column keeps fewer)."""
    groups: dict[str, list[int]] = {}
    for n, title in enumerate(titles):
        if len(title) > TITLE_IN_VIEW:
            groups.setdefault(title[:TITLE_IN_VIEW], []).append(n)
    out = list(titles)
    for members in groups.values():
        words = [titles[n].split() for n in members]
        for n, own in zip(members, words):
            # told from the title most like it: a member that differs earlier (`tty=:0` among three
            # `tty=NODEVssh`) left the others' words after the group's common start cut off in view
            same = max((_same_start(own, other) for other in words if other != own), default=None)
            if same is None:
                continue  # alone, or alike to the end
            lead = " ".join(own[:min(same, lead_words)])
            rest = " ".join(own[same:]) or "(nothing after)"
            out[n] = f"{lead} … {rest}" if same > lead_words else f"{lead} {rest}"
    return out


def _same_start(one: list[str], other: list[str]) -> int:
    """How many first words two titles share."""
    same = 0
    while same < min(len(one), len(other)) and one[same] == other[same]:
        same += 1
    return same


def title_text(row: dict) -> str:
    """The title column: the incident's link first when it has one ("recurred after INC-… was
    approved · Connection refused …"), then its title in the log's words."""
    return f"{row['link']} · {display_title(row)}" if row.get("link") else display_title(row)


def row_status_text(row: dict) -> str:
    """The status column's words for a row: "escalated" for an open incident the poller escalated."""
    return "escalated" if is_escalated(row) else status_text(row["status"])


def approvals_text(row: dict) -> str:
    """"1 of 2 approvals: ann" while an incident waits for its second approver; empty otherwise."""
    given = row.get("approvals") or []
    needed = int(row.get("approvals_needed") or 1)
    if row["status"] in CLOSED_STATUSES or (needed <= 1 and not given):
        return ""
    names = ", ".join(a.get("by") or "?" for a in given)
    return f"{len(given)} of {counted(needed, 'approval')}" + (f": {names}" if names else "")


def assignee_text(row: dict) -> str:
    return f"on it: {row['assignee']}" if row.get("assignee") else ""


def people_text(row: dict) -> str:
    """Who is on an incident and who approved it so far, in one column: "on it: ann · 1 of 2
    approvals: bob"; empty when nobody is."""
    return " · ".join(t for t in (assignee_text(row), approvals_text(row)) if t)


def assignee_choices(me: str | None, assignees: list[str]) -> list[str]:
    """The assignee filter's options: anyone, me (when someone is acting), then everyone on an incident."""
    out = [ANYONE] + ([me] if me else [])
    return out + sorted({a for a in assignees if a and a != me})


def inbox_frame(rows: list[dict], now: datetime) -> pd.DataFrame:
    """One row per incident with the columns the inbox shows, plus an `overdue` flag."""
    records = [{
        "incident_id": r["incident_id"],
        "service": r["service"],
        "severity": r["severity"],
        "category": category_words(r["category"]),  # in words, as the incident page says it
        "confidence": r["confidence"],
        "events": r["event_count"],
        "extent": extent_text(r),
        "seen": r.get("seen", ""),
        "age": duration(now - datetime.fromisoformat(r["created_at"])),
        "sla": sla_text(r, now),
        "status": row_status_text(r),
        "people": people_text(r),
        "title": title_text(r),  # "Column … not found", never <STR>; where it came from first
        "overdue": is_overdue(r, now),
        "escalated": is_escalated(r),
    } for r in rows]
    for record, title in zip(records, told_apart([record["title"] for record in records])):
        record["title"] = title
    return pd.DataFrame.from_records(records, columns=[*COLUMNS, "overdue", "escalated"])


def row_tint(row) -> str:
    """Escalated rows in amber and bold, other overdue rows in red, the rest plain."""
    if row["escalated"]:
        return ESCALATED_TINT
    return OVERDUE_TINT if row["overdue"] else ""


def highlight_overdue(frame: pd.DataFrame, chosen: int | None = None):
    """The frame to draw: a Styler that tints escalated and overdue rows and the chosen row (the
    keys' cursor, in blue), or the frame itself when no row is tinted. Only the tinted rows are styled
    (pandas renders a style for every cell it covers: ~40 ms for 50 rows, ~15 ms for one). Show it
    with column_order=COLUMNS to hide the flags."""
    tints = {i: row_tint(frame.loc[i]) for i in frame.index[frame["overdue"] | frame["escalated"]]}
    if chosen is not None and chosen in frame.index:
        tints[chosen] = CHOSEN_TINT
    if not tints:
        return frame
    return frame.style.apply(lambda row: [tints[row.name]] * len(row), axis=1, subset=pd.IndexSlice[list(tints), :])


def reversed_days(narrowing: dict) -> str | None:
    """A "Logged from" after the "Logged to": no day is in between, said (it showed an empty inbox)."""
    start, end = narrowing.get("from"), narrowing.get("to")
    if start and end and start > end:
        return f"Logged from {start} is after Logged to {end}: no day is in between, so no incident is shown."
    return None


def nothing_shown(search: str, narrowing: dict, assignee_narrowed: bool) -> str:
    """What an empty view says: which choices left it empty, not "No incidents here." over an inbox full
    of them (walkthrough s58: a day the log was read, not logged, emptied it without a word of why)."""
    narrowed = [name for name, key in (("severity", "sev"), ("service", "service")) if narrowing.get(key)]
    if narrowing.get("from") or narrowing.get("to"):
        narrowed.append("days logged")
    if assignee_narrowed:
        narrowed.append("assignee")
    if search:
        narrowed.insert(0, "search")
    if not narrowed:
        return "No incidents here."
    if narrowed == ["search"]:
        return "No incident matches this search."
    days = (" The days are the log's own day of each incident's first error, not the day it was read."
            if "days logged" in narrowed else "")
    return ("No incident matches the " + ", ".join(narrowed) + " chosen: widen them (under “Filter, sort and "
            "columns”, or the search and assignee above) to see more." + days)
