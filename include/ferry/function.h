/// \file ferry/function.h
/// `Function`: the type-erased packed function. Any callable with the packed signature
/// `(const AnyView* args, int32_t num_args, Any* result)` or with ordinary typed parameters
/// becomes an object that can be stored, passed as a value, registered under a global name and
/// called from C++, from C (FerryFunctionCall) and from other languages.
///
///     Function add = Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "add");
///     int64_t three = add(1, 2).cast<int64_t>();
#ifndef FERRY_FUNCTION_H_
#define FERRY_FUNCTION_H_

#include <atomic>    // FunctionObj::flags
#include <optional>  // GetGlobal
#include <string>
#include <string_view>
#include <tuple>  // tuple_size_v of argument lists
#include <type_traits>
#include <utility>
#include <vector>  // ListGlobalNames

#include "ferry/any.h"
#include "ferry/details/function_traits.h"
#include "ferry/error.h"
#include "ferry/library.h"
#include "ferry/object.h"
#include "ferry/string.h"

namespace ferry {

/// The data of a Function: two entry points to the same callable. `safe_call` is the C ABI one
/// (returns 0/-1 and never throws); `cpp_call` is the direct C++ one (throws ferry::Error).
/// For both, the result cell arrives holding None.
class FunctionObj : public Object {
 public:
  using FCppCall = void (*)(const FunctionObj* self, const AnyView* args, int32_t num_args,
                            Any* result);
  FerryFunctionSafeCall safe_call = nullptr;
  FCppCall cpp_call = nullptr;
  /// The parameter names of a typed function made with them (empty otherwise); they let other
  /// languages pass arguments by keyword. A view of names the function object keeps, so that a
  /// function without names stays trivially destructible (and is freed on the fast path).
  class ParamNames {
   public:
    ParamNames() = default;
    ParamNames(const std::string* data, size_t size) : data_(data), size_(size) {}
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const std::string& operator[](size_t k) const { return data_[k]; }
    const std::string* begin() const { return data_; }
    const std::string* end() const { return data_ + size_; }

   private:
    const std::string* data_ = nullptr;
    size_t size_ = 0;
  };
  ParamNames param_names;
  /// FerryFunctionFlag bits (kFerryFunctionQuick): hints for callers in other languages, not
  /// part of what the function computes. Atomic, as a registration may set them when the
  /// function is already in the registry; mutable, as they are hints.
  mutable std::atomic<int32_t> flags{0};
  /// What introspection shows of a typed function (a Python repr, `inspect.signature`): the
  /// name it was made with (null if none) and a function listing its parameter types, then its
  /// result type, in the words of conversion errors ("int", "ferry.String"; null for a packed
  /// function, whose types are not known). Kept out of the call path.
  const char* typed_name = nullptr;
  void (*describe_types)(std::vector<std::string>* types) = nullptr;

  /// Calls; `*result` may hold a value, which the result replaces.
  void CallPacked(const AnyView* args, int32_t num_args, Any* result) const {
    if (FERRY_LIKELY(result->is_none())) return cpp_call(this, args, num_args, result);
    Any out;  // the old value may be one of the arguments: replace it only afterwards
    cpp_call(this, args, num_args, &out);
    *result = std::move(out);
  }

  static constexpr const char* _type_key = "ferry.Function";
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(FunctionObj, Object, kFerryFunction);
};

namespace details {
/// The C ABI entry (FunctionObj::safe_call) of a function object `Obj`: its CppCall, with the
/// exception turned into the thread's raised error.
template <typename Obj>
int PackedSafeCall(void* self, const FerryAny* args, int32_t num_args, FerryAny* result) {
  try {
    Obj::CppCall(
        static_cast<const FunctionObj*>(ObjectUnsafe::FromHeader(static_cast<FerryObject*>(self))),
        reinterpret_cast<const AnyView*>(args), num_args, reinterpret_cast<Any*>(result));
    return 0;
  } catch (const Error& e) {
    // A Ferry error, the common case, is caught by type: the catch-all below rethrows to sort
    // what it caught (a second and third unwinding of the stack).
    FerryErrorSetRaised(ObjectUnsafe::GetHeader(e.get()));
    // The rule "Results" of c_api.h: None after a failure, whatever the body wrote first.
    *reinterpret_cast<Any*>(result) = Any();
    return -1;
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    SetRaisedFromCurrentException();
    *reinterpret_cast<Any*>(result) = Any();
    return -1;
  }
}

/// A FunctionObj around a callable `F` with the packed signature.
template <typename F>
class PackedFunctionObj : public FunctionObj {
 public:
  explicit PackedFunctionObj(F callable) : callable_(std::move(callable)) {
    cpp_call = &CppCall;
    safe_call = &PackedSafeCall<PackedFunctionObj>;
  }
  static void CppCall(const FunctionObj* self, const AnyView* args, int32_t num_args, Any* result) {
    static_cast<const PackedFunctionObj*>(self)->callable_(args, num_args, result);
  }

 private:
  mutable F callable_;
};

/// A FunctionObj around a callable `F` with typed parameters, made by FromTyped without a name:
/// only `F` is stored, so the object is trivially destructible when `F` is.
template <typename F, typename Caller>
class TypedFunctionObj : public FunctionObj {
 public:
  explicit TypedFunctionObj(F callable) : callable_(std::move(callable)) {
    cpp_call = &CppCall;
    safe_call = &PackedSafeCall<TypedFunctionObj>;
    describe_types = &Caller::DescribeTypes;
  }
  static void CppCall(const FunctionObj* self, const AnyView* args, int32_t num_args, Any* result) {
    Caller::Call(static_cast<const TypedFunctionObj*>(self)->callable_, "<anonymous>", args,
                 num_args, result);
  }

 private:
  F callable_;
};

/// As TypedFunctionObj, with the name its errors show and, if given, the parameter names.
template <typename F, typename Caller>
class NamedTypedFunctionObj : public FunctionObj {
 public:
  NamedTypedFunctionObj(F callable, std::string name, std::vector<std::string> names)
      : callable_(std::move(callable)), name_(std::move(name)), names_(std::move(names)) {
    cpp_call = &CppCall;
    safe_call = &PackedSafeCall<NamedTypedFunctionObj>;
    param_names = ParamNames(names_.data(), names_.size());
    typed_name = name_.c_str();
    describe_types = &Caller::DescribeTypes;
  }
  static void CppCall(const FunctionObj* self, const AnyView* args, int32_t num_args, Any* result) {
    const auto* obj = static_cast<const NamedTypedFunctionObj*>(self);
    Caller::Call(obj->callable_, obj->name_.c_str(), args, num_args, result);
  }

 private:
  F callable_;
  std::string name_;
  std::vector<std::string> names_;
};

/// Registers `f` under `name` for FERRY_REGISTER_GLOBAL: inside LoadLibrary a conflict is kept
/// and reported by LoadLibrary, elsewhere it throws.
FERRY_DLL void RegisterGlobalFromStatic(const char* name, ObjectRef f, const char* file, int line);
/// Reports the exception being handled (call only in a catch block) as the failure of the
/// FERRY_REGISTER_GLOBAL `name`: kept for LoadLibrary inside one, rethrown as an Error naming
/// the registration elsewhere; abi::__forced_unwind is rethrown as is.
FERRY_DLL void RegisterGlobalFailed(const char* name, const char* file, int line);
}  // namespace details

namespace details {
/// The error of calling a null Function.
[[noreturn]] FERRY_DLL void ThrowNullFunctionCall();
}  // namespace details

class Function : public ObjectRef {
 public:
  /// Wraps a callable `void(const AnyView* args, int32_t num_args, Any* result)`.
  template <typename F>
  static Function FromPacked(F packed) {
    return Function(make_object<details::PackedFunctionObj<F>>(std::move(packed)));
  }
  /// Wraps a callable with typed parameters; `name` appears in conversion errors.
  /// `param_names`, when given, names every parameter (a ValueError if the count is off), so
  /// that Python can pass arguments by keyword:
  ///
  ///     Function::FromTyped([](int64_t a, int64_t b) { return a - b; }, "sub", {"a", "b"});
  ///
  /// Without a name the function object holds only `f` (errors call it "<anonymous>"): one
  /// allocation, and no destructor to run when `f` has none.
  template <typename F>
  static Function FromTyped(F f) {
    return Function(
        make_object<details::TypedFunctionObj<std::decay_t<F>, TypedCallerOf<F>>>(std::move(f)));
  }
  template <typename F>
  static Function FromTyped(F f, std::string name, std::vector<std::string> param_names = {}) {
    constexpr size_t kArity =
        std::tuple_size_v<typename details::CallableTraits<std::decay_t<F>>::ArgsTuple>;
    if (!param_names.empty() && param_names.size() != kArity) {
      details::ThrowParamNamesError(name, kArity, param_names.size());
    }
    return Function(make_object<details::NamedTypedFunctionObj<std::decay_t<F>, TypedCallerOf<F>>>(
        std::move(f), std::move(name), std::move(param_names)));
  }

  /// Calls with packed arguments; `*result` may hold a value, which the result replaces.
  /// Calling a null Function (default-constructed, or a parameter given None) is a ValueError.
  void CallPacked(const AnyView* args, int32_t num_args, Any* result) const {
    if (FERRY_UNLIKELY(get() == nullptr)) details::ThrowNullFunctionCall();
    get()->CallPacked(args, num_args, result);
  }
  /// Calls with any arguments that convert to AnyView: `f(1, "a", obj)`.
  template <typename... Args>
  Any operator()(const Args&... args) const {
    const AnyView packed[sizeof...(Args) > 0 ? sizeof...(Args) : 1] = {AnyView(args)...};
    Any result;
    CallPacked(packed, static_cast<int32_t>(sizeof...(Args)), &result);
    return result;
  }

  /// The global function `name`, or nullopt.
  FERRY_DLL static std::optional<Function> GetGlobal(std::string_view name);
  /// The global function `name`; a KeyError naming it when absent.
  FERRY_DLL static Function GetGlobalRequired(std::string_view name);
  /// Registers `f` as `name`; a RuntimeError naming it if taken and `override` is false.
  FERRY_DLL static void SetGlobal(std::string_view name, Function f, bool override = false);
  /// Removes `name`; false if it was not registered.
  FERRY_DLL static bool RemoveGlobal(std::string_view name);
  /// Every registered name, sorted.
  FERRY_DLL static std::vector<String> ListGlobalNames();

  FERRY_DEFINE_OBJECT_REF_METHODS(Function, ObjectRef, FunctionObj);

 private:
  template <typename F>
  using TypedCallerOf =
      details::TypedCaller<std::decay_t<F>,
                           typename details::CallableTraits<std::decay_t<F>>::Return,
                           typename details::CallableTraits<std::decay_t<F>>::ArgsTuple>;
};

/// Free-function spellings of the registry queries.
inline std::vector<String> ListGlobalNames() { return Function::ListGlobalNames(); }
inline bool RemoveGlobal(std::string_view name) { return Function::RemoveGlobal(name); }

/// A Function with a C++ signature: arguments convert in, the result converts out.
///
///     TypedFunction<int64_t(int64_t, int64_t)> add = *Function::GetGlobal("add");
template <typename FType>
class TypedFunction;

template <typename R, typename... Args>
class TypedFunction<R(Args...)> {
 public:
  TypedFunction() = default;
  // NOLINTNEXTLINE(google-explicit-constructor)
  TypedFunction(Function packed) : packed_(std::move(packed)) {}
  template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<R, F, Args...> &&
                                                    !std::is_same_v<std::decay_t<F>, Function>>>
  TypedFunction(F f)  // NOLINT(google-explicit-constructor)
      : packed_(Function::FromTyped(
            [f = std::move(f)](Args... args) -> R { return f(std::forward<Args>(args)...); })) {}
  template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<R, F, Args...> &&
                                                    !std::is_same_v<std::decay_t<F>, Function>>>
  TypedFunction(F f, std::string name)
      : packed_(Function::FromTyped(
            [f = std::move(f)](Args... args) -> R { return f(std::forward<Args>(args)...); },
            std::move(name))) {}

  R operator()(Args... args) const {
    if constexpr (std::is_void_v<R>) {
      packed_(args...);
    } else {
      return packed_(args...).template cast<R>();
    }
  }
  const Function& packed() const { return packed_; }
  operator Function() const { return packed_; }  // NOLINT(google-explicit-constructor)
  bool defined() const { return packed_.defined(); }

 private:
  Function packed_;
};

template <typename R, typename... Args>
struct TypeTraits<TypedFunction<R(Args...)>> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const TypedFunction<R(Args...)>& src, FerryAny* out) {
    TypeTraits<Function>::CopyToAnyView(src.packed(), out);
  }
  static void MoveToAny(TypedFunction<R(Args...)> src, FerryAny* out) {
    TypeTraits<Function>::MoveToAny(src.packed(), out);
  }
  static std::optional<TypedFunction<R(Args...)>> TryCast(const FerryAny* v) {
    if (auto f = TypeTraits<Function>::TryCast(v)) return TypedFunction<R(Args...)>(*f);
    return std::nullopt;
  }
  static std::string TypeStr() { return "ferry.Function"; }
};

namespace details {
/// The object FERRY_REGISTER_GLOBAL creates; each set_body* call registers the body.
class GlobalRegistrar {
 public:
  GlobalRegistrar(const char* name, const char* file, int line)
      : name_(name), file_(file), line_(line) {}
  /// The static the macro defines is copied from the registering temporary without its
  /// function: a library's own statics holding its Functions would keep it from ever being
  /// unloaded (UnloadLibrary).
  GlobalRegistrar(const GlobalRegistrar& other)
      : name_(other.name_), file_(other.file_), line_(other.line_), flags_(other.flags_) {}
  GlobalRegistrar& operator=(const GlobalRegistrar&) = delete;
  GlobalRegistrar& set_body(Function f) {
    if (flags_ != 0 && f.defined()) f->flags.fetch_or(flags_, std::memory_order_relaxed);
    registered_ = f;
    RegisterGlobalFromStatic(name_, std::move(f), file_, line_);
    return *this;
  }
  /// Marks the function quick (kFerryFunctionQuick): it returns promptly and never waits for
  /// another thread, so Python keeps the GIL during its calls (no GIL release and reacquire, and no
  /// other Python thread runs meanwhile). Before or after the body.
  GlobalRegistrar& quick() {
    flags_ |= kFerryFunctionQuick;
    if (registered_.defined()) registered_->flags.fetch_or(flags_, std::memory_order_relaxed);
    return *this;
  }
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Function>>>
  GlobalRegistrar& set_body(F packed) {
    try {
      return set_body(Function::FromPacked(std::move(packed)));
    } catch (...) {
      FERRY_RETHROW_FORCED_UNWIND();
      RegisterGlobalFailed(name_, file_, line_);
      return *this;
    }
  }
  // Making the body may throw (a bad parameter name list, no memory): never out of the static
  // initializer that runs a registration, which would terminate the process.
  template <typename F>
  GlobalRegistrar& set_body_typed(F f) {
    try {
      return set_body(Function::FromTyped(std::move(f), name_));
    } catch (...) {
      FERRY_RETHROW_FORCED_UNWIND();
      RegisterGlobalFailed(name_, file_, line_);
      return *this;
    }
  }
  /// Also records the parameter names, so Python callers may pass arguments by keyword.
  template <typename F>
  GlobalRegistrar& set_body_typed(F f, std::vector<std::string> param_names) {
    try {
      return set_body(Function::FromTyped(std::move(f), name_, std::move(param_names)));
    } catch (...) {
      FERRY_RETHROW_FORCED_UNWIND();
      RegisterGlobalFailed(name_, file_, line_);
      return *this;
    }
  }

 private:
  const char* name_;
  const char* file_;
  int line_;
  int32_t flags_ = 0;
  /// The function the last set_body registered, while the registering expression runs (for
  /// quick() after set_body); not copied into the static.
  Function registered_;
};
}  // namespace details

/// Registers a global function when the enclosing library loads.
///
///     FERRY_REGISTER_GLOBAL("math.add").set_body_typed([](int64_t a, int64_t b) { return a + b;
///     });
#define FERRY_REGISTER_GLOBAL(Name)                                           \
  [[maybe_unused]] static ::ferry::details::GlobalRegistrar FERRY_STR_CONCAT( \
      ferry_global_registrar_, __COUNTER__) =                                 \
      ::ferry::details::GlobalRegistrar(Name, __FILE__, __LINE__)

}  // namespace ferry

// Every library that registers anything includes this file: it carries the ABI record.
#include "ferry/details/abi_record.h"

#endif  // FERRY_FUNCTION_H_
