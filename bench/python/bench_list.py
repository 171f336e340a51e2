"""ferry.List and ferry.Dict beside a Python list / dict and tvm-ffi's List / Dict, in one
process: `xs.append(1)`, `xs[5]`, `len(xs)`, `d["k"]`, `d["k"] = 2`, `"k" in d` (timeit, the
operations' medians over 7 repetitions of 2e5 calls, each statement on locals bound in the
setup). Needs ferry importable and apache-tvm-ffi installed, e.g. in the benchmark environment
of scripts/bench_python.sh:

    PYTHONPATH=python build-bench/python/venv/bin/python bench/python/bench_list.py
"""

import statistics
import timeit

import tvm_ffi

import ferry


def table(libs, ops):
    print("| operation | " + " | ".join(libs) + " |")
    print("|---|" + "---|" * len(libs))
    for op, stmt in ops:
        times = {}
        for name, obj in libs.items():
            setup = "x = L; a = getattr(L, 'append', None); n = len"
            timer = timeit.Timer(stmt, setup=setup, globals={"L": obj})
            times[name] = statistics.median(timer.timeit(200_000) / 200_000 for _ in range(7))
        base = next(iter(times.values()))
        cells = [f"{t * 1e9:.1f} ns ({t / base:.2f}x)" for t in times.values()]
        print(f"| `{op}` | " + " | ".join(cells) + " |")


def main():
    lists = {
        "list": list(range(10)),
        "ferry.List": ferry.List(range(10)),
        "tvm_ffi.List": tvm_ffi.List(list(range(10))),
    }
    table(lists, (("xs.append(1)", "a(1)"), ("xs[5]", "x[5]"), ("len(xs)", "n(x)")))
    print()
    dicts = {
        "dict": {"k": 1, "j": 2},
        "ferry.Dict": ferry.Dict({"k": 1, "j": 2}),
        "tvm_ffi.Dict": tvm_ffi.Dict({"k": 1, "j": 2}),
    }
    table(
        dicts,
        (
            ('d["k"]', 'x["k"]'),
            ('d["k"] = 2', 'x["k"] = 2'),
            ('"k" in d', '"k" in x'),
            ("len(d)", "n(x)"),
        ),
    )


if __name__ == "__main__":
    main()
