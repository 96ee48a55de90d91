"""Owner tokens for claims and the poller lease, and whether the process behind one still runs.

A token is host, pid, the process's start time and a random part: a claim left by a dead process
is taken over, and a new process that happens to reuse the dead one's pid is told apart.
"""
from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path


def process_owner() -> str:
    """An owner token for claims: host, pid, the process's start time and a random part."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_own_start(pid) or 0}:{uuid.uuid4().hex[:8]}"


_own: tuple[int, str | None] | None = None  # (pid, its start time): read once per process, not per claim


def _own_start(pid: int) -> str | None:
    # a process's start time never changes, and a forked child has another pid, so it reads its own
    global _own
    if _own is None or _own[0] != pid:
        _own = (pid, _process_start(pid))
    return _own[1]


def _process_start(pid: int) -> str | None:
    """The start time of a process in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces; fields after its closing parenthesis are plain
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_alive(owner: str) -> bool:
    """Whether the process that took a claim still runs (claims of other hosts count as alive).

    A container restart brings back the same host name and small pids: the start time in the token
    tells the dead owner from a new process that happens to have its pid.
    """
    host, pid_text, start, *_ = (owner.split(":") + ["", "", ""])[:4]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    current = _process_start(int(pid_text))
    return not (start.isdigit() and start != "0" and current is not None and current != start)
