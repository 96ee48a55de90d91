"""Causes no code change fixes (issue 36.5): a name that does not resolve, a container killed at
its memory limit, a full volume, an expired or untrusted certificate, traffic a network policy
drops. Their answer is an operational runbook step naming what the evidence names, never a
code-fix plan or diff (pipeline/engine/nodes.py `fix_eligible` asks `operational_cause`).

What makes a cause operational is read from the category and the events, not from a list of
incidents: DNS, full volumes and certificates are operational as categories; memory only when the
events show a kill at a limit (OOMKilled, a cgroup OOM, exit code 137: a heap that grows in code
is a code cause); a network policy whatever the category, when the events name one.
"""
from __future__ import annotations

import functools
import re

from pipeline.analyst import theirs
from pipeline.analyst.findings import first
from pipeline.state import RCA, Finding, LogEvent

OPERATIONAL_CATEGORIES = {"dns_resolution": "dns", "disk_full": "full_volume", "tls_certificate": "certificate"}
KINDS = {"dns": "a host name that does not resolve", "full_volume": "a full volume",
         "certificate": "a TLS certificate expired or not trusted", "oom_kill": "a container killed at its memory limit",
         "network_policy": "traffic dropped by a network policy"}
_OOM_KILL = re.compile(r"\bOOMKilled\b|\boom[-_ ]?kill|Memory cgroup out of memory|\bKilled process \d+|"
                       r"\bexit(?:ed)?(?: with)? code:? 137\b|\bOOM killer\b", re.I)
_NETWORK_POLICY = re.compile(r"\bnetwork ?polic(?:y|ies)\b|\bdenied by (?:a |the )?(?:network )?(?:policy|firewall)\b|"
                             r"\bblocked by (?:a |the )?(?:network )?(?:policy|firewall)\b|\bCiliumNetworkPolicy\b|"
                             r"\bpolicy-verdict:?\s*(?:DENIED|DROP)", re.I)
_TEXT_CHARS = 2_000  # per event: the kill or the policy is named in the line's head


def _texts(events: list[LogEvent]) -> list[str]:
    seen: dict[str, None] = {}
    for event in events:
        seen.setdefault("\n".join(filter(None, (event.message[:_TEXT_CHARS], event.exception,
                                                 (event.stack or "")[:_TEXT_CHARS]))))
    return list(seen)


def operational_cause(rca: RCA | None, events: list[LogEvent]) -> str | None:
    """The kind of operational cause (a key of KINDS) an analysis names, or None for a code cause."""
    if rca is None:
        return None
    # a root cause a reviewer wrote is read with the events: their "killed at its 512Mi limit" is their cause
    said = [rca.root_cause] if theirs.written_by(rca) is not None else []
    return operational_kind(rca.category, "\n".join([*_texts(events), *said]))


def operational_kind(category: str | None, text: str) -> str | None:
    """The kind of operational cause of a category given what the events say (`text`), or None.
    The two-person rule asks it of a record, whose text is the analysis's quoted evidence."""
    if category in (None, "unknown"):
        return None
    if _says(_NETWORK_POLICY, text):
        return "network_policy"
    if category in OPERATIONAL_CATEGORIES:
        return OPERATIONAL_CATEGORIES[category]
    if category == "out_of_memory" and _says(_OOM_KILL, text):
        return "oom_kill"
    return None


@functools.lru_cache(maxsize=256)  # asked by the recommendation, the fix's eligibility and its reason
def _says(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(text) is not None


def _code(value: str | None) -> str:
    return f"`{value}`" if value else ""


def runbook(kind: str, findings: list[Finding], service: str) -> list[str]:
    """The runbook steps for an operational cause, naming the evidence's own host, path, limit."""
    get = lambda k: first(findings, k)  # noqa: E731
    host, port, path, limit = get("host"), get("port"), get("path"), get("limit")
    target = f"{host}:{port}" if host and port else host
    if kind == "dns":
        name = _code(host) or "the host name in the errors"
        return [f"Runbook (operational, no code change): resolve {name} from where {service} runs "
                f"(`nslookup`/`dig`), then check the resolver (CoreDNS or the host's resolv.conf) and the "
                f"record or Service that should define it.",
                "Restore the record or the resolver, then watch these lookups succeed."]
    if kind == "full_volume":
        where = f"the volume holding {_code(path)}" if path else f"the volume {service} writes to"
        return [f"Runbook (operational, no code change): free space on {where}: find what grew (`df -h`, "
                f"`du -sh`), remove or rotate it, or grow the volume.",
                "Add an alert on that volume's free space so it is seen before writes fail."]
    if kind == "certificate":
        peer = _code(target) or "the peer in the errors"
        return [f"Runbook (operational, no code change): check the certificate {peer} presents (`openssl "
                f"s_client -connect`: subject, issuer, notAfter); renew or rotate it, or add its CA to the "
                f"client's trust store, and reload whoever serves it.",
                "Check the renewal job (cert-manager, ACME) that should have renewed it."]
    if kind == "oom_kill":
        at = f" of {_code(limit)}" if limit else ""
        return [f"Runbook (operational, no code change): {service} was killed at its memory limit{at}: compare "
                f"its memory use with the limit (`kubectl describe pod`, `kubectl top pod`) and raise the limit "
                f"or lower the load.",
                "If the use grows without bound between restarts, open a code investigation with a heap profile."]
    if kind == "network_policy":
        peer = _code(target) or "the dependency in the errors"
        return [f"Runbook (operational, no code change): a network policy drops traffic from {service} to "
                f"{peer}: check the NetworkPolicy / firewall rules between them and allow that port.",
                "Confirm from the pod (`nc -vz`) that the connection opens once the rule is in place."]
    return []
