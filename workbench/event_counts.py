"""The incident header's Events figure: the total stored, and what the analysis rests on in words
that never read as work left undone ("50 events arrived since the analysis" only while some did)."""
from __future__ import annotations

from datetime import datetime, timezone

from pipeline.state import EVIDENCE_HEAD, EVIDENCE_TAIL, counted


def events_metric(where, doc: dict) -> None:
    """The Events metric in `where` (a column of the header)."""
    since = doc.get("events_since_analysis")
    if doc.get("state") and since:
        # new evidence that repeats what the analysis holds is counted, not re-analysed: the header
        # says how much arrived since, rather than a total the analysis never saw
        where.metric("Events", doc["event_count"], delta=f"{counted(since, 'event')} arrived since the analysis",
                     delta_color="off",
                     help=f"{counted(since, 'event')} arrived since the analysis; those repeating what it holds do not "
                        "re-run it (new kinds of event do). Replay with the current evidence (History & time "
                        "travel) to analyse them all.")
    elif doc.get("state") and (sample := sample_words(doc)):
        # every stored event analysed; the state quotes its first and latest (pipeline.state.merge_evidence)
        where.metric("Events", doc["event_count"], delta=sample, delta_color="off", delta_arrow="off",
                     help="The analysis read every stored event; its evidence quotes the first "
                        f"{EVIDENCE_HEAD} and the latest {EVIDENCE_TAIL} of them, the ones between are "
                        "counted in the ×n of the quoted lines' kinds. Nothing is waiting to be done.")
    elif doc.get("state") and (analysed := len(doc["state"].get("evidence") or [])) != doc["event_count"]:
        # a replay from an older checkpoint rests on the events it saw: the quoted lines' ×n count
        # those, so the header says both rather than a total the evidence below never shows
        # the events the analysis read, not work left undone: the total first, what it read as its basis
        where.metric("Events", doc["event_count"], delta=f"analysis based on {analysed} of them",
                     delta_color="off", delta_arrow="off",
                     help=f"The analysis rests on {analysed} of the {counted(doc['event_count'], 'event')} stored (those "
                        "it saw when it ran): nothing is waiting to be done. Replay with the current evidence (History & "
                        "time travel) to analyse from them all.")
    else:
        where.metric("Events", doc["event_count"])


def approval_warning(doc: dict) -> str | None:
    """What an approval beside the header's "N events arrived since the analysis" should know: those
    events are not in the analysis it approves, and how to bring them in; None when none arrived."""
    since = doc.get("events_since_analysis")
    if not doc.get("state") or not since:
        return None
    return (f"{counted(since, 'event')} arrived since this analysis; approving approves it without "
            f"{'it' if since == 1 else 'them'}. To have them analysed first, replay with the current "
            "evidence (History & time travel).")


def sample_words(doc: dict) -> str | None:
    """ "all analysed, 50 quoted" when the analysis read every stored event (none arrived since, its
    evidence reaches the newest) but the state keeps only its first and latest events; else None."""
    evidence = (doc.get("state") or {}).get("evidence") or []
    if (len(evidence) != EVIDENCE_HEAD + EVIDENCE_TAIL or doc["event_count"] <= len(evidence)
            or doc.get("events_since_analysis") != 0 or not doc.get("last_seen")):
        return None
    newest = max(_parsed(e.get("time")) for e in evidence)
    if newest < _parsed(doc["last_seen"]):
        return None  # an older checkpoint's analysis: it rests on fewer (the next branch says so)
    return f"all analysed, {len(evidence)} quoted as a sample"


def _parsed(value) -> datetime:
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
