/// \file ferry/details/mutable_container.h
/// What `List` and `Dict` share, as mutable containers whose node keeps the items in an
/// immutable `Array` or `Map` (field `data`) that it alone writes. Their iterator keeps the
/// storage the container held when the walk began (an O(1) snapshot, as `ToArray` / `ToMap`),
/// so a loop that writes the container, even clears it, neither invalidates the walk nor sees
/// the write (the container's first write copies the storage once). Their TypeTraits pass the
/// node and read back either the node or the immutable storage. Internal: include
/// ferry/container/list.h or ferry/container/dict.h instead.
///
///     for (int64_t x : xs) xs.push_back(x);   // walks the elements xs had before the loop
#ifndef FERRY_DETAILS_MUTABLE_CONTAINER_H_
#define FERRY_DETAILS_MUTABLE_CONTAINER_H_

#include <cstddef>   // ptrdiff_t
#include <cstdint>   // int32_t
#include <iterator>  // forward_iterator_tag
#include <optional>  // TryCast
#include <string>    // MismatchDetail
#include <utility>   // move

#include "ferry/any.h"

namespace ferry {

template <typename T>
class List;
template <typename K, typename V>
class Dict;

namespace details {

/// Walks a `Snapshot` (`Array<T>` for a List, `Map<K, V>` for a Dict) it owns, dereferencing as
/// the snapshot's own iterator does. A default-constructed one is the `end()` sentinel: every
/// iterator compares equal to it once its own snapshot is exhausted.
template <typename Snapshot>
class SnapshotIterator {
  using Inner = typename Snapshot::iterator;

 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = typename Inner::value_type;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = typename Inner::reference;

  SnapshotIterator() = default;
  reference operator*() const { return *it_; }
  /// The stored key and value cells of a Dict's entry, without conversion (Dict only).
  const Any& key() const { return it_.key(); }
  const Any& value() const { return it_.value(); }
  SnapshotIterator& operator++() { return ++it_, *this; }
  SnapshotIterator operator++(int) {
    SnapshotIterator old = *this;
    ++it_;
    return old;
  }
  bool operator==(const SnapshotIterator& other) const {
    if (sentinel_ || other.sentinel_) return Done() == other.Done();
    return it_ == other.it_;
  }
  bool operator!=(const SnapshotIterator& other) const { return !(*this == other); }

 private:
  template <typename T>
  friend class ferry::List;
  template <typename K, typename V>
  friend class ferry::Dict;
  explicit SnapshotIterator(Snapshot snapshot)
      : snapshot_(std::move(snapshot)), it_(snapshot_.begin()), sentinel_(false) {}
  /// At `it` of `snapshot` (moving an Array or a Map keeps its storage: `it` stays valid).
  SnapshotIterator(Snapshot snapshot, Inner it)
      : snapshot_(std::move(snapshot)), it_(it), sentinel_(false) {}
  bool Done() const { return sentinel_ || it_ == snapshot_.end(); }

  Snapshot snapshot_;
  Inner it_;
  bool sentinel_ = true;
};

/// The TypeTraits of a mutable container `C` (`List<T>`, `Dict<K, V>`) whose `Node` keeps its
/// items in a `Storage` (`Array<T>`, `Map<K, V>`). It travels as its node. Reading it back
/// checks every item through Storage's traits (O(n)) and shares the container; a cell holding
/// a Storage (a Python list or dict, say) is accepted too, as the new container `FromStorage`
/// makes holding its items (a copy the caller does not see mutated). `TypeStr` is C's own.
template <typename C, typename Node, typename Storage,
          ObjectPtr<Object> (*FromStorage)(const FerryAny*)>
struct MutableContainerTraits {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const C& src, FerryAny* out) {
    TypeTraits<ObjectRef>::CopyToAnyView(src, out);
  }
  static void MoveToAny(C src, FerryAny* out) {
    TypeTraits<ObjectRef>::MoveToAny(std::move(src), out);
  }
  static bool Check(const FerryAny* v) {
    FerryAny items;
    return ItemsOf(v, &items) && TypeTraits<Storage>::Check(&items);
  }
  static std::optional<C> TryCast(const FerryAny* v) {
    if (!Check(v)) return std::nullopt;
    if (v->type_index == kStorageIndex) return C(FromStorage(v));
    return C(ObjectUnsafe::PtrFromRaw<Object>(ObjectUnsafe::FromHeader(v->v_obj)));
  }
  static std::string MismatchDetail(const FerryAny* v) {
    FerryAny items;
    return ItemsOf(v, &items) ? TypeTraits<Storage>::MismatchDetail(&items) : std::string();
  }

 private:
  static constexpr int32_t kStorageIndex = Storage::ContainerType::RuntimeTypeIndex();

  /// A cell borrowing the items' storage of a C or a Storage; false for anything else.
  static bool ItemsOf(const FerryAny* v, FerryAny* out) {
    if (v->type_index == kStorageIndex) {
      *out = *v;
      return true;
    }
    if (v->type_index != Node::RuntimeTypeIndex()) return false;
    const auto* node = static_cast<const Node*>(ObjectUnsafe::FromHeader(v->v_obj));
    TypeTraits<ObjectRef>::CopyToAnyView(node->data, out);
    return true;
  }
};

}  // namespace details
}  // namespace ferry

#endif  // FERRY_DETAILS_MUTABLE_CONTAINER_H_
