from rich.console import Console
from test_results import sample_report

from judge import report


def render(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_run_report_shows_verdict_failure_and_timing():
    text = render(report.run_report(sample_report(), rank=(2, 5)))
    for expected in (
        "FAILED",
        "wrong-answer",
        "N=3",
        "hint: a hint",
        "reproduce: tpuzzle run",
        "100.0 us",
        "3000 GB/s",
        "95.0%",
        "1.20x",
        "rank 2 of 5",
        "NVIDIA H100",
    ):
        assert expected in text


def test_catalogue_and_puzzle_page(vector_add):
    assert "vector_add" in render(report.puzzle_list([vector_add], {}))
    page = render(report.puzzle_page(vector_add))
    for expected in ("solve(a_ptr, b_ptr, c_ptr, N)", "1 <= N <= 100,000,000", "example"):
        assert expected in page
