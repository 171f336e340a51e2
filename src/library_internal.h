/// \file library_internal.h
/// Hand-off between LoadLibrary and the registrations that run while a library loads.
#ifndef FERRY_SRC_LIBRARY_INTERNAL_H_
#define FERRY_SRC_LIBRARY_INTERNAL_H_

#include "ferry/error.h"

namespace ferry {
namespace details {
/// Keeps `error` for the LoadLibrary running on this thread; false when none is running.
bool RecordLoadError(const Error& error);
}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_LIBRARY_INTERNAL_H_
