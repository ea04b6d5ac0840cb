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


def inlined(path: Path, name: str = "honest") -> str:
    """Python that makes the file at `path` a module `name` from source carried in the text
    itself: a confined worker cannot read the catalogue, so an attack on a shipped solution
    brings the solution with it. The source is registered with linecache under a name of its
    own, where Triton's @jit reads it."""
    lines = [line for line in path.read_text().splitlines(True) if "from __future__" not in line]
    source = "".join(lines)
    label = f"<{name}>"
    return (
        "import linecache as _linecache\n"
        "import sys as _sys\n"
        "import types as _types\n"
        f"_source = {source!r}\n"
        f"_linecache.cache[{label!r}] = (len(_source), None, _source.splitlines(True), {label!r})\n"
        f"{name} = _types.ModuleType({name!r})\n"
        f"{name}.__file__ = {label!r}\n"
        f"_sys.modules[{name!r}] = {name}\n"
        f"exec(compile(_source, {label!r}, 'exec'), {name}.__dict__)\n"
    )


def grade_command(root: Path, catalogue: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "judge", "grade", str(root), "--puzzles", str(catalogue),
            "--interpret", *extra]  # fmt: skip


def run_judge(command: list[str], env=None, **kwargs) -> subprocess.CompletedProcess:
    env = dict(env or os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, **kwargs)
