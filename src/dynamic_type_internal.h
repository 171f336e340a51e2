/// \file dynamic_type_internal.h
/// What JSON needs to know of types registered at run time (src/dynamic_type.cc).
#ifndef FERRY_SRC_DYNAMIC_TYPE_INTERNAL_H_
#define FERRY_SRC_DYNAMIC_TYPE_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "ferry/any.h"
#include "ferry/container/dict.h"
#include "ferry/container/list.h"
#include "ferry/reflection/reflection.h"

namespace ferry {
namespace details {

/// How many of `info`'s leading fields a LoadJSON document may leave out: every field of a C++
/// node (its default constructor gave it a value, so a document written before the field was
/// added still loads), and the C++ ancestor's fields of a type registered at run time. The
/// fields after them (those a py_class or tschema.register declared) have no default in C++:
/// a document must give each that has no recorded default (FieldDefault); LoadJSON names a
/// missing one.
size_t NumFieldsWithDefaults(const NodeInfo& info);

/// The default of field `k` of `info` recorded by FerryTypeSetFieldDefault (a factory called
/// now, so each use gets its own value) into `*out`; false when the field has none.
bool FieldDefault(const NodeInfo& info, size_t k, Any* out);

/// Whether field `k` of the C++ node `info` has a default recorded by RegisterFieldDefault:
/// its default-constructed value, which MakeNode keeps when the field is not given.
bool CppFieldKeepsDefault(const NodeInfo& info, size_t k);

/// Checks `items`, about to go into `list` (at `first`, `first + 1`, ...; -1 when the positions
/// are not known), against the item type a typed field gave the list (ListNode::item_type;
/// none: nothing to check), and gives the Lists and Dicts among them the item types their
/// place asks for. A TypeError naming the field, its type and the item's position; nothing is
/// written by the caller then.
void CheckNewListItems(const ListNode& list, const AnyView* items, int64_t n, int64_t first);

/// As CheckNewListItems, for an entry about to go into `dict`.
void CheckNewDictEntry(const DictNode& dict, const AnyView& key, const AnyView& value);

/// The value a field of `constraint`'s type stores for `value`, when that differs: for an enum
/// field (or an Optional of one) given an int (an IntEnum member arrives as its int), the
/// member's name; None otherwise. A ValueError for an int that is no member. Every write of a
/// constrained field goes through it (WriteConstrainedField, SetAttr).
Any EnumNameOfValue(const FieldConstraint* constraint, const AnyView& value);

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_DYNAMIC_TYPE_INTERNAL_H_
