"""What an RCA shows a reviewer: the log lines it rests on (quoted, with the spans of the
signatures and findings they carry, once per distinct line), and a cause that names the
incident's own entities rather than the knowledge base's general prose."""
from __future__ import annotations

import re

from pipeline.analyst.findings import event_texts, first
from pipeline.ingest.readable import readable_line
from pipeline.knowledge.index import Doc
from pipeline.state import Finding, LogEvent, Quote, counted

MAX_QUOTES = 4
QUOTE_CHARS = 400
_VARIABLE = re.compile(r"0x[0-9a-f]+|[0-9a-f]{8,}|\d+", re.I)


def line_template(line: str) -> str:
    """A line with its numbers and ids masked: two lines of a burst differ only there."""
    # two lines of a burst differ in ids, counts and times; a reviewer needs one of them
    return _VARIABLE.sub("#", line.strip())


def first_words(event: LogEvent) -> str:
    """An event's first line in words (a JSON object's text as its pairs), as a quote shows it."""
    return readable_line(event.message.splitlines()[0], event.exception)[:200] if event.message else ""


def _doc_spans(doc: Doc | None, line: str) -> list[list[int]]:
    spans: list[list[int]] = []
    if doc is None:
        return spans
    lowered = line.lower()
    for signature, pattern in zip(doc.signatures, doc.patterns):
        if pattern is None:
            at = lowered.find(signature.lower())
            if at >= 0:
                spans.append([at, at + len(signature)])
        else:
            found = pattern.search(line)
            if found and found.end() > found.start():
                spans.append([found.start(), found.end()])
    return spans


def quotes_for(events: list[LogEvent], findings: list[Finding], doc: Doc | None) -> list[Quote]:
    """The distinct lines carrying the doc's signatures or the findings, most telling first.

    A line is read once per distinct template (a burst repeats it with other ids); a line that is
    part of a longer quoted one (the message again inside its stack trace) is not quoted twice.
    """
    spans_by_event: dict[tuple[str, str], list[tuple[int, int]]] = {}
    stated: dict[tuple[str, str], list[int]] = {}  # where an error statement starts: its line is quoted unmarked
    for finding in findings:
        if finding.kind == "class":
            continue  # the exception's name alone is not a line worth quoting
        for span in finding.spans:
            if finding.kind == "error":  # the whole line: marking it all would mark nothing
                stated.setdefault((span.event_id, span.field), []).append(span.start)
                continue
            spans_by_event.setdefault((span.event_id, span.field), []).append((span.start, span.end))
    found: dict[str, Quote] = {}
    signature_hits: dict[str, int] = {}
    verdict: dict[str, bool] = {}  # template -> quoted?
    for event in events:
        counted: set[str] = set()
        for field, text in event_texts(event):
            if field.startswith("fields.") or field == "exception":
                continue
            offset = 0
            for line in text.splitlines(keepends=True):
                start, stripped = offset, line.rstrip("\n")
                offset += len(line)
                if not stripped.strip():
                    continue
                key = line_template(stripped)
                if key in verdict:
                    if verdict[key] and key not in counted:
                        found[key].count += 1
                        counted.add(key)
                    continue
                signed = _doc_spans(doc, stripped)
                spans = signed + [[s - start, e - start] for s, e in spans_by_event.get((event.event_id, field), [])
                                  if start <= s and e <= start + len(stripped)]
                verdict[key] = bool(spans) or any(start <= at < start + len(stripped)
                                                  for at in stated.get((event.event_id, field), []))
                if not verdict[key]:
                    continue
                lead = len(stripped) - len(stripped.lstrip())
                shown = stripped.strip()[:QUOTE_CHARS]
                if (words := readable_line(shown, event.exception)) != shown:  # a JSON object's text: its words
                    shown, lead, spans = words[:QUOTE_CHARS], 0, _doc_spans(doc, words)
                spans = sorted({(max(0, s - lead), min(len(shown), e - lead)) for s, e in spans if e - lead > 0})
                found[key] = Quote(event_id=event.event_id, field=field, text=shown,
                                   spans=[[s, e] for s, e in spans if e > s])
                signature_hits[key] = len(signed)
                counted.add(key)
    keys = [k for k in found if not any(k != other and k in other for other in found)]
    frames = [k for k in keys if signature_hits[k] == 0 and _is_frame(found[k].text)]
    keys = [k for k in keys if k not in frames] + frames[:1]  # one stack frame says where; more is noise
    keys.sort(key=lambda k: (-(signature_hits[k] > 0), -found[k].count, -len(found[k].spans)))
    return [found[k] for k in keys[:MAX_QUOTES]]


def _is_frame(line: str) -> bool:
    text = line.strip()
    return text.startswith(("at ", "File \"", "/", "github.com/", "goroutine ")) or text.endswith(")") and " at " in text


def quote_text(quote: Quote, total: int) -> str:
    """A quote as one evidence line: the log line, and how many events carry it."""
    return f"{quote.text}  (in {quote.count} of {counted(total, 'event')})"


def _code(value: str | None) -> str:
    return f"`{value}`" if value else ""


def _largest(findings: list[Finding], kind: str) -> str | None:
    values = [f.value for f in findings if f.kind == kind and f.value.isdigit()]
    return max(values, key=int) if values else first(findings, kind)


# the function a frame names beside its file and line: `at Cart.total (/srv/cart.js:12:5)` (V8),
# `File "/srv/cart.py", line 12, in total` (CPython), `at shop.Cart.total(Cart.java:12)` (the JVM)
_FRAME_FUNCTION = (r"\bat (?:async )?([\w$.<>]+) \({path}:{line}\b", r'File "{path}", line {line}, in ([\w<>]+)',
                   r"\bat (?:[\w$]+\.)*?([\w$]+\.[\w$<>]+)\({file}:{line}\)")


def frame_function(texts: list[str], where: str) -> str | None:
    """The function the frame at `where` (`path:line`, a file_line finding) runs, as the trace names it."""
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit():
        return None
    names = {"path": re.escape(path), "line": line, "file": re.escape(path.rsplit("/", 1)[-1])}
    for text in texts:
        if line in text:
            for shape in _FRAME_FUNCTION:
                if m := re.search(shape.format(**names), text):
                    return m.group(1)
    return None


def concrete_cause(category: str, findings: list[Finding], texts: list[str] | None = None) -> str | None:
    """One sentence naming what the evidence shows for the category, or None when it names nothing
    (`texts`, the events' texts, name the function a frame runs)."""
    get = lambda kind: first(findings, kind)  # noqa: E731
    column, table, key, host, port = get("column"), get("table"), get("key"), get("host"), get("port")
    where = get("file_line")
    # the peer the events connect to, host and port as one event writes them (pipeline/analyst/specifics.py)
    target = get("address") or (f"{host}:{port}" if host and port else host)
    status = get("http_status")
    if category == "db_schema_mismatch" and column:
        return (f"Column {_code(column)} is missing in {_code(table)}" if table else f"Column {_code(column)} is missing") \
            + ": the code expects a schema the database does not have (a migration not applied, or applied out of order)."
    if category == "db_schema_mismatch" and table:
        return f"Table {_code(table)} does not exist in the database the service uses."
    if category == "config_missing" and key:
        return f"The required setting {_code(key)} is missing or empty where the service starts" + \
            (f" (read at {_code(where)})." if where else ".")
    if category == "db_pool_exhausted" and (get("pool_total") or get("pool_name") or get("timeout")):
        stats = ", ".join(f"{label}={value}" for label, value in (
            ("total", get("pool_total")), ("active", get("pool_active")), ("idle", get("pool_idle")),
            ("waiting", _largest(findings, "pool_waiting"))) if value is not None)
        pool = _code(get("pool_name")) or "The connection pool"
        timeout = get("timeout")
        stats = stats.replace("waiting=", "waiting up to ")
        return (f"{pool} is exhausted" + (f" ({stats})" if stats else "")
                + (f"; requests gave up after {timeout} waiting for a connection." if timeout else "."))
    if category == "connection_refused" and target:
        said = " ".join(f.value for f in findings if f.kind == "error").lower()
        if "reset" in said and "refused" not in said:  # a reset is not a refusal: the peer accepted, then dropped
            return f"Connections to {_code(target)} are reset by the peer after they were accepted."
        if "refused" not in said and re.search(r"\bclosed\b|broken pipe|hang ?up|\beof\b", said):
            return f"Connections to {_code(target)} are closed by the peer after they were accepted, mid-request."
        return f"Connections to {_code(target)} are refused: nothing accepts connections there."
    if category == "dns_resolution" and host:
        return f"The host name {_code(host)} cannot be resolved."
    if category in ("upstream_timeout", "upstream_rate_limited", "upstream_auth_failure", "tls_certificate") and \
            (target or status):
        what = {"upstream_timeout": "time out", "upstream_rate_limited": "are rate limited",
                "upstream_auth_failure": "are refused for their credentials", "tls_certificate": "fail the TLS handshake"}
        return (f"Calls to {_code(target) or 'a dependency'} {what[category]}"
                + (f" (HTTP {status})" if status else "") + ".")
    if category == "null_reference" and where:
        function = frame_function(texts or [], where)
        return "A null value is dereferenced" + (f" in {_code(function)}" if function else "") + f" at {_code(where)}."
    if category == "data_integrity" and get("constraint"):
        return f"Writes violate the constraint {_code(get('constraint'))}."
    if category == "concurrency_conflict" and table:
        return f"Concurrent updates of {_code(table)} conflict: rows changed between read and write."
    if category == "disk_full" and (get("path") or get("errno")):
        return "The volume is out of space" + (f" writing {_code(get('path'))}" if get("path") else "") + "."
    if category == "dependency_mismatch" and get("dependency"):
        name, version = get("dependency"), get("version")
        return f"The installed {_code(name)}" + (f" {_code(version)}" if version else "") + \
            " does not provide what the code imports" + (f" ({_code(get('class'))})." if get("class") else ".")
    if category == "out_of_memory" and get("limit"):
        return f"Memory use exceeds the limit of {_code(get('limit'))}."
    if category == "resource_exhaustion" and get("limit"):
        return f"A resource limit of {_code(get('limit'))} is reached."
    if category == "db_deadlock" and (get("sqlstate") or get("error_code") or table):
        codes = ", ".join(f"{k} {v}" for k, v in (("SQLSTATE", get("sqlstate")), ("error", get("error_code"))) if v)
        return "Transactions deadlock or time out waiting for locks" + (f" ({codes})" if codes else "") + \
            (f" on {_code(table)}" if table else "") + "."
    return where_it_fails(findings)


# the specifics pipeline/analyst/specifics.py finds by shape: the root cause names them itself
_SHAPED = ("error", "address", "endpoint", "expiry", "subject", "queue", "setting")


def where_it_fails(findings: list[Finding]) -> str | None:
    """The generic concrete sentence: what is raised, where, and the entities it names."""
    error = first(findings, "class")
    where = first(findings, "file_line")
    named = [f"{f.kind.replace('_', ' ')} {_code(f.value)}" for f in findings
             if f.kind not in ("class", "file_line", "pool_waiting", *_SHAPED) and not f.kind.startswith("pool_")][:3]
    if not (error or where or named):
        return None
    head = f"{_code(error.rsplit('.', 1)[-1])} is raised" if error else "The errors occur"
    return head + (f" at {_code(where)}" if where else "") + (f" ({', '.join(named)})" if named else "") + "."
