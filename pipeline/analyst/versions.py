"""The versions the events name, for a cause that is versions not fitting together (issue 36): the library
or runtime and its version a line names (`built against scala-library 2.12.18`, `deps: swapped jason for
poison 5.0`), the lines that say a change (a deploy, an upgrade, a bump, a build against) first, then the
problem lines, then the others: what was built and what now runs are where the mismatch is checked."""
from __future__ import annotations

import re

from pipeline.state import Finding, LogEvent, Span

MAX_VERSIONS = 2
# a name and its version: `poison 5.0`, `requests==2.31.0`, `lodash@4.17.21`, `spark 3.5.0` (not a time or a
# size: `in 2.4s`, `1.2GB` have a unit after them)
# ... or a change of it, its old version and its new (`psr/log (1.1.4 => 3.0.0)`, `Newtonsoft.Json 13.0.3 -> 12.0.3`)
_V = r"v?\d+\.\d+(?:\.\d+){0,2}"
_VERSIONED = re.compile(rf"(?<![\w.@/-])(?P<v>[A-Za-z][\w./-]*[A-Za-z0-9] \({_V}\s*(?:=>|->|\u2192)\s*{_V}\)|"
                        rf"[A-Za-z][\w./-]*[A-Za-z0-9] {_V}\s*(?:=>|->|\u2192)\s*{_V}(?![\w.%])|"
                        rf"[A-Za-z][\w.-]*[A-Za-z0-9](?: |@|==|:){_V})(?![\w.%])")
_CHANGE = re.compile(r"\b(?:deploy\w*|upgrad\w*|downgrad\w*|bump\w*|swap\w*|built|compiled|install\w*|pinned|"
                     r"rolled|rollout|against|replaced|switched|updat\w*)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+){0,2}(?![\w%])")
# words before a number that are no library's name (`took 1.2`, `version 2.3`, `returned 0.00`)
_NOT_A_NAME = frozenset("version release build in at after took for to than of is was by from with returned ratio "
                        "rate score avg mean p99 p95 load at top".split())


def named(events: list[LogEvent]) -> list[Finding]:
    """The versions the events name (module docstring), at most MAX_VERSIONS, as findings."""
    ranked = sorted(events, key=lambda e: (not _CHANGE.search(e.message[:2_000]),
                                           e.level not in ("ERROR", "FATAL", "WARN", None), e.time))
    out: dict[str, Finding] = {}
    for event in ranked:
        for m in _VERSIONED.finditer(event.message[:2_000]):
            name = re.split(r" |@|==|:|\(", m.group("v"))[0]
            if name.lower() in _NOT_A_NAME or m.group("v") in out:
                continue
            out[m.group("v")] = Finding(kind="version", value=m.group("v"), event_ids=[event.event_id],
                                        spans=[Span(event_id=event.event_id, field="message", start=m.start("v"),
                                                    end=m.end("v"))])
            if len(out) >= MAX_VERSIONS:
                return list(out.values())
    return list(out.values())


def changed(events: list[LogEvent]) -> bool:
    """Whether a line says a version changed: a change's word (a deploy, an upgrade, a build against) and a version
    number (`2.9.1`, `v3.0`) in one line, at any level (a deploy's INFO line says it)."""
    return any(_CHANGE.search(text) and _NUMBER.search(text) for text in (e.message[:2_000] for e in events))
