"""One machine, one failure (CONTRACT §2, session 54): a symptom naming nowhere it went (a timeout, `unavailable`, a
5xx with no host:port, URL host or service) written on a host where another service's failure is the one open incident
of the batch is that failure's: what a failing machine (a node, a VM) does to the programs on it. Read either way
round: the machine's failure read after the symptom joins the symptom's incident. `joining.py` asks
`same_machine_incident` when nothing named ties an error, and keeps each incident's writers whose first error there
was such a symptom (`note`)."""
from __future__ import annotations

from datetime import datetime
from typing import Callable, Protocol, TypeVar

from pipeline.incidents.leading import SYMPTOM, rank
from pipeline.incidents.line_names import went_to
from pipeline.incidents.writers import COMPONENT
from pipeline.state import LogEvent


class Held(Protocol):
    """What this module reads of an open incident (`outage.Candidate`, which imports this module):
    its writers' latest errors, and those whose first error here was a nameless symptom."""

    recent: dict[str, datetime]
    symptoms: dict[str, datetime]


Candidate = TypeVar("Candidate", bound=Held)


def same_machine_incident(event: LogEvent, names: frozenset[str], near: list[Candidate]) -> Candidate | None:
    """The one open incident holding an error another service wrote on the event's host (its machine: a node, a VM)
    within the burst window, when the event is a symptom (a timeout, `unavailable`, a 5xx) that names no host:port, URL
    host or service (`nameless_symptom`), or, read the other way round, when that service's first error there was such a
    symptom written after the event: what a failing machine does to the programs on it (a disk controller's reset, then
    a job's `statement timeout` beside it; nginx's `connect() to unix:/…/puma.sock failed (11: Resource temporarily
    unavailable)` beside the app server it fronts). None when the machine's other errors are in two incidents or more
    (which failure it suffers is not said) or in none, or when neither line is such a symptom: a line stating a cause
    of its own, or naming where it went (tied by that address or service, or not at all), is no machine's symptom."""
    host = (event.host or "").lower()
    if not host or host in _NOT_A_HOST:
        return None
    service = event.service.lower()
    held = [c for c in near if any(_on_host(w, host) and not _of_service(w, service) for w in c.recent)]
    if len(held) != 1:
        return None
    only = held[0]
    if nameless_symptom(event, names):
        return only
    # (read the other way round: the machine's symptom came first in the reading, its failure after it)
    return only if any(_on_host(w, host) and not _of_service(w, service) and event.time <= at
                       for w, at in only.symptoms.items()) else None


def nameless_symptom(event: LogEvent, names: frozenset[str]) -> bool:
    """Whether an error is a symptom (`leading.rank`) naming no host:port, URL host or service: one a machine's failure
    may cause in any program on it (`same_machine_incident`)."""
    return rank(event) == SYMPTOM and not went_to(names, services=True)


_NOT_A_HOST = frozenset({"-", "localhost", "unknown", "none", "null"})


def _on_host(writer: str, host: str) -> bool:
    """Whether a writer (`@service@host`, or a process `@service@host#pid`) wrote on `host`."""
    return writer.split("#", 1)[0].rsplit("@", 1)[-1].lower() == host


def _of_service(writer: str, service: str) -> bool:
    return writer.split("#", 1)[0].rsplit("@", 1)[0][len(COMPONENT):].lower() == service


def note(candidate: Held, writer: str, event: LogEvent, names: Callable[[], frozenset[str]]) -> None:
    """Keep in `candidate.symptoms` a writer (its component) whose first error in the incident, read in this batch, is
    a `nameless_symptom` (`names`: the event's named things, read only then), with its latest error's time."""
    if writer not in candidate.recent and nameless_symptom(event, names()):
        candidate.symptoms[writer] = event.time
    elif writer in candidate.symptoms and event.time > candidate.symptoms[writer]:
        candidate.symptoms[writer] = event.time
