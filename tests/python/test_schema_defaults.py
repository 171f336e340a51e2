"""Schema defaults live in the runtime field table (FerryTypeSetFieldDefault), so every path
applies them: the Python constructor, ferry.make_node (C++ MakeNode) and load_json, including a
document saved before a defaulted field was added (schema evolution)."""

import os
import subprocess
import sys
import textwrap

import pytest

import ferry
import ferry.tschema

make_node_cpp = ferry.get_global_func("ferry.MakeNode")  # C++ MakeNode itself


@ferry.py_class("defaults.Point")
class Point(ferry.Object):
    x: int
    y: float = 1.5
    label: str = "origin"
    tags: list[str] = ferry.field(default_factory=lambda: ["new"])
    log: ferry.List[str] = ferry.field(default_factory=ferry.List)
    other: "Point | None" = None


@ferry.py_class("defaults.Point3")
class Point3(Point):
    z: float = -1.0


def test_make_node_applies_py_class_defaults_and_factories():
    p = ferry.make_node("defaults.Point", x=1)
    assert (p.x, p.y, p.label, list(p.tags), list(p.log), p.other) == (
        1,
        1.5,
        "origin",
        ["new"],
        [],
        None,
    )
    assert ferry.structural_equal(p, Point(1))
    # A factory runs per object: two objects never share a mutable List.
    q = ferry.make_node("defaults.Point", x=2)
    p.log.append("p")
    assert list(q.log) == []
    # Given fields win over defaults.
    assert ferry.make_node("defaults.Point", x=1, y=7.0).y == 7.0


def test_cpp_make_node_applies_defaults_and_subclasses_inherit_them():
    p = make_node_cpp("defaults.Point3", "x", 4)
    assert (p.x, p.y, p.z, p.label) == (4, 1.5, -1.0, "origin")


def test_a_field_without_a_default_is_still_required_everywhere():
    with pytest.raises(ValueError, match="missing fields: x"):
        ferry.make_node("defaults.Point", y=2.0)
    text = ferry.save_json(Point(3))
    with pytest.raises(ValueError, match=r'defaults.Point\): missing field "x" \(int\)'):
        ferry.load_json(text.replace('"x": 3, ', ""))


def test_load_json_fills_left_out_defaulted_fields():
    text = ferry.save_json(Point(3, y=9.0, label="l", tags=["t"]))
    older = text.replace('"y": 9.0, ', "").replace('"label": "l", ', "")
    assert older != text
    back = ferry.load_json(older)
    assert (back.x, back.y, back.label, list(back.tags)) == (3, 1.5, "origin", ["t"])


OLD = """
import ferry
import ferry.tschema
@ferry.py_class("evolve.Shape")
class Shape(ferry.Object):
    name: str
"""
NEW = """
import ferry
import ferry.tschema
@ferry.py_class("evolve.Shape")
class Shape(ferry.Object):
    name: str
    sides: int = 3
    tags: ferry.List[str] = ferry.field(default_factory=ferry.List)
    required: float = ferry.field(default=0.5, kw_only=True)
"""


def _run(code, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_document_saved_by_an_old_class_loads_into_a_newer_one(tmp_path):
    doc = tmp_path / "shape.json"
    _run(OLD + f"open({str(doc)!r}, 'w').write(ferry.save_json(Shape('tri')))\n", tmp_path)
    assert "sides" not in doc.read_text()
    out = _run(
        NEW
        + f"s = ferry.load_json(open({str(doc)!r}).read())\n"
        + "print(type(s).__name__, s.name, s.sides, list(s.tags), s.required)\n",
        tmp_path,
    )
    assert out.split() == ["Shape", "tri", "3", "[]", "0.5"]


def test_set_field_default_refuses_what_it_cannot_apply():
    index = ferry._core._type_key_to_index("defaults.Point")
    set_default = ferry.get_global_func("ferry.TypeSetFieldDefault")
    with pytest.raises(TypeError, match="field 'y' of 'defaults.Point'"):
        set_default(index, "y", "not a float", False)
    with pytest.raises(AttributeError, match="has no field 'nope'"):
        set_default(index, "nope", 1, False)
    with pytest.raises(ValueError, match="would be shared by every object"):
        set_default(index, "log", ferry.List(), False)
    cpp_index = ferry._core._type_key_to_index("test.IntImm")
    with pytest.raises(TypeError, match="not a type registered from a field table"):
        set_default(cpp_index, "value", 1, False)
    # The refused calls changed nothing.
    assert ferry.make_node("defaults.Point", x=1).y == 1.5


def test_a_default_the_field_refuses_is_an_error_when_the_class_is_defined():
    with pytest.raises(TypeError, match=r"Bad\.n .*default 'one'.*expected int"):

        @ferry.py_class("defaults.Bad")
        class Bad(ferry.Object):
            n: int = "one"


def test_tschema_register_defaults_apply_to_make_node_and_load_json(tmp_path):
    schema = tmp_path / "defaults_schema.py"
    schema.write_text(
        textwrap.dedent(
            """
            from ferry.tschema import Object, declare, ty


            @declare
            class ShapeNode(Object):
                type_key = "defaults_schema.Shape"
                name: ty.String
                sides: ty.int64_t = 4
                tags: ty.Array[ty.String] = []
            """
        )
    )
    ns = ferry.tschema.register(str(schema))
    made = ferry.make_node("defaults_schema.Shape", name="sq")
    assert (made.sides, list(made.tags)) == (4, [])
    text = ferry.save_json(ns.Shape("sq", 5)).replace('"sides": 5, ', "")
    assert ferry.load_json(text).sides == 4


def test_mutating_a_list_field_says_to_declare_it_ferry_list():
    p = Point(1)
    with pytest.raises(AttributeError, match=r"immutable.*'append'.*ferry\.List\[T\]"):
        p.tags.append("x")
    with pytest.raises(AttributeError, match=r"ferry\.Dict\[K, V\]"):
        ferry.convert({"a": 1}).update(b=2)
    assert not hasattr(p.tags, "no_such_attribute")
    p.log.append("kept")  # a ferry.List field mutates in place
    assert list(p.log) == ["kept"]


def test_a_failing_default_factory_is_an_error_naming_the_field():
    def broken():
        raise ValueError("no value today")

    @ferry.py_class("defaults.Broken")
    class Broken(ferry.Object):
        n: int = ferry.field(default_factory=broken)

    with pytest.raises(
        ValueError, match=r"default factory of field 'n' of 'defaults.Broken'.*no value today"
    ):
        ferry.make_node("defaults.Broken")
