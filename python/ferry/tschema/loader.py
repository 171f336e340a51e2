"""Imports schema files and hands their declared classes to the model.

Each file is imported as a module (so a schema may import another schema file next to it);
exceptions raised while importing become `SchemaError`s at the schema line that raised them.
The modules are removed from `sys.modules` afterwards, so loading twice in one process (tests,
watch loops) reads the files again.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from types import ModuleType
from typing import Dict, List, Optional, Set

from . import ty
from .errors import Diagnostic, SchemaError
from .lang import Enum, Object
from .model import (
    Schema,
    build,
    declaration,
    enum_declaration,
    is_declared,
    is_enum,
    own_annotations,
)
from .source import SourceIndex

__all__ = ["load_schema"]


def load_schema(paths: List[str]) -> Schema:
    """Loads the schema files `paths` and returns the checked schema.

    Nodes declared in these files are *emitted* (generated); nodes they use from other modules
    (a parent or field type imported from another schema file) are part of the model but not
    generated.
    """
    if not paths:
        raise SchemaError([Diagnostic("<command line>", 1, "no schema file given")])
    abs_paths = [os.path.abspath(p) for p in paths]
    index = SourceIndex()
    modules = _import_all(abs_paths, index)
    globals_of_files = {id(m.__dict__) for m in modules}

    declared = _all_declared(modules)
    emitted = [c for c in declared if id(declaration(c).module_globals) in globals_of_files]
    _check_undeclared(modules, index)
    # Nodes from other modules that emitted ones rely on, with every declared class of those
    # modules (so child slots are computed the same way as when those files are generated).
    needed_globals = set(globals_of_files)
    stack = list(emitted)
    seen: Set[type] = set(emitted)
    used_enums: List[type] = []
    while stack:
        cls = stack.pop()
        for dep in _dependencies(cls):
            if dep in seen:
                continue
            seen.add(dep)
            if is_enum(dep):
                used_enums.append(dep)
                continue
            stack.append(dep)
            needed_globals.add(id(declaration(dep).module_globals))
    classes = [c for c in declared if id(declaration(c).module_globals) in needed_globals]
    # Enums: those of the files given (emitted) and those their nodes use from elsewhere.
    enums = _all_enums(modules)
    emitted_enums = [e for e in enums if id(enum_declaration(e).module_globals) in globals_of_files]
    enums = emitted_enums + [e for e in used_enums if e not in emitted_enums]
    enums.sort(key=lambda c: (enum_declaration(c).file, enum_declaration(c).line))
    return build(classes, set(emitted) | set(emitted_enums), index, abs_paths, enums)


def _all_enums(modules: List[ModuleType]) -> List[type]:
    """Every declared enum of `modules` (and of schema files they import), once each."""
    out: List[type] = []
    for module in modules:
        for value in vars(module).values():
            if is_enum(value) and value not in out:
                out.append(value)
    for cls in Enum.__subclasses__():
        if is_enum(cls) and cls not in out:
            out.append(cls)
    return out


def _import_all(paths: List[str], index: SourceIndex) -> List[ModuleType]:
    saved_path = list(sys.path)
    saved_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # leave no __pycache__ next to the schema
    before = set(sys.modules)
    dirs = []
    for p in paths:
        d = os.path.dirname(p)
        if d not in dirs:
            dirs.append(d)
    sys.path[:0] = dirs
    modules: List[ModuleType] = []
    errors: List[Diagnostic] = []
    try:
        for path in paths:
            if not os.path.isfile(path):
                errors.append(Diagnostic(path, 1, "schema file not found"))
                continue
            try:
                modules.append(_import_file(path))
            except SchemaError as e:
                errors.extend(e.diagnostics)
    finally:
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_bytecode
        for name in set(sys.modules) - before:
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if os.path.dirname(os.path.abspath(module_file)) in dirs or name.startswith(
                "_tschema_schema_"
            ):
                del sys.modules[name]
    if errors:
        raise SchemaError(errors)
    return modules


_counter = [0]


def _import_file(path: str) -> ModuleType:
    for module in list(sys.modules.values()):
        if _same_file(getattr(module, "__file__", None), path):
            return module  # already imported by another schema file of this run
    stem = os.path.splitext(os.path.basename(path))[0]
    # Importable by its stem, so sibling schema files can `from base import ExprNode`; a stem
    # that names a module already loaded (say `types`) gets a private name instead.
    name = stem if stem.isidentifier() and stem not in sys.modules else None
    if name is None:
        _counter[0] += 1
        name = f"_tschema_schema_{_counter[0]}_{stem if stem.isidentifier() else 'file'}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SchemaError([Diagnostic(path, 1, "cannot import this file as Python")])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SchemaError:
        raise
    except SyntaxError as e:
        raise SchemaError(
            [Diagnostic(e.filename or path, e.lineno or 1, f"syntax error: {e.msg}")]
        ) from None
    except BaseException as e:  # any failure of a user file is reported
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise SchemaError([_located(e, path)]) from None
    return module


def _same_file(a: Optional[str], b: str) -> bool:
    if not a:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _located(error: BaseException, path: str) -> Diagnostic:
    """The diagnostic for an exception raised while importing a schema file: at the innermost
    frame in a schema file (the line of the user's code, not of tschema's)."""
    frames = traceback.extract_tb(error.__traceback__)
    here = os.path.dirname(os.path.abspath(__file__))
    user = [
        f
        for f in frames
        if not os.path.abspath(f.filename).startswith(here + os.sep)
        and not f.filename.startswith("<frozen")
    ]
    frame = user[-1] if user else None
    file = frame.filename if frame else path
    line = frame.lineno if frame else 1
    message = str(error)
    if isinstance(error, NameError):
        message = (
            f"unknown name {getattr(error, 'name', None) or message!r} (an unknown "
            "type, or a node used before it is declared: quote it as a string)"
        )
    elif isinstance(error, TypeError) and "declare" in message:
        message = f"unsupported construct: {message}"
    elif not isinstance(error, AttributeError) or "unknown type" not in message:
        message = f"error while importing the schema: {type(error).__name__}: {message}"
    return Diagnostic(file or path, line or 1, message)


def _all_declared(modules: List[ModuleType]) -> List[type]:
    """Every declared class alive in the process, in declaration order per file. (Classes that
    wrongly do not derive from Object are found through the modules' names.)"""
    out: List[type] = []
    stack = list(Object.__subclasses__())
    for module in modules:
        stack.extend(v for v in vars(module).values() if is_declared(v))
    seen: Set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if is_declared(cls):
            out.append(cls)
        stack.extend(cls.__subclasses__())
    out.sort(key=lambda c: (declaration(c).file, declaration(c).line))
    return out


def _dependencies(cls: type) -> List[type]:
    deps = [b for b in cls.__bases__ if is_declared(b)]
    module_globals = declaration(cls).module_globals
    for annotation in own_annotations(cls).values():
        deps.extend(_declared_in(annotation, module_globals))
    return deps


def _declared_in(annotation: object, module_globals: Dict[str, object]) -> List[type]:
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, dict(module_globals))
        except Exception:  # reported with its line by the model
            return []
    if is_declared(annotation) or is_enum(annotation):
        return [annotation]  # type: ignore[list-item]
    if isinstance(annotation, ty._Deferred):
        return [c for a in annotation.args for c in _declared_in(a, module_globals)]
    return []


def _check_undeclared(modules: List[ModuleType], index: SourceIndex) -> None:
    """A class deriving from Object without @declare is almost always a forgotten decorator."""
    errors = []
    for module in modules:
        for value in list(vars(module).values()):
            if (
                isinstance(value, type)
                and issubclass(value, Enum)
                and value is not Enum
                and not is_enum(value)
                and value.__module__ == module.__name__
            ):
                path = module.__file__ or module.__name__
                lines = index.find(path, value.__name__)
                errors.append(
                    Diagnostic(
                        path,
                        lines.line if lines else 1,
                        f"unsupported construct: {value.__name__} derives from Enum but is "
                        "not declared with @declare_enum",
                    )
                )
                continue
            if (
                isinstance(value, type)
                and issubclass(value, Object)
                and value is not Object
                and not is_declared(value)
                and value.__module__ == module.__name__
            ):
                path = module.__file__ or module.__name__  # schema modules are files
                lines = index.find(path, value.__name__)
                errors.append(
                    Diagnostic(
                        path,
                        lines.line if lines else 1,
                        f"unsupported construct: {value.__name__} derives from a schema class but "
                        "is not declared with @declare",
                    )
                )
    if errors:
        raise SchemaError(errors)
