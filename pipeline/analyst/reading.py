"""What a reviewer's words say about the analysis: the reviewer's reading of a request for changes
(or of a root cause they wrote), as inputs of the next analysis rather than text appended to it.

From the requests (every one, the newest weighing most) it reads: the doc (and so the category)
the reviewer's description matches best, by the knowledge base's similarity and the docs'
signatures found in their words; what they say it is *not* ("not a deadlock", "drop the
deadlock wording"), which excludes docs and sentences naming it; the cause they state ("this is
a lock wait timeout"); and whether they say it is not a code defect (then no fix is proposed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.knowledge.retrieval import signature_matches
from pipeline.state import ErrorDoc, IncidentState

# the least similarity (hashed n-grams) at which a reviewer's description names a doc; below it
# their words are taken as a request about the wording only
MIN_SIMILARITY = 0.3
# the article whole ("not an outage" read "n outage" when "a" matched first)
_NEGATED = re.compile(r"\b(?:not|isn't|is not|wasn't|no longer)\s+(?:(?:a|an|the|any)\b)?\s*(?P<what>[\w-]+(?:\s+[\w-]+)?)",
                      re.I)
_DROP = re.compile(r"\b(?:drop|remove|delete|without)\s+(?:the|any|all)?\s*(?P<what>[\w-]+)\s+(?:wording|words?|"
                   r"mentions?|talk|language)", re.I)
_NOT_CODE = re.compile(r"\b(?:not an? (?:code|software|application|programming) (?:defect|bug|issue|problem|error)"
                       r"|no code (?:change|fix|defect)|not a bug|nothing to fix in the code)\b", re.I)
_CAUSE = re.compile(r"(?:^|[.;!?]\s*)(?P<cause>(?:this|it)\s+(?:is|was)\s+(?!not\b)[^.;!?\n]{4,160}"
                    r"|(?:the\s+)?(?:root\s+)?cause\s+(?:is|was)[:\s][^.;!?\n]{4,160}"
                    r"|[^.;!?\n]{4,160}\bcaused\s+(?:it|this|the errors?)\b[^.;!?\n]{0,80})", re.I)
# words a negation may name that are no topic ("not a problem", "not the whole story")
_FILLER = {"problem", "issue", "the", "a", "an", "whole", "only", "just", "really", "sure", "clear", "true"}


@dataclass(frozen=True)
class Reading:
    """The reviewer's reading: the doc they describe (None when their words name none), the words
    of what it is not, the cause they state, and whether they say it is not a code defect."""

    doc: Doc | None = None
    similarity: float = 0.0
    not_words: tuple[str, ...] = ()
    cause: str | None = None
    not_code_defect: bool = False
    ranked: tuple[tuple[str, float], ...] = field(default=())

    @property
    def says_anything(self) -> bool:
        return bool(self.doc or self.not_words or self.cause or self.not_code_defect)


# a question asks, it claims nothing: "Why is this not a code bug?" does not say it is not one (nor
# does "Is this not a deadlock?" deny a deadlock). A sentence is a question when it ends with "?" or
# opens as one does: a wh-word, or an auxiliary before its subject ("is this", "could it", "don't
# you"; an imperative "Do not propose a fix" is no question)
_SUBJECT = r"(?:this|it|that|there|these|those|we|you|they|i|he|she|the|a|an|our|your|its|any|anyone|someone)"
_QUESTION_OPENING = re.compile(
    r"^\W*(?:why|how|what|which|where|when|who|whose|whom"
    r"|(?:is|isn'?t|are|aren'?t|was|wasn'?t|were|weren'?t|could|couldn'?t|can|can'?t|cannot|should|shouldn'?t|would|"
    rf"wouldn'?t|does|doesn'?t|do|don'?t|did|didn'?t|has|hasn'?t|have|haven'?t|will|won'?t|shall|may|might)\s+{_SUBJECT})\b",
    re.I)
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;\n]*")


def is_question(sentence: str) -> bool:
    """Whether a sentence asks rather than states (it ends with "?" or opens as a question)."""
    return sentence.rstrip().endswith("?") or bool(_QUESTION_OPENING.match(sentence))


def statements(text: str) -> list[str]:
    """The sentences of a text that state something (its questions left out)."""
    return [s for s in _SENTENCE.findall(text or "") if s.strip() and not is_question(s)]


def not_words(text: str) -> list[str]:
    """The topics a text says the incident is not ("not a deadlock" → deadlock); a question says
    nothing is not ("why is this not a deadlock?")."""
    words = []
    stated = " ".join(statements(text))
    for pattern in (_NEGATED, _DROP):
        for match in pattern.finditer(stated):
            head = match.group("what").split()[0].lower()
            if head not in _FILLER and len(head) > 3 and head not in ("code", "software", "application"):
                words.append(head)
    return list(dict.fromkeys(words))


def says_not_code_defect(text: str) -> bool:
    """Whether a text states that the incident is not a code defect; asking it ("Why is this not a
    code bug?") states nothing."""
    return any(_NOT_CODE.search(s) for s in statements(text))


def stated_cause(text: str) -> str | None:
    """The cause a reviewer states in their own words ("This is a lock wait timeout (1205)")."""
    match = _CAUSE.search(text or "")
    if not match:
        return None
    # "a lock wait timeout (1205), not a deadlock": what it is not is said apart (not_words)
    return re.split(r",?\s+(?:and |but )?not\s", match.group("cause"), maxsplit=1)[0].strip().rstrip(",")


def _positive(text: str) -> str:
    """The text without what it says the incident is not (those words would pull towards it)."""
    return _DROP.sub(" ", _NEGATED.sub(" ", text or ""))


def read_requests(kb: KnowledgeBase, requests: list[str]) -> Reading:
    """The reviewer's reading of every request so far; the newest request names the doc when it names one."""
    negated = [w for text in requests for w in not_words(text)]
    not_code = any(says_not_code_defect(t) for t in requests)
    cause = next((c for c in (stated_cause(t) for t in reversed(requests)) if c), None)
    for text in reversed(requests):
        ranked = _ranked(kb, _positive(text), negated)
        if ranked and ranked[0][1] >= MIN_SIMILARITY:
            return Reading(doc=kb.by_id[ranked[0][0]], similarity=ranked[0][1], not_words=tuple(negated),
                           cause=cause, not_code_defect=not_code, ranked=tuple(ranked))
    return Reading(not_words=tuple(negated), cause=cause, not_code_defect=not_code)


def _ranked(kb: KnowledgeBase, text: str, negated: list[str]) -> list[tuple[str, float]]:
    if len(text.strip()) < 8:
        return []
    scores = dict(kb.search(text, k=8))
    for doc, support, _ in signature_matches(kb, text):  # a signature in their words is a hint
        scores[doc.doc_id] = scores.get(doc.doc_id, 0.0) + 0.05 * support
    codes = set(re.findall(r"\b(?:\d{3,5}|[A-Z][A-Z0-9_]{4,}|\d{2}[A-Z0-9]{3})\b", text))  # 1205, 40P01, ENOSPC
    for doc_id in list(scores):
        doc = kb.by_id.get(doc_id)
        if doc is not None and codes:
            named = f"{doc.title} {' '.join(doc.signatures)}"
            scores[doc_id] += 0.15 * sum(1 for c in codes if re.search(rf"\b{re.escape(c)}\b", named))
    return sorted(((d, round(s, 4)) for d, s in scores.items()
                   if d in kb.by_id and not names_any(kb.by_id[d], negated)), key=lambda kv: (-kv[1], kv[0]))


def names_any(doc: Doc, words: list[str] | tuple[str, ...]) -> bool:
    """Whether a doc is about one of the words (in its id or title: a category is wider than its
    docs' topics, db_deadlock holds the lock wait timeout docs too)."""
    about = f"{doc.doc_id} {doc.title}".lower()
    return any(w in about for w in words)


def without_sentences(text: str, words: tuple[str, ...]) -> str:
    """`text` without its sentences that name one of `words` (a reviewer asked to drop that wording)."""
    if not words:
        return text
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = [s for s in sentences if not any(re.search(rf"\b{re.escape(w)}", s, re.I) for w in words)]
    return " ".join(kept) if kept else text


def not_code_defect(state: IncidentState) -> bool:
    """Whether a reviewer said this is not a code defect: in a request, or in a root cause they wrote."""
    return any(says_not_code_defect(t) for t in state.feedback) or bool(
        state.rca is not None and says_not_code_defect(state.rca.root_cause))


def reranked_docs(kb: KnowledgeBase, state: IncidentState, *, k: int = 5) -> list[ErrorDoc]:
    """The retrieved docs with the reviewer's words as evidence: the doc they describe first, the
    docs of what they say it is not last (the analysts are offered these)."""
    if not state.feedback:
        return list(state.similar_docs)
    reading = read_requests(kb, state.feedback)
    docs = list(state.similar_docs)
    if reading.doc is not None and reading.doc.doc_id not in {d.doc_id for d in docs}:
        docs.insert(0, reading.doc.as_error_doc(score=reading.similarity, matched=[]))
    ranking = {doc_id: n for n, (doc_id, _) in enumerate(reading.ranked)}

    def order(d: ErrorDoc):
        described = 0 if reading.doc is not None and d.doc_id == reading.doc.doc_id else 1
        denied = 1 if d.doc_id in kb.by_id and names_any(kb.by_id[d.doc_id], reading.not_words) else 0
        return (denied, described, ranking.get(d.doc_id, len(ranking)), -d.score)

    return sorted(docs, key=order)[:max(k, len(state.similar_docs))]
