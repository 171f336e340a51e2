/// \file ferry/dlpack.h
/// The DLPack 1.1 ABI (https://dmlc.github.io/dlpack/latest/c_api.html): the structs through
/// which array libraries (NumPy, PyTorch, JAX, CuPy, ...) hand each other tensors without a
/// copy, declared here under their DLPack names because Debian's libdlpack-dev (0.6) lacks the
/// versioned structs. Written from the specification; the layouts are the standard, frozen by the
/// static_asserts at the end. Compiles as C99.
///
/// This header and the official `dlpack/dlpack.h` share the include guard DLPACK_DLPACK_H_, so
/// either may come first in a translation unit; the official one must then be 1.0 or newer.
///
///     DLManagedTensorVersioned* m = ...;   // from a producer
///     ferry::Tensor t = ferry::Tensor::FromDLPackVersioned(m);  // t now owns m
#ifndef FERRY_DLPACK_H_
#define FERRY_DLPACK_H_

#include <stddef.h>  // offsetof in the layout checks
#include <stdint.h>  // fixed-width integers of the ABI structs

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/// A DLPack ABI version. A consumer accepts a tensor whose major version equals its own.
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/// Where a tensor's memory lives.
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

/// A device: its type and its number among devices of that type.
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/// Type codes of DLDataType (the first five are also FerryDataTypeCode's).
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

/// An element type: code (DLDataTypeCode), bits per lane, lanes. Same layout as FerryDataType.
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/// A tensor view: `ndim` dimensions of `shape`, element strides in `strides` (NULL means compact
/// row-major), elements starting `byte_offset` bytes past `data` on `device`.
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/// The unversioned (pre-1.0) hand-over: the consumer calls `deleter(self)` once when done.
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

/// The tensor must not be written through.
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/// The producer made a copy for this hand-over; the consumer owns it alone.
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
/// Sub-byte elements are padded to a byte each.
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/// The versioned (1.0+) hand-over: the version comes first so that a consumer can check it
/// before reading anything else; `flags` carries DLPACK_FLAG_BITMASK_*.
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLPACK_DLPACK_H_

// The standard's layouts on LP64 (and the 32-bit layout of pointers where they differ), checked
// whichever header declared them.
#ifdef __cplusplus
#define FERRY_DLPACK_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else  // C99 has no _Static_assert: an array of negative size fails instead
#define FERRY_DLPACK_CONCAT_(a, b) a##b
#define FERRY_DLPACK_CONCAT(a, b) FERRY_DLPACK_CONCAT_(a, b)
#define FERRY_DLPACK_STATIC_ASSERT(cond, msg) \
  typedef char FERRY_DLPACK_CONCAT(ferry_dlpack_layout_check_, __LINE__)[(cond) ? 1 : -1]
#endif
FERRY_DLPACK_STATIC_ASSERT(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
FERRY_DLPACK_STATIC_ASSERT(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
FERRY_DLPACK_STATIC_ASSERT(sizeof(DLPackVersion) == 8, "DLPackVersion is 8 bytes");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLTensor, device) == sizeof(void*), "DLTensor.device");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLTensor, ndim) == sizeof(void*) + 8, "DLTensor.ndim");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLTensor, dtype) == sizeof(void*) + 12, "DLTensor.dtype");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLTensor, shape) == sizeof(void*) + 16, "DLTensor.shape");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLTensor, strides) == 2 * sizeof(void*) + 16,
                           "DLTensor.strides");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLTensor, byte_offset) == 3 * sizeof(void*) + 16,
                           "DLTensor.byte_offset");
FERRY_DLPACK_STATIC_ASSERT(sizeof(void*) != 8 || sizeof(DLTensor) == 48, "DLTensor is 48 bytes");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLManagedTensor, manager_ctx) == sizeof(DLTensor),
                           "DLManagedTensor.manager_ctx");
FERRY_DLPACK_STATIC_ASSERT(sizeof(void*) != 8 || sizeof(DLManagedTensor) == 64,
                           "DLManagedTensor is 64 bytes");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, manager_ctx) == 8,
                           "DLManagedTensorVersioned.manager_ctx");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, flags) == 8 + 2 * sizeof(void*),
                           "DLManagedTensorVersioned.flags");
FERRY_DLPACK_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, dl_tensor) == 16 + 2 * sizeof(void*),
                           "DLManagedTensorVersioned.dl_tensor");
FERRY_DLPACK_STATIC_ASSERT(sizeof(void*) != 8 || sizeof(DLManagedTensorVersioned) == 80,
                           "DLManagedTensorVersioned is 80 bytes");
#undef FERRY_DLPACK_STATIC_ASSERT
#undef FERRY_DLPACK_CONCAT
#undef FERRY_DLPACK_CONCAT_

#endif  // FERRY_DLPACK_H_
