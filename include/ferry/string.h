/// \file ferry/string.h
/// `String`: an immutable, never-null string. Up to 7 bytes live inline in the 16-byte value;
/// longer strings live in a StringObj whose bytes follow the header in one allocation, shared
/// by copies.
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
#include <utility>      // std::swap

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

/// `size` <= 8 bytes at `data` as the bytes of a zero-padded word: what memcpy into a zeroed
/// word does, in a few fixed-size loads (two that overlap) rather than a call when `size` is
/// not known at compile time.
inline uint64_t LoadShortBytes(const char* data, size_t size) noexcept {
  uint64_t word = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (size >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, data, 4);
    std::memcpy(&tail, data + size - 4, 4);
    word = head | (static_cast<uint64_t>(tail) << (8 * (size - 4)));
  } else if (size != 0) {
    word = static_cast<unsigned char>(data[0]) |
           (static_cast<uint64_t>(static_cast<unsigned char>(data[size / 2])) << (8 * (size / 2))) |
           (static_cast<uint64_t>(static_cast<unsigned char>(data[size - 1])) << (8 * (size - 1)));
  }
#else
  if (size != 0) std::memcpy(&word, data, size);
#endif
  return word;
}
}  // namespace details

/// `String` is a value of 16 bytes laid out as a FerryAny cell. A string of up to
/// `kInlineCapacity` (7) bytes is kept inline (kFerrySmallStr: the bytes and a NUL in the cell,
/// no allocation); a longer one holds a reference to a StringObj (kFerryString), which copies
/// share. Either way it is immutable and never null, and an `Any` made from it is a copy of the
/// cell. It is not an `ObjectRef` subclass (an inline string has no object to point at), but it
/// converts to one implicitly, materializing a StringObj for an inline string, and
/// `Downcast<String>(ref)`, `GetRef<String>(obj)` and `ref.as<StringObj>()` work as before.
/// As with std::string, `data()`, `c_str()` and views of an inline string point into the String
/// itself: valid while it lives and is neither moved nor assigned.
class String {
 public:
  using ContainerType = StringObj;
  static constexpr bool _type_is_nullable = false;
  /// The longest string kept inline.
  static constexpr size_t kInlineCapacity = 7;

  String() noexcept { SetInline(nullptr, 0); }
  String(const char* str)  // NOLINT(google-explicit-constructor)
  {
    if (str == nullptr) details::ThrowError("ValueError", "String: cannot construct from nullptr");
    Init(str, std::strlen(str));
  }
  String(const char* str, size_t size) { Init(str, size); }
  String(std::string_view str) { Init(str.data(), str.size()); }    // NOLINT
  String(const std::string& str) { Init(str.data(), str.size()); }  // NOLINT
  /// Adopts a reference to a StringObj (what Downcast and GetRef use); the caller has checked
  /// the type. A null pointer makes the empty string.
  explicit String(ObjectPtr<Object> ptr) noexcept { Adopt(std::move(ptr)); }
  String(const String& other) noexcept : cell_(other.cell_) {
    if (!is_inline()) FerryObjectIncRefInline(cell_.v_obj);
  }
  String(String&& other) noexcept : cell_(other.cell_) { other.SetInline(nullptr, 0); }
  String& operator=(const String& other) noexcept {
    String(other).swap(*this);
    return *this;
  }
  String& operator=(String&& other) noexcept {
    String(std::move(other)).swap(*this);
    return *this;
  }
  ~String() {
    if (!is_inline()) FerryObjectDecRefInline(cell_.v_obj);
  }
  void swap(String& other) noexcept { std::swap(cell_, other.cell_); }

  const char* data() const { return is_inline() ? cell_.v_bytes : heap()->data; }
  /// NUL-terminated; embedded NULs are kept and counted in size().
  const char* c_str() const { return data(); }
  size_t size() const { return is_inline() ? cell_.small_len : static_cast<size_t>(heap()->size); }
  size_t length() const { return size(); }
  bool empty() const { return size() == 0; }
  /// The byte at `pos`; an IndexError when out of range.
  char at(size_t pos) const {
    if (pos >= size()) details::ThrowError("IndexError", "String::at: index out of range");
    return data()[pos];
  }
  char operator[](size_t pos) const { return data()[pos]; }

  std::string_view view() const {
    return is_inline() ? std::string_view(cell_.v_bytes, cell_.small_len)
                       : std::string_view(heap()->data, static_cast<size_t>(heap()->size));
  }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator std::string() const { return std::string(data(), size()); }
  int compare(std::string_view other) const { return view().compare(other); }

  /// The string as an object reference: the StringObj it holds, or a new one for an inline
  /// string (one allocation).
  FERRY_DLL operator ObjectRef() const;  // NOLINT(google-explicit-constructor)
  /// Whether the bytes live in the cell (no object).
  bool is_inline() const { return cell_.type_index == kFerrySmallStr; }
  /// The StringObj behind a long string; nullptr for an inline one.
  const StringObj* get() const { return is_inline() ? nullptr : heap(); }
  /// Whether both hold the same StringObj, or are equal inline strings.
  bool same_as(const String& other) const {
    return cell_.type_index == other.cell_.type_index && cell_.small_len == other.cell_.small_len &&
           cell_.v_int64 == other.cell_.v_int64;
  }
  /// Always true: a String is never null (kept for code written against ObjectRef).
  bool defined() const { return true; }

  /// The cell, for the value conversions (TypeTraits<String>) and the C ABI glue.
  const FerryAny& cell() const { return cell_; }
  /// Gives the cell (and its reference) to the caller; this String is left empty.
  FerryAny release() noexcept {
    FerryAny out = cell_;
    SetInline(nullptr, 0);
    return out;
  }
  /// A String from a string cell (kFerrySmallStr or kFerryString), taking a new reference.
  static String FromCell(const FerryAny& cell) noexcept {
    String s(Tag{});
    s.cell_ = cell;
    if (!s.is_inline()) FerryObjectIncRefInline(s.cell_.v_obj);
    return s;
  }

 private:
  struct Tag {};
  explicit String(Tag) noexcept {}
  const StringObj* heap() const {
    return static_cast<const StringObj*>(details::ObjectUnsafe::FromHeader(cell_.v_obj));
  }
  void SetInline(const char* str, size_t size) noexcept {
    cell_.type_index = kFerrySmallStr;
    cell_.small_len = static_cast<uint32_t>(size);
    cell_.v_int64 = static_cast<int64_t>(details::LoadShortBytes(str, size));  // and a NUL
  }
  void Adopt(ObjectPtr<Object> ptr) noexcept {
    if (ptr == nullptr) {
      SetInline(nullptr, 0);
    } else {
      cell_.type_index = kFerryString;
      cell_.small_len = 0;
      cell_.v_obj = details::ObjectUnsafe::GetHeader(details::ObjectUnsafe::MoveToOwned(&ptr));
    }
  }
  void Init(const char* str, size_t size) {
    if (str == nullptr && size != 0) {
      details::ThrowError("ValueError", "String: nullptr with non-zero size");
    }
    if (size <= kInlineCapacity) {
      SetInline(str, size);
    } else {
      Adopt(details::MakeString(str, size));
    }
  }

  FerryAny cell_;
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

namespace details {
/// `a` followed by `b`, inline when it fits.
FERRY_DLL String ConcatToString(std::string_view a, std::string_view b);
}  // namespace details

inline String operator+(const String& a, std::string_view b) {
  return details::ConcatToString(a.view(), b);
}
inline String operator+(std::string_view a, const String& b) {
  return details::ConcatToString(a, b.view());
}
inline String operator+(const String& a, const String& b) {
  return details::ConcatToString(a.view(), b.view());
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
