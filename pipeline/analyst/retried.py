"""A failure its writer retried and then did (issue 36: healthy controls quiet): a problem line that says its
job or request will be retried (`retry 1 in 17s`, `will be retried`), naming the job's or request's id
(`jid=9a8b7c6d5e4f`, `request_id: 7f3c21`), and a later line of the same writer naming that id and saying it was
done (`elapsed=1.8 done`, `completed`, `succeeded`) with no failure word. The retry worked: the failure supports
no cause (pipeline/analyst/offline.py leaves it out of the support, as it does a client gone mid-answer).

A job's id ties the two lines, never a process's or a thread's (`pid=`, `tid=`: reused by the next job), and a
line that says its retries are over (`retries exhausted`, `giving up`, `moved to the dead set`) announces none.
"""
from __future__ import annotations

import re

from pipeline.state import LogEvent

_HEAD = 600  # a line's head: where it says what failed and what happens next
# its operation announced to be tried again
_RETRY = re.compile(r"\bretry(?:ing)?\b|\bwill be retried\b|\bre-?queue(?:d|ing)?\b|\bretried\b", re.I)
# ... unless its retries are over
_NO_MORE = re.compile(r"\bexhausted\b|\bgiv(?:e|ing) up\b|\bgave up\b|\bno (?:more )?retries\b|\bdead\b|\bfinal\b"
                      r"|\bmax(?:imum)? retries\b|\bout of retries\b", re.I)
# an operation said done, and no failure word beside it
_DONE = re.compile(r"\b(?:done|completed|succeeded|successful(?:ly)?|finished|processed)\b", re.I)
_FAILED = re.compile(r"\b(?:not|no|never|cannot|can't|unable|fail\w*|lost|refused|error|errors|exception|timed? ?out|"
                     r"timeout|retry\w*|abort\w*)\b", re.I)
# an id named by its key (`jid=`, `job_id:`, `request-id=`, `"message_id": "`): the value, six characters or more,
# holding a digit; a process's, a thread's or a user's id names no job
_KEYED_ID = re.compile(r"\b(\w*?)[_-]?id\b\"?\s*[=:]\s*\"?([A-Za-z0-9][\w.-]{5,})", re.I)
_NOT_A_JOB = frozenset({"p", "pp", "t", "thread", "process", "worker", "u", "user", "g", "group", "session", "node",
                        "host", "instance", "pod", "container", "client", "tenant", "account"})


def _ids(event: LogEvent) -> set[str]:
    """The job or request ids a line names by their key, in its head or its fields."""
    found = {value.lower() for key, value in _KEYED_ID.findall(event.message[:_HEAD])
             if key.lower() not in _NOT_A_JOB and any(c.isdigit() for c in value)}
    for key, value in event.fields.items():
        name = str(key).lower()
        if (name == "id" or name.endswith("id")) and name.rstrip("_-")[:-2].rstrip("_-") not in _NOT_A_JOB \
                and isinstance(value, str) and len(value) >= 6 and any(c.isdigit() for c in value):
            found.add(value.lower())
    return found


def _problem(event: LogEvent) -> bool:
    return event.level in ("ERROR", "FATAL", "WARN", None)


def retried_and_done(events: list[LogEvent]) -> set[str]:
    """The ids of the problem events whose job or request their writer said would be retried and then, in a
    later line naming its id, done."""
    done: list[tuple[LogEvent, set[str]]] = []
    for event in events:
        head = event.message[:_HEAD]
        if not _problem(event) and _DONE.search(head) and not _FAILED.search(head) and (ids := _ids(event)):
            done.append((event, ids))
    if not done:
        return set()
    healed = set()
    for event in events:
        head = event.message[:_HEAD]
        if not _problem(event) or not _RETRY.search(head) or _NO_MORE.search(head):
            continue
        ids = _ids(event)
        if ids and any(later.service == event.service and later.time > event.time and ids & named
                       for later, named in done):
            healed.add(event.event_id)
    return healed
