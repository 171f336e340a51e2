/// \file library.cc
/// Loading shared libraries that register globals, all or nothing. Libraries are never
/// unloaded: objects and functions they made hold pointers into their code (deleters, call
/// entries), and a library that failed to load may have made some before it failed.
#include "ferry/library.h"

#include <cxxabi.h>    // abi::__forced_unwind
#include <dlfcn.h>     // dlopen
#include <elf.h>       // reading a library's ABI record before loading it
#include <fcntl.h>     // open
#include <limits.h>    // PATH_MAX
#include <pthread.h>   // the closing thread
#include <stdlib.h>    // realpath
#include <sys/stat.h>  // stat, to tell a missing file from a broken one
#include <time.h>      // nanosleep
#include <unistd.h>    // pread, close

#include <cinttypes>  // PRIx64
#include <condition_variable>
#include <cstdio>   // snprintf
#include <cstring>  // memcmp
#include <mutex>
#include <new>  // std::bad_alloc
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "c_api_internal.h"
#include "ferry/details/abi_record.h"
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
  /// A library LoadLibrary loaded: what it registered, to remove at UnloadLibrary.
  struct Loaded {
    void* handle = nullptr;
    LoadTransaction load;
    bool unloading = false;
  };
  /// Records a successful load. False when `path` is loaded already with this `handle` (a
  /// repeated LoadLibrary: the caller drops the extra dlopen reference).
  bool Add(const std::string& path, void* handle, const LoadTransaction& load) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = loaded_.find(path);
    if (found != loaded_.end() && found->second.handle == handle) return false;
    loaded_[path] = Loaded{handle, load, false};
    const std::string* kept = &*paths_.insert(path).first;
    for (int32_t index : load.types) {
      if (const char* key = TypeIndexToKey(index)) types_[key] = kept;
    }
    for (const auto& global : load.globals) {
      std::optional<Function> now = Function::GetGlobal(global.first);
      // Held, so that a later function at the same address is never taken for this one.
      if (now.has_value() && now->get() == global.second) globals_[global.first] = {kept, *now};
    }
    return true;
  }
  /// Whether `path` is unloaded but still mapped (objects of it are alive).
  bool IsUnloading(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = loaded_.find(path);
    return it != loaded_.end() && it->second.unloading;
  }
  /// Marks `path` unloading and forgets which of its types and globals it registered; the
  /// registrations to remove go to `out`. False when LoadLibrary never loaded it (or it is
  /// unloaded already).
  enum class Unload { kStarted, kUnknown, kUnpinned };
  Unload BeginUnload(const std::string& path, LoadTransaction* out, std::vector<Function>* drop) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = loaded_.find(path);
    if (it == loaded_.end() || it->second.unloading) return Unload::kUnknown;
    // Code that never included ferry/memory.h (C, a Rust cdylib) makes its Functions through
    // the C ABI, which cannot tell whose code they run: such a library is never closed.
    if (it->second.load.pin == nullptr) return Unload::kUnpinned;
    it->second.unloading = true;
    if (it->second.load.pin != nullptr) {
      it->second.load.pin->unloading.store(true, std::memory_order_release);
    }
    *out = it->second.load;
    for (auto t = types_.begin(); t != types_.end();) {
      t = *t->second == path ? types_.erase(t) : std::next(t);
    }
    for (auto g = globals_.begin(); g != globals_.end();) {
      if (*g->second.first == path) {
        drop->push_back(std::move(g->second.second));  // released after unlocking
        g = globals_.erase(g);
      } else {
        ++g;
      }
    }
    return Unload::kStarted;
  }
  /// The handles of unloading libraries none of whose objects is alive, removed from the
  /// records (their paths may be loaded again).
  std::vector<void*> TakeIdle() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<void*> idle;
    for (auto it = loaded_.begin(); it != loaded_.end();) {
      LibraryPin* pin = it->second.load.pin;
      if (it->second.unloading &&
          (pin == nullptr || pin->live.load(std::memory_order_acquire) == 0)) {
        idle.push_back(it->second.handle);
        if (pin != nullptr) closed_pins_.push_back(pin);  // see LibraryPin: never freed
        it = loaded_.erase(it);
      } else {
        ++it;
      }
    }
    return idle;
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
  std::unordered_map<std::string, Loaded> loaded_;
  /// The pins of closed libraries, kept reachable (a leak checker would report them).
  std::vector<LibraryPin*> closed_pins_;
};

/// Closes unloaded libraries once their last object has died. The close runs on a thread of
/// its own, a moment after it is asked for: the thread that dropped the last object is still
/// in the library's deleter when it asks, and must have returned from it first.
class Closer {
 public:
  static Closer* Global() {
    static Closer* closer = new Closer();  // never destroyed; its thread lives to the end
    return closer;
  }
  /// Asks the thread to look for idle libraries, starting it the first time. Never throws:
  /// when no thread can be started the libraries stay mapped, which is safe.
  void Request() noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requested_ = true;
      if (!started_) {
        pthread_t thread;
        auto run = [](void* self) -> void* {
          static_cast<Closer*>(self)->Run();
          return nullptr;
        };
        started_ = ::pthread_create(&thread, nullptr, run, this) == 0;
        if (started_) ::pthread_detach(thread);
      }
    }
    cv_.notify_one();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return requested_; });
      requested_ = false;
      lock.unlock();
      // The thread that asked is still returning from the library's deleter.
      struct timespec delay = {0, 20 * 1000 * 1000};
      ::nanosleep(&delay, nullptr);
      for (void* handle : LibraryRecords::Global()->TakeIdle()) ::dlclose(handle);
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool requested_ = false;
  bool started_ = false;
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

/// Reads exactly `size` bytes at `offset` of `fd`.
bool ReadAt(int fd, void* out, size_t size, uint64_t offset) {
  char* p = static_cast<char*>(out);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

/// The ABI records in the `.ferry_abi` section of the 64-bit ELF file `path` (empty when it
/// has none, is not such a file, or cannot be read: dlopen then says what is wrong with it).
/// Read from the file, not from a mapped library, so that nothing of the library runs first.
std::vector<FerryAbiRecord> ReadAbiRecords(const std::string& path) {
  std::vector<FerryAbiRecord> records;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return records;
  struct CloseFd {
    int fd;
    ~CloseFd() { ::close(fd); }
  } closer{fd};
  Elf64_Ehdr eh;
  if (!ReadAt(fd, &eh, sizeof(eh), 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum) {
    return records;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!ReadAt(fd, sections.data(), sections.size() * sizeof(Elf64_Shdr), eh.e_shoff)) {
    return records;
  }
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  static constexpr char kName[] = ".ferry_abi";
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_PROGBITS || section.sh_name >= names.sh_size ||
        section.sh_size > (1u << 20)) {
      continue;
    }
    char name[sizeof(kName)] = {};
    if (!ReadAt(fd, name, sizeof(name), names.sh_offset + section.sh_name) ||
        std::memcmp(name, kName, sizeof(kName)) != 0) {
      continue;
    }
    std::vector<char> data(section.sh_size);
    if (!ReadAt(fd, data.data(), data.size(), section.sh_offset)) return records;
    // Records are 8-aligned but the linker may pad between them: look for each magic.
    for (size_t at = 0; at + sizeof(FerryAbiRecord) <= data.size(); at += 8) {
      if (std::memcmp(data.data() + at, "FERRYABI", 8) != 0) continue;
      FerryAbiRecord record;
      std::memcpy(&record, data.data() + at, sizeof(record));
      records.push_back(record);
    }
  }
  return records;
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

std::string AbiMismatch(const std::string& path) {
  const FerryAbiRecord& ours = FERRY_STR_CONCAT(kAbiRecordV, FERRY_ABI_VERSION);
  for (const FerryAbiRecord& record : ReadAbiRecords(path)) {
    if (record.version == ours.version && record.fingerprint == ours.fingerprint) continue;
    char text[512];
    std::snprintf(text, sizeof(text),
                  "it was built against Ferry headers of ABI version %" PRIu32
                  " (layout fingerprint %016" PRIx64
                  "), but the running libferry is ABI version %" PRIu32
                  " (layout fingerprint %016" PRIx64
                  "); rebuild it against this Ferry's headers (nothing of it was run)",
                  record.version, record.fingerprint, ours.version, ours.fingerprint);
    return text;
  }
  return std::string();
}

LoadTransaction* CurrentLoad() { return current_load; }

LibraryPin* PinOfLoadingLibrary() noexcept {
  if (current_load == nullptr) return nullptr;
  if (current_load->pin == nullptr) current_load->pin = new (std::nothrow) LibraryPin();
  return current_load->pin;  // never freed: see LibraryPin
}

void LibraryPinRelease(LibraryPin* pin) noexcept {
  if (pin->live.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
      pin->unloading.load(std::memory_order_acquire)) {
    Closer::Global()->Request();
  }
}

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
  // Before dlopen: a library built for another ABI would corrupt the type table from its
  // static initializers. A library that is already loaded passed this check when it was.
  std::string mismatch = details::AbiMismatch(open_path);
  if (!mismatch.empty()) {
    FERRY_THROW(RuntimeError) << "cannot load library '" << path << "': " << mismatch;
  }
  if (details::LibraryRecords::Global()->IsUnloading(details::ResolvedPath(open_path))) {
    FERRY_THROW(RuntimeError) << "cannot load library '" << path
                              << "': it was unloaded and objects or functions it made are still "
                                 "alive, so it is still mapped; drop them first, or load a copy "
                                 "under another file name";
  }
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
    if (!details::LibraryRecords::Global()->Add(details::ResolvedPath(open_path), handle, load)) {
      ::dlclose(handle);  // loaded already: one dlopen reference is all UnloadLibrary drops
    }
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

void UnloadLibrary(const std::string& path) {
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  details::LoadTransaction load;
  std::vector<Function> drop;
  using Unload = details::LibraryRecords::Unload;
  const Unload started = details::LibraryRecords::Global()->BeginUnload(
      details::ResolvedPath(open_path), &load, &drop);
  if (started == Unload::kUnknown) {
    FERRY_THROW(RuntimeError) << "cannot unload library '" << path
                              << "': no library of that path was loaded by LoadLibrary (or it "
                                 "is unloaded already)";
  }
  if (started == Unload::kUnpinned) {
    FERRY_THROW(RuntimeError) << "cannot unload library '" << path
                              << "': it was not built against Ferry's C++ headers, so Ferry "
                                 "cannot tell when the functions it made are gone; it stays "
                                 "loaded, with everything it registered";
  }
  details::RollBack(load);  // its globals and type keys are gone from here on
  drop.clear();
  details::Closer::Global()->Request();
}

}  // namespace ferry

int FerryLibraryUnload(const char* path) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(path);
  ferry::UnloadLibrary(path);
  FERRY_C_API_END();
}

int FerryLibraryLoad(const char* path) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(path);
  ferry::LoadLibrary(path);
  FERRY_C_API_END();
}

int FerryLibraryAbiMismatch(const char* path, const char** out_problem) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(path);
  FERRY_C_API_CHECK_NOT_NULL(out_problem);
  thread_local std::string problem;
  problem = ferry::details::AbiMismatch(path);
  *out_problem = problem.empty() ? nullptr : problem.c_str();
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
