"""The similar error docs of an analysis as the incident page lists them: the doc the analysis rests on
first, then by retrieval score, in a table that fits the ~540 px analysis column, and what each doc says."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from pipeline.services import signature_words
from workbench.audit_words import category_words
from workbench.literal import plain

SIMILAR_ORDER = ("rests on", "doc", "score", "signatures")  # px below: a 40-character doc id whole
SIMILAR_WIDTHS = {"rests on": 40, "doc": 290, "score": 80, "signatures": 55}


def docs_in_order(docs: list[dict], matched: list[str]) -> list[dict]:
    """The similar docs as the page lists them: the doc(s) the analysis rests on first, then by score."""
    return sorted(docs, key=lambda d: (d["doc_id"] not in matched, matched.index(d["doc_id"]) if d["doc_id"] in matched
                                       else 0, -d["score"]))


def similar_docs(docs: list[dict], *, matched: list[str] | None = None, evidence: str = "") -> None:
    """The similar docs table and what each says; `evidence`: the lines the analysis quotes, where a
    regex signature's words are read (signature_words), never its pattern."""
    matched = list(matched or [])
    st.markdown("**Similar error docs** (the one the analysis rests on first, then by retrieval similarity)")
    if not docs:
        st.caption("none")
        return
    docs = docs_in_order(docs, matched)
    # pixel widths within the ~540 px analysis column (category and title: "What the similar docs say")
    st.dataframe(pd.DataFrame([{"score": d["score"], "doc": d["doc_id"], "rests on": d["doc_id"] in matched,
                                "signatures": len(d.get("matched_signatures") or [])} for d in docs]),
                 hide_index=True, width="stretch", key="incident_similar_table", column_order=SIMILAR_ORDER,
                 column_config={"rests on": st.column_config.CheckboxColumn("✓", width=SIMILAR_WIDTHS["rests on"],
                                                                            help="the doc the analysis rests on"),
                                "doc": st.column_config.TextColumn(width=SIMILAR_WIDTHS["doc"]),
                                "score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0,
                                                                         format="%.2f", color="auto",
                                                                         width=SIMILAR_WIDTHS["score"]),
                                "signatures": st.column_config.NumberColumn("hits", width=SIMILAR_WIDTHS["signatures"],
                                                                            help="the doc's signatures found in the "
                                                                                 "evidence")})
    with st.expander("What the similar docs say"):
        chosen = st.selectbox("Doc", range(len(docs)), key="incident_doc_pick",
                              format_func=lambda i: f"{docs[i]['doc_id']} · {docs[i]['score']:.2f}")
        doc = docs[chosen]
        st.text(plain(f"{doc['title']} ({category_words(doc['category'])})"))
        if doc.get("matched_signatures"):
            st.caption("Signatures found in the evidence")
            st.code("\n".join(dict.fromkeys(signature_words(s, evidence) for s in doc["matched_signatures"])), language=None)
        st.text(doc.get("root_cause") or "")
        if doc.get("remediation"):
            st.caption("Remediation")
            st.text("\n".join(f"• {step}" for step in doc["remediation"]))
