"""records.webpage: the leaderboard and a graded class as one self-contained web page; the
`--html` options of `tpuzzle leaderboard` and `tpuzzle grade`; the page in a headless browser."""

import base64
import dataclasses
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_cli import cli, small_class  # noqa: F401 (fixtures)
from test_results import sample_report
from test_store import interpreted, timed, two_shapes

from judge.core.results import Verdict
from judge.records import grading, store, webpage
from judge.records.store import Entry

HOSTILE = '=HYPERLINK("x")<b>&amp;\x1b[31m]]>|x|<img src=x onerror="window.pwned=1">'
SCRIPTED = "</script><script>window.pwned=1</script>'\"\u202e"
PLAIN_HOSTILE = HOSTILE.replace("\x1b[31m", "")
PLAIN_SCRIPTED = SCRIPTED.replace("\u202e", "")
TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "section", "table"}
TAGS |= {"thead", "tbody", "tr", "th", "td", "button", "details", "summary", "script"}
CHROMIUM = Path("/usr/bin/chromium")


def entry(submitter, rank, median_ms=0.2, **fields) -> Entry:
    values = dict(
        puzzle="vector_add",
        device="NVIDIA H100",
        p20_ms=median_ms * 0.99,
        p80_ms=median_ms * 1.01,
        samples=100,
        gbps=3000.0,
        tflops=None,
        sol_pct=90.0,
        speedup=1.1,
        copy_pct=95.0,
        shapes=1,
        submission_sha256="ab" * 32,
        created_at="2026-03-04T05:06:07+00:00",
        run_id=rank,
        tie=False,
    )
    return Entry(submitter=submitter, rank=rank, median_ms=median_ms, **{**values, **fields})


class Page(HTMLParser):
    """What a browser's parser would make of a page: its tags, text, scripts and data keys."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.keys: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.policy = ""
        self._in = ""
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "data-key" in attrs:
            self.keys.append(attrs["data-key"])
        if attrs.get("http-equiv") == "Content-Security-Policy":
            self.policy = attrs["content"]
        self._in = tag if tag in ("script", "style") else ""

    def handle_endtag(self, tag):
        self._in = ""

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    @property
    def shown(self) -> str:
        return "".join(self.text)


class Rows(HTMLParser):
    """The cells of each board's rows, as text (a cell's folded shapes included), in order."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.depth = 0  # tables open
        self.cell: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.depth += tag == "table"
        if self.depth == 1 and tag == "tr" and "data-i" in dict(attrs):
            self.rows.append([])
        elif self.depth == 1 and tag == "td":
            self.cell = []

    def handle_endtag(self, tag):
        if self.depth == 1 and tag == "td":
            self.rows[-1].append("".join(self.cell))
            self.cell = None
        self.depth -= tag == "table"

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def board_text(page: str) -> list[list[str]]:
    return Rows(page).rows


# ------------------------------------------------------------------------------- the leaderboard


def test_hostile_names_are_text_and_nothing_else():
    entries = [entry(HOSTILE, 1), entry(SCRIPTED, 2, median_ms=0.3)]
    text = webpage.leaderboard_page(entries, puzzle="vector_add", generated=HOSTILE)
    page = Page(text)
    assert set(page.tags) <= TAGS
    assert page.tags.count("script") == 1 and page.tags.count("img") == 0
    assert "window.pwned" not in "".join(page.scripts)
    assert PLAIN_HOSTILE in page.shown and PLAIN_SCRIPTED in page.shown
    assert "\x1b" not in text and "\u202e" not in text
    assert "&lt;b&gt;&amp;amp;" in text and "&lt;/script&gt;&lt;script&gt;" in text
    assert [json.loads(k) for k in page.keys if k.startswith('"=')] == [PLAIN_HOSTILE] * 1


def test_the_policy_lets_the_pages_own_style_and_script_run_and_nothing_else():
    page = Page(webpage.leaderboard_page([entry("ada", 1)]))
    digest = [
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in (page.styles[0], page.scripts[0])
    ]
    assert page.policy == (
        f"default-src 'none'; style-src {digest[0]}; script-src {digest[1]}; "
        "base-uri 'none'; form-action 'none'"
    )
    assert not re.search(r"(src|href)=", webpage.leaderboard_page([entry("ada", 1)]))


def test_ties_share_a_rank_and_the_page_says_what_the_mark_means():
    tied = [entry("ada", 1, tie=True), entry("bob", 1, 0.201, tie=True), entry("cyd", 3, 0.3)]
    page = webpage.leaderboard_page(tied)
    assert [row[:2] for row in board_text(page)] == [["1=", "ada"], ["1=", "bob"], ["3", "cyd"]]
    assert "marks a tie" in page
    assert "marks a tie" not in webpage.leaderboard_page([entry("ada", 1), entry("bob", 2)])


def test_each_gpu_model_is_a_board_of_its_own():
    entries = [entry("ada", 1), entry("bob", 2), entry("cyd", 1, device="NVIDIA H200")]
    entries.append(entry("ada", 1, puzzle="matmul", gbps=None, tflops=612.34))
    boards = webpage.leaderboard_boards(entries)
    assert [b.title for b in boards] == [
        "vector_add · NVIDIA H100",
        "vector_add · NVIDIA H200",
        "matmul · NVIDIA H100",
    ]
    assert [[c.text for c in r[:2]] for r in boards[1].rows] == [["1", "cyd"]]
    page = webpage.leaderboard_page(entries)
    assert page.count('<table class="board">') == 3 and "612.3 TFLOP/s" in page
    assert [row[1] for row in board_text(page)] == ["ada", "bob", "cyd", "ada"]


def test_an_empty_board_says_how_to_enter_it():
    page = webpage.leaderboard_page([], puzzle="vector_add")
    assert "No ranked results yet for vector_add." in Page(page).shown
    assert "never ranked" in page and "<table" not in page
    assert "No submissions graded." in webpage.class_page([])


def test_each_shape_is_folded_under_its_row_and_missing_figures_sort_last():
    report = two_shapes(0.2, 0.4)
    shaped = entry("ada", 1, shapes=2, copy_pct=None, speedup=float("nan"), run_id=7)
    page = webpage.leaderboard_page([shaped, entry("bob", 2)], {7: report.timing})
    assert page.count("<details>") == 1
    shown = Page(page).shown
    assert "N=25M" in shown and "N=big" in shown and "400.0 us" in shown
    assert [row[6:9] for row in board_text(page)][0] == ["-", "90.0%", "-"]
    keys = [json.loads(k) for k in Page(page).keys]  # every key is JSON (no NaN)
    assert all(isinstance(k, (int, float, str)) for k in keys)


# ------------------------------------------------------------------------------- a graded class


def graded(student, report, puzzle="vector_add"):
    return grading.Graded(grading.Submission(student, puzzle, Path(f"{student}.py")), report)


def test_a_class_page_ranks_within_each_gpu_and_lists_the_rest():
    failed = dataclasses.replace(sample_report(), verdict=Verdict.FAILED, reason="wrong-answer")
    cls = [
        graded("ada", timed(0.25)),
        graded("bob", two_shapes(0.2, 0.4)),
        graded("cyd", timed(0.1, device="NVIDIA H200")),
        graded(HOSTILE, failed),
    ]
    page = webpage.class_page(cls, "Lab <2>", "Generated now.")
    rows = board_text(page)
    assert [r[:4] for r in rows] == [
        ["1", "ada", "NVIDIA H100", "passed"],
        ["2", "bob", "NVIDIA H100", "passed"],
        ["1", "cyd", "NVIDIA H200", "passed"],
        ["-", PLAIN_HOSTILE, "NVIDIA H100", "failed (wrong-answer)"],
    ]
    assert rows[1][7].startswith("2") and "N=big" in rows[1][7]  # bob's two shapes
    assert rows[3][5:] == ["-"] * 6
    assert "<title>Lab &lt;2&gt; · class results</title>" in page
    assert set(Page(page).tags) <= TAGS


def test_an_interpreted_class_has_no_timing_columns():
    page = webpage.class_page([graded("ada", dataclasses.replace(interpreted(), score=None))])
    assert "correctness only" in page and ">score<" not in page
    assert board_text(page) == [["-", "ada", "cpu (Triton interpreter)", "passed", "0/1"]]


# ------------------------------------------------------------------------------- the commands


def test_leaderboard_html_writes_the_page(cli, tmp_path):  # noqa: F811
    conn = store.connect()  # TPUZZLE_DB of this test
    store.record(conn, two_shapes(0.2, 0.4), HOSTILE)
    store.record(conn, timed(0.1, device="NVIDIA H200"), "bob")
    target = tmp_path / "board.html"
    result = cli("leaderboard", "vector_add", "--html", str(target))
    assert result.exit_code == 0, result.output
    assert "vector_add · NVIDIA H100" in result.stdout and f"wrote {target}" in result.stderr
    page = target.read_text(encoding="utf-8")
    assert "vector_add · NVIDIA H200" in page and "N=big" in page  # the stored shapes
    assert PLAIN_HOSTILE in Page(page).shown and "\x1b" not in page
    as_json = cli("leaderboard", "--json", "--html", str(tmp_path / "again.html"))
    assert len(json.loads(as_json.stdout)) == 2 and (tmp_path / "again.html").is_file()


@pytest.mark.parametrize("where", ["missing/board.html", "."])
def test_an_unwritable_html_path_is_one_line_and_exit_2(cli, tmp_path, where):  # noqa: F811
    result = cli("leaderboard", "--html", str(tmp_path / where))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "cannot write" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_grade_html_writes_the_class_page(cli, small_class, tmp_path):  # noqa: F811
    catalogue, root = small_class
    target = tmp_path / "class.html"
    args = ["grade", str(root), "--puzzles", str(catalogue), "--interpret", "--no-save"]
    result = cli(*args, "--jobs", "2", "--html", str(target))
    assert result.exit_code == 0, result.output
    rows = board_text(target.read_text(encoding="utf-8"))
    assert [r[1] for r in rows] == ["ada", "bob", "cyd"]
    assert [r[3] for r in rows] == ["passed", "failed (out-of-bounds)", "error (exit)"]
    bad = cli(*args, "-p", "vector_add", "--html", str(tmp_path / "nowhere" / "c.html"))
    assert bad.exit_code == 2 and "cannot write" in bad.stderr and "Traceback" not in bad.output


def test_merged_shards_write_the_same_class_page(cli, small_class, tmp_path):  # noqa: F811
    catalogue, root = small_class
    common = ["--puzzles", str(catalogue), "--interpret", "--no-timing", "--no-save"]
    parts = []
    for k in (1, 2):
        part = tmp_path / f"shard{k}.json"
        args = ["grade", str(root), *common, "--shard", f"{k}/2", "--json", str(part)]
        assert cli(*args).exit_code == 0
        parts.append(str(part))
    target = tmp_path / "merged.html"
    result = cli("merge", *parts, "--html", str(target))
    assert result.exit_code == 0, result.output
    rows = board_text(target.read_text(encoding="utf-8"))
    assert [r[1] for r in rows] == ["ada", "bob", "cyd"]
    assert [r[3] for r in rows] == ["passed", "failed (out-of-bounds)", "error (exit)"]


# ------------------------------------------------------------------------------- in a browser


@pytest.fixture
def browser():
    """Debian's chromium, headless, driven by Playwright; skipped where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.is_file():
        pytest.skip(f"no browser at {CHROMIUM}")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--disable-component-update", "--no-first-run"]
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            yield launched
        finally:
            launched.close()


def test_the_page_in_a_browser_sorts_and_shows_hostile_names_as_text(browser, tmp_path):
    entries = [
        entry("bob", 1, 0.2, shapes=2, run_id=11),
        entry(HOSTILE, 2, 0.3, run_id=12),
        entry("ada", 3, 0.4, copy_pct=None, run_id=13),
        entry(SCRIPTED, 1, 0.1, device="NVIDIA H200", run_id=14),
    ]
    path = tmp_path / "board.html"
    path.write_text(webpage.leaderboard_page(entries, {11: two_shapes(0.2, 0.4).timing}), "utf-8")
    page = browser.new_page()
    problems, requests = [], []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())

    first = page.locator("table.board").first
    names = first.locator(":scope > tbody > tr > td:nth-child(2)")
    assert names.all_inner_texts() == ["bob", PLAIN_HOSTILE, "ada"]
    assert page.locator("table.board").nth(1).locator(":scope > tbody > tr").count() == 1

    first.get_by_role("button", name="submitter").click()
    assert names.all_inner_texts() == [PLAIN_HOSTILE, "ada", "bob"]  # "=" sorts first
    assert first.locator("th").nth(1).get_attribute("aria-sort") == "ascending"
    first.get_by_role("button", name="score").click()
    assert names.all_inner_texts() == ["bob", PLAIN_HOSTILE, "ada"]
    first.get_by_role("button", name="score").click()
    assert names.all_inner_texts() == ["ada", PLAIN_HOSTILE, "bob"]
    first.get_by_role("button", name="copy %").click()  # ada has none: last either way
    assert names.all_inner_texts()[-1] == "ada"

    first.locator("summary").click()
    assert first.locator("table.shapes").is_visible() and "N=big" in first.inner_text()
    assert page.locator("table.board").nth(1).inner_text().count(PLAIN_SCRIPTED) == 1
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("document.querySelectorAll('img, b, script').length") == 1
    assert page.locator("td.n").first.evaluate("e => getComputedStyle(e).textAlign") == "right"
    assert problems == [] and requests == [path.as_uri()]
    page.close()
