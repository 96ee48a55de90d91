"""One outage, one incident (issue 35.1, 35.2): errors of different patterns and services that name
the same thing within the burst window are one incident with its patterns as members and a leader
(the earliest cause-side error, with its reason); a dump's lines fold into its first line's
incident; two failures at the same moment that name nothing in common stay apart. The decisions
are the store's, so a fresh incident step (a restarted process) reads them back."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.clock import iso
from pipeline.incidents.batch import Incidents
from pipeline.review.service import ReviewService
from pipeline.state import LogEvent
from tests.support import BOTH_BACKENDS, cli_here, events_of, incidents_by_first_seen, write_jsonl

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
ROOT = Path(__file__).resolve().parent.parent


def _event(n: int, seconds: float, service: str, message: str, *, host: str = "h1", level: str = "ERROR") -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source="test", position=f"test@{n}")


def _cascade() -> list[LogEvent]:
    """A refusal, the timeouts it causes in a caller, the 503s a gateway answers; and at the same
    moment a disk filling up elsewhere, naming nothing of it."""
    return [
        _event(1, 1.0, "orders", "Connection to orders-db:5432 refused. Check that the postmaster is accepting TCP/IP"),
        _event(2, 1.5, "billing", "write /var/lib/billing/ledger/2026-12.dat: no space left on device"),
        _event(3, 6.0, "checkout", "Timeout calling orders: GET http://orders:8080/api/orders/17 exceeded 5000ms"),
        _event(4, 6.5, "checkout", "Timeout calling orders: GET http://orders:8080/api/orders/18 exceeded 5000ms"),
        _event(5, 7.0, "gateway", "upstream checkout responded 503 for GET /api/orders/17"),
        _event(6, 2.0, "orders", "Connection to orders-db:5432 refused. Check that the postmaster is accepting TCP/IP"),
    ]




@BOTH_BACKENDS
def test_a_refusal_its_timeouts_and_503s_are_one_incident_led_by_the_refusal_read_last(engine):
    cascade = _cascade()
    # the callers' logs are read first, the failing service's last, in another batch
    engine.incidents.store_batch([e for e in cascade if e.service in ("gateway", "checkout", "billing")], cursor=None)
    engine.incidents.store_batch([e for e in cascade if e.service == "orders"], cursor=None)
    outage, disk = sorted(incidents_by_first_seen(engine), key=lambda r: -r["event_count"])
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-3", "ev-4", "ev-5", "ev-6"}
    assert (outage["pattern_count"], outage["service_count"], outage["event_count"]) == (3, 3, 5)
    assert outage["leader"]["event_id"] == "ev-1" and outage["leader"]["service"] == "orders"
    assert outage["leader"]["rank"] == "cause" and "earliest error that names a cause" in outage["leader"]["reason"]
    assert events_of(engine, disk["incident_id"]) == {"ev-2"}  # same moment, nothing named in common
    shown = engine.records.incident(outage["incident_id"])["leader"]
    assert shown["event_id"] == "ev-1"  # what `show --json` and the incident page read


@BOTH_BACKENDS
def test_a_restarted_incident_step_keeps_joining_the_outage_and_its_patterns(engine):
    cascade = _cascade()
    engine.incidents.store_batch(cascade[:2], cursor=None)
    # a new process: a fresh incident step with nothing in memory, reading the store
    fresh = Incidents(engine.records, opening=engine.incidents.opening, burst_minutes=5)
    fresh.store_batch(cascade[2:4], cursor=None)  # the timeouts join the refusal's incident by name
    again = Incidents(engine.records, opening=engine.incidents.opening, burst_minutes=5)
    later = _event(7, 200.0, "checkout", "Timeout calling orders: GET http://orders:8080/api/orders/99 exceeded 5000ms")
    again.store_batch([later], cursor=None)  # its pattern now leads to the outage's incident, whatever it names
    outage = next(r for r in incidents_by_first_seen(engine) if "ev-1" in events_of(engine, r["incident_id"]))
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-3", "ev-4", "ev-7"}
    assert len(incidents_by_first_seen(engine)) == 2


@BOTH_BACKENDS
def test_an_error_naming_the_same_thing_after_the_burst_window_opens_its_own_incident(engine):
    engine.incidents.store_batch([_event(1, 0, "orders", "Connection to orders-db:5432 refused")], cursor=None)
    late = _event(2, 3600, "reports", "query on orders-db:5432 failed: connection reset by peer")
    engine.incidents.store_batch([late], cursor=None)  # an hour on: another failure, not this one's
    assert len(incidents_by_first_seen(engine)) == 2


def test_names_a_process_owns_do_not_tie_two_services_failing_at_the_same_moment(engine):
    # every Spring app calls its pool HikariPool-1, and /tmp on two hosts is two disks
    engine.incidents.store_batch([
        _event(1, 0.0, "cart", "HikariPool-1 - Connection is not available, request timed out after 30000ms"),
        _event(2, 0.5, "search", "HikariPool-1 - Connection is not available (total=10, active=10, idle=0)"),
        _event(3, 1.0, "cart", "write /tmp/cache/index.bin: no space left on device", host="h1"),
        _event(4, 1.5, "search", "write /tmp/cache/index.bin failed: no space left on device", host="h2"),
    ], cursor=None)
    assert sorted(r["event_count"] for r in incidents_by_first_seen(engine)) == [1, 1, 1, 1]


def test_a_route_ties_a_caller_to_its_service_not_two_errors_of_that_service(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "checkout", "POST /api/v1/checkout failed: 502 Bad Gateway from payments"),
        _event(2, 2.0, "edge", "upstream timed out while reading response header, request: POST /api/v1/checkout"),
        _event(3, 30.0, "checkout", "POST /api/v1/checkout failed: Cannot invoke getLoyaltyTier() on null"),
    ], cursor=None)
    by_events = {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}
    assert by_events == {frozenset({"ev-1", "ev-2"}), frozenset({"ev-3"})}


def test_the_lines_of_a_register_dump_are_one_incident_counted_as_its_first_lines_pattern(engine):
    dump = [_event(1, 0.0, "kernel", "worker[9131]: segfault at 7f3a2c000000 ip 00007f3a41b2c1e5 error 4 in libvips.so.42")]
    dump += [_event(n, 0.001 * n, "kernel", text) for n, text in enumerate([
        "RIP: 0033:0x7f3a41b2c1e5", "RSP: 002b:00007ffd8a1d2f30 EFLAGS: 00010246",
        "RAX: 0000000000000000 RBX: 00007f3a2c000000 RCX: 0000000000000010",
        "r24=0x0fffffff r25=0x00000001 r26=0x1eef2c00 r27=0x00000000",
        "machine check: i-fetch......................0", "instruction address: 0x00004ed8"], start=2)]
    elsewhere = _event(9, 0.002, "kernel", "RAX: 0000000000000001 RBX: 0000000000000002 RCX: 0000000000000003",
                       host="h2")  # another host's dump line is not this dump's
    engine.incidents.store_batch(dump[:4], cursor=None)
    counts = engine.incidents.store_batch([*dump[4:], elsewhere], cursor=None)  # a dump cut by a batch's end
    (crash,) = incidents_by_first_seen(engine)  # the other host's lone dump line opens nothing: it is context
    assert (crash["event_count"], crash["pattern_count"]) == (7, 1)
    assert crash["leader"]["event_id"] == "ev-1"
    assert counts.events == 4 and "ev-9" not in events_of(engine, crash["incident_id"])


def test_a_dump_line_with_no_error_to_fold_into_opens_nothing_whatever_its_level(engine):
    """A kernel writes its register dump at FATAL; sampled or cut off from the error it belongs to,
    a line of it says nothing on its own: kept as context, no incident per register."""
    lines = ["RAX: 0000000000000000 RBX: 00007f3a2c000000 RCX: 0000000000000010", "r24=0x0ffea4c8 r25=0x00000003 r26=0x0000000f",
             "machine state register: 0x0002f900", "data store interrupt caused by dcbf.........0",
             "lr:00004ed0 cr:28244842 xer:20000002 ctr:00086000"]
    counts = engine.incidents.store_batch([_event(n, 60.0 * n, "KERNEL", text, level="FATAL")
                                           for n, text in enumerate(lines)], cursor=None)
    assert counts.events == 5 and not counts.incidents_new
    # a line that says what failed still opens, at any level of dump-like detail in it
    again = engine.incidents.store_batch([_event(9, 600.0, "KERNEL", "data TLB error interrupt", level="FATAL")],
                                         cursor=None)
    assert len(again.incidents_new) == 1


def test_the_burst_window_is_a_setting_and_zero_keeps_each_pattern_apart(engine, monkeypatch):
    from pipeline.composition import open_incidents
    from pipeline.config import Settings

    monkeypatch.setenv("INCIDENTIQ_BURST_MINUTES", "0")
    incidents = open_incidents(Settings.from_env(data_dir=engine.settings.data_dir), engine.records)
    assert incidents.burst_minutes == 0
    incidents.store_batch(_cascade(), cursor=None)
    assert len(incidents_by_first_seen(engine)) == 4  # refusal, timeouts, 503s, disk


def test_ingest_of_an_outage_log_opens_one_incident_per_cause(engine, tmp_path):
    from pipeline.unattended.file_ingest import ingest_path

    lines = [{"time": iso(e.time), "level": e.level, "service": e.service, "host": e.host, "message": e.message}
             for e in _cascade()]
    ingest_path(engine, write_jsonl(tmp_path / "app.jsonl", lines))
    assert sorted(r["event_count"] for r in incidents_by_first_seen(engine)) == [1, 5]


def test_the_outages_command_scores_the_open_bed_against_its_goals(tmp_path):
    """The scenarios the rules were worked on meet every goal; the `s44_*` ones, written before session
    44 changed a rule and not all met yet (healthy controls that still open incidents: the gap is
    shown, not hidden), merge no two causes."""
    bed = ROOT / "tests" / "data" / "outages" / "open"
    worked, s44 = tmp_path / "worked", tmp_path / "s44"
    for folder in (worked, s44):
        folder.mkdir()
    for path in bed.iterdir():
        (s44 if path.name.startswith("s44_") else worked).joinpath(path.name).symlink_to(path)
    for folder in (worked, s44):
        # no setting of the user's (a scoring of the bed), through the CLI's entry point in this process
        result = cli_here(None, "outages", "--json", folder, cwd=ROOT, clean=True, HOME=str(tmp_path))
        assert result.returncode in (0, 1), result.stderr
        for order in json.loads(result.stdout)["orders"].values():
            assert order["merged"] == 0
            if folder is worked:
                assert result.returncode == 0
                assert order["incidents_per_single_cause"] <= 1.3
                assert order["leader"] >= 0.8 and order["healthy_incidents"] == 0


def test_the_incident_page_names_the_leader_and_why_it_leads(app, paused_engine):
    from tests.support import open_incident

    row = next(r for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    lead = paused_engine.records.incident(row["incident_id"])["leader"]
    open_incident(app, row["incident_id"])
    assert not app.exception
    said = [m.value for m in app.markdown if m.value.startswith("**Leader**")]
    assert len(said) == 1 and "checkout\\-api" in said[0]
    assert any(c.value.startswith("Why it leads: the earliest error") for c in app.caption)
    assert lead["event_id"] in {e["event_id"] for e in ReviewService(paused_engine).incident(row["incident_id"])["evidence"]}


def _outages_log(path: Path, outages: int, context: int) -> int:
    """`outages` cascades an hour apart, each of its own services; within each, the gateway's and
    the caller's errors are written before the refusal that caused them (a collector's order), and
    `context` INFO lines between outages. Returns the number of error lines."""
    lines, errors = [], 0
    for k in range(outages):
        at = T0 + timedelta(hours=k)

        def line(seconds: float, service: str, message: str, level: str = "ERROR") -> str:
            return json.dumps({"time": iso(at + timedelta(seconds=seconds)), "level": level, "service": service,
                               "host": f"h{k}", "message": message})
        for j in range(3):
            lines.append(line(5 + j, f"gateway-{k}", f"upstream checkout-{k} responded 503 for GET /api/orders/{j}"))
            lines.append(line(4 + j, f"checkout-{k}",
                              f"Timeout calling orders-{k}: GET http://orders-{k}:8080/api/orders/{j} exceeded 5000ms"))
        lines += [line(1 + j * 0.1, f"orders-{k}", f"Connection to db-{k}:5432 refused") for j in range(3)]
        errors += 9
        lines += [line(60 + i * 0.01, f"orders-{k}", f"GET /api/orders/{i} 200 4ms", "INFO") for i in range(context)]
    path.write_text("\n".join(lines) + "\n")
    return errors


@BOTH_BACKENDS
def test_sigkill_while_storing_an_outage_log_leaves_one_incident_per_outage_led_by_its_refusal(data_dir, database_url,
                                                                                              tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.support import count, run_cli

    outages, log = 12, tmp_path / "outages.jsonl"
    errors = _outages_log(log, outages, context=1500)
    records = database_url or data_dir / "app.sqlite3"
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "ingest", str(log)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and count(records, "SELECT count(*) FROM incidents") < 4:
        time.sleep(0.01)
    assert proc.poll() is None, "ingest finished before it could be killed; make the log longer"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert count(records, "SELECT count(*) FROM incidents") < outages  # killed while storing
    again = run_cli(data_dir, "ingest", str(log), "--json")
    assert again.returncode == 0, again.stderr
    assert count(records, "SELECT count(*) FROM incidents") == outages
    assert count(records, "SELECT count(*) FROM incidents WHERE pattern_count = 3 AND service_count = 3") == outages
    assert count(records, "SELECT coalesce(sum(event_count), 0) FROM incidents") == errors
    assert count(records, "SELECT count(*) FROM incidents WHERE leader LIKE '%refused%'") == outages


def test_one_service_failing_with_one_errno_in_several_wordings_is_one_incident(engine):
    """File descriptors run out: opens, connects and accepts fail EMFILE, each in its own words (one by
    the C library's text for it); another service failing EMFILE at the same moment is not this one."""
    engine.incidents.store_batch([
        _event(1, 0.0, "uploads", "upload failed: EMFILE: too many open files, open '/srv/uploads/tmp/a.part'"),
        _event(2, 0.5, "uploads", "metadata write failed: connect EMFILE 10.0.5.9:5432 - Local (undefined:undefined)"),
        _event(3, 1.0, "uploads", "server error: accept EMFILE"),
        _event(4, 1.5, "uploads", "could not open spool file: Too many open files"),
        _event(5, 1.2, "thumbs", "resize failed: EMFILE: too many open files, open '/tmp/t.png'"),
    ], cursor=None)
    by_events = {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}
    assert by_events == {frozenset({"ev-1", "ev-2", "ev-3", "ev-4"}), frozenset({"ev-5"})}


def test_one_services_errors_in_the_same_words_naming_different_resources_stay_apart(engine):
    """A scheduler's two jobs fail in the same seconds and the same words up to the job: the export's
    bucket refuses the write, the mailer's login is rejected. Nothing named in common: two incidents."""
    engine.incidents.store_batch([
        _event(1, 0.0, "scheduler", 'job failed: job=nightly-export err="api error AccessDenied: Access Denied" bucket=acme-exports'),
        _event(2, 1.0, "scheduler", 'job failed: job=invoice-mailer err="535 5.7.8 Username and Password not accepted"'),
        _event(3, 9.0, "scheduler", 'job failed: job=nightly-export err="api error AccessDenied: Access Denied" bucket=acme-exports'),
    ], cursor=None)
    by_events = {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}
    assert by_events == {frozenset({"ev-1", "ev-3"}), frozenset({"ev-2"})}


def test_a_tracebacks_last_line_ties_the_error_to_the_failure_it_names(engine):
    """The database's refusal to extend a file, and an API error whose traceback ends in the same file's
    failure (a class not named ...Error): one incident, led by the database's line."""
    api = LogEvent(event_id="ev-2", time=T0 + timedelta(seconds=1), service="api", host="h2", level="ERROR",
                   message="POST /events failed", source="test", position="test@2",
                   stack='Traceback (most recent call last):\n  File "/app/api/events.py", line 58, in create\n'
                         '    cur.execute(INSERT)\npsycopg2.errors.DiskFull: could not extend file "base/16384/24612": '
                         'No space left on device')
    engine.incidents.store_batch([
        _event(1, 0.0, "db", 'ERROR:  could not extend file "base/16384/24612": No space left on device'), api,
    ], cursor=None)
    (incident,) = incidents_by_first_seen(engine)
    assert events_of(engine, incident["incident_id"]) == {"ev-1", "ev-2"}
    assert incident["leader"]["event_id"] == "ev-1"


def test_lines_with_no_level_written_with_their_components_error_are_its_record(engine):
    """A JVM's fatal-error banner on stdout: its lines carry neither level nor time; those that read as
    errors are one record of the first, not an incident each. Unlevelled lines with their own time
    (sshd's, a Go program's) are lines of their own: they fold into nothing."""
    def banner(n: int, seconds: float, text: str, *, own_time: bool = False) -> LogEvent:
        event = _event(n, seconds, "search", text, level="ERROR")
        event.fields["level_inferred"] = True
        if not own_time:
            event.fields["time_inferred"] = "the record before"
        return event
    engine.incidents.store_batch([
        banner(1, 0.0, "# A fatal error has been detected by the Java Runtime Environment:", own_time=True),
        banner(2, 0.0, "# An error report file with more information is saved as:"),
        banner(3, 0.0, "# If you would like to submit a bug report, please visit: the crash page"),
        banner(4, 0.5, "reindex worker failed to open segment file: permission denied", own_time=True),
    ], cursor=None)
    crash, other = incidents_by_first_seen(engine)
    assert crash["event_count"] == 3 and crash["leader"]["event_id"] == "ev-1"
    assert events_of(engine, other["incident_id"]) == {"ev-4"}


def test_a_warning_naming_the_errors_resource_before_them_leads_though_it_states_no_failure(engine):
    """The first sign of a held lock is a warning that only waits for it; the errors that follow, in
    the waiting service and in a job that needs the same lock, name it too: the warning leads, and
    says why. A warning naming another lock, or written after the first error, leads nothing."""
    engine.incidents.store_batch([
        _event(1, 0.0, "accounts", "Waiting for lock ledger.schema_lock held by accounts-7f9c", level="WARN"),
        _event(2, 0.5, "reports", "Waiting for lock ledger.report_lock held by reports-2", level="WARN"),
        _event(3, 40.0, "accounts", "Could not acquire lock ledger.schema_lock within 30s"),
        _event(4, 41.0, "migrator", "migration aborted: lock ledger.schema_lock is held"),
        _event(5, 42.0, "accounts", "Waiting for lock ledger.schema_lock held by accounts-7f9c", level="WARN"),
    ], cursor=None)
    (incident,) = incidents_by_first_seen(engine)
    assert events_of(engine, incident["incident_id"]) == {"ev-3", "ev-4"}
    leader = incident["leader"]
    assert leader["event_id"] == "ev-1" and leader["position"] == "test@1"
    assert "warning written before the incident's errors" in leader["reason"]


def test_the_same_line_logged_as_a_warning_before_it_is_logged_as_an_error_leads(engine):
    """A pooler logs its limit at WARN for a client, then at ERROR: the first warning is the
    incident's first sign, though its words are not on the list of stated failures."""
    engine.incidents.store_batch([
        _event(1, 0.0, "pgbouncer", "C-0x55d1: (nodb)/(nouser)@10.0.3.14:50188 pooler error: max_client_conn reached",
               level="WARN"),
        _event(2, 1.0, "pgbouncer", "C-0x55d2: (nodb)/(nouser)@10.0.3.15:50201 pooler error: max_client_conn reached"),
    ], cursor=None)
    (incident,) = incidents_by_first_seen(engine)
    assert incident["leader"]["event_id"] == "ev-1"


def test_a_relays_refusal_and_the_senders_failure_naming_one_mail_address_are_one_incident(engine):
    """A mail relay refuses a recipient; the sender fails naming the same address: one incident, led
    by the refusal. A login failing at the same moment for another address is another incident."""
    engine.incidents.store_batch([
        _event(1, 0.0, "postfix", "NOQUEUE: reject: RCPT from notifier-2.internal[10.5.0.12]: 454 4.7.1 "
                                  "<ana@example.org>: Relay access denied; from=<no-reply@shop.example>"),
        _event(2, 0.2, "notifier", "notify.send_receipt: SMTPRecipientsRefused({'ana@example.org': (454, "
                                   "b'4.7.1 <ana@example.org>: Relay access denied')})"),
        _event(3, 0.4, "sso", "authentication failed for bob@corp.example: password expired"),
    ], cursor=None)
    by_events = {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}
    assert by_events == {frozenset({"ev-1", "ev-2"}), frozenset({"ev-3"})}


def test_a_warning_with_a_known_signature_read_before_the_errors_it_would_join_leads_them(engine):
    """The pooler's own warning of its limit is read before the client's error (its log came first):
    it opened nothing, and would have joined the client's incident had it come after; it leads it."""
    engine.incidents.store_batch([
        _event(1, 0.0, "pgbouncer", "C-0x55d1: (nodb)/(nouser)@10.0.3.14:50188 pooler error: no more connections "
                                    "allowed (max_client_conn)", level="WARN"),
        _event(2, 1.0, "billing", 'invoice list failed: connection to server at "pgbouncer.billing.svc" (10.0.3.2), '
                                  "port 6432 failed: FATAL:  no more connections allowed (max_client_conn)"),
    ], cursor=None)
    (incident,) = incidents_by_first_seen(engine)
    assert events_of(engine, incident["incident_id"]) == {"ev-2"}
    assert incident["leader"]["event_id"] == "ev-1"
