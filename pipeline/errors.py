"""The one error hierarchy of IncidentIQ.

    IncidentIQError
    ├── UsageError                 misuse: bad arguments or input          (CLI exit 2)
    │   ├── InvalidEvent           a log line that cannot become an event
    │   ├── InvalidEdit            a state edit the schema refuses
    │   └── UnknownColumn          code asked the store to write a column it does not offer
    ├── NotFound                   (CLI exit 4)
    │   ├── IncidentNotFound
    │   ├── CheckpointNotFound
    │   └── BacktestNotFound
    ├── Conflict                   the incident is not waiting for that (CLI exit 3)
    │   ├── StaleInterrupt         the reviewer saw an older analysis
    │   ├── StaleProposal          the fix proposal changed since the reviewer saw it
    │   ├── NotAwaitingApproval
    │   ├── RevisionLimitReached
    │   └── LeaseLost              a source's lease was taken over: its old holder's write is refused
    ├── Refused                    who asks may not do that, or not now (CLI exit 3; audited)
    │   ├── NotPermitted           the actor's roles do not allow the action
    │   ├── SameApprover           the second approval came from the first approver
    │   └── UnknownIdentity        an unknown or expired token, an unknown role
    └── RuntimeFailure             the outside world failed (runtime branch)
        ├── StorageError           sqlite / chroma
        │   ├── CheckpointStoreError   checkpoints.sqlite locked, damaged or unreadable: the poll
        │   │                          fails and is retried, the incident is not charged
        │   └── InvalidCheckpoint      one checkpoint holds a value that is not the state's (an
        │                              edited or forged row): that incident fails, named, the rest go on
        ├── AnalystError           the chat model timed out, failed or answered invalidly
        ├── SourceError            the log source (file, Splunk) failed
        └── RunCrashed             one incident's run hit an unexpected error (a bug), recorded
                                   on that incident so the other incidents keep going

Third-party exceptions are translated into these at one boundary each (records,
knowledge, analyst, sources); nothing above that boundary catches `Exception`.
"""
from __future__ import annotations

# what stands in a message, a log or a page where a secret was (pipeline/redaction.py masks them)
MASK = "‹redacted›"


class IncidentIQError(Exception):
    """Base of every error this product raises on purpose."""

    exit_code = 1

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class UsageError(IncidentIQError):
    exit_code = 2


class InvalidEvent(UsageError):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class InvalidEdit(UsageError):
    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class UnknownColumn(UsageError):
    def __init__(self, table: str, column: str):
        super().__init__(f"{table}.{column} is not a column the records store lets callers write")
        self.table = table
        self.column = column


class NotFound(IncidentIQError):
    exit_code = 4


class IncidentNotFound(NotFound):
    def __init__(self, incident_id: str):
        super().__init__(f"incident {incident_id} not found")
        self.incident_id = incident_id


class CheckpointNotFound(NotFound):
    def __init__(self, incident_id: str, checkpoint_id: str, *, pruned_at: str | None = None):
        super().__init__(f"checkpoint {checkpoint_id} not found in {incident_id}" + (
            f": retention compacted its history on {pruned_at[:10]}, keeping only the approval gate and the end"
            if pruned_at else ""))
        self.incident_id = incident_id
        self.checkpoint_id = checkpoint_id


class BacktestNotFound(NotFound):
    def __init__(self, backtest_id: str):
        super().__init__(f"backtest {backtest_id} not found")
        self.backtest_id = backtest_id


class Conflict(IncidentIQError):
    exit_code = 3


class LeaseLost(Conflict):
    """Another poller took this source's lease (ours expired): the batch this one read is not
    stored, the new holder reads it again from the cursor (store/source_leases.py)."""

    def __init__(self, source: str):
        super().__init__(f"the lease of source {source} was taken over by another poller")
        self.source = source


# a status in a message is said in words (the codes are for --json and the records)
_STATUS_WORDS = {"fix_proposed": "approved, with a fix proposal (not applied)", "approved": "approved, no code fix",
                 "in_revision": "in revision", "awaiting_approval": "awaiting approval"}


class NotAwaitingApproval(Conflict):
    def __init__(self, incident_id: str, status: str):
        words = _STATUS_WORDS.get(status, status.replace("_", " "))
        super().__init__(f"{incident_id} is not awaiting approval (it is {words})")
        self.incident_id = incident_id
        self.status = status


class StaleInterrupt(Conflict):
    def __init__(self, incident_id: str, expected: str | None, pending: str | None):
        # the interrupt ids stay on the error for --json and the audit, not in the sentence
        super().__init__(
            f"{incident_id}: the analysis you reviewed is no longer pending "
            f"({'it was re-run since' if pending else 'nothing awaits a decision now'}); reload and review again"
        )
        self.incident_id = incident_id
        self.expected = expected
        self.pending = pending


class StaleProposal(Conflict):
    def __init__(self, incident_id: str, expected: str, pending: str | None):
        super().__init__(
            f"{incident_id}: the fix proposal you reviewed is no longer the pending one "
            f"({'it was derived again since' if pending else 'no proposal is pending now'}); reload and review again"
        )
        self.incident_id = incident_id
        self.expected = expected
        self.pending = pending


class RevisionLimitReached(Conflict):
    def __init__(self, incident_id: str, limit: int):
        super().__init__(f"{incident_id} already had {limit} revisions; approve or reject it")
        self.incident_id = incident_id
        self.limit = limit


class Refused(IncidentIQError):
    """An action refused for who asked (roles, the two-person rule, identity); nothing changed."""

    exit_code = 3

    def __init__(self, message: str, *, action: str | None = None):
        super().__init__(message)
        self.action = action


class NotPermitted(Refused):
    def __init__(self, actor: str, action: str, roles: tuple[str, ...]):
        have = ", ".join(roles) or "none"
        super().__init__(f"{actor} may not {action} (roles: {have})", action=action)
        self.actor = actor
        self.roles = roles


class SameApprover(Refused):
    def __init__(self, incident_id: str, actor: str):
        super().__init__(f"{incident_id}: {actor} already approved this analysis; a second person must approve",
                         action="approve")
        self.incident_id = incident_id
        self.actor = actor


class UnknownIdentity(Refused):
    pass


class RuntimeFailure(IncidentIQError):
    pass


class StorageError(RuntimeFailure):
    pass


class CheckpointStoreError(StorageError):
    pass


class InvalidCheckpoint(StorageError):
    """A checkpoint whose value of `field` does not fit the state (type, range, category)."""

    def __init__(self, incident_id: str, checkpoint_id: str | None, field: str, reason: str):
        super().__init__(f"{incident_id}: checkpoint {checkpoint_id or '?'} holds an invalid `{field}` ({reason});"
                         " the checkpoint store was edited or damaged: nothing was changed")
        self.incident_id = incident_id
        self.checkpoint_id = checkpoint_id
        self.field = field


class AnalystError(RuntimeFailure):
    pass


class SourceError(RuntimeFailure):
    pass


class RunCrashed(RuntimeFailure):
    """A run raised something that is not ours; carries the original's type and message."""

    def __init__(self, error: BaseException):
        super().__init__(f"{type(error).__name__}: {error}"[:2000])
        self.error_type = type(error).__name__
