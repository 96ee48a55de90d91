"""A source location, by its shape: where in a program's code a line was written, never who wrote it.

Loggers write the file and line that logged a record (zap's `caller`, logrus's `file`, Go's log
`Lshortfile`, log4j's `%F:%L` as Cassandra writes it, Python's `%(filename)s:%(lineno)d`, glog/klog's
`file.go:123]`, log4j's `(File.java:123)`): a file name with a source extension, optionally after a
path, then `:line` or `:line:col`, possibly in brackets, parentheses or braces, possibly followed by
the colon that closes a header. Such a token is the record's code location (`fields.caller`): one
program's lines name as many locations as it has log calls, so it is never the service or the host.

The extension is what tells `CassandraDaemon.java:687` from a host and port (`db.internal:5432`): a
source file's, not a domain's (a few, `.pl`, `.sh`, `.rs`, `.cc`, `.ml`, are both; a column of them
is still read by its other values, and a service named `host:port` is no service either).
"""
from __future__ import annotations

import re

# the source extensions of the languages loggers are written in (lower case; matched case-insensitively)
_EXTENSIONS = ("java|kt|kts|scala|groovy|clj|go|py|pyx|rb|erb|php|js|mjs|cjs|jsx|ts|tsx|cs|fs|vb|"
               "c|h|cc|cpp|cxx|hpp|hh|hxx|m|mm|swift|rs|ex|exs|erl|hrl|lua|pl|pm|sh|dart|zig|nim|ml|hs|"
               "coffee|vue|svelte")
_LOCATION = re.compile(
    rf"(?P<loc>(?:[A-Za-z]:)?(?:[\w.@~+-]*[/\\])*[\w$@+-]+(?:\.[\w$@+-]+)*\.(?:{_EXTENSIONS}):\d{{1,7}}(?::\d{{1,5}})?)",
    re.IGNORECASE)
LOCATION = _LOCATION.pattern  # for a header's pattern: its `loc` group, to be renamed
_WRAPPED = re.compile(rf"^[\[({{<]?{_LOCATION.pattern}[\])}}>]?:?$", re.IGNORECASE)


def code_location(token: object) -> str | None:
    """The `file:line[:col]` a token is, without its brackets or closing colon; None when it is not one."""
    if not isinstance(token, str) or len(token) > 400 or ":" not in token:
        return None
    m = _WRAPPED.match(token.strip())
    return m["loc"] if m is not None else None


def is_code_location(token: object) -> bool:
    """Whether a token (a header column's value, a service or host a record names) is a source location."""
    return code_location(token) is not None
