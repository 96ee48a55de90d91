"""The doc an analysis's cause rests on (its recommendation and fix are drawn from it): the analyst's
choice, since after a reviewer changed the category it reads the events' stack (technology.py) to
pick the new category's doc written for that stack. Here, not in knowledge/: the knowledge base does
not read the analyst (tests/test_import_layers.py)."""
from __future__ import annotations

from pipeline.analyst.technology import runtimes, shown_by
from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.state import IncidentState


def cause_doc(kb: KnowledgeBase, state: IncidentState) -> Doc | None:
    """The doc the RCA's cause rests on: its first cited doc when that doc is of the RCA's category;
    after a reviewer changed the category (edit, fork), the best retrieved doc of the new one written
    for a technology the events show (a Java service's timeout gets the Java doc, not the category's
    first, Go's), else the best retrieved or the category's first, or none. A recommendation or a fix
    drawn from a doc of another category would contradict the analysis."""
    rca = state.rca
    if rca is None or rca.category == "unknown":
        return None
    cited = [kb.by_id[i] for i in rca.doc_ids if i in kb.by_id]
    own = next((doc for doc in cited if doc.category == rca.category), None)
    if own is not None:
        return own
    retrieved = [kb.by_id[d.doc_id] for d in state.similar_docs if d.doc_id in kb.by_id]
    candidates = list({d.doc_id: d for d in [*retrieved, *kb.docs] if d.category == rca.category}.values())
    shown = shown_by(state.evidence)
    return next((d for d in candidates if runtimes(d.systems) & shown),
                candidates[0] if candidates else None)
