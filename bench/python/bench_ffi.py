"""Python call overhead, side by side in one process: Ferry vs apache-tvm-ffi vs nanobind.

Operations (each library's own way of doing the same thing):

    nop()            a C++ function of no arguments returning nothing
    f(1, 2)          a typed C++ function adding two int64
    f(obj)           an untyped echo handed one of the library's objects
    f("short str")   the same echo handed a 9-character str (for nanobind: std::string -> str)
    f("abc")         the same with 3 characters: inline in Ferry's and tvm-ffi's value cells
                     (both keep strings of up to 7 bytes there), so no string object is made
    callback         C++ calling a Python callable f(i) 1e6 times (per-call cost)
    x.value          reading a reflected / bound int64 field
    f(ndarray)       a typed C++ function taking a Tensor and returning it, handed a NumPy array
                     (float32, 64 elements): the array crosses into C++ without a copy and comes
                     back as the library's Tensor object (Ferry and tvm-ffi only)
    np.from_dlpack(f(ndarray))   the same, and the Tensor handed back to NumPy through DLPack:
                     the round trip NumPy -> C++ -> NumPy
    f(ndarray).numpy()   Ferry's own way back to NumPy (tvm-ffi's Tensor has no numpy(): the
                     ratios of this row compare with tvm-ffi's np.from_dlpack(f(ndarray)))

Ferry and tvm-ffi both release the GIL around every C++ call by default, so each is measured
twice: as it comes, and with `f.release_gil = False`. nanobind keeps the GIL unless a binding
asks otherwise (nb::call_guard<nb::gil_scoped_release>()), so it too is measured twice: as it
comes, and bound with that guard ("nanobind, GIL released"; its f(obj) is then the typed echo of
the bound C++ object, since an untyped body must not touch a Python object without the GIL).
The ratios pair like with like (both release, both keep) and also give each as it comes.

Method: timeit loops (the callable bound to a local, many iterations per sample, garbage
collector off), one calibration pass to size each loop to about --sample-ms, then --reps
repetitions; within a repetition every operation is measured for all libraries back to back, in
an order that rotates from one repetition to the next, so noise on the machine hits all of them
alike. Reported: the median over the repetitions, in ns per call (loop overhead included: the
"empty loop" row shows how much that is).

Run through scripts/bench_python.sh, which builds the pieces and sets the paths:

    bench_ffi.py --ferry-testing-lib build/tests/python/ferry_testing.so \
                 --tvmffi-lib build-bench/python/native/tvmffi_bench.so \
                 [--reps 21] [--callback-reps 7] [--sample-ms 20] [--callback-n 1000000] [--json out.json]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit

# ---------------------------------------------------------------------------------------------
# The libraries.


def setup_ferry(testing_lib):
    import ferry

    ferry.load_library(testing_lib)

    @ferry.register_object("test.IntImm")
    class IntImm(ferry.Object):
        pass

    echo = ferry.get_global_func("test.echo")

    def fn(name, release_gil):
        # get_global_func returns one Function object per registration, so setting release_gil
        # on it would change both variants; a Function that crossed into C++ and back is a
        # fresh Python object for the same function.
        f = echo(ferry.get_global_func(name))
        assert f is not ferry.get_global_func(name)
        f.release_gil = release_gil
        return f

    obj = ferry.get_global_func("test.IntImm")(1)
    assert isinstance(obj, IntImm) and obj.value == 1
    out = {}
    for label, gil in (("Ferry", True), ("Ferry, GIL held", False)):
        out[label] = {
            "nop": fn("test.nop", gil),
            "add": fn("test.add", gil),
            "echo": fn("test.echo", gil),
            "echo_str": fn("test.echo", gil),
            "call_n": fn("test.call_n", gil),
            "tensor_id": fn("test.tensor_identity", gil),
            "obj": obj,
            "field": "value",
        }
    assert all(f.release_gil for k, f in out["Ferry"].items() if k in ("nop", "call_n"))
    assert not any(
        f.release_gil for k, f in out["Ferry, GIL held"].items() if k in ("nop", "call_n")
    )
    return ferry.__version__, out


def setup_tvmffi(bench_lib):
    import tvm_ffi
    import tvm_ffi.testing  # registers testing.TestIntPair's Python class

    mod = tvm_ffi.load_module(bench_lib)  # add, call_n (not among tvm-ffi's testing globals)

    def fn(f, release_gil):
        f.release_gil = release_gil
        return f

    obj = tvm_ffi.testing.TestIntPair(1, 2)
    assert obj.a == 1
    out = {}
    for label, gil in (("tvm-ffi", True), ("tvm-ffi, GIL held", False)):
        # A fresh Function object per variant, so setting release_gil on one leaves the other.
        out[label] = {
            "nop": fn(tvm_ffi.get_global_func("testing.nop"), gil),
            "add": fn(mod.get_function("add"), gil),
            "echo": fn(tvm_ffi.get_global_func("testing.echo"), gil),
            "echo_str": fn(tvm_ffi.get_global_func("testing.echo"), gil),
            "call_n": fn(mod.get_function("call_n"), gil),
            "tensor_id": fn(mod.get_function("tensor_identity"), gil),
            "obj": obj,
            "field": "a",
        }
    defaults = {"nop": tvm_ffi.get_global_func("testing.nop").release_gil}
    return tvm_ffi.__version__, out, defaults


def setup_nanobind():
    import nanobind
    import nb_bench

    obj = nb_bench.IntBox(1)
    assert obj.value == 1
    out = {
        "nanobind": {
            "nop": nb_bench.nop,
            "add": nb_bench.add,
            "echo": nb_bench.echo,
            "echo_str": nb_bench.echo_str,
            "call_n": nb_bench.call_n,
            "obj": obj,
            "field": "value",
        },
        "nanobind, GIL released": {
            "nop": nb_bench.nop_release_gil,
            "add": nb_bench.add_release_gil,
            "echo": nb_bench.echo_box_release_gil,
            "echo_str": nb_bench.echo_str_release_gil,
            "call_n": nb_bench.call_n_release_gil,
            "obj": obj,
            "field": "value",
        },
    }
    assert nb_bench.echo_box_release_gil(obj) is obj
    return nanobind.__version__, out, nb_bench


# ---------------------------------------------------------------------------------------------
# The operations: a timeit statement over locals bound in the setup.

TENSOR_SETUP = (
    "import numpy; tid = L['tensor_id']; from_dlpack = numpy.from_dlpack; "
    "a = numpy.arange(64, dtype=numpy.float32)"
)
OPS = [
    ("nop()", "nop()", "nop = L['nop']"),
    ("f(1, 2)", "add(1, 2)", "add = L['add']"),
    ("f(obj)", "echo(obj)", "echo = L['echo']; obj = L['obj']"),
    ('f("short str")', "echo_str(s)", "echo_str = L['echo_str']; s = 'short str'"),
    ('f("abc")', "echo_str(s)", "echo_str = L['echo_str']; s = 'abc'"),
    ("x.value", None, None),  # built per library: the field name differs
    ("f(ndarray)", "tid(a)", TENSOR_SETUP),
    ("np.from_dlpack(f(ndarray))", "from_dlpack(tid(a))", TENSOR_SETUP),
    ("f(ndarray).numpy()", "tid(a).numpy()", TENSOR_SETUP),
]
CALLBACK = "callback from C++ (per call)"


def _probe_array():
    import numpy

    return numpy.zeros(1, dtype=numpy.float32)


def field_stmt(name):
    return f"x.{name}", "x = L['obj']"


# What samples are timed with: wall time, or with --cpu-time this process's CPU time (on a
# shared machine, wall time also counts the time the process waited for a core).
CLOCK = [time.perf_counter]


class Sample:
    """One (operation, library) pair: a timeit.Timer sized once to about `sample_s`."""

    def __init__(self, stmt, setup, env, sample_s):
        self.timer = timeit.Timer(stmt, setup=setup, globals={"L": env}, timer=CLOCK[0])
        self.timer.timeit(1000)  # warm up
        number = 1000
        while True:
            t = self.timer.timeit(number)
            if t >= sample_s / 4 or number >= 1 << 30:
                break
            number *= 4
        self.number = max(1000, int(number * sample_s / max(t, 1e-9)))
        self.runs = []

    def run(self):
        t = self.timer.timeit(self.number)
        self.runs.append(t / self.number * 1e9)


class CallbackSample:
    def __init__(self, call_n, n):
        self.call_n = call_n
        self.n = n

        def cb(i):
            return i

        self.cb = cb
        assert call_n(cb, 1000) == 999 * 1000 // 2
        self.runs = []

    def run(self):
        call_n, cb, n = self.call_n, self.cb, self.n
        start = CLOCK[0]()
        total = call_n(cb, n)
        elapsed = CLOCK[0]() - start
        assert total == (n - 1) * n // 2
        self.runs.append(elapsed / n * 1e9)


def check(libs):
    """Each library's functions do what the benchmark says they do."""
    for label, lib in libs.items():
        assert lib["nop"]() is None, label
        assert lib["add"](1, 2) == 3, label
        echoed = lib["echo"](lib["obj"])
        assert getattr(echoed, lib["field"]) == 1, label
        assert lib["echo_str"]("short str") == "short str", label
        assert lib["echo_str"]("abc") == "abc", label
        if "tensor_id" in lib:
            import numpy

            a = numpy.arange(4, dtype=numpy.float32)
            back = numpy.from_dlpack(lib["tensor_id"](a))
            assert numpy.shares_memory(a, back), label  # zero-copy both ways
            if hasattr(lib["tensor_id"](a), "numpy"):
                assert numpy.shares_memory(a, lib["tensor_id"](a).numpy()), label


# ---------------------------------------------------------------------------------------------


def machine_notes():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            cwd=os.path.dirname(os.path.abspath(__file__)),
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "ferry_commit": commit,
    }


OWN_WAY_BACK = "f(ndarray).numpy()"


def with_own_way_back(label, med):
    """The medians of row `label`; for Ferry's f(ndarray).numpy(), the libraries without a
    numpy() method are given their own way back to NumPy (np.from_dlpack), so the ratio compares
    each library's round trip."""
    m = dict(med[label])
    if label == OWN_WAY_BACK:
        for name, v in med["np.from_dlpack(f(ndarray))"].items():
            m.setdefault(name, v)
    return m


def fmt(v):
    if v is None:
        return "—"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def ratio(a, b):
    if a is None or b is None:
        return "—"
    return f"{a / b:.2f}×"


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ferry-testing-lib", required=True)
    ap.add_argument("--tvmffi-lib", required=True)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--callback-reps", type=int, default=7)
    ap.add_argument("--sample-ms", type=float, default=20.0)
    ap.add_argument("--callback-n", type=int, default=1_000_000)
    ap.add_argument("--json", help="write every sample here")
    ap.add_argument(
        "--cpu-time", action="store_true", help="time in process CPU time instead of wall time"
    )
    args = ap.parse_args()
    if args.cpu_time:
        CLOCK[0] = time.process_time

    ferry_version, ferry_libs = setup_ferry(args.ferry_testing_lib)
    tvm_version, tvm_libs, tvm_defaults = setup_tvmffi(args.tvmffi_lib)
    nb_version, nb_libs, nb_mod = setup_nanobind()
    libs = {**ferry_libs, **tvm_libs, **nb_libs}
    names = list(libs)
    check(libs)

    sample_s = args.sample_ms / 1000
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    print(f"calibrating ({len(OPS)} operations x {len(names)} variants) ...", file=sys.stderr)
    rows = []  # (op label, {lib label: Sample})
    for label, stmt, setup in OPS:
        samples = {}
        for name in names:
            lib = libs[name]
            if stmt is None:
                if name.endswith(("GIL held", "GIL released")):
                    continue  # a field read calls no function: nothing to release
                s, st = field_stmt(lib["field"])
            else:
                s, st = stmt, setup
            if setup is TENSOR_SETUP and "tensor_id" not in lib:
                continue  # nanobind: no Tensor type of the same kind
            if stmt == "tid(a).numpy()" and not hasattr(lib["tensor_id"](_probe_array()), "numpy"):
                continue
            samples[name] = Sample(s, st, lib, sample_s)
        rows.append((label, samples))
    # Context: what the loop itself costs, and pure-Python / nanobind variants.

    def py_nop():
        pass

    class Slots:
        __slots__ = ("value",)

        def __init__(self):
            self.value = 1

    box = nb_mod.IntBox(1)
    context = [
        ("empty timeit loop", Sample("pass", "", {}, sample_s)),
        ("Python function call `f()`", Sample("f()", "f = L['f']", {"f": py_nop}, sample_s)),
        (
            "Python attribute read (`__slots__`)",
            Sample("x.value", "x = L['x']", {"x": Slots()}, sample_s),
        ),
        (
            "nanobind f(obj) typed (`IntBox*` -> existing instance)",
            Sample("f(x)", "f = L['f']; x = L['x']", {"f": nb_mod.echo_box, "x": box}, sample_s),
        ),
    ]
    callbacks = {name: CallbackSample(libs[name]["call_n"], args.callback_n) for name in names}

    print(
        f"measuring: {args.reps} repetitions, {args.callback_reps} with callbacks ...",
        file=sys.stderr,
    )
    for rep in range(args.reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for _, samples in rows:
            for name in order:
                if name in samples:
                    samples[name].run()
        for _, sample in context:
            sample.run()
        if rep < args.callback_reps:
            for name in order:
                callbacks[name].run()
    elapsed = time.perf_counter() - started
    load_after = os.getloadavg()[0]

    med = {}
    for label, samples in rows:
        med[label] = {name: statistics.median(s.runs) for name, s in samples.items()}
    med[CALLBACK] = {name: statistics.median(s.runs) for name, s in callbacks.items()}
    ctx = {label: statistics.median(s.runs) for label, s in context}

    notes = machine_notes()
    print(
        f"## Python call overhead: ns per call ({'CPU' if args.cpu_time else 'wall'} time), "
        f"median of {args.reps} repetitions "
        f"(callbacks: {args.callback_reps} x {args.callback_n:,} calls)"
    )
    print()
    print(
        f"Ferry {ferry_version} ({notes['ferry_commit']}), apache-tvm-ffi {tvm_version}, "
        f"nanobind {nb_version}; Python {notes['python']}; {notes['cpu']}, "
        f"{notes['cores']} cores; measured in {elapsed:.0f} s "
        f"(1-minute load average {load_before:.2f} before, {load_after:.2f} after)."
    )
    print()
    ratio_header = [
        "Ferry / tvm-ffi",
        "Ferry / tvm-ffi (GIL held)",
        "Ferry / nanobind (GIL released)",
        "Ferry / nanobind (GIL held)",
        "Ferry / nanobind, as shipped",
    ]

    def ratios(m):
        """Like with like: both release the GIL, both keep it; then each as it comes."""
        held = lambda lib: m.get(f"{lib}, GIL held", m.get(lib))  # noqa: E731
        released = m.get("nanobind, GIL released", m.get("nanobind"))
        return [
            ratio(m.get("Ferry"), m.get("tvm-ffi")),
            ratio(held("Ferry"), held("tvm-ffi")),
            ratio(m.get("Ferry"), released),
            ratio(held("Ferry"), m.get("nanobind")),
            ratio(m.get("Ferry"), m.get("nanobind")),
        ]

    print("| operation | " + " | ".join(names) + " |")
    print("|" + "|".join(["---"] + ["---:"] * len(names)) + "|")
    for label in list(med):
        print("| " + " | ".join([label] + [fmt(med[label].get(name)) for name in names]) + " |")
    print()
    print("Ratios (below 1: Ferry is faster):")
    print()
    print("| operation | " + " | ".join(ratio_header) + " |")
    print("|" + "|".join(["---"] + ["---:"] * len(ratio_header)) + "|")
    for label in list(med):
        print("| " + " | ".join([label] + ratios(with_own_way_back(label, med))) + " |")
    print()
    loop = ctx["empty timeit loop"]
    print(
        f"The same ratios net of the empty loop ({fmt(loop)} ns, subtracted from every timeit "
        f"row; the callback row is timed inside C++ and has no loop to subtract):"
    )
    print()
    print("| operation | " + " | ".join(ratio_header) + " |")
    print("|" + "|".join(["---"] + ["---:"] * len(ratio_header)) + "|")
    for label in list(med):
        sub = 0.0 if label == CALLBACK else loop
        m = {k: v - sub for k, v in with_own_way_back(label, med).items()}
        print("| " + " | ".join([label] + ratios(m)) + " |")
    print()
    print("Context (same run):")
    print()
    print("| reference | ns per op |")
    print("|---|---:|")
    for label, v in ctx.items():
        print(f"| {label} | {fmt(v)} |")
    print()
    print(
        f"GIL by default: Ferry releases it around C++ calls (`release_gil` per Function); "
        f"tvm-ffi too (`release_gil`={tvm_defaults['nop']}, env TVM_FFI_RELEASE_GIL_BY_DEFAULT); "
        f"nanobind keeps it unless a binding asks (`nb::call_guard<nb::gil_scoped_release>()`, "
        f'the "nanobind, GIL released" variant). Field reads call no function, so they have '
        f"one variant per library."
    )

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "notes": notes,
                    "versions": {
                        "ferry": ferry_version,
                        "apache-tvm-ffi": tvm_version,
                        "nanobind": nb_version,
                    },
                    "reps": args.reps,
                    "callback_n": args.callback_n,
                    "load_average": [load_before, load_after],
                    "medians_ns": med,
                    "context_ns": ctx,
                    "samples_ns": {
                        label: {name: s.runs for name, s in samples.items()}
                        for label, samples in rows
                    }
                    | {CALLBACK: {name: s.runs for name, s in callbacks.items()}}
                    | {"context": {label: s.runs for label, s in context}},
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
