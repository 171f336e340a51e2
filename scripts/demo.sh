#!/usr/bin/env bash
# The demo: the worked example (examples/arith) end to end, as a user of Ferry would run it.
#
#   1. set-up: the system packages the build needs (scripts/setup.sh --demo: compiler, CMake,
#      Ninja, Python headers; no linters or fuzzers), a virtual environment (.venv),
#      `pip install .` of Ferry, and dask and distributed (the demo's parallel step), all in .venv
#   2. tschema check: the generated C++ and Python are up to date with the schema
#   3. build: the example's C++ passes, a CMake project using find_package(ferry)
#   4. run: examples/arith/demo.py builds expressions in Python, runs the C++ passes on them,
#      compares, serializes, pickles to a worker process, simplifies many expressions on a Dask
#      LocalCluster and calls back into Python
#
# `scripts/demo.sh --jit` replaces step 3's CMake project by one call of ferry.cpp.load
# (demo.py --jit), which compiles the same sources and caches the library in ~/.cache/ferry.
# The quick C++ tour of objects, casting and copy-on-write is `scripts/demo.sh --quickstart`.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
say() { printf '\n== [%3ds] %s\n' "$((SECONDS - start))" "$*"; }

scripts/setup.sh --demo

if [ "${1:-}" = --quickstart ]; then
  # Its own tree: the C++ tests (and so GoogleTest, which --demo does not install) stay off.
  cmake -S . -B build-quickstart -G Ninja -DFERRY_BUILD_TESTS=OFF >/dev/null
  cmake --build build-quickstart --target quickstart -j "$jobs" >/dev/null
  ./build-quickstart/examples/quickstart
  exit 0
fi

say "set-up: installing Ferry into .venv (pip install .: 1-2 minutes the first time, quiet; later runs rebuild incrementally)"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check .
# The demo's parallel step runs on a Dask LocalCluster.
.venv/bin/python -c 'import dask, distributed' 2>/dev/null || {
  echo "set-up: installing dask and distributed into .venv (pip)"
  .venv/bin/python -m pip install -q --disable-pip-version-check dask distributed
}
echo "ferry $(.venv/bin/python -m ferry --version), CMake config in $(.venv/bin/python -m ferry --cmake-dir)"

cd examples/arith
venv_python="$PWD/../../.venv/bin/python"
if [ "${1:-}" = --jit ]; then
  say "tschema check: are include/arith/nodes.h, src/nodes_generated.cc, python/arith/_nodes.py current?"
  "$venv_python" -m ferry.tschema check schema/arith_schema.py --in-place include/arith/nodes.h \
    --source src/nodes_generated.cc --python python/arith/_nodes.py
  say "run: python demo.py --jit (ferry.cpp.load builds libarith.so; no CMake)"
  PYTHONPATH="$PWD/python" "$venv_python" demo.py --jit
  say "finished"
  exit 0
fi
say "configure: a CMake project using find_package(ferry) from the installed package"
cmake -S . -B ../../build-arith -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -Dferry_DIR="$("$venv_python" -m ferry --cmake-dir)" -DPython_EXECUTABLE="$venv_python" >/dev/null
echo "build-arith/ configured"

say "tschema check: are include/arith/nodes.h, src/nodes_generated.cc, python/arith/_nodes.py current?"
cmake --build ../../build-arith --target arith_tschema_check

say "build: libarith.so (the generated nodes and the hand-written passes)"
cmake --build ../../build-arith --target arith -j "$jobs"

say "run: python demo.py"
ARITH_LIBRARY="$PWD/../../build-arith/libarith.so" PYTHONPATH="$PWD/python" \
  ../../.venv/bin/python demo.py
say "finished"
