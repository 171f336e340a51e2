/// \file container.cc
/// Array, Map and Shape storage and the value hashing and equality behind Map keys. Their globals
/// and C ABI are in container_globals.cc, the short text form of values in any_repr.cc.
#include <algorithm>   // std::max
#include <cmath>       // std::isnan
#include <cstdint>     // PTRDIFF_MAX
#include <cstdlib>     // malloc, realloc, free: arrays grow in place
#include <cstring>     // memcpy
#include <functional>  // std::hash<std::string_view>
#include <new>         // std::bad_alloc

#include "ferry/container/array.h"
#include "ferry/container/map.h"
#include "ferry/container/optional.h"
#include "ferry/container/shape.h"
#include "ferry/container/variant.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/tensor.h"
#include "leak_check_internal.h"

namespace ferry {

// ---------------------------------------------------------------------------------------------
// Array

void ArrayObj::ThrowIndexError(int64_t index, int64_t size) {
  FERRY_THROW(IndexError) << "index " << index << " out of range for an array of size " << size;
}

namespace details {

namespace {

/// The size of an ArrayObj block with room for `capacity` cells.
size_t ArrayBytes(int64_t capacity) {
  if (capacity < 0) FERRY_THROW(ValueError) << "Array: negative capacity " << capacity;
  if (static_cast<uint64_t>(capacity) > (PTRDIFF_MAX - sizeof(ArrayObj)) / sizeof(Any)) {
    FERRY_THROW(MemoryError) << "Array: capacity " << capacity << " overflows the address space";
  }
  return sizeof(ArrayObj) + static_cast<size_t>(capacity) * sizeof(Any);
}

void DestroyArray(FerryObject* header) noexcept {
  LeakCheckCount(header->type_index, -1);
  auto* array = static_cast<ArrayObj*>(ObjectUnsafe::FromHeader(header));
  array->~ArrayObj();
  std::free(array);
}

/// The deleter of the arrays New makes. Its cells may own objects, so it runs under the
/// release-depth guard; it also marks the block as malloc'ed, so PrepareWrite may realloc it.
void DeleteArray(FerryObject* header) noexcept { ObjectFreeGuarded(header, &DestroyArray); }

}  // namespace

ObjectPtr<Object> ArrayAccess::New(int64_t capacity) {
  // malloc rather than operator new, so that PrepareWrite can grow the block with realloc.
  void* mem = std::malloc(ArrayBytes(capacity));
  if (mem == nullptr) throw std::bad_alloc();
  auto* array = new (mem) ArrayObj(capacity);
  ObjectUnsafe::SetHeader(array, kFerryArray, &DeleteArray);
  return ObjectUnsafe::PtrFromNew<Object>(array);
}

ArrayObj* ArrayAccess::PrepareWrite(ObjectPtr<Object>* data, int64_t capacity) {
  auto* old = static_cast<ArrayObj*>(data->get());
  const bool unique = data->unique();
  int64_t new_capacity = old->capacity_;
  if (capacity > new_capacity) new_capacity = std::max<int64_t>({capacity, 2 * new_capacity, 4});
  if (unique && ObjectUnsafe::GetHeader(old)->deleter == &DeleteArray) {
    // Nobody else sees the array and its bytes (header and cells) are trivially relocatable:
    // grow the block with realloc, which at the top of the heap extends it where it is.
    // Allocate-copy-free instead left every outgrown block free below the new one; freeing
    // the final array then made a free run of about twice its size, glibc trimmed it off the
    // heap (brk), and the next array faulted every page in again: a push_back loop spent
    // most of its time in the kernel.
    void* grown = std::realloc(static_cast<void*>(old), ArrayBytes(new_capacity));
    if (grown == nullptr) throw std::bad_alloc();
    ObjectUnsafe::MoveToOwned(data);  // the block may have moved; the reference stays ours
    auto* array = static_cast<ArrayObj*>(grown);
    array->capacity_ = new_capacity;
    *data = ObjectUnsafe::PtrFromOwned<Object>(array);
    return array;
  }
  ObjectPtr<Object> fresh = New(new_capacity);
  auto* array = static_cast<ArrayObj*>(fresh.get());
  if (unique) {
    // Nobody else sees the old cells: move their bytes and leave the old array empty.
    std::memcpy(static_cast<void*>(array->cells()), static_cast<void*>(old->cells()),
                static_cast<size_t>(old->size_) * sizeof(Any));
    array->size_ = old->size_;
    old->size_ = 0;
  } else {
    for (const Any& cell : *old) array->EmplaceBack(cell);
  }
  *data = std::move(fresh);
  return array;
}

const ObjectPtr<Object>& EmptyArray() {
  // Never destroyed, so Array() stays valid during static destruction.
  static const ObjectPtr<Object>* empty =
      LeakCheckExempt(new ObjectPtr<Object>(ArrayAccess::New(0)));
  return *empty;
}

// ---------------------------------------------------------------------------------------------
// Hashing and equality of values (Map keys)

namespace {

uint64_t Mix(uint64_t x) {
  // The splitmix64 finalizer: every input bit reaches every output bit.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// The content of a Bytes cell: bytes are keyed by content, as strings are.
inline std::string_view BytesContent(const FerryAny* v) {
  const auto* bytes = static_cast<const BytesObj*>(ObjectUnsafe::FromHeader(v->v_obj));
  return std::string_view(bytes->data, static_cast<size_t>(bytes->size));
}

inline uint64_t HashCell(const FerryAny* v) {
  std::string_view text;
  if (AnyToStringView(v, &text)) return std::hash<std::string_view>()(text);
  switch (v->type_index) {
    case kFerryNone:
      return Mix(0);
    case kFerryInt:
    case kFerryBool:
    case kFerryOpaquePtr:
      return Mix(static_cast<uint64_t>(v->v_int64) ^ (static_cast<uint64_t>(v->type_index) << 56));
    case kFerryFloat: {
      // Equal floats hash alike: -0.0 == 0.0.
      double d = v->v_float64 == 0.0 ? 0.0 : v->v_float64;
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      return Mix(bits ^ (uint64_t{kFerryFloat} << 56));
    }
    case kFerryDataType:
      return Mix((uint64_t{v->v_dtype.code} << 32) | (uint64_t{v->v_dtype.bits} << 16) |
                 v->v_dtype.lanes | (uint64_t{kFerryDataType} << 56));
    case kFerryBytes:
      // Mixed with the type index so that b"a" and "a" (different keys) seldom share a hash.
      return Mix(std::hash<std::string_view>()(BytesContent(v)) ^ (uint64_t{kFerryBytes} << 56));
    default:
      return Mix(reinterpret_cast<uint64_t>(v->v_obj));
  }
}

inline bool EqualCell(const FerryAny* a, const FerryAny* b) {
  std::string_view ta, tb;
  if (AnyToStringView(a, &ta)) return AnyToStringView(b, &tb) && ta == tb;
  if (a->type_index != b->type_index) return false;
  switch (a->type_index) {
    case kFerryNone:
      return true;
    case kFerryFloat:
      return a->v_float64 == b->v_float64 ||
             (std::isnan(a->v_float64) && std::isnan(b->v_float64) && a->v_int64 == b->v_int64);
    case kFerryDataType:
      return a->v_dtype.code == b->v_dtype.code && a->v_dtype.bits == b->v_dtype.bits &&
             a->v_dtype.lanes == b->v_dtype.lanes;
    case kFerryBytes:
      return a->v_obj == b->v_obj || BytesContent(a) == BytesContent(b);
    default:
      return a->v_int64 == b->v_int64;  // ints, bools, pointers and object identity
  }
}

}  // namespace

uint64_t AnyHash(const FerryAny* value) noexcept { return HashCell(value); }
bool AnyEqual(const FerryAny* a, const FerryAny* b) noexcept { return EqualCell(a, b); }

void ThrowEmptyOptional(const std::string& type) {
  FERRY_THROW(ValueError) << "Optional[" << type << "] has no value";
}

}  // namespace details

// ---------------------------------------------------------------------------------------------
// Map
//
// The slot table is searched as CPython's dict searches its own: the first slot is
// `hash & mask`, the next ones `i = (5 * i + 1 + perturb) & mask` with `perturb` starting at the
// hash and shifted right by 5 each step, so every bit of the hash soon decides where the search
// goes and the search visits every slot in the end. Integers hash to their own value, as in
// Python and std::hash: keys that are near each other (ids, counters, indexes) land in nearby
// slots and a loop over them walks the table in order instead of missing the cache (and the
// TLB) on every key; the perturbation keeps patterns such as multiples of the table size from
// piling up, which plain linear probing over an identity hash would not. Other keys hash by the
// mixing hash of AnyHash. An erased key leaves a tombstone that later inserts reuse.

namespace {
constexpr size_t kMinSlots = 8;
constexpr uint64_t kIndexMask = 0xffffffffULL;
/// An erased slot: the index bits all ones (no entry has that index, see Insert), no tag.
constexpr uint64_t kTombstone = kIndexMask;
constexpr unsigned kPerturbShift = 5;

/// The hash a map stores and searches by: an integer's own value, else AnyHash.
inline uint64_t SlotHash(const FerryAny* key) {
  if (key->type_index == kFerryInt) return static_cast<uint64_t>(key->v_int64);
  return details::HashCell(key);
}

/// The upper half of a slot: 32 bits that depend on every bit of the hash (an integer's own
/// value has its high bits all zero), compared before an entry is read.
inline uint64_t SlotTag(uint64_t hash) { return (hash * 0x9e3779b97f4a7c15ULL) & ~kIndexMask; }

}  // namespace

MapObj::MapObj(const MapObj& other) : Object() {
  GrowEntries(other.size_);
  for (const Entry* e = other.entries_begin(); e != other.entries_end(); ++e) {
    if (!IsErased(*e)) PushEntry(e->key, e->value, e->hash);
  }
  size_ = entry_count_;
  if (size_ != 0) Rehash(slots_for(size_));
}

MapObj::~MapObj() {
  for (size_t k = 0; k < entry_count_; ++k) entries_[k].~Entry();
  std::free(entries_);
  std::free(slots_);
}

void MapObj::GrowEntries(size_t capacity) {
  if (capacity <= entry_capacity_) return;
  // Relocates the entries byte by byte (see entries_ in map.h).
  void* grown = std::realloc(static_cast<void*>(entries_), capacity * sizeof(Entry));
  if (grown == nullptr) throw std::bad_alloc();
  entries_ = static_cast<Entry*>(grown);
  entry_capacity_ = capacity;
}

void MapObj::PushEntry(Any key, Any value, uint64_t hash) {
  if (entry_count_ == entry_capacity_) {
    if (entry_count_ >= kIndexMask - 1) FERRY_THROW(MemoryError) << "Map: too many entries";
    GrowEntries(std::max<size_t>(8, 2 * entry_capacity_));
  }
  new (entries_ + entry_count_) Entry{std::move(key), std::move(value), hash};
  ++entry_count_;
}

namespace {

/// The search of the top of the file, inlined into each caller with its own test for "this
/// entry holds the key" (`same`, called only for an entry whose hash equals `hash`). Returns the
/// slot holding the key or SIZE_MAX; fills `*free` as MapObj::Probe says.
template <typename Same>
[[gnu::always_inline]] inline size_t Search(const uint64_t* slots, size_t mask,
                                            const MapObj::Entry* entries, uint64_t hash, Same same,
                                            size_t* free) {
  const uint64_t tag = SlotTag(hash);
  size_t tombstone = SIZE_MAX;
  uint64_t perturb = hash;
  for (size_t i = hash & mask;; perturb >>= kPerturbShift, i = (i * 5 + 1 + perturb) & mask) {
    const uint64_t slot = slots[i];
    if (FERRY_LIKELY((slot & ~kIndexMask) == tag && slot != kTombstone && slot != 0)) {
      const MapObj::Entry& e = entries[(slot & kIndexMask) - 1];
      if (e.hash == hash && same(e.key.raw())) return i;
    } else if (slot == 0) {
      if (free != nullptr) *free = tombstone != SIZE_MAX ? tombstone : i;
      return SIZE_MAX;
    } else if (slot == kTombstone && tombstone == SIZE_MAX) {
      tombstone = i;
    }
  }
}

}  // namespace

namespace {

/// The search for a key that is not an integer, out of line so that the integer search of its
/// callers stays small.
[[gnu::noinline]] size_t SearchAny(const uint64_t* slots, size_t mask, const MapObj::Entry* entries,
                                   const FerryAny* key, uint64_t hash, size_t* free) {
  return Search(
      slots, mask, entries, hash, [key](const FerryAny* k) { return details::EqualCell(k, key); },
      free);
}

/// The search for an integer key: its hash is its value, so an entry with the same hash and an
/// integer key is it. The slot's tag is not looked at: the hash in the entry says as much.
[[gnu::always_inline]] inline size_t SearchInt(const uint64_t* slots, size_t mask,
                                               const MapObj::Entry* entries, uint64_t hash,
                                               size_t* free) {
  size_t tombstone = SIZE_MAX;
  uint64_t perturb = hash;
  for (size_t i = hash & mask;; perturb >>= kPerturbShift, i = (i * 5 + 1 + perturb) & mask) {
    const uint64_t slot = slots[i];
    const uint64_t index = slot & kIndexMask;
    if (FERRY_LIKELY(index - 1 < kIndexMask - 1)) {  // 1 <= index < kIndexMask: a live slot
      const MapObj::Entry& e = entries[index - 1];
      if (e.hash == hash && e.key.type_index() == kFerryInt) return i;
    } else if (slot == 0) {
      if (free != nullptr) *free = tombstone != SIZE_MAX ? tombstone : i;
      return SIZE_MAX;
    } else if (tombstone == SIZE_MAX) {  // a tombstone
      tombstone = i;
    }
  }
}

}  // namespace

size_t MapObj::Probe(const FerryAny* key, uint64_t hash, size_t* free) const {
  const size_t mask = slot_count_ - 1;
  if (key->type_index == kFerryInt) return SearchInt(slots_, mask, entries_, hash, free);
  return SearchAny(slots_, mask, entries_, key, hash, free);
}

namespace {

/// Find for a key that is not an integer, out of line so that the integer path of Find needs
/// no stack frame.
[[gnu::noinline]] const Any* FindAny(const uint64_t* slots, size_t mask,
                                     const MapObj::Entry* entries, const FerryAny* key) {
  const size_t i = SearchAny(slots, mask, entries, key, details::HashCell(key), nullptr);
  return i == SIZE_MAX ? nullptr : &entries[(slots[i] & kIndexMask) - 1].value;
}

}  // namespace

const Any* MapObj::Find(const AnyView& key) const {
  if (size_ == 0) return nullptr;
  const FerryAny* k = key.raw();
  const size_t mask = slot_count_ - 1;
  if (k->type_index != kFerryInt) return FindAny(slots_, mask, entries_, k);
  const size_t i = SearchInt(slots_, mask, entries_, static_cast<uint64_t>(k->v_int64), nullptr);
  return i == SIZE_MAX ? nullptr : &entries_[(slots_[i] & kIndexMask) - 1].value;
}

const Any& MapObj::At(const AnyView& key) const {
  const Any* value = Find(key);
  if (value == nullptr) {
    FERRY_THROW(KeyError) << details::DescribeKey(key.raw()) << " is not in the map (size " << size_
                          << ")";
  }
  return *value;
}

void MapObj::Insert(Any key, Any value) {
  if (FERRY_UNLIKELY(key.type_index() == kFerryFloat && std::isnan(key.raw()->v_float64))) {
    // Python keeps NaN keys apart by object identity, which Ferry values do not have: a NaN
    // key could never be found again by value, and collapsing all NaNs into one key would
    // lose entries. So it is refused, before anything changes.
    FERRY_THROW(ValueError) << "a NaN map key is refused: NaN equals nothing, not even itself, "
                               "so the entry could not be found again";
  }
  // Keep the slots in use (tombstones too) and the entry table (erased entries too) at most
  // half the slot count, so searches stay short and always end at an empty slot.
  const size_t load = std::max(entry_count_, size_ + tombstones_);
  if ((load + 1) * 2 > slot_count_) Rehash(std::max(kMinSlots, slots_for(size_ + 1)));
  const uint64_t hash = SlotHash(key.raw());
  size_t free = 0;
  const size_t i = Probe(key.raw(), hash, &free);
  if (i != SIZE_MAX) {
    entries_[(slots_[i] & kIndexMask) - 1].value = std::move(value);
    return;
  }
  PushEntry(std::move(key), std::move(value), hash);
  if (slots_[free] == kTombstone) --tombstones_;
  slots_[free] = SlotTag(hash) | entry_count_;
  ++size_;
}

bool MapObj::Erase(const AnyView& key) {
  if (size_ == 0) return false;
  const size_t i = Probe(key.raw(), SlotHash(key.raw()), nullptr);
  if (i == SIZE_MAX) return false;
  const size_t index = (slots_[i] & kIndexMask) - 1;
  // A tombstone, not an empty slot: searches that passed this slot must go on past it.
  slots_[i] = kTombstone;
  ++tombstones_;
  Entry& e = entries_[index];
  Any key_cell = std::move(e.key);  // released after the entry is marked
  Any value_cell = std::move(e.value);
  reinterpret_cast<FerryAny*>(&e.key)->type_index = kErased;
  --size_;
  // Trailing erased entries can go at once (they own nothing); others wait for the next
  // rehash.
  while (entry_count_ != 0 && IsErased(entries_[entry_count_ - 1])) --entry_count_;
  return true;
}

void MapObj::Clear() {
  // Emptied before the entries are released, so a destructor that looks at the map sees it
  // empty.
  Entry* entries = entries_;
  const size_t count = entry_count_;
  entry_count_ = 0;
  size_ = 0;
  tombstones_ = 0;
  std::free(slots_);
  slots_ = nullptr;
  slot_count_ = 0;
  for (size_t k = 0; k < count; ++k) entries[k].~Entry();
}

void MapObj::Reserve(size_t count) {
  if (count >= kIndexMask - 1) {  // also keeps slots_for's doubling from overflowing
    FERRY_THROW(MemoryError) << "Map: cannot reserve " << count << " entries";
  }
  if (count * 2 > slot_count_) Rehash(slots_for(std::max(count, size_)));
  GrowEntries(count);
}

size_t MapObj::slots_for(size_t count) {
  size_t slots = kMinSlots;
  while (slots < count * 2) slots *= 2;
  return slots;
}

void MapObj::Rehash(size_t slot_count) {
  auto* slots = static_cast<uint64_t*>(std::calloc(slot_count, sizeof(uint64_t)));
  if (slots == nullptr) throw std::bad_alloc();
  std::free(slots_);
  slots_ = slots;
  slot_count_ = slot_count;
  tombstones_ = 0;
  if (size_ != entry_count_) {
    // Drop the erased entries (they own nothing): move the live ones down byte by byte.
    size_t live = 0;
    for (size_t k = 0; k < entry_count_; ++k) {
      if (IsErased(entries_[k])) continue;
      if (live != k) std::memcpy(static_cast<void*>(entries_ + live), entries_ + k, sizeof(Entry));
      ++live;
    }
    entry_count_ = live;
  }
  const size_t mask = slot_count - 1;
  for (size_t k = 0; k < entry_count_; ++k) {
    const uint64_t hash = entries_[k].hash;
    uint64_t perturb = hash;
    size_t i = hash & mask;
    while (slots[i] != 0) {
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
    slots[i] = SlotTag(hash) | (k + 1);
  }
}

namespace details {

const ObjectPtr<Object>& EmptyMap() {
  // Never destroyed, as EmptyArray.
  static const ObjectPtr<Object>* empty =
      LeakCheckExempt(new ObjectPtr<Object>(make_object<MapObj>()));
  return *empty;
}

MapObj* MapPrepareWrite(ObjectPtr<Object>* data) {
  if (!data->unique()) {
    *data = make_object<MapObj>(*static_cast<const MapObj*>(data->get()));
  }
  return static_cast<MapObj*>(data->get());
}

// ---------------------------------------------------------------------------------------------
// Shape

ObjectPtr<Object> MakeShape(const int64_t* data, size_t size) {
  if (data == nullptr && size != 0) FERRY_THROW(ValueError) << "Shape: nullptr with size " << size;
  ObjectPtr<ShapeObj> obj = make_inplace_array_object<ShapeObj, int64_t>(size);
  auto* dims = reinterpret_cast<int64_t*>(obj.get() + 1);
  if (size != 0) std::memcpy(dims, data, size * sizeof(int64_t));
  obj->data = dims;
  obj->size = size;
  return obj;
}

}  // namespace details

int64_t Shape::Product() const {
  int64_t product = 1;
  for (int64_t dim : *this) {
    if (__builtin_mul_overflow(product, dim, &product)) {
      FERRY_THROW(OverflowError) << "Shape" << *this << ": the product overflows int64";
    }
  }
  return product;
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape.data()[i];
  return os << (shape.size() == 1 ? ",)" : ")");
}

}  // namespace ferry
