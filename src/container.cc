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
  static const ObjectPtr<Object>* empty = new ObjectPtr<Object>(ArrayAccess::New(0));
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

namespace {
constexpr size_t kMinSlots = 8;
constexpr uint64_t kIndexMask = 0xffffffffULL;

inline uint64_t SlotTag(uint64_t hash) { return hash & ~kIndexMask; }
}  // namespace

MapObj::MapObj(const MapObj& other) : Object() {
  entries_.reserve(other.size_);
  for (const Entry& e : other.entries_) {
    if (!IsErased(e)) entries_.push_back(e);
  }
  size_ = entries_.size();
  if (size_ != 0) Rehash(slots_for(size_));
}

size_t MapObj::Probe(const FerryAny* key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  const uint64_t tag = SlotTag(hash);
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return i;
    if ((slot & ~kIndexMask) == tag) {
      const Entry& e = entries_[(slot & kIndexMask) - 1];
      if (e.hash == hash && details::EqualCell(e.key.raw(), key)) return i;
    }
  }
}

const Any* MapObj::Find(const AnyView& key) const {
  if (size_ == 0) return nullptr;
  const uint64_t hash = details::HashCell(key.raw());
  const uint64_t slot = slots_[Probe(key.raw(), hash)];
  return slot == 0 ? nullptr : &entries_[(slot & kIndexMask) - 1].value;
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
  // Keep the load (counting erased entries) at most one half, so probes stay short.
  if ((entries_.size() + 1) * 2 > slots_.size()) {
    const size_t live = size_ + 1;
    Rehash(std::max(kMinSlots, slots_for(live)));
  }
  const uint64_t hash = details::HashCell(key.raw());
  const size_t i = Probe(key.raw(), hash);
  if (slots_[i] != 0) {
    entries_[(slots_[i] & kIndexMask) - 1].value = std::move(value);
    return;
  }
  if (entries_.size() >= kIndexMask - 1) FERRY_THROW(MemoryError) << "Map: too many entries";
  entries_.push_back(Entry{std::move(key), std::move(value), hash});
  slots_[i] = SlotTag(hash) | entries_.size();
  ++size_;
}

bool MapObj::Erase(const AnyView& key) {
  if (size_ == 0) return false;
  const uint64_t hash = details::HashCell(key.raw());
  size_t hole = Probe(key.raw(), hash);
  if (slots_[hole] == 0) return false;
  const size_t index = (slots_[hole] & kIndexMask) - 1;
  // Backward-shift deletion: pull later slots of the probe run into the hole, so lookups
  // never meet a gap before their key and no tombstones build up in the slot table.
  const size_t mask = slots_.size() - 1;
  for (size_t j = (hole + 1) & mask; slots_[j] != 0; j = (j + 1) & mask) {
    const size_t home = entries_[(slots_[j] & kIndexMask) - 1].hash & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = 0;
  Entry& e = entries_[index];
  Any key_cell = std::move(e.key);  // released after the entry is marked
  Any value_cell = std::move(e.value);
  reinterpret_cast<FerryAny*>(&e.key)->type_index = kErased;
  --size_;
  // Trailing erased entries can go at once; others wait for the next rehash.
  while (!entries_.empty() && IsErased(entries_.back())) entries_.pop_back();
  return true;
}

void MapObj::Clear() {
  entries_.clear();
  slots_.clear();
  size_ = 0;
}

void MapObj::Reserve(size_t count) {
  if (count >= kIndexMask - 1) {  // also keeps slots_for's doubling from overflowing
    FERRY_THROW(MemoryError) << "Map: cannot reserve " << count << " entries";
  }
  if (count * 2 > slots_.size()) Rehash(slots_for(std::max(count, size_)));
  entries_.reserve(count);
}

size_t MapObj::slots_for(size_t count) {
  size_t slots = kMinSlots;
  while (slots < count * 2) slots *= 2;
  return slots;
}

void MapObj::Rehash(size_t slot_count) {
  if (size_ != entries_.size()) {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [](const Entry& e) { return IsErased(e); }),
                   entries_.end());
  }
  slots_.assign(slot_count, 0);
  const size_t mask = slot_count - 1;
  for (size_t k = 0; k < entries_.size(); ++k) {
    size_t i = entries_[k].hash & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = SlotTag(entries_[k].hash) | (k + 1);
  }
}

namespace details {

const ObjectPtr<Object>& EmptyMap() {
  static const ObjectPtr<Object>* empty = new ObjectPtr<Object>(make_object<MapObj>());
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
