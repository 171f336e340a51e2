"""What the stable ABI (abi3) would cost on Ferry's Python call rows, in instructions.

The limited API of CPython 3.10 (the oldest Python Ferry supports, so the floor of one abi3 wheel
for every version) has no vectorcall protocol for a type: CPython then packs a call's arguments
into a tuple and calls tp_call, and the extension reads them back through PyTuple_Size and
PyTuple_GetItem (functions there, macros today). A build with -DFERRY_ABI3_ESTIMATE
(python/src/function.cc) calls ferry.Function that way and otherwise runs today's code, so it
measures that part of the cost only: a lower bound of the whole port (which would also turn the
type checks of every argument conversion and the string fast paths into function calls).

    python bench/python/abi3_estimate.py build build-abi3est [-n 100000]

Each argument is a build tree with ferry._core and the test-support library (FERRY_BUILD_PYTHON
=ON); the second one configured with -DCMAKE_CXX_FLAGS=-DFERRY_ABI3_ESTIMATE. Runs
instructions.py's worker under callgrind, (I(2N) - I(N)) / N per operation, for each tree.
"""

import argparse
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instructions

OPS = ["nop", "add", "echo", "echo_str", "field"]


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("today", help="build tree of today's extension")
    ap.add_argument("abi3", help="build tree configured with -DFERRY_ABI3_ESTIMATE")
    ap.add_argument("-n", type=int, default=100_000)
    args = ap.parse_args()
    counts = {}
    for label, tree in (("today", args.today), ("abi3", args.abi3)):
        build = pathlib.Path(tree).resolve()
        lib = build / "tests" / "python" / "ferry_testing.so"
        if not lib.exists():
            ap.error(f"{lib} is missing: build the ferry_py_core and ferry_testing targets")
        os.environ["FERRY_BUILD_DIR"] = str(build)
        worker_args = argparse.Namespace(
            ferry_testing_lib=str(lib), tvmffi_lib="unused", gil_released=False
        )
        for op in OPS:
            print(f"callgrind: {label} {op}", file=sys.stderr)
            two = instructions.count("Ferry", op, 2 * args.n, worker_args)
            one = instructions.count("Ferry", op, args.n, worker_args)
            counts[(label, op)] = (two - one) / args.n
    print("| operation (GIL held) | today | abi3 estimate | abi3 / today |")
    print("|---|---:|---:|---:|")
    for op in OPS:
        t, a = counts[("today", op)], counts[("abi3", op)]
        print(f"| {instructions.LABELS[op]} | {t:.0f} | {a:.0f} | {a / t:.2f}× |")


if __name__ == "__main__":
    main()
