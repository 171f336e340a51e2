#!/usr/bin/env bash
# Builds the benchmarks in Release (build-bench/), runs every bench_* program (5 repetitions,
# medians), and prints a Markdown table of each Ferry benchmark beside its plain-C++ floor and
# its apache-tvm-ffi twin from the same run (BM_Ferry_X / BM_Floor_X / BM_TvmFfi_X), with the
# ratios. Results go to build-bench/results/.
#
#     scripts/bench.sh               # timings (about a minute and a half)
#     scripts/bench.sh --callgrind   # and instructions per operation under valgrind, which a
#                                    # noisy machine cannot disturb
#     scripts/bench.sh --no-peer     # without the tvm-ffi rows (no virtual environment)
#
# The peer: the apache-tvm-ffi wheel of the version scripts/bench_python.sh pins, installed
# with pip into the benchmark's own virtual environment build-bench/peer/venv (nothing goes
# into the system Python); the C++ programs build against its headers and libtvm_ffi.so. When
# it cannot be installed or imported (no network, no venv module), the programs build and run
# without the tvm-ffi rows, and this script says so.
set -euo pipefail
cd "$(dirname "$0")/.."

callgrind=0
peer=1
for arg in "$@"; do
  case "$arg" in
    --callgrind) callgrind=1 ;;
    --no-peer) peer=0 ;;
    *) echo "usage: $0 [--callgrind] [--no-peer]" >&2; exit 2 ;;
  esac
done

FERRY_SETUP_BENCH=1 FERRY_SETUP_VALGRIND=$callgrind scripts/setup.sh

# -- The peer: prints "include dirs (;-separated)<newline>libtvm_ffi.so", or fails.
peer_venv=build-bench/peer/venv
peer_paths() {
  local version want py
  version=$(sed -n 's/^TVM_FFI_VERSION=//p' scripts/bench_python.sh)
  [ -n "$version" ] || { echo "no TVM_FFI_VERSION in scripts/bench_python.sh" >&2; return 1; }
  want="apache-tvm-ffi==$version"
  py=$peer_venv/bin/python
  if [ ! -x "$py" ] || [ "$(cat "$peer_venv/.pinned" 2>/dev/null)" != "$want" ]; then
    echo "== virtual environment $peer_venv ($want)" >&2
    rm -rf "$peer_venv"
    mkdir -p "$(dirname "$peer_venv")"
    python3 -m venv "$peer_venv" >&2 || return 1
    "$py" -m pip install -q --disable-pip-version-check "$want" >&2 || return 1
    echo "$want" >"$peer_venv/.pinned"
  fi
  "$py" - <<'PY'
import os, subprocess, sys
def config(flag):
    return subprocess.check_output([sys.executable, "-m", "tvm_ffi.config", flag], text=True).strip()
dirs = [config("--includedir"), config("--dlpack-includedir")]
lib = config("--libfiles")
if not all(os.path.isdir(d) for d in dirs) or not os.path.isfile(lib):
    sys.exit(f"tvm_ffi.config gave {dirs} and {lib!r}, which do not exist")
print(";".join(dirs))
print(lib)
PY
}
peer_include=""
peer_lib=""
if [ "$peer" = 1 ]; then
  if paths=$(peer_paths); then
    peer_include=$(sed -n 1p <<<"$paths")
    peer_lib=$(sed -n 2p <<<"$paths")
  else
    echo "warning: apache-tvm-ffi could not be installed or imported in $peer_venv:" \
         "the tvm-ffi rows are left out of this run" >&2
  fi
else
  echo "note: --no-peer: the tvm-ffi rows are left out of this run" >&2
fi

# -O2, as distributions and Python wheels build; CMake's Release default would be -O3.
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DFERRY_BUILD_BENCH=ON -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_EXAMPLES=OFF \
  -DFERRY_BENCH_TVM_FFI_INCLUDE_DIRS="$peer_include" -DFERRY_BENCH_TVM_FFI_LIBRARY="$peer_lib" \
  >/dev/null
cmake --build build-bench -j "$(nproc 2>/dev/null || echo 2)"

results=build-bench/results
rm -rf "$results"
mkdir -p "$results"
# Timings on a shared machine: the load average goes with the tables (and results/load.txt).
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
for bench in build-bench/bench/bench_*; do
  [ -x "$bench" ] || continue
  name=$(basename "$bench")
  echo "== $name" >&2
  "$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.2 --benchmark_format=json >"$results/$name.json"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
echo "load average (1, 5, 15 min) before the timings: $load_start; after: $load_end" |
  tee "$results/load.txt"
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
