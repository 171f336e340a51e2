/// \file json.cc
/// SaveJSON / LoadJSON: a small strict JSON reader and writer of our own (no dependency; the
/// reader checks UTF-8, number ranges and nesting itself, and reports line:column), and the
/// node-table format on top of reflection. Both directions are iterative over the graph.
#include "ferry/reflection/json.h"

#include <algorithm>      // std::max
#include <charconv>       // to_chars / from_chars: locale-free numbers
#include <cmath>          // isnan, isinf
#include <cstring>        // strlen
#include <deque>          // decoded strings that must not move
#include <exception>      // exception_ptr: a node's error waits for the end of the parse
#include <memory>         // unique_ptr of type texts
#include <unordered_map>  // node types by key, during a load
#include <unordered_set>  // the keys of a large object
#include <vector>         // the parsed document

#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "pointer_map_internal.h"
#include "tensor_internal.h"
#include "ferry/reflection/reflection.h"

namespace ferry {
namespace {

// ---------------------------------------------------------------------------------------------
// JSON values and the reader

/// The length of the valid UTF-8 sequence at the start of `s` (not ASCII), or 0.
size_t Utf8Length(std::string_view s) {
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

/// An input text as a message quotes it: whole characters (see QuoteChar), at most about
/// kMaxQuoted bytes; a longer text is cut and says how long it was.
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

void AppendUtf8(uint32_t code, std::string* out) {
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

/// One value of the parsed document. The document is a flat array of these in text order
/// (a tape): a container is followed by its contents, an object member by its key (a string
/// node) and then its value. 16 bytes and no allocation per value; the old tree of values
/// with a std::string and two vectors each spent most of the load in malloc/free. The text
/// position is not stored: errors are rare, and Reader::PosOf finds it again.
struct JNode {
  enum Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
  uint64_t kind : 3;
  uint64_t size : 61;  // kString: its length; kArray: items; kObject: members
  union {
    int64_t i;      // kBool (0 or 1), kInt
    double f;       // kFloat
    const char* s;  // kString: into the text, or into Reader::unescaped_
    uint64_t end;   // kArray, kObject: the index just past its contents
  };
  std::string_view str() const { return {s, static_cast<size_t>(size)}; }
};
static_assert(sizeof(JNode) == 16, "the tape is the bulk of a load's memory traffic");

/// Byte classes for the reader's inner loops.
struct ByteTable {
  bool is[256] = {};
};
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

const char* KindName(uint64_t kind) {
  static const char* const names[] = {"null",     "a boolean", "an integer", "a number",
                                      "a string", "an array",  "an object"};
  return names[kind];
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  /// Parses the whole text into the tape (so every syntax error comes before any error of
  /// meaning); the document is node 0.
  void ParseDocument() {
    ParseValue(0, false);
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the document");
  }

  const JNode& operator[](size_t k) const { return tape_[k]; }
  /// The index of the value after value `k` (past a container's contents).
  size_t Next(size_t k) const {
    return tape_[k].kind >= JNode::kArray ? static_cast<size_t>(tape_[k].end) : k + 1;
  }
  /// The index of the value of member `key` of object `obj`, or 0 (never a member).
  size_t Find(size_t obj, std::string_view key) const {
    size_t k = obj + 1;
    for (uint64_t m = 0; m < tape_[obj].size; ++m, k = Next(k + 1)) {
      if (tape_[k].str() == key) return k + 1;
    }
    return 0;
  }

  /// Streams the top-level "nodes" array: `fn(context, k)` is called on each of its items
  /// once the item is parsed (tape index k), and the item is then dropped from the tape. So
  /// the tape stays small (a whole document's tape is 16 bytes per value, about 160 MB for a
  /// 1e6-node tree, whose page faults cost more than the parse). The caller must defer its
  /// errors to the end of the parse, so that every syntax error still comes first.
  using ItemFn = void (*)(void* context, size_t index);
  void StreamNodes(ItemFn fn, void* context) {
    on_item_ = fn;
    context_ = context;
  }

  /// Where value `index` starts in the text: parses the text again (without streaming) up to
  /// it. Only errors need positions, so the tape does not carry them. If a streamed item
  /// fails, the text after it is not checked yet and the parse here may fail; but then the
  /// outer parse fails at the same place, and that syntax error is the one reported.
  size_t PosOf(size_t index) const {
    Reader again(text_);
    again.want_ = index < split_ ? index : index + dropped_;  // the index in the whole tape
    again.ParseDocument();
    return again.found_;
  }

  /// "line 3, column 7" of a byte offset.
  std::string Where(size_t pos) const {
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

  [[noreturn]] void FailAt(size_t pos, const std::string& what) const {
    FERRY_THROW(ValueError) << "LoadJSON: " << Where(pos) << ": " << what;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    FailAt(pos_, pos_ >= text_.size() ? what + " (the text ends too early)" : what);
  }

  /// Skips the run of bytes of class `table` at pos_. Local pointers: the loop is the
  /// reader's hottest, and through the members it reloads text_ and pos_ every byte.
  void SkipRun(const ByteTable& table) {
    const char* p = text_.data() + pos_;
    const char* const end = text_.data() + text_.size();
    while (p != end && table.is[static_cast<unsigned char>(*p)]) ++p;
    pos_ = static_cast<size_t>(p - text_.data());
  }
  void SkipSpace() {
    // Most calls find no space at all (the writer puts one only after ':' and ',').
    if (pos_ < text_.size() && static_cast<unsigned char>(text_[pos_]) > ' ') return;
    SkipRun(kSpace);
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void ExpectWord(const char* word) {
    const size_t n = std::strlen(word);
    if (text_.substr(pos_, n) != word) Fail("invalid literal");
    pos_ += n;
  }

  /// Appends a value of `kind` starting at pos_ and returns its index.
  inline size_t Push(JNode::Kind kind) {
    if (tape_.size() == want_) found_ = pos_;
    JNode node;
    node.kind = kind;
    node.size = 0;
    node.i = 0;
    tape_.push_back(node);
    return tape_.size() - 1;
  }
  void PushString() {
    const size_t at = Push(JNode::kString);
    const std::string_view s = ParseString();
    tape_[at].s = s.data();
    tape_[at].size = s.size();
  }

  /// `stream`: the value is the top-level "nodes" (see StreamNodes).
  void ParseValue(int depth, bool stream) {
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
          std::unordered_set<std::string_view> seen;
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
              if (seen.empty()) {
                for (size_t k = at + 1, m = 0; m < count; ++m, k = Next(k + 1)) {
                  seen.insert(tape_[k].str());
                }
              }
              duplicate = !seen.insert(name).second;
            }
            if (duplicate) FailAt(key_pos, "duplicate key \"" + QuoteText(name) + "\"");
            Expect(':');
            ParseValue(depth + 1,
                       depth == 0 && on_item_ != nullptr && tape_[key].str() == "nodes");
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

  void ParseNumber() {
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

  /// Reads a string at pos_ (on the quote), checking escapes and UTF-8. A string without
  /// escapes is returned as a view into the text (no copy); one with escapes is decoded into
  /// unescaped_, which keeps it for the rest of the load.
  std::string_view ParseString() {
    ++pos_;  // the opening quote
    const size_t begin = pos_;
    std::string* out = nullptr;  // set at the first escape
    while (true) {
      // Most of a document is plain ASCII in strings: skip it a byte per table look-up.
      const size_t run = pos_;
      SkipRun(kPlain);
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

  void ParseEscape(std::string* out) {
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

  uint32_t ParseHex4() {
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

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<JNode> tape_;
  std::deque<std::string> unescaped_;  // strings with escapes; a deque never moves them
  size_t want_ = SIZE_MAX;             // PosOf: the value whose position to record
  size_t found_ = 0;
  ItemFn on_item_ = nullptr;  // StreamNodes
  void* context_ = nullptr;
  size_t split_ = SIZE_MAX;  // the first item of the streamed array: from here on, ...
  size_t dropped_ = 0;       // ... the tape index plus this is the index in the whole tape
};

// ---------------------------------------------------------------------------------------------
// The writer

/// The output of SaveJSON: one buffer with a write position, so an append is a capacity
/// check and a memcpy (std::string::append is an out-of-line call that rechecks everything).
/// The spare capacity is zero-filled by resize, which is cheaper than it sounds (memset).
class Writer {
 public:
  void append(const char* text, size_t n) {
    std::memcpy(Room(n), text, n);
    size_ += n;
  }
  Writer& operator+=(char c) {
    *Room(1) = c;
    ++size_;
    return *this;
  }
  Writer& operator+=(std::string_view text) {
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

/// `Out` is std::string or Writer.
template <typename Out>
void WriteString(std::string_view s, Out* out) {
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
void WriteFloat(double d, Out* out) {
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

inline bool IsNodeObject(const FerryAny* v) {
  return details::IsObjectIndex(v->type_index) && v->type_index != kFerryString;
}

// ---------------------------------------------------------------------------------------------
// SaveJSON

/// Appends a string literal without measuring it.
template <typename Out, size_t N>
void Put(Out* out, const char (&text)[N]) {
  out->append(text, N - 1);
}

/// Two passes. Collect orders the objects after the objects they refer to (the node table)
/// and records, node by node, the table index of each object it refers to; the write pass
/// then prints the nodes and takes the indices from that list in the same order, so it needs
/// no lookups. Only shared objects enter the index table: an object with one reference is met
/// once (see structural.cc).
class Saver {
 public:
  std::string Save(const AnyView& root) {
    if (IsNodeObject(root.raw())) Collect(details::ObjectUnsafe::FromHeader(root.raw()->v_obj));
    Put(&out_, "{\"ferry_json\": ");
    out_.PutInt(kJSONFormatVersion);
    Put(&out_, ", \"root\": ");
    if (IsNodeObject(root.raw())) {
      Put(&out_, "{\"ref\": ");  // the root is the last node
      out_.PutInt(static_cast<int64_t>(order_.size()) - 1);
      out_ += '}';
    } else {
      WriteValue(root.raw());
    }
    Put(&out_, ", \"nodes\": [");
    for (size_t k = 0; k < order_.size(); ++k) {
      if (k) {
        Put(&out_, ",\n  ");
      } else {
        Put(&out_, "\n  ");
      }
      WriteNode(order_[k]);
    }
    if (order_.empty()) {
      Put(&out_, "]}");
    } else {
      Put(&out_, "\n]}");
    }
    return out_.Take();
  }

 private:
  /// Appends the values directly inside `obj` to `children_`, borrowed (the graph holds them);
  /// a ValueError when `obj` cannot be saved.
  void AddChildren(const Object* obj) {
    if (const auto* array = obj->as<ArrayObj>()) {
      for (const Any& cell : *array) AddChild(*cell.raw());
    } else if (const auto* map = obj->as<MapObj>()) {
      for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        AddChild(*e->key.raw());
        AddChild(*e->value.raw());
      }
    } else if (const auto* tensor = obj->as<TensorObj>()) {
      // No children; the bytes are read now, so a device tensor fails before any output.
      tensor_data_.push_back(details::TensorToBase64(tensor));
    } else if (obj->type_index() != kFerryShape) {
      const NodeInfo* info = SavedInfo(obj);
      for (const FieldInfo& field : info->fields) {
        const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
        FerryAny cell;
        if (field.type->view(addr, &cell)) {
          AddChild(cell);
        } else {
          // No borrowed form (std::string, Optional of a value): no objects to visit inside
          // except an Optional's, which the node holds as well.
          Any value = field.type->get(addr);
          AddChild(IsNodeObject(value.raw()) ? *value.raw() : details::NoneCell());
        }
      }
    }
  }

  void AddChild(const FerryAny& cell) { children_.push_back(Child{cell, -1}); }

  static const NodeInfo* SavedInfo(const Object* obj) {
    const NodeInfo* info = GetNodeInfo(obj);
    if (info == nullptr || info->type_index != obj->type_index()) {
      FERRY_THROW(ValueError) << "SaveJSON: cannot save a " << obj->GetTypeKey()
                              << ": it is not registered with FERRY_REGISTER_NODE_TYPE";
    }
    return info;
  }

  /// Whether `obj` may be met more than once: shared, or the root (whose reference the caller
  /// may only have borrowed, so a cycle back to it can leave its count at one).
  bool MaybeShared(const Object* obj) const { return !obj->unique() || obj == root_; }

  void Collect(const Object* root) {
    struct Frame {
      const Object* obj;
      size_t begin, next;
      bool shared;
    };
    constexpr int64_t kOpen = -1;
    std::vector<Frame> stack;
    root_ = root;
    auto enter = [&](const Object* obj) {
      const bool shared = MaybeShared(obj);
      if (shared) index_.Insert(obj, kOpen);
      stack.push_back(Frame{obj, children_.size(), children_.size(), shared});
      AddChildren(obj);
    };
    enter(root);
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next < children_.size()) {
        const size_t slot = frame.next++;
        const FerryAny* child = &children_[slot].cell;
        if (!IsNodeObject(child)) continue;
        const Object* obj = details::ObjectUnsafe::FromHeader(child->v_obj);
        if (MaybeShared(obj)) {
          if (const int64_t* index = index_.Find(obj)) {
            if (*index == kOpen) {
              FERRY_THROW(ValueError)
                  << "SaveJSON: the graph has a cycle through a " << obj->GetTypeKey();
            }
            children_[slot].index = *index;
            continue;
          }
        }
        enter(obj);  // invalidates `frame`
        continue;
      }
      const int64_t index = static_cast<int64_t>(order_.size());
      order_.push_back(frame.obj);
      if (frame.shared) *index_.Find(frame.obj) = index;
      for (size_t k = frame.begin; k < children_.size(); ++k) {
        if (IsNodeObject(&children_[k].cell)) refs_.push_back(children_[k].index);
      }
      children_.resize(frame.begin);
      stack.pop_back();
      if (!stack.empty()) children_[stack.back().next - 1].index = index;
    }
  }

  void WriteValue(const FerryAny* v) {
    std::string_view text;
    if (details::AnyToStringView(v, &text)) return WriteString(text, &out_);
    switch (v->type_index) {
      case kFerryNone:
        return Put(&out_, "null");
      case kFerryBool:
        if (v->v_int64) return Put(&out_, "true");
        return Put(&out_, "false");
      case kFerryInt:
        return out_.PutInt(v->v_int64);
      case kFerryFloat:
        return WriteFloat(v->v_float64, &out_);
      case kFerryDataType:
        Put(&out_, "{\"dtype\": ");
        WriteString(DataType(v->v_dtype).ToString(), &out_);
        out_ += '}';
        return;
      default:
        break;
    }
    if (!IsNodeObject(v)) {
      FERRY_THROW(ValueError) << "SaveJSON: cannot save a value of type " << details::AnyTypeKey(v);
    }
    Put(&out_, "{\"ref\": ");
    out_.PutInt(refs_[next_ref_++]);
    out_ += '}';
  }

  /// The constant text of a registered node type: `{"type": "key", "fields": {` and, per
  /// field, `"name": ` (with ", " before all but the first), escaped once per save.
  struct TypeText {
    std::string head;
    std::vector<std::string> names;
  };
  const TypeText& TextOf(const NodeInfo* info) {
    const auto index = static_cast<size_t>(info->type_index);
    if (index >= texts_.size()) texts_.resize(index + 1);
    std::unique_ptr<TypeText>& text = texts_[index];
    if (text == nullptr) {
      text = std::make_unique<TypeText>();
      Put(&text->head, "{\"type\": ");
      WriteString(info->type_key, &text->head);
      Put(&text->head, ", \"fields\": {");
      for (size_t k = 0; k < info->fields.size(); ++k) {
        std::string name = k ? ", " : "";
        WriteString(info->fields[k].name, &name);
        Put(&name, ": ");
        text->names.push_back(std::move(name));
      }
    }
    return *text;
  }

  void WriteNode(const Object* obj) {
    if (const auto* array = obj->as<ArrayObj>()) {
      Put(&out_, "{\"type\": \"ferry.Array\", \"items\": [");
      for (int64_t k = 0; k < array->size(); ++k) {
        if (k) Put(&out_, ", ");
        WriteValue(array->at(k).raw());
      }
      Put(&out_, "]}");
    } else if (const auto* map = obj->as<MapObj>()) {
      Put(&out_, "{\"type\": \"ferry.Map\", \"items\": [");
      bool first = true;
      for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        if (first) {
          out_ += '[';
        } else {
          Put(&out_, ", [");
        }
        first = false;
        WriteValue(e->key.raw());
        Put(&out_, ", ");
        WriteValue(e->value.raw());
        out_ += ']';
      }
      Put(&out_, "]}");
    } else if (const auto* tensor = obj->as<TensorObj>()) {
      // {"type": "ferry.Tensor", "tensor": {"dtype": s, "shape": [...], "data": base64}}: the
      // compact row-major bytes in the machine's order (little-endian on every platform Ferry
      // builds for), base64 so that the document stays one JSON text.
      Put(&out_, "{\"type\": \"ferry.Tensor\", \"tensor\": {\"dtype\": ");
      WriteString(Tensor(GetRef<Tensor>(tensor)).dtype().ToString(), &out_);
      Put(&out_, ", \"shape\": [");
      for (int32_t k = 0; k < tensor->dl_tensor.ndim; ++k) {
        if (k) Put(&out_, ", ");
        out_.PutInt(tensor->dl_tensor.shape[k]);
      }
      Put(&out_, "], \"data\": ");
      WriteString(tensor_data_[next_tensor_++], &out_);
      Put(&out_, "}}");
    } else if (const auto* shape = obj->as<ShapeObj>()) {
      Put(&out_, "{\"type\": \"ferry.Shape\", \"dims\": [");
      for (uint64_t k = 0; k < shape->size; ++k) {
        if (k) Put(&out_, ", ");
        out_.PutInt(shape->data[k]);
      }
      Put(&out_, "]}");
    } else {
      const NodeInfo* info = GetNodeInfo(obj);
      const TypeText& text = TextOf(info);
      out_ += text.head;
      for (size_t k = 0; k < info->fields.size(); ++k) {
        const FieldInfo& field = info->fields[k];
        out_ += text.names[k];
        FerryAny cell;
        Any box;
        const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
        if (!field.type->view(addr, &cell)) {
          box = field.type->get(addr);
          cell = *box.raw();
        }
        WriteValue(&cell);
      }
      Put(&out_, "}}");
    }
  }

  Writer out_;
  /// The base64 bytes of each tensor, in the order the write pass meets them.
  std::vector<std::string> tensor_data_;
  size_t next_tensor_ = 0;
  const Object* root_ = nullptr;
  std::vector<const Object*> order_;           // the node table
  struct Child {
    FerryAny cell;  // borrowed: the graph holds it
    int64_t index;  // its table index, once known
  };
  std::vector<Child> children_;                // Collect: the children of the open frames
  std::vector<int64_t> refs_;                  // the index of every reference, in write order
  size_t next_ref_ = 0;                        // the next entry of refs_ to write
  details::PointerMap<int64_t> index_;         // shared objects: table index, or -1 while open
  std::vector<std::unique_ptr<TypeText>> texts_;  // by type index
};

// ---------------------------------------------------------------------------------------------
// LoadJSON

class Loader {
 public:
  explicit Loader(std::string_view text) : doc_(text) {}

  Any Load() {
    // The nodes are loaded while the text is parsed (see Reader::StreamNodes). The first
    // error of a node is kept and thrown after the parse and the checks of the top level,
    // which is where it came before (when the whole document was parsed first).
    doc_.StreamNodes(&LoadStreamed, this);
    doc_.ParseDocument();
    type_ = {};
    if (doc_[0].kind != JNode::kObject) Fail(0, "the document must be an object");
    const size_t version = doc_.Find(0, "ferry_json");
    if (version == 0) Fail(0, "missing \"ferry_json\" (not a Ferry document?)");
    if (doc_[version].kind != JNode::kInt || doc_[version].i != kJSONFormatVersion) {
      Fail(version, "unsupported format version (this build reads version " +
                        std::to_string(kJSONFormatVersion) + ")");
    }
    const size_t root = Require(0, "root", nullptr);
    const size_t nodes = Require(0, "nodes", nullptr);
    if (doc_[nodes].kind != JNode::kArray) Fail(nodes, "\"nodes\" must be an array");
    size_t key = 1;
    for (uint64_t m = 0; m < doc_[0].size; ++m, key = doc_.Next(key + 1)) {
      const std::string_view name = doc_[key].str();
      if (name != "ferry_json" && name != "root" && name != "nodes") {
        Fail(key + 1, "unknown key \"" + QuoteText(name) + "\"");
      }
    }
    if (error_) std::rethrow_exception(error_);
    type_ = {};
    return ReadValue(root, static_cast<int64_t>(nodes_.size()));
  }

 private:
  static void LoadStreamed(void* self, size_t node) {
    auto* loader = static_cast<Loader*>(self);
    if (loader->error_) return;  // the nodes after an error are only parsed
    try {
      loader->nodes_.push_back(loader->LoadNode(node));
    } catch (...) {
      FERRY_RETHROW_FORCED_UNWIND();
      loader->error_ = std::current_exception();
    }
  }

  /// `at` is a tape index.
  [[noreturn]] void Fail(size_t at, const std::string& what) const {
    doc_.FailAt(doc_.PosOf(at), what);
  }
  std::string NodeName() const {
    return "node " + std::to_string(nodes_.size()) +
           (type_.empty() ? "" : " (" + std::string(type_) + ")");
  }

  size_t Require(size_t obj, const char* key, const char* node) const {
    const size_t v = doc_.Find(obj, key);
    if (v == 0) {
      Fail(obj, std::string(node ? NodeName() + ": " : "") + "missing \"" + key + "\"");
    }
    return v;
  }

  /// Value `v`, which may refer to the nodes before `limit`.
  Any ReadValue(size_t v, int64_t limit) const {
    const JNode& value = doc_[v];
    switch (value.kind) {
      case JNode::kNull:
        return Any();
      case JNode::kBool:
        return Any(value.i != 0);
      case JNode::kInt:
        return Any(value.i);
      case JNode::kFloat:
        return Any(value.f);
      case JNode::kString:
        return Any(std::string(value.str()));
      case JNode::kArray:
        Fail(v, "unexpected array (arrays are nodes; use {\"ref\": i})");
      default:
        break;
    }
    if (value.size == 1) {
      const std::string_view key = doc_[v + 1].str();
      const size_t at = v + 2;
      const JNode& inner = doc_[at];
      if (key == "ref" && inner.kind == JNode::kInt) {
        if (inner.i < 0 || inner.i >= limit) {
          Fail(at, (type_.empty() ? std::string("root") : NodeName()) + ": reference to node " +
                       std::to_string(inner.i) + ", which is not before the referring one");
        }
        return Any(nodes_[static_cast<size_t>(inner.i)]);
      }
      if (key == "dtype" && inner.kind == JNode::kString) {
        try {
          return Any(DataType(inner.str()));
        } catch (const Error& e) {
          Fail(at, std::string(e.message()));
        }
      }
      if (key == "float" && inner.kind == JNode::kString) {
        if (inner.str() == "nan") return Any(std::nan(""));
        if (inner.str() == "inf") return Any(HUGE_VAL);
        if (inner.str() == "-inf") return Any(-HUGE_VAL);
      }
    }
    Fail(v, "unexpected object: a value object is {\"ref\": i}, {\"dtype\": s} or {\"float\": s}");
  }

  size_t ArrayMember(size_t node, const char* key) {
    const size_t v = Require(node, key, "node");
    if (doc_[v].kind != JNode::kArray) {
      Fail(v, NodeName() + ": \"" + key + "\" must be an array, not " + KindName(doc_[v].kind));
    }
    return v;
  }

  /// The registered type of a key. GetNodeInfo takes the registry's lock and makes a
  /// std::string of the key; a document has few distinct types, so look each up once.
  const NodeInfo* InfoOf(std::string_view key) {
    auto it = infos_.find(key);
    if (it == infos_.end()) it = infos_.emplace(key, GetNodeInfo(key)).first;
    return it->second;
  }

  ObjectRef LoadNode(size_t node) {
    type_ = {};
    if (doc_[node].kind != JNode::kObject) Fail(node, NodeName() + " must be an object");
    // One pass over the members. Keys are unique, so besides "type" a valid node has one key
    // (the body), and with two others the first that is not the body is the first unknown.
    size_t type = 0, others[2] = {0, 0};  // key indices
    size_t key = node + 1;
    for (uint64_t m = 0; m < doc_[node].size; ++m, key = doc_.Next(key + 1)) {
      if (doc_[key].str() == "type") {
        type = key + 1;
      } else if (others[0] == 0) {
        others[0] = key;
      } else if (others[1] == 0) {
        others[1] = key;
      }
    }
    if (type == 0) Fail(node, NodeName() + ": missing \"type\"");
    if (doc_[type].kind != JNode::kString) Fail(type, NodeName() + ": \"type\" must be a string");
    type_ = doc_[type].str();
    const int64_t limit = static_cast<int64_t>(nodes_.size());
    auto check_keys = [&](std::string_view body) {
      for (const size_t other : others) {
        if (other != 0 && doc_[other].str() != body) {
          Fail(other + 1,
               NodeName() + ": unknown key \"" + QuoteText(doc_[other].str()) + "\"");
        }
      }
    };
    if (type_ == ArrayObj::_type_key) {
      check_keys("items");
      const size_t items = ArrayMember(node, "items");
      Array<Any> array;
      for (size_t item = items + 1; item < doc_[items].end; item = doc_.Next(item)) {
        array.push_back(ReadValue(item, limit));
      }
      return std::move(array);
    }
    if (type_ == MapObj::_type_key) {
      check_keys("items");
      const size_t items = ArrayMember(node, "items");
      Map<Any, Any> map;
      for (size_t item = items + 1; item < doc_[items].end; item = doc_.Next(item)) {
        if (doc_[item].kind != JNode::kArray || doc_[item].size != 2) {
          Fail(item, NodeName() + ": a map item must be [key, value]");
        }
        const size_t key = item + 1;
        map.Set(ReadValue(key, limit), ReadValue(doc_.Next(key), limit));
      }
      return std::move(map);
    }
    if (type_ == ShapeObj::_type_key) {
      check_keys("dims");
      const size_t dims = ArrayMember(node, "dims");
      std::vector<int64_t> values;
      for (size_t dim = dims + 1; dim < doc_[dims].end; dim = doc_.Next(dim)) {
        if (doc_[dim].kind != JNode::kInt) {
          Fail(dim, NodeName() + ": a dimension must be an integer");
        }
        values.push_back(doc_[dim].i);
      }
      return Shape(values);
    }
    if (type_ == TensorObj::_type_key) {
      check_keys("tensor");
      const size_t body = Require(node, "tensor", "node");
      if (doc_[body].kind != JNode::kObject) {
        Fail(body, NodeName() + ": \"tensor\" must be an object");
      }
      const size_t dtype = Require(body, "dtype", "node");
      const size_t shape = Require(body, "shape", "node");
      const size_t data = Require(body, "data", "node");
      if (doc_[body].size != 3) Fail(body, NodeName() + ": \"tensor\" has unknown keys");
      if (doc_[dtype].kind != JNode::kString) Fail(dtype, NodeName() + ": dtype must be a string");
      if (doc_[shape].kind != JNode::kArray) Fail(shape, NodeName() + ": shape must be an array");
      if (doc_[data].kind != JNode::kString) Fail(data, NodeName() + ": data must be a string");
      std::vector<int64_t> dims;
      for (size_t dim = shape + 1; dim < doc_[shape].end; dim = doc_.Next(dim)) {
        if (doc_[dim].kind != JNode::kInt || doc_[dim].i < 0) {
          Fail(dim, NodeName() + ": a dimension must be a non-negative integer");
        }
        dims.push_back(doc_[dim].i);
      }
      try {
        return details::TensorFromBase64(DataType(doc_[dtype].str()), dims, doc_[data].str());
      } catch (const Error& e) {
        Fail(data, NodeName() + ": " + std::string(e.message()));
      }
    }
    check_keys("fields");
    const NodeInfo* info = InfoOf(type_);
    if (info == nullptr) Fail(type, NodeName() + ": unknown type key");
    if (info->create == nullptr) {
      Fail(type, NodeName() + ": the type has no default constructor, so it cannot be loaded");
    }
    if (others[0] == 0) Fail(node, NodeName() + ": missing \"fields\"");
    const size_t fields = others[0] + 1;  // check_keys made sure it is "fields"
    if (doc_[fields].kind != JNode::kObject) {
      Fail(fields, NodeName() + ": \"fields\" must be an object");
    }
    ObjectPtr<Object> obj = info->create(*info);
    key = fields + 1;
    for (uint64_t m = 0; m < doc_[fields].size; ++m, key = doc_.Next(key + 1)) {
      const std::string_view name = doc_[key].str();
      const size_t value = key + 1;
      // SaveJSON writes the fields in declaration order: try the m-th field first.
      const FieldInfo* field = m < info->fields.size() && info->fields[m].name == name
                                   ? &info->fields[m]
                                   : info->FindField(name);
      if (field == nullptr) {
        Fail(value, NodeName() + ": unknown field \"" + QuoteText(name) + "\"");
      }
      Any converted = ReadValue(value, limit);
      try {
        field->Write(obj.get(), converted);
      } catch (const Error& e) {
        Fail(value,
             NodeName() + ", field \"" + QuoteText(name) + "\": " + std::string(e.message()));
      }
    }
    return ObjectRef(std::move(obj));
  }

  Reader doc_;
  std::vector<ObjectRef> nodes_;
  std::string_view type_;  // of the node being loaded: a view into the document
  std::unordered_map<std::string_view, const NodeInfo*> infos_;  // keys view the document
  std::exception_ptr error_;  // the first error of a streamed node
};

}  // namespace

std::string SaveJSON(const AnyView& value) { return Saver().Save(value); }

Any LoadJSON(std::string_view text) { return Loader(text).Load(); }

/// ferry.SaveJSON(value) -> str
FERRY_REGISTER_GLOBAL("ferry.SaveJSON").set_body_typed([](AnyView value) {
  return SaveJSON(value);
});
/// ferry.LoadJSON(text) -> value
FERRY_REGISTER_GLOBAL("ferry.LoadJSON").set_body_typed([](std::string text) {
  return LoadJSON(text);
});

}  // namespace ferry
