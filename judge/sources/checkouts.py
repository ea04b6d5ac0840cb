"""A checkout of another catalogue, read as files (none of its code runs here): where its problems
are, their ids, difficulties and statements, the licence it states, its commit and origin, the
files each problem's reference needs, and the names a GPU MODE reference gives its data and
outputs.

Pure but for reading files (and asking git for the commit).
"""

from __future__ import annotations

import ast
import html.parser
import re
import subprocess
from pathlib import Path

import yaml

from judge.errors import JudgeError
from judge.sources.convert import Origin

KINDS = ("leetgpu", "gpumode")
LAYOUT = {
    "leetgpu": "challenges/<difficulty>/<n>_<name>/challenge.py",
    "gpumode": "problems/<set>/<name>/task.yml",
}


def problems(kind: str, checkout: Path) -> list[str]:
    """The problems of a checkout, as folders relative to it, in the catalogue's order."""
    if not checkout.is_dir():
        raise JudgeError(f"{checkout}: no such directory (a checkout of the {kind} problem set)")
    if kind == "leetgpu":
        found = sorted(checkout.glob("challenges/*/*/challenge.py"), key=_leetgpu_order)
    else:
        found = sorted(checkout.glob("problems/*/*/task.yml"))
    if not found:
        raise JudgeError(f"{checkout}: no {LAYOUT[kind]} here; is it a checkout of the {kind} set?")
    return [str(p.parent.relative_to(checkout)) for p in found]


def _leetgpu_order(path: Path) -> tuple:
    number = re.match(r"(\d+)_", path.parent.name)
    return (int(number[1]) if number else 1 << 30, path.parent.name)


def origin(kind: str, checkout: Path, problem: str, about: dict) -> Origin:
    """Everything the importer needs to know of a problem besides what its code gives."""
    folder = checkout / problem
    if kind == "leetgpu":
        difficulty = (
            folder.parent.name if folder.parent.name in ("easy", "medium", "hard") else "medium"
        )
        statement = (
            html_text((folder / "challenge.html").read_text(encoding="utf-8"))
            if (folder / "challenge.html").is_file()
            else ""
        )
        files = [(folder / "challenge.py", "challenge.py")]
        base = checkout / "challenges" / "core" / "challenge_base.py"
        files += [(base, "core/challenge_base.py")] if base.is_file() else []
        files += [(base.parent / "__init__.py", "core/__init__.py")] * (
            base.parent / "__init__.py"
        ).is_file()
        puzzle_id = "leetgpu_" + _slug(folder.name)
    else:
        difficulty, statement = "medium", ""
        files = _gpumode_files(folder)
        puzzle_id = "gpumode_" + _slug(f"{folder.parent.name}_{folder.name}")
    source = {"path": problem, **about}
    return Origin(kind, problem, puzzle_id, difficulty, statement, source, tuple(files))


def _gpumode_files(folder: Path) -> list[tuple[Path, str]]:
    task = yaml.safe_load((folder / "task.yml").read_text(encoding="utf-8")) or {}
    files = [(folder / "task.yml", "task.yml")]
    for entry in task.get("files") or []:
        source, name = str(entry.get("source", "")), str(entry.get("name", ""))
        if source.startswith("@") or name in ("submission.py", "eval.py") or "/" in name:
            continue
        path = (folder / source).resolve()
        if path.is_file():
            files.append((path, name))
    return files


def data_names(reference: Path) -> list[str]:
    """The names a GPU MODE problem's ref_kernel (in reference.py) unpacks the data tuple
    into (`a, b, c = data`), if it does."""
    fn = _ref_kernel(reference)
    if fn is None or not fn.args.args:
        return []
    given = fn.args.args[0].arg
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Name)
            and node.value.id == given
            and isinstance(node.targets[0], ast.Tuple)
        ):
            names = [getattr(e, "id", "") for e in node.targets[0].elts]
            if all(n.isidentifier() for n in names) and len(set(names)) == len(names):
                return names
    return []


def returned_names(reference: Path) -> list[str]:
    """The names ref_kernel's last `return a, b` gives its outputs, if it gives names."""
    fn = _ref_kernel(reference)
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)] if fn else []
    if not returns or not isinstance(returns[-1].value, ast.Tuple):
        return []
    return [getattr(e, "id", "") for e in returns[-1].value.elts]


def _ref_kernel(reference: Path) -> ast.FunctionDef | None:
    tree = ast.parse(reference.read_text(encoding="utf-8"))
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "ref_kernel"]
    return found[0] if found else None


def _slug(text: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", text.lower())).strip("_")


def about(checkout: Path) -> dict:
    """The checkout's origin, commit and licence, as its files and git say them (git only where
    the checkout is a repository's top, not a folder inside another project)."""
    top = _git(checkout, "rev-parse", "--show-toplevel")
    own = bool(top) and Path(top).resolve() == checkout.resolve()
    origin = _git(checkout, "config", "--get", "remote.origin.url") if own else ""
    commit = _git(checkout, "rev-parse", "HEAD") if own else ""
    return {
        "repository": origin or str(checkout),
        "commit": commit or "unknown (not a git checkout)",
        "licence": licence(checkout),
    }


def _git(checkout: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def licence(checkout: Path) -> str:
    """The licence the checkout states: its LICENSE file's title, else the README's sentence
    about its licence."""
    for name in ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING"):
        path = checkout / name
        if path.is_file():
            title = next((line.strip() for line in _lines(path) if line.strip()), "")
            if title:
                return _plain(title)
    for name in ("README.md", "README"):
        path = checkout / name
        if path.is_file():
            said = next(
                (line for line in _lines(path) if re.search(r"licen[sc]ed", line, re.I)), ""
            )
            if said:
                return _plain(said)
    return "not stated in the checkout"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # Markdown links: their text
    text = text.replace("\u2011", "-").replace("\u00a0", " ")
    return " ".join(text.strip("#*> ").split())[:200]


class _Text(html.parser.HTMLParser):
    BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "pre", "ul", "ol", "tr", "table"}

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.pre = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        if tag == "pre":
            self.pre += 1
        if tag == "sup":
            self.parts.append("^")

    def handle_endtag(self, tag):
        if tag == "pre":
            self.pre -= 1
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        self.parts.append(data if self.pre else re.sub(r"\s+", " ", data))


def html_text(text: str) -> str:
    """A challenge's HTML statement as plain text: paragraphs, list items and preformatted
    examples kept, tags gone."""
    parser = _Text()
    parser.feed(text)
    lines = [line.rstrip() for line in "".join(parser.parts).splitlines()]
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1]):
            out.append(line.strip() if not line.startswith("  ") else line)
    return "\n".join(out).strip()
