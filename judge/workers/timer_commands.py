"""The commands the timer serves: the device's peaks (`op_calibrate`) and the reference's times
(`op_time_reference`), measured before any submission is imported; whether the device is quiet
(`op_quiet`), asked before a timing passes stalled checkings; and a launch sequence that a
submission's worker recorded, replayed on the timer's own buffers, timed and checked
(`op_replay`) or checked once (`op_check_case`).

The timer is a `judge.workers.worker.Worker` started with `timer` in its job; it never imports a
submission. Each function here takes that worker (its puzzle, its buffers, its answers) and one
command; the worker's op_* methods of the same names call them.
"""

from __future__ import annotations

from pathlib import Path

from judge.core import bench, inputs
from judge.core.loader import LoadError, import_file
from judge.workers import player, replay
from judge.workers.commands import Stopwatch, input_sets

# A wrong call this large is described here, on the device (player.described), and only the
# account of each buffer goes to the parent: mapping and comparing gigabytes there took seconds.
# Smaller ones leave their buffers, for the report's named mistakes, which need the outputs.
DESCRIBED_HERE_ELEMENTS = 1 << 22


def op_calibrate(worker, cmd: dict) -> None:
    worker.send("calibrated", value=bench.calibrate(played_alone))


def played_alone(spec, sizes: dict, fn) -> list[float]:
    """One of the calibration's library calls (bench.calibrate), timed as a submission's replay
    is: on one input set (inputs drawn on the device, a normal distribution), held to its own
    first call's answers."""
    import torch

    initial = {
        lay.arg.name: torch.randn(lay.n, device="cuda").to(inputs.torch_dtype(lay.arg.dtype))
        for lay in inputs.layouts(spec, sizes)
        if lay.arg.role == "in"
    }
    one = player.CheckedSet(spec, sizes, initial, None, spec.tolerance.at(sizes))
    del initial
    return library_times(fn, spec, sizes, [one])


def library_times(fn, spec, sizes: dict, sets: list, scalars=None) -> list[float]:
    """Every timed call of a PyTorch function of solve()'s arguments, played on the sets by
    the loop that times a submission's replay (player.timed, through player.LibraryCall), each
    call held to the set's own first call's answers."""
    call = player.LibraryCall(fn, spec, sizes, sets, scalars)
    for one in sets:
        one.own_answers(call)  # the check after each timed call holds it to these
    return player.timed(call, sets)["times"]


def op_quiet(worker, cmd: dict) -> None:
    """Whether the device is quiet: no other process's kernel ran during a probe of known length
    (the judge's gate asks before it lets a timing pass checkings that have stalled)."""
    slowdown = bench.contention()
    quiet = slowdown < bench.QUIET_CONTENTION
    worker.send("quiet", value={"quiet": quiet, "slowdown": round(min(slowdown, 1e6), 3)})


def op_time_reference(worker, cmd: dict) -> None:
    """The reference's times, and those of each library call reference.py lists in LIBRARY
    (other means to the same output), each played on the timer's own input sets and timed by
    the loop that times a submission's replay (player.timed, through player.LibraryCall): the
    same reset, flush, head start and check around every call."""
    if worker.reference is None:
        module = import_file(worker.spec.directory / "reference.py", "reference")
        worker.reference = module.reference
        worker.libraries = dict(getattr(module, "LIBRARY", None) or {})
    sizes = cmd["sizes"]
    tolerance = worker.spec.tolerance.at(sizes)
    sets = [
        player.CheckedSet(
            worker.spec,
            sizes,
            worker.drawn(sizes, seed, cmd.get("draw", ""), paths),
            None,
            tolerance,
        )
        for seed, paths in input_sets(cmd)
    ]

    def timed(fn) -> list[float]:
        return library_times(fn, worker.spec, sizes, sets, cmd.get("scalars"))

    value = {
        "reference": timed(worker.reference),
        "library": {label: timed(fn) for label, fn in worker.libraries.items()},
    }
    worker.send("reference_timed", value=value)


def op_replay(worker, cmd: dict) -> None:
    """(The timer only.) A recorded sequence replayed on fresh input sets, every call timed
    and checked here on the device; then one call per set checked after it ended, against
    references put on the device only then (player.checked_after). A set whose call is
    wrong there leaves its buffers in TAG_setJ files for the parent's report. A puzzle judged
    by its reference's `check` holds the timed calls to each set's own first call, and leaves
    every set's buffers for the parent, which judges them with the check."""
    clock = Stopwatch()
    sequence, replayer = loaded_sequence(worker, cmd)
    tolerance = worker.spec.tolerance.at(cmd["sizes"])
    # judged by its reference's `check`: the reference's outputs are not the truths here
    judged_by_check = worker.spec.check == "reference"
    sets, truths = replay_sets(worker, cmd)
    for one in sets:
        one.allocate(sequence.scratch)
    worker.sync()
    if judged_by_check:
        for j, one in enumerate(sets):
            one.own_answers(replayer)
            truths[j] = one.truths
    clock.lap("setup_s")
    result = player.timed(replayer, sets) if cmd.get("timed", True) else player.UNTIMED
    clock.lap("timed_s")
    wrong_sets = []
    for j, (one, expected) in enumerate(zip(sets, truths, strict=True)):
        one.reset()
        replayer.play(one.bases, one.scratch)
        worker.sync()
        wrong, _ = player.checked_after(
            worker.spec, cmd["sizes"], one.fulls, one.starts, expected, tolerance
        )
        if wrong or judged_by_check:  # the parent judges each set with the puzzle's check
            worker.dump(one.fulls, f"{cmd['tag']}_set{j}")
        if wrong:
            wrong_sets.append(j)
    clock.lap("after_s")
    launches = list(sequence.describe())
    worker.send("replayed", launches=launches, wrong_sets=wrong_sets, seconds=clock.laps, **result)


def op_prepare(worker, cmd: dict) -> None:
    """(The timer only.) A shape's input sets and their truths put on the device ahead of its
    replay, while the worker records the calls to replay: the replay of the same tag and seeds
    (`op_replay`) takes them. Answers nothing: what fails here ends the timer, and the parent
    meets it when it asks for the replay."""
    timer_only(worker, "prepares input sets")
    worker.prepared[cmd["tag"]] = (cmd["seeds"], device_sets(worker, cmd))


def replay_sets(worker, cmd: dict) -> tuple[list[player.CheckedSet], list[dict | None]]:
    """A replay's input sets: those prepared for its tag when they are its seeds (else they
    are dropped), or made now."""
    ahead = worker.prepared.pop(cmd["tag"], None)
    return ahead[1] if ahead and ahead[0] == cmd["seeds"] else device_sets(worker, cmd)


def device_sets(worker, cmd: dict) -> tuple[list[player.CheckedSet], list[dict | None]]:
    """The command's input sets on the device (scratch not yet allocated), and each set's
    expected outputs as the parent sealed them (None for a puzzle judged by its reference's
    `check`, whose truths are the set's own first call)."""
    tolerance = worker.spec.tolerance.at(cmd["sizes"])
    judged_by_check = worker.spec.check == "reference"
    sets, truths = [], []
    for seed, paths, files in zip(cmd["seeds"], cmd["inputs"], cmd["truths"], strict=True):
        initial = worker.drawn(cmd["sizes"], seed, cmd.get("draw", ""), paths)
        truths.append(None if judged_by_check else mapped_truths(files))
        sets.append(player.CheckedSet(worker.spec, cmd["sizes"], initial, truths[-1], tolerance))
    return sets, truths


def op_check_case(worker, cmd: dict) -> None:
    """(The timer only.) One case's recorded call replayed once on this process's own
    buffers and checked after it ended (player.checked_after); the buffers are left in
    TAG_NAME files for the parent's report only when something was wrong (always, for a
    puzzle judged by its reference's `check`, which the parent runs on them); a large wrong
    call is described here instead (`buffers`, see DESCRIBED_HERE_ELEMENTS)."""
    clock = Stopwatch()
    sequence, replayer = loaded_sequence(worker, cmd)
    [(seed, paths)] = input_sets(cmd)
    initial = worker.drawn(cmd["sizes"], seed, cmd.get("draw", ""), paths)
    clock.lap("load_s")
    fulls, before = player.played_once(
        replayer, worker.spec, cmd["sizes"], initial, sequence.scratch
    )
    clock.lap("play_s")
    if worker.spec.check == "reference":  # the parent judges it with the puzzle's check
        worker.dump(fulls, cmd["tag"])
        worker.send("case_checked", wrong=0, max_error=0.0, seconds=clock.laps)
        return
    tolerance = worker.spec.tolerance.at(cmd["sizes"])
    truths = mapped_truths(cmd["truths"])
    wrong, worst = player.checked_after(worker.spec, cmd["sizes"], fulls, before, truths, tolerance)
    clock.lap("check_s")
    layouts = inputs.layouts(worker.spec, cmd["sizes"])
    if wrong and sum(lay.total for lay in layouts) > DESCRIBED_HERE_ELEMENTS:
        found = player.described(worker.spec, cmd["sizes"], fulls, initial, truths, tolerance)
        clock.lap("describe_s")
        worker.send("case_checked", wrong=wrong, max_error=worst, buffers=found, seconds=clock.laps)
        return
    if wrong:
        worker.dump(fulls, cmd["tag"])
    worker.send("case_checked", wrong=wrong, max_error=worst, seconds=clock.laps)


def op_warm_up(worker, cmd: dict) -> None:
    """(The timer only.) The first check made ahead on the puzzle's smallest test case
    (player.warm_up), so that the first case sent to be checked does not wait for it."""
    timer_only(worker, "warms up its checks")
    clock = Stopwatch()
    if worker.device == "cuda" and worker.spec.tests:
        case = min(worker.spec.tests, key=lambda c: _elements(worker.spec, c.size_map))
        player.warm_up(worker.spec, case.size_map, worker.spec.tolerance.at(case.size_map))
    clock.lap("warm_up_s")
    worker.send("warmed", seconds=clock.laps)


def _elements(spec, sizes: dict) -> int:
    return sum(lay.total for lay in inputs.layouts(spec, sizes))


def loaded_sequence(worker, cmd: dict) -> tuple[replay.Sequence, player.Player]:
    """The command's validated sequence and its player, the kernels loaded once each."""
    timer_only(worker, "replays")
    sequence = replay.validated(cmd["sequence"])
    missing = [k for k in sequence.kernels if k.key not in worker.kernels]
    worker.kernels |= player.load_kernels(missing, Path(cmd["kernels"]))
    return sequence, player.Player(sequence, worker.kernels)


def timer_only(worker, doing: str) -> None:
    """A protocol error unless `worker` is the timer, which never imports a submission."""
    if not worker.timer or worker.solve is not None:
        raise LoadError("protocol", f"only the timer {doing}")


def mapped_truths(files: dict) -> dict:
    """The expected outputs the parent sealed for the timer, mapped by name."""
    return {name: inputs.mapped(t["path"], t["dtype"], t["n"]) for name, t in files.items()}
