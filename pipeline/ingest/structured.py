"""Structured records: one JSON object a line (with the field names of CONTRACT §1 and of pino, zap,
structlog, Serilog/CLEF, ECS, bunyan, GELF and Logstash, see `_JSON_ALIASES`) and logfmt's
``key=value`` pairs (values optionally double-quoted with backslash escapes)."""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable

from pipeline.ingest import key_roles
from pipeline.ingest.levels import infer_level, normalize_level
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, exception_in, split_first
from pipeline.ingest.readable import record_text
from pipeline.ingest.timestamps import embedded_time, read_written_time

# -- JSON ----------------------------------------------------------------------------------

# Canonical field → names accepted, first match wins; a dotted name matches a literal key
# ("log.level") or a nested object ({"log": {"level": ...}}). Serilog's `@l` is the logger's own level
# (its `@`), before a `level` property the event may carry.
_JSON_ALIASES: dict[str, tuple[str, ...]] = {
    "time": ("_time", "@timestamp", "timestamp", "time", "ts", "@t", "t", "date", "datetime"),
    "message": ("message", "msg", "@m", "_raw", "event", "short_message", "log", "text"),
    "service": ("service", "service.name", "app", "application", "Application", "_service", "_app",
                "sourcetype"),
    "host": ("host", "hostname", "host.name", "host.hostname", "_host", "source_host"),
    "level": ("@l", "level", "severity", "log_level", "log.level", "lvl", "loglevel",
              "levelname", "severity_text", "_level"),
    "exception": ("exception", "exception_type", "error.type", "exc_type", "error.kind",
                  "_exception"),
    "stack": ("stack", "stacktrace", "stack_trace", "error.stack", "error.stack_trace", "@x",
              "exc_info", "full_message", "err.stack", "error_stack", "throwable"),
    "trace_id": ("trace_id", "traceId", "trace.id", "@tr", "traceID", "dd.trace_id", "_trace_id"),
}
# Keys whose presence says which logger wrote the line; they steer level and time reading.
_DIALECTS: tuple[tuple[str, Callable[[dict], bool]], ...] = (
    ("gelf", lambda o: "short_message" in o and "version" in o or "short_message" in o),
    ("clef", lambda o: "@t" in o and ("@m" in o or "@mt" in o)),
    ("ecs", lambda o: "@timestamp" in o and ("ecs" in o or "ecs.version" in o or "log.level" in o
                                             or isinstance(o.get("log"), dict))),
    ("bunyan", lambda o: "hostname" in o and "pid" in o and isinstance(o.get("level"), int)
     and "v" in o),
    ("pino", lambda o: isinstance(o.get("level"), int) and isinstance(o.get("time"), (int, float))),
    ("zap", lambda o: isinstance(o.get("ts"), (int, float)) and ("caller" in o or "msg" in o)),
    ("structlog", lambda o: "event" in o and ("level" in o or "timestamp" in o)),
    ("logstash", lambda o: "@timestamp" in o and "@version" in o),
)


def _take(rest: dict, names: Iterable[str], *, scalar: bool = False) -> Any:
    """Pop the first of `names` holding a value; a null counts as absent.

    With `scalar`, only a string or number counts (ECS's "log" and "event" are objects, Docker's
    "log" is the line).
    """
    for name in names:
        if scalar and name in rest and isinstance(rest[name], (dict, list)):
            continue
        if name in rest:
            value = rest.pop(name)
        elif "." in name and isinstance(rest.get(name.split(".", 1)[0]), dict):
            parent, child = name.split(".", 1)
            nested = dict(rest[parent])
            if child not in nested:
                continue
            value = nested.pop(child)
            if nested:
                rest[parent] = nested
            else:
                del rest[parent]
        else:
            continue
        if value is not None and value != "":
            return value
    return None


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    text = str(value).strip()
    return text or None


_HOLE = re.compile(r"\{\{|\}\}|\{([@$]?)([A-Za-z_][\w.]*)(?:,[^}:]*)?(?::[^}]*)?\}")


def render_template(template: Any, properties: dict) -> Any:
    """A message template (Serilog/CLEF `@mt`) with its `{Name}` holes filled from the event's
    properties; a hole with no property stays as written, `{{`/`}}` are literal braces."""
    if not isinstance(template, str):
        return template

    def fill(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        value = properties.get(m.group(2))
        if value is None:
            return m.group(0)
        if isinstance(value, (dict, list)):
            return json.dumps(value, sort_keys=True)
        return str(value)

    return _HOLE.sub(fill, template)


_ERROR_KEYS = ("error", "err", "exception", "exc")


def _error_parts(rest: dict) -> tuple[Any, Any, Any]:
    """(message, exception name, stack) of an error object (`error`, bunyan's `err`: {message, name,
    stack}, ECS's `error.message`), taken out of `rest`; Nones when there is none."""
    for key in _ERROR_KEYS:
        error = rest.get(key)
        if error.__class__ is dict:
            error = dict(error)
            message = error.pop("message", None)
            name = next((error.pop(k) for k in ("type", "name", "kind", "class") if isinstance(error.get(k), str)), None)
            stack = next((error.pop(k) for k in ("stack", "stack_trace", "stacktrace") if error.get(k)), None)
            if message is None and name is None and stack is None:
                continue
            if error:
                rest[key] = error
            else:
                del rest[key]
            return message, name, stack
    return (rest.pop("error.message") if "error.message" in rest else None), None, None


def _level_value(rest: dict) -> Any:
    """The level a record writes under a known name, taken out of `rest`: the first alias holding one,
    except that a number between a scheme's steps (pino's custom `35`, Monolog's 200) gives way to a
    level written as a word under another alias or key named as a level (`{"level": 35, "severity":
    "warn"}`, `{"level": 200, "level_name": "INFO"}`: the word is what the writer meant); the number
    then stays among the fields."""
    names = [n for n in _JSON_ALIASES["level"] if n in rest]
    first = rest[names[0]] if names else None
    if names and isinstance(first, (int, float)) and not isinstance(first, bool) \
            and not (0 <= first <= 7 or (first % 10 == 0 and 10 <= first <= 60)):
        # another key named as a level, by an alias or by its words (Monolog's `level_name` beside its
        # `level` of 100-600)
        others = [n for n in rest if n not in names and key_roles.proposes(n, "level")]
        for name in names[1:] + others:
            value = rest[name]
            if isinstance(value, str) and not value.strip().isdigit() and normalize_level(value) is not None:
                return rest.pop(name)
    return _take(rest, _JSON_ALIASES["level"])


def cut_record(text: str) -> dict[str, Any] | None:
    """A JSON object's text cut off before its end (a shipper's line limit): the pairs written before the
    cut, a cut string kept as far as it goes ("…"), marked `truncated`; None for anything else (a whole
    object that does not parse is not cut, and one pair says too little to be a record)."""
    if not text.startswith('{"') or text.endswith("}") or "\n" in text:
        return None  # a shipper cuts one line; a record of several lines is not one cut
    try:
        record = record_text(text)
    except ValueError:  # a cut string that does not decode (a raw control character in it)
        return None
    if record is None or len(record) < 2:
        return None
    return {**record, "truncated": True}


def parse_json(text: str, opts: ParseOptions) -> ParsedRecord | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    if stripped.endswith(","):
        stripped = stripped[:-1]  # an element of a JSON array written one object a line (`},`)
    try:
        obj = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        obj = cut_record(stripped)
        if obj is None:
            return None
    if not isinstance(obj, dict):
        return None
    return record_from_object(obj, opts)


def record_from_object(obj: dict[str, Any], opts: ParseOptions, *, format: str = "json") -> ParsedRecord:
    """One logger's record as an object (a JSON line, or an XML or YAML document read into one:
    pipeline/ingest/documents.py) → ParsedRecord: each key's role by its name, else by its values."""
    dialect = next((name for name, test in _DIALECTS if test(obj)), "json")
    rest = dict(obj)
    rest.pop("@version", None) if dialect == "logstash" else None
    if dialect == "gelf":
        rest.pop("version", None)
    raw_time = _take(rest, _JSON_ALIASES["time"])
    template = rest.pop("@mt", None) if dialect == "clef" else None
    message = _take(rest, _JSON_ALIASES["message"], scalar=True)
    if message is None and template is not None:
        message = render_template(template, rest)  # CLEF may carry only the template: fill its holes
        rest["message_template"] = template
    elif template is not None:
        rest["message_template"] = template
    err_message, err_name, err_stack = _error_parts(rest)
    if message is None and err_message is not None:
        message = err_message
    elif err_message is not None:
        rest["error.message"] = err_message
    level = _level_value(rest)
    if level is None and dialect == "clef":
        level = "Information"  # CLEF: an event without @l is Information
    values = {name: _take(rest, _JSON_ALIASES[name], scalar=name != "stack")
              for name in ("service", "host", "exception", "stack", "trace_id")}
    scheme = "syslog" if dialect == "gelf" else "bunyan" if dialect in ("pino", "bunyan") else None
    # the roles no known name held: told by the other keys' names and values (pipeline/ingest/key_roles.py)
    found = (raw_time, level, message, values["service"], values["host"], values["trace_id"])
    if None in found and rest:
        missing = tuple(role for role, value in zip(key_roles.ROLES, found) if value is None)
        roles = key_roles.infer_paths(rest, missing, opts.key_roles)
        if roles:
            taken = {role: key_roles.pop_path(rest, path) for role, path in roles.items()}
            empty = tuple(role for role, value in taken.items() if value is None or value == "")
            if empty and rest:  # the remembered key is empty on this record (`"severityText": ""`): another may hold the role
                again = key_roles.infer_paths(rest, empty, None)
                roles = {**roles, **again}
                taken.update({role: key_roles.pop_path(rest, path) for role, path in again.items()})
            raw_time, level, message = (taken.get("time", raw_time), taken.get("level", level),
                                        taken.get("message", message))
            values.update({name: taken[name] for name in ("service", "host", "trace_id") if name in taken})
            if "level" in roles:
                scheme = key_roles.level_scheme(".".join(roles["level"])) or scheme
    epoch_unit = "ms" if dialect in ("pino",) else "s" if dialect in ("zap", "gelf") else None
    time = (read_written_time(key_roles.time_value(raw_time), opts, epoch_unit=epoch_unit, clock_alone=False)
            if raw_time is not None else None)
    if time is None and isinstance(raw_time, str):
        time = key_roles.date_and_clock(raw_time, rest, opts)  # {"date": "2019-05-15", "time": "18:03:36"}
        time = time or read_written_time(raw_time, opts)  # a time of day alone: on the day it is read
    if raw_time is not None and time is None:
        rest["time_raw"] = raw_time
    values = {name: _as_text(value) for name, value in values.items()}
    if err_name is not None or err_stack is not None:
        values["exception"] = values["exception"] or _as_text(err_name)
        values["stack"] = values["stack"] or _as_text(err_stack)
    if values["service"] is None and dialect in ("bunyan", "pino"):
        values["service"] = _as_text(_take(rest, ("name",)))  # pino and bunyan name the logger `name`
    # GELF's additional fields are _name; once the known ones are taken, drop the underscore.
    if dialect == "gelf":
        rest = {(k[1:] if k.startswith("_") and k[1:] not in rest else k): v for k, v in rest.items()}
    message_text = _as_text(message) or ""
    stack = values["stack"]
    if stack is None and values["exception"] is not None and "\n" in values["exception"].strip():
        stack, values["exception"] = values["exception"], None  # the exception written whole (its trace): the stack
    if dialect == "gelf" and stack is not None and stack.strip() == message_text.strip():
        stack = None  # full_message often repeats short_message
    level_name = normalize_level(level, scheme=scheme) if level is not None else None
    if level is None:
        level_name = infer_level(message_text)
    exception = values["exception"] or (exception_in(stack) if stack else None)
    rest["dialect"] = dialect
    return ParsedRecord(message=message_text, format=format, time=time, level=level,
                        level_name=level_name, service=values["service"], host=values["host"],
                        exception=exception, stack=stack, trace_id=values["trace_id"], fields=rest)


# -- logfmt --------------------------------------------------------------------------------

_LOGFMT_PAIR = re.compile(r'\s*([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[^\s]*))?')
_LOGFMT_KEYS = {"msg", "message", "level", "lvl", "time", "ts", "t", "severity", "err", "error"}


def parse_logfmt_pairs(text: str) -> dict[str, str] | None:
    """logfmt's pairs, or None when the text is not wholly logfmt."""
    pairs: dict[str, str] = {}
    pos, keyed = 0, 0
    text = text.strip()
    while pos < len(text):
        m = _LOGFMT_PAIR.match(text, pos)
        if not m or m.end() == pos:
            return None
        key, value = m.group(1), m.group(2)
        if m.end() < len(text) and not text[m.end()].isspace():
            return None  # e.g. a quote opened and never closed
        if key in pairs:  # a key written twice (auditd's `msg=audit(...): ... msg='...'`) keeps both
            key = next(f"{key}_{n}" for n in range(2, len(pairs) + 3) if f"{key}_{n}" not in pairs)
        if value is None:
            pairs[key] = "true"  # a bare key is a flag
        else:
            keyed += 1
            if value[:1] in ('"', "'") and len(value) >= 2 and value[-1] == value[0]:
                value = re.sub(r'\\(.)', lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)),
                               value[1:-1])
            pairs[key] = value
        pos = m.end()
    if keyed < 2 or keyed < len(pairs) - 1:
        return None
    return pairs


_LTSV_LABEL = re.compile(r"[0-9A-Za-z_.-]+:")


def parse_ltsv_pairs(text: str) -> dict[str, str] | None:
    """LTSV's labelled fields (ltsv.org: `label:value` cut by tabs, as fluentd's ltsv parser reads
    them), or None when the text is not wholly of them (at least three)."""
    fields = text.strip("\r\n").split("\t")
    if len(fields) < 3:
        return None
    pairs: dict[str, str] = {}
    for field_text in fields:
        label = _LTSV_LABEL.match(field_text)
        if label is None:
            return None
        pairs.setdefault(label.group(0)[:-1], field_text[label.end():])
    return pairs


def parse_logfmt(text: str, opts: ParseOptions) -> ParsedRecord | None:
    """logfmt's `key=value` pairs, or LTSV's tab-cut `label:value` fields: one record of pairs (its
    continuation lines, a trace printed after it, the stack)."""
    if "=" not in text and "\t" not in text:
        return None
    text, after = split_first(text) if "\n" in text else (text, None)
    pairs = parse_logfmt_pairs(text) if "=" in text else None
    if pairs is None and "\t" in text:
        pairs = parse_ltsv_pairs(text)
    if pairs is None:
        return None
    if not (_LOGFMT_KEYS & set(pairs)):
        # any logger's pairs (a firewall's `date=… time=… level=…`): at least three, one of whose
        # keys names a time, a level or the message by its name (pipeline/ingest/key_roles.py)
        if len(pairs) < 3 or not key_roles.infer(pairs, ("time", "level", "message"), opts.key_roles):
            return None
    rest: dict[str, Any] = dict(pairs)
    found = {"time": _take(rest, ("time", "ts", "t", "timestamp", "@timestamp")),
             "message": _take(rest, ("msg", "message", "event")),
             "level": _take(rest, ("level", "lvl", "severity", "log_level")),
             "service": _take(rest, ("service", "app", "component", "logger", "caller_service")),
             "host": _take(rest, ("host", "hostname")), "trace_id": _take(rest, ("trace_id", "traceId", "traceID"))}
    scheme = None
    missing = tuple(role for role in key_roles.ROLES if found[role] is None)
    if missing:  # the roles no known name held: told by the other keys' names, else by their values alone
        for role, key in key_roles.infer(rest, missing, opts.key_roles, nested=key_roles.flat_view(rest)).items():
            found[role] = rest.pop(key)
            scheme = key_roles.level_scheme(key) if role == "level" else scheme
    raw_time, level = found["time"], found["level"]
    message = found["message"] or ""
    time = read_written_time(raw_time, opts, clock_alone=False) if raw_time is not None else embedded_time(message)
    if raw_time is None and time is not None:
        # the message key held only a stamp (auditd's `msg=audit(EPOCH:SERIAL):`): the time; the
        # message is the same key written again, when the line has it
        message = next((str(rest.pop(k)) for k in ("msg_2", "message_2") if k in rest), "")
    if time is None and raw_time is not None:
        time = key_roles.date_and_clock(raw_time, rest, opts)  # `date=2019-05-15 time=18:03:36`
        time = time or read_written_time(raw_time, opts)  # a time of day alone: on the day it is read
    if raw_time is not None and time is None:
        rest["time_raw"] = raw_time
    err = rest.get("err") or rest.get("error")
    if not message and err:
        message = err
    return ParsedRecord(
        message=message, format="logfmt", time=time, level=level,
        level_name=(normalize_level(level, scheme=scheme) if level is not None
                    else infer_level(message + " " + (err or ""))),
        service=found["service"], host=found["host"],
        exception=_take(rest, ("exception", "error_type")) or (exception_in(after) if after else None),
        stack=_take(rest, ("stack", "stacktrace")) or (after.strip("\n") if after else None),
        trace_id=found["trace_id"], fields=rest)
