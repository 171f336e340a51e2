/* The layout probe of ferry-sys: C's own sizes, alignments, offsets and constants of the ABI in
 * include/ferry/c_api.h, compiled by build.rs, so that tests/layout.rs compares the Rust
 * declarations with what the C compiler makes of the header (not with numbers copied by hand). */
#include <ferry/c_api.h>
#include <stddef.h>

typedef struct {
  const char* name;
  int64_t value;
} FerrySysLayoutEntry;

#define ALIGN_OF(T) \
  offsetof(         \
      struct {      \
        char c;     \
        T t;        \
      },            \
      t)
#define SIZE(T) \
  {"sizeof " #T, (int64_t)sizeof(T)}, { "alignof " #T, (int64_t)ALIGN_OF(T) }
#define OFFSET(T, f) \
  { "offsetof " #T "." #f, (int64_t)offsetof(T, f) }
#define CONST(c) \
  { #c, (int64_t)(c) }

static const FerrySysLayoutEntry kEntries[] = {
    SIZE(FerryObject),
    OFFSET(FerryObject, ref_counter),
    OFFSET(FerryObject, type_index),
    OFFSET(FerryObject, deleter),
    SIZE(FerryAny),
    OFFSET(FerryAny, type_index),
    OFFSET(FerryAny, small_len),
    OFFSET(FerryAny, v_int64),
    OFFSET(FerryAny, v_float64),
    OFFSET(FerryAny, v_ptr),
    OFFSET(FerryAny, v_obj),
    OFFSET(FerryAny, v_c_str),
    OFFSET(FerryAny, v_dtype),
    OFFSET(FerryAny, v_bytes),
    SIZE(FerryStringObject),
    OFFSET(FerryStringObject, header),
    OFFSET(FerryStringObject, data),
    OFFSET(FerryStringObject, size),
    SIZE(FerryTensorObject),
    OFFSET(FerryTensorObject, header),
    OFFSET(FerryTensorObject, dl_tensor),
    OFFSET(FerryTensorObject, flags),
    SIZE(FerryDataType),
    OFFSET(FerryDataType, code),
    OFFSET(FerryDataType, bits),
    OFFSET(FerryDataType, lanes),
    SIZE(FerryTypeInfo),
    OFFSET(FerryTypeInfo, type_index),
    OFFSET(FerryTypeInfo, type_depth),
    OFFSET(FerryTypeInfo, type_key),
    OFFSET(FerryTypeInfo, type_ancestors),
    OFFSET(FerryTypeInfo, num_child_slots),
    OFFSET(FerryTypeInfo, child_slots_can_overflow),
    SIZE(FerryFieldSpec),
    OFFSET(FerryFieldSpec, name),
    OFFSET(FerryFieldSpec, type),
    OFFSET(FerryFieldSpec, flags),
    SIZE(FerryErrorFrame),
    OFFSET(FerryErrorFrame, function),
    OFFSET(FerryErrorFrame, file),
    OFFSET(FerryErrorFrame, line),
    OFFSET(FerryErrorFrame, library),
    OFFSET(FerryErrorFrame, address),
    SIZE(DLPackVersion),
    SIZE(DLDevice),
    OFFSET(DLDevice, device_type),
    OFFSET(DLDevice, device_id),
    SIZE(DLDataType),
    SIZE(DLTensor),
    OFFSET(DLTensor, data),
    OFFSET(DLTensor, device),
    OFFSET(DLTensor, ndim),
    OFFSET(DLTensor, dtype),
    OFFSET(DLTensor, shape),
    OFFSET(DLTensor, strides),
    OFFSET(DLTensor, byte_offset),
    SIZE(DLManagedTensor),
    OFFSET(DLManagedTensor, dl_tensor),
    OFFSET(DLManagedTensor, manager_ctx),
    OFFSET(DLManagedTensor, deleter),
    SIZE(DLManagedTensorVersioned),
    OFFSET(DLManagedTensorVersioned, version),
    OFFSET(DLManagedTensorVersioned, manager_ctx),
    OFFSET(DLManagedTensorVersioned, deleter),
    OFFSET(DLManagedTensorVersioned, flags),
    OFFSET(DLManagedTensorVersioned, dl_tensor),
    CONST(kFerryNone),
    CONST(kFerryInt),
    CONST(kFerryBool),
    CONST(kFerryFloat),
    CONST(kFerryOpaquePtr),
    CONST(kFerryDataType),
    CONST(kFerryRawStr),
    CONST(kFerrySmallStr),
    CONST(kFerryDLTensorPtr),
    CONST(kFerryStaticObjectBegin),
    CONST(kFerryObject),
    CONST(kFerryString),
    CONST(kFerryError),
    CONST(kFerryFunction),
    CONST(kFerryArray),
    CONST(kFerryMap),
    CONST(kFerryShape),
    CONST(kFerryBytes),
    CONST(kFerryTensor),
    CONST(kFerryList),
    CONST(kFerryDict),
    CONST(kFerryStaticObjectEnd),
    CONST(kFerryDynamicObjectBegin),
    CONST(kFerryDTypeInt),
    CONST(kFerryDTypeUInt),
    CONST(kFerryDTypeFloat),
    CONST(kFerryDTypeHandle),
    CONST(kFerryDTypeBFloat),
    CONST(kFerryDTypeComplex),
    CONST(kFerryDTypeBool),
    CONST(kFerryFieldNoCompare),
    CONST(kFerryFieldNoRepr),
    CONST(kFerryTypeFinal),
    CONST(kFerryTypeFrozen),
    CONST(kFerryFunctionQuick),
    CONST(kFerryDefaultFactory),
    CONST(kDLCPU),
    CONST(kDLCUDA),
    CONST(DLPACK_FLAG_BITMASK_READ_ONLY),
    CONST(FERRY_VERSION_MAJOR),
    CONST(FERRY_VERSION_MINOR),
    CONST(FERRY_VERSION_PATCH),
};

/* The probe's table: `*count` entries of (what, value). */
const FerrySysLayoutEntry* ferry_sys_layout(size_t* count) {
  *count = sizeof(kEntries) / sizeof(kEntries[0]);
  return kEntries;
}
