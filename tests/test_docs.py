"""The README opens in one screen and points into docs/; every link between them resolves, to a
file and to a heading; the site's navigation lists every page, and the site builds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")
SCREEN_LINES = 50


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and MkDocs write it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def links(path: Path) -> list[tuple[Path, str]]:
    """(target file, anchor) of every relative link in a Markdown file (code blocks left out)."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    found = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        found.append(((path.parent / file).resolve() if file else path, anchor))
    return found


def test_the_readme_opens_in_one_screen_and_links_every_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= SCREEN_LINES
    for page in ("learners", "instructors", "importing", "design", "measured", "puzzles"):
        assert f"(docs/{page}.md)" in readme
    assert "python -m pytest -q" in readme  # the test command CI runs


@pytest.mark.parametrize("path", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_every_link_reaches_a_file_and_a_heading(path):
    for target, anchor in links(path):
        assert target.exists(), f"{path.name}: {target} is missing"
        if anchor and target.suffix == ".md":
            assert anchor in anchors(target), f"{path.name}: no heading #{anchor} in {target.name}"


def test_the_site_lists_every_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = {next(iter(item.values())) for item in config["nav"]}
    assert listed == {p.name for p in PAGES}


def test_the_site_builds_without_a_warning(tmp_path):
    pytest.importorskip("mkdocs")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "instructors" / "index.html").exists()
