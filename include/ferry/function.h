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
#include <tuple>  // argument lists of typed callables
#include <type_traits>
#include <utility>
#include <vector>  // ListGlobalNames

#include "ferry/any.h"
#include "ferry/error.h"
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
  /// The parameter names of a typed function registered with them (empty otherwise); they let
  /// other languages pass arguments by keyword.
  std::vector<std::string> param_names;
  /// FerryFunctionFlag bits (kFerryFunctionQuick): hints for callers in other languages, not
  /// part of what the function computes. Atomic, as a registration may set them when the
  /// function is already in the registry; mutable, as they are hints.
  mutable std::atomic<int32_t> flags{0};

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
/// The TypeError of a typed call whose argument `index` does not convert.
[[noreturn]] FERRY_DLL void ThrowArgTypeError(const std::string& name, const std::string& signature,
                                              int32_t index, const AnyView& arg,
                                              const std::string& expected,
                                              const std::string& detail);
/// The ValueError of FromTyped given `given` parameter names for `arity` parameters.
[[noreturn]] FERRY_DLL void ThrowParamNamesError(const std::string& name, size_t arity,
                                                 size_t given);
/// The TypeError of a typed call with the wrong number of arguments.
[[noreturn]] FERRY_DLL void ThrowArgCountError(const std::string& name,
                                               const std::string& signature, int32_t expected,
                                               int32_t got);

/// A FunctionObj around a callable `F` with the packed signature.
template <typename F>
class PackedFunctionObj : public FunctionObj {
 public:
  explicit PackedFunctionObj(F callable) : callable_(std::move(callable)) {
    cpp_call = &CppCall;
    safe_call = &SafeCall;
  }

 private:
  static void CppCall(const FunctionObj* self, const AnyView* args, int32_t num_args, Any* result) {
    static_cast<const PackedFunctionObj*>(self)->callable_(args, num_args, result);
  }
  static int SafeCall(void* self, const FerryAny* args, int32_t num_args, FerryAny* result) {
    try {
      CppCall(static_cast<const FunctionObj*>(
                  ObjectUnsafe::FromHeader(static_cast<FerryObject*>(self))),
              reinterpret_cast<const AnyView*>(args), num_args, reinterpret_cast<Any*>(result));
      return 0;
    } catch (...) {
      FERRY_RETHROW_FORCED_UNWIND();
      SetRaisedFromCurrentException();
      return -1;
    }
  }

  mutable F callable_;
};

/// The signature of a callable: return type and decayed argument types.
template <typename F>
struct CallableTraits : CallableTraits<decltype(&F::operator())> {};
template <typename R, typename... Args>
struct CallableTraits<R (*)(Args...)> {
  using Return = R;
  using ArgsTuple = std::tuple<Args...>;
};
template <typename R, typename... Args>
struct CallableTraits<R(Args...)> : CallableTraits<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct CallableTraits<R (C::*)(Args...)> : CallableTraits<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct CallableTraits<R (C::*)(Args...) const> : CallableTraits<R (*)(Args...)> {};

/// "name(0: int, 1: ferry.String) -> float", built only when an error needs it.
template <typename R, typename... Args>
std::string Signature(const std::string& name) {
  std::string out = name + "(";
  int i = 0;
  ((out += (i ? ", " : "") + std::to_string(i) + ": " + TypeTraitsOf<Args>::TypeStr(), ++i), ...);
  out += ") -> ";
  if constexpr (std::is_void_v<R>) {
    out += "None";
  } else {
    out += TypeTraitsOf<R>::TypeStr();
  }
  return out;
}

/// The type argument `I` of a typed call converts to.
template <size_t I, typename... Args>
using PlainArg =
    std::remove_cv_t<std::remove_reference_t<std::tuple_element_t<I, std::tuple<Args...>>>>;

// The errors of a typed call are thrown out of line, so that the call itself inlines to its
// checks and needs no stack frame for building the message.
/// The TypeError (or OverflowError) of argument `I`, naming the call and the position.
template <size_t I, typename R, typename... Args>
[[noreturn, gnu::noinline, gnu::cold]] void ThrowUnpackError(const std::string& name,
                                                             const AnyView* args) {
  using Traits = TypeTraitsOf<PlainArg<I, Args...>>;
  ThrowArgTypeError(name, Signature<R, Args...>(name), static_cast<int32_t>(I), args[I],
                    Traits::TypeStr(), MismatchDetail<Traits>(args[I].raw()));
}
/// The TypeError of a typed call given `num_args` arguments.
template <typename R, typename... Args>
[[noreturn, gnu::noinline, gnu::cold]] void ThrowCountError(const std::string& name,
                                                            int32_t num_args) {
  ThrowArgCountError(name, Signature<R, Args...>(name), sizeof...(Args), num_args);
}

/// Converts argument `I` of a typed call.
template <size_t I, typename R, typename... Args>
decltype(auto) UnpackArg(const std::string& name, const AnyView* args) {
  using Plain = PlainArg<I, Args...>;
  static_assert(TypeTraitsOf<Plain>::kEnabled, "FromTyped: an argument type has no TypeTraits");
  if (auto value = TypeTraitsOf<Plain>::TryCast(args[I].raw())) return Plain(*std::move(value));
  ThrowUnpackError<I, R, Args...>(name, args);
}

/// `result` arrives holding None (see FCppCall), so the result is stored without releasing an
/// old value, and a void call leaves it as it is.
template <typename F, typename R, typename... Args, size_t... I>
void CallTyped(const F& f, const std::string& name, const AnyView* args, int32_t num_args,
               Any* result, std::index_sequence<I...>) {
  if (num_args != static_cast<int32_t>(sizeof...(Args))) {
    ThrowCountError<R, Args...>(name, num_args);
  }
  if constexpr (std::is_void_v<R>) {
    f(UnpackArg<I, R, Args...>(name, args)...);
  } else {
    // An Any is its cell (standard layout, first member), so this writes result's cell.
    *reinterpret_cast<FerryAny*>(result) =
        Any(f(UnpackArg<I, R, Args...>(name, args)...)).MoveToOwned();
  }
}

template <typename F, typename R, typename Tuple>
struct TypedCaller;
template <typename F, typename R, typename... Args>
struct TypedCaller<F, R, std::tuple<Args...>> {
  static void Call(const F& f, const std::string& name, const AnyView* args, int32_t num_args,
                   Any* result) {
    CallTyped<F, R, Args...>(f, name, args, num_args, result, std::index_sequence_for<Args...>());
  }
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
  template <typename F>
  static Function FromTyped(F f, std::string name = "<anonymous>",
                            std::vector<std::string> param_names = {}) {
    using Traits = details::CallableTraits<std::decay_t<F>>;
    using Caller =
        details::TypedCaller<std::decay_t<F>, typename Traits::Return, typename Traits::ArgsTuple>;
    constexpr size_t kArity = std::tuple_size_v<typename Traits::ArgsTuple>;
    if (!param_names.empty() && param_names.size() != kArity) {
      details::ThrowParamNamesError(name, kArity, param_names.size());
    }
    Function func = FromPacked([f = std::move(f), name = std::move(name)](
                                   const AnyView* args, int32_t num_args, Any* result) {
      Caller::Call(f, name, args, num_args, result);
    });
    static_cast<FunctionObj*>(func.get_mutable())->param_names = std::move(param_names);
    return func;
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
};

/// Free-function spellings of the registry queries, as in DESIGN.md.
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
  TypedFunction(F f, std::string name = "<anonymous>")  // NOLINT(google-explicit-constructor)
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
  GlobalRegistrar& set_body(Function f) {
    if (flags_ != 0 && f.defined()) f->flags.fetch_or(flags_, std::memory_order_relaxed);
    registered_ = f;
    RegisterGlobalFromStatic(name_, std::move(f), file_, line_);
    return *this;
  }
  /// Marks the function quick (kFerryFunctionQuick): it returns promptly and never waits for
  /// another thread, so Python keeps the GIL during its calls (about 20 ns less per call, and no
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
  /// The function the last set_body registered; held, since a registration that failed (or was
  /// undone by LoadLibrary) leaves no other reference to it.
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

/// Loads a shared library, running its registrations; it stays loaded for the process, so the
/// objects and functions it created stay valid. RuntimeError naming the path and the reason
/// when the file is missing, fails to load, or registers a name that is taken.
FERRY_DLL void LoadLibrary(const std::string& path);

}  // namespace ferry

#endif  // FERRY_FUNCTION_H_
