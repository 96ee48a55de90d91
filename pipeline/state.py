"""The graph's state and the records it carries, as Pydantic models.

These classes, and nothing else, are revived from checkpoints (see checkpoints.py).
"""
from __future__ import annotations

import operator
import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

CATEGORIES: tuple[str, ...] = (
    "null_reference", "db_pool_exhausted", "db_deadlock", "db_schema_mismatch",
    "upstream_timeout", "upstream_rate_limited", "upstream_auth_failure", "tls_certificate",
    "dns_resolution", "connection_refused", "out_of_memory", "disk_full", "config_missing",
    "serialization_error", "data_integrity", "concurrency_conflict", "resource_exhaustion",
    "queue_backlog", "dependency_mismatch", "unknown",
)
Category = Literal[
    "null_reference", "db_pool_exhausted", "db_deadlock", "db_schema_mismatch",
    "upstream_timeout", "upstream_rate_limited", "upstream_auth_failure", "tls_certificate",
    "dns_resolution", "connection_refused", "out_of_memory", "disk_full", "config_missing",
    "serialization_error", "data_integrity", "concurrency_conflict", "resource_exhaustion",
    "queue_backlog", "dependency_mismatch", "unknown",
]
# Where a category's cause lies: the area a reviewer looks in first. A wrong category of the right
# area still points there (graded 65 by `grade`); unknown is an area of its own.
AREAS: dict[str, str] = {
    **dict.fromkeys(("db_pool_exhausted", "db_deadlock", "db_schema_mismatch", "data_integrity",
                     "concurrency_conflict"), "database"),
    **dict.fromkeys(("upstream_timeout", "upstream_rate_limited", "upstream_auth_failure", "tls_certificate",
                     "dns_resolution", "connection_refused"), "dependency"),
    **dict.fromkeys(("out_of_memory", "disk_full", "resource_exhaustion", "queue_backlog"), "capacity"),
    **dict.fromkeys(("null_reference", "config_missing", "serialization_error", "dependency_mismatch"), "code"),
    "unknown": "unknown",
}
GRADES = (100, 65, 35, 0)


def grade(expected: str, predicted: str) -> int:
    """The graded accuracy of one answer (docs/CONTRACT.md §3, after incident.io's 100/65/35/0):
    100 the expected category; 65 another category of the same area (AREAS); 35 `unknown` where a
    cause was expected (an abstention: no wrong claim, no lead either); 0 a category of another
    area, or any category named where none fits (`unknown` expected)."""
    if predicted == expected:
        return 100
    if predicted == "unknown":
        return 35
    if expected != "unknown" and AREAS.get(predicted) == AREAS.get(expected):
        return 65
    return 0


Severity = Literal["low", "medium", "high", "critical"]
SEVERITIES: tuple[str, ...] = ("low", "medium", "high", "critical")
Level = Literal["DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
Outcome = Literal["fix_proposed", "approved", "rejected", "expired", "merged"]

OPEN_STATUSES = ("analyzing", "awaiting_approval", "in_revision", "failed")
# `fix_proposed`: approved, and the fix proposal the reviewer saw is recorded (nothing is applied);
# `approved`: approved, no code fix was eligible; `merged`: a reviewer merged it into another incident
# (its events are that incident's now: review/grouping.py)
CLOSED_STATUSES = ("fix_proposed", "approved", "rejected", "expired", "merged")
STATUSES = OPEN_STATUSES + CLOSED_STATUSES
# the words of release 0.1, still accepted where a status is typed (CLI `list --status`) and mapped
# when an old checkpoint's outcome is read
STATUS_ALIASES: dict[str, str] = {"fixed": "fix_proposed", "not_eligible": "approved"}
MAX_REVISIONS = 2


def status_named(status: str) -> str:
    """A status as stored now, for a name of this release or an alias of 0.1."""
    return STATUS_ALIASES.get(status, status)


# the template miner's placeholders (pipeline/incidents/fingerprints/masks.py): <NUM>, <STR>, <IP>, ... and <*>
TEMPLATE_PLACEHOLDER = re.compile(r"<(?:[A-Z]{2,12}|\*)>")
_PLACEHOLDER_RUN = re.compile(r"…(?:[^\w\s…]{0,2}…)+")


def readable_title(title: str) -> str:
    """A stored title (the exception and the message template) as a person reads it: each of the
    miner's placeholders an ellipsis, a run of them one ("Column … not found", never `<STR>`)."""
    return _PLACEHOLDER_RUN.sub("…", TEMPLATE_PLACEHOLDER.sub("…", str(title or "")))


# Characters a reader cannot see but that change what is read: bidirectional embeddings, overrides
# and isolates (a U+202E turns `exe.txt` into what reads as `txt.exe`), zero-width and joiner
# characters, invisible operators, the byte-order mark, soft hyphen, tag characters (which can
# smuggle a hidden ASCII text) and the blank fillers that render as nothing. Every sink a person
# reads (the page, the terminal, chat) shows each as `‹U+XXXX›` through `visible`.
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb"
                        "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def visible(text: str) -> str:
    """`text` with every invisible or direction-changing character written out as `‹U+XXXX›`."""
    return _INVISIBLE.sub(lambda m: f"\u2039U+{ord(m.group()):04X}\u203a", text)


# the service of a line whose source names none (an Apache error log's lines): a sentence never
# names it as a service ("Investigate unknown", "came from unknown")
UNNAMED_SERVICE = "unknown"
UNNAMED_WRITER = "the program that wrote these lines"


def names_service(service: str | None) -> bool:
    return bool(service) and service != UNNAMED_SERVICE


def service_or_writer(service: str | None) -> str:
    """A service as a sentence names it: its name, or the program that wrote the lines when none is named."""
    return service if service and names_service(service) else UNNAMED_WRITER


def counted(n: float, noun: str, plural: str | None = None) -> str:
    """`n noun` said as a sentence says it: "1 event", "3 events", "1.5 minutes", "2 branches" (`plural`:
    a noun's other than noun + "s"). The one helper for a count a person reads (the analyst's notes and
    evidence report, the workbench's pages, the CLI), never a hand-made plural ("1 signatures", "finding(s)")."""
    said = f"{n:g}" if isinstance(n, float) else str(n)  # a float's minutes as written (1.7, 2), a count whole
    return f"{said} {noun if n == 1 else plural or noun + 's'}"


def source_of(service: str | None) -> str:
    """Where lines came from, as "came from …" says it: the service, or a source that names none."""
    return service if service and names_service(service) else "a source that names no service"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values):
        """Validated, unlike pydantic's: LangGraph's reviver falls back to model_construct for a
        stored value the model refuses (an edited or forged checkpoint), which made an RCA with
        a category or confidence out of range look valid; here the value stays plain data, and
        is refused where the checkpoint is read (store/checked_values.py)."""
        return cls.model_validate(values)


class LogEvent(_Model):
    """One normalised log event (CONTRACT §1)."""

    event_id: str
    time: datetime
    message: str
    service: str = "unknown"
    host: str | None = None
    level: Level | None = None
    exception: str | None = None
    stack: str | None = None
    trace_id: str | None = None
    fields: dict = Field(default_factory=dict)
    source: str = ""
    position: str = ""
    # the content hash older versions used as event_id; never serialised (see ingest/event_ids.py)
    _content_id: str | None = PrivateAttr(default=None)
    # or the JSON line it is worked out from, only for a store that holds such ids (records.py)
    _content_line: str | None = PrivateAttr(default=None)


class ErrorDoc(_Model):
    """A knowledge-base error doc as retrieved for one incident."""

    doc_id: str
    title: str
    category: Category
    severity: Severity = "medium"
    score: float = 0.0
    signatures: list[str] = Field(default_factory=list)
    matched_signatures: list[str] = Field(default_factory=list)
    root_cause: str = ""
    remediation: list[str] = Field(default_factory=list)
    fix_hints: list[dict] = Field(default_factory=list)


class Span(_Model):
    """Where in one event a value was found: the event, which of its texts, and [start, end)."""

    event_id: str
    field: str = "message"  # message | exception | stack | fields.<key>
    start: int = Field(ge=0)
    end: int = Field(ge=0)


FindingKind = Literal["column", "table", "key", "host", "port", "file_line", "class", "pool_total",
                      "pool_active", "pool_idle", "pool_waiting", "pool_name", "timeout", "http_status",
                      "dependency", "version", "sqlstate", "errno", "error_code", "path", "constraint", "limit",
                      # the specifics found by shape (pipeline/analyst/specifics.py)
                      "error", "address", "endpoint", "expiry", "subject", "queue", "setting"]


class Finding(_Model):
    """A concrete entity of the incident (a column, a key, a host, a pool's numbers ...) and where
    the evidence shows it; `source` says who named it (the evidence, the model, or a reviewer)."""

    kind: FindingKind
    value: str
    event_ids: list[str] = Field(default_factory=list)
    spans: list[Span] = Field(default_factory=list)
    source: Literal["evidence", "model", "reviewer"] = "evidence"


class Quote(_Model):
    """One distinct log line the RCA rests on, with the spans that support it and how many
    of the incident's events carry the same line (numbers and ids aside)."""

    event_id: str
    field: str = "message"
    text: str
    spans: list[list[int]] = Field(default_factory=list)
    count: int = 1


class RCA(_Model):
    """Root-cause analysis: one category, a cause, a calibrated confidence and its evidence.

    `evidence` is the quoted log lines as text (what lists show and reviewers edit); `quotes`
    the same lines with their event ids and spans; `findings` the concrete entities the cause
    names; `notes` how the category was chosen (the doc, a runner-up, a reviewer's request).
    """

    category: Category
    root_cause: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[str] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)
    analyst: str = "offline"
    # false when the model named a category no retrieved doc supports: kept for the reviewer,
    # its confidence capped and never eligible for a code fix; `warning` says why
    supported: bool = True
    warning: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    quotes: list[Quote] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    dropped_findings: int = Field(default=0, ge=0)  # model findings not found in the evidence


class Recommendation(_Model):
    """What the analyst proposes to do about the incident."""

    action: str
    steps: list[str] = Field(default_factory=list)
    risk: Severity = "medium"
    revision: int = 0
    feedback: str | None = None


class ApprovalDecision(_Model):
    """A reviewer's answer to the approval gate."""

    action: Literal["approve", "reject", "revise", "expire", "merge"]
    reviewer: str
    note: str | None = None
    interrupt_id: str | None = None
    decided_at: datetime | None = None
    proposal_hash: str | None = None  # the fix proposal an approval approves (FixProposal.hash)
    # who approved, [{by, name, auth, at}]: two people under the two-person rule (review/policy.py)
    approvals: list[dict] = Field(default_factory=list)
    auth: str | None = None  # how `reviewer` signed in: oidc, demo, cli, token, system


class FixProposal(_Model):
    """A proposed code fix: a plan, and a unified diff when a fix hint applies to the source tree.

    Computed before the approval gate (`propose_fix`), shown to the reviewer, and recorded as it
    is after approval: `hash` (sha256 of the canonical plan, diff and target file) ties the
    approval to the proposal. `idempotency_key` and `attempt` are set when it is recorded.
    """

    plan: list[str] = Field(default_factory=list)
    diff: str | None = None
    target_file: str | None = None
    idempotency_key: str = ""
    attempt: int = 1
    hash: str = ""
    change: dict | None = None  # what the diff does: kind, file, key, before, after, line


class Revision(_Model):
    """One request for changes: who asked what, and the analysis as it stood before it."""

    revision: int = Field(ge=1)
    feedback: str
    reviewer: str = ""
    rca: RCA | None = None
    recommendation: Recommendation | None = None
    proposal: FixProposal | None = None


class NodeEvent(_Model):
    """A trace line: which node ran and what it noted."""

    node: str
    detail: str = ""


EVIDENCE_HEAD = 10
EVIDENCE_TAIL = 40


def merge_evidence(left: list[LogEvent], right: list[LogEvent]) -> list[LogEvent]:
    """Append new evidence once per event, keeping the first and the latest events.

    A noisy incident can gather thousands of events; the state keeps a bounded sample
    (the records store keeps them all) so checkpoints stay small.
    """
    if not left and _is_sample(right):
        # the run's input is already the sample (runner.initial_state): the channel holds the very
        # list the input wrote, so the checkpoint store serializes it once (checkpoint_values.ValueCache)
        return right
    seen = {e.event_id for e in left}
    merged = list(left)
    for event in right:
        if event.event_id not in seen:
            seen.add(event.event_id)
            merged.append(event)
    merged.sort(key=lambda e: e.time)
    if len(merged) > EVIDENCE_HEAD + EVIDENCE_TAIL:
        merged = merged[:EVIDENCE_HEAD] + merged[-EVIDENCE_TAIL:]
    return merged


def _is_sample(events: list[LogEvent]) -> bool:
    """Whether `events` is what merge_evidence([], events) returns: few enough, each event once,
    in time order."""
    if len(events) > EVIDENCE_HEAD + EVIDENCE_TAIL or len({e.event_id for e in events}) != len(events):
        return False
    return all(a.time <= b.time for a, b in zip(events, events[1:]))


WINDOW_STACK_LINES = 6  # what the prompts show of a log-window line's stack (analyst/prompts.py)
WINDOW_MESSAGE_CHARS = 2_000


def window_excerpt(event: LogEvent) -> LogEvent:
    """A log-window line as the state keeps it: the records store has the whole event, the
    checkpoints (one copy per step) only what the analyst reads of it."""
    stack = "\n".join(event.stack.splitlines()[:WINDOW_STACK_LINES]) if event.stack else event.stack
    message = event.message[:WINDOW_MESSAGE_CHARS]
    if stack == event.stack and message == event.message:
        return event
    return event.model_copy(update={"stack": stack, "message": message})


class IncidentState(_Model):
    """The state of one incident's run; thread_id = incident_id."""

    incident_id: str
    fingerprint: str = ""
    service: str = "unknown"
    title: str = ""
    evidence: Annotated[list[LogEvent], merge_evidence] = Field(default_factory=list)
    severity: Severity = "medium"
    log_window: list[LogEvent] = Field(default_factory=list)
    similar_docs: list[ErrorDoc] = Field(default_factory=list)
    rca: RCA | None = None
    recommendation: Recommendation | None = None
    decision: ApprovalDecision | None = None
    revisions: int = Field(default=0, ge=0, le=MAX_REVISIONS)
    feedback: list[str] = Field(default_factory=list)
    fix: FixProposal | None = None
    proposal: FixProposal | None = None  # computed before the gate; the fix an approval records
    revision_log: list[Revision] = Field(default_factory=list)
    outcome: Outcome | None = None
    errors: Annotated[list[str], operator.add] = Field(default_factory=list)
    events: Annotated[list[NodeEvent], operator.add] = Field(default_factory=list)

    @field_validator("outcome", mode="before")
    @classmethod
    def _outcome_of_0_1(cls, value):
        # threads checkpointed by 0.1 ended "fixed" / "not_eligible"
        return status_named(value) if isinstance(value, str) else value


STATE_CLASSES: tuple[type[BaseModel], ...] = (
    IncidentState, LogEvent, ErrorDoc, RCA, Recommendation, ApprovalDecision, FixProposal, NodeEvent,
    Span, Finding, Quote, Revision,
)

# Fields a reviewer may edit on a paused incident (review.edit / fork).
EDITABLE_FIELDS: dict[str, str] = {
    "rca.category": "root-cause category",
    "rca.root_cause": "root cause",
    "rca.confidence": "confidence in [0, 1]",
    "rca.evidence": "evidence lines",
    "recommendation.action": "recommended action",
    "recommendation.steps": "recommended steps",
    "recommendation.risk": "risk",
    "severity": "severity",
}
