#!/usr/bin/env bash
# `tpuzzle profile` on three kinds of kernel (elementwise, reduction, matmul), each a shipped
# solution, with the wall time of each command. Needs a GPU and Nsight Compute (ncu).
# Usage: OUT=DIR bash tests/benchmarks/profile_three.sh   (the reports go to DIR/prof)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-profiles-three}
export TPUZZLE_SERVER=0 PATH=/usr/local/cuda/bin:$PATH
for job in vector_add:plain reduction:atomic matmul:autotuned; do
  id=${job%%:*} solution=${job##*:}
  /usr/bin/time -f "$id: %e s wall" \
    tpuzzle profile "$id" "puzzles/$id/solutions/correct/$solution.py" --output "$OUT/prof"
done
