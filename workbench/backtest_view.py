"""The Backtests page's parts: the summary, the confusion table, the chart, one disagreement, and
the link from a disagreement to the incident's time travel at the checkpoint the backtest used."""
from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import step_words
from pipeline.state import counted
from workbench.audit_words import category_words, changes_words
from workbench.figures import figure_row
from workbench.literal import analysis_text, escape_markdown

INCIDENT_PAGE = "app_pages/incident.py"
HISTORY_TAB = "History & time travel"
VERDICT_WORDS = {
    "changes_approved": "changes a category reviewers approved",
    "fixes_correction": "names the category a reviewer corrected to",
    "repeats_correction": "repeats the category a reviewer corrected",
    "other_than_correction": "names a third category where a reviewer corrected",
    "changes_rejected": "changes a rejected analysis",
    "repeats_rejected": "repeats a rejected analysis",
    "changes": "changes the category",
    "agrees": "agrees with the reviewers",
    "same": "same as the live analysis",
}


_VALUE = r"[^\s()]+?(?=$|\s|\)|:\s|:$|,)"
_FLAG = re.compile(rf"--(status|model|docs|settings|since|limit|resume) ({_VALUE})")
_FLAGS = re.compile(rf"--(?:status|model|docs|settings|since|limit|resume) {_VALUE}(?: --(?:status|model|docs|settings|"
                    rf"since|limit|resume) {_VALUE})*")


def when_words(value) -> str:
    """A stored time as the rest of the workbench writes it: "2026-12-06 16:44:38 UTC", never ISO's T."""
    text = str(value or "")[:19].replace("T", " ")
    return f"{text} UTC" if text else "?"


def backtest_name(row: dict) -> str:
    """A backtest as a reviewer tells it apart: its candidate and when it started ("settings
    cand.toml (offline analyzer), started 2026-12-06 16:44:38 UTC"), never its id."""
    return f"{row['candidate']}, started {when_words(row.get('started_at'))}"


def _flag_words(flag: str, value: str) -> str:
    if flag == "status":
        return SCOPES.get(value, value)
    if flag == "since":
        days = value.removesuffix("d")
        return f"opened in the last {counted(int(days), 'day') if days.isdigit() else days + ' days'}"
    if flag == "limit":
        return f"at most {counted(int(value), 'incident') if str(value).isdigit() else str(value) + ' incidents'}"
    return {"model": "model {}", "docs": "docs folder {}", "settings": "settings file {}",
            "resume": "resuming {}"}[flag].format(value)


def flags_words(text: str) -> str:
    """The backtest command's flags said in words ("--status decided --settings c.toml" → "decided
    incidents, settings file c.toml"; "--model gpt-4o-mini: no endpoint" → "model gpt-4o-mini: …")."""
    def run(m: re.Match) -> str:
        return ", ".join(_flag_words(f, v) for f, v in _FLAG.findall(m.group(0)))
    text = re.sub(r"\bresume bt-\w+", "resuming a stopped backtest", text or "")
    return _FLAGS.sub(run, text)


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def agreement_delta(live: float | None, candidate: float | None) -> dict:
    """The candidate's agreement against the live analyst's, in points: a gain up and green, a loss
    down and red, and no change (as shown, to the point) neutral, with no arrow ("+0 pts" read as a gain)."""
    if live is None or candidate is None:
        return {"delta": None}
    points = round((candidate - live) * 100)
    if points == 0:
        return {"delta": "no change", "delta_color": "off", "delta_arrow": "off"}
    return {"delta": f"{points:+d} pts"}


def incidents_figure(b: dict, s: dict) -> str:
    """Analysed of selected: "7/7" for a backtest that stopped at 7 of its 28 read as all done, so
    one that has not reached every selected incident says how far it got: "7 of 28 (stopped)"."""
    if b.get("total") and b["total"] > s["incidents"]:
        return f"{s['incidents']} of {b['total']} ({b['status']})"
    return f"{s['analysed']}/{s['incidents']}"


def summary(rep: dict) -> None:
    b, s = rep["backtest"], rep["summary"]
    st.caption(escape_markdown(f"Candidate: {b['candidate']} · {b['status']} · started {when_words(b['started_at'])}"
                               + (f" · finished {when_words(b['finished_at'])}" if b["finished_at"] else "")))
    row = figure_row()
    row.metric("Incidents", incidents_figure(b, s), help="analysed / selected", width="content")
    row.metric("Category changed", s["category_changed"], width="content")
    row.metric("Agreement, live", _pct(s["live_agreement"]), help="with the category reviewers approved",
               width="content")
    row.metric("Agreement, candidate", _pct(s["candidate_agreement"]), width="content",
               **agreement_delta(s["live_agreement"], s["candidate_agreement"]))
    row.metric("Fix newly eligible", s["newly_fix_eligible"], width="content",
               help=f"{s['fix_no_longer_eligible']} no longer eligible")
    corr = rep["corrections"]
    if any(corr.values()):
        st.markdown(f"Where reviewers corrected the category: the candidate matches the correction on "
                    f"**{len(corr['better'])}**, repeats the corrected category on **{len(corr['same_mistake'])}**, "
                    f"names a third on **{len(corr['worse'])}**.")


def confusion_frame(confusion: dict[str, dict[str, int]]) -> pd.DataFrame:
    """Approved category (rows) against the candidate's (columns), counts; each category in the
    reviewer's words, as the incident page says it (the report's JSON keeps the codes)."""
    if not confusion:
        return pd.DataFrame()
    named = sorted({c for row in confusion.values() for c in row})
    return pd.DataFrame([[confusion[h].get(n, 0) for n in named] for h in sorted(confusion)],
                        index=[category_words(h) for h in sorted(confusion)], columns=[category_words(n) for n in named])


def agreement_figure(by_outcome: dict) -> go.Figure:
    """Per human outcome: incidents whose category the candidate kept, and changed. Horizontal bars,
    so each outcome's words are a whole label beside its bar (under a half-width column's bars they
    were cut)."""
    words = [o["words"] for o in by_outcome.values()]
    fig = go.Figure([go.Bar(name="same category", y=words, x=[o["same_category"] for o in by_outcome.values()],
                            orientation="h"),
                     go.Bar(name="changed", y=words, x=[o["changed_category"] for o in by_outcome.values()],
                            orientation="h")])
    fig.update_layout(barmode="stack", height=120 + 40 * len(words), margin=dict(l=10, r=10, t=10, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02),
                      yaxis=dict(automargin=True, autorange="reversed"), xaxis=dict(title="incidents"))
    return fig


def open_at_checkpoint(incident_id: str, checkpoint_id: str | None) -> None:
    """Open the incident page on its time travel, at a checkpoint."""
    params = {"incident": incident_id}
    if checkpoint_id:
        params["checkpoint"] = checkpoint_id
    st.switch_page(INCIDENT_PAGE, query_params=params)


def take_checkpoint_link(incident_id: str, review=None) -> None:
    """On the incident page: a `?checkpoint=` link opens the time-travel tab with it selected. Given
    the `review` service, a checkpoint the incident does not have is said here, where the link lands
    (the top of the page), not only in the History tab a screen or more below."""
    checkpoint_id = st.query_params.get("checkpoint")
    if not checkpoint_id:
        return
    st.session_state[f"incident_tab_{incident_id}"] = HISTORY_TAB
    del st.query_params["checkpoint"]
    if review is not None and checkpoint_id not in {n["checkpoint_id"] for n in review.tree(incident_id)["nodes"]}:
        st.warning(escape_markdown(f"The link's checkpoint {checkpoint_id} is not one of this incident's "
                                   "checkpoints: the History & time travel tab below shows the newest."),
                   icon=":material/link_off:")
        return
    st.session_state.setdefault("incident_history_next_pick", {})[incident_id] = checkpoint_id


def _side(title: str, category, confidence, root_cause, extra: str = "") -> None:
    st.markdown(f"**{title}**")
    conf = "" if confidence is None else f" @ {confidence:.2f}"
    st.markdown(escape_markdown(f"{category_words(category) or '-'}{conf}"))
    if root_cause:  # whole, wrapped (cut at 300 characters it ended mid-word)
        st.caption(escape_markdown(analysis_text(root_cause)))
    if extra:
        st.caption(escape_markdown(extra))


def _fix(item: dict, side: str) -> str:
    """One side's fix proposal in words (workbench.pairwise_view.fix_lines): its confidence against the
    threshold, its file and plan, or why there is none; not "fix proposed" alone."""
    from workbench.pairwise_view import fix_lines

    return "\n\n".join(fix_lines({"fix_proposed": bool(item.get(f"{side}_proposal_hash")),
                                    "fix": item.get(f"{side}_fix") or {}}))


def _same_answer(item: dict) -> bool:
    """The candidate answered as the live analyst did: the same category, confidence, root cause and fix."""
    return (item["old_category"] == item["new_category"] and item["old_confidence"] == item["new_confidence"]
            and item["old_root_cause"] == item["new_root_cause"] and _fix(item, "old") == _fix(item, "new"))


def difference_words(item: dict) -> str:
    """What the candidate's answer changes against the live analyst's, in words ("names X where the
    live analyst named Y; proposes no code fix where the live analysis did"): an "other change" is
    headed by its difference, not by a verdict such as "same as the live analysis"."""
    said = []
    if item["old_category"] != item["new_category"]:
        said.append(f"names {category_words(item['new_category']) or 'no category'} where the live analyst named "
                    f"{category_words(item['old_category']) or 'none'}")
    if item["newly_fix_eligible"]:
        said.append("proposes a code fix where the live analysis proposed none")
    if item.get("fix_no_longer_eligible"):
        said.append("proposes no code fix where the live analysis proposed one")
    return "; ".join(said) or "no difference"


def disagreement(item: dict, *, index: int, key: str = "backtests_open", heading: str | None = None) -> None:
    """One result side by side: the live analyst's own answer, the candidate's, and who did what;
    headed by how it stands to the reviewers, or by `heading` (an other change: what differs)."""
    with st.container(border=True):
        head, link = st.columns([4, 1])
        said = heading or VERDICT_WORDS.get(item["verdict"], item["verdict"]) + (
            " · code fix newly eligible" if item["newly_fix_eligible"] else "")
        head.markdown(escape_markdown(f"{item['incident_id']} — {said}"))
        # switched in the page's run, not a callback: a callback cannot name the page by its path
        if link.button("Time travel", key=f"{key}_{index}", icon=":material/history:",
                       help="the incident's time travel at the checkpoint this backtest started from"):
            open_at_checkpoint(item["incident_id"], item["checkpoint_id"])
        old, new, human = st.columns(3)
        asked = any(s["action"] == "revise" for s in (item["human_decision"] or {}).get("steps") or [])
        with old:
            # the analyst's answer before any person's edit, fork or request: what the candidate is compared with
            _side("Live analyst's answer" + (", before the request for changes" if asked else ""),
                  item["old_category"], item["old_confidence"], item["old_root_cause"], _fix(item, "old"))
        with new:
            if _same_answer(item):  # printed twice, word for word, it read as two answers to compare (walkthrough s58)
                _side("Candidate", item["new_category"], item["new_confidence"], None,
                      "The same answer as the live analyst's: the same root cause and fix proposal.")
            else:
                _side("Candidate", item["new_category"], item["new_confidence"], item["new_root_cause"],
                      _fix(item, "new"))
        with human:
            st.markdown("**What people did**")
            st.markdown(escape_markdown(item.get("outcome_words") or item["outcome"].replace("_", " ")))
            # who did what in the audit's words ("set the category unknown → connection refused"), not the fields' paths
            for line in step_words(item["human_decision"], changes_words):
                st.caption(escape_markdown(line))
            if item["human_category"]:
                st.caption(escape_markdown(f"approved category: {category_words(item['human_category'])}"))


SCOPES = {"decided": "decided incidents", "paused": "incidents waiting at the gate", "all": "both"}
CANDIDATE_KINDS = {"live": "the live analyst again", "model": "another model", "docs": "another docs folder",
                   "settings": "a settings file"}


def start_form(service) -> None:
    """Start a backtest: the candidate (a model, a docs folder or a TOML settings file) and the scope."""
    with st.form("backtests_start"):
        kind = st.radio("Candidate", list(CANDIDATE_KINDS), format_func=lambda k: CANDIDATE_KINDS[k], horizontal=True,
                        key="backtests_kind")
        value = st.text_input("Model name, or the path of the docs folder or settings file (on the workbench's "
                              "machine)", key="backtests_value",
                              placeholder="gpt-4o-mini · /srv/docs-next · candidate.toml with CODE_FIX_MIN_CONFIDENCE = 0.7")
        scope, since, limit = st.columns(3)
        status = scope.selectbox("Incidents", list(SCOPES), format_func=lambda s: SCOPES[s], key="backtests_scope")
        days = since.number_input("Opened in the last … days (0: any time)", min_value=0, value=0, step=1,
                                  key="backtests_since")  # whole days: a float field showed "0.00"
        most = limit.number_input("At most … incidents, oldest first (0: all)", min_value=0, value=0, step=1,
                                  key="backtests_limit")
        submitted = st.form_submit_button("Start the backtest", icon=":material/play_arrow:")
    if not submitted:
        return
    if kind != "live" and not value.strip():
        st.error(f"Give the {CANDIDATE_KINDS[kind].removeprefix('another ').removeprefix('a ')} to try.")
        return
    named = {"model": "model", "docs": "docs", "settings": "settings_file"}.get(kind)
    try:
        pid = service.start(**({named: value} if named else {}), status=status, since_days=days or None,
                            limit=int(most) or None)
    except IncidentIQError as exc:
        st.error(escape_markdown(flags_words(exc.message)))
        return
    # the page follows it: once its worker has claimed it, the picker shows it (see follow_started)
    st.session_state[STARTED] = pid
    st.success("Started: its worker is loading; its progress shows below, and its report here once it has "
               "claimed the incidents. It never touches the live runs.")


STARTED = "backtests_started_pid"


def follow_started(service, shown: list[str]) -> None:
    """Once the worker this reviewer started has claimed its backtest, pick that backtest (before the
    picker is drawn): the report shown is of the backtest just started, not the one picked before."""
    pid = st.session_state.get(STARTED)
    if pid is None:
        return
    backtest_id = service.launched(pid)
    if backtest_id in shown:
        st.session_state["backtests_pick"] = backtest_id
        del st.session_state[STARTED]


def _under_way(service, rows: list[dict]) -> tuple:
    """What the page shows running: the backtests with a live worker, and the workers it started
    (those still loading among them)."""
    return tuple(r["backtest_id"] for r in rows if r["working"]), service.starting(), len(service.pending())


def _runs(service, drawn: tuple) -> None:
    for why in service.failures():
        st.error(escape_markdown(flags_words(why)))
    rows = service.backtests()
    if _under_way(service, rows) != drawn:  # one started or ended since the page was drawn: all follow
        st.rerun()
    for p in service.pending():
        # a fresh worker loads the analyst before it claims the incidents: seconds on a busy machine,
        # in which the page said nothing and a second click started a second backtest
        with st.container(border=True):
            st.progress(0.0, text=escape_markdown(f"Starting ({flags_words(p['what'])}): the worker is loading the analyst "
                                                  f"({p['seconds']:.0f} s)…"))
    for r in rows:
        if r["status"] not in ("running", "stopped"):
            continue
        text = f"{backtest_name(r)}: {r['done']} of {counted(r['total'], 'incident')}"
        with st.container(border=True):
            bar, act = st.columns([4, 1])
            if r["working"]:
                bar.progress(r["done"] / r["total"] if r["total"] else 1.0, text=escape_markdown(text))
                if act.button("Cancel", key=f"backtests_cancel_{r['backtest_id']}", icon=":material/stop:",
                              help="stop now; the results so far are kept, and Resume does the rest (the incident in hand again)"):
                    if service.cancel(r["backtest_id"]):
                        st.toast(escape_markdown(f"Stopping the backtest of {backtest_name(r)}"))
            else:
                bar.markdown(escape_markdown(f"Stopped: {text}. The results so far are kept."))
                if act.button("Resume", key=f"backtests_resume_{r['backtest_id']}", icon=":material/play_arrow:",
                              help="continue with the incidents it has not analysed yet"):
                    try:
                        service.resume(r["backtest_id"])
                    except IncidentIQError as exc:
                        st.error(escape_markdown(flags_words(exc.message)))
                    else:
                        st.rerun()


def runs_panel(service, rows: list[dict]) -> None:
    """The backtests under way (progress, Cancel) and the stopped ones (Resume); redrawn every two
    seconds while one runs, the whole page once one starts or ends."""
    drawn = _under_way(service, rows)
    st.fragment(_runs, run_every=2 if any(drawn) else None)(service, drawn)
