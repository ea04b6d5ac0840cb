import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from judge.core.results import (
    BufferCheck,
    CaseResult,
    EnvInfo,
    Mismatch,
    RunReport,
    Timing,
    Verdict,
)
from judge.errors import JudgeError, SubmissionNotFound, UnknownPuzzle
from judge.records import grading
from judge.records.grading import Graded, Submission

IDS = ("relu", "softmax", "vector_add")

H100 = EnvInfo(
    mode="gpu",
    device="NVIDIA H100",
    driver="580",
    cuda="13.0",
    triton="3.6.0",
    torch="2.11.0",
    python="3.12.3",
    copy_gbps=3000.0,
)
H200 = replace(H100, device="NVIDIA H200", copy_gbps=4200.0)
CPU = replace(H100, mode="interpreter", device="cpu (Triton interpreter)", driver="", cuda="")


def timing(median: float, spread: float = 0.002) -> Timing:
    return Timing(
        case="N=25000000",
        sizes={"N": 25_000_000},
        median_ms=median,
        p20_ms=median - spread,
        p80_ms=median + spread,
        samples=100,
        input_sets=3,
        gbps=300.0 / median,
        sol_pct=10.0 / median,
        reference_median_ms=0.1,
        speedup_vs_reference=0.1 / median,
    )


def case(i: int, status: str = "passed", **fields) -> CaseResult:
    reproduce = "" if status == "passed" else f"tpuzzle run vector_add s.py --size N={i} --seed {i}"
    return CaseResult(
        name=f"N={i}", sizes={"N": i}, seed=i, status=status, reproduce=reproduce, **fields
    )


def make_report(
    puzzle: str = "vector_add",
    verdict: Verdict = Verdict.PASSED,
    reason: str = "ok",
    median: float | None = None,
    spread: float = 0.002,
    env: EnvInfo = H100,
    statuses: tuple[str, ...] = ("passed", "passed", "passed"),
    **fields,
) -> RunReport:
    timings = (timing(median, spread),) if median is not None else ()
    values = dict(
        puzzle=puzzle,
        submission=f"class/{puzzle}.py",
        verdict=verdict,
        reason=reason,
        message="every case passed" if verdict is Verdict.PASSED else f"{reason} happened",
        cases=tuple(case(i + 1, s) for i, s in enumerate(statuses)),
        timing=timings,
        env=env,
        ranked=verdict is Verdict.PASSED and env.mode == "gpu" and bool(timings),
        wall_s=1.25,
    )
    return RunReport(**{**values, **fields})


def graded(student: str, puzzle: str = "vector_add", sha: str = "", **fields) -> Graded:
    sub = Submission(student, puzzle, Path(f"class/{student}/{puzzle}.py"), sha or "ab" * 32)
    return Graded(sub, make_report(puzzle, **fields))


def pairs(submissions) -> list[tuple[str, str]]:
    return [(s.student, s.puzzle) for s in submissions]


def write(path: Path, text: str = "def solve(): pass\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------- discovery


def test_discover_finds_submissions_and_warns_about_skipped_files(tmp_path):
    root = tmp_path / "class"
    write(root / "bob" / "vector_add.py")
    alice = write(root / "alice" / "vector_add.py", "print('alice')\n")
    write(root / "alice" / "relu.py")
    write(root / "alice" / "vectr_add.py")
    write(root / "alice" / "notes.txt")
    write(root / "alice" / ".scratch.py")
    write(root / "alice" / "__pycache__" / "vector_add.cpython-311.pyc")
    write(root / "alice" / "old" / "relu.py")
    write(root / ".git" / "hooks.py")
    write(root / "__pycache__" / "x.py")
    write(root / "stray.py")
    write(root / "README.md")
    (root / "carol").mkdir()

    subs, warnings = grading.discover(root, IDS)

    assert pairs(subs) == [("alice", "relu"), ("alice", "vector_add"), ("bob", "vector_add")]
    assert subs[1].path == alice
    assert subs[1].sha256 == hashlib.sha256(b"print('alice')\n").hexdigest()
    assert warnings == [
        f"{root / 'alice' / 'old'}: a directory, skipped (expected ROOT/<student>/<puzzle>.py)",
        f"{root / 'alice' / 'vectr_add.py'}: 'vectr_add' is not a puzzle id, skipped; "
        "did you mean vector_add?",
        f"{root / 'carol'}: no file named after a puzzle",
        f"{root / 'stray.py'}: not in a student's directory, skipped "
        "(expected ROOT/<student>/<puzzle>.py)",
    ]


def test_discover_a_name_far_from_every_id_gets_no_suggestion(tmp_path):
    write(tmp_path / "alice" / "relu.py")
    write(tmp_path / "alice" / "homework.py")
    _, warnings = grading.discover(tmp_path, IDS)
    assert warnings == [
        f"{tmp_path / 'alice' / 'homework.py'}: 'homework' is not a puzzle id, skipped"
    ]


def test_discover_root_must_be_a_directory(tmp_path):
    with pytest.raises(SubmissionNotFound, match="no such directory"):
        grading.discover(tmp_path / "missing", IDS)
    file = write(tmp_path / "file.py")
    with pytest.raises(SubmissionNotFound, match="not a directory"):
        grading.discover(file, IDS)


def test_discover_without_submissions_raises_one_line(tmp_path):
    write(tmp_path / "alice" / "notes.txt")
    with pytest.raises(JudgeError) as empty:
        grading.discover(tmp_path, IDS)
    assert str(empty.value) == (
        f"{tmp_path}: no submissions found, expected ROOT/<student>/<puzzle>.py"
    )
    write(tmp_path / "notes.py")
    with pytest.raises(JudgeError, match="one student's directory"):
        grading.discover(tmp_path, IDS)


def test_a_folder_of_puzzle_files_is_one_students(tmp_path):
    """What Gradescope hands an autograder, or a GitHub Classroom repository: the student's
    <puzzle>.py files at the top, beside folders and files that are not submissions."""
    write(tmp_path / "vector_add.py")
    write(tmp_path / "relu.py")
    write(tmp_path / "scratch.py")
    write(tmp_path / ".github" / "workflows" / "classroom.yml")
    write(tmp_path / "tests" / "test_mine.py")
    subs, warnings = grading.discover(tmp_path, IDS)
    assert [(s.student, s.puzzle) for s in subs] == [
        (tmp_path.name, "relu"),
        (tmp_path.name, "vector_add"),
    ]
    assert warnings == [f"{tmp_path / 'scratch.py'}: 'scratch' is not a puzzle id, skipped"]
    named, _ = grading.discover(tmp_path, IDS, student="Ada Lovelace")
    assert {s.student for s in named} == {"Ada Lovelace"}
    assert grading.is_one_student(tmp_path, IDS)
    assert not grading.is_one_student(tmp_path / "tests", IDS)


# ------------------------------------------------------------------------------- manifest


def test_manifest_resolves_paths_and_sorts(tmp_path):
    relative = write(tmp_path / "work" / "b.py", "b\n")
    absolute = write(tmp_path / "elsewhere" / "a.py", "a\n")
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(
        "\ufeffstudent, puzzle ,path,extra\n"
        f"zoe,vector_add,work/b.py,x\n"
        f"\n"
        f" adam ,relu,{absolute},y\n",
        encoding="utf-8",
    )
    subs = grading.read_manifest(manifest, IDS)
    assert subs == [
        Submission("adam", "relu", absolute, hashlib.sha256(b"a\n").hexdigest()),
        Submission("zoe", "vector_add", tmp_path / "work" / "b.py", subs[1].sha256),
    ]
    assert subs[1].path.read_text() == relative.read_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("student,path\nann,a.py\n", ":1: no column 'puzzle' (header student,puzzle,path)"),
        ("student,puzzle,path\nann,vector_add,a.py\nbob,vectoradd,a.py\n", ":3: unknown puzzle"),
        ("student,puzzle,path\nann,vector_add,a.py\nann,relu,gone.py\n", ":3: "),
        (
            "student,puzzle,path\nann,vector_add,a.py\nbob,relu,a.py\nann,vector_add,a.py\n",
            ":4: ann/vector_add is listed twice (first on line 2)",
        ),
        ("student,puzzle,path\nann,vector_add,a.py\n  ,relu,a.py\n", ":3: empty student name"),
        ("student,puzzle,path\nann,vector_add,\n", ":2: empty path"),
        ("student,puzzle,path\n", ": no submissions listed"),
        ("", ": empty, expected the header student,puzzle,path"),
    ],
)
def test_manifest_errors_name_the_file_and_line(tmp_path, text, message):
    write(tmp_path / "a.py")
    manifest = tmp_path / "m.csv"
    manifest.write_text(text)
    with pytest.raises(JudgeError) as raised:
        grading.read_manifest(manifest, IDS)
    assert str(raised.value).startswith(f"{manifest}{message}")
    assert "\n" not in str(raised.value)


def test_manifest_unknown_puzzle_and_missing_file_messages(tmp_path):
    manifest = tmp_path / "m.csv"
    manifest.write_text("student,puzzle,path\nbob,vectoradd,a.py\n")
    with pytest.raises(UnknownPuzzle) as raised:
        grading.read_manifest(manifest, IDS)
    assert (
        str(raised.value) == f"{manifest}:2: unknown puzzle 'vectoradd'; did you mean vector_add?"
    )
    manifest.write_text("student,puzzle,path\nbob,relu,sub/gone.py\n")
    with pytest.raises(SubmissionNotFound) as missing:
        grading.read_manifest(manifest, IDS)
    assert str(missing.value) == f"{manifest}:2: {tmp_path / 'sub' / 'gone.py'}: no such file"
    with pytest.raises(SubmissionNotFound, match="no such manifest file"):
        grading.read_manifest(tmp_path / "none.csv", IDS)


# ------------------------------------------------------------------------------- sharding


@pytest.mark.parametrize(
    ("text", "expected"), [("1/1", (1, 1)), ("3/4", (3, 4)), (" 2 / 8 ", (2, 8))]
)
def test_parse_shard(text, expected):
    assert grading.parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "2", "a/b", "-1/4", "1/4/2", ""])
def test_parse_shard_rejects(text):
    with pytest.raises(JudgeError, match=r"expected K/N with 1 <= K <= N"):
        grading.parse_shard(text)


def class_of(students: int) -> list[Submission]:
    return [
        Submission(f"student{s:03d}", puzzle, Path(f"{s}/{puzzle}.py"))
        for s in range(students)
        for puzzle in IDS
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16])
def test_shards_partition_the_class(n):
    subs = class_of(40)
    shards = [grading.shard(subs, k, n) for k in range(1, n + 1)]
    assert sorted(pairs(s for part in shards for s in part)) == sorted(pairs(subs))
    assert sum(len(part) for part in shards) == len(subs)
    if n <= 4:
        assert all(len(part) >= len(subs) // (3 * n) for part in shards)  # none starved


def test_adding_a_student_moves_no_one_else():
    before = class_of(30)
    after = sorted([*class_of(31)], key=lambda s: s.student, reverse=True)
    for n in (2, 3, 5):
        old = {(s.student, s.puzzle): grading.shard_of(s, n) for s in before}
        new = {(s.student, s.puzzle): grading.shard_of(s, n) for s in after}
        assert all(new[key] == shard for key, shard in old.items())


def test_shard_is_fixed_and_validated():
    sub = Submission("alice", "vector_add", Path("x.py"))
    digest = hashlib.sha256(b"alice/vector_add").digest()
    assert grading.shard_of(sub, 5) == int.from_bytes(digest[:8], "big") % 5 + 1
    with pytest.raises(JudgeError):
        grading.shard([sub], 0, 2)


# ------------------------------------------------------------------------------- ranking


def test_ranking_ties_unranked_and_failures():
    table = grading.class_table(
        [
            graded("frank", verdict=Verdict.ERROR, reason="timeout", statuses=("error", "skipped")),
            graded("carol", median=0.200),
            graded("erin", env=CPU),
            graded("bob", median=0.104, spread=0.006),
            graded(
                "dave", verdict=Verdict.FAILED, reason="wrong-answer", statuses=("passed", "failed")
            ),
            graded("alice", median=0.100, spread=0.005),
            graded("gina", median=0.050, ranked=False),  # above the speed of light
            graded("hank", verdict=Verdict.REJECTED, reason="torch-in-solve", median=0.01),
            graded("ivan", puzzle="relu", median=0.3),
        ]
    )
    assert list(table) == ["relu", "vector_add"]
    rows = table["vector_add"]
    assert [(r.rank, r.student, r.tie) for r in rows] == [
        (1, "alice", True),
        (1, "bob", True),
        (3, "carol", False),
        (None, "erin", False),
        (None, "gina", False),
        (None, "dave", False),
        (None, "frank", False),
        (None, "hank", False),
    ]
    carol, dave, frank = rows[2], rows[5], rows[6]
    assert (carol.median_ms, carol.p20_ms, carol.p80_ms) == (0.2, 0.198, 0.202)
    assert carol.speedup == pytest.approx(0.5) and carol.sol_pct == pytest.approx(50.0)
    assert (dave.cases_passed, dave.cases_total, dave.reason) == (1, 2, "wrong-answer")
    assert (frank.cases_passed, frank.cases_total, frank.verdict) == (0, 2, "error")
    assert rows[3].median_ms is None and rows[3].ranked is False
    assert rows[7].median_ms is None  # a rejected run's time is not shown
    assert table["relu"][0].rank == 1


def test_a_chain_of_ties_shares_one_rank():
    rows = grading.class_table(
        [
            graded("a", median=0.100, spread=0.006),
            graded("b", median=0.105, spread=0.006),
            graded("c", median=0.110, spread=0.006),
            graded("d", median=0.130, spread=0.001),
        ]
    )["vector_add"]
    assert [(r.student, r.rank, r.tie) for r in rows] == [
        ("a", 1, True),
        ("b", 1, True),
        ("c", 1, True),
        ("d", 4, False),
    ]


def test_ranks_are_per_device():
    rows = grading.class_table(
        [
            graded("dave", median=0.3, env=H200),
            graded("bob", median=0.2),
            graded("carol", median=0.05, env=H200),
            graded("alice", median=0.1),
        ]
    )["vector_add"]
    assert [(r.device, r.rank, r.student) for r in rows] == [
        ("NVIDIA H100", 1, "alice"),
        ("NVIDIA H100", 2, "bob"),
        ("NVIDIA H200", 1, "carol"),
        ("NVIDIA H200", 2, "dave"),
    ]


def test_a_class_ranks_on_the_score_over_every_shape_not_the_first():
    """alice is faster on the first shape; bob's geometric mean over both shapes is lower."""
    from dataclasses import replace

    from judge.core import bench

    def two_shapes(small: float, large: float) -> dict:
        shapes = (timing(small, 0.0001), replace(timing(large, 0.001), case="N=big"))
        return dict(median=small, timing=shapes, score=bench.score(shapes))

    rows = grading.class_table(
        [graded("alice", **two_shapes(0.010, 4.0)), graded("bob", **two_shapes(0.020, 1.0))]
    )["vector_add"]
    assert [(r.student, r.rank) for r in rows] == [("bob", 1), ("alice", 2)]
    assert rows[0].median_ms == pytest.approx((0.020 * 1.0) ** 0.5)


def test_scores_within_each_others_spread_tie():
    from judge.core import bench

    def scored(median: float) -> dict:
        return dict(median=median, score=bench.score((timing(median, 0.01),)))

    rows = grading.class_table([graded("ada", **scored(1.0)), graded("bob", **scored(1.005))])
    assert [(r.student, r.rank, r.tie) for r in rows["vector_add"]] == [
        ("ada", 1, True),
        ("bob", 1, True),
    ]


# ------------------------------------------------------------------------------- writers


def sample_class() -> list[Graded]:
    failing = (
        case(1),
        case(
            2,
            "failed",
            hints=("a store is missing its mask",),
            buffers=(
                BufferCheck(name="c_ptr", ok=False, first=(Mismatch(0, float("nan"), 1, 1),)),
            ),
        ),
        case(3, "skipped"),
        case(4),
    )
    return [
        graded("alice", median=0.1),
        graded("bob", verdict=Verdict.FAILED, reason="wrong-answer", cases=failing),
        graded(
            "carol",
            verdict=Verdict.ERROR,
            reason="compile-error",
            statuses=("error", "skipped"),
            message="bad \x00 byte ]]> <tag> & more\x1b[31m",
            output="Traceback\x07 ]]>\nSyntaxError",
        ),
        graded("dave", verdict=Verdict.REJECTED, reason="timing-mismatch", median=0.01),
        graded("erin", puzzle="relu", env=CPU, statuses=("passed",) * 2),
    ]
