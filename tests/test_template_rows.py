"""The template miner's state is rows of the records store (schema 11): a batch saves only the
clusters and join keys it changed, another process reads only the rows saved since its own
revision, and a state saved whole by schema 9 is read as it was and saved as rows on its first
change."""
from __future__ import annotations

import json

from pipeline.incidents.batch import Incidents
from pipeline.incidents.fingerprints.miner import TemplateMiner
from pipeline.state import LogEvent
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS
from tests.support import BOTH_BACKENDS

MESSAGES = [f"{verb} failed for block blk_{n}77 on node-{n}" for n, verb in enumerate(
    ["Write", "Replication of", "Checksum", "Lease recovery", "Heartbeat", "Deletion"])]


def _event(n: int, message: str) -> LogEvent:
    # ten minutes apart: past the burst window, so each template is its own incident (one writer's
    # errors seconds apart are one outage, incidents/outage.py)
    return LogEvent(event_id=f"e{n:04d}", time=f"2026-11-28T{10 + n // 6:02d}:{n % 6 * 10:02d}:00Z", level="ERROR",
                    service="dfs", message=message)


def _rows(records: Records) -> dict[str, int]:
    return {r["template_id"]: r["revision"] for r in records.query("SELECT template_id, revision FROM template_clusters")}


@BOTH_BACKENDS
def test_a_batch_saves_only_the_templates_it_changed_and_another_store_reads_only_those(tmp_path, database_url):
    where = database_url or tmp_path / "app.sqlite3"
    a, b = Incidents(Records(where)), Incidents(Records(where))
    a.store_batch([_event(i, m) for i, m in enumerate(MESSAGES[:4])], cursor=None)
    first = _rows(a.records)
    assert len(first) == 4 and set(first.values()) == {1}
    header = json.loads(a.records.query("SELECT state FROM template_state")[0]["state"])
    assert header["kind"] == "rows" and "clusters" not in header and "tree" not in header  # never the whole state

    b.store_batch([_event(10, MESSAGES[4])], cursor=None)  # b reads a's rows, then saves its one new template
    second = _rows(b.records)
    assert {t: r for t, r in second.items() if r == 2} == {t: r for t, r in second.items() if t not in first}
    assert len(second) == 5 and all(second[t] == 1 for t in first)  # a's rows were not rewritten

    a.store_batch([_event(11, MESSAGES[5]), _event(12, MESSAGES[0].replace("blk_077", "blk_999"))], cursor=None)
    assert a.templates() == b.templates()
    assert len(a.templates()) == 6
    # every process, and a fresh one, gives each message the same template id
    fresh = Incidents(Records(where))
    assert fresh.templates() == a.templates()
    incidents = a.records.incidents()
    assert len(incidents) == 6 and sum(i["event_count"] for i in incidents) == 7
    for store in (a, b, fresh):
        store.records.close()


def test_a_whole_state_saved_by_schema_9_is_read_and_then_saved_as_rows(tmp_path):
    path = tmp_path / "app.sqlite3"
    learner = TemplateMiner(None)
    ids = [learner.add(m).template_id for m in MESSAGES[:3]]
    old = Records(path, migrations=MIGRATIONS[:9])
    with old.transaction() as conn:
        conn.execute("INSERT INTO template_state(id, revision, state, updated_at) VALUES (1, 3, $1, $2)",
                     (json.dumps(learner.state()), "2026-11-28T09:00:00+00:00"))
    old.close()

    incidents = Incidents(Records(path))
    assert incidents.templates() == learner.templates()
    incidents.store_batch([_event(1, MESSAGES[1]), _event(2, MESSAGES[3])], cursor=None)
    saved = _rows(incidents.records)
    assert set(ids) < set(saved) and len(saved) == 4  # the old clusters too: the rows are the whole state now
    assert json.loads(incidents.records.query("SELECT state FROM template_state")[0]["state"])["kind"] == "rows"
    assert Incidents(Records(path)).templates() == incidents.templates()
    incidents.records.close()
