"""Instructions per operation under callgrind: the noise-free companion of bench_ffi.py.

For each library and operation this runs a worker process twice under
`valgrind --tool=callgrind`, once doing the operation N times and once 2N times, and reports
(I(2N) - I(N)) / N: the instructions of one operation, with the interpreter's start-up and the
imports cancelled out. The timeit loop's own instructions (the "empty loop" row) are included
in every timeit row, as in bench_ffi.py. By default Ferry and tvm-ffi are measured with the GIL
held (`release_gil = False`) beside plain nanobind: releasing it costs time in atomics and cache
traffic more than in instructions. `--gil-released` measures the other pairing instead: Ferry and
tvm-ffi as they come (GIL released) beside nanobind bound with gil_scoped_release.

    instructions.py --ferry-testing-lib build/tests/python/ferry_testing.so \
                    --tvmffi-lib build-bench/python/native/tvmffi_bench.so [-n 100000]

Used by `scripts/bench_python.sh --callgrind` (about three minutes). A single operation can be
profiled by hand with the worker, e.g.

    valgrind --tool=callgrind python instructions.py --worker Ferry nop 100000 \
        --ferry-testing-lib ... --tvmffi-lib ...
    callgrind_annotate --inclusive=yes callgrind.out.<pid>
"""

import argparse
import os
import re
import subprocess
import sys
import timeit

import bench_ffi

LIBS = ["Ferry", "tvm-ffi", "nanobind"]
OPS = ["empty", "nop", "add", "echo", "echo_str", "echo_float", "field", "callback"]
LABELS = {
    "empty": "empty timeit loop",
    "nop": "nop()",
    "add": "f(1, 2)",
    "echo": "f(obj)",
    "echo_str": 'f("short str")',
    "echo_float": "f(1.5)",
    "field": "x.value",
    "callback": bench_ffi.CALLBACK,
}


def worker(lib_name, op, n, args):
    released = args.gil_released
    if lib_name == "Ferry":
        _, libs = bench_ffi.setup_ferry(args.ferry_testing_lib)
        lib = libs["Ferry" if released else "Ferry, GIL held"]
    elif lib_name == "tvm-ffi":
        _, libs, _ = bench_ffi.setup_tvmffi(args.tvmffi_lib)
        lib = libs["tvm-ffi" if released else "tvm-ffi, GIL held"]
    else:
        _, libs, _ = bench_ffi.setup_nanobind()
        lib = libs["nanobind, GIL released" if released else "nanobind"]
    if op == "callback":

        def cb(i):
            return i

        lib["call_n"](cb, 10)  # warm up
        lib["call_n"](cb, n)
        return
    if op == "empty":
        stmt, setup = "pass", ""
    elif op == "field":
        stmt, setup = bench_ffi.field_stmt(lib["field"])
    elif op == "echo_float":  # the echo of a float: a value no call path converts inline
        stmt, setup = "echo(x)", "echo = L['echo']; x = 1.5"
    else:
        stmt, setup = next(
            (s, st) for label, s, st in bench_ffi.OPS if s is not None and s.startswith(op + "(")
        )
    timer = timeit.Timer(stmt, setup=setup, globals={"L": lib})
    timer.timeit(10)  # warm up (specialization of the interpreter's instructions)
    timer.timeit(n)


def libs_of(op, args):
    """The libraries measured for `op`: the empty loop once; nanobind's GIL-releasing variant
    has no untyped echo (its f(obj) is typed), so no f(1.5) there."""
    if op == "empty":
        return ["Ferry"]
    if op == "echo_float" and args.gil_released:
        return ["Ferry", "tvm-ffi"]
    return LIBS


def count(lib, op, n, args):
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        lib,
        op,
        str(n),
        "--ferry-testing-lib",
        args.ferry_testing_lib,
        "--tvmffi-lib",
        args.tvmffi_lib,
    ] + (["--gil-released"] if args.gil_released else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    m = re.search(r"Collected : (\d+)", out)
    if m is None:
        raise RuntimeError(f"no instruction count from valgrind for {lib} {op}:\n{out}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ferry-testing-lib", required=True)
    ap.add_argument("--tvmffi-lib", required=True)
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--worker", nargs=3, metavar=("LIB", "OP", "N"))
    ap.add_argument(
        "--gil-released",
        action="store_true",
        help="every library releases the GIL around the call (nanobind: gil_scoped_release)",
    )
    ap.add_argument("--ops", help="comma-separated subset of " + ",".join(OPS))
    args = ap.parse_args()
    if args.worker:
        lib, op, n = args.worker
        worker(lib, op, int(n), args)
        return

    n = args.n
    ops = args.ops.split(",") if args.ops else OPS
    unknown = sorted(set(ops) - set(OPS))
    if unknown:
        ap.error(f"unknown operation(s) {', '.join(unknown)}; known: {', '.join(OPS)}")
    per_op = {}
    for op in ops:
        for lib in libs_of(op, args):
            print(f"callgrind: {lib} {op}", file=sys.stderr)
            per_op[(lib, op)] = (count(lib, op, 2 * n, args) - count(lib, op, n, args)) / n
    gil = (
        "every library releasing the GIL"
        if args.gil_released
        else "Ferry and tvm-ffi with the GIL held"
    )
    print(f"## Instructions per operation (callgrind, ({2 * n:,} - {n:,}) runs / {n:,}; {gil})")
    print()
    print("| operation | Ferry | tvm-ffi | nanobind | Ferry / tvm-ffi | Ferry / nanobind |")
    print("|---|---:|---:|---:|---:|---:|")
    for op in ops:
        if op == "empty":
            print(f"| {LABELS[op]} | {per_op[('Ferry', op)]:.0f} | | | | |")
            continue
        f, t = per_op[("Ferry", op)], per_op[("tvm-ffi", op)]
        nb = per_op.get(("nanobind", op))
        nb_text, ratio = ("—", "—") if nb is None else (f"{nb:.0f}", f"{f / nb:.2f}×")
        print(f"| {LABELS[op]} | {f:.0f} | {t:.0f} | {nb_text} | {f / t:.2f}× | {ratio} |")


if __name__ == "__main__":
    main()
