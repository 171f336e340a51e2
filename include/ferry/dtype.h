/// \file ferry/dtype.h
/// `DataType`: a plain value naming an element type by code, bits and lanes, with the text
/// form used everywhere ("int64", "float32x4", "bool", "handle", "void").
///
///     DataType t("float32x4");  // t.is_float() && t.bits() == 32 && t.lanes() == 4
#ifndef FERRY_DTYPE_H_
#define FERRY_DTYPE_H_

#include <ostream>      // operator<<
#include <string>       // ToString
#include <string_view>  // parsing

#include "ferry/base.h"

namespace ferry {

class DataType {
 public:
  enum TypeCode : uint8_t {
    kInt = kFerryDTypeInt,
    kUInt = kFerryDTypeUInt,
    kFloat = kFerryDTypeFloat,
    kHandle = kFerryDTypeHandle,
    kBFloat = kFerryDTypeBFloat,
    /// DLPack's complex numbers ("complex64", "complex128").
    kComplex = kFerryDTypeComplex,
    /// DLPack's byte-wide booleans ("bool8"), as NumPy and PyTorch hand them over; "bool" is the
    /// 1-bit uint of TVM's IR.
    kDLBool = kFerryDTypeBool,
  };

  /// The void type (handle, 0 bits, 0 lanes).
  DataType() : data_{kHandle, 0, 0} {}
  /// Throws ValueError for an unknown code, bits outside 0..255 or lanes outside 0..65535.
  FERRY_DLL DataType(int code, int bits, int lanes = 1);
  explicit DataType(FerryDataType data) : data_(data) {}
  /// Parses the text form; throws ValueError naming the text when it is not one.
  FERRY_DLL explicit DataType(std::string_view text);

  static DataType Int(int bits, int lanes = 1) { return DataType(kInt, bits, lanes); }
  static DataType UInt(int bits, int lanes = 1) { return DataType(kUInt, bits, lanes); }
  static DataType Float(int bits, int lanes = 1) { return DataType(kFloat, bits, lanes); }
  static DataType BFloat(int bits, int lanes = 1) { return DataType(kBFloat, bits, lanes); }
  static DataType Bool(int lanes = 1) { return DataType(kUInt, 1, lanes); }
  static DataType Handle(int bits = 64, int lanes = 1) { return DataType(kHandle, bits, lanes); }
  static DataType Void() { return DataType(); }

  int code() const { return data_.code; }
  int bits() const { return data_.bits; }
  int lanes() const { return data_.lanes; }
  /// Bytes of one lane, rounded up.
  int bytes() const { return (bits() + 7) / 8; }
  bool is_int() const { return code() == kInt; }
  bool is_uint() const { return code() == kUInt; }
  bool is_float() const { return code() == kFloat; }
  bool is_bfloat() const { return code() == kBFloat; }
  bool is_complex() const { return code() == kComplex; }
  bool is_bool() const { return code() == kUInt && bits() == 1; }
  bool is_handle() const { return code() == kHandle && !is_void(); }
  bool is_void() const { return code() == kHandle && bits() == 0 && lanes() == 0; }
  bool is_scalar() const { return lanes() == 1; }
  bool is_vector() const { return lanes() > 1; }
  DataType with_lanes(int lanes) const { return DataType(code(), bits(), lanes); }
  DataType element_of() const { return with_lanes(1); }

  /// The text form, which the parsing constructor reads back to an equal DataType.
  FERRY_DLL std::string ToString() const;
  operator FerryDataType() const { return data_; }  // NOLINT(google-explicit-constructor)

  bool operator==(const DataType& other) const {
    return data_.code == other.data_.code && data_.bits == other.data_.bits &&
           data_.lanes == other.data_.lanes;
  }
  bool operator!=(const DataType& other) const { return !(*this == other); }

 private:
  FerryDataType data_;
};

inline std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.ToString(); }

}  // namespace ferry

#endif  // FERRY_DTYPE_H_
