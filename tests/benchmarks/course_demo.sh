#!/usr/bin/env bash
# A class graded for every course platform (on the GPU where there is one), and a student's run
# against a hidden case. Usage: OUT=DIR bash tests/benchmarks/course_demo.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
python3 - "$W" <<'PY'
import shutil, sys
from pathlib import Path
w = Path(sys.argv[1]); src = Path("puzzles/vector_add")
shutil.copytree(src, w / "cat" / "vector_add")
spec = w / "cat" / "vector_add" / "puzzle.yaml"
text = spec.read_text()
after = "{sizes: {N: 1000003}, seed: 112, interpret: false}"
prime = '  - {name: "N=65537 prime", sizes: {N: 65537}, seed: 111}\n'
assert after in text and prime in text
text = text.replace(after, after[:-1] + ", visibility: after_due_date}")
text = text.replace(prime, prime + '  - {name: "N=1500 kept back", sizes: {N: 1500}, seed: 4242, '
                    'visibility: hidden}\n')
spec.write_text(text)
sols = src / "solutions"
for who, f in {"ada": "correct/plain.py", "bo": "correct/autotuned.py",
               "cy": "wrong/failed_no_mask.py"}.items():
    (w / "class" / who).mkdir(parents=True)
    shutil.copy(sols / f, w / "class" / who / "vector_add.py")
(w / "class" / "mal").mkdir()
shutil.copy("tests/adversarial/course/wrong_only_on_hidden.py", w / "class" / "mal" / "vector_add.py")
(w / "policy.yaml").write_text(
    "assignment: Lab 1\ncanvas_id: 42\ndue: 2026-12-01T23:59:00Z\n"
    "puzzles: {vector_add: {points: 10, correctness: 0.7, speed: '80% sol'}}\n")
(w / "roster.csv").write_text("submitter,Student,ID,SIS User ID,SIS Login ID,Section\n"
    "ada,\"Lovelace, Ada\",1,s1,ada,A\nbo,Bo,2,s2,bo,A\ncy,Cy,3,s3,cy,A\nmal,Mal,4,s4,mal,A\n")
PY
grep -n "visibility" "$W/cat/vector_add/puzzle.yaml"
mkdir -p "$OUT/grade"
time tpuzzle grade "$W/class" --puzzles "$W/cat" --policy "$W/policy.yaml" --no-save \
  --gradescope "$OUT/grade/gradescope" --canvas "$OUT/grade/canvas.csv" --roster "$W/roster.csv" \
  --json "$OUT/grade/grades.json" --csv "$OUT/grade/gradebook.csv" --markdown "$OUT/grade/grades.md" \
  --classroom > "$OUT/grade/classroom.txt" 2> "$OUT/grade/stderr.txt"
echo "grade exit $?"
tpuzzle run vector_add "$W/class/mal/vector_add.py" --puzzles "$W/cat" --no-save --no-server > "$OUT/run_hidden.txt" 2>&1
echo "run exit $?"
tpuzzle run vector_add "$W/class/mal/vector_add.py" --puzzles "$W/cat" --no-save --json > "$OUT/run_hidden.json" 2> "$OUT/run_hidden_json_stderr.txt"
echo "run --json exit $?"
grep -c -e 4242 -e "kept back" -e "1500" "$OUT/run_hidden.txt" "$OUT/run_hidden.json" "$OUT/run_hidden_json_stderr.txt"
