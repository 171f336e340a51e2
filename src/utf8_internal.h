/// \file utf8_internal.h
/// UTF-8 checks and encoding shared by the JSON reader (which validates its input) and the JSON
/// writer (which refuses to write bytes that are not UTF-8).
///
///     size_t n = Utf8Length(text.substr(pos));  // 0: not a valid multi-byte character
#ifndef FERRY_SRC_UTF8_INTERNAL_H_
#define FERRY_SRC_UTF8_INTERNAL_H_

#include <cstddef>      // size_t
#include <cstdint>      // uint32_t
#include <string>       // AppendUtf8's output
#include <string_view>  // the text checked

namespace ferry {
namespace details {

/// The length of the valid UTF-8 sequence at the start of `s` (not ASCII), or 0.
inline size_t Utf8Length(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  size_t n;
  uint32_t min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  uint32_t code = b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[k]);
    if ((b & 0xC0) != 0x80) return 0;
    code = (code << 6) | (b & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

/// Appends the UTF-8 encoding of code point `code` (at most 0x10FFFF, not a surrogate).
inline void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    *out += static_cast<char>(code);
  } else if (code < 0x800) {
    *out += static_cast<char>(0xC0 | (code >> 6));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    *out += static_cast<char>(0xE0 | (code >> 12));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (code >> 18));
    *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_UTF8_INTERNAL_H_
