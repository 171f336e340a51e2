/// \file float_repr_internal.h
/// FloatRepr: a floating-point value as Python's repr writes it, for the text forms of values
/// (AnyRepr, a Tensor's repr), so that a float never reads like an int.
///
///     FloatRepr(2.0) == "2.0";  FloatRepr(0.1) == "0.1";  FloatRepr(1e16) == "1e+16"
#ifndef FERRY_SRC_FLOAT_REPR_INTERNAL_H_
#define FERRY_SRC_FLOAT_REPR_INTERNAL_H_

#include <charconv>  // to_chars: the shortest text that reads back as the same value
#include <cmath>     // isnan, isinf
#include <cstdlib>   // atoi of the exponent
#include <string>
#include <string_view>

namespace ferry {
namespace details {

/// The shortest text that reads back as `v` (as a T), laid out as Python's repr: positional
/// notation with at least one digit after the point for exponents -4 to 15, else scientific
/// with a signed exponent of at least two digits; "nan", "inf", "-inf".
template <typename T>
std::string FloatRepr(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(r.ptr - buf));  // "-1.25e+05"
  std::string out;
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exp = std::atoi(std::string(text.substr(e + 1)).c_str());
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    } else if (digits.size() <= static_cast<size_t>(exp) + 1) {
      out += digits;
      out.append(static_cast<size_t>(exp) + 1 - digits.size(), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<size_t>(exp) + 1);
      out += '.';
      out.append(digits, static_cast<size_t>(exp) + 1, std::string::npos);
    }
  } else {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += exp < 0 ? "e-" : "e+";
    if (std::abs(exp) < 10) out += '0';
    out += std::to_string(std::abs(exp));
  }
  return out;
}

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_FLOAT_REPR_INTERNAL_H_
