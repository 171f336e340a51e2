/// \file any.cc
/// The cold paths of Any: type keys of cells, cast errors, string storage, and FerryAnyRelease.
#include "ferry/any.h"

#include <cstring>  // memchr
#include <sstream>
#include <string>

#include "c_api_internal.h"
#include "ferry/error.h"
#include "tensor_internal.h"  // the read-only refusal of a tensor argument

namespace ferry {
namespace details {

const char* AnyTypeKey(const FerryAny* value) noexcept {
  switch (value->type_index) {
    case kFerryNone:
      return "None";
    case kFerryInt:
      return "int";
    case kFerryBool:
      return "bool";
    case kFerryFloat:
      return "float";
    case kFerryOpaquePtr:
      return "void*";
    case kFerryDataType:
      return "DataType";
    case kFerryRawStr:
    case kFerrySmallStr:
      return StringObj::_type_key;
    case kFerryDLTensorPtr:
      return "DLTensor*";
    default:
      if (IsObjectIndex(value->type_index)) return TypeIndexToKey(value->type_index);
      return "<unknown value>";
  }
}

/// Whether `name` is what TypeTraits call an integer type: int, int8 ... int64, uint8 ... uint64.
bool IsIntegerTypeName(std::string_view name) {
  if (name.rfind("uint", 0) == 0) {
    name.remove_prefix(4);
  } else if (name.rfind("int", 0) == 0) {
    name.remove_prefix(3);
  } else {
    return false;
  }
  return name.empty() || name == "8" || name == "16" || name == "32" || name == "64";
}

bool IsIntegerOutOfRange(const FerryAny* value, const std::string& expected) {
  // An int cell fails an integer cast only when it does not fit.
  return value->type_index == kFerryInt && IsIntegerTypeName(expected);
}

std::string DescribeCastFailure(const FerryAny* value, const std::string& expected,
                                const std::string& detail) {
  std::ostringstream os;
  if (IsIntegerOutOfRange(value, expected)) {
    os << "integer " << value->v_int64 << " is out of range for " << expected;
  } else if (IsReadOnlyTensorFor(value, expected)) {
    os << ReadOnlyTensorRefusal();
  } else {
    os << "expected " << expected << " but got " << AnyTypeKey(value);
    if (!detail.empty()) os << " (" << detail << ")";
  }
  return os.str();
}

void ThrowCastError(const FerryAny* value, const std::string& expected, const std::string& detail) {
  const char* kind = IsIntegerOutOfRange(value, expected)   ? "OverflowError"
                     : IsReadOnlyTensorFor(value, expected) ? "ValueError"
                                                            : "TypeError";
  ThrowError(kind, DescribeCastFailure(value, expected, detail).c_str());
}

void StringToAnyView(const char* data, size_t size, FerryAny* out) {
  if (size < sizeof(out->v_bytes)) {
    StringToAny(data, size, out);  // inline: no object is made
    return;
  }
  if (const void* nul = std::memchr(data, '\0', size)) {
    FERRY_THROW(ValueError) << "a std::string of " << size << " bytes with a NUL at byte "
                            << (static_cast<const char*>(nul) - data)
                            << " cannot be passed by reference as a C string, which would end "
                               "there; pass ferry::String(s) instead";
  }
  FerryAny cell;
  cell.type_index = kFerryRawStr;
  cell.small_len = size <= UINT32_MAX ? static_cast<uint32_t>(size) : 0;  // 0: read to the NUL
  cell.v_c_str = data;
  *out = cell;
}

}  // namespace details

std::optional<DataType> TypeTraits<DataType>::TryCast(const FerryAny* v) {
  if (v->type_index == kFerryDataType) return DataType(v->v_dtype);
  std::string_view text;
  if (!details::AnyToStringView(v, &text)) return std::nullopt;
  try {
    return DataType(text);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace ferry

int FerryAnyRelease(FerryAny* value) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(value);
  if (ferry::details::IsObjectIndex(value->type_index)) {
    ferry::details::ObjectUnsafe::DecRef(ferry::details::ObjectUnsafe::FromHeader(value->v_obj));
  }
  *value = ferry::details::NoneCell();
  FERRY_C_API_END();
}
