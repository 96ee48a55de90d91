"""The open incidents one batch read or opened (`outage.Candidate`), kept in order of their last
error's time, so that an error is compared only with the incidents whose window can hold it.

The burst window is minutes; a batch may read thousands of open incidents of a store (every one
holding a name its errors name). Looking an error's time up in the order of last errors gives the
incidents whose last error is at most a window before it, and only those are compared: the cost of
an error is the incidents active around it, not every incident the batch read (issue 37). What the
comparisons find is what comparing every incident found, in the order the batch read them (the
order ties are weighed and merges are made in).

An incident whose times are not both times with a zone (never one this product stored) is
compared the way every incident once was, each time.
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from datetime import datetime, timedelta

from pipeline.incidents.outage import Candidate


class OpenCandidates:
    """Incident id -> `Candidate`, in the order read, with the order of their last errors' times."""

    def __init__(self) -> None:
        self._read: dict[str, Candidate] = {}  # in the order the batch read or opened them
        self._order: dict[str, int] = {}  # incident -> its place in that order
        self._taken = 0
        self._by_last: list[tuple[datetime, int]] = []  # (last error's time, place), sorted
        self._at: dict[int, tuple[Candidate, datetime]] = {}  # place -> its incident and its key's time
        self._odd: set[str] = set()  # incidents compared the slow way (see the module doc)
        self.compared = 0  # incidents whose window an error was compared with (a bench and a test count them)

    def __contains__(self, incident: object) -> bool:
        return incident in self._read

    def __getitem__(self, incident: str) -> Candidate:
        return self._read[incident]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read)

    def __len__(self) -> int:
        return len(self._read)

    def get(self, incident: str) -> Candidate | None:
        return self._read.get(incident)

    def values(self) -> list[Candidate]:
        return list(self._read.values())

    def add(self, candidate: Candidate) -> Candidate:
        """Keep `candidate` (in its incident's place, if the batch read that incident already)."""
        incident = candidate.incident_id
        if incident not in self._read:
            self._order[incident] = self._taken
            self._taken += 1
        self._unindex(incident)
        self._read[incident] = candidate
        self._index(candidate)
        return candidate

    def pop(self, incident: str) -> Candidate:
        self._unindex(incident)
        del self._order[incident]
        return self._read.pop(incident)

    def span(self, candidate: Candidate, first: str, last: str) -> None:
        """Set the times of `candidate`'s first and last errors (what `first` and `last` hold)."""
        if first is candidate.first and last is candidate.last:
            return
        self._unindex(candidate.incident_id)
        candidate.first, candidate.last = first, last
        self._index(candidate)

    def near(self, moment: datetime, minutes: float) -> list[Candidate]:
        """The incidents whose window holds `moment` (`Candidate.near`), in the order read."""
        window = timedelta(minutes=minutes)
        found: list[tuple[int, Candidate]] = []
        start = bisect_left(self._by_last, (moment - window,))  # (last + window >= moment)
        for _, place in self._by_last[start:]:
            candidate = self._at[place][0]
            first = candidate.first_at()
            if first is not None and first - window <= moment:
                found.append((place, candidate))
        self.compared += len(self._by_last) - start
        for incident in self._odd:
            self.compared += 1
            if self._read[incident].near(moment, minutes):
                found.append((self._order[incident], self._read[incident]))
        found.sort(key=lambda pair: pair[0])
        return [candidate for _, candidate in found]

    def latest_within(self, moment: datetime, seconds: float) -> list[Candidate]:
        """The incidents whose last error is within `seconds` of `moment`, latest first (by `last`, then
        in the order read), and those compared the slow way, in their places in that order."""
        reach = timedelta(seconds=seconds)
        lo = bisect_left(self._by_last, (moment - reach,))
        hi = bisect_right(self._by_last, (moment + reach, math.inf))
        found = [(self._at[place][0], place) for _, place in self._by_last[lo:hi]]
        found += [(self._read[incident], self._order[incident]) for incident in self._odd]
        self.compared += len(found)
        found.sort(key=lambda pair: pair[1])  # (the order read, then latest first: a stable sort keeps it)
        found.sort(key=lambda pair: pair[0].last, reverse=True)
        return [candidate for candidate, _ in found]

    def _index(self, candidate: Candidate) -> None:
        place = self._order[candidate.incident_id]
        try:
            first, last = candidate.first_at(), candidate.last_at()
        except (TypeError, ValueError):
            self._odd.add(candidate.incident_id)
            return
        if last is None:
            return  # no last error: never near, never folded into
        if last.utcoffset() is None or first is not None and first.utcoffset() is None:
            self._odd.add(candidate.incident_id)
            return
        self._at[place] = (candidate, last)
        insort(self._by_last, (last, place))

    def _unindex(self, incident: str) -> None:
        self._odd.discard(incident)
        place = self._order.get(incident)
        held = self._at.pop(place, None) if place is not None else None
        if held is not None:
            del self._by_last[bisect_left(self._by_last, (held[1], place))]
