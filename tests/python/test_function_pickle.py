"""Pickling ferry.Function: registered globals by name, Python callables as themselves, and a
clear PicklingError for anonymous C++ functions."""

import pickle
import subprocess
import sys
import textwrap

import cloudpickle  # a test dependency (Dask's)
import ferry_testing
import pytest

import ferry


def double(x):
    return 2 * x


def test_a_registered_global_pickles_by_its_name(f):
    add = ferry.get_global_func("test.add")
    data = pickle.dumps(add)
    assert b"test.add" in data and len(data) < 200, "a name, not the function"
    back = pickle.loads(data)
    assert back(2, 3) == 5 and back.same_as(add)


def test_a_function_made_from_a_python_callable_pickles_the_callable():
    fn = ferry.convert(double)
    back = pickle.loads(pickle.dumps(fn))
    assert isinstance(back, ferry.Function) and back(21) == 42
    inside = pickle.loads(pickle.dumps(ferry.Array([1]))), pickle.loads(pickle.dumps([fn]))
    assert inside[1][0](4) == 8


def test_an_unpicklable_callable_fails_as_it_would():
    fn = ferry.convert(lambda x: x)
    with pytest.raises((pickle.PicklingError, AttributeError)) as info:
        pickle.dumps(fn)
    with pytest.raises(type(info.value)):
        pickle.dumps(lambda x: x)


def test_an_anonymous_cpp_function_is_a_pickling_error_saying_what_to_do(f):
    adder = f.make_adder(10)
    assert adder(1) == 11
    with pytest.raises(pickle.PicklingError, match="not registered as a global.*register it"):
        pickle.dumps(adder)
    ferry.register_func("test.adder_10", adder)
    try:
        back = pickle.loads(pickle.dumps(adder))
        assert back(1) == 11
    finally:
        ferry.remove_global_func("test.adder_10")


# --- Functions inside containers and objects (pickled by parts: JSON has no form for them) -----


@ferry.py_class("pytest_fnpickle.Op")
class Op(ferry.Object):
    fn: ferry.Function
    arg: int = 0


def test_containers_holding_functions_pickle_as_the_functions_do(f):
    add = ferry.get_global_func("test.add")
    fn = ferry.convert(double)
    shared = ferry.Array([1, 2])
    arr = ferry.Array([add, fn, 3, "s", shared, shared])
    back = pickle.loads(pickle.dumps(arr))
    assert type(back) is ferry.Array and back[0].same_as(add) and back[1](4) == 8
    assert back[2:4] == [3, "s"] and back[4].same_as(back[5]), "sharing kept"
    m = pickle.loads(pickle.dumps(ferry.Map({"add": add, "inner": arr})))
    assert type(m) is ferry.Map and m["add"](2, 3) == 5 and m["inner"][1](5) == 10
    lst = ferry.List([fn])
    lst.append(lst)
    back = pickle.loads(pickle.dumps(lst))
    assert back[0](1) == 2 and back[1] is back, "a List holding itself"
    lst.clear()  # break both cycles: Ferry objects are reference-counted (the ASan stage checks)
    back.clear()
    d = pickle.loads(pickle.dumps(ferry.Dict({"fn": fn, "arr": arr})))
    assert type(d) is ferry.Dict and d["fn"](2) == 4 and d["arr"][0].same_as(add)
    # cloudpickle (Dask) sends a local closure by value, inside a container too.
    local = ferry.Array([ferry.convert(lambda x: x + 1)])
    assert pickle.loads(cloudpickle.dumps(local))[0](1) == 2


def test_objects_holding_functions_pickle_by_parts(f):
    add = ferry.get_global_func("test.add")
    op = Op(ferry.convert(double), 3)
    back = pickle.loads(pickle.dumps(op))
    assert type(back) is Op and back.fn(back.arg) == 6
    arr = pickle.loads(pickle.dumps(ferry.Array([op, op, Op(add)])))
    assert arr[0].same_as(arr[1]) and arr[2].fn.same_as(add) and arr[0].fn(1) == 2


def test_an_unpicklable_function_in_a_container_is_a_pickling_error(f):
    with pytest.raises(pickle.PicklingError, match="not registered as a global"):
        pickle.dumps(ferry.Array([f.make_adder(1)]))
    # A Python callable's Function fails as the callable would, inside a container too.
    with pytest.raises((pickle.PicklingError, AttributeError)) as alone:
        pickle.dumps(lambda x: x)
    with pytest.raises(type(alone.value)):
        pickle.dumps(ferry.Map({"f": ferry.convert(lambda x: x)}))
    with pytest.raises(pickle.PicklingError, match="not registered as a global"):
        pickle.dumps(Op(f.make_adder(2)))


def test_an_object_of_a_registered_cpp_class_holding_a_function_pickles_by_parts():
    # ferry.Object's own __getstate__/__setstate__ (a class from register_object); run apart,
    # so that registering a class for test.Attrs does not change the other tests.
    code = textwrap.dedent(f"""
        import pickle
        import ferry
        ferry.load_library({str(ferry_testing.TESTING_LIB)!r})

        @ferry.register_object("test.Attrs")
        class Attrs(ferry.Object):
            pass

        def attrs(anything):
            return ferry.make_node(
                "test.Attrs", flag=True, small=1, ratio=0.5, text="t", name="n", dtype="int32",
                maybe=None, count=None, items=[], table={{}}, shape=ferry.Shape([2]),
                anything=anything,
            )

        back = pickle.loads(pickle.dumps(attrs(ferry.convert(len))))
        assert type(back) is Attrs and back.anything("abc") == 3 and back.text == "t"
        try:
            pickle.dumps(attrs(ferry.get_global_func("test.make_adder")(1)))
        except pickle.PicklingError as e:
            assert "not registered as a global" in str(e)
        else:
            raise AssertionError("an anonymous C++ function pickled")
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert run.stdout.decode().strip() == "ok", run.stderr.decode()


def test_save_json_of_a_function_is_an_error_kind_of_its_own(f):
    # The by-parts fallback of pickle is chosen by this kind, not by the text of a message.
    with pytest.raises(ferry.error.FunctionInJSONError, match="ferry.Function") as info:
        ferry.save_json(ferry.Array([ferry.convert(double)]))
    assert isinstance(info.value, ValueError)  # `except ValueError` still catches it


def test_a_value_error_whose_text_looks_like_a_function_is_not_pickled_by_parts(monkeypatch):
    import ferry.container as container

    def save_json(obj):
        raise ValueError("SaveJSON: cannot save a ferry.Function (but it is something else)")

    monkeypatch.setattr(container, "_save_json", save_json)
    with pytest.raises(ValueError, match="something else"):
        pickle.dumps(ferry.Array([1]))
