"""The JSON form of a schema (`tschema dump`), for generators in other languages.

The format is documented in docs/tschema.md ("JSON dump"); `version` changes whenever a field
changes meaning or is removed.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

from .model import EnumDef, FieldDef, NodeDef, Schema

__all__ = ["FORMAT_VERSION", "to_json", "dumps"]

FORMAT_VERSION = 1


def _field(f: FieldDef) -> Dict[str, Any]:
    default: Any = f.default
    if isinstance(default, tuple):
        default = list(default)
    return {
        "name": f.name,
        "type": f.type.to_json(),
        "spelling": f.type.spelling,
        "doc": f.doc,
        "has_default": f.has_default,
        "default": default,
        "structural": f.structural,
        "line": f.line,
    }


def _node(node: NodeDef, base: str) -> Dict[str, Any]:
    return {
        "name": node.name,
        "ref_name": node.ref_name,
        "type_key": node.type_key,
        "namespace": node.namespace,
        "parent": node.parent.name if node.parent else None,
        "children": [c.name for c in node.children],
        "final": node.final,
        "mutable": node.is_mutable,
        "type_child_slots": node.type_child_slots,
        "type_child_slots_explicit": node.explicit_child_slots,
        "default_visit_attrs": node.default_visit_attrs,
        "default_sequal_reduce": node.default_sequal_reduce,
        "default_shash_reduce": node.default_shash_reduce,
        "emitted": node.emitted,
        "doc": "\n".join(node.doc),
        "file": _rel(node.file, base),
        "line": node.line,
        "fields": [_field(f) for f in node.fields],
    }


def _enum(e: EnumDef, base: str) -> Dict[str, Any]:
    return {
        "name": e.name,
        "type_key": e.type_key,
        "namespace": e.namespace,
        "emitted": e.emitted,
        "doc": "\n".join(e.doc),
        "file": _rel(e.file, base),
        "line": e.line,
        "members": [{"name": n, "value": v} for n, v in e.members],
    }


def _rel(path: str, base: str) -> str:
    try:
        return os.path.relpath(path, base).replace(os.sep, "/")
    except ValueError:
        return path


def to_json(schema: Schema, base: str = ".") -> Dict[str, Any]:
    """The schema as plain data; file paths relative to `base`."""
    nodes: List[NodeDef] = schema.nodes
    return {
        "format": "tschema",
        "version": FORMAT_VERSION,
        "files": [_rel(f, base) for f in schema.files],
        "nodes": [_node(n, base) for n in nodes],
        "enums": [_enum(e, base) for e in schema.enums],
    }


def dumps(schema: Schema, base: str = ".") -> str:
    return json.dumps(to_json(schema, base), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
