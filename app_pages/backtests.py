"""Backtests: what a candidate analyst would have said about past incidents, against what the live
analyst said and what the reviewers decided; each disagreement opens the incident's time travel
at the checkpoint the backtest started from. Start one here (a worker process running
`python -m pipeline backtest`, with its progress, Cancel and Resume) or from the CLI."""
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import backtests_of
from workbench import session
from workbench.literal import escape_markdown
from workbench.backtest_view import (agreement_figure, backtest_name, confusion_frame, difference_words, disagreement,
                                     follow_started, runs_panel, start_form, summary)
from workbench.pairwise_view import pairwise_panel

workbench = session.workbench()
service = backtests_of(workbench.review)

st.title("Backtests")
rows = service.backtests()
with st.expander("Start a backtest", expanded=not rows, icon=":material/science:"):
    start_form(service)
runs_panel(service, rows)
if not rows:
    if st.query_params.get("backtest"):
        st.warning(escape_markdown(f"In the link, there is no backtest named {st.query_params['backtest']!r}: "
                                   "there are no backtests here yet."))
    st.info("No backtests yet. Start one above, or with `python -m pipeline backtest` (see `--help`): it "
            "re-analyses past incidents with a candidate analyst and never touches the live runs.")
    st.stop()
by_id = {r["backtest_id"]: r for r in rows}
follow_started(service, list(by_id))
wanted = st.query_params.get("backtest")
if wanted in by_id and st.session_state.get("backtests_pick") != wanted and "backtests_pick" not in st.session_state:
    st.session_state["backtests_pick"] = wanted
elif wanted and wanted not in by_id and "backtests_pick" not in st.session_state:
    st.warning(escape_markdown(f"The link's backtest {wanted} is not one of the (at most 50 newest) backtests "
                               "here: showing the newest."))
# named by what does not change (candidate, start): a keyed selectbox's browser keeps the label it was
# picked with, so a label with the progress read "running 2/6" after the backtest finished; where it
# is now is the caption and figures under it, drawn afresh each run
chosen = st.selectbox("Backtest", list(by_id), key="backtests_pick", format_func=lambda b: backtest_name(by_id[b]))
if st.query_params.get("backtest") != chosen:
    st.query_params["backtest"] = chosen
try:
    rep = service.report(chosen)
except IncidentIQError as exc:
    st.error(exc.message)
    st.stop()

# the pairwise review is blind: the report names each incident's live and candidate answers, so it
# is a tab of its own, with nothing above its panel but the backtest it reviews
report_tab, pairwise_tab = st.tabs(["Report", "Pairwise review (blind)"])
with report_tab:
    summary(rep)
    left, right = st.columns(2)
    with left:
        st.subheader("Approved category → candidate")
        frame = confusion_frame(rep["confusion"])
        if frame.empty:
            st.caption("No incident here was approved with a category.")
        else:
            st.dataframe(frame, key="backtests_confusion")
    with right:
        st.subheader("By human outcome")
        st.plotly_chart(agreement_figure(rep["by_outcome"]), key="backtests_chart")

    st.subheader(f"Disagreements with the reviewers ({len(rep['disagreements'])})")
    if not rep["disagreements"] and not rep["confusion"]:
        # nothing approved with a category: no agreement to claim (a green "names the category the reviewers
        # approved" over no approval read as a pass)
        st.info("No incident here was approved with a category yet, so there is nothing to agree or disagree with: "
                "decide some incidents, or back-test the decided ones.")
    elif not rep["disagreements"]:
        st.success("The candidate names the category the reviewers approved wherever they approved one.")
    for i, item in enumerate(rep["disagreements"]):
        disagreement(item, index=i)
    if rep["changes"]:
        st.subheader(f"Other changes from the live analysis ({len(rep['changes'])})")
        st.caption("The candidate differs from the live analyst's answer here without going against what reviewers "
                   "approved: a category they corrected to, a rejected or undecided incident, a code fix newly (or no "
                   "longer) proposed.")
        for i, item in enumerate(rep["changes"]):
            disagreement(item, index=i, key="backtests_change", heading=difference_words(item))
    if rep["skipped"]:
        with st.expander(f"Skipped ({len(rep['skipped'])})"):
            for sk in rep["skipped"]:
                st.text(f"{sk['incident_id']}: {sk['why']}")
with pairwise_tab:
    pairwise_panel(service, chosen, rep["pairwise"])
