import threading

import pytest

from judge.core import bench
from judge.core.loader import file_sha256
from judge.core.results import EnvInfo
from judge.core.spec import Case
from judge.judging import measure

ENV = EnvInfo("gpu", "NVIDIA H200", "580.1", "13.0", "3.6.0", "2.11.0", "3.12.3")
CALIBRATION = {
    "copy_gbps": 4300.0,
    "peaks_tflops": {"fp16": 790.0},
    "read_gbps": 4100.0,
    "copy_curve": {"1048576": 900.0},
}


class FakeMeasure:
    """Stands for Session.measured: records each request, answers with `answers`, and builds
    the command only when told to (as a measurement missing from the cache would)."""

    def __init__(self, answers, build=True):
        self.answers, self.build, self.asked = list(answers), build, []

    def __call__(self, kind, key, command, answer, timeout):
        self.asked.append((kind, key, command() if self.build else None, answer, timeout))
        return self.answers.pop(0)


def test_keys_name_the_device_its_driver_and_the_versions():
    assert measure.calibration_key(ENV) == "NVIDIA H200|580.1|torch 2.11.0|triton 3.6.0"
    assert measure.device_key(ENV) == f"{measure.MEASURES}|{measure.calibration_key(ENV)}"


def test_calibration_is_asked_for_once_and_shown_in_the_environment():
    fake = FakeMeasure([CALIBRATION])
    calibration, env = measure.calibrate(fake, ENV)
    assert calibration is CALIBRATION
    kind, key, command, answer, timeout = fake.asked[0]
    assert (kind, key, command, answer) == (
        "calibration",
        # peaks timed by do_bench, or at one size a precision, are measured again
        f"played-best-4096-6144-8192|{measure.device_key(ENV)}",
        {"op": "calibrate"},
        "calibrated",
    )
    assert timeout == measure.CALIBRATION_TIMEOUT_S
    assert (env.copy_gbps, env.read_gbps) == (4300.0, 4100.0)
    assert env.peaks_tflops == {"fp16": 790.0} and env.copy_curve == {"1048576": 900.0}
    bare = measure.with_calibration(ENV, {"copy_gbps": 1.0, "peaks_tflops": {}})
    assert bare.read_gbps is None and bare.copy_curve == {}


def test_reference_times_are_keyed_per_reference_sizes_and_draw(vector_add):
    cases = [
        Case("a", (("N", 10),), 1),
        Case("b", (("N", 20),), 2, draw="mixed"),
    ]
    fake = FakeMeasure([[1.0], [2.0]])
    times = measure.reference_times(
        fake, vector_add, ENV, cases, lambda c: {"op": "time_reference", "case": c.name}, 90.0
    )
    assert times == [[1.0], [2.0]]
    digest = file_sha256(vector_add.directory / "reference.py")[:16]
    # "played": timed in the loop that times a submission (do_bench's entries are not reused)
    timing = measure.REFERENCE_TIMING
    prefix = f"{measure.MEASURES}|{timing}|{measure.device_key(ENV)}|vector_add|{digest}"
    assert [a[1] for a in fake.asked] == [
        f"{prefix}|(('N', 10),)|",
        f"{prefix}|(('N', 20),)|mixed",
    ]
    assert [a[2]["case"] for a in fake.asked] == ["a", "b"]
    assert {(a[0], a[3], a[4]) for a in fake.asked} == {("reference", "reference_timed", 90.0)}


def test_a_cached_reference_time_builds_no_command(vector_add):
    def never(case):
        raise AssertionError("a cached measurement builds no command")

    fake = FakeMeasure([[1.0]], build=False)
    assert measure.reference_times(fake, vector_add, ENV, [Case("a", (), 1)], never, 1.0) == [[1.0]]


def test_untimed_runs_say_why():
    assert "timings mean nothing" in measure.untimed_note(True, True)
    assert measure.untimed_note(False, True).startswith("Untimed: --sanitize")
    assert measure.untimed_note(False, False) == "Timing skipped (--no-timing)."


def test_the_fastest_library_call_is_the_one_compared(vector_add):
    assert measure.libraries(vector_add, None) == (None, "", None)
    assert measure.libraries(vector_add, [1.0, 2.0]) == (None, "", None)  # an old cache entry
    only = {"reference": [3.0, 1.0, 2.0]}
    assert measure.libraries(vector_add, only) == (2.0, "torch.add", 2.0)
    faster = {"reference": [2.0], "library": {"cublas": [1.0], "empty": []}}
    assert measure.libraries(vector_add, faster) == (2.0, "cublas", 1.0)
    slower = {"reference": [2.0], "library": {"cublas": [3.0]}}
    assert measure.libraries(vector_add, slower) == (2.0, "torch.add", 2.0)
    assert measure.libraries(vector_add, {"library": {"cublas": [3.0]}}) == (None, "cublas", 3.0)


class CountingWorker:
    """Answers a measurement with a calibration, after `before()`; counts the measurements."""

    def __init__(self, before=lambda: None):
        self.before, self.asked = before, 0

    def expect_ok(self, command, answer, timeout, phase):
        self.before()
        self.asked += 1
        return {"event": answer, "value": dict(CALIBRATION, asked=self.asked)}


def calibrated(worker, recalibrate=False):
    key = measure.device_key(ENV)
    return measure.measured(worker, recalibrate, "calibration", key, dict, "calibrated", 5.0)


def test_lanes_that_miss_one_key_together_measure_it_once(monkeypatch):
    """A cold cache: every lane's first submission wants the calibration at once. The first
    lane measures it while the others wait, and they all get its value."""
    monkeypatch.setattr(measure, "_MEASURED_HERE", {})
    lanes = 4
    looked = threading.Semaphore(0)
    real = bench.load_cached

    def load(kind, key):
        value = real(kind, key)
        looked.release()
        return value

    def everyone_looked():  # every lane found the cache empty before the measurement ends
        for _ in range(lanes + 1):  # the measuring lane looks twice, before and after its lock
            assert looked.acquire(timeout=10), "the lanes did not all look in the cache"

    monkeypatch.setattr(bench, "load_cached", load)
    worker = CountingWorker(everyone_looked)
    values, errors = [], []

    def lane():
        try:
            values.append(calibrated(worker))
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=lane) for _ in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors and worker.asked == 1
    assert values == [dict(CALIBRATION, asked=1)] * lanes


def test_a_lane_whose_measurement_fails_leaves_it_to_the_next():
    class Failing:
        def expect_ok(self, command, answer, timeout, phase):
            raise TimeoutError("the worker did not answer")

    with pytest.raises(TimeoutError):
        calibrated(Failing())
    worker = CountingWorker()
    assert calibrated(worker)["asked"] == 1 and worker.asked == 1


def test_a_value_dropped_from_the_disk_cache_is_not_measured_again(monkeypatch):
    """Concurrent writers of the cache file may drop each other's entries: what this process
    measured is still known to it."""
    monkeypatch.setattr(measure, "_MEASURED_HERE", {})
    worker = CountingWorker()
    assert calibrated(worker)["asked"] == 1
    (bench.cache_dir() / "calibration.json").unlink()
    assert calibrated(worker)["asked"] == 1 and worker.asked == 1
    assert calibrated(worker, recalibrate=True)["asked"] == 1  # measured here already
