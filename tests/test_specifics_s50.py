"""Specifics from the evidence (issue 36.2), session 50: what a context line says of the failing resource
(a certificate's `notAfter=` in an INFO line beside a handshake refused for its expiry, a resource counted at
its maximum, a kernel setting the cause's doc speaks of with its range), a Go panic's own message rather
than the signal line under it, the versions a change line names, and no listening address taken for a
dependency."""
from __future__ import annotations

from pipeline.analyst import evidence_report, findings, specifics
from tests.support import analyst_events, offline_rca


def test_a_certificates_expiry_said_in_a_context_line_is_named_by_its_key(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "peer cert for api.pay.example: subject=CN=api.pay.example "
                                                   "notAfter=2027-02-01T00:00:00Z"},
                      "payment call failed: TLS handshake error: certificate has expired")
    assert "notAfter=2027-02-01T00:00:00Z" in rca.root_cause
    # ... but not beside errors that speak of no certificate
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "peer cert for api.pay.example notAfter=2027-02-01T00:00:00Z"},
                      "dial tcp 10.0.0.4:5432: connect: connection refused")
    assert "notAfter" not in rca.root_cause


def test_a_resource_counted_at_its_maximum_in_a_context_line_is_quoted_whole(offline_analyst):
    rca = offline_rca(offline_analyst, "accept failed: Too many open files (os error 24)",
                      {"level": "INFO", "message": "open sockets 4096/4096, pending dials 311"})
    assert "open sockets 4096/4096" in rca.root_cause
    rca = offline_rca(offline_analyst,
                      {"level": "WARN", "message": "conn pool: Status { max_size: 8, size: 8, available: 0, waiting: 14 }"},
                      "could not check out a database connection from the pool: timed out after 5s")
    assert "max_size: 8, size: 8, available: 0, waiting: 14" in rca.root_cause


def test_a_setting_the_causes_doc_names_is_named_with_its_range(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "sockets in TIME_WAIT: 30211 (net.ipv4.ip_local_port_range=40000 60999)"},
                      'Get "https://tiles.example/v1/z": dial tcp 203.0.113.9:443: connect: cannot assign requested address')
    assert rca.category == "resource_exhaustion"
    assert "net.ipv4.ip_local_port_range=40000 60999" in rca.root_cause


def test_a_go_panics_message_is_its_statement_not_the_signal_line_under_it():
    events = analyst_events("panic: runtime error: index out of range [3] with length 3\n"
                            "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1f]\n\n"
                            "goroutine 7 [running]:\nmain.pick(...)\n\t/src/app/pick.go:12 +0x1d")
    assert specifics.statements(events)[0].value == "panic: runtime error: index out of range [3] with length 3"


def test_the_change_line_of_versions_that_do_not_fit_is_named(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "composer update: guzzlehttp/psr7 (1.9.1 => 2.6.2)"},
                      "PHP Fatal error:  Declaration of App\\Http\\Stream::read($n) must be compatible with "
                      "Psr\\Http\\Message\\StreamInterface::read(int $length): string")
    assert rca.category == "dependency_mismatch"
    assert "guzzlehttp/psr7 (1.9.1 => 2.6.2)" in rca.root_cause


def test_a_listening_address_is_no_dependency():
    events = analyst_events({"level": "INFO", "message": "Responding at http://0.0.0.0:8080"},
                            "Unhandled: GET /cart: lateinit property repo has not been initialized")
    found = findings.extract(events)
    assert not any(f.value.startswith("0.0.0.0") for f in found if f.kind in ("host", "address"))
    report = evidence_report.build(events, found, [], [])
    assert not any("0.0.0.0" in h.statement for h in report.hypotheses)


def test_a_context_line_naming_by_key_what_the_error_speaks_of_is_named(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "uploader ready bucket=media-eu-7 parts=8"},
                      "PutObject failed: SlowDown: please reduce your request rate for this bucket")
    assert "bucket=media-eu-7 parts=8" in rca.root_cause
    # ... a key the errors do not speak of is no specific of theirs
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "uploader ready region=eu-west-3 parts=8"},
                      "PutObject failed: SlowDown: please reduce your request rate for this bucket")
    assert "region=eu-west-3" not in rca.root_cause
