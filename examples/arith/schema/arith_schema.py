"""The nodes of the arith example IR: a small integer/float expression language.

tschema generates from this file the node and reference classes between the markers of
include/arith/nodes.h, their registration (src/nodes_generated.cc) and the Python classes
(python/arith/_nodes.py); examples/arith/CMakeLists.txt checks them with `ferry_tschema`.
"""

from ferry.tschema import Object, declare, ty


@declare
class PrimExprNode(Object):
    """Base of all arithmetic expressions.

    Attributes
    ----------
    dtype
        The data type of the value the expression computes.
    """

    type_key = "arith.PrimExpr"
    namespace = "arith"
    dtype: ty.DataType


@declare
class IntImmNode(PrimExprNode):
    """A constant integer.

    Attributes
    ----------
    value
        The integer.
    """

    type_key = "arith.IntImm"
    value: ty.int64_t


@declare
class FloatImmNode(PrimExprNode):
    """A constant floating-point number.

    Attributes
    ----------
    value
        The number.
    """

    type_key = "arith.FloatImm"
    value: ty.double


@declare
class VarNode(PrimExprNode):
    """A variable. Two variables are the same only if they are the same object; structural
    equality maps free variables only on request and bound ones at their definition.

    Attributes
    ----------
    name_hint
        The name, for printing only.
    """

    type_key = "arith.Var"
    default_sequal_reduce = False
    default_shash_reduce = False
    name_hint: ty.String


@declare
class BinaryOpNode(PrimExprNode):
    """Base of the operators with two operands.

    Attributes
    ----------
    a
        The left operand.
    b
        The right operand.
    """

    type_key = "arith.BinaryOp"
    a: PrimExprNode
    b: PrimExprNode


@declare
class AddNode(BinaryOpNode):
    """a + b."""

    type_key = "arith.Add"


@declare
class SubNode(BinaryOpNode):
    """a - b."""

    type_key = "arith.Sub"


@declare
class MulNode(BinaryOpNode):
    """a * b."""

    type_key = "arith.Mul"


@declare
class FloorDivNode(BinaryOpNode):
    """a // b, rounding toward negative infinity."""

    type_key = "arith.FloorDiv"


@declare
class MinNode(BinaryOpNode):
    """min(a, b)."""

    type_key = "arith.Min"


@declare
class MaxNode(BinaryOpNode):
    """max(a, b)."""

    type_key = "arith.Max"


@declare
class EQNode(BinaryOpNode):
    """a == b, a bool."""

    type_key = "arith.EQ"


@declare
class LTNode(BinaryOpNode):
    """a < b, a bool."""

    type_key = "arith.LT"


@declare
class SelectNode(PrimExprNode):
    """condition ? true_value : false_value.

    Attributes
    ----------
    condition
        A bool expression.
    true_value
        The value when the condition holds.
    false_value
        The value otherwise.
    """

    type_key = "arith.Select"
    condition: PrimExprNode
    true_value: PrimExprNode
    false_value: PrimExprNode


@declare
class LetNode(PrimExprNode):
    """let var = value in body. `var` is a definition site: `let x = 1 in x + 1` equals
    `let y = 1 in y + 1`.

    Attributes
    ----------
    var
        The variable bound in body.
    value
        The value bound to it.
    body
        The expression using it.
    """

    type_key = "arith.Let"
    var: VarNode = ty.field(structural="def")
    value: PrimExprNode
    body: PrimExprNode


@declare
class FunctionNode(Object):
    """fn(params) => body. The parameters are definition sites.

    Attributes
    ----------
    params
        The parameters.
    body
        The result, in terms of the parameters.
    """

    type_key = "arith.Function"
    namespace = "arith"
    params: ty.Array[VarNode] = ty.field(structural="def")
    body: PrimExprNode
