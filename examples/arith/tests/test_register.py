"""The prototype path of docs/tschema.md: the arith schema registered at run time
(ferry.tschema.register, no C++) and the compiled libarith read each other's JSON and pickles.
The prototype side runs in fresh interpreters, where libarith is not loaded."""

import os
import pathlib
import pickle
import subprocess
import sys

import arith

import ferry

EXAMPLE = pathlib.Path(__file__).resolve().parents[1]
ROOT = EXAMPLE.parents[1]
SCHEMA = EXAMPLE / "schema" / "arith_schema.py"

PROTOTYPE = f"""
import pickle, sys
import ferry, ferry.tschema
ns = ferry.tschema.register({str(SCHEMA)!r})
"""


def run_prototype(code, stdin=b""):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run(
        [sys.executable, "-c", PROTOTYPE + code],
        input=stdin,
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


def test_prototype_json_loads_into_the_compiled_library():
    text = run_prototype(
        "x = ns.Var('int64', 'x')\n"
        "body = ns.Add('int64', ns.Mul('int64', x, ns.IntImm('int64', 1)), ns.IntImm('int64', 0))\n"
        "sys.stdout.write(ferry.save_json(ns.Function([x], body)))\n"
    ).decode()
    f = ferry.load_json(text)
    assert type(f) is arith.Function and type(f.body) is arith.Add
    x = arith.var("x")
    expected = arith.function([x], x * 1 + 0)
    assert ferry.structural_equal(f, expected)
    # A compiled pass runs on what the prototype built.
    assert ferry.structural_equal(arith.simplify(f.body), f.params[0])


def test_compiled_json_and_pickles_load_into_the_prototype():
    x = arith.var("x")
    e = x * 2 + x
    code = (
        "v = ferry.load_json(sys.stdin.read()) if sys.argv[-1] != 'pickle' else None\n"
        "print(type(v).__name__, type(v).__module__, type(v.a).__name__, v.a.b.value,\n"
        "      v.a.a is v.b, v.b.name_hint, str(v.dtype))\n"
    )
    out = run_prototype(code, ferry.save_json(e).encode()).decode().split()
    assert out == ["Add", "ferry.tschema.registered", "Mul", "2", "True", "x", "int64"]
    # And back: the prototype's JSON of the loaded value is the compiled library's own.
    back = run_prototype(
        "sys.stdout.write(ferry.save_json(ferry.load_json(sys.stdin.read())))",
        ferry.save_json(e).encode(),
    ).decode()
    assert back == ferry.save_json(e)


def test_prototype_pickles_unpickle_with_the_compiled_library():
    data = run_prototype(
        "x = ns.Var('int64', 'y')\nsys.stdout.buffer.write(pickle.dumps(ns.Sub('int64', x, x)))\n"
    )
    v = pickle.loads(data)
    assert type(v) is arith.Sub and v.a.same_as(v.b) and v.a.name_hint == "y"


def test_the_prototype_classes_follow_the_schema():
    out = (
        run_prototype(
            "import inspect\n"
            "print(sorted(vars(ns)))\n"
            "print(list(inspect.signature(ns.Add).parameters))\n"
            "try:\n"
            "    ns.Add('int64', 1, 2)\n"
            "except TypeError as e:\n"
            "    print('TypeError', 'arith.PrimExpr' in str(e))\n"
            "print(ferry.tschema.register("
            + repr(str(SCHEMA))
            + ").Add('int64', ns.IntImm('int64', 1),"
            " ns.IntImm('int64', 2)).__ferry_type_key__)\n"
        )
        .decode()
        .splitlines()
    )
    assert out[0] == str(
        sorted(
            n
            for n in vars(arith)
            if isinstance(getattr(arith, n), type)
            and issubclass(getattr(arith, n), ferry.Object)
            and getattr(arith, n).__module__.startswith("arith")
        )
    )
    assert out[1] == "['dtype', 'a', 'b']"
    assert out[2] == "TypeError True"
    assert out[3] == "arith.Add"
