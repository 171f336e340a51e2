"""Python-defined types, side by side in one process: construction and field reads of

    dataclass    a standard `@dataclasses.dataclass(slots=True)` (the reference of the ratios)
    py_class     a `ferry.py_class` (fields stored in the C++ object)
    C++ node     the same three fields declared in a tschema schema, compiled with ferry.cpp.load
                 (a C++ node registered in C++; its Python class is the one tschema generates)
    tvm-ffi      apache-tvm-ffi's `tvm_ffi.dataclasses.py_class` (left out when tvm_ffi cannot
                 be imported)

each with three fields `x: int, y: float, label: str`. Operations:

    P(1, 2.0, "abc")     construction, positional arguments
    P(x=1, y=2.0, ...)   construction, keyword arguments
    p.x / p.y / p.label  reading a field of each kind (int, float, str)
    p.x = 2              writing an int field

Method: timeit loops (the object and class bound to locals of the timed function, garbage
collector off), one calibration pass sizing each loop to about --sample-ms, then --reps
repetitions; within a repetition every operation is measured for all the kinds back to back, in
an order that rotates from one repetition to the next, so noise on the machine hits all of them
alike. Reported: the minimum over the repetitions, in ns per operation with the empty loop's
cost subtracted, and the ratio to the dataclass.

    scripts/bench_python.sh   # once: makes build-bench/python/venv (pinned apache-tvm-ffi)
    PYTHONPATH=python build-bench/python/venv/bin/python bench/python/bench_py_class.py \
        [--reps 15] [--sample-ms 20] [--json out.json]
    ... bench_py_class.py --instructions [-n 20000]   # instructions under callgrind instead
"""

import argparse
import dataclasses
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import timeit

SCHEMA = """
from ferry.tschema import Object, declare, ty


@declare
class BenchPointNode(Object):
    type_key = "bench_py_class.CPoint"
    mutable = True
    x: ty.int64_t
    y: ty.double
    label: ty.String
"""


def make_kinds(only=None):
    """{kind: class} for every kind available in this environment (or just the kind `only`),
    and tvm-ffi's version."""
    import ferry
    import ferry.cpp

    @dataclasses.dataclass(slots=True)
    class DataPoint:
        x: int
        y: float
        label: str

    @ferry.py_class("bench_py_class.PyPoint")
    class PyPoint(ferry.Object):
        x: int
        y: float
        label: str

    kinds = {"dataclass": DataPoint, "py_class": PyPoint}
    if only in (None, "C++ node"):
        with tempfile.TemporaryDirectory() as d:
            schema = os.path.join(d, "bench_py_class_schema.py")
            with open(schema, "w") as f:
                f.write(SCHEMA)
            kinds["C++ node"] = ferry.cpp.load("bench_py_class", [], schema=schema).BenchPoint
    tvm_version = None
    if only not in (None, "tvm-ffi py_class"):
        return {only: kinds[only]}, tvm_version
    try:
        import tvm_ffi
        from tvm_ffi.dataclasses import py_class as tvm_py_class
    except ImportError as e:
        print(f"note: tvm-ffi left out ({e})", file=sys.stderr)
    else:

        @tvm_py_class("bench_py_class.TvmPoint")
        class TvmPoint(tvm_ffi.Object):
            x: int
            y: float
            label: str

        kinds["tvm-ffi py_class"] = TvmPoint
        tvm_version = tvm_ffi.__version__
    for cls in kinds.values():  # every kind builds and reads the same values
        p = cls(1, 2.0, "abc")
        assert (p.x, p.y, p.label) == (1, 2.0, "abc"), cls
        q = cls(x=1, y=2.0, label="abc")
        assert (q.x, q.y, q.label) == (1, 2.0, "abc"), cls
        p.x = 2
        assert p.x == 2, cls
    return kinds, tvm_version


# (row label, setup, statement): `P` is the class, `p` an instance.
OPS = [
    ("empty loop", "", "pass"),
    ('P(1, 2.0, "abc")', "", 'P(1, 2.0, "abc")'),
    ('P(x=1, y=2.0, label="abc")', "", 'P(x=1, y=2.0, label="abc")'),
    ("p.x", "", "p.x"),
    ("p.y", "", "p.y"),
    ("p.label", "", "p.label"),
    ("p.x = 2", "", "p.x = 2"),
]


def timer(cls, stmt):
    p = cls(1, 2.0, "abc")
    return timeit.Timer(stmt, setup="P = _P; p = _p", globals={"_P": cls, "_p": p})


def run(kinds, reps, sample_ms):
    timers = {(op, kind): timer(cls, stmt) for op, _, stmt in OPS for kind, cls in kinds.items()}
    numbers = {}
    for key, t in timers.items():  # calibration: about sample_ms per sample
        n, elapsed = 1, 0.0
        while elapsed < 0.002:
            n *= 4
            elapsed = t.timeit(n)
        numbers[key] = max(1, int(n * sample_ms / 1000 / elapsed))
    samples = {key: [] for key in timers}
    keys = list(timers)
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for rep in range(reps):
            shift = rep % len(kinds)
            for op, _, _ in OPS:
                order = list(kinds)[shift:] + list(kinds)[:shift]
                for kind in order:
                    key = (op, kind)
                    samples[key].append(timers[key].timeit(numbers[key]) / numbers[key] * 1e9)
    finally:
        if gc_was:
            gc.enable()
    assert len(keys) == len(samples)
    return samples


def report(kinds, samples):
    best = {key: min(v) for key, v in samples.items()}
    empty = {kind: best[("empty loop", kind)] for kind in kinds}
    net = {
        (op, kind): best[(op, kind)] - (0 if op == "empty loop" else empty[kind])
        for op, _, _ in OPS
        for kind in kinds
    }
    names = list(kinds)
    others = [k for k in names if k != "dataclass"]
    head = (
        ["operation"]
        + [f"{k} (ns)" for k in names]
        + [f"{k} / dataclass" for k in others]
        + ["py_class / C++ node"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for op, _, _ in OPS:
        row = [op] + [f"{net[(op, k)]:.1f}" for k in names]
        if op == "empty loop":
            row += ["" for _ in others] + [""]
        else:
            row += [f"{net[(op, k)] / net[(op, 'dataclass')]:.2f}x" for k in others]
            row.append(f"{net[(op, 'py_class')] / net[(op, 'C++ node')]:.2f}x")
        lines.append("| " + " | ".join(row) + " |")
    print("\n".join(lines))
    print()
    reads = ["p.x", "p.y", "p.label"]
    checks = [
        (
            "construction (positional) <= 1.5x the dataclass",
            net[('P(1, 2.0, "abc")', "py_class")] <= 1.5 * net[('P(1, 2.0, "abc")', "dataclass")],
        ),
        (
            "construction (keywords) <= 1.5x the dataclass",
            net[('P(x=1, y=2.0, label="abc")', "py_class")]
            <= 1.5 * net[('P(x=1, y=2.0, label="abc")', "dataclass")],
        ),
    ]
    for op in reads:
        checks.append(
            (f"{op}: py_class <= the dataclass", net[(op, "py_class")] <= net[(op, "dataclass")])
        )
        checks.append(
            (
                f"{op}: py_class within 10% of the C++ node",
                net[(op, "py_class")] <= 1.1 * net[(op, "C++ node")],
            )
        )
    for what, ok in checks:
        print(f"- target {'met' if ok else 'MISSED'}: {what}")
    return net


def worker(op, kind, n):
    """Runs `op` n times on `kind` (a process that callgrind counts)."""
    kinds, _ = make_kinds(only=kind)
    stmt = dict((label, stmt) for label, _, stmt in OPS)[op]
    gc.disable()
    timer(kinds[kind], stmt).timeit(n)


def instructions(n):
    """Instructions per operation under callgrind: each (operation, kind) runs in a worker twice,
    n and 2n times; (I(2n) - I(n)) / n less the empty loop's is one operation's count."""
    real = sys.executable  # the interpreter itself, also under a pyenv shim, or the venv's
    kinds = ["dataclass", "py_class", "C++ node", "tvm-ffi py_class"]
    try:
        import tvm_ffi  # noqa: F401
    except ImportError:
        kinds.pop()
    counts = {}
    for op, _, _ in OPS:
        for kind in kinds:
            total = []
            for reps in (n, 2 * n):
                with tempfile.TemporaryDirectory() as d:
                    out = os.path.join(d, "callgrind.out")
                    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", real]
                    cmd += [__file__, "--worker", op, kind, str(reps)]
                    subprocess.run(cmd, check=True, capture_output=True)
                    with open(out) as f:
                        total.append(
                            next(int(line.split()[1]) for line in f if line.startswith("summary:"))
                        )
            counts[(op, kind)] = (total[1] - total[0]) / n
    lines = [
        "| operation | " + " | ".join(kinds) + " | py_class / dataclass |",
        "|" + "---|" * (len(kinds) + 2),
    ]
    for op, _, _ in OPS:
        net = {
            k: counts[(op, k)] - (0 if op == "empty loop" else counts[("empty loop", k)])
            for k in kinds
        }
        ratio = "" if op == "empty loop" else f"{net['py_class'] / net['dataclass']:.2f}x"
        lines.append(f"| {op} | " + " | ".join(f"{net[k]:.0f}" for k in kinds) + f" | {ratio} |")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--instructions", action="store_true", help="count instructions under callgrind"
    )
    ap.add_argument("-n", type=int, default=20000, help="operations per worker (--instructions)")
    ap.add_argument("--worker", nargs=3, metavar=("OP", "KIND", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--sample-ms", type=float, default=20)
    ap.add_argument("--json", help="write the raw samples (ns per operation) here")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], args.worker[1], int(args.worker[2]))
    if args.instructions:
        return instructions(args.n)
    kinds, tvm_version = make_kinds()
    print(
        f"Python {platform.python_version()}, {platform.machine()}, tvm-ffi {tvm_version}; "
        f"{args.reps} repetitions of ~{args.sample_ms:g} ms samples, minimum reported, "
        "empty loop subtracted",
        file=sys.stderr,
    )
    samples = run(kinds, args.reps, args.sample_ms)
    net = report(kinds, samples)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "python": platform.python_version(),
                    "tvm_ffi": tvm_version,
                    "samples": {f"{op} | {kind}": v for (op, kind), v in samples.items()},
                    "net_ns": {f"{op} | {kind}": v for (op, kind), v in net.items()},
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
