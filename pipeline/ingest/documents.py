"""Records written as a multi-line document other than JSON: an XML element or a YAML document.

Some loggers write each event as a document that spans lines: log4j2's XmlLayout (`<Event
timeMillis="…" level="INFO" …>` … `</Event>`), log4j 1's XMLLayout (`<log4j:event …>`), log4j2's
YamlLayout (`---` then `key: value` lines). The joiner (pipeline/ingest/multiline.py) keeps such a
document whole, as it does a pretty-printed JSON object; here it is read into an object, and the object
is read as a JSON logger's is (`structured.record_from_object`: each key's role by its name or values).

An XML element becomes a dict: its attributes, then each child element under its tag name (the
namespace and any `prefix:` left out), as its text when it holds only text, else as the dict of its
own attributes and children (a tag repeated is a list); a value that is an integer written plainly
(`timeMillis="1493121664118"`, not `0012`) is that number, as JSON would write it. A YAML document's mapping is taken as it is,
its dates and times written back as ISO 8601 text (YAML reads `2017-04-25T12:01:04Z` as a datetime).
Anything else (an element that does not parse, a document that is not a mapping) is None: the caller
reads the text as it would any other record. So is an element over `MAX_XML_CHARS` or one that names a
DOCTYPE or ENTITY (nothing is expanded or fetched).

Any logger writing each record as one element is read this way (issue 34): an element whole on one line
(Zend/Laminas' Xml formatter, `one_line_element`), an opening tag with a child after it on its line
(log4net's XmlLayout, `XML_HEAD`), records inside a bare wrapping tag (java.util.logging's `<log>`,
`wraps_records`); the fields' roles are `record_from_object`'s, as a JSON record's.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date
from typing import Any

from pipeline.ingest.parsed import ParseOptions, ParsedRecord
from pipeline.ingest.structured import record_from_object

# an element's opening tag alone on its line (its attributes may go on over the next lines): the line
# that opens an XML document; `<ERROR> text` or `<134>…` (a syslog priority) is none
XML_OPENER = re.compile(r'^<[A-Za-z_][\w.:-]*(?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|\'[^\']*\'))*\s*>?$')
YAML_START = "---"
YAML_END = "..."
# a line a YAML mapping writes: `key:` (then a blank or the end), an indented one, a `- item`, a comment, its end
YAML_LINE = re.compile(r"""^(?:[A-Za-z_"'][^:\s]*:(?:\s|$)|[ \t]|- |#|\.\.\.$)""")
# an opening tag followed on its line by a child element or CDATA (log4net's `<log4net:event …><log4net:message>`
# whose message goes on over the next lines); `<ERROR> text` is none
XML_HEAD = re.compile(r'^<[A-Za-z_][\w.:-]*(?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|\'[^\']*\'))*\s*><(?:[A-Za-z_]|!\[CDATA\[)')
# an opening tag with no attribute but namespaces (`<log>`, `<Events xmlns="…">`): it may wrap a file's records
_BARE_OPENER = re.compile(r'^<[A-Za-z_][\w.:-]*(?:\s+xmlns(?::[\w.-]+)?\s*=\s*(?:"[^"]*"|\'[^\']*\'))*\s*>$')
# an element whole on one line, closed by its own tag (`<logEntry><timestamp>…</logEntry>`)
_ONE_LINE = re.compile(r"^<([A-Za-z_][\w.:-]*)[\s>].*</\1\s*>$", re.S)
MAX_XML_CHARS = 1 << 20  # an element longer than this is not parsed (the joiner caps a record well below it)
_PREFIX = re.compile(r"(</?)[A-Za-z_][\w.-]*:(?=[A-Za-z_])")  # `<log4j:event` without its namespace declared
_PREFIXED_ATTRIBUTE = re.compile(r"(\s)xmlns(?::[\w.-]+)?\s*=\s*(?:\"[^\"]*\"|'[^']*')")
_TAG = re.compile(r"<(/?)(?=[A-Za-z_/])|/>")


def one_line_element(line: str) -> bool:
    """Whether a line (stripped) is one element, opened and closed by its own tag: a cheap look first."""
    return line[-1:] == ">" and line[1:2].isalpha() and _ONE_LINE.match(line) is not None


def opens_element(line: str) -> bool:
    """Whether a line (stripped) opens an XML element that goes on over the next lines (module doc)."""
    return (XML_OPENER.match(line) is not None or XML_HEAD.match(line) is not None) and xml_depth(line) > 0


def wraps_records(first: str, line: str) -> bool:
    """Whether `first`, a document's only line so far, is a wrapper around records rather than one:
    a bare opening tag (`<log>`) whose next line, not indented, opens an element of its own or is one
    holding children (java.util.logging's `<log>` then `<record>`; log4j2's `<Events>` then `<Event …>`)."""
    if line[:1] != "<" or not _BARE_OPENER.match(first.strip()):
        return False
    stripped = line.rstrip()
    return opens_element(stripped) or (one_line_element(stripped) and len(_TAG.findall(stripped)) > 2)


def xml_depth(line: str) -> int:
    """How many elements a line of an XML document opens, less those it closes (`<a`, `</a>`, `/>`)."""
    depth = 0
    for m in _TAG.finditer(line):
        depth += -1 if m.group(0) == "/>" or m.group(1) else 1
    return depth


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _typed(text: str) -> Any:
    """An XML value as JSON would write it: an integer written plainly is that number."""
    return int(text) if text.isdigit() and len(text) < 20 and str(int(text)) == text else text


def _element(node: ET.Element) -> Any:
    """An element → its text (no attributes, no children) or a dict of attributes and children."""
    children = list(node)
    if not children and not node.attrib:
        return _typed((node.text or "").strip())
    out: dict[str, Any] = {_local(k): _typed(v) for k, v in node.attrib.items()}
    for child in children:
        name, value = _local(child.tag), _element(child)
        if name in out:
            out[name] = [*out[name], value] if isinstance(out[name], list) else [out[name], value]
        else:
            out[name] = value
    text = (node.text or "").strip()
    if text:
        out.setdefault("text", text)
    return out


def xml_object(text: str) -> dict[str, Any] | None:
    """An XML element's text → a dict (module doc); None when it does not parse or holds nothing."""
    if len(text) > MAX_XML_CHARS or "<!DOCTYPE" in text or "<!ENTITY" in text:
        return None  # bounded; no declared entities (nothing expands, nothing is fetched)
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        try:  # prefixes without their namespace declared (log4j 1's `<log4j:event>`, cut from a file)
            root = ET.fromstring(_PREFIX.sub(r"\1", _PREFIXED_ATTRIBUTE.sub(r"\1", text)))
        except ET.ParseError:
            return None
    value = _element(root)
    return value if isinstance(value, dict) and value else None


def _iso_dates(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _iso_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_iso_dates(v) for v in value]
    return value


def yaml_object(text: str) -> dict[str, Any] | None:
    """A YAML document's text (its `---` and `...` lines included) → its mapping; None otherwise."""
    import yaml

    try:
        value = yaml.safe_load(text.removesuffix(YAML_END))
    except yaml.YAMLError:
        return None
    return _iso_dates(value) if isinstance(value, dict) and value else None


def parse_document(text: str, opts: ParseOptions) -> ParsedRecord | None:
    """A record that is an XML element or a YAML document (module doc) → ParsedRecord; None otherwise."""
    if text.startswith(YAML_START) and text[3:4] in ("\n", "\r", " ", ""):
        obj = yaml_object(text)
        kind = "yaml"
    elif text.startswith("<") and text.rstrip().endswith(">") and (opens_element(text.split("\n", 1)[0].rstrip())
                                                                   or one_line_element(text.rstrip())):
        obj = xml_object(text)
        kind = "xml"
    else:
        return None
    return record_from_object(obj, opts, format=kind) if obj is not None else None
