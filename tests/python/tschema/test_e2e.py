"""End to end: the generated library loaded into Python through the generated classes.

Runs in a subprocess with PYTHONPATH=<repo>/python (the real `ferry`, with `_core`) and the
build directory, so the types it registers stay out of the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tschema_support import REPO, needs_toolchain

SCRIPT = textwrap.dedent("""
    import pickle
    import sys

    import ferry

    ferry.load_library(sys.argv[1])
    import kitchen_nodes as k
    import seed_nodes as s

    # Construct (positionally and by keyword), read fields, check the Python classes.
    five = s.IntImm("int64", 5)
    assert type(five) is s.IntImm and isinstance(five, s.PrimExpr)
    assert isinstance(five, s.BaseExpr) and isinstance(five, ferry.Object)
    assert five.value == 5 and str(five.dtype) == "int64"
    assert s.IntImm(dtype="int64", value=5).value == 5
    assert ferry.structural_equal(five, s.IntImm("int64", 5))
    assert not ferry.structural_equal(five, s.IntImm("int64", 6))
    assert ferry.structural_hash(five) == ferry.structural_hash(s.IntImm("int64", 5))

    # GlobalVar compares through its hand-written reducers (a free variable).
    f = s.GlobalVar("f")
    assert f.name_hint == "f"
    assert not ferry.structural_equal(f, s.GlobalVar("f"))
    assert ferry.structural_equal(f, s.GlobalVar("f"), map_free_vars=True)

    # JSON round trip keeps the class and the structure.
    back = ferry.load_json(ferry.save_json(five))
    assert type(back) is s.IntImm and ferry.structural_equal(back, five)

    # Field roles: `var` is a definition site, `span` is ignored.
    x, y = k.Var("x"), k.Var("y")
    one = k.List(1)
    assert ferry.structural_equal(k.Let(x, one, x, span="a"), k.Let(y, one, y, span="b"))
    assert not ferry.structural_equal(k.Let(x, one, x), k.Let(y, one, x))
    assert k.Let(x, one, x).span is None

    # Defaults come from the generated signature.
    a = k.AttrsRef(3)
    assert (a.i8, a.flag, a.i64, a.u32) == (3, True, -2**63, 4294967295)
    assert a.text == 'h\\u00e9llo "w\\\\orld"\\t?' and str(a.dtype) == "float32"
    assert a.anything == 7 and a.maybe is None and len(a.items) == 0
    assert k.AttrsRef(1, table={"k": one}).table["k"].head == 1

    call = k.Call(x, [one, x])
    assert isinstance(call, k.Expr) and len(call.args) == 2
    nested = k.Let(x, call, x)
    again = ferry.load_json(ferry.save_json(nested))
    assert type(again.value) is k.Call
    assert ferry.structural_equal(again, k.Let(y, k.Call(y, [one, y]), y))
    print("e2e ok")
""")


@needs_toolchain
def test_python_end_to_end(build, tmp_path):
    assert build.results["lib"][0] == 0, build.results["lib"][1]
    script = tmp_path / "e2e.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python"), str(build.root)]))
    run = subprocess.run(
        [sys.executable, str(script), str(build.lib)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "e2e ok" in run.stdout
