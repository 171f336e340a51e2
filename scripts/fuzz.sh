#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ (clang, libFuzzer, AddressSanitizer + UndefinedBehaviorSanitizer,
# in build-fuzz/; clang's warnings are not fatal, -Werror is for the g++ builds) and runs each for
# a bounded time on its corpus:
#
#   scripts/fuzz.sh                   # 60 s per target (what scripts/test.sh runs)
#   scripts/fuzz.sh --seconds 20      # shorter
#   scripts/fuzz.sh --minutes 30      # a longer local run
#   scripts/fuzz.sh --target json     # one target: json, dtype, dlpack, tschema_markers or cpp_inputs
#
# fuzz/corpus/<target>/ holds the seeds and the regression inputs (every run replays them first);
# what a run discovers goes to build-fuzz/corpus/<target>/. A crash, a sanitizer report or a failed
# property stops the run with an error and leaves the input as build-fuzz/crashes/<target>/crash-*:
# fix the bug, then copy the input into fuzz/corpus/<target>/ so every later run replays it.
# The last line per target gives executions, executions per second and coverage.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --minutes) seconds=$(( $2 * 60 )); shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | cut -c3-; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(json dtype dlpack tschema_markers cpp_inputs)
jobs=$(nproc 2>/dev/null || echo 2)

native=()
for t in "${targets[@]}"; do
  case "$t" in
    json|dtype|dlpack) native+=("fuzz_$t") ;;
    tschema_markers) ;;
    cpp_inputs) python_ext=1 ;;
    *) echo "fuzz.sh: unknown target '$t' (json, dtype, dlpack, tschema_markers, cpp_inputs)" >&2; exit 2 ;;
  esac
done
# cpp_inputs imports ferry.cpp: the extension of the ordinary build (FERRY_BUILD_DIR, else build/).
if [ -n "${python_ext:-}" ]; then
  build="${FERRY_BUILD_DIR:-build}"
  [ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja -DFERRY_BUILD_PYTHON=ON >/dev/null
  cmake --build "$build" -j "$jobs" --target ferry_py_core >/dev/null
fi
if [ ${#native[@]} -gt 0 ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFERRY_WERROR=OFF -DFERRY_BUILD_FUZZERS=ON -DFERRY_SANITIZE=address,undefined \
    -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_EXAMPLES=OFF -DFERRY_BUILD_PYTHON=OFF >/dev/null
  cmake --build build-fuzz -j "$jobs" --target "${native[@]}"
fi

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${targets[@]}"; do
  work="build-fuzz/corpus/$t"
  crashes="build-fuzz/crashes/$t"
  mkdir -p "$work" "$crashes"
  log="build-fuzz/fuzz_$t.log"
  echo "== fuzz $t (${seconds} s)"
  args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$crashes/"
        -max_len=4096 -timeout=10 "$work" "fuzz/corpus/$t")
  status=0
  if [ "$t" = tschema_markers ] || [ "$t" = cpp_inputs ]; then
    PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
      python3 "fuzz/fuzz_$t.py" "${args[@]}" >"$log" 2>&1 || status=$?
  else
    "build-fuzz/fuzz/fuzz_$t" "${args[@]}" >"$log" 2>&1 || status=$?
  fi
  if [ "$status" != 0 ]; then
    tail -n 60 "$log"
    echo "fuzz.sh: target $t failed (exit $status); the input is in $crashes/" >&2
    exit 1
  fi
  # The summary: "#N DONE cov: C ft: F corp: ..." and the final stats.
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log" | tail -n 1)
  echo "fuzz $t: ${execs:-?} executions, ${rate:-?}/s; ${done_line:-no DONE line}"
done
