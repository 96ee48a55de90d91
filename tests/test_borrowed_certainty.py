"""No borrowed certainty: a doc written for one technology does not carry an analysis
of evidence from another to the code-fix threshold, and a link in a hint text is not the failing host.
The lines are Loghub's (ZooKeeper, OpenSSH, Hadoop) and the demo's, sent as JSON errors."""
from __future__ import annotations

import pytest

from pipeline.analyst import findings, technology
from pipeline.analyst.offline import ANALOGY_CONFIDENCE, OfflineAnalyst
from pipeline.engine.nodes import fix_eligible, not_eligible_reason
from pipeline.ingest.events import normalize
from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.knowledge.index import KnowledgeBase
from pipeline.state import IncidentState
from tests.support import THRESHOLD


HADOOP = ("Task: attempt_1445144423722_0020_m_000002_0 - exited : java.net.NoRouteToHostException: No Route to "
          "Host from  MININT-FNANLI5/127.0.0.1 to msra-sa-41:9000 failed on socket timeout exception: "
          "java.net.NoRouteToHostException: No route to host: no further information; For more details see:  "
          "http://wiki.apache.org/hadoop/NoRouteToHost")


@pytest.fixture(scope="module")
def analyst():
    return OfflineAnalyst(KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder()))


def _state(service: str, *messages: str, **extra) -> IncidentState:
    events = [normalize({"time": f"2026-01-05T08:00:0{i}Z", "level": "ERROR", "service": service, "message": m, **extra},
                        source="test", position=str(i)) for i, m in enumerate(messages)]
    return IncidentState(incident_id="INC-t", service=service, evidence=events)


def _analysed(analyst, state: IncidentState) -> IncidentState:
    return state.model_copy(update={"rca": analyst.rca(state), "severity": "high"})


def test_an_sshd_reset_is_no_java_clients_refused_connection(analyst):
    state = _analysed(analyst, _state("sshd", "fatal: Write failed: Connection reset by peer [preauth]",
                                      "fatal: Read from socket failed: Connection reset by peer [preauth]"))
    rca = state.rca
    assert rca.category != "unknown" and rca.doc_ids  # a doc's signature matched the words
    assert rca.confidence <= ANALOGY_CONFIDENCE < THRESHOLD
    # what the events say leads; the analogy qualifies the doc's "why", it is never the cause itself
    assert rca.root_cause.startswith("The first error came from sshd") and "Connection reset by peer" in rca.root_cause
    analogy = rca.root_cause.index("By analogy: the evidence shows linux")
    assert rca.root_cause.index("Connection reset by peer") < analogy < rca.root_cause.index("Why this happens:")
    assert not fix_eligible(state, THRESHOLD) and not fix_eligible(state, 0.1)  # whatever the threshold
    assert "By analogy" in not_eligible_reason(state, THRESHOLD)


def test_a_zookeeper_session_expiry_is_not_a_node_services_http_call(analyst):
    state = _analysed(analyst, _state("ZooKeeperServer", "Expiring session 0x14ede63a5a70001, timeout of 10000ms exceeded",
                                      "Expiring session 0x24ede63a01b003b, timeout of 10000ms exceeded"))
    rca = state.rca
    assert rca.category != "unknown" and rca.doc_ids  # the timeout words match a Node doc
    assert rca.confidence < THRESHOLD and "the evidence shows java" in rca.root_cause and not fix_eligible(state, THRESHOLD)


def test_a_node_services_429_rests_on_the_node_doc_not_the_java_one(analyst):
    # two calls refused at different times (a lone line is capped below the threshold: pipeline/analyst/earned.py)
    state = _state("loyalty-service", *["Request failed with status code 429"] * 2, exception="AxiosError",
                   stack="AxiosError: Request failed with status code 429\n    at settle "
                         "(/srv/loyalty-service/node_modules/axios/dist/node/axios.cjs:2019:12)")
    rca = analyst.rca(state)
    assert rca.category == "upstream_rate_limited" and rca.doc_ids == ["node-stripe-axios-429"]
    assert rca.supported and rca.confidence >= THRESHOLD and "By analogy" not in rca.root_cause


def test_the_hadoop_wiki_link_is_not_the_host_that_fails(analyst):
    state = _state("org.apache.hadoop.mapred.TaskAttemptListenerImpl", HADOOP)
    found = {(f.kind, f.value) for f in findings.extract(state.evidence)}
    assert ("host", "msra-sa-41") in found and ("port", "9000") in found
    assert not any(value == "wiki.apache.org" for _, value in found)
    rca = analyst.rca(state)
    assert "wiki.apache.org" not in rca.root_cause and "msra-sa-41:9000" in rca.root_cause
    assert "java" in technology.shown_by(state.evidence) and rca.supported  # a Java doc for a Java exception


def test_a_url_that_fails_is_still_the_host():
    state = _state("click-collect", 'I/O error on POST request for "http://inventory.pos.svc.cluster.local:8080/api": '
                                    "Read timed out; see https://docs.example.org/timeouts")
    found = {(f.kind, f.value) for f in findings.extract(state.evidence)}
    assert ("host", "inventory.pos.svc.cluster.local") in found and ("port", "8080") in found
    assert ("host", "docs.example.org") not in found


@pytest.mark.parametrize("service, message, shows", [
    ("dfs.DataNode$PacketResponder", "PacketResponder 1 for block blk_38865049064139660 terminating", "java"),
    ("sshd(pam_unix)", "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=220.117.241.87", "linux"),
    ("xinetd", "warning: can't get client address: Connection reset by peer", "linux"),
    ("chrome.exe", "proxy.cse.cuhk.edu.hk:5070 close, 0 bytes sent, 0 bytes received", "windows"),
    ("reports", 'Traceback (most recent call last):\n  File "/app/run.py", line 3, in <module>', "python"),
    ("catalog-api", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "node"),
])
def test_the_technology_an_event_shows(service, message, shows):
    shown = technology.shown_by(_state(service, message).evidence)
    assert shows in shown
    assert not ({"java", "python", "node", "go"} - {shows}) & shown  # and no other runtime


def test_a_trace_in_an_error_field_shows_its_runtime():
    event = normalize({"time": "2026-01-05T08:00:00Z", "level": "ERROR", "service": "billing", "message": "job crashed",
                       "exc_info": 'Traceback (most recent call last):\n  File "/srv/billing/tasks.py", line 9, in run\n'
                                   "ZeroDivisionError: division by zero"}, source="test", position="0")
    assert "python" in technology.shown_by([event])


def test_a_doc_fits_through_its_libraries_runtime():
    assert technology.doc_fits(("hikari", "spring"), frozenset({"java"}))
    assert not technology.doc_fits(("node", "axios"), frozenset({"java"}))
    assert not technology.doc_fits(("java",), frozenset())  # nothing shown: no doc's technology is shown
    assert technology.doc_fits(("http",), frozenset({"go"}))  # protocols name no technology
