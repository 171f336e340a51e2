/// \file enum.cc
/// The enum registry (FERRY_REGISTER_ENUM, Python's ferry.register_enum, tschema) and its
/// globals for other languages.
#include "ferry/reflection/enum.h"

#include <memory>         // unique_ptr: registrations never move
#include <mutex>          // registry
#include <unordered_map>  // by key, by C++ type

#include "ferry/container/array.h"
#include "ferry/container/optional.h"
#include "ferry/error.h"
#include "ferry/function.h"

namespace ferry {

const std::string* EnumInfo::NameOf(int64_t value) const {
  for (const auto& [v, name] : members) {
    if (v == value) return &name;
  }
  return nullptr;
}

std::optional<int64_t> EnumInfo::ValueOf(std::string_view name) const {
  for (const auto& [v, n] : members) {
    if (n == name) return v;
  }
  return std::nullopt;
}

std::string EnumInfo::MemberList() const {
  std::string out;
  for (const auto& [v, name] : members) out += (out.empty() ? "" : ", ") + name;
  return out;
}

namespace details {
namespace {

class EnumRegistry {
 public:
  static EnumRegistry* Global() {
    static EnumRegistry* registry = new EnumRegistry();  // never destroyed
    return registry;
  }

  const EnumInfo* Register(std::string cpp_type, std::string key,
                           std::vector<std::pair<int64_t, std::string>> members) {
    if (key.empty()) FERRY_THROW(ValueError) << "RegisterEnum: the key is empty";
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].second.empty()) {
        FERRY_THROW(ValueError) << "RegisterEnum(" << key << "): member " << i << " has no name";
      }
      for (size_t j = 0; j < i; ++j) {
        if (members[j].second == members[i].second || members[j].first == members[i].first) {
          FERRY_THROW(ValueError) << "RegisterEnum(" << key << "): members '" << members[j].second
                                  << "' and '" << members[i].second << "' repeat a name or a value";
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!cpp_type.empty()) {
      // One C++ type, one key: a second key would leave conversions (which cache the first
      // registration found) and type texts disagreeing on the members.
      auto typed = by_type_.find(cpp_type);
      if (typed != by_type_.end() && typed->second->key != key) {
        FERRY_THROW(ValueError) << "RegisterEnum: the C++ enum " << cpp_type
                                << " is registered already, as '" << typed->second->key
                                << "'; it cannot also be '" << key << "'";
      }
    }
    auto it = by_key_.find(key);
    if (it != by_key_.end()) {
      // The same members again (a C++ enum seen from Python, a library loaded twice): fine.
      if (it->second->members != members) {
        FERRY_THROW(ValueError) << "RegisterEnum: '" << key
                                << "' is registered already with other members ("
                                << it->second->MemberList() << ")";
      }
      if (!cpp_type.empty()) by_type_[cpp_type] = it->second.get();
      return it->second.get();
    }
    auto info = std::make_unique<EnumInfo>();
    info->key = key;
    info->members = std::move(members);
    const EnumInfo* raw = info.get();
    by_key_[key] = std::move(info);
    if (!cpp_type.empty()) by_type_[cpp_type] = raw;
    return raw;
  }

  const EnumInfo* FindByType(const char* cpp_type) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_type_.find(cpp_type);
    return it == by_type_.end() ? nullptr : it->second;
  }
  const EnumInfo* Find(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_key_.find(std::string(key));
    return it == by_key_.end() ? nullptr : it->second.get();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<EnumInfo>> by_key_;
  std::unordered_map<std::string, const EnumInfo*> by_type_;
};

}  // namespace

const EnumInfo* RegisterEnum(std::string cpp_type, std::string key,
                             std::vector<std::pair<int64_t, std::string>> members) {
  return EnumRegistry::Global()->Register(std::move(cpp_type), std::move(key), std::move(members));
}
const EnumInfo* FindEnumByType(const char* cpp_type) {
  return EnumRegistry::Global()->FindByType(cpp_type);
}
const EnumInfo* FindEnum(std::string_view key) { return EnumRegistry::Global()->Find(key); }

void ThrowNotAMember(const EnumInfo& info, const FerryAny* value) {
  FERRY_THROW(ValueError) << AnyRepr(value) << " is not a member of " << info.key
                          << " (members: " << info.MemberList() << ")";
}
void ThrowUnregisteredEnum(const char* cpp_type) {
  FERRY_THROW(ValueError) << "the enum type " << cpp_type
                          << " is not registered (FERRY_REGISTER_ENUM)";
}

}  // namespace details

/// ferry.EnumGet(key) -> [name0, value0, name1, value1, ...], or None when no enum is
/// registered as `key`.
FERRY_REGISTER_GLOBAL("ferry.EnumGet")
    .set_body_typed([](String key) -> Optional<Array<Any>> {
      const EnumInfo* info = details::FindEnum(key.view());
      if (info == nullptr) return std::nullopt;
      Array<Any> out;
      for (const auto& [value, name] : info->members) {
        out.push_back(String(name));
        out.push_back(value);
      }
      return out;
    })
    .quick();

/// ferry.EnumRegister(key, [name0, value0, ...]): registers an enum defined in another language;
/// the same members again is a no-op, other members a ValueError.
FERRY_REGISTER_GLOBAL("ferry.EnumRegister")
    .set_body_typed([](String key, Array<Any> flat) {
      if (flat.size() % 2 != 0) {
        FERRY_THROW(ValueError) << "ferry.EnumRegister: members come as name, value pairs";
      }
      std::vector<std::pair<int64_t, std::string>> members;
      for (size_t i = 0; i < flat.size(); i += 2) {
        members.emplace_back(flat[i + 1].cast<int64_t>(), std::string(flat[i].cast<String>()));
      }
      details::RegisterEnum(std::string(), std::string(key), std::move(members));
    })
    .quick();

}  // namespace ferry
