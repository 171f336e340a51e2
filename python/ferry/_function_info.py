"""What a ``ferry.Function`` says about itself: its repr, ``__name__``, ``__qualname__``,
``__doc__`` and ``__signature__``, so that ``inspect.signature``, ``help()`` and editors work
for typed C++ functions. The extension calls these with what it knows of the function
(``Describe`` in python/src/function.cc): the name a typed C++ function was made with, its
parameter and result types (FerryFunctionGetSignature), its parameter names, the global name it
is registered under, and the Python callable it wraps."""

import inspect
import typing

# The C++ type names of conversion errors, as a Python user writes them.
_PYTHON_NAMES = {
    "ferry.String": "str",
    "ferry.Bytes": "bytes",
    "float32": "float",
    "DataType": "ferry.DataType",
    "void*": "int",
}
_PYTHON_TYPES: "dict[str, object]" = {
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
    "bytes": bytes,
    "None": None,
    "Any": typing.Any,
}


def _python_name(cpp_type):
    return _PYTHON_NAMES.get(cpp_type, cpp_type)


def _annotation(cpp_type):
    name = _python_name(cpp_type)
    if name in _PYTHON_TYPES:
        return _PYTHON_TYPES[name]
    from .registry import _auto_step  # here: the registry imports the extension, which imports us

    found = _auto_step(name)  # the class of a known type key (made on first sight if need be)
    return found if isinstance(found, type) else name


def _full_name(described):
    typed_name, _, _, global_name, callable_ = described
    if global_name is not None:
        return global_name
    if callable_ is not None:
        return getattr(callable_, "__qualname__", None) or getattr(callable_, "__name__", None)
    if typed_name and typed_name != "<anonymous>":
        return typed_name
    return None


def _parameters(described):
    """``[(name, C++ type)]`` and the result type of a typed function; None when not known."""
    _, types, names, _, _ = described
    if types is None:
        return None
    params = types[:-1]
    if names is None or len(names) != len(params):
        names = [f"arg{i}" for i in range(len(params))]
    return list(zip(names, params)), types[-1], described[2] is not None


def _signature_text(described):
    parts = _parameters(described)
    if parts is None:
        return None
    params, result, named = parts
    text = ", ".join(f"{name}: {_python_name(t)}" for name, t in params)
    if params and not named:
        text += ", /"  # registered without names: positional only
    return f"({text}) -> {_python_name(result)}"


def repr_of(f, described):
    name = _full_name(described) or "<anonymous>"
    callable_ = described[4]
    if callable_ is not None:
        return f"<ferry.Function {name} wrapping {callable_!r}>"
    text = _signature_text(described)
    return f"<ferry.Function {name}{text if text is not None else '(...)'}>"


def qualname_of(f, described):
    return _full_name(described) or "<anonymous>"


def name_of(f, described):
    callable_ = described[4]
    if callable_ is not None and getattr(callable_, "__name__", None):
        return callable_.__name__
    return qualname_of(f, described).rsplit(".", 1)[-1]


def doc_of(f, described):
    callable_ = described[4]
    if callable_ is not None:
        return getattr(callable_, "__doc__", None)
    name = _full_name(described) or "<anonymous>"
    text = _signature_text(described)
    if text is None:
        return (
            f"{name}(...): a C++ function taking packed arguments (its parameter types are not "
            "recorded)."
        )
    return f"{name}{text}: a C++ function."


def signature_of(f, described):
    callable_ = described[4]
    if callable_ is not None:
        try:
            wrapped = inspect.signature(callable_)
        except (TypeError, ValueError):
            return None
        # A call of the Function passes arguments by position only (a Python callable is
        # registered without parameter names): its parameters are positional-only, and those
        # only a keyword could reach are left out.
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = []
        for p in wrapped.parameters.values():
            if p.kind in positional:
                params.append(p.replace(kind=inspect.Parameter.POSITIONAL_ONLY))
            elif p.kind is inspect.Parameter.VAR_POSITIONAL:
                params.append(p)
        return wrapped.replace(parameters=params)
    parts = _parameters(described)
    if parts is None:
        return None  # inspect then describes the call as (*args, **kwargs)
    params, result, named = parts
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if named else inspect.Parameter.POSITIONAL_ONLY
    return inspect.Signature(
        [inspect.Parameter(name, kind, annotation=_annotation(t)) for name, t in params],
        return_annotation=_annotation(result),
    )
