"""`tschema generate --rust`: the typed Rust references of a schema (rustgen.py).

rust/ferry/tests/tschema.rs compiles the checked-in output for
rust/ferry/tests/tschema/shapes_schema.py with cargo and reads objects of the C++ types
generated from the same schema; the first test here keeps those files equal to what tschema
writes today, so that cargo test needs no Python.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tschema_support import REPO, run_cli

RUST_DIR = REPO / "rust" / "ferry" / "tests" / "tschema"


def test_checked_in_rust_test_files_are_what_tschema_writes(tmp_path):
    out = [tmp_path / n for n in ("shapes.h", "shapes.cc", "shapes_generated.rs")]
    schema = RUST_DIR / "shapes_schema.py"
    code, _, err = run_cli(
        "generate", schema, "--header", out[0], "--source", out[1], "--rust", out[2]
    )
    assert code == 0, err
    for path in out:
        assert path.read_bytes() == (RUST_DIR / path.name).read_bytes(), (
            f"{RUST_DIR / path.name} is stale: rerun `python -m ferry.tschema generate "
            "shapes_schema.py --header shapes.h --source shapes.cc --rust shapes_generated.rs` "
            "in that directory"
        )


SCHEMA = '''\
from ferry.tschema import Enum, Object, declare, declare_enum, ty


@declare_enum
class Mode(Enum):
    type_key = "rt.Mode"
    Fast = 0
    Slow = 3


@declare
class BaseNode(Object):
    """The base.

    Attributes
    ----------
    count
        How many.
    """

    type_key = "rt.Base"
    count: ty.int64_t


@declare
class LeafNode(BaseNode):
    type_key = "rt.Leaf"
    ratio: ty.double
    small: ty.float
    big: ty.uint64_t
    text: ty.String
    flag: ty.bool
    kids: ty.Array[BaseNode]
    table: ty.Map[ty.String, ty.int32_t]
    type: ty.Optional[ty.int64_t] = None
    mode: Mode = Mode.Slow
    other: ty.ObjectRef = None
    dtype: ty.DataType = "int32"
'''


def generate(tmp_path: Path, schema: str):
    (tmp_path / "schema.py").write_text(schema)
    return run_cli("generate", tmp_path / "schema.py", "--rust", tmp_path / "out.rs")


def test_rust_text_for_every_field_kind(tmp_path):
    code, _, err = generate(tmp_path, SCHEMA)
    assert code == 0, err
    text = (tmp_path / "out.rs").read_text()
    expected = [
        "pub enum Mode {\n    Fast = 0,\n    Slow = 3,\n}",
        'pub const TYPE_KEY: &\'static str = "rt.Mode";',
        '"Slow" => Some(Mode::Slow),',
        'pub struct Base: ferry::ObjectRef = "rt.Base";',
        'pub struct Leaf: Base = "rt.Leaf";',
        "    /// How many.\n    pub fn count(&self) -> ferry::Result<i64> {",
        "pub fn ratio(&self) -> ferry::Result<f64> {",
        "pub fn small(&self) -> ferry::Result<f32> {",
        "pub fn big(&self) -> ferry::Result<u64> {",
        "pub fn text(&self) -> ferry::Result<ferry::String> {",
        "pub fn flag(&self) -> ferry::Result<bool> {",
        "pub fn kids(&self) -> ferry::Result<ferry::Array<Base>> {",
        "pub fn table(&self) -> ferry::Result<ferry::Map<ferry::String, i32>> {",
        # A Rust keyword becomes a raw identifier; the reflected name stays.
        'pub fn r#type(&self) -> ferry::Result<Option<i64>> {\n        self.0.get_attr("type")',
        "pub fn mode(&self) -> ferry::Result<Mode> {",
        "pub fn other(&self) -> ferry::Result<Option<ferry::ObjectRef>> {",
        "pub fn dtype(&self) -> ferry::Result<ferry::DataType> {",
        # new: the fields without default (inherited first); new_full: all of them.
        "pub fn new(count: i64, ratio: f64, small: f32, big: u64, text: &str, flag: bool, "
        "kids: ferry::Array<Base>, table: ferry::Map<ferry::String, i32>) "
        "-> ferry::Result<Leaf> {",
        '("big", ferry::Any::try_from(big)?),',
        '("text", ferry::IntoAny::into_any(text)),',
        "#[allow(clippy::too_many_arguments)]\n    pub fn new_full(",
        "r#type: Option<i64>, mode: Mode, other: Option<ferry::ObjectRef>, dtype: ferry::DataType) "
        "-> ferry::Result<Leaf>",
    ]
    for snippet in expected:
        assert snippet in text, f"missing:\n{snippet}\n--- in ---\n{text}"
    # Inherited fields are read through Deref to the parent, not repeated.
    assert text.count("pub fn count(") == 1
    # Base has no defaulted field: no new_full.
    base = text[text.index("impl Base {") : text.index("impl Base {") + 600]
    assert "new_full" not in base.split("ferry::node_ref!")[0]


def test_unsupported_field_types_and_names_name_the_schema_line(tmp_path):
    schema = textwrap.dedent(
        """\
        from ferry.tschema import Enum, Object, declare, declare_enum, ty


        @declare_enum
        class Kind(Enum):
            type_key = "bad.Kind"
            name = 1


        @declare
        class BadNode(Object):
            type_key = "bad.Bad"
            downcast: ty.int64_t
            nested: ty.Array[ty.uint64_t]
        """
    )
    (tmp_path / "out.rs").write_text("old")
    code, _, err = generate(tmp_path, schema)
    assert code != 0
    path = str(tmp_path / "schema.py")
    assert f"{path}:13: " in err and "'downcast' would clash with the method downcast" in err, err
    assert f"{path}:14: " in err and "ty.uint64_t inside a container" in err, err
    assert f"{path}:5: " in err and "member 'name' of enum Kind" in err, err
    assert (tmp_path / "out.rs").read_text() == "old"  # nothing written


def test_rust_output_is_checked_like_the_others(tmp_path):
    code, _, err = generate(tmp_path, SCHEMA)
    assert code == 0, err
    args = ["check", tmp_path / "schema.py", "--rust", tmp_path / "out.rs"]
    assert run_cli(*args)[0] == 0
    (tmp_path / "out.rs").write_text((tmp_path / "out.rs").read_text().replace("Slow", "Slo"))
    code, out, err = run_cli(*args)
    assert code != 0
    assert "out.rs" in out + err


def test_nodes_of_schema_files_not_in_the_run_are_errors(tmp_path):
    fixtures = REPO / "tests" / "python" / "tschema" / "fixtures"
    code, _, err = run_cli("generate", fixtures / "kitchen_ops.py", "--rust", tmp_path / "o.rs")
    assert code != 0
    assert "kitchen_ops.py:8: CallNode derives from ExprNode (declared in " in err, err
    assert "kitchen_ops.py:22: field 'args' of CallNode: ExprNode (declared in" in err, err
    assert "give both to one --rust run" in err
    assert not (tmp_path / "o.rs").exists()
    both = [fixtures / "kitchen.py", fixtures / "kitchen_ops.py"]
    assert run_cli("generate", *both, "--rust", tmp_path / "o.rs")[0] == 0
    assert "pub struct Call: Expr" in (tmp_path / "o.rs").read_text()


def test_mutable_nodes_get_unsafe_setters_and_others_none(tmp_path):
    mutable = SCHEMA.replace(
        '    type_key = "rt.Leaf"\n', '    type_key = "rt.Leaf"\n    mutable = True\n'
    )
    assert mutable != SCHEMA
    code, _, err = generate(tmp_path, mutable)
    assert code == 0, err
    text = (tmp_path / "out.rs").read_text()
    for snippet in [
        # Its own fields, and the inherited one of its immutable parent.
        "pub unsafe fn set_count(&self, value: i64) -> ferry::Result<()> {",
        'unsafe { self.0.set_attr("count", ferry::IntoAny::into_any(value)) }',
        "pub unsafe fn set_text(&self, value: &str) -> ferry::Result<()> {",
        'unsafe { self.0.set_attr("big", ferry::Any::try_from(value)?) }',
        "pub unsafe fn set_type(&self, value: Option<i64>) -> ferry::Result<()> {",
        "pub unsafe fn set_mode(&self, value: Mode) -> ferry::Result<()> {",
        "    /// # Safety\n",
    ]:
        assert snippet in text, f"missing:\n{snippet}\n--- in ---\n{text}"
    assert text.count("pub unsafe fn set_count(") == 1
    # Immutable nodes (the default) have none.
    code, _, err = generate(tmp_path, SCHEMA)
    assert code == 0, err
    assert "pub unsafe fn set_" not in (tmp_path / "out.rs").read_text()


def test_a_setter_clashing_with_a_field_names_the_schema_line(tmp_path):
    schema = textwrap.dedent(
        """\
        from ferry.tschema import Object, declare, ty


        @declare
        class ClashNode(Object):
            type_key = "bad.Clash"
            mutable = True
            size: ty.int64_t
            set_size: ty.int64_t
            attr: ty.int64_t
        """
    )
    code, _, err = generate(tmp_path, schema)
    assert code != 0
    path = str(tmp_path / "schema.py")
    assert f"{path}:8: the setter set_size of field 'size' would clash with the field" in err, err
    assert f"{path}:10: the setter set_attr of field 'attr' would clash with the method" in err, err
    assert not (tmp_path / "out.rs").exists()


LISTS = """\
from ferry.tschema import Object, declare, ty


@declare
class BagNode(Object):
    type_key = "rt_lists.Bag"
    fixed: ty.List[ty.String]
    items: ty.List[ty.int64_t] = []
    names: ty.Dict[ty.String, ty.int64_t] = {}
"""


def test_list_and_dict_fields_in_every_output(tmp_path):
    (tmp_path / "schema.py").write_text(LISTS)
    outs = {k: tmp_path / f"out.{k}" for k in ("h", "cc", "py", "rs")}
    code, _, err = run_cli(
        "generate",
        tmp_path / "schema.py",
        *("--header", outs["h"], "--source", outs["cc"]),
        *("--python", outs["py"], "--rust", outs["rs"]),
    )
    assert code == 0, err
    header, stub, rust = (outs[k].read_text() for k in ("h", "py", "rs"))
    assert "::ferry::List<int64_t> items;" in header
    assert "::ferry::Dict<::ferry::String, int64_t> names;" in header
    assert "items: typing.MutableSequence[int] = []," in stub
    assert "names: typing.MutableMapping[str, int] = {}," in stub
    assert "pub fn items(&self) -> ferry::Result<ferry::List<i64>> {" in rust
    assert "pub fn names(&self) -> ferry::Result<ferry::Dict<ferry::String, i64>> {" in rust
    assert "pub fn new(fixed: ferry::List<ferry::String>) -> ferry::Result<Bag> {" in rust


def test_list_and_dict_fields_at_run_time(tmp_path):
    import ferry
    from ferry import tschema

    (tmp_path / "schema.py").write_text(LISTS)
    ns = tschema.register(str(tmp_path / "schema.py"))
    a, b = ns.Bag(fixed=["x"]), ns.Bag(fixed=[])
    a.items.append(3)  # in place, and each object has its own list
    assert (list(a.items), list(b.items), dict(a.names)) == ([3], [], {})
    assert isinstance(a.items, ferry.List) and isinstance(a.names, ferry.Dict)
    with pytest.raises(TypeError, match="items"):
        a.items.append("three")


def test_a_list_default_other_than_empty_names_the_line(tmp_path):
    code, _, err = generate(
        tmp_path, LISTS.replace("ty.List[ty.int64_t] = []", "ty.List[ty.int64_t] = [1]")
    )
    assert code != 0
    assert f"{tmp_path / 'schema.py'}:8: " in err and "only an empty list" in err, err
