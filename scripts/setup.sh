#!/usr/bin/env bash
# Installs what building and testing Ferry needs, when it is missing: a C++17 compiler, CMake,
# Ninja and GoogleTest (Debian packages), GCC's libbacktrace (libgcc-N-dev, which g++ normally
# brings; libferry links it to name C++ frames with file:line), clang with its libFuzzer runtime
# (the fuzz targets of scripts/fuzz.sh), clang-format and clang-tidy of the same clang version
# (scripts/lint.sh), the Python headers and venv module, and pytest, NumPy, atheris, ruff and mypy
# (PyPI), and Rust (cargo) when the machine has none.
# Safe to run again; does nothing when all is present.
set -euo pipefail

missing=()
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
if command -v g++ >/dev/null 2>&1; then
  # -print-file-name prints the bare name when the compiler has no such file.
  case "$(g++ -print-file-name=libbacktrace.a)" in
    /*) ;;
    *) missing+=("libgcc-$(g++ -dumpversion | cut -d. -f1)-dev") ;;
  esac
fi
command -v clang++ >/dev/null 2>&1 || missing+=(clang)
# libFuzzer (-fsanitize=fuzzer) comes with clang's runtime libraries.
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null ||
  missing+=(libclang-rt-dev)
# The linters of scripts/lint.sh, of the clang version installed (its major number).
clang_major=""
if command -v clang++ >/dev/null 2>&1; then
  clang_major=$(clang++ -dumpversion | cut -d. -f1)
fi
if [ -n "$clang_major" ]; then
  command -v "clang-format-$clang_major" >/dev/null 2>&1 || missing+=("clang-format-$clang_major")
  command -v "clang-tidy-$clang_major" >/dev/null 2>&1 || missing+=("clang-tidy-$clang_major")
fi
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
    2>/dev/null || missing+=(python3-dev)
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
fi
if [ "${FERRY_SETUP_BENCH:-0}" = 1 ] && [ ! -f /usr/include/benchmark/benchmark.h ]; then
  missing+=(libbenchmark-dev)
fi
if [ "${FERRY_SETUP_VALGRIND:-0}" = 1 ] && ! command -v valgrind >/dev/null 2>&1; then
  missing+=(valgrind)
fi

# Rust, for the rust stage (cargo test, clippy, fmt of rust/): the machines carry rustup's
# toolchain in ~/.cargo/bin. Without any, Debian's current Rust (cargo-web and rustc-web, which
# provide cargo and rustc); it has no clippy or rustfmt of its version, so the stage's lint
# steps then fail saying so. Crates come from crates.io when cargo first builds.
if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  missing+=(cargo-web rustc-web)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

if ! python3 -c 'import pytest' 2>/dev/null; then
  echo "setup: installing pytest"
  python3 -m pip install -q pytest || python3 -m pip install -q --break-system-packages pytest
fi
# NumPy: the tensor tests (tests/python/test_tensor.py) exchange arrays with it through DLPack.
if ! python3 -c 'import numpy' 2>/dev/null; then
  echo "setup: installing numpy"
  python3 -m pip install -q numpy || python3 -m pip install -q --break-system-packages numpy
fi
# Dask: the tests across processes (tests/python/test_dask.py) and the demo's parallel step
# (examples/arith/demo.py) run on a distributed.LocalCluster.
if ! python3 -c 'import dask, distributed' 2>/dev/null; then
  echo "setup: installing dask and distributed"
  python3 -m pip install -q dask distributed ||
    python3 -m pip install -q --break-system-packages dask distributed
fi
# atheris: the fuzz target of tschema's marker parser (fuzz/fuzz_tschema_markers.py, scripts/fuzz.sh).
if ! python3 -c 'import atheris' 2>/dev/null; then
  echo "setup: installing atheris"
  python3 -m pip install -q atheris || python3 -m pip install -q --break-system-packages atheris
fi
# ruff (lint and format) and mypy (types): scripts/lint.sh. Pinned, so that a new release's rules
# or formatting never fail a run that changed nothing.
for tool in ruff==0.17.5 mypy==2.4.1; do
  if ! python3 -m pip show "${tool%%==*}" 2>/dev/null | grep -qx "Version: ${tool##*==}"; then
    echo "setup: installing $tool"
    python3 -m pip install -q "$tool" || python3 -m pip install -q --break-system-packages "$tool"
  fi
done
