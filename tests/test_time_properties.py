"""Property tests where the bugs were. Every time spelling the parsers
accept, at the edges of the year range and with any offset (valid or not), every epoch unit at
its limits, year-less syslog around New Year, token files' expiries and files of layouts no format list holds
(learnt from their first lines): each input is read (an
event, with its time in 1970-2999 or inferred and kept as `time_raw`) or refused with our error,
never a traceback. Each test runs its property's whole search (a traceback or a broken bound
fails it, naming the input) and fails too if the search tried fewer than MIN_TRIED inputs: a
strategy that filters most of its inputs away would otherwise prove little."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone

from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.config import Settings
from pipeline.errors import IncidentIQError, InvalidEvent
from pipeline.ingest.formats import SourceParser, parse_time
from pipeline.ingest.reading import event_from_record
from pipeline.review.identity import new_token, token_actor

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
EDGE_YEARS = st.sampled_from([1, 2, 1969, 1970, 1971, 2026, 2998, 2999, 3000, 9998, 9999]) | st.integers(1, 9999)
MIN_TRIED = 100  # of FAST's 150
TRIED: Counter[str] = Counter()


def _count(name: str) -> None:
    TRIED[name] += 1


def _tried(name: str, prop: Callable[..., None], **fixtures: object) -> int:
    """Runs one property's whole search; returns how many inputs it was given."""
    before = TRIED[name]
    prop(**fixtures)
    return TRIED[name] - before


@st.composite
def iso_times(draw) -> str:
    year, month = draw(EDGE_YEARS), draw(st.integers(1, 12))
    day = draw(st.integers(1, 31))  # 31 April and 29 February of common years included: not dates
    clock = f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:{draw(st.integers(0, 59)):02d}"
    frac = draw(st.sampled_from(["", ".5", ",123", ".123456789"]))
    minutes = draw(st.sampled_from([0, 14 * 60, -14 * 60, 25 * 60, -(23 * 60 + 59), 99 * 60 + 99])
                   | st.integers(-(99 * 60 + 59), 99 * 60 + 59))
    sign, hours, mins = "+" if minutes >= 0 else "-", abs(minutes) // 60, abs(minutes) % 60
    zone = draw(st.sampled_from(["Z", "", f"{sign}{hours:02d}:{mins:02d}", f"{sign}{hours:02d}{mins:02d}"]))
    sep = draw(st.sampled_from(["T", " "]))
    return f"{year:04d}-{month:02d}-{day:02d}{sep}{clock}{frac}{zone}"


LINES = {
    "json": lambda t: json.dumps({"time": t, "level": "ERROR", "service": "api", "message": "boom"}),
    "logfmt": lambda t: f'time={t.replace(" ", "T")} level=error service=api msg="boom"',
    "log4j": lambda t: f"{t} ERROR [main] com.shop.Api: boom",
    "syslog": lambda t: f"<11>{t.replace(' ', 'T')} host1 api[1]: boom",
    "syslog5424": lambda t: f"<11>1 {t.replace(' ', 'T')} host1 api 1 - - boom",
}
FALLBACK = (datetime(2026, 11, 28, tzinfo=timezone.utc), "previous record")


def _read(parser: SourceParser, line: str) -> None:
    try:
        parsed = parser.parse(line)
        event = event_from_record(parsed, text=line, source="p", position="p@0", event_id="e1",
                                  fallback_time=FALLBACK)
    except InvalidEvent:
        return  # a dead letter with its reason: allowed
    assert 1970 <= event.time.year <= 2999 and event.time.tzinfo is not None
    if "time_inferred" in event.fields and parsed.time is not None:
        assert event.fields.get("time_raw")


@FAST
@given(text=iso_times(), layout=st.sampled_from(sorted(LINES)), zone=st.sampled_from(["UTC", "Pacific/Kiritimati",
                                                                                       "Etc/GMT+12"]))
def iso_time_in_a_layout(text, layout, zone):
    _count("iso")
    moment = parse_time(text, SourceParser(timezone=zone).options)
    assert moment is None or moment.utcoffset().total_seconds() == 0
    _read(SourceParser(format=layout, timezone=zone), LINES[layout](text))


def test_every_iso_time_in_every_layout_is_read_or_dead_lettered():
    assert _tried("iso", iso_time_in_a_layout) >= MIN_TRIED


EPOCHS = (st.sampled_from([0, -1, 1e10, -1e10, 1e11, 1e14, 1e17, 1e18, -1e18, 2**63 - 1, -(2**63), 10**30,
                           float("inf"), float("-inf"), float("nan"), 253402300799, 253402300800, -62135596800])
          | st.integers(-(10**20), 10**20) | st.floats(allow_nan=True, allow_infinity=True))


@FAST
@given(value=EPOCHS, unit=st.sampled_from([None, "s", "ms", "us", "ns"]), as_text=st.booleans())
def epoch_in_a_unit(value, unit, as_text):
    _count("epoch")
    given_value = repr(value) if as_text and isinstance(value, float) else str(value) if as_text else value
    moment = parse_time(given_value, epoch_unit=unit)
    assert moment is None or moment.tzinfo is not None
    _read(SourceParser(format="json"), json.dumps({"ts": value if not isinstance(value, float) or value == value
                                                   and abs(value) != float("inf") else str(value),
                                                   "level": "error", "msg": "boom"}))


def test_every_epoch_in_every_unit_at_its_limits_is_a_time_or_none():
    assert _tried("epoch", epoch_in_a_unit) >= MIN_TRIED


@FAST
@given(now=st.sampled_from([datetime(2026, 12, 31, 23, 59, 59, tzinfo=timezone.utc),
                            datetime(2027, 1, 1, 0, 0, 1, tzinfo=timezone.utc),
                            datetime(2028, 2, 29, 12, tzinfo=timezone.utc),
                            datetime(2027, 3, 1, 0, 0, tzinfo=timezone.utc)])
       | st.datetimes(min_value=datetime(1971, 1, 2), max_value=datetime(2998, 12, 30), timezones=st.just(timezone.utc)),
       month=st.sampled_from(["Jan", "Feb", "Dec", "Jun"]), day=st.integers(1, 31),
       hms=st.sampled_from(["00:00:00", "23:59:59", "12:00:00"]),
       layout=st.sampled_from(["syslog", "glog", "logcat"]))
def year_less_time_around_new_year(now, month, day, hms, layout):
    _count("yearless")
    mo = {"Jan": 1, "Feb": 2, "Jun": 6, "Dec": 12}[month]
    line = {"syslog": f"<11>{month} {day:2d} {hms} host1 api[1]: boom",
            "glog": f"E{mo:02d}{day:02d} {hms}.123456  42 main.cc:10] boom",
            "logcat": f"{mo:02d}-{day:02d} {hms}.123  100  200 E Tag: boom"}[layout]
    parser = SourceParser(format=layout, now=now)
    parsed = parser.parse(line)
    if parsed.time is not None and parsed.format == layout:
        assert (parsed.time - now).total_seconds() <= 86400 + 1
    _read(parser, line)


def test_year_less_times_around_new_year_are_never_more_than_a_day_ahead():
    assert _tried("yearless", year_less_time_around_new_year) >= MIN_TRIED


@FAST
@given(expires=st.one_of(st.text(max_size=30), iso_times(), st.integers(-(10**20), 10**20).map(str)),
       role=st.sampled_from(["viewer", "reviewer", "admin", "root", "", "Admin"]))
def tokens_file_entry(tmp_path_factory, expires, role):
    _count("tokens")
    token, digest = new_token()
    path = tmp_path_factory.mktemp("tok") / "tokens.toml"
    path.write_text("[[tokens]]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in
                                               {"name": "ci", "role": role, "sha256": digest,
                                                "expires": expires}.items()) + "\n")
    settings_ = Settings.from_env(tokens_file=path)
    try:
        actor = token_actor(settings_, token, now=datetime(2026, 12, 1, tzinfo=timezone.utc))
    except IncidentIQError as exc:
        assert exc.exit_code in (2, 3) and "\n" not in exc.message and token not in exc.message
        return
    assert actor.auth == "token" and actor.roles == (role,)


def test_a_tokens_file_entry_is_an_actor_or_our_error(tmp_path_factory):
    assert _tried("tokens", tokens_file_entry, tmp_path_factory=tmp_path_factory) >= MIN_TRIED


@st.composite
def unseen_layouts(draw) -> tuple[list[str], list[str]]:
    """A file of a layout no format list holds: a time in one of many spellings (edge years and
    offsets included) among the leading columns, a level, a component, a pid or thread, joined by
    spaces, pipes or commas; then a message. Returns the lines and their messages."""
    spelling = draw(st.sampled_from([
        "{Y:04d}-{m:02d}-{d:02d} {H:02d}:{M:02d}:{S:02d},{f:03d}", "{Y:04d}-{m:02d}-{d:02d}T{H:02d}:{M:02d}:{S:02d}.{f:03d}{z}",
        "{Y:04d}/{m:02d}/{d:02d} {H:02d}:{M:02d}:{S:02d}", "{d:02d}.{m:02d}.{Y:04d} {H:02d}:{M:02d}:{S:02d}",
        "{Y:04d}{m:02d}{d:02d} {H:02d}{M:02d}{S:02d}", "{b} {d:2d} {H:02d}:{M:02d}:{S:02d}", "{e}",
        "[{Y:04d}-{m:02d}-{d:02d} {H:02d}:{M:02d}:{S:02d}]"]))
    sep = draw(st.sampled_from([" ", " | ", ", ", "  "]))
    prefix = draw(st.sampled_from([[], ["node-7"], ["svc.log.1"]]))
    columns = draw(st.permutations(["level", "component", "pid"]).map(lambda c: c[:draw(st.integers(1, 3))]))
    year = draw(EDGE_YEARS)
    zone = draw(st.sampled_from(["", "Z", "+14:00", "-12:00", "+25:00"]))
    levels = ["INFO", "WARN", "ERROR", "Info", "debug", "FATAL"]
    lines, messages = [], []
    for i in range(draw(st.integers(8, 20))):
        stamp = spelling.format(Y=year, m=1 + i % 12, d=1 + i % 28, H=i % 24, M=i % 60, S=i % 60, f=i % 1000, z=zone,
                                b=["Jan", "Feb", "Mar"][i % 3], e=1_700_000_000 + i * 61)
        fields = {"level": draw(st.sampled_from(levels)), "component": draw(st.sampled_from(
            ["org.apache.Foo", "[main]", "kernel", "Svc_Step", "dfs.DataNode$PacketResponder"])),
                  "pid": str(draw(st.integers(1, 99999)))}
        message = draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
                               min_size=1, max_size=60).filter(lambda t: t.strip()))
        lines.append(sep.join([*prefix, stamp, *(fields[c] for c in columns)]) + sep + message)
        messages.append(message)
    return lines, messages


@FAST
@given(layout=unseen_layouts())
def layout_the_ingest_learns(layout):
    """Whatever layout is learnt from a file's first lines (or none), each line becomes an event
    with a time in range (its own or inferred, the text kept) or our error: never a traceback."""
    _count("learnt")
    lines, _ = layout
    parser = SourceParser()
    parser.detect(lines)
    for line in lines:
        _read(parser, line)


def test_every_layout_the_ingest_learns_reads_each_line_or_dead_letters_it():
    assert _tried("learnt", layout_the_ingest_learns) >= MIN_TRIED
