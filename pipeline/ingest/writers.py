"""Whether a log file still has a writer: some process holds it open for writing.

A file that ends without a newline is either finished that way (an exported log, a crashed
writer's last words) or in the middle of a line its writer will finish: a logger that flushes
partial lines (block-buffered output) may pause mid-line for minutes. How long the file has been
quiet cannot tell them apart; an open write descriptor can. On Linux every process's open files
are listed under /proc/PID/fd (PID namespaces nest, so the host sees containers' writers) and
their access modes in /proc/PID/fdinfo. Descriptors are matched to the file by device and inode,
not by name: a writer in another mount namespace, or one whose file was renamed by rotation,
names it differently.

Where /proc cannot be read (another OS, a process that may not look at others), or the writer
runs on another host or in a PID namespace this one cannot see, no writer is seen: the caller
falls back to how long the file has been quiet.
"""
from __future__ import annotations

import os
from pathlib import Path

_PROC = "/proc"
_WRITE_MODES = (os.O_WRONLY, os.O_RDWR)


def open_for_writing(path: Path, *, proc: str = _PROC) -> bool:
    """Whether a process this one can see holds `path` open for writing (False: none seen)."""
    try:
        st = os.stat(path)
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return False
    target = (st.st_dev, st.st_ino)
    for pid in pids:
        fd_dir = f"{proc}/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue  # gone, or not ours to look at
        for fd in fds:
            link = f"{fd_dir}/{fd}"
            try:
                if not os.readlink(link).startswith("/"):
                    continue  # a socket, pipe or anonymous inode
                opened = os.stat(link)
            except OSError:
                continue
            if (opened.st_dev, opened.st_ino) == target and _writes(f"{proc}/{pid}/fdinfo/{fd}"):
                return True
    return False


def _writes(fdinfo: str) -> bool:
    """Whether the descriptor's access mode (`flags:` in its fdinfo, octal) allows writing."""
    try:
        with open(fdinfo) as f:
            for row in f:
                if row.startswith("flags:"):
                    return (int(row.split()[1], 8) & os.O_ACCMODE) in _WRITE_MODES
    except (OSError, ValueError, IndexError):
        return False
    return False
