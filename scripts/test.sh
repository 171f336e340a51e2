#!/usr/bin/env bash
# Runs every test of Ferry on a fresh machine, in stages, printing the time of each:
#   setup        installs what is missing (scripts/setup.sh --test): Debian packages, and the
#                Python tools (pytest, NumPy, dask, atheris, ruff, mypy) in the project's .venv/,
#                whose bin/ the later stages find first on PATH (so `python3` is .venv's)
#   lint         formatting, ruff, mypy and clang-tidy (scripts/lint.sh)
#   build        RelWithDebInfo, -Wall -Wextra -Werror (build/)
#   ctest        the C and C++ tests
#   pytest       the Python tests (PYTHONPATH=python: the package's sources, which find the
#                extension in build/python/ferry/), including a `pip install .` of the package,
#                the worked example's tests and the code blocks of the documentation
#   rust         the Rust crates of rust/ against build/'s libferry (FERRY_DIR): cargo test (unit,
#                integration, the contract program of DESIGN.md, doc tests), cargo clippy
#                --all-targets -D warnings and cargo fmt --check; then the Python test that
#                loads a library written in Rust (rust/ferry-testlib)
#   java         the Java frontend of java/ against build/'s libferry (scripts/java.sh): javac
#                -Xlint:all -Werror, the JUnit tests through Maven Surefire (JDK 22+: the
#                machines' Temurin 25)
#   asan         AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/): the C and C++ tests,
#                then the Python tests of the extension (tests/python/test_*.py) in a Python with
#                the ASan runtime preloaded, PYTHONMALLOC=malloc and leak detection
#                (tests/sanitizers/lsan_python.supp lists what of CPython's is suppressed, and why)
#   tsan         ThreadSanitizer (build-tsan/): the C++ tests that use threads
#   fuzz         each fuzz target for FERRY_FUZZ_SECONDS (default 60) seconds (scripts/fuzz.sh)
# Any failure, sanitizer report or fuzz finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

stage_name=""
stage_start=$SECONDS
stage_times=()
stage() {  # ends the running stage (printing its time) and starts the next, if named
  if [ -n "$stage_name" ]; then
    local took=$((SECONDS - stage_start))
    echo "== $stage_name: ${took} s"
    stage_times+=("$(printf '%-8s %5d s' "$stage_name" "$took")")
  fi
  stage_name="${1:-}"
  stage_start=$SECONDS
  if [ -n "$stage_name" ]; then echo "== $stage_name: $2"; fi
}

stage setup "installing what is missing"
scripts/setup.sh --test
# The tools setup.sh put in .venv, never the system interpreter's: every later `python3`, and so
# pytest, ruff, mypy and atheris, is .venv's.
export VIRTUAL_ENV="$PWD/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"

stage lint "clang-format, ruff, mypy, clang-tidy"
scripts/lint.sh

stage build "RelWithDebInfo, -Wall -Wextra -Werror"
cmake -S . -B build -G Ninja -DFERRY_WERROR=ON -DFERRY_BUILD_PYTHON=ON >/dev/null
cmake --build build -j "$jobs"

stage ctest "C and C++ tests"
ctest --test-dir build --output-on-failure -j "$jobs"

stage pytest "Python tests"
FERRY_BUILD_DIR="$PWD/build" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  python3 -m pytest tests/python examples/arith/tests tests/docs -q -p no:cacheprovider

stage rust "cargo test, clippy -D warnings, fmt --check (rust/, against build/); a Rust library from Python"
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
# A library written in Rust (a cdylib) loaded and called from Python, callbacks passed in.
FERRY_BUILD_DIR="$PWD/build" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  python3 -m pytest rust/ferry-testlib/tests -q -p no:cacheprovider

stage java "javac -Xlint:all -Werror, JUnit through Maven Surefire (java/, against build/)"
scripts/java.sh

stage asan "AddressSanitizer + UndefinedBehaviorSanitizer: build, C and C++ tests, Python tests"
# Its extension stays in build-asan/python/ferry/ (every build tree keeps its own); asan_python.sh
# points `import ferry` at it with FERRY_BUILD_DIR.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_WERROR=ON \
  -DFERRY_SANITIZE=address,undefined -DFERRY_BUILD_EXAMPLES=OFF -DFERRY_BUILD_PYTHON=ON >/dev/null
cmake --build build-asan -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j "$jobs"
scripts/asan_python.sh

stage tsan "ThreadSanitizer: build, the C++ tests that use threads"
# The tests that start threads: registry and callbacks (test_function, test_threads), type table
# and reference counts (test_object), per-thread errors (test_error), string caches
# (test_string). The others run single-threaded code already covered by build-asan/.
tsan_tests=(test_threads test_function test_object test_error test_string)
cmake -S . -B build-tsan -G Ninja -DFERRY_WERROR=ON -DFERRY_SANITIZE=thread \
  -DFERRY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizers/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" \
  -R "^cpp\\.($(IFS='|'; echo "${tsan_tests[*]}"))\$"

stage fuzz "each fuzz target for ${FERRY_FUZZ_SECONDS:-60} s"
scripts/fuzz.sh --seconds "${FERRY_FUZZ_SECONDS:-60}"

stage ""
echo "== all stages passed in $SECONDS s:"
printf '   %s\n' "${stage_times[@]}"
