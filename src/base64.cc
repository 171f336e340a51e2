/// \file base64.cc
/// Base64 encoding and decoding (base64_internal.h).
#include <array>
#include <cstdint>

#include "base64_internal.h"

namespace ferry {
namespace details {
namespace {
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string Base64Encode(const char* data, size_t size) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += kBase64[v >> 18];
    out += kBase64[(v >> 12) & 63];
    out += kBase64[(v >> 6) & 63];
    out += kBase64[v & 63];
  }
  if (i < size) {
    uint32_t v = uint32_t{bytes[i]} << 16;
    if (i + 1 < size) v |= uint32_t{bytes[i + 1]} << 8;
    out += kBase64[v >> 18];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < size ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool Base64Decode(std::string_view text, std::string* out, std::string* why) {
  static const auto kDecode = [] {
    std::array<int8_t, 256> table{};
    table.fill(-1);
    for (int k = 0; k < 64; ++k) table[static_cast<uint8_t>(kBase64[k])] = static_cast<int8_t>(k);
    return table;
  }();
  if (text.size() % 4 != 0) {
    *why = "the length of base64 text must be a multiple of 4, not " + std::to_string(text.size());
    return false;
  }
  out->clear();
  out->reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int pad = 0;
    if (i + 4 == text.size() && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      if (k >= 4 - pad) {
        v <<= 6;
        continue;
      }
      const int8_t d = kDecode[static_cast<uint8_t>(text[i + static_cast<size_t>(k)])];
      if (d < 0) {
        *why = "invalid base64 character at offset " + std::to_string(i + static_cast<size_t>(k));
        return false;
      }
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    const char group[3] = {static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                           static_cast<char>(v)};
    out->append(group, static_cast<size_t>(3 - pad));
  }
  return true;
}

}  // namespace details
}  // namespace ferry
