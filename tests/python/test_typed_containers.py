"""A ferry.List[T] / ferry.Dict[K, V] field of a py_class checks what is written into the List or
Dict it holds, so that nothing is written that save_json/pickle would keep and load_json/unpickle
would then refuse (data written that cannot be read back)."""

import pickle

import pytest
from ferry_testing import IntImm
from py_class_defs import Lit

import ferry


@ferry.py_class("pytest.typed.Holder")
class Holder(ferry.Object):
    lits: ferry.List[Lit] = ferry.field(default_factory=ferry.List)
    nested: ferry.List[ferry.List[int]] = ferry.field(default_factory=ferry.List)
    named: ferry.Dict[str, Lit] = ferry.field(default_factory=ferry.Dict)
    loose: ferry.List[ferry.Object] = ferry.field(default_factory=ferry.List)


@ferry.py_class("pytest.typed.Other")
class Other(ferry.Object):
    ints: ferry.List[int] = ferry.field(default_factory=ferry.List)


WHERE = "field 'lits' of 'pytest.typed.Holder'"


def test_every_write_to_a_typed_list_checks_the_item():
    h = Holder()
    h.lits.append(Lit(1))
    bad = IntImm(1)
    for write in (
        lambda: h.lits.append(bad),
        lambda: h.lits.insert(0, bad),
        lambda: h.lits.extend([Lit(2), bad]),
        lambda: h.lits.__setitem__(0, bad),
        lambda: h.lits.__setitem__(slice(0, 1), [bad]),
        lambda: h.lits.__iadd__([bad]),
    ):
        with pytest.raises(TypeError, match=WHERE + r".*pytest.Lit.*test.IntImm") as info:
            write()
        assert "List[pytest.Lit]" in str(info.value)
    assert [x.value for x in h.lits] == [1]  # every refused write changed nothing
    h.lits[0] = Lit(5)
    h.lits.sort(key=lambda x: x.value)
    assert [x.value for x in h.lits] == [5]


def test_a_list_held_elsewhere_is_checked_through_every_handle():
    lst = ferry.List([Lit(1)])
    h = Holder(lits=lst)
    with pytest.raises(TypeError, match=WHERE):
        lst.append("not a Lit")  # the same list, through the user's own handle
    with pytest.raises(TypeError, match=r"item 1: expected pytest.Lit but got str$"):
        lst.append("not a Lit")
    assert len(h.lits) == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: Holder(lits=[Lit(1)], named={"a": Lit(1)}),  # Python containers, converted
        lambda: ferry.make_node("pytest.typed.Holder", lits=[Lit(1)], named={"a": Lit(1)}),
        lambda: ferry.load_json(ferry.save_json(Holder(lits=[Lit(1)], named={"a": Lit(1)}))),
        lambda: pickle.loads(pickle.dumps(Holder(lits=[Lit(1)], named={"a": Lit(1)}))),
    ],
    ids=["init", "make_node", "load_json", "pickle"],
)
def test_a_list_made_from_a_python_list_on_the_way_in_is_typed_too(make):
    h = make()
    with pytest.raises(TypeError, match=WHERE):
        h.lits.append(IntImm(1))
    with pytest.raises(TypeError, match="field 'named'"):
        h.named["b"] = IntImm(1)
    h.lits = [Lit(2)]  # an attribute write converts too
    h.named = {"b": Lit(2)}
    with pytest.raises(TypeError, match=WHERE):
        h.lits.append(IntImm(1))
    with pytest.raises(TypeError, match="field 'named'"):
        h.named["c"] = 3
    assert (len(h.lits), len(h.named)) == (1, 1)


def test_nested_and_dict_fields_check_their_items():
    h = Holder()
    h.nested.append(ferry.List([1]))
    with pytest.raises(TypeError, match="field 'nested' of 'pytest.typed.Holder'"):
        h.nested.append(ferry.List(["x"]))
    with pytest.raises(TypeError, match="field 'nested'"):
        h.nested[0].append("x")  # the inner list took its item type when it went in
    h.named["a"] = Lit(1)
    with pytest.raises(TypeError, match=r"field 'named' of 'pytest.typed.Holder'.*test.IntImm"):
        h.named["b"] = IntImm(1)
    with pytest.raises(TypeError, match=r"field 'named'.*key"):
        h.named[3] = Lit(1)
    with pytest.raises(TypeError, match="field 'named'"):
        h.named.update({"c": IntImm(1)})
    with pytest.raises(TypeError, match="field 'named'"):
        h.named.setdefault("d", IntImm(1))
    assert list(h.named) == ["a"]
    h.loose.append(IntImm(1))  # List[Object] takes any object
    h.loose.append(Lit(1))


def test_what_a_typed_field_holds_saves_and_loads_back():
    h = Holder()
    h.lits.append(Lit(1))
    h.named["a"] = Lit(2)
    h.nested.append(ferry.List([3]))
    for bad in (lambda: h.lits.append(IntImm(1)), lambda: h.named.__setitem__("b", 1)):
        with pytest.raises(TypeError):
            bad()
    back = ferry.load_json(ferry.save_json(h))
    assert ferry.structural_equal(back, h)
    again = pickle.loads(pickle.dumps(h))
    assert ferry.structural_equal(again, h)
    with pytest.raises(TypeError, match="field 'lits'"):
        again.lits.append(IntImm(1))  # a loaded list is typed too


def test_one_list_in_fields_of_two_item_types_is_refused():
    lst = ferry.List()
    Holder(lits=lst)
    with pytest.raises(
        TypeError, match=r"List\[pytest.Lit\].*field 'ints' of 'pytest.typed.Other'"
    ):
        Other(ints=lst)
    Holder(lits=lst)  # the same item type again is fine
    assert isinstance(Holder(lits=ferry.List()).lits, ferry.List)


def test_untyped_lists_stay_untyped():
    lst = ferry.List()
    lst.append(1)
    lst.append("s")
    ferry.List([lst]).append(IntImm(1))
    assert len(lst) == 2
