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
