/// \file structural_internal.h
/// Test hooks of the structural walks (structural.cc). Internal; not part of the API.
#ifndef FERRY_SRC_STRUCTURAL_INTERNAL_H_
#define FERRY_SRC_STRUCTURAL_INTERNAL_H_

#include "ferry/base.h"

namespace ferry {
namespace details {

/// How deep StructuralEqual, StructuralHash and StructuralMismatch walk a graph by recursion
/// (the default) before the rest of it goes on their explicit stacks, in this thread: 0 walks
/// everything on the stacks. The results are the same at every limit; tests compare them.
/// A negative value restores the default.
FERRY_DLL void SetStructuralRecursionLimit(int limit) noexcept;

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_STRUCTURAL_INTERNAL_H_
