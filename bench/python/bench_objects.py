"""Objects from Python, side by side in one process: field reads on a class registered with
register_object and on a class made on first sight (no registration), field writes of a mutable
type, and pickling a 1e5-node Array, each beside its plain-Python counterpart.

    x.value (registered)      an int64 field of test.IntImm, whose class is registered
    x.value (made on sight)   an int64 field of test.Counted, which has no registered class
    x.value (__slots__)       a plain Python class with __slots__: the floor of an attribute read
    m.count = 5 (mutable)     writing an int64 field of test.Mutable (_type_mutable)
    x.value = 5 (__slots__)   the same on the plain Python class
    xs.append(1), xs[5]       ferry.List beside a Python list (a bound method, append only grows)
    pickle Array(1e5)         pickle.loads(pickle.dumps(a)) of an Array of 1e5 IntImm nodes, half
                              of them shared (one JSON document for the whole array)
    save/load_json Array(1e5) the same through save_json / load_json directly
    pickle list(1e5)          a Python list of 1e5 tuples (int, str) through pickle

Method: timeit loops (garbage collector off), each sized by one calibration pass to about
--sample-ms, then --reps repetitions with the operations in an order that rotates from one
repetition to the next; the median per operation. Run from the repository root after a build:

    PYTHONPATH=python python3 bench/python/bench_objects.py \
        --ferry-testing-lib build/tests/python/ferry_testing.so [--reps 11]
"""

import argparse
import pickle
import statistics
import timeit


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ferry-testing-lib", required=True)
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--sample-ms", type=float, default=20)
    args = parser.parse_args()

    import ferry

    ferry.load_library(args.ferry_testing_lib)

    @ferry.register_object("test.IntImm")
    class IntImm(ferry.Object):
        pass

    registered = ferry.get_global_func("test.IntImm")(7)
    made = ferry.get_global_func("test.Counted")(7)
    assert type(made).__module__ == "ferry.auto", "test.Counted must have no registered class"
    mutable = ferry.make_node("test.Mutable", count=0, small=0, label="", expr=None, items=[])

    class Slots:
        __slots__ = ("value",)

        def __init__(self):
            self.value = 7

    make = ferry.get_global_func("test.IntImm")
    shared = [make(i) for i in range(50_000)]
    array = ferry.Array(shared + shared)
    plain = [(i, "x") for i in range(100_000)]
    save, load = ferry.save_json, ferry.load_json
    env = {
        "fl": ferry.List(range(10)),
        "pl": list(range(10)),
        "r": registered,
        "m": made,
        "w": mutable,
        "s": Slots(),
        "a": array,
        "p": plain,
        "pickle": pickle,
        "save": save,
        "load": load,
    }
    # Each statement reads a local `x` bound in the setup, so no row pays a globals lookup.
    ops = [
        ("x.value (registered class)", "x.value", "r", "x.value (__slots__)"),
        ("x.value (class made on first sight)", "x.value", "m", "x.value (__slots__)"),
        ("x.value (__slots__)", "x.value", "s", None),
        ("m.count = 5 (mutable field)", "x.count = 5", "w", "x.value = 5 (__slots__)"),
        ("x.value = 5 (__slots__)", "x.value = 5", "s", None),
        (
            "pickle round trip, Array of 1e5 nodes",
            "pickle.loads(pickle.dumps(x))",
            "a",
            "pickle round trip, list of 1e5 tuples",
        ),
        (
            "save_json/load_json, Array of 1e5 nodes",
            "load(save(x))",
            "a",
            "pickle round trip, list of 1e5 tuples",
        ),
        ("pickle round trip, list of 1e5 tuples", "pickle.loads(pickle.dumps(x))", "p", None),
        ("xs.append(1), ferry.List", "x(1)", "fl.append", "xs.append(1), list"),
        ("xs.append(1), list", "x(1)", "pl.append", None),
        ("xs[5], ferry.List", "x[5]", "fl", "xs[5], list"),
        ("xs[5], list", "x[5]", "pl", None),
    ]
    timers = {
        name: timeit.Timer(stmt, setup=f"x = {var}", globals=env) for name, stmt, var, _ in ops
    }
    numbers = {}
    for name, timer in timers.items():
        n, t = 1, 0.0
        while t < args.sample_ms / 1000:
            n *= 2
            t = timer.timeit(n)
        numbers[name] = n
    samples = {name: [] for name in timers}
    names = list(timers)
    for rep in range(args.reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            samples[name].append(timers[name].timeit(numbers[name]) / numbers[name])
    median = {name: statistics.median(v) for name, v in samples.items()}
    print("| operation | time | ratio to |")
    print("|---|---|---|")
    for name, _, _, base in ops:
        t = median[name]
        shown = f"{t * 1e9:.1f} ns" if t < 1e-5 else f"{t * 1e3:.1f} ms"
        rel = f"{t / median[base]:.2f}x {base}" if base else ""
        print(f"| {name} | {shown} | {rel} |")
    ratio = median["x.value (class made on first sight)"] / median["x.value (registered class)"]
    print(f"\nfield read, class made on first sight / registered class: {ratio:.3f}")


if __name__ == "__main__":
    main()
