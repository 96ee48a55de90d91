"""Syslog as network devices relay it (the Datadog agent's syslog parser tests): a Cisco
`%FACILITY-SEVERITY-MNEMONIC:` opens the message, it is no program's tag; a colon the device writes
right after the `<PRI>` (`<166>:2018-06-27T12:17:46Z: ...`) is not the time's."""
from __future__ import annotations

from datetime import datetime, timezone

from pipeline.ingest.reading import LogFile


def _events(tmp_path, lines: list[str]) -> list:
    path = tmp_path / "relay.log"
    path.write_text("\n".join(lines) + "\n")
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


def test_a_cisco_mnemonic_in_the_tags_place_is_the_messages_opening(tmp_path):
    events = _events(tmp_path, ["Apr 10 18:52:47 labuser-ftdv : %FTD-6-305012: Teardown dynamic UDP translation",
                                "Apr 10 18:52:48 fw01 %ASA-4-733102: Threat-detection adds host 192.0.2.3"])
    assert [e.message for e in events] == [": %FTD-6-305012: Teardown dynamic UDP translation",
                                           "%ASA-4-733102: Threat-detection adds host 192.0.2.3"]


def test_a_colon_after_the_priority_is_not_the_times(tmp_path):
    events = _events(tmp_path, ["<166>:2018-06-27T12:17:46Z: %ASA-6-110002: Failed to locate egress interface",
                                "<189>:2019 Mar 11 13:42:44 Cisco-customer %ETHPORT-5-IF_DOWN: Interface is down"])
    assert [e.time for e in events] == [datetime(2018, 6, 27, 12, 17, 46, tzinfo=timezone.utc),
                                        datetime(2019, 3, 11, 13, 42, 44, tzinfo=timezone.utc)]
    assert events[0].message.startswith("%ASA-6-110002: Failed") and "time_inferred" not in events[0].fields


def test_a_learnt_header_ends_before_a_cisco_mnemonic(tmp_path):
    """A relay that writes the time and then the device's message (no host, no tag): the
    `%FAC-SEV-MNEMONIC:` and the `Label:` after it are the message's, not header columns."""
    events = _events(tmp_path, ["2024-01-05T05:45:16Z   %FTD-1-430003: EventPriority: Low, SrcIP: 10.40.1.16"])
    assert events[0].message == "%FTD-1-430003: EventPriority: Low, SrcIP: 10.40.1.16"
    assert events[0].time == datetime(2024, 1, 5, 5, 45, 16, tzinfo=timezone.utc)
