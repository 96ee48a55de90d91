"""Whether a line states a measured quantity at or past the bound it names (CONTRACT §2, the leader).

A line that writes how much of something is held beside how much may be held, and the first is at or past the
second, states a resource's state: the cause's, whatever the resource is called (`13.1 GB of 12 GB physical memory
used`, `busy: 5/5 threads`, `Memory used:3435973836 allowed:3435973836`, `disk usage 97% (limit 95%)`, `Usage rate is
98.8% which is beyond the configured <max-disk-usage>`, `running 1234567168B beyond the memory limit`, `pause 9211ms >
200ms`). What makes two numbers a measure and its bound is their shape and the words a line sets beside them, not the
resource's name:

- a pair (`A of B`, `A/B`, `A out of B`) of two sizes or two durations, or of two whole counts, said of a use (`used`,
  `busy`, `usage`, `consumed`, `allocated`, `full`...) or a bound (`limit`, `max`, `capacity`, `quota`, `threshold`,
  `allowed`...) in the same clause; a number and a size (`[4080218931/3.7gb]`: one value written twice) are no pair;
  a version (`1.2/1.3`) or a date (`12/12`) is no measure of a use, and a count of tries (`3 of 5 retries`), of items
  done (`1 of 42`, `segment 3/16`) or of a progress (`downloaded 100%`) names neither a use nor a bound;
- a measure labelled as a use and one labelled as a bound in one clause (`used:A allowed:B`, `usage A (limit B)`);
- a comparison written as one (`A > B`, `A >= B`), of two sizes, durations or labelled counts;
- a measure said to be past a bound (`A exceeds the limit of B`, `A beyond the configured max`, `A over quota`);
- a percentage of a use (`97% used`, `usage 98.8%`, `at 100% of capacity`); what is left (`free`, `available`,
  `remaining`, `left`) of a size or a share counts from the other end (`1.2GB of 100GB free`, `inodes free below 1%`);
  not of a count (`0 of 120 remaining` is a job done, `0/3 nodes available` an unavailability: a symptom's words).

A size or a count is at its bound at 90% of it (`0.9·B`: a disk 95% full is the cause's state); a duration only past
it (a time at 90% of its timeout has not run out). These decide a leader only: the grouping rules do not read them.
"""
from __future__ import annotations

import re

from pipeline.incidents.line_names import holds_any

_NEAR = 0.9  # a size or a count this close to its bound is at it
_FEW = 0.1  # what is left of a bound at or below this share of it says the bound is reached

# units: their dimension and their size (bytes for sizes, seconds for durations)
_SIZES = {"b": 1, "byte": 1, "bytes": 1, "k": 1e3, "kb": 1e3, "ki": 1024, "kib": 1024, "m": None, "mb": 1e6, "mi": 1024 ** 2,
          "mib": 1024 ** 2, "g": 1e9, "gb": 1e9, "gi": 1024 ** 3, "gib": 1024 ** 3, "t": 1e12, "tb": 1e12, "ti": 1024 ** 4,
          "tib": 1024 ** 4}
_TIMES = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0,
          "seconds": 1.0, "min": 60.0, "mins": 60.0, "minutes": 60.0, "h": 3600.0, "hours": 3600.0}
_UNIT = (r"(?:[kmgt]i?b?|b|bytes?|ns|us|µs|ms|s|secs?|seconds?|mins?|minutes|h|hours)")
# a number (thousands may be grouped by commas) and its unit or per cent; not a piece of a word, a version, an
# address or a date (`v1.2`, `10.0.3.4`, `12/12/2026`, `2026-11-14`)
_MEASURE = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(" + _UNIT + r"|%)?(?![\w%]|\.\d|/\d+/|[-:]\d)"
_NUM = r"(?<![\w.:/-])" + _MEASURE
_PAIR = re.compile(_NUM + r"\]?\s*(?:/|\bof\b|\bout of\b)\s*(?:\[\s*)?" + _MEASURE, re.I)
_COMPARED = re.compile(_NUM + r"\s+(?:>=?|≥)\s+" + _MEASURE, re.I)
# a use, a bound, what is left (a word a line sets beside its numbers; a field's name counts: `used=`, `"limit":`)
_USE = r"used\w*|usage\w*|in use|busy|consumed|allocated|occupied|utili[sz]\w*|full|reserved"
_BOUND = r"limit\w*|max\w*|capacity|quota|threshold|allowed|ceiling|watermark"
_LEFT = r"free|available|remaining|left"
_USE_WORD = re.compile(r"\b(?:" + _USE + r")\b", re.I)
_BOUND_WORD = re.compile(r"\b(?:" + _BOUND + r")\b", re.I)
_LEFT_WORD = re.compile(r"\b(?:" + _LEFT + r")\b", re.I)
# a measure labelled: the label, a few marks (`used:`, `usage: [`, `"limit": `), the measure
_LABELLED = re.compile(r"\b(" + _USE + "|" + _BOUND + r")\b[\"'\]]?\s?(?:[:=]|\bis\b|\bof\b|\bat\b)?\s?[\"'\[(]?\s?" + _MEASURE,
                       re.I)
# a measure past a bound: `A exceeds/beyond/over/above (the configured <max-disk-usage>|the 'PHYSICAL' memory limit)`
_PAST = re.compile(_NUM + r"[^.;,\d()]{0,24}?\b(?:exceed\w*|beyond|over|above|past)\s+(?:the\s+|its\s+)?"
                   r"[^.;,\d()]{0,32}?\b(?:" + _BOUND + r")\b(?:\s*(?:of|:|=)?\s*" + _NUM + r")?", re.I)
# a percentage and a use or a bound beside it (`97% used`, `usage 98.8%`, `at 100% of capacity`)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%", re.I)
# where a clause ends: a statement is read within one (`13.1 GB of 12 GB physical memory used; 15.2 GB of 25.2 GB …`)
_CLAUSE = re.compile(r"[;\n]|[.,](?=\s|$)")
# the pieces one of which every statement above holds (the cheap test first: most lines hold none)
_STEMS = ("used", "usage", "in use", "busy", "consumed", "allocated", "occupied", "utili", "full", "reserved", "limit",
          "max", "capacity", "quota", "threshold", "allowed", "ceiling", "watermark", ">", "≥", "free", "available",
          "remaining", "left")
_DIGIT = re.compile(r"\d")
_NEAR_CHARS = 40  # how far from a pair its use or bound is looked for, in its clause
# a count of tries is no resource (a retry budget spent is a reaction: `attempt 3/3 (max 3)`, `retries: 5 of 5`)
_TRIES = re.compile(r"retr|attempt|tries|tried", re.I)
# a measure written beside the limit it is held to (`message_queue_len=4120 (threshold 1000)`, `inflight 400 (limit 400)`)
_BESIDE_LIMIT = re.compile(r"(\d+(?:\.\d+)?)\s*\(\s*(?:threshold|limit|max(?:imum)?)\s*[:=]?\s*(\d+(?:\.\d+)?)\s*\)", re.I)


def over_limit(text: str) -> bool:
    """Whether a text writes a measure at or past the limit it writes beside it (`4120 (threshold 1000)`): the grouping
    rules' reading, and one of `saturated`'s."""
    return "(" in text and any(float(value) >= float(limit) for value, limit in _BESIDE_LIMIT.findall(text[:400]))


def saturated(text: str, lowered: str | None = None) -> bool:
    """Whether `text` states a measured quantity at or past the bound it names (the module doc); `lowered`: `text`
    lower-cased, when the caller has it (the cheap test is run on it: most lines hold none of `_STEMS`)."""
    text = text[:600]
    lowered = text.lower() if lowered is None else lowered
    # (the cheapest test first, on a hot path: `leading.states_failure` reads every line)
    if not holds_any(lowered, _STEMS) or not _DIGIT.search(text):
        return False
    return over_limit(text) and not _TRIES.search(text) or any(_clause_saturated(clause) for clause in _CLAUSE.split(text)
                                                               if _DIGIT.search(clause))


def _value(number: str, unit: str | None) -> tuple[str, float | None]:
    """A number's dimension (`size`, `time`, `percent` or `count`) and its value in the dimension's unit."""
    amount = float(number.replace(",", ""))
    if not unit:  # a count is whole: a number with a fraction and no unit is no count (a version, `1.2/1.3`)
        return ("count", amount) if "." not in number else ("other", None)
    unit = unit.lower()
    if unit == "%":
        return "percent", amount
    if unit in _TIMES:
        return "time", amount * _TIMES[unit]
    size = _SIZES.get(unit)
    return ("size", amount * size) if size else ("other", None)


def _at_bound(dimension: str, value: float, bound: float, *, left: bool = False) -> bool:
    """Whether `value` (of `dimension`) is at or past `bound`; `left`: `value` is what is left of it."""
    if bound <= 0:
        return False
    if left:
        return value <= _FEW * bound
    return value >= (bound if dimension == "time" else _NEAR * bound)


def _clause_saturated(clause: str) -> bool:
    use, bound, left = _USE_WORD.search(clause), _BOUND_WORD.search(clause), _LEFT_WORD.search(clause)
    counts = not _TRIES.search(clause)  # (whether plain counts may be measures of a use here)
    if (">" in clause or "≥" in clause) and _compared(clause, counts and (use or bound)):
        return True
    if not (use or bound or left):
        return False  # (every other statement has a use, a bound or what is left beside its numbers)
    return (_paired(clause, counts) or bool(use or bound) and _labelled(clause, counts) or bool(bound) and _past(clause)
            or _percent(clause))


def _compared(clause: str, labelled: object) -> bool:
    """`A > B`: of two sizes or durations (or two counts a use or a bound is said of), A past B."""
    for match in _COMPARED.finditer(clause):
        (dim_a, a), (dim_b, b) = _value(*match.group(1, 2)), _value(*match.group(3, 4))
        if a is None or b is None or dim_a != dim_b or dim_a == "other" or (dim_a == "count" and not labelled):
            continue
        if a >= b > 0:
            return True
    return False


def _near(clause: str, start: int, end: int, word: re.Pattern[str]) -> bool:
    """`word` in the clause within `_NEAR_CHARS` before `start` or after `end`, with no other number between (the
    word said of this measure, not of another: `usage report 12/12: 40% used` says `used` of the 40%)."""
    before = clause[max(0, start - _NEAR_CHARS):start]
    after = clause[end:end + _NEAR_CHARS]
    found = list(word.finditer(before))
    if found and not any(c.isdigit() for c in before[found[-1].end():]):
        return True
    first = word.search(after)
    return first is not None and not any(c.isdigit() for c in after[:first.start()])


def _paired(clause: str, counts: bool) -> bool:
    """`A of B`, `A/B`: two measures of one dimension (not a number and a size), a use, a bound or what is left beside."""
    for match in _PAIR.finditer(clause):
        (dim_a, a), (dim_b, b) = _value(*match.group(1, 2)), _value(*match.group(3, 4))
        if a is None or b is None or dim_a != dim_b or dim_a in ("other", "percent") or dim_a == "count" and not counts:
            continue
        start, end = match.span()
        if _near(clause, start, end, _LEFT_WORD) and not _near(clause, start, end, _USE_WORD):
            # (of a size only: a count left is work to do or things up, `0 of 120 remaining` is a job done and `0/3
            # nodes available` an unavailability, a symptom's; a time left is a deadline's)
            if dim_a == "size" and _at_bound(dim_a, a, b, left=True):
                return True
        elif (_near(clause, start, end, _USE_WORD) or _near(clause, start, end, _BOUND_WORD)) and _at_bound(dim_a, a, b):
            return True
    return False


def _labelled(clause: str, counts: bool) -> bool:
    """A measure labelled as a use and one labelled as a bound, of one dimension, the first at the second."""
    uses: list[tuple[str, float]] = []
    bounds: list[tuple[str, float]] = []
    for match in _LABELLED.finditer(clause):
        dimension, value = _value(*match.group(2, 3))
        if value is None or dimension == "other" or dimension == "count" and not counts:
            continue
        (bounds if _BOUND_WORD.fullmatch(match.group(1)) else uses).append((dimension, value))
    return any(d_use == d_bound and _at_bound(d_use, used, limit) for d_use, used in uses for d_bound, limit in bounds)


def _past(clause: str) -> bool:
    """A measure said to be past a bound (`A beyond the memory limit`, `A exceeds the limit of B` with A at B)."""
    for match in _PAST.finditer(clause):
        dim_a, a = _value(*match.group(1, 2))
        if a is None or a <= 0 or dim_a == "other":
            continue
        if match.group(3) is None:
            return True
        dim_b, b = _value(*match.group(3, 4))
        if b is not None and dim_b == dim_a and _at_bound(dim_a, a, b):
            return True
    return False


def _percent(clause: str) -> bool:
    """A percentage a use or a bound is said of (within a few words), at its bound; of what is left, near none."""
    for match in _PERCENT.finditer(clause):
        share = float(match.group(1))
        start, end = match.span()
        window = clause[max(0, start - 24):min(len(clause), end + 24)]
        if _LEFT_WORD.search(window) and not _USE_WORD.search(window):
            if share <= _FEW * 100:
                return True
        elif (_USE_WORD.search(window) or _BOUND_WORD.search(window)) and share >= _NEAR * 100:
            return True
    return False
