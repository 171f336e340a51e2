/// \file c_api_internal.h
/// Glue for the extern "C" functions: every body runs inside FERRY_C_API_BEGIN/END, which turns
/// any exception into this thread's raised error and a -1 return.
#ifndef FERRY_SRC_C_API_INTERNAL_H_
#define FERRY_SRC_C_API_INTERNAL_H_

#include <string>

#include "ferry/error.h"

namespace ferry {
namespace details {
/// True when a failed cast to `expected` is an integer that did not fit (an OverflowError).
bool IsIntegerOutOfRange(const FerryAny* value, const std::string& expected);
/// The index of the type registered as `key`, or -1: FerryTypeKeyToIndex without an error, for
/// callers to whom an unknown key is an answer (an error costs its backtrace).
int32_t FindTypeIndex(const char* key);
/// The handle of an object, for the C side.
inline FerryObjectHandle ToHandle(const Object* obj) { return ObjectUnsafe::GetHeader(obj); }
inline Object* FromHandle(FerryObjectHandle handle) {
  return ObjectUnsafe::FromHeader(static_cast<FerryObject*>(handle));
}
/// Hands the reference held by `ref` to a C caller.
inline FerryObjectHandle MoveToHandle(ObjectRef&& ref) {
  ObjectPtr<Object> ptr = ObjectUnsafe::MovePtr(std::move(ref));
  Object* obj = ObjectUnsafe::MoveToOwned(&ptr);
  return obj ? ObjectUnsafe::GetHeader(obj) : nullptr;
}
}  // namespace details
}  // namespace ferry

#define FERRY_C_API_BEGIN() try {
#define FERRY_C_API_END()                                                    \
  }                                                                          \
  catch (const ::ferry::Error& e) { /* by type: no rethrow to sort it */     \
    FerryErrorSetRaised(::ferry::details::ObjectUnsafe::GetHeader(e.get())); \
    return -1;                                                               \
  }                                                                          \
  catch (...) {                                                              \
    FERRY_RETHROW_FORCED_UNWIND();                                           \
    ::ferry::details::SetRaisedFromCurrentException();                       \
    return -1;                                                               \
  }                                                                          \
  return 0

/// Rejects a NULL argument with a ValueError naming it.
#define FERRY_C_API_CHECK_NOT_NULL(arg) \
  if ((arg) == nullptr) FERRY_THROW(ValueError) << __func__ << ": argument '" #arg "' is NULL"

#endif  // FERRY_SRC_C_API_INTERNAL_H_
