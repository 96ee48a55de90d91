"""Retrieval: which curated docs the evidence of an incident points to, and how severe it is.

The evidence's text (`evidence_text`: exceptions, messages, the error fields of structured logs,
stack traces) is matched against every doc's signatures (`signature_matches`, cached per text and
docs generation: the hot path of every incident); `find_similar` combines that support with the
knowledge base's similarity search for the rag node; `severity_for` and `cause_doc` are what the
engine, the services and every analyst read from the retrieved docs. Nothing here decides a
cause: that is the analysts' (pipeline/analyst/).
"""
from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.knowledge.pattern_text import required_groups, required_text, split_alternatives
from pipeline.state import SEVERITIES, ErrorDoc, LogEvent


# Structured fields loggers put the error in: Go's zap/logrus `error`, pino's `err`, ECS
# `error.message`, SDK `Code`/`statusCode`, Kubernetes events' `reason`. Keys compare without
# case, `_`, `-` or `.`; other fields (ids, paths, durations) would only add noise.
# (the error's own text under a short key: `exc` as the structured ingest reads it, logfmt's dotted `err.message`)
ERROR_FIELDS = frozenset({
    "error", "err", "errors", "errormessage", "errmessage", "exc", "errmsg", "errormsg", "cause", "rootcause", "reason",
    "detail", "details", "description", "code", "errorcode", "sqlstate", "errno", "status", "statuscode",
    "httpstatus", "httpstatuscode", "exitcode", "signal", "exceptionmessage", "excinfo", "failure",
})
STACK_HEAD = 2500
STACK_TAIL = 1500
TRIGRAM_TEST_CHARS = 2_000  # evidence whose distinct line shapes are up to this long skips docs by trigram (_shape_trigrams)


@lru_cache(maxsize=4096)
def _field_key(key: str) -> str:  # a log's few field names, asked for every event's text
    return key.lower().replace("_", "").replace("-", "").replace(".", "")


def error_fields(fields: dict) -> list[str]:
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
    # read several times per analysis (rag, rca's supports and quotes, recommend, propose_fix) and
    # again by a merge's re-run: worked out once per content, keyed by everything it reads (the
    # error fields, not the whole fields dict: the text holds only those); a long message or trace
    # is not kept (the cache's memory stays within a few MB)
    fields = tuple(error_fields(e.fields)) if e.fields else ()
    if len(e.message) + len(e.stack or "") > CACHED_TEXT_CHARS:
        return _event_text.__wrapped__(e.exception, e.message, fields, e.stack)
    return _event_text(e.exception, e.message, fields, e.stack)


CACHED_TEXT_CHARS = 4_000  # an event's message and trace up to this long have their text cached


@lru_cache(maxsize=1024)
def _event_text(exception: str | None, message: str, fields: tuple[str, ...], stack: str | None) -> str:
    parts = [exception or "", message]
    if exception and not message.startswith(exception):
        # loggers split "ExcClass: text" into two fields; signatures are written as printed
        short = exception.rsplit(".", 1)[-1]
        parts.append(f"{exception}: {message.splitlines()[0]}")
        if short != exception:
            parts.append(f"{short}: {message.splitlines()[0]}")
    parts += fields
    if stack:
        parts.append(_stack_excerpt(stack))
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
        fields = error_fields(e.fields) if e.fields else []
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
        texts = [_required_literal("re:" + a) for a in alternatives]
        if all(texts):
            return tuple(t for t in texts if t)
    return None


def _code_like(token: str) -> bool:
    token = token.strip("'\"():,[]")
    if len(token) < 5:
        return False
    letters, digits = any(c.isalpha() for c in token), any(c.isdigit() for c in token)
    capitals = sum(c.isupper() for c in token)
    return ((letters and digits) or (token.isupper() and len(token) >= 6) or "_" in token or "$" in token
            or (capitals >= 2 and any(c.islower() for c in token)) or ("." in token.strip(".") and letters))


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
    trigrams = _shape_trigrams(lowered)
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


_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")


def _shape_trigrams(lowered: str) -> set[str] | None:
    """The trigrams of the text's distinct lines with their digits as `0` (the doc test's heads are
    read the same way: a text a signature requires is in the evidence only if its shape is in the
    evidence's), or None when those lines are too long to be worth splitting (most trigrams are there).
    A burst's lines that differ in their numbers (a merge's 50 events) are one shape: tested once."""
    shapes = "\n".join(dict.fromkeys(lowered.translate(_DIGITS_AS_ZERO).split("\n")))
    if len(shapes) > TRIGRAM_TEST_CHARS:
        return None
    return {shapes[i:i + 3] for i in range(len(shapes) - 2)}


# (signature, required text or None, regex or None, a literal's weight, alternative texts or None)
_Check = tuple[str, "str | None", "re.Pattern[str] | None", float, "tuple[str, ...] | None"]


@lru_cache(maxsize=4)
def _signature_checks(kb: KnowledgeBase, generation: int) -> tuple:
    """Per doc of this generation: the first three characters of every text its signatures
    require (None when one requires none of three or more: that doc is always checked), and per
    signature (signature, text the lowered evidence must contain or None, regex or None for a
    literal, a literal's weight, texts one of which the lowered evidence must contain or None: see
    _required_alternatives)."""
    plans: list[tuple[Doc, tuple[_Check, ...]]] = []
    for doc in kb.docs:
        checks: list[_Check] = []
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
    for _, planned in plans:
        for check in planned:
            for needle in _required_texts(check):
                for trigram in set(_trigrams(needle)):
                    common[trigram] = common.get(trigram, 0) + 1
    result = []
    for doc, planned in plans:
        # a signature with alternatives adds a trigram of each: the doc passes when one is present
        required = [_required_texts(check) for check in planned]
        # read as the evidence's trigrams are (_shape_trigrams: digits as `0`, lines one by one: a
        # text across lines has no head)
        heads = (frozenset(min(_trigrams(needle), key=lambda t: (common[t], t)).translate(_DIGITS_AS_ZERO)
                           for texts in required for needle in texts)
                 if all(texts and all(len(n) >= 3 and "\n" not in n for n in texts) for texts in required) else None)
        result.append((doc, heads, planned))
    return tuple(result)


def _required_texts(check: tuple) -> tuple[str, ...]:
    # one of these is in any evidence the signature matches; () when there are none to test
    _, needle, _, _, needles = check
    return (needle,) if needle is not None else needles or ()


def _trigrams(text: str) -> list[str]:
    return [text[i:i + 3] for i in range(len(text) - 2)]


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
