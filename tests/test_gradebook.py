import csv
import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from test_grading import H200, graded, make_report, pairs, sample_class

from judge import __version__
from judge.errors import JudgeError
from judge.records import gradebook


def test_to_json_document(tmp_path):
    meta = gradebook.grading_meta(secret_seed=True, shard=(2, 4))
    data = json.loads(gradebook.to_json(reversed(sample_class()), meta))
    assert data["format"] == "tpuzzle-grading" and data["format_version"] == 1
    assert data["meta"] == {"judge_version": __version__, "secret_seed": True, "shard": "2/4"}
    entries = data["entries"]
    assert [(e["student"], e["puzzle"]) for e in entries] == [
        ("alice", "vector_add"),
        ("bob", "vector_add"),
        ("carol", "vector_add"),
        ("dave", "vector_add"),
        ("erin", "relu"),
    ]
    assert entries[0]["path"] == str(Path("class/alice/vector_add.py"))
    assert entries[0]["sha256"] == "ab" * 32
    assert entries[0]["report"]["timing"]["median_ms"] == 0.1
    assert entries[1]["report"]["cases"][1]["buffers"][0]["first"][0]["got"] is None  # NaN


def test_to_junit_is_valid_xml_with_failures_errors_and_times():
    root = ET.fromstring(gradebook.to_junit(sample_class()))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "2", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["relu", "vector_add"]
    va = suites["vector_add"]
    assert (va.get("tests"), va.get("failures"), va.get("errors"), va.get("time")) == (
        "4",
        "2",
        "1",
        "5.000",
    )
    cases = {c.get("name"): c for c in va.findall("testcase")}
    assert [c.get("classname") for c in cases.values()] == ["vector_add"] * 4
    assert cases["alice"].get("time") == "1.250"
    assert cases["alice"].find("failure") is None
    assert cases["alice"].findtext("system-out").startswith("score 100.0 us (p20-p80 98.0 us")
    assert "N=25000000: median 100.0 us (3000 GB/s" in cases["alice"].findtext("system-out")

    failure = cases["bob"].find("failure")
    assert failure.get("message") == "wrong-answer" and failure.get("type") == "failed"
    assert failure.text.splitlines() == [
        "wrong-answer happened",
        "case N=2 (seed 2): failed",
        "  hint: a store is missing its mask",
        "  reproduce: tpuzzle run vector_add s.py --size N=2 --seed 2",
    ]

    error = cases["carol"].find("error")
    assert error.get("message") == "compile-error"
    assert error.text.splitlines()[0] == "bad  byte ]]> <tag> & more"  # ANSI escape removed
    assert "case N=1 (seed 1): error" in error.text
    assert cases["carol"].findtext("system-err") == "Traceback ]]>\nSyntaxError"

    rejected = cases["dave"].find("failure")
    assert rejected.get("type") == "rejected"
    assert rejected.text.splitlines()[-1] == "reproduce: tpuzzle run vector_add class/vector_add.py"
    erin = suites["relu"].find("testcase")
    assert erin.findtext("system-out") == (
        "passed 2/2 cases on cpu (Triton interpreter); not timed"
    )


def test_to_markdown_tables():
    graded_class = [*sample_class(), graded("x|y", median=0.3)]
    text = gradebook.to_markdown(graded_class)
    sections = text.split("\n\n### ")
    assert sections[0].splitlines() == [
        "### relu",
        "",
        "1 submission: 1 passed",
        "",
        "| rank | student | verdict | cases | median | speed of light |",
        "| ---: | --- | --- | ---: | ---: | ---: |",
        "| - | erin | passed (not ranked) | 2/2 | - | - |",
    ]
    lines = sections[1].splitlines()
    assert lines[2] == "5 submissions: 2 passed, 1 failed, 1 rejected, 1 error"
    assert lines[6:] == [
        "| 1 | alice | passed | 3/3 | 100.0 us | 100.0% |",
        "| 2 | x\\|y | passed | 3/3 | 300.0 us | 33.3% |",
        "| - | bob | failed (wrong-answer) | 2/4 | - | - |",
        "| - | carol | error (compile-error) | 0/2 | - | - |",
        "| - | dave | rejected (timing-mismatch) | 3/3 | - | - |",
    ]
    assert gradebook.to_markdown([]) == "_No submissions graded._\n"


def test_to_markdown_shows_the_gpu_when_devices_differ():
    text = gradebook.to_markdown([graded("a", median=0.1), graded("b", median=0.2, env=H200)])
    lines = text.splitlines()
    assert lines[4] == "| rank | student | GPU | verdict | cases | median | speed of light |"
    assert lines[6] == "| 1 | a | NVIDIA H100 | passed | 3/3 | 100.0 us | 100.0% |"
    assert lines[7] == "| 1 | b | NVIDIA H200 | passed | 3/3 | 200.0 us | 50.0% |"


def test_to_csv_gradebook():
    rows = list(csv.DictReader(io.StringIO(gradebook.to_csv(sample_class()))))
    assert list(rows[0]) == [
        "student",
        "puzzle",
        "path",
        "verdict",
        "reason",
        "cases_passed",
        "cases_total",
        "credit",
        "median_ms",
        "points",
        "max_points",
        "submitted",
        "late_days",
        "late_factor",
        "case_1",
        "case_2",
        "case_3",
        "case_4",
    ]
    table = {(r["student"], r["puzzle"]): r for r in rows}
    assert [(r["student"], r["puzzle"]) for r in rows] == sorted(table)
    bob = table["bob", "vector_add"]
    assert (bob["cases_passed"], bob["cases_total"], bob["credit"]) == ("2", "4", "0.5")
    assert [bob[f"case_{i}"] for i in range(1, 5)] == ["1", "0", "0", "1"]
    alice = table["alice", "vector_add"]
    assert (alice["credit"], alice["median_ms"], alice["case_4"]) == ("1", "0.1", "")
    assert table["carol", "vector_add"]["credit"] == "0"
    dave = table["dave", "vector_add"]
    assert (dave["credit"], dave["cases_passed"], dave["median_ms"]) == ("0", "3", "")
    assert table["erin", "relu"]["median_ms"] == ""


def test_credit_fractions():
    assert gradebook.credit(make_report(statuses=("passed", "failed", "passed"))) == 2 / 3
    assert gradebook.credit(make_report(statuses=())) == 0.0
    two_of_three = graded("a", statuses=("passed", "failed", "passed"))
    assert gradebook.to_csv([two_of_three]).splitlines()[1].split(",")[7] == "0.6667"


# ------------------------------------------------------------------------------- merging


def test_merge_round_trips():
    meta = gradebook.grading_meta(secret_seed=False)
    everyone = sample_class()
    everyone[0] = replace(everyone[0], report=replace(everyone[0].report, phases={"cases": 1.5}))
    document = gradebook.to_json(everyone, meta)
    merged = gradebook.merge([document])
    assert gradebook.to_json(merged, meta) == document
    assert merged[0].report == everyone[0].report
    assert merged[0].submission == everyone[0].submission


def test_merge_joins_shards_and_drops_identical_duplicates():
    everyone = sample_class()
    first = gradebook.to_json(everyone[:3], {"shard": "1/2"})
    second = json.loads(gradebook.to_json(everyone[2:], {"shard": "2/2"}))
    merged = gradebook.merge([first, second])
    assert pairs(g.submission for g in merged) == pairs(g.submission for g in everyone)
    assert gradebook.to_json(merged) == gradebook.to_json(everyone)


def test_merge_rejects_a_conflict():
    one = gradebook.to_json([graded("alice", median=0.1)])
    other_file = gradebook.to_json([graded("alice", median=0.1, sha="cd" * 32)])
    other_result = gradebook.to_json([graded("alice", median=0.2)])
    with pytest.raises(JudgeError) as file_conflict:
        gradebook.merge([one, other_file])
    assert str(file_conflict.value) == (
        "document 2 of 2: alice/vector_add is also in document 1 of 2, "
        "a different file (abababababab vs cdcdcdcdcdcd)"
    )
    with pytest.raises(JudgeError, match="a different result"):
        gradebook.merge([one, other_result], labels=["a.json", "b.json"])
    with pytest.raises(JudgeError, match=r"^b\.json: alice/vector_add is also in a\.json"):
        gradebook.merge([one, other_result], labels=["a.json", "b.json"])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "document 2 of 2: not JSON"),
        ({"entries": []}, 'document 2 of 2: not a tpuzzle grading document (no "format"'),
        ([1, 2], "document 2 of 2: not a tpuzzle grading document"),
        (
            {"format": "tpuzzle-grading", "format_version": 9, "entries": []},
            "document 2 of 2: grading document version 9",
        ),
        (
            {"format": "tpuzzle-grading", "format_version": 1, "entries": [{"student": "x"}]},
            "document 2 of 2, entry 1: malformed (KeyError",
        ),
    ],
)
def test_merge_names_a_document_that_is_not_a_grading(bad, message):
    good = gradebook.to_json([graded("alice")])
    with pytest.raises(JudgeError) as raised:
        gradebook.merge([good, bad])
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)
