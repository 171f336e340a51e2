/// \file tensor_internal.h
/// What JSON and structural equality need of a tensor's contents (src/tensor.cc).
#ifndef FERRY_SRC_TENSOR_INTERNAL_H_
#define FERRY_SRC_TENSOR_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/tensor.h"

namespace ferry {
namespace details {

/// The elements of a host tensor in row-major order, compact, as base64 (RFC 4648, padded).
/// A tensor in device memory is a ValueError naming its device: Ferry cannot read it.
std::string TensorToBase64(const TensorObj* tensor);
/// A new CPU tensor of `dtype` and `shape` holding the bytes of `base64`; a ValueError saying
/// what is wrong when the text is not base64 or its length does not match the shape.
Tensor TensorFromBase64(DataType dtype, const std::vector<int64_t>& shape, std::string_view base64);
/// Same dtype, shape and bytes (read through each tensor's strides). Tensors whose memory the
/// host cannot read are equal only to themselves.
bool TensorContentEqual(const TensorObj* a, const TensorObj* b);
/// A hash of dtype, shape and bytes, consistent with TensorContentEqual.
uint64_t TensorContentHash(const TensorObj* tensor);
/// Whether a cast of `value` to the type named `expected` fails only because the tensor is
/// read-only and the type ("ferry.Tensor", "DLTensor*") may write: then the error is a
/// ValueError saying so, not a TypeError.
bool IsReadOnlyTensorFor(const FerryAny* value, const std::string& expected);
/// The explanation of that refusal.
inline const char* ReadOnlyTensorRefusal() {
  return "the tensor is read-only and a parameter of this type may write to it (a function "
         "that only reads takes ferry::ConstTensor or const DLTensor*)";
}

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_TENSOR_INTERNAL_H_
