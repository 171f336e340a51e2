"""ferry.List beside a Python list and tvm-ffi's List, in one process: `xs.append(1)`, `xs[5]`,
`len(xs)` (timeit, the operations' medians over 7 repetitions of 2e5 calls, each statement on
locals bound in the setup). Needs ferry importable and apache-tvm-ffi installed, e.g. in the
benchmark environment of scripts/bench_python.sh:

    PYTHONPATH=python build-bench/python/venv/bin/python bench/python/bench_list.py
"""

import statistics
import timeit

import tvm_ffi

import ferry


def main():
    libs = {
        "list": list(range(10)),
        "ferry.List": ferry.List(range(10)),
        "tvm_ffi.List": tvm_ffi.List(list(range(10))),
    }
    ops = (("xs.append(1)", "a(1)"), ("xs[5]", "x[5]"), ("len(xs)", "n(x)"))
    print("| operation | " + " | ".join(libs) + " |")
    print("|---|" + "---|" * len(libs))
    for op, stmt in ops:
        times = {}
        for name, obj in libs.items():
            timer = timeit.Timer(stmt, setup="x = L; a = L.append; n = len", globals={"L": obj})
            times[name] = statistics.median(timer.timeit(200_000) / 200_000 for _ in range(7))
        base = times["list"]
        cells = [f"{t * 1e9:.1f} ns ({t / base:.2f}x)" for t in times.values()]
        print(f"| `{op}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
