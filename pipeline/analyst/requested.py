"""What a reviewer's request for changes says the incident is, or is not, in any words (issue 36.4).

A request is split into what it says the incident is (the claim) and what it says it is not (each
denial: "not a deadlock", "Not DNS,", "the pool isn't exhausted", "rather than X"). Each is read
for the category it names by the same meaning-matching as cause naming: its normalised words
(pipeline/analyst/ideas.py `words_of`, stemmed; a misspelt word taken as the known word it is
closest to) against every category's vocabulary, drawn from the knowledge docs themselves (their
ids, titles and literal signatures), the categories' meanings and the ideas of their causes, each
word weighted by how few categories use it. The technologies and names it mentions (Kafka, redis,
a host of the evidence) are its components.

`weigh` then holds each against the evidence (pipeline/analyst/offline.py decides what to do):
a claim is carried by the events when its category has their support (a doc's signatures, or the
ideas of its cause) and, when the claim is about one topic of that category (a lock wait timeout
in `db_deadlock`), by a doc about that topic or by an event carrying its words; a denial is
contradicted by the events that carry its words, or by the signatures of the doc the analysis
rests on when that doc is about it. Nothing here writes the analysis.
"""
from __future__ import annotations

import difflib
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field

from pipeline.analyst import ideas
from pipeline.analyst.technology import named_technologies
from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.state import CATEGORIES, LogEvent

# what each category means, as the product defines it (docs/CONTRACT.md §3), in plain words
CATEGORY_MEANING = {
    "null_reference": "code dereferencing a null none nil undefined value null pointer",
    "db_pool_exhausted": "database connection pool exhausted no free connection acquire timeout",
    # two topics, deadlocks and lock wait timeouts, neither the whole category's (answers.py)
    "db_deadlock": "database transactions locks blocked waiting",
    "db_schema_mismatch": "database schema mismatch missing column table migration not applied",
    "upstream_timeout": "call to a dependency upstream service timing out timeout slow response gateway",
    "upstream_rate_limited": "dependency rate limited throttling quota 429 too many requests",
    "upstream_auth_failure": "credentials token password rejected expired unauthorized forbidden 401 403 auth",
    "tls_certificate": "tls ssl certificate expired untrusted mismatched handshake x509",
    "dns_resolution": "dns host name cannot be resolved resolver lookup nxdomain",
    "connection_refused": "dependency not accepting connections refused reset unreachable down network policy firewall "
                          "blocked",
    "out_of_memory": "memory exhausted out of memory oom killed heap",
    "disk_full": "disk volume full no space left on device storage",
    "config_missing": "required configuration environment variable secret setting missing invalid",
    "serialization_error": "payload cannot be parsed serialised deserialised json parse",
    "data_integrity": "constraint violation duplicate key foreign key invalid data",
    "concurrency_conflict": "optimistic lock conflict concurrent modification race",
    "resource_exhaustion": "threads file descriptors sockets ports executor exhausted limit",
    "queue_backlog": "message queue backlog full consumer lag",
    "dependency_mismatch": "incompatible library version api version upgrade import",
}
# words that carry no cause: function words, and what any request says ("the root cause is")
_STOP = frozenset("""
a an the this that these those it its it's is was are were be been being am do does did done doing has have had
i we you they he she me us our your my their them his her of to in on at by for with from into onto about as
and or but so if then than because due since while when where which what who whom why how there here again also
just only really actually probably maybe perhaps likely seems seem seemed think thought believe guess looks look
like please pls plz kindly can could would should will shall might must may not no yes never any some all more
most less much many very too quite rather instead both either neither each every one ones thing things stuff
root cause caused causes causing reason real issue issues problem problems error errors incident incidents
analysis rca category change changes fix fixed wrong right correct incorrect say says said mean means meant
check checked see saw seen see actually sure pretty something anything nothing everything case hey hi ok okay
team guys lol out up over under off again just let lets let's ran run running got get gets getting went
go goes going happened happens happen happening hit hits real whole part same other another kind sort type
""".split())
_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ied", "ies", "ers", "er", "ed", "es", "s", "al", "e")


def core(category: str) -> frozenset[str]:
    """The stems of a category's meaning: what every doc of it is about, not one topic of it."""
    return frozenset(_stems(CATEGORY_MEANING.get(category, "")))


def stem(word: str) -> str:
    """A word without its inflection (exhaustion, exhausted -> exhaust; connections -> connect;
    lagging -> lag)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)] + ("y" if suffix in ("ied", "ies") else "")
            if suffix in ("ing", "ed", "er", "ers") and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            return word
    return word


_OUT_OF = re.compile(r"\b(?:ran|run|running|runs) out of\b|\bout of\b", re.I)


def _stems(text: str) -> list[str]:
    text = _OUT_OF.sub(" exhausted ", text)  # "out of memory", "ran out of connections": exhausted
    return [stem(w) for w in sorted(ideas.words_of(text)) if w not in _STOP and not w.isdigit() and len(w) > 1 or
            (w.isdigit() and len(w) in (3, 4))]  # 429, 1205: codes mean something; other numbers not


@dataclass(frozen=True)
class Vocabulary:
    """Per category, its stems and their weight; per stem, how distinctive it is (idf in [0, 1])."""

    weight: dict[str, dict[str, float]]
    idf: dict[str, float]
    known: tuple[str, ...]  # every stem, for misspellings
    about: dict[str, Counter]  # per doc id, its stems' counts over its whole text
    # what the docs say fails by negating it ("does not exist", "could not be resolved", "not set"):
    # "the migration wasn't applied" claims a failure, it denies nothing
    failing: frozenset[str]


@functools.lru_cache(maxsize=4)
def vocabulary(kb: KnowledgeBase, generation: int) -> Vocabulary:
    weight: dict[str, dict[str, float]] = {c: {} for c in CATEGORIES if c != "unknown"}

    def add(category: str, text: str, w: float) -> None:
        for s in _stems(text):
            weight[category][s] = max(weight[category].get(s, 0.0), w)

    for category in weight:
        add(category, category.replace("_", " ") + " " + CATEGORY_MEANING.get(category, ""), 1.0)
    for idea in ideas.IDEAS:
        add(idea.category, " ".join(w for group in idea.groups for w in group), 0.8)
    about: dict[str, Counter] = {}
    negated: Counter = Counter()
    for doc in kb.docs:
        if doc.category not in weight:
            continue
        add(doc.category, f"{doc.doc_id.replace('-', ' ')} {doc.title}", 0.6)
        add(doc.category, " ".join(s for s in doc.signatures if not s.startswith("re:")), 0.3)
        negated.update(stem(m.group(1).lower()) for m in _NEGATED_STATE.finditer(f"{doc.text} {' '.join(doc.remediation)}"))
        about[doc.doc_id] = Counter(stem(w) for w in _all_words(f"{doc.doc_id} {doc.title} {doc.text} "
                                                                 f"{' '.join(doc.remediation)}"))
        for s in _stems(f"{doc.doc_id.replace('-', ' ')} {doc.title}"):
            about[doc.doc_id][s] += 3  # what a doc's id and title name, it is about
    df = Counter(s for stems in weight.values() for s in stems)
    n = len(weight)
    idf = {s: math.log(n / count) / math.log(n) for s, count in df.items()}
    failing = frozenset(s for s, count in negated.items() if count >= 2 and len(s) >= 3 and s not in _STOP)
    return Vocabulary(weight=weight, idf=idf, known=tuple(sorted(idf)), about=about, failing=failing)


_NEGATED_STATE = re.compile(r"\b(?:not|n't|cannot|unable to|failed to|could not|can't|no longer)\s+(?:be\s+)?([a-z]+)",
                            re.I)


def _all_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text).lower())


def _known(vocab: Vocabulary, s: str) -> str | None:
    if s in vocab.idf:
        return s
    if len(s) < 5 or s.isdigit():
        return None
    close = difflib.get_close_matches(s, vocab.known, n=1, cutoff=0.8)  # a misspelling: deadlok, memroy
    return close[0] if close else None


@dataclass(frozen=True)
class Meaning:
    """What one phrase of a request names: its text, the category its words name best (None when
    they name none), its distinctive stems, and the technologies it names."""

    text: str
    category: str | None = None
    score: float = 0.0
    stems: tuple[str, ...] = ()
    technologies: tuple[str, ...] = ()

    def words(self, stems: tuple[str, ...] | None = None) -> str:
        """The phrase's own words for some of its stems (all of them by default), as written."""
        wanted = set(self.stems if stems is None else stems)
        out = [w for w in re.findall(r"[\w-]+", _OUT_OF.sub(" exhausted ", self.text)) if
               any(stem(p) in wanted for p in _all_words(w))]
        return " ".join(dict.fromkeys(out)) or " ".join(sorted(wanted))


def meaning(kb: KnowledgeBase, text: str, names: frozenset[str] = frozenset()) -> Meaning:
    """The category a phrase's words name (the best-scored one, clear of the next, and named by
    at least one word of its meaning or its cause's ideas, not only a doc's title), its stems.
    Technologies (redis, kafka) and `names` (the words of the incident's services and hosts:
    "checkout" is a service, not a pool checkout) are components, not meaning."""
    vocab = vocabulary(kb, kb.generation)
    techs = tuple(sorted(named_technologies(text)))
    skip = {stem(w) for w in (*names, *(w for t in techs for w in _all_words(t)))}
    stems = [k for k in (_known(vocab, s) for s in _stems(text) if s not in skip) if k]
    distinctive = tuple(dict.fromkeys(s for s in stems if vocab.idf.get(s, 0.0) >= 0.3))
    scores = sorted(((sum(vocab.idf[s] * w.get(s, 0.0) for s in set(stems)), c) for c, w in vocab.weight.items()),
                    reverse=True)
    (best, category), (second, _) = scores[0], scores[1]
    meant = any(vocab.weight[category].get(s, 0.0) >= 0.8 for s in stems)
    if best < 0.5 or best < 1.25 * second or not meant:
        return Meaning(text=text, stems=distinctive, technologies=techs)
    return Meaning(text=text, category=category, score=round(best, 3), stems=distinctive, technologies=techs)


# a denial: "not X", "isn't X", "X is not the cause", "rather than X", "rule out X"
_CLAUSE = (r"(?P<x>[^,.;:!?()\n]{2,60}?)(?=\s*(?:[,.;:!?()\n]|\b(?:but|it'?s|it is|the real|this|that|it|looks?|"
           r"seems?|i|we|because|since)\b|$))")
_DENIALS = tuple(re.compile(p, re.I) for p in (
    r"(?:^|[,.;:!?(]\s*|\b(?:is|was|are|were|it'?s|that'?s|this'?s|and|but|definitely|certainly|surely)\s+)"
    r"(?<!could )(?<!can )(?<!does )(?<!did )(?<!do )not\s+(?:(?:a|an|the|any|really|just|caused by|due to|about|"
    r"related to|from|because of)\s+)*" + _CLAUSE,
    # "isn't X" denies X; "isn't this X?" asks whether it is X: a claim
    r"\b(?:isn'?t|wasn'?t|aren'?t|weren'?t|ain'?t)\s+(?!(?:this|it|that|there)\b)"
    r"(?:(?:a|an|the|any|really|just|caused by|due to|about)\s+)*"
    + _CLAUSE,
    r"\b(?:don'?t|do not|doesn'?t|does not|didn'?t|did not) (?:think|believe|feel|buy)(?: that)? (?:this|it|that)?"
    r"(?: is| was|'s)?\s+(?:(?:a|an|the|any|really|just|caused by|due to)\s+)*" + _CLAUSE,
    r"\b(?:rather than|instead of|nothing to do with|rule out|ruled out|ruling out|no way it'?s)\s+(?:(?:a|an|the)\s+)*"
    + _CLAUSE,
    r"\b(?:drop|remove|delete|lose)\s+(?:the|any|all)?\s*(?P<x>[\w-]+)\s+(?:wording|words?|mentions?|talk|language)",
    r"(?:^|[,.;:!?]\s*)(?:the\s+)?(?P<x>[\w\s-]{2,40}?)\s+(?:is|are|was|were)\s+(?:a red herring|not the (?:root )?"
    r"(?:cause|problem|issue)|irrelevant|a symptom|just noise|noise)\b",
))
# "the pool isn't exhausted": the subject names the topic as much as what follows
_SUBJECT_DENIAL = re.compile(r"\b(?:the\s+)?(?P<subject>[a-z][\w-]{2,30})\s+(?:isn'?t|wasn'?t|is not|was not|aren'?t|"
                             r"are not)\s+(?P<x>[a-z][\w-]{2,30})", re.I)
_PRONOUNS = frozenset({"it", "this", "that", "which", "there", "what", "its"})
_NOT_DEFECT = re.compile(r"\b(?:code|software|application|programming|bug|defect)\b", re.I)


_STEP_REQUEST = re.compile(r"\b(?:add|include)(?: a| the)? step(?: to)?[:\s]+(?P<step>[^.;\n]+)", re.I)


def requested_steps(text: str) -> list[str]:
    """Steps a request asks to add ("add a step: drain the queue first")."""
    return [m.group("step").strip() for m in _STEP_REQUEST.finditer(text or "")]


@dataclass(frozen=True)
class Request:
    """One request read: what it claims the incident is, what it denies, and its own words."""

    text: str
    claim: Meaning | None = None
    denials: tuple[Meaning, ...] = field(default=())

    @property
    def names_anything(self) -> bool:
        return bool(self.claim and (self.claim.category or self.claim.technologies)
                    or any(d.category or d.stems for d in self.denials))


def read(kb: KnowledgeBase, text: str, names: frozenset[str] = frozenset()) -> Request:
    """A request split into its claim and its denials, each read for its meaning (`names`: the
    words of the incident's services and hosts, see `meaning`)."""
    text = _STEP_REQUEST.sub(" . ", text or "")  # a step to add is no claim about the cause
    denied: list[str] = []
    spans: list[tuple[int, int]] = []
    vocab = vocabulary(kb, kb.generation)
    for pattern in (_SUBJECT_DENIAL, *_DENIALS):
        for match in pattern.finditer(text):
            x = match.group("x").strip()
            if pattern is _SUBJECT_DENIAL:
                if match.group("subject").lower() in _PRONOUNS:
                    continue
                x = f"{match.group('subject')} {x}"
            words = [w for w in _all_words(x.split()[-1] if pattern is _SUBJECT_DENIAL else x) if w not in _STOP]
            head = stem(words[0]) if words else ""
            if not x or _NOT_DEFECT.search(x) or head in vocab.failing or \
                    any(s <= match.start() < e or s < match.end() <= e for s, e in spans):
                continue
            denied.append(x)
            spans.append(match.span())
    positive = text
    for start, end in sorted(spans, reverse=True):
        positive = positive[:start] + " . " + positive[end:]
    positive = re.sub(r"\s*(?:[.,;:]\s*){2,}", ". ", positive).strip(" .,;:")
    denials = tuple(m for m in (meaning(kb, x, names) for x in dict.fromkeys(denied)) if m.category or m.stems)
    claim = meaning(kb, positive, names)
    return Request(text=text, claim=claim if (claim.category or claim.technologies) else None, denials=denials)


def about(kb: KnowledgeBase, doc: Doc, m: Meaning) -> bool:
    """Whether a doc is about what a phrase names: each of its distinctive stems in the doc's id or
    title, or said three times in its text."""
    counts = vocabulary(kb, kb.generation).about.get(doc.doc_id, Counter())
    return bool(m.stems) and all(counts[s] >= 3 for s in m.stems)


def carrying(events: list[LogEvent], m: Meaning) -> list[LogEvent]:
    """The problem events whose words carry every distinctive stem of a phrase (a misspelling
    read as the word it is closest to)."""
    if not m.stems:
        return []
    out = []
    for event in events:
        if event.level not in (None, "WARN", "ERROR", "FATAL"):
            continue
        words = {stem(w) for w in ideas.words_of(" ".join(filter(None, (event.exception, event.message,
                                                                          (event.stack or "")[:2000]))))}
        if all(s in words for s in m.stems):
            out.append(event)
    return out
