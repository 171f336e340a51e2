"""Before/after: two builds of Ferry, each beside nanobind, measured alternately in one run.

A change to the call path is measured against the sources before it: each build tree (its
ferry._core and test-support library; FERRY_BUILD_DIR selects the one `import ferry` takes) runs
in a process of its own, the processes alternate round by round, and each process times Ferry's
and nanobind's operations back to back (bench_ffi's samples, rotating order, timed in process
CPU time and the fastest of --reps kept), so that load on the machine hits both alike. Reported
per build: the median over the rounds of ns per call and of the ratio Ferry / nanobind, like with like (GIL held with nanobind as shipped, GIL released with
nanobind + gil_scoped_release).

    compare_builds.py --build before=build-before --build after=build [--rounds 7] [--reps 5]

The benchmark's environment (nanobind's module on PYTHONPATH) is scripts/bench_python.sh's; run
through it by hand:
    PYTHONPATH=python:build-bench/python/native build-bench/python/venv/bin/python \\
        bench/python/compare_builds.py --build before=<tree> --build after=build
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import bench_ffi

# Half of f("short str"): taking the str, not returning one (Ferry's nop ignores its argument;
# nanobind's take_str converts it into a std::string and returns its size), to see where a
# string's time goes.
TAKE = 'take a str: f("short str")'

OPS = ["nop()", "f(1, 2)", 'f("short str")', 'f("abc")', TAKE]
PAIRS = [("Ferry, GIL held", "nanobind"), ("Ferry", "nanobind, GIL released")]


def worker(build, reps, sample_ms):
    # Samples are timed in this process's CPU time, not wall time: on a shared machine a sample
    # during which the process waited for a core is not counted as slower.
    bench_ffi.CLOCK[0] = time.process_time
    _, ferry_libs = bench_ffi.setup_ferry(os.path.join(build, "tests/python/ferry_testing.so"))
    _, nb_libs, nb_mod = bench_ffi.setup_nanobind()
    libs = {**ferry_libs, **nb_libs}
    for name, lib in libs.items():
        if name.startswith("Ferry"):
            lib["take_str"] = lib["nop"]
        else:
            lib["take_str"] = nb_mod.take_str_release_gil if "released" in name else nb_mod.take_str
    assert nb_mod.take_str("short str") == nb_mod.take_str_release_gil("short str") == 9
    samples = []
    ops = bench_ffi.OPS + [(TAKE, "take(s)", "take = L['take_str']; s = 'short str'")]
    for label, stmt, setup in ops:
        if label in OPS:
            for name in (n for pair in PAIRS for n in pair):
                sample = bench_ffi.Sample(stmt, setup, libs[name], sample_ms / 1000)
                samples.append((label, name, sample))
    for rep in range(reps):
        k = rep % len(samples)
        for _, _, sample in samples[k:] + samples[:k]:
            sample.run()
    out = {}
    for label, name, sample in samples:
        out.setdefault(label, {})[name] = min(sample.runs)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--build", action="append", default=[], help="NAME=BUILD_TREE")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sample-ms", type=float, default=20.0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.reps, args.sample_ms)
        return
    if len(args.build) < 2:
        ap.error("give two or more --build NAME=BUILD_TREE")

    builds = [b.split("=", 1) for b in args.build]
    results = {name: [] for name, _ in builds}
    load_before = os.getloadavg()[0]
    for r in range(args.rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for name, tree in order:
            env = dict(os.environ, FERRY_BUILD_DIR=os.path.abspath(tree))
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", os.path.abspath(tree)]
            cmd += ["--reps", str(args.reps), "--sample-ms", str(args.sample_ms)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            results[name].append(json.loads(out))
            print(f"round {r + 1}/{args.rounds}: {name}", file=sys.stderr)
    load_after = os.getloadavg()[0]

    print(
        f"## Before/after: median of {args.rounds} alternating rounds "
        f"(load average {load_before:.1f} before, {load_after:.1f} after)\n"
    )
    head = "| operation | " + " | ".join(
        f"{name}: {f} / {n}" for name, _ in builds for f, n in PAIRS
    )
    print(head + " |")
    print("|---|" + "---:|" * (len(builds) * len(PAIRS)))
    for op in OPS:
        cells = []
        for name, _ in builds:
            for f, n in PAIRS:
                ratios = [run[op][f] / run[op][n] for run in results[name]]
                ns = statistics.median(run[op][f] for run in results[name])
                nb = statistics.median(run[op][n] for run in results[name])
                cells.append(f"{ns:.1f} / {nb:.1f} ns = {statistics.median(ratios):.2f}×")
        print(f"| {op} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
