"""Tests of the arith example: the generated classes, the C++ passes, Python callbacks inside
them, structural equality up to renaming, JSON, pickling, and the generated code being current."""

import os
import pathlib
import pickle
import subprocess
import sys

import arith
import pytest

import ferry

EXAMPLE = pathlib.Path(__file__).resolve().parents[1]
ROOT = EXAMPLE.parents[1]


@pytest.fixture
def xy():
    return arith.var("x"), arith.var("y")


def test_operators_build_nodes_with_dtypes(xy):
    x, y = xy
    e = x + 2
    assert type(e) is arith.Add and e.a.same_as(x) and e.b.value == 2 and e.dtype == "int64"
    assert (x * 1.5).dtype == "float64"
    assert type(3 - x) is arith.Sub and (3 - x).a.value == 3
    assert (x < y).dtype == "bool" and type(x > y) is arith.LT and (x > y).a.same_as(y)
    assert isinstance(e, arith.BinaryOp) and isinstance(e, arith.PrimExpr)
    with pytest.raises(TypeError, match="cannot make an expression of str"):
        x + "a"


def test_simplify_folds_constants_and_identities(xy):
    x, y = xy
    assert str(arith.simplify((x + 0) * 1)) == "x"
    assert arith.simplify(arith.const(7) // 2).value == 3
    assert arith.simplify(arith.const(-7) // 2).value == -4  # floor, not truncation
    assert arith.simplify(arith.minimum(4, 9) + arith.maximum(4, 9)).value == 13
    assert str(arith.simplify(x - x)) == "0"
    assert str(arith.simplify(arith.select(arith.lt(1, 2), x, y))) == "x"
    assert str(arith.simplify(arith.let(x, 2, x * y + x))) == "((2 * y) + 2)"
    with pytest.raises(ZeroDivisionError):
        arith.simplify(arith.const(1) // 0)


def test_substitute_and_free_vars(xy):
    x, y = xy
    e = arith.let(x, y + 1, x * y)
    assert [v.same_as(y) for v in arith.free_vars(e)] == [True]
    f = arith.function([x], x + y)
    assert [v.name_hint for v in arith.free_vars(f)] == ["y"]
    assert str(arith.substitute(x * y, {y: x + 1})) == "(x * (x + 1))"


def test_evaluate(xy):
    x, y = xy
    assert arith.evaluate((x + 1) * y, {x: 2, y: 3}) == 9
    assert arith.evaluate(x * 0.5, {x: 3}) == 1.5
    assert arith.evaluate(arith.let(x, 5, x * x)) == 25
    assert arith.evaluate(arith.select(x < 3, 10, 20), {x: 1}) == 10
    with pytest.raises(KeyError, match="no value for variable 'y'"):
        arith.evaluate(x + y, {x: 1})
    with pytest.raises(TypeError, match="must be an int or a float"):
        arith.evaluate(x, {x: "one"})


def test_structural_equality_up_to_renaming(xy):
    x, y = xy
    a, b = arith.var("a"), arith.var("b")
    assert ferry.structural_equal(arith.function([a], a + 1), arith.function([b], b + 1))
    assert ferry.structural_equal(arith.let(a, 1, a * 2), arith.let(b, 1, b * 2))
    assert not ferry.structural_equal(arith.let(a, 1, a * 2), arith.let(b, 1, a * 2))
    assert not ferry.structural_equal(x + 1, y + 1)
    assert ferry.structural_equal(x + 1, y + 1, map_free_vars=True)
    assert ferry.structural_hash(arith.function([a], a + 1)) == ferry.structural_hash(
        arith.function([b], b + 1)
    )


def test_json_and_pickle_round_trip(xy):
    x, y = xy
    e = arith.function([x], x * x + y)
    back = ferry.load_json(ferry.save_json(e))
    assert type(back) is arith.Function and back.body.a.a.same_as(back.body.a.b)
    assert ferry.structural_equal(e, back, map_free_vars=True)
    again = pickle.loads(pickle.dumps(e))
    assert str(again) == "fn(x) => ((x * x) + y)"


def _simplify(expr):
    return arith.simplify(expr)


def test_pickle_to_a_worker_process(xy):
    import multiprocessing

    x, y = xy
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        out = pool.apply(_simplify, ((x + 0) * (y + 3 * 4),))
    assert str(out) == "(x * (y + 12))"
    assert ferry.structural_equal(out, (x * (y + 12)), map_free_vars=True)


def test_python_callbacks_inside_cpp_passes(xy):
    x, y = xy
    seen = []
    arith.post_order_visit(x * 2 + y, lambda n: seen.append(str(n)))
    assert seen == ["x", "2", "(x * 2)", "y", "((x * 2) + y)"]
    out = arith.transform(x * 2 + y, lambda n: arith.const(10) if n.same_as(y) else None)
    assert str(out) == "((x * 2) + 10)"

    def bad(node):
        raise ValueError("from the visitor")

    with pytest.raises(ValueError, match="from the visitor"):
        arith.post_order_visit(x, bad)
    with pytest.raises(TypeError):
        arith.transform(x, lambda n: "not an expression")


def test_generated_code_is_up_to_date():
    cmd = [
        sys.executable,
        "-m",
        "ferry.tschema",
        "check",
        "-q",
        "schema/arith_schema.py",
        "--in-place",
        "include/arith/nodes.h",
        "--source",
        "src/nodes_generated.cc",
        "--python",
        "python/arith/_nodes.py",
    ]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python")] + sys.path))
    run = subprocess.run(cmd, cwd=EXAMPLE, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_demo_script_runs_to_the_end():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLE / "python")] + sys.path))
    run = subprocess.run(
        [sys.executable, "demo.py"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "structurally equal? True" in run.stdout
    assert "equal to the local result: True" in run.stdout
    # The Dask step: 200 expressions simplified by 2 worker processes given no set-up.
    assert "200 tasks on 2 workers" in run.stdout
    assert "all equal to the local results: True" in run.stdout
    assert run.stdout.rstrip().endswith("done.")


def test_the_demo_script_builds_with_ferry_cpp(tmp_path):
    """`demo.py --jit`: libarith.so from ferry.cpp.load instead of CMake (a fresh cache)."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(EXAMPLE / "python")] + sys.path),
        FERRY_CACHE_DIR=str(tmp_path),
    )
    env.pop("ARITH_LIBRARY", None)
    run = subprocess.run(
        [sys.executable, "demo.py", "--jit"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"ferry.cpp.load built and loaded {tmp_path}" in run.stdout
    assert "equal to the local result: True" in run.stdout  # the worker loaded it too
    assert run.stdout.rstrip().endswith("done.")


def test_the_demo_dask_step_without_dask_says_so_and_lets_the_demo_go_on(xy, monkeypatch, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("arith_demo", EXAMPLE / "demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    demo.simplify_on_dask(*xy)
    out = capsys.readouterr().out
    assert "skipped: this step needs dask and distributed" in out and "pip install" in out
