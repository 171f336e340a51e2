/// \file library.cc
/// Loading shared libraries that register globals, all or nothing. Libraries are never
/// unloaded: objects and functions they made hold pointers into their code (deleters, call
/// entries), and a library that failed to load may have made some before it failed.
#include "ferry/library.h"

#include <cxxabi.h>    // abi::__forced_unwind
#include <dlfcn.h>     // dlopen
#include <limits.h>    // PATH_MAX
#include <stdlib.h>    // realpath
#include <sys/stat.h>  // stat, to tell a missing file from a broken one

#include <mutex>
#include <new>  // std::bad_alloc
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "c_api_internal.h"
#include "ferry/function.h"
#include "leak_check_internal.h"
#include "library_internal.h"

namespace ferry {
namespace details {
namespace {
/// The transaction of the LoadLibrary running on this thread, if one is running.
thread_local LoadTransaction* current_load = nullptr;

/// Libraries whose load failed, by dlopen handle, with the error it was: they stay mapped, so
/// dlopen of the same file returns the same handle without running its initializers again.
class FailedLoads {
 public:
  static FailedLoads* Global() {
    static FailedLoads* failed = new FailedLoads();  // never destroyed
    return failed;
  }
  void Add(void* handle, const Error& error) {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_.emplace(handle, error);
  }
  bool Find(void* handle, Error* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = errors_.find(handle);
    if (it == errors_.end()) return false;
    *out = it->second;
    return true;
  }
  /// Forgets every failed load (the leak check at exit).
  void Clear() {
    std::unordered_map<void*, Error> cleared;  // freed unlocked
    std::lock_guard<std::mutex> lock(mutex_);
    cleared.swap(errors_);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, Error> errors_;
};

/// Which library registered each type key and global (for pickles that load their libraries):
/// filled by every LoadLibrary that succeeds. Paths are kept for the life of the process, so
/// the C ABI can hand out their characters.
class LibraryRecords {
 public:
  static LibraryRecords* Global() {
    static LibraryRecords* records = new LibraryRecords();  // never destroyed
    return records;
  }
  void Add(const std::string& path, const LoadTransaction& load) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string* kept = &*paths_.insert(path).first;
    for (int32_t index : load.types) {
      if (const char* key = TypeIndexToKey(index)) types_[key] = kept;
    }
    for (const auto& global : load.globals) {
      std::optional<Function> now = Function::GetGlobal(global.first);
      // Held, so that a later function at the same address is never taken for this one.
      if (now.has_value() && now->get() == global.second) globals_[global.first] = {kept, *now};
    }
  }
  const char* OfType(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = types_.find(key);
    return it == types_.end() ? nullptr : it->second->c_str();
  }
  /// The library of the global `name` while `current` is still the function it registered.
  const char* OfGlobal(const std::string& name, const Object* current) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = globals_.find(name);
    if (it == globals_.end() || it->second.second.get() != current) return nullptr;
    return it->second.first->c_str();
  }
  /// Drops the held functions (the leak check at exit); the paths stay, handed out as they are.
  void ClearFunctions() {
    std::unordered_map<std::string, std::pair<const std::string*, Function>> cleared;
    std::lock_guard<std::mutex> lock(mutex_);
    cleared.swap(globals_);
  }

 private:
  std::mutex mutex_;
  std::set<std::string> paths_;
  std::unordered_map<std::string, const std::string*> types_;
  std::unordered_map<std::string, std::pair<const std::string*, Function>> globals_;
};

}  // namespace

void ClearLibraryRecordsForLeakCheck() {
  FailedLoads::Global()->Clear();
  LibraryRecords::Global()->ClearFunctions();
}

namespace {

/// `path` made absolute with symbolic links resolved, or as given when that fails.
std::string ResolvedPath(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

/// Undoes every registration of `load`, newest first.
void RollBack(const LoadTransaction& load) {
  for (auto it = load.globals.rbegin(); it != load.globals.rend(); ++it) {
    RemoveGlobalIfSame(it->first, it->second);
  }
  for (auto it = load.nodes.rbegin(); it != load.nodes.rend(); ++it) UnregisterNode(*it);
  for (auto it = load.types.rbegin(); it != load.types.rend(); ++it) RetireType(*it);
}

/// Opens a transaction on this thread for its lifetime (nested loads keep their own).
class TransactionScope {
 public:
  explicit TransactionScope(LoadTransaction* load) : outer_(current_load) { current_load = load; }
  ~TransactionScope() { current_load = outer_; }
  TransactionScope(const TransactionScope&) = delete;
  TransactionScope& operator=(const TransactionScope&) = delete;

 private:
  LoadTransaction* outer_;
};
}  // namespace

LoadTransaction* CurrentLoad() { return current_load; }

bool RecordLoadError(const Error& error) {
  if (current_load == nullptr) return false;
  current_load->errors.push_back(error);
  return true;
}

// The handler binds a reference to the forced-unwind exception, which has no C++ object: GCC's
// UndefinedBehaviorSanitizer reports that binding as a null reference, so it is not checked here.
__attribute__((no_sanitize("undefined"))) void RethrowIfForcedUnwind() {
  try {
    throw;
  } catch (abi::__forced_unwind&) {
    throw;  // thread cancellation must unwind to its end
  } catch (...) {
  }
}

Error CurrentExceptionAsError() {
  try {
    throw;
  } catch (const Error& e) {
    return e;
  } catch (const std::bad_alloc&) {
    return Error("MemoryError", "out of memory");
  } catch (const std::exception& e) {
    return Error("RuntimeError", e.what());
  } catch (...) {
    RethrowIfForcedUnwind();
    return Error("RuntimeError", "unknown C++ exception");
  }
}

}  // namespace details

void LoadLibrary(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    FERRY_THROW(RuntimeError) << "cannot load library '" << path << "': no such file";
  }
  // dlopen searches the system's library path for a name without a slash; the file stat() just
  // found is the one meant.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  details::LoadTransaction load;
  void* handle;
  {
    details::TransactionScope scope(&load);
    handle = ::dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    // The loader runs no initializer of a library it rejects, but it may have run those of
    // its dependencies before failing.
    details::RollBack(load);
    const char* reason = ::dlerror();
    FERRY_THROW(RuntimeError) << "cannot load library '" << path
                              << "': " << (reason != nullptr ? reason : "unknown dlopen error");
  }
  Error failed("RuntimeError", "");
  if (details::FailedLoads::Global()->Find(handle, &failed)) {
    ::dlclose(handle);  // drops the reference this dlopen took; the first one keeps it mapped
    throw failed;
  }
  if (load.errors.empty()) {
    details::LibraryRecords::Global()->Add(details::ResolvedPath(open_path), load);
    return;
  }
  details::RollBack(load);
  const Error& first = load.errors.front();
  std::string message = "cannot load library '" + path + "': " + std::string(first.message());
  if (load.errors.size() > 1) {
    message += " (and " + std::to_string(load.errors.size() - 1) + " more failed registration" +
               (load.errors.size() > 2 ? "s" : "") + ")";
  }
  message += "; nothing it registered was kept";
  Error error("RuntimeError", message, first.backtrace());
  details::FailedLoads::Global()->Add(handle, error);
  throw error;
}

}  // namespace ferry

int FerryLibraryLoad(const char* path) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(path);
  ferry::LoadLibrary(path);
  FERRY_C_API_END();
}

int FerryLibraryOfTypeKey(const char* type_key, const char** out_path) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(type_key);
  FERRY_C_API_CHECK_NOT_NULL(out_path);
  *out_path = ferry::details::LibraryRecords::Global()->OfType(type_key);
  FERRY_C_API_END();
}

int FerryLibraryOfGlobal(const char* name, const char** out_path) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(out_path);
  const char* path = nullptr;
  if (std::optional<ferry::Function> f = ferry::Function::GetGlobal(name)) {
    path = ferry::details::LibraryRecords::Global()->OfGlobal(name, f->get());
  }
  *out_path = path;
  FERRY_C_API_END();
}
