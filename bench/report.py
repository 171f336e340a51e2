"""Prints the benchmark results as Markdown tables, pairing each Ferry benchmark with its floor
by name: BM_Ferry_X is compared with BM_Floor_X from the same run.

    python3 bench/report.py build-bench/results/bench_*.json
        the median of the repetitions of each benchmark, its coefficient of variation, and
        the ratio Ferry / floor of the medians (Google Benchmark JSON with aggregates)
    python3 bench/report.py --callgrind N annotate.txt [order.txt]
        instructions per operation from `callgrind_annotate --inclusive=yes --threshold=100`
        of callgrind_ops run with N iterations: the inclusive count of Loop<Op> divided by N;
        order.txt (what callgrind_ops printed) lists the operations in program order. A line
        "Op K" there (callgrind_walks: K nodes per operation) divides Op's count by K as well
"""

import json
import re
import sys


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
    return f"{b['real_time']:.3g} {b['time_unit']}"


def fmt_cv(aggs):
    cv = aggs.get("cv")
    return f"{100 * cv['real_time']:.1f}%" if cv else ""


def report_json(paths):
    print("| benchmark | Ferry median | cv | floor median | cv | ratio | per item |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        results = load_aggregates(path)
        for name, aggs in results.items():
            if not name.startswith("BM_Ferry_") or "median" not in aggs:
                continue
            med = aggs["median"]
            floor_aggs = results.get(name.replace("BM_Ferry_", "BM_Floor_"), {})
            floor = floor_aggs.get("median")
            ratio = ""
            if floor and floor["time_unit"] == med["time_unit"] and floor["real_time"] > 0:
                ratio = f"{med['real_time'] / floor['real_time']:.2f}x"
            extra = []
            if med.get("items_per_second"):
                extra.append(f"{1e9 / med['items_per_second']:.1f} ns/item")
            if med.get("bytes_per_second"):
                extra.append(f"{med['bytes_per_second'] / 1e6:.0f} MB/s")
            print(
                f"| {name[len('BM_Ferry_') :]} | {fmt_time(med)} | {fmt_cv(aggs)} | "
                f"{fmt_time(floor) if floor else ''} | {fmt_cv(floor_aggs)} | {ratio} | "
                f"{', '.join(extra)} |"
            )


LOOP = re.compile(r"^\s*([\d,]+)\s.*Loop<ferry_bench::(\w+)>")


def report_callgrind(n, path, order_path=None):
    counts = {}
    with open(path) as f:
        for line in f:
            m = LOOP.match(line)
            if m:
                counts[m.group(2)] = int(m.group(1).replace(",", "")) / n
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
    print("| operation | Ferry Ir/op | floor Ir/op | ratio |")
    print("|---|---|---|---|")
    for op, ir in counts.items():
        if not op.startswith("Ferry_"):
            continue
        x = op[len("Ferry_") :]
        floor = counts.get("Floor_" + x)
        ratio = f"{ir / floor:.2f}x" if floor else ""
        floor_text = f"{floor:.0f}" if floor is not None else ""
        print(f"| {x} | {ir:.0f} | {floor_text} | {ratio} |")


def main(argv):
    if len(argv) in (3, 4) and argv[0] == "--callgrind":
        report_callgrind(int(argv[1]), *argv[2:])
    elif argv and not argv[0].startswith("-"):
        report_json(argv)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
