/// \file pointer_map_internal.h
/// A hash map from object addresses to small values, for the memo and mapping tables of
/// structural equality, hashing and SaveJSON, and the Python extension's map from objects to
/// their live Python wrappers. Open addressing with linear probing in one flat array: an insert
/// or a lookup touches one or two cache lines and never allocates per entry, where
/// std::unordered_map allocates a node per insert and chases a pointer per lookup. Erase shifts
/// the entries after the erased one back (no tombstones), so lookups stay as short as if the
/// erased key had never been inserted. Internal; not part of the API.
#ifndef FERRY_SRC_POINTER_MAP_INTERNAL_H_
#define FERRY_SRC_POINTER_MAP_INTERNAL_H_

#include <cstdint>  // uintptr_t
#include <utility>  // std::pair
#include <vector>   // the slots

namespace ferry {
namespace details {

template <typename V>
class PointerMap {
 public:
  /// The value of `key`, or nullptr.
  V* Find(const void* key) {
    if (size_ == 0) return nullptr;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return &slot.value;
      if (slot.key == nullptr) return nullptr;
    }
  }

  /// Inserts `key` -> `value` unless `key` is present; returns its value and whether it is new.
  /// `key` must not be null (null marks an empty slot).
  std::pair<V*, bool> Insert(const void* key, const V& value) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return {&slot.value, false};
      if (slot.key == nullptr) {
        slot.key = key;
        slot.value = value;
        ++size_;
        return {&slot.value, true};
      }
    }
  }

  /// Removes `key`; returns whether it was present.
  bool Erase(const void* key) {
    if (size_ == 0) return false;
    size_t hole = Home(key);
    for (;; hole = (hole + 1) & mask_) {
      if (slots_[hole].key == key) break;
      if (slots_[hole].key == nullptr) return false;
    }
    // Every entry of the run after the hole that may live at the hole (its home is not between
    // the hole and its slot) moves there, leaving a new hole behind.
    for (size_t i = (hole + 1) & mask_; slots_[i].key != nullptr; i = (i + 1) & mask_) {
      const size_t home = Home(slots_[i].key);
      if (((i - home) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

  size_t size() const { return size_; }

  /// Calls `fn(key, value)` for every entry, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Slot& slot : slots_) {
      if (slot.key != nullptr) fn(slot.key, slot.value);
    }
  }

 private:
  struct Slot {
    const void* key = nullptr;
    V value{};
  };

  /// Fibonacci hashing: objects are at least 16-byte aligned, so the low bits carry nothing
  /// and a multiply spreads the rest over the top bits.
  size_t Home(const void* key) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ULL) >>
                               shift_);
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t capacity = old.empty() ? 64 : old.size() * 2;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (const Slot& slot : old) {
      if (slot.key == nullptr) continue;
      size_t i = Home(slot.key);
      while (slots_[i].key != nullptr) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_POINTER_MAP_INTERNAL_H_
