"""Related incidents: past incidents with the same fingerprint (the template of the opening line),
and the nearest by evidence (the knowledge index's embedder over the incidents' evidence text,
in a Chroma collection under the data dir), each with how it was decided. Paged; index reads only."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.config import Settings
from pipeline.errors import IncidentNotFound
from pipeline.store import related as related_sql
from pipeline.store.records import Records

if TYPE_CHECKING:  # opened on first use (Chroma)
    from pipeline.knowledge.embeddings import Embedder
    from pipeline.knowledge.evidence_index import EvidenceIndex

EVIDENCE_EVENTS = 12  # the evidence text of an incident: its first events, as the analysis saw them
CATCH_UP_BATCH = 500
# the index's nearest are candidates, ranked again by the words of their errors: this many per one shown
CANDIDATES_PER_SHOWN = 6
MIN_CANDIDATES = 30
# below this share of weighted error words in common, an incident is not "near" (a neighbour by
# the index alone: same framing, another error)
MIN_NEAR = 0.2
# the service's own words (its request framing, its libraries, its tables) are read from this many of
# its newest other incidents; a word in at least a third of them (and two) says the service, not the error
SERVICE_SAMPLE = 20
SERVICE_SHARE = 1 / 3
_WORD = re.compile(r"[A-Za-z][A-Za-z_]{2,}")
# the codes that say which error an error is, by kind: an HTTP status (`status code 429`, `http_status=502`,
# `HTTP/1.1 503`, `502 Bad Gateway`), an errno (`[Errno 28]`, `errno=111`, `ECONNREFUSED`) and a SQLSTATE.
# Two incidents that each name codes of one kind and share none are different errors, however alike their
# words (an axios "Request failed with status code 429" is not a 502): left out of the nearest (issue 38.2)
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("http status", re.compile(r"(?i)(?<![a-z])(?:status(?:[ _-]?code)?|http(?:/\d(?:\.\d)?)?)[\"']?\s*[:= ]\s*[\"']?([1-5]\d\d)\b")),
    ("http status", re.compile(r"\b([1-5]\d\d) (?:Unauthorized|Forbidden|Too Many Requests|Bad Gateway|Service Unavailable"
                               r"|Gateway Timeout|Not Found|Internal Server Error|Bad Request|Conflict|Payment Required)\b")),
    ("errno", re.compile(r"(?i)\[errno (\d+)\]|\berrno[\"']?\s*[:= ]\s*-?(\d+)\b")),
    ("errno name", re.compile(r"\b(E(?:CONN\w+|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOTFOUND|PIPE|ADDRINUSE|ACCES|NOENT|NOSPC|MFILE|AI_AGAIN))\b")),
    ("sqlstate", re.compile(r"(?i)\bsqlstate\W{0,3}([0-9A-Z]{5})\b")),
)
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


class RelatedIncidents:
    def __init__(self, *, records: Records, settings: Settings, embedder: Embedder | None = None):
        self.records = records
        self.settings = settings
        self._embedder = embedder
        self._index: EvidenceIndex | None = None

    @property
    def index(self) -> EvidenceIndex:
        """The evidence index, opened on first use (a `show` of the same fingerprint needs none)."""
        if self._index is None:
            from pipeline.knowledge.embeddings import embedder_from_setting
            from pipeline.knowledge.evidence_index import EvidenceIndex

            embedder = self._embedder or embedder_from_setting(self.settings.embeddings, base_url=self.settings.base_url)
            self._index = EvidenceIndex(index_dir=Path(self.settings.data_dir) / "evidence-index", embedder=embedder)
        return self._index

    def text_of(self, incident_id: str) -> str:
        from pipeline.knowledge.retrieval import evidence_text

        return evidence_text(self.records.events_of(incident_id, limit=EVIDENCE_EVENTS))

    def catch_up(self, *, batches: int | None = 1) -> int:
        """Index the incidents created since the last catch-up (`batches` of 500; None: all)."""
        done, cursor = 0, self.index.cursor()
        while batches is None or batches > 0:
            rows = related_sql.created_after(self.records, cursor, limit=CATCH_UP_BATCH)
            if not rows:
                break
            self.index.add([(i, self.text_of(i)) for i, _ in rows])
            cursor = (rows[-1][1], rows[-1][0])
            self.index.set_cursor(cursor)
            done += len(rows)
            batches = None if batches is None else batches - 1
        return done

    def related(self, incident_id: str, *, limit: int = 10, before: str | None = None,
                nearest: int = 5) -> dict[str, Any]:
        """`same_fingerprint` (a page, newest first; `next` is the cursor of the next page) and
        `nearest` by evidence, each row with status, category and the decision. Of the nearest, one
        whose analysis names another cause than this incident's (both named, neither `unknown`) is
        another error, however alike the words its service tells its errors in: left out."""
        row = self.records.incident_fields(incident_id, "fingerprint")
        cursor = _cursor(self.records, before) if before else None
        ids = related_sql.same_fingerprint(self.records, row["fingerprint"], exclude=incident_id,
                                           limit=limit + 1, before=cursor)
        page = [decided_row(self.records.incident(i)) for i in ids[:limit]]
        out = {"fingerprint": row["fingerprint"],
               "same_fingerprint": {"rows": page, "next": page[-1]["incident_id"] if len(ids) > limit else None},
               "nearest": []}
        if nearest:
            # the index is caught up by the poller (and `show --nearest`), never while a page renders:
            # an incident opened since reads its neighbours once the poller indexed them
            text = self.text_of(incident_id)
            pool = self.index.nearest(text, k=max(MIN_CANDIDATES, nearest * CANDIDATES_PER_SHOWN), exclude=incident_id)
            ranked = rank_by_error_words(text, [(i, self.text_of(i)) for i, _ in pool],
                                         siblings=self.siblings(incident_id))
            mine = _named(self.records.incident_fields(incident_id, "category")["category"])
            for other, similarity in ranked:
                if len(out["nearest"]) >= nearest:
                    break
                try:
                    near = decided_row(self.records.incident(other))
                except IncidentNotFound:  # gone since it was indexed
                    continue
                theirs = _named(near["category"])
                if mine and theirs and theirs != mine:
                    continue  # the analyses name two causes (a deadlock, a DNS failure): another error
                out["nearest"].append({**near, "similarity": similarity, "near_by": "words"})
            if mine and len(out["nearest"]) < nearest:
                out["nearest"] += self.same_cause(incident_id, text, mine, row["fingerprint"],
                                                  listed={r["incident_id"] for r in out["nearest"]},
                                                  limit=nearest - len(out["nearest"]))
        return out

    def same_cause(self, incident_id: str, text: str, category: str, fingerprint: str | None, *,
                   listed: set[str], limit: int) -> list[dict[str, Any]]:
        """Other incidents whose analysis names this one's cause (walkthrough s57: a Java NPE, a Node
        TypeError and a Python AttributeError, all `null_reference`, share no rare error word, so none was
        near the others): of other fingerprints (those are listed above them), the words of their errors
        in common first, then the newest. Read off the records alone, so listed before any poll indexed
        the evidence; each row says it is near by its cause (`near_by`: "cause")."""
        ids = [i for i in related_sql.same_category(self.records, category, exclude=incident_id,
                                                    limit=MIN_CANDIDATES, other_than=fingerprint) if i not in listed]
        scores = dict(rank_by_error_words(text, [(i, self.text_of(i)) for i in ids[:limit * 3]],
                                          floor=0.0))
        rows = []
        for other in sorted(ids, key=lambda i: -scores.get(i, 0.0))[:limit]:
            try:
                rows.append({**decided_row(self.records.incident(other)), "similarity": scores.get(other, 0.0),
                             "near_by": "cause"})
            except IncidentNotFound:  # deleted meanwhile
                continue
        return rows

    def siblings(self, incident_id: str) -> dict[str, set[str]]:
        """The error words of the incident's service's newest other incidents of other errors, by incident
        id: what `rank_by_error_words` reads the service's own words from. Its own recurrences would make
        the error's words its service's, so the same fingerprint is left out, and so is an incident whose
        analysis names this one's cause: the same error told by another template (a user named or not, an
        address or a host name), whose words are the error's, not the service's."""
        row = self.records.incident_fields(incident_id, "service", "fingerprint", "category")
        if not row["service"]:
            return {}
        others = related_sql.same_service(self.records, row["service"], exclude=incident_id, limit=SERVICE_SAMPLE,
                                          other_than=row["fingerprint"])
        mine = _named(row["category"])
        if mine:
            others = [i for i in others if _named(self.records.incident_fields(i, "category")["category"]) != mine]
        return {i: error_words(self.text_of(i)) for i in others}


def framing_words(siblings: dict[str, set[str]], *, but: str | None = None) -> set[str]:
    """The words one service tells its errors in, whichever error: its request framing ("POST
    /api/v1/checkout failed"), libraries and tables. For an incident of another service, the words at
    least a third (and two) of the service's incidents use; for one of the service's own (`but`), every
    word another of its incidents uses too: two incidents of one service with different opening lines
    are the same error only by words no third of them has."""
    others = [words for i, words in siblings.items() if i != but]
    counts: dict[str, int] = {}
    for words in others:
        for word in words:
            counts[word] = counts.get(word, 0) + 1
    if but is not None and but in siblings:
        return set(counts)
    if len(others) < 2:
        return set()
    need = max(2, math.ceil(len(others) * SERVICE_SHARE))
    return {w for w, n in counts.items() if n >= need}


def error_words(text: str) -> set[str]:
    """The words an incident's errors are told in: its exception names, messages and error fields, each
    identifier also split into its camelCase parts; stack frames (indented lines) left out, since they
    say where the error was raised, which one service's incidents share whatever their error."""
    words: set[str] = set()
    for line in text.splitlines():
        if not line.strip() or line[:1].isspace():
            continue
        for word in _WORD.findall(line):
            words.add(word.lower())
            words.update(p.lower() for p in _CAMEL.findall(word) if len(p) > 2)
    return words


# an error field as the evidence text writes it, a line of its own: `http_status=502`
_FIELD_LINE = re.compile(r"[\w.@-]+=\S*$")


def error_kinds(text: str) -> dict[str, set[str]]:
    """The codes an incident's errors name, by kind (`http status`: {"429"}, `errno`, `sqlstate`), read
    from its lines but the stack frames (as `error_words`). A kind its errors' own words name is read
    from them alone; its error fields (`http_status=502`, a line of its own) count only when they do
    not: an axios "Request failed with status code 429" whose service answered its caller 502 is a 429."""
    said: dict[str, set[str]] = {}
    fields: dict[str, set[str]] = {}
    for line in text.splitlines():
        if not line.strip() or line[:1].isspace():
            continue
        into = fields if _FIELD_LINE.match(line) else said
        for kind, pattern in _KINDS:
            for match in pattern.finditer(line):
                into.setdefault(kind, set()).update(g.upper() for g in match.groups() if g)
    return {**fields, **said}


def other_kind(mine: dict[str, set[str]], theirs: dict[str, set[str]]) -> bool:
    """Whether two incidents are errors of different kinds: some kind of code (an HTTP status, an errno,
    a SQLSTATE) both name, and no code of that kind in common."""
    return any(kind in theirs and not codes & theirs[kind] for kind, codes in mine.items())


def rank_by_error_words(text: str, candidates: list[tuple[str, str]], *, siblings: dict[str, set[str]] | None = None,
                        floor: float = MIN_NEAR) -> list[tuple[str, float]]:
    """The candidates (id, evidence text) whose errors are told in the same words as `text`'s, nearest
    first, with their similarity in [0, 1]: the weighted words in common over the geometric mean of
    each side's weighted words (a cosine of the two word sets, so a long trace is not far from a short
    line of the same error merely for its length, as a share of the union made it), each word weighted
    by how rare it is among the candidates (inverse document frequency: "failed", "error" count little).
    The words of the incident's own service (`framing_words` of its `siblings`, the error words of its
    service's other incidents by id) are left out of both sides: they say which service, not which
    error. Below `floor` (MIN_NEAR) a candidate is left out, and so is one of another kind of error (`other_kind`:
    a 502 beside a 429, another errno or SQLSTATE), whatever the words in common."""
    siblings = siblings or {}
    framing = framing_words(siblings)
    mine = error_words(text)
    my_kinds = error_kinds(text)
    candidates = [(i, t) for i, t in candidates if not other_kind(my_kinds, error_kinds(t))]
    theirs = [(i, error_words(t)) for i, t in candidates]
    docs = [mine, *(w for _, w in theirs)]
    frequency: dict[str, int] = {}
    for words in docs:
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    weight = {w: math.log((len(docs) + 1) / (n + 0.5)) for w, n in frequency.items()}
    ranked = []
    for incident_id, words in theirs:
        left_out = framing_words(siblings, but=incident_id) if incident_id in siblings else framing
        a, b = mine - left_out, words - left_out
        scale = math.sqrt(sum(weight[w] for w in a) * sum(weight[w] for w in b))
        score = sum(weight[w] for w in a & b) / scale if scale else 0.0
        if score >= floor:
            ranked.append((incident_id, round(score, 3)))
    return sorted(ranked, key=lambda pair: -pair[1])


def _named(category: str | None) -> str | None:
    """A cause an analysis names (a category, set by the analyst or a reviewer), or None for none known."""
    return category if category and category != "unknown" else None


def _cursor(records: Records, incident_id: str) -> tuple[str, str]:
    return records.incident_fields(incident_id, "created_at")["created_at"], incident_id


def decided_row(row: dict[str, Any]) -> dict[str, Any]:
    """One related incident: what it was, who decided what, the reason or the fix, and when."""
    summary = row.get("summary") or {}
    decision = summary.get("decision") or {}
    fix = summary.get("fix") or {}
    return {
        "incident_id": row["incident_id"], "status": row["status"], "category": row.get("category"),
        "service": row.get("service"), "title": row.get("title"), "created_at": row["created_at"],
        "first_seen": row.get("first_seen"),  # the log's time (created_at is when it was opened here)
        "decision": decision.get("action"),
        "decided_by": [a.get("by") for a in decision.get("approvals") or []] or (
            [decision["reviewer"]] if decision.get("reviewer") else []),
        "decided_at": decision.get("decided_at") or row.get("closed_at"),
        "rejection_reason": decision.get("note") if decision.get("action") == "reject" else None,
        "fix": {"hash": fix.get("hash"), "target_file": fix.get("target_file"), "change": fix.get("change")}
        if fix else None,
    }
