// libFuzzer target: DLPack capsule consumption. The input bytes describe a producer's hand-over
// (versioned or not, version, flags, ndim, shape, strides, dtype, device, data offset, byte
// offset) over a 256-byte buffer; Tensor::FromDLPack / FromDLPackVersioned take it, and the
// harness then does what a consumer does: numel, nbytes, IsContiguous, repr, SaveJSON and
// LoadJSON, structural equality and hash, export and re-import both ways.
//
// Properties: every refusal is a ferry::Error (anything else escapes and libFuzzer reports it);
// an accepted tensor shows the producer's view exactly (shape, strides, dtype, read-only flag),
// an empty one is contiguous, its JSON round trip is structurally equal with the same hash; the
// producer's deleter runs exactly once (by Ferry when it took the struct, else by the caller),
// every export's deleter drops its reference. ASan and UBSan see every read and every integer
// operation on the way. Elements are read only when the harness's own 128-bit arithmetic says
// the view stays in the buffer (a producer that lies about its memory is not Ferry's to catch) and
// holds at most kMaxReadElements elements.
//
// Input format (missing bytes read as 0): mode (bit 0 versioned, bit 1 strides given, bit 2
// NULL data, bit 3 a device other than the CPU), version major and minor, flags, ndim,
// data offset into the buffer, byte offset, dtype code, bits, lanes (2 bytes), then per
// dimension a size and (when given) a stride, each an Int (see ReadInt).
#include <ferry/ferry.h>
#include <ferry/reflection/json.h>
#include <ferry/reflection/structural.h>

#include <algorithm>  // std::equal
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using ferry::ConstTensor;
using ferry::Tensor;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_dlpack: %s\n", what);
  std::abort();
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t Raw64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  /// A size, stride or offset: mostly the small and boundary values that find bugs.
  int64_t ReadInt() {
    const uint8_t kind = Byte();
    switch (kind % 10) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return 2 + Byte() % 6;
      case 3:
        return -static_cast<int64_t>(Byte() % 4) - 1;
      case 4:
        return std::numeric_limits<int64_t>::max();
      case 5:
        return std::numeric_limits<int64_t>::min();
      case 6:
        return int64_t{1} << (Byte() % 63);
      case 7:
        return -(int64_t{1} << (Byte() % 63));
      case 8:
        return static_cast<int64_t>(Byte());
      default:
        return static_cast<int64_t>(Raw64());
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

constexpr size_t kBufferBytes = 256;
constexpr int64_t kMaxReadElements = 4096;
alignas(64) unsigned char g_buffer[kBufferBytes];
int g_deleted = 0;

/// Whether every element of the view lies in g_buffer (computed apart from Ferry, in 128 bits).
bool InBuffer(const DLTensor& t) {
  if (t.data == nullptr || t.device.device_type != kDLCPU) return false;
  __int128 low = 0, high = 0;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) return true;  // no element to read
    const __int128 reach = static_cast<__int128>(t.shape[i] - 1) * t.strides[i];
    (reach < 0 ? low : high) += reach;
  }
  const __int128 elem = (static_cast<__int128>(t.dtype.bits) * t.dtype.lanes + 7) / 8;
  const __int128 start = static_cast<const unsigned char*>(t.data) - g_buffer;
  const __int128 first = start + t.byte_offset + low * elem;
  const __int128 end = start + t.byte_offset + high * elem + elem;
  return first >= 0 && end <= static_cast<__int128>(kBufferBytes);
}

/// What a consumer does with a tensor it was handed; aborts on a broken property.
void Consume(const Tensor& t, const DLTensor& given, bool read_only) {
  const DLTensor& dl = *t.GetDLTensorPtr();
  if (t.ndim() != given.ndim || !std::equal(dl.shape, dl.shape + dl.ndim, given.shape)) {
    Fail("the shape differs from the producer's");
  }
  if (given.strides != nullptr && !std::equal(dl.strides, dl.strides + dl.ndim, given.strides)) {
    Fail("the strides differ from the producer's");
  }
  if (dl.dtype.code != given.dtype.code || dl.dtype.bits != given.dtype.bits ||
      dl.dtype.lanes != given.dtype.lanes || dl.byte_offset != given.byte_offset) {
    Fail("the dtype or byte offset differs from the producer's");
  }
  if (t.IsReadOnly() != read_only) Fail("the read-only flag was not kept");
  const int64_t numel = t.numel();
  if (numel < 0) Fail("numel is negative");
  const bool contiguous = t.IsContiguous();
  if (numel == 0 && !contiguous) Fail("an empty tensor is not contiguous");
  try {
    if (t.nbytes() < 0) Fail("nbytes is negative");
  } catch (const ferry::Error&) {
  }
  // Export and take back, both ways; each export's deleter drops its reference.
  const int before = t.use_count();
  Tensor back = Tensor::FromDLPackVersioned(t.ToDLPackVersioned());
  if (back.IsReadOnly() != read_only || back.numel() != numel) Fail("export changed the view");
  back = Tensor::FromDLPackVersioned(ConstTensor(t).ToDLPackVersioned());
  if (!back.IsReadOnly()) Fail("a ConstTensor export is not read-only");
  try {
    back = Tensor::FromDLPack(t.ToDLPack());
    if (read_only) Fail("a read-only tensor left as an unversioned DLPack tensor");
  } catch (const ferry::Error&) {
    if (!read_only) throw;
  }
  back = Tensor();
  if (t.use_count() != before) Fail("an export's reference was not dropped");
  // Reading the elements: only when the view is in the buffer, and of a size worth reading (a
  // broadcast view of 2^40 elements over one byte is in the buffer, and its JSON is 2^40 bytes:
  // the cost of what was asked, not a bug).
  if (!InBuffer(dl) || numel > kMaxReadElements) return;
  (void)ferry::details::AnyRepr(ferry::Any(t).raw());
  std::string json;
  try {
    json = ferry::SaveJSON(t);
  } catch (const ferry::Error&) {
    return;  // e.g. a strided view of sub-byte elements
  }
  const ferry::Any loaded = ferry::LoadJSON(json);
  if (!ferry::StructuralEqual()(loaded, t)) Fail("the JSON round trip is not structurally equal");
  if (ferry::StructuralHash()(loaded) != ferry::StructuralHash()(t)) {
    Fail("structurally equal tensors hash differently");
  }
}

template <typename Managed>
Managed* MakeManaged(const DLTensor& view) {
  auto* m = new Managed{};
  m->dl_tensor = view;
  m->deleter = [](Managed* self) {
    ++g_deleted;
    delete self;
  };
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t mode = in.Byte();
  const bool versioned = (mode & 1) != 0;
  const bool with_strides = (mode & 2) != 0;
  const uint8_t major = in.Byte() % 4 == 0 ? in.Byte() : DLPACK_MAJOR_VERSION;
  const uint8_t minor = in.Byte();
  const uint64_t flags = in.Byte();
  const uint8_t ndim_byte = in.Byte();
  // ndim: -4 .. 75 mostly; sometimes past what Ferry takes (then only a few entries exist, and
  // Ferry must refuse without reading them).
  constexpr int32_t kOdd[] = {
      65536, 65537, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
      100,   1000};
  const int32_t ndim =
      ndim_byte < 240 ? static_cast<int32_t>(ndim_byte % 80) - 4 : kOdd[ndim_byte % 6];
  const size_t entries = ndim < 0 ? 0 : static_cast<size_t>(std::min(ndim, 65536));

  DLTensor view{};
  const uint8_t data_offset = in.Byte();
  view.data = (mode & 4) != 0 ? nullptr : g_buffer + data_offset % kBufferBytes;
  view.device = (mode & 8) != 0 ? DLDevice{static_cast<DLDeviceType>(in.Byte() % 20), 0}
                                : DLDevice{kDLCPU, 0};
  const int64_t byte_offset = in.ReadInt();
  view.byte_offset = static_cast<uint64_t>(byte_offset);
  view.dtype.code = in.Byte();
  view.dtype.bits = in.Byte();
  view.dtype.lanes = static_cast<uint16_t>(in.Byte() | (in.Byte() << 8));
  if (in.Byte() % 2 == 0) {  // mostly a plausible dtype
    view.dtype.code %= 7;
    view.dtype.bits = static_cast<uint8_t>(1u << (view.dtype.bits % 8));
    view.dtype.lanes = static_cast<uint16_t>(1 + view.dtype.lanes % 4);
  }
  std::vector<int64_t> shape(std::max<size_t>(entries, 1), 1);
  std::vector<int64_t> strides(std::max<size_t>(entries, 1), 1);
  for (size_t i = 0; i < entries && i < 80; ++i) {
    shape[i] = in.ReadInt();
    if (with_strides) strides[i] = in.ReadInt();
  }
  view.ndim = ndim;
  view.shape = shape.data();
  view.strides = with_strides ? strides.data() : nullptr;

  g_deleted = 0;
  bool taken = false;
  {
    Tensor t;
    if (versioned) {
      auto* m = MakeManaged<DLManagedTensorVersioned>(view);
      m->version = DLPackVersion{major, minor};
      m->flags = flags;
      try {
        t = Tensor::FromDLPackVersioned(m);
        taken = true;
      } catch (const ferry::Error&) {
        if (g_deleted != 0) Fail("a refused hand-over was deleted");
        m->deleter(m);
      }
    } else {
      auto* m = MakeManaged<DLManagedTensor>(view);
      try {
        t = Tensor::FromDLPack(m);
        taken = true;
      } catch (const ferry::Error&) {
        if (g_deleted != 0) Fail("a refused hand-over was deleted");
        m->deleter(m);
      }
    }
    if (taken) {
      if (g_deleted != 0) Fail("the deleter ran while the tensor lives");
      const bool read_only = versioned && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
      Consume(t, view, read_only);
      if (g_deleted != 0) Fail("the deleter ran while the tensor lives");
    }
  }
  if (g_deleted != 1) Fail("the producer's deleter did not run exactly once");
  return 0;
}
