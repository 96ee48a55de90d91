"""Property-based fuzzing: every generated input to event parsing, correlation, state
edits and settings is accepted, or refused with a one-line reason of ours, never a traceback, and
a bad line never hides its neighbours. Bounded and derandomized for CI; the figures are reported
as a warning at the end of the module (`FuzzFigures`), so CI output shows them."""
from __future__ import annotations

import json
import warnings
from collections import Counter
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.config import SETTINGS, Settings
from pipeline.errors import IncidentIQError, InvalidEdit, InvalidEvent, UsageError
from pipeline.incidents import correlation
from pipeline.ingest.events import DeadLetter, normalize, read_jsonl
from pipeline.review.edits import edited_values
from pipeline.state import EDITABLE_FIELDS, RCA, IncidentState, LogEvent, Recommendation

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FIGURES: Counter = Counter()


class FuzzFigures(UserWarning):
    """The fuzz suite's figures, shown in the warnings summary."""


# text including lone surrogates, NULs, controls and astral characters
TEXT = st.text(st.characters(codec=None, blacklist_categories=()), max_size=40)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | TEXT
JSON = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TEXT, kids, max_size=4),
                    max_leaves=30)
TIMES = (st.integers(min_value=-10**20, max_value=10**20) | st.floats(allow_nan=True, allow_infinity=True)
         | st.datetimes(timezones=st.just(timezone.utc)).map(lambda d: d.isoformat()) | TEXT | JSON)
GOOD = {"_time": "2026-11-28T10:00:00Z", "level": "ERROR", "service": "checkout-api", "message": "boom"}
# a valid event with hostile extras: most of these must be accepted
NEAR_GOOD = st.dictionaries(TEXT, JSON, max_size=4).map(lambda extra: {**extra, **GOOD})
EVENTS = NEAR_GOOD | st.fixed_dictionaries(
    {}, optional={"_time": TIMES, "timestamp": TIMES, "message": TEXT | JSON, "msg": TEXT, "_raw": TEXT,
                  "service": TEXT | JSON, "level": TEXT | JSON, "host": TEXT | JSON, "exception": TEXT | JSON,
                  "stack": TEXT | st.lists(TEXT, max_size=3) | JSON, "trace_id": TEXT | JSON, "error": JSON,
                  "extra": JSON})


def one_line(reason: str) -> None:
    assert reason and "\n" not in reason and len(reason) < 1000, reason


def storable(event: LogEvent) -> None:
    """What the records store and the correlation do with an accepted event."""
    event.model_dump_json().encode("utf-8")
    LogEvent.model_validate_json(event.model_dump_json())
    fp = correlation.fingerprint(event)
    assert correlation.incident_id(fp, event.time).startswith(f"INC-{event.time:%Y%m%d}-")
    correlation.title(event).encode("utf-8")


@FUZZ
@given(EVENTS | JSON)
def test_normalize_accepts_or_refuses_in_one_line(obj):
    FIGURES["events tried"] += 1
    try:
        event = normalize(obj, source="fuzz", position="1")
    except InvalidEvent as refused:
        one_line(refused.reason)
        FIGURES["events refused"] += 1
        return
    storable(event)
    FIGURES["events accepted"] += 1


LINES = st.lists(st.one_of(EVENTS.map(lambda o: json.dumps(o, ensure_ascii=True, default=str).encode()),
                           st.binary(max_size=60), JSON.map(lambda o: json.dumps(o).encode())), max_size=6)


@FUZZ
@given(LINES)
def test_read_jsonl_never_loses_a_neighbouring_line(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("fuzz") / "in.jsonl"
    lines = [line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines]
    good = json.dumps(GOOD).encode()
    mixed = [good] + [x for line in lines for x in (line, good)]
    path.write_bytes(b"\n".join(mixed) + b"\n")
    items = [item for _, item in read_jsonl(path, max_bytes=4096, final=True)]
    expected = [line for line in mixed if line.strip()]
    FIGURES["files tried"] += 1
    FIGURES["lines tried"] += len(mixed)
    assert len(items) == len(expected)  # every non-blank line is an event or a dead letter
    for line, item in zip(expected, items):
        if line == good:
            assert isinstance(item, LogEvent) and item.message == "boom"
        if isinstance(item, DeadLetter):
            one_line(item.reason)
            item.raw.encode("utf-8")
        else:
            storable(item)


def _state() -> IncidentState:
    event = LogEvent(event_id="e", time=datetime(2026, 11, 28, tzinfo=timezone.utc), message="boom")
    return IncidentState(incident_id="INC-20261128-000001", evidence=[event],
                         rca=RCA(category="null_reference", root_cause="x", confidence=0.7),
                         recommendation=Recommendation(action="fix it", steps=["a"]))


@FUZZ
@given(st.dictionaries(st.sampled_from(list(EDITABLE_FIELDS)) | TEXT, JSON, min_size=1, max_size=3))
def test_state_edits_are_valid_or_refused_in_one_line(edits):
    FIGURES["edits tried"] += 1
    try:
        values = edited_values(_state(), edits)
    except (InvalidEdit, UsageError) as refused:
        one_line(refused.message)
        FIGURES["edits refused"] += 1
        return
    IncidentState.model_validate(_state().model_copy(update=values).model_dump(), strict=True)
    FIGURES["edits accepted"] += 1


NUMERIC = [s.name for s in SETTINGS if s.bounds is not None]


@FUZZ
@given(st.dictionaries(st.sampled_from(NUMERIC), TEXT | st.floats().map(repr) | st.integers().map(str), max_size=4))
def test_settings_are_accepted_or_refused_naming_the_setting(values):
    FIGURES["settings tried"] += 1
    with pytest.MonkeyPatch.context() as patch:
        for name, value in values.items():
            if "\x00" in value:
                continue  # the environment cannot hold a NUL
            try:
                patch.setenv(name, value)
            except (UnicodeEncodeError, ValueError):
                continue  # not representable in an environment either
        try:
            Settings.from_env()
        except UsageError as refused:
            one_line(refused.message)
            assert any(refused.message.startswith(name) for name in values), refused.message
            FIGURES["settings refused"] += 1
            return
        except IncidentIQError:
            raise
    FIGURES["settings accepted"] += 1


def test_zz_fuzz_figures():
    """Print the figures (a warning, so CI shows them whatever the capture mode)."""
    tried = sum(v for k, v in FIGURES.items() if k.endswith("tried"))
    assert tried > 0
    warnings.warn(FuzzFigures("fuzz: " + ", ".join(f"{k} {v}" for k, v in sorted(FIGURES.items()))),
                  stacklevel=1)
