#!/usr/bin/env bash
# Builds the benchmarks in Release (build-bench/), runs them, and prints a Markdown table of
# medians with each Ferry benchmark's ratio to its plain-C++ floor (BM_Ferry_X / BM_Floor_X).
# With --callgrind, also counts instructions per operation with valgrind (stable on a noisy
# machine). Results go to build-bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
FERRY_SETUP_BENCH=1 FERRY_SETUP_VALGRIND=$([ "${1:-}" = --callgrind ] && echo 1 || echo 0) \
  scripts/setup.sh

cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_BENCH=ON \
  -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-bench -j "$(nproc 2>/dev/null || echo 2)"
mkdir -p build-bench/results
for bench in build-bench/bench/bench_*; do
  name=$(basename "$bench")
  echo "== $name" >&2
  "$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.2 --benchmark_format=json >"build-bench/results/$name.json"
done
python3 bench/report.py build-bench/results/*.json

if [ "${1:-}" = --callgrind ]; then
  echo
  echo "| operation | instructions per op |"
  echo "|---|---|"
  n=100000
  for op in make new copy atomic; do
    out=build-bench/results/callgrind.$op
    valgrind --tool=callgrind --callgrind-out-file="$out" build-bench/bench/callgrind_ops "$op" $n \
      2>/dev/null >/dev/null
    base=$(valgrind --tool=callgrind --callgrind-out-file="$out.0" build-bench/bench/callgrind_ops \
      "$op" 0 2>&1 >/dev/null | awk '/Collected/ {print $4}')
    total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    base=$(callgrind_annotate "$out.0" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    echo "| $op | $(( (total - base) / n )) |"
  done
fi
