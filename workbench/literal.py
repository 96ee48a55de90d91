"""The Streamlit sink's one sanitiser: text the workbench did not write (log fields, people's
names, comments and reasons, messages that quote them) as st.markdown, st.caption, st.info and
the like, labels and help show it: literally, never as markup.

Backslash-escaping every Markdown character stops emphasis, links, images, HTML, KaTeX (`$`) and
Streamlit's `:red[...]` colours, but not what the renderer finds in the text after the escapes are
read: GFM autolinks (`https://…`, `www.…`, `a@b.c`) and `:shortcode:` emoji and icons. A WORD JOINER
(U+2060, invisible and zero-width) after the `:` of `://` or of a `:name:`, after an `@` and after a
`www` breaks those patterns apart without changing what the reviewer reads. Tables, st.text, st.code and st.html with escaped
HTML (evidence_view.marked_html) need none of this: they never render markup.

Every widget, markup or not, would still apply the characters a reader cannot see: a right-to-left
override makes `gpj.exe` read `exe.jpg`, zero-width spaces split a name, tag characters hide a
text. So `escape_markdown` and `plain_label` show each as `‹U+XXXX›` (pipeline.state.visible, before
the WORD JOINERs this module adds), and `plain` does the same for what goes into st.text, st.code,
st.json, tables (a DataFrame's text cells) and the escaped HTML of evidence_view.
"""
from __future__ import annotations

import functools
import re
from typing import Any, TypeVar

import pandas as pd

from pipeline.state import CATEGORIES, visible

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&])")
WORD_JOINER = "\u2060"
T = TypeVar("T")
# where the renderer would find a link or a shortcode in the escaped text: `://`, `@` before a
# name, `www.`, and `:name:` / `:material/name:` (a name starting with a letter, `+` or `-`, so
# times such as 10:00:01 stay as they are)
_LINK_STARTS = re.compile(r"(?<=\\:)(?=//)|(?<=@)(?=[\w\\])|(?<=[wW]{3})(?=\\\.)"
                          r"|(?<=\\:)(?=(?:[A-Za-z/]|\\[+\-])(?:[\w/]|\\[+\-_])*\\:)")


def escape_markdown(text: object) -> str:
    """`text` as Streamlit's markdown shows it literally: no link, image, emphasis, colour, formula,
    tag, autolink or emoji comes out of it."""
    return _LINK_STARTS.sub(WORD_JOINER, _MARKDOWN_SPECIALS.sub(r"\\\1", visible(str(text))))


def plain_label(text: object, limit: int = 90) -> str:
    """One line of `text`, at most `limit` characters, safe in a widget or expander label or a help text."""
    one_line = " ".join(str(text).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    return escape_markdown(one_line)


def plain(value: T) -> T:
    """`value` for a widget that renders no markup (st.text, st.code, st.json, a table): every
    invisible or direction-changing character in its text shown as `‹U+XXXX›`; a DataFrame's or a
    mapping's or list's texts alike (a copy: the data read stays as it was)."""
    out: Any
    if isinstance(value, str):
        out = visible(value)
    elif isinstance(value, pd.DataFrame):
        # a copy (copy-on-write: the read frame never changes) whose text columns are mapped only
        # where a cell changes: mapping every column cost ~5 ms a table of any size (pandas' string
        # arrays), three tables on every run of the incident page (bench/approve_rerun.py)
        out = value.copy(deep=False)
        for column in out.columns:
            series = out[column]
            if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
                continue
            cells = series.tolist()
            if any(shown is not cell and shown != cell for shown, cell in zip(map(plain, cells), cells)):
                out[column] = series.map(plain)
    elif isinstance(value, dict):
        out = {plain(k): plain(v) for k, v in value.items()}
    elif isinstance(value, (list, tuple)):
        out = type(value)(plain(v) for v in value)
    else:
        out = value
    return out


# a Markdown code span: the analyst quotes the log's words so (`HikariPool-1`), whatever the model; as in
# CommonMark a span goes on over a line break (a quoted trace line's "\n  Position: 78", walkthrough s58:
# skipped, the wrong backticks were paired), not over a blank line (a paragraph's end)
_SPAN_CHAR = r"(?:[^\n]|\n(?![ \t]*(?:\n|$)))"
_CODE_SPAN = re.compile(rf"(?<!`)(`+)(?!`)(?=\s*[^`\s])({_SPAN_CHAR}+?)(?<!`)\1(?!`)")


# a category's code in a sentence the engine wrote ("which is dns_resolution"): said as the page says
# it ("dns resolution"); codes without an underscore are words already
_CATEGORY_CODE = re.compile(r"\b(" + "|".join(sorted((c for c in CATEGORIES if "_" in c), key=len, reverse=True))
                            + r")\b")
# a knowledge doc named by its id in the analyst's sentences ("the fix hints of doc mysql-lock-wait-timeout")
_DOC_ID = re.compile(r"\bdoc ([a-z0-9][a-z0-9-]*[a-z0-9])\b")
# the analyst's "(1 signatures found)" after a doc it names
_ONE_SIGNATURE = re.compile(r"\b1 signatures found\b")


def categories_in_text(text: str) -> str:
    """A sentence with the categories' codes in it, each said in words."""
    return _CATEGORY_CODE.sub(lambda m: m.group(1).replace("_", " "), text or "")


@functools.lru_cache(maxsize=1)
def doc_titles() -> dict[str, str]:
    """The shipped knowledge docs' titles by id (read once: the docs the page's analyses cite)."""
    from pipeline import services

    try:
        return services.knowledge_doc_titles()
    except Exception:  # a docs folder that does not parse: the ids stay as written
        return {}


def docs_in_text(text: str) -> str:
    """A sentence naming knowledge docs by id, each named by its title instead ("the doc “MySQL 1205:
    Lock wait timeout exceeded”"); an id no shipped doc has stays as written."""
    if "doc " not in text:
        return text
    titles = doc_titles()
    out, at = [], 0
    for m in _DOC_ID.finditer(text):
        title = titles.get(m.group(1))
        if title is None or m.start() < at:
            continue
        out.append(text[at:m.start()] + f"the doc \u201c{title}\u201d")
        at = m.end()
        if text.startswith(f": {title}", at):  # the analyst's own "doc <id>: <title>": titled once (walkthrough s58)
            at += len(title) + 2
    return _ONE_SIGNATURE.sub("1 signature found", "".join(out) + text[at:])


def analysis_text(text: object) -> str:
    """An analysis's text (root cause, recommended action and steps, notes) as the reviewer reads it
    wherever it is shown: the backticks that mark the log's words as code spans dropped (they are
    markup, shown as text they read as stray characters), the categories' codes said in words and the
    knowledge docs named by their titles (walkthrough s57: "which is dns_resolution.", "doc
    mysql-lock-wait-timeout (db_deadlock)"), everything else as written. Then shown through `plain` or
    `escape_markdown` like any text the workbench did not write, so the log's words never style the page."""
    return categories_in_text(docs_in_text(_CODE_SPAN.sub(r"\2", str(text))))
