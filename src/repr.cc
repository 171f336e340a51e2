/// \file repr.cc
/// The text form of values (Repr, the global ferry.Repr): containers and reflected nodes print
/// their contents, shared sub-graphs once, cycles end.
#include <sstream>        // the output
#include <string>         // Repr's result
#include <unordered_map>  // object counts and labels
#include <vector>         // the traversal stack

#include "ferry/container/array.h"
#include "ferry/container/map.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"

namespace ferry {

namespace {

/// Prints values; objects met twice get a label (`#1=` at the first, `#1` after), so shared
/// sub-graphs print once and cycles end.
class Printer {
 public:
  std::string Print(const AnyView& value) {
    CountObjects(value);
    Print(value.raw(), 0);
    return os_.str();
  }

 private:
  static constexpr int kMaxDepth = 32;
  static constexpr size_t kMaxObjects = 4096;

  static const Object* AsObject(const FerryAny* v) {
    if (!details::IsObjectIndex(v->type_index) || v->type_index == kFerryString) return nullptr;
    return details::ObjectUnsafe::FromHeader(v->v_obj);
  }

  /// Calls `f(child)` for each value directly inside `obj`.
  template <typename F>
  static void ForEachChild(const Object* obj, F&& f) {
    if (const auto* array = obj->as<ArrayObj>()) {
      for (const Any& cell : *array) f(cell);
    } else if (const auto* map = obj->as<MapObj>()) {
      for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        f(e->key);
        f(e->value);
      }
    } else if (const NodeInfo* info = GetNodeInfo(obj)) {
      for (const FieldInfo& field : info->fields) {
        f(field.type->get(reinterpret_cast<const char*>(obj) + field.offset));
      }
    }
  }

  void CountObjects(const AnyView& root) {
    std::vector<Any> stack{Any(root)};
    size_t visited = 0;
    while (!stack.empty() && visited < kMaxObjects) {
      Any value = std::move(stack.back());
      stack.pop_back();
      const Object* obj = AsObject(value.raw());
      if (obj == nullptr) continue;
      if (count_[obj]++ != 0) continue;
      ++visited;
      ForEachChild(obj, [&](const Any& child) { stack.push_back(child); });
    }
  }

  void Print(const FerryAny* v, int depth) {
    const Object* obj = AsObject(v);
    if (obj == nullptr || v->type_index == kFerryShape) {
      os_ << details::AnyRepr(v);
      return;
    }
    auto label = labels_.find(obj);
    if (label != labels_.end()) {
      os_ << "#" << label->second;
      return;
    }
    if (depth >= kMaxDepth || printed_ >= kMaxObjects) {
      os_ << "...";
      return;
    }
    ++printed_;
    if (count_[obj] > 1) {
      const int id = static_cast<int>(labels_.size()) + 1;
      labels_[obj] = id;
      os_ << "#" << id << "=";
    }
    if (const auto* array = obj->as<ArrayObj>()) {
      os_ << "[";
      for (int64_t i = 0; i < array->size(); ++i) {
        if (i != 0) os_ << ", ";
        Print(array->at(i).raw(), depth + 1);
      }
      os_ << "]";
    } else if (const auto* map = obj->as<MapObj>()) {
      os_ << "{";
      bool first = true;
      for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        if (!first) os_ << ", ";
        first = false;
        Print(e->key.raw(), depth + 1);
        os_ << ": ";
        Print(e->value.raw(), depth + 1);
      }
      os_ << "}";
    } else if (const NodeInfo* info = GetNodeInfo(obj)) {
      os_ << obj->GetTypeKey() << "(";
      bool first = true;
      for (const FieldInfo& field : info->fields) {
        if (!field.repr) continue;
        os_ << (first ? "" : ", ") << field.name << "=";
        first = false;
        Any value = field.type->get(reinterpret_cast<const char*>(obj) + field.offset);
        Print(value.raw(), depth + 1);
      }
      os_ << ")";
    } else {
      os_ << details::AnyRepr(v);
    }
  }

  std::ostringstream os_;
  std::unordered_map<const Object*, int> count_;
  std::unordered_map<const Object*, int> labels_;
  size_t printed_ = 0;
};

}  // namespace

std::string Repr(const AnyView& value) { return Printer().Print(value); }

/// ferry.Repr(value) -> the text form.
FERRY_REGISTER_GLOBAL("ferry.Repr")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      if (n != 1) {
        FERRY_THROW(TypeError) << "ferry.Repr takes 1 argument but " << n << " were given";
      }
      *out = Repr(args[0]);
    })
    .quick();

}  // namespace ferry
