"""Pickling ferry.Function: registered globals by name, Python callables as themselves, and a
clear PicklingError for anonymous C++ functions."""

import pickle

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
