"""Input files handed to a worker as file descriptors: the parent names each sealed file of a
command's input lists as HANDED + its index among the descriptors sent ahead of the command, and
the worker maps each name back to the descriptor it received (a confined worker cannot open the
parent's /proc/PID/fd/N). Both sides walk the same lists the same way, here."""

from __future__ import annotations

from collections.abc import Callable

HANDED = "fd:"  # a file descriptor handed with the command, by its index among them
INPUT_LISTS = ("inputs", "recheck_inputs")  # a command's keys that name input files


def with_paths(command: dict, change: Callable[[str], str]) -> dict:
    """The command with `change` applied to every string in its input lists (nested lists and
    dicts of paths); everything else as it was."""

    def walk(value):
        if isinstance(value, str):
            return change(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return {k: walk(v) if k in INPUT_LISTS else v for k, v in command.items()}
