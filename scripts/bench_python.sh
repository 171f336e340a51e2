#!/usr/bin/env bash
# Python call overhead, side by side in one process: Ferry vs apache-tvm-ffi vs nanobind
# (bench/python/bench_ffi.py; method and results in docs/benchmarks.md).
#
#   1. installs what building Ferry needs when it is missing (scripts/setup.sh);
#   2. builds Ferry's in-tree build (build/, configured as scripts/test.sh does, with
#      FERRY_BUILD_PYTHON=ON) if it is not there, and brings ferry._core and the test-support
#      library build/tests/python/ferry_testing.so up to date;
#   3. makes the benchmark's own virtual environment, build-bench/python/venv, from the same
#      Python that ferry._core is built for, with pinned apache-tvm-ffi and nanobind from PyPI
#      (nothing is installed into the system Python);
#   4. builds the nanobind module and the small tvm-ffi library of bench/python
#      (build-bench/python/native, -O2);
#   5. runs the benchmark and prints a Markdown table (raw samples: build-bench/python/results.json).
#
#     scripts/bench_python.sh                 # about 20 s once built (a minute from scratch)
#     scripts/bench_python.sh --callgrind     # and instructions per operation under valgrind
#                                             # (bench/python/instructions.py, ~3 more minutes)
#     scripts/bench_python.sh --reps 5 ...    # further arguments go to bench_ffi.py
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc 2>/dev/null || echo 2)

callgrind=0
bench_args=()
for arg in "$@"; do
  case "$arg" in
    --callgrind) callgrind=1 ;;
    *) bench_args+=("$arg") ;;
  esac
done

TVM_FFI_VERSION=0.1.15.post2
NANOBIND_VERSION=3.1.0
PYTEST_VERSION=9.2.0  # tvm_ffi.testing (which registers testing.TestIntPair) imports pytest
NUMPY_VERSION=2.4.6   # the arrays of the tensor rows

FERRY_SETUP_VALGRIND=$callgrind scripts/setup.sh

quiet() {  # runs a command, showing its output only when it fails
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "error: failed: $*" >&2
    return 1
  fi
  rm -f "$log"
}
apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq  # waits for another apt-get
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"
}
# Python headers (for ferry._core and the nanobind module) and venv (Debian splits them off).
if ! python3 -c 'import os, sysconfig, ensurepip, venv
raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    2>/dev/null; then
  echo "setup: installing python3-dev python3-venv" >&2
  apt_install python3-dev python3-venv
fi

# -- Ferry: ferry._core (build/python/ferry/, found from python/) and the test-support library.
if [ ! -f build/build.ninja ] || ! grep -q '^FERRY_BUILD_PYTHON:BOOL=ON' build/CMakeCache.txt; then
  echo "== configuring build/ (RelWithDebInfo, FERRY_BUILD_PYTHON=ON)" >&2
  quiet cmake -S . -B build -G Ninja -DFERRY_WERROR=ON -DFERRY_BUILD_PYTHON=ON
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt)
case "$build_type" in
  Release|RelWithDebInfo) ;;
  *) echo "warning: build/ is a '$build_type' build: Ferry's numbers will not be representative" >&2 ;;
esac
echo "== building ferry._core and ferry_testing ($build_type)" >&2
quiet cmake --build build -j "$jobs" --target ferry_py_core ferry_testing

# -- The benchmark's own environment, from the Python that ferry._core was built for.
python=$(sed -n 's/^_Python_EXECUTABLE:INTERNAL=//p' build/CMakeCache.txt)
[ -n "$python" ] || python=$(command -v python3)
work=build-bench/python
venv=$work/venv
want="apache-tvm-ffi==$TVM_FFI_VERSION nanobind==$NANOBIND_VERSION pytest==$PYTEST_VERSION numpy==$NUMPY_VERSION"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$want" ]; then
  echo "== virtual environment $venv ($want)" >&2
  rm -rf "$venv"
  mkdir -p "$work"
  "$python" -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q --disable-pip-version-check $want
  echo "$want" >"$venv/.pinned"
fi
vpy=$root/$venv/bin/python
if ! PYTHONPATH="$root/python" "$vpy" -c 'import ferry' 2>/dev/null; then
  echo "error: the benchmark's Python ($vpy) cannot import ferry from python/: was build/" \
       "configured for another Python than $python?" >&2
  PYTHONPATH="$root/python" "$vpy" -c 'import ferry' || true
  exit 1
fi

# -- The nanobind module and the tvm-ffi library.
echo "== building bench/python (nanobind module, tvm-ffi library)" >&2
quiet cmake -S bench/python -B "$work/native" -G Ninja -DPython_EXECUTABLE="$vpy"
quiet cmake --build "$work/native" -j "$jobs"

# -- Run.
echo "== running bench/python/bench_ffi.py" >&2
libs=(--ferry-testing-lib build/tests/python/ferry_testing.so
      --tvmffi-lib "$work/native/tvmffi_bench.so")
export PYTHONPATH="$root/python:$root/$work/native"
"$vpy" bench/python/bench_ffi.py "${libs[@]}" --json "$work/results.json" ${bench_args[@]+"${bench_args[@]}"}

if [ "$callgrind" = 1 ]; then
  echo "== running bench/python/instructions.py under callgrind" >&2
  echo
  "$vpy" bench/python/instructions.py "${libs[@]}"
fi
