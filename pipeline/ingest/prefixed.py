"""Container output with each line prefixed by the container that wrote it, as the tools that merge
several containers' logs into one stream print it:

    api-1     | 2025-06-02 09:14:05.331 ERROR 1 --- [exec-3] o.h.e.j.s.SqlExceptionHelper : ...
    nginx-1   | 2025/06/02 09:14:36 [error] 29#29: *1043 upstream timed out ...
    [pod/cart-6b8d5c4f9-w7x2p/cart] {"level":50,"time":1748858533020,"msg":"session read failed"}

(`docker compose logs`/`up`: the service's container name padded to a column, ` | `, and compose's own
`<container> exited with code N` about it, a line of that container; `kubectl logs
--prefix`: `[pod/<pod>/<container>] `; stern: `<pod> <container> ` or `<pod> `, where the text after
them opens a record by itself). A file is read this way when most of its first lines carry
such a prefix. Each container's lines are its own log: they are joined into records per container
(a Java trace of `api-1` is one record, whatever `nginx-1` printed between its lines), and read by a
parser chosen from that container's own lines (a Spring Boot header for `api-1`, nginx's error and
access layouts for `nginx-1`), as a file of that container alone would be. The prefix names the
record's service (compose: the container name without its replica number, `api-1` → `api`;
kubectl and stern: the container, or the pod without its ordinal or hash when stern names no container)
and host (compose: the container; kubectl and stern: the pod); a logger or service
the line itself names is kept as `fields.logger`.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from pipeline.ingest.cri import StreamJoiner
from pipeline.ingest.levels import normalize_level
from pipeline.ingest.multiline import MultilineJoiner, Record, looks_like_record_start
from pipeline.ingest.parsed import ParsedRecord

# compose: a container name, padding, ` | ` (at least one space before the bar: `a|b` tables and
# HealthApp's `time|component|pid|msg` are no prefix); kubectl --prefix: `[pod/<pod>/<container>] `
_COMPOSE = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]{0,62}) +\|(?: (?P<text>.*)|$)", re.S)
_KUBECTL = re.compile(r"^\[pod/(?P<pod>[^/\]\s]{1,253})/(?P<name>[^/\]\s]{1,63})\](?: (?P<text>.*)|$)", re.S)
# compose's own line about a container, written without the bar: `search-1 exited with code 134`
_COMPOSE_STATUS = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]{0,62}) (?P<text>exited with code -?\d+)$")
# stern (stern/stern's default template `{{.PodName}} {{.ContainerName}} {{.Message}}`, or the pod alone,
# `{{.PodName}} {{.Message}}`): Kubernetes names, a pod's holding a dash and a letter (no date); read so only where the text
# after them opens a record by itself (a time, a level, a klog header, a JSON object): two words
# before a line are no prefix otherwise
_STERN = re.compile(r"^(?P<pod>(?=[\w.-]*[a-z])[a-z0-9][a-z0-9.]*-[a-z0-9.-]*[a-z0-9]) (?P<name>[a-z0-9][a-z0-9-]{0,62}) (?P<text>.*)$",
                    re.S)
_STERN_POD = re.compile(r"^(?P<pod>(?=[\w.-]*[a-z])[a-z0-9][a-z0-9.]*-[a-z0-9.-]*[a-z0-9]) (?P<text>.*)$", re.S)
# what a pod's name adds to its workload's: a StatefulSet's ordinal, a Deployment's `-<hash>-<id>`
_POD_SUFFIX = re.compile(r"-(?:\d+|[a-z0-9]{5,10}-[a-z0-9]{5})$")
_REPLICA = re.compile(r"[-_]\d+$")
_NUMERIC = re.compile(r"^[\d.:_-]+$")
SHARE = 0.6  # the share of a sample's lines that carry a prefix for the file to be read this way
# ... or, below it, a file where containers' prefixed lines are mixed with another writer's own (a CI job's
# trace beside `docker compose up`, a host's syslog beside `kubectl logs --prefix`): each prefixed line is
# its container's, the other lines are read as a file of them alone would be (`SourceParser.rest`)
MIXED_SHARE = 0.2
MIXED_LINES = 5  # ... when at least this many sampled lines carry a prefix
SAMPLE_LINES = 200


def split(line: str) -> tuple[str, str, str, str] | None:
    """(prefix as written, service, host, the container's text) of a prefixed line, or None."""
    m = _KUBECTL.match(line)
    if m is not None:
        text = m["text"] or ""
        return line[:len(line) - len(text)], m["name"], m["pod"], text
    m = _COMPOSE.match(line) or _COMPOSE_STATUS.match(line)
    if m is not None and not (m["name"].isupper() and normalize_level(m["name"]) is not None) \
            and not _NUMERIC.match(m["name"]):
        # an upper-case level word before the bar is the line's level column (ActiveMQ's audit
        # log: `INFO  | admin called ...`), not a container's name; nor are digits (an epoch
        # `1782080517.589 | INFO | ...`): compose names containers after their services
        text = m["text"] or ""
        return line[:len(line) - len(text)], _REPLICA.sub("", m["name"]), m["name"], text
    m = _STERN.match(line)
    if m is not None and looks_like_record_start(m["text"]):
        return line[:len(line) - len(m["text"])], m["name"], m["pod"], m["text"]
    m = _STERN_POD.match(line)
    if m is not None and looks_like_record_start(m["text"]):
        return line[:len(line) - len(m["text"])], _POD_SUFFIX.sub("", m["pod"]), m["pod"], m["text"]
    return None


def share(lines: list[str]) -> float:
    """The share of non-blank `lines` that carry a container prefix."""
    seen = [line for line in lines if line.strip()][:SAMPLE_LINES]
    return sum(1 for line in seen if split(line.rstrip("\r\n")) is not None) / len(seen) if seen else 0.0


def mixed(lines: list[str]) -> bool:
    """Whether `lines` mix containers' prefixed lines (a share of MIXED_SHARE to SHARE, MIXED_LINES or more)
    with another writer's own."""
    seen = [line for line in lines if line.strip()][:SAMPLE_LINES]
    count = sum(1 for line in seen if split(line.rstrip("\r\n")) is not None)
    return count >= MIXED_LINES and MIXED_SHARE <= count / len(seen) < SHARE


class Prefixes:
    """A prefixed file's containers: the parser each is read with, made from its own lines."""

    def __init__(self, sample: list[str], make: Callable[[list[str]], Any]):
        self._make = make  # lines of one container → a parser detected from them
        self._parsers: dict[str, Any] = {}
        own: dict[str, list[str]] = {}
        for line in sample[:SAMPLE_LINES * 4]:
            parts = split(line.rstrip("\r\n"))
            if parts is not None:
                own.setdefault(parts[2], []).append(parts[3])
        for host, lines in own.items():
            self._parsers[host] = make(lines)

    def parser(self, host: str, text: str) -> Any:
        if host not in self._parsers:  # a container the sample did not show: its first record tells
            self._parsers[host] = self._make(text.splitlines()[:SAMPLE_LINES])
        return self._parsers[host]

    def parse(self, text: str) -> ParsedRecord | None:
        """A record of a prefixed file (its first line prefixed, its continuation lines not), read
        by its container's parser; None when its first line carries no prefix."""
        first, sep, rest = text.partition("\n")
        parts = split(first)
        if parts is None:
            return None
        _, service, host, own = parts
        inner = own + (sep + rest if sep else "")
        record: ParsedRecord = self.parser(host, inner).parse(inner)
        if record.service and record.service != service:
            record.fields.setdefault("logger", record.service)
        record.service, record.host = service, host
        return record

    def starts_record(self, host: str, text: str) -> bool:
        parser = self._parsers.get(host)
        opens = getattr(parser, "opens_record", None)
        return bool(opens(text)) if opens is not None and getattr(parser, "headed", False) else True


class PrefixJoiner(StreamJoiner):
    """Lines joined into records per container (module doc): `StreamJoiner`'s bookkeeping, a
    stream per container prefix. A record comes out as its first line with its prefix and its
    continuation lines without theirs."""

    def __init__(self, prefixes: Prefixes | None = None, starts: Callable[[str], bool] | None = None,
                 rest: MultilineJoiner | None = None):
        super().__init__()
        self._prefixes = prefixes
        self._starts = starts
        if rest is not None:  # a mixed file's unprefixed lines: joined as their own writer's file would be
            self._joiners[""] = rest

    def _joiner(self, stream: str) -> MultilineJoiner:
        if stream not in self._joiners:
            # the container's parser's level-slot words (companion lines: ingest/companion_lines.py)
            labels = getattr(self._prefixes._parsers.get(stream) if self._prefixes else None, "label_counts", None)
            self._joiners[stream] = MultilineJoiner(starts_record=self._starts, labels=labels)
        return self._joiners[stream]

    def feed(self, position: Any, line: str) -> list[Record]:
        parts = split(line.rstrip("\r\n"))
        if parts is None:
            self._done += self._joiner("").feed(position, line)
            return self._release()
        prefix, _, host, text = parts
        self._done += self._records(host, self._joiner(host).feed((position, position, prefix), text))
        return self._release()

    @staticmethod
    def _records(stream: str, records: list[Record]) -> list[Record]:
        if not stream:
            return records
        return [r._replace(position=r.position[0], text=f"{r.position[2]}{r.text}",
                           last_position=r.last_position[1]) for r in records]
