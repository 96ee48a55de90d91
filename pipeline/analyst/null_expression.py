"""Which expression of a source line was null, as the error itself names it (issue 36: a fix proposal
guards what failed, not the first receiver on the line).

- Java's helpful NullPointerException: `because the return value of "pkg.Cart.getCustomer()" is null`
  names a call (the guard is `cart.getCustomer()` as the line writes it); `because "cart" is null` or
  `because "this.items" is null` names a variable or field (`<local4>` names nothing).
- CPython's `'NoneType' object has no attribute 'total'` and V8's `Cannot read properties of undefined
  (reading 'total')` name what was read from the null value: the expression before `.total` on the line.
"""
from __future__ import annotations

import re
from typing import Iterable

_RETURNED = re.compile(r'because the return value of "(?:[\w$]+\.)*([\w$]+)\(\)" is null')
_NAMED = re.compile(r'because "((?:this\.)?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)" is null')
_READ = re.compile(r"'NoneType' object has no attribute '(\w+)'|"
                   r"Cannot read propert(?:y|ies) of (?:undefined|null) \(reading '([\w$]+)'\)")


def null_expression(said: Iterable[str], line: str) -> str | None:
    """The expression of `line` the errors in `said` name as the null value, as the line writes it; None
    when no error names one that the line holds."""
    for text in said:
        for match in _RETURNED.finditer(text):
            found = _chain_ending(line, rf"\.{re.escape(match.group(1))}\s*\(")
            if found:
                return found
        for match in _NAMED.finditer(text):
            name = match.group(1)
            if re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", line):
                return name
        for match in _READ.finditer(text):
            attribute = match.group(1) or match.group(2)
            found = _chain_ending(line, rf"\??\.{re.escape(attribute)}(?![\w$])", before=True)
            if found:
                return found
    return None


def _chain_ending(line: str, pattern: str, *, before: bool = False) -> str | None:
    """The receiver chain (`a.b(x).c()`) that ends with the first match of `pattern` on the line: with
    `before`, the chain up to the match (the value read from); else up to the call's closing parenthesis."""
    match = re.search(pattern, line)
    if not match:
        return None
    start = _chain_start(line, match.start())
    if start == match.start():
        return None
    if before:
        return line[start:match.start()].strip() or None
    depth, end = 0, None
    for i in range(match.end() - 1, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            end = i + 1
            break
    return line[start:end].strip() if end else None


def _chain_start(line: str, at: int) -> int:
    """Where the expression whose member access starts at `at` begins: back over names, dots and
    balanced brackets (`order.items()[0]`)."""
    i, depth = at, 0
    while i > 0:
        ch = line[i - 1]
        if ch in ")]":
            depth += 1
        elif ch in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and not (ch.isalnum() or ch in "_$.?"):
            break
        i -= 1
    return i
