"""The audit trail in a reviewer's words: each row a sentence ("ann gave the first of 2 approvals",
"bob edited the analysis: category upstream_rate_limited → db_deadlock; what follows the root cause
analysis ran again"), never an action code, a graph node's name or a JSON blob. The exports (CSV,
JSON) keep the recorded values as they are."""
from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd

from workbench.literal import analysis_text, categories_in_text  # noqa: F401 (said from here too)

ACTION_WORDS = {
    "approve": "approved", "approve_partial": "gave a first approval", "reject": "rejected",
    "revise": "asked for changes", "edit": "edited the analysis", "fork": "forked the run",
    "replay": "replayed the run", "assign": "assigned it", "unassign": "unassigned it",
    "comment": "commented", "escalate": "escalated it: its SLA ran out",
    "expire": "closed it as expired: nobody decided in time",
}
# what a refused action was, as a noun ("ann's approval was refused")
REFUSED_WORDS = {"approve": "approval", "approve_partial": "approval", "reject": "rejection",
                 "revise": "request for changes", "assign": "assignment", "unassign": "unassignment"}
# the graph's steps as a reviewer knows them, the one home of these words: the audit's notes, the
# timeline's labels and hover, History's pickers and node runs, an edit's effect (an unknown step
# reads as its name without underscores)
NODE_WORDS = {"__start__": "start", "__input__": "start", "intake": "intake", "retrieval": "log window",
              "rag": "doc search", "rca": "root cause analysis", "recommend": "recommendation",
              "propose_fix": "fix proposal", "approval": "approval", "route": "routing", "code_fix": "recorded fix",
              "revise": "revision"}
FIELD_WORDS = {"rca.category": "category", "rca.root_cause": "root cause", "rca.confidence": "confidence",
               "recommendation.action": "recommended action", "recommendation.steps": "steps",
               "recommendation.risk": "risk", "assignee": "assignee", "status": "status",
               "approvals": "approvals", "approvals_needed": "approvals needed",
               # the checkpoint state's paths (the History tab's diff) where the last name alone misleads
               "decision.action": "decision", "decision.reviewer": "decided by", "decision.auth": "sign-in",
               "proposal.diff": "proposed diff", "proposal.plan": "proposed plan", "fix.diff": "recorded fix's diff",
               "fix.plan": "recorded fix's plan", "rca.evidence": "evidence cited", "evidence": "evidence events"}
# a proposal is never said to have fixed anything: nothing is applied to any repository
STATUS_WORDS = {
    "analyzing": "analysing",
    "awaiting_approval": "awaiting approval",
    "in_revision": "in revision — re-analysing with the request",
    "fix_proposed": "approved — fix proposed (not applied)",
    "approved": "approved — no code fix proposed",
    "rejected": "rejected",
    "expired": "expired — no decision before the SLA and grace",
    "failed": "failed — the poller retries it",
    "merged": "merged into another incident",
}
def status_words(status: str, proposal: dict | None = None) -> str:
    """The status as a reviewer reads it; an approved proposal whose plan has no diff is not said
    to propose a fix (`proposal`: the recorded fix or the proposal, when known)."""
    if status == "fix_proposed" and proposal is not None and not proposal.get("diff"):
        return "approved — plan recorded, no diff (nothing to apply)"
    return STATUS_WORDS.get(status, status.replace("_", " "))


# recorded alongside a change, not changes a reviewer reads as one
QUIET_FIELDS = {"unverified", "comments"}
# what an audit sentence leaves out: the graph's and the store's own keys (ids, hashes, times, the
# sign-in), markers of what the verb or the note already says (who decided, the decision, the fields
# edited, the steps re-run), copies of another field and the analyst's working (its notes, the docs'
# order); the exports keep them all
SENTENCE_QUIET = QUIET_FIELDS | {"change_id", "edited", "reran", "revision_log", "revisions", "outcome",
                                 "proposal_hash", "recommendation.feedback", "similar_docs", "rca.notes"}
_QUIET_LEAVES = {"interrupt_id", "idempotency_key", "decided_at", "auth", "reviewer", "attempt", "hash",
                 "proposal_hash", "approvals", "note", "action"}
_QUIET_PARENTS = ("decision.", "proposal.")
_CHECKPOINT_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-([0-9a-f]{4})([0-9a-f]{8})\b")
_RERAN = re.compile(r"\bre-ran ((?:\w+)(?:, \w+)*)")
VALUE_CHARS = 60
_AS_NODE = re.compile(r"\bas_node=(\w+)")
# a recorded ISO time in a note ("2026-11-28T12:22:25.456614+00:00"): said as the page writes times
_ISO_TIME = re.compile(r"\b(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?(?:Z|[+-]00:?00)?")


def step_words(node: str) -> str:
    """A graph node as a reviewer names the step ("rca": "root cause analysis")."""
    return NODE_WORDS.get(node, node.strip("_").replace("_", " "))


# the graph's node names that read as code, not words, in a sentence the engine wrote ("code_fix cannot
# run", "propose_fix: no code fix"): said as steps wherever the workbench shows such a sentence
_NODE_CODE = re.compile(r"(?<![\w.=/-])(rca|rag|retrieval|recommend|propose_fix|code_fix|__start__|__input__)(?![\w.=/-])")
_TRACE_NODE = re.compile(r"^([a-z_]+): ")


def steps_in_text(text: str) -> str:
    """A sentence the engine wrote with the graph's node names in it, each said as its step
    ("so code_fix cannot run" → "so the recorded fix cannot run")."""
    return _NODE_CODE.sub(lambda m: node_words(m.group(1)), text or "")


_TRACE_HASH = re.compile(r" · [0-9a-f]{8,}\b")
_AT_CONFIDENCE = re.compile(r" @ (0(?:\.\d+)?|1(?:\.0+)?)\b")


def category_words(code: str | None) -> str:
    """A category as the incident page says it: "db_schema_mismatch" → "db schema mismatch"."""
    return (code or "").replace("_", " ")


def trace_words(line: str) -> str:
    """A node's note ("propose_fix: no code fix: no known cause") led by its step in words ("Fix
    proposal: no code fix: no known cause"), node names inside it said as steps too, and a category
    with its confidence in words ("rca: connection_refused @ 0.95" → "Root cause analysis: connection
    refused, confidence 95%"); the hash a step's note ends with ("no diff · 7e2178976152") left out: the
    decision panel shows the proposal's beside Approve, where it is compared."""
    m = _TRACE_NODE.match(line or "")
    if m and m.group(1) in NODE_WORDS:
        line = step_words(m.group(1)).capitalize() + ": " + line[m.end():]
    line = _AT_CONFIDENCE.sub(lambda c: f", confidence {float(c.group(1)):.0%}", line)
    return categories_in_text(steps_in_text(_TRACE_HASH.sub("", line)))


def setting_words(edits: dict, *, whole: bool = False) -> str:
    """What an edit or fork set, in words: "the category to upstream timeout and the confidence to 42%"
    (`whole`: each value in full, as a confirmation shows it)."""
    said = [f"the {field_words(k)} to {value_text(v) if whole and isinstance(v, str) and len(v) > VALUE_CHARS else value_words(v)}"
            for k, v in (edits or {}).items()]
    return " and ".join(said) if len(said) <= 2 else ", ".join(said[:-1]) + " and " + said[-1]


def node_words(node: str) -> str:
    """A step in a sentence: "the root cause analysis"."""
    return f"the {step_words(node)}"


def steps_words(nodes) -> str:
    """Steps in a sentence: "the recommendation, the fix proposal and the approval"."""
    named = [node_words(n) for n in nodes]
    return " and ".join(named) if len(named) <= 2 else ", ".join(named[:-1]) + " and " + named[-1]


# what an edit of a paused run does (ReviewService.edit_effect's `effect`), said without a node's name
_EFFECT_WORDS = {
    "reruns_dependents": "it takes the place of {as_node}'s answer, so {nodes} {are} done again from it",
    "keeps_recommendation": "it sets the analysis and the recommendation, which stays as edited; {nodes} {are} "
                            "done again from it",
    "as_is": "it lands before the steps that write those fields: {nodes} {are} done again and may "
             "overwrite it",
}


def edit_effect_words(edits, effect: dict) -> str:
    """An edit and what it made happen, in the audit's words: "The edit of category and confidence:
    it takes the place of the root cause analysis's answer, so the recommendation and the fix
    proposal are done again from it"."""
    fields = [field_words(f) for f in edits]
    named = " and ".join(fields) if len(fields) <= 2 else ", ".join(fields[:-1]) + " and " + fields[-1]
    template = _EFFECT_WORDS.get(effect.get("effect") or "", _EFFECT_WORDS["reruns_dependents"])
    reruns = list(effect.get("reruns") or [])
    said = template.format(as_node=node_words(effect.get("as_node") or "rca"),
                           nodes=steps_words(reruns) or "no step", are="are" if len(reruns) > 1 else "is")
    return f"The edit of {named}: {said}"


def field_words(key: str) -> str:
    """A recorded field's name as a reviewer reads it: its word, or its last name without underscores."""
    return FIELD_WORDS.get(key, key.rsplit(".", 1)[-1].replace("_", " "))


def value_words(value: Any) -> str:
    """A recorded value, short: text cut at VALUE_CHARS, a list of approvals as their names, nothing as "none"."""
    if value is None or value == [] or value == "":
        return "none"
    if isinstance(value, list):
        names = [str(v.get("by") or v.get("name") or "?") if isinstance(v, dict) else value_words(v) for v in value]
        return ", ".join(names)
    if isinstance(value, dict):
        return ", ".join(f"{k} {value_words(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.0%}" if 0 <= value <= 1 else f"{value:g}"
    # an analysis's text as the incident page shows it (no code-span backticks), then cut
    text = str(value).replace("_", " ") if isinstance(value, str) and re.fullmatch(r"[a-z_]+", str(value)) \
        else analysis_text(value)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 1] + "…"


def _quiet(key: str) -> bool:
    """A recorded key an audit sentence leaves out (SENTENCE_QUIET)."""
    if key in SENTENCE_QUIET or key.startswith(("proposal.change.", "fix.")):  # the recorded fix: the page shows it
        return True
    return key.startswith(_QUIET_PARENTS) and key.rsplit(".", 1)[-1] in _QUIET_LEAVES


def changes_words(before: dict | None, after: dict | None, proposal: dict | None = None) -> list[str]:
    """"category upstream_rate_limited → db_deadlock" for each recorded value that changed; a status in
    the header's words (`proposal`: the incident's recorded fix, for "plan recorded, no diff")."""
    before, after = before or {}, after or {}
    out = []
    for key in dict.fromkeys([*before, *after]):
        if _quiet(key) or before.get(key) == after.get(key):
            continue
        name = field_words(key)
        if key == "status":
            said = [status_words(str(v), _same(proposal, after)) for v in (before.get(key), after.get(key)) if v]
            out.append(f"{name} {' → '.join(said)}" if key in before else f"{name} {said[-1]}")
            continue
        if key in before:
            out.append(f"{name} {value_words(before.get(key))} → {value_words(after.get(key))}")
        else:
            out.append(f"{name} {value_words(after.get(key))}")
    return out


def _same(proposal: dict | None, after: dict) -> dict | None:
    """The recorded fix, when it is the one this entry approved (same hash, or no hash to compare)."""
    hashed = after.get("proposal_hash") or after.get("decision.proposal_hash")
    return proposal if proposal and (not hashed or not proposal.get("hash") or proposal["hash"] == hashed) else None


def note_words(note: str | None, names: dict[str, str] | None = None) -> str:
    """A recorded note, with the graph's words said plainly ("as_node=rca": what follows the root cause
    analysis ran again) and a checkpoint as the audit's "checkpoint after" column names it (`names`:
    id → "#5 root cause analysis", as the History chart numbers it; else its last 8 characters)."""
    if not note:
        return ""
    note = _AS_NODE.sub(lambda m: f"what follows {node_words(m.group(1))} ran again", note)
    note = _RERAN.sub(lambda m: f"re-ran {steps_words(m.group(1).split(', '))}", note)
    named = names or {}
    note = _ISO_TIME.sub(lambda m: f"{m.group(1)} {m.group(2)}" + (" UTC" if m.group(0)[19:].lstrip(".0123456789") else ""),
                         note)
    return categories_in_text(_CHECKPOINT_ID.sub(lambda m: named.get(m.group(0)) or m.group(2), note))


def audit_sentence(row: dict, proposal: dict | None = None) -> str:
    """One audit row as a sentence: who did what, and what changed (a status in the header's words;
    `proposal`: the incident's recorded fix, when known)."""
    who, action = row.get("reviewer") or "someone", str(row.get("action") or "")
    if action.startswith("refused:"):
        asked = action.split(":", 1)[1]
        what = REFUSED_WORDS.get(asked, asked.replace("_", " "))
        return f"{who}'s {what} was refused" + (f": {row['note'].strip()}" if (row.get("note") or "").strip() else "")
    verb = ACTION_WORDS.get(action, action.replace("_", " "))
    after = row.get("after") or {}
    if action == "approve_partial" and after.get("approvals_needed"):
        verb = f"gave approval {len(after.get('approvals') or []) or 1} of {after['approvals_needed']}"
    if action == "comment":
        return f"{who} commented"
    if action in ("fork", "edit") and after.get("edited"):
        return _setting_sentence(who, verb, row.get("before") or {}, after)
    changed = changes_words(row.get("before"), after, proposal)
    return f"{who} {verb}" + (f": {'; '.join(changed)}" if changed else "")


def _setting_sentence(who: str, verb: str, before: dict, after: dict) -> str:
    """A fork or an edit as what the person set, not every field the analysis redid for it: "carol
    forked the run, setting the category to upstream timeout (was unknown); no event of the incident
    shows it, so its confidence is capped at 30%" (a walkthrough read "doc ids none →
    node-axios-timeout; supported True → False")."""
    theirs = [f for f in after["edited"] if f in after]
    said = f"{who} {verb}" + (f", setting {setting_words({f: after[f] for f in theirs})}" if theirs else "")
    if len(theirs) == 1 and theirs[0] in before and not isinstance(after[theirs[0]], (list, dict)):
        said += f" (was {value_words(before[theirs[0]])})"
    redone = "rca.category" in theirs
    if redone and after.get("rca.supported") is False and "rca.supported" not in theirs:
        capped = f", so its confidence is capped at {value_words(after['rca.confidence'])}" \
            if "rca.confidence" in after and "rca.confidence" not in theirs else ""
        said += f"; no event of the incident shows it{capped}"
    elif redone and "rca.confidence" in after and "rca.confidence" not in theirs and \
            before.get("rca.confidence") != after["rca.confidence"]:
        said += f"; the analysis was redone for it (confidence {value_words(after['rca.confidence'])})"
    return said


def value_text(value) -> str:
    """A recorded value whole, as text: a string as it is, a list of strings a line each, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)  # steps, doc ids: a line each
    return json.dumps(value, default=str)


# the graph's own keys: they tell a reviewer nothing, so the diff leaves them out (a proposal's hash
# changes with its plan and diff, which the diff shows in words: its 64 hex digits said nothing more)
MACHINE_FIELDS = {"interrupt_id", "idempotency_key", "hash"}


def _cell(field: str, value) -> str:
    """A diff's value as a reviewer reads it: "—" for none, approvals as "bob (approved)", the rest as text."""
    if value is None or value == [] or value == "":
        return "—"
    if field.rsplit(".", 1)[-1] == "approvals" and isinstance(value, list):
        return ", ".join(f"{a.get('by') or a.get('name') or '?'} (approved)" if isinstance(a, dict) else value_text(a)
                         for a in value)
    if field.rsplit(".", 1)[-1] == "category" and isinstance(value, str):
        return category_words(value)
    if field == "decision.action" and value in ACTION_WORDS:
        return ACTION_WORDS[value]  # "approved", as the audit says it: not the action's code
    if isinstance(value, str) and _ISO_TIME.fullmatch(value):
        return note_words(value)  # a recorded time, as the page writes it ("2026-12-07 11:05:17 UTC")
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "\n".join(_item_text(v) for v in value)  # findings: a line each, not a JSON blob with ids
    if field.split(".", 1)[0] in ("rca", "recommendation", "proposal"):
        return analysis_text(value_text(value))  # as the incident page shows it: no code-span backticks
    return value_text(value)


def _item_text(item: dict) -> str:
    """One recorded item (a finding, a quote) as a line: its texts joined, its id lists as counts
    ({"kind": "error", "value": "…", "event_ids": [3 ids]} → "error: … (3 events)"), an id of one
    (a quote's `event_id`) left out."""
    said = [str(v) for k, v in item.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)
            and not str(k).endswith("_id")]  # a quote's event hash is no reviewer's word (walkthrough s57)
    counts = [f"{len(v)} {k.removesuffix('_ids')}{'' if len(v) == 1 else 's'}" for k, v in item.items()
              if isinstance(v, list) and k.endswith("_ids")]
    return ": ".join(said) + (f" ({', '.join(counts)})" if counts else "")


def changes_frame(changes: list[dict]) -> pd.DataFrame:
    """A field-level diff as rows of text, for a dataframe: each field by its reviewer's word (the
    audit's), the graph's own keys left out. History's diff and the decision panel's revisions both
    draw this one."""
    return pd.DataFrame([{"field": field_words(c["field"]), "before": _cell(c["field"], c["before"]),
                          "after": _cell(c["field"], c["after"])}
                         for c in changes if c["field"].rsplit(".", 1)[-1] not in MACHINE_FIELDS],
                        columns=["field", "before", "after"])


# the audit's columns in pixels: they fit the page's width at 1440 px, so "checkpoint after" is
# not clipped at the right edge (a walkthrough read "#10 fix…"); the texts wrap in the two wide ones
WRAP_CHARS = 48  # what a line of a large (400 px) text column holds, with room to spare
AUDIT_WIDTHS = {"at": 145, "what happened": 360, "note": 280, "checkpoint after": 155}


def wrap_chars(px: int) -> int:
    """What a line of a text column `px` wide holds, as WRAP_CHARS of 400 px, with room to spare."""
    return WRAP_CHARS * px // 400
