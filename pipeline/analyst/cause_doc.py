"""The doc an analysis's cause rests on (its recommendation and fix are drawn from it): the analyst's
choice, since after a reviewer changed the category it reads the events' stack (technology.py) to
pick the new category's doc written for that stack. Here, not in knowledge/: the knowledge base does
not read the analyst (tests/test_import_layers.py)."""
from __future__ import annotations

from pipeline.analyst.technology import runtimes, shown_by
from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.knowledge.retrieval import evidence_text, signature_matches
from pipeline.state import IncidentState


def cause_doc(kb: KnowledgeBase, state: IncidentState) -> Doc | None:
    """The doc the RCA's cause rests on: its first cited doc when that doc is of the RCA's category;
    after a reviewer changed the category (edit, fork), the new category's doc `doc_for` chooses, or
    none. A recommendation or a fix drawn from a doc of another category would contradict the analysis."""
    rca = state.rca
    if rca is None or rca.category == "unknown":
        return None
    cited = [kb.by_id[i] for i in rca.doc_ids if i in kb.by_id]
    own = next((doc for doc in cited if doc.category == rca.category), None)
    return own if own is not None else doc_for(kb, state, rca.category)


def doc_for(kb: KnowledgeBase, state: IncidentState, category: str) -> Doc | None:
    """The category's doc for this incident, as a normal analysis would choose it: written for the
    technology of the incident's own service's events first (a Java service's timeout gets the Java
    doc, though a Go dependency's lines are in its evidence too), then for any technology the events
    show, then a doc naming no technology; within each, the one whose signatures the events carry
    most, then the retrieved before the rest of the knowledge base. None fits: the best of the others
    (the analysis then says it explains by analogy: technology.by_analogy)."""
    retrieved = [kb.by_id[d.doc_id] for d in state.similar_docs if d.doc_id in kb.by_id]
    candidates = list({d.doc_id: d for d in [*retrieved, *kb.docs] if d.category == category}.values())
    if not candidates:
        return None
    mine = [e for e in state.evidence if e.service == state.service]
    own, shown = (shown_by(mine) if mine else frozenset()), shown_by(state.evidence)
    support = {doc.doc_id: score for doc, score, _ in signature_matches(kb, evidence_text(state.evidence))
               if doc.category == category}

    def rank(n_doc: tuple[int, Doc]) -> tuple[int, float, int]:
        n, doc = n_doc
        wanted = runtimes(doc.systems)
        tier = 0 if wanted & own else 1 if wanted & shown else 2 if not wanted else 3
        return tier, -support.get(doc.doc_id, 0.0), n

    return min(enumerate(candidates), key=rank)[1]
