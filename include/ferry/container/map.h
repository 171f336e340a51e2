/// \file ferry/container/map.h
/// `Map<K, V>`: an insertion-ordered hash map of values with copy-on-write mutation.
///
/// Keys hash and compare by value when they are strings (in any form), Bytes or plain values
/// (int, bool, float, DataType, ...), and by identity when they are other objects. An int, a
/// bool and a float are different keys even when they hold the same number, and so are a
/// string and a Bytes with the same characters (as "a" != b"a" in Python); a NaN key is a
/// ValueError (values have no identity to tell NaNs apart by). Iteration follows
/// insertion order (overwriting a key keeps its place; erasing and re-inserting moves it to
/// the end), so printing and serialization are deterministic.
///
///     Map<String, int64_t> m = {{"a", 1}, {"b", 2}};
///     Map<String, int64_t> n = m;    // shares the storage
///     n.Set("c", 3);                 // copies it: m still has two entries
///     int64_t a = m.at("a");         // KeyError naming the key when missing
///     for (auto [key, value] : m) ...
#ifndef FERRY_CONTAINER_MAP_H_
#define FERRY_CONTAINER_MAP_H_

#include <cstddef>           // ptrdiff_t
#include <initializer_list>  // Map{{k, v}, ...}
#include <iterator>          // iterator tags
#include <string>            // TypeStr
#include <type_traits>       // conditional_t
#include <utility>           // std::pair

#include "ferry/any.h"
#include "ferry/container/optional.h"

namespace ferry {

/// The storage of every Map: entries in insertion order, and an open-addressing table of slots
/// that index them. Read-only to users; `Map<K, V>` mutates it only when it holds the only
/// reference.
class MapObj : public Object {
 public:
  struct Entry {
    Any key;
    Any value;
    uint64_t hash;
  };

  MapObj() = default;
  /// A compact copy: the live entries of `other` in their order.
  FERRY_DLL MapObj(const MapObj& other);
  MapObj& operator=(const MapObj&) = delete;
  FERRY_DLL ~MapObj();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// The value stored under `key`, or nullptr.
  FERRY_DLL const Any* Find(const AnyView& key) const;
  /// The value stored under `key`; a KeyError naming the key when there is none.
  FERRY_DLL const Any& At(const AnyView& key) const;

  /// Sets `key` to `value`, keeping the key's place when it exists. Only on an unshared map.
  FERRY_DLL void Insert(Any key, Any value);
  /// Removes `key`; false when it was not there. Only on an unshared map.
  FERRY_DLL bool Erase(const AnyView& key);
  /// Removes every entry. Only on an unshared map.
  FERRY_DLL void Clear();
  /// Makes room for `count` entries.
  FERRY_DLL void Reserve(size_t count);

  /// The entry table, including erased entries (see IsErased), in insertion order.
  const Entry* entries_begin() const { return entries_; }
  const Entry* entries_end() const { return entries_ + entry_count_; }
  static bool IsErased(const Entry& entry) { return entry.key.type_index() == kErased; }

  static constexpr const char* _type_key = "ferry.Map";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(MapObj, Object, kFerryMap);

 private:
  /// The type index marking the key of an erased entry.
  static constexpr int32_t kErased = -1;

  /// The slot holding `key` (whose hash is `hash`), or SIZE_MAX when it is not there; when
  /// `free` is not null, also where an insert would put it (the first erased slot met, else
  /// the empty slot that ended the search).
  size_t Probe(const FerryAny* key, uint64_t hash, size_t* free) const;
  /// Rebuilds the slot table for `slot_count` slots, dropping erased entries.
  void Rehash(size_t slot_count);
  /// The slot count that keeps `count` entries at most half full.
  static size_t slots_for(size_t count);

  /// Makes room for `capacity` entries in the entry table.
  void GrowEntries(size_t capacity);
  /// Adds an entry at the end of the entry table, growing it first when it is full.
  void PushEntry(Any key, Any value, uint64_t hash);

  /// The entry table (live and erased entries) and the slot table, both malloc'ed: an Entry is
  /// relocatable byte by byte, as an Array's cells are, so the entry table grows with realloc
  /// (large blocks are moved by remapping their pages, not copied), and a new slot table comes
  /// zeroed from calloc.
  Entry* entries_ = nullptr;
  size_t entry_count_ = 0;
  size_t entry_capacity_ = 0;
  /// 0 for an empty slot, 0xffffffff for an erased one (a tombstone), else
  /// (entry index + 1) | a 32-bit tag of the hash << 32. The search for a hash starts at
  /// slot `hash & mask` and goes on as Python's dict does (see container.cc).
  uint64_t* slots_ = nullptr;
  size_t slot_count_ = 0;
  size_t size_ = 0;
  /// The erased slots (tombstones) in slots_: they count towards the load.
  size_t tombstones_ = 0;
};

namespace details {
/// The map every empty Map<K, V> shares.
FERRY_DLL const ObjectPtr<Object>& EmptyMap();
/// Makes `*data` a MapObj held only by the caller, copying it when it is shared; returns it.
FERRY_DLL MapObj* MapPrepareWrite(ObjectPtr<Object>* data);
}  // namespace details

/// A typed view of a MapObj. `K` and `V` are types with TypeTraits (Any for untyped).
/// Lookups take any key that converts to a value (`m.at("a")` needs no String).
template <typename K, typename V>
class Map : public ObjectRef {
  static_assert(TypeTraitsOf<K>::kEnabled && TypeTraitsOf<V>::kEnabled,
                "Map<K, V>: K or V has no TypeTraits");
  static_assert(!std::is_same_v<K, AnyView> && !std::is_same_v<V, AnyView>,
                "Map<AnyView, ...> would dangle; use Any");

 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;

  /// Visits the live entries in insertion order; dereferences to std::pair<K, V>.
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::pair<K, V>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = value_type;

    iterator() = default;
    iterator(const MapObj::Entry* entry, const MapObj::Entry* end) : entry_(entry), end_(end) {
      SkipErased();
    }
    value_type operator*() const { return {ReadKey(entry_->key), ReadValue(entry_->value)}; }
    /// The stored key and value cells, without conversion.
    const Any& key() const { return entry_->key; }
    const Any& value() const { return entry_->value; }
    iterator& operator++() {
      ++entry_;
      SkipErased();
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator& other) const { return entry_ == other.entry_; }
    bool operator!=(const iterator& other) const { return entry_ != other.entry_; }

   private:
    void SkipErased() {
      while (entry_ != end_ && MapObj::IsErased(*entry_)) ++entry_;
    }
    const MapObj::Entry* entry_ = nullptr;
    const MapObj::Entry* end_ = nullptr;
  };
  using const_iterator = iterator;

  /// An empty map (shares one global empty storage; no allocation).
  Map() : ObjectRef(details::EmptyMap()) {}
  Map(std::initializer_list<std::pair<K, V>> init) : Map(init.begin(), init.end()) {}
  /// From any range of pairs, e.g. a std::unordered_map or std::map; later duplicates win.
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Map(It first, It last) : Map() {
    for (; first != last; ++first) Set(K(first->first), V(first->second));
  }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Map, ObjectRef, MapObj);

  size_t size() const { return get()->size(); }
  bool empty() const { return get()->empty(); }
  /// 1 if `key` is present, else 0.
  size_t count(const AnyView& key) const { return get()->Find(key) != nullptr ? 1 : 0; }
  bool contains(const AnyView& key) const { return get()->Find(key) != nullptr; }
  /// The value under `key`; a KeyError naming the key when missing.
  V at(const AnyView& key) const {
    const Any* value = get()->Find(key);
    return ReadValue(value != nullptr ? *value : get()->At(key));  // At throws the KeyError
  }
  V operator[](const AnyView& key) const { return at(key); }
  /// The value under `key`, or nothing.
  Optional<V> Get(const AnyView& key) const {
    const Any* value = get()->Find(key);
    if (value == nullptr) return Optional<V>();
    return Optional<V>(ReadValue(*value));
  }
  /// The entry of `key`, or end().
  iterator find(const AnyView& key) const {
    const Any* value = get()->Find(key);
    if (value == nullptr) return end();
    // The value cell sits inside its entry.
    const auto* entry = reinterpret_cast<const MapObj::Entry*>(
        reinterpret_cast<const char*>(value) - offsetof(MapObj::Entry, value));
    return iterator(entry, get()->entries_end());
  }
  iterator begin() const { return iterator(get()->entries_begin(), get()->entries_end()); }
  iterator end() const { return iterator(get()->entries_end(), get()->entries_end()); }

  /// Sets `key` to `value` (copying the storage first if it is shared).
  void Set(K key, V value) { Writable()->Insert(Any(std::move(key)), Any(std::move(value))); }
  /// Removes `key`; returns how many entries were removed (0 or 1).
  size_t erase(const AnyView& key) {
    if (get()->Find(key) == nullptr) return 0;
    Writable()->Erase(key);
    return 1;
  }
  void clear() {
    if (data_.unique()) {
      static_cast<MapObj*>(get_mutable())->Clear();
    } else {
      data_ = details::EmptyMap();
    }
  }
  void reserve(size_t count) { Writable()->Reserve(count); }

  static K ReadKey(const Any& cell) { return Read<K>(cell); }
  static V ReadValue(const Any& cell) { return Read<V>(cell); }

 private:
  template <typename T>
  static T Read(const Any& cell) {
    if constexpr (std::is_same_v<T, Any>) {
      return cell;
    } else {
      return cell.cast<T>();
    }
  }
  MapObj* Writable() {
    if (data_.unique()) return static_cast<MapObj*>(get_mutable());
    return details::MapPrepareWrite(&data_);
  }
};

namespace details {
template <typename K, typename V>
struct HasCustomRefTraits<Map<K, V>> : std::true_type {};
/// "key \"a\"": how an error names a key.
FERRY_DLL std::string DescribeKey(const FerryAny* key);
}  // namespace details

/// A map travels as its MapObj; reading `Map<K, V>` back checks every key and value (O(n), no
/// copy) and shares the storage.
template <typename K, typename V>
struct TypeTraits<Map<K, V>> {
  using KeyTraits = TypeTraitsOf<K>;
  using ValueTraits = TypeTraitsOf<V>;
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Map<K, V>& src, FerryAny* out) {
    TypeTraits<ObjectRef>::CopyToAnyView(src, out);
  }
  static void MoveToAny(Map<K, V> src, FerryAny* out) {
    TypeTraits<ObjectRef>::MoveToAny(std::move(src), out);
  }
  static bool Check(const FerryAny* v) {
    return v->type_index == kFerryMap && FirstBad(v, nullptr) == nullptr;
  }
  static std::optional<Map<K, V>> TryCast(const FerryAny* v) {
    if (!Check(v)) return std::nullopt;
    return Map<K, V>(
        details::ObjectUnsafe::PtrFromRaw<Object>(details::ObjectUnsafe::FromHeader(v->v_obj)));
  }
  static std::string MismatchDetail(const FerryAny* v) {
    if (v->type_index != kFerryMap) return std::string();
    bool bad_key = false;
    const MapObj::Entry* entry = FirstBad(v, &bad_key);
    if (entry == nullptr) return std::string();
    if (bad_key) {
      const FerryAny* key = entry->key.raw();
      return details::DescribeKey(key) + ": " +
             details::DescribeCastFailure(key, KeyTraits::TypeStr(),
                                          details::MismatchDetail<KeyTraits>(key));
    }
    const FerryAny* value = entry->value.raw();
    return "value of " + details::DescribeKey(entry->key.raw()) + ": " +
           details::DescribeCastFailure(value, ValueTraits::TypeStr(),
                                        details::MismatchDetail<ValueTraits>(value));
  }
  static std::string TypeStr() {
    return "Map[" + KeyTraits::TypeStr() + ", " + ValueTraits::TypeStr() + "]";
  }

 private:
  /// The first live entry whose key or value does not convert, or nullptr.
  static const MapObj::Entry* FirstBad(const FerryAny* v, bool* bad_key) {
    if constexpr (!std::is_same_v<K, Any> || !std::is_same_v<V, Any>) {
      const auto* map = static_cast<const MapObj*>(details::ObjectUnsafe::FromHeader(v->v_obj));
      for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        if (!details::CanCast<KeyTraits>(e->key.raw())) {
          if (bad_key != nullptr) *bad_key = true;
          return e;
        }
        if (!details::CanCast<ValueTraits>(e->value.raw())) return e;
      }
    }
    (void)v;
    (void)bad_key;
    return nullptr;
  }
};

}  // namespace ferry

#endif  // FERRY_CONTAINER_MAP_H_
