"""Real logs in the workbench (issue 38.5): the file source's incidents from two of the shared
Loghub systems read in the inbox as distinct problems, titled in the log's own words with none of
the miner's placeholders; and titles stored by an earlier release (a masked template) read so too."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.incidents.correlation import template, title
from pipeline.state import TEMPLATE_PLACEHOLDER
from pipeline.unattended.file_ingest import ingest_path
from tests.support import APP, TIMEOUT

SYSTEMS = ("OpenSSH", "Apache")
# a title that opens with a number, a day or a month name opens with the line's time or pid
LEAD_TIME = re.compile(r"\W*(?:\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                       r"[a-z]*\b)", re.I)  # a syslog with hosts and pids; a log with neither service nor host


@pytest.fixture
def loghub_app(engine, needs_loghub, monkeypatch):
    from workbench import session

    for system in SYSTEMS:
        ingest_path(engine, needs_loghub / system / f"{system}_2k.log")
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    yield at
    session._runtime.clear()


def in_the_logs_words(shown: str, message: str, exception: str | None, service: str = "") -> bool:
    """Whether a title is the opening line's own words (after its header; maybe cut with one '…'): its
    words in the line's order but the failure first (pipeline/incidents/titles.py), a field without a
    value left out, a colon over nothing said by its writer ("… in NIOServerCnxn")."""
    words = shown.removesuffix("…")
    if exception:
        words = words.removeprefix(exception.rsplit(".", 1)[-1] + ": ")
    if service and words.endswith(f" in {service}"):
        words = words.removesuffix(f" in {service}")
    return all(word in message for part in words.split(" · ") for word in part.split())


def test_the_inbox_of_real_logs_lists_distinct_problems_in_the_logs_words(loghub_app, engine):
    rows = {r["incident_id"]: r for r in engine.records.incidents(status="awaiting_approval")}
    frame = loghub_app.dataframe(key="inbox_table").value
    # several problems, not one per line nor all in one (sshd's later lines of one attack join its incident)
    assert set(frame["incident_id"]) == set(rows) and len(rows) >= 6
    titles = dict(zip(frame["incident_id"], frame["title"]))
    for incident_id, shown in titles.items():
        assert not TEMPLATE_PLACEHOLDER.search(shown) and "…" not in shown.removesuffix("…"), shown
        [first] = engine.records.events_of(incident_id, limit=1)
        assert in_the_logs_words(shown, first.message, first.exception, first.service), (shown, first.message)
        assert not LEAD_TIME.match(shown), shown  # no lead timestamp or pid
    # distinct problems: no two rows of one service say the same
    said = [(rows[i]["service"], t) for i, t in titles.items()]
    assert len(set(said)) == len(said)


def test_a_title_stored_as_a_template_by_an_earlier_release_reads_in_the_logs_words(app, paused_engine):
    from tests.support import texts

    rows = paused_engine.records.incidents(status="awaiting_approval")
    expected = {}
    for row in rows:
        [first] = paused_engine.records.events_of(row["incident_id"], limit=1)
        old = template(first.message.splitlines()[0])  # what earlier releases stored: the masked first line
        with paused_engine.records.transaction() as conn:
            conn.execute("UPDATE incidents SET title = $1 WHERE incident_id = $2", (old, row["incident_id"]))
        expected[row["incident_id"]] = title(first)
    assert any(TEMPLATE_PLACEHOLDER.search(r["title"]) for r in paused_engine.records.incidents())
    app.run()
    frame = app.dataframe(key="inbox_table").value
    titles = dict(zip(frame["incident_id"], frame["title"]))
    assert titles == expected
    assert not [t for t in titles.values() if "…" in t or "<" in t]
    # rebuilt once: written back, so the next read (and search, notifications, the CLI) has it
    assert {r["incident_id"]: r["title"] for r in paused_engine.records.incidents()} == expected
    # the incident page's heading too
    some = next(iter(expected))
    from tests.support import open_incident

    open_incident(app, some)
    assert expected[some] in texts(app)
