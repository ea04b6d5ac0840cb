"""Attacks on the timing, and honest designs that must not be mistaken for them, on a CUDA device.

The submission's worker only records what one call of solve() launched; a timer that never
imported it replays that sequence on its own buffers, with inputs the worker never saw, timing
and checking every call; every case is replayed and checked there too. So an attack on the
clocks in the worker changes nothing, work moved to another stream or thread is timed on one
stream in the replay, and a recorded sequence that does less than the call did (a lie to the
recorder, a copy of an answer kept from an earlier call) fails at the first case it is replayed
for, or on the timer's fresh inputs. Work whose launches depend on more than the sizes cannot be
replayed (`not-replayable`), and foreign work in any recorded call is `foreign-launch`. Every
attack wraps a puzzle's shipped solution (`honest`); each has the verdicts it may get, and one
that is not rejected must not be ranked faster than the honest kernel.

The benchmark shapes are cut to one moderate shape per puzzle (an honest kernel of 20-100 us),
so that the file runs in a few minutes; `tests/benchmarks/timing_attacks.py` runs the same
attacks at the puzzles' own benchmark shapes and prints a table.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile import inlined

from judge.core import registry
from judge.core.results import RunReport
from judge.core.spec import Case
from judge.judging import runner

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2] / "puzzles"
FASTER_BY = 0.9  # an attack that is not rejected may not rank faster than this x honest


@dataclass(frozen=True)
class Target:
    """A puzzle under attack: how its arguments split in two and where its output is."""

    bench: str  # the benchmark shape used by the tests (a puzzle.yaml flow mapping)
    cases: tuple[Case, ...]  # small test cases
    halves: str  # Python: def halves(args) -> (first half's args, second half's args)
    out: int  # position of the output pointer among the arguments
    out_bytes: str  # Python expression in `args`: the output's size in bytes


ELEMENTWISE = """
def halves(args):
    n = args[-1]
    h = n // 2
    first = (*args[:-1], h)
    second = (*(a + 4 * h for a in args[:-1]), n - h)
    return first, second
"""

TARGETS = {
    "vector_add": Target(
        "{sizes: {N: 4000000}, seed: 7}",
        (Case("N=1500", (("N", 1500),), 11), Case("N=1000003", (("N", 1_000_003),), 12)),
        ELEMENTWISE,
        2,
        "4 * args[-1]",
    ),
    "relu": Target(
        "{sizes: {N: 8000000}, seed: 7}",
        (Case("N=1500", (("N", 1500),), 11), Case("N=1000003", (("N", 1_000_003),), 12)),
        ELEMENTWISE,
        1,
        "4 * args[-1]",
    ),
    "softmax_rows": Target(
        "{sizes: {rows: 2048, cols: 4096}, seed: 7}",
        (
            Case("rows=3 cols=1000", (("rows", 3), ("cols", 1000)), 11),
            Case("rows=513 cols=4096", (("rows", 513), ("cols", 4096)), 12),
        ),
        """
def halves(args):
    src, dst, rows, cols = args
    h = rows // 2
    return (src, dst, h, cols), (src + 4 * h * cols, dst + 4 * h * cols, rows - h, cols)
""",
        1,
        "4 * args[2] * args[3]",
    ),
    # only the first half is ever used alone: the second half of a histogram zeroes it again
    "histogram": Target(
        "{sizes: {N: 8000000, num_bins: 256}, seed: 7}",
        (
            Case("N=1500 bins=10", (("N", 1500), ("num_bins", 10)), 11),
            Case("N=1000003 bins=1024", (("N", 1_000_003), ("num_bins", 1024)), 12),
        ),
        """
def halves(args):
    src, counts, n, bins = args
    h = n // 2
    return (src, counts, h, bins), (src + 4 * h, counts, n - h, bins)
""",
        1,
        "4 * args[3]",
    ),
    "conv2d": Target(
        "{sizes: {input_rows: 2048, input_cols: 2048, kernel_rows: 9, kernel_cols: 9}, seed: 7}",
        (
            Case(
                "127x129 3x3",
                (("input_rows", 127), ("input_cols", 129), ("kernel_rows", 3), ("kernel_cols", 3)),
                11,
            ),
            Case(
                "1023x1025 2x9",
                (
                    ("input_rows", 1023),
                    ("input_cols", 1025),
                    ("kernel_rows", 2),
                    ("kernel_cols", 9),
                ),
                12,
            ),
        ),
        """
def halves(args):
    src, weights, dst, rows, cols, krows, kcols = args
    out_cols = cols - kcols + 1
    h = (rows - krows + 1) // 2
    first = (src, weights, dst, h + krows - 1, cols, krows, kcols)
    second = (src + 4 * h * cols, weights, dst + 4 * h * out_cols, rows - h, cols, krows, kcols)
    return first, second
""",
        2,
        "4 * (args[3] - args[5] + 1) * (args[4] - args[6] + 1)",
    ),
    "matmul": Target(
        "{sizes: {M: 2048, N: 2048, K: 2048}, seed: 7}",
        (
            Case("M=3 N=5 K=7", (("M", 3), ("N", 5), ("K", 7)), 11),
            Case("M=513 N=257 K=129", (("M", 513), ("N", 257), ("K", 129)), 12),
        ),
        """
def halves(args):
    a, b, c, m, n, k = args
    h = m // 2
    return (a, b, c, h, n, k), (a + 4 * h * n, b, c + 4 * h * k, m - h, n, k)
""",
        2,
        "4 * args[3] * args[5]",
    ),
}

PRELUDE = """
import ctypes
import gc
import importlib.util
import threading
import time

import torch
import triton
import triton.language as tl

{honest}
OUT = {out}
side = torch.cuda.Stream()
calls = [0]


def out_bytes(args):
    return {out_bytes}


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    source = src.to(tl.pointer_type(tl.int8))
    target = dst.to(tl.pointer_type(tl.int8))
    tl.store(target + offsets, tl.load(source + offsets, mask=mask), mask=mask)


def copy_bytes(src, dst, n):
    _copy[(triton.cdiv(n, 4096),)](src, dst, n, BLOCK=4096)


@triton.jit
def _touch(address):
    tl.store(address.to(tl.pointer_type(tl.int32)), 1)


def loaded(fragment):
    '''A shared library this process already mapped (PyTorch loads the CUDA runtime).'''
    with open("/proc/self/maps") as maps:
        paths = [line.split()[-1] for line in maps if "/" in line]
    return ctypes.CDLL(next(p for p in paths if fragment in p.rsplit("/", 1)[-1]))

{halves}
"""

NOT_REPLAYABLE = {("rejected", "not-replayable")}
NEVER_PASSES = {
    ("rejected", "not-replayable"),
    ("failed", "unwritten"),
    ("failed", "recheck-failed"),
    ("failed", "timed-call-wrong"),
}
CAUGHT_TIMED = {("failed", "timed-call-wrong"), ("failed", "recheck-failed")}
# Every case is replayed by the timer too, from the call the worker recorded after a first one:
# a recorded call that does less than the first is caught at the first case, before any timing.
CAUGHT_IN_A_CASE = {("failed", "wrong-answer"), ("failed", "unwritten")}
HONEST = {("passed", "ok")}

# name: (body, the (verdict, reason) pairs it may get, puzzles it runs on)
ATTACKS = {
    # the kernel on a side stream, never joined: the events see an empty stream
    "side_stream": (
        """
def solve(*args):
    with torch.cuda.stream(side):
        honest.solve(*args)
""",
        HONEST,  # replayed on one stream: timed whole
        ("vector_add", "relu", "softmax_rows"),
    ),
    # half the grid on the current stream, half on a side stream that does not wait for it: the
    # side half runs during the judge's wait before the start event
    "split_half_on_a_side_stream": (
        """
def solve(*args):
    first, second = halves(args)
    with torch.cuda.stream(side):
        honest.solve(*second)
    honest.solve(*first)
""",
        HONEST,
        ("vector_add", "relu", "softmax_rows"),
    ),
    # the real work on a side stream, a decoy of half the size on the current one
    "decoy_on_the_current_stream": (
        """
scratch = {{}}


def solve(*args):
    first, _ = halves(args)
    size = out_bytes(args)
    if size not in scratch:
        scratch[size] = torch.empty(size // 4 + 1, dtype=torch.float32, device="cuda")
    decoy = list(first)
    decoy[OUT] = scratch[size].data_ptr()
    with torch.cuda.stream(side):
        honest.solve(*args)
    honest.solve(*decoy)
""",
        HONEST,  # both replayed: slower than honest
        ("vector_add", "relu", "softmax_rows"),
    ),
    # launched by a thread after solve() has returned
    "thread_after_return": (
        """
def solve(*args):
    threading.Thread(target=lambda: (time.sleep(0.0002), honest.solve(*args))).start()
""",
        NEVER_PASSES | {("rejected", "helper-process")},
        ("vector_add", "softmax_rows"),
    ),
    # forked properly, but joined only at the start of the next call: the work runs into it
    "joined_by_the_next_call": (
        """
def solve(*args):
    torch.cuda.current_stream().wait_stream(side)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        honest.solve(*args)
""",
        HONEST | NEVER_PASSES,
        ("vector_add", "relu"),
    ),
    # a CUDA graph per set of addresses, replayed on a stream of its own
    "cuda_graph_on_another_stream": (
        """
graphs = {{}}
capture, replay = torch.cuda.Stream(), torch.cuda.Stream()


def solve(*args):
    if args not in graphs:
        honest.solve(*args)  # compiled and loaded before the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=capture):
            honest.solve(*args)
        graphs[args] = graph
    with torch.cuda.stream(replay):
        graphs[args].replay()
""",
        # a graph launch is no Triton launch: the recorded call of a case launched nothing
        NOT_REPLAYABLE | {("rejected", "torch-in-solve"), ("failed", "recheck-failed")},
        ("vector_add", "relu"),
    ),
    # the compiled metadata in the worker's Triton cache rewritten after the first call, so that
    # the launcher in the timer would allocate a terabyte of global scratch per program
    "launch_scratch_rewritten": (
        """
import glob
import json
import os


def solve(*args):
    honest.solve(*args)
    root = os.environ.get("TRITON_CACHE_DIR") or os.path.expanduser("~/.triton/cache")
    for path in glob.glob(os.path.join(root, "*", "*.json")):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "global_scratch_size" in data:
            data["global_scratch_size"] = 1 << 40
            with open(path, "w") as f:
                json.dump(data, f)
""",
        NOT_REPLAYABLE,
        ("vector_add",),
    ),
    # honest on the first call; from the second on, the answer copied in by cudaMemcpy
    "cuda_copy_from_the_second_call": (
        """
cudart = loaded("libcudart.so")
scratch = {{}}


def solve(*args):
    calls[0] += 1
    if calls[0] == 1:
        honest.solve(*args)
        return
    size = out_bytes(args)
    if size not in scratch:
        scratch[size] = torch.empty(size // 4 + 1, dtype=torch.float32, device="cuda")
    moved = list(args)
    moved[OUT] = scratch[size].data_ptr()
    honest.solve(*moved)
    cudart.cudaMemcpy(ctypes.c_void_p(args[OUT]), ctypes.c_void_p(moved[OUT]),
                      ctypes.c_size_t(size), 3)
""",
        {("rejected", "foreign-launch")},
        ("vector_add", "softmax_rows"),
    ),
    # the work left to a finalizer of cyclic garbage, with the collector made eager
    "finalizer_does_the_work": (
        """
class Later:
    def __init__(self, args):
        self.args, self.me = args, self

    def __del__(self):
        honest.solve(*self.args)


def solve(*args):
    gc.enable()
    gc.set_threshold(1)
    Later(args)
""",
        # the eager collector runs it inside the call (timed as it is), or where no hook sees it
        NEVER_PASSES | HONEST | {("rejected", "foreign-launch")},
        ("vector_add",),
    ),
    # less work only while timed, found on the call stack: nothing is timed in the worker
    "less_work_when_a_timer_is_on_the_stack": (
        """
import inspect

TIMERS = {{"do_bench", "time_calls", "timed", "play"}}


def solve(*args):
    if any(frame.function in TIMERS for frame in inspect.stack(0)):
        first, _ = halves(args)
        honest.solve(*first)
    else:
        honest.solve(*args)
""",
        HONEST,
        ("vector_add", "softmax_rows", "histogram", "conv2d", "matmul"),
    ),
    # do_bench and the judge's timing replaced at import, the clocks agreeing with each other
    "patched_clocks": (
        """
import triton.testing

triton.testing.do_bench = lambda *a, **k: [0.0001] * 100
try:
    import judge.core.bench as judge_bench

    judge_bench.time_calls = lambda *a, **k: [0.0001] * 100
    judge_bench.summarize = lambda times: (0.0001, 0.0001, 0.0001, 100)
except Exception:
    pass


def solve(*args):
    honest.solve(*args)
""",
        HONEST,
        ("vector_add", "relu", "matmul"),
    ),
    # the whole answer computed unrecorded, and only half of it shown to the recorder
    "lies_to_the_recorder": (
        """
def recorder():
    return next(o for o in gc.get_objects() if type(o).__name__ == "LaunchRecorder")


def solve(*args):
    rec = recorder()
    steps, rec._steps = rec._steps, None
    honest.solve(*args)
    rec._steps = steps
    first, _ = halves(args)
    honest.solve(*first)
""",
        # half of the answer is replayed: wrong (or half unwritten) at the first case
        CAUGHT_TIMED | CAUGHT_IN_A_CASE,
        ("vector_add", "softmax_rows", "histogram", "conv2d"),
    ),
    # the answer computed once per set of addresses, then copied back by a Triton kernel from
    # memory kept between calls (the timer poisons scratch and draws inputs the worker never saw)
    "answer_kept_between_calls": (
        """
kept = {{}}


def solve(*args):
    size = out_bytes(args)
    if args not in kept:
        honest.solve(*args)
        keep = torch.empty(size, dtype=torch.int8, device="cuda")
        copy_bytes(args[OUT], keep.data_ptr(), size)
        kept[args] = keep
        return
    copy_bytes(kept[args].data_ptr(), args[OUT], size)
""",
        CAUGHT_TIMED | CAUGHT_IN_A_CASE,  # the replayed copy reads the timer's poisoned scratch
        ("vector_add", "softmax_rows", "histogram", "conv2d", "matmul"),
    ),
    # inputs recognised by a fingerprint read back from the device: less work on a repeat (the
    # timer draws every timed call's inputs fresh, so a repeat is never timed)
    "less_work_on_a_fingerprinted_repeat": (
        """
seen = set()
probe = torch.zeros(8, dtype=torch.int32, device="cuda")


def solve(*args):
    copy_bytes(args[0], probe.data_ptr(), 32)
    key = (args, tuple(probe.tolist()))
    if key in seen:
        first, _ = halves(args)
        honest.solve(*first)
    else:
        seen.add(key)
        honest.solve(*args)
""",
        CAUGHT_TIMED | NOT_REPLAYABLE | {("rejected", "torch-in-solve")},
        ("vector_add", "histogram", "matmul"),
    ),
    # other launches on every other call: no fixed sequence per size
    "launches_that_change_between_calls": (
        """
def solve(*args):
    calls[0] += 1
    if calls[0] % 2:
        honest.solve(*args)
    else:
        first, second = halves(args)
        honest.solve(*first)
        honest.solve(*second)
""",
        NOT_REPLAYABLE,
        ("vector_add",),
    ),
    # a kernel that reports to pinned host memory (what a fingerprinting solve() reads back)
    "pinned_host_memory": (
        """
flag = torch.zeros(4, dtype=torch.int32, pin_memory=True)


def solve(*args):
    honest.solve(*args)
    _touch[(1,)](flag.data_ptr())
""",
        NOT_REPLAYABLE,
        ("vector_add", "matmul"),
    ),
    # honest designs: a forked and joined side stream; a thread joined before returning (its
    # start and join are host time the 200 us head start may not cover: timed, not faster)
    "honest_fork_join": (
        """
def solve(*args):
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        honest.solve(*args)
    torch.cuda.current_stream().wait_stream(side)
""",
        HONEST,
        ("vector_add", "softmax_rows"),
    ),
    "honest_joined_thread": (
        """
def solve(*args):
    worker = threading.Thread(target=honest.solve, args=args)
    worker.start()
    worker.join()
""",
        HONEST,
        ("vector_add",),
    ),
}


def catalogue(tmp_path: Path, puzzle: str, bench: str) -> Path:
    """A copy of the puzzle whose benchmarks are the one shape given."""
    root = tmp_path / "catalogue"
    shutil.copytree(ROOT / puzzle, root / puzzle)
    spec = root / puzzle / "puzzle.yaml"
    head, rest = spec.read_text().split("\nbenchmarks:\n", 1)
    tail = rest[rest.index("\nlibrary:") :]
    spec.write_text(f"{head}\nbenchmarks:\n  - {bench}{tail}")
    return root


def honest_solution(puzzle: str) -> Path:
    return sorted((ROOT / puzzle / "solutions" / "correct").glob("*.py"))[0]


def submission(puzzle: str, body: str, directory: Path) -> Path:
    target = TARGETS[puzzle]
    prelude = PRELUDE.format(
        honest=inlined(honest_solution(puzzle)),
        out=target.out,
        out_bytes=target.out_bytes,
        halves=target.halves,
    )
    path = directory / "submission.py"
    path.write_text(prelude + body.format())
    return path


def judged(puzzle: str, path: Path, root: Path | None, cases=None) -> RunReport:
    """Judged and timed on the GPU: the spec's benchmarks (of `root`, else the catalogue's)."""
    spec = registry.get(puzzle, root or ROOT)
    options = runner.RunOptions(interpret=False, timeout_s=120, cases=cases)
    return runner.judge(spec, path, options)


def ranked_faster(attack: RunReport, honest: RunReport) -> bool:
    """An attack that got a rank with a score below FASTER_BY x the honest kernel's."""
    if not (attack.ranked and attack.score and honest.score):
        return False
    return attack.score.ms < FASTER_BY * honest.score.ms


PAIRS = [(a, p) for a, (_, _, puzzles) in ATTACKS.items() for p in puzzles]


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    return {p: catalogue(tmp_path_factory.mktemp(p), p, t.bench) for p, t in TARGETS.items()}


@pytest.fixture(scope="module")
def honest_runs(roots):
    runs = {}
    for puzzle in TARGETS:
        runs[puzzle] = judged(puzzle, honest_solution(puzzle), roots[puzzle], TARGETS[puzzle].cases)
    return runs


@pytest.mark.parametrize("attack, puzzle", PAIRS, ids=[f"{p}-{a}" for a, p in PAIRS])
def test_a_timing_attack_gets_its_verdict_and_never_outranks_honest(
    attack, puzzle, roots, honest_runs, tmp_path
):
    body, allowed, _ = ATTACKS[attack]
    honest = honest_runs[puzzle]
    assert honest.passed, (honest.reason, honest.message)
    report = judged(
        puzzle, submission(puzzle, body, tmp_path), roots[puzzle], TARGETS[puzzle].cases
    )
    assert (report.verdict.value, report.reason) in allowed, report.message
    assert not ranked_faster(report, honest), (report.score, honest.score)
    if report.reason == "timed-call-wrong":
        assert "timed call " in report.message and "drawn fresh" in report.message
    if report.passed:  # timed as what it is: the replay of everything it launched
        assert report.ranked and report.timing[0].replayed
        assert report.score.ms >= FASTER_BY * honest.score.ms, (report.score, honest.score)
    if attack == "honest_fork_join":  # no host work beyond the honest kernel's: timed alike
        assert report.score.ms <= 1.5 * honest.score.ms, (report.score, honest.score)
