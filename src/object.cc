/// \file object.cc
/// The type registry, object freeing, and the C ABI for both.
#include "ferry/object.h"

#include <atomic>   // lock-free reads of the type table
#include <cstdio>   // DCheckFailed's message
#include <cstdlib>  // realloc for the deferred-free queue, abort
#include <memory>   // std::unique_ptr of table entries
#include <mutex>    // registration lock
#include <string>
#include <unordered_map>  // key -> index
#include <vector>

#include "c_api_internal.h"
#include "ferry/error.h"
#include "library_internal.h"

namespace ferry {
namespace details {
namespace {

/// What the registry keeps per type. `info` points into `key` and `ancestors`, which never
/// change after the entry is published.
struct TypeEntry {
  FerryTypeInfo info;
  std::string key;
  std::vector<int32_t> ancestors;
  /// Child slots handed out so far, out of info.num_child_slots.
  int32_t used_child_slots = 0;
};

/// Type index -> entry, readable without a lock: a fixed array of lazily allocated chunks whose
/// slots are published with release stores after the entry is complete.
class TypeTable {
 public:
  static constexpr int32_t kChunkBits = 8;
  static constexpr int32_t kChunkSize = 1 << kChunkBits;
  static constexpr int32_t kMaxChunks = 4096;
  static constexpr int32_t kMaxTypes = kChunkSize * kMaxChunks;

  static TypeTable* Global() {
    // Never destroyed: objects may be released during static destruction of other libraries.
    static TypeTable* table = new TypeTable();
    return table;
  }

  const TypeEntry* Get(int32_t index) const {
    if (index < 0 || index >= kMaxTypes) return nullptr;
    const Slot* chunk = chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    return chunk[index & (kChunkSize - 1)].load(std::memory_order_acquire);
  }

  int32_t GetOrAlloc(const char* key, int32_t static_index, int32_t parent_index,
                     int32_t num_child_slots, bool can_overflow, bool* created = nullptr) {
    if (key == nullptr || *key == '\0') FERRY_THROW(ValueError) << "type key must not be empty";
    if (num_child_slots < 0 || num_child_slots >= kMaxTypes) {
      FERRY_THROW(ValueError) << "type '" << key << "': num_child_slots must be in [0, "
                              << kMaxTypes << "), got " << num_child_slots;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = key_to_index_.find(key);
    if (it != key_to_index_.end()) {
      const TypeEntry* entry = Get(it->second);
      int32_t known_parent =
          entry->info.type_depth == 0 ? -1 : entry->ancestors[entry->info.type_depth - 1];
      if (known_parent != parent_index) {
        FERRY_THROW(RuntimeError) << "type key '" << key << "' is already registered with parent '"
                                  << KeyOf(known_parent) << "', cannot register it again with "
                                  << "parent '" << KeyOf(parent_index) << "'";
      }
      // IsInstance trusts a class's declared child slots: a range that was never reserved
      // would make unrelated types look like subtypes.
      if (entry->info.num_child_slots != num_child_slots ||
          (entry->info.child_slots_can_overflow != 0) != can_overflow) {
        FERRY_THROW(RuntimeError) << "type key '" << key << "' is already registered with "
                                  << entry->info.num_child_slots << " child slots"
                                  << (entry->info.child_slots_can_overflow ? " (can overflow)"
                                                                           : " (cannot overflow)")
                                  << ", cannot register it again with " << num_child_slots
                                  << " child slots"
                                  << (can_overflow ? " (can overflow)" : " (cannot overflow)");
      }
      return it->second;
    }
    TypeEntry* parent = Mutable(parent_index);
    if (parent == nullptr) {
      FERRY_THROW(ValueError) << "type '" << key << "': parent type index " << parent_index
                              << " is not registered";
    }
    const int32_t num_slots = num_child_slots + 1;
    int32_t index;
    if (static_index >= 0) {
      FERRY_ICHECK(static_index >= kFerryStaticObjectBegin &&
                   static_index < kFerryStaticObjectEnd && Get(static_index) == nullptr)
          << "bad static index " << static_index << " for '" << key << "'";
      index = static_index;
    } else if (TypeEntry* owner = RangeOwner(parent, num_slots, key)) {
      index = owner->info.type_index + 1 + owner->used_child_slots;
      owner->used_child_slots += num_slots;
    } else {
      if (next_dynamic_index_ > kMaxTypes - num_slots) {
        FERRY_THROW(RuntimeError) << "type '" << key << "': the registry is full (" << kMaxTypes
                                  << " type indices)";
      }
      index = next_dynamic_index_;
      next_dynamic_index_ += num_slots;
    }
    FERRY_DCHECK(index >= kFerryStaticObjectBegin && index < kMaxTypes);
    auto entry = std::make_unique<TypeEntry>();
    entry->key = key;
    entry->ancestors = parent->ancestors;
    entry->ancestors.push_back(parent->info.type_index);
    entry->info.type_index = index;
    entry->info.type_depth = static_cast<int32_t>(entry->ancestors.size());
    entry->info.num_child_slots = num_child_slots;
    entry->info.child_slots_can_overflow = can_overflow ? 1 : 0;
    Publish(std::move(entry));
    key_to_index_.emplace(key, index);
    if (created != nullptr) *created = true;
    return index;
  }

  /// Forgets the key of `index` (LoadLibrary undoing a failed load). The entry stays for
  /// lock-free readers and objects already made; its index and slots are never handed out again.
  void Retire(int32_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    const TypeEntry* entry = Get(index);
    if (entry == nullptr) return;
    auto it = key_to_index_.find(entry->key);
    if (it != key_to_index_.end() && it->second == index) key_to_index_.erase(it);
  }

  int32_t KeyToIndex(const char* key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = key_to_index_.find(key);
    return it == key_to_index_.end() ? -1 : it->second;
  }

  const char* KeyOf(int32_t index) const {
    const TypeEntry* entry = Get(index);
    return entry != nullptr ? entry->info.type_key : "<unknown>";
  }

 private:
  using Slot = std::atomic<const TypeEntry*>;

  TypeTable() {
    auto root = std::make_unique<TypeEntry>();
    root->key = Object::_type_key;
    root->info.type_index = kFerryObject;
    root->info.type_depth = 0;
    root->info.num_child_slots = 0;
    root->info.child_slots_can_overflow = 1;
    Publish(std::move(root));
    key_to_index_.emplace(Object::_type_key, kFerryObject);
    const std::pair<int32_t, const char*> builtins[] = {
        {kFerryString, "ferry.String"},     {kFerryError, "ferry.Error"},
        {kFerryFunction, "ferry.Function"}, {kFerryArray, "ferry.Array"},
        {kFerryMap, "ferry.Map"},           {kFerryShape, "ferry.Shape"},
        {kFerryBytes, "ferry.Bytes"},       {kFerryTensor, "ferry.Tensor"},
        {kFerryList, "ferry.List"},         {kFerryDict, "ferry.Dict"},
    };
    for (const auto& [index, key] : builtins) {
      // The registration lock is not needed yet: nobody else can see the table.
      TypeEntry* parent = Mutable(kFerryObject);
      auto entry = std::make_unique<TypeEntry>();
      entry->key = key;
      entry->ancestors = {parent->info.type_index};
      entry->info.type_index = index;
      entry->info.type_depth = 1;
      entry->info.num_child_slots = 0;
      entry->info.child_slots_can_overflow = 1;
      Publish(std::move(entry));
      key_to_index_.emplace(key, index);
    }
  }

  TypeEntry* Mutable(int32_t index) { return const_cast<TypeEntry*>(Get(index)); }

  /// The type whose reserved range receives a new child of `parent` needing `num_slots`
  /// indices, or nullptr to take them from the global counter.
  ///
  /// The parent's own free slots come first. Past them the child overflows, which the parent
  /// must allow; even then it has to stay inside the range of the closest ancestor that does
  /// not allow overflow, because IsInstance against that ancestor is a range check only.
  TypeEntry* RangeOwner(TypeEntry* parent, int32_t num_slots, const char* key) {
    auto has_room = [num_slots](const TypeEntry* t) {
      return t->info.num_child_slots - t->used_child_slots >= num_slots;
    };
    if (parent->info.type_index != kFerryObject && has_room(parent)) return parent;
    if (!parent->info.child_slots_can_overflow && parent->info.num_child_slots == 0) {
      FERRY_THROW(TypeError) << "cannot register type '" << key << "': its parent '" << parent->key
                             << "' is final (it reserves no child slots and allows no overflow)";
    }
    if (!parent->info.child_slots_can_overflow) {
      FERRY_THROW(RuntimeError) << "cannot register type '" << key << "': its parent '"
                                << parent->key << "' has used all " << parent->info.num_child_slots
                                << " of its reserved child slots and does not allow overflow "
                                << "(raise _type_child_slots of '" << parent->key
                                << "' or set _type_child_slots_can_overflow)";
    }
    for (int32_t depth = parent->info.type_depth - 1; depth > 0; --depth) {
      TypeEntry* ancestor = Mutable(parent->ancestors[depth]);
      if (ancestor->info.child_slots_can_overflow) continue;
      if (has_room(ancestor)) return ancestor;
      FERRY_THROW(RuntimeError) << "cannot register type '" << key << "': it overflows the slots "
                                << "of its parent '" << parent->key << "', and its ancestor '"
                                << ancestor->key << "', which does not allow overflow, has no "
                                << "reserved child slots left (raise _type_child_slots of '"
                                << ancestor->key << "')";
    }
    return nullptr;
  }

  /// Makes a complete entry visible to lock-free readers. Entries live for the process.
  void Publish(std::unique_ptr<TypeEntry> entry) {
    entry->info.type_key = entry->key.c_str();
    entry->info.type_ancestors = entry->ancestors.data();
    const int32_t index = entry->info.type_index;
    std::atomic<Slot*>& chunk_ref = chunks_[index >> kChunkBits];
    Slot* chunk = chunk_ref.load(std::memory_order_relaxed);
    if (chunk == nullptr) {
      chunk = new Slot[kChunkSize];
      for (int32_t i = 0; i < kChunkSize; ++i) chunk[i].store(nullptr, std::memory_order_relaxed);
      chunk_ref.store(chunk, std::memory_order_release);
    }
    chunk[index & (kChunkSize - 1)].store(entry.release(), std::memory_order_release);
  }

  std::mutex mutex_;
  std::unordered_map<std::string, int32_t> key_to_index_;
  std::atomic<Slot*> chunks_[kMaxChunks] = {};
  int32_t next_dynamic_index_ = kFerryDynamicObjectBegin;
};

/// Frees deeper than this many nested deleters are queued instead of recursing.
constexpr int32_t kMaxNestedFree = 64;

/// A free deferred by ObjectFreeGuarded.
struct PendingFree {
  FerryObject* obj;
  void (*destroy)(FerryObject*);
};

/// Per-thread state of ObjectFreeGuarded. Trivially destructible, so the thread_local needs no
/// guard; the queue's buffer is released whenever the queue drains.
struct FreeState {
  int32_t depth;
  uint32_t size;
  uint32_t capacity;
  PendingFree* queue;
};
// initial-exec: a direct %fs-relative access instead of a __tls_get_addr call on every free.
__attribute__((tls_model("initial-exec"))) thread_local FreeState free_state;

bool QueueFree(FreeState& state, PendingFree pending) noexcept {
  if (state.size == state.capacity) {
    uint32_t capacity = state.capacity == 0 ? 256 : state.capacity * 2;
    void* grown = std::realloc(state.queue, sizeof(PendingFree) * capacity);
    if (grown == nullptr) return false;
    state.queue = static_cast<PendingFree*>(grown);
    state.capacity = capacity;
  }
  state.queue[state.size++] = pending;
  return true;
}

}  // namespace

void DCheckFailed(const char* cond, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: FERRY_DCHECK failed: %s\n", file, line, cond);
  std::fflush(stderr);
  std::abort();
}

void ObjectFreeGuarded(FerryObject* obj, void (*destroy)(FerryObject*)) noexcept {
  FreeState& state = free_state;
  // When the queue cannot grow, recursing is the only way left to free the object.
  if (state.depth >= kMaxNestedFree && QueueFree(state, {obj, destroy})) return;
  ++state.depth;
  destroy(obj);
  --state.depth;
  if (state.depth != 0) return;
  while (state.size != 0) {
    const PendingFree next = state.queue[--state.size];
    ++state.depth;
    next.destroy(next.obj);
    --state.depth;
  }
  if (state.queue != nullptr) {
    std::free(state.queue);
    state.queue = nullptr;
    state.capacity = 0;
  }
}

int32_t TypeRegister(const char* type_key, int32_t static_type_index, int32_t parent_type_index,
                     int32_t num_child_slots, bool child_slots_can_overflow) {
  LoadTransaction* load = CurrentLoad();
  if (load == nullptr) {
    return TypeTable::Global()->GetOrAlloc(type_key, static_type_index, parent_type_index,
                                           num_child_slots, child_slots_can_overflow);
  }
  // Inside LoadLibrary this runs in a static initializer, where a throw terminates the process:
  // keep the error for LoadLibrary, which undoes the whole load. The library's code sees -1, an
  // index no object type has, until then.
  try {
    bool created = false;
    int32_t index =
        TypeTable::Global()->GetOrAlloc(type_key, static_type_index, parent_type_index,
                                        num_child_slots, child_slots_can_overflow, &created);
    if (created) load->types.push_back(index);
    return index;
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    load->errors.push_back(CurrentExceptionAsError());
    return -1;
  }
}

void RetireType(int32_t index) { TypeTable::Global()->Retire(index); }

bool TypeIsDerivedFrom(int32_t type_index, int32_t ancestor_index,
                       int32_t ancestor_depth) noexcept {
  const TypeEntry* entry = TypeTable::Global()->Get(type_index);
  if (entry == nullptr) return false;
  return entry->info.type_depth > ancestor_depth &&
         entry->ancestors[ancestor_depth] == ancestor_index;
}

const char* TypeIndexToKey(int32_t type_index) noexcept {
  return TypeTable::Global()->KeyOf(type_index);
}

}  // namespace details
}  // namespace ferry

using ferry::details::TypeTable;

int FerryObjectIncRef(FerryObjectHandle obj) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(obj);
  ferry::details::ObjectUnsafe::IncRef(ferry::details::FromHandle(obj));
  FERRY_C_API_END();
}

int FerryObjectDecRef(FerryObjectHandle obj) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(obj);
  ferry::details::ObjectUnsafe::DecRef(ferry::details::FromHandle(obj));
  FERRY_C_API_END();
}

namespace ferry {
namespace details {
int32_t FindTypeIndex(const char* key) { return TypeTable::Global()->KeyToIndex(key); }
}  // namespace details
}  // namespace ferry

int FerryTypeKeyToIndex(const char* type_key, int32_t* out_type_index) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(type_key);
  FERRY_C_API_CHECK_NOT_NULL(out_type_index);
  int32_t index = TypeTable::Global()->KeyToIndex(type_key);
  if (index < 0) FERRY_THROW(KeyError) << "type key '" << type_key << "' is not registered";
  *out_type_index = index;
  FERRY_C_API_END();
}

int FerryTypeIndexToKey(int32_t type_index, const char** out_type_key) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_type_key);
  const ferry::details::TypeEntry* entry = TypeTable::Global()->Get(type_index);
  if (entry == nullptr)
    FERRY_THROW(IndexError) << "type index " << type_index << " is not registered";
  *out_type_key = entry->info.type_key;
  FERRY_C_API_END();
}

int FerryTypeGetOrAllocIndex(const char* type_key, int32_t static_type_index,
                             int32_t parent_type_index, int32_t num_child_slots,
                             int32_t child_slots_can_overflow, int32_t* out_type_index) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(type_key);
  FERRY_C_API_CHECK_NOT_NULL(out_type_index);
  *out_type_index = TypeTable::Global()->GetOrAlloc(type_key, static_type_index, parent_type_index,
                                                    num_child_slots, child_slots_can_overflow != 0);
  FERRY_C_API_END();
}

int FerryTypeGetInfo(int32_t type_index, const FerryTypeInfo** out_info) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_info);
  const ferry::details::TypeEntry* entry = TypeTable::Global()->Get(type_index);
  if (entry == nullptr)
    FERRY_THROW(IndexError) << "type index " << type_index << " is not registered";
  *out_info = &entry->info;
  FERRY_C_API_END();
}
