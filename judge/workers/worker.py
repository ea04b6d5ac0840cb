"""The worker: a fresh process that runs one submission on command from the trusted parent.

Started as `python -m judge.workers.worker JOB_DIR CMD_FD EVENT_FD` (`main`), or forked by the
zygote, which calls `run` with the same three. It reads one JSON command per line on CMD_FD and
answers one JSON event per line on EVENT_FD. It never judges. On the GPU it records what each
call of solve() launched, and the timer (this same program, started as a timer: it never imports
a submission) replays and checks that on its own buffers; in the interpreter it hands back the
bytes of every buffer (guard bands included) as raw files in JOB_DIR, and the parent compares
them against references it computed itself.

Order matters for trust: calibration and the reference's timing happen before the submission is
imported, so nothing the submission does can touch them.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import socket
import sys
import time
from pathlib import Path

import torch

from judge.core import inputs
from judge.core.loader import LoadError, load_solve
from judge.core.spec_reader import load_spec
from judge.workers import ahead, confine, host, interp, launches, replay, timer_commands
from judge.workers.commands import Stopwatch, input_sets
from judge.workers.handing import HANDED, with_paths
from judge.workers.ledger import StoreLedger
from judge.workers.recorder import LaunchRecorder
from judge.workers.referee import ALLOWED_OPS, Rejected, classify, referee
from judge.workers.tuning import TuningPolicy

PROFILE_RANGE = "tpuzzle-profile"  # the NVTX range around the profiled call of solve()


class Worker:
    def __init__(self, job_dir: Path, cmd_fd: int, event_fd: int, pass_fd: int | None = None):
        self.dir = job_dir
        self.commands = os.fdopen(cmd_fd, "r", buffering=1)
        self.events = os.fdopen(event_fd, "w", buffering=1)
        # the parent's sealed input files arrive here as file descriptors, ahead of a command
        self.passer = None if pass_fd is None else socket.socket(fileno=pass_fd)
        self.job = json.loads((job_dir / "job.json").read_text())
        self.unconfined: dict[str, str] = {}  # mechanisms that could not be applied, with why
        self.spec = load_spec(self.job["spec"], view=True)
        self.interpret = bool(self.job["interpret"])
        self.device = "cpu" if self.interpret else "cuda"
        self.solve = None
        self.reference = None
        self.libraries: dict = {}
        self.tuning = TuningPolicy()
        self.untuned = None  # an early benchmark's shape waiting for bench_tune (op_bench)
        self.ledger = StoreLedger()
        self.recording = False  # on the GPU: the profiler records device work in this process
        self.triton = launches.TritonLaunches()  # every Triton kernel launched, from the import on
        self.kernels: dict = {}  # the timer's loaded kernels, by key
        self.prepared: dict = {}  # the timer's input sets put on the device ahead, by tag
        self.recorder = LaunchRecorder()  # on the GPU: each call's launches, for the timer
        # The timer: a worker that never imports a submission; it measures the device and the
        # reference, and replays, times and checks what a submission's worker recorded.
        self.timer = bool(self.job.get("timer"))

    # -------------------------------------------------------------------- protocol

    def send(self, event: str, **fields) -> None:
        self.events.write(json.dumps({"event": event, **fields}) + "\n")
        self.events.flush()

    def serve(self) -> None:
        if self.job.get("ahead"):  # no GPU here: compile the submission's kernels, then end
            self.compile_ahead(self.job["ahead"])
            return
        if not self.interpret and not torch.cuda.is_available():
            self.send(
                "error",
                kind="no-cuda",
                message="this PyTorch cannot reach a CUDA device "
                f"(torch {torch.__version__}); run with --interpret to use the CPU",
            )
            return
        imported = time.monotonic()
        env = host.environment(self.interpret)  # the first CUDA call: the context is created here
        self.confine()
        startup = {
            # CLOCK_MONOTONIC is system-wide: the parent's launch time is comparable to ours
            "worker_import": round(imported - self.job.get("launched", imported), 3),
            "worker_device": round(time.monotonic() - imported, 3),
        }
        self.send("ready", env=env, startup=startup, unconfined=self.unconfined)
        for line in self.commands:
            cmd = json.loads(line)
            if cmd["op"] == "exit":
                return
            handler = getattr(self, f"op_{cmd['op']}")
            try:
                with self.handed(cmd) as cmd:
                    handler(cmd)
            except LoadError as exc:
                self.send("error", kind=exc.kind, message=exc.message)
                return
            except Rejected as exc:
                self.send("rejected", kind=exc.kind, message=str(exc))
                return
            except BaseException as exc:  # noqa: BLE001 - a submission's fault ends this worker
                kind, message = classify(exc, "the timer" if self.timer else "solve()")
                self.send("error", kind=kind, message=message)
                return

    def confine(self) -> None:
        """Apply the job's confinement rules, once the CUDA context exists (the driver talks to
        the system while it starts, as a submission may not) and before the submission is
        imported. seccomp holds every thread; Landlock holds this thread and every thread and
        process it starts from here on, which is all the submission's code (the driver's own
        threads, started with the context, run only the driver)."""
        if self.job.get("confine"):
            try:
                self.unconfined = confine.apply(confine.Rules.from_json(self.job["confine"]))
            except OSError as exc:  # said in the report; a grading refuses such a machine first
                self.unconfined = {"everything": f"confinement failed: {exc}"}
        elif not self.timer:
            self.unconfined = {"everything": "not asked for (TPUZZLE_CONFINE=0, or under a tool)"}

    def compile_ahead(self, job: dict) -> None:
        """(A worker without a GPU, judge.workers.ahead.) Confined first, then solve() called on
        each argument list the parent sent (sizes and scalars; addresses that point nowhere),
        every kernel launch compiled into this file's Triton cache instead of run."""
        self.confine()
        if "files" in self.unconfined or "everything" in self.unconfined:  # the GPU in reach
            self.send("error", kind="unconfined", message="no compile ahead unconfined")
            return
        ahead.install(job["arch"], job["warp_size"], job["properties"])
        try:
            solve = load_solve(self.job["submission"], len(self.spec.args), self.spec.signature)
        except LoadError as exc:
            self.send("error", kind=exc.kind, message=exc.message)
            return
        pointers = ahead.fake_pointers(a.name for a in self.spec.args if a.is_buffer)
        calls = [
            inputs.call_args(self.spec, call["sizes"], pointers, "", call.get("scalars") or {})
            for call in job["calls"]
        ]
        self.send("compiled", **ahead.compile_calls(solve, calls))

    @contextlib.contextmanager
    def handed(self, cmd: dict):
        """The command with its fd:I input paths pointing at the file descriptors the parent
        handed ahead of it (closed once the command is done)."""
        count = cmd.get("fds")
        if not count or self.passer is None:
            yield cmd
            return
        _, fds, _, _ = socket.recv_fds(self.passer, 16, count)

        def swap(path: str) -> str:
            if path.startswith(HANDED):
                return f"/proc/self/fd/{fds[int(path[len(HANDED) :])]}"
            return path

        try:
            yield with_paths(cmd, swap)
        finally:
            for fd in fds:
                os.close(fd)

    # -------------------------------------------------------------------- the timer's commands
    # judge.workers.timer_commands: measuring before a submission is imported, and replaying what
    # a submission's worker recorded (served by the timer, which never imports a submission)

    def op_calibrate(self, cmd: dict) -> None:
        timer_commands.op_calibrate(self, cmd)

    def op_time_reference(self, cmd: dict) -> None:
        timer_commands.op_time_reference(self, cmd)

    def op_quiet(self, cmd: dict) -> None:
        timer_commands.op_quiet(self, cmd)

    def op_prepare(self, cmd: dict) -> None:
        timer_commands.op_prepare(self, cmd)

    def op_replay(self, cmd: dict) -> None:
        timer_commands.op_replay(self, cmd)

    def op_check_case(self, cmd: dict) -> None:
        timer_commands.op_check_case(self, cmd)

    def op_warm_up(self, cmd: dict) -> None:
        timer_commands.op_warm_up(self, cmd)

    # -------------------------------------------------------------------- the submission

    def op_load(self, cmd: dict) -> None:
        if self.timer:  # a protocol error of the parent's: the timer must stay clean
            raise LoadError("protocol", "the timer never imports a submission")
        self.tuning.install(self.interpret)
        if self.interpret:
            self.ledger.install()
            interp.install()
        else:  # before the submission exists: whether device work can be recorded here at all
            self.recording = launches.works() and self.triton.attach()
            self.recorder.install()
        self.solve = load_solve(self.job["submission"], len(self.spec.args), self.spec.signature)
        self.send("loaded")

    def op_case(self, cmd: dict) -> None:
        """One case. With `replay` (a timed run on the GPU): a first call (it compiles and
        tunes), then the call again from the sentinel, recorded and listed, for the timer to
        replay and check on its own buffers; nothing of this worker's buffers is read. Else
        (the interpreter, untimed runs) a call whose buffers are left for the parent."""
        self.tuning.quick = True  # nothing here is timed
        [(seed, paths)] = input_sets(cmd)
        replaying = bool(cmd.get("replay")) and self.recorder.installed
        if self.in_place and not self.interpret and not replaying:
            self.warm_up(cmd, seed, paths)
        clock = Stopwatch()
        fulls, initial, pointer_args = self.prepare(cmd, seed, paths)
        clock.lap("setup_s")
        sequence, foreign = None, {}
        if replaying:
            self.call(pointer_args)
            self.tuning.after_quick_calls()
            clock.lap("call_s")  # a kernel's first call compiles it
            self.reset(fulls, cmd["sizes"], initial, inputs_too=False)
            with collector_paused(), self.recorder.recording(self.regions(fulls)) as sequence:
                self.listed_call(pointer_args)
            clock.lap("record_s")
        else:
            foreign = self.watched_call(fulls, cmd["sizes"], pointer_args)
            self.tuning.after_quick_calls()
            clock.lap("call_s")
            self.dump(fulls, cmd["tag"])
            clock.lap("dump_s")
        host.alone()
        self.send("case_done", foreign=foreign, seconds=clock.laps, sequence=sequence)

    def op_profile(self, cmd: dict) -> None:
        """One call of solve() for a profiler (`tpuzzle profile`): the case's buffers, a first
        call that compiles and tunes, then the call profiled, alone inside the PROFILE_RANGE
        range; its buffers are left for the parent to check."""
        self.tuning.quick = True
        [(seed, paths)] = input_sets(cmd)
        fulls, initial, pointer_args = self.prepare(cmd, seed, paths)
        self.call(pointer_args)
        self.reset(fulls, cmd["sizes"], initial)
        torch.cuda.nvtx.range_push(PROFILE_RANGE)
        try:
            self.call(pointer_args)
        finally:
            torch.cuda.nvtx.range_pop()
        self.dump(fulls, cmd["tag"])
        self.send("profiled")

    def op_trace(self, cmd: dict) -> None:
        """One call in the interpreter with every load and store recorded by program, saved to
        the file the parent named (`tpuzzle run --visualize`)."""
        from judge.workers.access import AccessRecorder

        [(seed, paths)] = input_sets(cmd)
        fulls, _, pointer_args = self.prepare(cmd, seed, paths)
        recorder = AccessRecorder()
        if not recorder.install():
            raise LoadError("trace", "this Triton's interpreter cannot record accesses")
        with recorder.recording():
            self.call(pointer_args)
        buffers = {}
        for lay in inputs.layouts(self.spec, cmd["sizes"]):
            data = inputs.data_view(fulls[lay.arg.name], lay)
            buffers[lay.arg.name] = (data.data_ptr(), data.element_size(), lay.n, lay.guard)
        recorder.save(Path(cmd["file"]), buffers)
        self.send("traced")

    def op_bench(self, cmd: dict) -> None:
        """A benchmark shape's input sets, first calls (compile, autotune), then one call per
        set again from the sentinel: on the GPU recorded as a launch sequence for the timer
        (and listed by the profiler, so a foreign launch is named); in the interpreter, with the
        writes made outside Triton counted. Every set's buffers are left for the parent.

        `early`: sent while other judgings may use the device, so an autotuner tunes quickly
        here. If one did, its choice is not the one timed: the worker says `bench_tuning`,
        keeps the sets, and tunes again properly on `bench_tune`, sent once this judging has
        the device to itself; if none did, the calls are recorded at once."""
        self.tuning.forget_quick_choices()
        early = bool(cmd.get("early"))
        self.tuning.quick = early
        clock = Stopwatch()
        prepared = [self.prepare(cmd, seed, paths) for seed, paths in input_sets(cmd)]
        clock.lap("setup_s")
        for _, _, args in prepared:  # first calls: compile and autotune, never judged
            self.call(args)
        clock.lap("first_calls_s")
        self.tuning.quick = False
        if early and self.tuning.tuned:
            self.untuned = (cmd, prepared)
            self.send("bench_tuning", seconds=clock.laps)
            return
        self.record_bench(cmd, prepared, clock)

    def op_bench_tune(self, cmd: dict) -> None:
        """The first calls of the shape `bench_tuning` named again, every autotuner tuning
        properly, then its calls recorded (`op_bench`)."""
        if self.untuned is None:
            raise LoadError("protocol", "bench_tune without a shape waiting to be tuned")
        (cmd, prepared), self.untuned = self.untuned, None
        self.tuning.forget_quick_choices()
        clock = Stopwatch()
        for _, _, args in prepared:
            self.call(args)
        clock.lap("tune_s")
        self.record_bench(cmd, prepared, clock)

    def record_bench(self, cmd: dict, prepared: list, clock: Stopwatch) -> None:
        sequences, foreign = [], {}
        # untimed (no timer to check fresh inputs): the calls again on fresh inputs, at the
        # same addresses, so that answers kept per address or per call do not survive
        fresh = list(zip(cmd.get("recheck", []), cmd.get("recheck_inputs", []), strict=True))
        with collector_paused():
            for j, (fulls, initial, args) in enumerate(prepared):
                if fresh:
                    seed, paths = fresh[j]
                    initial = self.drawn(cmd["sizes"], seed, cmd.get("draw", ""), paths)
                self.reset(fulls, cmd["sizes"], initial)
                if self.recorder.installed:
                    with self.recorder.recording(self.regions(fulls)) as sequence:
                        self.listed_call(args)
                    sequences.append(sequence)
                else:
                    foreign |= self.watched_call(fulls, cmd["sizes"], args)
                if cmd.get("dump", True):  # else the timer checks the replayed calls
                    self.dump(fulls, f"{cmd['tag']}_set{j}")
        clock.lap("record_s")
        host.alone()
        self.send("bench_done", foreign=foreign, seconds=clock.laps, sequences=sequences)

    @staticmethod
    def regions(fulls: dict) -> list[replay.Region]:
        """The judge's buffers of one input set, as addresses in them are recorded."""
        return [
            replay.Region("buf", name, full.data_ptr(), full.numel() * full.element_size())
            for name, full in fulls.items()
        ]

    @property
    def in_place(self) -> bool:
        return any(a.role == "inout" for a in self.spec.args)

    def warm_up(self, cmd: dict, seed: int, paths: dict) -> None:
        """One untimed, unchecked call on a throwaway copy before an in-place case.

        solve() sees only addresses, so @triton.autotune cannot restore an in-place buffer
        between the configurations it tries; tuning on a throwaway copy first means the judged
        call runs each kernel exactly once.
        """
        _, _, pointer_args = self.prepare(cmd, seed, paths)
        self.call(pointer_args)

    # -------------------------------------------------------------------- buffers

    def build(self, cmd: dict, seed: int, paths: dict):
        """Guarded buffers for one input set: (full allocations, drawn inputs, reference args)."""
        sizes = cmd["sizes"]
        initial = self.drawn(sizes, seed, cmd.get("draw", ""), paths)
        fulls, views = {}, {}
        for lay in inputs.layouts(self.spec, sizes):
            fulls[lay.arg.name] = inputs.guarded(lay, initial.get(lay.arg.name), self.device)
            views[lay.arg.name] = inputs.data_view(fulls[lay.arg.name], lay)
        scalars = cmd.get("scalars")
        return fulls, initial, inputs.call_args(self.spec, sizes, views, "", scalars)

    def drawn(self, sizes: dict, seed: int, draw: str, paths: dict) -> dict:
        """The input set's initial values: mapped from the parent's sealed files when it sent
        them (the same values, drawn once per batch), else drawn here from the seed."""
        if not paths:  # small sets are not sealed
            return inputs.pristine(self.spec, sizes, seed, draw)
        try:
            return {
                lay.arg.name: inputs.mapped(paths[lay.arg.name], lay.arg.dtype, lay.n)
                for lay in inputs.layouts(self.spec, sizes)
                if lay.arg.role != "out"
            }
        except (KeyError, OSError, RuntimeError, ValueError):
            return inputs.pristine(self.spec, sizes, seed, draw)

    def prepare(self, cmd: dict, seed: int, paths: dict):
        """(full allocations, drawn inputs, solve() args with raw addresses) for one input set."""
        fulls, initial, tensor_args = self.build(cmd, seed, paths)
        pointers = [a.data_ptr() if hasattr(a, "data_ptr") else a for a in tensor_args]
        self.sync()
        return fulls, initial, pointers

    def reset(self, fulls: dict, sizes: dict, initial: dict, inputs_too: bool = True) -> None:
        """Buffers back to their state before the first call: inputs as drawn (unless not
        `inputs_too`: a call recorded for the timer, whose values nobody reads), outputs the
        sentinel."""
        for lay in inputs.layouts(self.spec, sizes):
            if inputs_too or lay.arg.role != "in":
                inputs.refill(fulls[lay.arg.name], lay, initial.get(lay.arg.name))
        self.sync()

    def dump(self, fulls: dict, tag: str) -> None:
        """Every buffer's bytes, guard bands included, into TAG_NAME.bin for the parent."""
        self.sync()
        for name, full in fulls.items():
            path = self.dir / f"{tag}_{name}.bin"
            part = path.with_suffix(".part")
            raw = full.view(-1).view(torch.uint8)
            with open(part, "wb") as f:
                f.truncate(raw.numel())
            # straight from the device into the file's pages (in memory, usually), no host copy
            torch.from_file(str(part), shared=True, size=raw.numel(), dtype=torch.uint8).copy_(raw)
            os.replace(part, path)  # the parent finds the whole buffer or none

    def watched_call(self, fulls: dict, sizes: dict, args: list) -> dict[str, int]:
        """A call; in interpreter mode, with the output elements it changed without a Triton
        store counted per buffer (only buffers where some were). On the GPU it is listed
        (judge.workers.launches)."""
        if not self.ledger.installed:
            if self.interpret:
                self.call(args)
            else:
                self.listed_call(args)
            return {}
        views = {
            lay.arg.name: inputs.data_view(fulls[lay.arg.name], lay)
            for lay in inputs.layouts(self.spec, sizes)
            if lay.arg.role != "in"
        }
        before = {name: view.clone() for name, view in views.items()}
        self.ledger.begin()
        try:
            self.call(args)
        finally:
            self.ledger.end()
        counts = {name: self.ledger.foreign(view, before[name]) for name, view in views.items()}
        return {name: n for name, n in counts.items() if n}

    def listed_call(self, args: list) -> None:
        """A call under the profiler: rejected when it launched device work that neither a
        Triton kernel of its own nor an allowed PyTorch operation did."""
        found = launches.listed(
            lambda: self.call(args), ALLOWED_OPS, self.triton if self.recording else None
        )
        if found:
            raise Rejected(launches.describe(found), kind=launches.REASON)

    def call(self, args: list) -> None:
        """One call of solve() under the referee, which also tells the recorder of scratch
        allocations and fills."""
        mode = referee()
        mode.recorder = self.recorder
        with mode:
            self.solve(*args)
        if mode.violation:
            raise Rejected(mode.violation)
        self.sync()

    def sync(self) -> None:
        if not self.interpret:
            torch.cuda.synchronize()


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off: while a benchmark records, no finalizer a
    submission left behind runs inside the judge's own ranges (only inside its calls)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def run(
    job_dir: str | Path, cmd_fd: int, event_fd: int, parent: int | None, pass_fd: int | None = None
) -> int:
    """Serve one job: commands on cmd_fd, events on event_fd, until told to exit. `parent` is
    the process this worker dies with (None: leave that to a tool standing in between)."""
    worker = Worker(Path(job_dir), cmd_fd, event_fd, pass_fd)
    host.die_with_parent(parent)
    profile_dir = os.environ.get("TPUZZLE_PROFILE_DIR")  # for developers of the judge
    if profile_dir:
        import cProfile

        name = "timer" if worker.timer else "worker"
        cProfile.runctx("worker.serve()", globals(), locals(), f"{profile_dir}/{name}.prof")
    else:
        worker.serve()
    return 0


def main(argv: list[str]) -> int:
    job_dir, cmd_fd, event_fd = Path(argv[1]), int(argv[2]), int(argv[3])
    pass_fd = int(argv[4]) if len(argv) > 4 else None
    parent = json.loads((job_dir / "job.json").read_text()).get("parent")
    return run(job_dir, cmd_fd, event_fd, parent, pass_fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
