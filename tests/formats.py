"""The course platforms' formats, checked against the schemas in tests/schemas/ (written from each
platform's documentation): Gradescope's results.json, GitHub Classroom's runner result, Canvas's
gradebook CSV."""

import base64
import csv
import io
import json
import re
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = Path(__file__).parent / "schemas"


def _schema(name: str) -> dict:
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def check_gradescope(document: dict) -> dict:
    """A results.json document, valid under Gradescope's specification."""
    jsonschema.validate(document, _schema("gradescope_results.schema.json"))
    return document


def check_classroom(encoded: str) -> dict:
    """A runner's result as the reporter reads it (base64 of JSON), decoded and validated."""
    assert re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", encoded), encoded[:80]
    document = json.loads(base64.b64decode(encoded, validate=True))
    jsonschema.validate(document, _schema("classroom_result.schema.json"))
    return document


def check_canvas(text: str) -> list[dict]:
    """A gradebook CSV Canvas imports: its identity columns, one assignment column, a Points
    Possible row, scores that are numbers, no text cell that starts a formula. The students'
    rows, as dicts."""
    rules = json.loads((SCHEMAS / "canvas_gradebook.json").read_text())
    rows = list(csv.reader(io.StringIO(text)))
    head, possible, students = rows[0], rows[1], rows[2:]
    identity = rules["identity_columns"]
    assert head[: len(identity)] == identity
    assignments = head[len(identity) :]
    assert assignments, "no assignment column"
    for title in assignments:
        assert re.fullmatch(rules["assignment_column"], title), title
    assert possible[0].strip() == rules["points_possible_row"]
    assert all(re.fullmatch(rules["score"], cell) for cell in possible[len(identity) :])
    found = []
    for row in students:
        assert len(row) == len(head), row
        record = dict(zip(head, row, strict=True))
        assert any(record[c] for c in rules["matched_by_any"]), row
        for cell in row[len(identity) :]:
            assert re.fullmatch(rules["score"], cell), cell
        for cell in row[: len(identity)]:
            assert not cell.startswith(tuple(rules["text_cells_must_not_start_with"])), cell
        found.append(record)
    return found
