"""Issue 35 (session 42): the outage rules on logs as services write them. Containers' prefixed lines
are read per container (compose ` | `, `kubectl logs --prefix`); klog and `[LEVEL]` headers are
written levels; a WARN never opens an incident by itself but one stating the cause and naming what
the errors name leads them; errors name things in their fields and their stacks' exception lines;
a dump's line is recognised by its shape (BGL's flags padded by dots, headings, machine words)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.incidents import leading, line_names, outage
from pipeline.ingest.reading import Parsing, record_joiner
from pipeline.state import LogEvent
from pipeline.unattended.file_ingest import ingest_file
from pipeline.unattended.outage_bed import Scenario, _score, run, scenarios
from tests.support import BOTH_BACKENDS

OPEN = Path(__file__).resolve().parent / "data" / "outages" / "open"
T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)

COMPOSE = """\
db-1      | 2025-06-02 09:14:02.981 UTC [1] LOG:  received fast shutdown request
api-1     | 2025-06-02 09:14:05.331 ERROR 1 --- [nio-8080-exec-3] o.h.engine.jdbc.spi.SqlExceptionHelper   : Connection to db:5432 refused.
api-1     | 2025-06-02 09:14:05.340 ERROR 1 --- [nio-8080-exec-3] c.e.shop.web.OrderController             : GET /api/orders failed
api-1     | org.springframework.transaction.CannotCreateTransactionException: Could not open JPA EntityManager
nginx-1   | 2025/06/02 09:14:36 [error] 29#29: *1043 upstream timed out (110: Connection timed out) while reading response header from upstream, client: 172.18.0.1, server: _, request: "GET /api/orders HTTP/1.1", upstream: "http://172.18.0.5:8080/api/orders", host: "localhost"
api-1     | \tat org.springframework.orm.jpa.JpaTransactionManager.doBegin(JpaTransactionManager.java:466)
api-1     | Caused by: org.postgresql.util.PSQLException: Connection to db:5432 refused.
"""


def _records(text: str) -> list[tuple[str, object]]:
    lines = text.splitlines(keepends=True)
    parser = Parsing().parser(lines)
    joiner = record_joiner(parser, lambda line: False)
    out = []
    for n, line in enumerate(lines):
        out += joiner.feed(n, line)
    return [(r.text, parser.parse(r.text)) for r in out + joiner.flush()]


def test_compose_lines_are_read_per_container_a_trace_stays_one_record_across_another_containers_line():
    read = _records(COMPOSE)
    assert [(p.service, p.host, p.level_name) for _, p in read] == [
        ("db", "db-1", "INFO"), ("api", "api-1", "ERROR"), ("api", "api-1", "ERROR"), ("nginx", "nginx-1", "ERROR")]
    trace = read[2][1]
    # the Java trace printed by api-1 around nginx-1's line is the api record's stack, prefix-free
    assert trace.message.startswith("GET /api/orders failed") and trace.stack is not None
    assert "Caused by: org.postgresql.util.PSQLException" in trace.stack and "nginx" not in trace.stack
    assert "|" not in trace.stack and trace.fields.get("logger") == "c.e.shop.web.OrderController"
    assert read[3][1].message.startswith("upstream timed out")  # nginx's own layout, not api's


def test_a_crash_banner_and_composes_exit_line_are_one_incident_with_the_callers_refusals():
    """A JVM's fatal-error banner on stdout (no level on any line), compose's `search-1 exited with
    code 134` about that container (no bar: the container's own line all the same), and the API's
    refused searches: one incident, led by the banner's first line."""
    (cause,) = run({s.name: s for s in scenarios(OPEN)}["s44_jvm_sigsegv_stdout"])["causes"]
    assert cause["incidents"] == 1 and cause["leader_right"], cause


def test_kubectl_prefix_names_the_container_as_service_and_the_pod_as_host():
    text = ("[pod/cart-6b8d5c4f9-w7x2p/cart] {\"level\":50,\"time\":1748858533020,\"msg\":\"session read failed\"}\n"
            "[pod/session-7d4b9c5f8-h2kz9/session] 2025-06-02 10:02:12,510 ERROR [session.store] load failed\n"
            "[pod/cart-6b8d5c4f9-w7x2p/cart] {\"level\":30,\"time\":1748858534020,\"msg\":\"ok\"}\n")
    read = [p for _, p in _records(text)]
    assert [(p.service, p.host, p.level_name) for p in read] == [
        ("cart", "cart-6b8d5c4f9-w7x2p", "ERROR"), ("session", "session-7d4b9c5f8-h2kz9", "ERROR"),
        ("cart", "cart-6b8d5c4f9-w7x2p", "INFO")]


def test_a_klog_info_probe_failure_opens_nothing_and_its_error_lines_keep_their_level(tmp_path, engine):
    log = tmp_path / "journal.log"
    log.write_text(
        'Jun 02 17:00:03 node-4 kubelet[990]: I0602 17:00:03.551210     990 prober.go:107] "Probe failed" '
        'probeType="Readiness" pod="default/api-1" output="Get \\"http://10.244.3.21:8080/ready\\": dial tcp '
        '10.244.3.21:8080: connect: connection refused"\n'
        'Jun 02 17:00:04 node-4 coredns[77]: [INFO] 10.244.1.7:41321 - 5517 "A IN api.svc. udp 53" NOERROR 0.0002s\n')
    ingest_file(engine, log)
    assert engine.records.incidents() == []
    log.write_text(log.read_text() + 'Jun 02 17:00:09 node-4 kubelet[990]: E0602 17:00:09.102088     990 '
                   'pod_workers.go:1298] "Error syncing pod, skipping" err="CrashLoopBackOff"\n')
    ingest_file(engine, log)
    (incident,) = engine.records.incidents()
    (event,) = engine.records.events_of(incident["incident_id"])
    assert event.level == "ERROR" and "level_inferred" not in event.fields and event.message.startswith('"Error syncing')


def _event(n: int, seconds: float, service: str, message: str, *, level: str = "ERROR", host: str = "h1",
           **fields: str) -> LogEvent:
    return LogEvent(event_id=f"w-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source="test", position=f"test@{n}", fields=fields)


@BOTH_BACKENDS
def test_a_warn_stating_the_cause_leads_the_errors_that_name_its_broker_and_opens_nothing_alone(engine):
    warn = _event(1, 0, "orders", "[Producer clientId=orders] Connection to node 1 (kafka-0.kafka/10.244.2.9:9092)"
                  " could not be established. Node may not be available.", level="WARN")
    unrelated = _event(2, 1, "orders", "cache warm-up slower than usual", level="WARN")
    engine.incidents.store_batch([warn, unrelated], cursor=None)
    assert engine.records.incidents() == []  # a WARN never opens an incident by itself
    errors = [warn, _event(3, 90, "orders", "publish to orders.placed failed: broker 10.244.2.9:9092 did not answer"),
              _event(4, 91, "api", "POST /api/orders returned 503", err="publish to orders.placed failed")]
    engine.incidents.store_batch([_event(5, 0.5, "orders", warn.message, level="WARN"), *errors[1:]], cursor=None)
    (incident,) = engine.records.incidents()
    leader = json.loads(engine.records.query("SELECT leader FROM incidents")[0]["leader"])
    assert leader["event_id"] == "w-5" and leader["rank"] == "cause" and leader["pattern"].startswith("warn:")
    assert leader["position"] == "test@5" and "warning" in leader["reason"]
    assert incident["event_count"] == 2  # the WARN leads; it is not one of the incident's events


@BOTH_BACKENDS
def test_a_warn_naming_nothing_the_errors_name_does_not_lead(engine):
    engine.incidents.store_batch([
        _event(1, 0, "billing", "ledger-db:5432 connection refused, will retry", level="WARN", host="b1"),
        _event(2, 5, "search", "index shard 3 of products is missing", host="s1")], cursor=None)
    leader = json.loads(engine.records.query("SELECT leader FROM incidents")[0]["leader"])
    assert leader["event_id"] == "w-2"


def test_errors_name_what_their_fields_and_their_stacks_exception_lines_name():
    go = _event(1, 0, "payments", "charge failed", err='Post "https://partner-gw.pay.example/v1/charge": dial tcp: '
                'lookup partner-gw.pay.example on 10.96.0.10:53: i/o timeout', logger="payments")
    assert {"res:partner-gw.pay.example", "hp:10.96.0.10:53"} <= line_names.named_things(go)
    py = LogEvent(event_id="p", time=T0, service="worker", level="ERROR", message="sync_inventory failed",
                  stack='Traceback (most recent call last):\n  File "/app/sync.py", line 41, in sync\n'
                        'psycopg2.OperationalError: connection to server at "db" (172.18.0.3), port 5432 failed: '
                        'Connection refused\n\tIs the server running on that host?')
    assert {"hp:db:5432", "hp:172.18.0.3:5432"} <= line_names.named_things(py)
    java = LogEvent(event_id="j", time=T0, service="api", level="ERROR", message="GET /api/orders failed",
                    stack="org.x.CannotCreateTransactionException: no tx\n\tat org.x.Tx.begin(Tx.java:1)\n"
                          "Caused by: org.postgresql.util.PSQLException: Connection to db:5432 refused.")
    assert "hp:db:5432" in line_names.named_things(java)
    plain = _event(2, 0, "indexer", "bulk index failed: dial tcp 10.0.4.2:9200: connect: connection refused")
    assert "hp:10.0.4.2:9200" in line_names.named_things(plain)


def test_a_refusal_with_its_retry_plan_is_the_cause_a_bare_retry_a_symptom():
    said = _event(1, 0, "indexer", "bulk index failed: dial tcp 10.0.4.2:9200: connect: connection refused;"
                  " retrying in 1s (attempt 1/5)")
    assert leading.rank(said) == leading.CAUSE
    assert leading.rank(_event(2, 0, "indexer", "bulk index failed; retrying in 2s (attempt 2/5)")) == leading.SYMPTOM
    assert leading.rank(_event(3, 0, "web", "GET /x timed out after connection refused")) == leading.SYMPTOM


def test_a_dumps_lines_are_read_by_their_shape_and_errors_are_not():
    dumps = ["program interrupt: privileged instruction...0", "problem state (0=sup,1=usr).......0",
             "program interrupt: unimplemented operation..0", "guaranteed instruction cache block touch.0",
             "size of scratchpad portion of L3.........0 (0M)", "special purpose registers:",
             "fpr29=0xffffffff ffffffff ffffffff ffffffff", "machine check: i-fetch......................0"]
    errors = ["rts internal error", "failed to open file messages.0", "The following errors occurred:",
              "upgraded to version 2.0", "Connection refused...retrying", "data TLB error interrupt",
              "Node card status: no ALERTs are active.", "Waiting for lock..."]
    assert [outage.is_dump(m) for m in dumps] == [True] * len(dumps)
    assert [outage.is_dump(m) for m in errors] == [False] * len(errors)


def test_the_healthy_controls_of_the_new_scenarios_open_nothing_and_their_outages_one_incident_each():
    bed = {s.name: s for s in scenarios(OPEN)}
    for name in ("s42_healthy_rolling_deploy", "s42_healthy_noisy_warns"):
        assert run(bed[name])["incidents"] == 0, name
    for name in ("s42_kubectl_redis_warn_first", "s42_kafka_broker_warn_first", "s42_hikari_leak_drains_pool",
                 "s42_expired_partner_cert", "s42_coredns_forwarder_timeout"):
        (cause,) = run(bed[name])["causes"]
        assert cause["incidents"] == 1 and cause["leader_right"], (name, cause)
    two = run(bed["s42_compose_two_failures_same_minute"])
    assert two["merged"] == [] and [c["incidents"] for c in two["causes"]] == [1, 1]


def test_a_cause_split_evenly_is_scored_on_the_incident_holding_its_earliest_line_whatever_the_hash_order():
    cause = {"name": "C1", "lines": [3, 4, 7, 8], "leader": 3}
    scenario = Scenario("tie", Path("tie.log"), False, [cause])
    leaders = {"INC-b": (3, None), "INC-a": (7, None)}
    for held in ({3: "INC-b", 4: "INC-b", 7: "INC-a", 8: "INC-a"}, {3: "INC-b", 7: "INC-a", 8: "INC-a", 4: "INC-b"}):
        scored = _score(scenario, dict(held), leaders)["causes"][0]
        assert (scored["incidents"], scored["leader_line"], scored["leader_right"]) == (2, 3, True)
