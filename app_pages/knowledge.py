"""Knowledge: the curated error docs, what retrieval returns for any text, re-indexing, and the
latest evaluation figures."""
from pathlib import Path

import pandas as pd
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.state import counted
from pipeline.services import signature_words
from workbench import session
from workbench.audit_words import category_words
from workbench.eval_view import HEADLINES, NO_REPORT, confusion_figure, split_title
from workbench.literal import escape_markdown

workbench = session.workbench()
knowledge = workbench.knowledge

st.title("Knowledge")
docs = knowledge.docs()
cols = st.columns(3)
cols[0].metric("Error docs", len(docs))
cols[1].metric("Indexed", knowledge.indexed_count())
cols[2].metric("Categories covered", len({d["category"] for d in docs}))

st.subheader("Error docs")
frame = pd.DataFrame([{"doc": d["doc_id"], "title": d["title"], "category": category_words(d["category"]), "severity": d["severity"],
                       "signatures": " · ".join(d["signatures"]), "systems": ", ".join(d["systems"])} for d in docs])
category = st.selectbox("Category", ["all", *sorted({d["category"] for d in docs})], key="knowledge_category",
                        format_func=category_words)
if category != "all":
    frame = frame[frame["category"] == category_words(category)]
st.dataframe(frame, hide_index=True, width="stretch", key="knowledge_docs",
             column_config={"signatures": st.column_config.TextColumn("signatures", width="large")})

st.subheader("Search")
query = st.text_area("Any text: a log line, an exception, a stack trace", key="knowledge_query",
                     placeholder="e.g. HikariPool-1 - Connection is not available, request timed out after 30000ms")
k = st.slider("Results", 1, 10, 5, key="knowledge_k")
if query.strip():
    try:
        nearest = knowledge.nearest(query, k=k)
        ranked = knowledge.retrieve(query, k=k)
    except IncidentIQError as exc:
        st.error(escape_markdown(exc.message))
    else:
        left, right = st.columns(2)
        with left:
            st.caption("Nearest docs by embedding similarity alone")
            st.dataframe(pd.DataFrame([{"doc": d["doc_id"], "title": d["title"], "category": category_words(d["category"]),
                                        "similarity": d["similarity"]} for d in nearest]),
                         hide_index=True, width="stretch", key="knowledge_nearest",
                         column_config={"similarity": st.column_config.ProgressColumn(
                             "similarity", min_value=0.0, max_value=1.0, format="%.2f")})
        with right:
            st.caption("What the analysis's doc search retrieves for this text (similarity + signatures found)")
            st.dataframe(pd.DataFrame([{"doc": d.doc_id, "category": category_words(d.category), "similarity": d.score,
                                        "signatures found": " · ".join(signature_words(s, query) for s in d.matched_signatures)}
                                       for d in ranked]),
                         hide_index=True, width="stretch", key="knowledge_ranked",
                         column_config={"similarity": st.column_config.ProgressColumn(
                             "similarity", min_value=0.0, max_value=1.0, format="%.2f")})

st.subheader("Index")
st.caption("Re-reads the docs from knowledge/docs, embeds the new and edited ones and drops removed ones; "
           "an unchanged corpus embeds nothing.")
if st.button("Re-index", key="knowledge_reindex"):
    bar = st.progress(0.0, text="checking the index…")
    try:
        report = knowledge.reindex(lambda fraction, doc_id: bar.progress(fraction, text=f"embedded {doc_id}"))
    except IncidentIQError as exc:
        st.error(escape_markdown(exc.message))
    else:
        bar.progress(1.0, text="done")
        st.success(f"{counted(len(report.embedded), 'doc')} embedded, {len(report.removed)} removed, "
                   f"{report.unchanged} unchanged.")

st.subheader("Latest evaluation")
report = knowledge.latest_evaluation()
if report is None:
    st.info(NO_REPORT)
else:
    st.caption(f"{Path(report['path']).name} · analyst {report.get('analyst', '?')} · generated {report.get('generated_at', '?')}")
    splits = report.get("splits") or {}
    for name, figures in splits.items():
        ran = f" · run {figures['generated_at']}" if figures.get("generated_at") else ""
        st.markdown(f"**{split_title(name, figures)}** · {counted(figures['cases'], 'case') if isinstance(figures.get('cases'), int) else '? cases'}{ran}")
        cols = st.columns(len(HEADLINES))
        for col, (field, label) in zip(cols, HEADLINES):
            value = figures.get(field)
            col.metric(label, f"{value:.2f}" if isinstance(value, (int, float)) else "—")
    with_confusion = [(n, f["confusion"]) for n, f in splits.items() if f.get("confusion")]
    if with_confusion:
        name, confusion = with_confusion[0]
        with st.expander(f"Confusion ({name} split)"):
            st.plotly_chart(confusion_figure(confusion), key="knowledge_confusion")
