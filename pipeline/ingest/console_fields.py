"""A console logger's fields column: a tab-separated line whose last column is a JSON object (zap's
console encoder: `time<TAB>level<TAB>logger<TAB>caller<TAB>message<TAB>{"key": value}`, the object
only where the call passed fields) keeps the record's structured fields there, not its message.

A learnt tab layout ends its header where the sample's shortest line ends, so the object is either
the tail of the message (`slow request<TAB>{"ms": 900}`, where some lines write none) or the whole
message (every line writes one: the text is then the header's last unnamed column, `f<N>`). Either
way the message is the text and the object's keys join the record's fields (a key the header
already named keeps the header's value).
"""
from __future__ import annotations

import json
from typing import Any


def _object(text: str) -> dict | None:
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def split_fields_column(message: str, fields: dict[str, Any]) -> str:
    """The message of a tab layout's record without its trailing JSON object, whose keys are put
    into `fields`; `message` unchanged when it ends with no such column (module doc)."""
    if not message.endswith("}"):
        return message
    head, tab, tail = message.rpartition("\t")
    found = _object(tail)
    if found is not None and tab and head.strip():
        text = head.rstrip()
    else:
        found = _object(message) if not tab else None
        last = max((k for k in fields if k[:1] == "f" and k[1:].isdigit() and isinstance(fields[k], str)
                    and fields[k].strip()), key=lambda k: int(k[1:]), default=None)
        if found is None or last is None:
            return message
        text = fields.pop(last).strip()
    for key, value in found.items():
        fields.setdefault(str(key), value)
    return text
