"""An error is compared only with the open incidents whose window can hold it (issue 37: storing an
error cost the same whether the store held 300 or 3,000 incidents only once the candidates were
kept in order of their last error's time): what the comparisons find is what comparing every
incident found, in the same order, and the work per error does not grow with the incidents read."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from bench.joining import measure  # the benchmark's own counting (bench/joining.py)
from pipeline.clock import iso, parse_iso
from pipeline.incidents import outage
from pipeline.incidents.open_candidates import OpenCandidates
from pipeline.incidents.outage import Candidate

T0 = datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc)


def _at(seconds: float) -> str:
    return iso(T0 + timedelta(seconds=seconds))


def _every_near(held: dict[str, Candidate], moment: datetime, minutes: float) -> list[Candidate]:
    """What `Joiner.find` compared before: every incident read, in the order read."""
    return [c for c in held.values() if c.near(moment, minutes)]


def _every_folded(held: dict[str, Candidate], moment: datetime, seconds: float) -> list[Candidate]:
    """A dump line's candidates as before: all, latest `last` first, those within `seconds` of it."""
    ordered = sorted(held.values(), key=lambda c: c.last, reverse=True)
    return [c for c in ordered if abs(moment - parse_iso(c.last)) <= timedelta(seconds=seconds)]


def test_the_incidents_near_an_error_are_those_comparing_every_one_finds_in_the_same_order():
    rng = random.Random(37)
    kept, held = OpenCandidates(), {}  # the new path and a plain dict in the order read, as before
    for step in range(3000):
        roll = rng.random()
        if roll < 0.35 or not held:
            start = rng.uniform(0, 7200)
            incident = f"INC-{step}"
            first = _at(start)
            last = first if rng.random() < 0.5 else _at(start + rng.uniform(0, 900))
            if rng.random() < 0.02:
                first = ""  # no first error kept: never near
            held[incident] = kept.add(Candidate(incident, "fp", first, last, set(), set()))
        elif roll < 0.75:
            # an error joins: the window widens (one time, as `Joiner.joined`), or a merge widens it by another's
            candidate = held[rng.choice(list(held))]
            moment = _at(rng.uniform(0, 8000))
            kept.span(candidate, min(candidate.first, moment) if candidate.first else candidate.first,
                      max(candidate.last, moment))
        elif roll < 0.85:
            gone = held.pop(rng.choice(list(held)))
            assert kept.pop(gone.incident_id) is gone
        else:
            moment = T0 + timedelta(seconds=rng.uniform(-600, 8600))
            minutes = rng.choice([0.5, 5.0, 30.0])
            assert kept.near(moment, minutes) == _every_near(held, moment, minutes)
            assert kept.latest_within(moment, outage.FOLD_SECONDS) == \
                _every_folded(held, moment, outage.FOLD_SECONDS)
    assert list(kept) == list(held) and len(kept) == len(held)


def test_an_incident_with_a_time_of_no_zone_is_still_compared_as_before():
    kept = OpenCandidates()
    naive = kept.add(Candidate("INC-naive", "fp", "2026-12-06T09:00:00", "2026-12-06T09:00:00", set(), set()))
    zoned = kept.add(Candidate("INC-zoned", "fp", _at(0), _at(0), set(), set()))
    try:
        kept.near(T0, 5.0)
    except TypeError:
        pass  # (comparing it with a zoned time raises, as comparing every incident did)
    else:
        raise AssertionError("a time of no zone compared with a zoned one")
    kept.pop(naive.incident_id)
    assert kept.near(T0, 5.0) == [zoned]


def test_the_work_per_error_does_not_grow_with_the_incidents_read():
    # before: each error was compared with every incident the batch read (about 150 at 300, 1,500 at 3,000),
    # parsing two times each. The benchmark's own counting (bench/joining.py), about five errors in a
    # five-minute window
    small, large = measure(300, 61.0), measure(3000, 61.0)
    assert (small["incidents"], large["incidents"]) == (300, 3000)  # each error its own incident
    assert large["parsed"] <= 1.5 * small["parsed"] + 1, (small, large)  # times parsed
    assert 0 < large["compared"] <= 1.5 * small["compared"] + 1, (small, large)  # window comparisons
    assert large["compared"] <= 12, large  # the incidents active within the window of it, not those read
