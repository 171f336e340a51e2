"""Ferry across processes, measured side by side in one run (results and method in
docs/benchmarks.md, "Across processes: pickles and Dask (issue 22)"):

1. a balanced tree of 99,999 nodes of the tree library (tests/python/support/pickle_module.cc):
   pickle.dumps / pickle.loads with the library record (the default) and without it
   (FERRY_PICKLE_LIBRARIES=0), against save_json / load_json of the same tree; and a core-only
   tree of as many nodes (nested ferry.Array) to show that its pickle carries no record;
2. a Dask distributed.LocalCluster (2 worker processes, 1 thread each): client.map of 1,000
   small tasks (the sum of a 15-node tree) over Ferry trees against the same tasks over nested
   Python tuples, wall time from map to gather, as a time per task.

Needs the in-tree build (scripts/test.sh builds build/tests/python/ferry_pickle_ptest.so) and
dask + distributed (scripts/setup.sh):

    PYTHONPATH=python:tests/python python3 bench/python/bench_distributed.py [--reps 5]
"""

import argparse
import logging
import os
import pickle
import statistics
import sys
import time

import ferry

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "python"))
import dist_support  # the tree library's path; loads nothing by itself


def core_tree(count):
    """A balanced tree of nested two-element ferry.Arrays with `count` leaves (ints)."""
    level = list(range(count))
    while len(level) > 1:
        level = [
            ferry.Array(level[k : k + 2]) if k + 1 < len(level) else level[k]
            for k in range(0, len(level), 2)
        ]
    return level[0]


def _with_switch(value, fn):
    """fn() with FERRY_PICKLE_LIBRARIES set to `value` (None: unset, the default)."""
    old = os.environ.pop("FERRY_PICKLE_LIBRARIES", None)
    if value is not None:
        os.environ["FERRY_PICKLE_LIBRARIES"] = value
    try:
        return fn()
    finally:
        os.environ.pop("FERRY_PICKLE_LIBRARIES", None)
        if old is not None:
            os.environ["FERRY_PICKLE_LIBRARIES"] = old


def bench_pickles(reps):
    balanced = dist_support.load_tree_library()
    tree = balanced(50_000)  # 99,999 nodes
    core = core_tree(50_000)  # 49,999 Arrays + 50,000 int leaves
    text = ferry.save_json(tree)
    core_text = ferry.save_json(core)
    data = pickle.dumps(tree, protocol=5)
    data0 = _with_switch("0", lambda: pickle.dumps(tree, protocol=5))
    cdata = pickle.dumps(core, protocol=5)
    assert ferry.structural_equal(pickle.loads(data), tree)
    ops = {  # name: (bytes, write, read); every repetition runs each once
        "save_json / load_json": (
            len(text),
            lambda: ferry.save_json(tree),
            lambda: ferry.load_json(text),
        ),
        "pickle, with the library record": (
            len(data),
            lambda: pickle.dumps(tree, protocol=5),
            lambda: pickle.loads(data),
        ),
        "pickle, FERRY_PICKLE_LIBRARIES=0": (
            len(data0),
            lambda: _with_switch("0", lambda: pickle.dumps(tree, protocol=5)),
            lambda: _with_switch("0", lambda: pickle.loads(data0)),
        ),
        "the scan for library records alone": (
            None,
            lambda: ferry._core._json_libraries(text),
            None,
        ),
        "core-only tree (nested Array): save_json / load_json": (
            len(core_text),
            lambda: ferry.save_json(core),
            lambda: ferry.load_json(core_text),
        ),
        "core-only tree: pickle (no record)": (
            len(cdata),
            lambda: pickle.dumps(core, protocol=5),
            lambda: pickle.loads(cdata),
        ),
    }
    samples = {name: ([], []) for name in ops}
    names = list(ops)
    for rep in range(reps):
        # The order rotates: what runs after a large free pays the allocator (page faults),
        # which would otherwise always charge the same row.
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            _, write, read = ops[name]
            for fn, out in ((write, samples[name][0]), (read, samples[name][1])):
                if fn is not None:
                    start = time.perf_counter()
                    fn()
                    out.append(time.perf_counter() - start)
    med = {
        name: [statistics.median(s) if s else None for s in pair] for name, pair in samples.items()
    }

    print(f"\nTree of {2 * 50_000 - 1:,} nodes ({reps} repetitions, medians)\n")
    print("| what | bytes | write | read | write, read vs JSON |")
    print("|---|---:|---:|---:|---:|")
    for name, (size, _, _) in ops.items():
        base = med[
            "core-only tree (nested Array): save_json / load_json"
            if name.startswith("core-only")
            else "save_json / load_json"
        ]
        write, read = med[name]
        cells = [
            f"{size:,}" if size is not None else "—",
            f"{write * 1e3:.1f} ms",
            f"{read * 1e3:.1f} ms" if read is not None else "—",
        ]
        ratio = f"{write / base[0]:.2f}x" + (f", {read / base[1]:.2f}x" if read else "")
        print(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")
    print(
        f"\nrecord: {len(data) - len(data0)} bytes; pickle minus JSON: "
        f"{len(data0) - len(text)} bytes (no record), {len(cdata) - len(core_text)} (core)"
    )


def tuple_tree(first, count):
    if count <= 1:
        return first
    half = count // 2
    return (tuple_tree(first, half), tuple_tree(first + half, count - half))


def tree_total(tree):
    """The task: the sum of a tree's leaves (a Ferry tree through the C++ pass ptest.sum, a
    tuple tree in Python)."""
    if isinstance(tree, tuple):
        return sum(tree_total(t) for t in tree)
    if isinstance(tree, int):
        return tree
    return ferry.get_global_func("ptest.sum")(tree)


def bench_dask(reps, tasks=1000):
    import distributed

    balanced = dist_support.load_tree_library()
    ferry_trees = [balanced(8) for _ in range(tasks)]  # 15 nodes each, distinct objects
    tuple_trees = [tuple_tree(0, 8) for _ in range(tasks)]
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2, timeout=120)

        def run(trees):
            futures = client.map(tree_total, trees, pure=False)
            distributed.wait(futures, timeout=300)
            results = client.gather(futures)
            assert results == [28] * len(trees)
            del futures

        run(ferry_trees[:100])  # warm-up: the workers load the library, import, connect
        run(tuple_trees[:100])
        samples = {"ferry": [], "tuple": []}
        for _ in range(reps):  # alternated, so both see the same machine
            for name, trees in (("tuple", tuple_trees), ("ferry", ferry_trees)):
                start = time.perf_counter()
                run(trees)
                samples[name].append(time.perf_counter() - start)
    t_tuple = statistics.median(samples["tuple"])
    t_ferry = statistics.median(samples["ferry"])
    one = pickle.dumps(ferry_trees[0], protocol=5)
    print(f"\nDask map of {tasks:,} tasks, 2 worker processes ({reps} repetitions, medians)\n")
    print("| tasks over | total | per task | vs tuples |")
    print("|---|---:|---:|---:|")
    print(
        f"| nested Python tuples (15 nodes) | {t_tuple * 1e3:.0f} ms | "
        f"{t_tuple / tasks * 1e6:.0f} µs | 1.00x |"
    )
    print(
        f"| Ferry trees (15 nodes, C++ pass) | {t_ferry * 1e3:.0f} ms | "
        f"{t_ferry / tasks * 1e6:.0f} µs | {t_ferry / t_tuple:.2f}x |"
    )
    print(
        f"\nFerry minus tuples: {(t_ferry - t_tuple) / tasks * 1e6:.0f} µs per task; one "
        f"Ferry tree pickles to {len(one)} bytes, a tuple tree to "
        f"{len(pickle.dumps(tuple_trees[0], protocol=5))}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--skip-dask", action="store_true")
    args = parser.parse_args()
    bench_pickles(args.reps)
    if not args.skip_dask:
        bench_dask(args.reps)


if __name__ == "__main__":
    main()
