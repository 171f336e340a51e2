/// \file tensor.cc
/// Tensor: allocation, DLPack hand-overs in both directions, and its C ABI.
#include "ferry/tensor.h"

#include <array>    // the base64 decoding table
#include <cstring>  // memcpy
#include <limits>   // int64 bounds
#include <mutex>    // the allocator table
#include <new>      // aligned operator new
#include <sstream>  // repr
#include <string>

#include "base64_internal.h"
#include "c_api_internal.h"
#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/memory.h"
#include "float_repr_internal.h"
#include "tensor_internal.h"

namespace ferry {
namespace {

constexpr size_t kCpuAlignment = 64;
/// More dimensions than any array library allows (NumPy: 64); keeps a hostile ndim from asking
/// for absurd shape storage.
constexpr int32_t kMaxNdim = 1 << 16;

std::mutex g_allocator_mutex;
TensorAllocator g_allocators[64];

const char* DeviceName(int32_t type) {
  switch (type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    case kDLCUDAHost:
      return "cuda_host";
    case kDLOpenCL:
      return "opencl";
    case kDLVulkan:
      return "vulkan";
    case kDLMetal:
      return "metal";
    case kDLVPI:
      return "vpi";
    case kDLROCM:
      return "rocm";
    case kDLROCMHost:
      return "rocm_host";
    case kDLExtDev:
      return "ext_dev";
    case kDLCUDAManaged:
      return "cuda_managed";
    case kDLOneAPI:
      return "oneapi";
    case kDLWebGPU:
      return "webgpu";
    case kDLHexagon:
      return "hexagon";
    case kDLMAIA:
      return "maia";
    default:
      return nullptr;
  }
}

std::string DeviceToString(DLDevice device) {
  const char* name = DeviceName(device.device_type);
  std::string out = name != nullptr ? name : "device" + std::to_string(device.device_type);
  return out + ":" + std::to_string(device.device_id);
}

/// Bytes of `numel` elements of `dtype`, sub-byte types packed; ValueError past int64.
int64_t BytesOf(int64_t numel, DLDataType dtype, const char* who) {
  const uint64_t bits_per_elem = uint64_t{dtype.bits} * dtype.lanes;
  if (numel != 0 && bits_per_elem > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() - 7) /
                                        static_cast<uint64_t>(numel)) {
    FERRY_THROW(ValueError) << who << ": " << numel << " elements of " << bits_per_elem
                            << " bits overflow int64 bytes";
  }
  return static_cast<int64_t>((bits_per_elem * static_cast<uint64_t>(numel) + 7) / 8);
}

/// The product of `shape`, checking each dimension: a negative one, or a product past int64
/// (zero-sized dimensions ignored, as NumPy does: the compact strides of the others must fit
/// too), is a ValueError.
int64_t NumelOf(const int64_t* shape, int32_t ndim, const char* who) {
  int64_t nonzero = 1;
  bool overflow = false;
  bool has_zero = false;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      FERRY_THROW(ValueError) << who << ": dimension " << i << " is negative (" << shape[i] << ")";
    }
    if (shape[i] == 0) {
      has_zero = true;
    } else {
      overflow |= __builtin_mul_overflow(nonzero, shape[i], &nonzero);
    }
  }
  if (overflow) {
    FERRY_THROW(ValueError) << who << ": the shape "
                            << Shape(std::vector<int64_t>(shape, shape + ndim))
                            << " is too big: its sizes multiply past int64";
  }
  return has_zero ? 0 : nonzero;
}

/// Writes the compact row-major strides of `shape` (a zero-sized dimension counts as 1). Only
/// called after NumelOf accepted the shape, so the products fit.
void CompactStrides(const int64_t* shape, int32_t ndim, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i] == 0 ? 1 : shape[i];
  }
}

/// Checks that every element's byte offset from the data pointer, through `strides` (in
/// elements) and `byte_offset`, fits in int64: then the offset arithmetic of every reader (repr,
/// JSON, equality) is defined. A ValueError otherwise. An empty tensor reads nothing.
void CheckExtent(const DLTensor& t, const char* who) {
  int64_t low = 0, high = 0;  // the lowest and highest element offsets, in elements
  bool overflow = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) return;
    int64_t reach = 0;
    overflow |= __builtin_mul_overflow(t.shape[i] - 1, t.strides[i], &reach);
    overflow |= __builtin_add_overflow(reach < 0 ? low : high, reach, reach < 0 ? &low : &high);
  }
  // In bytes from the data pointer: the first byte of the lowest element, and one past the last
  // byte of the highest.
  const int64_t elem_bytes = (int64_t{t.dtype.bits} * t.dtype.lanes + 7) / 8;
  overflow |= t.byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const auto offset = static_cast<int64_t>(t.byte_offset);
  int64_t first = 0, end = 0;
  overflow |= __builtin_mul_overflow(low, elem_bytes, &first);
  overflow |= __builtin_add_overflow(first, offset, &first);
  overflow |= __builtin_mul_overflow(high, elem_bytes, &end);
  overflow |= __builtin_add_overflow(end, offset, &end);
  overflow |= __builtin_add_overflow(end, elem_bytes, &end);
  if (overflow) {
    FERRY_THROW(ValueError) << who << ": the strides and byte offset reach past int64 bytes";
  }
}

/// Checks an incoming dtype: the codes DataType can name, with at least one bit and one lane.
void CheckDType(DLDataType dtype, const char* who) {
  if (dtype.code > kDLBool) {
    FERRY_THROW(ValueError) << who << ": unsupported DLPack dtype code " << int{dtype.code}
                            << " (Ferry holds int, uint, float, bfloat, complex, bool and handle"
                               " elements)";
  }
  if (dtype.bits == 0 || dtype.lanes == 0) {
    FERRY_THROW(ValueError) << who << ": invalid dtype (code " << int{dtype.code} << ", "
                            << int{dtype.bits} << " bits, " << dtype.lanes << " lanes)";
  }
}

/// A TensorObj with room for `ndim` dims and strides after it, pointed at by dl_tensor.
ObjectPtr<TensorObj> AllocateTensor(int32_t ndim) {
  ObjectPtr<TensorObj> obj =
      make_inplace_array_object<TensorObj, int64_t>(2 * static_cast<size_t>(ndim));
  auto* dims = reinterpret_cast<int64_t*>(obj.get() + 1);
  obj->dl_tensor = DLTensor{};
  obj->dl_tensor.ndim = ndim;
  obj->dl_tensor.shape = dims;
  obj->dl_tensor.strides = dims + ndim;
  return obj;
}

/// Copies `src`'s view into a fresh object: shape, strides (compact ones when absent), dtype,
/// device, data and offset, after checking them.
ObjectPtr<TensorObj> CopyView(const DLTensor& src, const char* who) {
  if (src.ndim < 0 || src.ndim > kMaxNdim) {
    FERRY_THROW(ValueError) << who << ": ndim " << src.ndim << " is out of range [0, " << kMaxNdim
                            << "]";
  }
  if (src.ndim > 0 && src.shape == nullptr) {
    FERRY_THROW(ValueError) << who << ": a DLTensor of " << src.ndim << " dimensions has no shape";
  }
  CheckDType(src.dtype, who);
  const int64_t numel = NumelOf(src.shape, src.ndim, who);
  if (src.data == nullptr && numel != 0) {
    FERRY_THROW(ValueError) << who << ": a DLTensor of " << numel << " elements has no data";
  }
  ObjectPtr<TensorObj> obj = AllocateTensor(src.ndim);
  DLTensor& t = obj->dl_tensor;
  if (src.ndim > 0) std::memcpy(t.shape, src.shape, sizeof(int64_t) * src.ndim);
  if (src.strides != nullptr) {
    if (src.ndim > 0) std::memcpy(t.strides, src.strides, sizeof(int64_t) * src.ndim);
  } else {
    CompactStrides(t.shape, t.ndim, t.strides);
  }
  t.data = src.data;
  t.device = src.device;
  t.dtype = src.dtype;
  t.byte_offset = src.byte_offset;
  CheckExtent(t, who);
  return obj;
}

void ReleaseCpu(TensorObj* self) {
  ::operator delete(self->manager_, std::align_val_t(kCpuAlignment));
}
void ReleaseAllocated(TensorObj* self) {
  self->allocator_.free(self->allocator_.ctx, self->dl_tensor.device, self->manager_);
}
void ReleaseManaged(TensorObj* self) {
  auto* managed = static_cast<DLManagedTensor*>(self->manager_);
  if (managed->deleter != nullptr) managed->deleter(managed);
}
void ReleaseManagedVersioned(TensorObj* self) {
  auto* managed = static_cast<DLManagedTensorVersioned*>(self->manager_);
  if (managed->deleter != nullptr) managed->deleter(managed);
}

void ReleaseOwner(TensorObj* self) { details::RunDeleter(self->owner_deleter_, self->manager_); }

template <typename Managed>
void DeleteExported(Managed* self) {
  details::ObjectUnsafe::DecRef(static_cast<Object*>(self->manager_ctx));
  delete self;
}

/// The export's view of `obj`: its data, shape and strides (pointing into the object).
DLTensor ExportView(const TensorObj* obj) { return obj->dl_tensor; }

}  // namespace

void SetTensorAllocator(DLDeviceType device_type, TensorAllocator allocator) {
  const auto type = static_cast<int32_t>(device_type);
  if (type < 0 || type >= static_cast<int32_t>(std::size(g_allocators))) {
    FERRY_THROW(ValueError) << "SetTensorAllocator: device type " << type << " is out of range";
  }
  if ((allocator.alloc == nullptr) != (allocator.free == nullptr)) {
    FERRY_THROW(ValueError) << "SetTensorAllocator: alloc and free must both be set (or both NULL"
                               " to remove the allocator)";
  }
  std::lock_guard<std::mutex> lock(g_allocator_mutex);
  g_allocators[type] = allocator;
}

Tensor Tensor::Empty(std::vector<int64_t> shape, DataType dtype, DLDevice device) {
  constexpr const char* kWho = "Tensor::Empty";
  if (shape.size() > static_cast<size_t>(kMaxNdim)) {
    FERRY_THROW(ValueError) << kWho << ": " << shape.size() << " dimensions are too many";
  }
  if (dtype.is_void()) FERRY_THROW(ValueError) << kWho << ": cannot allocate elements of void";
  const auto ndim = static_cast<int32_t>(shape.size());
  const int64_t numel = NumelOf(shape.data(), ndim, kWho);
  const FerryDataType raw = dtype;
  const DLDataType dl_dtype{raw.code, raw.bits, raw.lanes};
  const int64_t nbytes = BytesOf(numel, dl_dtype, kWho);
  TensorAllocator allocator;
  if (device.device_type >= 0 &&
      static_cast<size_t>(device.device_type) < std::size(g_allocators)) {
    std::lock_guard<std::mutex> lock(g_allocator_mutex);
    allocator = g_allocators[device.device_type];
  }
  if (allocator.alloc == nullptr && device.device_type != kDLCPU) {
    FERRY_THROW(ValueError) << kWho << ": no allocator is registered for device "
                            << DeviceToString(device) << " (see SetTensorAllocator)";
  }
  // The object first: if the data cannot be had, nothing is left to free.
  ObjectPtr<TensorObj> obj = AllocateTensor(ndim);
  DLTensor& t = obj->dl_tensor;
  std::copy(shape.begin(), shape.end(), t.shape);
  CompactStrides(t.shape, ndim, t.strides);
  t.dtype = dl_dtype;
  t.device = device;
  if (allocator.alloc == nullptr) {
    // Rounded up to whole 64-byte lines (and at least one), so vector loads of the tail stay in
    // the block and an empty tensor still has a distinct data pointer.
    const size_t size =
        (static_cast<size_t>(nbytes) + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    try {
      t.data = ::operator new(size == 0 ? kCpuAlignment : size, std::align_val_t(kCpuAlignment));
    } catch (const std::bad_alloc&) {
      FERRY_THROW(MemoryError) << kWho << ": cannot allocate " << nbytes << " bytes";
    }
    obj->manager_ = t.data;
    obj->release_ = &ReleaseCpu;
  } else {
    t.data = allocator.alloc(allocator.ctx, device, static_cast<size_t>(nbytes), kCpuAlignment);
    if (t.data == nullptr) {
      FERRY_THROW(MemoryError) << kWho << ": the allocator of " << DeviceToString(device)
                               << " could not give " << nbytes << " bytes";
    }
    obj->manager_ = t.data;
    obj->allocator_ = allocator;
    obj->release_ = &ReleaseAllocated;
  }
  return Tensor(ObjectPtr<Object>(std::move(obj)));
}

Tensor Tensor::FromDLPack(DLManagedTensor* managed) {
  if (managed == nullptr) FERRY_THROW(ValueError) << "Tensor::FromDLPack: managed is NULL";
  ObjectPtr<TensorObj> obj = CopyView(managed->dl_tensor, "Tensor::FromDLPack");
  obj->manager_ = managed;
  obj->release_ = &ReleaseManaged;
  return Tensor(ObjectPtr<Object>(std::move(obj)));
}

Tensor Tensor::FromDLPackVersioned(DLManagedTensorVersioned* managed) {
  constexpr const char* kWho = "Tensor::FromDLPackVersioned";
  if (managed == nullptr) FERRY_THROW(ValueError) << kWho << ": managed is NULL";
  if (managed->version.major != DLPACK_MAJOR_VERSION) {
    FERRY_THROW(ValueError) << kWho << ": DLPack version " << managed->version.major << "."
                            << managed->version.minor << " is not supported (Ferry reads "
                            << DLPACK_MAJOR_VERSION << ".x)";
  }
  ObjectPtr<TensorObj> obj = CopyView(managed->dl_tensor, kWho);
  obj->flags_ = managed->flags;
  obj->manager_ = managed;
  obj->release_ = &ReleaseManagedVersioned;
  return Tensor(ObjectPtr<Object>(std::move(obj)));
}

DLManagedTensor* Tensor::ToDLPack() const {
  if (!defined()) FERRY_THROW(ValueError) << "Tensor::ToDLPack: the tensor is null";
  if (IsReadOnly()) {
    FERRY_THROW(ValueError) << "Tensor::ToDLPack: the tensor is read-only, which an unversioned "
                               "DLPack tensor cannot say; use ToDLPackVersioned (DLPack 1.x)";
  }
  auto* out = new DLManagedTensor{ExportView(get()), nullptr, &DeleteExported<DLManagedTensor>};
  details::ObjectUnsafe::IncRef(const_cast<TensorObj*>(get()));
  out->manager_ctx = const_cast<TensorObj*>(get());
  return out;
}

DLManagedTensorVersioned* Tensor::ToDLPackVersioned() const {
  if (!defined()) FERRY_THROW(ValueError) << "Tensor::ToDLPackVersioned: the tensor is null";
  auto* out = new DLManagedTensorVersioned{};
  out->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  out->deleter = &DeleteExported<DLManagedTensorVersioned>;
  out->flags = get()->flags_ & DLPACK_FLAG_BITMASK_READ_ONLY;
  out->dl_tensor = ExportView(get());
  details::ObjectUnsafe::IncRef(const_cast<TensorObj*>(get()));
  out->manager_ctx = const_cast<TensorObj*>(get());
  return out;
}

DLManagedTensorVersioned* ConstTensor::ToDLPackVersioned() const {
  const Tensor self(details::ObjectUnsafe::PtrFromRaw<Object>(const_cast<TensorObj*>(get())));
  DLManagedTensorVersioned* out = self.ToDLPackVersioned();
  out->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  return out;
}

int64_t ConstTensor::numel() const {
  // Every tensor's shape passed NumelOf: without a zero the product fits.
  int64_t n = 1;
  for (int64_t d : shape()) {
    if (d == 0) return 0;
    n *= d;
  }
  return n;
}

int64_t ConstTensor::nbytes() const {
  return BytesOf(numel(), get()->dl_tensor.dtype, "ConstTensor::nbytes");
}

bool ConstTensor::IsContiguous() const {
  const DLTensor& t = get()->dl_tensor;
  if (numel() == 0) return true;  // no element to be out of place, whatever the strides
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

namespace details {

ObjectPtr<Object> TensorViewOf(const DLTensor* tensor, uint64_t flags) {
  if (tensor == nullptr) return ObjectPtr<Object>();
  ObjectPtr<TensorObj> obj = CopyView(*tensor, "Tensor (from a borrowed DLTensor*)");
  obj->flags_ = flags;
  return obj;
}

bool IsReadOnlyTensorFor(const FerryAny* value, const std::string& expected) {
  return IsReadOnlyTensorCell(value) &&
         (expected == TensorObj::_type_key || expected == "DLTensor*");
}

namespace {
template <typename T>
void PrintValue(std::ostream& os, const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (sizeof(T) == 1 && std::is_integral_v<T>) {
    os << static_cast<int>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    os << FloatRepr(v);  // 2.0, not 2
  } else {
    os << v;
  }
}

/// Prints the element at `p` when its type is one printable from the host, else returns false.
bool PrintElement(std::ostream& os, const char* p, DLDataType dtype) {
  if (dtype.lanes != 1) return false;
  switch (dtype.code) {
    case kDLInt:
      switch (dtype.bits) {
        case 8:
          PrintValue<int8_t>(os, p);
          return true;
        case 16:
          PrintValue<int16_t>(os, p);
          return true;
        case 32:
          PrintValue<int32_t>(os, p);
          return true;
        case 64:
          PrintValue<int64_t>(os, p);
          return true;
        default:
          return false;
      }
    case kDLUInt:
      switch (dtype.bits) {
        case 8:
          PrintValue<uint8_t>(os, p);
          return true;
        case 16:
          PrintValue<uint16_t>(os, p);
          return true;
        case 32:
          PrintValue<uint32_t>(os, p);
          return true;
        case 64:
          PrintValue<uint64_t>(os, p);
          return true;
        default:
          return false;
      }
    case kDLFloat:
      if (dtype.bits == 32)
        PrintValue<float>(os, p);
      else if (dtype.bits == 64)
        PrintValue<double>(os, p);
      else
        return false;
      return true;
    case kDLBool:
      if (dtype.bits != 8) return false;
      os << (*p != 0 ? "True" : "False");
      return true;
    default:
      return false;
  }
}
}  // namespace

namespace {

bool IsHostMemory(DLDevice device) {
  return device.device_type == kDLCPU || device.device_type == kDLCUDAHost ||
         device.device_type == kDLROCMHost;
}

/// Calls `f(pointer, size)` on the tensor's bytes in row-major order: one run when compact,
/// else one run per element (sub-byte types are only read when compact).
template <typename F>
void ForEachRun(const TensorObj* t, F&& f) {
  const DLTensor& dl = t->dl_tensor;
  Tensor ref(ObjectUnsafe::PtrFromRaw<Object>(const_cast<TensorObj*>(t)));
  const int64_t numel = ref.numel();
  if (numel == 0) return;
  const auto* base = static_cast<const char*>(ref.data_ptr());
  const uint64_t bits = uint64_t{dl.dtype.bits} * dl.dtype.lanes;
  if (ref.IsContiguous()) {
    f(base, static_cast<size_t>(ref.nbytes()));
    return;
  }
  if (bits % 8 != 0) {
    FERRY_THROW(ValueError) << "a strided tensor of sub-byte elements (" << ref.dtype()
                            << ") cannot be read element by element";
  }
  const auto elem = static_cast<int64_t>(bits / 8);
  std::vector<int64_t> index(static_cast<size_t>(dl.ndim), 0);
  for (int64_t k = 0; k < numel; ++k) {
    int64_t offset = 0;
    for (int32_t d = 0; d < dl.ndim; ++d) offset += index[d] * dl.strides[d];
    f(base + offset * elem, static_cast<size_t>(elem));
    for (int32_t d = dl.ndim - 1; d >= 0; --d) {
      if (++index[d] < dl.shape[d]) break;
      index[d] = 0;
    }
  }
}

bool SameLayout(const DLTensor& a, const DLTensor& b) {
  if (a.ndim != b.ndim || a.dtype.code != b.dtype.code || a.dtype.bits != b.dtype.bits ||
      a.dtype.lanes != b.dtype.lanes) {
    return false;
  }
  return std::equal(a.shape, a.shape + a.ndim, b.shape);
}

}  // namespace

std::string TensorToBase64(const TensorObj* tensor) {
  if (!IsHostMemory(tensor->dl_tensor.device)) {
    FERRY_THROW(ValueError) << "cannot serialize a tensor on "
                            << DeviceToString(tensor->dl_tensor.device)
                            << ": only host (CPU) memory can be read; copy it to the CPU first";
  }
  std::string bytes;
  ForEachRun(tensor, [&](const char* p, size_t n) { bytes.append(p, n); });
  return Base64Encode(bytes.data(), bytes.size());
}

Tensor TensorFromBase64(DataType dtype, const std::vector<int64_t>& shape,
                        std::string_view base64) {
  Tensor t = Tensor::Empty(shape, dtype);
  const auto expected = static_cast<size_t>(t.nbytes());
  if (base64.size() % 4 != 0 || base64.size() / 4 * 3 < expected ||
      base64.size() / 4 * 3 >= expected + 3) {
    FERRY_THROW(ValueError) << "tensor data: " << base64.size() << " base64 characters cannot hold "
                            << expected << " bytes of " << dtype << " with shape " << Shape(shape);
  }
  std::string bytes, why;
  if (!Base64Decode(base64, &bytes, &why)) FERRY_THROW(ValueError) << "tensor data: " << why;
  if (bytes.size() != expected) {
    FERRY_THROW(ValueError) << "tensor data: " << bytes.size() << " bytes for a tensor of "
                            << expected;
  }
  std::memcpy(t.data_ptr(), bytes.data(), expected);
  return t;
}

bool TensorContentEqual(const TensorObj* a, const TensorObj* b) {
  if (a == b) return true;
  if (!SameLayout(a->dl_tensor, b->dl_tensor)) return false;
  if (!IsHostMemory(a->dl_tensor.device) || !IsHostMemory(b->dl_tensor.device)) return false;
  std::string lhs, rhs;
  ForEachRun(a, [&](const char* p, size_t n) { lhs.append(p, n); });
  ForEachRun(b, [&](const char* p, size_t n) { rhs.append(p, n); });
  return lhs == rhs;
}

uint64_t TensorContentHash(const TensorObj* tensor) {
  const DLTensor& dl = tensor->dl_tensor;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over dtype, shape and bytes
  auto mix = [&h](const void* p, size_t n) {
    const auto* bytes = static_cast<const uint8_t*>(p);
    for (size_t k = 0; k < n; ++k) h = (h ^ bytes[k]) * 0x100000001b3ull;
  };
  mix(&dl.dtype, sizeof(dl.dtype));
  mix(&dl.ndim, sizeof(dl.ndim));
  mix(dl.shape, sizeof(int64_t) * static_cast<size_t>(dl.ndim));
  if (!IsHostMemory(dl.device)) {
    const void* self = tensor;
    mix(&self, sizeof(self));  // equal only to itself
    return h;
  }
  ForEachRun(tensor, mix);
  return h;
}

std::string TensorRepr(const TensorObj* tensor) {
  Tensor t(ObjectUnsafe::PtrFromRaw<Object>(const_cast<TensorObj*>(tensor)));
  std::ostringstream os;
  os << "ferry.Tensor(" << t.dtype() << ", shape=(";
  for (int32_t i = 0; i < t.ndim(); ++i) os << (i ? ", " : "") << t.shape()[i];
  os << (t.ndim() == 1 ? ",)" : ")") << ", " << DeviceToString(t.device());
  // A few values, in row-major order, read through the strides: only from host memory.
  constexpr int64_t kShown = 6;
  const DLTensor& dl = tensor->dl_tensor;
  if (dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost ||
      dl.device.device_type == kDLROCMHost) {
    const int64_t numel = t.numel();
    const int64_t elem_bytes = (int64_t{dl.dtype.bits} * dl.dtype.lanes + 7) / 8;
    std::ostringstream values;
    bool printable = true;
    std::vector<int64_t> index(static_cast<size_t>(dl.ndim), 0);
    for (int64_t k = 0; k < numel && k < kShown && printable; ++k) {
      int64_t offset = 0;
      for (int32_t d = 0; d < dl.ndim; ++d) offset += index[d] * dl.strides[d];
      values << (k ? ", " : "");
      printable = PrintElement(values, static_cast<const char*>(t.data_ptr()) + offset * elem_bytes,
                               dl.dtype);
      for (int32_t d = dl.ndim - 1; d >= 0; --d) {
        if (++index[d] < dl.shape[d]) break;
        index[d] = 0;
      }
    }
    if (printable) os << ", [" << values.str() << (numel > kShown ? ", ..." : "") << "]";
  }
  os << ")";
  return os.str();
}

}  // namespace details
}  // namespace ferry

// ---------------------------------------------------------------------------------------------
// C ABI

int FerryTensorFromDLPack(DLManagedTensor* managed, FerryObjectHandle* out_tensor) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(managed);
  FERRY_C_API_CHECK_NOT_NULL(out_tensor);
  *out_tensor = ferry::details::MoveToHandle(ferry::Tensor::FromDLPack(managed));
  FERRY_C_API_END();
}

int FerryTensorFromDLPackVersioned(DLManagedTensorVersioned* managed,
                                   FerryObjectHandle* out_tensor) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(managed);
  FERRY_C_API_CHECK_NOT_NULL(out_tensor);
  *out_tensor = ferry::details::MoveToHandle(ferry::Tensor::FromDLPackVersioned(managed));
  FERRY_C_API_END();
}

namespace {
ferry::Tensor TensorOfHandle(FerryObjectHandle handle, const char* who) {
  ferry::Object* obj = ferry::details::FromHandle(handle);
  if (obj->type_index() != kFerryTensor) {
    FERRY_THROW(TypeError) << who << ": expected ferry.Tensor but got " << obj->GetTypeKey();
  }
  return ferry::Tensor(ferry::details::ObjectUnsafe::PtrFromRaw<ferry::Object>(obj));
}
}  // namespace

int FerryTensorToDLPack(FerryObjectHandle tensor, DLManagedTensor** out_managed) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(tensor);
  FERRY_C_API_CHECK_NOT_NULL(out_managed);
  *out_managed = TensorOfHandle(tensor, __func__).ToDLPack();
  FERRY_C_API_END();
}

int FerryTensorToDLPackVersioned(FerryObjectHandle tensor, DLManagedTensorVersioned** out_managed) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(tensor);
  FERRY_C_API_CHECK_NOT_NULL(out_managed);
  *out_managed = TensorOfHandle(tensor, __func__).ToDLPackVersioned();
  FERRY_C_API_END();
}

int FerryTensorFromDLTensor(const DLTensor* view, uint64_t flags, void* owner,
                            void (*owner_deleter)(void* owner), FerryObjectHandle* out_tensor) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(view);
  FERRY_C_API_CHECK_NOT_NULL(out_tensor);
  ferry::ObjectPtr<ferry::TensorObj> obj = ferry::CopyView(*view, "FerryTensorFromDLTensor");
  obj->flags_ = flags;
  if (owner_deleter != nullptr) {
    obj->manager_ = owner;
    obj->owner_deleter_ = owner_deleter;
    obj->release_ = &ferry::ReleaseOwner;
  }
  *out_tensor =
      ferry::details::MoveToHandle(ferry::Tensor(ferry::ObjectPtr<ferry::Object>(std::move(obj))));
  FERRY_C_API_END();
}

int FerryTensorGetOwner(FerryObjectHandle tensor, void** out_owner,
                        void (**out_owner_deleter)(void* owner)) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(tensor);
  FERRY_C_API_CHECK_NOT_NULL(out_owner);
  FERRY_C_API_CHECK_NOT_NULL(out_owner_deleter);
  const ferry::Tensor t = TensorOfHandle(tensor, __func__);
  const bool has_owner = t->release_ == &ferry::ReleaseOwner;
  *out_owner = has_owner ? t->manager_ : nullptr;
  *out_owner_deleter = has_owner ? t->owner_deleter_ : nullptr;
  FERRY_C_API_END();
}

int FerryTensorViewOf(const DLTensor* tensor, FerryObjectHandle* out_tensor) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(tensor);
  FERRY_C_API_CHECK_NOT_NULL(out_tensor);
  *out_tensor = ferry::details::MoveToHandle(ferry::Tensor(ferry::details::TensorViewOf(tensor)));
  FERRY_C_API_END();
}

int FerryTensorEmpty(const int64_t* shape, int32_t ndim, FerryDataType dtype, DLDevice device,
                     FerryObjectHandle* out_tensor) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_tensor);
  if (ndim < 0) FERRY_THROW(ValueError) << __func__ << ": ndim " << ndim << " is negative";
  if (ndim > 0) FERRY_C_API_CHECK_NOT_NULL(shape);
  std::vector<int64_t> dims(shape, shape + ndim);
  const ferry::DataType checked(dtype.code, dtype.bits, dtype.lanes);  // ValueError if invalid
  *out_tensor =
      ferry::details::MoveToHandle(ferry::Tensor::Empty(std::move(dims), checked, device));
  FERRY_C_API_END();
}
