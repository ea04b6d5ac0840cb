"""A puzzle whose reference.py's `check` judges the outputs (`check: reference` in its spec):
answers that are not unique, judged by what they must satisfy. Here vector_add made so that
c = a + b and c = -(a + b) are both right (the check asks |c| = |a + b|)."""

import pytest

from judge.core import registry
from judge.core.results import Verdict
from judge.core.spec import Case
from judge.core.spec_reader import SpecError, load_spec
from judge.judging import runner

KERNEL = """
import triton
import triton.language as tl


@triton.jit
def add(a_ptr, b_ptr, c_ptr, N, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < {limit}
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, {value}, mask=mask)


def solve(a_ptr, b_ptr, c_ptr, N):
    add[(triton.cdiv(N, 128),)](a_ptr, b_ptr, c_ptr, N, BLOCK=128)
"""
CASES = (Case("N=300", (("N", 300),), seed=4), Case("N=1", (("N", 1),), seed=5))


def judged(spec, write_submission, value: str, limit: str = "N", gpu: bool = False):
    path = write_submission(KERNEL.format(value=value, limit=limit))
    options = runner.RunOptions(interpret=not gpu, cases=None if gpu else CASES, timeout_s=60)
    return runner.judge(spec, path, options)


def test_the_check_is_read_from_the_spec(either_sign, puzzles_root):
    assert either_sign.check == "reference"
    assert registry.get("vector_add", puzzles_root).check == "elementwise"


def test_an_unknown_check_names_its_key(vector_add_copy):
    folder = vector_add_copy("check: sideways\n")
    with pytest.raises(SpecError, match="check: unknown value 'sideways'"):
        load_spec(folder / "puzzle.yaml")


def test_an_answer_the_reference_did_not_give_passes_the_check(either_sign, write_submission):
    report = judged(either_sign, write_submission, "-(a + b)")
    assert report.verdict == Verdict.PASSED, report.message
    assert [c.status for c in report.cases] == ["passed", "passed"]


def test_the_reference_s_own_answer_passes_too(either_sign, write_submission):
    assert judged(either_sign, write_submission, "a + b").verdict == Verdict.PASSED


def test_a_wrong_answer_fails_with_the_check_s_own_words(either_sign, write_submission):
    report = judged(either_sign, write_submission, "a - b")
    assert (report.verdict, report.reason) == (Verdict.FAILED, "wrong-answer")
    assert "expected |a + b|" in report.message and report.message.startswith("case N=300")


def test_unwritten_elements_fail_before_the_check_is_asked(either_sign, write_submission):
    report = judged(either_sign, write_submission, "a + b", limit="N - 1")
    assert (report.verdict, report.reason) == (Verdict.FAILED, "unwritten")
    assert "never written" in " ".join(report.cases[0].hints)


def test_a_puzzle_that_names_a_check_it_lacks_is_refused_when_read(vector_add_copy):
    folder = vector_add_copy("check: reference\n")
    with pytest.raises(SpecError, match="reference.py defines no check"):
        load_spec(folder / "puzzle.yaml")


@pytest.mark.gpu
def test_on_the_gpu_the_timer_leaves_each_call_to_the_check(either_sign, write_submission):
    right = judged(either_sign, write_submission, "-(a + b)", gpu=True)
    assert right.verdict == Verdict.PASSED, right.message
    assert right.timing and right.timing[0].median_ms > 0
    wrong = judged(either_sign, write_submission, "a - b", gpu=True)
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer")
    assert "expected |a + b|" in wrong.message


def test_show_says_the_answers_are_judged_by_the_check(either_sign):
    from rich.console import Console

    from judge.cli.pages import puzzle_page

    console = Console(width=100, record=True)
    console.print(puzzle_page(either_sign))
    assert "answers judged by the puzzle's own check" in console.export_text()


def test_the_report_shows_the_check_s_words_and_no_element_error(either_sign, write_submission):
    from rich.console import Console

    from judge.cli.report import run_report

    wrong = judged(either_sign, write_submission, "a - b")
    unwritten = judged(either_sign, write_submission, "a + b", limit="N - 1")
    console = Console(width=100, record=True)
    console.print(run_report(wrong))
    console.print(run_report(unwritten))
    text = console.export_text()
    assert "expected |a + b|" in text and "1 never written" in text
    assert "at index -1" not in text
