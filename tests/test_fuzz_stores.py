"""Property-based fuzzing into the stores: every field of every format (JSON keys and
values, syslog, logfmt, text) holding any text, NULs, controls, lone surrogates and astral
characters included, is read and stored through the incident step on SQLite and on PostgreSQL:
each line an event or a dead letter, never a traceback and never a stopped batch. The figures
(inputs tried and stored per store) are reported as a warning at the end of the module."""
from __future__ import annotations

import json
import warnings
from collections import Counter

from hypothesis import HealthCheck, example, given, settings, strategies as st

from pipeline.ingest.reading import LogFile
from pipeline.state import LogEvent
from tests.support import BOTH_BACKENDS
from tests.test_fuzz import FuzzFigures

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
FIGURES: Counter = Counter()

TEXT = st.text(st.characters(codec=None, blacklist_categories=()), max_size=30)
TIME = "2026-11-28T10:00:00Z"


def quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# each format's line with the fuzzed key `k` and value `v` in every field it has
LINES = {
    "json": lambda k, v: json.dumps({"_time": TIME, "level": v or "ERROR", "service": v, "host": v, "exception": v,
                                     "message": f"boom {v}", "stack": v, "trace_id": v, k: v, "extra": {k: [v]}}),
    "syslog": lambda k, v: f"<11>Nov 28 10:00:00 h{v} {k or 'app'}[12]: boom {v}",
    "logfmt": lambda k, v: (f"time={TIME} level=error service={quoted(v)} host={quoted(v)} "
                            f"{''.join(c for c in k if c.isalnum()) or 'k'}={quoted(v)} msg={quoted('boom ' + v)}"),
    "text": lambda k, v: f"2026-11-28 10:00:00,000 ERROR [{k}] {v} - boom {v}\n\tat a.B{v}(B.java:1)",
}


@BOTH_BACKENDS
@FUZZ
@given(key=TEXT, value=TEXT)
@example(key="k\x00", value="a\x00b")  # PostgreSQL's text cannot hold a NUL (issue 39.1)
@example(key="\x1b[2J", value="\x1b]0;title\x07\u202e\ud800")
def test_every_field_of_every_format_is_stored_or_dead_lettered_on_both_stores(engine, backend, tmp_path, key, value):
    for name, line in LINES.items():
        path = tmp_path / f"{name}.log"
        text = "\n".join([line(key, value), line("k", "ok")]) + "\n"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        items = LogFile(path, max_bytes=engine.settings.max_event_bytes).read(
            0, final=True, settled=True, budget=10_000).items
        assert items, name
        counts = engine.incidents.store_batch(items, cursor=None)  # raises: a stopped batch
        FIGURES[f"{backend} inputs"] += 1
        FIGURES[f"{backend} events"] += sum(isinstance(i, LogEvent) for i in items)
        FIGURES[f"{backend} dead letters"] += counts.rejected


def test_zz_fuzz_store_figures():
    """Print the figures (a warning, so CI shows them whatever the capture mode): every store was
    fuzzed (a traceback or a stopped batch has already failed the test that met it)."""
    backends = {key.split()[0] for key in FIGURES if key.endswith("inputs")}
    assert backends and all(FIGURES[f"{b} inputs"] >= 100 for b in backends), dict(FIGURES)
    warnings.warn(FuzzFigures("fuzz into the stores: " + ", ".join(f"{k} {v}" for k, v in sorted(FIGURES.items()))),
                  stacklevel=1)
