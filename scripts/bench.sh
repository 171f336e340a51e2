#!/usr/bin/env bash
# Builds the benchmarks in Release (build-bench/), runs every bench_* program (5 repetitions,
# medians), and prints a Markdown table of each Ferry benchmark beside its plain-C++ floor from
# the same run (BM_Ferry_X / BM_Floor_X), with the ratio. Results go to build-bench/results/.
#
#     scripts/bench.sh               # timings (about a minute and a half)
#     scripts/bench.sh --callgrind   # and instructions per operation under valgrind, which a
#                                    # noisy machine cannot disturb
set -euo pipefail
cd "$(dirname "$0")/.."

callgrind=0
for arg in "$@"; do
  case "$arg" in
    --callgrind) callgrind=1 ;;
    *) echo "usage: $0 [--callgrind]" >&2; exit 2 ;;
  esac
done

FERRY_SETUP_BENCH=1 FERRY_SETUP_VALGRIND=$callgrind scripts/setup.sh

# -O2, as distributions and Python wheels build; CMake's Release default would be -O3.
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DFERRY_BUILD_BENCH=ON -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-bench -j "$(nproc 2>/dev/null || echo 2)"

results=build-bench/results
rm -rf "$results"
mkdir -p "$results"
for bench in build-bench/bench/bench_*; do
  [ -x "$bench" ] || continue
  name=$(basename "$bench")
  echo "== $name" >&2
  "$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.2 --benchmark_format=json >"$results/$name.json"
done
echo
python3 bench/report.py "$results"/bench_*.json

if [ "$callgrind" = 1 ]; then
  n=100000
  echo "== callgrind_ops ($n iterations per operation)" >&2
  valgrind --tool=callgrind --callgrind-out-file="$results/callgrind.out" \
    build-bench/bench/callgrind_ops "$n" >"$results/callgrind_order.txt" 2>"$results/valgrind.log"
  callgrind_annotate --inclusive=yes --threshold=100 "$results/callgrind.out" \
    >"$results/callgrind.txt"
  echo
  python3 bench/report.py --callgrind "$n" "$results/callgrind.txt" "$results/callgrind_order.txt"
fi
