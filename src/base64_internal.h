/// \file base64_internal.h
/// Base64 (RFC 4648, padded), for the bytes JSON carries as text: tensor data and Bytes.
#ifndef FERRY_SRC_BASE64_INTERNAL_H_
#define FERRY_SRC_BASE64_INTERNAL_H_

#include <string>
#include <string_view>

namespace ferry {
namespace details {

/// `size` bytes at `data` as base64.
std::string Base64Encode(const char* data, size_t size);
/// Decodes `text` into `*out`; false with the reason in `*why` when it is not padded base64.
bool Base64Decode(std::string_view text, std::string* out, std::string* why);

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_BASE64_INTERNAL_H_
