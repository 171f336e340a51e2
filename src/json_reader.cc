/// \file json_reader.cc
/// The JSON reader (json_reader_internal.h): text in, a tape of JNodes out, every syntax error
/// with its line and column. It knows nothing of objects; json.cc reads the tape.
#include <charconv>  // from_chars: locale-free numbers
#include <cstring>   // strlen, memcpy
#include <optional>  // the key set of a large object
#include <string>
#include <string_view>
#include <unordered_set>  // the keys of a large object

#include "ferry/reflection/json.h"  // kMaxJSONDepth
#include "json_reader_internal.h"
#include "utf8_internal.h"

namespace ferry {
namespace details {
namespace {

constexpr ByteTable MakeSpace() {
  ByteTable t;
  t.is[' '] = t.is['\n'] = t.is['\r'] = t.is['\t'] = true;
  return t;
}
/// Bytes that stand for themselves in a string: not '"', '\\', a control character or UTF-8.
constexpr ByteTable MakePlain() {
  ByteTable t;
  for (int c = 0x20; c < 0x80; ++c) t.is[c] = c != '"' && c != '\\';
  return t;
}
constexpr ByteTable kSpace = MakeSpace();
constexpr ByteTable kPlain = MakePlain();

/// The input character at the start of `s` as a message shows it: the whole UTF-8 character, or
/// "\xNN" for a byte that starts none (a message stays valid UTF-8).
std::string QuoteChar(std::string_view s) {
  if (s.empty()) return std::string();
  const auto b = static_cast<unsigned char>(s[0]);
  if (b >= 0x20 && b < 0x7F) return std::string(1, s[0]);
  const size_t n = b >= 0x80 ? Utf8Length(s) : 0;
  if (n != 0) return std::string(s.substr(0, n));
  static const char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[b >> 4] + kHex[b & 15];
}

}  // namespace

std::string QuoteText(std::string_view s) {
  constexpr size_t kMaxQuoted = 64;
  std::string out;
  size_t pos = 0;
  while (pos < s.size() && out.size() < kMaxQuoted) {
    const size_t n = static_cast<unsigned char>(s[pos]) >= 0x80 ? Utf8Length(s.substr(pos)) : 0;
    if (n != 0) {
      out.append(s.substr(pos, n));
      pos += n;
    } else {
      out += QuoteChar(s.substr(pos, 1));
      ++pos;
    }
  }
  if (pos < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

const char* KindName(uint64_t kind) {
  static const char* const names[] = {"null",     "a boolean", "an integer", "a number",
                                      "a string", "an array",  "an object"};
  return names[kind];
}

void JsonReader::ParseDocument() {
  ParseValue(0, false);
  SkipSpace();
  if (pos_ != text_.size()) Fail("unexpected text after the document");
}

size_t JsonReader::PosOf(size_t index) const {
  JsonReader again(text_);
  again.want_ = index < split_ ? index : index + dropped_;  // the index in the whole tape
  again.ParseDocument();
  return again.found_;
}

std::string JsonReader::Where(size_t pos) const {
  size_t line = 1, column = 1;
  for (size_t k = 0; k < pos && k < text_.size(); ++k) {
    if (text_[k] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

[[noreturn]] void JsonReader::Fail(const std::string& what) const {
  FailAt(pos_, pos_ >= text_.size() ? what + " (the text ends too early)" : what);
}

void JsonReader::SkipRun(const ByteTable& table) {
  const char* p = text_.data() + pos_;
  const char* const end = text_.data() + text_.size();
  while (p != end && table.is[static_cast<unsigned char>(*p)]) ++p;
  pos_ = static_cast<size_t>(p - text_.data());
}

void JsonReader::SkipSpace() {
  // Most calls find no space at all (the writer puts one only after ':' and ',').
  if (pos_ < text_.size() && static_cast<unsigned char>(text_[pos_]) > ' ') return;
  SkipRun(kSpace);
}

bool JsonReader::Peek(char c) {
  SkipSpace();
  return pos_ < text_.size() && text_[pos_] == c;
}

void JsonReader::Expect(char c) {
  if (!Peek(c)) Fail(std::string("expected '") + c + "'");
  ++pos_;
}

void JsonReader::ExpectWord(const char* word) {
  const size_t n = std::strlen(word);
  if (text_.substr(pos_, n) != word) Fail("invalid literal");
  pos_ += n;
}

size_t JsonReader::Push(JNode::Kind kind) {
  if (tape_.size() == want_) found_ = pos_;
  JNode node;
  node.kind = kind;
  node.size = 0;
  node.i = 0;
  tape_.push_back(node);
  return tape_.size() - 1;
}

void JsonReader::PushString() {
  const size_t at = Push(JNode::kString);
  const std::string_view s = ParseString();
  tape_[at].s = s.data();
  tape_[at].size = s.size();
}

void JsonReader::ParseValue(int depth, bool stream) {
  SkipSpace();
  if (pos_ >= text_.size()) Fail("expected a value");
  const char c = text_[pos_];
  if (c == '{' || c == '[') {
    if (depth >= kMaxJSONDepth) {
      Fail("nesting deeper than " + std::to_string(kMaxJSONDepth) + " levels");
    }
    const size_t at = Push(c == '[' ? JNode::kArray : JNode::kObject);
    ++pos_;
    uint64_t count = 0;
    if (c == '[') {
      if (!Peek(']')) {
        if (stream && c == '[') split_ = at + 1;
        do {
          if (stream && fast_item_ != nullptr) {
            SkipSpace();
            size_t values = 0, items = 0;
            const char* const base = text_.data();
            const char* const past =
                fast_item_(context_, base + pos_, base + text_.size(), &values, &items);
            if (past != nullptr) {
              pos_ = static_cast<size_t>(past - base);
              dropped_ += values;
              count += items;
              continue;  // to the loop's condition
            }
          }
          const size_t item = tape_.size();
          ParseValue(depth + 1, false);
          ++count;
          if (stream) {
            on_item_(context_, item);
            dropped_ += tape_.size() - item;
            tape_.resize(item);
          }
        } while (Peek(',') && ++pos_);
      }
      Expect(']');
    } else {
      if (!Peek('}')) {
        // Duplicate keys: the members so far are searched in place up to kLinearKeys of
        // them, then through a set (a hostile object of 1e5 keys took 17 s to check).
        constexpr uint64_t kLinearKeys = 16;
        std::optional<std::unordered_set<std::string_view>> seen;  // made when needed
        do {
          SkipSpace();
          const size_t key_pos = pos_;
          if (!Peek('"')) Fail("expected a string key");
          const size_t key = tape_.size();
          PushString();
          const std::string_view name = tape_[key].str();  // into the text or unescaped_
          bool duplicate;
          if (count < kLinearKeys) {
            tape_[at].size = count;  // Find looks at the members so far
            duplicate = Find(at, name) != 0;
          } else {
            if (!seen) {
              seen.emplace();
              for (size_t k = at + 1, m = 0; m < count; ++m, k = Next(k + 1)) {
                seen->insert(tape_[k].str());
              }
            }
            duplicate = !seen->insert(name).second;
          }
          if (duplicate) FailAt(key_pos, "duplicate key \"" + QuoteText(name) + "\"");
          Expect(':');
          ParseValue(depth + 1, depth == 0 && on_item_ != nullptr && tape_[key].str() == "nodes");
          ++count;
        } while (Peek(',') && ++pos_);
      }
      Expect('}');
    }
    tape_[at].size = count;
    tape_[at].end = tape_.size();
    return;
  }
  if (c == '"') {
    PushString();
  } else if (c == 't') {
    tape_[Push(JNode::kBool)].i = 1;
    ExpectWord("true");
  } else if (c == 'f') {
    Push(JNode::kBool);
    ExpectWord("false");
  } else if (c == 'n') {
    Push(JNode::kNull);
    ExpectWord("null");
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    ParseNumber();
  } else {
    Fail("unexpected character '" + QuoteChar(text_.substr(pos_)) + "'");
  }
}

void JsonReader::ParseNumber() {
  const size_t at = Push(JNode::kInt);
  const size_t start = pos_;
  auto digits = [&] {
    const size_t from = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ - from;
  };
  if (text_[pos_] == '-') ++pos_;
  const size_t int_start = pos_;
  const size_t int_digits = digits();
  if (int_digits == 0) Fail("expected digits");
  if (int_digits > 1 && text_[int_start] == '0') FailAt(int_start, "leading zero in a number");
  bool is_float = false;
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) Fail("expected digits after '.'");
    is_float = true;
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (digits() == 0) Fail("expected digits in the exponent");
    is_float = true;
  }
  const char* first = text_.data() + start;
  const char* last = text_.data() + pos_;
  JNode& v = tape_[at];
  if (!is_float && int_digits <= 18) {  // fits: no overflow check, no from_chars
    int64_t value = 0;
    for (const char* d = text_.data() + int_start; d != last; ++d) value = value * 10 + (*d - '0');
    v.i = *first == '-' ? -value : value;
    return;
  }
  std::from_chars_result r;
  if (is_float) {
    v.kind = JNode::kFloat;
    r = std::from_chars(first, last, v.f);
  } else {
    r = std::from_chars(first, last, v.i);
  }
  if (r.ec != std::errc() || r.ptr != last) {
    FailAt(start,
           "number " + QuoteText(std::string_view(first, pos_ - start)) + " is out of range");
  }
}

void JsonReader::SkipPlain() {
  const char* p = text_.data() + pos_;
  const char* const end = text_.data() + text_.size();
  // Most strings of a document (keys, type keys) are short: the first bytes one at a time.
  for (const char* const first = end - p > 8 ? p + 8 : end; p != first; ++p) {
    if (!kPlain.is[static_cast<unsigned char>(*p)]) {
      pos_ = static_cast<size_t>(p - text_.data());
      return;
    }
  }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Eight bytes per step (SWAR): a flag at the top bit of each byte that is a quote, a
  // backslash, a control character or not ASCII. Each test may also flag a byte above the
  // first real match (a borrow carries upward), never one below it, so the lowest flag is the
  // first byte that ends the run; on a little-endian machine it is the lowest set bit.
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
    const uint64_t stop = ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                          ((backslash - kOnes) & ~backslash) | w;
    const uint64_t flags = stop & kHigh;
    if (flags != 0) {
      pos_ = static_cast<size_t>(p - text_.data()) + (__builtin_ctzll(flags) >> 3);
      return;
    }
    p += 8;
  }
#endif
  while (p != end && kPlain.is[static_cast<unsigned char>(*p)]) ++p;
  pos_ = static_cast<size_t>(p - text_.data());
}

std::string_view JsonReader::ParseString() {
  ++pos_;  // the opening quote
  const size_t begin = pos_;
  std::string* out = nullptr;  // set at the first escape
  while (true) {
    // Most of a document is plain ASCII in strings: skip it eight bytes a step.
    const size_t run = pos_;
    SkipPlain();
    if (out != nullptr) out->append(text_.data() + run, pos_ - run);
    if (pos_ >= text_.size()) Fail("unterminated string");
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      if (out == nullptr) return text_.substr(begin, pos_ - 1 - begin);
      return *out;
    }
    if (c < 0x20) Fail("control character in a string");
    if (c == '\\') {
      if (out == nullptr) {
        out = &unescaped_.emplace_back(text_.substr(begin, pos_ - begin));
      }
      ParseEscape(out);
      continue;
    }
    // Neither plain, a quote, a control character nor an escape: a non-ASCII byte.
    const size_t n = Utf8Length(text_.substr(pos_));
    if (n == 0) Fail("invalid UTF-8 in a string");
    if (out != nullptr) out->append(text_.data() + pos_, n);
    pos_ += n;
  }
}

void JsonReader::ParseEscape(std::string* out) {
  ++pos_;
  if (pos_ >= text_.size()) Fail("unterminated escape");
  const char e = text_[pos_++];
  switch (e) {
    case '"':
      *out += '"';
      return;
    case '\\':
      *out += '\\';
      return;
    case '/':
      *out += '/';
      return;
    case 'b':
      *out += '\b';
      return;
    case 'f':
      *out += '\f';
      return;
    case 'n':
      *out += '\n';
      return;
    case 'r':
      *out += '\r';
      return;
    case 't':
      *out += '\t';
      return;
    case 'u':
      break;
    default:
      --pos_;
      Fail("invalid escape '\\" + QuoteChar(text_.substr(pos_)) + "'");
  }
  uint32_t code = ParseHex4();
  if (code >= 0xD800 && code <= 0xDBFF) {
    if (text_.substr(pos_, 2) != "\\u") Fail("unpaired surrogate in \\u escape");
    pos_ += 2;
    const uint32_t low = ParseHex4();
    if (low < 0xDC00 || low > 0xDFFF) Fail("unpaired surrogate in \\u escape");
    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
  } else if (code >= 0xDC00 && code <= 0xDFFF) {
    Fail("unpaired surrogate in \\u escape");
  }
  AppendUtf8(code, out);
}

uint32_t JsonReader::ParseHex4() {
  uint32_t code = 0;
  for (int k = 0; k < 4; ++k, ++pos_) {
    if (pos_ >= text_.size()) Fail("unterminated \\u escape");
    const char h = text_[pos_];
    code <<= 4;
    if (h >= '0' && h <= '9') {
      code |= h - '0';
    } else if (h >= 'a' && h <= 'f') {
      code |= h - 'a' + 10;
    } else if (h >= 'A' && h <= 'F') {
      code |= h - 'A' + 10;
    } else {
      Fail("invalid hex digit in \\u escape");
    }
  }
  return code;
}

}  // namespace details
}  // namespace ferry
