/// \file json_writer_internal.h
/// The JSON writer of SaveJSON: an output buffer with cheap appends, and the escaping of strings
/// and the spelling of floats that the reader reads back to the same values. Header only: the
/// saver in json.cc calls these per value, and they inline there.
///
///     JsonWriter out; WriteString("a\"b", &out); std::string text = out.Take();
#ifndef FERRY_SRC_JSON_WRITER_INTERNAL_H_
#define FERRY_SRC_JSON_WRITER_INTERNAL_H_

#include <algorithm>    // std::max
#include <charconv>     // to_chars: locale-free numbers
#include <cmath>        // isnan, isinf
#include <cstring>      // memcpy
#include <string>       // the buffer
#include <string_view>  // what is appended

#include "ferry/error.h"
#include "utf8_internal.h"

namespace ferry {
namespace details {

/// The output of SaveJSON: one buffer with a write position, so an append is a capacity
/// check and a memcpy (std::string::append is an out-of-line call that rechecks everything).
/// The spare capacity is zero-filled by resize, which is cheaper than it sounds (memset).
class JsonWriter {
 public:
  void append(const char* text, size_t n) {
    std::memcpy(Room(n), text, n);
    size_ += n;
  }
  JsonWriter& operator+=(char c) {
    *Room(1) = c;
    ++size_;
    return *this;
  }
  JsonWriter& operator+=(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  void PutInt(int64_t value) {
    char* at = Room(24);
    size_ = static_cast<size_t>(std::to_chars(at, at + 24, value).ptr - buf_.data());
  }
  std::string Take() {
    buf_.resize(size_);
    return std::move(buf_);
  }

 private:
  char* Room(size_t n) {
    if (buf_.size() - size_ < n) buf_.resize(std::max(buf_.size() * 2, size_ + n + 4096));
    return &buf_[size_];
  }
  std::string buf_;
  size_t size_ = 0;
};

/// `Out` is std::string or JsonWriter.
template <typename Out>
inline void WriteString(std::string_view s, Out* out) {
  static const char kHex[] = "0123456789abcdef";
  *out += '"';
  for (size_t k = 0; k < s.size();) {
    // Copy a run of characters that need no escape at once.
    size_t plain = k;
    while (plain < s.size() && static_cast<unsigned char>(s[plain]) >= 0x20 &&
           static_cast<unsigned char>(s[plain]) < 0x80 && s[plain] != '"' && s[plain] != '\\') {
      ++plain;
    }
    if (plain > k) {
      out->append(s.data() + k, plain - k);
      k = plain;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[k]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(s.substr(k));
      if (n == 0) {
        FERRY_THROW(ValueError) << "SaveJSON: a string holds bytes that are not UTF-8 (at byte "
                                << k << ")";
      }
      out->append(s.data() + k, n);
      k += n;
      continue;
    }
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\r':
        *out += "\\r";
        break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          *out += kHex[c >> 4];
          *out += kHex[c & 15];
        } else {
          *out += static_cast<char>(c);
        }
    }
    ++k;
  }
  *out += '"';
}

template <typename Out>
inline void WriteFloat(double d, Out* out) {
  if (std::isnan(d)) {
    *out += "{\"float\": \"nan\"}";
  } else if (std::isinf(d)) {
    *out += d > 0 ? "{\"float\": \"inf\"}" : "{\"float\": \"-inf\"}";
  } else {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), d);
    std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
    *out += text;
    if (text.find_first_of(".e") == std::string_view::npos) *out += ".0";
  }
}

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_JSON_WRITER_INTERNAL_H_
