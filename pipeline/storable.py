"""What any JSON value must be before it is stored or run: log events' fields and reviewers' edits.

Deep nesting breaks the serialisers downstream (msgpack and pydantic recurse) and a lone surrogate
(the JSON escape `\\ud800`) decodes to text that cannot be encoded as UTF-8; both used to fail only
later, when stored, taking a whole batch or a reviewer's edit down with a traceback.
"""
from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # real structured logs and edits nest a handful of levels


def problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why `value` cannot be stored, in one line, or None when it can."""
    # the common case at C speed: the value as JSON encodes as UTF-8 (no lone surrogate) and holds
    # fewer brackets than the depth allowed (so it cannot nest deeper); anything else is walked
    try:
        text = json.dumps(value, ensure_ascii=False, check_circular=False, default=repr)
        text.encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        pass
    else:
        if text.count("[") + text.count("{") < max_depth:
            return None
    return _walked(value, max_depth)


def _walked(value: Any, max_depth: int) -> str | None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            reason = _text_problem(item)
        elif isinstance(item, (dict, list, tuple)):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            reason = None
            if isinstance(item, dict):
                for key, child in item.items():
                    reason = reason or (_text_problem(key) if isinstance(key, str) else None)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        else:
            reason = None
        if reason:
            return reason
    return None


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"lone surrogate {text[error.start]!a} (not valid Unicode text)"
    return None
