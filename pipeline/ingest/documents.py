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
reads the text as it would any other record.
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
_PREFIX = re.compile(r"(</?)[A-Za-z_][\w.-]*:(?=[A-Za-z_])")  # `<log4j:event` without its namespace declared
_PREFIXED_ATTRIBUTE = re.compile(r"(\s)xmlns(?::[\w.-]+)?\s*=\s*(?:\"[^\"]*\"|'[^']*')")
_TAG = re.compile(r"<(/?)(?=[A-Za-z_/])|/>")


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
    elif text.startswith("<") and text.rstrip().endswith(">") and XML_OPENER.match(text.split("\n", 1)[0].rstrip()):
        obj = xml_object(text)
        kind = "xml"
    else:
        return None
    return record_from_object(obj, opts, format=kind) if obj is not None else None
