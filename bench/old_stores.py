"""Old records stores for upgrade tests and the chaos bench: today's write path writing a store
kept at an earlier schema, as that schema's code wrote it (shared by tests/ and bench/, which
must not import the tests)."""
from __future__ import annotations

import contextlib
import json


@contextlib.contextmanager
def written_as_before_schema_11(records):
    """Let today's write path (store_batch) write a store kept at a schema before 11, as that
    schema's code wrote it: the tables of schema 11 exist while the block runs, then the miner's
    state is saved whole (as schema 10 saved it) and the tables go, so migration 11 finds what it
    would find. The block must store no context events (they would be lost with the tables)."""
    from pipeline.incidents.fingerprints.miner import TemplateMiner
    from pipeline.store import incident_rows
    from pipeline.store.schema import TYPES, _v11_context_blocks

    tables = ("context_blocks", "context_keys", "context_ids", "template_clusters", "template_keys")
    with records.transaction() as conn:
        for statement in _v11_context_blocks(TYPES[conn.dialect]):
            conn.execute(statement)
    yield records
    with records.transaction() as conn:
        assert conn.execute("SELECT count(*) AS n FROM context_ids").fetchone()["n"] == 0
        revision = incident_rows.template_revision(conn)
        if revision:
            header = json.loads(incident_rows.template_state(conn))
            whole = TemplateMiner.from_state(incident_rows.template_changes(conn, header, 0)).state()
            conn.execute("UPDATE template_state SET state = $1 WHERE id = 1", (json.dumps(whole),))
        for table in tables:
            conn.execute(f"DROP TABLE {table}")

