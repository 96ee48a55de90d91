"""What plain text a regex needs: the substring tests that let the findings rules and the knowledge
docs' `re:` signatures skip a regex on text that cannot match it (the hot path of every RCA).

Conservative by construction: anything unclear (an escaped letter or digit, a group, a class, a
quantified character) ends a run of required text, so a test can only skip a regex that would
have found nothing.
"""
from __future__ import annotations

from typing import Iterator


def required_text(regex: str, *, ignore_case: bool) -> str:
    """The longest run of plain text outside groups and classes that every match of `regex`
    contains ("" when a top-level alternation or anything unclear makes nothing certain);
    lowered when the regex ignores case."""
    runs, run, depth, i = [], "", 0, 0
    while i < len(regex):
        c, literal = regex[i], None
        if c == "\\":
            nxt = regex[i + 1] if i + 1 < len(regex) else ""
            literal = nxt if nxt and not nxt.isalnum() else None
            i += 2
        elif c == "[":
            i = _class_end(regex, i)
        elif c == "{":
            end = regex.find("}", i)
            i = len(regex) if end < 0 else end + 1
        else:
            i += 1
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "|" and depth == 0:
                return ""
            elif c not in ".^$+?*":
                literal = c
        if literal is not None and depth == 0:
            following = regex[i] if i < len(regex) else ""
            if following and following in "?*{":
                runs.append(run)  # the quantified character may be absent
                run = ""
            elif following == "+":
                runs.append(run + literal)  # present, maybe repeated
                run = ""
            else:
                run += literal
        else:
            runs.append(run)
            run = ""
    runs.append(run)
    best = max(runs, key=len)
    if not ignore_case:
        return best
    # only ASCII lowers to what an ignore-case match requires (`ſ` matches `s`)
    return best.lower() if best.isascii() else ""


def split_alternatives(pattern: str) -> list[str]:
    """The pattern split at its top-level `|` (outside groups, classes and escapes)."""
    parts, start = [], 0
    for i, c, depth in _outside_escapes_and_classes(pattern):
        if c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    return [*parts, pattern[start:]]


def required_groups(pattern: str) -> Iterator[list[str]]:
    """The alternatives of each top-level capturing or non-capturing group no quantifier makes
    optional (lookarounds and flag groups are left out)."""
    opened = 0
    for i, c, depth in _outside_escapes_and_classes(pattern):
        if c == "(" and depth == 0:
            opened = i
        elif c == ")" and depth == 1:
            following = pattern[i + 1] if i + 1 < len(pattern) else ""
            if following not in ("?", "*", "{"):
                body = pattern[opened + 1:i]
                if body.startswith("?:"):
                    yield split_alternatives(body[2:])
                elif body.startswith("?P<") and ">" in body:
                    yield split_alternatives(body[body.index(">") + 1:])
                elif not body.startswith("?"):
                    yield split_alternatives(body)


def _outside_escapes_and_classes(pattern: str) -> Iterator[tuple[int, str, int]]:
    # (index, character, group depth before it) of each character not escaped nor in a class
    depth, i = 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(pattern, i)
            continue
        yield i, c, depth
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at i."""
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1
