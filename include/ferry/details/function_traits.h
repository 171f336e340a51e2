/// \file ferry/details/function_traits.h
/// The typed-call machinery behind `Function::FromTyped`: the signature of a callable, argument
/// conversion with errors thrown out of line, and the call that converts the result. Internal:
/// include ferry/function.h instead.
///
///     using Traits = details::CallableTraits<decltype(f)>;  // Traits::Return, Traits::ArgsTuple
#ifndef FERRY_DETAILS_FUNCTION_TRAITS_H_
#define FERRY_DETAILS_FUNCTION_TRAITS_H_

#include <cstddef>  // size_t
#include <cstdint>  // int32_t
#include <string>   // names and signatures of errors
#include <tuple>    // argument lists of typed callables
#include <type_traits>
#include <utility>  // index_sequence
#include <vector>   // the types of a signature, for introspection

#include "ferry/any.h"
#include "ferry/base.h"

namespace ferry {
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
std::string Signature(const char* name) {
  std::string out = std::string(name) + "(";
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
[[noreturn, gnu::noinline, gnu::cold]] void ThrowUnpackError(const char* name,
                                                             const AnyView* args) {
  using Traits = TypeTraitsOf<PlainArg<I, Args...>>;
  ThrowArgTypeError(name, Signature<R, Args...>(name), static_cast<int32_t>(I), args[I],
                    Traits::TypeStr(), MismatchDetail<Traits>(args[I].raw()));
}
/// The TypeError of a typed call given `num_args` arguments.
template <typename R, typename... Args>
[[noreturn, gnu::noinline, gnu::cold]] void ThrowCountError(const char* name, int32_t num_args) {
  ThrowArgCountError(name, Signature<R, Args...>(name), sizeof...(Args), num_args);
}

/// Converts argument `I` of a typed call.
template <size_t I, typename R, typename... Args>
decltype(auto) UnpackArg(const char* name, const AnyView* args) {
  using Plain = PlainArg<I, Args...>;
  static_assert(TypeTraitsOf<Plain>::kEnabled, "FromTyped: an argument type has no TypeTraits");
  if (auto value = TypeTraitsOf<Plain>::TryCast(args[I].raw())) return Plain(*std::move(value));
  ThrowUnpackError<I, R, Args...>(name, args);
}

/// `result` arrives holding None (see FCppCall), so the result is stored without releasing an
/// old value, and a void call leaves it as it is.
template <typename F, typename R, typename... Args, size_t... I>
void CallTyped(const F& f, const char* name, const AnyView* args, int32_t num_args, Any* result,
               std::index_sequence<I...>) {
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
  static void Call(const F& f, const char* name, const AnyView* args, int32_t num_args,
                   Any* result) {
    CallTyped<F, R, Args...>(f, name, args, num_args, result, std::index_sequence_for<Args...>());
  }
  /// The parameter types, then the result type ("None" for void), as Signature spells them.
  static void DescribeTypes(std::vector<std::string>* types) {
    (types->push_back(TypeTraitsOf<Args>::TypeStr()), ...);
    if constexpr (std::is_void_v<R>) {
      types->push_back("None");
    } else {
      types->push_back(TypeTraitsOf<R>::TypeStr());
    }
  }
};
}  // namespace details
}  // namespace ferry

#endif  // FERRY_DETAILS_FUNCTION_TRAITS_H_
