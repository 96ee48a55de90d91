"""An incident's title in a bounded length, its words chosen so that what tells it from another
incident is in view: the failure before the context that wraps it, no field that says nothing.

Each rule holds for lines nobody has seen because it is about the form of a line, not its words:
- a `key=` with no value says nothing (`logname= uid=0 … ruser= rhost=…`), so it is left out, and so is
  a source file's path and line before a colon (`pkg/…/reflector.go:229: Failed to watch …`): where, not what;
- an exception named inside a longer line (`Task: … exited : java.net.NoRouteToHostException: No Route to
  Host from …`) is the failure, and what wraps it is its context: the title starts at the exception's
  own message and keeps the context after it while there is room; a chain repeating the same exception
  later is not said twice; one inside a bracket the context opened (`… [root cause: X: msg]`) says its
  message up to the bracket's close, and the context is said without the bracket; a line wrapping the message
  its stack gives its exception (`POST /v2/… failed: 'NoneType' object has no …`) says that message first;
- a line that ends at a colon (`Unexpected Exception:`) promised what follows it: the exception, the
  message's next line or the stack's first says it; when the writer logged nothing after it, the title says
  which part of the program wrote it (`… in NIOServerCnxn`), not a colon over nothing;
- the template miner's placeholders (`<NUM>`, `<TS>`, `<HEX>`) never reach a title;
- a title longer than the bound is cut at a word, not inside an address."""
from __future__ import annotations

import re

from pipeline.state import TEMPLATE_PLACEHOLDER, names_service

TITLE_CHARS = 120

_EMPTY_FIELD = re.compile(r"(?<![^\s;,(\[])[A-Za-z_][\w.-]*=(?=[\s;,)\]]|$)")
# a source file's path and line said before a colon (klog's `pkg/mod/k8s.io/…/reflector.go:229: Failed to …`):
# a path (a `/` in it, no `://`), a file name with an extension of letters, its line (and column), a colon;
# an address (`db.example.com:5432:`) has no path, a URL its `://`
_SOURCE_LOCATION = re.compile(r"(?<!\S)(?![^\s]*://)[\w.@+~-]*/[\w.@+~/-]*\.[A-Za-z]{1,6}:\d+(?::\d+)?:(?=\s)")
# a dotted (Java, .NET, Python module) or bare CamelCase exception or error type, then its message
_NAMED_EXCEPTION = re.compile(r"(?<![\w.$])((?:[A-Za-z_]\w*[.$])*([A-Z]\w*(?:Exception|Error|Fault|Failure)))\s*:\s*")


def empty_fields_dropped(text: str) -> str:
    """`text` without its `key=` fields that hold no value, nor the source locations it names before a
    colon (`pkg/mod/…/reflector.go:229:`): where the line was written, not what failed."""
    return " ".join(_SOURCE_LOCATION.sub("", _EMPTY_FIELD.sub("", text)).split())


def failure_first(text: str) -> str:
    """A line that names an exception after some context: the exception and its own message first,
    the context after it ("NoRouteToHostException: No Route to Host … · Task: attempt_… exited")."""
    found = _NAMED_EXCEPTION.search(text)
    if found is None or found.start() == 0:
        return text
    qualified, short = found.group(1), found.group(2)
    before, rest = text[:found.start()], text[found.end():]
    opened = _open_bracket(before)
    if opened is not None:  # named inside a bracket the context opened (`[root cause: X: msg] …`)
        close = rest.find(_CLOSERS[before[opened]])
        after = rest[close + 1:] if close >= 0 else ""
        rest = rest[:close] if close >= 0 else rest
        before = f"{before[:opened].rstrip()} {after.strip()}"
    again = rest.find(qualified)  # a chain saying the same exception again
    own = (rest[:again] if again > 0 else rest).strip().rstrip(":;,-").strip()
    context = before.strip().rstrip(":;,-").strip()
    said = f"{short}: {own}" if own else short
    return f"{said} · {context}" if context else said


_CLOSERS = {"[": "]", "(": ")", "{": "}"}


def _open_bracket(text: str) -> int | None:
    """Where the last bracket `text` opens and does not close is, if any."""
    stack: list[int] = []
    for i, char in enumerate(text):
        if char in _CLOSERS:
            stack.append(i)
        elif char in _CLOSERS.values() and stack and _CLOSERS[text[stack[-1]]] == char:
            stack.pop()
    return stack[-1] if stack else None


def own_message_first(text: str, *, exception: str | None, stack: str | None) -> str:
    """A line that wraps its exception's own message in what was being done (`POST /v2/… failed: <message>`):
    the message the stack gives the exception (its `Name: message` line, the first for Java, the last for
    Python) is the failure, said first, and the rest of the line after it as its context."""
    if not exception or not stack:
        return text
    names = {exception.strip(), re.split(r"[.$:\\/]", exception.strip())[-1]}
    own = next((line.split(":", 1)[1].strip() for line in stack.splitlines()
                if ":" in line and line.split(":", 1)[0].strip() in names), "")
    at = text.find(own) if len(own) >= 8 else -1
    if at <= 0:
        return text
    before = text[:at].rstrip().removesuffix(":").rstrip()
    for name in names:  # the line saying the exception's name before its message says nothing more
        before = before.removesuffix(name).rstrip()
    if not before.rstrip(":;,-").strip():
        return text
    context = f"{before} {text[at + len(own):]}".strip().rstrip(":;,-").strip()
    return f"{own} · {context}"


def said_after_colon(text: str, *, more: str, service: str) -> str:
    """A text ending at a colon, completed by what followed it (`more`), or by who wrote it."""
    if not text.endswith(":"):
        return text
    head = text[:-1].rstrip()
    if more:
        return f"{head}: {more}"
    return f"{head} in {service}" if names_service(service) else head


def bounded(text: str, limit: int = TITLE_CHARS) -> str:
    """`text` without placeholders, cut at a word to at most `limit` characters (with `…`)."""
    text = " ".join(TEMPLATE_PLACEHOLDER.sub("…", text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= limit // 2 else cut).rstrip(" ,;:-·") + "…"
