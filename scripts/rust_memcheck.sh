#!/usr/bin/env bash
# Valgrind memcheck over the Rust tests (the unit and integration test binaries of rust/, the
# ones `cargo test` builds): the unsafe layer of the Rust crates against libferry, where Miri
# cannot go (it runs no C) and an ASan build of Rust needs a nightly toolchain the machines may
# not have. Any invalid read or write, use of uninitialized memory, bad free or definite leak
# fails the run. First it runs rust/ferry/examples/memcheck_canary.rs, a planted
# use-after-free, and requires memcheck to report it: a memcheck that checks nothing fails.
# Part of the rust stage of scripts/test.sh; needs valgrind (scripts/setup.sh --test) and
# FERRY_DIR (default: build/).
set -euo pipefail
cd "$(dirname "$0")/../rust"
if ! command -v valgrind >/dev/null 2>&1; then
  echo "rust_memcheck.sh: valgrind is not installed (scripts/setup.sh --test installs it)" >&2
  exit 1
fi
export FERRY_DIR="${FERRY_DIR:-$PWD/../build}"
memcheck=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
  --show-leak-kinds=definite)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The executables cargo built, one "directory<TAB>path" per line: the package's directory,
# where cargo test runs a test binary, and the binary. With "tests", only test binaries, less
# the proc-macro crate's (it has no unsafe code, links no libferry, and needs the toolchain's
# libstd on the library path that cargo test sets).
executables() {
  python3 -c '
import json, os, sys
tests = sys.argv[1:] == ["tests"]
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
        continue
    if tests and (not msg["profile"]["test"] or "proc-macro" in msg["target"]["kind"]):
        continue
    print(os.path.dirname(msg["manifest_path"]) + "\t" + msg["executable"])
' "$@"
}

canary=$(cargo build --locked -q -p ferry --example memcheck_canary --message-format=json |
  executables | cut -f2)
# (In a subshell: the canary may die of its bug, and the shell's note of that goes to the log.)
if ("${memcheck[@]}" "$canary"; exit $?) >"$log" 2>&1; then
  cat "$log" >&2
  echo "rust_memcheck.sh: memcheck did not report the planted use-after-free of $canary" >&2
  exit 1
fi
if ! grep -q "Invalid write\|Invalid read" "$log"; then
  cat "$log" >&2
  echo "rust_memcheck.sh: memcheck failed on $canary without reporting its use-after-free" >&2
  exit 1
fi
echo "rust_memcheck.sh: the planted use-after-free is reported"

mapfile -t tests < <(cargo test --locked -q --no-run --message-format=json 2>/dev/null |
  executables tests)
if [ "${#tests[@]}" -lt 10 ]; then
  echo "rust_memcheck.sh: found only ${#tests[@]} test binaries" >&2
  exit 1
fi
failed=0
for entry in "${tests[@]}"; do
  dir=${entry%%$'\t'*}
  exe=${entry#*$'\t'}
  start=$SECONDS
  if (cd "$dir" && "${memcheck[@]}" "$exe" -q >"$log" 2>&1); then
    echo "rust_memcheck.sh: $(basename "$exe"): clean ($((SECONDS - start)) s)"
  else
    cat "$log" >&2
    echo "rust_memcheck.sh: $(basename "$exe"): FAILED under memcheck" >&2
    failed=1
  fi
done
exit "$failed"
