import threading
import time
from pathlib import Path

import pytest
from test_results import sample_report

from judge.core.results import Verdict
from judge.core.spec import Case
from judge.errors import JudgeError
from judge.judging import batch, runner


class FakeWorker:
    def __init__(self, path: Path, device):
        self.path, self.device, self.dir = path, device, Path("/nonexistent/tpuzzle-fake")
        self.stopped = False

    def stop(self):
        self.stopped = True


class Recorder:
    """A launch and a judge that record what happened, in order, across lanes."""

    def __init__(self, delay: float = 0.0, fail_on: str = ""):
        self.events: list[tuple] = []
        self.workers: list[FakeWorker] = []
        self.lock = threading.Lock()
        self.delay, self.fail_on = delay, fail_on

    def launch(self, spec_file, path, interpret, device):
        worker = FakeWorker(Path(path), device)
        with self.lock:
            self.events.append(("launch", Path(path).name, device))
            self.workers.append(worker)
        return worker

    def judge(self, spec, path, options, worker):
        assert worker.path == path and worker.device == options.gpu
        time.sleep(self.delay)
        if path.name == self.fail_on:
            raise RuntimeError("a bug in the judge")
        with self.lock:
            self.events.append(("judged", path.name, options.gpu))
        return sample_report()


def jobs(vector_add, count: int) -> list[batch.Job]:
    return [batch.Job(vector_add, Path(f"s{i}.py")) for i in range(count)]


def test_every_job_is_judged_once_by_a_lane_of_its_own_device(vector_add):
    fake = Recorder(delay=0.01)
    done = list(
        batch.judge_each(
            jobs(vector_add, 7), runner.RunOptions(interpret=False), [0, 1], fake.launch, fake.judge
        )
    )
    assert sorted(i for i, _ in done) == list(range(7))
    launched = {name: device for kind, name, device in fake.events if kind == "launch"}
    judged = {name: device for kind, name, device in fake.events if kind == "judged"}
    assert launched == judged and set(judged.values()) == {0, 1}


def test_the_next_workers_start_before_the_current_job_is_judged(vector_add, monkeypatch):
    monkeypatch.setattr(batch, "LOOKAHEAD", 2)
    fake = Recorder()
    list(
        batch.judge_each(
            jobs(vector_add, 5), runner.RunOptions(interpret=True), [None], fake.launch, fake.judge
        )
    )
    assert [(kind, name) for kind, name, _ in fake.events] == [
        ("launch", "s0.py"),
        ("launch", "s1.py"),
        ("launch", "s2.py"),
        ("judged", "s0.py"),
        ("launch", "s3.py"),
        ("judged", "s1.py"),
        ("launch", "s4.py"),
        ("judged", "s2.py"),
        ("judged", "s3.py"),
        ("judged", "s4.py"),
    ]


def test_a_judge_failure_reaches_the_caller_and_stops_every_worker(vector_add):
    fake = Recorder(delay=0.02, fail_on="s3.py")
    with pytest.raises(RuntimeError, match="a bug in the judge"):
        list(
            batch.judge_each(
                jobs(vector_add, 20),
                runner.RunOptions(interpret=False),
                [0, 1],
                fake.launch,
                fake.judge,
            )
        )
    judged = [name for kind, name, _ in fake.events if kind == "judged"]
    assert len(judged) < 19  # the batch stopped early
    unfinished = [w for w in fake.workers if w.path.name not in judged]
    assert unfinished and all(w.stopped for w in unfinished)


def test_parse_gpus():
    assert batch.parse_gpus("0,1") == [0, 1]
    assert batch.parse_gpus("3") == [3]
    for bad in ("0,0", "x", "-1", "0,,1"):
        with pytest.raises(JudgeError, match="--gpus"):
            batch.parse_gpus(bad)


def test_lanes():
    assert batch.lanes([0, 1], None, interpret=False, jobs=1) == [0, 1]
    assert batch.lanes(None, None, interpret=False, jobs=4) == [None]
    assert batch.lanes(None, None, interpret=True, jobs=3) == [None, None, None]


def test_real_workers_on_two_cpu_lanes(vector_add, puzzles_root):
    good = puzzles_root / "vector_add/solutions/correct/plain.py"
    bad = puzzles_root / "vector_add/solutions/wrong/failed_no_mask.py"
    crash = puzzles_root / "vector_add/solutions/wrong/error_os_exit.py"
    work = [batch.Job(vector_add, p) for p in (good, bad, crash, good)]
    options = runner.RunOptions(
        interpret=True, cases=(Case("N=300", (("N", 300),), seed=4),), timeout_s=30
    )
    reports = dict(batch.judge_each(work, options, [None, None]))
    verdicts = [(reports[i].verdict, reports[i].reason) for i in range(4)]
    assert verdicts == [
        (Verdict.PASSED, "ok"),
        (Verdict.FAILED, "out-of-bounds"),
        (Verdict.ERROR, "exit"),
        (Verdict.PASSED, "ok"),
    ]


def test_setup_turns_the_command_line_into_options_and_lanes(monkeypatch):
    monkeypatch.setattr(batch.launcher, "cuda_present", lambda: False)
    monkeypatch.setenv("TPUZZLE_SECRET_SEED", "from-env")
    plan = batch.setup(batch.Choices(interpret=False, timing=False, timeout=3.0, jobs=2))
    assert plan.mode == "interpreter" and plan.devices == (None, None)
    assert (plan.options.interpret, plan.options.timing, plan.options.timeout_s) == (True, False, 3)
    assert plan.options.secret == "from-env"
    assert batch.setup(batch.Choices(interpret=True), secret="given").options.secret == "given"
    with pytest.raises(JudgeError, match="--jobs 0: expected at least 1"):
        batch.setup(batch.Choices(interpret=True, jobs=0))
    with pytest.raises(JudgeError, match="--gpus needs CUDA devices"):
        batch.setup(batch.Choices(gpus="0,1"))


def test_setup_can_leave_the_mode_to_whoever_judges(monkeypatch):
    def driver():
        raise AssertionError("the driver was asked")

    monkeypatch.setattr(batch.launcher, "cuda_present", driver)
    plan = batch.setup(batch.Choices(), decide=False)
    assert plan.options.interpret is None and plan.mode == "auto"
    assert plan.devices == (None,) * batch.PER_GPU
    assert batch.setup(batch.Choices(interpret=True), decide=False).mode == "interpreter"
    with pytest.raises(AssertionError, match="the driver was asked"):  # --gpus needs devices
        batch.setup(batch.Choices(gpus="0"), decide=False)
    with pytest.raises(AssertionError, match="the driver was asked"):
        batch.setup(batch.Choices())


def test_setup_on_gpus_gives_per_gpu_lanes_per_device(monkeypatch):
    monkeypatch.setattr(batch.launcher, "cuda_present", lambda: True)
    plan = batch.setup(batch.Choices(gpus="1,3", jobs=4, per_gpu=1))
    assert plan.mode == "gpu" and plan.devices == (1, 3)
    assert batch.setup(batch.Choices(gpus="1,3", per_gpu=2)).devices == (1, 1, 3, 3)
    assert batch.setup(batch.Choices()).devices == (None,) * batch.PER_GPU
    with pytest.raises(JudgeError, match="--per-gpu 0"):
        batch.setup(batch.Choices(per_gpu=0))


class Stuck(Recorder):
    """A judge that never notices its worker was killed."""

    def judge(self, spec, path, options, worker):
        if path.name == "s1.py":
            time.sleep(10)
        return super().judge(spec, path, options, worker)


def test_stopping_early_waits_a_bounded_time_for_a_stuck_lane(vector_add, monkeypatch):
    monkeypatch.setattr(batch, "STOP_WAIT_S", 0.2)
    fake, options = Stuck(), runner.RunOptions(interpret=True)
    each = batch.judge_each(jobs(vector_add, 3), options, [None, None], fake.launch, fake.judge)
    started = time.monotonic()
    next(each)  # s0.py (the other lane is stuck on s1.py)
    each.close()
    assert time.monotonic() - started < 5
    assert all(w.stopped for w in fake.workers if w.path.name != "s0.py")
