/// \file dynamic_type.cc
/// Node types registered at run time from a field table (FerryTypeRegisterWithFields): what
/// Python's `ferry.py_class` and `ferry.tschema.register` build on. Such a type extends its
/// parent's object: the parent's C++ class (or the parent's run-time layout) comes first, so C++
/// code taking the parent reads its fields where it expects them, and the new fields follow,
/// each stored as the C++ type its type text names (`int` as int64_t, `str` as String, object
/// types as ObjectRef, ...). The node gets a NodeInfo like a C++ node, with the field table
/// recorded, so GetAttr, SetAttr, MakeNode, JSON, structural equality/hashing and Repr treat it
/// as they treat a C++ node. Values are checked against the full type text (a type key, element
/// types) by a FieldConstraint before the field's C++ type converts them.
#include <algorithm>  // max
#include <atomic>     // resolved type index of a constraint
#include <cctype>     // isalnum
#include <memory>     // unique_ptr of constraints and layouts
#include <mutex>      // registration lock
#include <new>        // aligned operator new
#include <string>
#include <unordered_map>  // C++ field defaults by type key
#include <unordered_set>
#include <vector>

#include "c_api_internal.h"
#include "dynamic_type_internal.h"
#include "ferry/container/dict.h"
#include "ferry/container/list.h"
#include "ferry/function.h"
#include "ferry/reflection/enum.h"
#include "ferry/reflection/reflection.h"
#include "leak_check_internal.h"
#include "library_internal.h"

namespace ferry {
namespace details {

/// Parsed type text of a field: `int`, `Optional[demo.Point]`, `Array[Map[str, int]]`, ...
struct FieldConstraint {
  enum Kind {
    kAny,
    kInt,
    kFloat,
    kBool,
    kStr,
    kBytes,
    kDType,
    kObject,
    kFunction,
    kArray,
    kMap,
    kList,
    kDict,
    kOptional,
    kTuple,  // Tuple[T0, T1, ...]: an Array of exactly len(args) items of those types
    kEnum    // Enum[key]: a member's name (a String), written from its name or value
  };
  Kind kind = kAny;
  std::string text;
  /// kObject: the key and its index (resolved when first needed: a field may name the type
  /// being registered, or one registered later).
  std::string type_key;
  mutable std::atomic<int32_t> type_index{-1};
  std::vector<std::unique_ptr<FieldConstraint>> args;
  /// The field this constraint (or the one it is part of) checks: "field 'l' of 'demo.H'",
  /// for the errors of writes into a List or Dict the field gave its item type.
  std::string where;

  /// Whether the check adds anything to what the storage type converts. An object or Function
  /// field is stored as a nullable reference, which takes None: the check refuses it (only
  /// `Optional[T]` holds None).
  bool Trivial() const {
    switch (kind) {
      case kAny:
      case kInt:
      case kFloat:
      case kBool:
      case kStr:
      case kBytes:
      case kDType:
        return true;
      case kFunction:
      case kObject:
        return false;
      case kArray:
      case kList:
        return args[0]->kind == kAny;
      case kMap:
      case kDict:
        return args[0]->kind == kAny && args[1]->kind == kAny;
      case kOptional:
      case kTuple:
      case kEnum:
        return false;
    }
    return false;
  }
};

namespace {

/// Parses type text; a ValueError naming `what` and the text when it is not one.
class ConstraintParser {
 public:
  ConstraintParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  std::unique_ptr<FieldConstraint> Parse() {
    auto c = ParseOne();
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the type");
    return c;
  }

 private:
  std::unique_ptr<FieldConstraint> ParseOne() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    std::string name(text_.substr(start, pos_ - start));
    if (name.empty()) Fail("expected a type name");
    auto c = std::make_unique<FieldConstraint>();
    using K = FieldConstraint::Kind;
    struct Generic {
      const char* name;
      K kind;
      size_t arity;
    };
    static const Generic kGenerics[] = {{"Optional", K::kOptional, 1},
                                        {"Array", K::kArray, 1},
                                        {"Map", K::kMap, 2},
                                        {"List", K::kList, 1},
                                        {"Dict", K::kDict, 2}};
    if (name == "Enum") {
      // Enum[key]: the key of an enum in the registry (ferry/reflection/enum.h).
      c->kind = K::kEnum;
      Expect('[');
      SkipSpace();
      const size_t key_start = pos_;
      while (pos_ < text_.size() && text_[pos_] != ']' && text_[pos_] != ' ') ++pos_;
      c->type_key = std::string(text_.substr(key_start, pos_ - key_start));
      if (c->type_key.empty()) Fail("Enum needs a key: Enum[ir.OpKind]");
      Expect(']');
      c->text = "Enum[" + c->type_key + "]";
      return c;
    }
    if (name == "Tuple") {
      // Any number of item types: Tuple[int, str].
      c->kind = K::kTuple;
      Expect('[');
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
      } else {
        c->args.push_back(ParseOne());
        SkipSpace();
        while (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          c->args.push_back(ParseOne());
          SkipSpace();
        }
        Expect(']');
      }
      c->text = Text(name, *c);
      return c;
    }
    for (const Generic& g : kGenerics) {
      if (name != g.name) continue;
      c->kind = g.kind;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '[') {
        ++pos_;
        for (size_t i = 0; i < g.arity; ++i) {
          if (i != 0) Expect(',');
          c->args.push_back(ParseOne());
        }
        Expect(']');
      } else if (g.kind == K::kOptional) {
        Fail("Optional needs an argument: Optional[T]");
      } else {
        for (size_t i = 0; i < g.arity; ++i) c->args.push_back(AnyConstraint());
      }
      c->text = Text(name, *c);
      return c;
    }
    static const std::pair<const char*, K> kPlain[] = {
        {"Any", K::kAny},     {"int", K::kInt},        {"float", K::kFloat},
        {"bool", K::kBool},   {"str", K::kStr},        {"bytes", K::kBytes},
        {"dtype", K::kDType}, {"DataType", K::kDType}, {"Function", K::kFunction}};
    for (const auto& [plain, kind] : kPlain) {
      if (name == plain) {
        c->kind = kind;
        c->text = name;
        return c;
      }
    }
    c->kind = K::kObject;
    c->type_key = name;
    c->text = name;
    return c;
  }

  static std::unique_ptr<FieldConstraint> AnyConstraint() {
    auto c = std::make_unique<FieldConstraint>();
    c->text = "Any";
    return c;
  }

  static std::string Text(const std::string& name, const FieldConstraint& c) {
    std::string out = name + "[";
    for (size_t i = 0; i < c.args.size(); ++i) out += (i ? ", " : "") + c.args[i]->text;
    return out + "]";
  }

  void SkipSpace() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  void Expect(char ch) {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != ch) Fail(std::string("expected '") + ch + "'");
    ++pos_;
  }
  [[noreturn]] void Fail(const std::string& why) {
    std::string message = what_ + ": cannot read the type '" + std::string(text_) + "' (" + why +
                          " at offset " + std::to_string(pos_) + ")";
    ThrowError("ValueError", message.c_str());
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

/// Forgets the error a C ABI call raised (a failed lookup that is not an error here).
void DropRaisedError() {
  FerryObjectHandle error = nullptr;
  FerryErrorMoveFromRaised(&error);
  if (error != nullptr) FerryObjectDecRef(error);
}

bool IsStr(int32_t index) {
  return index == kFerryString || index == kFerrySmallStr || index == kFerryRawStr;
}

/// The reason `value` does not meet `c`, or empty when it does.
std::string Mismatch(const FieldConstraint& c, const FerryAny* value) {
  using K = FieldConstraint::Kind;
  const int32_t index = value->type_index;
  auto expected = [&]() { return DescribeCastFailure(value, c.text, std::string()); };
  switch (c.kind) {
    case K::kAny:
      return {};
    case K::kOptional:
      return index == kFerryNone ? std::string() : Mismatch(*c.args[0], value);
    case K::kInt:
      return index == kFerryInt || index == kFerryBool ? std::string() : expected();
    case K::kFloat:
      return index == kFerryFloat || index == kFerryInt || index == kFerryBool ? std::string()
                                                                               : expected();
    case K::kBool:
      return index == kFerryBool ? std::string() : expected();
    case K::kStr:
      return IsStr(index) ? std::string() : expected();
    case K::kBytes:
      return index == kFerryBytes ? std::string() : expected();
    case K::kDType:
      return index == kFerryDataType || IsStr(index) ? std::string() : expected();
    case K::kFunction:
      return index == kFerryFunction ? std::string() : expected();
    case K::kObject: {
      if (!IsObjectIndex(index) || IsStr(index)) return expected();
      if (c.type_key == "Object") return {};
      int32_t target = c.type_index.load(std::memory_order_relaxed);
      if (target < 0) {
        target = FindTypeIndex(c.type_key.c_str());
        if (target < 0) {
          return "expected " + c.text + " (a type that is not registered) but got " +
                 AnyTypeKey(value);
        }
        c.type_index.store(target, std::memory_order_relaxed);
      }
      const FerryTypeInfo* info = nullptr;
      if (FerryTypeGetInfo(target, &info) != 0) {
        DropRaisedError();
        return expected();
      }
      if (index == target || TypeIsDerivedFrom(index, target, info->type_depth)) return {};
      return expected();
    }
    case K::kArray:
    case K::kList: {
      Array<Any> holder;
      if (index == kFerryArray) {
        holder = reinterpret_cast<const AnyView*>(value)->cast<Array<Any>>();
      } else if (index == kFerryList) {
        holder = static_cast<const ListObj*>(ObjectUnsafe::FromHeader(value->v_obj))->data;
      } else {
        return expected();
      }
      for (size_t i = 0; i < holder.size(); ++i) {
        std::string why = Mismatch(*c.args[0], holder[i].raw());
        if (!why.empty()) return "element " + std::to_string(i) + ": " + why;
      }
      return {};
    }
    case K::kEnum: {
      // Only names are stored; WriteConstrainedField turns a value into its name first.
      std::string_view name;
      if (!AnyToStringView(value, &name)) return expected();
      const EnumInfo* info = FindEnum(c.type_key);
      if (info == nullptr) {
        return "expected " + c.text + " (an enum that is not registered) but got " + AnyRepr(value);
      }
      if (!info->ValueOf(name)) ThrowNotAMember(*info, value);
      return {};
    }
    case K::kTuple: {
      if (index != kFerryArray) return expected();
      Array<Any> holder = reinterpret_cast<const AnyView*>(value)->cast<Array<Any>>();
      if (holder.size() != c.args.size()) {
        return "expected " + c.text + " (" + std::to_string(c.args.size()) + " items) but got " +
               std::to_string(holder.size()) + " items";
      }
      for (size_t i = 0; i < holder.size(); ++i) {
        std::string why = Mismatch(*c.args[i], holder[i].raw());
        if (!why.empty()) return "item " + std::to_string(i) + ": " + why;
      }
      return {};
    }
    case K::kMap:
    case K::kDict: {
      Map<Any, Any> holder;
      if (index == kFerryMap) {
        holder = reinterpret_cast<const AnyView*>(value)->cast<Map<Any, Any>>();
      } else if (index == kFerryDict) {
        holder = static_cast<const DictObj*>(ObjectUnsafe::FromHeader(value->v_obj))->data;
      } else {
        return expected();
      }
      for (auto [k, v] : holder) {
        std::string why = Mismatch(*c.args[0], k.raw());
        if (why.empty()) why = Mismatch(*c.args[1], v.raw());
        if (!why.empty()) return "entry " + AnyRepr(k.raw()) + ": " + why;
      }
      return {};
    }
  }
  return {};
}

/// How one field of a run-time type is stored: a C++ type, its size, construction and
/// destruction in place, and its FieldType.
struct Storage {
  size_t size;
  size_t align;
  void (*construct)(void* addr);
  void (*destroy)(void* addr);
  const FieldType* type;
};

template <typename T>
const Storage* StorageOf() {
  static const Storage storage{sizeof(T), alignof(T), [](void* addr) { new (addr) T(); },
                               [](void* addr) { static_cast<T*>(addr)->~T(); }, FieldTypeOf<T>()};
  return &storage;
}

const Storage* StorageFor(const FieldConstraint& c) {
  using K = FieldConstraint::Kind;
  switch (c.kind) {
    case K::kInt:
      return StorageOf<int64_t>();
    case K::kFloat:
      return StorageOf<double>();
    case K::kBool:
      return StorageOf<bool>();
    case K::kStr:
    case K::kEnum:
      return StorageOf<String>();
    case K::kBytes:
      return StorageOf<Bytes>();
    case K::kDType:
      return StorageOf<DataType>();
    case K::kFunction:
      return StorageOf<Function>();
    case K::kObject:
      return StorageOf<ObjectRef>();
    case K::kArray:
    case K::kTuple:
      return StorageOf<Array<Any>>();
    case K::kMap:
      return StorageOf<Map<Any, Any>>();
    case K::kList:
      return StorageOf<List<Any>>();
    case K::kDict:
      return StorageOf<Dict<Any, Any>>();
    case K::kOptional:
      // An optional object is a nullable reference; an optional plain value needs a cell.
      return c.args[0]->kind == K::kObject ? StorageOf<ObjectRef>() : StorageOf<Any>();
    case K::kAny:
      return StorageOf<Any>();
  }
  return StorageOf<Any>();
}

size_t AlignUp(size_t n, size_t align) { return (n + align - 1) / align * align; }

}  // namespace

namespace {

/// Gives `node` (a ListNode or DictNode that `c` accepted) the item type `c`; a TypeError when
/// a field of another item type gave it one already (its writes could not satisfy both).
template <typename Node>
void AdoptItemType(Node* node, const FieldConstraint& c, const char* what) {
  const FieldConstraint* held = nullptr;
  if (node->item_type.compare_exchange_strong(held, &c, std::memory_order_acq_rel)) return;
  if (held == &c || held->text == c.text) return;
  FERRY_THROW(TypeError) << "this " << what << " holds " << held->text << " items (it is in "
                         << held->where << "), so it cannot go into " << c.where << " (" << c.text
                         << "): put a copy there (" << what << "(the_"
                         << (node->type_index() == kFerryList ? "list" : "dict") << "))";
}

/// After `c` accepted `value`: gives every List and Dict in it, at any depth `c` types, the
/// item type of its place, so later writes into them are checked (CheckNewListItems).
void AdoptItemTypes(const FieldConstraint& c, const FerryAny* value) {
  using K = FieldConstraint::Kind;
  const int32_t index = value->type_index;
  switch (c.kind) {
    case K::kOptional:
      if (index != kFerryNone) AdoptItemTypes(*c.args[0], value);
      return;
    case K::kArray:
    case K::kList: {
      if (c.Trivial()) return;
      Array<Any> holder;
      if (index == kFerryList) {
        auto* list = static_cast<ListNode*>(
            ObjectUnsafe::FromHeader(const_cast<FerryObject*>(value->v_obj)));
        if (c.kind == K::kList) AdoptItemType(list, c, "ferry.List");
        holder = list->data;
      } else if (index == kFerryArray) {
        holder = reinterpret_cast<const AnyView*>(value)->cast<Array<Any>>();
      } else {
        return;
      }
      for (const Any& item : holder) AdoptItemTypes(*c.args[0], item.raw());
      return;
    }
    case K::kTuple: {
      if (index != kFerryArray) return;
      Array<Any> holder = reinterpret_cast<const AnyView*>(value)->cast<Array<Any>>();
      for (size_t i = 0; i < holder.size() && i < c.args.size(); ++i) {
        AdoptItemTypes(*c.args[i], holder[i].raw());
      }
      return;
    }
    case K::kMap:
    case K::kDict: {
      if (c.Trivial()) return;
      Map<Any, Any> holder;
      if (index == kFerryDict) {
        auto* dict = static_cast<DictNode*>(
            ObjectUnsafe::FromHeader(const_cast<FerryObject*>(value->v_obj)));
        if (c.kind == K::kDict) AdoptItemType(dict, c, "ferry.Dict");
        holder = dict->data;
      } else if (index == kFerryMap) {
        holder = reinterpret_cast<const AnyView*>(value)->cast<Map<Any, Any>>();
      } else {
        return;
      }
      for (auto [k, v] : holder) {
        AdoptItemTypes(*c.args[0], k.raw());
        AdoptItemTypes(*c.args[1], v.raw());
      }
      return;
    }
    default:
      return;
  }
}

/// Sets `where` on `c` and every constraint inside it.
void SetWhere(FieldConstraint* c, const std::string& where) {
  c->where = where;
  for (auto& arg : c->args) SetWhere(arg.get(), where);
}

}  // namespace

void CheckFieldConstraint(const FieldConstraint* constraint, const AnyView& value) {
  std::string why = Mismatch(*constraint, value.raw());
  if (!why.empty()) ThrowError("TypeError", why.c_str());
  AdoptItemTypes(*constraint, value.raw());
}

void CheckNewListItems(const ListNode& list, const AnyView* items, int64_t n, int64_t first) {
  const FieldConstraint* c = list.item_type.load(std::memory_order_acquire);
  if (c == nullptr) return;
  const FieldConstraint& item = *c->args[0];
  for (int64_t i = 0; i < n; ++i) {
    std::string why = Mismatch(item, items[i].raw());
    if (why.empty()) continue;
    std::string at = first >= 0 ? "item " + std::to_string(first + i) : std::string("new item");
    FERRY_THROW(TypeError) << "the ferry.List in " << c->where << " holds " << c->text << ": " << at
                           << ": " << why;
  }
  for (int64_t i = 0; i < n; ++i) AdoptItemTypes(item, items[i].raw());
}

void CheckNewDictEntry(const DictNode& dict, const AnyView& key, const AnyView& value) {
  const FieldConstraint* c = dict.item_type.load(std::memory_order_acquire);
  if (c == nullptr) return;
  std::string why = Mismatch(*c->args[0], key.raw());
  const char* part = "key ";
  if (why.empty()) {
    why = Mismatch(*c->args[1], value.raw());
    part = "entry ";
  }
  if (!why.empty()) {
    FERRY_THROW(TypeError) << "the ferry.Dict in " << c->where << " holds " << c->text << ": "
                           << part << AnyRepr(key.raw()) << ": " << why;
  }
  AdoptItemTypes(*c->args[0], key.raw());
  AdoptItemTypes(*c->args[1], value.raw());
}

Any EnumNameOfValue(const FieldConstraint* constraint, const AnyView& value) {
  const FieldConstraint* as_enum =
      constraint->kind == FieldConstraint::kOptional ? constraint->args[0].get() : constraint;
  if (as_enum->kind != FieldConstraint::kEnum || value.type_index() != kFerryInt) return Any();
  const EnumInfo* info = FindEnum(as_enum->type_key);
  if (info == nullptr) return Any();  // CheckFieldConstraint says so
  const std::string* name = info->NameOf(value.raw()->v_int64);
  if (name == nullptr) ThrowNotAMember(*info, value.raw());
  return String(*name);
}

void WriteConstrainedField(const FieldConstraint* constraint, const FieldType* type, void* addr,
                           const AnyView& value) {
  Any name = EnumNameOfValue(constraint, value);
  if (name.type_index() != kFerryNone) {
    type->set(addr, name);
    return;
  }
  CheckFieldConstraint(constraint, value);
  type->set(addr, value);
  AdoptStoredItemTypes(constraint, type, addr);
}

void AdoptStoredItemTypes(const FieldConstraint* constraint, const FieldType* type,
                          const void* addr) {
  // The value the field stores may be new: a Python list becomes a new List on the way in.
  using K = FieldConstraint::Kind;
  const K kind = constraint->kind == K::kOptional ? constraint->args[0]->kind : constraint->kind;
  if (kind != K::kList && kind != K::kDict && kind != K::kTuple) return;
  Any stored = type->get(addr);
  AdoptItemTypes(*constraint, stored.raw());
}

const std::string& FieldConstraintStr(const FieldConstraint* constraint) {
  return constraint->text;
}

/// The storage of a type registered at run time: its nearest C++ ancestor's class first (or a
/// bare Object), then every field added at run time, the ancestors' first.
struct DynamicLayout {
  struct Slot {
    size_t offset;
    const Storage* storage;
  };
  const NodeInfo* cpp_base = nullptr;  // null: the C++ part is a bare Object
  size_t size = sizeof(Object);
  size_t align = alignof(Object);
  std::vector<Slot> slots;
  /// The parent index and field table as given, to tell a repeated identical registration
  /// (a module imported twice) from a conflicting one.
  std::string signature;
  std::vector<std::unique_ptr<FieldConstraint>> constraints;
  /// A field's recorded default (FerryTypeSetFieldDefault).
  struct Default {
    Any value;             // the value, or the Function that makes one
    bool factory = false;  // call `value` for each use
    bool set = false;
  };
  /// By index into the type's fields (the parent's first, whose defaults a child inherits);
  /// read and written under RegistrationMutex, as defaults may be set after registration.
  mutable std::vector<Default> defaults;
};

namespace {

void* AllocateAligned(size_t size, size_t align) {
  return align > __STDCPP_DEFAULT_NEW_ALIGNMENT__ ? ::operator new(size, std::align_val_t(align))
                                                  : ::operator new(size);
}
void FreeAligned(void* ptr, size_t align) {
  if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete(ptr, std::align_val_t(align));
  } else {
    ::operator delete(ptr);
  }
}

void DestroyParts(const DynamicLayout& layout, Object* obj, size_t num_slots) {
  char* base = reinterpret_cast<char*>(obj);
  for (size_t i = num_slots; i-- > 0;) {
    layout.slots[i].storage->destroy(base + layout.slots[i].offset);
  }
  if (layout.cpp_base != nullptr) layout.cpp_base->destroy_at(obj);
}

void DynamicDestroy(FerryObject* header) {
  LeakCheckCount(header->type_index, -1);
  Object* obj = ObjectUnsafe::FromHeader(header);
  const NodeInfo* info = GetNodeInfo(obj);
  const DynamicLayout& layout = *info->dynamic;
  DestroyParts(layout, obj, layout.slots.size());
  FreeAligned(obj, layout.align);
}

void DynamicDeleter(FerryObject* header) noexcept { ObjectFreeGuarded(header, &DynamicDestroy); }

ObjectPtr<Object> DynamicCreate(const NodeInfo& info) {
  const DynamicLayout& layout = *info.dynamic;
  void* mem = AllocateAligned(layout.size, layout.align);
  Object* obj = static_cast<Object*>(mem);
  size_t constructed = 0;
  try {
    if (layout.cpp_base != nullptr) {
      layout.cpp_base->construct_at(mem);
    } else {
      new (mem) Object();
    }
    char* base = static_cast<char*>(mem);
    for (const DynamicLayout::Slot& slot : layout.slots) {
      slot.storage->construct(base + slot.offset);
      ++constructed;
    }
  } catch (...) {
    if (constructed > 0 || layout.cpp_base == nullptr) DestroyParts(layout, obj, constructed);
    FreeAligned(mem, layout.align);
    throw;
  }
  ObjectUnsafe::SetHeader(obj, info.type_index, &DynamicDeleter);
  return ObjectUnsafe::PtrFromNew<Object>(obj);
}

void DynamicVisitAttrs(Object* obj, AttrVisitor* visitor) {
  const NodeInfo* info = GetNodeInfo(obj);
  for (const FieldInfo& field : info->fields) {
    visitor->VisitField(field.name.c_str(), reinterpret_cast<char*>(obj) + field.offset,
                        field.type);
  }
}

std::mutex& RegistrationMutex() {
  static std::mutex* mutex = new std::mutex();  // never destroyed
  return *mutex;
}

std::string Signature(int32_t parent_index, int32_t num_child_slots, int32_t flags,
                      const FerryFieldSpec* fields, int32_t num_fields) {
  std::string out = std::to_string(parent_index) + "/" + std::to_string(num_child_slots) + "/" +
                    std::to_string(flags);
  for (int32_t i = 0; i < num_fields; ++i) {
    out += std::string("|") + fields[i].name + ":" + fields[i].type + ":" +
           std::to_string(fields[i].flags);
  }
  return out;
}

}  // namespace

bool FieldDefault(const NodeInfo& info, size_t k, Any* out) {
  if (info.dynamic == nullptr) return false;
  Any value;
  bool factory = false;
  {
    std::lock_guard<std::mutex> lock(RegistrationMutex());
    const auto& defaults = info.dynamic->defaults;
    if (k >= defaults.size() || !defaults[k].set) return false;
    value = defaults[k].value;
    factory = defaults[k].factory;
  }
  if (!factory) {
    *out = std::move(value);
    return true;
  }
  // Called unlocked: a factory may register types or read other defaults.
  try {
    *out = value.cast<Function>()();
  } catch (const Error& e) {
    std::string message = "the default factory of field '" + info.fields[k].name + "' of '" +
                          info.type_key + "' failed: " + std::string(e.message());
    ThrowError(std::string(e.kind()).c_str(), message.c_str());
  }
  return true;
}

namespace {
/// The type `type_index` names, which must be one registered from a field table (the types
/// whose defaults FerryTypeSetFieldDefault records); `api` names the caller in the errors.
const NodeInfo* FieldTableType(int32_t type_index, const char* api) {
  const char* key = nullptr;
  if (FerryTypeIndexToKey(type_index, &key) != 0) {
    DropRaisedError();
    FERRY_THROW(ValueError) << api << ": type index " << type_index << " is not registered";
  }
  const NodeInfo* info = GetNodeInfo(key);
  if (info == nullptr || info->dynamic == nullptr) {
    FERRY_THROW(TypeError) << api << ": '" << key
                           << "' is not a type registered from a field table (a C++ node's "
                              "defaults are its constructor's, recorded by its own "
                              "registration: FERRY_REGISTER_FIELD_DEFAULT)";
  }
  return info;
}
}  // namespace

void SetFieldDefault(int32_t type_index, const char* field_name, const AnyView& value,
                     int32_t flags) {
  const NodeInfo* info = FieldTableType(type_index, "FerryTypeSetFieldDefault");
  const char* key = info->type_key.c_str();
  const FieldInfo* field = info->FindField(field_name);
  if (field == nullptr) {
    FERRY_THROW(AttributeError) << "FerryTypeSetFieldDefault: '" << key << "' has no field '"
                                << field_name << "'";
  }
  const size_t k = static_cast<size_t>(field - info->fields.data());
  const std::string what = "the default of field '" + field->name + "' of '" + key + "'";
  if (k < NumFieldsWithDefaults(*info)) {
    FERRY_THROW(TypeError) << what
                           << ": the field is a C++ ancestor's (its default is the C++ "
                              "constructor's)";
  }
  const bool factory = (flags & kFerryDefaultFactory) != 0;
  if (factory) {
    if (value.type_index() != kFerryFunction) {
      FERRY_THROW(TypeError) << what << ": a default factory must be a Function, not "
                             << AnyTypeKey(value.raw());
    }
  } else {
    if (value.type_index() == kFerryList || value.type_index() == kFerryDict) {
      FERRY_THROW(ValueError) << what << ": a mutable " << AnyTypeKey(value.raw())
                              << " would be shared by every object: give a factory";
    }
    // The value must be one the field takes: checked now, not at the first object.
    ObjectPtr<Object> probe = info->create(*info);
    try {
      field->Write(probe.get(), value);
    } catch (const Error& e) {
      details::ThrowError(std::string(e.kind()).c_str(),
                          (what + ": " + std::string(e.message())).c_str());
    }
  }
  std::lock_guard<std::mutex> lock(RegistrationMutex());
  auto& defaults = info->dynamic->defaults;
  defaults.resize(info->fields.size());
  defaults[k].value = Any(value);
  defaults[k].factory = factory;
  defaults[k].set = true;
}

void ClearFieldDefaults(const NodeInfo& info) {
  if (info.dynamic == nullptr) return;
  std::vector<DynamicLayout::Default>
      cleared;  // released unlocked: a factory's deleter may call in
  std::lock_guard<std::mutex> lock(RegistrationMutex());
  cleared.swap(info.dynamic->defaults);
}

namespace {
/// The fields of C++ nodes whose default-constructed value is their default
/// (RegisterFieldDefault), by type key; read and written under RegistrationMutex.
std::unordered_map<std::string, std::unordered_set<std::string>>& CppFieldDefaults() {
  static auto* table =
      new std::unordered_map<std::string, std::unordered_set<std::string>>();  // never destroyed
  return *table;
}
}  // namespace

bool CppFieldKeepsDefault(const NodeInfo& info, size_t k) {
  // A type registered at run time under a C++ node keeps that node's recorded defaults: its
  // objects start as a default-constructed C++ ancestor (DynamicCreate).
  const NodeInfo* cpp = info.dynamic != nullptr ? info.dynamic->cpp_base : &info;
  if (cpp == nullptr || k >= cpp->fields.size()) return false;
  std::lock_guard<std::mutex> lock(RegistrationMutex());
  auto it = CppFieldDefaults().find(cpp->type_key);
  return it != CppFieldDefaults().end() && it->second.count(cpp->fields[k].name) != 0;
}

size_t NumFieldsWithDefaults(const NodeInfo& info) {
  if (info.dynamic == nullptr) return info.fields.size();
  const NodeInfo* cpp_base = info.dynamic->cpp_base;
  return cpp_base != nullptr ? cpp_base->fields.size() : 0;
}

int32_t RegisterTypeWithFields(const char* type_key, int32_t parent_index, int32_t num_child_slots,
                               int32_t flags, const FerryFieldSpec* specs, int32_t num_fields) {
  const std::string key = type_key;
  if (num_fields < 0) FERRY_THROW(ValueError) << "type '" << key << "': negative field count";
  for (int32_t i = 0; i < num_fields; ++i) {
    if (specs[i].name == nullptr || specs[i].type == nullptr) {
      FERRY_THROW(ValueError) << "type '" << key << "': field " << i << " has no name or type";
    }
  }
  std::lock_guard<std::mutex> lock(RegistrationMutex());
  const std::string signature = Signature(parent_index, num_child_slots, flags, specs, num_fields);
  const int32_t existing = FindTypeIndex(type_key);
  if (existing >= 0) {
    const NodeInfo* known = GetNodeInfo(key);
    if (known != nullptr && known->dynamic != nullptr && known->dynamic->signature == signature) {
      return existing;  // the same declaration again
    }
    FERRY_THROW(ValueError) << "type key '" << key << "' is already registered"
                            << (known != nullptr && known->dynamic != nullptr
                                    ? " with other fields or options"
                                    : " (by C++ or as a plain type)");
  }
  DropRaisedError();
  const FerryTypeInfo* parent_type = nullptr;
  if (FerryTypeGetInfo(parent_index, &parent_type) != 0) {
    DropRaisedError();
    FERRY_THROW(ValueError) << "type '" << key << "': parent type index " << parent_index
                            << " is not registered";
  }
  // The parent's storage: a bare Object, a C++ node with a default constructor, or a run-time
  // type.
  auto layout = std::make_unique<DynamicLayout>();
  std::vector<FieldInfo> fields;
  if (parent_index != kFerryObject) {
    const NodeInfo* parent = GetNodeInfo(parent_type->type_key);
    if (parent == nullptr) {
      FERRY_THROW(TypeError) << "type '" << key << "': its parent '" << parent_type->type_key
                             << "' is not a reflected node type (FERRY_REGISTER_NODE_TYPE), so "
                                "its object layout is unknown";
    }
    if (parent->dynamic != nullptr) {
      layout->cpp_base = parent->dynamic->cpp_base;
      layout->size = parent->dynamic->size;
      layout->align = parent->dynamic->align;
      layout->slots = parent->dynamic->slots;
      layout->defaults = parent->dynamic->defaults;  // under RegistrationMutex, held here
    } else {
      if (parent->construct_at == nullptr || parent->object_size == 0) {
        FERRY_THROW(TypeError) << "type '" << key << "': its parent '" << parent->type_key
                               << "' has no default constructor, so it cannot be extended";
      }
      layout->cpp_base = parent;
      layout->size = parent->object_size;
      layout->align = parent->object_align;
    }
    fields = parent->fields;
  }
  for (int32_t i = 0; i < num_fields; ++i) {
    const std::string name = specs[i].name;
    const std::string what = "type '" + key + "', field '" + name + "'";
    if (name.empty()) FERRY_THROW(ValueError) << "type '" << key << "': a field has no name";
    for (const FieldInfo& f : fields) {
      if (f.name == name) FERRY_THROW(ValueError) << what << ": a field of that name exists";
    }
    std::unique_ptr<FieldConstraint> constraint = ConstraintParser(specs[i].type, what).Parse();
    SetWhere(constraint.get(), "field '" + name + "' of '" + key + "'");
    const Storage* storage = StorageFor(*constraint);
    const size_t offset = AlignUp(layout->size, storage->align);
    layout->size = offset + storage->size;
    layout->align = std::max(layout->align, storage->align);
    layout->slots.push_back({offset, storage});
    FieldInfo field{name, offset, storage->type};
    if (!constraint->Trivial()) field.constraint = constraint.get();
    field.compare = (specs[i].flags & kFerryFieldNoCompare) == 0;
    field.repr = (specs[i].flags & kFerryFieldNoRepr) == 0;
    fields.push_back(std::move(field));
    layout->constraints.push_back(std::move(constraint));
  }
  layout->size = AlignUp(layout->size, layout->align);
  layout->signature = signature;
  const bool final = (flags & kFerryTypeFinal) != 0;
  const int32_t index =
      TypeRegister(type_key, -1, parent_index, final ? 0 : num_child_slots, !final);
  NodeInfo info;
  info.type_index = index;
  info.type_key = key;
  info.object_size = layout->size;
  info.object_align = layout->align;
  info.visit_attrs = &DynamicVisitAttrs;
  info.create = &DynamicCreate;
  info.sequal_by_fields = true;
  info.mutable_fields = (flags & kFerryTypeFrozen) == 0;
  info.fields = std::move(fields);
  info.fields_recorded = true;
  info.dynamic = layout.release();  // lives as long as the type: for the process
  try {
    RegisterNode(std::move(info));
  } catch (...) {
    RetireType(index);
    throw;
  }
  return index;
}

}  // namespace details

void RegisterFieldDefault(std::string_view type_key, std::string_view field) {
  const NodeInfo* info = GetNodeInfo(type_key);
  if (info == nullptr) {
    FERRY_THROW(ValueError) << "RegisterFieldDefault: no node type is registered as '" << type_key
                            << "'";
  }
  if (info->dynamic != nullptr) {
    FERRY_THROW(TypeError) << "RegisterFieldDefault: '" << type_key
                           << "' is not a C++ node (a type registered from a field table "
                              "records its defaults by FerryTypeSetFieldDefault)";
  }
  // A node without a default constructor has its fields recorded later (and MakeNode cannot
  // make it): the name is kept unchecked then.
  if (info->fields_recorded && info->FindField(field) == nullptr) {
    FERRY_THROW(ValueError) << "RegisterFieldDefault: '" << type_key << "' has no field '" << field
                            << "'";
  }
  std::lock_guard<std::mutex> lock(details::RegistrationMutex());
  details::CppFieldDefaults()[std::string(type_key)].insert(std::string(field));
}

/// ferry.TypeSetFieldDefault(type_index, field, value, is_factory): FerryTypeSetFieldDefault
/// for languages that call globals (Python's py_class records its defaults with it; a Python
/// callable passed as a factory arrives as a Function).
FERRY_REGISTER_GLOBAL("ferry.TypeSetFieldDefault")
    .set_body_typed([](int64_t type_index, String field, AnyView value, bool is_factory) {
      details::SetFieldDefault(static_cast<int32_t>(type_index), field.c_str(), value,
                               is_factory ? kFerryDefaultFactory : 0);
    })
    .quick();

}  // namespace ferry

int FerryTypeRegisterWithFields(const char* type_key, int32_t parent_type_index,
                                int32_t num_child_slots, int32_t flags,
                                const FerryFieldSpec* fields, int32_t num_fields,
                                int32_t* out_type_index) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(type_key);
  FERRY_C_API_CHECK_NOT_NULL(out_type_index);
  if (num_fields > 0) FERRY_C_API_CHECK_NOT_NULL(fields);
  *out_type_index = ferry::details::RegisterTypeWithFields(
      type_key, parent_type_index, num_child_slots, flags, fields, num_fields);
  FERRY_C_API_END();
}

int FerryTypeSetFieldDefault(int32_t type_index, const char* field_name, const FerryAny* value,
                             int32_t flags) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(field_name);
  FERRY_C_API_CHECK_NOT_NULL(value);
  ferry::details::SetFieldDefault(type_index, field_name,
                                  *reinterpret_cast<const ferry::AnyView*>(value), flags);
  FERRY_C_API_END();
}

int FerryTypeClearFieldDefaults(int32_t type_index) {
  FERRY_C_API_BEGIN();
  ferry::details::ClearFieldDefaults(
      *ferry::details::FieldTableType(type_index, "FerryTypeClearFieldDefaults"));
  FERRY_C_API_END();
}

int FerryObjectCreate(int32_t type_index, const FerryAny* values, int32_t num_values,
                      FerryObjectHandle* out) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out);
  if (num_values > 0) FERRY_C_API_CHECK_NOT_NULL(values);
  // The hot path (constructors called from Python): the lock-free table that field reads use.
  // Until it holds the type, the lookup goes through the key, and GetNodeInfo(obj) below fills
  // the table.
  const ferry::NodeInfo* info = ferry::details::FindNodeInfoFast(type_index);
  const bool fast = info != nullptr;
  const char* key = fast ? info->type_key.c_str() : nullptr;
  if (!fast) {
    if (FerryTypeIndexToKey(type_index, &key) != 0) return -1;
    info = ferry::GetNodeInfo(key);
  }
  if (info == nullptr || info->create == nullptr) {
    FERRY_THROW(TypeError) << key
                           << " cannot be created from field values: it is not a reflected "
                              "node type with a default constructor";
  }
  if (static_cast<size_t>(num_values) != info->fields.size()) {
    FERRY_THROW(TypeError) << key << "() takes " << info->fields.size() << " field values but "
                           << num_values << " were given";
  }
  ferry::ObjectPtr<ferry::Object> obj = info->create(*info);
  for (int32_t i = 0; i < num_values; ++i) {
    const ferry::FieldInfo& field = info->fields[static_cast<size_t>(i)];
    try {
      field.Write(obj.get(), *reinterpret_cast<const ferry::AnyView*>(&values[i]));
    } catch (const ferry::Error& e) {
      std::string message =
          std::string(key) + "(): field '" + field.name + "': " + std::string(e.message());
      ferry::details::ThrowError(std::string(e.kind()).c_str(), message.c_str());
    }
  }
  if (!fast) (void)ferry::GetNodeInfo(obj.get());
  *out = ferry::details::MoveToHandle(ferry::ObjectRef(std::move(obj)));
  FERRY_C_API_END();
}
