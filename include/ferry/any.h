/// \file ferry/any.h
/// `Any` (owns a value) and `AnyView` (borrows one): the 16-byte value cells that carry
/// arguments and results across functions and languages. Both are layout-compatible with
/// `FerryAny`. Conversions out of them are checked; a wrong type is a TypeError that names the
/// expected type and the actual type key, and an integer out of range is an OverflowError.
///
/// Three verbs, one result shape each (as LLVM's cast, dyn_cast):
///   `cast<T>()`      T, or a TypeError: for every T a cell converts to;
///   `try_cast<T>()`  std::optional<T>, nullopt instead of the error: for the same T;
///   `as<XNode>()`    `const XNode*` or nullptr, for a node (Object) type, as ObjectRef::as.
/// `as<T>()` with any other T is the older spelling of `try_cast<T>()` (std::optional<T>).
///
///     Any v = 42;
///     int64_t x = v.cast<int64_t>();                     // throws TypeError if not an int
///     std::optional<double> d = v.try_cast<double>();    // nullopt instead of throwing
#ifndef FERRY_ANY_H_
#define FERRY_ANY_H_

#include <cstring>      // memcpy for inline strings
#include <limits>       // integer ranges
#include <optional>     // try_cast<T>()
#include <string>       // std::string conversions
#include <type_traits>  // TypeTraits dispatch
#include <utility>      // std::move

#include "ferry/dtype.h"
#include "ferry/object.h"
#include "ferry/string.h"

namespace ferry {

class Any;
class AnyView;

namespace details {
/// The key of the value in a cell: "None", "int", "bool", "float", "void*", "DataType",
/// "ferry.String" (for every form of string), or an object's registered key.
FERRY_DLL const char* AnyTypeKey(const FerryAny* value) noexcept;
/// Throws the TypeError (or OverflowError for an integer out of range) of a failed cast;
/// `detail`, if not empty, says which part of a container failed.
[[noreturn]] FERRY_DLL void ThrowCastError(const FerryAny* value, const std::string& expected,
                                           const std::string& detail = std::string());
/// "expected X but got Y (detail)", or "integer N is out of range for X": the text of a failed
/// cast, used to explain which element of a container did not convert.
FERRY_DLL std::string DescribeCastFailure(const FerryAny* value, const std::string& expected,
                                          const std::string& detail);
/// Types with their own TypeTraits although they are ObjectRefs (Array, Map, Shape): the
/// generic object-reference traits below leave them alone.
template <typename T>
struct HasCustomRefTraits : std::false_type {};
/// Hash and equality of values as map keys: strings (in any form), Bytes and plain values by
/// value, other objects by identity. An int and a bool or float of the same value are different
/// keys, and so are a string and a Bytes with the same characters.
FERRY_DLL uint64_t AnyHash(const FerryAny* value) noexcept;
FERRY_DLL bool AnyEqual(const FerryAny* a, const FerryAny* b) noexcept;
/// A short text form of a value for error messages: 3, 2.5, True, None, "text", int32,
/// or <type_key at 0x...> for objects.
FERRY_DLL std::string AnyRepr(const FerryAny* value);
/// Stores the string in `out`: inline when it fits in 7 bytes, else as a new String object.
FERRY_DLL void StringToAny(const char* data, size_t size, FerryAny* out);
/// Stores a view of the string in `out`: inline when it fits in 7 bytes, else borrowed as a
/// NUL-terminated kFerryRawStr (`data[size]` must be NUL). A longer string with a NUL inside
/// cannot be borrowed that way: ValueError.
FERRY_DLL void StringToAnyView(const char* data, size_t size, FerryAny* out);
/// Reads a string from any of its forms; false when the cell holds no string.
inline bool AnyToStringView(const FerryAny* value, std::string_view* out) {
  switch (value->type_index) {
    case kFerryRawStr:
      *out = std::string_view(value->v_c_str, FerryRawStrLength(value));
      return true;
    case kFerrySmallStr:
      *out = std::string_view(value->v_bytes, value->small_len);
      return true;
    case kFerryString: {
      const auto* s = static_cast<const StringObj*>(ObjectUnsafe::FromHeader(value->v_obj));
      *out = std::string_view(s->data, static_cast<size_t>(s->size));
      return true;
    }
    default:
      return false;
  }
}
inline bool IsObjectIndex(int32_t type_index) { return type_index >= kFerryStaticObjectBegin; }
inline FerryAny NoneCell() {
  FerryAny cell;
  cell.type_index = kFerryNone;
  cell.small_len = 0;
  cell.v_int64 = 0;
  return cell;
}
}  // namespace details

/// How a C++ type enters and leaves a cell. Each enabled specialization provides
///   CopyToAnyView(const T&, FerryAny*)  store without taking ownership (for AnyView)
///   MoveToAny(T, FerryAny*)              store and own (for Any)
///   TryCast(const FerryAny*)             read back, converting where sensible; nullopt if not
///   TypeStr()                            the name used in error messages
/// and may provide
///   Check(const FerryAny*)               whether TryCast would succeed, without building the
///                                        value (used to check every element of a container)
///   MismatchDetail(const FerryAny*)      why TryCast failed, e.g. which element of a container
template <typename T, typename = void>
struct TypeTraits {
  static constexpr bool kEnabled = false;
};

template <typename T>
using TypeTraitsOf = TypeTraits<std::remove_cv_t<std::remove_reference_t<std::decay_t<T>>>>;

template <>
struct TypeTraits<std::nullptr_t> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(std::nullptr_t, FerryAny* out) { *out = details::NoneCell(); }
  static void MoveToAny(std::nullptr_t, FerryAny* out) { *out = details::NoneCell(); }
  static std::optional<std::nullptr_t> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryNone) return nullptr;
    return std::nullopt;
  }
  static std::string TypeStr() { return "None"; }
};

template <>
struct TypeTraits<bool> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(bool src, FerryAny* out) {
    out->type_index = kFerryBool;
    out->small_len = 0;
    out->v_int64 = src ? 1 : 0;
  }
  static void MoveToAny(bool src, FerryAny* out) { CopyToAnyView(src, out); }
  static std::optional<bool> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryBool || v->type_index == kFerryInt) return v->v_int64 != 0;
    return std::nullopt;
  }
  static std::string TypeStr() { return "bool"; }
};

/// Every integer type but bool travels as int64; reading it back checks the range.
template <typename Int>
struct TypeTraits<Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>>> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(Int src, FerryAny* out) {
    if constexpr (std::is_unsigned_v<Int> && sizeof(Int) >= sizeof(int64_t)) {
      if (src > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        details::ThrowError("OverflowError", "unsigned integer too large for int64");
      }
    }
    out->type_index = kFerryInt;
    out->small_len = 0;
    out->v_int64 = static_cast<int64_t>(src);
  }
  static void MoveToAny(Int src, FerryAny* out) { CopyToAnyView(src, out); }
  static std::optional<Int> TryCast(const FerryAny* v) {
    if (v->type_index != kFerryInt && v->type_index != kFerryBool) return std::nullopt;
    if (!InRange(v->v_int64)) return std::nullopt;
    return static_cast<Int>(v->v_int64);
  }
  static bool InRange(int64_t x) {
    if constexpr (std::is_signed_v<Int>) {
      return x >= static_cast<int64_t>(std::numeric_limits<Int>::min()) &&
             x <= static_cast<int64_t>(std::numeric_limits<Int>::max());
    } else {
      return x >= 0 && static_cast<uint64_t>(x) <= std::numeric_limits<Int>::max();
    }
  }
  static std::string TypeStr() {
    if constexpr (std::is_same_v<Int, int64_t>) {
      return "int";
    } else {
      return std::string(std::is_signed_v<Int> ? "int" : "uint") + std::to_string(8 * sizeof(Int));
    }
  }
};

template <typename Float>
struct TypeTraits<Float, std::enable_if_t<std::is_floating_point_v<Float>>> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(Float src, FerryAny* out) {
    out->type_index = kFerryFloat;
    out->small_len = 0;
    out->v_float64 = static_cast<double>(src);
  }
  static void MoveToAny(Float src, FerryAny* out) { CopyToAnyView(src, out); }
  static std::optional<Float> TryCast(const FerryAny* v) {
    switch (v->type_index) {
      case kFerryFloat:
        return static_cast<Float>(v->v_float64);
      case kFerryInt:
      case kFerryBool:
        return static_cast<Float>(v->v_int64);
      default:
        return std::nullopt;
    }
  }
  static std::string TypeStr() { return std::is_same_v<Float, double> ? "float" : "float32"; }
};

template <>
struct TypeTraits<void*> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(void* src, FerryAny* out) {
    if (src == nullptr) {
      *out = details::NoneCell();
      return;
    }
    out->type_index = kFerryOpaquePtr;
    out->small_len = 0;
    out->v_ptr = src;
  }
  static void MoveToAny(void* src, FerryAny* out) { CopyToAnyView(src, out); }
  static std::optional<void*> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryOpaquePtr) return v->v_ptr;
    if (v->type_index == kFerryNone) return static_cast<void*>(nullptr);
    return std::nullopt;
  }
  static std::string TypeStr() { return "void*"; }
};

template <>
struct TypeTraits<DataType> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const DataType& src, FerryAny* out) {
    out->type_index = kFerryDataType;
    out->small_len = 0;
    out->v_int64 = 0;
    out->v_dtype = src;
  }
  static void MoveToAny(const DataType& src, FerryAny* out) { CopyToAnyView(src, out); }
  FERRY_DLL static std::optional<DataType> TryCast(const FerryAny* v);
  static std::string TypeStr() { return "DataType"; }
};

/// A borrowed C string: an AnyView points at it; an Any copies it into a String.
template <>
struct TypeTraits<const char*> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const char* src, FerryAny* out) {
    if (src == nullptr) {
      *out = details::NoneCell();
      return;
    }
    out->type_index = kFerryRawStr;
    out->small_len = 0;
    out->v_c_str = src;
  }
  static void MoveToAny(const char* src, FerryAny* out) {
    if (src == nullptr) {
      *out = details::NoneCell();
      return;
    }
    details::StringToAny(src, std::strlen(src), out);
  }
  /// Points into the cell or its String: valid while the cell lives.
  static std::optional<const char*> TryCast(const FerryAny* v) {
    switch (v->type_index) {
      case kFerryRawStr:
        return v->v_c_str;
      case kFerrySmallStr:
        return v->v_bytes;
      case kFerryString:
        return static_cast<const StringObj*>(details::ObjectUnsafe::FromHeader(v->v_obj))->data;
      default:
        return std::nullopt;
    }
  }
  static std::string TypeStr() { return "ferry.String"; }
};
template <>
struct TypeTraits<char*> : TypeTraits<const char*> {};

template <>
struct TypeTraits<std::string> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const std::string& src, FerryAny* out) {
    details::StringToAnyView(src.c_str(), src.size(), out);
  }
  static void MoveToAny(const std::string& src, FerryAny* out) {
    details::StringToAny(src.data(), src.size(), out);
  }
  static bool Check(const FerryAny* v) {
    std::string_view view;
    return details::AnyToStringView(v, &view);
  }
  static std::optional<std::string> TryCast(const FerryAny* v) {
    std::string_view view;
    if (!details::AnyToStringView(v, &view)) return std::nullopt;
    return std::string(view);
  }
  static std::string TypeStr() { return "ferry.String"; }
};

/// Object references: null travels as None; reading back checks the dynamic type.
template <typename Ref>
struct TypeTraits<Ref, std::enable_if_t<std::is_base_of_v<ObjectRef, Ref> &&
                                        !details::HasCustomRefTraits<Ref>::value>> {
  using Target = typename Ref::ContainerType;
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Ref& src, FerryAny* out) {
    if (!src.defined()) {
      *out = details::NoneCell();
      return;
    }
    out->type_index = src->type_index();
    out->small_len = 0;
    out->v_obj = details::ObjectUnsafe::GetHeader(src.get());
  }
  static void MoveToAny(Ref src, FerryAny* out) {
    if (!src.defined()) {
      *out = details::NoneCell();
      return;
    }
    out->type_index = src->type_index();
    out->small_len = 0;
    ObjectPtr<Object> ptr = details::ObjectUnsafe::MovePtr(std::move(src));
    out->v_obj = details::ObjectUnsafe::GetHeader(details::ObjectUnsafe::MoveToOwned(&ptr));
  }
  static bool Check(const FerryAny* v) {
    if (v->type_index == kFerryNone) return Ref::_type_is_nullable;
    if (details::IsObjectIndex(v->type_index)) {
      return details::ObjectUnsafe::FromHeader(v->v_obj)->IsInstance<Target>();
    }
    if constexpr (std::is_base_of_v<Target, StringObj>) {
      return v->type_index == kFerryRawStr || v->type_index == kFerrySmallStr;
    }
    return false;
  }
  static std::optional<Ref> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryNone) {
      if constexpr (Ref::_type_is_nullable) return Ref(ObjectPtr<Object>());
      return std::nullopt;
    }
    if (details::IsObjectIndex(v->type_index)) {
      Object* obj = details::ObjectUnsafe::FromHeader(v->v_obj);
      if (!obj->IsInstance<Target>()) return std::nullopt;
      return Ref(details::ObjectUnsafe::PtrFromRaw<Object>(obj));
    }
    // Strings in their plain forms become String objects where a String is acceptable.
    if constexpr (std::is_base_of_v<Target, StringObj>) {
      std::string_view view;
      if (details::AnyToStringView(v, &view)) return Ref(String(view));
    }
    return std::nullopt;
  }
  static std::string TypeStr() { return Target::_type_key; }
};

/// String is a copy of its cell: an inline string stays inline, a long one shares its StringObj.
/// Reading back accepts every form of string (a borrowed C string is copied).
template <>
struct TypeTraits<String> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const String& src, FerryAny* out) { *out = src.cell(); }
  static void MoveToAny(String src, FerryAny* out) { *out = src.release(); }
  static bool Check(const FerryAny* v) {
    return v->type_index == kFerrySmallStr || v->type_index == kFerryString ||
           v->type_index == kFerryRawStr;
  }
  static std::optional<String> TryCast(const FerryAny* v) {
    if (v->type_index == kFerrySmallStr || v->type_index == kFerryString) {
      return String::FromCell(*v);
    }
    if (v->type_index == kFerryRawStr) return String(v->v_c_str, FerryRawStrLength(v));
    return std::nullopt;
  }
  static std::string TypeStr() { return StringObj::_type_key; }
};

/// Any and AnyView pass through typed calls unchanged (an Any argument takes a reference).
template <>
struct TypeTraits<Any> {
  static constexpr bool kEnabled = true;
  static bool Check(const FerryAny*) { return true; }
  static std::optional<Any> TryCast(const FerryAny* v);
  static std::string TypeStr() { return "Any"; }
};
template <>
struct TypeTraits<AnyView> {
  static constexpr bool kEnabled = true;
  static bool Check(const FerryAny*) { return true; }
  static std::optional<AnyView> TryCast(const FerryAny* v);
  static std::string TypeStr() { return "Any"; }
};

namespace details {
template <typename Traits, typename = void>
struct HasMismatchDetail : std::false_type {};
template <typename Traits>
struct HasMismatchDetail<Traits, std::void_t<decltype(Traits::MismatchDetail(nullptr))>>
    : std::true_type {};
/// The traits' explanation of a failed cast, or "" when they give none.
template <typename Traits>
std::string MismatchDetail(const FerryAny* value) {
  if constexpr (HasMismatchDetail<Traits>::value) {
    return Traits::MismatchDetail(value);
  } else {
    (void)value;
    return std::string();
  }
}
template <typename Traits, typename = void>
struct HasCheck : std::false_type {};
template <typename Traits>
struct HasCheck<Traits, std::void_t<decltype(Traits::Check(nullptr))>> : std::true_type {};
/// True when `TryCast` would succeed, found without building the value where the traits can.
template <typename Traits>
bool CanCast(const FerryAny* value) {
  if constexpr (HasCheck<Traits>::value) {
    return Traits::Check(value);
  } else {
    return Traits::TryCast(value).has_value();
  }
}
/// The error of a failed `cast<T>()`, out of line so that a cast inlines to its checks.
template <typename T>
[[noreturn, gnu::noinline, gnu::cold]] void ThrowCastErrorAs(const FerryAny* value) {
  ThrowCastError(value, TypeTraitsOf<T>::TypeStr(), MismatchDetail<TypeTraitsOf<T>>(value));
}
/// `cast<T>()` and `as<T>()` of Any and AnyView, read in place from the cell.
template <typename T>
inline T CastCell(const FerryAny* value) {
  if (auto v = TypeTraitsOf<T>::TryCast(value)) return *std::move(v);
  ThrowCastErrorAs<T>(value);
}
template <typename T>
auto AsCell(const FerryAny* value) {
  if constexpr (std::is_base_of_v<Object, T>) {
    return IsObjectIndex(value->type_index) &&
                   ObjectUnsafe::FromHeader(value->v_obj)->IsInstance<T>()
               ? static_cast<const T*>(ObjectUnsafe::FromHeader(value->v_obj))
               : nullptr;
  } else {
    return TypeTraitsOf<T>::TryCast(value);
  }
}
/// The cell of Any and AnyView, their only member, and the accessors both read it through, in
/// place (a copy of an Any's cell into an AnyView would load it right after a callee stored it,
/// a store-forwarding stall).
class AnyCell {
 public:
  int32_t type_index() const { return data_.type_index; }
  const char* GetTypeKey() const { return AnyTypeKey(&data_); }
  bool is_none() const { return data_.type_index == kFerryNone; }

  /// The value as `T`; TypeError (or OverflowError) when it is not one.
  template <typename T>
  T cast() const {
    return CastCell<T>(&data_);
  }
  /// The value as `T` if it is one, else std::nullopt; the T of cast<T>().
  template <typename T>
  std::optional<T> try_cast() const {
    return TypeTraitsOf<T>::TryCast(&data_);
  }
  /// For a node type `XNode`: `const XNode*` to the object if it is one, else nullptr. For any
  /// other T: try_cast<T>() (its older spelling, kept).
  template <typename T>
  auto as() const {
    return AsCell<T>(&data_);
  }

  const FerryAny* raw() const { return &data_; }

 protected:
  AnyCell() = default;
  explicit AnyCell(const FerryAny& cell) : data_(cell) {}

  FerryAny data_;
};
}  // namespace details

/// A borrowed view of a value: cheap to copy, owns nothing. Arguments arrive as AnyView.
class AnyView : public details::AnyCell {
 public:
  AnyView() : AnyCell(details::NoneCell()) {}
  AnyView(const Any& other);  // NOLINT(google-explicit-constructor)
  template <typename T, typename = std::enable_if_t<TypeTraitsOf<T>::kEnabled &&
                                                    !std::is_same_v<std::decay_t<T>, Any> &&
                                                    !std::is_same_v<std::decay_t<T>, AnyView>>>
  AnyView(const T& value) {  // NOLINT(google-explicit-constructor)
    TypeTraitsOf<T>::CopyToAnyView(value, &data_);
  }

 private:
  friend class Any;
};

/// An owned value: copying an Any holding an object adds a reference, and a borrowed C string
/// is copied into a String, so an Any never dangles.
class Any : public details::AnyCell {
 public:
  Any() : AnyCell(details::NoneCell()) {}
  ~Any() { reset(); }
  Any(const Any& other) : AnyCell(other.data_) { IncRefIfObject(); }
  Any(Any&& other) noexcept : AnyCell(other.data_) { other.data_ = details::NoneCell(); }
  Any(const AnyView& view) : AnyCell(view.data_) {  // NOLINT(google-explicit-constructor)
    if (data_.type_index == kFerryRawStr) {
      details::StringToAny(data_.v_c_str, FerryRawStrLength(&data_), &data_);
    } else {
      IncRefIfObject();
    }
  }
  template <typename T, typename = std::enable_if_t<TypeTraitsOf<T>::kEnabled &&
                                                    !std::is_same_v<std::decay_t<T>, Any> &&
                                                    !std::is_same_v<std::decay_t<T>, AnyView>>>
  Any(T value) {  // NOLINT(google-explicit-constructor)
    TypeTraitsOf<T>::MoveToAny(std::move(value), &data_);
  }
  // Assignment moves whole cells through registers. The copy-and-swap idiom made GCC write the
  // cell to a stack temporary field by field and read it back whole: a store-forwarding stall
  // in every `*result = value` of a packed function.
  Any& operator=(const Any& other) {
    Any copy(other);
    return *this = std::move(copy);
  }
  Any& operator=(Any&& other) noexcept {
    if (this != &other) {
      const FerryAny old = data_;
      data_ = other.data_;
      other.data_ = details::NoneCell();
      Release(old);
    }
    return *this;
  }
  void swap(Any& other) noexcept { std::swap(data_, other.data_); }
  void reset() {
    Release(data_);
    data_ = details::NoneCell();
  }

  /// Adopts a cell the caller owns (e.g. a FerryFunctionCall result).
  static Any FromOwned(const FerryAny& cell) {
    Any out;
    out.data_ = cell;
    return out;
  }
  /// Hands the value to a C caller, who must release it with FerryAnyRelease.
  FerryAny MoveToOwned() && {
    FerryAny cell = data_;
    data_ = details::NoneCell();
    return cell;
  }

 private:
  /// Drops the reference `cell` owns, if it holds an object.
  static void Release(const FerryAny& cell) {
    if (details::IsObjectIndex(cell.type_index)) {
      details::ObjectUnsafe::DecRef(details::ObjectUnsafe::FromHeader(cell.v_obj));
    }
  }
  void IncRefIfObject() {
    if (details::IsObjectIndex(data_.type_index)) {
      details::ObjectUnsafe::IncRef(details::ObjectUnsafe::FromHeader(data_.v_obj));
    }
  }

  friend class AnyView;
};

inline AnyView::AnyView(const Any& other) : AnyCell(other.data_) {}

inline std::optional<Any> TypeTraits<Any>::TryCast(const FerryAny* v) {
  return Any(*reinterpret_cast<const AnyView*>(v));
}
inline std::optional<AnyView> TypeTraits<AnyView>::TryCast(const FerryAny* v) {
  return *reinterpret_cast<const AnyView*>(v);
}

static_assert(sizeof(Any) == sizeof(FerryAny) && sizeof(AnyView) == sizeof(FerryAny),
              "Any and AnyView must stay layout-compatible with FerryAny");

}  // namespace ferry

#endif  // FERRY_ANY_H_
