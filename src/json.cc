/// \file json.cc
/// SaveJSON / LoadJSON: the object-graph serializer. Objects become a node table (each node
/// after the nodes it refers to, shared objects once, references by index) written with the
/// JSON writer (json_writer_internal.h); LoadJSON reads the JSON reader's tape
/// (json_reader_internal.h) back into objects. Both directions are iterative over the graph.
#include "ferry/reflection/json.h"

#include <algorithm>  // min, max
#include <charconv>   // from_chars: numbers as the reader reads them
#include <cmath>      // nan, HUGE_VAL
#include <cstring>    // memcmp, memcpy
#include <deque>      // the fast path's types, which must not move
#include <exception>  // exception_ptr: a node's error waits for the end of the parse
#include <memory>     // unique_ptr of type texts
#include <string>
#include <string_view>
#include <unordered_map>  // node types by key, during a load
#include <utility>        // pair
#include <vector>         // the node table

#include "base64_internal.h"
#include "dynamic_type_internal.h"
#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"
#include "json_reader_internal.h"
#include "json_writer_internal.h"
#include "pointer_map_internal.h"
#include "tensor_internal.h"

namespace ferry {
namespace {

using details::JNode;
using details::JsonReader;
using details::JsonWriter;
using details::KindName;
using details::QuoteText;
using details::WriteFloat;
using details::WriteString;

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
    } else if (obj->type_index() != kFerryShape && obj->type_index() != kFerryBytes) {
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
    if (obj->type_index() == kFerryFunction) {
      // A kind of its own, so that a caller that can save a Function another way (Python's
      // pickle, by parts) tells this failure from every other by kind, not by message text.
      FERRY_THROW(FunctionInJSONError) << "SaveJSON: cannot save a ferry.Function: JSON has no "
                                          "form for one (pickle saves graphs holding Functions)";
    }
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
    } else if (const auto* bytes = obj->as<BytesObj>()) {
      // {"type": "ferry.Bytes", "base64": text}: any bytes, as one JSON string.
      Put(&out_, "{\"type\": \"ferry.Bytes\", \"base64\": ");
      WriteString(details::Base64Encode(bytes->data, bytes->size), &out_);
      out_ += '}';
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

  JsonWriter out_;
  /// The base64 bytes of each tensor, in the order the write pass meets them.
  std::vector<std::string> tensor_data_;
  size_t next_tensor_ = 0;
  const Object* root_ = nullptr;
  std::vector<const Object*> order_;  // the node table
  struct Child {
    FerryAny cell;  // borrowed: the graph holds it
    int64_t index;  // its table index, once known
  };
  std::vector<Child> children_;                   // Collect: the children of the open frames
  std::vector<int64_t> refs_;                     // the index of every reference, in write order
  size_t next_ref_ = 0;                           // the next entry of refs_ to write
  details::PointerMap<int64_t> index_;            // shared objects: table index, or -1 while open
  std::vector<std::unique_ptr<TypeText>> texts_;  // by type index
};

// ---------------------------------------------------------------------------------------------
// LoadJSON

thread_local uint64_t fast_nodes = 0;        // details::LoadJSONFastNodes
thread_local bool fast_path_enabled = true;  // details::SetLoadJSONFastPath

// The text steps of Loader::FastNode. `p` is a position in the text and `end` its end; each
// returns the position after what it read, or nullptr where the text is not what it reads.

inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline const char* SkipSpace(const char* p, const char* end) {
  while (p != end && IsSpace(*p)) ++p;
  return p;
}
/// Whether `s` is written in a JSON string as its bytes between the quotes (no escapes, no
/// UTF-8 to check): printable ASCII but '"' and '\\'.
bool IsPlain(std::string_view s) {
  for (const char c : s) {
    if (c < 0x20 || c > 0x7E || c == '"' || c == '\\') return false;
  }
  return true;
}
/// The literal `word` (with its quotes, if any).
template <size_t N>
const char* Literal(const char* p, const char* end, const char (&word)[N]) {
  if (static_cast<size_t>(end - p) < N - 1 || std::memcmp(p, word, N - 1) != 0) return nullptr;
  return p + N - 1;
}
/// Past the space, the `c` and the space at `p`; nullptr when `c` is not next.
inline const char* Punct(const char* p, const char* end, char c) {
  p = SkipSpace(p, end);
  if (p == end || *p != c) return nullptr;
  return SkipSpace(p + 1, end);
}
/// `p` after the opening quote: the closing quote of a plain string.
inline const char* PlainString(const char* p, const char* end) {
  for (; p != end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') return p;
    if (c < 0x20 || c > 0x7E || c == '\\') return nullptr;
  }
  return nullptr;
}
/// Whether `p` is at `"name"`.
inline bool IsKey(const char* p, const char* end, const std::string& name) {
  return static_cast<size_t>(end - p) >= name.size() + 2 &&
         std::memcmp(p + 1, name.data(), name.size()) == 0 && p[name.size() + 1] == '"';
}
/// An integer of 1 to 18 digits, not followed by a fraction or an exponent (which the general
/// path reads), into `*out`.
inline const char* SmallInt(const char* p, const char* end, int64_t* out) {
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  const char* const first = p;
  uint64_t value = 0;  // wraps past 19 digits, which are refused below
  while (p != end && static_cast<unsigned char>(*p - '0') < 10) value = value * 10 + (*p++ - '0');
  const ptrdiff_t digits = p - first;
  if (digits == 0 || digits > 18 || (digits > 1 && *first == '0')) return nullptr;
  if (p != end && (*p == '.' || *p == 'e' || *p == 'E')) return nullptr;
  *out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return p;
}

/// A number as the general path reads it (ParseNumber): an integer of up to 18 digits into
/// `*i`, one with a fraction or an exponent into `*f` (through from_chars, as there); larger
/// integers and the numbers out of range are left to the general path.
inline const char* Number(const char* p, const char* end, int64_t* i, double* f, bool* is_float) {
  const char* const start = p;
  auto digits = [&] {
    const char* const from = p;
    while (p != end && static_cast<unsigned char>(*p - '0') < 10) ++p;
    return p - from;
  };
  if (p != end && *p == '-') ++p;
  const char* const int_start = p;
  const ptrdiff_t int_digits = digits();
  if (int_digits == 0 || (int_digits > 1 && *int_start == '0')) return nullptr;
  *is_float = false;
  if (p != end && *p == '.') {
    ++p;
    if (digits() == 0) return nullptr;
    *is_float = true;
  }
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p != end && (*p == '+' || *p == '-')) ++p;
    if (digits() == 0) return nullptr;
    *is_float = true;
  }
  if (*is_float) {
    const std::from_chars_result r = std::from_chars(start, p, *f);
    return r.ec == std::errc() && r.ptr == p ? p : nullptr;
  }
  if (int_digits > 18) return nullptr;
  uint64_t value = 0;
  for (const char* d = int_start; d != p; ++d) value = value * 10 + static_cast<uint64_t>(*d - '0');
  *i = start != int_start ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return p;
}

/// A text matched a word (8 bytes) at a time, as SaveJSON writes it: the first word under a
/// mask, then whole words (the last one overlapping the one before).
class Pattern {
 public:
  Pattern() = default;
  explicit Pattern(std::string text) : text_(std::move(text)) {
    char first[8] = {}, mask[8] = {};
    const size_t n = std::min<size_t>(text_.size(), 8);
    std::memcpy(first, text_.data(), n);
    std::memset(mask, 0xFF, n);
    std::memcpy(&first_, first, 8);
    std::memcpy(&mask_, mask, 8);
  }
  static uint64_t Load(const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  size_t size() const { return text_.size(); }
  const char* data() const { return text_.data(); }
  /// Whether the text at `p` starts with the pattern. False too within 8 bytes of the end.
  bool At(const char* p, const char* end) const {
    const size_t n = text_.size();
    if (static_cast<size_t>(end - p) < std::max<size_t>(n, 8)) return false;
    if ((Load(p) & mask_) != first_) return false;
    for (size_t k = 8; k < n; k += 8) {
      const size_t at = std::min(k, n - 8);
      if (Load(p + at) != Load(text_.data() + at)) return false;
    }
    return true;
  }

 private:
  std::string text_;
  uint64_t first_ = 0, mask_ = 0;
};

class Loader {
 public:
  explicit Loader(std::string_view text) : doc_(text) {}
  ~Loader() { fast_nodes += fast_nodes_; }

  Any Load() {
    // The nodes are loaded while the text is parsed (see JsonReader::StreamNodes). The first
    // error of a node is kept and thrown after the parse and the checks of the top level,
    // which is where it came before (when the whole document was parsed first).
    doc_.StreamNodes(&LoadStreamed, fast_path_enabled ? &LoadFast : nullptr, this);
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

  // -------------------------------------------------------------------------------------------
  // The fast path of a node (JsonReader::FastItemFn): a registered node,
  // `{"type": "key", "fields": {"name": value, ...}}` with its fields in declaration order
  // (some may be left out) and values that are null, true, false, integers of up to 18
  // digits, other numbers, strings without escapes or non-ASCII bytes, {"ref": i} and
  // {"dtype": s}, read straight from the text into a new object: no tape, no lookup per
  // field, no value copied; and an Array node of such values as SaveJSON lays it out. The
  // text SaveJSON writes is matched a word at a time against patterns made once per type;
  // other spacing token by token. Anything else, including every error, returns nullptr and
  // the node is loaded the general way from where it starts, which reads the same text to the
  // same object or reports the error.

  /// A registered type the fast path may load, with the text SaveJSON writes for it.
  struct FastField {
    const FieldInfo* info;
    Pattern key;  // "name": (with its space)
  };
  struct FastType {
    const NodeInfo* info;
    Pattern head;  // key", "fields": {   (after the opening quote of the key)
    std::vector<FastField> fields;
    size_t required_from;  // the fields from this one on must be in the text
  };

  /// Whether a document must give `field` of `type` (NumFieldsWithDefaults).
  static bool Required(const FastType& type, const FastField* field) {
    return static_cast<size_t>(field - type.fields.data()) >= type.required_from;
  }

  /// The slot of the exact-layout cache for the text at `p` (8 readable bytes).
  static size_t SlotOf(const char* p) {
    return static_cast<size_t>((Pattern::Load(p) * 0x9E3779B97F4A7C15ULL) >> 60);
  }

  /// The type of the key [p, p + n) of the text (a plain string), looked up once per key.
  const FastType* FastTypeAt(const char* p, size_t n) {
    const std::string_view key(p, n);
    auto it = fast_types_.find(key);
    if (it == fast_types_.end()) it = fast_types_.emplace(key, MakeFastType(key)).first;
    const FastType* type = it->second;
    if (type != nullptr && type->head.size() >= 8) {
      exact_types_[SlotOf(type->head.data())] = type;  // for the next node of the type
    }
    return type;
  }
  /// The fast path's record of type `key`, or nullptr where it must not load the type: not a
  /// registered type with a default constructor, one of the containers LoadNode reads its own
  /// way, or with names that are not written as their bytes or not distinct (matching them in
  /// order must find no duplicate key).
  const FastType* MakeFastType(std::string_view key) {
    if (key == ArrayObj::_type_key || key == MapObj::_type_key || key == ShapeObj::_type_key ||
        key == BytesObj::_type_key || key == TensorObj::_type_key) {
      return nullptr;
    }
    const NodeInfo* info = InfoOf(key);
    if (info == nullptr || info->create == nullptr) return nullptr;
    FastType& type = fast_type_store_.emplace_back();
    type.info = info;
    type.head = Pattern(std::string(key) + "\", \"fields\": {");
    type.required_from = details::NumFieldsWithDefaults(*info);
    for (size_t k = 0; k < info->fields.size(); ++k) {
      const std::string& name = info->fields[k].name;
      if (!IsPlain(name)) return nullptr;
      for (size_t j = 0; j < k; ++j) {
        if (info->fields[j].name == name) return nullptr;
      }
      type.fields.push_back(FastField{&info->fields[k], Pattern("\"" + name + "\": ")});
    }
    return &type;
  }

  /// The DataType of the text [p, p + n), parsed once per distinct text among the last few.
  DataType DataTypeOf(const char* p, size_t n) {
    for (size_t k = 0; k < kDataTypes && k < next_dtype_; ++k) {  // the slots filled
      const auto& [text, dtype] = dtypes_[k];
      if (text.size() == n && std::memcmp(text.data(), p, n) == 0) return dtype;
    }
    const DataType dtype{std::string_view(p, n)};  // a bad one throws: the general path says so
    dtypes_[next_dtype_++ % kDataTypes] = {std::string_view(p, n), dtype};
    return dtype;
  }

  /// JsonReader::FastItemFn: the nodes from `p` on, separated by commas, as long as FastNode
  /// reads them.
  static const char* LoadFast(void* self, const char* p, const char* end, size_t* values,
                              size_t* items) {
    auto* loader = static_cast<Loader*>(self);
    if (loader->error_) return nullptr;  // the nodes after an error are only parsed
    const char* done = nullptr;
    while (true) {
      const char* past;
      size_t count = 0;
      try {
        past = loader->FastNode(p, end, &count);
      } catch (...) {
        FERRY_RETHROW_FORCED_UNWIND();
        past = nullptr;  // the general path meets the same error and reports it
      }
      if (past == nullptr) return done;
      done = past;
      *values += count;
      ++*items;
      p = SkipSpace(past, end);
      if (p == end || *p != ',') return done;
      p = SkipSpace(p + 1, end);
    }
  }

  /// A value of a node at `p` (not the end), which may refer to the nodes before `limit`, into
  /// `*out` (a string is held by held_ until the next one); adds the number of its tape values
  /// to `*count`.
  const char* FastValue(const char* p, const char* end, size_t limit, AnyView* out, size_t* count) {
    ++*count;
    const char c = *p;
    if (c == '{') {  // {"ref": i} or {"dtype": s}
      static const Pattern kRef("{\"ref\": "), kDtype("{\"dtype\": ");
      bool ref;
      if (kRef.At(p, end)) {
        p += kRef.size();
        ref = true;
      } else if (kDtype.At(p, end)) {
        p += kDtype.size();
        ref = false;
      } else {
        p = SkipSpace(p + 1, end);
        const char* key;
        if ((key = Literal(p, end, "\"ref\"")) != nullptr) {
          ref = true;
        } else if ((key = Literal(p, end, "\"dtype\"")) != nullptr) {
          ref = false;
        } else {
          return nullptr;
        }
        if ((p = Punct(key, end, ':')) == nullptr) return nullptr;
      }
      if (ref) {
        int64_t index;
        if ((p = SmallInt(p, end, &index)) == nullptr) return nullptr;
        if (index < 0 || static_cast<size_t>(index) >= limit) return nullptr;
        *out = AnyView(nodes_[static_cast<size_t>(index)]);
      } else {
        if (p == end || *p != '"') return nullptr;
        const char* const first = p + 1;
        if ((p = PlainString(first, end)) == nullptr) return nullptr;
        *out = AnyView(DataTypeOf(first, static_cast<size_t>(p - first)));
        ++p;
      }
      p = SkipSpace(p, end);
      if (p == end || *p != '}') return nullptr;
      *count += 2;
      return p + 1;
    }
    if (c == '"') {
      const char* const first = p + 1;
      if ((p = PlainString(first, end)) == nullptr) return nullptr;
      held_ = String(std::string_view(first, static_cast<size_t>(p - first)));
      *out = held_;
      return p + 1;
    }
    if (c == 't') {
      *out = AnyView(true);
      return Literal(p, end, "true");
    }
    if (c == 'f') {
      *out = AnyView(false);
      return Literal(p, end, "false");
    }
    if (c == 'n') {
      *out = AnyView();
      return Literal(p, end, "null");
    }
    int64_t i;
    double f;
    bool is_float = false;
    const char* const past = SmallInt(p, end, &i);  // the common case, with no fraction
    if ((p = past ? past : Number(p, end, &i, &f, &is_float)) == nullptr) return nullptr;
    *out = is_float ? AnyView(f) : AnyView(i);
    return p;
  }

  /// The rest of an Array node written as SaveJSON writes it, after its `"items": [`.
  const char* FastArray(const char* p, const char* end, size_t* values) {
    // The tape values: the node, "type" and its string, "items" and its array; then the items.
    size_t count = 5;
    const size_t limit = nodes_.size();
    items_.clear();
    p = SkipSpace(p, end);
    if (p == end) return nullptr;
    if (*p != ']') {
      while (true) {
        AnyView value;
        if ((p = FastValue(p, end, limit, &value, &count)) == nullptr) return nullptr;
        items_.emplace_back(value);
        p = SkipSpace(p, end);
        if (p == end) return nullptr;
        if (*p == ']') break;
        if (*p != ',') return nullptr;
        p = SkipSpace(p + 1, end);
        if (p == end) return nullptr;
      }
    }
    p = SkipSpace(p + 1, end);
    if (p == end || *p != '}') return nullptr;
    // Reserved, as LoadNode does: each node an array of its own, even when empty.
    Array<Any> array;
    array.reserve(static_cast<int64_t>(items_.size()));
    for (Any& item : items_) array.push_back(std::move(item));
    items_.clear();
    nodes_.push_back(std::move(array));
    ++fast_nodes_;
    *values = count;
    return p + 1;
  }

  const char* FastNode(const char* p, const char* end, size_t* values) {
    // The tape values the general path would make: the node, "type" and its string,
    // "fields" and its object; then per field its key and its value (3 for {"ref": i}).
    static_assert(4 < kMaxJSONDepth, "{\"ref\": i} in a field of a node is at depth 4");
    size_t count = 5;
    static const Pattern kTypeHead("{\"type\": \"");
    const FastType* type = nullptr;
    if (kTypeHead.At(p, end)) {
      p += kTypeHead.size();
      if (end - p >= 8) {
        const FastType* seen = exact_types_[SlotOf(p)];
        if (seen != nullptr && seen->head.At(p, end)) {
          type = seen;
          p += seen->head.size();
        }
      }
    } else {
      if (p == end || *p != '{') return nullptr;
      p = SkipSpace(p + 1, end);
      if ((p = Literal(p, end, "\"type\"")) == nullptr) return nullptr;
      if ((p = Punct(p, end, ':')) == nullptr) return nullptr;
      if (p == end || *p != '"') return nullptr;
      ++p;
    }
    if (type == nullptr) {  // p after the opening quote of the key
      static const Pattern kArrayHead("ferry.Array\", \"items\": [");
      if (kArrayHead.At(p, end)) return FastArray(p + kArrayHead.size(), end, values);
      const char* const key = p;
      if ((p = PlainString(key, end)) == nullptr) return nullptr;
      if ((type = FastTypeAt(key, static_cast<size_t>(p - key))) == nullptr) return nullptr;
      if ((p = Punct(p + 1, end, ',')) == nullptr) return nullptr;
      if ((p = Literal(p, end, "\"fields\"")) == nullptr) return nullptr;
      if ((p = Punct(p, end, ':')) == nullptr) return nullptr;
      if (p == end || *p != '{') return nullptr;
      ++p;
    }
    // p after the '{' of "fields"
    p = SkipSpace(p, end);
    if (p == end) return nullptr;
    const NodeInfo* info = type->info;
    ObjectPtr<Object> obj = info->create(*info);
    const size_t limit = nodes_.size();
    const FastField* field = type->fields.data();
    const FastField* const fields_end = field + type->fields.size();
    if (*p != '}') {
      while (true) {
        // p at the key of a field after the last one, in declaration order (fields may be
        // left out); as the names are distinct, no key can come twice.
        if (*p != '"') return nullptr;
        while (field != fields_end && !field->key.At(p, end)) {
          // not as SaveJSON writes it: "name" with other spacing before the ':'?
          if (IsKey(p, end, field->info->name)) break;
          if (Required(*type, field)) return nullptr;  // left out: the general path says so
          ++field;
        }
        if (field == fields_end) return nullptr;
        if (field->key.At(p, end)) {
          p += field->key.size();
        } else {
          p = SkipSpace(p + field->info->name.size() + 2, end);
          if (p == end || *p != ':') return nullptr;
          ++p;
        }
        p = SkipSpace(p, end);
        if (p == end) return nullptr;
        ++count;  // the key
        AnyView value;
        if ((p = FastValue(p, end, limit, &value, &count)) == nullptr) return nullptr;
        field->info->Write(obj.get(), value);
        ++field;
        // ", " before the next key as SaveJSON writes it, else any spacing
        if (end - p >= 3 && p[0] == ',' && p[1] == ' ' && p[2] == '"') {
          p += 2;
          continue;
        }
        p = SkipSpace(p, end);
        if (p == end) return nullptr;
        if (*p == '}') break;
        if (*p != ',') return nullptr;
        p = SkipSpace(p + 1, end);
        if (p == end) return nullptr;
      }
    }
    for (; field != fields_end; ++field) {
      if (Required(*type, field)) return nullptr;
    }
    ++p;  // the end of "fields"
    if (p == end || *p != '}') {
      p = SkipSpace(p, end);
      if (p == end || *p != '}') return nullptr;  // the end of the node
    }
    nodes_.push_back(ObjectRef(std::move(obj)));
    ++fast_nodes_;
    *values = count;
    return p + 1;
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
        return Any(String(value.str()));
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
          Fail(other + 1, NodeName() + ": unknown key \"" + QuoteText(doc_[other].str()) + "\"");
        }
      }
    };
    if (type_ == ArrayObj::_type_key) {
      check_keys("items");
      const size_t items = ArrayMember(node, "items");
      // Reserved, so each node is an array of its own even when empty (Array() is the one empty
      // array every default Array shares): two nodes must not load as one shared object.
      Array<Any> array;
      array.reserve(static_cast<int64_t>(doc_[items].size));
      for (size_t item = items + 1; item < doc_[items].end; item = doc_.Next(item)) {
        array.push_back(ReadValue(item, limit));
      }
      return std::move(array);
    }
    if (type_ == MapObj::_type_key) {
      check_keys("items");
      const size_t items = ArrayMember(node, "items");
      Map<Any, Any> map;
      map.reserve(static_cast<size_t>(doc_[items].size));  // a map of its own, as for arrays
      for (size_t item = items + 1; item < doc_[items].end; item = doc_.Next(item)) {
        if (doc_[item].kind != JNode::kArray || doc_[item].size != 2) {
          Fail(item, NodeName() + ": a map item must be [key, value]");
        }
        const size_t key = item + 1;
        Any key_value = ReadValue(key, limit);
        // A second entry would silently replace the first: the text is not what SaveJSON
        // writes, so it is refused as the reader refuses a duplicate key of a JSON object.
        if (map.contains(key_value)) {
          Fail(key, NodeName() + ": duplicate " + details::DescribeKey(key_value.raw()));
        }
        map.Set(std::move(key_value), ReadValue(doc_.Next(key), limit));
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
    if (type_ == BytesObj::_type_key) {
      check_keys("base64");
      const size_t text = Require(node, "base64", "node");
      if (doc_[text].kind != JNode::kString) Fail(text, NodeName() + ": base64 must be a string");
      std::string data, why;
      if (!details::Base64Decode(doc_[text].str(), &data, &why))
        Fail(text, NodeName() + ": " + why);
      return Bytes(std::string_view(data));
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
    std::vector<bool> given(info->fields.size());
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
      given[static_cast<size_t>(field - info->fields.data())] = true;
    }
    for (size_t k = details::NumFieldsWithDefaults(*info); k < given.size(); ++k) {
      if (given[k]) continue;
      const FieldInfo& field = info->fields[k];
      // A field added with a default after the document was written takes its default.
      Any value;
      if (details::FieldDefault(*info, k, &value)) {
        try {
          field.Write(obj.get(), value);
        } catch (const Error& e) {
          Fail(fields, NodeName() + ", field \"" + QuoteText(field.name) +
                           "\" (its default): " + std::string(e.message()));
        }
        continue;
      }
      Fail(fields, NodeName() + ": missing field \"" + QuoteText(field.name) + "\" (" +
                       field.TypeStr() +
                       "): a field declared at run time (py_class, tschema.register) without a "
                       "default, so the document must give it");
    }
    return ObjectRef(std::move(obj));
  }

  JsonReader doc_;
  std::vector<ObjectRef> nodes_;
  std::string_view type_;  // of the node being loaded: a view into the document
  std::unordered_map<std::string_view, const NodeInfo*> infos_;  // keys view the document
  std::exception_ptr error_;              // the first error of a streamed node
  uint64_t fast_nodes_ = 0;               // loaded by FastNode, added to fast_nodes by ~Loader
  std::deque<FastType> fast_type_store_;  // never moves them
  std::unordered_map<std::string_view, const FastType*> fast_types_;  // null: not fast
  const FastType* exact_types_[16] = {};  // by SlotOf the text after "type": "
  static constexpr size_t kDataTypes = 8;
  std::pair<std::string_view, DataType> dtypes_[kDataTypes];  // DataTypeOf; texts view the text
  size_t next_dtype_ = 0;
  Any held_;                // FastValue: the last string it read
  std::vector<Any> items_;  // FastArray: the items of the array being read
};

}  // namespace

uint64_t details::LoadJSONFastNodes() noexcept { return fast_nodes; }
void details::SetLoadJSONFastPath(bool enabled) noexcept { fast_path_enabled = enabled; }

std::string SaveJSON(const AnyView& value) { return Saver().Save(value); }

Any LoadJSON(std::string_view text) { return Loader(text).Load(); }

/// ferry.SaveJSON(value) -> str
FERRY_REGISTER_GLOBAL("ferry.SaveJSON")
    .set_body_typed([](AnyView value) { return SaveJSON(value); })
    .quick();
/// ferry.LoadJSON(text) -> value
FERRY_REGISTER_GLOBAL("ferry.LoadJSON")
    .set_body_typed([](std::string text) { return LoadJSON(text); })
    .quick();

}  // namespace ferry
