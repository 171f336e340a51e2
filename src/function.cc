/// \file function.cc
/// The global function registry, typed-call errors, functions made from C callbacks, and the C
/// ABI of functions.
#include "ferry/function.h"

#include <pthread.h>  // the calling thread's stack bounds, for the callbacks' stack reserve

#include <algorithm>     // sort
#include <atomic>        // DeferredDeleters' list
#include <cstdint>       // uintptr_t
#include <memory>        // unique_ptr
#include <mutex>         // unique_lock
#include <new>           // nothrow
#include <shared_mutex>  // readers share the registry
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "c_api_internal.h"
#include "leak_check_internal.h"
#include "library_internal.h"
#include "tensor_internal.h"  // the read-only refusal of a tensor argument

namespace ferry {
namespace details {
void ThrowNullFunctionCall() {
  FERRY_THROW(ValueError) << "called a null Function (a Function parameter given None, or a "
                             "default-constructed Function): check defined() first";
}
}  // namespace details

namespace details {
namespace {

/// Name -> Function. Keys are views into the entry's own String, so lookups by string_view
/// allocate nothing; the entry lives on the heap because a short String keeps its bytes inline
/// and a view of it must not move.
class GlobalTable {
 public:
  static GlobalTable* Global() {
    // Never destroyed: functions may be looked up during static destruction.
    static GlobalTable* table = new GlobalTable();
    return table;
  }

  std::optional<Function> Get(std::string_view name) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = table_.find(name);
    if (it == table_.end()) return std::nullopt;
    return it->second->func;
  }

  void Set(std::string_view name, Function func, bool override) {
    if (name.empty()) FERRY_THROW(ValueError) << "a global function name must not be empty";
    if (!func.defined()) {
      FERRY_THROW(ValueError) << "cannot register global function '" << name << "': it is null";
    }
    auto entry = std::make_unique<Entry>(Entry{String(name), std::move(func)});
    // The replaced entry is destroyed after the lock: its function's deleter may use the
    // registry, and freeing even its name may take the dynamic loader's lock (a thread's first
    // freed String registers a thread-exit destructor), which a thread inside dlopen holds
    // while its library's registrations wait for this lock.
    std::unique_ptr<Entry> replaced;
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = table_.find(name);
    if (it != table_.end()) {
      if (!override) {
        FERRY_THROW(RuntimeError) << "global function '" << name
                                  << "' is already registered (pass override=true to replace it)";
      }
      replaced = std::move(it->second);
      table_.erase(it);
    }
    std::string_view key = entry->name.view();
    table_.emplace(key, std::move(entry));
    lock.unlock();
  }

  bool Remove(std::string_view name) {
    std::unique_ptr<Entry> removed;  // destroyed after the lock, as in Set
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = table_.find(name);
    if (it == table_.end()) return false;
    removed = std::move(it->second);
    table_.erase(it);
    lock.unlock();
    return true;
  }

  /// Removes `name` only if it is still `func` (another thread may have replaced it).
  void RemoveIfSame(std::string_view name, const Object* func) {
    std::unique_ptr<Entry> removed;  // destroyed after the lock, as in Set
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = table_.find(name);
    if (it == table_.end() || it->second->func.get() != func) return;
    removed = std::move(it->second);
    table_.erase(it);
    lock.unlock();
  }

  /// Empties the table (the leak check at exit: the registry's own references are not leaks).
  void Clear() {
    std::unordered_map<std::string_view, std::unique_ptr<Entry>> cleared;  // freed unlocked
    std::unique_lock<std::shared_mutex> lock(mutex_);
    cleared.swap(table_);
    lock.unlock();
  }

  std::vector<String> Names() {
    std::vector<String> names;
    {
      std::shared_lock<std::shared_mutex> lock(mutex_);
      names.reserve(table_.size());
      for (const auto& kv : table_) names.push_back(kv.second->name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  struct Entry {
    String name;
    Function func;
  };
  std::shared_mutex mutex_;
  std::unordered_map<std::string_view, std::unique_ptr<Entry>> table_;
};

/// The lowest address of the calling thread's stack; 0 when unknown.
[[gnu::noinline]] uintptr_t LookUpStackLow() {
  uintptr_t low = 0;
#if defined(__linux__)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* base = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &base, &size) == 0) low = reinterpret_cast<uintptr_t>(base);
    pthread_attr_destroy(&attr);
  }
#endif
  return low;
}

/// LookUpStackLow of this thread, once it is known; 1 before. initial-exec (8 bytes of the
/// static TLS space, as string.cc's cache): an offset from the thread pointer instead of a
/// __tls_get_addr call on every call of a function with a stack reserve (the Rust frontend sets
/// one on each of its closures).
[[gnu::tls_model("initial-exec")]] thread_local uintptr_t thread_stack_low = 1;

/// The bytes of the calling thread's stack left below this frame; UINTPTR_MAX when its bounds are
/// unknown.
uintptr_t StackLeft() {
  uintptr_t low = thread_stack_low;
  if (FERRY_UNLIKELY(low == 1)) low = thread_stack_low = LookUpStackLow();
  return low == 0 ? UINTPTR_MAX : reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) - low;
}

/// The RuntimeError of a call refused by FerryFunctionSetStackReserve's check.
[[noreturn, gnu::noinline, gnu::cold]] void ThrowStackReserve(size_t reserve, uintptr_t left) {
  FERRY_THROW(RuntimeError)
      << "maximum recursion depth exceeded: a callback of another language needs " << reserve / 1024
      << " KiB of stack and only " << left / 1024
      << " KiB of this thread's stack are left (a function calling itself through C++ without "
         "end?)";
}

/// ThrowStackReserve for a C caller: raises the error and returns -1.
[[gnu::noinline, gnu::cold]] int RaiseStackReserve(size_t reserve, uintptr_t left) {
  try {
    ThrowStackReserve(reserve, left);
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    SetRaisedFromCurrentException();
  }
  return -1;
}

/// Deleters of another language that need stack to run (FerryFunctionSetStackReserve's resource
/// deleters, FerryDeleterSetStackReserve's deleters), kept when one was due with less than its
/// reserve left, and run by the next callback entry or guarded deleter that has its own: a
/// deleter of the JVM needs the stack its callback needs, and a deleter cannot be refused.
class DeferredDeleters {
 public:
  /// Keeps `deleter(arg)` for later; runs it now if there is no memory to keep it.
  static void Add(void (*deleter)(void*), void* arg) noexcept {
    Node* node = new (std::nothrow) Node{deleter, arg, nullptr};
    if (node == nullptr) {
      deleter(arg);
      return;
    }
    node->next = head_.load(std::memory_order_relaxed);
    while (!head_.compare_exchange_weak(node->next, node, std::memory_order_release,
                                        std::memory_order_relaxed)) {
    }
  }
  /// Whether no deleter is kept (one load).
  static bool Empty() { return head_.load(std::memory_order_relaxed) == nullptr; }
  /// Runs the deleters kept so far (one load when there are none).
  static void RunAll() noexcept {
    if (FERRY_LIKELY(head_.load(std::memory_order_relaxed) == nullptr)) return;
    Node* node = head_.exchange(nullptr, std::memory_order_acquire);
    while (node != nullptr) {
      Node* next = node->next;
      node->deleter(node->arg);
      delete node;
      node = next;
    }
  }

 private:
  struct Node {
    void (*deleter)(void*);
    void* arg;
    Node* next;
  };
  static inline std::atomic<Node*> head_{nullptr};
};

/// `deleter(arg)` now if `reserve` bytes of this thread's stack are left (and then the deleters
/// kept earlier that fit), else kept by DeferredDeleters.
[[gnu::noinline]] void RunWithReserve(void (*deleter)(void*), void* arg, size_t reserve) noexcept {
  if (StackLeft() < reserve) {
    DeferredDeleters::Add(deleter, arg);
    return;
  }
  deleter(arg);
  DeferredDeleters::RunAll();
}

/// A deleter and its reserve, in DeleterReserves' table.
struct DeleterReserve {
  std::atomic<void (*)(void*)> deleter{nullptr};
  std::atomic<size_t> bytes{0};
};

/// The deleters given a stack reserve by FerryDeleterSetStackReserve: a few per process (one or
/// two per frontend), so a fixed table, read without a lock by every release of a payload or an
/// owner.
class DeleterReserves {
 public:
  /// Sets the reserve of `deleter`; false when the table is full.
  static bool Set(void (*deleter)(void*), size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int n = count_.load(std::memory_order_relaxed);
    for (int i = 0; i < n; ++i) {
      if (entries_[i].deleter.load(std::memory_order_relaxed) == deleter) {
        entries_[i].bytes.store(bytes, std::memory_order_relaxed);
        return true;
      }
    }
    if (n == kCapacity) return false;
    entries_[n].bytes.store(bytes, std::memory_order_relaxed);
    entries_[n].deleter.store(deleter, std::memory_order_relaxed);
    count_.store(n + 1, std::memory_order_release);
    return true;
  }
  /// The reserve of `deleter` (0: none).
  static size_t Of(void (*deleter)(void*)) noexcept {
    const int n = count_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      if (entries_[i].deleter.load(std::memory_order_relaxed) == deleter) {
        return entries_[i].bytes.load(std::memory_order_relaxed);
      }
    }
    return 0;
  }
  static constexpr int kCapacity = 16;

 private:
  static inline std::mutex mutex_;
  static inline DeleterReserve entries_[kCapacity];
  static inline std::atomic<int> count_{0};
};

/// EnterWithReserve when the thread's stack bounds are not looked up yet, deleters are kept, or
/// the stack is short.
[[gnu::noinline]] int EnterWithReserveSlow(size_t reserve) {
  uintptr_t left = StackLeft();
  if (FERRY_UNLIKELY(left < reserve)) return RaiseStackReserve(reserve, left);
  DeferredDeleters::RunAll();
  return 0;
}

/// FerryFunctionSetStackReserve's check before a callback: 0, after running the deleters kept
/// meanwhile, when `reserve` bytes of the stack are left; else -1 with the RuntimeError raised.
/// The common case (bounds known, stack left, no deleters kept) is inlined into the callback
/// entry, 8 instructions (an initial-exec TLS load, a global load, compares; the address of a
/// local stands for the frame's); the rest is out of line. Every Rust closure has a reserve, and
/// its call from C++ measured no slower with it than without (docs/benchmarks.md, "Rust").
[[gnu::always_inline]] inline int EnterWithReserve(size_t reserve) {
  char here;
  uintptr_t low = thread_stack_low;
  if (FERRY_LIKELY(low > 1) && reinterpret_cast<uintptr_t>(&here) - low >= reserve &&
      DeferredDeleters::Empty()) {
    return 0;
  }
  return EnterWithReserveSlow(reserve);
}

/// A Function around a C callback and its resource.
class CallbackFunctionObj : public FunctionObj {
 public:
  CallbackFunctionObj(void* resource, FerryFunctionCallback callback, void (*deleter)(void*))
      : resource_(resource), callback_(callback), deleter_(deleter) {
    safe_call = &SafeCall;
    cpp_call = &CppCall;
  }
  ~CallbackFunctionObj() {
    if (deleter_ == nullptr) return;
    if (stack_reserve_ != 0) {
      RunWithReserve(deleter_, resource_, stack_reserve_);
    } else {
      deleter_(resource_);
    }
  }

  /// The callback and resource of `obj` if it is a CallbackFunctionObj.
  static bool Unwrap(const FunctionObj* obj, FerryFunctionCallback* callback, void** resource) {
    if (obj->safe_call != &SafeCall) return false;
    auto* self = static_cast<const CallbackFunctionObj*>(obj);
    *callback = self->callback_;
    *resource = self->resource_;
    return true;
  }

  /// Refuses calls while fewer than `bytes` of the calling thread's stack are left (0: none).
  void set_stack_reserve(size_t bytes) { stack_reserve_ = bytes; }

 private:
  static int SafeCall(void* self, const FerryAny* args, int32_t num_args, FerryAny* result) {
    auto* obj = static_cast<CallbackFunctionObj*>(FromHandle(self));
    *result = NoneCell();
    if (FERRY_UNLIKELY(obj->stack_reserve_ != 0) && EnterWithReserve(obj->stack_reserve_) != 0) {
      return -1;
    }
    int rc = obj->callback_(obj->resource_, args, num_args, result);
    if (rc != 0) {
      // The rule "Results" of c_api.h: None after a failure, whatever the callback wrote.
      FerryAnyRelease(result);
      FerryObjectHandle raised = nullptr;
      FerryErrorMoveFromRaised(&raised);
      if (raised == nullptr) {
        FerryErrorSetRaisedFromCStr("RuntimeError",
                                    "a function callback failed without raising "
                                    "an error");
      } else {
        FerryErrorSetRaised(raised);
        FerryObjectDecRef(raised);
      }
      return -1;
    }
    return 0;
  }
  static void CppCall(const FunctionObj* self, const AnyView* args, int32_t num_args, Any* result) {
    auto* obj = static_cast<const CallbackFunctionObj*>(self);
    if (FERRY_UNLIKELY(obj->stack_reserve_ != 0) && EnterWithReserve(obj->stack_reserve_) != 0) {
      ThrowRaised();
    }
    FerryAny out = NoneCell();
    if (obj->callback_(obj->resource_, reinterpret_cast<const FerryAny*>(args), num_args, &out) !=
        0) {
      FerryAnyRelease(&out);  // what a failing callback wrote is not a result
      ThrowRaised();
    }
    *result = Any::FromOwned(out);
  }

  void* resource_;
  FerryFunctionCallback callback_;
  void (*deleter_)(void*);
  size_t stack_reserve_ = 0;
};

}  // namespace

void RunDeleter(void (*deleter)(void*), void* arg) noexcept {
  const size_t reserve = DeleterReserves::Of(deleter);
  if (reserve == 0) {
    deleter(arg);
  } else {
    RunWithReserve(deleter, arg, reserve);
  }
}

void ThrowArgTypeError(const std::string& name, const std::string& signature, int32_t index,
                       const AnyView& arg, const std::string& expected, const std::string& detail) {
  if (IsIntegerOutOfRange(arg.raw(), expected)) {
    FERRY_THROW(OverflowError) << "argument " << index << " of `" << signature << "`: integer "
                               << arg.raw()->v_int64 << " is out of range for " << expected;
  }
  if (IsReadOnlyTensorFor(arg.raw(), expected)) {
    FERRY_THROW(ValueError) << "argument " << index << " of `" << signature
                            << "`: " << ReadOnlyTensorRefusal();
  }
  FERRY_THROW(TypeError) << "Mismatched type on argument " << index << " when calling `"
                         << signature << "`: " << DescribeCastFailure(arg.raw(), expected, detail);
  (void)name;
}

void ThrowParamNamesError(const std::string& name, size_t arity, size_t given) {
  FERRY_THROW(ValueError) << name << ": " << given << " parameter names given for " << arity
                          << " parameter" << (arity == 1 ? "" : "s");
}

void ThrowArgCountError(const std::string& name, const std::string& signature, int32_t expected,
                        int32_t got) {
  FERRY_THROW(TypeError) << name << "() takes " << expected << " argument"
                         << (expected == 1 ? "" : "s") << " but " << got << " were given; "
                         << "signature `" << signature << "`";
}

namespace {
/// Keeps the error being handled for LoadLibrary when one runs on this thread; else rethrows it
/// with the place of the registration.
void ReportRegistrationError(const char* name, const char* file, int line) {
  Error e = CurrentExceptionAsError();
  std::string where = std::string(" (FERRY_REGISTER_GLOBAL(\"") + (name != nullptr ? name : "") +
                      "\") at " + file + ":" + std::to_string(line) + ")";
  Error located(e.kind(), e.message() + where, e.backtrace());
  // While LoadLibrary runs the library's initializers, keep the error for it to report
  // (throwing out of a static initializer would terminate the process).
  if (RecordLoadError(located)) return;
  throw located;
}
}  // namespace

void RegisterGlobalFromStatic(const char* name, ObjectRef f, const char* file, int line) {
  try {
    const Object* published = f.get();
    GlobalTable::Global()->Set(name, Downcast<Function>(std::move(f)), false);
    if (LoadTransaction* load = CurrentLoad()) load->globals.emplace_back(name, published);
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    ReportRegistrationError(name, file, line);
  }
}

void RegisterGlobalFailed(const char* name, const char* file, int line) {
  ReportRegistrationError(name, file, line);
}

void ClearGlobalsForLeakCheck() { GlobalTable::Global()->Clear(); }

void RemoveGlobalIfSame(const std::string& name, const Object* func) {
  GlobalTable::Global()->RemoveIfSame(name, func);
}

}  // namespace details

std::optional<Function> Function::GetGlobal(std::string_view name) {
  return details::GlobalTable::Global()->Get(name);
}

Function Function::GetGlobalRequired(std::string_view name) {
  if (auto f = GetGlobal(name)) return *std::move(f);
  FERRY_THROW(KeyError) << "global function '" << name << "' is not registered";
}

void Function::SetGlobal(std::string_view name, Function f, bool override) {
  details::GlobalTable::Global()->Set(name, std::move(f), override);
}

bool Function::RemoveGlobal(std::string_view name) {
  return details::GlobalTable::Global()->Remove(name);
}

std::vector<String> Function::ListGlobalNames() { return details::GlobalTable::Global()->Names(); }

}  // namespace ferry

using ferry::details::FromHandle;

int FerryFunctionCreate(void* resource, FerryFunctionCallback callback,
                        void (*resource_deleter)(void* resource), FerryObjectHandle* out_func) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(callback);
  FERRY_C_API_CHECK_NOT_NULL(out_func);
  ferry::Function f(ferry::make_object<ferry::details::CallbackFunctionObj>(resource, callback,
                                                                            resource_deleter));
  *out_func = ferry::details::MoveToHandle(std::move(f));
  FERRY_C_API_END();
}

int FerryFunctionCall(FerryObjectHandle func, const FerryAny* args, int32_t num_args,
                      FerryAny* result) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  FERRY_C_API_CHECK_NOT_NULL(result);
  *result = ferry::details::NoneCell();  // the rule "Results" of c_api.h: None after a failure
  if (num_args < 0 || (args == nullptr && num_args != 0)) {
    FERRY_THROW(ValueError) << "FerryFunctionCall: bad argument array (" << num_args << " at "
                            << static_cast<const void*>(args) << ")";
  }
  const ferry::Object* obj = FromHandle(func);
  if (obj->type_index() != kFerryFunction) {
    FERRY_THROW(TypeError) << "FerryFunctionCall: expected ferry.Function, got "
                           << obj->GetTypeKey();
  }
  if (static_cast<const ferry::FunctionObj*>(obj)->safe_call(func, args, num_args, result) != 0) {
    return -1;
  }
  FERRY_C_API_END();
}

namespace {
const ferry::FunctionObj* FunctionFromHandle(FerryObjectHandle func, const char* api) {
  const ferry::Object* obj = FromHandle(func);
  if (obj->type_index() != kFerryFunction) {
    FERRY_THROW(TypeError) << api << ": expected ferry.Function, got " << obj->GetTypeKey();
  }
  return static_cast<const ferry::FunctionObj*>(obj);
}
}  // namespace

int FerryFunctionGetSafeCall(FerryObjectHandle func, FerryFunctionSafeCall* out_call) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  FERRY_C_API_CHECK_NOT_NULL(out_call);
  *out_call = FunctionFromHandle(func, "FerryFunctionGetSafeCall")->safe_call;
  FERRY_C_API_END();
}

int FerryFunctionGetCallback(FerryObjectHandle func, FerryFunctionCallback* out_callback,
                             void** out_resource) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  FERRY_C_API_CHECK_NOT_NULL(out_callback);
  FERRY_C_API_CHECK_NOT_NULL(out_resource);
  const ferry::FunctionObj* obj = FunctionFromHandle(func, "FerryFunctionGetCallback");
  *out_callback = nullptr;
  *out_resource = nullptr;
  ferry::details::CallbackFunctionObj::Unwrap(obj, out_callback, out_resource);
  FERRY_C_API_END();
}

int FerryFunctionSetStackReserve(FerryObjectHandle func, size_t bytes) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  auto* obj =
      const_cast<ferry::FunctionObj*>(FunctionFromHandle(func, "FerryFunctionSetStackReserve"));
  FerryFunctionCallback callback = nullptr;
  void* resource = nullptr;
  if (!ferry::details::CallbackFunctionObj::Unwrap(obj, &callback, &resource)) {
    FERRY_THROW(TypeError) << "FerryFunctionSetStackReserve: the function was not made by "
                              "FerryFunctionCreate";
  }
  static_cast<ferry::details::CallbackFunctionObj*>(obj)->set_stack_reserve(bytes);
  FERRY_C_API_END();
}

int FerryDeleterSetStackReserve(void (*deleter)(void*), size_t bytes) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(deleter);
  if (!ferry::details::DeleterReserves::Set(deleter, bytes)) {
    FERRY_THROW(RuntimeError) << "FerryDeleterSetStackReserve: "
                              << ferry::details::DeleterReserves::kCapacity
                              << " deleters have a reserve already";
  }
  FERRY_C_API_END();
}

int FerryFunctionGetParamNames(FerryObjectHandle func, int32_t* out_count,
                               const char* const** out_names) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  FERRY_C_API_CHECK_NOT_NULL(out_count);
  FERRY_C_API_CHECK_NOT_NULL(out_names);
  const auto& names = FunctionFromHandle(func, "FerryFunctionGetParamNames")->param_names;
  thread_local std::vector<const char*> pointers;
  pointers.clear();
  for (const std::string& name : names) pointers.push_back(name.c_str());
  *out_count = static_cast<int32_t>(names.size());
  *out_names = pointers.data();
  FERRY_C_API_END();
}

int FerryFunctionGetSignature(FerryObjectHandle func, const char** out_name, int32_t* out_num_types,
                              const char* const** out_types) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  FERRY_C_API_CHECK_NOT_NULL(out_name);
  FERRY_C_API_CHECK_NOT_NULL(out_num_types);
  FERRY_C_API_CHECK_NOT_NULL(out_types);
  const ferry::FunctionObj* obj = FunctionFromHandle(func, "FerryFunctionGetSignature");
  thread_local std::vector<std::string> types;
  thread_local std::vector<const char*> pointers;
  types.clear();
  pointers.clear();
  if (obj->describe_types != nullptr) obj->describe_types(&types);
  for (const std::string& type : types) pointers.push_back(type.c_str());
  *out_name = obj->typed_name;
  *out_num_types = static_cast<int32_t>(types.size());
  *out_types = pointers.empty() ? nullptr : pointers.data();
  FERRY_C_API_END();
}

int FerryFunctionGetFlags(FerryObjectHandle func, int32_t* out_flags) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(func);
  FERRY_C_API_CHECK_NOT_NULL(out_flags);
  *out_flags =
      FunctionFromHandle(func, "FerryFunctionGetFlags")->flags.load(std::memory_order_relaxed);
  FERRY_C_API_END();
}

int FerryFunctionGetGlobal(const char* name, FerryObjectHandle* out_func) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(out_func);
  std::optional<ferry::Function> f = ferry::Function::GetGlobal(name);
  *out_func = f ? ferry::details::MoveToHandle(std::move(*f)) : nullptr;
  FERRY_C_API_END();
}

int FerryFunctionSetGlobal(const char* name, FerryObjectHandle func, int32_t override) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(func);
  ferry::ObjectRef ref(ferry::details::ObjectUnsafe::PtrFromRaw<ferry::Object>(FromHandle(func)));
  ferry::Function::SetGlobal(name, ferry::Downcast<ferry::Function>(std::move(ref)), override != 0);
  FERRY_C_API_END();
}

int FerryFunctionRemoveGlobal(const char* name, int32_t* out_removed) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(name);
  bool removed = ferry::Function::RemoveGlobal(name);
  if (out_removed != nullptr) *out_removed = removed ? 1 : 0;
  FERRY_C_API_END();
}

int FerryFunctionListGlobalNames(int32_t* out_count, const char* const** out_names) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_count);
  FERRY_C_API_CHECK_NOT_NULL(out_names);
  // Kept per thread until the next call, as the header promises.
  thread_local std::vector<ferry::String> names;
  thread_local std::vector<const char*> pointers;
  names = ferry::Function::ListGlobalNames();
  pointers.clear();
  for (const ferry::String& name : names) pointers.push_back(name.c_str());
  *out_count = static_cast<int32_t>(pointers.size());
  *out_names = pointers.data();
  FERRY_C_API_END();
}
