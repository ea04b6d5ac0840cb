"""Attacks on a puzzle whose reference.py's `check` judges the outputs (`check: reference`):
vector_add made so that c = a + b and c = -(a + b) are both right (`either_sign`, conftest).
The check is the puzzle's own code, asked in the parent on the inputs as drawn; each attack
below would pass a check asked on what the worker left, or only on the cases."""

import pytest

from judge.core.results import Verdict
from judge.core.spec import Case
from judge.judging import runner

HEAD = """
import triton
import triton.language as tl


@triton.jit
def kernel(a_ptr, b_ptr, c_ptr, N, MODE: tl.constexpr, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    if MODE == 0:  # right
        tl.store(c_ptr + offs, a + b, mask=mask)
    elif MODE == 1:  # make the inputs agree with an answer of zeros: a = -b, c = 0
        tl.store(a_ptr + offs, -b, mask=mask)
        tl.store(c_ptr + offs, a * 0.0, mask=mask)
    else:  # wrong
        tl.store(c_ptr + offs, a - b, mask=mask)
"""

ATTACKS = {
    # the inputs changed so that the outputs satisfy the check on what the worker left
    "inputs_made_to_fit": (
        HEAD
        + """
def solve(a_ptr, b_ptr, c_ptr, N):
    kernel[(triton.cdiv(N, 128),)](a_ptr, b_ptr, c_ptr, N, MODE=1, BLOCK=128)
""",
        Verdict.FAILED,
        "input-modified",
    ),
    # right on the cases, wrong once the benchmark's calls begin (a count of calls kept)
    "right_only_at_first": (
        HEAD
        + """
CALLS = [0]


def solve(a_ptr, b_ptr, c_ptr, N):
    CALLS[0] += 1
    mode = 0 if CALLS[0] <= CASES else 2
    kernel[(triton.cdiv(N, 128),)](a_ptr, b_ptr, c_ptr, N, MODE=mode, BLOCK=128)
""",
        Verdict.FAILED,
        "recheck-failed",
    ),
}
CASES = (Case("N=300", (("N", 300),), seed=4), Case("N=1", (("N", 1),), seed=5))


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_gets_its_verdict(either_sign, write_submission, attack):
    source, verdict, reason = ATTACKS[attack]
    path = write_submission(source.replace("CASES", str(len(CASES))))
    options = runner.RunOptions(interpret=True, cases=CASES, timeout_s=60)
    report = runner.judge(either_sign, path, options)
    assert (report.verdict, report.reason) == (verdict, reason), report.message
