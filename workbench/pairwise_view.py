"""The Backtests page's pairwise review (issue 38.3): one incident's two answers, the live
analyst's and the candidate's, as A and B in a random order the reviewer does not see until they
have judged; the better one or `equal` with a required reason, and the right category when both
are wrong. The counts, the judgments so far and their download as labelled eval cases."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.state import CATEGORIES, counted, readable_title
from workbench import session
from workbench.audit_words import category_words
from workbench.figures import figure_row
from workbench.literal import analysis_text, escape_markdown

CHOICE_WORDS = {"A": "A is better", "B": "B is better", "equal": "equally good (or bad)"}
SIDE_WORDS = {"live": "the live analyst's", "candidate": "the candidate's", "equal": "neither"}
DONE_KEY = "backtests_judged_message"
FORM_KEY = "backtests_judge_form"


def fix_lines(side: dict, *, threshold: bool = True) -> list[str]:
    """A side's fix proposal as a reviewer judges it: the confidence against the code-fix threshold,
    the file its diff changes (or that it has none), and its plan; or why there is none. "fix
    proposed" alone could not tell a candidate that only changes the fix from the live analyst.
    `threshold` False (the two sides' thresholds differ): the threshold is not said at all, neither its
    number nor whether a side's confidence is above or below its own: one answer's "below its threshold"
    beside the other's "at or above" at the same confidence told which side ran with the stricter
    setting, the candidate, before the judgment. What each side proposes is said either way."""
    fix = side.get("fix") or {}
    lines = []
    if threshold and fix.get("confidence") is not None and fix.get("threshold") is not None:
        above = "at or above" if fix["confidence"] >= fix["threshold"] else "below"
        lines.append(f"Confidence {fix['confidence']:.2f}, {above} the code-fix threshold {fix['threshold']:.2f}.")
    if not side["fix_proposed"]:
        why = analysis_text(str(fix.get("why_not") or "").removeprefix("no code fix: "))
        if not threshold and fix.get("threshold") is not None and f"{fix['threshold']:.2f}" in why:
            why = ""  # the reason is the side's own threshold: saying it would tell the side
        return [*lines, "No fix proposed" + (f": {why}." if why else ".")]
    if fix.get("target_file"):
        lines.append(f"Fix proposed: a diff of {fix['target_file']} ({counted(fix.get('diff_lines', 0), 'line')} changed).")
    else:
        lines.append("Fix proposed: a plan, no diff." if fix else "Fix proposed.")
    return lines + [f"• {analysis_text(step)}" for step in fix.get("plan") or []]


def same_threshold(pair: dict) -> bool:
    """Whether both answers were made with the same code-fix threshold (naming it then tells nothing)."""
    return (pair["live"].get("fix") or {}).get("threshold") == (pair["candidate"].get("fix") or {}).get("threshold")


def _answer(title: str, side: dict, *, threshold: bool) -> None:
    with st.container(border=True):
        st.markdown(f"**{title}**")
        conf = "" if side["confidence"] is None else f" @ {side['confidence']:.2f}"
        st.markdown(escape_markdown(f"{category_words(side['category']) or '-'}{conf}"))
        if side["root_cause"]:  # whole, wrapped: cut at 600 characters it ended mid-word ("a Pro")
            st.caption(escape_markdown(analysis_text(side["root_cause"])))
        st.markdown("**Fix proposal**")
        st.caption(escape_markdown("\n\n".join(fix_lines(side, threshold=threshold))))


def pairwise_panel(service, backtest_id: str, counts: dict) -> None:
    """The pairwise review of one backtest."""
    st.subheader("Pairwise review")
    st.caption("Which answer is better for the incident? The two are shown as A and B in a random order; which "
               "was the live analyst's is said once you have judged. Judging an incident again replaces your "
               "earlier judgment of it.")
    if done := st.session_state.pop(DONE_KEY, None):
        st.success(escape_markdown(done))
    row = figure_row()  # wraps at 1024 px, each label whole (five columns cut "Identical answers")
    row.metric("Judgments", counts["judgments"], help=f"of {counted(counts['incidents'], 'incident')}", width="content")
    row.metric("Candidate preferred", counts["candidate_preferred"], width="content")
    row.metric("Live preferred", counts["live_preferred"], width="content")
    row.metric("Equal", counts["equal"], help="judged equally good (or bad)", width="content")
    row.metric("Identical answers", counts["identical"], width="content",
               help="incidents where the live analyst and the candidate answered the same: counted as equal "
                    "without a judgment, and not offered for one")
    both = service.pairs(backtest_id)
    pairs = {p["incident_id"]: p for p in both if not p["identical"]}
    if len(pairs) < len(both):
        identical = len(both) - len(pairs)
        st.caption(escape_markdown(f"{identical} of the {counted(len(both), 'incident')} {'has' if identical == 1 else 'have'} identical answers "
                                   "(the same category, confidence, root cause and fix): there is nothing to "
                                   "prefer, so they count as equal and are not offered for judgment."))
    if not pairs:
        st.info("No incident of this backtest has two different answers to judge."
                if both else "No incident of this backtest has both answers to compare.")
        _judged(service, backtest_id, counts)
        return
    who = session.actor()
    mine = {r["incident_id"] for r in counts["rows"] if who is not None and r["reviewer"] == who.id}
    key = f"backtests_pair_pick_{backtest_id}"
    if key not in st.session_state:  # the first this reviewer has not judged yet
        st.session_state[key] = next((i for i in pairs if i not in mine), next(iter(pairs)))
    incident_id = st.selectbox("Incident", list(pairs), key=key,
                               format_func=lambda i: f"{i} · {readable_title(pairs[i]['title'] or '')[:80]}"
                                                     + (" · judged by you" if i in mine else ""))
    orders = st.session_state.setdefault("backtests_pair_orders", {})
    a_side = orders.setdefault((backtest_id, incident_id), service.shown_order())
    pair = pairs[incident_id]
    left, right = st.columns(2)
    shared = same_threshold(pair)  # blind: a threshold of one side's own would tell which it is
    with left:
        _answer("A", pair[a_side], threshold=shared)
    with right:
        _answer("B", pair["candidate" if a_side == "live" else "live"], threshold=shared)
    blocked = session.blocked("judge")
    # the form's widgets are numbered by the judgments recorded in this session: the browser keeps a
    # widget's value while its key stays (even once the server forgot it), so the next incident's form
    # would open with the last judgment's choice and reason, ready to be recorded again
    form = st.session_state.get(FORM_KEY, 0)
    with st.form(f"backtests_judge_{backtest_id}_{form}", clear_on_submit=False):
        choice = st.radio("Which is better?", list(CHOICE_WORDS), format_func=CHOICE_WORDS.get, index=None,
                          horizontal=True, key=f"backtests_judge_choice_{form}")
        reason = st.text_area("Why (required)", key=f"backtests_judge_reason_{form}", max_chars=2000)
        correction = st.selectbox("The right category, if both are wrong (optional)", ["", *CATEGORIES],
                                  key=f"backtests_judge_category_{form}",
                                  format_func=lambda c: category_words(c) or "—")
        sent = st.form_submit_button("Record the judgment", disabled=blocked is not None, help=blocked)
    if sent:
        _record(service, who, backtest_id=backtest_id, incident_id=incident_id, a_side=a_side, choice=choice,
                reason=reason, correction=correction, pair=pair)
    _judged(service, backtest_id, counts)


def _record(service, who, *, backtest_id: str, incident_id: str, a_side: str, choice: str | None, reason: str,
            correction: str, pair: dict) -> None:
    if choice is None:
        st.error("Choose A, B or equal.")
        return
    if not reason.strip():
        st.error("Say why: a judgment needs a reason.")
        return
    try:
        row = service.judge(who, backtest_id=backtest_id, incident_id=incident_id, a_side=a_side, choice=choice,
                            reason=reason, correction=correction or None)
    except IncidentIQError as exc:
        st.error(escape_markdown(exc.message))
        return
    # the next incident (the first not judged by this reviewer) is drawn afresh, in a new order, on
    # a clean form; the counts above are redrawn with this judgment in them
    form = st.session_state.get(FORM_KEY, 0)
    for key in ("backtests_pair_orders", f"backtests_pair_pick_{backtest_id}", f"backtests_judge_choice_{form}",
                f"backtests_judge_reason_{form}", f"backtests_judge_category_{form}"):
        st.session_state.pop(key, None)
    st.session_state[FORM_KEY] = form + 1  # a new form, empty in the browser too
    st.session_state[DONE_KEY] = (f"Recorded for {incident_id}: you preferred {SIDE_WORDS[row['preferred']]} answer "
                                  f"(A was {SIDE_WORDS[a_side]} answer{_thresholds(pair, a_side)}).")
    st.rerun()


def _thresholds(pair: dict, a_side: str) -> str:
    """After the judgment, the code-fix thresholds the blind view left unnamed (when they differed)."""
    if same_threshold(pair):
        return ""
    b_side = "candidate" if a_side == "live" else "live"
    a, b = ((pair[s].get("fix") or {}).get("threshold") for s in (a_side, b_side))
    return f"; code-fix thresholds: A {a:.2f}, B {b:.2f}" if a is not None and b is not None else ""


def _judged(service, backtest_id: str, counts: dict) -> None:
    rows = counts["rows"]  # as counted: a preference between identical answers is `equal`
    if not rows:
        return
    with st.expander(f"Judgments so far ({len(rows)})"):
        st.dataframe(pd.DataFrame([{"incident": r["incident_id"], "reviewer": r["reviewer"],
                                    "preferred": r["preferred"], "right category": category_words(r["correction"]),
                                    "reason": r["reason"], "shown as A": r["a_side"], "when": r["judged_at"][:19]}
                                   for r in rows]), hide_index=True, key=f"backtests_judgments_{backtest_id}")
        st.download_button("Download as labelled eval cases (JSONL)", data=service.pairwise_cases(backtest_id),
                           file_name=f"pairwise-{backtest_id}.jsonl", mime="application/jsonl",
                           key=f"backtests_pairwise_download_{backtest_id}", icon=":material/download:")
