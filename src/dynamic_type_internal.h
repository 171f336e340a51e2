/// \file dynamic_type_internal.h
/// What JSON needs to know of types registered at run time (src/dynamic_type.cc).
#ifndef FERRY_SRC_DYNAMIC_TYPE_INTERNAL_H_
#define FERRY_SRC_DYNAMIC_TYPE_INTERNAL_H_

#include <cstddef>

#include "ferry/any.h"
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

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_DYNAMIC_TYPE_INTERNAL_H_
