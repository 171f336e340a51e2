"""What an error costs across the C++/Python boundary, beside plain Python doing the same.

Operations (all measured in one process, back to back, in an order that rotates from one
repetition to the next):

    py raise/except        a Python function raising ValueError, caught by the caller
    C++ throw/except       a C++ function (FERRY_THROW) called from Python, caught in Python:
                           the exception gets its C++ frames as traceback entries (symbols from
                           the per-address cache; the one-off first symbolization is reported
                           apart, as "first error")
    py ... + format        the same, then traceback.format_exception(e) (reads source lines)
    C++ ... + format
    callback crossing      Python -> C++ (test.call) -> a Python callback raising a new
                           exception, caught by the Python caller
    re-raise crossing @N   one exception object raised again and again through test.call: the
                           time per crossing after N earlier crossings of the same object (its
                           traceback grows by one crossing each time, as in plain Python); equal
                           times at N = 0 and N = 2000 mean a crossing does not grow with it
    py re-raise @N         plain Python re-raising one exception object through one function

Then the first two again in a child process with FERRY_BACKTRACE=0 (no frames captured), and the
first C++ error of a fresh process (symbolization reads the debug information of every loaded
library once), median of 3 processes.

Method: timeit loops (garbage collector off while timing, as timeit does), each operation's
loop sized by one calibration pass to about --sample-ms; --reps repetitions; the median per
operation in ns, and its ratio to "py raise/except" of the same repetitions.

    PYTHONPATH=python python3 bench/python/bench_errors.py \\
        --ferry-testing-lib build/tests/python/ferry_testing.so [--reps 7] [--sample-ms 50]

With the peers (nanobind's and tvm-ffi's C++ throw reaching Python, from the environment and
native builds of scripts/bench_python.sh):

    PYTHONPATH=python:build-bench/python/native build-bench/python/venv/bin/python \\
        bench/python/bench_errors.py --ferry-testing-lib build/tests/python/ferry_testing.so \\
        --tvmffi-lib build-bench/python/native/tvmffi_bench.so
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import timeit
import traceback


def first_error_ms(lib):
    """The first C++ error of a fresh process: its symbolization reads the debug information of
    every loaded library once (libbacktrace), so it is measured in a process of its own."""
    code = (
        "import time, ferry\n"
        f"ferry.load_library({lib!r})\n"
        "f = ferry.get_global_func('test.raise_value_error')\n"
        "t = time.perf_counter()\n"
        "try:\n    f('x')\nexcept ValueError:\n    pass\n"
        "print((time.perf_counter() - t) * 1e3)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ferry-testing-lib", required=True)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--sample-ms", type=float, default=50)
    parser.add_argument(
        "--throw-only",
        action="store_true",
        help="only the first two operations, as the FERRY_BACKTRACE=0 child does",
    )
    parser.add_argument(
        "--tvmffi-lib",
        help="bench/python's tvm-ffi library: adds the nanobind and tvm-ffi rows (nb_bench on "
        "PYTHONPATH; scripts/bench_python.sh builds both)",
    )
    args = parser.parse_args()

    import ferry

    ferry.load_library(args.ferry_testing_lib)
    throw = ferry.get_global_func("test.raise_value_error")
    call = ferry.get_global_func("test.call")

    def py_raiser(message):
        raise ValueError(message)

    def py_raise():
        try:
            py_raiser("x")
        except ValueError:
            pass

    def cpp_throw():
        try:
            throw("x")
        except ValueError:
            pass

    def py_raise_format():
        try:
            py_raiser("x")
        except ValueError as e:
            traceback.format_exception(e)

    def cpp_throw_format():
        try:
            throw("x")
        except ValueError as e:
            traceback.format_exception(e)

    def raising_callback():
        raise KeyError("k")

    def callback_crossing():
        try:
            call(raising_callback)
        except KeyError:
            pass

    def reraise_ops(depth):
        """One crossing of an exception object that already crossed `depth` times."""
        exc = ValueError("again")

        def callback():
            raise exc

        for _ in range(depth):
            try:
                call(callback)
            except ValueError:
                pass
        saved = exc.__traceback__

        def crossing():
            exc.__traceback__ = saved  # each timed crossing starts from `depth` earlier ones
            try:
                call(callback)
            except ValueError:
                pass

        def py_layer():
            raise exc

        def py_crossing():
            exc.__traceback__ = saved
            try:
                py_layer()
            except ValueError:
                pass

        return crossing, py_crossing

    peers = {}
    if args.tvmffi_lib:  # the peers, as scripts/bench_python.sh builds them (bench/python)
        import nb_bench
        import tvm_ffi

        peers["nanobind: C++ throw/except"] = nb_bench.raise_value_error
        peers["tvm-ffi: C++ throw/except"] = tvm_ffi.load_module(args.tvmffi_lib).get_function(
            "raise_value_error"
        )

    def peer_op(f):
        def op():
            try:
                f("x")
            except ValueError:
                pass

        return op

    ops = {
        "py raise/except": py_raise,
        "C++ throw/except": cpp_throw,
        **{name: peer_op(f) for name, f in peers.items()},
        "py raise/except + format": py_raise_format,
        "C++ throw/except + format": cpp_throw_format,
        "callback crossing": callback_crossing,
    }
    if args.throw_only:
        ops = {name: ops[name] for name in ("py raise/except", "C++ throw/except", *peers)}
    for depth in () if args.throw_only else (0, 2000):
        crossing, py_crossing = reraise_ops(depth)
        ops[f"re-raise crossing @{depth}"] = crossing
        ops[f"py re-raise @{depth}"] = py_crossing

    for op in ops.values():  # warm-up: symbolization, source lines, code objects
        op()
    numbers = {}
    for name, op in ops.items():
        n = 1
        while timeit.timeit(op, number=n) < args.sample_ms / 1e3:
            n *= 2
        numbers[name] = n
    samples = {name: [] for name in ops}
    names = list(ops)
    for rep in range(args.reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            samples[name].append(timeit.timeit(ops[name], number=numbers[name]) / numbers[name])
    base = statistics.median(samples["py raise/except"])
    print(f"Python {sys.version.split()[0]}, {args.reps} repetitions, median ns per operation")
    print()
    print("| operation | ns | / py raise/except |")
    print("|---|---:|---:|")
    for name in names:
        median = statistics.median(samples[name])
        print(f"| {name} | {median * 1e9:,.0f} | {median / base:.2f} |")
    if args.throw_only:
        return
    child = subprocess.run(
        [
            sys.executable,
            __file__,
            "--ferry-testing-lib",
            args.ferry_testing_lib,
            "--reps",
            str(args.reps),
            "--sample-ms",
            str(args.sample_ms),
            "--throw-only",
        ]
        + (["--tvmffi-lib", args.tvmffi_lib] if args.tvmffi_lib else []),
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, FERRY_BACKTRACE="0"),
    )
    print()
    print("With FERRY_BACKTRACE=0 (another process, same method):")
    print()
    print("\n".join(line for line in child.stdout.splitlines() if line.startswith("|")))
    firsts = [first_error_ms(args.ferry_testing_lib) for _ in range(3)]
    print()
    print(
        f"first C++ error of a process (symbolization of all loaded libraries): "
        f"{statistics.median(firsts):.0f} ms (median of 3 processes)"
    )


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    if "--throw-only" not in sys.argv:
        print(f"({time.perf_counter() - t0:.0f} s)")
