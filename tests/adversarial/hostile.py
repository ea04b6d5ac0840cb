"""Helpers of the adversarial corpus: expected verdicts, running the judge as a command."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def expected(path: Path) -> tuple[str, set[str]]:
    """(verdict, reasons) of a shipped solution: its first line `# expect: VERDICT REASON|REASON`
    for the wrong ones; passed for the correct ones."""
    first = path.read_text().splitlines()[0]
    if not first.startswith("# expect:"):
        return "passed", {"ok"}
    words = first.removeprefix("# expect:").split()
    return words[0], set(words[1].split("|"))


def grade_command(root: Path, catalogue: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "judge", "grade", str(root), "--puzzles", str(catalogue),
            "--interpret", *extra]  # fmt: skip


def run_judge(command: list[str], env=None, **kwargs) -> subprocess.CompletedProcess:
    env = dict(env or os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, **kwargs)
