"""When the lines that name a category do not state its cause (issue 36: abstain rather than guess).

The offline analyzer names a category from the lines carrying its signatures or the ideas of its cause. Some
of those lines say, in their own words, that they are not that cause, or only guess it:

- a line that *guesses* its cause (`was sent SIGKILL! Perhaps out of memory?`): the writer's hedge, a question
  mark right after the words or "perhaps/maybe/possibly" before them, is no statement of the cause (`hedged`);
- a callee that failed first on a file of its own (`open /prometheus/wal/…: read-only file system`,
  `No such file or directory: '/usr/share/GeoIP/…'`): its callers' refusals or timeouts are what that failure
  left, and the file it could not use is the cause on its side, in words no category reads (`file_named`).

Each property reads the line's structure (a hedge around the matched words, an absolute file path the failing
operation names), not its wording; the offline analyzer (pipeline/analyst/offline.py) decides what follows:
another category said first is taken, capped, or the analysis is `unknown` with its evidence report.
"""
from __future__ import annotations

import re

# a hedge: "perhaps", "maybe", "possibly", "probably", "might be" said before the matched words in the same clause (a
# comma or colon ends one: `maybe the server is down: Connection refused` states the refusal)
_HEDGE_BEFORE = re.compile(r"\b(?:perhaps|maybe|possibly|probably|might be|may be)\b[^.!;:,\n]*$", re.I)
# ... or a question mark right after them (`disk full?`); a question later in the line asks something else (libpq's
# `Connection refused Is the server running on host "db" … on port 5432?`, flattened to one line, states the refusal)
_QUESTION_AFTER = re.compile(r"^\s*\?")


def hedged(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every span of `text` (the matched words of a signature) sits in a clause its writer hedged (a hedge
    word before or in it, in the same clause, or a question mark right after it) or inside a hedged span; no
    spans, no hedge."""
    def one(start: int, end: int) -> bool:
        return bool(_HEDGE_BEFORE.search(text[:end]) or _QUESTION_AFTER.match(text[end:])
                    or text[start:end].rstrip().endswith("?"))
    guessed = [(s, e) for s, e in spans if one(s, e)]
    # ... a match inside a hedged one (`was sent SIGKILL` of `was sent SIGKILL! Perhaps out of memory`) is its part
    return bool(guessed) and all(one(s, e) or any(gs <= s and e <= ge for gs, ge in guessed) for s, e in spans)


# an absolute file path of two segments or more, not a socket's (`unix:/run/php.sock`), not a URL's path
# (`GET /api/x`, `https://h/x`), not a request's path after a method
_PATH = re.compile(r"(?<![\w:/.-])(?<!unix:)(/(?:[\w.@+-]+/)+[\w.@+-]+)")
_METHOD_BEFORE = re.compile(r"\b(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\s+$")


def file_named(text: str) -> str | None:
    """The absolute file path a failing line's statements (not its trace's indented frames) name as its operation's object (`open /var/lib/x.db: …`,
    `No such file or directory: '/usr/share/x'`), or None: a unix socket (`unix:/run/x.sock`), a URL's path
    (`http://h:8080/api/x`) and a request's (`GET /api/x HTTP/1.1`) are peers and requests, not files."""
    for line in text.splitlines():
        if line[:1].isspace():  # a trace's frame (`\tat …`, `  File "…", line 3`, `\t/app/main.go:42`), not a statement
            continue
        for m in _PATH.finditer(line):
            before, after = line[:m.start()], line[m.end():]
            # a source file's line (`/app/main.go:42`, `"/app/x.py", line 3`) is code, not a file used
            if _METHOD_BEFORE.search(before) or re.search(r"unix:$|https?:/?$|://[^\s]*$", before) or \
                    re.match(r":\d+|\"?, line \d+", after):
                continue
            return m.group(1)
    return None


def spans_of(text: str, signatures: list[str] | tuple[str, ...]) -> list[tuple[int, int]]:
    """Where in `text` each matched signature lies (a literal's every occurrence, case-insensitive; a `re:` one's
    every match): the words `hedged` reads around."""
    lowered, spans = text.lower(), []
    for sig in signatures:
        if sig.startswith("re:"):
            try:
                spans += [m.span() for m in re.finditer(sig[3:], text, re.I)]
            except re.error:
                continue
        else:
            needle, at = sig.lower(), lowered.find(sig.lower())
            while needle and at >= 0:
                spans.append((at, at + len(needle)))
                at = lowered.find(needle, at + 1)
    return spans
