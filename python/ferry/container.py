"""Python views of Ferry containers: ``Array`` and ``Map`` behave as immutable sequences and
mappings; ``Shape`` as a tuple-like sequence of ints."""

import operator
import reprlib
import typing
from collections.abc import (
    ItemsView,
    Iterable,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
    ValuesView,
)

from . import _core
from .error import FunctionInJSONError
from .registry import _ensure_libraries, get_global_func, register_object

__all__ = ["Array", "Dict", "List", "Map", "Shape"]

_Object = _core.Object

# The element types, so that a type checker reads ``ferry.List[int]`` as it reads ``list[int]``.
_T = typing.TypeVar("_T")
_K = typing.TypeVar("_K")
_V = typing.TypeVar("_V")
_Items = typing.Union[Mapping[_K, _V], Iterable[tuple[_K, _V]]]


_LIST_MUTATORS = frozenset(
    ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse")
)
_DICT_MUTATORS = frozenset(("update", "pop", "popitem", "setdefault", "clear"))


def _refuse_mutation(obj, name, mutators, annotation, mutable, rebuild):
    """The AttributeError of a missing attribute; for a mutating method of list or dict, one
    that says what to do: a ``list[T]``/``dict[K, V]`` field holds an immutable Array/Map."""
    kind = type(obj).__name__
    if name in mutators:
        raise AttributeError(
            f"'ferry.{kind}' is immutable, so it has no {name!r}: a {annotation} field holds an "
            f"immutable ferry.{kind}; declare the field {mutable} to change it in place, or "
            f"assign a new value (x = {rebuild})",
            name=name,
            obj=obj,
        )
    raise AttributeError(f"'ferry.{kind}' object has no attribute {name!r}", name=name, obj=obj)


@register_object("ferry.Array")
class Array(_Object, Sequence[_T]):
    """An immutable sequence (Python lists convert to it). Indexing, ``len``, iteration,
    ``in``; a slice returns a list. Equality is by identity, as for every Ferry object."""

    __slots__ = ()
    __eq__ = _Object.__eq__
    __ne__ = _Object.__ne__
    __hash__ = _Object.__hash__

    def __new__(cls, items: "Iterable[_T]" = ()) -> "Array[_T]":
        return _core.convert(list(items))

    def __init__(self, items: "Iterable[_T]" = ()) -> None:
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
        return _reduce_json(self)

    def __deepcopy__(self, memo):
        return _deepcopy_immutable(self, memo, lambda copy_of: Array([copy_of(x) for x in self]))

    def __getattr__(self, name):
        _refuse_mutation(self, name, _LIST_MUTATORS, "list[T]", "ferry.List[T]", "[*x, item]")


@register_object("ferry.Map")
class Map(_Object, Mapping[_K, _V]):
    """An immutable mapping in insertion order (Python dicts convert to it). ``m[k]`` raises
    KeyError for a missing key; ``keys``/``values``/``items``/``get``/``in`` as for dict.
    Equality is by identity."""

    __slots__ = ()
    __eq__ = _Object.__eq__
    __ne__ = _Object.__ne__
    __hash__ = _Object.__hash__

    def __new__(cls, items: "_Items[_K, _V]" = ()) -> "Map[_K, _V]":
        return _core.convert(dict(items))

    def __init__(self, items: "_Items[_K, _V]" = ()) -> None:
        pass

    def __getattr__(self, name):
        _refuse_mutation(
            self, name, _DICT_MUTATORS, "dict[K, V]", "ferry.Dict[K, V]", "{**x, k: v}"
        )

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
        return _reduce_json(self)  # sharing kept, as for Array

    def __deepcopy__(self, memo):
        return _deepcopy_immutable(
            self, memo, lambda copy_of: Map([(copy_of(k), copy_of(v)) for k, v in self.items()])
        )


@register_object("ferry.Shape")
class Shape(_Object, Sequence[int]):
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


def _bound(value):
    """A slice bound for the ferry.List* globals: None, or an int clamped to +-2**62 (a list
    is never that long, so clamping keeps Python's meaning and the int fits in int64)."""
    if value is None:
        return None
    return max(-(2**62), min(2**62, operator.index(value)))


def _slice_args(index):
    return _bound(index.start), _bound(index.stop), _bound(index.step)


@register_object("ferry.List")
class List(_Object, MutableSequence[_T]):
    """A mutable sequence shared with C++: ``ferry.List(iterable=())``. Every holder, in
    Python or C++, sees a change made through any other (no copy-on-write). The full
    ``MutableSequence`` API (indexing with negative indexes, slices and slice assignment,
    ``append``, ``extend``, ``insert``, ``pop``, ``remove``, ``index``, ``count``, ``reverse``,
    ``sort``, ``+=``, ``del``). Equality and hashing are by identity, as for every Ferry
    object (``structural_equal`` compares contents).

    Each operation is one call into C++ made with the GIL held, so it is atomic with respect
    to other Python threads, as a ``list``'s operations are; iteration walks a snapshot."""

    __slots__ = ()
    __eq__ = _Object.__eq__
    __ne__ = _Object.__ne__
    __hash__ = _Object.__hash__

    def __new__(cls, iterable: "Iterable[_T]" = ()) -> "List[_T]":
        return _list_new(*iterable)

    def __init__(self, iterable: "Iterable[_T]" = ()) -> None:
        pass

    # The hot methods are functions of _core bound as methods: no Python frame per call.
    __len__ = _core._instancemethod(_core._list_size)
    __getitem__ = _core._instancemethod(_core._list_getitem)  # an index, or a slice (new List)
    append = _core._instancemethod(_core._list_append)

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            # Any iterable, read before the call (a list assigned to itself included).
            _list_set_slice(self, *_slice_args(index), *list(value))
        else:
            _core._list_setitem(self, index, value)

    def __delitem__(self, index):
        if isinstance(index, slice):
            _list_del_slice(self, *_slice_args(index))
        else:
            _list_pop(self, operator.index(index))

    def insert(self, index, value):
        _list_insert_clamped(self, _bound(index), value)

    def extend(self, values):
        _list_extend(self, *list(values))  # a copy first: `xs.extend(xs)` doubles xs once

    def __iadd__(self, values):
        self.extend(values)
        return self

    def pop(self, index=-1):
        return _list_pop(self, operator.index(index))

    def remove(self, value):
        # The index is found by Python equality (which may run Python code, and so let other
        # threads in) on a snapshot; the erase happens only if the list is still that snapshot.
        while True:
            snapshot = _list_to_array(self)
            items = _core._array_to_list(snapshot)
            try:
                at = items.index(value)
            except ValueError:
                raise ValueError(f"ferry.List.remove(x): {value!r} is not in the list") from None
            if _list_erase_if_unchanged(self, snapshot, at):
                return

    def index(self, value, start=0, stop=None):
        items = _core._list_to_list(self)
        return items.index(value, start, len(items) if stop is None else stop)

    def count(self, value):
        return _core._list_to_list(self).count(value)

    def reverse(self):
        _list_reverse(self)

    def clear(self):
        _list_clear(self)

    def __iter__(self):
        return iter(_core._list_to_list(self))

    def __reversed__(self):
        return reversed(_core._list_to_list(self))

    def __contains__(self, value):
        return value in _core._list_to_list(self)

    def sort(self, *, key=None, reverse=False):
        """Sorts in place, stably, as ``list.sort``; when a comparison raises, the list is
        left as it was. A ``key`` (or comparison) that writes the list is a ValueError
        ("list modified during sort"), as for ``list.sort``, and the write is kept."""
        snapshot = _list_to_array(self)
        items = _core._array_to_list(snapshot)
        items.sort(key=key, reverse=reverse)
        if not _list_replace_if_unchanged(self, snapshot, *items):
            raise ValueError("list modified during sort")

    @reprlib.recursive_repr("ferry.List([...])")
    def __repr__(self):
        return f"ferry.List({_core._list_to_list(self)!r})"

    def __reduce__(self):
        return _reduce_json(self)  # sharing kept; a List holding itself raises

    def __deepcopy__(self, memo):
        import copy  # here: deepcopy is rare

        made = type(self)()
        memo[id(self)] = made  # before the items: an item may lead back here
        made.extend([copy.deepcopy(x, memo) for x in self])
        return made


class _DictItems(ItemsView):
    """``Dict.items()``: a live view whose iteration walks one snapshot of the entries (so a
    concurrent delete never makes it raise KeyError)."""

    __slots__ = ()

    def __iter__(self):
        flat = self._mapping._snapshot()
        return zip(flat[0::2], flat[1::2])


class _DictValues(ValuesView):
    """``Dict.values()``: a live view whose iteration walks one snapshot of the entries."""

    __slots__ = ()

    def __iter__(self):
        return iter(self._mapping._snapshot()[1::2])


_MISSING = object()


@register_object("ferry.Dict")
class Dict(_Object, MutableMapping[_K, _V]):
    """A mutable mapping shared with C++, in insertion order: ``ferry.Dict(mapping=(), **kw)``.
    Every holder, in Python or C++, sees a change made through any other. The full
    ``MutableMapping`` API (``get``, ``setdefault``, ``pop``, ``popitem`` (the last entry, as
    for dict, in O(1)), ``update``, ``clear``, live ``keys``/``values``/``items`` views). Keys
    follow Map's rules (a NaN key is a ValueError). Equality and hashing are by identity.

    Each operation is one call into C++ made with the GIL held, so it is atomic with respect
    to other Python threads, as a ``dict``'s operations are; iteration walks a snapshot."""

    __slots__ = ()
    __eq__ = _Object.__eq__
    __ne__ = _Object.__ne__
    __hash__ = _Object.__hash__

    def __new__(cls, mapping: "_Items[_K, _V]" = (), **kwargs: _V) -> "Dict[_K, _V]":
        items = dict(mapping, **kwargs)
        args = []
        for key, value in items.items():
            args += [key, value]
        return _dict_new(*args)

    def __init__(self, mapping: "_Items[_K, _V]" = (), **kwargs: _V) -> None:
        pass

    def __len__(self):
        return _dict_size(self)

    # A function of _core bound as a method: CPython's specializing interpreter calls a Python
    # __getitem__ directly, bypassing the C slot _install_container_slots gives `d[k]`.
    __getitem__ = _core._instancemethod(_core._dict_getitem)

    def __setitem__(self, key, value):
        _dict_set(self, key, value)

    def __delitem__(self, key):
        if not _dict_erase(self, key):
            raise KeyError(key)

    def __contains__(self, key):
        try:
            return bool(_dict_count(self, key))
        except TypeError:
            return False

    def __iter__(self):
        return iter(self._snapshot()[0::2])

    def _snapshot(self):
        return _core._array_to_list(_map_items(_dict_to_map(self)))

    def items(self):
        return _DictItems(self)

    def values(self):
        return _DictValues(self)

    def pop(self, key, default=_MISSING):
        found = _dict_pop(self, key)
        if len(found):
            return found[0]
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self):
        item = _core._array_to_list(_dict_pop_item(self))
        if not item:
            raise KeyError("popitem(): dictionary is empty")
        return item[0], item[1]

    def setdefault(self, key, default=None):
        return _dict_set_default(self, key, default)

    def update(self, other=(), /, **kwargs):
        # The pairs are read first (which may run Python code), then set in one call.
        if isinstance(other, Mapping):
            pairs = [(key, other[key]) for key in other]
        elif hasattr(other, "keys"):
            pairs = [(key, other[key]) for key in other.keys()]
        else:
            pairs = [(key, value) for key, value in other]
        pairs += kwargs.items()
        _dict_update(self, *[x for pair in pairs for x in pair])

    def clear(self):
        _dict_clear(self)

    @reprlib.recursive_repr("ferry.Dict({...})")
    def __repr__(self):
        flat = self._snapshot()
        return f"ferry.Dict({dict(zip(flat[0::2], flat[1::2]))!r})"

    def __reduce__(self):
        return _reduce_json(self)

    def __deepcopy__(self, memo):
        import copy  # here: deepcopy is rare

        made = type(self)()
        memo[id(self)] = made  # before the entries: a value may lead back here
        for key, value in self.items():
            made[copy.deepcopy(key, memo)] = copy.deepcopy(value, memo)
        return made


_list_new = get_global_func("ferry.List")
_list_clear = get_global_func("ferry.ListClear")
_list_to_array = get_global_func("ferry.ListToArray")
_list_set_slice = get_global_func("ferry.ListSetSlice")
_list_del_slice = get_global_func("ferry.ListDelSlice")
_list_pop = get_global_func("ferry.ListPop")
_list_insert_clamped = get_global_func("ferry.ListInsertClamped")
_list_extend = get_global_func("ferry.ListExtend")
_list_reverse = get_global_func("ferry.ListReverse")
_list_replace_if_unchanged = get_global_func("ferry.ListReplaceIfUnchanged")
_list_erase_if_unchanged = get_global_func("ferry.ListEraseIfUnchanged")
_dict_new = get_global_func("ferry.Dict")
_dict_size = get_global_func("ferry.DictSize")
_dict_get = get_global_func("ferry.DictGetItem")
_dict_set = get_global_func("ferry.DictSetItem")
_dict_erase = get_global_func("ferry.DictErase")
_dict_count = get_global_func("ferry.DictCount")
_dict_clear = get_global_func("ferry.DictClear")
_dict_to_map = get_global_func("ferry.DictToMap")
_dict_pop = get_global_func("ferry.DictPop")
_dict_pop_item = get_global_func("ferry.DictPopItem")
_dict_set_default = get_global_func("ferry.DictSetDefault")
_dict_update = get_global_func("ferry.DictUpdate")
# len(), indexing, `in` and item assignment go straight to C functions of _core (the methods
# above stay for explicit calls and for subclasses).
_core._install_container_slots(List, Dict)
_save_json = get_global_func("ferry.SaveJSON")
_load_json = get_global_func("ferry.LoadJSON")


# --- copy.deepcopy over graphs that may hold cycles ---------------------------------------------
# A cycle of Ferry objects always passes through a mutable one (List, Dict, a py_class that is
# not frozen): only those can be changed after they are made. So, as copy.deepcopy does for
# plain objects, a mutable object enters `memo` as an empty (or shallow) copy before its
# contents are copied, and is filled after; an immutable one (Array, Map, a frozen py_class) is
# made after its contents, and if copying them met the object again (through a mutable one),
# the copy made there is the copy.


def _deepcopy_immutable(obj, memo, make):
    """The deep copy of the immutable ``obj``: ``make(copy_of)``, where ``copy_of`` deep-copies
    one value with ``memo``, unless copying its contents already made it."""
    import copy  # here: deepcopy is rare

    made = make(lambda value: copy.deepcopy(value, memo))
    return memo.setdefault(id(obj), made)


def _reduce_json(obj):
    """Pickles ``obj`` by content: its JSON, and the libraries its types need when loaded
    libraries registered any (docs/distributed.md). A graph holding a Function (which JSON
    cannot hold) pickles by parts (:func:`_reduce_parts`)."""
    try:
        text = _save_json(obj)
    except FunctionInJSONError:
        return _reduce_parts(obj, {obj.__ferry_handle__: obj})
    libraries = _core._json_libraries(text)
    return (_from_json, (text, libraries) if libraries else (text,))


# --- Pickling by parts: graphs that hold Functions ----------------------------------------------
# JSON has no form for a Function, so a container or object whose graph holds one pickles part
# by part: each container and object as its items or fields, each Function as it pickles alone
# (a registered global by name, a Python callable's Function as the callable, any other a
# pickle.PicklingError naming it). Every container and object of the graph goes by parts, one
# _ByParts per object (`session`, by handle), so pickle's memo keeps the sharing JSON keeps.
# Depth is bounded by pickle's recursion, not by save_json's.


class _ByParts:
    """One Ferry object of a graph pickled by parts; unpickles as the object itself."""

    __slots__ = ("obj", "session")

    def __init__(self, obj, session):
        self.obj, self.session = obj, session

    def __reduce__(self):
        return _reduce_parts(self.obj, self.session)


def _part(value, session):
    """``value`` as a part of a graph pickled by parts: a Ferry container or object by parts
    (one _ByParts per object), anything else (Functions included) as it pickles alone."""
    if not isinstance(value, _Object) or isinstance(value, _core.Function):
        return value
    if not isinstance(value, (Array, Map, List, Dict)) and _node_fields(value) is None:
        return value  # a Tensor, a Shape, ...: no Function inside
    handle = value.__ferry_handle__
    found = session.get(handle)
    if found is None:
        found = session[handle] = _ByParts(value, session)
    return found


def _node_fields(obj):
    """The field names of a reflected node object that can be made from its fields, or None."""
    key = obj.__ferry_type_key__
    described = _find_node_fields(key)
    return None if described is None else list(described)[0::2]


def _reduce_parts(obj, session):
    """The reduce tuple of ``obj`` by parts (the items or fields, each a :func:`_part`)."""
    if isinstance(obj, Array):
        return (Array, ([_part(x, session) for x in obj],))
    if isinstance(obj, Map):
        return (Map, ([(_part(k, session), _part(v, session)) for k, v in obj.items()],))
    if isinstance(obj, List):  # made empty, memoized, then filled: it may lead back to itself
        return (type(obj), (), None, iter([_part(x, session) for x in obj]))
    if isinstance(obj, Dict):
        items = [(_part(k, session), _part(v, session)) for k, v in obj.items()]
        return (type(obj), (), None, None, iter(items))
    names = _node_fields(obj)
    if names is None:
        return obj.__reduce_ex__(4)
    key = obj.__ferry_type_key__
    library = _core._library_of_type(key) if _core._pickle_libraries_on() else None
    fields = {name: _part(getattr(obj, name), session) for name in names}
    # A py_class pickled as a class (by reference, or by value from __main__) goes first, so the
    # unpickling process imports (or declares) it before its objects are made. (A class that
    # pickles its objects by content only, as tschema.register's, has no name to travel by.)
    from .dataclasses import _reduce as _py_class_reduce  # cycle

    cls = type(obj) if getattr(type(obj), "__reduce__", None) is _py_class_reduce else None
    return (_node_from_parts, (key, fields, ((library, key),) if library else (), cls))


def _node_from_parts(key, fields, libraries=(), cls=None):
    """Unpickles a node pickled by parts: MakeNode from its fields (after loading the library of
    its type, if this process lacks it)."""
    if libraries:
        _ensure_libraries(libraries)
    return _core.make_node(key, **fields)


_find_node_fields = get_global_func("ferry.FindNodeFields")

#: The first item of the pickled state of an object of a registered C++ class (ferry.Object's
#: __getstate__ / __setstate__, python/src/object.cc) that went by parts.
_PARTS_STATE = "ferry:parts"


def _state_by_parts(obj, error):
    """``__getstate__`` of ``obj`` when save_json failed with ``error``: by parts if a Function
    was the reason, else ``error`` again."""
    if not isinstance(error, FunctionInJSONError):
        raise error
    return (_PARTS_STATE, _reduce_parts(obj, {obj.__ferry_handle__: obj}))


def _from_parts_state(parts):
    """``__setstate__``'s half of :func:`_state_by_parts`: the object the reduce tuple makes."""
    make, args = parts[0], parts[1]
    return make(*args)


def _from_json(text, libraries=()):
    """Unpickles a container (or any object pickled by content), loading the libraries its
    types need first."""
    if libraries:
        _ensure_libraries(libraries)
    return _load_json(text)


_map_size = get_global_func("ferry.MapSize")
_map_get = get_global_func("ferry.MapGetItem")
_map_count = get_global_func("ferry.MapCount")
_map_items = get_global_func("ferry.MapItems")
_shape = get_global_func("ferry.Shape")
_shape_to_array = get_global_func("ferry.ShapeToArray")
# All registered quick() in src/container.cc, so calls keep the GIL.
