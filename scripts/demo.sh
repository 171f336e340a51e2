#!/usr/bin/env bash
# Builds Ferry and runs the demo: a tour of objects, casting and copy-on-write.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build --target quickstart -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
echo
./build/examples/quickstart
