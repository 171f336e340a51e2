"""Prints a Markdown table from Google Benchmark JSON files: the median time of each benchmark
and, for BM_Ferry_X, its ratio to BM_Floor_X measured in the same run."""
import json
import sys


def medians(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        out[name] = (b["real_time"], b["time_unit"], b.get("bytes_per_second"),
                     b.get("items_per_second"))
    return out


def main(paths):
    print("| benchmark | median | floor | ratio | throughput |")
    print("|---|---|---|---|---|")
    for path in paths:
        results = medians(path)
        for name, (time, unit, bps, ips) in results.items():
            if name.startswith("BM_Floor_"):
                continue
            floor = results.get(name.replace("BM_Ferry_", "BM_Floor_"))
            floor_text = f"{floor[0]:.2f} {floor[1]}" if floor else ""
            ratio = f"{time / floor[0]:.2f}x" if floor else ""
            extra = []
            if bps:
                extra.append(f"{bps / 1e6:.0f} MB/s")
            if ips:
                extra.append(f"{1e9 / ips:.1f} ns/item")
            print(f"| {name[3:]} | {time:.2f} {unit} | {floor_text} | {ratio} | "
                  f"{', '.join(extra)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
