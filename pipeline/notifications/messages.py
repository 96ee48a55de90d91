"""The outbox rows of one event: a short text per target, Slack's and Teams' incoming-webhook
format (`{"text": ...}`), with the idempotency key in the text so a repeat can be told apart.

Titles are the stored template with the miner's placeholders as `…` (pipeline.state.readable_title).
They come from log lines, which are untrusted: `<`, `>` and `&` are escaped the way Slack
asks, so a log line cannot mention `@channel` or forge a link.
"""
from __future__ import annotations

from pipeline.notifications.targets import Target
from pipeline.state import readable_title

KINDS = ("critical", "escalation", "expiry", "decision")


def _inert(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def text_of(kind: str, incident: dict, facts: dict) -> str:
    """One line a person reads in a chat channel."""
    head = f"[IncidentIQ] {incident['incident_id']} ({incident.get('severity')}, {incident.get('service')})"
    title = _inert(readable_title(incident.get("title") or "")[:160])  # "Column … not found", not <STR>
    if kind == "critical":
        return f"{head}: new critical incident awaiting approval — {title}. Due {facts.get('due')}."
    if kind == "escalation":
        who = f" Assigned to {_inert(facts['assignee'])}." if facts.get("assignee") else " Nobody is on it."
        return f"{head}: SLA deadline {facts.get('due')} passed without a decision — {title}.{who}"
    if kind == "expiry":
        return f"{head}: expired without a decision ({facts.get('why')}) — {title}."
    if kind == "decision":
        by = ", ".join(_inert(b) for b in facts.get("by", [])) or "?"
        return f"{head}: {facts.get('action')} by {by}; now {facts.get('status')} — {title}."
    raise ValueError(f"unknown notification kind {kind!r}")


def rows_for(kind: str, *, incident: dict, event_key: str, facts: dict, targets: list[Target]) -> list[dict]:
    """One outbox row per target for an event; `event_key` names the event once (a retry of the
    same event yields the same keys, so the outbox keeps one row)."""
    text = text_of(kind, incident, facts)
    out = []
    for target in targets:
        key = f"{kind}:{event_key}@{target.id}"
        out.append({"key": key, "kind": kind, "incident_id": incident["incident_id"], "target_id": target.id,
                    "target_host": target.host, "payload": {"text": f"{text} (ref {key})"}})
    return out
