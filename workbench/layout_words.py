"""A source's layout in words for the Operations page: what each line is read as, in order, with the
example line's own values ("the time (10.30 16:49:06), the process id (4242), the level (ERROR), the
component (chrome.exe), which names the service, then the message"), rather than the regex that reads it."""
from __future__ import annotations

ROLE_WORDS = {"time": "the time", "level": "the level", "component": "the component", "logger": "the logger",
              "host": "the host", "pid": "the process id", "thread": "the thread", "tag": "the tag",
              "module": "the module", "client": "the client", "service": "the service"}
SHOWN_CHARS = 40
SEPARATORS = frozenset({"mark", "separator", "sep"})  # a layout's punctuation between columns
NAMING_ROLES = ("component", "logger", "tag", "module")  # a column that becomes the service


def _value(value: object) -> str:
    text = str(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


def layout_words(layout: dict) -> str:
    """The header's columns in order (a learnt or given layout), else the fields a known format read
    from the example line, each with its value there, then the message."""
    fields = dict(layout.get("fields") or {})
    service = fields.get("service")
    roles = list(layout.get("columns") or [])
    if not roles:  # a known format: the fields it read, the service once (a logger naming it says so)
        roles = [k for k in fields if k not in ("message", "level_name")]
        if any(fields.get(r) == service for r in roles if r in NAMING_ROLES):
            roles = [r for r in roles if r != "service"]
    parts = []
    for role in roles:
        if role in SEPARATORS:
            continue
        words = ROLE_WORDS.get(role, f"the {role.replace('_', ' ')}")
        value = fields.get("level_name") if role == "level" and fields.get("level_name") else fields.get(role)
        names_service = role in NAMING_ROLES and service is not None and value in (None, service)
        if names_service:
            value = service
        if value not in (None, ""):
            words += f" ({_value(value)})"
        if names_service:
            words += ", which names the service"
        parts.append(words)
    message = "then the message" if parts else "the whole line is the message"
    return "Each line: " + ", ".join([*parts, message]) + "."
