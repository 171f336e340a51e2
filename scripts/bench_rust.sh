#!/usr/bin/env bash
# The Rust benchmarks (docs/benchmarks.md, "Rust"): rust/ferry/benches/calls.rs (Ferry's Rust
# hot paths beside their floors and the raw C ABI), then rust/bench-tvm (the same calls through
# Ferry and through apache-tvm-ffi's `tvm-ffi` crate in one process). Not part of CI.
#
#     scripts/bench_rust.sh             # both tables
#     scripts/bench_rust.sh --no-peer   # without tvm-ffi (no virtual environment, no tvm-ffi)
#
# libferry is build/'s (FERRY_DIR, default build/; its `ferry` target is built if missing).
# The peer: the apache-tvm-ffi wheel of the version scripts/bench_python.sh pins, in the
# virtual environment scripts/bench.sh uses (build-bench/peer/venv; nothing goes into the
# system Python); the `tvm-ffi` crate (pinned in rust/bench-tvm/Cargo.lock) links its
# libtvm_ffi through the tvm-ffi-config on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

peer=1
for arg in "$@"; do
  case "$arg" in
    --no-peer) peer=0 ;;
    *) echo "usage: $0 [--no-peer]" >&2; exit 2 ;;
  esac
done

if ! command -v cargo >/dev/null 2>&1 && [ -x "${HOME:-/nonexistent}/.cargo/bin/cargo" ]; then
  export PATH="${HOME:-/nonexistent}/.cargo/bin:$PATH"
fi
export FERRY_DIR="${FERRY_DIR:-$PWD/build}"
if [ ! -e "$FERRY_DIR/libferry.so" ]; then
  cmake -S . -B "$FERRY_DIR" -G Ninja >/dev/null
  cmake --build "$FERRY_DIR" --target ferry
fi

echo "== rust/ferry/benches/calls.rs" >&2
(cd rust && cargo bench --locked -p ferry --bench calls)

[ "$peer" = 1 ] || { echo "note: --no-peer: the tvm-ffi table is left out" >&2; exit 0; }
version=$(sed -n 's/^TVM_FFI_VERSION=//p' scripts/bench_python.sh)
want="apache-tvm-ffi==$version"
venv=build-bench/peer/venv
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$want" ]; then
  echo "== virtual environment $venv ($want)" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$want"
  echo "$want" >"$venv/.pinned"
fi
echo "== rust/bench-tvm (Ferry beside tvm-ffi $version)" >&2
(
  export PATH="$PWD/$venv/bin:$PATH"
  cd rust/bench-tvm
  cargo run --locked --release
)
