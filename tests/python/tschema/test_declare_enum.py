"""@declare_enum (issue 35): a schema enum becomes a C++ `enum class` registered with
FERRY_REGISTER_ENUM, a Python `enum.IntEnum` given to `ferry.register_enum`, an entry of the JSON
dump, and a field type of declared nodes; its mistakes are errors at the schema line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tschema_support import (
    CXX,
    FIXTURES,
    INCLUDE_DIR,
    LIB_DIR,
    REPO,
    expect_error,
    line_of,
    needs_toolchain,
    run_cli,
    write,
)

import ferry
from ferry import tschema

ENUMS = FIXTURES / "enums.py"


def generate(tmp_path: Path) -> Path:
    out = tmp_path / "gen"
    out.mkdir()
    code, _, err = run_cli(
        "generate",
        ENUMS,
        "--header",
        out / "enums.h",
        "--source",
        out / "enums.cc",
        "--python",
        out / "enums_nodes.py",
    )
    assert code == 0, err
    return out


def test_generated_cpp_declares_and_registers_the_enum(tmp_path):
    out = generate(tmp_path)
    header = (out / "enums.h").read_text()
    enum_line = "enum class OpKind : int64_t { kAdd = 0, kMul = 1, kSub = 5 };"
    assert enum_line in header
    # Before the nodes that hold it, in its namespace; fields start at a member, visited.
    assert header.index(enum_line) < header.index("class BinOpNode")
    assert header.index("namespace enum_ir {") < header.index(enum_line)
    assert "  OpKind op = OpKind::kAdd;" in header  # required: its first member
    assert "  OpKind op = OpKind::kMul;" in header  # the schema's default `OpKind.Mul`
    assert 'v->Visit("op", &op);' in header
    assert "UnOp(int64_t value, OpKind op = OpKind::kMul)" in header
    source = (out / "enums.cc").read_text()
    assert 'FERRY_REGISTER_ENUM(OpKind, "tschema_enum.OpKind", {' in source
    for member in ('{OpKind::kAdd, "Add"},', '{OpKind::kMul, "Mul"},', '{OpKind::kSub, "Sub"},'):
        assert member in source
    assert source.index("FERRY_REGISTER_ENUM") < source.index("FERRY_REGISTER_NODE_TYPE")


def test_generated_python_declares_and_registers_the_enum(tmp_path):
    out = generate(tmp_path)
    module = (out / "enums_nodes.py").read_text()
    assert "class OpKind(enum.IntEnum):" in module
    assert "    Add = 0\n    Mul = 1\n    Sub = 5\n" in module
    assert 'ferry.register_enum("tschema_enum.OpKind", OpKind)' in module
    assert "def __init__(self, op: OpKind, lhs: int, rhs: int = 0) -> None:" in module
    assert "def __init__(self, value: int, op: OpKind = OpKind.Mul) -> None:" in module
    stub = (out / "enums_nodes.pyi").read_text()
    assert "class OpKind(enum.IntEnum):" in stub and "    op: OpKind\n" in stub


ROUND_TRIP = textwrap.dedent("""
    import sys

    import ferry

    ferry.load_library(sys.argv[1])
    import enums_nodes as m

    assert ferry.get_enum("tschema_enum.OpKind") is m.OpKind
    mul = m.BinOp(m.OpKind.Mul, 1)
    assert mul.op is m.OpKind.Mul
    assert m.BinOp("Sub", 1).op is m.OpKind.Sub  # by name
    assert m.BinOp(0, 1).op is m.OpKind.Add  # by value
    assert m.UnOp(2).op is m.OpKind.Mul  # the schema's default
    text = ferry.save_json(mul)
    assert '"op": "Mul"' in text, text
    assert ferry.load_json(text).op is m.OpKind.Mul
    assert ferry.structural_equal(mul, m.BinOp(1, 1))
    assert not ferry.structural_equal(mul, m.BinOp(m.OpKind.Add, 1))
    try:
        m.BinOp("Div", 1)
        raise AssertionError("no error")
    except ValueError as err:
        assert '"Div" is not a member of tschema_enum.OpKind' in str(err), err
    # The run-time route agrees with the library: the same enum and classes.
    from ferry import tschema

    ns = tschema.register(sys.argv[2])
    assert ns.OpKind is m.OpKind and ns.BinOp is m.BinOp
    print("enum round trip ok")
""")


@needs_toolchain
def test_generated_library_and_module_round_trip(tmp_path):
    out = generate(tmp_path)
    lib = out / "libenums.so"
    compile_cmd = [CXX, "-std=c++17", "-O0", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
    compile_cmd += [f"-I{INCLUDE_DIR}", f"-I{out}", str(out / "enums.cc"), "-o", str(lib)]
    compile_cmd += [f"-L{LIB_DIR}", "-lferry", f"-Wl,-rpath,{LIB_DIR}"]
    built = subprocess.run(compile_cmd, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    script = write(tmp_path / "round_trip.py", ROUND_TRIP)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python"), str(out)]))
    run = subprocess.run(
        [sys.executable, str(script), str(lib), str(ENUMS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "enum round trip ok" in run.stdout


def test_register_at_run_time_registers_the_enum(tmp_path):
    path = write(
        tmp_path / "rt_enums.py",
        ENUMS.read_text().replace("tschema_enum.", "tschema_enum_rt."),
    )
    ns = tschema.register(str(path))
    assert [(m.name, m.value) for m in ns.OpKind] == [("Add", 0), ("Mul", 1), ("Sub", 5)]
    assert ferry.get_enum("tschema_enum_rt.OpKind") is ns.OpKind
    node = ns.BinOp(ns.OpKind.Sub, 2)
    assert node.op is ns.OpKind.Sub and ns.BinOp("Mul", 2).op is ns.OpKind.Mul
    assert ns.UnOp(1).op is ns.OpKind.Mul
    text = ferry.save_json(node)
    assert '"op": "Sub"' in text, text
    assert ferry.load_json(text).op is ns.OpKind.Sub
    assert tschema.register(str(path)).OpKind is ns.OpKind  # registering again reuses it


def test_dump_includes_enums():
    code, out, err = run_cli("dump", ENUMS)
    assert code == 0, err
    data = json.loads(out)
    assert data["enums"] == [
        {
            "name": "OpKind",
            "type_key": "tschema_enum.OpKind",
            "namespace": "enum_ir",
            "emitted": True,
            "doc": "The operator of a binary node.",
            "file": os.path.relpath(ENUMS).replace(os.sep, "/"),
            "line": line_of(ENUMS, "class OpKind"),
            "members": [
                {"name": "Add", "value": 0},
                {"name": "Mul", "value": 1},
                {"name": "Sub", "value": 5},
            ],
        }
    ]
    unop = next(n for n in data["nodes"] if n["name"] == "UnOpNode")
    op = next(f for f in unop["fields"] if f["name"] == "op")
    assert op["type"] == {"kind": "enum", "name": "OpKind", "type_key": "tschema_enum.OpKind"}
    assert op["default"] == "Mul"


# Errors ------------------------------------------------------------------------------------

HEAD = "from ferry.tschema import Enum, Object, declare, declare_enum, ty\n\n\n"
NODE = """

@declare
class UseNode(Object):
    type_key = "t.Use"
    op: Kind
"""


def check_error(tmp_path: Path, body: str, needle: str, *fragments: str) -> None:
    path = write(tmp_path / "schema.py", HEAD + body)
    line = line_of(path, needle)
    argv = ["generate", path, "--header", tmp_path / "o.h", "--python", tmp_path / "o_py.py"]
    expect_error(tmp_path, argv, f"schema.py:{line}: ", *fragments)


def enum_body(members: str, type_key: str = '    type_key = "t.Kind"\n') -> str:
    return "@declare_enum\nclass Kind(Enum):\n" + type_key + members + NODE


def test_error_duplicate_value(tmp_path):
    body = enum_body("    A = 0\n    B = 0\n")
    check_error(
        tmp_path, body, "B = 0", "member 'B' of enum Kind repeats the value 0 of member 'A'"
    )


def test_error_duplicate_name(tmp_path):
    body = enum_body("    A = 0\n    B = 1\n    A = 2\n")
    check_error(tmp_path, body, "A = 2", "duplicate member 'A' in enum Kind")


def test_error_names_equal_in_cpp(tmp_path):
    body = enum_body("    Add = 0\n    add = 1\n")
    check_error(
        tmp_path, body, "add = 1", "member 'add' of enum Kind and member 'Add' are both kAdd"
    )


def test_error_value_not_int(tmp_path):
    check_error(
        tmp_path, enum_body('    A = "x"\n'), 'A = "x"', "member 'A' of enum Kind must be an int"
    )
    check_error(tmp_path, enum_body("    A = True\n"), "A = True", "must be an int, not True")


def test_error_missing_type_key(tmp_path):
    body = enum_body("    A = 0\n", type_key="")
    check_error(tmp_path, body, "class Kind", "enum Kind has no type_key")


def test_error_member_not_a_cpp_identifier(tmp_path):
    body = enum_body("    Añadir = 0\n")
    check_error(tmp_path, body, "Añadir", "member 'Añadir' of enum Kind is not a C++ identifier")


def test_error_undeclared_enum(tmp_path):
    body = 'class Kind(Enum):\n    type_key = "t.Kind"\n    A = 0\n' + NODE
    check_error(tmp_path, body, "class Kind", "Kind derives from Enum but is not declared")


def test_error_bad_enum_default(tmp_path):
    body = enum_body("    A = 0\n").replace("op: Kind", "op: Kind = 7")
    check_error(tmp_path, body, "op: Kind = 7", "bad default 7 for field 'op'", "member of Kind")


def test_error_duplicate_enum_type_key(tmp_path):
    body = enum_body("    A = 0\n") + (
        '\n\n@declare_enum\nclass Other(Enum):\n    type_key = "t.Kind"\n    A = 0\n'
    )
    check_error(tmp_path, body, "class Other", "duplicate enum type_key 't.Kind'")


def test_error_enum_without_header(tmp_path):
    path = write(tmp_path / "schema.py", HEAD + enum_body("    A = 0\n"))
    expect_error(
        tmp_path,
        ["generate", path, "--source", tmp_path / "o.cc"],
        f"schema.py:{line_of(path, 'class Kind')}: enum Kind is generated only into a whole header",
    )


def test_error_in_place_region_of_a_node_holding_an_enum(tmp_path):
    """The enum goes into --header, which includes the in-place files: a node in an in-place
    region would use the enum before its declaration (a C++ error 60 lines long). tschema says
    so, at the region's file:line and the field's schema line."""
    path = write(tmp_path / "schema.py", HEAD + enum_body("    A = 0\n"))
    ir = write(tmp_path / "ir.h", "#pragma once\n\n// tschema: UseNode\n// tschema: end\n")
    err = expect_error(
        tmp_path,
        ["generate", path, "--in-place", ir, "--header", tmp_path / "all.h"],
        "ir.h:3: UseNode holds enum Kind (field 'op', schema.py:"
        f"{line_of(path, 'op: Kind')}), which is generated into --header only",
    )
    assert "remove the region" in err
    # The same node generated into --header instead is fine.
    code, _, err = run_cli("generate", path, "--header", tmp_path / "all.h")
    assert code == 0, err


@pytest.mark.parametrize(
    "member",
    [
        "mro = 1",
        "_ignore_ = 1",
        "_missing_ = 1",
        "__ = 1",
        # Dunders were skipped as if Python had put them there: the member was silently lost
        # (the C++ enum and the Python one disagreed), and `__init__` failed the Python enum.
        "__init__ = 1",
        "__class__ = 1",
        "__x__ = 1",
        "__doc__ = 1",
        "def __str__(self):\n        return 'x'",
    ],
)
def test_error_member_reserved_by_python(tmp_path, member):
    body = enum_body(f"    A = 0\n    {member}\n")
    name = member.split(" = ")[0].replace("def ", "").split("(")[0]
    check_error(
        tmp_path,
        body,
        member.split("\n")[0],
        f"member {name!r} of enum Kind is reserved by Python enums",
    )


def test_a_docstring_is_not_a_member(tmp_path):
    """The class docstring and what Python puts in every class are not members."""
    path = write(tmp_path / "schema.py", HEAD + enum_body('    """Doc."""\n    A = 0\n'))
    argv = ["generate", path, "--header", tmp_path / "o.h", "--python", tmp_path / "o_py.py"]
    code, _, err = run_cli(*argv)
    assert code == 0, err
    text = (tmp_path / "o_py.py").read_text()
    assert "    A = 0\n" in text and "__" not in text.split("class Kind")[1].split("register")[0]


def test_error_enum_named_like_a_python_class(tmp_path):
    body = enum_body("    A = 0\n").replace("class Kind(Enum)", "class Use(Enum)")
    body = body.replace("op: Kind", "op: Use")
    check_error(
        tmp_path, body, "class Use(Enum)", "Python class name 'Use' of enum Use is also used"
    )


def test_enum_from_another_schema_file(tmp_path):
    """A node of b.py holds an enum a.py declares: b's outputs use it but do not declare it."""
    write(
        tmp_path / "a.py",
        HEAD + '@declare_enum\nclass Kind(Enum):\n    type_key = "t.Kind"\n    A = 0\n    B = 1\n',
    )
    b = write(
        tmp_path / "b.py",
        HEAD + "from a import Kind\n\n\n"
        '@declare\nclass UseNode(Object):\n    type_key = "t.Use"\n    op: Kind = Kind.B\n',
    )
    code, _, err = run_cli(
        "generate", b, "--header", tmp_path / "b.h", "--python", tmp_path / "b_py.py"
    )
    assert code == 0, err
    header = (tmp_path / "b.h").read_text()
    assert "enum class" not in header and "  Kind op = Kind::kB;" in header
    module = (tmp_path / "b_py.py").read_text()
    assert "class Kind" not in module and "register_enum" not in module
    assert "def __init__(self, op: enum.IntEnum = 'B') -> None:" in module
    data = json.loads(run_cli("dump", b)[1])
    assert [(e["name"], e["emitted"]) for e in data["enums"]] == [("Kind", False)]


def test_error_enum_without_members(tmp_path):
    check_error(tmp_path, enum_body(""), "class Kind", "enum Kind has no members")
