"""Objects and functions that explain themselves: a Function's repr, __name__, __qualname__,
__doc__ and __signature__ (inspect.signature, help()), the Python-level API functions, the
lazily imported submodules, floats printed as floats, and errors that name what the caller
passed."""

import inspect
import os
import pydoc
import subprocess
import sys

import numpy as np
import pytest
from ferry_testing import ROOT

import ferry


def test_a_typed_function_shows_its_name_and_signature(f):
    add = f.add  # test.add: set_body_typed([](int64_t a, int64_t b) { ... }, {"a", "b"})
    assert repr(add) == "<ferry.Function test.add(a: int, b: int) -> int>"
    assert add.__name__ == "add" and add.__qualname__ == "test.add"
    assert "test.add(a: int, b: int) -> int" in add.__doc__
    sig = inspect.signature(add)
    assert str(sig) == "(a: int, b: int) -> int"
    assert [p.kind for p in sig.parameters.values()] == [
        inspect.Parameter.POSITIONAL_OR_KEYWORD
    ] * 2
    assert sig.bind(1, b=2).arguments == {"a": 1, "b": 2}
    assert "test.add(a: int, b: int) -> int" in pydoc.render_doc(add)


def test_a_function_without_parameter_names_has_positional_parameters(f):
    concat = f.concat  # std::string parameters, registered without names
    assert repr(concat) == "<ferry.Function test.concat(arg0: str, arg1: str, /) -> str>"
    params = inspect.signature(concat).parameters.values()
    assert [p.kind for p in params] == [inspect.Parameter.POSITIONAL_ONLY] * 2
    assert [p.annotation for p in params] == [str, str]


def test_object_types_are_annotated_with_their_classes(f):
    sig = inspect.signature(f.Add)
    assert [p.annotation.__ferry_type_key__ for p in sig.parameters.values()] == ["test.Expr"] * 2
    assert sig.return_annotation.__ferry_type_key__ == "test.Add"
    assert repr(f.Add) == "<ferry.Function test.Add(a: test.Expr, b: test.Expr) -> test.Add>"


def test_a_packed_function_says_its_types_are_unknown():
    r = ferry.get_global_func("ferry.Repr")
    assert repr(r) == "<ferry.Function ferry.Repr(...)>"
    assert r.__qualname__ == "ferry.Repr" and "not recorded" in r.__doc__
    assert r.__signature__ is None  # inspect then falls back to the call's (*args, **kwargs)


def test_a_function_made_from_a_python_callable_describes_the_callable():
    def scale(x: float, factor: float = 2.0) -> float:
        """Multiplies."""
        return x * factor

    fn = ferry.convert(scale)
    assert fn.__name__ == "scale" and fn.__qualname__.endswith("scale")
    assert fn.__doc__ == "Multiplies."
    # The Function takes its arguments by position only: the signature says so.
    assert str(inspect.signature(fn)) == "(x: float, factor: float = 2.0, /) -> float"
    assert fn(3.0) == 6.0 and fn(3.0, 3.0) == 9.0
    assert repr(fn).startswith("<ferry.Function ") and "scale" in repr(fn)


def test_a_wrapped_callable_shows_only_the_parameters_a_call_can_reach():
    def f(a, *rest, key=1, **extra):
        return a

    fn = ferry.convert(f)
    assert str(inspect.signature(fn)) == "(a, /, *rest)"
    with pytest.raises(TypeError, match="keyword"):
        fn(a=1)  # what the signature no longer advertises


def test_the_api_functions_have_signatures_and_docs():
    assert str(inspect.signature(ferry.get_global_func)) == "(name, allow_missing=False)"
    assert str(inspect.signature(ferry.make_node)) == "(type_key, /, **fields)"
    assert str(inspect.signature(ferry.convert)) == "(value, /)"
    for fn in (ferry.get_global_func, ferry.make_node, ferry.convert):
        assert fn.__doc__ and fn.__name__ == fn.__qualname__
        assert fn.__doc__.split("\n")[0][0].isupper(), fn.__doc__  # not the signature again


def test_submodules_are_reachable_without_importing_them():
    # `import ferry; ferry.cpp.load_inline(...)` works; `import ferry` itself stays light.
    script = (
        "import sys, ferry\n"
        "assert 'ferry.cpp' not in sys.modules and 'ferry.tschema' not in sys.modules\n"
        "assert callable(ferry.cpp.load_inline) and callable(ferry.tschema.register)\n"
        "assert 'ferry.cpp' in sys.modules\n"
        "try:\n"
        "    ferry.no_such_thing\n"
        "except AttributeError as e:\n"
        "    assert \"no attribute 'no_such_thing'\" in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr


def test_floats_print_as_floats():
    # C++ Repr printed a double like an int (radius=2, [0, 1, 2] for float64): now as Python.
    r = ferry.get_global_func("ferry.Repr")
    assert r(2.0) == "2.0" and r(0.1) == "0.1" and r(1e16) == "1e+16" and r(-0.0) == "-0.0"
    assert r([1.0, 2.5]) == "[1.0, 2.5]"
    node = ferry.make_node(
        "test.Attrs",
        flag=True,
        small=1,
        ratio=2.0,
        text="t",
        name="n",
        dtype=ferry.DataType("int32"),
        maybe=None,
        count=None,
        items=[],
        table={},
        shape=ferry.Shape([1]),
        anything=3.0,
    )
    assert "ratio=2.0," in repr(node) and "anything=3.0)" in repr(node), repr(node)
    tensor = ferry.from_dlpack(np.arange(3, dtype=np.float64))
    assert repr(tensor).endswith("[0.0, 1.0, 2.0])"), repr(tensor)
    tensor32 = ferry.from_dlpack(np.array([0.1, 2.0], dtype=np.float32))
    assert repr(tensor32).endswith("[0.1, 2.0])"), repr(tensor32)


@pytest.mark.parametrize(
    "value, passed",
    [("one", "str"), ([1], "list"), ((1,), "tuple"), ({"a": 1}, "dict"), (b"x", "bytes")],
)
def test_a_mismatched_argument_names_what_the_caller_passed(f, value, passed):
    with pytest.raises(TypeError) as info:
        f.add(value, 1)
    assert str(info.value).endswith(f"expected int but got {passed}"), str(info.value)


def test_a_ferry_object_passed_keeps_its_type_key(f):
    x = f.Var("x")
    with pytest.raises(TypeError) as info:
        f.add(x, 1)
    assert str(info.value).endswith("expected int but got test.Var"), str(info.value)
    with pytest.raises(TypeError) as info:  # keyword arguments take the same path
        f.add(a=1, b="two")
    assert str(info.value).endswith("expected int but got str"), str(info.value)


@ferry.py_class("introspection.Point")
class _Point(ferry.Object):
    x: int
    tags: list[str] = ferry.field(default_factory=list)


def test_a_mismatched_field_names_what_the_caller_passed():
    # The constructor of a py_class, make_node and an assignment: the value passed, not the Ferry
    # type it became (was "expected int but got ferry.String").
    with pytest.raises(TypeError, match=r"field 'x': expected int but got str$"):
        _Point("one")
    with pytest.raises(TypeError, match=r"field 'x': expected int but got str$"):
        _Point(x="one")
    with pytest.raises(TypeError, match=r"field 'tags': expected Array\[str\] but got dict"):
        _Point(1, {"a": 1})
    with pytest.raises(TypeError, match=r"field 'value': expected int but got str$"):
        ferry.make_node("test.IntImm", value="x", dtype=ferry.DataType("int32"))
    p = _Point(1)
    with pytest.raises(
        TypeError, match=r"field 'x' of 'introspection.Point': expected int but got list$"
    ):
        p.x = [1]
    with pytest.raises(TypeError, match=r"expected int but got introspection.Point$"):
        p.x = p  # a Ferry object keeps its type key


def test_a_mismatched_element_names_what_the_caller_passed(f):
    with pytest.raises(TypeError) as info:
        f.sum_array([1, "two"])
    assert str(info.value).endswith(
        "expected Array[int] but got list (element 1: expected int but got str)"
    ), str(info.value)
    with pytest.raises(TypeError, match=r"field 'tags': element 1: expected str but got int$"):
        _Point(1, ["a", 2])
