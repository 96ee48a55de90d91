"""Never confidently wrong on weak evidence (issue 36, item 2): a cause is named at or above the
code-fix threshold only on decisive evidence. A doc's signature carried by INFO/DEBUG lines alone is
no failure; and when one cause's line comes first and another's follow (a full WAL disk, then every
client refused), the first is the cause and the analysis says it is not decisive."""
from __future__ import annotations

from pipeline.analyst.offline import UNDECIDED_CONFIDENCE, OfflineAnalyst
from pipeline.ingest.events import normalize
from pipeline.knowledge.retrieval import find_similar
from pipeline.state import IncidentState
from tests.support import THRESHOLD


def _analysed(kb, rows: list[dict]) -> IncidentState:
    events = [normalize(row, source="t", position=str(i)) for i, row in enumerate(rows)]
    state = IncidentState(incident_id="decisive-1", service=events[-1].service, evidence=events)
    state = state.model_copy(update={"similar_docs": find_similar(kb, events)})
    return state.model_copy(update={"rca": OfflineAnalyst(kb).rca(state)})


def test_the_cause_whose_line_came_first_is_named_not_its_symptoms(engine):
    refused = ("could not connect to server: Connection refused\n\tIs the server running on host \"db-7\" (10.9.0.4) "
               "and accepting\n\tTCP/IP connections on port 5432?")
    rows = [{"_time": "2026-06-01T10:00:00Z", "service": "postgres", "host": "db-7", "level": "FATAL",
             "message": "PANIC:  could not write to file \"pg_wal/xlogtemp.812\": No space left on device"}]
    rows += [{"_time": f"2026-06-01T10:00:{10 + i}Z", "service": "billing", "host": "b-1", "level": "ERROR",
              "exception": "psycopg2.OperationalError", "message": refused} for i in range(4)]
    rca = _analysed(engine.kb, rows).rca
    assert rca.category == "disk_full", (rca.category, rca.notes)
    assert rca.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD
    assert any("came first" in n and "connection_refused" in n for n in rca.notes)


def test_symptoms_alone_are_still_named_confidently(engine):
    rows = [{"_time": f"2026-06-01T10:00:{10 + i}Z", "service": "billing", "host": "b-1", "level": "ERROR",
             "exception": "psycopg2.OperationalError",
             "message": "could not connect to server: Connection refused"} for i in range(4)]
    rca = _analysed(engine.kb, rows).rca
    assert rca.category == "connection_refused" and rca.confidence >= THRESHOLD


def test_a_signature_only_in_info_lines_names_nothing_confidently(engine):
    rows = [{"_time": "2026-06-01T10:00:00Z", "service": "exporter", "host": "e-1", "level": "INFO",
             "message": "startup self-check: previous run ended with java.lang.OutOfMemoryError: Java heap space"},
            {"_time": "2026-06-01T10:00:05Z", "service": "exporter", "host": "e-1", "level": "ERROR",
             "message": "export 88 failed with status 3"},
            {"_time": "2026-06-01T10:00:09Z", "service": "exporter", "host": "e-1", "level": "ERROR",
             "message": "export 89 failed with status 3"}]
    rca = _analysed(engine.kb, rows).rca
    assert rca.category == "unknown" or rca.confidence < THRESHOLD, (rca.category, rca.confidence)


def test_a_symptom_wrapping_its_cause_in_one_trace_is_not_named_confidently(engine):
    # a pool's acquire timeout whose deepest `Caused by` is the database refusing: the refusal is the cause
    stack = ("org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection\n"
             "Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, "
             "request timed out after 30000ms (total=0, active=0, idle=0, waiting=9)\n"
             "Caused by: org.postgresql.util.PSQLException: Connection to db-9:5432 refused. Check that the hostname "
             "and port are correct and that the postmaster is accepting TCP/IP connections.\n"
             "Caused by: java.net.ConnectException: Connection refused")
    rows = [{"_time": f"2026-06-01T10:00:0{i}Z", "service": "accounts", "host": "a-1", "level": "ERROR",
             "message": "Failed to obtain JDBC Connection", "stack": stack} for i in range(2)]
    rca = _analysed(engine.kb, rows).rca
    assert rca.category == "connection_refused", (rca.category, rca.notes)
    assert rca.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD
    assert any("deeper cause" in n and "db_pool_exhausted" in n for n in rca.notes)


def test_chain_depth_reads_java_and_python_chains():
    from pipeline.analyst.cause_side import segments
    java = segments("Outer: a\n\tat x\nCaused by: Mid: b\nCaused by: Inner: c")
    assert [d for d, _ in java] == [0, 1, 2] and java[2][1].startswith("Caused by: Inner")
    python = segments("Traceback\nInner: c\n\nThe above exception was the direct cause of the following exception:\n\n"
                      "Traceback\nOuter: a")
    assert [d for d, _ in python] == [1, 0] and "Inner: c" in python[0][1]
    assert segments("no chain here") == [(0, "no chain here")]


def test_a_runner_up_nearly_as_well_supported_or_begun_first_leaves_the_top_undecided(engine):
    from pipeline.analyst.offline import Support, _contested
    pool, refused = engine.kb.by_id["java-hikari-pool-exhausted"], engine.kb.by_id["java-connect-exception-refused"]
    hikari = "HikariPool-1 - Connection is not available, request timed out after 30000ms."
    refusal = "java.net.ConnectException: Connection refused"

    def contested(rows, top_score, runner_score):
        events = [normalize(row, source="t", position=str(i)) for i, row in enumerate(rows)]
        state = IncidentState(incident_id="contested-1", service="a", evidence=events)
        top = Support(category="db_pool_exhausted", score=top_score, doc=pool, matched=(hikari,))
        runner = Support(category="connection_refused", score=runner_score, doc=refused, matched=(refusal,))
        return _contested(state, top, runner, OfflineAnalyst._carrying(state, top))

    def row(second, message):
        return {"_time": f"2026-06-01T10:00:{second:02d}Z", "service": "a", "level": "ERROR", "message": message}
    together = [row(1, f"{hikari} {refusal}"), row(2, f"{hikari} {refusal}")]
    assert "nearly as well" in contested(together, 4.0, 3.5)
    assert contested(together, 4.0, 2.5) is None  # a clear margin decides
    refusal_first = [row(1, refusal), row(2, hikari), row(3, refusal), row(4, hikari)]
    assert "began before" in contested(refusal_first, 4.0, 2.5)
    pool_first = [row(1, hikari), row(2, refusal), row(3, hikari)]
    assert contested(pool_first, 4.0, 3.5) is None  # the top's lines came first: the cause
