/// \file ferry/container/optional.h
/// `Optional<T>`: a value or nothing, which travels as `T` or None. An Optional of an object
/// reference is one pointer (null means nothing), of a String one cell (None means nothing);
/// of a plain value it wraps std::optional.
///
///     Optional<String> name = map.Get("name");
///     if (name) use(*name);
///     int64_t n = Optional<int64_t>().value_or(7);
#ifndef FERRY_CONTAINER_OPTIONAL_H_
#define FERRY_CONTAINER_OPTIONAL_H_

#include <optional>     // storage of plain values, std::nullopt
#include <string>       // TypeStr
#include <type_traits>  // enable_if
#include <utility>      // std::move

#include "ferry/any.h"

namespace ferry {

namespace details {
/// The ValueError of reading an empty Optional.
[[noreturn]] FERRY_DLL void ThrowEmptyOptional(const std::string& type);
}  // namespace details

/// Optional of a plain value (int64_t, double, bool, std::string, DataType, ...).
template <typename T, typename = void>
class Optional {
 public:
  using value_type = T;
  Optional() = default;
  Optional(std::nullopt_t) {}                      // NOLINT(google-explicit-constructor)
  Optional(std::nullptr_t) {}                      // NOLINT(google-explicit-constructor)
  Optional(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  /// The value; a ValueError when there is none.
  T value() const {
    if (!value_) details::ThrowEmptyOptional(TypeTraitsOf<T>::TypeStr());
    return *value_;
  }
  T operator*() const { return value(); }
  T value_or(T other) const { return value_ ? *value_ : std::move(other); }
  void reset() { value_.reset(); }

  bool operator==(std::nullopt_t) const { return !has_value(); }
  bool operator!=(std::nullopt_t) const { return has_value(); }
  bool operator==(const Optional& other) const { return value_ == other.value_; }
  bool operator!=(const Optional& other) const { return value_ != other.value_; }

 private:
  std::optional<T> value_;
};

/// Optional of an object reference: pointer-sized, null when empty. Works for references that
/// are never null themselves (String, Array<T>, ...).
template <typename T>
class Optional<T, std::enable_if_t<std::is_base_of_v<ObjectRef, T>>> {
 public:
  using value_type = T;
  Optional() = default;
  Optional(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  Optional(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  Optional(T value)            // NOLINT(google-explicit-constructor)
      : data_(details::ObjectUnsafe::MovePtr(std::move(value))) {}

  bool has_value() const { return data_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  /// The reference; a ValueError when there is none.
  T value() const {
    if (data_ == nullptr) details::ThrowEmptyOptional(T::ContainerType::_type_key);
    return T(data_);
  }
  T operator*() const { return value(); }
  /// The object, or nullptr when there is none.
  const typename T::ContainerType* get() const {
    return static_cast<const typename T::ContainerType*>(data_.get());
  }
  const typename T::ContainerType* operator->() const {
    if (data_ == nullptr) details::ThrowEmptyOptional(T::ContainerType::_type_key);
    return get();
  }
  T value_or(T other) const { return data_ != nullptr ? T(data_) : std::move(other); }
  void reset() { data_.reset(); }
  bool same_as(const Optional& other) const { return data_ == other.data_; }

  bool operator==(std::nullopt_t) const { return !has_value(); }
  bool operator!=(std::nullopt_t) const { return has_value(); }
  bool operator==(std::nullptr_t) const { return !has_value(); }
  bool operator!=(std::nullptr_t) const { return has_value(); }

 private:
  ObjectPtr<Object> data_;
};

/// Optional of a String: one cell, as the String itself, whose None form is the empty Optional.
template <>
class Optional<String> {
 public:
  using value_type = String;
  Optional() = default;
  Optional(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  Optional(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  Optional(String value)       // NOLINT(google-explicit-constructor)
      : data_(Any(std::move(value))) {}

  bool has_value() const { return !data_.is_none(); }
  explicit operator bool() const { return has_value(); }
  /// The string; a ValueError when there is none.
  String value() const {
    if (!has_value()) details::ThrowEmptyOptional(StringObj::_type_key);
    return String::FromCell(*data_.raw());
  }
  String operator*() const { return value(); }
  String value_or(String other) const {
    return has_value() ? String::FromCell(*data_.raw()) : std::move(other);
  }
  void reset() { data_.reset(); }

  bool operator==(std::nullopt_t) const { return !has_value(); }
  bool operator!=(std::nullopt_t) const { return has_value(); }
  bool operator==(std::nullptr_t) const { return !has_value(); }
  bool operator!=(std::nullptr_t) const { return has_value(); }
  bool operator==(const Optional& other) const {
    return has_value() == other.has_value() && (!has_value() || value() == other.value());
  }
  bool operator!=(const Optional& other) const { return !(*this == other); }

 private:
  Any data_;  // None, or the String's own cell
};

/// None is an empty Optional; anything else must convert to `T`.
template <typename T>
struct TypeTraits<Optional<T>> {
  using ValueTraits = TypeTraitsOf<T>;
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Optional<T>& src, FerryAny* out) {
    if constexpr (std::is_base_of_v<ObjectRef, T>) {
      // Borrow the object the Optional holds; a temporary T would be gone after the call.
      if (!src.has_value()) {
        *out = details::NoneCell();
      } else {
        out->type_index = src.get()->type_index();
        out->small_len = 0;
        out->v_obj = details::ObjectUnsafe::GetHeader(src.get());
      }
    } else {
      static_assert(!std::is_same_v<T, std::string>,
                    "Optional<std::string> cannot be borrowed by an AnyView; use Any or String");
      if (src.has_value()) {
        ValueTraits::CopyToAnyView(src.value(), out);
      } else {
        *out = details::NoneCell();
      }
    }
  }
  static void MoveToAny(Optional<T> src, FerryAny* out) {
    if (src.has_value()) {
      ValueTraits::MoveToAny(src.value(), out);
    } else {
      *out = details::NoneCell();
    }
  }
  static bool Check(const FerryAny* v) {
    return v->type_index == kFerryNone || details::CanCast<ValueTraits>(v);
  }
  static std::optional<Optional<T>> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryNone) return Optional<T>();
    if (auto value = ValueTraits::TryCast(v)) return Optional<T>(*std::move(value));
    return std::nullopt;
  }
  static std::string MismatchDetail(const FerryAny* v) {
    return details::MismatchDetail<ValueTraits>(v);
  }
  static std::string TypeStr() { return "Optional[" + ValueTraits::TypeStr() + "]"; }
};

}  // namespace ferry

#endif  // FERRY_CONTAINER_OPTIONAL_H_
