"""The outbox rows of one event: a short text per target, Slack's and Teams' incoming-webhook
format (`{"text": ...}`), with the idempotency key in the text so a repeat can be told apart.

Titles are the stored template with the miner's placeholders as `…` (pipeline.state.readable_title).
They, service names, assignees and reviewers' names come from log lines or people, so every such
value is made inert for the target's markup before it is put in the text: for Slack (and any
Slack-compatible target) `&`, `<` and `>` become `&amp;`, `&lt;` and `&gt;`, as Slack asks, so
`<!channel>`, `<@U1>` and `<https://evil|click>` are shown, never acted on. Slack's mrkdwn has no
escape for its emphasis and code characters, so where one could open or close emphasis it is
replaced by its look-alike (as jsx-slack's `<Escape>` does): `*` → `∗` (U+2217), `~` → `∼`
(U+223C), a backquote → `ˋ` (U+02CB), and `_` → `ˍ` (U+02CD) unless it stands between two letters
or digits (Slack never formats inside a word, so `DEPLOY_ENV` keeps its underscore); `*bold*`,
`_it_`, `~strike~` and `` `code` `` are shown as written. For Microsoft Teams (hosts under
office.com, office365.com or logic.azure.com) `&`, `<` and `>` the same, and Markdown's link,
emphasis and code characters are backslash-escaped, so `[click](https://evil)` is text, not a link.
For both, line breaks become spaces (a `>` or a backquote fence opening a line is markup) and
invisible or direction-changing characters are shown as `‹U+XXXX›` (`pipeline.state.visible`).
"""
from __future__ import annotations

import re

from pipeline.notifications.targets import Target
from pipeline.redaction import redact
from pipeline.state import readable_title, visible

KINDS = ("critical", "escalation", "expiry", "decision")


_TEAMS_HOSTS = (".office.com", ".office365.com", ".logic.azure.com")
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#|~!])")
_LINE_BREAKS = re.compile(r"\s*[\n\r\v\f\x85\u2028\u2029]\s*")
_MRKDWN_ALIKE = str.maketrans({"*": "\u2217", "~": "\u223c", "`": "\u02cb"})
# an underscore that is not between two word characters: where Slack's italics can open or close
_MRKDWN_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")


def flavour_of(host: str) -> str:
    """`teams` for a Microsoft Teams webhook host, else `slack` (Slack's escaping is the default)."""
    name = host.rsplit(":", 1)[0].lower() if host.count(":") == 1 else host.lower()
    return "teams" if any(name.endswith(suffix) or name == suffix[1:] for suffix in _TEAMS_HOSTS) else "slack"


def inert(text: object, flavour: str = "slack") -> str:
    """`text` as plain text in the target's markup: nothing in it mentions, links or formats."""
    value = visible(_LINE_BREAKS.sub(" ", str(text)))
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if flavour == "teams":
        return _MARKDOWN.sub(r"\\\1", value)
    return _MRKDWN_UNDERSCORE.sub("\u02cd", value.translate(_MRKDWN_ALIKE))


def text_of(kind: str, incident: dict, facts: dict, flavour: str = "slack") -> str:
    """One line a person reads in a chat channel; every value in it inert for `flavour`."""
    def e(value: object) -> str:
        return inert(value, flavour)

    head = f"[IncidentIQ] {e(incident['incident_id'])} ({e(incident.get('severity'))}, {e(incident.get('service'))})"
    title = e(readable_title(incident.get("title") or "")[:160])  # "Column … not found", not <STR>
    if kind == "critical":
        return f"{head}: new critical incident awaiting approval — {title}. Due {e(facts.get('due'))}."
    if kind == "escalation":
        who = f" Assigned to {e(facts['assignee'])}." if facts.get("assignee") else " Nobody is on it."
        return f"{head}: SLA deadline {e(facts.get('due'))} passed without a decision — {title}.{who}"
    if kind == "expiry":
        return f"{head}: expired without a decision ({e(facts.get('why'))}) — {title}."
    if kind == "decision":
        by = ", ".join(e(b) for b in facts.get("by", [])) or "?"
        return f"{head}: {e(facts.get('action'))} by {by}; now {e(facts.get('status'))} — {title}."
    raise ValueError(f"unknown notification kind {kind!r}")


def rows_for(kind: str, *, incident: dict, event_key: str, facts: dict, targets: list[Target]) -> list[dict]:
    """One outbox row per target for an event; `event_key` names the event once (a retry of the
    same event yields the same keys, so the outbox keeps one row)."""
    out = []
    for target in targets:
        # secrets out of the chat sink too: the stored text is masked already, the facts (names,
        # reasons) and anything stored before the masking are masked here
        text = redact(text_of(kind, incident, facts, flavour_of(target.host)))
        key = f"{kind}:{event_key}@{target.id}"
        out.append({"key": key, "kind": kind, "incident_id": incident["incident_id"], "target_id": target.id,
                    "target_host": target.host, "payload": {"text": f"{text} (ref {key})"}})
    return out
