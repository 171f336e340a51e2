"""In-place regions: byte-for-byte preservation, marker errors, validation of hand-written C++,
and a randomized property test."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from tschema_support import FIXTURES, expect_error, run_cli, snapshot

from ferry.tschema import inplace

SEED = FIXTURES / "seed.py"
NODES = ["BaseExprNode", "PrimExprNode", "IntImmNode", "RelayExprNode", "GlobalVarNode"]
GVAR_CUSTOM = (
    "  // tschema: custom-begin\n"
    "  bool SEqualReduce(const GlobalVarNode* other, ::ferry::SEqualReducer equal) const {\n"
    "    return equal(name_hint, other->name_hint) && equal.FreeVarEqualImpl(this, other);\n"
    "  }\n"
    "  void SHashReduce(::ferry::SHashReducer hash_reduce) const {\n"
    "    hash_reduce(name_hint);\n"
    "    hash_reduce.FreeVarHashImpl(this);\n"
    "  }\n"
    "  // tschema: custom-end\n"
)


def regions_text(eol: str = "\n", custom: str = GVAR_CUSTOM) -> str:
    parts = []
    for name in NODES:
        parts.append(f"// tschema: {name}\n")
        if name == "GlobalVarNode":
            parts.append(custom)
        parts.append("// tschema: end\n\n")
    return "".join(parts).replace("\n", eol)


def run_seed(path: Path, *extra):
    return run_cli("generate", SEED, "--in-place", path, *extra)


def outside(text: str):
    """The text outside the regions (marker lines included), as a list of chunks."""
    return re.split(r"(?s)// tschema: [A-Za-z]+Node\r?\n.*?(?=[ \t]*// tschema: end)", text)


# Byte-for-byte preservation --------------------------------------------------------------------


def test_crlf_tabs_non_ascii_and_no_final_newline(tmp_path):
    head = (
        "// caf\u00e9 \u2014 \u4e2d\u6587\r\n\tint tabbed;\t\r\n".encode("utf-8")
        + b"// latin-1 byte: \xe9 and a lone CR\r here\r\n"
    )
    body = regions_text("\r\n").encode("utf-8")
    tail = b"int last_line_without_newline;"
    path = tmp_path / "x.h"
    path.write_bytes(head + body + tail)
    code, _, err = run_seed(path)
    assert code == 0, err
    new = path.read_bytes()
    assert new.startswith(head) and new.endswith(tail)
    generated = new[len(head) : -len(tail)]
    assert b"\n" not in generated.replace(b"\r\n", b"")  # the regions follow the CRLF markers
    assert GVAR_CUSTOM.replace("\n", "\r\n").encode() in generated
    assert outside(inplace.decode(new)) == outside(inplace.decode(head + body + tail))
    before = snapshot(tmp_path)
    assert run_seed(path)[0] == 0 and snapshot(tmp_path) == before  # idempotent


def test_indented_region_and_verbatim_custom_block(tmp_path):
    custom = (
        "\t// tschema: custom-begin\n"
        "\tbool SEqualReduce(const GlobalVarNode*, ::ferry::SEqualReducer) const {"
        " return true; }  \n"
        "   void SHashReduce(::ferry::SHashReducer) const {}\n"
        "\t// tschema: custom-end\n"
    )
    text = (
        "namespace a {\n"
        + "".join(
            f"    // tschema: {n}\n"
            + (custom if n == "GlobalVarNode" else "")
            + "    // tschema: end\n"
            for n in NODES
        )
        + "}\n"
    )
    path = tmp_path / "x.h"
    path.write_text(text)
    assert run_seed(path)[0] == 0
    new = path.read_text()
    assert "    class IntImmNode : public PrimExprNode {\n     public:\n" in new
    assert custom + "    };\n" in new  # verbatim, right before the node class's brace
    assert "\n\n" in new and not re.search(r"[ \t]+\n\n", new.split("custom-end")[1])


def test_generated_text_inside_region_is_replaced(tmp_path):
    text = regions_text().replace(
        "// tschema: IntImmNode\n", "// tschema: IntImmNode\nstale junk { ;\n"
    )
    path = tmp_path / "x.h"
    path.write_text(text)
    assert run_seed(path)[0] == 0
    assert "stale junk" not in path.read_text()


def test_custom_block_anywhere_in_region_moves_to_class_end(tmp_path):
    text = regions_text(custom="").replace(
        "// tschema: GlobalVarNode\n",
        "// tschema: GlobalVarNode\nold generated line\n" + GVAR_CUSTOM + "more old text\n",
    )
    path = tmp_path / "x.h"
    path.write_text(text)
    assert run_seed(path)[0] == 0
    new = path.read_text()
    assert GVAR_CUSTOM + "};\n" in new and "old generated" not in new and "more old" not in new


# Marker errors: each names the C++ file and line, and leaves every file as it was --------------


def marker_error(tmp_path: Path, text: str, needle: str, *fragments: str, occurrence: int = 0):
    path = tmp_path / "x.h"
    path.write_text(text)
    lines = text.split("\n")
    line = [i for i, s in enumerate(lines, 1) if needle in s][occurrence]
    expect_error(
        tmp_path,
        ["generate", SEED, "--in-place", path, "--python", tmp_path / "p.py"],
        f"x.h:{line}: ",
        *fragments,
    )


def test_unclosed_region(tmp_path):
    marker_error(
        tmp_path,
        regions_text() + "// tschema: IntImmNode\nint x;\n",
        "tschema: IntImmNode",
        "region 'IntImmNode' is not closed",
        occurrence=1,
    )


def test_end_without_region(tmp_path):
    marker_error(
        tmp_path,
        "int a;\n// tschema: end\n" + regions_text(),
        "tschema: end",
        "'// tschema: end' without an open region",
    )


def test_nested_region(tmp_path):
    text = regions_text().replace(
        "// tschema: PrimExprNode\n", "// tschema: PrimExprNode\n// tschema: IntImmNode\n", 1
    )
    marker_error(
        tmp_path,
        text,
        "tschema: IntImmNode",
        "region 'IntImmNode' opens inside region 'PrimExprNode'",
        "cannot nest",
    )


def test_nested_custom_block(tmp_path):
    text = regions_text().replace(
        "  // tschema: custom-begin\n",
        "  // tschema: custom-begin\n  // tschema: custom-begin\n",
        1,
    )
    marker_error(tmp_path, text, "custom-begin", "nested '// tschema: custom-begin'", occurrence=1)


def test_custom_outside_region(tmp_path):
    marker_error(
        tmp_path,
        "// tschema: custom-begin\n// tschema: custom-end\n" + regions_text(),
        "custom-begin",
        "'// tschema: custom-begin' outside a region",
    )


def test_custom_begin_not_closed(tmp_path):
    text = regions_text().replace("  // tschema: custom-end\n", "")
    marker_error(tmp_path, text, "custom-begin", "is not closed by '// tschema: custom-end'")


def test_custom_end_without_begin(tmp_path):
    text = regions_text().replace(
        "// tschema: IntImmNode\n", "// tschema: IntImmNode\n// tschema: custom-end\n"
    )
    marker_error(
        tmp_path, text, "custom-end", "'// tschema: custom-end' without '// tschema: custom-begin'"
    )


def test_second_custom_block(tmp_path):
    text = regions_text(custom=GVAR_CUSTOM + "// tschema: custom-begin\n// tschema: custom-end\n")
    marker_error(
        tmp_path,
        text,
        "custom-begin",
        "second custom block in region 'GlobalVarNode'",
        occurrence=1,
    )


def test_unknown_node(tmp_path):
    marker_error(
        tmp_path,
        regions_text() + "// tschema: IntImmNod\n// tschema: end\n",
        "IntImmNod\n"[:-1] + "",
        "unknown node 'IntImmNod'",
        "did you mean 'IntImmNode'?",
        occurrence=1,
    )


def test_duplicate_region(tmp_path):
    marker_error(
        tmp_path,
        regions_text() + "// tschema: IntImmNode\n// tschema: end\n",
        "tschema: IntImmNode",
        "duplicate region for 'IntImmNode' (first at ",
        occurrence=1,
    )


def test_duplicate_region_across_files(tmp_path):
    (tmp_path / "a.h").write_text(regions_text())
    (tmp_path / "b.h").write_text("\n// tschema: PrimExprNode\n// tschema: end\n")
    expect_error(
        tmp_path,
        ["generate", SEED, "--in-place", tmp_path / "a.h", tmp_path / "b.h"],
        "b.h:2: duplicate region for 'PrimExprNode' (first at ",
        "a.h:",
    )


def test_malformed_marker(tmp_path):
    marker_error(
        tmp_path, "// tschema: Int Imm\n" + regions_text(), "Int Imm", "malformed tschema marker"
    )


def test_region_of_node_from_another_schema_file(tmp_path):
    path = tmp_path / "x.h"
    path.write_text(
        "// tschema: ExprNode\n// tschema: end\n// tschema: CallNode\n// tschema: end\n"
    )
    expect_error(
        tmp_path,
        ["generate", FIXTURES / "kitchen_ops.py", "--in-place", path],
        "x.h:1: node 'ExprNode' is declared in ",
        "which is not among the schema files of this run",
    )


def test_node_without_region_and_no_header(tmp_path):
    path = tmp_path / "x.h"
    path.write_text(regions_text().replace("// tschema: IntImmNode\n// tschema: end\n", ""))
    expect_error(
        tmp_path,
        ["generate", SEED, "--in-place", path],
        "seed.py:",
        "IntImmNode has no '// tschema: IntImmNode' region",
    )


def test_region_before_its_parent(tmp_path):
    text = "// tschema: IntImmNode\n// tschema: end\n" + regions_text().replace(
        "// tschema: IntImmNode\n// tschema: end\n", ""
    )
    marker_error(
        tmp_path,
        text,
        "tschema: IntImmNode",
        "region 'IntImmNode' comes before the region of its parent 'PrimExprNode'",
    )


def test_errors_in_several_files_write_nothing(tmp_path):
    (tmp_path / "good.h").write_text(regions_text().replace("IntImmNode", "Bad", 0))
    (tmp_path / "bad.h").write_text("// tschema: end\n")
    expect_error(
        tmp_path,
        ["generate", SEED, "--in-place", tmp_path / "good.h", tmp_path / "bad.h"],
        "bad.h:1:",
    )


# Validation of hand-written C++ ------------------------------------------------------------


def validation_error(tmp_path: Path, header: str, cc: str, *fragments: str):
    (tmp_path / "x.h").write_text(header)
    (tmp_path / "x.cc").write_text(cc)
    return expect_error(
        tmp_path,
        ["generate", SEED, "--in-place", tmp_path / "x.h", "--scan", tmp_path / "x.cc"],
        *fragments,
    )


REGISTER_ALL = "".join(f"FERRY_REGISTER_NODE_TYPE({n});\n" for n in NODES[1:])


def test_hand_written_registration_is_accepted(tmp_path):
    (tmp_path / "x.h").write_text(regions_text())
    (tmp_path / "x.cc").write_text("namespace seed {\n" + REGISTER_ALL + "}\n")
    code, _, err = run_cli(
        "generate", SEED, "--in-place", tmp_path / "x.h", "--scan", tmp_path / "x.cc"
    )
    assert code == 0, err


def test_missing_registration(tmp_path):
    cc = REGISTER_ALL.replace(
        "FERRY_REGISTER_NODE_TYPE(IntImmNode);\n",
        "// FERRY_REGISTER_NODE_TYPE(IntImmNode); is only a comment\n",
    )
    line = regions_text().split("\n").index("// tschema: IntImmNode") + 1
    validation_error(
        tmp_path,
        regions_text(),
        cc,
        f"x.h:{line}: IntImmNode is not registered: no FERRY_REGISTER_NODE_TYPE(IntImmNode)",
    )


def test_generated_source_counts_as_registration(tmp_path):
    (tmp_path / "x.h").write_text(regions_text())
    code, _, err = run_cli(
        "generate", SEED, "--in-place", tmp_path / "x.h", "--source", tmp_path / "reg.cc"
    )
    assert code == 0, err


def test_defaults_off_without_custom_sequal(tmp_path):
    custom = GVAR_CUSTOM.replace("bool SEqualReduce", "bool Unrelated")
    text = regions_text(custom=custom)
    line = text.split("\n").index("// tschema: GlobalVarNode") + 1
    validation_error(
        tmp_path,
        text,
        REGISTER_ALL,
        f"x.h:{line}: GlobalVarNode sets default_sequal_reduce = False, but its "
        "custom region defines no SEqualReduce",
    )


def test_defaults_off_without_custom_shash(tmp_path):
    custom = GVAR_CUSTOM.replace("void SHashReduce", "void Unrelated")
    validation_error(
        tmp_path,
        regions_text(custom=custom),
        REGISTER_ALL,
        "GlobalVarNode sets default_shash_reduce = False, but its custom region "
        "defines no SHashReduce",
    )


def test_defaults_off_without_custom_block(tmp_path):
    validation_error(
        tmp_path,
        regions_text(custom=""),
        REGISTER_ALL,
        "GlobalVarNode sets default_sequal_reduce = False, but its region has no "
        "custom block defining SEqualReduce",
        "default_shash_reduce = False",
    )


def test_type_key_outside_region_disagrees(tmp_path):
    hand = (
        "class IntImmNode;\n"
        "class IntImmNode_old {};\n"
        "struct IntImmNode final : public PrimExprNode {\n"
        '  // _type_key = "in a comment"\n'
        '  static constexpr const char* _type_key = "OldIntImm";\n'
        "};\n"
    )
    text = regions_text().replace("// tschema: IntImmNode\n// tschema: end\n", "") + hand
    line = text.split("\n").index('  static constexpr const char* _type_key = "OldIntImm";') + 1
    err = validation_error(
        tmp_path,
        text,
        REGISTER_ALL,
        f"x.h:{line}: _type_key 'OldIntImm' of IntImmNode disagrees with "
        "the schema, which says 'IntImm'",
    )
    assert "in a comment" not in err


def test_type_key_in_scanned_file_disagrees(tmp_path):
    cc = REGISTER_ALL + (
        'class GlobalVarNode {\n  static constexpr const char* _type_key = "GV";\n};\n'
    )
    validation_error(
        tmp_path,
        regions_text(),
        cc,
        f"x.cc:{REGISTER_ALL.count(chr(10)) + 2}: _type_key 'GV' of GlobalVarNode "
        "disagrees with the schema",
    )


def test_custom_member_duplicates_field(tmp_path):
    custom = GVAR_CUSTOM.replace(
        "  // tschema: custom-end\n", "  ::ferry::String name_hint;\n  // tschema: custom-end\n"
    )
    text = regions_text(custom=custom)
    line = text.split("\n").index("  ::ferry::String name_hint;") + 1
    validation_error(
        tmp_path,
        text,
        REGISTER_ALL,
        f"x.h:{line}: custom region of GlobalVarNode declares 'name_hint', which "
        "duplicates the schema field of GlobalVarNode",
    )


def test_custom_member_duplicates_inherited_field_and_generated_member(tmp_path):
    custom = GVAR_CUSTOM.replace(
        "  // tschema: custom-end\n",
        "  int x = 1, dtype_alias, y;\n  void VisitAttrs(::ferry::AttrVisitor* v) {}\n"
        "  // tschema: custom-end\n",
    )
    schema_text = SEED.read_text().replace(
        "    name_hint: ty.String", "    name_hint: ty.String\n    y: ty.int64_t = 0"
    )
    (tmp_path / "s.py").write_text(schema_text)
    (tmp_path / "x.h").write_text(regions_text(custom=custom))
    (tmp_path / "x.cc").write_text(REGISTER_ALL)
    expect_error(
        tmp_path,
        [
            "generate",
            tmp_path / "s.py",
            "--in-place",
            tmp_path / "x.h",
            "--scan",
            tmp_path / "x.cc",
        ],
        "declares 'y', which duplicates the schema field of GlobalVarNode",
        "declares VisitAttrs, which tschema generates (default_visit_attrs is on)",
    )


# Property test ---------------------------------------------------------------------------------

_NOISE = [
    "int a;",
    "\t\tfoo(bar);",
    "// caf\u00e9 \u4e2d",
    "",
    "  ",
    "} // x",
    "/* tschema */",
    "// tschema is great",
    "#define X 1",
    "\udce9 raw byte",
    "template <class T> T f();",
]


def _random_file(rng: random.Random):
    """Random hand-written text with the five seed regions at random places; returns
    (text, expected outside chunks)."""
    eol_choices = ["\n", "\r\n"]
    chunks = []
    for name in NODES:
        noise = "".join(
            rng.choice(_NOISE) + rng.choice(eol_choices) for _ in range(rng.randint(0, 4))
        )
        chunks.append(noise)
        eol = rng.choice(eol_choices)
        indent = rng.choice(["", "  ", "\t"])
        body = [rng.choice(_NOISE) + eol for _ in range(rng.randint(0, 3))]
        custom = ""
        if name == "GlobalVarNode":
            custom = GVAR_CUSTOM.replace("\n", eol)
        elif rng.random() < 0.4:
            custom = (
                f"{indent}// tschema: custom-begin{eol}"
                + "".join(f"  // hand {rng.random()}{eol}" for _ in range(rng.randint(0, 2)))
                + f"{indent}// tschema: custom-end{eol}"
            )
        pos = rng.randint(0, len(body))
        inside = "".join(body[:pos]) + custom + "".join(body[pos:])
        chunks.append(
            f"{indent}// tschema: {name}{eol}{inside}"
            f"{indent}// tschema: end{rng.choice(eol_choices)}"
        )
    tail = rng.choice(_NOISE) * rng.randint(0, 2)
    return "".join(chunks) + tail


@pytest.mark.parametrize("seed", range(40))
def test_random_files_keep_outside_bytes_and_are_idempotent(tmp_path, seed):
    rng = random.Random(seed)
    text = _random_file(rng)
    data = inplace.encode(text)
    path = tmp_path / "r.h"
    path.write_bytes(data)
    code, _, err = run_cli("generate", SEED, "--in-place", path, "--source", tmp_path / "r.cc")
    assert code == 0, err
    new = path.read_bytes()
    old_lines, new_lines = inplace.split_lines(text), inplace.split_lines(inplace.decode(new))
    old_regions, _ = inplace.parse_regions("r.h", old_lines, lambda n: None)
    new_regions, errors = inplace.parse_regions("r.h", new_lines, lambda n: None)
    assert not errors and [r.name for r in new_regions] == NODES
    old_outside = list(inplace.outside_regions(old_lines, old_regions).values())
    new_outside = list(inplace.outside_regions(new_lines, new_regions).values())
    assert old_outside == new_outside
    for old, new_r in zip(old_regions, new_regions):
        assert old_lines[old.start] == new_lines[new_r.start]  # markers byte for byte
        assert old_lines[old.stop] == new_lines[new_r.stop]
        assert old.custom == new_r.custom
    before = snapshot(tmp_path)
    assert run_cli("generate", SEED, "--in-place", path, "--source", tmp_path / "r.cc")[0] == 0
    assert snapshot(tmp_path) == before
