/// \file reflection.cc
/// The node registry (field tables recorded once from VisitAttrs), field access by name,
/// MakeNode, and their globals and C ABI. The text form of values (Repr) is in repr.cc.
#include "ferry/reflection/reflection.h"

#include <algorithm>      // find_if
#include <atomic>         // the lock-free lookup table
#include <functional>     // std::hash of type keys
#include <memory>         // unique_ptr in the registry
#include <mutex>          // registry writes
#include <shared_mutex>   // registry reads
#include <thread>         // yield in the field write locks
#include <unordered_map>  // registry

#include "c_api_internal.h"
#include "dynamic_type_internal.h"
#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "leak_check_internal.h"
#include "library_internal.h"

namespace ferry {

const FieldInfo* NodeInfo::FindField(std::string_view name) const {
  for (const FieldInfo& field : fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

namespace {

/// Records name, offset and type of each field VisitAttrs visits.
class FieldRecorder : public AttrVisitor {
 public:
  FieldRecorder(const NodeInfo& info, const Object* obj, std::vector<FieldInfo>* out)
      : info_(info), obj_(reinterpret_cast<const char*>(obj)), out_(out) {}
  void VisitField(const char* name, void* addr, const FieldType* type) override {
    const char* at = static_cast<const char*>(addr);
    FERRY_ICHECK(at >= obj_) << info_.type_key << "::VisitAttrs: field '" << name
                             << "' is not a member of the node";
    for (const FieldInfo& field : *out_) {
      if (field.name == name) {
        FERRY_THROW(ValueError) << info_.type_key << "::VisitAttrs visits the field '" << name
                                << "' twice";
      }
    }
    out_->push_back(FieldInfo{name, static_cast<size_t>(at - obj_), type});
  }

 private:
  const NodeInfo& info_;
  const char* obj_;
  std::vector<FieldInfo>* out_;
};

class NodeRegistry {
 public:
  static NodeRegistry* Global() {
    static NodeRegistry* registry = new NodeRegistry();  // never destroyed
    return registry;
  }

  const NodeInfo* Register(NodeInfo info) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = by_index_.find(info.type_index);
    if (it != by_index_.end() && it->second != nullptr &&
        it->second->type_index == info.type_index) {
      FERRY_THROW(RuntimeError) << "FERRY_REGISTER_NODE_TYPE: node type '" << info.type_key
                                << "' is registered twice";
    }
    // The structural hash mixes this into every node; computing it per node cost more than the
    // rest of the node's hash.
    info.type_key_hash = std::hash<std::string_view>()(info.type_key);
    auto node = std::make_unique<NodeInfo>(std::move(info));
    NodeInfo* raw = node.get();
    nodes_.push_back(std::move(node));
    // Forget the lookups made before this registration: a subtype may now resolve here.
    by_index_.clear();
    for (auto& slot : fast_) slot.store(nullptr, std::memory_order_relaxed);
    for (const auto& n : nodes_) by_index_[n->type_index] = n.get();
    by_key_[raw->type_key] = raw;
    if (raw->create != nullptr && !raw->fields_recorded) {
      try {
        ObjectPtr<Object> sample = raw->create(*raw);
        RecordFields(raw, sample.get());
      } catch (...) {
        UnregisterLocked(raw);
        throw;
      }
    }
    return raw;
  }

  /// Removes a registration (LoadLibrary undoing a failed load). The NodeInfo is kept alive:
  /// a lock-free reader may still hold it.
  void Unregister(const NodeInfo* info) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    UnregisterLocked(info);
  }

  NodeInfo* Find(const Object* obj) {
    const int32_t index = obj->type_index();
    // The hot path (structural hashing, JSON, field reads): one atomic load, no lock.
    if (static_cast<uint32_t>(index) < kFastSlots) {
      if (NodeInfo* hit = fast_[index].load(std::memory_order_acquire)) return hit;
    }
    return FindSlow(obj, index);
  }

  NodeInfo* FindFast(int32_t index) {
    if (static_cast<uint32_t>(index) >= kFastSlots) return nullptr;
    NodeInfo* hit = fast_[index].load(std::memory_order_acquire);
    return hit != nullptr && hit->type_index == index ? hit : nullptr;
  }

  NodeInfo* FindSlow(const Object* obj, int32_t index) {
    NodeInfo* info = nullptr;
    bool known = false;
    {
      std::shared_lock<std::shared_mutex> lock(mutex_);
      auto it = by_index_.find(index);
      if (it != by_index_.end()) {
        info = it->second;
        known = true;
        if (info == nullptr) return nullptr;
        if (info->fields_recorded) return Remember(index, info);
      }
    }
    std::unique_lock<std::shared_mutex> lock(mutex_);
    if (!known) {
      info = Resolve(index);
      by_index_[index] = info;
    }
    if (info == nullptr) return nullptr;
    if (!info->fields_recorded) RecordFields(info, obj);
    return Remember(index, info);
  }

  /// Enters a resolution with its fields recorded in the lock-free table. With the lock held
  /// (shared or not), so a Register that clears the table cannot come between the lookup and
  /// this store and leave a resolution it made stale.
  NodeInfo* Remember(int32_t index, NodeInfo* info) {
    if (static_cast<uint32_t>(index) < kFastSlots) {
      fast_[index].store(info, std::memory_order_release);
    }
    return info;
  }

  NodeInfo* Find(std::string_view key) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = by_key_.find(std::string(key));
    return it == by_key_.end() ? nullptr : it->second;
  }

  /// Every node ever registered (retired ones too), for the leak check at exit.
  std::vector<const NodeInfo*> AllNodes() {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    std::vector<const NodeInfo*> all;
    for (const auto& node : nodes_) all.push_back(node.get());
    for (const auto& node : retired_) all.push_back(node.get());
    return all;
  }

 private:
  void UnregisterLocked(const NodeInfo* info) {
    auto it = std::find_if(nodes_.begin(), nodes_.end(),
                           [info](const std::unique_ptr<NodeInfo>& n) { return n.get() == info; });
    if (it == nodes_.end()) return;
    retired_.push_back(std::move(*it));
    nodes_.erase(it);
    auto key = by_key_.find(info->type_key);
    if (key != by_key_.end() && key->second == info) by_key_.erase(key);
    // As in Register: every resolution made so far may have been to this node.
    by_index_.clear();
    for (auto& slot : fast_) slot.store(nullptr, std::memory_order_relaxed);
    for (const auto& n : nodes_) by_index_[n->type_index] = n.get();
  }

  /// The registered node of `index` or of its nearest registered ancestor (lock held).
  NodeInfo* Resolve(int32_t index) {
    const FerryTypeInfo* type = nullptr;
    if (FerryTypeGetInfo(index, &type) != 0) return nullptr;
    for (int32_t d = type->type_depth - 1; d >= 0; --d) {
      for (const auto& n : nodes_) {
        if (n->type_index == type->type_ancestors[d]) return n.get();
      }
    }
    return nullptr;
  }

  /// Runs VisitAttrs once on `obj` to fill the field table (lock held).
  static void RecordFields(NodeInfo* info, const Object* obj) {
    std::vector<FieldInfo> fields;
    FieldRecorder recorder(*info, obj, &fields);
    info->visit_attrs(const_cast<Object*>(obj), &recorder);
    info->fields = std::move(fields);
    info->fields_recorded = true;
  }

  /// Resolved NodeInfo (fields recorded) by type index, for the lock-free path of Find.
  static constexpr uint32_t kFastSlots = 4096;
  std::atomic<NodeInfo*> fast_[kFastSlots] = {};
  std::shared_mutex mutex_;
  std::vector<std::unique_ptr<NodeInfo>> nodes_;
  std::unordered_map<int32_t, NodeInfo*> by_index_;  // includes resolved subtypes and misses
  std::unordered_map<std::string, NodeInfo*> by_key_;
  std::vector<std::unique_ptr<NodeInfo>> retired_;  // unregistered, kept for lock-free readers
};

}  // namespace

namespace details {
void RegisterNode(NodeInfo info) {
  LoadTransaction* load = CurrentLoad();
  // A type whose registration failed inside LoadLibrary has index -1; its error is recorded.
  if (load != nullptr && info.type_index < 0) return;
  try {
    const NodeInfo* published = NodeRegistry::Global()->Register(std::move(info));
    if (load != nullptr) load->nodes.push_back(published);
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    // While LoadLibrary runs the library's initializers, keep the error for it to report
    // (throwing out of a static initializer would terminate the process).
    Error e = CurrentExceptionAsError();
    if (RecordLoadError(e)) return;
    throw e;
  }
}

void UnregisterNode(const NodeInfo* info) { NodeRegistry::Global()->Unregister(info); }
const NodeInfo* FindNodeInfoFast(int32_t index) { return NodeRegistry::Global()->FindFast(index); }

void ClearFieldDefaultsForLeakCheck() {
  for (const NodeInfo* info : NodeRegistry::Global()->AllNodes()) ClearFieldDefaults(*info);
}
}  // namespace details

const NodeInfo* GetNodeInfo(const Object* obj) { return NodeRegistry::Global()->Find(obj); }
const NodeInfo* GetNodeInfo(std::string_view type_key) {
  return NodeRegistry::Global()->Find(type_key);
}

Any GetAttr(const ObjectRef& obj, std::string_view name) {
  if (!obj.defined()) FERRY_THROW(AttributeError) << "None has no attribute '" << name << "'";
  const NodeInfo* info = GetNodeInfo(obj.get());
  const FieldInfo* field = info != nullptr ? info->FindField(name) : nullptr;
  if (field == nullptr) {
    FERRY_THROW(AttributeError) << "'" << obj->GetTypeKey() << "' object has no attribute '" << name
                                << "'";
  }
  return field->type->get(reinterpret_cast<const char*>(obj.get()) + field->offset);
}

namespace {
/// The field `name` of `obj` that reflection may write; AttributeError otherwise.
const FieldInfo* WritableField(const Object* obj, std::string_view name) {
  const NodeInfo* info = GetNodeInfo(obj);
  const FieldInfo* field = info != nullptr ? info->FindField(name) : nullptr;
  if (field == nullptr) {
    FERRY_THROW(AttributeError) << "'" << obj->GetTypeKey() << "' object has no attribute '" << name
                                << "'";
  }
  if (!info->mutable_fields) {
    FERRY_THROW(AttributeError) << "field '" << name << "' of '" << obj->GetTypeKey()
                                << "' is read-only (the type is not declared _type_mutable)";
  }
  return field;
}
}  // namespace

namespace details {
namespace {
/// StoreField's locks: spin locks, each on a cache line of its own. A writer holds one only
/// for a swap of two values, so spinning (then yielding) is cheaper than a mutex.
struct alignas(64) FieldWriteLock {
  std::atomic<bool> held{false};
};
constexpr size_t kFieldWriteLocks = 64;
FieldWriteLock g_field_write_locks[kFieldWriteLocks];
static_assert(kFieldWriteLocks == 64, "FieldWriteLockOf keeps the top 6 bits of the hash");

FieldWriteLock& FieldWriteLockOf(const void* addr) {
  // Fields are at least 4-byte aligned; mixing the address spreads neighbouring fields.
  const uint64_t bits = reinterpret_cast<uintptr_t>(addr) >> 3;
  return g_field_write_locks[(bits * 0x9e3779b97f4a7c15ULL) >> 58];
}
}  // namespace

void LockFieldWrite(const void* addr) noexcept {
  std::atomic<bool>& held = FieldWriteLockOf(addr).held;
  while (held.exchange(true, std::memory_order_acquire)) {
    while (held.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
}

void UnlockFieldWrite(const void* addr) noexcept {
  FieldWriteLockOf(addr).held.store(false, std::memory_order_release);
}

bool ViewObjectPointerField(const void* addr, FerryAny* out) {
  TypeTraits<ObjectRef>::CopyToAnyView(*static_cast<const ObjectRef*>(addr), out);
  return true;
}
}  // namespace details

void SetAttr(const ObjectRef& obj, std::string_view name, const AnyView& value) {
  if (!obj.defined()) FERRY_THROW(AttributeError) << "None has no attribute '" << name << "'";
  const FieldInfo* field = WritableField(obj.get(), name);
  try {
    // The object is live, so other threads may write the field too: set_c's write is atomic
    // with respect to theirs (StoreField). It converts first and writes after, so a failed
    // conversion changes nothing.
    // An enum field stores its member's name: a value (an IntEnum member) becomes it first.
    const Any name =
        field->constraint != nullptr ? details::EnumNameOfValue(field->constraint, value) : Any();
    const AnyView stored = name.type_index() != kFerryNone ? AnyView(name) : value;
    if (field->constraint != nullptr) details::CheckFieldConstraint(field->constraint, stored);
    char* addr = reinterpret_cast<char*>(const_cast<Object*>(obj.get())) + field->offset;
    if (field->type->set_c(addr, stored.raw()) != 0) details::ThrowRaised();
    if (field->constraint != nullptr) {
      details::AdoptStoredItemTypes(field->constraint, field->type, addr);
    }
  } catch (const Error& e) {
    std::string message = "field '" + std::string(name) + "' of '" + obj->GetTypeKey() +
                          "': " + std::string(e.message());
    details::ThrowError(std::string(e.kind()).c_str(), message.c_str());
  }
}

Array<String> ListAttrNames(const ObjectRef& obj) {
  Array<String> names;
  if (!obj.defined()) return names;
  if (const NodeInfo* info = GetNodeInfo(obj.get())) {
    for (const FieldInfo& field : info->fields) names.push_back(String(field.name));
  }
  return names;
}

ObjectRef MakeNode(std::string_view type_key, const Map<String, Any>& fields) {
  const NodeInfo* info = GetNodeInfo(type_key);
  if (info == nullptr) {
    FERRY_THROW(ValueError) << "MakeNode: no node type is registered as '" << type_key << "'";
  }
  if (info->create == nullptr) {
    FERRY_THROW(TypeError) << "MakeNode: " << type_key
                           << " has no default constructor, so it cannot be made from fields";
  }
  std::string missing, unknown;
  std::vector<Any> defaults(info->fields.size());  // of the fields left out that have one
  // Left out, keeping the default-constructed value (RegisterFieldDefault of a C++ node).
  std::vector<bool> keep(info->fields.size());
  for (size_t k = 0; k < info->fields.size(); ++k) {
    const FieldInfo& field = info->fields[k];
    if (fields.count(field.name.c_str()) || details::FieldDefault(*info, k, &defaults[k])) {
      continue;
    }
    if (details::CppFieldKeepsDefault(*info, k)) {
      keep[k] = true;
      continue;
    }
    missing += (missing.empty() ? "" : ", ") + field.name;
  }
  for (auto [name, value] : fields) {
    if (info->FindField(name.view()) == nullptr) {
      unknown += (unknown.empty() ? "" : ", ") + std::string(name);
    }
  }
  if (!missing.empty() || !unknown.empty()) {
    std::ostringstream os;
    os << "MakeNode(" << type_key << "): ";
    if (!missing.empty()) os << "missing fields: " << missing;
    if (!missing.empty() && !unknown.empty()) os << "; ";
    if (!unknown.empty()) os << "unknown fields: " << unknown;
    details::ThrowError("ValueError", os.str().c_str());
  }
  ObjectPtr<Object> node = info->create(*info);
  for (size_t k = 0; k < info->fields.size(); ++k) {
    const FieldInfo& field = info->fields[k];
    if (keep[k]) continue;
    try {
      const char* name = field.name.c_str();
      field.Write(node.get(), fields.count(name) ? fields.at(name) : defaults[k]);
    } catch (const Error& e) {
      std::string message = "MakeNode(" + std::string(type_key) + "): field '" + field.name +
                            "': " + std::string(e.message());
      details::ThrowError(std::string(e.kind()).c_str(), message.c_str());
    }
  }
  return ObjectRef(std::move(node));
}

// ---------------------------------------------------------------------------------------------
// Globals for other languages

/// ferry.NodeGetAttr(obj, name) -> field value; AttributeError when absent.
FERRY_REGISTER_GLOBAL("ferry.NodeGetAttr")
    .set_body_typed([](ObjectRef obj, String name) { return GetAttr(obj, name.view()); })
    .quick();

/// ferry.NodeSetAttr(obj, name, value): writes a field of a mutable type (SetAttr).
FERRY_REGISTER_GLOBAL("ferry.NodeSetAttr")
    .set_body_typed([](ObjectRef obj, String name, AnyView value) {
      SetAttr(obj, name.view(), value);
    })
    .quick();

/// ferry.NodeListAttrNames(obj) -> Array of field names.
FERRY_REGISTER_GLOBAL("ferry.NodeListAttrNames")
    .set_body_typed([](ObjectRef obj) { return ListAttrNames(obj); })
    .quick();

namespace {
/// [name0, type0, name1, type1, ...] of a reflected node type.
Array<String> FieldsOf(const NodeInfo& info) {
  Array<String> out;
  for (const FieldInfo& field : info.fields) {
    out.push_back(String(field.name));
    out.push_back(String(field.TypeStr()));
  }
  return out;
}
}  // namespace

/// ferry.NodeFields(type_key) -> Array [name0, type0, name1, type1, ...]; a ValueError when no
/// node type is registered as `type_key`.
FERRY_REGISTER_GLOBAL("ferry.NodeFields")
    .set_body_typed([](String type_key) {
      const NodeInfo* info = GetNodeInfo(type_key.view());
      if (info == nullptr) {
        FERRY_THROW(ValueError) << "no node type is registered as '" << type_key << "'";
      }
      return FieldsOf(*info);
    })
    .quick();

/// ferry.FindNodeFields(type_key) -> NodeFields, or None when `type_key` is not a reflected node
/// type (a container, an unregistered key): for callers to whom that is an answer, not an error
/// (an error costs its backtrace; the first one in a process loads the symbol tables).
FERRY_REGISTER_GLOBAL("ferry.FindNodeFields")
    .set_body_typed([](String type_key) -> Optional<Array<String>> {
      const NodeInfo* info = GetNodeInfo(type_key.view());
      if (info == nullptr) return std::nullopt;
      return FieldsOf(*info);
    })
    .quick();

/// ferry.MakeNode(type_key, name0, value0, name1, value1, ...) -> the node.
FERRY_REGISTER_GLOBAL("ferry.MakeNode")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      if (n < 1 || n % 2 != 1) {
        FERRY_THROW(TypeError) << "ferry.MakeNode takes a type key and then names and values in "
                                  "pairs, but got "
                               << n << " arguments";
      }
      Map<String, Any> fields;
      for (int32_t i = 1; i < n; i += 2) fields.Set(args[i].cast<String>(), Any(args[i + 1]));
      *out = MakeNode(args[0].cast<String>().view(), fields);
    })
    .quick();

}  // namespace ferry

int FerryObjectGetFieldGetter(FerryObjectHandle obj, const char* name, int64_t* out_offset,
                              FerryFieldGetter* out_getter) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(obj);
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(out_offset);
  FERRY_C_API_CHECK_NOT_NULL(out_getter);
  const ferry::Object* node = ferry::details::FromHandle(obj);
  const ferry::NodeInfo* info = ferry::GetNodeInfo(node);
  const ferry::FieldInfo* field = info != nullptr ? info->FindField(name) : nullptr;
  if (field == nullptr) {
    FERRY_THROW(AttributeError) << "'" << node->GetTypeKey() << "' object has no attribute '"
                                << name << "'";
  }
  const char* base = reinterpret_cast<const char*>(node);
  *out_offset = static_cast<int64_t>(field->offset) + (base - static_cast<const char*>(obj));
  *out_getter = field->type->get_c;
  FERRY_C_API_END();
}

int FerryObjectGetFieldSetter(FerryObjectHandle obj, const char* name, int64_t* out_offset,
                              FerryFieldSetter* out_setter) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(obj);
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(out_offset);
  FERRY_C_API_CHECK_NOT_NULL(out_setter);
  const ferry::Object* node = ferry::details::FromHandle(obj);
  const ferry::FieldInfo* field = ferry::WritableField(node, name);
  const char* base = reinterpret_cast<const char*>(node);
  *out_offset = static_cast<int64_t>(field->offset) + (base - static_cast<const char*>(obj));
  *out_setter = field->constraint == nullptr ? field->type->set_c : nullptr;
  FERRY_C_API_END();
}

int FerryObjectSetAttr(FerryObjectHandle obj, const char* name, const FerryAny* value) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(obj);
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(value);
  ferry::ObjectRef ref = ferry::GetRef<ferry::ObjectRef>(ferry::details::FromHandle(obj));
  ferry::SetAttr(ref, name, *reinterpret_cast<const ferry::AnyView*>(value));
  FERRY_C_API_END();
}

int FerryObjectGetAttr(FerryObjectHandle obj, const char* name, FerryAny* out) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(obj);
  FERRY_C_API_CHECK_NOT_NULL(name);
  FERRY_C_API_CHECK_NOT_NULL(out);
  ferry::ObjectRef ref = ferry::GetRef<ferry::ObjectRef>(ferry::details::FromHandle(obj));
  *out = ferry::GetAttr(ref, name).MoveToOwned();
  FERRY_C_API_END();
}
