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

import re
from collections import defaultdict
from dataclasses import dataclass, replace

from pipeline.analyst import (abstain, answers, capacity, cause_side, earned, evidence_report, findings, fixes, ideas, meant,
                              operational, quotes, requested, retried, specifics, subject, technology, theirs, versions)
from pipeline.analyst.callee_lines import callee_lines, own_warnings
from pipeline.analyst.consistency import uncontradicted_why
from pipeline.analyst.operational import operational_cause
from pipeline.analyst.technology import ANALOGY_CONFIDENCE, by_analogy
from pipeline.analyst.reading import Reading, not_code_defect, read_requests, without_sentences
from pipeline.analyst.requested import requested_steps
from pipeline.knowledge.index import Doc, KnowledgeBase, signature_words
from pipeline.analyst.cause_doc import cause_doc, doc_for
from pipeline.knowledge.retrieval import event_text, evidence_text, signature_matches
from pipeline.state import CATEGORIES, RCA, Finding, IncidentState, LogEvent, Quote, Recommendation, counted, service_or_writer


def _said(signatures, text: str) -> str:
    """Matched signatures in a note, as the reviewer reads them: what each matched in the evidence, never a
    regex (signature_words), each said once."""
    return "; ".join(dict.fromkeys(signature_words(s, text) for s in signatures))


@dataclass(frozen=True)
class Support:
    """The signature evidence for one category: its best doc and how strongly the evidence matches."""

    category: str
    score: float
    doc: Doc
    matched: tuple[str, ...]
    worded: bool = False  # named by the ideas of its cause (pipeline/analyst/ideas.py), no signature


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
        # the callee's own problem lines the log window holds beside its callers' (pipeline/analyst/callee_lines.py)
        # ... and a service's own warnings before its first error (the state it said of itself, grouped apart), read
        # for what its calls' failures (a timeout, a refusal) or nothing yet names: a failure that names its own
        # cause by a doc's signature (a pool with no connection to give) is not recast by an earlier warning
        # (only a warning that names some cause, by a signature, the ideas of one or a count at its limit: the others
        # are the service's ordinary lines, the evidence report's baseline)
        own = [e for e in own_warnings(state) if ideas.categories_worded([e]) or capacity.categories_at_capacity([e])
               or category_support(self.kb, event_text(e))]
        # ... or a state its warnings name that produces the failure when said first (a producer's batches expiring
        # after it warned its broker could not be reached: cause_side.PRODUCED_WHEN_FIRST)
        if own and (signed := category_support(self.kb, evidence_text(state.evidence))) and \
                signed[0].category not in cause_side.CALLER_SIDE:
            first = cause_side.PRODUCED_WHEN_FIRST.get(signed[0].category, frozenset())
            own = [e for e in own if first & {s.category for s in category_support(self.kb, event_text(e))}]
        extra = list({e.event_id: e for e in [*callee_lines(state), *own]}.values())
        if extra:
            state = state.model_copy(update={"evidence": sorted([*state.evidence, *extra], key=lambda e: e.time)})
        extracted = findings.extract(state.evidence)
        asked = [f for text in state.feedback for f in findings.named_in_request(text)]
        found = asked + [f for f in extracted if (f.kind, f.value) not in {(a.kind, a.value) for a in asked}]
        shown = technology.shown_by(state.evidence)
        text = evidence_text(state.evidence)  # the "why" reads it too (_rca)
        # a client that went away mid-answer (its ephemeral port the peer) says nothing failed on this side:
        # its broken pipe or reset supports no category
        gone = {e.event_id for e in state.evidence if subject.client_gone(e)}
        # ... and a job its writer retried and then did supports none either (pipeline/analyst/retried.py)
        gone |= retried.retried_and_done(state.evidence)
        told = evidence_text([e for e in state.evidence if e.event_id not in gone]) if gone else text
        kept = state.model_copy(update={"evidence": [e for e in state.evidence if e.event_id not in gone]}) \
            if gone else state
        supports = self._with_worded(kept, category_support(self.kb, told, shown=shown), shown)
        # the reviewer's requests, each weighed against the evidence (pipeline/analyst/answers.py)
        reading = read_requests(self.kb, state.feedback) if state.feedback else Reading()
        verdict = answers.Verdict()
        # the newest request naming a category by its id (`disk_full`) sets it
        explicit = next(((n, c) for n, text in reversed(list(enumerate(state.feedback, 1)))
                         if (c := requested_category([text]))), None)
        category = explicit[1] if explicit else None
        if state.feedback:
            names = _names(state.service, state.evidence)
            verdict = answers.weigh(self.kb, state.evidence, supports,
                                    [requested.read(self.kb, text, names) for text in state.feedback],
                                    explicit=explicit)
        if category and category != "unknown":
            return self._requested(state, category, supports, found, reading, verdict, text)
        supports = [s for s in supports if s.category not in verdict.excluded]
        if verdict.chosen is not None:
            return self._adopted(state, verdict.chosen, supports, found, reading, verdict, text)
        if not supports or category == "unknown":
            return self._unknown(state, found, requested=category is not None, verdict=verdict)
        top = supports[0]
        runner_up = supports[1] if len(supports) > 1 else None
        carrying = self._carrying(state, top)
        # the cause's line first, its symptoms after (a full WAL disk, then every client refused):
        # a category as well supported whose line came before the top's is the cause they follow
        if top.worded:  # the events whose words carry its cause's ideas
            carrying = [{top.matched[0]} if top.category in ideas.categories_worded([e]) else set()
                        for e in state.evidence]
        earlier = _came_first(state, top, carrying, supports[1:])
        callee = None  # ... or the callee the caller's lines name said its own failure first (rated on its own)
        if earlier is None and not top.worded:
            earlier = callee = _callee_first(state, top, carrying, supports[1:])
        if earlier is not None:
            runner_up, top = top, earlier[0]
            carrying = earlier[1]
        # one trace carrying both, the runner-up's the deeper `Caused by`: the top is its symptom
        inner = None if earlier is not None or top.worded else _cause_in_chain(state, top, supports[1:])
        if inner is not None:
            runner_up, top = top, inner
            carrying = self._carrying(state, top)
        # ... or the top's signature is how the failure was answered (a 403, its status's exception class) and the
        # words of every line carrying it say another category's cause, whose signatures they carry too (the body's
        # "API rate limit exceeded"): the words say why
        said_why = None if earlier is not None or inner is not None or top.worded else \
            _said_why(state, top, carrying, supports[1:])
        if said_why is not None:
            runner_up, top = top, said_why
            carrying = self._carrying(state, top)
            inner = said_why  # rated on its own, as a deeper cause is
        # a caller's failure beside the state of what it calls that produces it (cause_side.PRODUCED_BY)
        origin = None if earlier is not None or inner is not None or top.worded else \
            _origin_of(state, top, supports[1:])
        if origin is not None:
            runner_up, top = top, origin
            carrying = self._carrying(state, top)
        elif earlier is None and inner is None and (behind_state := _state_behind(state, top, carrying, supports[1:])):
            # ... or that state named by its ideas or counted at its capacity in the callee (no signature)
            runner_up, (origin, carrying) = top, behind_state
            top = origin
        # ... and that cause's own cause when its lines came first in turn (a name that does not resolve,
        # then a pool with no connection to give, then its callers' timeouts): the chain to its first link
        if earlier is not None or origin is not None:
            passed = {top.category, runner_up.category if runner_up else top.category}
            while (before := _came_first(state, top, carrying, [s for s in supports if s.category not in passed])):
                runner_up, (top, carrying) = top, before
                passed.add(top.category)
        # a cause found behind the top (in its chain, or as the state producing it) is rated on its own
        behind = inner is not None or origin is not None or callee is not None
        if not (behind or earlier) and subject.probed_only(top.category, state.evidence, carrying, _problem):
            # the platform's probe of the service timed out or was refused: the service did not answer, and
            # no event says why (no category's object): inconclusive, with the evidence report
            return self._unknown(state, found, verdict=verdict, why=(
                f"only the platform's probes of the service itself carry {top.category}'s signatures "
                f"(doc {top.doc.doc_id}): the service did not answer them, and no event says why"))
        # the lines naming the top say they are not its cause, or only guess it (pipeline/analyst/abstain.py): a cause
        # said before them is taken, capped; with none, no category is named, the evidence report instead
        guessed = None
        if not (behind or earlier or top.worded):
            taken, why = _unstated(self.kb, state, top, supports, carrying)
            if why is not None and taken is None:
                return self._unknown(state, found, verdict=verdict, why=why)
            if taken is not None:
                runner_up, top, guessed = top, taken, why
                carrying = _carrying_any(state, top)
        confidence = calibrated_confidence(top.score, runner_up.score if runner_up and not (behind or guessed) else 0.0,
                                           coverage=_error_coverage(state.evidence, carrying))
        notes = [f"matches doc {top.doc.doc_id}: {top.doc.title} ({counted(len(top.matched), 'signature')} found)"]
        decisive = top.worded or any(found and _problem(e) for e, found in zip(state.evidence, carrying))
        if earlier is not None:
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{top.category}'s line came first and {runner_up.category}'s after it (its symptom, "
                         f"it seems): confidence stays at most {UNDECIDED_CONFIDENCE}")
        elif said_why is not None and runner_up is not None:
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"the lines carrying {runner_up.category}'s signatures say in their words {top.category}'s "
                         f"cause, whose signatures they carry too: {runner_up.category}'s is how the failure was "
                         f"answered, {top.category} why; confidence stays at most {UNDECIDED_CONFIDENCE}; to be "
                         f"sure, read the dependency's own reason for refusing")
        elif inner is not None and runner_up is not None:
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{runner_up.category}'s error and {top.category}'s are one trace, {top.category}'s the "
                         f"deeper cause: taken as the cause, confidence stays at most {UNDECIDED_CONFIDENCE}; to be "
                         f"sure, check whether {runner_up.category} stops once {top.category} is resolved")
        elif origin is not None and runner_up is not None:
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{runner_up.category} is what callers see when {top.category} holds in what they call, "
                         f"and the events show both: {top.category} taken as the cause, confidence stays at most "
                         f"{UNDECIDED_CONFIDENCE}; to be sure, check whether {runner_up.category} stops once "
                         f"{top.category} is resolved")
        elif (both := _either_way(state, top, supports[1:])) is not None:
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{both.category} is said by the same service as {top.category}: either may have caused the "
                         f"other (a slow dependency holds what waits on it), so confidence stays at most "
                         f"{UNDECIDED_CONFIDENCE}; to decide, check which began first in that service: "
                         f"{top.category} or {both.category}")
        elif runner_up is not None and (why := _contested(state, top, runner_up, carrying)):
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{runner_up.category} is {why}: the evidence does not decide between them, so confidence "
                         f"stays at most {UNDECIDED_CONFIDENCE}; to decide, check which failure the first affected "
                         f"requests show ({top.category} or {runner_up.category})")
        elif (cause := _worded_first(state, top, supports, carrying)) is not None:
            # a cause named by its ideas in a problem line before the top's first (a server's worker limit
            # reached, then its callers' timeouts): the top may be its symptom
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{cause.category} ({signature_words(cause.matched[0], text)}) is said in a problem line before {top.category}'s "
                         f"first: {top.category} may be its symptom, so confidence stays at most "
                         f"{UNDECIDED_CONFIDENCE}; to decide, check whether {top.category} stops once "
                         f"{cause.category} is resolved")
        elif (producer := _produced_before(state, top, supports, carrying)) is not None:
            # a state that produces the top's failure first said before it, too weakly supported to be
            # taken over it (EARLIER_SHARE): the top may be its symptom, so it is not named confidently
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{producer.category} (doc {producer.doc.doc_id}) is said in problem lines from before the "
                         f"first of {top.category}'s, and it produces {top.category}: {top.category} may be its symptom, "
                         f"so confidence stays at most {UNDECIDED_CONFIDENCE}; to decide, check whether "
                         f"{top.category} stops once {producer.category} is resolved")
        elif (crash := _peer_crashed(state, top, carrying)) is not None:
            # a connection reset while a process died on a crash signal: the reset is the crash's symptom,
            # and a crash whose cause the events do not show is no category's
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"a process crashed ('{crash}') at or before {top.category}'s first line: the dependency "
                         f"died mid-request, so confidence stays at most {UNDECIDED_CONFIDENCE}; to decide, read "
                         f"why it crashed (its core dump or error log)")
        elif (closed := _closed_mid_request(state, top, carrying)) is not None:
            # a peer that accepted the connection and closed it mid-request: not a refusal, and why it closed (a crash,
            # a restart, a timeout of its own) is not in the events
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"every line carrying {top.category}'s signatures says the peer closed an accepted connection "
                         f"mid-request ('{closed}'), none that it refused one: why it closed is not in the events, so "
                         f"confidence stays at most {UNDECIDED_CONFIDENCE}; to decide, read the peer's own log for that time")
        elif (reason := _reason_stated(state, top, carrying)) is not None:
            # a line that says why its connection failed, in words of no refusal or close (Envoy's `reset reason:
            # overflow`, its own circuit breaker): the refusal's words around it are the proxy's generic ones
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"every line carrying {top.category}'s signatures states its reason ('{reason}'), which says "
                         f"no connection was refused or closed by the peer, so confidence stays at most "
                         f"{UNDECIDED_CONFIDENCE}; to decide, read what '{reason}' means for that component")
        elif not top.worded and (failed := cause_side.callee_failed_first(
                state.evidence, top.category, [bool(c) for c in carrying],
                [bool(c) or ideas.category_of_line(event_text(e)) == top.category
                 for e, c in zip(state.evidence, carrying)])) is not None:
            # the callee the callers' lines name failed first, in words no category reads: what its callers see of it
            # is what its failure left, and why it failed is that error's, not theirs; when that error names the file
            # it could not use, it states its cause, one no category reads: inconclusive, citing it
            if (path := abstain.file_named(event_text(failed))) is not None:
                return self._unknown(state, found, verdict=verdict, why=(
                    f"{failed.service}, which the lines carrying {top.category}'s signatures name, failed first on a "
                    f"file of its own ('{path}': '{failed.message.splitlines()[0][:160]}'): {top.category} is what "
                    f"its failure left, and what it says of that file no category reads"))
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{failed.service}, which the lines carrying {top.category}'s signatures name, logged its own "
                         f"error before them ('{failed.message.splitlines()[0][:160]}'): {top.category} is what its "
                         f"failure left, so confidence stays at most {UNDECIDED_CONFIDENCE}; to decide, read why "
                         f"{failed.service} failed")
        elif (said := subject.foreign_subject(top.category, state.evidence, carrying, _problem)) is not None:
            # the signature's word is said of another category's object (a login refused, a token expired)
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"what doc {top.doc.doc_id}'s signature says is refused, expired, full or timed out is named "
                         f"'{', '.join(said[1])}' ({said[0]}'s object, not {top.category}'s): confidence stays at most "
                         f"{UNDECIDED_CONFIDENCE}; to decide, check whether the failure is {top.category} itself or "
                         f"{said[0]}")
        elif not decisive:
            # a doc's signature only in INFO/DEBUG lines (a JVM flag naming OutOfMemoryError, a summary
            # line) is no failure: not decisive evidence, so no confident name on it
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"no problem event carries doc {top.doc.doc_id}'s signatures (only INFO/DEBUG lines do): "
                         f"confidence stays at most {UNDECIDED_CONFIDENCE}")
        if not top.worded and confidence > UNDECIDED_CONFIDENCE and (why := earned.unearned(
                top.category, state.evidence,
                earned.of_category([d for d, _, _ in signature_matches(self.kb, text) if d.category == top.category],
                                   state.evidence, carrying),
                [(s.category, OfflineAnalyst._carrying(state, s)) for s in supports if not s.worded])) is not None:
            # a name reaches the code-fix threshold only on a decisive line, a second independent one agreeing and no
            # line stating another cause (pipeline/analyst/earned.py)
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{why}: confidence stays at most {UNDECIDED_CONFIDENCE}, below the code-fix threshold")
        if top.worded:
            confidence = min(confidence, ideas.IDEA_CONFIDENCE)
            notes = [f"named by the ideas of its cause in the events' words ({top.matched[0]}), no doc's signature: "
                     f"confidence stays at most {ideas.IDEA_CONFIDENCE}; doc {top.doc.doc_id} explains why",
                     *notes[1:2 if earlier is not None else 1]]  # ... and which line came first
        if guessed is not None and runner_up is not None:
            confidence = min(confidence, UNDECIDED_CONFIDENCE)
            notes.append(f"{runner_up.category}'s lines {guessed}; {top.category} is said in a problem line before "
                         f"them: taken as the cause, confidence stays at most {UNDECIDED_CONFIDENCE}")
        if runner_up:
            closeness = "nearly as well" if runner_up.score >= 0.75 * top.score else "less well"
            notes.append(f"also consistent with {runner_up.category} ({closeness} supported: "
                         f"{runner_up.score:.1f} against {top.score:.1f})")
        return self._rca(state, category=top.category, doc=top.doc, confidence=confidence, found=found, notes=notes,
                         reading=reading, verdict=verdict, text=text)

    @staticmethod
    def _coverage(state: IncidentState, support: Support) -> float:
        return _error_coverage(state.evidence, OfflineAnalyst._carrying(state, support))

    @staticmethod
    def _carrying(state: IncidentState, support: Support) -> list[set[str]]:
        """Per event, the signatures of the support's doc it carries."""
        return [set(support.doc.matched_signatures(event_text(e))) for e in state.evidence]

    def _adopted(self, state: IncidentState, own: Support, supports: list[Support], found, reading: Reading,
                 verdict: answers.Verdict, text: str) -> RCA:
        """The category a reviewer's words name, adopted because the evidence supports it: the
        analysis rests on its own support, its confidence calibrated from that support."""
        others = [s for s in supports if s.category != own.category]
        # a category the evidence supports less well than another is taken at no margin, and said so
        runner_up = min(others[0].score, own.score) if others else 0.0
        confidence = calibrated_confidence(own.score, runner_up, coverage=self._coverage(state, own))
        basis = f"doc {own.doc.doc_id}'s signatures in the events ({_said(own.matched[:2], text)})"
        if others and others[0].score > own.score:
            basis += (f", though the evidence supports {others[0].category} better "
                      f"({others[0].score:.1f} against {own.score:.1f})")
        if own.worded:
            confidence = min(confidence, ideas.IDEA_CONFIDENCE)
            basis = f"the ideas of its cause in the events' words, no doc's signature (at most {ideas.IDEA_CONFIDENCE})"
        note = (f"category {own.category} as a reviewer says (request {verdict.chosen_by}); its confidence rests on "
                f"{basis}")
        return self._rca(state, category=own.category, doc=own.doc, confidence=confidence, found=found,
                         notes=[note], reading=reading, verdict=verdict, text=text)

    def _with_worded(self, state: IncidentState, supports: list[Support], shown: frozenset[str]) -> list[Support]:
        """The signatures' supports and, for a category none supports, the ideas of its cause worded
        in one event (pipeline/analyst/ideas.py), or, when neither names any, an error line's meaning
        near one doc's signatures; its doc the most similar of its category that fits the evidence's
        technology."""
        have = {s.category for s in supports}
        ranked = [self.kb.by_id[d.doc_id] for d in state.similar_docs if d.doc_id in self.kb.by_id]
        worded = []
        found = {c: (f"the ideas of {label}", ideas.IDEA_SCORE) for c, (label, _) in
                 ideas.categories_worded(state.evidence).items()}
        # ... or a resource counted at its maximum (pipeline/analyst/capacity.py), a little above an idea
        found |= {c: (label, capacity.CAPACITY_SCORE) for c, (label, _) in
                  capacity.categories_at_capacity(state.evidence).items()}
        if not supports and not found:  # meaning, the weakest signal, only where nothing else names one
            found = {c: (label, meant.MEANING_SCORE) for c, (label, _) in
                     meant.categories_meant(self.kb, state.evidence).items()}
        for category, (label, score) in found.items():
            if category in have:
                # a doc's lone weak signature and the ideas of its cause in the events' own words agree: the
                # category is as well supported as the ideas alone would make it (never below an idea-only rival)
                supports = [replace(s, score=score) if s.category == category and s.score < score else s
                            for s in supports]
                continue
            docs = list({d.doc_id: d for d in [*ranked, *self.kb.docs] if d.category == category}.values())
            docs = [d for d in docs if technology.doc_fits(d.systems, shown)] or docs
            if docs:
                worded.append(Support(category=category, score=score, doc=docs[0], matched=(label,), worded=True))
        # equally supported, a doc's signature ranks before the ideas alone
        ranked_supports = sorted(supports + worded, key=lambda s: (-s.score, s.worded, s.category))
        return _first_said_first(state.evidence, ranked_supports)

    def _rca(self, state: IncidentState, *, category: str, doc, confidence: float, found, notes,
             reading: Reading | None = None, verdict: answers.Verdict | None = None, supported: bool = True,
             warning: str | None = None, lead: str | None = None, text: str | None = None,
             explain: bool = True) -> RCA:
        errors, named = _specifics(state, doc, category)
        found = _merged(found, errors, named)
        quoted = quotes.quotes_for(state.evidence, found, doc)
        cause = lead or quotes.concrete_cause(category, found, [event_text(e) for e in state.evidence])
        # what the events name first; the doc is the "why this happens" paragraph, not the cause
        # ... less its sentences about a symptom the events do not show (a reset, for a refusal)
        why = None
        if doc and doc.root_cause and explain:
            text = text if text is not None else evidence_text(state.evidence)
            why = "Why this happens: " + uncontradicted_why(doc.root_cause.strip(), doc.signatures,
                                                            doc.matched_signatures(text), text)
        told = specifics.sentence(errors, [f for f in named if f.value not in (cause or "")], state.evidence)
        root_cause = " ".join(p for p in (cause, told, why) if p)
        notes = list(notes)
        if verdict is not None:
            # what a reviewer said it is not, and the evidence does not say either, leaves the wording
            root_cause = without_sentences(root_cause, tuple(verdict.drop_words))
            notes = [*verdict.answers, *notes]
        if reading is not None and reading.not_code_defect:
            notes.append("not a code defect, as a reviewer says: no code fix is proposed")
        analogy = by_analogy(state.evidence, doc)
        if analogy is not None:
            # a doc of another technology explains by analogy only: said so, capped below the
            # code-fix threshold, and never eligible for a fix (RCA.supported)
            # said before the doc's paragraph it qualifies, never as the cause (the events' words lead)
            lead = " ".join(p for p in (cause, told) if p)
            root_cause = " ".join(p for p in (lead, analogy, why) if p) if lead else f"{analogy} {root_cause}"
            confidence = min(confidence, ANALOGY_CONFIDENCE)
            supported, warning = False, analogy
            notes.append(f"{analogy} Confidence stays at most {ANALOGY_CONFIDENCE}; no code fix is proposed.")
        return RCA(category=category, root_cause=root_cause, confidence=confidence,
                   evidence=[quotes.quote_text(q, len(state.evidence)) for q in quoted],
                   doc_ids=[doc.doc_id] if doc else [], analyst=self.name, findings=found, quotes=quoted,
                   notes=notes, supported=supported, warning=warning)

    def set_by_reviewer(self, state: IncidentState, category: str, reviewer: str) -> RCA:
        """The analysis of a category a reviewer set (an edit, a fork), as a request naming it sets it
        (`_requested`), credited to them: the root cause says who set it, then what the events say and
        the new category's doc (cause_doc.doc_for), never the old category's paragraph."""
        found = findings.extract(state.evidence)
        if category == "unknown":
            rca = self._unknown(state, found)
            return rca.model_copy(update={
                "root_cause": f"Set by reviewer {reviewer} to unknown. {rca.root_cause}",
                "notes": [f"category unknown as set by reviewer {reviewer}", *rca.notes]})
        shown = technology.shown_by(state.evidence)
        text = evidence_text(state.evidence)
        supports = self._with_worded(state, category_support(self.kb, text, shown=shown), shown)
        return self._requested(state, category, supports, found, Reading(), answers.Verdict(), text, by=reviewer)

    def _requested(self, state: IncidentState, category: str, supports: list[Support], found,
                   reading: Reading, verdict: answers.Verdict, text: str, *, by: str | None = None) -> RCA:
        """The category a request names by its id (`disk_full`), or a reviewer `by` set (an edit), set
        with its own support when the evidence has it, resting on its doc for the incident's technology
        (cause_doc.doc_for); otherwise capped low, not supported (never a fix), the root cause saying
        that no event shows it and what the events say instead."""
        own = next((s for s in supports if s.category == category), None)
        doc = doc_for(self.kb, state, category)
        how = f"as set by reviewer {by}" if by else "as a reviewer asked"
        if own is not None:
            others = [s for s in supports if s.category != category]
            confidence = calibrated_confidence(own.score, others[0].score if others else 0.0,
                                               coverage=self._coverage(state, own))
            if own.worded:
                confidence = min(confidence, ideas.IDEA_CONFIDENCE)
            note = f"category {category} {how}; its doc {(doc or own.doc).doc_id} is supported by the evidence"
            rca = self._rca(state, category=category, doc=doc or own.doc, confidence=confidence, found=found,
                            notes=[note], reading=reading, verdict=verdict, text=text)
            return rca.model_copy(update={"root_cause": f"Set by reviewer {by} to {_words(category)}. {rca.root_cause}"}) \
                if by else rca
        top = supports[0] if supports else None
        says = answers.resting_on(state.evidence, top)
        against = (f"the evidence supports {top.category} instead (doc {top.doc.doc_id}: {_said(top.matched[:2], text)})"
                   if top else "no curated signature is in the evidence")
        note = (f"category {category} {how}; no signature of its docs is in the evidence ({against}), "
                f"so confidence stays at most {REQUESTED_UNSUPPORTED_CONFIDENCE}")
        warning = f"set by a reviewer: no event of this incident shows {_words(category)}"
        lead = (f"Set by {f'reviewer {by}' if by else 'a reviewer'} to {_words(category)}; no event of this incident shows it "
                f"(none of its docs' signatures, none of the ideas of its cause): the events say {answers.quoted(says)}.")
        # no "why this happens" from the category's doc: no event shows the category, so its paragraph
        # (nginx's proxy timeout, for a Python service's DNS failure forked to upstream_timeout) would be
        # false of this incident; the lead says who set it and quotes what the events say (walkthrough s57)
        return self._rca(state, category=category, doc=doc,
                         confidence=REQUESTED_UNSUPPORTED_CONFIDENCE, found=found, notes=[note], reading=reading,
                         verdict=verdict, supported=False, warning=warning, lead=lead, text=text, explain=False)

    def _unknown(self, state: IncidentState, found, *, requested: bool = False,
                 verdict: answers.Verdict | None = None, why: str | None = None) -> RCA:
        """Inconclusive: the evidence report (pipeline/analyst/evidence_report.py) instead of a cause."""
        top = state.similar_docs[0] if state.similar_docs else None
        note = (f"closest doc {top.doc_id} (similarity {top.score:.2f}) has none of its signatures in the evidence"
                if top else "no similar doc")
        if requested:
            note = "unknown as a reviewer asked; " + note
        note = why or note
        errors, named = _specifics(state, None)
        found = _merged(found, errors, named)
        report = evidence_report.build(state.evidence, found, list(state.similar_docs), state.log_window)
        quoted = evidence_report.example_quotes(report) or _first_lines(state.evidence)
        confidence = round(min(evidence_report.INCONCLUSIVE_CONFIDENCE, 0.1 + (top.score if top else 0) * 0.2), 2)
        return RCA(category="unknown", confidence=confidence, root_cause=evidence_report.root_cause(report),
                   evidence=[quotes.quote_text(q, len(state.evidence)) for q in quoted],
                   doc_ids=[], analyst=self.name, findings=found, quotes=quoted,
                   notes=[*(verdict.answers if verdict else []), note, *evidence_report.notes(report)])

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        rca, service = state.rca, service_or_writer(state.service)  # "unknown" is no service's name
        doc = cause_doc(self.kb, state)
        if not_code_defect(state):
            # a reviewer said so (a request, or the root cause they wrote): no code advice at all
            cause = rca.root_cause.split(". ")[0].rstrip(".") if rca else "the cause the reviewer named"
            steps = [f"Confirm the operational cause in the incident's time window: {cause}.",
                     "Restore the affected dependency or configuration, then watch these errors stop.",
                     "Record the incident as operational (not a code defect) with the evidence attached."]
            action = f"Handle {service} operationally, no code change: {cause}."
        elif doc is None:
            # inconclusive: the steps are the evidence report's checks, naming its own patterns and hosts
            report = evidence_report.build(state.evidence, rca.findings if rca else [], list(state.similar_docs),
                                           state.log_window)
            steps = evidence_report.steps(report, state.service)
            lead = report.hypotheses[0].statement if report.hypotheses else "no hypothesis rests on these events"
            action = f"Investigate {service} (inconclusive): first check whether {lead[0].lower()}{lead[1:]}"
        else:
            cause = _stated_cause(rca)
            # a borrowed doc's steps for another stack (SQLAlchemy advice for a Kafka client) are left out
            steps = technology.own_steps(doc.remediation, state.evidence, doc.systems)
            kind = operational_cause(rca, state.evidence)
            if kind:
                # no code change fixes it: the runbook step first, naming the evidence's own entities
                steps = operational.runbook(kind, rca.findings if rca else [], service) + steps
                action = f"Handle {service} operationally ({operational.KINDS[kind]}), no code change: " \
                         f"{cause or steps[0]}"
            else:
                steps = steps or [f"Check what the evidence names first: {cause or doc.title}."]
                action = f"{cause} {steps[0]}" if cause else steps[0]
            if rca and not rca.supported and (rca.warning or "").startswith("set by a reviewer"):
                # a category a reviewer set that no event shows: confirm it on the incident's own lines first;
                # its doc's advice (another stack's symptoms, maybe) only if it is confirmed (walkthrough s57)
                said = f": they say \u201c{rca.quotes[0].text[:160]}\u201d" if rca.quotes else ""
                check = (f"Confirm {_words(rca.category)} first: a reviewer set it and no event of this incident "
                         f"shows it{said}.")
                steps, action = [check, *steps], f"{check} If it is confirmed: {action}"
            where = specifics.summary(rca.findings) if rca else None
            steps = steps + [where] if where else steps
            # no doc of the category is written for the evidence's technology (cause_doc.doc_for): the advice
            # is another stack's, said so first, never silently (CONTRACT §3, by analogy)
            if (analogy := by_analogy(state.evidence, doc)) is not None:
                steps = [f"{analogy} Its steps are that stack's: apply what they mean with this service's own "
                         f"client and settings.", *steps]
                action = f"By analogy with doc {doc.doc_id} (written for {', '.join(doc.systems)}): {action}"
        revision = state.revisions + (1 if feedback else 0)
        requests = [*state.feedback] if feedback is None or feedback in state.feedback else [*state.feedback, feedback]
        if feedback:
            # every request is answered, oldest first, and kept verbatim, as data
            # each with its answer against the evidence (the RCA's notes: pipeline/analyst/answers.py)
            answered = {n: _answer_of(rca, n) for n in range(1, len(requests) + 1)}
            steps = steps + [f"Reviewer request {n}: {text}" + (f" \u2192 {answered[n]}" if answered[n] else "")
                             for n, text in enumerate(requests, 1)]
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
# below the default code-fix threshold: the evidence names a cause, but not decisively (its line only
# in INFO lines, or another cause's line came first)
UNDECIDED_CONFIDENCE = ideas.IDEA_CONFIDENCE
# a cause whose line comes first is taken over a better-supported one after it when it is at least
# this well supported against it (a lone earlier line of a weak signature is noise, not a cause)
EARLIER_SHARE = 0.5
# a runner-up at least this well supported against the top, whose lines the top's did not precede,
# leaves the top undecided (the notes' "nearly as well supported")
NEAR_SHARE = 0.75


def _problem(event: LogEvent) -> bool:
    return event.level in ("ERROR", "FATAL", "WARN", None)


def _first_said_first(events: list[LogEvent], supports: list[Support]) -> list[Support]:
    """`supports` with the ideas-only ones tied at the top score ordered by what the events say of them, not by their
    names: a state that produces another's failure (cause_side.PRODUCED_BY: a thread pool starved, then calls timing
    out) leads it when its first problem line came strictly before the other's, a warning included (the state a service
    said of itself); otherwise the one more error events say leads, then the one an error said first (a TLS handshake
    refused at start-up and again under a request's `Failed to obtain JDBC Connection`); a warning alone is context
    (`upstream slow ... (timeout 10s)` before a body that cannot be decoded). The rest as they are."""
    tied = [s for s in supports if s.worded and supports[0].worded and s.score == supports[0].score]
    if len(tied) < 2:
        return supports
    problems = [e for e in events if _problem(e)]
    said = [set(ideas.categories_worded([e])) for e in problems]
    errors = [found for e, found in zip(problems, said) if e.level in ("ERROR", "FATAL", None)]

    def first(category: str) -> int:
        return next((n for n, found in enumerate(said) if category in found), len(said))

    def produces(support: Support) -> bool:  # ... another tied category's failure, said strictly before it
        return any(support.category in cause_side.PRODUCED_BY.get(o.category, frozenset()) |
                   cause_side.PRODUCED_WHEN_FIRST.get(o.category, frozenset()) and
                   first(support.category) < first(o.category) for o in tied if o is not support)

    def order(support: Support) -> tuple[bool, int, int]:
        at = [n for n, found in enumerate(errors) if support.category in found]
        return not produces(support), -len(at), at[0] if at else len(errors)
    return sorted(tied, key=order) + supports[len(tied):]


def _came_first(state: IncidentState, top: Support, carrying: list[set[str]],
                others: list[Support]) -> tuple[Support, list[set[str]]] | None:
    """The support (and its per-event signatures) whose problem events all came strictly before
    every problem event carrying the top's signatures (a chain: the cause, then its symptoms; two
    failures interleaved are not one), at least EARLIER_SHARE as well supported, named by signatures
    (not by ideas) and a state that produces the top's failure (cause_side.PRODUCED_BY); None when no
    cause came first."""
    times = [e.time for e, found in zip(state.evidence, carrying) if found and _problem(e)]
    if not times:
        return None
    start = min(times)
    best = None
    produced_by = cause_side.PRODUCED_BY.get(top.category, frozenset()) | \
        cause_side.PRODUCED_WHEN_FIRST.get(top.category, frozenset())
    for other in others:
        # an earlier failure that cannot produce the top's (a client's HTTP pool full, then an API's 429s)
        # is another failure, not its cause
        if other.worded or other.score < EARLIER_SHARE * top.score or other.category not in produced_by:
            continue
        found = OfflineAnalyst._carrying(state, other)
        first = [e.time for e, f in zip(state.evidence, found) if f and _problem(e)]
        # a chain, not two failures at once: every line of the cause before any of its symptom's
        if first and max(first) < start and (best is None or min(first) < best[2]):
            best = (other, found, min(first))
    return (best[0], best[1]) if best else None
def _said_why(state: IncidentState, top: Support, carrying: list[set[str]], others: list[Support]) -> Support | None:
    """The other category (by signatures) whose cause the words of every problem line carrying the top's signatures
    say (ideas.category_of_line, the line's own reading), each line carrying that category's signatures too and none
    saying the top's cause in words, or None."""
    lines = [n for n, (e, found) in enumerate(zip(state.evidence, carrying)) if found and _problem(e)]
    if not lines:
        return None
    meant = {ideas.category_of_line(event_text(state.evidence[n])) for n in lines}
    if len(meant) != 1 or (said := next(iter(meant))) in (None, top.category):
        return None
    for other in others:
        if other.category != said:
            continue
        if other.worded:
            # ... or said by its ideas alone when the top is a caller's failure that state produces (a pool's checkout
            # that timed out, `PoolTimeoutError: connection checkout ... timed out`: the class's words are a pool's, the
            # timeout is how its acquire failed); named by the ideas, so at most ideas.IDEA_CONFIDENCE
            if top.category not in cause_side.CALLER_SIDE or \
                    said not in cause_side.PRODUCED_BY.get(top.category, frozenset()):
                return None
            return other if all(said in ideas.categories_worded([state.evidence[n]]) for n in lines) else None
        theirs = OfflineAnalyst._carrying(state, other)
        return other if all(theirs[n] for n in lines) else None
    return None


def _callee_first(state: IncidentState, top: Support, carrying: list[set[str]],
                  others: list[Support]) -> tuple[Support, list[set[str]]] | None:
    """cause_side.callee_first over the other supports, each per event by its signatures or its ideas."""
    if top.category not in cause_side.CALLER_SIDE or not others:
        return None
    found = [[{o.matched[0]} if o.category in {**ideas.categories_worded([e]), **capacity.categories_at_capacity([e])}
              else set() for e in state.evidence] if o.worded else OfflineAnalyst._carrying(state, o) for o in others]
    n = cause_side.callee_first(state.evidence, top.category, [bool(c) for c in carrying],
                                [(o.category, [bool(f) for f in c]) for o, c in zip(others, found)])
    return None if n is None else (others[n], found[n])


def _state_behind(state: IncidentState, top: Support, carrying: list[set[str]],
                  others: list[Support]) -> tuple[Support, list[set[str]]] | None:
    """cause_side.state_behind over the supports named without a signature, each per event by its ideas or its
    lines at capacity."""
    worded = [o for o in others if o.worded]
    if top.worded or top.category not in cause_side.CALLER_SIDE or not worded:
        return None
    found = [[{o.matched[0]} if said else set() for e, said in zip(state.evidence, [
        o.category in ideas.categories_worded([e]) or at for e, at in
        zip(state.evidence, capacity.lines_at_capacity(state.evidence, o.category))])] for o in worded]
    n = cause_side.state_behind(state.evidence, top.category, [bool(c) for c in carrying],
                                [(o.category, [bool(f) for f in c]) for o, c in zip(worded, found)])
    return None if n is None else (worded[n], found[n])


def _worded_first(state: IncidentState, top: Support, supports: list[Support],
                  carrying: list[set[str]]) -> Support | None:
    """The other category named by its ideas (no signature) in a problem event strictly before every
    problem event carrying the top's signatures, or None."""
    if top.worded:
        return None
    times = [e.time for e, found in zip(state.evidence, carrying) if found and _problem(e)]
    others = [s for s in supports if s.worded and s.category != top.category]
    if not times or not others:
        return None
    start = min(times)
    earlier = [e for e in state.evidence if _problem(e) and e.time < start]
    said = ideas.categories_worded(earlier) if earlier else {}
    return next((s for s in others if s.category in said), None)


def _produced_before(state: IncidentState, top: Support, supports: list[Support],
                     carrying: list[set[str]]) -> Support | None:
    """The other category (by signatures) that produces the top's failure (cause_side.PRODUCED_BY) and
    whose problem lines began strictly before the top's first (a state holds while it is said again), however
    weakly supported, or None."""
    if top.worded:
        return None
    times = [e.time for e, found in zip(state.evidence, carrying) if found and _problem(e)]
    produced_by = cause_side.PRODUCED_BY.get(top.category, frozenset())
    if not times or not produced_by:
        return None
    start = min(times)
    for other in supports:
        if other.worded or other.category not in produced_by:
            continue
        first = [e.time for e, f in zip(state.evidence, OfflineAnalyst._carrying(state, other)) if f and _problem(e)]
        if first and min(first) < start:
            return other
    return None


# a process killed by a crash signal (a segfault, an abort, a bus error), not by a kill (SIGKILL, SIGTERM)
_CRASH = re.compile(r"\b(?:signal (?:4|6|7|8|11)\b|SIG(?:SEGV|ABRT|BUS|ILL|FPE)\b|segmentation fault|segfault|"
                    r"core dumped)", re.I)


def _peer_crashed(state: IncidentState, top: Support, carrying: list[set[str]]) -> str | None:
    """The crash (`_CRASH`) a problem line says at or before the first problem line carrying the top's
    connection_refused signatures (a reset is what a crashed peer leaves), or None."""
    if top.category != "connection_refused" or top.worded:
        return None
    times = [e.time for e, found in zip(state.evidence, carrying) if found and _problem(e)]
    if not times:
        return None
    start = min(times)
    for event in state.evidence:
        if _problem(event) and event.time <= start and (m := _CRASH.search(event.message)):
            return m.group(0)
    return None


# a peer closing a connection it had accepted (`upstream prematurely closed connection`, `server closed the connection
# unexpectedly`, an EOF mid-response), and the words of a connection refused or never made
_CLOSED = re.compile(r"\bprematurely closed\b|\bclosed (?:the )?connection (?:unexpectedly|prematurely)|"
                     r"\bunexpected(?:ly)? (?:eof|end of (?:file|stream))\b|\bremote (?:end )?closed\b", re.I)
_NOT_MADE = re.compile(r"refused|unreachable|no route|connect\(\) failed|ECONNREFUSED|connect failed|cannot connect|"
                       r"could not connect|failed to connect|timed? ?out", re.I)


# a reason a line states for its failure (`reset reason: overflow`, `reason=overflow`), and the words of a reason that
# is a refusal or a peer's close (`connection failure`, `connection termination`, `remote reset`)
_REASON = re.compile(r"\breason\s*[:=]\s*\"?([a-z][\w ./-]{1,40}?)(?=[\"'.,;)\]]|\s+[\w.-]+[:=]|$)", re.I | re.M)
_PEER_REASON = re.compile(r"refus|reset|clos|terminat|connect|eof|unreachable|fail|time|abort|route", re.I)


def _reason_stated(state: IncidentState, top: Support, carrying: list[set[str]]) -> str | None:
    """The reason every problem line carrying the top's connection_refused signatures states for its failure, when
    none of those reasons is a refusal or a close (`reset reason: overflow`); else None."""
    if top.category != "connection_refused" or top.worded:
        return None
    lines = [event_text(e) for e, found in zip(state.evidence, carrying) if found and _problem(e)]
    reasons = [m.group(1).strip() for text in lines if (m := _REASON.search(text))]
    if not lines or len(reasons) < len(lines) or any(_PEER_REASON.search(r) for r in reasons):
        return None
    return reasons[0]


def _closed_mid_request(state: IncidentState, top: Support, carrying: list[set[str]]) -> str | None:
    """The words of a peer closing an accepted connection, when every problem line carrying the top's
    connection_refused signatures says so and none says a connection was refused or never made; else None."""
    if top.category != "connection_refused" or top.worded:
        return None
    lines = [event_text(e) for e, found in zip(state.evidence, carrying) if found and _problem(e)]
    said = [m.group() for text in lines if (m := _CLOSED.search(text))]
    if not lines or len(said) < len(lines) or any(_NOT_MADE.search(text) for text in lines):
        return None
    return said[0]


def _unstated(kb: KnowledgeBase, state: IncidentState, top: Support, supports: list[Support],
              carrying: list[set[str]]) -> tuple[Support | None, str | None]:
    """Whether the problem lines naming the top (by signatures) do not state its cause: a refusal's lines that say
    the peer closed an accepted connection, or state a reason that is no refusal (`reset reason: overflow`), or
    lines that only guess it (`Perhaps out of memory?`: abstain.hedged, of every problem line any of its category's
    docs names). Then (the cause said before them, by its ideas or signatures, or None; why, in words); (None, None)
    when they state it."""
    lines = [(e, f) for e, f in zip(state.evidence, carrying) if f and _problem(e)]
    if not lines:
        return None, None
    why = None
    if (closed := _closed_mid_request(state, top, carrying)) is not None:
        why = f"say the peer closed an accepted connection mid-request ('{closed}'), none that it refused one"
    elif (reason := _reason_stated(state, top, carrying)) is not None:
        why = f"state their reason ('{reason}'), which is no refusal nor a close by the peer"
    elif (named := _naming(kb, state, top.category)) and all(abstain.hedged(text, abstain.spans_of(text, sigs))
                                                             for text, sigs in named):
        why = f"only guess it ('{event_text(lines[0][0])[:120]}': a hedge, no statement)"
    if why is None:
        return None, None
    first = next(i for i, (e, f) in enumerate(zip(state.evidence, carrying)) if f and _problem(e))
    for other in supports:  # the evidence is in time order, a line's file order kept within a second
        if other.category == top.category:
            continue
        if any(f and _problem(e) for e, f in zip(state.evidence[:first], _carrying_any(state, other)[:first])):
            return other, why
    return None, f"every line carrying {top.category}'s signatures (doc {top.doc.doc_id}) {why}: why it failed is " \
                 f"not in the events"


def _naming(kb: KnowledgeBase, state: IncidentState, category: str) -> list[tuple[str, list[str]]]:
    """Each problem event's text that any of the category's docs' signatures name, with those signatures (a
    kernel's OOM kill names out_of_memory by another doc than the one on top)."""
    named = []
    for event in state.evidence:
        if _problem(event):
            text = event_text(event)
            sigs = [sig for doc, _, found in signature_matches(kb, text) if doc.category == category for sig in found]
            if sigs:
                named.append((text, sigs))
    return named


def _carrying_any(state: IncidentState, support: Support) -> list[set[str]]:
    """Per event, what names the support's category in it: its doc's signatures, or its cause's ideas (worded)."""
    if support.worded:
        return [{support.matched[0]} if support.category in ideas.categories_worded([e]) else set()
                for e in state.evidence]
    return OfflineAnalyst._carrying(state, support)


def _cause_in_chain(state: IncidentState, top: Support, others: list[Support]) -> Support | None:
    """The best supported other category (by signatures) whose signatures sit deeper in a trace's
    chain than the top's, in one problem event carrying both (pipeline/analyst/cause_side.py)."""
    others = [o for o in others if not o.worded]
    chained = cause_side.chains(state.evidence) if others else []
    return next((o for o in others if cause_side.deeper(top.doc, o.doc, chained)), None) if chained else None


def _origin_of(state: IncidentState, top: Support, others: list[Support]) -> Support | None:
    """The best supported other category (by signatures, in a problem event, at least EARLIER_SHARE as
    well supported) whose state produces the top's failure in its callers (cause_side.PRODUCED_BY)."""
    produced_by = cause_side.PRODUCED_BY.get(top.category, frozenset())
    either_way = cause_side.EITHER_WAY.get(top.category, frozenset())
    carrying = OfflineAnalyst._carrying(state, top)
    callers = {e.service for e, found in zip(state.evidence, carrying) if found}
    # a pool that never opened a connection was not drained by demand: what keeps it from opening them is taken
    # however weakly it is supported against the pool's many lines
    share = 0.0 if top.category == "db_pool_exhausted" and cause_side.none_open(
        [event_text(e) for e, found in zip(state.evidence, carrying) if found and _problem(e)]) else EARLIER_SHARE
    for other in others:
        if other.worded or other.category not in produced_by or other.score < share * top.score:
            continue
        said = [e for e, found in zip(state.evidence, OfflineAnalyst._carrying(state, other)) if found and _problem(e)]
        # a state a slow call also produces in its caller counts only when another service (the callee) says it
        if said and (other.category not in either_way or any(e.service not in callers for e in said)):
            return other
    return None


def _either_way(state: IncidentState, top: Support, others: list[Support]) -> Support | None:
    """The other category (by signatures, in a problem event, at least EARLIER_SHARE as well supported)
    that the top's own service says and that could be its cause or its symptom alike, whichever of the
    two is the top (cause_side.EITHER_WAY: a pool drained while calls to a slow dependency time out), or None."""
    mine = {e.service for e, found in zip(state.evidence, OfflineAnalyst._carrying(state, top)) if found and _problem(e)}
    for other in others:
        pair = other.category in cause_side.EITHER_WAY.get(top.category, frozenset()) or \
            top.category in cause_side.EITHER_WAY.get(other.category, frozenset())
        if other.worded or not pair or other.score < EARLIER_SHARE * top.score:
            continue
        if any(found and _problem(e) and e.service in mine
               for e, found in zip(state.evidence, OfflineAnalyst._carrying(state, other))):
            return other
    return None


def _contested(state: IncidentState, top: Support, runner_up: Support, carrying: list[set[str]]) -> str | None:
    """Why the runner-up (by signatures) leaves the top undecided, or None: at least EARLIER_SHARE as
    well supported with its problem lines begun before the top's, or at least NEAR_SHARE as well
    supported without the top's lines begun first (a cause whose lines came first is the cause)."""
    if top.worded or runner_up.worded or runner_up.score < EARLIER_SHARE * top.score:
        return None
    theirs = OfflineAnalyst._carrying(state, runner_up)
    if cause_side.started_before(carrying, theirs, state.evidence):
        return f"at least half as well supported and its lines began before {top.category}'s"
    if runner_up.score >= NEAR_SHARE * top.score and not cause_side.started_before(theirs, carrying, state.evidence):
        return f"nearly as well supported ({runner_up.score:.1f} against {top.score:.1f}) and {top.category}'s lines " \
               f"did not come first"
    return None


# a category is named by its exact name (`db_pool_exhausted`): prose such as "the connection refused
# errors are noise" must not re-categorise an incident
_CATEGORY_WORDS = {c: re.compile(rf"(?<![\w]){re.escape(c)}(?![\w])", re.I) for c in CATEGORIES}


def requested_category(requests: list[str]) -> str | None:
    """The category the newest request naming exactly one asks for (`db_pool_exhausted`), or None."""
    for text in reversed(requests):
        named = [c for c, pattern in _CATEGORY_WORDS.items() if pattern.search(text or "")]
        if len(named) == 1:
            return named[0]
    return None


def _answer_of(rca: RCA | None, n: int) -> str | None:
    prefix = f"Reviewer request {n} ("
    note = next((x for x in (rca.notes if rca else []) if x.startswith(prefix)), None)
    return note.split("\u201d): ", 1)[-1] if note else None


def _names(service: str, events: list[LogEvent]) -> frozenset[str]:
    """The words of the incident's services and hosts: in a request they name a component."""
    text = " ".join({service, *(e.service or "" for e in events), *(e.host or "" for e in events)})
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2)


def _specifics(state: IncidentState, doc: Doc | None, category: str | None = None) -> tuple[list[Finding], list[Finding]]:
    """The error statements (the line carrying the doc's signature, or the ideas of the category's cause,
    ranked first) and the other specifics of the evidence and its log window (pipeline/analyst/specifics.py)."""
    signed = (lambda line: bool(doc.matched_signatures(line))) if doc is not None and doc.signatures else None
    telling = (lambda line: bool(signed and signed(line)) or ideas.category_of_line(line) == category) \
        if category else signed
    errors = specifics.statements(state.evidence, telling=telling)
    ids = {e.event_id for e in state.evidence}
    window = [e for e in state.log_window if e.event_id not in ids]
    named = specifics.extract([*state.evidence, *window], errors, bounded=category in specifics.BOUNDED,
                              doc_text=f"{doc.root_cause} {' '.join(doc.remediation)}" if doc is not None else "")
    # versions that do not fit together: the versions the events name, what was built and what runs
    return errors, named + versions.named(state.evidence) if category == "dependency_mismatch" else named


def _merged(found: list[Finding], errors: list[Finding], named: list[Finding]) -> list[Finding]:
    """The findings so far (a reviewer's first), then the error statements, then the other specifics."""
    have = {(f.kind, f.value) for f in found}
    reviewer = [f for f in found if f.source == "reviewer"]
    rest = [f for f in found if f.source != "reviewer"]
    new_errors = [f for f in errors if (f.kind, f.value) not in have]
    new_named = [f for f in named if (f.kind, f.value) not in have]
    return [*reviewer, *new_errors, *rest, *new_named]


def _first_lines(events: list[LogEvent]) -> list[Quote]:
    out, seen = [], set()
    for event in events:
        line = quotes.first_words(event)
        key = quotes.line_template(line)
        if line and key not in seen:
            seen.add(key)
            out.append(Quote(event_id=event.event_id, field="message", text=line,
                             count=sum(1 for e in events if quotes.line_template(quotes.first_words(e)) == key)))
        if len(out) >= 2:
            break
    return out


def _stated_cause(rca: RCA | None) -> str | None:
    """The cause the recommendation's action leads with: a reviewer's written root cause when they wrote one; for a
    category a reviewer set, what the evidence names of that category (never the generic sentence of the events'
    exception, which states the analyst's cause, not theirs), else that they set it; otherwise the evidence's
    concrete cause (issue 36: a recommendation follows the person's cause)."""
    if rca is None:
        return None
    written = theirs.written_cause(rca)
    if written is not None:
        return written
    cause = quotes.concrete_cause(rca.category, rca.findings)
    who = theirs.set_by(rca)
    if who is not None and (cause is None or cause == quotes.where_it_fails(rca.findings)):
        return f"Reviewer {who} set the cause to {_words(rca.category)}."
    return cause


def _words(category: str) -> str:
    """A category as a reviewer reads it in a sentence (`upstream timeout`, not `upstream_timeout`)."""
    return category.replace("_", " ")
