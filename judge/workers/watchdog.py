"""The limits a confined worker's rlimits cannot hold, watched from the parent while it waits for
an answer (judge.workers.channel): the processes of the worker's whole tree, and the bytes and
files of its writable folders."""

from __future__ import annotations

import os
import time
from pathlib import Path

from judge.workers import confine


class Watchdog:
    """The limits a worker's rlimits cannot hold, checked from the parent while it waits: the
    processes of its whole tree (RLIMIT_NPROC counts a user's processes, and does not bind root)
    and the bytes of its writable folders (RLIMIT_FSIZE holds one file, not many)."""

    DISK_EVERY_S = 0.2  # folder sizes are summed at most this often
    MAX_ENTRIES = 100_000  # more files than this in its folders is past the limit by itself

    def __init__(self, folders: list[Path], limits: confine.Limits):
        self.folders, self.limits = folders, limits
        self.disk_checked = 0.0

    def check(self, pid: int) -> tuple[str, str] | None:
        tree = tree_size(pid)
        if tree > self.limits.processes:
            return "process-limit", (
                f"the submission's processes passed the limit of {self.limits.processes} "
                f"({tree} running)"
            )
        now = time.monotonic()
        if now - self.disk_checked < self.DISK_EVERY_S:
            return None
        self.disk_checked = now
        used, entries = folder_bytes(self.folders, self.MAX_ENTRIES)
        if used > self.limits.disk_bytes or entries > self.MAX_ENTRIES:
            return "disk-limit", (
                f"the worker's folders passed the disk limit of {self.limits.disk_bytes >> 20} "
                f"MiB or {self.MAX_ENTRIES} files ({used >> 20} MiB in {entries} files)"
            )
        return None


def tree_size(pid: int) -> int:
    """Live processes in a process's tree, itself included (threads not counted), from /proc."""
    return len(tree(pid))


def tree(pid: int) -> list[int]:
    """The process and its descendants (those that left its process group too), from /proc; one
    that ends while the tree is walked is left out."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        kids = children(parent)
        if kids is not None:
            found.append(parent)
            todo += kids
    return found


def children(pid: int) -> list[int] | None:
    """A process's children, from /proc (each of its threads lists its own); None once it has
    ended: its folder gone, or ESRCH while it is being reaped."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    found: list[int] = []
    for task in tasks:
        try:
            found += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


ENDED = ("Z", "X")  # a process's states in /proc once it has ended (zombie, dead)


def stat(pid: int) -> tuple[str, str]:
    """(name, state) of a process from /proc/PID/stat (the state one letter: R, S, Z...);
    OSError where it cannot be read (FileNotFoundError once the process is reaped). The name
    may hold spaces and parentheses, so it runs from the first "(" to the last ")"."""
    text = Path(f"/proc/{pid}/stat").read_text()
    end = text.rindex(")")
    return text[text.index("(") + 1 : end], text[end + 1 :].split()[0]


def folder_bytes(folders: list[Path], cap: int) -> tuple[int, int]:
    """(bytes, entries) under the folders, counting at most `cap` + 1 entries."""
    used = entries = 0
    todo = [str(f) for f in folders]
    while todo and entries <= cap:
        try:
            scan = os.scandir(todo.pop())
        except OSError:
            continue
        with scan:
            for entry in scan:
                entries += 1
                try:
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    else:
                        used += entry.stat(follow_symlinks=False).st_blocks * 512
                except OSError:
                    continue
    return used, entries
