"""The offline analyzer (the `Analyst` of pipeline/analyst/protocol.py that needs no network).

The offline analyzer is deterministic and grounded: a category is named only when a curated
doc's signatures are found in the evidence (messages, exceptions, stack traces and the error
fields of structured logs); retrieval similarity alone never names a cause. Specific evidence
outweighs generic evidence (a pool-acquire timeout beats a bare timeout). Its confidence rises
with the strength of the evidence and the share of error events carrying it, and falls when
another category is nearly as well supported. Its quality is measured by `python -m pipeline
eval` (pipeline/evaluation.py).
"""
from __future__ import annotations

import fnmatch
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pipeline.analyst import findings, fixes, quotes, technology
from pipeline.analyst.technology import ANALOGY_CONFIDENCE, by_analogy
from pipeline.analyst.reading import Reading, names_any, not_code_defect, read_requests, without_sentences
from pipeline.analyst.pattern_text import required_groups, required_text, split_alternatives
from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.state import CATEGORIES, RCA, SEVERITIES, ErrorDoc, IncidentState, LogEvent, Quote, Recommendation


# Structured fields loggers put the error in: Go's zap/logrus `error`, pino's `err`, ECS
# `error.message`, SDK `Code`/`statusCode`, Kubernetes events' `reason`. Keys compare without
# case, `_`, `-` or `.`; other fields (ids, paths, durations) would only add noise.
ERROR_FIELDS = frozenset({
    "error", "err", "errors", "errormessage", "errmsg", "errormsg", "cause", "rootcause", "reason",
    "detail", "details", "description", "code", "errorcode", "sqlstate", "errno", "status", "statuscode",
    "httpstatus", "httpstatuscode", "exitcode", "signal", "exceptionmessage", "excinfo", "failure",
})
STACK_HEAD = 2500
STACK_TAIL = 1500
TRIGRAM_TEST_CHARS = 2_000  # evidence up to this long skips docs by trigram (see _signature_matches)


def _field_key(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "").replace(".", "")


def _error_fields(fields: dict) -> list[str]:
    parts = []
    for key, value in fields.items():
        if _field_key(key) not in ERROR_FIELDS:
            continue
        if isinstance(value, dict):  # {"error": {"message": ..., "code": ...}}: one level down
            parts += [f"{key}.{k}={v}" for k, v in value.items() if isinstance(v, (str, int, float))]
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            # SQLSTATE as databases print it, so `SQLSTATE 40P01` signatures match a structured field
            parts.append(f"SQLSTATE {value}" if _field_key(key) == "sqlstate" else f"{key}={value}")
    return parts


def _stack_excerpt(stack: str) -> str:
    # the root cause sits at either end (Python's last line, Java's last "Caused by:") and in the
    # "Caused by:" lines between: keep those when a deep trace is cut
    if len(stack) <= STACK_HEAD + STACK_TAIL:
        return stack
    middle = stack[STACK_HEAD:-STACK_TAIL]
    causes = [line for line in middle.splitlines() if line.startswith(("Caused by:", "During handling", "The above"))
              or (line and not line[0].isspace() and ":" in line)]
    return "\n".join([stack[:STACK_HEAD], *causes[:20], stack[-STACK_TAIL:]])


def event_text(e: LogEvent) -> str:
    """The text of one event that signatures are matched against."""
    parts = [e.exception or "", e.message]
    if e.exception and not e.message.startswith(e.exception):
        # loggers split "ExcClass: text" into two fields; signatures are written as printed
        short = e.exception.rsplit(".", 1)[-1]
        parts.append(f"{e.exception}: {e.message.splitlines()[0]}")
        if short != e.exception:
            parts.append(f"{short}: {e.message.splitlines()[0]}")
    if e.fields:
        parts += _error_fields(e.fields)
    if e.stack:
        parts.append(_stack_excerpt(e.stack))
    return "\n".join(p for p in parts if p)


def evidence_text(events: list[LogEvent]) -> str:
    """The text signatures are matched against: exceptions, messages, error fields and stack traces.

    Each distinct line appears once: a burst repeats the same trace many times, and matching the
    copies again would only cost time (this is the hot path of every incident).
    """
    seen: set[str] = set()
    lines: list[str] = []
    for event in events:
        for line in event_text(event).splitlines():
            if line not in seen:
                seen.add(line)
                lines.append(line)
    return "\n".join(lines)


def query_text(events: list[LogEvent], limit: int = 6) -> str:
    """A compact retrieval query: distinct exception/message/error-field lines and the top stack lines."""
    seen, lines = set(), []
    for e in events:
        first = e.message.splitlines()[0] if e.message else ""
        fields = _error_fields(e.fields) if e.fields else []
        for line in (e.exception, first, *fields, *(e.stack or "").splitlines()[:3]):
            if line and line not in seen:
                seen.add(line)
                lines.append(line[:500])
        if len(lines) >= limit * 3:
            break
    return "\n".join(lines)


@lru_cache(maxsize=8192)
def evidence_weight(matched_text: str) -> float:
    """How specific a piece of matched evidence is: longer text weighs more (up to 50 characters),
    and an exception class or error code (ENOSPC, 40P01, OOMKilled) counts as specific however short."""
    text = matched_text.strip()
    weight = 0.6 + 1.4 * min(len(text), 50) / 50
    if any(_code_like(token) for token in text.split()):
        weight = max(weight, 1.3)
    return round(weight, 3)


def doc_support(doc: Doc, text: str, lowered: str) -> tuple[float, list[str]]:
    """A doc's signatures found in the text (as Doc.matched_signatures finds them) and their summed weight.

    A regex weighs what it actually matched, so `acquire conn: context deadline exceeded` counts
    as the long, specific match it is and `\\bEPIPE\\b` as the short token it is. A regex runs
    only when the literal text it requires is present: this is the hot path of every incident.
    """
    matched, total = [], 0.0
    for signature, pattern in zip(doc.signatures, doc.patterns):
        if pattern is None:
            if _lowered(signature) in lowered:
                matched.append(signature)
                total += evidence_weight(signature)
            continue
        required = _required_literal(signature)
        if required and required not in lowered:
            continue
        found = pattern.search(text)
        if found:
            matched.append(signature)
            total += evidence_weight(found.group(0))
    return total, matched


@lru_cache(maxsize=8192)
def _lowered(signature: str) -> str:
    return signature.lower()


@lru_cache(maxsize=8192)
def _required_literal(signature: str) -> str | None:
    """The longest run of plain text a `re:` signature needs (lowered: signatures ignore case), or
    None when unsure or too short to be worth a test."""
    best = required_text(signature[3:], ignore_case=True)
    return best if len(best) >= 3 else None


@lru_cache(maxsize=8192)
def _required_alternatives(signature: str) -> tuple[str, ...] | None:
    """For a `re:` signature that requires no one text (`_required_literal` is None): texts (lowered)
    one of which it requires, or None when unsure. Those are its top-level alternatives' required
    texts, or those of the alternatives of a group it cannot skip (`(lag|backlog)`, not `(is )?`);
    every alternative must require a text of its own."""
    pattern = signature[3:]
    for alternatives in (split_alternatives(pattern), *required_groups(pattern)):
        if len(alternatives) < 2:
            continue
        texts = tuple(_required_literal("re:" + a) for a in alternatives)
        if all(texts):
            return texts
    return None


def _code_like(token: str) -> bool:
    token = token.strip("'\"():,[]")
    if len(token) < 5:
        return False
    letters, digits = any(c.isalpha() for c in token), any(c.isdigit() for c in token)
    capitals = sum(c.isupper() for c in token)
    return ((letters and digits) or (token.isupper() and len(token) >= 6) or "_" in token or "$" in token
            or (capitals >= 2 and any(c.islower() for c in token)) or ("." in token.strip(".") and letters))


@dataclass(frozen=True)
class Support:
    """The signature evidence for one category: its best doc and how strongly the evidence matches."""

    category: str
    score: float
    doc: Doc
    matched: tuple[str, ...]


def signature_matches(kb: KnowledgeBase, text: str) -> tuple[tuple[Doc, float, tuple[str, ...]], ...]:
    """(doc, support, matched signatures) of every doc whose signatures the text carries.

    Cached per text: the rag and rca nodes of one incident ask about the same evidence.
    """
    return _signature_matches(kb, kb.generation, text)


@lru_cache(maxsize=64)
def _signature_matches(kb: KnowledgeBase, generation: int,
                       text: str) -> tuple[tuple[Doc, float, tuple[str, ...]], ...]:
    # doc_support's rules over every doc, with each signature's lowered text, required literal and
    # weight worked out once per docs generation (this runs once per incident, over every signature)
    lowered = text.lower()
    # a long text has most trigrams and costs more to split than the doc test saves
    trigrams = {lowered[i:i + 3] for i in range(len(lowered) - 2)} if len(lowered) <= TRIGRAM_TEST_CHARS else None
    found = []
    for doc, heads, checks in _signature_checks(kb, generation):
        if heads is not None and trigrams is not None and heads.isdisjoint(trigrams):
            continue  # no text one of its signatures requires is in the evidence
        matched, total = [], 0.0
        for signature, needle, pattern, weight, needles in checks:
            if needle is not None and needle not in lowered:
                continue
            if needles is not None and not any(n in lowered for n in needles):
                continue  # none of the texts one of which it requires
            if pattern is None:
                matched.append(signature)
                total += weight
                continue
            hit = pattern.search(text)
            if hit:
                matched.append(signature)
                total += evidence_weight(hit.group(0))
        if matched:
            found.append((doc, total, tuple(matched)))
    return tuple(found)


@lru_cache(maxsize=4)
def _signature_checks(kb: KnowledgeBase, generation: int) -> tuple:
    """Per doc of this generation: the first three characters of every text its signatures
    require (None when one requires none of three or more: that doc is always checked), and per
    signature (signature, text the lowered evidence must contain or None, regex or None for a
    literal, a literal's weight, texts one of which the lowered evidence must contain or None: see
    _required_alternatives)."""
    plans = []
    for doc in kb.docs:
        checks = []
        for signature, pattern in zip(doc.signatures, doc.patterns):
            if pattern is None:
                checks.append((signature, _lowered(signature), None, evidence_weight(signature), None))
            else:
                needle = _required_literal(signature)
                checks.append((signature, needle, pattern, 0.0,
                               _required_alternatives(signature) if needle is None else None))
        plans.append((doc, tuple(checks)))
    # each required text is represented by its trigram least common among all the required texts,
    # so few docs pass the test on ordinary evidence; any of its trigrams would be as correct
    common: dict[str, int] = {}
    for _, checks in plans:
        for check in checks:
            for needle in _required_texts(check):
                for trigram in set(_trigrams(needle)):
                    common[trigram] = common.get(trigram, 0) + 1
    result = []
    for doc, checks in plans:
        # a signature with alternatives adds a trigram of each: the doc passes when one is present
        required = [_required_texts(check) for check in checks]
        heads = (frozenset(min(_trigrams(needle), key=lambda t: (common[t], t)) for texts in required for needle in texts)
                 if all(texts and all(len(n) >= 3 for n in texts) for texts in required) else None)
        result.append((doc, heads, checks))
    return tuple(result)


def _required_texts(check: tuple) -> tuple[str, ...]:
    # one of these is in any evidence the signature matches; () when there are none to test
    _, needle, _, _, needles = check
    return (needle,) if needle is not None else needles or ()


def _trigrams(text: str) -> list[str]:
    return [text[i:i + 3] for i in range(len(text) - 2)]


def category_support(kb: KnowledgeBase, text: str, *, shown: frozenset[str] | None = None) -> list[Support]:
    """Every category some doc's signatures match in `text`, strongest first.

    A category's score is its best doc's summed signature weights plus a quarter of what its
    other docs add: corroboration counts, but many weak docs do not outweigh one strong one.
    With `shown` (the technologies the evidence shows, pipeline/analyst/technology.py), the doc
    a category rests on is its best one written for those technologies when one matched: a Java
    doc's cause is not a Node service's, however many of its signatures the text carries.
    """
    per_category: dict[str, list[tuple[float, Doc, tuple[str, ...]]]] = defaultdict(list)
    for doc, support, matched in signature_matches(kb, text):
        per_category[doc.category].append((support, doc, matched))
    result = []
    for category, found in per_category.items():
        found.sort(key=lambda t: (-t[0], t[1].doc_id))
        score = found[0][0] + 0.25 * sum(t[0] for t in found[1:])
        fitting = [t for t in found if shown is not None and technology.doc_fits(t[1].systems, shown)]
        _, doc, matched = fitting[0] if fitting else found[0]
        result.append(Support(category=category, score=round(score, 3), doc=doc, matched=tuple(matched)))
    return sorted(result, key=lambda s: (-s.score, s.category))


def find_similar(kb: KnowledgeBase, events: list[LogEvent], *, k: int = 5) -> list[ErrorDoc]:
    """Docs for the rag node: retrieval similarity combined with signature evidence, best first."""
    matches = {doc.doc_id: (support, matched) for doc, support, matched in signature_matches(kb, evidence_text(events))}
    similarities = dict(kb.search(query_text(events), k=max(k, 8)))
    scored: dict[str, tuple[float, list[str]]] = {}
    for doc_id in matches.keys() | similarities.keys():
        support, matched = matches.get(doc_id, (0.0, ()))
        scored[doc_id] = (similarities.get(doc_id, 0.0) + 0.6 * support, list(matched))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
    return [kb.by_id[doc_id].as_error_doc(score=similarities.get(doc_id, 0.0), matched=matched)
            for doc_id, (_, matched) in ranked]


def calibrated_confidence(support: float, runner_up: float, *, coverage: float) -> float:
    """Confidence in the best-supported category.

    Rises with the strength of its signature evidence (saturating at a score of 4: a few specific
    signatures) and with the share of error events that carry it; shrinks towards half when
    another category is nearly as well supported. Capped at 0.95: signatures are never proof.
    """
    strength = min(1.0, support / 4.0)
    margin = (support - runner_up) / support if support > 0 else 0.0
    confidence = (0.25 + 0.6 * strength + 0.15 * coverage) * (0.55 + 0.45 * margin)
    return round(max(0.05, min(0.95, confidence)), 2)


def _error_coverage(events: list[LogEvent], per_event: list[set[str]]) -> float:
    # INFO/WARN context lines need not carry the cause; the error events should
    errors = [found for e, found in zip(events, per_event) if e.level in ("ERROR", "FATAL", None)] or per_event
    return sum(1 for found in errors if found) / max(1, len(errors))


_NAME_WORDS = re.compile(r"[-_./:\s]+")


def is_critical_service(service: str, patterns: tuple[str, ...]) -> bool:
    """Whether a pattern (a name or glob, INCIDENTIQ_CRITICAL_SERVICES) matches the whole service
    name or one of its words: `pos` matches `pos-api` but not `postgres-primary`."""
    name = service.lower()
    words = [name, *(w for w in _NAME_WORDS.split(name) if w)]
    return any(fnmatch.fnmatchcase(word, pattern) for pattern in patterns for word in words)


def severity_for(events: list[LogEvent], service: str, doc_severity: str | None, *,
                 critical_services: tuple[str, ...] = ()) -> str:
    """Severity from the matched doc, raised by fatal levels, a high event rate and critical services."""
    rank = SEVERITIES.index(doc_severity) if doc_severity else 1
    levels = {e.level for e in events}
    if "FATAL" in levels:
        rank = max(rank, 2)
    if levels and levels <= {"WARN", "INFO", "DEBUG"}:
        rank = min(rank, 1)
    if len(events) >= 2:
        span = (max(e.time for e in events) - min(e.time for e in events)).total_seconds() / 60
        if len(events) >= 20 and span <= 10:
            rank += 1
    if rank >= 2 and is_critical_service(service, critical_services):
        rank += 1
    return SEVERITIES[min(rank, len(SEVERITIES) - 1)]


def cause_doc(kb: KnowledgeBase, state: IncidentState) -> Doc | None:
    """The doc the RCA's cause rests on: its first cited doc when that doc is of the RCA's category;
    after a reviewer changed the category (edit, fork), the best retrieved doc of the new one, or none.
    A recommendation or a fix drawn from a doc of another category would contradict the analysis."""
    rca = state.rca
    if rca is None or rca.category == "unknown":
        return None
    cited = [kb.by_id[i] for i in rca.doc_ids if i in kb.by_id]
    for doc in cited + [kb.by_id[d.doc_id] for d in state.similar_docs if d.doc_id in kb.by_id]:
        if doc.category == rca.category:
            return doc
    return next((d for d in kb.docs if d.category == rca.category), None)


class OfflineAnalyst:
    """Deterministic analyst grounded in the retrieved docs and the evidence; needs no network.

    A reviewer's requests for changes (`state.feedback`, every one kept) steer it: a category
    named in a request is taken (with its own support, or capped low when no signature supports
    it), "the column is X" style entities become reviewer findings, and each request is answered
    in the recommendation's steps.
    """

    name = "offline"

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb

    def rca(self, state: IncidentState) -> RCA:
        extracted = findings.extract(state.evidence)
        asked = [f for text in state.feedback for f in findings.named_in_request(text)]
        found = asked + [f for f in extracted if (f.kind, f.value) not in {(a.kind, a.value) for a in asked}]
        supports = category_support(self.kb, evidence_text(state.evidence),
                                    shown=technology.shown_by(state.evidence))
        # the reviewer's words are evidence too: the doc they describe, what they say it is not
        reading = read_requests(self.kb, state.feedback) if state.feedback else Reading()
        requested = requested_category(state.feedback)
        if requested and requested != "unknown":
            return self._requested(state, requested, supports, found, reading)
        if reading.doc is not None:
            return self._described(state, reading, supports, found)
        if reading.not_words:
            kept = [s for s in supports if not names_any(s.doc, reading.not_words)]
            supports = kept or supports
        if not supports or requested == "unknown":
            return self._unknown(state, found, requested=requested is not None)
        top = supports[0]
        runner_up = supports[1] if len(supports) > 1 else None
        per_event = [set(top.doc.matched_signatures(event_text(e))) for e in state.evidence]
        confidence = calibrated_confidence(top.score, runner_up.score if runner_up else 0.0,
                                           coverage=_error_coverage(state.evidence, per_event))
        notes = [f"matches doc {top.doc.doc_id}: {top.doc.title} ({len(top.matched)} signatures found)"]
        if runner_up:
            closeness = "nearly as well" if runner_up.score >= 0.75 * top.score else "less well"
            notes.append(f"also consistent with {runner_up.category} ({closeness} supported: "
                         f"{runner_up.score:.1f} against {top.score:.1f})")
        return self._rca(state, category=top.category, doc=top.doc, confidence=confidence, found=found, notes=notes,
                         reading=reading)

    def _rca(self, state: IncidentState, *, category: str, doc, confidence: float, found, notes,
             reading: Reading | None = None) -> RCA:
        quoted = quotes.quotes_for(state.evidence, found, doc)
        cause = quotes.concrete_cause(category, found)
        root_cause = " ".join(p for p in (cause, doc.root_cause if doc else None) if p)
        notes = list(notes)
        if reading is not None and reading.says_anything:
            root_cause = without_sentences(root_cause, reading.not_words)
            if reading.cause:
                root_cause = f"{reading.cause[0].upper()}{reading.cause[1:]} (as the reviewer says). {root_cause}"
            if reading.not_words:
                notes.append(f"not {', '.join(reading.not_words)}, as a reviewer says: its wording is left out")
            if reading.not_code_defect:
                notes.append("not a code defect, as a reviewer says: no code fix is proposed")
        supported, warning = True, None
        analogy = by_analogy(state.evidence, doc)
        if analogy is not None:
            # a doc of another technology explains by analogy only: said so, capped below the
            # code-fix threshold, and never eligible for a fix (RCA.supported)
            root_cause = f"{analogy} {root_cause}"
            confidence = min(confidence, ANALOGY_CONFIDENCE)
            supported, warning = False, analogy
            notes.append(f"{analogy} Confidence stays at most {ANALOGY_CONFIDENCE}; no code fix is proposed.")
        return RCA(category=category, root_cause=root_cause, confidence=confidence,
                   evidence=[quotes.quote_text(q, len(state.evidence)) for q in quoted],
                   doc_ids=[doc.doc_id] if doc else [], analyst=self.name, findings=found, quotes=quoted,
                   notes=notes, supported=supported, warning=warning)

    def _described(self, state: IncidentState, reading: Reading, supports: list[Support], found) -> RCA:
        """The doc a reviewer described, weighed against the evidence: taken with its own support,
        with a lower confidence when the evidence shows another doc of its category, and capped low
        with the reason when the evidence supports another category and none of its signatures."""
        doc = reading.doc
        matched = {d.doc_id: support for d, support, _ in signature_matches(self.kb, evidence_text(state.evidence))}
        others = [s for s in supports if s.category != doc.category]
        runner_up = others[0].score if others else 0.0
        own = next((s for s in supports if s.category == doc.category), None)
        said = f"as a reviewer described it: doc {doc.doc_id} ({doc.title})"
        if doc.doc_id in matched:
            confidence = calibrated_confidence(matched[doc.doc_id], runner_up, coverage=1.0)
            note = f"{said}; the evidence shows its signatures"
        elif own is not None:
            confidence = round(min(calibrated_confidence(own.score, runner_up, coverage=1.0), DESCRIBED_OTHER_DOC_CONFIDENCE), 2)
            note = (f"{said}; the evidence shows signatures of {own.doc.doc_id} of the same category, none of this "
                    f"doc's, so confidence stays at most {DESCRIBED_OTHER_DOC_CONFIDENCE}")
        else:
            confidence = REQUESTED_UNSUPPORTED_CONFIDENCE
            top = supports[0] if supports else None
            against = (f"the evidence shows signatures of {top.category} ({top.doc.doc_id}: "
                       f"{'; '.join(top.matched[:2])}) and none of this doc's" if top
                       else "the evidence shows no signature of it")
            note = f"{said}; {against}, so confidence stays at most {REQUESTED_UNSUPPORTED_CONFIDENCE}"
        return self._rca(state, category=doc.category, doc=doc, confidence=confidence, found=found, notes=[note],
                         reading=reading)

    def _requested(self, state: IncidentState, category: str, supports: list[Support], found,
                   reading: Reading | None = None) -> RCA:
        own = next((s for s in supports if s.category == category), None)
        if own is not None:
            others = [s for s in supports if s.category != category]
            confidence = calibrated_confidence(own.score, others[0].score if others else 0.0, coverage=1.0)
            note = f"category {category} as a reviewer asked; its doc {own.doc.doc_id} is supported by the evidence"
            return self._rca(state, category=category, doc=own.doc, confidence=confidence, found=found,
                             notes=[note], reading=reading)
        docs = [self.kb.by_id[d.doc_id] for d in state.similar_docs if d.category == category and d.doc_id in self.kb.by_id]
        docs = docs or [d for d in self.kb.docs if d.category == category]
        if reading is not None and reading.doc is not None and reading.doc.category == category:
            docs = [reading.doc]  # the doc their words describe, of the category they name
        top = supports[0] if supports else None
        against = (f"the evidence supports {top.category} instead ({top.doc.doc_id}: {'; '.join(top.matched[:2])})"
                   if top else "no curated signature is in the evidence")
        note = (f"category {category} as a reviewer asked; no signature of its docs is in the evidence ({against}), "
                f"so confidence stays at most {REQUESTED_UNSUPPORTED_CONFIDENCE}")
        return self._rca(state, category=category, doc=docs[0] if docs else None,
                         confidence=REQUESTED_UNSUPPORTED_CONFIDENCE, found=found, notes=[note], reading=reading)

    def _unknown(self, state: IncidentState, found, *, requested: bool = False) -> RCA:
        top = state.similar_docs[0] if state.similar_docs else None
        note = (f"closest doc {top.doc_id} (similarity {top.score:.2f}) has none of its signatures in the evidence"
                if top else "no similar doc")
        if requested:
            note = "unknown as a reviewer asked; " + note
        quoted = quotes.quotes_for(state.evidence, found, None) or _first_lines(state.evidence)
        return RCA(category="unknown", confidence=round(min(0.3, 0.1 + (top.score if top else 0) * 0.2), 2),
                   root_cause="No known cause is supported by the evidence: no curated error signature "
                              "matches these events.",
                   evidence=[quotes.quote_text(q, len(state.evidence)) for q in quoted],
                   doc_ids=[], analyst=self.name, findings=found, quotes=quoted, notes=[note])

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        rca = state.rca
        doc = cause_doc(self.kb, state)
        if not_code_defect(state):
            # a reviewer said so (a request, or the root cause they wrote): no code advice at all
            cause = rca.root_cause.split(". ")[0].rstrip(".") if rca else "the cause the reviewer named"
            steps = [f"Confirm the operational cause in the incident's time window: {cause}.",
                     "Restore the affected dependency or configuration, then watch these errors stop.",
                     "Record the incident as operational (not a code defect) with the evidence attached."]
            action = f"Handle {state.service} operationally, no code change: {cause}."
        elif doc is None:
            steps = ["Collect more context: widen the log window and check recent deploys and config changes.",
                     "Reproduce the failing request in staging with the trace ids from the evidence.",
                     "Escalate to the owning team of the service with the evidence attached."]
            action = f"Investigate {state.service}: no known cause matched; gather more evidence before changing anything."
        else:
            steps = list(doc.remediation) or [doc.root_cause]
            cause = quotes.concrete_cause(rca.category, rca.findings) if rca else None
            action = f"{cause} {steps[0]}" if cause else steps[0]
        revision = state.revisions + (1 if feedback else 0)
        requests = [*state.feedback] if feedback is None or feedback in state.feedback else [*state.feedback, feedback]
        if feedback:
            # every request is answered, oldest first, and kept verbatim, as data
            steps = steps + [f"Reviewer request {n}: {text}" for n, text in enumerate(requests, 1)]
            steps = [added for text in requests for added in requested_steps(text)] + steps
            # the requests changed the analysis itself (rca, via the reviewer's reading); the action says
            # which revision it is, the steps carry the requests
            action = f"(revision {revision}) {action}"
        return Recommendation(action=action, steps=steps, risk=state.severity, revision=revision, feedback=feedback)

    def fix_plan(self, state: IncidentState) -> list[str]:
        """Steps a developer does by hand beside the diff: the cited doc's fix hints (the diff's own
        step is written by pipeline/analyst/fixes.py from the change itself)."""
        return fixes.curated_plan(state, cause_doc(self.kb, state))


REQUESTED_UNSUPPORTED_CONFIDENCE = 0.3
DESCRIBED_OTHER_DOC_CONFIDENCE = 0.6
# a category is named by its exact name (`db_pool_exhausted`): prose such as "the connection refused
# errors are noise" must not re-categorise an incident
_CATEGORY_WORDS = {c: re.compile(rf"(?<![\w]){re.escape(c)}(?![\w])", re.I) for c in CATEGORIES}
_STEP_REQUEST = re.compile(r"\b(?:add|include)(?: a| the)? step(?: to)?[:\s]+(?P<step>[^.;\n]+)", re.I)


def requested_category(requests: list[str]) -> str | None:
    """The category the newest request naming exactly one asks for (`db_pool_exhausted`), or None."""
    for text in reversed(requests):
        named = [c for c, pattern in _CATEGORY_WORDS.items() if pattern.search(text or "")]
        if len(named) == 1:
            return named[0]
    return None


def requested_steps(text: str) -> list[str]:
    """Steps a request asks to add ("add a step: drain the queue first")."""
    return [m.group("step").strip() for m in _STEP_REQUEST.finditer(text or "")]


def _first_lines(events: list[LogEvent]) -> list[Quote]:
    out, seen = [], set()
    for event in events:
        line = event.message.splitlines()[0][:200] if event.message else ""
        key = quotes.line_template(line)
        if line and key not in seen:
            seen.add(key)
            out.append(Quote(event_id=event.event_id, field="message", text=line,
                             count=sum(1 for e in events if quotes.line_template(e.message.splitlines()[0][:200]) == key)))
        if len(out) >= 2:
            break
    return out
