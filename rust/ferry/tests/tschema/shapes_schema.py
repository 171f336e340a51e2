"""The schema of tests/tschema.rs: shapes_generated.rs is `tschema generate --rust` of this
file (tests/python/tschema/test_rust.py regenerates it and fails on a difference)."""

from ferry.tschema import Enum, Object, declare, declare_enum, ty


@declare_enum
class Color(Enum):
    """How a shape is drawn."""

    type_key = "rs_shapes.Color"
    Red = 0
    Green = 1
    Blue = 7


@declare
class ShapeNode(Object):
    """Base of the shapes.

    Attributes
    ----------
    name
        What the shape is called.
    """

    type_key = "rs_shapes.Shape"
    name: ty.String


@declare
class CircleNode(ShapeNode):
    type_key = "rs_shapes.Circle"
    radius: ty.double
    sides: ty.int32_t = 0
    filled: ty.bool = False
    color: Color = Color.Blue


@declare
class GroupNode(ShapeNode):
    type_key = "rs_shapes.Group"
    mutable = True
    items: ty.Array[ShapeNode]
    scale: ty.Optional[ty.double] = None
    label: ty.Optional[ty.String] = None
    extra: ty.ObjectRef = None
    tags: ty.Map[ty.String, ty.int64_t] = {}
    type: ty.Optional[ty.String] = None
    dtype: ty.DataType = "float32"
    history: ty.List[ty.int64_t] = []
    notes: ty.Dict[ty.String, ty.String] = {}
