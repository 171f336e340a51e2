/// \file ferry/reflection/enum.h
/// Enums reflected by name. Register an `enum class` once, in a .cc file:
///
///     enum class OpKind : int32_t { kAdd = 0, kMul = 1 };
///     FERRY_REGISTER_ENUM(OpKind, "ir.OpKind", {{OpKind::kAdd, "Add"}, {OpKind::kMul, "Mul"}});
///
/// and a node visits a field of that type like any other (`v->Visit("op", &op)`). As a value
/// (`Any(op)`, `GetAttr`, JSON, Python) an enum is its member's name, a String ("Add"): JSON
/// writes the name and Python reads a member of an `enum.IntEnum` (`ferry.get_enum`). Converting
/// to the enum accepts a member's name or its integer value; any other name or value is a
/// ValueError naming the enum and its members. Structural equality and hashing compare enum
/// fields by value. `AnyView(op)` (as reducers and typed function arguments see it) is the
/// integer value.
///
/// Enums defined elsewhere (Python's `ferry.register_enum`, tschema) are registered by key only,
/// through the same registry.
#ifndef FERRY_REFLECTION_ENUM_H_
#define FERRY_REFLECTION_ENUM_H_

#include <atomic>            // the cached registration of a C++ enum
#include <cstdint>           // int64_t
#include <initializer_list>  // FERRY_REGISTER_ENUM's member list
#include <optional>          // TryCast
#include <string>            // names
#include <string_view>       // lookups
#include <type_traits>       // is_enum
#include <typeinfo>          // typeid: the C++ type of a registered enum
#include <utility>           // pair
#include <vector>            // members

#include "ferry/any.h"
#include "ferry/string.h"

namespace ferry {

/// A registered enum: its key and its members, in registration order.
struct EnumInfo {
  std::string key;
  std::vector<std::pair<int64_t, std::string>> members;

  /// The name of the member with `value`, or nullptr.
  FERRY_DLL const std::string* NameOf(int64_t value) const;
  /// The value of the member called `name`, or nullopt.
  FERRY_DLL std::optional<int64_t> ValueOf(std::string_view name) const;
  /// "Add, Mul": for error messages.
  FERRY_DLL std::string MemberList() const;
};

namespace details {
/// Registers an enum under `key`; `cpp_type` is `typeid(E).name()` for a C++ enum, or empty.
/// A ValueError when `key` is taken by other members, a name or value repeats, or `cpp_type` is
/// registered under another key (two libraries' `enum class`es of one qualified name, such as
/// two in anonymous namespaces, are one type to it: give them named namespaces).
FERRY_DLL const EnumInfo* RegisterEnum(std::string cpp_type, std::string key,
                                       std::vector<std::pair<int64_t, std::string>> members);
/// The enum registered for the C++ type named `cpp_type` (typeid(E).name()), or nullptr.
FERRY_DLL const EnumInfo* FindEnumByType(const char* cpp_type);
/// The enum registered as `key`, or nullptr.
FERRY_DLL const EnumInfo* FindEnum(std::string_view key);
/// The ValueError of a name or value that is no member of `info`.
[[noreturn]] FERRY_DLL void ThrowNotAMember(const EnumInfo& info, const FerryAny* value);
/// The ValueError of a C++ enum that was never registered with FERRY_REGISTER_ENUM.
[[noreturn]] FERRY_DLL void ThrowUnregisteredEnum(const char* cpp_type);

template <typename E>
bool RegisterEnumType(const char* key, std::initializer_list<std::pair<E, const char*>> members) {
  std::vector<std::pair<int64_t, std::string>> list;
  for (const auto& [value, name] : members) list.emplace_back(static_cast<int64_t>(value), name);
  RegisterEnum(typeid(E).name(), key, std::move(list));
  return true;
}

/// The registration of the C++ enum E; a ValueError when it has none.
template <typename E>
const EnumInfo& EnumInfoOf() {
  static std::atomic<const EnumInfo*> cached{nullptr};  // registrations are never removed
  const EnumInfo* info = cached.load(std::memory_order_acquire);
  if (info == nullptr) {
    info = FindEnumByType(typeid(E).name());
    if (info == nullptr) ThrowUnregisteredEnum(typeid(E).name());
    cached.store(info, std::memory_order_release);
  }
  return *info;
}
}  // namespace details

/// A C++ enum as a value: its name as an Any, its integer value as an AnyView; read back from
/// either (see the top of the file).
template <typename E>
struct TypeTraits<E, std::enable_if_t<std::is_enum_v<E>>> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(E src, FerryAny* out) {
    out->type_index = kFerryInt;
    out->small_len = 0;
    out->v_int64 = static_cast<int64_t>(src);
  }
  static void MoveToAny(E src, FerryAny* out) {
    const EnumInfo& info = details::EnumInfoOf<E>();
    const std::string* name = info.NameOf(static_cast<int64_t>(src));
    if (name == nullptr) {
      FerryAny cell;
      CopyToAnyView(src, &cell);
      details::ThrowNotAMember(info, &cell);
    }
    TypeTraits<String>::MoveToAny(String(*name), out);
  }
  /// A member's name or value; a ValueError for another name or value of the right kind.
  static std::optional<E> TryCast(const FerryAny* v) {
    std::string_view name;
    if (details::AnyToStringView(v, &name)) {
      const EnumInfo& info = details::EnumInfoOf<E>();
      if (auto value = info.ValueOf(name)) return static_cast<E>(*value);
      details::ThrowNotAMember(info, v);
    }
    if (v->type_index == kFerryInt) {
      const EnumInfo& info = details::EnumInfoOf<E>();
      if (info.NameOf(v->v_int64) != nullptr) return static_cast<E>(v->v_int64);
      details::ThrowNotAMember(info, v);
    }
    return std::nullopt;
  }
  static std::string TypeStr() {
    const EnumInfo* info = details::FindEnumByType(typeid(E).name());
    return info != nullptr ? "Enum[" + info->key + "]" : std::string("Enum[?]");
  }
};

}  // namespace ferry

/// Registers the C++ enum `EnumType` under `key` with its members: `{{EnumType::kA, "A"}, ...}`.
/// Use once per enum, at namespace scope in a .cc file.
#define FERRY_REGISTER_ENUM(EnumType, key, ...)                                             \
  [[maybe_unused]] static const bool FERRY_STR_CONCAT(ferry_enum_registrar_, __COUNTER__) = \
      ::ferry::details::RegisterEnumType<EnumType>(key, __VA_ARGS__)

#endif  // FERRY_REFLECTION_ENUM_H_
