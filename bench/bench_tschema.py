"""Times `tschema generate` and `tschema check` on a 1,000-node schema (target: <= 1 s each).

What is timed: the whole command as a user runs it, `python -m ferry.tschema ...` in a fresh
process (interpreter start, `import ferry`, importing the schema, validation, generation,
diffing, writing), best of N runs, in two layouts of the same schema:

  whole     --header, --source, --python (and .pyi) written as whole files
  in-place  one header with 1,000 `// tschema:` regions (100 with custom blocks), a scanned
            .cc with the registrations, and --python

For each layout: `generate` into an empty directory (writes every file), `generate` again
(nothing changes, nothing is written), and `check` (up to date). The in-process time of the
same work (no interpreter start) is printed too.

    PYTHONPATH=python python3 bench/bench_tschema.py [--runs 5] [--nodes 1000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TYPES = [
    "ty.int64_t",
    "ty.double",
    "ty.String",
    "ty.DataType",
    "ty.Array[ExprNode]",
    "ty.Optional[ExprNode]",
    "ty.Map[ty.String, ExprNode]",
    "ty.bool",
    "ExprNode",
]


def make_schema(n: int, custom_reducers: bool) -> str:
    """ExprNode, 10 groups, and leaves up to `n` nodes, 1-4 fields each; with
    `custom_reducers`, every tenth leaf turns the default reducers off (in-place layout)."""
    out = [
        '"""A generated schema of %d nodes."""' % n,
        "",
        "from ferry.tschema import Object, declare, ty",
        "",
        "",
        "@declare",
        "class ExprNode(Object):",
        '    """The root."""',
        "",
        '    type_key = "bench.Expr"',
        '    namespace = "bench"',
        "",
    ]
    groups = 10
    for g in range(groups):
        out += [
            "",
            "@declare",
            f"class Group{g}Node(ExprNode):",
            f'    """Group {g}.',
            "",
            "    Attributes",
            "    ----------",
            "    span",
            '        Where it comes from."""',
            "",
            f'    type_key = "bench.Group{g}"',
            '    span: ty.ObjectRef = ty.field(structural="ignore")',
            "",
        ]
    for i in range(n - 1 - groups):
        g = i % groups
        fields = [(f"f{j}", TYPES[(i + j) % len(TYPES)]) for j in range(1 + i % 4)]
        custom = custom_reducers and i % 10 == 0
        out += [
            "",
            "@declare",
            f"class Leaf{i}Node(Group{g}Node):",
            f'    """Leaf {i}.',
            "",
            "    Attributes",
            "    ----------",
        ]
        for name, _ in fields:
            out += [f"    {name}", f"        Field {name} of leaf {i}."]
        out += ['    """', "", f'    type_key = "bench.Leaf{i}"']
        if custom:
            out += ["    default_sequal_reduce = False", "    default_shash_reduce = False"]
        out += [f"    {name}: {t}" for name, t in fields] + [""]
    return "\n".join(out) + "\n"


def make_inplace(n: int) -> tuple:
    groups = 10
    names = (
        ["ExprNode"]
        + [f"Group{g}Node" for g in range(groups)]
        + [f"Leaf{i}Node" for i in range(n - 1 - groups)]
    )
    header = [
        "// Hand-written header with tschema regions.",
        "#include <ferry/ferry.h>",
        "",
        "namespace bench {",
        "",
    ]
    for name in names:
        header.append(f"// tschema: {name}")
        if name.startswith("Leaf") and int(name[4:-4]) % 10 == 0:
            header += [
                "  // tschema: custom-begin",
                f"  bool SEqualReduce(const {name}*, ::ferry::SEqualReducer) const {{",
                "    return true;",
                "  }",
                "  void SHashReduce(::ferry::SHashReducer) const {}",
                "  // tschema: custom-end",
            ]
        header += ["// tschema: end", ""]
    header += ["}  // namespace bench", ""]
    cc = (
        ['#include "nodes.h"', "", "namespace bench {"]
        + [f"FERRY_REGISTER_NODE_TYPE({name});" for name in names]
        + ["}", ""]
    )
    return "\n".join(header), "\n".join(cc)


def best(times):
    return min(times), statistics.median(times)


def timed(cmd, env, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{r.stdout}{r.stderr}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "python"))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(REPO / "python")]
            + ([os.environ["PYTHONPATH"]] if "PYTHONPATH" in os.environ else [])
        ),
    )
    from ferry.tschema import driver

    root = Path(tempfile.mkdtemp(prefix="bench_tschema_"))
    try:
        (root / "whole").mkdir()
        (root / "in-place").mkdir()
        (root / "whole" / "schema.py").write_text(make_schema(args.nodes, False))
        (root / "in-place" / "schema.py").write_text(make_schema(args.nodes, True))
        header, cc = make_inplace(args.nodes)
        layouts = {
            "whole": lambda d: [
                "--header",
                d / "nodes.h",
                "--source",
                d / "nodes.cc",
                "--python",
                d / "nodes_py.py",
            ],
            "in-place": lambda d: [
                "--in-place",
                d / "nodes.h",
                "--scan",
                d / "reg.cc",
                "--python",
                d / "nodes_py.py",
            ],
        }
        base = [sys.executable, "-m", "ferry.tschema"]
        print(f"tschema, {args.nodes} nodes, best (median) of {args.runs} runs, seconds")
        for layout, outs in layouts.items():
            schema = root / layout / "schema.py"
            results = {}
            fresh = []
            for k in range(args.runs):
                d = root / f"{layout}{k}"
                d.mkdir()
                if layout == "in-place":
                    (d / "nodes.h").write_text(header)
                    (d / "reg.cc").write_text(cc)
                fresh += timed(base + ["generate", schema, *outs(d)], env, 1)
            results["generate (writes all)"] = fresh
            d = root / f"{layout}0"
            results["generate (no change)"] = timed(
                base + ["generate", schema, *outs(d)], env, args.runs
            )
            results["check"] = timed(base + ["check", schema, *outs(d)], env, args.runs)
            opts = driver.Options([str(schema)])
            flags = outs(d)
            for i in range(0, len(flags), 2):
                key = flags[i][2:].replace("-", "_")
                value = str(flags[i + 1])
                setattr(opts, key, [value] if key in ("in_place", "scan") else value)
            inproc = []
            for _ in range(args.runs):
                t = time.perf_counter()
                _, outputs = driver.plan(opts)
                driver.diff(outputs)
                inproc.append(time.perf_counter() - t)
            results["in-process plan + diff"] = inproc
            size = sum(p.stat().st_size for p in d.iterdir())
            print(f"\n{layout} ({size / 1e6:.1f} MB of output)")
            for what, times in results.items():
                b, m = best(times)
                print(f"  {what:28s} {b:6.3f} ({m:6.3f})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
