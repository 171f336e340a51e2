"""The schema language: what it accepts, and every schema error with its file and line.

Each error test runs the CLI with outputs in the test directory and checks the exit code, the
`file:line: what` message and that no file was written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tschema_support import FIXTURES, expect_error, line_of, run_cli, schema

from ferry.tschema import Object, SchemaError, declare, load_schema, model, ty

BASE = """
@declare
class ExprNode(Object):
    type_key = "t.Expr"
    namespace = "t"

"""


def gen_args(tmp_path: Path, path: Path):
    return [
        "generate",
        path,
        "--header",
        tmp_path / "out.h",
        "--source",
        tmp_path / "out.cc",
        "--python",
        tmp_path / "out_py.py",
    ]


def check_error(tmp_path: Path, body: str, needle: str, *fragments: str) -> None:
    path = schema(tmp_path, BASE + body)
    line = line_of(path, needle)
    expect_error(tmp_path, gen_args(tmp_path, path), f"schema.py:{line}: ", *fragments)


# Errors, one test each -------------------------------------------------------------------------


def test_unknown_ty_attribute(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: ty.int65_t
""",
        "ty.int65_t",
        "unknown type ty.int65_t",
    )


def test_unknown_python_type(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: int
""",
        "value: int",
        "unknown type int for field 'value' of XNode",
    )


def test_unknown_name(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: Nowhere
""",
        "Nowhere",
        "unknown name 'Nowhere'",
    )


def test_unknown_quoted_type(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: ty.Array["Nowhere"]
""",
        "Nowhere",
        "unknown type 'Nowhere' for field 'value' of XNode",
    )


def test_missing_type_key(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    value: ty.int64_t
""",
        "class XNode",
        "XNode has no type_key",
    )


def test_duplicate_type_key(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"


@declare
class YNode(ExprNode):
    type_key = "t.X"  # second
""",
        "# second",
        "duplicate type_key 't.X': YNode and XNode",
    )


def test_duplicate_type_key_across_files(tmp_path):
    a = schema(tmp_path, BASE, "a.py")
    b = schema(
        tmp_path,
        """
@declare
class OtherNode(Object):
    type_key = "t.Expr"
""",
        "b.py",
    )
    expect_error(
        tmp_path,
        ["generate", a, b, "--header", tmp_path / "o.h"],
        f"b.py:{line_of(b, 'type_key')}: duplicate type_key 't.Expr'",
    )


def test_field_shadows_inherited(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    dtype: ty.DataType


@declare
class YNode(XNode):
    type_key = "t.Y"
    dtype: ty.DataType  # again
""",
        "# again",
        "field 'dtype' of YNode shadows the field inherited from XNode",
        "(declared at ",
    )


def test_method_is_unsupported(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"

    def helper(self):
        return 1
""",
        "def helper",
        "unsupported construct: method or property 'helper' in XNode",
    )


def test_plain_class_attribute_is_unsupported(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_keys = "t.X"
""",
        "type_keys",
        "unsupported construct: class attribute 'type_keys' in XNode",
        "did you mean 'type_key'?",
    )


def test_two_bases_are_unsupported(tmp_path):
    check_error(
        tmp_path,
        """
class Mixin:
    pass


@declare
class XNode(ExprNode, Mixin):
    type_key = "t.X"
""",
        "class XNode",
        "unsupported construct: XNode has 2 base classes",
    )


def test_undeclared_base(tmp_path):
    check_error(
        tmp_path,
        """
class Plain:
    pass


@declare
class XNode(Plain):
    type_key = "t.X"
""",
        "class XNode",
        "XNode derives from Plain, which is neither",
    )


def test_missing_declare(tmp_path):
    check_error(
        tmp_path,
        """
class XNode(ExprNode):
    type_key = "t.X"
""",
        "class XNode",
        "XNode derives from a schema class but is not declared with @declare",
    )


def test_declare_with_parentheses(tmp_path):
    check_error(
        tmp_path,
        """
@declare()
class XNode(ExprNode):
    type_key = "t.X"
""",
        "@declare()",
        "unsupported construct: @declare is used without arguments",
    )


def test_nested_optional(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: ty.Optional[ty.Optional[ty.int64_t]]
""",
        "value:",
        "unsupported construct: ty.Optional cannot nest",
    )


def test_generic_without_arguments(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    items: ty.Array
""",
        "items:",
        "ty.Array needs type arguments",
    )


def test_wrong_number_of_type_arguments(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    table: ty.Map[ty.String]
""",
        "table:",
        "ty.Map[...] takes 2 type arguments, got 1",
    )


def test_syntax_error(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: ty.int64_t = = 3
""",
        "= = 3",
        "syntax error",
    )


def test_exception_in_schema(tmp_path):
    check_error(
        tmp_path,
        """
VALUE = 1 // 0
""",
        "1 // 0",
        "error while importing the schema: ZeroDivisionError",
    )


def test_bad_default(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    small: ty.int8_t = 300
""",
        "small:",
        "bad default 300 for field 'small' (ty.int8_t): 300 is out of range for int8_t",
    )


def test_uint64_default_beyond_int64(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    big: ty.uint64_t = 2**63
""",
        "big:",
        "values above 2**63-1 cannot cross Ferry's ABI",
    )


def test_default_order(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    a: ty.int64_t = 1
    b: ty.int64_t
""",
        "b: ty.int64_t",
        "field 'b' of XNode has no default but follows 'a'",
    )


def test_bad_structural_role(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    a: ty.int64_t = ty.field(structural="definition")
""",
        "a: ty.int64_t",
        "structural role of field 'a' must be one of 'compare', 'def', 'ignore'",
    )


def test_final_with_children(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    final = True


@declare
class YNode(XNode):
    type_key = "t.Y"
""",
        "final = True",
        "XNode is final but YNode derives from it",
    )


def test_child_slots_too_large(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    type_child_slots = 4


@declare
class YNode(XNode):
    type_key = "t.Y"
    type_child_slots = 4  # too many


@declare
class ZNode(YNode):
    type_key = "t.Z"
""",
        "# too many",
        "type_child_slots of YNode (4) must be smaller than its parent XNode's (4)",
    )


def test_no_reference_name(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class Thing(ExprNode):
    type_key = "t.Thing"
""",
        "class Thing",
        "cannot name the reference class of Thing",
    )


def test_field_named_like_a_cpp_keyword(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    default: ty.int64_t
""",
        "default:",
        "field 'default' of XNode clashes with a C++ keyword",
    )


def test_docstring_documents_unknown_field(tmp_path):
    check_error(
        tmp_path,
        '''
@declare
class XNode(ExprNode):
    """An X.

    Attributes
    ----------
    valu
        Misspelled.
    """

    type_key = "t.X"
    value: ty.int64_t
''',
        "    valu",
        "docstring of XNode documents 'valu', which is not a field of XNode",
    )


def test_a_docstring_that_is_not_a_str_is_an_error(tmp_path):
    # `__doc__ = 5` in the class body was an AttributeError traceback from the docstring parser.
    check_error(
        tmp_path,
        """
@declare
class XNode(ExprNode):
    type_key = "t.X"
    value: ty.int64_t
    __doc__ = 5
""",
        "class XNode",
        "docstring of XNode: __doc__ must be a str, not 5",
    )


def test_field_holding_itself(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class ListNode(ExprNode):
    type_key = "t.List"
    tail: ty.Optional["ListNode"] = None
""",
        "tail:",
        "field 'tail' of ListNode holds itself",
        "use a base node declared earlier",
    )


def test_duplicate_cpp_name(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class ExprRefNode(ExprNode):
    type_key = "t.ExprRef"
    ref_name = "ExprNode"
""",
        "class ExprRefNode",
        "reference class name 'ExprNode' of ExprRefNode is already the node class name of ExprNode",
    )


def test_several_errors_are_reported_together(tmp_path):
    path = schema(
        tmp_path,
        BASE
        + """
@declare
class XNode(ExprNode):
    a: int
    b: ty.int8_t = 1000
""",
    )
    err = expect_error(
        tmp_path,
        gen_args(tmp_path, path),
        "XNode has no type_key",
        "unknown type int",
        "bad default 1000",
        "3 error(s); no file was written",
    )
    assert err.count("schema.py:") == 3


def test_hierarchy_cycle_is_reported():
    # Python classes cannot form a cycle; the model checks anyway, for records built otherwise.
    nodes = []
    for name in ("ANode", "BNode"):
        nodes.append(
            model.NodeDef(
                cls=type(name, (), {}),
                name=name,
                ref_name=name[:-4],
                type_key=name,
                namespace="",
                file="s.py",
                line=len(nodes) + 1,
                doc=[],
                default_visit_attrs=True,
                default_sequal_reduce=True,
                default_shash_reduce=True,
                final=False,
                type_child_slots=0,
                explicit_child_slots=False,
                fields=[],
            )
        )
    nodes[0].parent, nodes[1].parent = nodes[1], nodes[0]

    class Collect:
        errors = __import__("ferry.tschema.errors", fromlist=["x"]).DiagnosticList()

    model._check_hierarchy_cycles(nodes, Collect)
    with pytest.raises(SchemaError, match=r"s\.py:1: cycle in the hierarchy through ANode"):
        Collect.errors.raise_if_any()


def test_schema_error_message_format():
    err = SchemaError.at("/nowhere/x.py", 3, "what")
    assert str(err) == "/nowhere/x.py:3: what"
    assert err.diagnostics[0].line == 3


def test_missing_schema_file(tmp_path):
    expect_error(
        tmp_path,
        ["generate", tmp_path / "nope.py", "--header", tmp_path / "o.h"],
        "nope.py:1: schema file not found",
    )


# What the language accepts -------------------------------------------------------------------


def test_seed_model():
    s = load_schema([str(FIXTURES / "seed.py")])
    names = [n.name for n in s.nodes]
    assert names == ["BaseExprNode", "PrimExprNode", "IntImmNode", "RelayExprNode", "GlobalVarNode"]
    base, prim, intimm, relay, gvar = s.nodes
    assert (base.default_visit_attrs, base.default_sequal_reduce, base.default_shash_reduce) == (
        False,
        False,
        False,
    )
    assert [f.name for f in intimm.all_fields] == ["dtype", "value"]
    assert intimm.fields[0].doc == "The internal value."
    assert intimm.final and not prim.final and not base.final
    assert base.type_child_slots == 4 and prim.type_child_slots == 1
    assert intimm.namespace == "seed"  # inherited from BaseExprNode
    assert gvar.ref_name == "GlobalVar" and gvar.parent is relay
    assert base.doc == ["Base type of all the expressions."]


def test_kitchen_model_types_defaults_roles():
    s = load_schema([str(FIXTURES / "kitchen.py"), str(FIXTURES / "kitchen_ops.py")])
    let = s.by_name["LetNode"]
    assert [(f.name, f.structural) for f in let.fields] == [
        ("var", "def"),
        ("value", "compare"),
        ("body", "compare"),
        ("span", "ignore"),
    ]
    attrs = s.by_name["AttrsNode"]
    assert attrs.ref_name == "AttrsRef" and attrs.namespace == "kitchen::attrs"
    assert attrs.fields[0].type is ty.int8_t and not attrs.fields[0].has_default
    assert [f.type.spelling for f in attrs.fields][-5:] == [
        "ty.Array[ty.int64_t]",
        "ty.Map[ty.String, ExprNode]",
        "ty.Optional[ty.int64_t]",
        "ty.Optional[ExprNode]",
        "ExprNode",
    ]
    call = s.by_name["CallNode"]
    assert call.namespace == "kitchen::ops" and call.parent is s.by_name["ExprNode"]
    assert s.by_name["ExprNode"].type_child_slots == 16  # explicit
    assert not s.by_name["ListNode"].final  # final = False on a leaf


def test_only_given_files_are_emitted():
    s = load_schema([str(FIXTURES / "kitchen_ops.py")])
    assert [n.name for n in s.emitted] == ["CallNode"]
    assert "ExprNode" in s.by_name and not s.by_name["ExprNode"].emitted
    # Slots come from the node's own file, so they do not depend on which files are loaded.
    assert s.by_name["ExprNode"].type_child_slots == 16


def test_future_annotations_and_forward_references(tmp_path):
    path = tmp_path / "fut.py"
    path.write_text("""from __future__ import annotations

from ferry.tschema import Object, declare, ty


@declare
class ANode(Object):
    type_key = "f.A"


@declare
class BNode(ANode):
    type_key = "f.B"
    items: ty.Array[ANode]
    maybe: ty.Optional[ANode] = None
""")
    s = load_schema([str(path)])
    assert [f.type.spelling for f in s.by_name["BNode"].fields] == [
        "ty.Array[ANode]",
        "ty.Optional[ANode]",
    ]


def test_loading_twice_reads_the_file_again(tmp_path):
    path = schema(tmp_path, BASE)
    assert load_schema([str(path)]).nodes[0].type_key == "t.Expr"
    path.write_text(path.read_text().replace("t.Expr", "t.Expr2"))
    assert load_schema([str(path)]).nodes[0].type_key == "t.Expr2"
    assert not (tmp_path / "__pycache__").exists()


def test_declare_returns_the_class():
    @declare
    class LocalNode(Object):
        type_key = "local"

    assert LocalNode.__name__ == "LocalNode" and "__tschema__" in LocalNode.__dict__


def test_ty_field_repr_and_spelling():
    assert (
        repr(ty.field(default=None, structural="ignore"))
        == "ty.field(default=None, structural='ignore')"
    )
    assert (
        ty.Map[ty.String, ty.Array[ty.double]].spelling == "ty.Map[ty.String, ty.Array[ty.double]]"
    )


# JSON dump -----------------------------------------------------------------------------------


def test_dump(tmp_path):
    code, out, err = run_cli("dump", FIXTURES / "seed.py")
    assert code == 0, err
    data = json.loads(out)
    assert data["format"] == "tschema" and data["version"] == 1
    nodes = {n["name"]: n for n in data["nodes"]}
    intimm = nodes["IntImmNode"]
    assert intimm["type_key"] == "IntImm" and intimm["parent"] == "PrimExprNode"
    assert intimm["final"] is True and intimm["namespace"] == "seed"
    assert intimm["fields"] == [
        {
            "name": "value",
            "type": {"kind": "scalar", "name": "int64_t"},
            "spelling": "ty.int64_t",
            "doc": "The internal value.",
            "has_default": False,
            "default": None,
            "structural": "compare",
            "line": intimm["fields"][0]["line"],
        }
    ]
    assert nodes["BaseExprNode"]["children"] == ["PrimExprNode", "RelayExprNode"]
    assert nodes["BaseExprNode"]["type_child_slots"] == 4
    # -o writes the same text.
    code, _, _ = run_cli("dump", FIXTURES / "seed.py", "-o", tmp_path / "s.json")
    assert code == 0 and (tmp_path / "s.json").read_text() == out


def test_dump_types():
    code, out, _ = run_cli("dump", FIXTURES / "kitchen.py")
    attrs = next(n for n in json.loads(out)["nodes"] if n["name"] == "AttrsNode")
    types = {f["name"]: f["type"] for f in attrs["fields"]}
    assert types["table"] == {
        "kind": "Map",
        "key": {"kind": "String"},
        "value": {"kind": "node", "name": "ExprNode"},
    }
    assert types["maybe"] == {"kind": "Optional", "value": {"kind": "scalar", "name": "int64_t"}}
    defaults = {f["name"]: f["default"] for f in attrs["fields"]}
    assert defaults["u64"] == 2**63 - 1 and defaults["items"] == []


def test_dump_error(tmp_path):
    path = schema(tmp_path, "@declare\nclass XNode(Object):\n    pass\n")
    code, out, err = run_cli("dump", path)
    assert code == 2 and out == "" and f"schema.py:{line_of(path, 'class XNode')}:" in err


# mutable -----------------------------------------------------------------------------------------


def test_mutable_is_generated_where_it_changes_and_inherited(tmp_path):
    path = schema(
        tmp_path,
        BASE
        + """
@declare
class CounterNode(ExprNode):
    type_key = "t.Counter"
    mutable = True
    count: ty.int64_t

@declare
class TickNode(CounterNode):
    type_key = "t.Tick"
    step: ty.int64_t

@declare
class FrozenTickNode(CounterNode):
    type_key = "t.FrozenTick"
    mutable = False
""",
    )
    code, _, err = run_cli(*gen_args(tmp_path, path))
    assert code == 0, err
    header = (tmp_path / "out.h").read_text()

    def body(name):
        return header[header.index(f"class {name} ") :].split("};", 1)[0]

    assert "_type_mutable" not in body("ExprNode")
    assert "static constexpr bool _type_mutable = true;" in body("CounterNode")
    assert "_type_mutable" not in body("TickNode")  # inherited through C++
    assert "static constexpr bool _type_mutable = false;" in body("FrozenTickNode")
    nodes = {n.name: n for n in load_schema([path]).nodes}
    assert [
        nodes[n].is_mutable for n in ("ExprNode", "CounterNode", "TickNode", "FrozenTickNode")
    ] == [False, True, True, False]


def test_mutable_must_be_a_bool(tmp_path):
    check_error(
        tmp_path,
        """
@declare
class CounterNode(ExprNode):
    type_key = "t.Counter"
    mutable = "yes"
""",
        'mutable = "yes"',
        "mutable of CounterNode must be True or False",
    )
