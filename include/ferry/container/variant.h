/// \file ferry/container/variant.h
/// `Variant<Ts...>`: a value of one of the types `Ts`, held as an `Any`.
///
///     Variant<int64_t, String> v = String("x");
///     if (auto s = v.as<String>()) use(*s);
///     int64_t n = Variant<int64_t, String>(3).get<int64_t>();   // TypeError if not an int
///
/// A typed Function argument of type Variant accepts a value that converts to any of `Ts`,
/// trying them in order.
#ifndef FERRY_CONTAINER_VARIANT_H_
#define FERRY_CONTAINER_VARIANT_H_

#include <optional>     // as<T>()
#include <string>       // TypeStr
#include <type_traits>  // the constructor's overload set
#include <utility>      // std::move

#include "ferry/any.h"

namespace ferry {

namespace details {
/// The first of `Ts` that `U` converts to (void if none).
template <typename U, typename... Ts>
struct FirstConvertible {
  using type = void;
};
template <typename U, typename T, typename... Ts>
struct FirstConvertible<U, T, Ts...> {
  using type =
      std::conditional_t<std::is_convertible_v<U, T>, T, typename FirstConvertible<U, Ts...>::type>;
};
}  // namespace details

template <typename... Ts>
class Variant {
  static_assert(sizeof...(Ts) > 0, "Variant<>: give at least one type");
  static_assert((TypeTraitsOf<Ts>::kEnabled && ...), "Variant<Ts...>: a type has no TypeTraits");

 public:
  /// From a value of (or convertible to) one of `Ts`; the first that fits is stored.
  template <typename U, typename Target = typename details::FirstConvertible<U, Ts...>::type,
            typename = std::enable_if_t<!std::is_void_v<Target> &&
                                        !std::is_same_v<std::decay_t<U>, Variant>>>
  // NOLINTNEXTLINE(google-explicit-constructor)
  Variant(U&& value) : value_(Target(std::forward<U>(value))) {}

  /// Whether the value converts to `T`.
  template <typename T>
  bool is() const {
    return details::CanCast<TypeTraitsOf<T>>(value_.raw());
  }
  /// The value as `T` if it converts, else std::nullopt.
  template <typename T>
  std::optional<T> as() const {
    return TypeTraitsOf<T>::TryCast(value_.raw());
  }
  /// The value as `T`; a TypeError when it does not convert.
  template <typename T>
  T get() const {
    return value_.cast<T>();
  }
  /// The position in `Ts` of the first type the value converts to.
  size_t index() const {
    size_t i = 0;
    bool found = false;
    ((found || (found = details::CanCast<TypeTraitsOf<Ts>>(value_.raw())) || (++i, false)), ...);
    return i;
  }
  const Any& as_any() const { return value_; }

 private:
  struct FromAny {};
  Variant(FromAny, Any value) : value_(std::move(value)) {}

  Any value_;
  friend struct TypeTraits<Variant>;
};

template <typename... Ts>
struct TypeTraits<Variant<Ts...>> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Variant<Ts...>& src, FerryAny* out) {
    *out = *src.as_any().raw();
  }
  static void MoveToAny(Variant<Ts...> src, FerryAny* out) {
    *out = Any(std::move(src.value_)).MoveToOwned();
  }
  static bool Check(const FerryAny* v) { return (details::CanCast<TypeTraitsOf<Ts>>(v) || ...); }
  static std::optional<Variant<Ts...>> TryCast(const FerryAny* v) {
    if (!Check(v)) return std::nullopt;
    // Store each alternative in its own form, so a String given as an inline string stays one.
    std::optional<Variant<Ts...>> out;
    ((!out && details::CanCast<TypeTraitsOf<Ts>>(v)
          ? (out = Variant<Ts...>(typename Variant<Ts...>::FromAny{},
                                  Any(*TypeTraitsOf<Ts>::TryCast(v))),
             true)
          : false),
     ...);
    return out;
  }
  static std::string TypeStr() {
    std::string out = "Variant[";
    int i = 0;
    ((out += (i++ ? ", " : "") + TypeTraitsOf<Ts>::TypeStr()), ...);
    return out + "]";
  }
};

}  // namespace ferry

#endif  // FERRY_CONTAINER_VARIANT_H_
