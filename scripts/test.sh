#!/usr/bin/env bash
# Runs every test of Ferry on a fresh machine: installs what is missing, builds, runs the C and
# C++ tests and the Python tests (pytest, against the extension built in place into
# python/ferry/, including a `pip install .` of the package, the worked example's tests and the
# code blocks of the documentation), then runs the C and C++ tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/), where any report
# fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

scripts/setup.sh

echo "== build (RelWithDebInfo, -Wall -Wextra -Werror)"
cmake -S . -B build -G Ninja -DFERRY_WERROR=ON -DFERRY_BUILD_PYTHON=ON >/dev/null
cmake --build build -j "$jobs"
echo "== C and C++ tests"
ctest --test-dir build --output-on-failure -j "$jobs"
echo "== Python tests"
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest tests/python examples/arith/tests tests/docs \
  -q -p no:cacheprovider

echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_WERROR=ON \
  -DFERRY_SANITIZE=address,undefined -DFERRY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan -j "$jobs"
echo "== tests under sanitizers"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
