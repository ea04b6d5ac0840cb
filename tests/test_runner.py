import contextlib
import os
import subprocess
import sys
import time

import pytest

from judge.core.results import Progress, Verdict
from judge.core.spec import Case
from judge.judging import measure, runner
from judge.workers import launcher

CORRECT = """
import triton
import triton.language as tl


@triton.jit
def add(a_ptr, b_ptr, c_ptr, N, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask),
             mask=mask)


def solve(a_ptr, b_ptr, c_ptr, N):
    {body}
    add[(triton.cdiv(N, 256),)](a_ptr, b_ptr, c_ptr, N, BLOCK=256)
"""

SMALL = (Case(name="N=300", sizes=(("N", 300),), seed=4),)


def judge(spec, path, **options):
    options.setdefault("interpret", True)
    options.setdefault("timeout_s", 20)
    return runner.judge(spec, path, runner.RunOptions(**options))


def test_mix_seed():
    assert runner.mix_seed(7, "") == 7
    assert runner.mix_seed(7, "s3cret") == runner.mix_seed(7, "s3cret") != 7
    assert runner.mix_seed(7, "s3cret") != runner.mix_seed(7, "other")


def test_secret_from_environment_or_file(tmp_path, monkeypatch):
    assert runner.secret_from_env() == ""
    (tmp_path / "secret").write_text("from-a-file\n")
    monkeypatch.setenv(runner.SECRET_FILE_ENV, str(tmp_path / "secret"))
    assert runner.secret_from_env() == "from-a-file"
    monkeypatch.setenv(runner.SECRET_ENV, "from-env")
    assert runner.secret_from_env() == "from-env"


def test_worker_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(runner.SECRET_ENV, "hidden")
    monkeypatch.setenv("TPUZZLE_PROFILE_DIR", str(tmp_path))
    env = launcher.worker_env(tmp_path, interpret=False, gpu=1)
    assert runner.SECRET_ENV not in env and "TRITON_INTERPRET" not in env
    assert "TPUZZLE_DB" not in env and "TPUZZLE_CACHE" not in env  # set by the fixture
    assert env["TPUZZLE_PROFILE_DIR"] == str(tmp_path)
    assert env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "triton-cache")
    assert launcher.worker_env(tmp_path, interpret=True, gpu=None)["TRITON_INTERPRET"] == "1"


def test_worker_environment_keeps_floating_point_fusion_unless_told(tmp_path, monkeypatch):
    monkeypatch.delenv(launcher.FP_FUSION_ENV, raising=False)
    assert launcher.worker_env(tmp_path, interpret=False, gpu=None)[launcher.FP_FUSION_ENV] == "1"
    monkeypatch.setenv(launcher.FP_FUSION_ENV, "0")
    assert launcher.worker_env(tmp_path, interpret=False, gpu=None)[launcher.FP_FUSION_ENV] == "0"


def test_secret_changes_the_seeds_and_never_reaches_the_worker(
    vector_add, write_submission, monkeypatch
):
    leak = CORRECT.replace("{body}", "import os; print(sorted(os.environ.items()))")
    monkeypatch.setenv(runner.SECRET_ENV, "correct-horse")
    report = judge(vector_add, write_submission(leak), secret="correct-horse")
    assert report.verdict is Verdict.PASSED
    assert "correct-horse" not in report.output and "TRITON_INTERPRET" in report.output
    spec_seeds = {c.seed for c in vector_add.tests}
    assert not spec_seeds & {c.seed for c in report.cases}


def test_custom_case_uses_its_seed_as_given(vector_add, write_submission):
    report = judge(
        vector_add,
        write_submission(CORRECT.replace("{body}", "pass")),
        cases=SMALL,
        secret="ignored-for-custom-cases",
    )
    assert [(c.name, c.seed, c.status) for c in report.cases] == [("N=300", 4, "passed")]


def test_output_is_capped_and_does_not_disturb_the_protocol(vector_add, write_submission):
    noisy = CORRECT.replace("{body}", 'print(\'{"event": "case_done"}\' + "x" * 1_000_000)')
    report = judge(vector_add, write_submission(noisy), cases=SMALL)
    assert report.verdict is Verdict.PASSED
    assert len(report.output) < 40_000 and "bytes of output omitted" in report.output


def test_children_of_the_worker_are_killed(vector_add, write_submission):
    spawn = (
        "import subprocess; p = subprocess.Popen(['sleep', '300']); "
        "print(f'CHILD {p.pid}', flush=True)"
    )
    report = judge(vector_add, write_submission(CORRECT.replace("{body}", spawn)), cases=SMALL)
    assert (report.verdict, report.reason) == (Verdict.REJECTED, "helper-process")
    assert "sleep" in report.message  # named, then killed
    pid = int(report.output.split("CHILD ", 1)[1].split()[0])
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the worker's child process outlived the judging")


def test_temporary_directory_is_removed(vector_add, write_submission, tmp_path, monkeypatch):
    monkeypatch.setenv("TPUZZLE_TMPDIR", str(tmp_path))
    judge(vector_add, write_submission(CORRECT.replace("{body}", "pass")), cases=SMALL)
    assert not list(tmp_path.glob("tpuzzle-*"))
    report = judge(vector_add, write_submission(CORRECT.replace("{body}", "pass")), cases=SMALL)
    assert {"references", "startup", "import", "cases"} <= set(report.phases)


def test_failure_carries_a_reproducing_command(vector_add, write_submission):
    wrong = CORRECT.replace("{body}", "N = N - 1")
    report = judge(vector_add, write_submission(wrong), cases=SMALL)
    assert (report.verdict, report.reason) == (Verdict.FAILED, "unwritten")
    case = report.cases[0]
    assert case.reproduce.startswith("tpuzzle run vector_add ")
    assert case.reproduce.endswith("--size N=300 --seed 4 --interpret")
    assert "the last element of c_ptr was never written" in case.hints[0]


def test_a_failed_case_does_not_stop_the_others(vector_add, write_submission):
    wrong = CORRECT.replace("{body}", "N = min(N, 1024)")
    report = judge(vector_add, write_submission(wrong))
    statuses = {c.name: c.status for c in report.cases}
    assert statuses["N=1024"] == "passed" and statuses["N=1025"] == "failed"
    assert statuses["N=65537 prime"] == "failed"
    assert report.message.startswith("case N=1025")


def test_interpreter_mode_is_never_ranked_or_timed(vector_add, write_submission):
    report = judge(vector_add, write_submission(CORRECT.replace("{body}", "pass")), cases=SMALL)
    assert report.passed and not report.ranked and report.timing == ()
    assert report.env.mode == "interpreter"
    assert any("timings mean nothing" in n for n in report.notes)


def test_a_timer_handed_to_a_run_without_one_is_discarded(vector_add, write_submission, tmp_path):
    """A started timer (the judge server's spare) handed to a run in the interpreter, which
    times nothing, is stopped and its folder removed, not left running."""

    class Timer:
        dir = tmp_path / "timer"
        stopped = False

        def stop(self):
            self.stopped = True

    timer = Timer()
    timer.dir.mkdir()
    path = write_submission(CORRECT.replace("{body}", "pass"))
    options = runner.RunOptions(interpret=True, timeout_s=20, cases=SMALL)
    report = runner.judge(vector_add, path, options, timer=timer)
    assert report.passed and timer.stopped and not timer.dir.exists()


def test_progress_is_told_each_stage_case_and_benchmark(vector_add, write_submission):
    events = []
    cases = (Case(name="N=100", sizes=(("N", 100),), seed=1), *SMALL)
    options = runner.RunOptions(interpret=True, timeout_s=20, cases=cases)
    path = write_submission(CORRECT.replace("{body}", "pass"))
    report = runner.judge(vector_add, path, options, progress=events.append)
    assert report.passed, report.message
    assert events == [
        Progress("startup", 0, 0),
        Progress("calibration", 0, 0),
        Progress("import", 0, 0),
        Progress("cases", 0, 2),
        Progress("cases", 1, 2, "N=100"),
        Progress("cases", 2, 2, "N=300"),
        Progress("benchmarks", 0, 1),  # untimed: the repeated calls on the largest case
        Progress("benchmarks", 1, 1, "N=300"),
    ]


def test_a_progress_callback_that_raises_changes_no_verdict(vector_add, write_submission):
    told = []

    def broken(progress):
        told.append(progress.stage)
        raise RuntimeError("a broken progress bar")

    def outcome(report):
        cases = [(c.name, c.status, c.max_error, c.reproduce) for c in report.cases]
        return report.verdict, report.reason, report.message, cases

    cases = (Case(name="N=100", sizes=(("N", 100),), seed=1), *SMALL)
    options = runner.RunOptions(interpret=True, timeout_s=20, cases=cases)
    for body in ("pass", "N = N - 1"):
        path = write_submission(CORRECT.replace("{body}", body))
        told.clear()
        with_broken = runner.judge(vector_add, path, options, progress=broken)
        assert outcome(with_broken) == outcome(runner.judge(vector_add, path, options))
        assert told[:3] == ["startup", "calibration", "import"] and "cases" in told
    assert (with_broken.verdict, with_broken.reason) == (Verdict.FAILED, "unwritten")
    assert "benchmarks" not in told  # a failed case ends the run before the benchmarks


# ------------------------------------------------------------------------------ on the GPU

SIDE_STREAM = CORRECT.replace(
    "def solve(a_ptr, b_ptr, c_ptr, N):\n    {body}\n    add[",
    """
import torch

_side = None


def solve(a_ptr, b_ptr, c_ptr, N):
    global _side
    _side = _side or torch.cuda.Stream()
    with torch.cuda.stream(_side):
        for _ in range(20):  # plenty of work, none of it on the stream being timed
            add[""",
)


@pytest.mark.gpu
def test_work_left_on_another_stream_is_timed_whole_in_the_replay(vector_add, write_submission):
    report = judge(vector_add, write_submission(SIDE_STREAM), interpret=False, timeout_s=120)
    assert report.verdict is Verdict.PASSED, report.message
    [timing] = report.timing[:1]
    assert len(timing.replayed) == 20 and timing.launches == 20  # every launch, on one stream


@pytest.mark.gpu
def test_timed_calls_are_checked_again(vector_add, puzzles_root):
    cheat = puzzles_root / "vector_add/solutions/wrong/failed_skips_repeated_calls.py"
    report = judge(vector_add, cheat, interpret=False, timeout_s=120)
    assert (report.verdict, report.reason) == (Verdict.FAILED, "recheck-failed"), report.message


@pytest.mark.gpu
def test_wrong_only_in_the_last_case_fails_though_timing_has_begun(vector_add, write_submission):
    """The first shape's timing is sent while the last case is checked: a submission wrong
    there alone still fails, untimed, and its busy worker is killed rather than waited for."""
    wrong_at_the_limit = CORRECT.format(body="N = N - 1 if N > 50_000_000 else N")
    started = time.monotonic()
    report = judge(vector_add, write_submission(wrong_at_the_limit), interpret=False)
    assert (report.verdict, report.reason) == (Verdict.FAILED, "unwritten"), report.message
    assert report.cases[-1].status == "failed" and report.timing == ()
    assert time.monotonic() - started < 60
    # 100M elements: described by the timer on the device, only that account sent back
    c = next(b for b in report.cases[-1].buffers if b.name == "c_ptr")
    assert (c.mismatches, c.unwritten, c.written_prefix) == (1, 1, 99_999_999)
    assert any("never written" in h for h in report.cases[-1].hints)


@pytest.mark.gpu
@pytest.mark.parametrize("name, tunes", [("plain.py", False), ("autotuned.py", True)])
def test_on_a_shared_device_only_an_autotuner_tunes_in_the_time_alone(
    vector_add, puzzles_root, name, tunes
):
    """On a device shared with other judgings, the first shape's calls are recorded while the
    last case is checked; an autotuner quickly tuned there tunes again alone (`bench_tune`)."""
    from judge.judging.gate import DeviceGate

    path = puzzles_root / "vector_add/solutions/correct" / name
    options = runner.RunOptions(interpret=False, timeout_s=120)
    report = runner.judge(vector_add, path, options, gate=DeviceGate())
    assert report.verdict is Verdict.PASSED, report.message
    assert report.ranked and len(report.timing) == 1
    assert ("bench_tune" in report.phases) is tunes
    assert report.phases["bench_record"] > 0


@pytest.mark.gpu
def test_illegal_address_poisons_only_its_own_worker(vector_add, puzzles_root):
    bad = puzzles_root / "vector_add/solutions/wrong/error_illegal_address.py"
    good = puzzles_root / "vector_add/solutions/correct/plain.py"
    first = judge(vector_add, bad, interpret=False, timing=False)
    assert (first.verdict, first.reason) == (Verdict.ERROR, "cuda-error"), first.message
    second = judge(vector_add, good, interpret=False, timing=False)
    assert second.verdict is Verdict.PASSED, second.message


class FakeWorker:
    """Answers measurement commands with a counter, as a worker would with a measurement."""

    interpret = False

    def __init__(self):
        self.asked = []

    def expect_ok(self, command, answer, timeout, phase):
        self.asked.append(command["op"])
        return {"event": answer, "value": len(self.asked)}


def test_measurements_are_cached_per_key_and_taken_again_once_on_recalibrate(
    vector_add, monkeypatch
):
    monkeypatch.setattr(measure, "_MEASURED_HERE", {})
    worker = FakeWorker()
    session = runner.Session(
        vector_add, vector_add.directory / "template.py", runner.RunOptions(), worker, timer=worker
    )
    args = (
        "reference",
        "H200|vector_add",
        lambda: {"op": "time_reference"},
        "reference_timed",
        1.0,
    )
    assert session.measured(*args) == 1
    assert session.measured(*args) == 1  # from the cache: the worker is not asked again

    def never_built():
        raise AssertionError("a cached measurement builds no command")

    assert session.measured(*args[:2], never_built, *args[3:]) == 1
    assert session.measured("reference", "H100|vector_add", *args[2:]) == 2
    fresh = runner.Session(
        vector_add,
        vector_add.directory / "template.py",
        runner.RunOptions(recalibrate=True),
        worker,
        timer=worker,
    )
    monkeypatch.setattr(measure, "_MEASURED_HERE", {})  # a new process
    assert fresh.measured(*args) == 3  # measured again, once
    assert fresh.measured(*args) == 3
    assert worker.asked == ["time_reference"] * 3


def test_the_cli_imports_no_torch_before_it_starts_the_worker():
    code = "import judge.cli.app, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_sweep_times_every_distinct_test_size_after_the_benchmarks(vector_add):
    plain = runner.Session(
        vector_add, vector_add.directory / "template.py", runner.RunOptions(), FakeWorker()
    )
    assert plain.bench_cases == list(vector_add.benchmarks)
    sweep = runner.Session(
        vector_add,
        vector_add.directory / "template.py",
        runner.RunOptions(sweep=True),
        FakeWorker(),
    )
    sizes = [c.size_map["N"] for c in sweep.bench_cases]
    assert sizes[0] == 25_000_000 and sizes[1:] == sorted(sizes[1:])
    assert len(sizes) == len(set(sizes)) == 1 + len({c.sizes for c in vector_add.tests})
    assert all(c.draw == "" for c in sweep.bench_cases)


def test_the_worker_runs_on_the_inputs_the_parent_drew(vector_add, write_submission, monkeypatch):
    """The parent's draw is shifted here (in this process only): the case passes only if the
    worker maps the parent's sealed inputs instead of drawing its own from the seed."""
    from judge.core import inputs, truth

    if not truth.CAN_SEAL:
        pytest.skip("needs Linux memfd sealing")
    monkeypatch.setattr(truth, "SEAL_MIN_BYTES", 0)
    draw = inputs.pristine

    def shifted(*args, **kwargs):
        return {name: t + 1.5 for name, t in draw(*args, **kwargs).items()}

    monkeypatch.setattr(inputs, "pristine", shifted)
    case = (Case(name="N=300 shifted", sizes=(("N", 300),), seed=918_273),)
    report = judge(vector_add, write_submission(CORRECT.replace("{body}", "pass")), cases=case)
    assert report.verdict == Verdict.PASSED, report.message


def test_cases_start_before_the_last_truth_is_computed(vector_add, write_submission, monkeypatch):
    """The last case's truth is held back until the first case has been checked: the run passes
    without waiting out the hold only if truths are computed while the worker runs cases."""
    import threading

    cases = tuple(Case(name=f"N={n}", sizes=(("N", n),), seed=n) for n in (100, 200, 300))
    first_checked, waited_out = threading.Event(), []
    get, check_case = runner.truth_cache.get, runner.Session.check_case

    def held_get(spec, reference, case):
        if case.seed == 300:
            waited_out.append(not first_checked.wait(timeout=30))
        return get(spec, reference, case)

    def checked(self, case, truth, files):
        result = check_case(self, case, truth, files)
        first_checked.set()
        return result

    monkeypatch.setattr(runner.truth_cache, "get", held_get)
    monkeypatch.setattr(runner.Session, "check_case", checked)
    report = judge(vector_add, write_submission(CORRECT.replace("{body}", "pass")), cases=cases)
    assert report.verdict == Verdict.PASSED, report.message
    assert waited_out == [False]


class Phases:
    @contextlib.contextmanager
    def phase(self, name, total=0):
        yield


def test_the_timer_s_answers_fill_the_cases_in_order_and_a_failure_ends_them(vector_add):
    """The cases sent to the timer are answered in order once the worker is done; where the
    timer fails, that case is an error, the failure stops the run, later answers are not read."""
    from judge.core.results import CaseResult
    from judge.workers.channel import WorkerReported

    session = runner.Session.__new__(runner.Session)
    session.found, session.plan = Phases(), type("Plan", (), {})()
    session.plan.case_result = lambda case, status, **f: CaseResult(
        name=case.name, sizes={}, seed=0, status=status, **f
    )
    asked_for = []

    def answered(i, case):
        asked_for.append(i)
        if i == 2:
            raise WorkerReported("error", "crash", "the timer died")
        return CaseResult(name=case.name, sizes={}, seed=0, status="passed")

    session.answered_case = answered
    cases = [Case(name=f"c{i}", sizes=(("N", i + 1),), seed=i) for i in range(4)]
    results = [None, None, None, None]
    stop = session.collected(results, [(i, c) for i, c in enumerate(cases)])
    assert stop is not None and stop.kind == "crash" and asked_for == [0, 1, 2]
    assert [r.status for r in results] == ["passed", "passed", "error"]
    asked = [(0, cases[0])]
    results = [None]
    assert session.collected(results, asked) is None and results[0].status == "passed"
    assert asked == []


def test_a_measurement_s_time_alone_on_a_shared_device_is_its_own_phase(vector_add, monkeypatch):
    from judge.judging.gate import DeviceGate

    monkeypatch.setattr(measure, "_MEASURED_HERE", {})
    worker = FakeWorker()
    session = runner.Session(
        vector_add,
        vector_add.directory / "template.py",
        runner.RunOptions(),
        worker,
        gate=DeviceGate(),
        timer=worker,
    )
    session.measured("reference", "H200|alone", lambda: {"op": "x"}, "x", 1.0)
    assert {"device_wait", runner.ALONE} <= set(session.found.phases)


class Recording(FakeWorker):
    """Answers the early benchmark with the events given, in turn (a WorkerFailure raised)."""

    def __init__(self, *events):
        super().__init__()
        self.events = list(events)

    def expect(self, name, timeout, phase):
        event = self.events.pop(0)
        if isinstance(event, Exception):
            raise event
        assert event["event"] in ((name,) if isinstance(name, str) else name)
        return event


def recording_session(spec, worker):
    return runner.Session(
        spec, spec.directory / "template.py", runner.RunOptions(), worker, timer=worker
    )


def test_an_early_benchmark_s_answer_is_kept_and_a_tuner_tunes_again_when_it_is_used(vector_add):
    [case] = vector_add.benchmarks[:1]
    worker = Recording({"event": "bench_tuning", "seconds": {"first_calls_s": 0.2}})
    session = recording_session(vector_add, worker)
    assert session.early_answer(case) is None and session.early["event"] == "bench_tuning"
    event = session.recorded(case, {"op": "bench"}, 1.0)
    assert event == {"event": "bench_done", "value": 1} and worker.asked == ["bench_tune"]
    assert session.early is None and session.found.phases["bench_first_calls"] == 0.2
    worker.events.append({"event": "bench_done", "seconds": {}})  # the next shape: read now
    assert session.recorded(case, {"op": "bench"}, 1.0)["event"] == "bench_done"
    assert worker.asked == ["bench_tune"]


def test_an_early_benchmark_that_fails_ends_the_run_with_its_failure(vector_add):
    from judge.workers.channel import WorkerReported

    [case] = vector_add.benchmarks[:1]
    crash = WorkerReported("error", "segfault", "solve() crashed")
    session = recording_session(vector_add, Recording(crash))
    assert session.early_answer(case) is crash and session.early is None
