/// \file ferry/details/snapshot_iterator.h
/// The iterator of `List` and `Dict`: it keeps the storage the container held when the walk
/// began (an `Array` or a `Map` sharing it: an O(1) snapshot, as `ToArray` / `ToMap`), so a
/// loop that writes the container, even clears it, neither invalidates the walk nor sees the
/// write (the container's first write copies the storage once). Internal: include
/// ferry/container/list.h or ferry/container/dict.h instead.
///
///     for (int64_t x : xs) xs.push_back(x);   // walks the elements xs had before the loop
#ifndef FERRY_DETAILS_SNAPSHOT_ITERATOR_H_
#define FERRY_DETAILS_SNAPSHOT_ITERATOR_H_

#include <cstddef>   // ptrdiff_t
#include <iterator>  // forward_iterator_tag
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

}  // namespace details
}  // namespace ferry

#endif  // FERRY_DETAILS_SNAPSHOT_ITERATOR_H_
