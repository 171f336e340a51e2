/// \file library_internal.h
/// Hand-off between LoadLibrary and the registrations that run while a library loads.
///
/// LoadLibrary opens a load transaction on its thread for the duration of dlopen. The
/// registrations the library's static initializers make (type keys, node types, globals) never
/// throw while one is open: they record what they published, or their error, and LoadLibrary
/// either keeps everything (no error) or removes all of it again (any error).
#ifndef FERRY_SRC_LIBRARY_INTERNAL_H_
#define FERRY_SRC_LIBRARY_INTERNAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/memory.h"
#include "ferry/reflection/reflection.h"

namespace ferry {
namespace details {

/// What the library being loaded on this thread registered so far, and what failed.
struct LoadTransaction {
  std::vector<Error> errors;
  /// Globals it added: the name and the function, removed only if still that function.
  std::vector<std::pair<std::string, const Object*>> globals;
  /// Type indices it created (keys that were already registered are not its own).
  std::vector<int32_t> types;
  /// Node registrations it made.
  std::vector<const NodeInfo*> nodes;
  /// Counts the live objects its code makes (ferry/memory.h); made on first use.
  LibraryPin* pin = nullptr;
};

/// Why the library file at `path` must not be loaded: its ABI record (ferry/details/
/// abi_record.h) differs from libferry's, naming both; empty when it matches or has none.
std::string AbiMismatch(const std::string& path);

/// The transaction of the LoadLibrary running on this thread, or nullptr.
LoadTransaction* CurrentLoad();

/// Keeps `error` for the LoadLibrary running on this thread; false when none is running.
bool RecordLoadError(const Error& error);

/// The error being handled (inside a catch block) as an Error; a C++ exception that is not an
/// Error becomes a RuntimeError with its what(). Rethrows abi::__forced_unwind.
Error CurrentExceptionAsError();

// Roll-back hooks, each in the file of its registry. They keep what lock-free readers may still
// hold (type entries, NodeInfo) alive, and only make it unreachable by name.
/// Removes the global `name` if it is still `func`.
void RemoveGlobalIfSame(const std::string& name, const Object* func);
/// Forgets the key of the type `index`, so KeyToIndex no longer finds it; the index is not
/// reused.
void RetireType(int32_t index);
/// Removes the node registration `info`.
void UnregisterNode(const NodeInfo* info);
/// The node registered for exactly the type `index` (not an ancestor), with its fields recorded,
/// from the lock-free table field reads use; nullptr when it is not there yet (the caller
/// then looks the type up by key).
const NodeInfo* FindNodeInfoFast(int32_t index);

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_LIBRARY_INTERNAL_H_
