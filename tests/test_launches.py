from types import SimpleNamespace

import pytest
import torch
from torch.autograd import DeviceType

from judge.workers import launches
from judge.workers.launches import Activity
from judge.workers.referee import ALLOWED_OPS

MEMCPY = "Memcpy DtoD (Device -> Device)"
MEMSET = "Memset (Device)"
GEMM = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel"
FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"


# ------------------------------------------------------------------------------ classification


def test_triton_kernels_that_ran_are_not_foreign():
    seen = [Activity("vector_add_kernel"), Activity("copy_kernel")]
    assert launches.foreign(seen, {"vector_add_kernel", "copy_kernel"}, ALLOWED_OPS) == []


def test_work_launched_by_an_allowed_aten_op_is_not_foreign():
    seen = [Activity(FILL, op="aten::fill_"), Activity(FILL, op="aten::zero_")]
    assert launches.foreign(seen, set(), ALLOWED_OPS) == []


@pytest.mark.parametrize("name", [MEMCPY, MEMSET, GEMM, "axpy_kernel_val"])
def test_work_no_op_launched_and_no_triton_kernel_is_foreign(name):
    assert launches.foreign([Activity(name)], {"vector_add_kernel"}, ALLOWED_OPS) == [name]


def test_a_kernel_whose_name_triton_never_launched_is_foreign():
    """Names count only from Triton's own launches, not from what the kernel resembles."""
    assert launches.foreign([Activity("add_kernel")], {"vector_add_kernel"}, ALLOWED_OPS) == [
        "add_kernel"
    ]


def test_work_from_an_op_the_referee_rejects_is_foreign_and_names_the_op():
    seen = [Activity("elementwise_kernel", op="aten::add"), Activity(GEMM, op="aten::mm")]
    assert launches.foreign(seen, set(), ALLOWED_OPS) == [
        "elementwise_kernel (from aten::add)",
        f"{GEMM} (from aten::mm)",
    ]


def test_an_op_counts_only_under_its_aten_name():
    """A user-scope range named like an allowed op is not the op."""
    seen = [Activity(MEMCPY, op="fill_"), Activity(MEMSET, op="aten::fill_")]
    assert launches.foreign(seen, set(), ALLOWED_OPS) == [f"{MEMCPY} (from fill_)"]


def test_foreign_work_keeps_launch_order_and_is_named_once():
    seen = [
        Activity(MEMCPY),
        Activity("vector_add_kernel"),
        Activity(GEMM),
        Activity(MEMCPY),
        Activity(FILL, op="aten::fill_"),
        Activity(MEMSET),
        Activity(GEMM),
    ]
    assert launches.foreign(seen, {"vector_add_kernel"}, ALLOWED_OPS) == [MEMCPY, GEMM, MEMSET]


# ------------------------------------------------------------------------------ the message


def test_the_message_names_the_foreign_work():
    text = launches.describe([MEMCPY, "axpy_kernel_val"])
    assert text.startswith("solve() launched work that no Triton kernel of its own did: ")
    assert f"{MEMCPY}, axpy_kernel_val;" in text
    assert "more" not in text


def test_the_message_names_a_few_and_counts_the_rest():
    names = [f"kernel_{i}" for i in range(launches.SHOWN + 4)]
    text = launches.describe(names)
    shown = names[: launches.SHOWN]
    assert ", ".join(shown) + " and 4 more;" in text
    assert f"kernel_{launches.SHOWN}" not in text


def test_the_message_cuts_long_names():
    long = "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4>" * 3
    text = launches.describe([long])
    assert long not in text
    assert long[: launches.NAME_CHARS - 3] + "..." in text


# ------------------------------------------------------------------------------ profiler events


class Event:
    """Answers the methods of PyTorch's raw profiler event (`_KinetoEvent`) that are read."""

    def __init__(
        self,
        name,
        device,
        kind,
        corr=0,
        linked=0,
        scope=0,
        start=0,
        annotation=False,
        end=None,
        thread=1,
    ):
        self._fields = dict(
            name=name,
            device_type=device,
            activity_type=kind,
            correlation_id=corr,
            linked_correlation_id=linked,
            scope=scope,
            start_ns=start,
            end_ns=start + 1 if end is None else end,
            is_user_annotation=annotation,
            device_resource_id=thread,
        )

    def __getattr__(self, field):
        if field not in self.__dict__.get("_fields", {}):
            raise AttributeError(field)
        return lambda: self._fields[field]


class OlderEvent(Event):
    """An event of a PyTorch whose events do not say their activity type."""

    def __getattr__(self, field):
        if field == "activity_type":
            raise AttributeError(field)
        return super().__getattr__(field)


CPU, CUDA = DeviceType.CPU, DeviceType.CUDA


def test_device_work_carries_the_op_that_launched_it_in_start_order():
    events = [
        Event("aten::zeros", CPU, "cpu_op", corr=7),
        Event("aten::fill_", CPU, "cpu_op", corr=9),
        Event("cudaLaunchKernel", CPU, "cuda_runtime", corr=41, linked=9),
        Event("vector_add_kernel", CUDA, "kernel", linked=0, start=30),
        Event(FILL, CUDA, "kernel", corr=41, linked=9, start=20),
        Event(MEMCPY, CUDA, "gpu_memcpy", start=40),
        Event(MEMSET, CUDA, "gpu_memset", start=50),
    ]
    assert launches.device_activities(events) == [
        Activity(FILL, op="aten::fill_"),
        Activity("vector_add_kernel"),
        Activity(MEMCPY),
        Activity(MEMSET),
    ]


def test_a_runtime_call_sharing_an_ops_id_does_not_hide_the_op():
    """CUPTI numbers runtime calls apart from PyTorch's ops: the same number may be both."""
    events = [
        Event("aten::fill_", CPU, "cpu_op", corr=5),
        Event("cuLaunchKernelEx", CPU, "cuda_driver", corr=5),
        Event(FILL, CUDA, "kernel", linked=5),
    ]
    assert launches.device_activities(events) == [Activity(FILL, op="aten::fill_")]


def test_only_operators_launch_work_not_ranges_named_like_them():
    events = [
        Event("aten::fill_", CPU, "user_annotation", corr=3, scope=7),
        Event("aten::zero_", CPU, "cpu_op", corr=4, scope=7),
        Event(GEMM, CUDA, "kernel", linked=3, start=1),
        Event(MEMCPY, CUDA, "gpu_memcpy", linked=4, start=2),
    ]
    assert launches.device_activities(events) == [Activity(GEMM), Activity(MEMCPY)]


def test_device_events_that_are_not_work_are_left_out():
    events = [
        Event("my_range", CUDA, "gpu_user_annotation", annotation=True),
        Event("Context Sync", CUDA, "cuda_sync"),
        Event(GEMM, CUDA, "kernel"),
    ]
    assert launches.device_activities(events) == [Activity(GEMM)]


def test_events_without_an_activity_type_are_read_by_device_and_annotation():
    events = [
        OlderEvent("aten::fill_", CPU, None, corr=2),
        OlderEvent("cudaLaunchKernel", CPU, None, corr=2),
        OlderEvent("my_range", CUDA, None, annotation=True),
        OlderEvent(FILL, CUDA, None, linked=2, start=1),
        OlderEvent(MEMCPY, CUDA, None, start=2),
    ]
    assert launches.device_activities(events) == [
        Activity(FILL, op="aten::fill_"),
        Activity(MEMCPY),
    ]


def test_this_pytorchs_events_name_their_operators_as_read():
    """The fields read from real events: on the CPU, PyTorch's ops are found by them."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.zeros(4).fill_(2.0)
    events = prof.profiler.kineto_results.events()
    ops = [e for e in events if e.device_type() == CPU and e.name() == "aten::fill_"]
    assert ops and all(e.scope() == 0 for e in ops)
    assert all(launches._activity_type(e) in ("cpu_op", None) for e in ops)
    assert launches.device_activities(events) == []


# ------------------------------------------------------------------------------ Triton's launches


def test_the_names_of_triton_launches_are_noted_and_the_hook_removed():
    from triton.compiler.compiler import LazyDict

    holder, attribute = launches.hook_slot()
    before = getattr(holder, attribute)
    calls_before = list(getattr(before, "calls", []))
    noted = launches.TritonLaunches()
    assert noted.attach()
    hook = getattr(holder, attribute)
    lazy = LazyDict({"name": "vector_add_kernel", "stream": 0})
    lazy.add(lambda *a: pytest.fail("the kernel's own launch_metadata ran"), ())
    hook(lazy)
    hook(LazyDict({"name": "copy_kernel"}))
    noted.detach()
    assert noted.names == {"vector_add_kernel", "copy_kernel"}
    after = getattr(holder, attribute)
    assert after is before and list(getattr(after, "calls", [])) == calls_before
    after(LazyDict({"name": "late_kernel"}))
    assert "late_kernel" not in noted.names


def test_a_single_hook_slot_keeps_the_hook_already_there():
    seen = []
    holder = SimpleNamespace(launch_enter_hook=lambda m: seen.append(("theirs", m)))
    original = holder.launch_enter_hook
    detach = launches.attach(holder, "launch_enter_hook", lambda m: seen.append(("ours", m)))
    holder.launch_enter_hook("meta")
    assert seen == [("ours", "meta"), ("theirs", "meta")]
    detach()
    assert holder.launch_enter_hook is original


def test_an_empty_hook_slot_is_emptied_again():
    seen = []
    holder = SimpleNamespace(launch_enter_hook=None)
    detach = launches.attach(holder, "launch_enter_hook", seen.append)
    holder.launch_enter_hook("meta")
    assert seen == ["meta"]
    detach()
    assert holder.launch_enter_hook is None


# ------------------------------------------------------------------------------ one listed call


def test_without_a_cuda_profiler_the_call_runs_once_and_nothing_is_foreign():
    assert launches._start() is None  # this machine's PyTorch lists no CUDA activity
    calls = []
    assert launches.listed(lambda: calls.append(1), ALLOWED_OPS) == []
    assert calls == [1]


def test_an_exception_from_the_call_propagates_and_the_hook_is_removed():
    holder, attribute = launches.hook_slot()
    before = list(getattr(getattr(holder, attribute), "calls", []))

    def solve():
        raise ZeroDivisionError("division by zero")

    with pytest.raises(ZeroDivisionError):
        launches.listed(solve, ALLOWED_OPS)
    assert list(getattr(getattr(holder, attribute), "calls", [])) == before


def test_launch_times_are_read_from_real_event_fields():
    events = [
        Event("cuLaunchKernelEx", CPU, "cuda_driver", corr=40, start=12, thread=3),
        Event("my_kernel", CUDA, "kernel", corr=40, start=30, end=38),
        Event("aten::fill_", CPU, "cpu_op", corr=40, start=1),  # the same number, another space
    ]
    [activity] = launches.device_activities(events)
    assert (activity.launched_ns, activity.thread, activity.end_ns) == (12, 3, 38)
    assert activity.op == ""  # the op sharing the number is in another space: not its launcher


def test_a_fill_is_never_foreign_even_without_the_operator_that_launched_it():
    """A fill in a thread of the submission's (torch.zeros, an autotuner's flush): the profiler
    records the judged thread's operators only."""
    assert launches.foreign([Activity(FILL)], set(), ALLOWED_OPS) == []


def test_a_recorder_given_a_hook_keeps_it_attached_and_its_names():
    seen = launches.TritonLaunches()
    seen.names.add("captured_earlier_kernel")
    with launches.Recorder(seen) as record:
        pass
    assert record.launches is seen and "captured_earlier_kernel" in record.launches.names
