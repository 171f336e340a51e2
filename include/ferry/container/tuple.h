/// \file ferry/container/tuple.h
/// `Tuple<Ts...>`: a fixed number of values of fixed types, read with a typed `get<I>()`.
///
///     Tuple<int64_t, String> t(1, "one");
///     int64_t n = t.get<0>();          // 1
///     auto [num, name] = t;            // structured bindings
///     Tuple<int64_t, String> back = Any(t).cast<Tuple<int64_t, String>>();
///
/// A Tuple is an immutable `Array` underneath (type key "ferry.Array"): structural equality and
/// hashing, JSON, pickles, Repr, StructuralTransform and every other language see an array of
/// its values. Converting a value to a Tuple checks the length and every item's type: a
/// TypeError says which item does not fit ("item 1: expected ferry.String but got int"). A py_class
/// field annotated `tuple[int, str]` is stored as one.
#ifndef FERRY_CONTAINER_TUPLE_H_
#define FERRY_CONTAINER_TUPLE_H_

#include <cstddef>      // size_t
#include <optional>     // TryCast
#include <string>       // TypeStr
#include <tuple>        // tuple_element, tuple_size
#include <type_traits>  // enable_if
#include <utility>      // index_sequence

#include "ferry/any.h"
#include "ferry/container/array.h"

namespace ferry {

template <typename... Ts>
class Tuple : public ObjectRef {
  static_assert((TypeTraitsOf<Ts>::kEnabled && ...),
                "Tuple<Ts...>: an item type has no TypeTraits");
  static_assert((!std::is_same_v<Ts, AnyView> && ...), "Tuple<AnyView> would dangle; use Any");

 public:
  /// The number of items.
  static constexpr size_t kSize = sizeof...(Ts);
  /// The type of item `I`.
  template <size_t I>
  using ItemType = std::tuple_element_t<I, std::tuple<Ts...>>;

  /// A tuple of default-constructed items (for fields; a Tuple is never null).
  Tuple() : ObjectRef(Array<Any>{Any(Ts())...}) {}
  /// A tuple of `items`, in order.
  template <typename... Us,
            typename = std::enable_if_t<sizeof...(Us) == sizeof...(Ts) && (sizeof...(Ts) > 0) &&
                                        (std::is_convertible_v<Us, Ts> && ...)>>
  Tuple(Us&&... items)  // NOLINT(google-explicit-constructor): Tuple<int, String> t = {1, "a"}
      : ObjectRef(Array<Any>{Any(Ts(std::forward<Us>(items)))...}) {}

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Tuple, ObjectRef, ArrayObj);

  /// Item `I`, as its type.
  template <size_t I>
  ItemType<I> get() const {
    static_assert(I < kSize, "Tuple::get<I>: I is out of range");
    return get()->at(static_cast<int64_t>(I)).template cast<ItemType<I>>();
  }
  static constexpr size_t size() { return kSize; }
  /// The items as an untyped array (the same object).
  Array<Any> ToArray() const { return AnyView(*this).cast<Array<Any>>(); }
};

/// Item `I` of `t`, for structured bindings: `auto [a, b] = t;`.
template <size_t I, typename... Ts>
auto get(const Tuple<Ts...>& t) {
  return t.template get<I>();
}

namespace details {
template <typename... Ts>
struct HasCustomRefTraits<Tuple<Ts...>> : std::true_type {};
}  // namespace details

template <typename... Ts>
struct TypeTraits<Tuple<Ts...>> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Tuple<Ts...>& src, FerryAny* out) {
    TypeTraits<ObjectRef>::CopyToAnyView(src, out);
  }
  static void MoveToAny(Tuple<Ts...> src, FerryAny* out) {
    TypeTraits<ObjectRef>::MoveToAny(std::move(src), out);
  }
  static bool Check(const FerryAny* v) { return IsArray(v) && FirstBad(v) == -1; }
  static std::optional<Tuple<Ts...>> TryCast(const FerryAny* v) {
    if (!Check(v)) return std::nullopt;
    return Tuple<Ts...>(
        details::ObjectUnsafe::PtrFromRaw<Object>(details::ObjectUnsafe::FromHeader(v->v_obj)));
  }
  static std::string MismatchDetail(const FerryAny* v) {
    if (!IsArray(v)) return std::string();
    const ArrayObj* array = Cells(v);
    if (array->size() != static_cast<int64_t>(sizeof...(Ts))) {
      return "expected " + std::to_string(sizeof...(Ts)) + " items but got " +
             std::to_string(array->size());
    }
    const int64_t bad = FirstBad(v);
    if (bad < 0) return std::string();
    return ItemMismatch(array->begin()[bad].raw(), bad, std::index_sequence_for<Ts...>());
  }
  static std::string TypeStr() {
    std::string out = "Tuple[";
    size_t i = 0;
    ((out += (i++ ? ", " : "") + TypeTraitsOf<Ts>::TypeStr()), ...);
    return out + "]";
  }

 private:
  static bool IsArray(const FerryAny* v) { return v->type_index == kFerryArray; }
  static const ArrayObj* Cells(const FerryAny* v) {
    return static_cast<const ArrayObj*>(details::ObjectUnsafe::FromHeader(v->v_obj));
  }
  /// The index of the first item that does not convert (-2 for a wrong length), or -1.
  static int64_t FirstBad(const FerryAny* v) {
    const ArrayObj* array = Cells(v);
    if (array->size() != static_cast<int64_t>(sizeof...(Ts))) return -2;
    return FirstBadItem(array, std::index_sequence_for<Ts...>());
  }
  template <size_t... I>
  static int64_t FirstBadItem(const ArrayObj* array, std::index_sequence<I...>) {
    int64_t bad = -1;
    (void)((details::CanCast<TypeTraitsOf<Ts>>(array->begin()[I].raw())
                ? true
                : (bad = static_cast<int64_t>(I), false)) &&
           ...);
    return bad;
  }
  template <size_t... I>
  static std::string ItemMismatch(const FerryAny* cell, int64_t index, std::index_sequence<I...>) {
    std::string out;
    (void)((static_cast<int64_t>(I) == index
                ? (out = "item " + std::to_string(I) + ": " +
                         details::DescribeCastFailure(
                             cell, TypeTraitsOf<Ts>::TypeStr(),
                             details::MismatchDetail<TypeTraitsOf<Ts>>(cell)),
                   false)
                : true) &&
           ...);
    return out;
  }
};

}  // namespace ferry

namespace std {
template <typename... Ts>
struct tuple_size<::ferry::Tuple<Ts...>> : std::integral_constant<size_t, sizeof...(Ts)> {};
template <size_t I, typename... Ts>
struct tuple_element<I, ::ferry::Tuple<Ts...>> {
  using type = std::tuple_element_t<I, std::tuple<Ts...>>;
};
}  // namespace std

#endif  // FERRY_CONTAINER_TUPLE_H_
