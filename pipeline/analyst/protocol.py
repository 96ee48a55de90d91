"""The analyst seam: everything the graph's nodes ask of an analyst, offline or model-backed."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from pipeline.state import RCA, IncidentState, Recommendation


@runtime_checkable
class Analyst(Protocol):
    """What rca, recommend, revise and code_fix call; `name` is stamped on every RCA."""

    name: str

    def rca(self, state: IncidentState) -> RCA:
        """The root cause of the incident: one category, a cause, a calibrated confidence."""
        ...

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        """The action to take; with a reviewer's feedback, the revised one."""
        ...

    def fix_plan(self, state: IncidentState) -> list[str]:
        """The steps of a code or configuration fix for an approved incident, for a developer."""
        ...
