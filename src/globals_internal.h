/// \file globals_internal.h
/// The argument check that libferry's own globals (ferry.MapSize, ferry.DictErase, ...) share:
/// a wrong count is a TypeError naming the global, thrown out of line.
///
///     CheckArgCount(n, 2, "ferry.DictGetItem");   // "ferry.DictGetItem() takes 2 arguments..."
#ifndef FERRY_SRC_GLOBALS_INTERNAL_H_
#define FERRY_SRC_GLOBALS_INTERNAL_H_

#include <cstdint>  // int32_t

#include "ferry/base.h"

namespace ferry {
namespace details {
/// The TypeError "<func>() takes <expected> argument(s) but <given> were given".
[[noreturn]] void ThrowGlobalArgCountError(const char* func, int32_t expected, int32_t given);

/// Throws ThrowGlobalArgCountError's error unless `given` == `expected`.
inline void CheckArgCount(int32_t given, int32_t expected, const char* func) {
  if (FERRY_UNLIKELY(given != expected)) ThrowGlobalArgCountError(func, expected, given);
}
}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_GLOBALS_INTERNAL_H_
