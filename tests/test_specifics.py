"""Specifics from the evidence (issue 36.2): the root cause and the recommendation name what the
events name (the peer's host:port, the endpoint, the certificate's expiry, the setting at its
limit, the deepest `Caused by`, the error's own words), each a finding quoted from an event, found
by shape in wordings no rule was written for; and no claim the evidence contradicts."""
from __future__ import annotations

import pytest

from pipeline.analyst import specifics
from pipeline.analyst.findings import event_texts
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.ingest.events import normalize
from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.knowledge.index import KnowledgeBase
from pipeline.knowledge.retrieval import find_similar
from pipeline.state import IncidentState


@pytest.fixture(scope="module")
def analyst():
    return OfflineAnalyst(KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder()))


def _events(service: str, *raw):
    out = []
    for i, item in enumerate(raw):
        body = {"message": item, "level": "ERROR"} if isinstance(item, str) else {"level": "ERROR", **item}
        out.append(normalize({"time": f"2027-05-01T10:00:{i:02d}Z", "service": service, **body},
                             source="test", position=str(i)))
    return out


def _analysed(analyst, service: str, *raw) -> IncidentState:
    state = IncidentState(incident_id="INC-s", service=service, evidence=_events(service, *raw))
    state = state.model_copy(update={"similar_docs": find_similar(analyst.kb, state.evidence)})
    state = state.model_copy(update={"rca": analyst.rca(state), "severity": "high"})
    return state.model_copy(update={"recommendation": analyst.recommend(state)})


def _quoted_where_found(state: IncidentState) -> None:
    """Every finding is quoted from an event: its first span slices its value out of that event."""
    by_id = {e.event_id: e for e in state.evidence}
    for finding in state.rca.findings:
        if finding.source != "evidence" or not finding.spans:
            continue
        span = finding.spans[0]
        text = dict(event_texts(by_id[span.event_id]) + [("stack", by_id[span.event_id].stack or "")]).get(span.field)
        text = text if text is not None else str(by_id[span.event_id].fields.get(span.field[7:], ""))
        assert text[span.start:span.end] == finding.value, finding


EXPIRED = ('delivery failed: Post "https://ledger.acme.test:9443/api/v2/entries": tls: failed to verify certificate: '
           "x509: certificate has expired or is not yet valid: current time 2027-05-01T10:00:00Z is after "
           "2027-04-30T23:59:59Z")


def test_a_certificates_peer_endpoint_and_expiry_are_named_in_the_root_cause_and_the_plan(analyst):
    state = _analysed(analyst, "ledger-sync", EXPIRED, EXPIRED.replace("10:00:00Z", "10:00:01Z"))
    rca = state.rca
    kinds = {(f.kind, f.value) for f in rca.findings}
    assert {("address", "ledger.acme.test:9443"), ("expiry", "2027-04-30T23:59:59Z"),
            ("endpoint", "https://ledger.acme.test:9443/api/v2/entries")} <= kinds
    for value in ("ledger.acme.test:9443", "2027-04-30T23:59:59Z", "x509: certificate has expired or is not yet valid"):
        assert value in rca.root_cause
    assert rca.root_cause.index("2027-04-30T23:59:59Z") < rca.root_cause.index("Why this happens:")
    plan = " ".join([state.recommendation.action, *state.recommendation.steps])
    assert "ledger.acme.test:9443" in plan and "2027-04-30T23:59:59Z" in plan
    _quoted_where_found(state)


def test_the_deepest_caused_by_ranks_first_and_the_banner_lines_are_no_statement():
    trace = ("com.acme.jobs.JobFailedException: nightly settlement failed\n"
             "\tat com.acme.jobs.Runner.run(Runner.java:77)\n"
             "Caused by: com.acme.store.StoreException: write rejected\n"
             "\tat com.acme.store.Store.put(Store.java:12)\n"
             "Caused by: java.io.IOException: Read-only file system: /srv/settlements/2027-05-01.csv\n"
             "\t... 4 more")
    events = _events("settlement", {"message": "nightly settlement failed", "stack": trace},
                     "#\n# A fatal error has been detected by the runtime:\n#\n#  SIGBUS (0x7) at pc=0x00007f00, pid=1\n#")
    ranked = specifics.statements(events)
    assert ranked[0].value == "java.io.IOException: Read-only file system: /srv/settlements/2027-05-01.csv"
    said = [f.value for f in ranked]
    assert "#  SIGBUS (0x7) at pc=0x00007f00, pid=1" in said and "#" not in said


def test_the_local_side_of_a_connection_is_no_peer_and_a_reset_is_no_refusal(analyst):
    line = ('sync failed: Post "https://intake.partner.test/v3/batches": read tcp 10.2.0.7:50412->10.88.4.2:443: '
            "read: connection reset by peer")
    state = _analysed(analyst, "sync-agent", line, line.replace("50412", "50419"))
    addresses = [f.value for f in state.rca.findings if f.kind == "address"]
    assert addresses == ["10.88.4.2:443"]
    assert "10.2.0.7:50412" not in state.rca.root_cause.split("The events say")[0]
    if state.rca.category == "connection_refused":  # the cause's own sentence says what the events say
        cause = state.rca.root_cause.split(". ")[0]
        assert "10.88.4.2:443" in cause and "reset" in cause and "refused" not in cause


def test_a_setting_is_named_when_the_errors_speak_of_it_or_repeat_its_number():
    events = _events("quotes-api",
                     {"level": "INFO", "message": "client ready (read_timeout_ms=2500, batch_size=500, retries=3)"},
                     {"level": "INFO", "message": "queue declared (x-max-backlog=20000, durable=true)"},
                     "ReadTimeout: read timed out after 2.5s calling pricing",
                     {"level": "WARN", "message": "backlog at 20000 messages, publisher blocked"})
    found = {f.value for f in specifics.extract(events, specifics.statements(events)) if f.kind == "setting"}
    assert found == {"read_timeout_ms=2500", "x-max-backlog=20000"}  # the batch size is no part of it


def test_a_link_to_read_is_not_part_of_the_statement_nor_an_endpoint():
    events = _events("batch", "TransferError: upstream closed the stream early; see https://docs.acme.test/errors/77 "
                              "for details")
    ranked = specifics.statements(events)
    assert ranked[0].value == "TransferError: upstream closed the stream early"
    assert not [f for f in specifics.extract(events, ranked) if "docs.acme.test" in f.value]


def test_a_trace_kept_in_a_field_names_its_file_and_its_exception(analyst):
    state = _analysed(analyst, "mailer", {"message": "receipt failed", "exc_info": (
        "Traceback (most recent call last):\n  File \"/srv/mailer/receipts.py\", line 88, in send\n"
        "    to = order.buyer.address\nAttributeError: 'NoneType' object has no attribute 'address'")})
    assert "AttributeError: 'NoneType' object has no attribute 'address'" in state.rca.root_cause
    assert any(f.kind == "file_line" and f.value == "/srv/mailer/receipts.py:88" for f in state.rca.findings)


def test_a_dotnet_inner_exception_is_the_deepest_cause_with_the_line_that_continues_it():
    trace = ("System.Net.Http.HttpRequestException: The request to the ledger failed, see inner exception.\n"
             " ---> System.IO.IOException: Unable to write data to the transport connection: lease lost\n"
             "   LeaseExpired for partition ledger-7\n"
             "   at System.Net.Sockets.NetworkStream.Write(Byte[] buffer)\n"
             "   --- End of inner exception stack trace ---")
    events = _events("ledger", trace)
    ranked = specifics.statements(events)
    assert ranked[0].value == ("System.IO.IOException: Unable to write data to the transport connection: lease lost\n"
                               "   LeaseExpired for partition ledger-7")
    span = ranked[0].spans[0]
    assert events[0].message[span.start:span.end] == ranked[0].value


def test_the_peer_a_context_line_goes_through_is_its_address(analyst):
    state = _analysed(analyst, "uploads",
                      {"level": "INFO", "message": "storing report r-77.pdf via https://blobs-2.store.internal:9000"},
                      "PutObject failed: 503 SlowDown, the store answered no space left on device")
    assert any("blobs-2.store.internal:9000" in f.value for f in state.rca.findings if f.kind == "address")
    _quoted_where_found(state)


def test_the_sql_statement_bracketed_after_a_database_error_is_named():
    events = _events("stock", 'Uncaught exception LockWaitTimeout: "1205 Lock wait timeout exceeded; try restarting '
                              'transaction" at /srv/app/src/Repository/StockRepository.php line 212 with a long tail of '
                              'context that pushes the statement past the quoted line\'s length: request id 88f1, '
                              'route reserve, attempt 1 of 1, user 4410, tenant eu-2, shard 7, pod stock-5c9 '
                              "(UPDATE stock_holds SET qty = qty - 1 WHERE sku IN ('A-1', 'B-2'))")
    said = [f.value for f in specifics.statements(events)]
    assert "UPDATE stock_holds SET qty = qty - 1 WHERE sku IN ('A-1', 'B-2')" in said
    assert specifics.statements(_events("notes", "save failed (update pending from another tab)"))[-1].value \
        == "save failed (update pending from another tab)"  # prose in brackets is no statement


def test_a_resource_run_out_names_its_bounds_and_the_count_at_its_maximum():
    events = _events("ingest", {"level": "INFO", "message": "sender ready maxInflightBatches=64 lingerMs=5"},
                     {"level": "INFO", "message": "sender stats: batches in_use=64/64 retries=0"},
                     "publish failed: outbound message queue is full")
    named = [f.value for f in specifics.extract(events, specifics.statements(events), bounded=True)
             if f.kind == "setting"]
    assert named[:2] == ["in_use=64/64", "maxInflightBatches=64"]
    # not said to be a resource run out, and no count at its maximum: a bound the errors do not speak of is no finding
    events = [events[0], events[2]]
    assert "maxInflightBatches=64" in [f.value for f in specifics.extract(events, [], bounded=True)]
    assert not [f for f in specifics.extract(events, specifics.statements(events)) if f.kind == "setting"]


def test_a_flag_that_is_its_bounds_own_word_is_the_setting_a_timed_out_line_speaks_of():
    events = _events("jobs", {"level": "INFO", "message": "queue worker started (--tries=3 --timeout=90)"},
                     "ReportJob has run too long and may have timed out")
    named = [f.value for f in specifics.extract(events, specifics.statements(events)) if f.kind == "setting"]
    assert named == ["--timeout=90"]  # its value without the bracket closing round it; `--tries=3` is not a bound


def test_a_process_limit_set_by_ulimit_is_the_bound_a_resource_run_out_names():
    events = _events("edge", {"level": "INFO", "message": "listener up on :8443, ulimit -n 4096"},
                     "accept failed: EMFILE, too many open files")
    assert "ulimit -n 4096" in [f.value for f in specifics.extract(events, specifics.statements(events), bounded=True)]


def test_the_end_of_an_inner_exceptions_trace_is_no_part_of_its_statement():
    trace = ("System.InvalidOperationException: The ledger call failed.\n"
             " ---> System.TimeoutException: The operation has timed out after 00:00:05.\n"
             "   --- End of inner exception stack trace ---\n"
             "   at Ledger.Client.Post()")
    assert specifics.statements(_events("ledger", trace))[0].value == \
        "System.TimeoutException: The operation has timed out after 00:00:05."


def _addresses(events):
    return [f.value for f in specifics.extract(events, specifics.statements(events)) if f.kind == "address"]


def test_the_client_side_of_an_access_line_or_an_ephemeral_port_is_no_peer():
    # an access line's first address is its client's, the host its request names the writer's own listener
    alb = ('https 2027-05-01T10:00:00Z app/quotes-alb/50dc 203.0.113.9:5521 - -1 -1 -1 503 - 210 336 '
           '"GET https://quotes.example.test:443/v1/quote?zip=1 HTTP/1.1" "Mozilla/5.0"')
    assert _addresses(_events("alb", alb)) == []
    assert _addresses(_events("api", 'INFO [uvicorn.access] 10.91.7.7:51122 - "POST /api/v1/query HTTP/1.1" 500')) == []
    # a source named by its word, or an ephemeral port no word says is called: the client's
    assert _addresses(_events("ch", "Code: 252. Too many parts (300). (from 10.220.5.17:48812) (in query: INSERT)")) == []
    assert _addresses(_events("lb", "backend 10.4.0.9:45120 sent an invalid response")) == []
    # ... but a port at or above 32768 the line says it calls is a listener (gRPC's 50051), and an upstream
    # after the request of an error line is the peer
    assert _addresses(_events("api", "dial tcp 10.0.0.5:50051: connect: connection refused")) == ["10.0.0.5:50051"]
    nginx = ('connect() failed (111: Connection refused) while connecting to upstream, client: 198.51.100.7, '
             'server: ws.example.test, request: "GET /socket HTTP/1.1", upstream: "http://10.90.2.11:8088/socket"')
    assert _addresses(_events("nginx", nginx)) == ["10.90.2.11:8088"]


def test_a_host_the_error_names_itself_beats_an_address_seen_only_in_another_line():
    events = _events("integrations",
                     "GET https://api.github.test/repos/acme/pulls failed: 403 Forbidden, API rate limit exceeded",
                     {"level": "ERROR", "service": "worker",
                      "message": "503 Server Error: Service Unavailable for url: http://integrations.svc:8080/x"})
    ranked = specifics.statements(events)
    assert ranked[0].event_ids == [events[0].event_id]
    assert _addresses(events)[0] == "api.github.test"
    assert _addresses(_events("app", "could not connect for host db-2: timeout expired"))[0] == "db-2"
    # ... the same host's port another line writes keeps the port; a key's documentation link is none
    events = _events("pay", 'POST https://api.pay.test/v2/charges failed: {"documentation_url":"https://docs.pay.test/x"}',
                     {"level": "ERROR", "service": "proxy", "message": "handshake with api.pay.test:443 failed"},
                     {"level": "ERROR", "service": "proxy", "message": "upstream cache.svc:6379 slow"})
    assert _addresses(events) == ["api.pay.test:443", "cache.svc:6379"]
