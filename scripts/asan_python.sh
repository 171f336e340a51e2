#!/usr/bin/env bash
# Runs the Python tests of the extension (tests/python/test_*.py) against build-asan/ (libferry,
# ferry._core and the test-support library built with AddressSanitizer + UndefinedBehaviorSanitizer;
# scripts/test.sh builds it) in a CPython with the ASan runtime preloaded, PYTHONMALLOC=malloc (so
# that ASan sees every Python allocation, not pymalloc's arenas) and leak detection on. CPython's
# own allocations that outlive the interpreter are suppressed by tests/sanitizers/lsan_python.supp
# (each entry explained there; full malloc stacks, fast_unwind_on_malloc=0, so that an entry
# matching a CPython or NumPy frame cannot hide an allocation made by Ferry); any other report
# fails the run.
#
# Left out, and why: test_packaging.py (builds and pip-installs a wheel with a non-ASan compile:
# minutes, and nothing of build-asan/ in it), test_cpp.py (ferry.cpp runs the compiler and
# Ninja, which would inherit the preloaded runtime and report the compiler's own leaks),
# test_core_stub.py, test_subproject.py, test_dev_build.py and test_typing.py (they run mypy,
# its stubtest and CMake, which would report their own leaks and take minutes under ASan; they
# check stubs, types, configures and the tree, no memory), test_wheel_script.py (it runs
# scripts/wheel.sh's argument checks in bash, whose own allocations LeakSanitizer reports under
# the preloaded runtime; no Ferry code runs), tests/python/tschema (the schema compiler is pure Python plus C++ compiles of generated code; its C++ runs under build-asan's ctest), the worked
# example and the documentation (they run compilers and build trees of their own), test_dask.py
# (a Dask cluster under ASan takes minutes, and `import distributed` alone leaves CPython
# allocations LSan reports; the pickles it sends run under ASan in test_multiprocessing.py and
# test_pickle_libraries.py).
set -euo pipefail
cd "$(dirname "$0")/.."

# The package's sources, python/ferry/, with the ASan build's extension: `import ferry` finds it
# in the build tree FERRY_BUILD_DIR names (python/ferry/_build_tree.py), and the tests take the
# test-support and test libraries from the same tree (tests/python/ferry_testing.py).
build="$PWD/build-asan"
compgen -G "$build/python/ferry/_core*.so" >/dev/null ||
  { echo "asan_python.sh: build build-asan/ first (scripts/test.sh)" >&2; exit 1; }

asan_runtime=$(c++ -print-file-name=libasan.so)
[ -f "$asan_runtime" ] || { echo "asan_python.sh: no libasan.so next to c++" >&2; exit 1; }
# Preloaded with it: ASan intercepts __cxa_throw and must find the real one at start-up, before
# the extension would bring libstdc++ in (CPython itself does not link it).
cxx_runtime=$(c++ -print-file-name=libstdc++.so.6)

# The interpreter itself: python3 may be a wrapper script (pyenv) that the preloaded runtime
# would follow into another Python.
python=$(python3 -c 'import sys; print(sys.executable)')

tests=()
for t in tests/python/test_*.py; do
  case "$t" in
    tests/python/test_packaging.py|tests/python/test_cpp.py|tests/python/test_dask.py) ;;
    tests/python/test_core_stub.py|tests/python/test_subproject.py|tests/python/test_dev_build.py) ;;
    tests/python/test_typing.py|tests/python/test_wheel_script.py) ;;
    *) tests+=("$t") ;;
  esac
done

# Deselected here and run in the plain pytest stage: test_object.py's
# test_a_dead_class_at_a_reused_address_is_not_taken_for_it and
# test_a_class_at_the_address_of_a_dead_converted_class_is_not_taken_for_it need a new class
# allocated at a freed one's address, which ASan's quarantine of freed memory never allows (the
# tests assert that the reuse happened, so here they would fail rather than pass vacuously).
deselect=(
  --deselect tests/python/test_object.py::test_a_dead_class_at_a_reused_address_is_not_taken_for_it
  --deselect tests/python/test_object.py::test_a_class_at_the_address_of_a_dead_converted_class_is_not_taken_for_it
)

LD_PRELOAD="$asan_runtime $cxx_runtime" \
PYTHONMALLOC=malloc \
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:fast_unwind_on_malloc=0 \
LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan_python.supp:print_suppressions=0" \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
FERRY_BUILD_DIR="$build" \
PYTHONPATH="$PWD/python" \
  "$python" -m pytest "${tests[@]}" "${deselect[@]}" -q -p no:cacheprovider "$@"
