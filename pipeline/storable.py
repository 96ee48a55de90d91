"""What any JSON value must be before it is stored or run: log events' fields and reviewers' edits.

Deep nesting breaks the serialisers downstream (msgpack and pydantic recurse) and a lone surrogate
(the JSON escape `\\ud800`) decodes to text that cannot be encoded as UTF-8; both used to fail only
later, when stored, taking a whole batch or a reviewer's edit down with a traceback.
"""
from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # real structured logs and edits nest a handful of levels


_SCALARS = (str, int, float, bool, type(None))


def problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why `value` cannot be stored, in one line, or None when it can."""
    if max_depth >= 2 and _flat_and_valid(value):
        return None  # the commonest case of all (a parsed log line's values), without encoding it
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


def _flat_and_valid(value: Any) -> bool:
    """Whether `value` is a list or tuple of scalars and flat dicts (string keys, scalar values),
    two levels deep at most, every string of it valid Unicode: what `problem` allows whatever the
    depth allowed (2 or more). False says only that the full check must decide."""
    if value.__class__ not in (list, tuple):
        return False
    for item in value:
        cls = item.__class__
        if cls is str:
            if not (item.isascii() or _encodes(item)):
                return False
        elif cls is dict:
            for key, child in item.items():
                if key.__class__ is not str or not (key.isascii() or _encodes(key)):
                    return False
                if child.__class__ is str:
                    if not (child.isascii() or _encodes(child)):
                        return False
                elif child.__class__ not in _SCALARS:
                    return False
        elif cls not in _SCALARS:
            return False
    return True


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
