"""Submissions that snoop and break out: a correct vector_add kernel that, from its worker, tries
to read a classmate's file, the catalogue (where hidden cases keep their sizes and seeds), the
truths an earlier run kept on disk, the home folder; to write outside its folders, connect out,
signal the judge; and others that fork, fill the disk, exhaust memory or open files until a limit
stops them.

Each attempt is recorded from inside (printed, and read back from the report's output) and must
have failed; the snooper's own kernel must still pass. Where this machine cannot confine a worker
(no Landlock, no seccomp), the tests are skipped: `tpuzzle grade` refuses such a machine unless
given --unconfined. The same attacks run on the GPU in `test_confinement_on_gpu`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from hostile import ROOT, inlined

from judge.core import registry, truth_store
from judge.core.results import Verdict
from judge.core.spec import Case
from judge.judging import runner
from judge.workers import confine

pytestmark = pytest.mark.skipif(
    bool(confine.available()), reason=f"cannot confine here: {confine.available()}"
)

HONEST = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "plain.py"
HIDDEN = '  - {name: "N=1500 kept back", sizes: {N: 1500}, seed: 4242, visibility: hidden}\n'
CASES = (Case("N=1", (("N", 1),), 101), Case("N=129", (("N", 129),), 102))

SNOOPER = '''
import json
import os
import socket
import sys
from pathlib import Path

{honest}

tried = {{}}


def attempt(name, action):
    try:
        action()
        tried[name] = "succeeded"
    except BaseException as exc:
        tried[name] = f"failed: {{type(exc).__name__}}: {{exc}}"


def own_folder_text():
    """Everything the worker's own job folder holds, as text (to look for hidden cases)."""
    found = []
    for path in Path(json.loads(Path("../job.json").read_text())["spec"]).parents[2].rglob("*"):
        if path.is_file() and path.suffix in (".json", ".yaml"):
            found.append(path.read_text(errors="replace"))
    return "\\n".join(found)


attempt("read_neighbour", lambda: open({neighbour!r}).read())
attempt("list_class", lambda: os.listdir({classroom!r}))
attempt("read_catalogue", lambda: open({catalogue!r}).read())
attempt("list_catalogue", lambda: os.listdir({catalogue_dir!r}))
attempt("list_home", lambda: os.listdir(os.path.expanduser("~")))
attempt("read_results", lambda: open({results!r}).read())
attempt("list_truths", lambda: os.listdir({truths!r}))
attempt("read_hidden_truth", lambda: open({hidden_truth!r}).read())
attempt("write_outside", lambda: open({outside!r}, "w").write("left behind"))
attempt("connect_tcp", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("send_udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
    b"x", ("127.0.0.1", {port})))
attempt("unix_socket", lambda: socket.socket(socket.AF_UNIX).connect({unix!r}))
attempt("read_judge_fds", lambda: [
    open(f"/proc/{judge_pid}/fd/{{fd}}", "rb").read(1) for fd in os.listdir("/proc/{judge_pid}/fd")
])
attempt("signal_judge", lambda: os.kill({judge_pid}, 0))
attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
own = own_folder_text()
tried["own_folder_holds_hidden_case"] = str("4242" in own or "kept back" in own)
tried["own_folder_holds_statement"] = str("vector_add" in own)
print("SNOOP " + json.dumps(tried), flush=True)
'''

BREAKOUTS = {  # a body after the honest kernel, the limit set for it, the reason it must get
    "fork_bomb": (
        """
import os
for _ in range(2000):
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "{token}"])
""",
        {"TPUZZLE_PROCESSES": "64"},
        "process-limit",
    ),
    "fills_the_disk": (
        """
import os
block = b"x" * (1 << 20)
for i in range(100000):
    with open(f"filler{{i}}", "wb") as f:
        for _ in range(8):
            f.write(block)
""",
        {"TPUZZLE_DISK_MB": "64"},
        "disk-limit",
    ),
    "one_huge_file": (
        """
with open("huge", "wb") as f:
    for _ in range(64):
        f.write(b"x" * (1 << 20))
""",
        {"TPUZZLE_FILE_MB": "16"},
        "file-size-limit",
    ),
    "exhausts_memory": (
        """
hoard = []
for _ in range(8192):
    hoard.append(bytearray(1 << 20))
""",
        {"TPUZZLE_MEMORY_MB": "3072"},
        "memory-limit",
    ),
    "opens_files_until_refused": (
        """
kept = [open("/dev/null") for _ in range(100000)]
""",
        {"TPUZZLE_OPEN_FILES": "256"},
        "open-files-limit",
    ),
}


@pytest.fixture
def course(tmp_path, puzzles_root, monkeypatch):
    """A catalogue with a hidden case, a class of two (the snooper and a neighbour), a results
    database beside them, and a TCP listener that would take any connection."""
    monkeypatch.delenv("TPUZZLE_TRUTH_DISK_MB")  # a truth kept on disk, for the snooper to seek
    catalogue = tmp_path / "catalogue"
    shutil.copytree(puzzles_root / "vector_add", catalogue / "vector_add")
    spec = catalogue / "vector_add" / "puzzle.yaml"
    head, rest = spec.read_text().split("tests:\n", 1)
    spec.write_text(head + "tests:\n" + HIDDEN + rest)
    classroom = tmp_path / "class"
    (classroom / "alice").mkdir(parents=True)
    (classroom / "mallory").mkdir(parents=True)
    shutil.copy(HONEST, classroom / "alice" / "vector_add.py")
    (tmp_path / "results.db").write_text("grades")
    hidden = registry.get("vector_add", catalogue).tests[0]  # kept on disk by an earlier run
    truth_store.keep(
        truth_store.key(registry.get("vector_add", catalogue), hidden),
        {"a_ptr": torch.ones(1500)},
        {"c_ptr": torch.ones(1500)},
        seconds=60.0,
    )
    return tmp_path, catalogue, classroom


class Listener:
    """A TCP listener on localhost counting the connections it accepts."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.sock.close()


def snooper(course, port: int) -> tuple[Path, Path]:
    where, catalogue, classroom = course
    outside = where / "left_behind.txt"
    source = SNOOPER.format(
        honest=inlined(HONEST, "kernel") + "solve = kernel.solve\n",
        neighbour=str(classroom / "alice" / "vector_add.py"),
        classroom=str(classroom),
        catalogue=str(catalogue / "vector_add" / "puzzle.yaml"),
        catalogue_dir=str(catalogue),
        results=str(where / "results.db"),
        truths=str(truth_store.root()),
        hidden_truth=str(next(truth_store.root().glob("*/meta.json"))),
        outside=str(outside),
        port=port,
        unix=str(where / "judge.sock"),
        judge_pid=os.getpid(),
    )
    path = classroom / "mallory" / "vector_add.py"
    path.write_text(source)
    return path, outside


def judged(catalogue: Path, path: Path, interpret: bool = True):
    spec = registry.get("vector_add", catalogue)
    options = runner.RunOptions(interpret=interpret, timeout_s=120, cases=CASES, timing=False)
    return runner.judge(spec, path, options)


def attempts(output: str) -> dict[str, str]:
    line = next(line for line in output.splitlines() if line.startswith("SNOOP "))
    return json.loads(line.removeprefix("SNOOP "))


SNOOPS = ("read_neighbour", "list_class", "read_catalogue", "list_catalogue", "list_home",
          "read_results", "list_truths", "read_hidden_truth", "write_outside", "connect_tcp",
          "send_udp", "unix_socket", "read_judge_fds", "signal_judge",
          "signal_parent")  # fmt: skip


def check_snooper(course, interpret: bool) -> None:
    listener = Listener()
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(course[0] / "judge.sock"))
    unix.listen()
    try:
        path, outside = snooper(course, listener.port)
        report = judged(course[1], path, interpret)
    finally:
        listener.close()
        unix.close()
    assert (report.verdict, report.reason) == (Verdict.PASSED, "ok"), report.message
    tried = attempts(report.output)
    for name in SNOOPS:
        assert tried[name].startswith("failed"), (name, tried[name])
    assert tried["own_folder_holds_hidden_case"] == "False"
    assert tried["own_folder_holds_statement"] == "True"  # it did read its own folder
    assert not outside.exists() and listener.accepted == 0
    assert not report.env.unconfined


def test_a_snooper_reads_and_reaches_nothing_and_its_kernel_still_passes(course):
    check_snooper(course, interpret=True)


BESIDE_A_PACKAGE = """
import json

tried = {{}}
for name, path in (("package", {package!r}), ("beside", {beside!r}), ("list", {folder!r})):
    try:
        open(path).read() if name != "list" else __import__("os").listdir(path)
        tried[name] = "succeeded"
    except BaseException as exc:
        tried[name] = f"failed: {{type(exc).__name__}}"
print("SNOOP " + json.dumps(tried), flush=True)
"""


def test_a_snooper_reads_a_package_on_pythonpath_but_nothing_beside_it(course, monkeypatch):
    """The judge finds a package its workers run on (Triton installed with `pip install
    --target`, say) in a folder that PYTHONPATH names, beside other files: the worker may read
    the package, and neither the files beside it nor the folder's listing."""
    where = course[0]
    site = where / "site"
    (site / "tritonlike").mkdir(parents=True)
    (site / "tritonlike" / "__init__.py").write_text("VERSION = 1\n")
    (site / "grades.csv").write_text("alice,A\n")
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    monkeypatch.setattr(confine, "WORKER_PACKAGES", ("tritonlike",))
    path = course[2] / "mallory" / "vector_add.py"
    path.write_text(
        inlined(HONEST, "kernel")
        + "solve = kernel.solve\n"
        + BESIDE_A_PACKAGE.format(
            package=str(site / "tritonlike" / "__init__.py"),
            beside=str(site / "grades.csv"),
            folder=str(site),
        )
    )
    report = judged(course[1], path)
    assert (report.verdict, report.reason) == (Verdict.PASSED, "ok"), report.message
    tried = attempts(report.output)
    assert tried["package"] == "succeeded", tried
    assert tried["beside"].startswith("failed") and tried["list"].startswith("failed"), tried


@pytest.mark.parametrize("name", sorted(BREAKOUTS))
def test_a_breakout_hits_its_limit_and_gets_its_verdict(name, course, monkeypatch):
    body, limits, reason = BREAKOUTS[name]
    for key, value in limits.items():
        monkeypatch.setenv(key, value)
    path = course[2] / "mallory" / "vector_add.py"
    token = f"59.{os.getpid()}{int(time.time()) % 1000}"  # sleep's argument: found again below
    path.write_text(inlined(HONEST, "kernel") + "solve = kernel.solve\n" + body.format(token=token))
    started = time.monotonic()
    report = judged(course[1], path)
    assert (report.verdict, report.reason) == (Verdict.ERROR, reason), report.message
    assert time.monotonic() - started < 60
    time.sleep(0.5)
    assert not survivors(token), "a process the submission started outlived its worker"


def survivors(token: str) -> list[int]:
    """Live processes running `sleep TOKEN` (what the fork bomb's children became)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and (entry / "cmdline").read_bytes() == f"sleep\0{token}\0".encode()
            ):
                stat = (entry / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.gpu
def test_confinement_on_gpu(course):
    """The snooper on a CUDA device: the driver's device files and the compiler's temporary
    files are the worker's to use, nothing else."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    check_snooper(course, interpret=False)
