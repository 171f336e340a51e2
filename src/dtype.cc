/// \file dtype.cc
/// Parsing and printing of DataType, and its C ABI.
#include "ferry/dtype.h"

#include <charconv>  // from_chars: strict, locale-free integer parsing
#include <string>

#include "c_api_internal.h"
#include "ferry/error.h"
#include "ferry/string.h"

namespace ferry {
namespace {

/// Reads a decimal in [lo, hi] that spans all of `text`; false otherwise.
bool ParseInt(std::string_view text, int lo, int hi, int* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && *out >= lo && *out <= hi;
}

}  // namespace

DataType::DataType(int code, int bits, int lanes) {
  if (code < kInt || code > kDLBool) {
    FERRY_THROW(ValueError) << "DataType: unknown type code " << code;
  }
  // The ranges the parser accepts, so that every DataType prints as text that reads back;
  // the one exception is void, the handle of 0 bits and 0 lanes.
  const bool is_void = code == kHandle && bits == 0 && lanes == 0;
  if ((bits < 1 || bits > 255) && !is_void) {
    FERRY_THROW(ValueError) << "DataType: bits must be in [1, 255], got " << bits;
  }
  if ((lanes < 1 || lanes > 65535) && !is_void) {
    FERRY_THROW(ValueError) << "DataType: lanes must be in [1, 65535], got " << lanes;
  }
  data_.code = static_cast<uint8_t>(code);
  data_.bits = static_cast<uint8_t>(bits);
  data_.lanes = static_cast<uint16_t>(lanes);
}

DataType::DataType(std::string_view text) : DataType() {
  auto fail = [&](const char* why) {
    FERRY_THROW(ValueError) << "cannot parse '" << text << "' as a DataType: " << why;
  };
  if (text == "void") return;
  std::string_view rest = text;
  int lanes = 1;
  // The lanes follow the last 'x', which must not be the one inside "complex".
  const size_t name_end = rest.substr(0, 7) == "complex" ? 7 : 0;
  if (size_t x = rest.rfind('x'); x != std::string_view::npos && x >= name_end &&
                                  x + 1 < rest.size() && rest[x + 1] >= '0' && rest[x + 1] <= '9') {
    if (!ParseInt(rest.substr(x + 1), 1, 65535, &lanes)) fail("lanes must be in [1, 65535]");
    rest = rest.substr(0, x);
  }
  if (rest == "bool") {
    *this = Bool(lanes);
    return;
  }
  struct Prefix {
    std::string_view name;
    TypeCode code;
    int default_bits;
  };
  // Longer names first, so "uint" is not read as "int" and "bfloat" not as "float".
  static constexpr Prefix kPrefixes[] = {
      {"handle", kHandle, 64}, {"complex", kComplex, 64}, {"bfloat", kBFloat, 16},
      {"float", kFloat, 32},   {"bool", kDLBool, 8},  // "bool" alone is TVM's, read above
      {"uint", kUInt, 32},     {"int", kInt, 32},
  };
  for (const Prefix& prefix : kPrefixes) {
    if (rest.substr(0, prefix.name.size()) != prefix.name) continue;
    std::string_view digits = rest.substr(prefix.name.size());
    int bits = prefix.default_bits;
    if (!digits.empty() && !ParseInt(digits, 1, 255, &bits)) {
      fail("bits must be a number in [1, 255]");
    }
    *this = DataType(prefix.code, bits, lanes);
    return;
  }
  fail(
      "unknown type name (expected int, uint, float, bfloat, complex, handle, bool, boolN or "
      "void)");
}

std::string DataType::ToString() const {
  if (is_void()) return "void";
  std::string out;
  if (is_bool()) {
    out = "bool";
  } else if (code() == kHandle && bits() == 64) {
    out = "handle";  // the default width goes unsaid, as in TVM
  } else {
    switch (code()) {
      case kInt:
        out = "int";
        break;
      case kUInt:
        out = "uint";
        break;
      case kFloat:
        out = "float";
        break;
      case kHandle:
        out = "handle";
        break;
      case kBFloat:
        out = "bfloat";
        break;
      case kComplex:
        out = "complex";
        break;
      case kDLBool:
        out = "bool";
        break;
      default:
        out = "unknown" + std::to_string(code()) + "_";
        break;
    }
    out += std::to_string(bits());
  }
  if (lanes() != 1) out += "x" + std::to_string(lanes());
  return out;
}

}  // namespace ferry

int FerryDataTypeFromString(const char* text, FerryDataType* out_dtype) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(text);
  FERRY_C_API_CHECK_NOT_NULL(out_dtype);
  *out_dtype = ferry::DataType(std::string_view(text));
  FERRY_C_API_END();
}

int FerryDataTypeToString(FerryDataType dtype, FerryObjectHandle* out_string) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_string);
  *out_string = ferry::details::MoveToHandle(ferry::String(ferry::DataType(dtype).ToString()));
  FERRY_C_API_END();
}
