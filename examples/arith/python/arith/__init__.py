"""The arith example IR in Python: the generated node classes (_nodes.py), operators that build
expressions (`x + 2` is an Add), and the C++ passes of libarith.

    import arith
    x = arith.var("x")
    e = arith.simplify((x + 0) * (2 + 3))      # (x * 5)

The shared library is found through the ARITH_LIBRARY environment variable (scripts/demo.sh and
the tests set it to the library they built).
"""

import os

import ferry

from ._nodes import *  # noqa: F403  (the generated classes)
from ._nodes import (
    EQ,
    LT,
    Add,
    FloatImm,
    FloorDiv,
    Function,
    IntImm,
    Let,
    Max,
    Min,
    Mul,
    PrimExpr,
    Select,
    Sub,
    Var,
)


def _load():
    path = os.environ.get("ARITH_LIBRARY")
    if not path:
        raise RuntimeError("arith: set ARITH_LIBRARY to the path of libarith.so")
    ferry.load_library(path)


_load()
ferry.init_api("arith", __name__)  # Simplify, Substitute, FreeVars, Evaluate, ...

INT64 = ferry.DataType("int64")
FLOAT64 = ferry.DataType("float64")
BOOL = ferry.DataType("bool")


def const(value):
    """An IntImm or FloatImm for a Python number (an expression is returned unchanged)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool):
        return IntImm(BOOL, int(value))
    if isinstance(value, int):
        return IntImm(INT64, value)
    if isinstance(value, float):
        return FloatImm(FLOAT64, value)
    raise TypeError(f"arith: cannot make an expression of {type(value).__name__} {value!r}")


def var(name, dtype=INT64):
    """A new variable: `var("x")` differs from every other variable, whatever its name."""
    return Var(dtype, name)


def _arith_dtype(a, b):
    return FLOAT64 if FLOAT64 in (a.dtype, b.dtype) else INT64


def _binary(cls, result_dtype=_arith_dtype):
    def build(a, b):
        a, b = const(a), const(b)
        return cls(result_dtype(a, b), a, b)

    return build


add = _binary(Add)
sub = _binary(Sub)
mul = _binary(Mul)
floordiv = _binary(FloorDiv)
minimum = _binary(Min)
maximum = _binary(Max)
eq = _binary(EQ, lambda a, b: BOOL)
lt = _binary(LT, lambda a, b: BOOL)


def select(condition, true_value, false_value):
    t, f = const(true_value), const(false_value)
    return Select(_arith_dtype(t, f), const(condition), t, f)


def let(v, value, body):
    """let v = value in body (`v` is bound in body)."""
    return Let(const(body).dtype, v, const(value), const(body))


def function(params, body):
    return Function(list(params), const(body))


def _swap(f):
    return lambda a, b: f(b, a)


PrimExpr.__add__, PrimExpr.__radd__ = add, _swap(add)
PrimExpr.__sub__, PrimExpr.__rsub__ = sub, _swap(sub)
PrimExpr.__mul__, PrimExpr.__rmul__ = mul, _swap(mul)
PrimExpr.__floordiv__, PrimExpr.__rfloordiv__ = floordiv, _swap(floordiv)
PrimExpr.__lt__ = lt
PrimExpr.__gt__ = _swap(lt)
PrimExpr.__str__ = lambda self: ToText(self)  # noqa: F405  (from init_api)
Function.__str__ = lambda self: ToText(self)  # noqa: F405


def simplify(expr):
    """Constant folding and algebraic identities (C++: arith.Simplify)."""
    return Simplify(const(expr))  # noqa: F405


def substitute(expr, vmap):
    """Replaces free variables: substitute(e, {x: y + 1})."""
    return Substitute(expr, {k: const(v) for k, v in vmap.items()})  # noqa: F405


def free_vars(node):
    """The free variables, in order of first appearance."""
    return list(FreeVars(node))  # noqa: F405


def evaluate(expr, bindings=None):
    """The value of `expr` with variables bound by `bindings` ({var: number})."""
    return Evaluate(const(expr), dict(bindings or {}))  # noqa: F405


def post_order_visit(expr, visit):
    """Calls the Python callable `visit(node)` from C++ on every sub-expression."""
    PostOrderVisit(expr, visit)  # noqa: F405


def transform(expr, rewrite):
    """Rebuilds `expr` bottom-up in C++; `rewrite(node)` (Python) returns a replacement or None."""
    return Transform(expr, lambda node: rewrite(node))  # noqa: F405
