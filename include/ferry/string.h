/// \file ferry/string.h
/// `String`: an immutable, never-null string object. The bytes live in the same allocation as
/// the object header, so every string costs one allocation; copies share it.
///
///     String s = "hello";
///     std::string_view v = s;
#ifndef FERRY_STRING_H_
#define FERRY_STRING_H_

#include <cstring>      // strlen
#include <ostream>      // operator<<
#include <string>       // std::string conversions
#include <string_view>  // the view every String hands out
#include <type_traits>  // enable_if for the comparisons

#include "ferry/object.h"

namespace ferry {

/// The data of a String: `size` bytes at `data`, followed by a NUL.
class StringObj : public Object {
 public:
  const char* data;
  uint64_t size;

  static constexpr const char* _type_key = "ferry.String";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(StringObj, Object, kFerryString);
};

namespace details {
/// Makes a StringObj holding a copy of `size` bytes at `data`.
FERRY_DLL ObjectPtr<Object> MakeString(const char* data, size_t size);
/// Makes a StringObj holding `a` followed by `b`.
FERRY_DLL ObjectPtr<Object> ConcatString(std::string_view a, std::string_view b);
/// The shared empty string.
FERRY_DLL const ObjectPtr<Object>& EmptyString();
}  // namespace details

class String : public ObjectRef {
 public:
  String() : ObjectRef(details::EmptyString()) {}
  String(const char* str)  // NOLINT(google-explicit-constructor)
      : ObjectRef(FromCStr(str)) {}
  String(const char* str, size_t size) : ObjectRef(details::MakeString(str, size)) {}
  String(std::string_view str)  // NOLINT(google-explicit-constructor)
      : ObjectRef(details::MakeString(str.data(), str.size())) {}
  String(const std::string& str)  // NOLINT(google-explicit-constructor)
      : ObjectRef(details::MakeString(str.data(), str.size())) {}

  const char* data() const { return get()->data; }
  /// NUL-terminated; embedded NULs are kept and counted in size().
  const char* c_str() const { return get()->data; }
  size_t size() const { return static_cast<size_t>(get()->size); }
  size_t length() const { return size(); }
  bool empty() const { return size() == 0; }
  /// The byte at `pos`; an IndexError when out of range.
  char at(size_t pos) const {
    if (pos >= size()) details::ThrowError("IndexError", "String::at: index out of range");
    return data()[pos];
  }
  char operator[](size_t pos) const { return data()[pos]; }

  std::string_view view() const { return std::string_view(data(), size()); }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator std::string() const { return std::string(data(), size()); }
  int compare(std::string_view other) const { return view().compare(other); }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(String, ObjectRef, StringObj);

 private:
  static ObjectPtr<Object> FromCStr(const char* str) {
    if (str == nullptr) details::ThrowError("ValueError", "String: cannot construct from nullptr");
    return details::MakeString(str, std::strlen(str));
  }
};

/// The data of a Bytes: `size` bytes at `data`, followed by a NUL (StringObj's layout).
class BytesObj : public Object {
 public:
  const char* data;
  uint64_t size;

  static constexpr const char* _type_key = "ferry.Bytes";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(BytesObj, Object, kFerryBytes);
};

namespace details {
/// Makes a BytesObj holding a copy of `size` bytes at `data`.
FERRY_DLL ObjectPtr<Object> MakeBytes(const char* data, size_t size);
}  // namespace details

/// `Bytes`: an immutable byte string, never null; what Python's `bytes` becomes. Unlike String
/// it makes no claim about an encoding.
///
///     Bytes b(std::string_view("\x00\x01", 2));
class Bytes : public ObjectRef {
 public:
  Bytes() : Bytes(std::string_view()) {}
  explicit Bytes(std::string_view data) : ObjectRef(details::MakeBytes(data.data(), data.size())) {}
  const char* data() const { return get()->data; }
  size_t size() const { return static_cast<size_t>(get()->size); }
  std::string_view view() const { return std::string_view(data(), size()); }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Bytes, ObjectRef, BytesObj);
};

namespace details {
/// Enables the comparisons below when one side is a String and the other is string-like. As
/// templates they never convert an operand to String, so `view == "abc"` stays unambiguous.
template <typename L, typename R>
using EnableStringCompare = std::enable_if_t<
    (std::is_same_v<L, String> ||
     std::is_same_v<R, String>)&&std::is_convertible_v<const L&, std::string_view> &&
    std::is_convertible_v<const R&, std::string_view>>;
}  // namespace details

#define FERRY_STRING_COMPARE_(op)                                                  \
  template <typename L, typename R, typename = details::EnableStringCompare<L, R>> \
  inline bool operator op(const L& a, const R& b) {                                \
    return std::string_view(a) op std::string_view(b);                             \
  }
FERRY_STRING_COMPARE_(==)
FERRY_STRING_COMPARE_(!=)
FERRY_STRING_COMPARE_(<)
FERRY_STRING_COMPARE_(>)
FERRY_STRING_COMPARE_(<=)
FERRY_STRING_COMPARE_(>=)
#undef FERRY_STRING_COMPARE_

inline String operator+(const String& a, std::string_view b) {
  return String(details::ConcatString(a.view(), b));
}
inline String operator+(std::string_view a, const String& b) {
  return String(details::ConcatString(a, b.view()));
}
inline String operator+(const String& a, const String& b) {
  return String(details::ConcatString(a.view(), b.view()));
}
inline String operator+(const String& a, const std::string& b) { return a + std::string_view(b); }
inline String operator+(const std::string& a, const String& b) { return std::string_view(a) + b; }
inline String operator+(const String& a, const char* b) { return a + std::string_view(b); }
inline String operator+(const char* a, const String& b) { return std::string_view(a) + b; }

inline std::ostream& operator<<(std::ostream& os, const String& s) { return os << s.view(); }

}  // namespace ferry

template <>
struct std::hash<::ferry::String> {
  size_t operator()(const ::ferry::String& s) const {
    return std::hash<std::string_view>()(s.view());
  }
};

#endif  // FERRY_STRING_H_
