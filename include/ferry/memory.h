/// \file ferry/memory.h
/// Object allocation: `make_object<T>(args...)` and `make_inplace_array_object<T, Elem>(n, ...)`
/// (an object followed by `n` elements in the same block, as String and Array use).
///
/// The allocator sets the type index and the deleter; the deleter runs the destructor and frees
/// the block, so an object may be released by any library, whoever allocated it.
///
///     ObjectPtr<AddNode> n = make_object<AddNode>();
#ifndef FERRY_MEMORY_H_
#define FERRY_MEMORY_H_

#include <atomic>       // LibraryPin::live
#include <cstdint>      // int64_t
#include <cstdlib>      // std::malloc, std::free
#include <new>          // placement new, std::align_val_t, std::bad_alloc
#include <type_traits>  // std::is_base_of_v, std::is_trivially_destructible_v
#include <utility>      // std::forward

#include "ferry/object.h"

namespace ferry {
namespace details {

template <typename T>
inline constexpr bool kOverAligned = alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;

/// An object's block: malloc and free for the usual alignment (the PLT hop and the checks of
/// libstdc++'s operator new and delete wrappers cost about 2 ns per make+drop here, as much as
/// the rest of it; bench/ops.h's MakeDrop against tvm-ffi's make_object, which uses malloc too),
/// operator new with the alignment for over-aligned types. Out of memory throws
/// std::bad_alloc either way.
template <typename T>
inline void* AllocateBytes(size_t size) {
  if constexpr (kOverAligned<T>) {
    return ::operator new(size, std::align_val_t(alignof(T)));
  } else {
    void* mem = std::malloc(size);
    if (mem == nullptr) throw std::bad_alloc();
    return mem;
  }
}

template <typename T>
inline void FreeBytes(void* ptr) {
  if constexpr (kOverAligned<T>) {
    ::operator delete(ptr, std::align_val_t(alignof(T)));
  } else {
    std::free(ptr);
  }
}

/// Objects of up to this many bytes made by make_object (and strings of up to 31 bytes) take
/// their block from a per-thread cache of free blocks instead of malloc: a few instructions
/// instead of a malloc and a free. Blocks come in size classes of 24, 40, 56 and 64 bytes (the
/// usable sizes of glibc's chunks, so a cached object takes the memory malloc would give it). A
/// thread keeps at most 256 free blocks per class, freed when it exits; a block released on
/// another thread joins that thread's cache.
inline constexpr size_t kCachedBlockBytes = 64;
inline constexpr int kCachedBlockClasses = 4;
/// The size class of an object of `size` bytes (16 to 64, a multiple of 8).
constexpr int CachedBlockClass(size_t size) { return static_cast<int>((size + 7) / 16) - 1; }
/// A block of class `size_class` from this thread's cache, or from operator new.
FERRY_DLL void* TakeCachedBlock(int size_class);
/// Returns a block of TakeCachedBlock(size_class) to this thread's cache (or to operator delete
/// when full).
FERRY_DLL void GiveCachedBlock(void* block, int size_class) noexcept;

/// Whether make_object<T> takes its block from the cache.
template <typename T>
inline constexpr bool kCachedBlock = !kOverAligned<T> && sizeof(T) <= kCachedBlockBytes;
template <typename T>
inline constexpr int kBlockClass = CachedBlockClass(sizeof(T));

/// Runs the destructor of a `T` made by the allocators below and frees its block.
template <typename T>
void ObjectDestroy(FerryObject* header) noexcept {
  // The last owner's drop leaves the count at 0 (at 1 when a never-shared object is freed
  // without a decrement); more means a holder still points at the block being freed.
  FERRY_DCHECK(__atomic_load_n(&header->ref_counter, __ATOMIC_RELAXED) <= 1);
  LeakCheckCount(header->type_index, -1);
  T* obj = static_cast<T*>(ObjectUnsafe::FromHeader(header));
  obj->~T();
  FreeBytes<T>(obj);
}

/// ObjectDestroy for a `T` whose block came from TakeCachedBlock (make_object of a small T).
template <typename T>
void ObjectDestroyCached(FerryObject* header) noexcept {
  FERRY_DCHECK(__atomic_load_n(&header->ref_counter, __ATOMIC_RELAXED) <= 1);
  LeakCheckCount(header->type_index, -1);
  T* obj = static_cast<T*>(ObjectUnsafe::FromHeader(header));
  obj->~T();
  GiveCachedBlock(obj, kBlockClass<T>);
}

/// The deleter stored in the header of every `T` made by the allocators below. A trivial
/// destructor cannot release other objects, so such a `T` skips the release-depth guard (a
/// call into libferry and a thread-local counter) and is freed at once.
template <typename T, bool kCached = false>
void ObjectDeleter(FerryObject* header) noexcept {
  constexpr auto destroy = kCached ? &ObjectDestroyCached<T> : &ObjectDestroy<T>;
  if constexpr (std::is_trivially_destructible_v<T>) {
    destroy(header);
  } else {
    ObjectFreeGuarded(header, destroy);
  }
}

/// What keeps a library loaded by LoadLibrary mapped after UnloadLibrary: the number of live
/// objects its code made (their deleters, and for Functions their code, live in it). Owned by
/// libferry and never freed, so a late decrement never writes freed memory.
struct LibraryPin {
  std::atomic<int64_t> live{0};
  /// Set by UnloadLibrary; only then does a count reaching zero ask for the close.
  std::atomic<bool> unloading{false};
};

/// The pin of the library LoadLibrary is loading on this thread, or nullptr (the executable,
/// libferry, a library linked or dlopen-ed directly: none of these is ever unloaded).
FERRY_DLL LibraryPin* PinOfLoadingLibrary() noexcept;
/// Drops one count of `pin`; at zero, when the library is unloaded, libferry closes it soon
/// after from a thread of its own.
FERRY_DLL void LibraryPinRelease(LibraryPin* pin) noexcept;

/// The pin of the shared library this copy of the header was compiled into: one per library
/// (hidden), initialized before any user static of the library that includes this header.
__attribute__((visibility("hidden"))) inline LibraryPin* const library_pin = PinOfLoadingLibrary();

/// Destroys and frees an object made by a library that LoadLibrary loaded, then drops its count
/// on the library. The drop is the last thing it does, in libferry: optimized, it is a tail
/// call, so no instruction of the library runs after the count may reach zero (libferry also
/// waits a moment before it closes the library, for unoptimized builds). It is the function
/// ObjectFreeGuarded runs, so an object whose free that guard defers keeps its count until it
/// is really freed.
template <typename T, bool kCached>
void PinnedObjectDestroy(FerryObject* header) noexcept {
  if constexpr (kCached) {
    ObjectDestroyCached<T>(header);
  } else {
    ObjectDestroy<T>(header);
  }
  LibraryPinRelease(library_pin);
}

/// ObjectDeleter for an object made by a library that LoadLibrary loaded.
template <typename T, bool kCached>
void PinnedObjectDeleter(FerryObject* header) noexcept {
  if constexpr (std::is_trivially_destructible_v<T>) {
    PinnedObjectDestroy<T, kCached>(header);
  } else {
    ObjectFreeGuarded(header, &PinnedObjectDestroy<T, kCached>);
  }
}

/// Constructs a `T` in `size` fresh bytes (a cached block when `kCached`: then `size` is
/// sizeof(T)); frees them again if the constructor throws.
template <typename T, bool kCached, typename... Args>
inline ObjectPtr<T> AllocateObject(size_t size, Args&&... args) {
  static_assert(std::is_base_of_v<Object, T>, "make_object<T>(): T must derive from Object");
  // Registration may throw; do it before any memory is taken.
  const int32_t type_index = T::RuntimeTypeIndex();
  void* mem = kCached ? TakeCachedBlock(kBlockClass<T>) : AllocateBytes<T>(size);
  T* obj;
  try {
    obj = new (mem) T(std::forward<Args>(args)...);
  } catch (...) {
    kCached ? GiveCachedBlock(mem, kBlockClass<T>) : FreeBytes<T>(mem);
    throw;
  }
  FERRY_DCHECK(type_index >= kFerryStaticObjectBegin);  // an object type, not a value's
  if (FERRY_UNLIKELY(library_pin != nullptr)) {         // made by a library that may be unloaded
    library_pin->live.fetch_add(1, std::memory_order_relaxed);
    ObjectUnsafe::SetHeader(obj, type_index, &PinnedObjectDeleter<T, kCached>);
  } else {
    ObjectUnsafe::SetHeader(obj, type_index, &ObjectDeleter<T, kCached>);
  }
  return ObjectUnsafe::PtrFromNew<T>(obj);
}
}  // namespace details

/// Allocates and constructs a `T` with a count of one.
template <typename T, typename... Args>
inline ObjectPtr<T> make_object(Args&&... args) {
  return details::AllocateObject<T, details::kCachedBlock<T>>(sizeof(T),
                                                              std::forward<Args>(args)...);
}

/// Allocates a `T` followed by room for `num_elems` elements of `ElemType` in one block.
/// `T` constructs and destroys the elements itself; the trailing storage starts at
/// `reinterpret_cast<ElemType*>(obj + 1)` (aligned for `ElemType`).
template <typename T, typename ElemType, typename... Args>
inline ObjectPtr<T> make_inplace_array_object(size_t num_elems, Args&&... args) {
  static_assert(alignof(ElemType) <= alignof(T) || sizeof(T) % alignof(ElemType) == 0,
                "make_inplace_array_object: elements after T would be misaligned");
  if (num_elems > (SIZE_MAX - sizeof(T)) / sizeof(ElemType)) {
    details::ThrowError("MemoryError", "make_inplace_array_object: size overflows size_t");
  }
  return details::AllocateObject<T, false>(sizeof(T) + num_elems * sizeof(ElemType),
                                           std::forward<Args>(args)...);
}

}  // namespace ferry

#endif  // FERRY_MEMORY_H_
