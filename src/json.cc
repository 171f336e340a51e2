/// \file json.cc
/// SaveJSON / LoadJSON: a small strict JSON reader and writer of our own (no dependency; the
/// reader checks UTF-8, number ranges and nesting itself, and reports line:column), and the
/// node-table format on top of reflection. Both directions are iterative over the graph.
#include "ferry/reflection/json.h"

#include <algorithm>      // std::max
#include <charconv>       // to_chars / from_chars: locale-free numbers
#include <cmath>          // isnan, isinf
#include <cstring>        // strlen
#include <memory>         // unique_ptr of type texts
#include <vector>         // the parsed document

#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "pointer_map_internal.h"
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

struct JValue {
  enum Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
  Kind kind = kNull;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<JValue> items;
  std::vector<std::pair<std::string, JValue>> members;
  size_t pos = 0;  // where the value starts in the text

  const JValue* Find(std::string_view key) const {
    for (const auto& member : members) {
      if (member.first == key) return &member.second;
    }
    return nullptr;
  }
};

const char* KindName(JValue::Kind kind) {
  static const char* const names[] = {"null",     "a boolean", "an integer", "a number",
                                      "a string", "an array",  "an object"};
  return names[kind];
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  JValue ParseDocument() {
    JValue value = ParseValue(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the document");
    return value;
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

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
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

  JValue ParseValue(int depth) {
    SkipSpace();
    JValue v;
    v.pos = pos_;
    if (pos_ >= text_.size()) Fail("expected a value");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxJSONDepth) {
        Fail("nesting deeper than " + std::to_string(kMaxJSONDepth) + " levels");
      }
      ++pos_;
      if (c == '[') {
        v.kind = JValue::kArray;
        if (Peek(']')) {
          ++pos_;
          return v;
        }
        do {
          v.items.push_back(ParseValue(depth + 1));
        } while (Peek(',') && ++pos_);
        Expect(']');
      } else {
        v.kind = JValue::kObject;
        if (Peek('}')) {
          ++pos_;
          return v;
        }
        do {
          SkipSpace();
          const size_t key_pos = pos_;
          if (!Peek('"')) Fail("expected a string key");
          std::string key = ParseString();
          if (v.Find(key) != nullptr) FailAt(key_pos, "duplicate key \"" + key + "\"");
          Expect(':');
          v.members.emplace_back(std::move(key), ParseValue(depth + 1));
        } while (Peek(',') && ++pos_);
        Expect('}');
      }
      return v;
    }
    if (c == '"') {
      v.kind = JValue::kString;
      v.s = ParseString();
    } else if (c == 't') {
      ExpectWord("true");
      v.kind = JValue::kBool;
      v.b = true;
    } else if (c == 'f') {
      ExpectWord("false");
      v.kind = JValue::kBool;
    } else if (c == 'n') {
      ExpectWord("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      ParseNumber(&v);
    } else {
      Fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  void ParseNumber(JValue* v) {
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
    std::from_chars_result r;
    if (is_float) {
      v->kind = JValue::kFloat;
      r = std::from_chars(first, last, v->f);
    } else {
      v->kind = JValue::kInt;
      r = std::from_chars(first, last, v->i);
    }
    if (r.ec != std::errc() || r.ptr != last) {
      FailAt(start, "number " + std::string(first, last) + " is out of range");
    }
  }

  /// Reads a string at pos_ (on the quote), checking escapes and UTF-8.
  std::string ParseString() {
    ++pos_;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) Fail("unterminated string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) Fail("control character in a string");
      if (c == '\\') {
        ParseEscape(&out);
        continue;
      }
      if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      const size_t n = Utf8Length(text_.substr(pos_));
      if (n == 0) Fail("invalid UTF-8 in a string");
      out.append(text_.data() + pos_, n);
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
        Fail(std::string("invalid escape '\\") + e + "'");
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
  explicit Loader(std::string_view text) : reader_(text) {}

  Any Load() {
    JValue doc = reader_.ParseDocument();
    if (doc.kind != JValue::kObject) Fail(doc, "the document must be an object");
    const JValue* version = doc.Find("ferry_json");
    if (version == nullptr) Fail(doc, "missing \"ferry_json\" (not a Ferry document?)");
    if (version->kind != JValue::kInt || version->i != kJSONFormatVersion) {
      Fail(*version, "unsupported format version (this build reads version " +
                         std::to_string(kJSONFormatVersion) + ")");
    }
    const JValue* root = Require(doc, "root", nullptr);
    const JValue* nodes = Require(doc, "nodes", nullptr);
    if (nodes->kind != JValue::kArray) Fail(*nodes, "\"nodes\" must be an array");
    for (const auto& member : doc.members) {
      if (member.first != "ferry_json" && member.first != "root" && member.first != "nodes") {
        Fail(member.second, "unknown key \"" + member.first + "\"");
      }
    }
    nodes_.reserve(nodes->items.size());
    for (const JValue& node : nodes->items) nodes_.push_back(LoadNode(node));
    type_.clear();
    return ReadValue(*root, static_cast<int64_t>(nodes_.size()));
  }

 private:
  [[noreturn]] void Fail(const JValue& at, const std::string& what) const {
    reader_.FailAt(at.pos, what);
  }
  std::string NodeName() const {
    return "node " + std::to_string(nodes_.size()) + (type_.empty() ? "" : " (" + type_ + ")");
  }

  const JValue* Require(const JValue& obj, const char* key, const char* node) const {
    const JValue* v = obj.Find(key);
    if (v == nullptr) {
      Fail(obj, std::string(node ? NodeName() + ": " : "") + "missing \"" + key + "\"");
    }
    return v;
  }

  /// A value that may refer to the nodes before `limit`.
  Any ReadValue(const JValue& v, int64_t limit) const {
    switch (v.kind) {
      case JValue::kNull:
        return Any();
      case JValue::kBool:
        return Any(v.b);
      case JValue::kInt:
        return Any(v.i);
      case JValue::kFloat:
        return Any(v.f);
      case JValue::kString:
        return Any(v.s);
      case JValue::kArray:
        Fail(v, "unexpected array (arrays are nodes; use {\"ref\": i})");
      case JValue::kObject:
        break;
    }
    if (v.members.size() == 1) {
      const auto& [key, inner] = v.members[0];
      if (key == "ref" && inner.kind == JValue::kInt) {
        if (inner.i < 0 || inner.i >= limit) {
          Fail(inner, (type_.empty() ? std::string("root") : NodeName()) + ": reference to node " +
                          std::to_string(inner.i) + ", which is not before the referring one");
        }
        return Any(nodes_[static_cast<size_t>(inner.i)]);
      }
      if (key == "dtype" && inner.kind == JValue::kString) {
        try {
          return Any(DataType(inner.s));
        } catch (const Error& e) {
          Fail(inner, std::string(e.message()));
        }
      }
      if (key == "float" && inner.kind == JValue::kString) {
        if (inner.s == "nan") return Any(std::nan(""));
        if (inner.s == "inf") return Any(HUGE_VAL);
        if (inner.s == "-inf") return Any(-HUGE_VAL);
      }
    }
    Fail(v, "unexpected object: a value object is {\"ref\": i}, {\"dtype\": s} or {\"float\": s}");
  }

  const JValue& ArrayMember(const JValue& node, const char* key) {
    const JValue* v = Require(node, key, "node");
    if (v->kind != JValue::kArray) {
      Fail(*v, NodeName() + ": \"" + key + "\" must be an array, not " + KindName(v->kind));
    }
    return *v;
  }

  ObjectRef LoadNode(const JValue& node) {
    type_.clear();
    if (node.kind != JValue::kObject) Fail(node, NodeName() + " must be an object");
    const JValue* type = Require(node, "type", "node");
    if (type->kind != JValue::kString) Fail(*type, NodeName() + ": \"type\" must be a string");
    type_ = type->s;
    const int64_t limit = static_cast<int64_t>(nodes_.size());
    auto check_keys = [&](const char* body) {
      for (const auto& member : node.members) {
        if (member.first != "type" && member.first != body) {
          Fail(member.second, NodeName() + ": unknown key \"" + member.first + "\"");
        }
      }
    };
    if (type_ == ArrayObj::_type_key) {
      check_keys("items");
      Array<Any> array;
      for (const JValue& item : ArrayMember(node, "items").items) {
        array.push_back(ReadValue(item, limit));
      }
      return std::move(array);
    }
    if (type_ == MapObj::_type_key) {
      check_keys("items");
      Map<Any, Any> map;
      for (const JValue& item : ArrayMember(node, "items").items) {
        if (item.kind != JValue::kArray || item.items.size() != 2) {
          Fail(item, NodeName() + ": a map item must be [key, value]");
        }
        map.Set(ReadValue(item.items[0], limit), ReadValue(item.items[1], limit));
      }
      return std::move(map);
    }
    if (type_ == ShapeObj::_type_key) {
      check_keys("dims");
      std::vector<int64_t> dims;
      for (const JValue& dim : ArrayMember(node, "dims").items) {
        if (dim.kind != JValue::kInt) Fail(dim, NodeName() + ": a dimension must be an integer");
        dims.push_back(dim.i);
      }
      return Shape(dims);
    }
    check_keys("fields");
    const NodeInfo* info = GetNodeInfo(type_);
    if (info == nullptr) Fail(*type, NodeName() + ": unknown type key");
    if (info->create == nullptr) {
      Fail(*type, NodeName() + ": the type has no default constructor, so it cannot be loaded");
    }
    const JValue* fields = Require(node, "fields", "node");
    if (fields->kind != JValue::kObject)
      Fail(*fields, NodeName() + ": \"fields\" must be an object");
    ObjectPtr<Object> obj = info->create();
    for (const auto& [name, value] : fields->members) {
      const FieldInfo* field = info->FindField(name);
      if (field == nullptr) Fail(value, NodeName() + ": unknown field \"" + name + "\"");
      Any converted = ReadValue(value, limit);
      try {
        field->type->set(reinterpret_cast<char*>(obj.get()) + field->offset, converted);
      } catch (const Error& e) {
        Fail(value, NodeName() + ", field \"" + name + "\": " + std::string(e.message()));
      }
    }
    return ObjectRef(std::move(obj));
  }

  Reader reader_;
  std::vector<ObjectRef> nodes_;
  std::string type_;
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
