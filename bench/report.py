"""Prints the benchmark results as Markdown tables, pairing each Ferry benchmark with its floor
and its peer by name: BM_Ferry_X is compared with BM_Floor_X and BM_TvmFfi_X (apache-tvm-ffi)
from the same run. Without any BM_TvmFfi_ row (a build without the peer) the tvm-ffi columns
are left out and a note says so.

    python3 bench/report.py build-bench/results/bench_*.json
        the median of the repetitions of each benchmark, its coefficient of variation, and
        the ratios Ferry / floor and Ferry / tvm-ffi of the medians (Google Benchmark JSON with
        aggregates), in wall-clock time
    python3 bench/report.py --cpu build-bench/results/bench_*.json
        the same in CPU time, which leaves out the time the thread was not running: the better
        measure on a machine loaded beyond its cores
    python3 bench/report.py --callgrind N annotate.txt [order.txt]
        instructions per operation from `callgrind_annotate --inclusive=yes --threshold=100`
        of callgrind_ops run with N iterations: the inclusive count of Loop<Op> divided by N;
        order.txt (what callgrind_ops printed) lists the operations in program order. A line
        "Op K" there (callgrind_walks: K nodes per operation) divides Op's count by K as well
"""

import json
import os
import re
import sys

# The time a table uses: "real_time" (wall clock) or "cpu_time" (--cpu).
TIME = "real_time"


def load_aggregates(path):
    """{run_name: {aggregate_name: benchmark}} from one Google Benchmark JSON file."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "aggregate":
            continue
        out.setdefault(b["run_name"], {})[b["aggregate_name"]] = b
    return out


def fmt_time(b):
    return f"{b[TIME]:.3g} {b['time_unit']}"


def fmt_cv(aggs):
    cv = aggs.get("cv")
    return f"{100 * cv[TIME]:.1f}%" if cv else ""


def ratio_text(a, b):
    """a / b of two medians as "1.23x", or "" when b is missing or in other units."""
    if not a or not b or a["time_unit"] != b["time_unit"] or b[TIME] <= 0:
        return ""
    return f"{a[TIME] / b[TIME]:.2f}x"


NO_PEER_NOTE = (
    "No tvm-ffi rows in these results: the programs were built without apache-tvm-ffi "
    "(scripts/bench.sh --no-peer, or its wheel could not be installed)."
)


def level_suffix(path, paths):
    """ " (-O3)" for a program built at -O3 (bench_X_O3.json), " (-O2)" for its -O2 twin
    (bench_X.json when bench_X_O3.json is among `paths`), "" otherwise."""
    stem = os.path.basename(path).removesuffix(".json")
    if stem.endswith("_O3"):
        return " (-O3)"
    stems = {os.path.basename(p).removesuffix(".json") for p in paths}
    return " (-O2)" if stem + "_O3" in stems else ""


def report_json(paths):
    all_results = [load_aggregates(path) for path in paths]
    suffixes = [level_suffix(path, paths) for path in paths]
    peer = any(name.startswith("BM_TvmFfi_") for r in all_results for name in r)
    if peer:
        print(
            "| benchmark | Ferry median | cv | floor median | cv | tvm-ffi median | cv "
            "| Ferry / floor | Ferry / tvm-ffi | per item |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
    else:
        print("| benchmark | Ferry median | cv | floor median | cv | ratio | per item |")
        print("|---|---|---|---|---|---|---|")
    for results, suffix in zip(all_results, suffixes):
        for name, aggs in results.items():
            if not name.startswith("BM_Ferry_") or "median" not in aggs:
                continue
            med = aggs["median"]
            floor_aggs = results.get(name.replace("BM_Ferry_", "BM_Floor_"), {})
            floor = floor_aggs.get("median")
            peer_aggs = results.get(name.replace("BM_Ferry_", "BM_TvmFfi_"), {})
            peer_med = peer_aggs.get("median")
            extra = []
            if med.get("items_per_second"):
                extra.append(f"{1e9 / med['items_per_second']:.1f} ns/item")
            if med.get("bytes_per_second"):
                extra.append(f"{med['bytes_per_second'] / 1e6:.0f} MB/s")
            cells = [
                name[len("BM_Ferry_") :] + suffix,
                fmt_time(med),
                fmt_cv(aggs),
                fmt_time(floor) if floor else "",
                fmt_cv(floor_aggs),
            ]
            if peer:
                cells += [fmt_time(peer_med) if peer_med else "", fmt_cv(peer_aggs)]
            cells.append(ratio_text(med, floor))
            if peer:
                cells.append(ratio_text(med, peer_med))
            cells.append(", ".join(extra))
            print("| " + " | ".join(cells) + " |")
    if not peer:
        print()
        print(NO_PEER_NOTE)


LOOP = re.compile(r"^\s*([\d,]+)\s.*Loop<ferry_bench::(\w+)>")


def report_callgrind(n, path, order_path=None):
    counts = {}
    with open(path) as f:
        for line in f:
            m = LOOP.match(line)
            if m:
                # On a -g build the inlined lines of Loop<Op> from headers come as more lines
                # of the same function with a file:line prefix; the whole function's line is
                # the largest.
                ir = int(m.group(1).replace(",", "")) / n
                counts[m.group(2)] = max(ir, counts.get(m.group(2), 0))
    if order_path:
        order = []
        with open(order_path) as f:
            for line in f:
                words = line.split()
                if words and words[0] in counts:
                    order.append(words[0])
                    if len(words) == 2:
                        counts[words[0]] /= int(words[1])
        counts = {op: counts[op] for op in order}
    peer = any(op.startswith("TvmFfi_") for op in counts)
    if peer:
        print(
            "| operation | Ferry Ir/op | floor Ir/op | tvm-ffi Ir/op "
            "| Ferry / floor | Ferry / tvm-ffi |"
        )
        print("|---|---|---|---|---|---|")
    else:
        print("| operation | Ferry Ir/op | floor Ir/op | ratio |")
        print("|---|---|---|---|")
    for op, ir in counts.items():
        if not op.startswith("Ferry_"):
            continue
        x = op[len("Ferry_") :]
        cells = [x, f"{ir:.0f}"]
        others = [counts.get("Floor_" + x)]
        if peer:
            others.append(counts.get("TvmFfi_" + x))
        cells += [f"{other:.0f}" if other is not None else "" for other in others]
        cells += [f"{ir / other:.2f}x" if other else "" for other in others]
        print("| " + " | ".join(cells) + " |")
    if not peer:
        print()
        print(NO_PEER_NOTE)


def main(argv):
    global TIME
    if argv and argv[0] == "--cpu":
        TIME = "cpu_time"
        argv = argv[1:]
    if len(argv) in (3, 4) and argv[0] == "--callgrind":
        report_callgrind(int(argv[1]), *argv[2:])
    elif argv and not argv[0].startswith("-"):
        report_json(argv)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
