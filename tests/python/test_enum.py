"""Enums shared with C++: C++ enum fields read as IntEnum members (ferry.get_enum), written from a
member, its name or its value (anything else a ValueError); ferry.register_enum and py_class
fields annotated with an enum; JSON writes names; pickles across a fresh process."""

import enum
import os
import pickle
import subprocess
import sys

import ferry_testing
import pytest

import ferry

OpKind = ferry.get_enum("test.OpKind")
op_value = ferry.get_global_func("test.op_value")


class Color(enum.Enum):
    RED = 1
    GREEN = 2


ferry.register_enum("pytest.Color", Color)


@ferry.py_class("pytest.Paint")
class Paint(ferry.Object):
    color: Color
    op: OpKind = OpKind.Add


def test_get_enum_builds_an_int_enum_from_the_cpp_registration():
    assert issubclass(OpKind, enum.IntEnum)
    assert [(m.name, m.value) for m in OpKind] == [("Add", 0), ("Mul", 1), ("Sub", 5)]
    assert ferry.get_enum("test.OpKind") is OpKind
    assert ferry.get_enum("pytest.Color") is Color
    with pytest.raises(KeyError, match="no enum is registered as 'test.Nope'"):
        ferry.get_enum("test.Nope")


def test_cpp_enum_fields_read_as_members_and_write_from_member_name_or_value():
    h = ferry.make_node("test.OpHolder", op="Mul")
    assert h.op is OpKind.Mul
    h.op = OpKind.Sub
    assert h.op is OpKind.Sub and op_value(h) == 5
    h.op = "Add"
    assert h.op is OpKind.Add and op_value(h) == 0
    h.op = 1
    assert h.op is OpKind.Mul


@pytest.mark.parametrize("bad", ["Div", 3])
def test_unknown_members_are_value_errors(bad):
    h = ferry.make_node("test.OpHolder", op="Mul")
    with pytest.raises(
        ValueError,
        match=r"field 'op' of 'test.OpHolder': .* is not a member of test.OpKind \(members: Add, Mul, Sub\)",
    ):
        h.op = bad
    assert h.op is OpKind.Mul  # unchanged
    with pytest.raises(TypeError, match="expected Enum\\[test.OpKind\\] but got float"):
        h.op = 2.5


def test_json_writes_names_and_rejects_unknown_ones():
    h = ferry.make_node("test.OpHolder", op="Sub")
    text = ferry.save_json(h)
    assert '"op": "Sub"' in text
    assert ferry.load_json(text).op is OpKind.Sub
    with pytest.raises(ValueError, match='"Div" is not a member of test.OpKind'):
        ferry.load_json(text.replace('"Sub"', '"Div"'))


def test_structural_equality_by_value():
    a = ferry.make_node("test.OpHolder", op="Sub")
    b = ferry.make_node("test.OpHolder", op=5)
    c = ferry.make_node("test.OpHolder", op="Add")
    assert ferry.structural_equal(a, b)
    assert ferry.structural_hash(a) == ferry.structural_hash(b)
    assert not ferry.structural_equal(a, c)
    assert ferry.structural_mismatch(a, c) == "op"


def test_py_class_fields_annotated_with_registered_enums():
    fields = list(ferry.get_global_func("ferry.NodeFields")("pytest.Paint"))
    assert fields == ["color", "Enum[pytest.Color]", "op", "Enum[test.OpKind]"]
    p = Paint(Color.GREEN)
    assert p.color is Color.GREEN and p.op is OpKind.Add
    assert Paint("RED", op="Mul").color is Color.RED
    assert Paint(1, op=5).op is OpKind.Sub
    assert repr(p) == "Paint(color=<Color.GREEN: 2>, op=<OpKind.Add: 0>)"
    with pytest.raises(
        ValueError, match=r"field 'color': \"BLUE\" is not a member of pytest.Color"
    ):
        Paint("BLUE")
    with pytest.raises(ValueError, match=r"field 'color': 7 is not a member"):
        Paint(7)
    with pytest.raises(TypeError, match=r"field 'color': expected Enum\[pytest.Color\]"):
        Paint(2.5)


def test_unregistered_enum_annotation_is_a_type_error():
    class Shade(enum.Enum):
        DARK = 1

    with pytest.raises(TypeError, match="Shade is not registered"):

        @ferry.py_class("pytest.Shaded")
        class Shaded(ferry.Object):
            shade: Shade


def test_register_enum_checks_its_input():
    with pytest.raises(TypeError, match="not an enum.Enum subclass"):
        ferry.register_enum("pytest.Bad", int)

    class Named(enum.Enum):
        A = "a"

    with pytest.raises(TypeError, match="integer values"):
        ferry.register_enum("pytest.Named", Named)

    class Other(enum.IntEnum):
        Add = 0

    with pytest.raises(ValueError, match="registered already with other members"):
        ferry.register_enum("test.OpKind", Other)


def test_json_and_pickle_across_a_fresh_process():
    p = Paint(Color.GREEN, op=OpKind.Sub)
    h = ferry.make_node("test.OpHolder", op="Mul")
    blob = pickle.dumps((p, h, ferry.save_json(p)))
    code = (
        "import pickle, sys\n"
        "import ferry, test_enum\n"
        "p, h, text = pickle.loads(sys.stdin.buffer.read())\n"
        "assert p.color is test_enum.Color.GREEN, p.color\n"
        "assert p.op is ferry.get_enum('test.OpKind').Sub\n"
        "assert h.op is ferry.get_enum('test.OpKind').Mul\n"
        "assert ferry.load_json(text).color is test_enum.Color.GREEN\n"
        "print('ok')\n"
    )
    here = str(ferry_testing.ROOT / "tests" / "python")
    env = {**os.environ, "PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", code], input=blob, capture_output=True, timeout=120, env=env
    )
    assert out.stdout.decode().strip() == "ok", out.stderr.decode()


def _fresh(code, blob, *, imports="import ferry_testing\n"):
    here = str(ferry_testing.ROOT / "tests" / "python")
    env = {**os.environ, "PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", "import pickle, sys\nimport ferry\n" + imports + code],
        input=blob,
        capture_output=True,
        timeout=120,
        env=env,
    )


def test_bare_members_of_a_cpp_enum_pickle_across_a_fresh_process():
    blob = pickle.dumps([OpKind.Sub, OpKind.Mul, {OpKind.Add: "a"}])
    assert pickle.loads(blob) == [OpKind.Sub, OpKind.Mul, {OpKind.Add: "a"}]
    assert pickle.loads(pickle.dumps(OpKind.Sub)) is OpKind.Sub
    code = (
        "sub, mul, d = pickle.loads(sys.stdin.buffer.read())\n"
        "kind = ferry.get_enum('test.OpKind')\n"
        "assert sub is kind.Sub and mul is kind.Mul and d == {kind.Add: 'a'}, (sub, mul, d)\n"
        "print('ok')\n"
    )
    out = _fresh(code, blob)
    assert out.stdout.decode().strip() == "ok", out.stderr.decode()
    # Without the library that registers the enum: an error naming the key, not a crash.
    out = _fresh("pickle.loads(sys.stdin.buffer.read())\n", blob, imports="")
    assert out.returncode != 0
    assert "test.OpKind" in out.stderr.decode() and "not registered" in out.stderr.decode()


class Foreign(enum.IntEnum):
    Add = 0
    Mul = 1  # the same values as test.OpKind's: only the class tells them apart


def test_a_member_of_another_enum_is_refused_by_an_enum_field():
    h = ferry.make_node("test.OpHolder", op="Mul")
    with pytest.raises(
        TypeError, match=r"field 'op' of 'test.OpHolder'.*test.OpKind.*Foreign.Add.*Foreign"
    ):
        h.op = Foreign.Add
    assert h.op is OpKind.Mul  # unchanged
    p = Paint(Color.RED)
    with pytest.raises(TypeError, match=r"field 'op' of 'pytest.Paint'.*test.OpKind.*Foreign"):
        p.op = Foreign.Mul
    with pytest.raises(TypeError, match=r"field 'color' of 'pytest.Paint'.*pytest.Color.*OpKind"):
        p.color = OpKind.Mul
    with pytest.raises(TypeError, match=r"field 'op' of 'pytest.Paint'.*Foreign"):
        Paint(Color.RED, op=Foreign.Add)
    with pytest.raises(TypeError, match=r"field 'color' of 'pytest.Paint'.*Foreign"):
        Paint(Foreign.Mul)
    assert p.op is OpKind.Add and p.color is Color.RED
    h.op = 0  # a plain value or name is still a member's value or name
    assert h.op is OpKind.Add
    with pytest.raises(TypeError, match=r"field 'op' of 'test.OpHolder'.*Foreign"):
        ferry.make_node("test.OpHolder", op=Foreign.Mul)
    with pytest.raises(TypeError, match=r"field 'color' of 'pytest.Paint'.*Foreign"):
        ferry.make_node("pytest.Paint", color=Foreign.Mul)
    assert ferry.make_node("test.OpHolder", op=OpKind.Sub).op is OpKind.Sub


def test_a_second_class_under_a_registered_key_is_refused():
    class Tone(enum.Enum):
        LOW = 1

    class Tone2(enum.Enum):
        LOW = 1

    assert ferry.register_enum("pytest.Tone", Tone) is Tone
    assert ferry.register_enum("pytest.Tone", Tone) is Tone  # the same class again: fine
    with pytest.raises(ValueError, match=r"'pytest.Tone' is registered already.*Tone2"):
        ferry.register_enum("pytest.Tone", Tone2)
    assert ferry.get_enum("pytest.Tone") is Tone
    with pytest.raises(ValueError, match=r"'pytest.Color' is registered already"):
        ferry.register_enum("pytest.Color", Foreign)
    assert ferry.get_enum("pytest.Color") is Color


def test_a_reloaded_module_registers_its_new_class(tmp_path, monkeypatch):
    import importlib

    (tmp_path / "reload_enum_mod.py").write_text(
        "import enum\nimport ferry\n\n\n"
        "class Level(enum.Enum):\n    ONE = 1\n\n\n"
        "ferry.register_enum('pytest.Level', Level)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("reload_enum_mod")
    first = mod.Level
    mod = importlib.reload(mod)
    assert mod.Level is not first and ferry.get_enum("pytest.Level") is mod.Level
