"""Python views of Ferry containers: ``Array`` and ``Map`` behave as immutable sequences and
mappings; ``Shape`` as a tuple-like sequence of ints."""
from collections.abc import Mapping, Sequence

from . import _core
from .registry import get_global_func, register_object

__all__ = ["Array", "Map", "Shape"]

_Object = _core.Object


@register_object("ferry.Array")
class Array(_Object, Sequence):
    """An immutable sequence (Python lists convert to it). Indexing, ``len``, iteration,
    ``in``; a slice returns a list. Equality is by identity, as for every Ferry object."""

    __slots__ = ()
    __eq__ = _Object.__eq__
    __ne__ = _Object.__ne__
    __hash__ = _Object.__hash__

    def __new__(cls, items=()):
        return _core.convert(list(items))

    def __init__(self, items=()):
        pass

    def __len__(self):
        return _core._array_size(self)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return _core._array_to_list(self)[index]
        return _core._array_getitem(self, index)

    def __iter__(self):
        return iter(_core._array_to_list(self))

    def __reduce__(self):
        # One JSON document for the whole array: objects shared between its elements stay
        # shared, and any depth pickles (save_json walks without recursion).
        return (_from_json, (_save_json(self),))


@register_object("ferry.Map")
class Map(_Object, Mapping):
    """An immutable mapping in insertion order (Python dicts convert to it). ``m[k]`` raises
    KeyError for a missing key; ``keys``/``values``/``items``/``get``/``in`` as for dict.
    Equality is by identity."""

    __slots__ = ()
    __eq__ = _Object.__eq__
    __ne__ = _Object.__ne__
    __hash__ = _Object.__hash__

    def __new__(cls, items=()):
        return _core.convert(dict(items))

    def __init__(self, items=()):
        pass

    def __len__(self):
        return _map_size(self)

    def __getitem__(self, key):
        return _map_get(self, key)

    def __contains__(self, key):
        try:
            return bool(_map_count(self, key))
        except TypeError:
            return False

    def __iter__(self):
        return iter(self.keys())

    def _items(self):
        return _core._array_to_list(_map_items(self))

    def keys(self):
        return self._items()[0::2]

    def values(self):
        return self._items()[1::2]

    def items(self):
        flat = self._items()
        return list(zip(flat[0::2], flat[1::2]))

    def __reduce__(self):
        return (_from_json, (_save_json(self),))  # sharing kept, as for Array


@register_object("ferry.Shape")
class Shape(_Object, Sequence):
    """An immutable tuple of int64 dimensions: ``Shape([2, 3])``."""

    __slots__ = ()

    def __new__(cls, dims=()):
        try:
            dims = tuple(dims)
        except TypeError:
            raise TypeError(
                f"Shape(dims): dims must be an iterable of ints, not {type(dims).__name__}"
            ) from None
        return _shape(*dims)

    def __init__(self, dims=()):
        pass

    def _dims(self):
        return _core._array_to_list(_shape_to_array(self))

    def __len__(self):
        return len(self._dims())

    def __getitem__(self, index):
        return self._dims()[index]

    # A value, like the tuple it equals: hashed as that tuple, so Shape([2, 3]) and (2, 3)
    # are one key of a dict or a set.
    def __eq__(self, other):
        if isinstance(other, (Shape, tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(tuple(self._dims()))

    def __reduce__(self):
        return (Shape, (self._dims(),))


_save_json = get_global_func("ferry.SaveJSON")
_load_json = get_global_func("ferry.LoadJSON")


def _from_json(text):
    """Unpickles a container (or any object pickled by content)."""
    return _load_json(text)


_map_size = get_global_func("ferry.MapSize")
_map_get = get_global_func("ferry.MapGetItem")
_map_count = get_global_func("ferry.MapCount")
_map_items = get_global_func("ferry.MapItems")
_shape = get_global_func("ferry.Shape")
_shape_to_array = get_global_func("ferry.ShapeToArray")
# All registered quick() in src/container.cc, so calls keep the GIL.
