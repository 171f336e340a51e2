/// \file string.cc
/// String allocation and the C ABI of strings.
#include <cstring>      // memcpy
#include <new>          // operator new, placement new
#include <type_traits>  // std::is_trivially_destructible_v

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "c_api_internal.h"
#include "ferry/any.h"
#include "ferry/memory.h"
#include "ferry/string.h"

namespace ferry {

// The C ABI promises this layout (FerryStringObject) to readers in other languages: the header,
// then `data` and `size`. (offsetof is not allowed on these classes; tests/c reads a String and
// a Bytes through the struct.)
static_assert(sizeof(StringObj) == sizeof(FerryStringObject), "StringObj is a FerryStringObject");
static_assert(sizeof(BytesObj) == sizeof(FerryStringObject), "BytesObj is a FerryStringObject");

namespace details {
namespace {

// Strings and byte strings of up to kSmallPayload bytes (names, keys, short messages: most of
// them), and objects of up to 64 bytes made by make_object (memory.h: TakeCachedBlock), take
// their block from a per-thread cache of free blocks rather than from the heap: a few
// instructions instead of a malloc and a free. There is one list per size class: blocks of 24,
// 40, 56 and 64 bytes, the usable sizes of glibc's 32- to 80-byte chunks, so an object takes no
// more memory than malloc(sizeof(T)) would give it. A thread keeps at most kCacheBlocks free
// blocks per class; one freed on another thread joins that thread's cache. Under
// AddressSanitizer a cached block is poisoned, so a use after release is still reported.
constexpr size_t kClassBytes[kCachedBlockClasses] = {24, 40, 56, 64};
constexpr int kStringClass = kCachedBlockClasses - 1;
constexpr size_t kSmallBlock = kClassBytes[kStringClass];
constexpr size_t kSmallPayload = kSmallBlock - sizeof(StringObj) - 1;  // and the NUL
constexpr int kCacheBlocks = 256;
static_assert(CachedBlockClass(24) == 0 && CachedBlockClass(40) == 1 && CachedBlockClass(56) == 2 &&
                  CachedBlockClass(kCachedBlockBytes) == kStringClass,
              "memory.h's classes are these blocks");
#if defined(__SANITIZE_ADDRESS__)
inline void Poison(void* block, int c) { ASAN_POISON_MEMORY_REGION(block, kClassBytes[c]); }
inline void Unpoison(void* block, int c) { ASAN_UNPOISON_MEMORY_REGION(block, kClassBytes[c]); }
#else
inline void Poison(void*, int) {}
inline void Unpoison(void*, int) {}
#endif
static_assert(sizeof(StringObj) == sizeof(BytesObj) && kSmallPayload >= 15, "the block holds both");

struct FreeBlock {
  FreeBlock* next;
};

/// One thread's free blocks. Plain data, so a thread's first use needs no initialization and each
/// use is one TLS lookup; the blocks are freed when the thread exits (BlockCacheDrain), after
/// which `closed` sends every block back to the heap.
struct BlockCache {
  FreeBlock* head[kCachedBlockClasses];
  int32_t count[kCachedBlockClasses];
  bool closed;
  bool drain_registered;
};
// initial-exec: an offset from the thread pointer instead of a __tls_get_addr call per use (a
// fifth of the cost of a short string). It takes 56 bytes of the static TLS space the loader
// keeps for libraries opened later (Python loads libferry with ferry._core), well within it.
[[gnu::tls_model("initial-exec")]] thread_local BlockCache t_cache;

struct BlockCacheDrain {
  ~BlockCacheDrain() {
    BlockCache& cache = t_cache;
    cache.closed = true;
    for (int c = 0; c < kCachedBlockClasses; ++c) {
      while (cache.head[c] != nullptr) {
        Unpoison(cache.head[c], c);
        FreeBlock* next = cache.head[c]->next;
        ::operator delete(cache.head[c]);
        cache.head[c] = next;
      }
      cache.count[c] = 0;
    }
  }
};

inline void PushBlock(BlockCache* cache, void* mem, int c) {
  auto* block = static_cast<FreeBlock*>(mem);
  block->next = cache->head[c];
  cache->head[c] = block;
  ++cache->count[c];
  Poison(block, c);
}

/// A thread's first cached block: arranges for the cache to be drained when the thread exits.
[[gnu::noinline]] void PushFirstBlock(BlockCache* cache, void* mem, int c) {
  cache->drain_registered = true;
  thread_local BlockCacheDrain drain;  // constructed here once, destroyed at thread exit
  (void)drain;
  PushBlock(cache, mem, c);
}

inline void* TakeBlock(int c = kStringClass) {
  BlockCache* cache = &t_cache;
  if (FreeBlock* block = cache->head[c]) {  // empty once closed
    Unpoison(block, c);
    cache->head[c] = block->next;
    --cache->count[c];
    return block;
  }
  return ::operator new(kClassBytes[c]);
}

inline void GiveBlock(void* mem, int c = kStringClass) {
  BlockCache* cache = &t_cache;
  if (cache->count[c] >= kCacheBlocks || cache->closed) {
    ::operator delete(mem);
  } else if (!cache->drain_registered) {
    PushFirstBlock(cache, mem, c);
  } else {
    PushBlock(cache, mem, c);
  }
}

template <typename T>
void SmallDeleter(FerryObject* header) noexcept {
  static_assert(std::is_trivially_destructible_v<T>, "released without the release guard");
  LeakCheckCount(header->type_index, -1);
  T* obj = static_cast<T*>(ObjectUnsafe::FromHeader(header));
  obj->~T();
  GiveBlock(obj);
}

/// Copies `size` <= 32 bytes into a block's payload with fixed-size moves, the first and the last
/// 16 or 8 bytes (which overlap), where a memcpy of a size known only at run time is a call.
/// Under 8 bytes it writes a whole zero-padded word: the payload has room for 32.
inline void CopyShort(char* dst, const char* src, size_t size) {
  if (size > 16) {
    char head[16], tail[16];
    std::memcpy(head, src, 16);
    std::memcpy(tail, src + size - 16, 16);
    std::memcpy(dst, head, 16);
    std::memcpy(dst + size - 16, tail, 16);
  } else if (size >= 8) {
    uint64_t head, tail;
    std::memcpy(&head, src, 8);
    std::memcpy(&tail, src + size - 8, 8);
    std::memcpy(dst, &head, 8);
    std::memcpy(dst + size - 8, &tail, 8);
  } else {
    uint64_t word = LoadShortBytes(src, size);
    std::memcpy(dst, &word, 8);
  }
}

/// A StringObj or BytesObj with one reference and room for `size` bytes and the NUL (written),
/// `data` pointing at the trailing bytes: a cached block up to kSmallPayload bytes, else malloc.
template <typename T>
T* AllocateBytesObject(size_t size) {
  T* obj;
  if (size <= kSmallPayload) {
    obj = new (TakeBlock()) T();
    ObjectUnsafe::SetHeader(obj, T::RuntimeTypeIndex(), &SmallDeleter<T>);
    ObjectUnsafe::GetHeader(obj)->ref_counter = 1;
  } else {
    ObjectPtr<T> ptr = make_inplace_array_object<T, char>(size + 1);
    obj = static_cast<T*>(ObjectUnsafe::MoveToOwned(&ptr));
  }
  char* bytes = reinterpret_cast<char*>(obj + 1);
  bytes[size] = '\0';
  obj->data = bytes;
  obj->size = size;
  return obj;
}

/// A StringObj or BytesObj holding a copy of `size` bytes at `data`, with one reference; a short
/// one inline, with no call on the way.
template <typename T>
T* NewBytesObject(const char* data, size_t size) {
  T* obj = AllocateBytesObject<T>(size);
  char* bytes = const_cast<char*>(obj->data);
  if (size <= kSmallPayload) {
    CopyShort(bytes, data, size);  // its zero padding under 8 bytes keeps the NUL
  } else {
    std::memcpy(bytes, data, size);
  }
  return obj;
}

}  // namespace

void* TakeCachedBlock(int size_class) { return TakeBlock(size_class); }
void GiveCachedBlock(void* block, int size_class) noexcept { GiveBlock(block, size_class); }

ObjectPtr<Object> MakeString(const char* data, size_t size) {
  if (data == nullptr && size != 0) ThrowError("ValueError", "String: nullptr with non-zero size");
  return ObjectUnsafe::PtrFromOwned<Object>(NewBytesObject<StringObj>(data, size));
}

ObjectPtr<Object> ConcatString(std::string_view a, std::string_view b) {
  StringObj* obj = AllocateBytesObject<StringObj>(a.size() + b.size());
  char* bytes = const_cast<char*>(obj->data);
  if (!a.empty()) std::memcpy(bytes, a.data(), a.size());
  if (!b.empty()) std::memcpy(bytes + a.size(), b.data(), b.size());
  return ObjectUnsafe::PtrFromOwned<Object>(obj);
}

ObjectPtr<Object> MakeBytes(const char* data, size_t size) {
  if (data == nullptr && size != 0) ThrowError("ValueError", "Bytes: nullptr with non-zero size");
  return ObjectUnsafe::PtrFromOwned<Object>(NewBytesObject<BytesObj>(data, size));
}

namespace {
/// Writes a cell with one 16-byte store. Written field by field, the cell would make a reader's
/// 16-byte load of it (an Any's move, say) wait until the narrower stores retire.
inline void StoreCell(FerryAny* out, int32_t type_index, uint32_t small_len, uint64_t payload) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // A 16-byte vector of the two words (a GCC/Clang extension): one store on x86 and ARM.
  using Words = uint64_t __attribute__((vector_size(16)));
  Words cell = {static_cast<uint32_t>(type_index) | (static_cast<uint64_t>(small_len) << 32),
                payload};
  std::memcpy(out, &cell, sizeof(cell));
#else
  FerryAny cell;
  cell.type_index = type_index;
  cell.small_len = small_len;
  cell.v_int64 = static_cast<int64_t>(payload);
  *out = cell;
#endif
}
}  // namespace

void StringToAny(const char* data, size_t size, FerryAny* out) {
  if (data == nullptr && size != 0) ThrowError("ValueError", "String: nullptr with non-zero size");
  if (size <= String::kInlineCapacity) {
    StoreCell(out, kFerrySmallStr, static_cast<uint32_t>(size), LoadShortBytes(data, size));
    return;
  }
  FerryObject* header = ObjectUnsafe::GetHeader(NewBytesObject<StringObj>(data, size));
  StoreCell(out, kFerryString, 0, reinterpret_cast<uintptr_t>(header));
}

String ConcatToString(std::string_view a, std::string_view b) {
  if (a.size() + b.size() <= String::kInlineCapacity) {
    char bytes[String::kInlineCapacity];
    if (!a.empty()) std::memcpy(bytes, a.data(), a.size());
    if (!b.empty()) std::memcpy(bytes + a.size(), b.data(), b.size());
    return String(bytes, a.size() + b.size());
  }
  return String(ConcatString(a, b));
}

}  // namespace details

String::operator ObjectRef() const {
  if (!is_inline()) {
    return ObjectRef(
        details::ObjectUnsafe::PtrFromRaw<Object>(details::ObjectUnsafe::FromHeader(cell_.v_obj)));
  }
  return ObjectRef(details::MakeString(cell_.v_bytes, cell_.small_len));
}

}  // namespace ferry

int FerryStringCreate(const char* data, size_t size, FerryObjectHandle* out_string) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_string);
  *out_string =
      ferry::details::MoveToHandle(ferry::ObjectRef(ferry::details::MakeString(data, size)));
  FERRY_C_API_END();
}

int FerryBytesCreate(const char* data, size_t size, FerryObjectHandle* out_bytes) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_bytes);
  *out_bytes =
      ferry::details::MoveToHandle(ferry::ObjectRef(ferry::details::MakeBytes(data, size)));
  FERRY_C_API_END();
}

int FerryStringGetData(FerryObjectHandle str, const char** out_data, size_t* out_size) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(str);
  const ferry::Object* obj = ferry::details::FromHandle(str);
  if (obj->type_index() != kFerryString && obj->type_index() != kFerryBytes) {
    FERRY_THROW(TypeError) << "FerryStringGetData: expected ferry.String or ferry.Bytes, got "
                           << obj->GetTypeKey();
  }
  static_assert(sizeof(ferry::StringObj) == sizeof(ferry::BytesObj), "same layout");
  const auto* s = static_cast<const ferry::StringObj*>(obj);
  if (out_data != nullptr) *out_data = s->data;
  if (out_size != nullptr) *out_size = static_cast<size_t>(s->size);
  FERRY_C_API_END();
}
