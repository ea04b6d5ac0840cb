"""Compiling a submission's kernels ahead (judge.workers.ahead), in a worker with no GPU.

Triton compiles for a GPU's target without the GPU itself (ptxas comes with its wheel), so these
run on a machine with none: the kernels land, compiled for an H100's target, in the file's kept
Triton cache, where the judging worker on the GPU would find them.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from judge.judging import batch, runner
from judge.workers import confine, launcher
from judge.workers.channel import WorkerReported

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "plain.py"
AUTOTUNED = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "autotuned.py"
H100 = {
    "arch": 90,
    "warp_size": 32,
    "properties": {
        "max_shared_mem": 232448,
        "max_num_regs": 65536,
        "multiprocessor_count": 132,
        "warpSize": 32,
        "sm_clock_rate": 1980000,
        "mem_clock_rate": 2619000,
        "mem_bus_width": 5120,
    },
}
confined = pytest.mark.skipif(
    bool(confine.available()), reason=f"cannot confine here: {confine.available()}"
)


def cubins(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.cubin"))


def compiled_in_a_process(script: str, cache: Path):
    """Run a compile-ahead script in a process of its own (the driver and Triton's launches
    are replaced for good there), with `cache` as Triton's cache; its last line of output, as
    JSON."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_calls_are_the_visible_tests_and_the_benchmarks_each_once(vector_add):
    hidden = replace(vector_add.tests[0], sizes=(("N", 4242),), visibility="hidden")
    later = replace(vector_add.tests[0], sizes=(("N", 4243),), visibility="after_due_date")
    spec = replace(vector_add, tests=(*vector_add.tests, vector_add.tests[0], hidden, later))
    calls = batch.ahead_calls(spec)
    sizes = [call["sizes"]["N"] for call in calls]
    assert 4242 not in sizes and 4243 not in sizes  # never sent before the judging
    assert len(sizes) == len(set(sizes))
    assert set(sizes) == {c.size_map["N"] for c in vector_add.tests + vector_add.benchmarks}


def test_slots_leave_two_cores_a_lane():
    assert batch.ahead_slots(4, cores=16) == 4
    assert batch.ahead_slots(4, cores=10) == 1
    assert batch.ahead_slots(1, cores=64) == 4
    assert batch.ahead_slots(8, cores=2) == 1


def test_kernels_compile_for_the_target_without_a_gpu_and_nothing_runs(tmp_path):
    """In a process of its own (the driver and Triton's launches are replaced for good there):
    every launch of the plain and the autotuned solution compiles for sm_90, none runs (the
    addresses point nowhere; a launch would need a driver this machine may not have)."""
    script = textwrap.dedent(
        f"""
        import importlib.util, json, sys
        from judge.workers import ahead
        ahead.install(90, 32, {H100["properties"]!r})
        out = {{}}
        for path in ({str(PLAIN)!r}, {str(AUTOTUNED)!r}):
            spec = importlib.util.spec_from_file_location("s" + str(len(out)), path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            a, b, c = ahead.fake_pointers("abc").values()
            out[path] = ahead.compile_calls(module.solve, [[a, b, c, 1], [a, b, c, 1000]])
        print(json.dumps(out))
        """
    )
    result = compiled_in_a_process(script, tmp_path / "cache")
    assert all(r["calls"] == 2 and not r["stopped"] for r in result.values())
    compiled = cubins(tmp_path / "cache")
    # plain: N=1 and N=1000 specialise differently; autotuned: every config of each
    assert len(compiled) > 2
    metadata = [p.with_suffix(".json").read_text() for p in compiled]
    assert all('"arch": 90' in m or '"arch":90' in m for m in metadata)


def solution_script(path: Path, calls: str) -> str:
    """A script that compiles the solution file at `path` for an H100 here, for `calls` (a list
    of argument lists, in Python, over the fake device addresses a, b and c)."""
    return textwrap.dedent(
        f"""
        import importlib.util, json
        from judge.workers import ahead
        ahead.install(90, 32, {H100["properties"]!r})
        spec = importlib.util.spec_from_file_location("s", {str(path)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        a, b, c = ahead.fake_pointers("abc").values()
        print(json.dumps(ahead.compile_calls(module.solve, {calls})))
        """
    )


def test_a_gluon_kernel_compiles_ahead_like_a_triton_one(tmp_path):
    """gemm_fp16's gluon_persistent.py: its Gluon kernel (aligned sizes) and its Triton kernel
    (a row length that TMA cannot take) both compile for sm_90 here, and neither runs."""
    path = ROOT / "puzzles" / "gemm_fp16" / "solutions" / "correct" / "gluon_persistent.py"
    calls = "[[a, b, c, 256, 256, 256, 1.5, 0.5], [a, b, c, 100, 100, 100, 1.5, 0.5]]"
    result = compiled_in_a_process(solution_script(path, calls), tmp_path / "cache")
    assert result["calls"] == 2 and not result["stopped"]
    names = sorted(p.stem for p in cubins(tmp_path / "cache"))
    assert names == ["gemm_gluon_kernel", "gemm_tiled_kernel"]
    metadata = [m.read_text() for m in (tmp_path / "cache").rglob("gemm_gluon_kernel.json")]
    assert metadata and all('"arch": 90' in m or '"arch":90' in m for m in metadata)


def ptxas_report(ptx: Path, out: Path) -> str:
    """What ptxas, the one Triton compiles sm_90 with, says of `ptx` with -v."""
    from triton.backends.nvidia import compiler

    ptxas = compiler.get_ptxas(90).path
    done = subprocess.run(
        [ptxas, "-arch=sm_90a", "-v", str(ptx), "-o", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def multicast_copies() -> bool:
    """Whether this Triton's Gluon copies a tile into a cluster's programs at once (3.9 does)."""
    from triton.experimental.gluon.language.nvidia.hopper import tma

    copy = getattr(tma, "async_load", None)
    return copy is not None and "multicast" in inspect.signature(copy).parameters


MATMUL = ROOT / "puzzles" / "matmul" / "solutions" / "correct"


@pytest.mark.parametrize(
    "name, kernel, k, clusters",
    [
        ("swap_in_registers", "matmul_rs_kernel", 512, False),
        ("clusters_of_two", "matmul_pairs_kernel", 512, True),  # clusters where Triton can
        ("clusters_of_two", "matmul_pairs_kernel", 516, False),  # K off 128: one program
    ],
)
def test_matmul_swap_compiles_for_hopper_with_no_product_serialised(
    name, kernel, k, clusters, tmp_path
):
    """matmul's swaps compile for sm_90 here, and ptxas, given their PTX again, serialises none
    of their wgmma products: within the 168 registers a thread of a kernel launched as three
    warp groups, one stage's products in flight while the next are issued is serialised
    ("Potential Performance Loss: wgmma.mma_async instructions are serialized"), which cost the
    first drafts of this design 7% of their time (see swap_in_registers.py's docstring).
    clusters_of_two.py runs as clusters of two sharing A's tiles by multicast copies where this
    Triton has them and K is a multiple of 128, and as one program a cluster elsewhere."""
    calls = f"[[a, b, c, 512, 512, {k}]]"
    result = compiled_in_a_process(solution_script(MATMUL / f"{name}.py", calls), tmp_path / "c")
    assert result["calls"] == 1 and not result["stopped"]
    [ptx] = (tmp_path / "c").rglob(f"{kernel}.ptx")
    report = ptxas_report(ptx, tmp_path / "again.cubin")
    assert kernel in report  # ptxas said what it compiled
    assert "serialized" not in report, report
    paired = clusters and multicast_copies()
    text = ptx.read_text()
    assert (".reqnctapercluster 2" in text) == paired
    assert ("multicast::cluster" in text) == paired


@confined
def test_a_worker_with_no_gpu_compiles_into_the_files_kept_cache(vector_add, tmp_path):
    calls = batch.ahead_calls(vector_add)
    worker = launcher.launch_ahead(vector_add.directory / "puzzle.yaml", PLAIN, H100, calls)
    assert worker is not None
    try:
        compiled = worker.expect("compiled", 300, "compiling ahead")
        assert compiled["calls"] == len(calls) and compiled["stopped"] == {}
        # the file's kept cache, the one its judging worker gets
        kept = launcher.compiled_dir(PLAIN, dict(os.environ))
        assert worker.cache_dir == kept and cubins(kept)
    finally:
        launcher.discard(worker)


SCRATCH = """

_solve = solve


def solve(a, b, c, n):
    import torch

    scratch = torch.empty(n, device="cuda")  # scratch memory: allowed, and compiled past
    _solve(a, scratch.data_ptr(), c, n)
    {after}
"""


@confined
@pytest.mark.parametrize(
    "after, calls",
    [("", 1), ("torch.ones(n, device='cuda').sum().item()  # reads the device: stops", 0)],
)
def test_scratch_memory_is_compiled_past_and_what_reads_the_device_is_counted(
    vector_add, tmp_path, after, calls
):
    """A solve() that allocates scratch memory with PyTorch reaches its launch (the scratch's
    address as wide as a device address, so the kernel's signature is the GPU's); one that
    reads a value back from the device stops there: counted, not an error, the rest left to the
    judging worker."""
    source = tmp_path / "scratch.py"
    source.write_text(PLAIN.read_text() + SCRATCH.format(after=after))
    worker = launcher.launch_ahead(vector_add.directory / "puzzle.yaml", source, H100, [
        {"sizes": {"N": 1000}, "scalars": {}}
    ])  # fmt: skip
    try:
        compiled = worker.expect("compiled", 300, "compiling ahead")
        assert compiled["calls"] == calls and sum(compiled["stopped"].values()) == 1 - calls
        kept = launcher.compiled_dir(source, dict(os.environ))
        kernels = [p.read_text() for p in kept.rglob("vector_add_kernel.ttir")]
        assert kernels and all("%b_ptr: i64 {tt.divisibility = 16" in text for text in kernels)
    finally:
        launcher.discard(worker)


@confined
def test_a_file_compiled_ahead_whole_is_not_compiled_again_until_it_changes(vector_add, tmp_path):
    source = tmp_path / "vector_add.py"
    source.write_text(PLAIN.read_text())
    calls = [{"sizes": {"N": 1000}, "scalars": {}}]
    spec_file = vector_add.directory / "puzzle.yaml"
    for round_ in ("first", "edited"):
        worker = launcher.launch_ahead(spec_file, source, H100, calls)
        assert worker is not None, round_
        try:
            launcher.compiled_all(worker, worker.expect("compiled", 300, "compiling ahead"))
        finally:
            launcher.discard(worker)
        assert launcher.launch_ahead(spec_file, source, H100, calls) is None  # nothing new
        other = launcher.launch_ahead(spec_file, source, H100, [{"sizes": {"N": 7}, "scalars": {}}])
        assert other is not None  # other calls: compiled ahead again
        launcher.discard(other)
        source.write_text(source.read_text() + "\n# edited\n")


@confined
def test_a_submission_that_does_not_import_ends_its_compile_with_the_error(vector_add, tmp_path):
    source = tmp_path / "exits.py"
    source.write_text("import sys\nsys.exit(3)\n")
    worker = launcher.launch_ahead(vector_add.directory / "puzzle.yaml", source, H100, [])
    try:
        with pytest.raises(WorkerReported) as raised:
            worker.expect("compiled", 120, "compiling ahead")
        assert raised.value.kind == "exit"
    finally:
        launcher.discard(worker)


@pytest.mark.parametrize(
    "setting", ["TPUZZLE_COMPILE_AHEAD=0", "TPUZZLE_CONFINE=0", "TPUZZLE_KEEP_COMPILED=0"]
)
def test_no_compile_ahead_where_it_is_off_unconfined_or_without_a_kept_cache(
    vector_add, setting, monkeypatch
):
    name, value = setting.split("=")
    monkeypatch.setenv(name, value)
    assert launcher.launch_ahead(vector_add.directory / "puzzle.yaml", PLAIN, H100, []) is None


def test_rules_without_a_gpu_open_no_gpu_device_file(tmp_path):
    rules = confine.rules([tmp_path], [], gpu=False)
    assert not any(d.startswith("/dev/nvidia") for d in rules.devices)


class FakeAhead:
    """A compile ahead that takes `seconds` and says so."""

    def __init__(self, answers: dict):
        self.answers, self.discarded = answers, []

    def expect(self, name, timeout, phase):
        time.sleep(self.answers["seconds"])
        return {"event": name, **self.answers}

    def stop(self):
        self.discarded.append(self)

    dir = Path("/nonexistent/tpuzzle-fake-ahead")


def test_each_lane_waits_for_its_jobs_compile_before_judging_it(vector_add, monkeypatch):
    events, lock = [], threading.Lock()

    def launch_ahead(spec_file, path, target, calls):
        assert target == H100 and calls == batch.ahead_calls(vector_add)
        with lock:
            events.append(("compile", path.name))
        return FakeAhead({"seconds": 0.05, "calls": 1})

    def launch(spec_file, path, interpret, device):
        return FakeAhead({"seconds": 0})

    def judge(spec, path, options, worker, **_):
        with lock:
            events.append(("judge", path.name))
        from test_results import sample_report

        return sample_report()

    monkeypatch.setattr(launcher, "device_target", lambda gpu: H100)
    monkeypatch.setattr(batch, "ahead_slots", lambda lanes: 8)  # every compile begins at once
    jobs = [batch.Job(vector_add, Path(f"s{i}.py")) for i in range(4)]
    options = runner.RunOptions(interpret=False)
    done = list(batch.judge_each(jobs, options, [0], launch, judge, launch_ahead))
    assert sorted(i for i, _ in done) == [0, 1, 2, 3]
    for i in range(4):  # each job's compile began, and ended, before its judging
        assert events.index(("compile", f"s{i}.py")) < events.index(("judge", f"s{i}.py"))


def test_a_compile_not_begun_when_its_job_comes_up_is_dropped(vector_add):
    started = []

    def launch_ahead(spec_file, path, target, calls):
        started.append(path.name)
        return FakeAhead({"seconds": 0.3})

    jobs = [batch.Job(vector_add, Path(f"s{i}.py")) for i in range(3)]
    ahead = batch.AheadCompiles(jobs, H100, 1, launch_ahead)
    try:
        assert ahead.wait(2) is None  # s2's was queued behind s0's: dropped, not waited for
        assert ahead.wait(0)["seconds"] == 0.3
    finally:
        ahead.close()
    assert "s2.py" not in started


def test_a_lane_stops_a_compile_that_runs_past_its_wait(vector_add):
    """A submission that loops on import keeps its compile busy: the lane waits AHEAD_WAIT_S
    for it, not AHEAD_TIMEOUT_S, and stops it."""
    stopped = threading.Event()

    class Looping(FakeAhead):
        def expect(self, name, timeout, phase):
            stopped.wait(timeout)
            raise WorkerReported("error", "timeout", "stopped")

        def stop(self):
            stopped.set()

    ahead = batch.AheadCompiles(
        [batch.Job(vector_add, Path("loops.py"))], H100, 1, lambda *_: Looping({})
    )
    try:
        time.sleep(0.05)  # begun
        began = time.monotonic()
        assert ahead.wait(0, limit=0.2) is None
        assert time.monotonic() - began < 5 and stopped.wait(5)
    finally:
        ahead.close()


def test_a_compile_that_cannot_start_leaves_the_batch_to_judge(vector_add):
    """Whatever stops a compile from starting (a file gone since, a limit set wrong in the
    environment): no compile, no error; its judging reports what is wrong."""

    def launch_ahead(spec_file, path, target, calls):
        raise ValueError("TPUZZLE_MEMORY_MB='lots': expected a positive whole number")

    ahead = batch.AheadCompiles([batch.Job(vector_add, Path("gone.py"))], H100, 1, launch_ahead)
    try:
        assert ahead.wait(0, limit=5) is None
    finally:
        ahead.close()


def test_a_compile_ahead_that_cannot_be_confined_does_not_run(vector_add, tmp_path, monkeypatch):
    """Confinement is what keeps the GPU out of its reach: where it fails, nothing is imported
    or compiled, and the parent is told why."""
    import json
    import os

    from judge.workers import ahead, worker

    rules = confine.rules([tmp_path], [], gpu=False).to_json()
    job = {
        "spec": str(vector_add.directory / "puzzle.yaml"),
        "submission": str(PLAIN),
        "interpret": False,
        "confine": rules,
        "ahead": {**H100, "calls": []},
    }
    (tmp_path / "job.json").write_text(json.dumps(job))
    commands, _ = os.pipe()
    events, events_in = os.pipe()

    def fails(rules):
        raise OSError("landlock_restrict_self failed")

    monkeypatch.setattr(confine, "apply", fails)
    monkeypatch.setattr(ahead, "install", lambda *args: pytest.fail("compiled unconfined"))
    worker.Worker(tmp_path, commands, events_in).serve()
    event = json.loads(os.read(events, 1 << 16).decode().splitlines()[0])
    assert event["event"] == "error" and event["kind"] == "unconfined"
