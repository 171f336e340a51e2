"""The arith example end to end: build expressions in Python, run the C++ passes, compare by
structure, save and load, send to another process and to a Dask cluster, and let C++ call back
into Python.

Run by scripts/demo.sh (which builds libarith.so against an installed Ferry and sets
ARITH_LIBRARY); every step prints what it did. With `--jit` (`scripts/demo.sh --jit`), the
library is built by `ferry.cpp.load` from src/ and include/ instead of by CMake (cached in
~/.cache/ferry or FERRY_CACHE_DIR: the second run does not compile).
"""

import argparse
import multiprocessing
import os
import pathlib
import pickle
import time

import ferry

HERE = pathlib.Path(__file__).resolve().parent
arith = None  # imported by main() (after --jit built the library) and by the worker


def build_with_ferry_cpp():
    """--jit: libarith.so from the same sources as the CMake project, in one call."""
    import ferry.cpp

    start = time.perf_counter()
    lib = ferry.cpp.load(
        "arith",
        [HERE / "src" / "nodes_generated.cc", HERE / "src" / "passes.cc"],
        include_dirs=[HERE / "include"],
    )
    print(f"ferry.cpp.load built and loaded {lib.path} in {time.perf_counter() - start:.2f} s")
    # The arith package (and the worker processes below) load the library ARITH_LIBRARY names.
    os.environ["ARITH_LIBRARY"] = lib.path


def step(title):
    print(f"\n-- {title}")


def simplify_in_worker(expr):
    """Runs in a worker process: the expression arrived pickled (as JSON) and goes back so."""
    import arith as worker_arith

    return worker_arith.simplify(expr)


def simplify_on_dask(x, y, count=200):
    """Simplifies `count` expressions in parallel on a Dask LocalCluster of 2 worker processes.
    The workers get no set-up: the C++ pass (the registered global arith.Simplify) pickles by
    name with the library that registered it, and the workers load that library when they
    unpickle it (docs/distributed.md)."""
    step(f"simplify {count} expressions in parallel on a Dask LocalCluster (2 worker processes)")
    try:
        import distributed
    except ImportError as err:
        print(
            f"skipped: this step needs dask and distributed ({err}); scripts/setup.sh installs "
            "them, or: python -m pip install dask distributed"
        )
        return
    import logging

    exprs = [(x + 0) * (k % 5) + (y * 1 - 0) + (k * 3 + 4) for k in range(count)]
    simplify = ferry.get_global_func("arith.Simplify")  # pickles as (name, libarith's path)
    start = time.perf_counter()
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
        started = time.perf_counter()
        futures = client.map(simplify, exprs)
        distributed.wait(futures, timeout=120)
        results = client.gather(futures)
        workers = len(client.scheduler_info()["workers"])
    done = time.perf_counter()
    print(
        f"cluster up in {started - start:.1f} s; {count} tasks on {workers} workers in "
        f"{done - started:.2f} s"
    )
    print(f"e[7] = {exprs[7]}  ->  {results[7]}")
    # x and y came back as copies: free variables match by position (map_free_vars).
    same = all(
        ferry.structural_equal(r, arith.simplify(e), map_free_vars=True)
        for r, e in zip(results, exprs)
    )
    print("all equal to the local results:", same)


def main(argv=None):
    global arith
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--jit",
        action="store_true",
        help="build libarith.so with ferry.cpp.load instead of using ARITH_LIBRARY",
    )
    args = parser.parse_args(argv)
    if args.jit:
        step("build libarith.so with ferry.cpp.load (no CMake)")
        build_with_ferry_cpp()
    import arith as arith_module

    arith = arith_module

    step("build expressions with Python operators (each node is a C++ object)")
    x, y = arith.var("x"), arith.var("y")
    e = (x + 0) * (y + 3 * 4) + arith.minimum(x, x)
    print("e          =", e)
    print("type(e)    =", type(e).__name__, "| e.a.b.b =", e.a.b.b, "| dtype", e.dtype)

    step("run the C++ passes")
    s = arith.simplify(e)
    print("simplify   =", s)
    print("free vars  =", [v.name_hint for v in arith.free_vars(e)])
    sub = arith.substitute(s, {y: 1})
    print("y := 1     =", sub, "->", arith.simplify(sub))
    print("evaluate   =", arith.evaluate(e, {x: 2, y: 5}), "at x=2, y=5")
    print("let        =", arith.let(x, 4, x * y), "->", arith.simplify(arith.let(x, 4, x * y)))

    step("structural equality, up to the renaming of bound variables")
    a, b = arith.var("a"), arith.var("b")
    f1 = arith.function([a], a * 2 + 1)
    f2 = arith.function([b], b * 2 + 1)
    print(f"{f1}  vs  {f2}")
    print(
        "same object?",
        f1.same_as(f2),
        "| structurally equal?",
        ferry.structural_equal(f1, f2),
        "| equal hashes?",
        ferry.structural_hash(f1) == ferry.structural_hash(f2),
    )
    print(
        "x + 1 vs y + 1 (free):",
        ferry.structural_equal(x + 1, y + 1),
        "| with map_free_vars:",
        ferry.structural_equal(x + 1, y + 1, map_free_vars=True),
    )

    step("JSON round trip (sharing kept: both operands of x*x stay one node)")
    sq = x * x
    text = ferry.save_json(sq)
    back = ferry.load_json(text)
    print(
        f"{len(text)} bytes; loaded {back}; operands shared: {back.a.same_as(back.b)}; "
        f"equal: {ferry.structural_equal(sq, back, map_free_vars=True)}"
    )

    step("pickle to a multiprocessing worker, simplify there, and back")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        result = pool.apply(simplify_in_worker, (e,))
    print(
        "worker returned",
        result,
        "| equal to the local result:",
        ferry.structural_equal(result, s, map_free_vars=True),
    )
    print("pickle size:", len(pickle.dumps(e)), "bytes")

    simplify_on_dask(x, y)

    step("a Python callback inside a C++ pass")
    counts = {}
    arith.post_order_visit(
        e, lambda n: counts.__setitem__(type(n).__name__, counts.get(type(n).__name__, 0) + 1)
    )
    print("C++ visited:", dict(sorted(counts.items())))
    doubled = arith.transform(s, lambda n: n * 2 if isinstance(n, arith.Var) else None)
    print("transform (each variable v becomes v*2):", doubled)

    step("errors cross back with their kind")
    try:
        arith.evaluate(x + y, {x: 1})
    except KeyError as err:
        print("KeyError from C++:", err)
    try:
        arith.evaluate(arith.floordiv(x, 0), {x: 1})
    except ZeroDivisionError as err:
        print("ZeroDivisionError from C++:", err)
    print("\ndone.")


if __name__ == "__main__":
    main()
