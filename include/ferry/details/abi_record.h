/// \file ferry/details/abi_record.h
/// The ABI record: every library whose code includes ferry/function.h (which every
/// FERRY_REGISTER_* macro needs) carries, in its ELF section `.ferry_abi`, the ABI version and a
/// fingerprint of the layouts it was compiled against. LoadLibrary reads the section from the
/// file before dlopen runs a single initializer of the library, and refuses a library whose
/// record differs from libferry's own. Nothing is asked of the user: the record is a `used`,
/// COMDAT-folded inline variable, one per shared library however many files include it.
///
/// A plain C user of c_api.h has no record, and loads: the C structs are guarded by the version
/// number and their documented promise (docs/c_api.md).
#ifndef FERRY_DETAILS_ABI_RECORD_H_
#define FERRY_DETAILS_ABI_RECORD_H_

#include <cstddef>  // offsetof
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/c_api.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/object.h"
#include "ferry/string.h"

/// The record's layout is itself fixed for every ABI version: a reader of any version can read
/// a writer of any other.
typedef struct {
  char magic[8];         ///< "FERRYABI"
  uint32_t version;      ///< FERRY_ABI_VERSION of the headers
  uint32_t record_size;  ///< sizeof(FerryAbiRecord), so later versions can append fields
  uint64_t fingerprint;  ///< FerryAbiFingerprint() of the headers
} FerryAbiRecord;

namespace ferry {
namespace details {

/// One FNV-1a step over the 8 bytes of `value`.
constexpr uint64_t AbiMix(uint64_t hash, uint64_t value) {
  for (int k = 0; k < 8; ++k) {
    hash ^= (value >> (8 * k)) & 0xffu;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// A hash of the sizes, alignments and offsets that code compiled from these headers bakes in:
/// the C ABI structs field by field, the C++ objects the headers construct inline by size and
/// alignment (their fields are not standard-layout, so offsetof is not available), and the
/// standard-library types those objects hold (std::string differs between libstdc++'s two
/// ABIs).
constexpr uint64_t AbiFingerprint() {
  const uint64_t values[] = {
      sizeof(void*),
      sizeof(FerryObject),
      offsetof(FerryObject, type_index),
      offsetof(FerryObject, deleter),
      sizeof(FerryStringObject),
      sizeof(FerryTensorObject),
      sizeof(FerryDataType),
      sizeof(FerryAny),
      alignof(FerryAny),
      sizeof(FerryTypeInfo),
      sizeof(FerryFieldSpec),
      sizeof(FerryErrorFrame),
      sizeof(DLTensor),
      offsetof(DLTensor, shape),
      offsetof(DLTensor, byte_offset),
      sizeof(DLManagedTensorVersioned),
      sizeof(Object),
      sizeof(StringObj),
      sizeof(BytesObj),
      sizeof(ErrorObj),
      sizeof(FunctionObj),
      alignof(FunctionObj),
      sizeof(std::string),
      sizeof(std::vector<int>),
  };
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint64_t value : values) hash = AbiMix(hash, value);
  return hash;
}

#if defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__has_attribute)
#if __has_attribute(retain)
#define FERRY_ABI_RETAIN __attribute__((retain))  // survives --gc-sections
#endif
#endif
#ifndef FERRY_ABI_RETAIN
#define FERRY_ABI_RETAIN
#endif
/// The record of this shared library. The version is part of the variable's name, so a
/// library that links objects compiled against two versions keeps two records (and is refused)
/// instead of folding them into one.
[[maybe_unused]] __attribute__((used, section(".ferry_abi"), visibility("hidden")))
FERRY_ABI_RETAIN inline constexpr FerryAbiRecord FERRY_STR_CONCAT(kAbiRecordV,
                                                                  FERRY_ABI_VERSION) = {
    {'F', 'E', 'R', 'R', 'Y', 'A', 'B', 'I'},
    FERRY_ABI_VERSION,
    static_cast<uint32_t>(sizeof(FerryAbiRecord)),
    AbiFingerprint(),
};
#undef FERRY_ABI_RETAIN
#endif

}  // namespace details
}  // namespace ferry

#endif  // FERRY_DETAILS_ABI_RECORD_H_
