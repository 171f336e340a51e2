/// \file ferry/container/dict.h
/// `Dict<K, V>`: a mutable, insertion-ordered hash map shared by every holder, as a Python dict
/// is. Unlike `Map` there is no copy-on-write: a `Set` through one handle is seen through every
/// other, in C++ and in Python alike. Keys follow Map's rules (strings, Bytes and plain
/// values by value, other objects by identity).
///
///     Dict<String, int64_t> d = {{"a", 1}};
///     Dict<String, int64_t> same = d;   // one dict, two handles
///     same.Set("b", 2);                 // d.size() == 2 too
///     Map<String, int64_t> snap = d.ToMap();   // an immutable snapshot, O(1)
///
/// A `DictNode` holds its entries in a `Map<Any, Any>` it alone writes to; a snapshot shares
/// that storage until the dict's next write copies it. Reads are safe from many threads while
/// nobody writes; writes are not synchronized.
#ifndef FERRY_CONTAINER_DICT_H_
#define FERRY_CONTAINER_DICT_H_

#include <atomic>            // item_type
#include <initializer_list>  // Dict{{k, v}, ...}
#include <iterator>          // iterator traits
#include <string>            // TypeStr
#include <utility>           // std::pair, move

#include "ferry/any.h"
#include "ferry/container/map.h"
#include "ferry/details/mutable_container.h"

namespace ferry {

namespace details {
struct FieldConstraint;
}  // namespace details

/// The storage of every Dict: its entries, reflected as the one field `data` (so structural
/// equality and hashing, JSON, pickle and Repr treat a Dict as a node holding a Map).
class DictNode : public Object {
 public:
  Map<Any, Any> data;
  /// The type a typed field of a run-time type (a py_class `ferry.Dict[K, V]`) gave this dict
  /// when the dict went into it, or null; as ListNode::item_type, for keys and values.
  std::atomic<const details::FieldConstraint*> item_type{nullptr};

  template <typename Visitor>
  void VisitAttrs(Visitor* v) {
    v->Visit("data", &data);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "ferry.Dict";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(DictNode, Object, kFerryDict);
};

/// A typed view of a DictNode. `K` and `V` are types with TypeTraits (Any for untyped).
template <typename K, typename V>
class Dict : public ObjectRef {
  static_assert(TypeTraitsOf<K>::kEnabled && TypeTraitsOf<V>::kEnabled,
                "Dict<K, V>: K or V has no TypeTraits");

 public:
  using key_type = K;
  using mapped_type = V;

  /// Walks the entries the dict held when the walk began, in insertion order
  /// (details::SnapshotIterator): setting, erasing or clearing inside the loop neither
  /// invalidates it nor shows in it. `key()` and `value()` give the stored cells unconverted.
  using iterator = details::SnapshotIterator<Map<K, V>>;

  /// A new empty dict (each one its own object).
  Dict() : ObjectRef(make_object<DictNode>()) {}
  Dict(std::initializer_list<std::pair<K, V>> init) : Dict(init.begin(), init.end()) {}
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Dict(It first, It last) : Dict() {
    for (; first != last; ++first) Set(K(first->first), V(first->second));
  }
  /// A new dict holding the entries of `map` (a copy: the map never changes).
  explicit Dict(const Map<K, V>& map) : Dict() {
    obj()->data = Map<Any, Any>(details::ObjectUnsafe::PtrFromRaw<Object>(
        const_cast<Object*>(static_cast<const Object*>(map.get()))));
  }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Dict, ObjectRef, DictNode);

  size_t size() const { return get()->data.size(); }
  bool empty() const { return get()->data.empty(); }
  size_t count(const AnyView& key) const { return get()->data.count(key); }
  bool contains(const AnyView& key) const { return get()->data.contains(key); }
  /// The value under `key`; a KeyError naming the key when missing.
  V at(const AnyView& key) const {
    const MapObj* map = get()->data.get();
    const Any* value = map->Find(key);
    return Map<K, V>::ReadValue(value != nullptr ? *value : map->At(key));  // At throws
  }
  V operator[](const AnyView& key) const { return at(key); }
  Optional<V> Get(const AnyView& key) const { return Typed().Get(key); }
  /// Iterators over the entries in insertion order, as they were at begin() or find() (see
  /// `iterator`): a loop may write the dict, even clear it, without invalidating them.
  iterator find(const AnyView& key) const {
    Map<K, V> snapshot = Typed();
    auto it = snapshot.find(key);
    return iterator(std::move(snapshot), it);
  }
  iterator begin() const { return iterator(Typed()); }
  iterator end() const { return iterator(); }

  /// Sets `key` to `value`, keeping the key's place when it exists.
  void Set(K key, V value) { obj()->data.Set(Any(std::move(key)), Any(std::move(value))); }
  /// Removes `key`; returns how many entries were removed (0 or 1).
  size_t erase(const AnyView& key) { return obj()->data.erase(key); }
  void clear() { obj()->data.clear(); }
  void reserve(size_t count) { obj()->data.reserve(count); }

  /// The entries now, as an immutable Map (O(1): shares the storage until the next write).
  Map<K, V> ToMap() const { return Typed(); }

 private:
  DictNode* obj() const { return const_cast<DictNode*>(get()); }
  Map<K, V> Typed() const {
    return Map<K, V>(details::ObjectUnsafe::PtrFromRaw<Object>(
        const_cast<Object*>(static_cast<const Object*>(get()->data.get()))));
  }
};

namespace details {
template <typename K, typename V>
struct HasCustomRefTraits<Dict<K, V>> : std::true_type {};
/// A new DictNode holding the entries of a MapObj cell (a Dict parameter given a Map: a copy the
/// caller does not see mutated).
FERRY_DLL ObjectPtr<Object> DictFromMapCell(const FerryAny* map);
}  // namespace details

/// A dict travels as its DictNode. Reading `Dict<K, V>` back checks every entry (O(n)) and
/// shares the dict; a Map (a Python dict, say) is accepted too, as a new Dict holding its
/// entries.
template <typename K, typename V>
struct TypeTraits<Dict<K, V>>
    : details::MutableContainerTraits<Dict<K, V>, DictNode, Map<K, V>, &details::DictFromMapCell> {
  static std::string TypeStr() {
    return "Dict[" + TypeTraitsOf<K>::TypeStr() + ", " + TypeTraitsOf<V>::TypeStr() + "]";
  }
};

/// The name of DictNode before it was a node by the naming rule of docs/object_model.md; kept.
using DictObj = DictNode;

}  // namespace ferry

#endif  // FERRY_CONTAINER_DICT_H_
