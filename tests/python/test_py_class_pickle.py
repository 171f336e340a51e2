"""Classes pickled as classes (issue 31): a class made on first sight (ferry.auto) by reference,
with pickle and cloudpickle; a py_class defined in __main__ through cloudpickle (by value, as
Dask sends it)."""

import pickle
import subprocess
import sys
import textwrap

import cloudpickle  # a test dependency (Dask's)
import ferry_testing
from ferry_testing import IntImm, Var

import ferry

make_let = ferry.get_global_func("test.Let")


def test_a_class_made_on_first_sight_pickles_by_reference():
    cls = type(make_let(Var("x"), IntImm(1), IntImm(2)))
    assert cls.__module__ == "ferry.auto" and cls.__qualname__ == "test.Let"
    assert cls.__name__ == "Let" and ferry.auto.test.Let is cls
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(cls, protocol=protocol)
        assert pickle.loads(data) is cls, protocol
    data = cloudpickle.dumps(cls)
    assert len(data) < 100, "by reference, not the class's contents"
    assert pickle.loads(data) is cls
    assert cloudpickle.loads(cloudpickle.dumps([cls, cls.__mro__])) == [cls, cls.__mro__]


def test_a_fresh_process_resolves_the_class_by_its_type_key():
    cls = type(make_let(Var("x"), IntImm(1), IntImm(2)))
    code = textwrap.dedent(f"""
        import pickle, sys
        import ferry
        ferry.load_library({str(ferry_testing.TESTING_LIB)!r})
        cls = pickle.loads(sys.stdin.buffer.read())
        assert cls.__ferry_type_key__ == "test.Let" and cls.__module__ == "ferry.auto", cls
        print(cls.__qualname__)
    """)
    run = subprocess.run(
        [sys.executable, "-c", code],
        input=cloudpickle.dumps(cls),
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.decode().strip() == "test.Let", run.stderr.decode()


def test_a_key_that_is_not_registered_says_so():
    ghost = ferry.auto.nowhere.Ghost
    assert "no Ferry type 'nowhere.Ghost' is registered" in repr(ghost)


# --- a py_class defined in __main__, through cloudpickle ----------------------------------------

MAIN_SCRIPT = """
import copy, pickle, subprocess, sys
import cloudpickle
import ferry


@ferry.py_class("pymain.Point")
class Point(ferry.Object):
    x: int
    y: float = 0.0
    tags: list[str] = ferry.field(default_factory=list, metadata={"unit": "m"})
    other: "Point | None" = None


@ferry.py_class("pymain.Frozen", frozen=True, eq="structural")
class Frozen(ferry.Object):
    p: Point


RECEIVER = '''
import copy, pickle, sys
import ferry
Point, Frozen, p, f = pickle.loads(sys.stdin.buffer.read())
assert Point.__module__ == "__main__" and Point.__ferry_type_key__ == "pymain.Point"
assert type(p) is Point and (p.x, p.y, list(p.tags)) == (1, 2.5, ["a"])
assert type(f) is Frozen and f.p.x == 1 and f == Frozen(Point(1, 2.5, ["a"]))
q = Point(3, other=p)  # the class works here: registered under its key
m = ferry.make_node("pymain.Point", x=4)  # with its defaults in the field table here too
assert (m.y, list(m.tags), m.other) == (0.0, [], None)
assert q.other is p and type(ferry.load_json(ferry.save_json(q))) is Point
assert copy.deepcopy(q).other.x == 1 and copy.copy(q).other is p
assert ferry.dataclasses.fields(Point)[2].metadata["unit"] == "m"
try:
    f.p = q
except AttributeError:
    pass
else:
    raise AssertionError("frozen")
print("received", repr(q))
'''

if __name__ == "__main__":
    p = Point(1, 2.5, ["a"])
    data = cloudpickle.dumps((Point, Frozen, p, Frozen(p)))  # by value: defined in __main__
    run = subprocess.run(
        [sys.executable, "-c", RECEIVER], input=data, capture_output=True, timeout=120
    )
    print(run.stdout.decode(), run.stderr.decode())
    # Declared otherwise in the receiving process: an error that says what to do.
    other = '''
import pickle, sys
import ferry
@ferry.py_class("pymain.Point")
class Point(ferry.Object):
    name: str
try:
    pickle.loads(sys.stdin.buffer.read())
except pickle.UnpicklingError as e:
    print("refused:", e)
'''
    run = subprocess.run([sys.executable, "-c", other], input=data, capture_output=True, timeout=120)
    print(run.stdout.decode(), run.stderr.decode())
"""


def test_a_py_class_defined_in_main_goes_through_cloudpickle(tmp_path):
    script = tmp_path / "main_script.py"
    script.write_text(MAIN_SCRIPT)
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, timeout=300, cwd=tmp_path
    )
    out = run.stdout.decode()
    assert run.returncode == 0, run.stderr.decode()
    assert "received Point(x=3, y=0.0, tags=[], other=Point(x=1, y=2.5" in out, out
    assert "refused: cannot unpickle the py_class 'pymain.Point'" in out, out
    assert "already registered with other fields" in out and "importable module" in out, out
