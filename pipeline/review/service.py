"""The review service: what reviewers read and do, shared by the web pages, the CLI and the tests,
so every path through the product has the same guarantees. ReviewService is the one thing they go
through; it is composed of what a reviewer does, one module each: reads (reads.py), decisions and
state edits (decisions.py), split and merge (grouping.py), time travel (time_travel.py), people: assignment and comments
(people.py), over the claims and guards every action takes (claims.py).
"""
from __future__ import annotations

from pipeline.review.decisions import Decisions
from pipeline.review.grouping import Grouping
from pipeline.review.people import People
from pipeline.review.time_travel import TimeTravel


class ReviewService(Decisions, Grouping, TimeTravel, People):
    """Reads for the reviewer's pages and the guarded actions. Their guarantees: docs/ARCHITECTURE.md
    ("One actor per thread", "Decisions are guarded", "Who decides"); the CLI over them:
    docs/CONTRACT.md §5."""
