/// \file leak_check_internal.h
/// The leak check's hooks into the rest of libferry (FERRY_LEAK_CHECK=1, docs/python.md).
#ifndef FERRY_SRC_LEAK_CHECK_INTERNAL_H_
#define FERRY_SRC_LEAK_CHECK_INTERNAL_H_

#include <cstdint>

#include "ferry/object.h"
#include "ferry/reflection/reflection.h"  // NodeInfo

namespace ferry {
namespace details {

/// One more than the largest type index the registry hands out; the size of the count table.
inline constexpr int32_t kTypeIndexLimit = 1 << 20;

/// Takes an object that lives as long as the process by design (a shared singleton held by a
/// never-destroyed static, never released) out of the leak check's count. Returns `ptr`.
inline const ObjectPtr<Object>* LeakCheckExempt(const ObjectPtr<Object>* ptr) {
  LeakCheckCount((*ptr)->type_index(), -1);
  return ptr;
}

/// Drops the global function table's references (function.cc): what only the registry keeps
/// alive at exit is not a leak. Called once, at the leak check's report.
void ClearGlobalsForLeakCheck();
/// Drops what library.cc keeps of past loads: the errors of failed loads and its references to
/// the globals each library registered.
void ClearLibraryRecordsForLeakCheck();
/// Drops the recorded field defaults of every type registered at run time (reflection.cc), and
/// of one type (dynamic_type.cc): a default factory made from a Python callable is the type's.
void ClearFieldDefaultsForLeakCheck();
void ClearFieldDefaults(const NodeInfo& info);

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_LEAK_CHECK_INTERNAL_H_
