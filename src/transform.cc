/// \file transform.cc
/// StructuralVisit and StructuralTransform: one post-order walk with an explicit stack of
/// frames. A frame is an object whose children are being walked; its `cursor` says which child
/// comes next. When the children are done, a transform re-reads them in the same order and pairs
/// them with their results (None for "unchanged"), copies the object only when one changed,
/// and hands it to `fn`.
///
/// As in structural.cc, only shared objects (more than one reference, or the root) enter the
/// memo: an object with a single reference has one parent and is reached once, and a cycle
/// needs a second reference to some object on it. The memo also marks objects in progress, so
/// reaching one again is a cycle.
///
/// The frames on the stack are the path from the root to the object being finished, so an
/// error's access path is read from them; nothing is kept for paths until an error.
///
/// The walk owns what it walks: each frame holds a reference to its object (and a map step to
/// its key), and memoized objects are held until the end, so `fn` dropping the last outside
/// reference to a node cannot free memory the walk still reads, nor let a new object reuse a
/// memoized address. Children are read from their parent one at a time, when the walk goes
/// into them, so a container `fn` changed is walked as it is then; a rebuild that no longer
/// finds the children it walked is a ValueError.
#include "ferry/reflection/transform.h"

#include <string>
#include <vector>

#include "ferry/container/dict.h"
#include "ferry/container/list.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"
#include "node_info_cache_internal.h"
#include "pointer_map_internal.h"

namespace ferry {
namespace details {
namespace {

/// Whether the walk goes into the value: objects other than strings and bytes.
inline bool IsWalkedCell(const FerryAny& cell) {
  return cell.type_index >= kFerryStaticObjectBegin && cell.type_index != kFerryString &&
         cell.type_index != kFerryBytes;
}

inline const Object* ObjectOfCell(const FerryAny& cell) {
  return ObjectUnsafe::FromHeader(cell.v_obj);
}

inline const AnyView& ViewOf(const FerryAny& cell) {
  return *reinterpret_cast<const AnyView*>(&cell);
}

class Walker {
 public:
  Walker(const char* who, VisitCallback visit, TransformCallback transform, void* ctx)
      : who_(who), visit_(visit), transform_(transform), ctx_(ctx) {}

  /// Walks from `root`; returns the transformed root (None when unchanged) for a transform.
  Any Run(const AnyView& root) {
    if (!IsWalkedCell(*root.raw())) return Any();
    root_ = ObjectOfCell(*root.raw());
    Enter(root_, Step{kRoot, nullptr, 0, Any()});
    while (!frames_.empty()) {
      Frame& top = frames_.back();
      FerryAny cell;
      Any box;
      Step step;
      if (NextChild(&top, &cell, &box, &step)) {
        Enter(ObjectOfCell(cell), step);
      } else {
        Finish();
      }
    }
    if (transform_ == nullptr) return Any();
    return std::move(results_.back());
  }

 private:
  enum Kind : uint8_t { kLeaf, kNode, kArray, kMap, kList, kDict };
  enum StepKind : uint8_t { kRoot, kField, kIndex, kMapKey, kMapValue };
  /// How a frame's object was reached from its parent: for error paths.
  struct Step {
    StepKind kind;
    const void* ref;  // kField: the FieldInfo
    int64_t index;    // kIndex: the position
    Any key;          // kMapKey, kMapValue: the key (owned: `fn` may erase it from the map)
  };
  struct Frame {
    ObjectRef obj;  // owned: `fn` may drop every other reference to it
    const NodeInfo* info;
    Kind kind;
    bool shared;
    size_t cursor;
    size_t results_begin;
    Step step;
  };
  /// Memo values: an object in progress, or done with its result at results index.
  static constexpr uint32_t kInProgress = 0xffffffffu;

  Kind KindOf(const Object* obj, const NodeInfo** info) {
    *info = nullptr;
    switch (obj->type_index()) {
      case kFerryArray:
        return kArray;
      case kFerryMap:
        return kMap;
      case kFerryList:
        return kList;
      case kFerryDict:
        return kDict;
      default:
        break;
    }
    const NodeInfo* found = infos_.Get(obj);
    if (found == nullptr || found->fields.empty()) return kLeaf;
    *info = found;
    return kNode;
  }

  /// Goes into `child`, or uses its memoized result when it was met before.
  void Enter(const Object* child, const Step& step) {
    const bool shared = !child->unique() || child == root_;
    if (shared) {
      auto [state, inserted] = memo_.Insert(child, kInProgress);
      if (inserted) {
        memo_keep_.push_back(GetRef<ObjectRef>(child));
      } else {
        if (*state == kInProgress) {
          Push(child, step);  // for the path in the message
          Fail("ValueError", "the graph has a cycle: this object contains itself");
        }
        if (transform_ != nullptr) results_.push_back(memo_results_[*state]);
        return;
      }
    }
    Push(child, step);
    frames_.back().shared = shared;
  }

  /// Pushes a frame, written in place: a Frame built on the stack and copied would be read
  /// back with wide loads right after its narrow stores, which cannot be forwarded.
  void Push(const Object* obj, const Step& step) {
    Frame& frame = frames_.emplace_back();
    frame.obj = GetRef<ObjectRef>(obj);
    frame.kind = KindOf(obj, &frame.info);
    frame.shared = true;
    frame.cursor = 0;
    frame.results_begin = results_.size();
    frame.step.kind = step.kind;
    frame.step.ref = step.ref;
    frame.step.index = step.index;
    frame.step.key = step.key;
  }

  /// The next child of `frame` that the walk goes into, with the step to it; false at the end.
  bool NextChild(Frame* frame, FerryAny* cell, Any* box, Step* step) {
    switch (frame->kind) {
      case kLeaf:
        return false;
      case kNode: {
        const std::vector<FieldInfo>& fields = frame->info->fields;
        while (frame->cursor < fields.size()) {
          const FieldInfo& field = fields[frame->cursor++];
          if (ReadField(field, frame->obj.get(), cell, box)) {
            *step = Step{kField, &field, 0, Any()};
            return true;
          }
        }
        return false;
      }
      case kArray:
      case kList: {
        const ArrayObj* array = ArrayOf(*frame);
        while (frame->cursor < static_cast<size_t>(array->size())) {
          const int64_t i = static_cast<int64_t>(frame->cursor++);
          const FerryAny& c = *(array->begin() + i)->raw();
          if (IsWalkedCell(c)) {
            *cell = c;
            *step = Step{kIndex, nullptr, i, Any()};
            return true;
          }
        }
        return false;
      }
      case kMap:
      case kDict: {
        const MapObj* map = MapOf(*frame);
        const size_t count = static_cast<size_t>(map->entries_end() - map->entries_begin());
        while (frame->cursor < 2 * count) {
          const size_t at = frame->cursor++;
          const MapObj::Entry& e = map->entries_begin()[at / 2];
          if (MapObj::IsErased(e)) continue;
          const FerryAny& c = at % 2 == 0 ? *e.key.raw() : *e.value.raw();
          if (IsWalkedCell(c)) {
            *cell = c;
            *step = Step{at % 2 == 0 ? kMapKey : kMapValue, nullptr, 0, e.key};
            return true;
          }
        }
        return false;
      }
    }
    return false;
  }

  static const ArrayObj* ArrayOf(const Frame& frame) {
    if (frame.kind == kList) return static_cast<const ListNode*>(frame.obj.get())->data.get();
    return static_cast<const ArrayObj*>(frame.obj.get());
  }
  static const MapObj* MapOf(const Frame& frame) {
    if (frame.kind == kDict) return static_cast<const DictNode*>(frame.obj.get())->data.get();
    return static_cast<const MapObj*>(frame.obj.get());
  }

  /// The field's value as a cell when it is walked (borrowed when the type allows, else boxed).
  static bool ReadField(const FieldInfo& field, const Object* obj, FerryAny* cell, Any* box) {
    const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
    if (!field.type->view(addr, cell)) {
      *box = field.type->get(addr);
      *cell = *box->raw();
    }
    return IsWalkedCell(*cell);
  }

  static bool Holds(const Any& value, const Object* obj) {
    return IsWalkedCell(*value.raw()) && ObjectOfCell(*value.raw()) == obj;
  }

  /// All children of the top frame are done: rebuild it (a transform), call `fn`, pop it.
  void Finish() {
    Frame& frame = frames_.back();
    Any result;
    try {
      if (transform_ == nullptr) {
        visit_(ctx_, frame.obj);
      } else if (ObjectRef rebuilt = Rebuild(frame); rebuilt.defined()) {
        transform_(ctx_, rebuilt, &result);
        if (result.type_index() == kFerryNone || Holds(result, rebuilt.get())) {
          result = std::move(rebuilt);
        }
      } else {
        transform_(ctx_, frame.obj, &result);
        // `fn` returning the node it was given keeps it, as returning nothing does.
        if (Holds(result, frame.obj.get())) result = Any();
      }
    } catch (const Error& e) {
      Fail(std::string(e.kind()).c_str(), std::string(e.message()));
    }
    const bool shared = frame.shared;
    const Object* obj = frame.obj.get();  // kept alive by memo_keep_ when shared
    const size_t results_begin = frame.results_begin;
    frames_.pop_back();
    if (transform_ == nullptr) {
      if (shared) *memo_.Find(obj) = 0;
      return;
    }
    results_.resize(results_begin);
    if (shared) {
      *memo_.Find(obj) = static_cast<uint32_t>(memo_results_.size());
      memo_results_.push_back(result);
    }
    // Unchanged (the common case): a fresh None rather than a copy of `result`, whose cell was
    // just written by parts (a wide copy of it would wait for those stores).
    if (result.type_index() == kFerryNone) {
      results_.emplace_back();
    } else {
      results_.push_back(std::move(result));
    }
  }

  /// The top frame's object with its changed children put in, or a null reference when none
  /// changed. Its results are results_[frame.results_begin, end), one per walked child.
  ObjectRef Rebuild(Frame& frame) {
    const size_t begin = frame.results_begin;
    bool any = false;
    for (size_t i = begin; i < results_.size(); ++i) {
      if (results_[i].type_index() != kFerryNone) {
        any = true;
        break;
      }
    }
    if (!any) return ObjectRef();
    size_t next = begin;
    // The result of the next walked child; a ValueError when `fn` changed the object's children
    // so that it has more of them than were walked.
    auto next_result = [&]() -> const Any& {
      if (next >= results_.size()) ThrowChanged();
      return results_[next++];
    };
    switch (frame.kind) {
      case kLeaf:
        return ObjectRef();
      case kNode:
        return RebuildNode(frame, next);
      case kArray:
      case kList: {
        const ArrayObj* array = ArrayOf(frame);
        Array<Any> out;
        out.reserve(array->size());
        for (const Any& element : *array) {
          if (IsWalkedCell(*element.raw()) && next_result().type_index() != kFerryNone) {
            out.push_back(results_[next - 1]);
          } else {
            out.push_back(element);
          }
        }
        if (next != results_.size()) ThrowChanged();
        if (frame.kind == kArray) return std::move(out);
        ObjectPtr<ListNode> list = make_object<ListNode>();
        list->data = std::move(out);
        return ObjectRef(std::move(list));
      }
      case kMap:
      case kDict: {
        const MapObj* map = MapOf(frame);
        Map<Any, Any> out;
        for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
          if (MapObj::IsErased(*e)) continue;
          Any key = e->key, value = e->value;
          if (IsWalkedCell(*e->key.raw()) && next_result().type_index() != kFerryNone) {
            key = results_[next - 1];
          }
          if (IsWalkedCell(*e->value.raw()) && next_result().type_index() != kFerryNone) {
            value = results_[next - 1];
          }
          const auto size = out.size();
          out.Set(key, std::move(value));
          if (out.size() == size) {
            // The input's keys are distinct, so two of them were replaced by equal keys: keeping
            // one would drop the other's entry without a word.
            FERRY_THROW(ValueError)
                << "two keys of the map become the same key " << AnyRepr(key.raw())
                << " (one of them is " << AnyRepr(e->key.raw())
                << "); the transform would drop an entry";
          }
        }
        if (next != results_.size()) ThrowChanged();
        if (frame.kind == kMap) return std::move(out);
        ObjectPtr<DictNode> dict = make_object<DictNode>();
        dict->data = std::move(out);
        return ObjectRef(std::move(dict));
      }
    }
    return ObjectRef();
  }

  [[noreturn]] static void ThrowChanged() {
    FERRY_THROW(ValueError) << "the object's children changed during the walk (`fn` must not "
                               "modify the graph being transformed)";
  }

  ObjectRef RebuildNode(const Frame& frame, size_t next) {
    const NodeInfo* info = frame.info;
    const Object* obj = frame.obj.get();
    if (info->type_index != obj->type_index() && info->dynamic == nullptr) {
      FERRY_THROW(TypeError) << "cannot copy a '" << obj->GetTypeKey()
                             << "' to replace a child: its type is not registered (only its "
                                "ancestor '"
                             << info->type_key << "' is)";
    }
    ObjectPtr<Object> copy;
    const bool by_fields = info->copy == nullptr;
    if (!by_fields) {
      copy = info->copy(obj);
    } else if (info->create != nullptr) {
      copy = info->create(*info);
    } else {
      FERRY_THROW(TypeError) << "cannot copy a '" << obj->GetTypeKey()
                             << "' to replace a child: it has neither a copy nor a default "
                                "constructor";
    }
    for (const FieldInfo& field : info->fields) {
      FerryAny cell;
      Any box;
      const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
      const bool walked = ReadField(field, obj, &cell, &box);
      const Any* replacement = nullptr;
      if (walked) {
        if (next >= results_.size()) ThrowChanged();
        if (results_[next++].type_index() != kFerryNone) replacement = &results_[next - 1];
      }
      if (replacement == nullptr && !by_fields) continue;
      try {
        if (replacement != nullptr) {
          field.Write(copy.get(), *replacement);
        } else {
          field.type->set(reinterpret_cast<char*>(copy.get()) + field.offset,
                          field.type->get(addr));
        }
      } catch (const Error& e) {
        FERRY_THROW(TypeError) << "field '" << field.name << "' of '" << obj->GetTypeKey()
                               << "' cannot hold the replacement: " << e.message();
      }
    }
    if (next != results_.size()) ThrowChanged();
    return ObjectRef(std::move(copy));
  }

  /// The access path of the top frame: "root.body.args[2]".
  std::string Path() const {
    std::string out;
    for (const Frame& frame : frames_) {
      switch (frame.step.kind) {
        case kRoot:
          out += "root";
          break;
        case kField:
          out += "." + static_cast<const FieldInfo*>(frame.step.ref)->name;
          break;
        case kIndex:
          out += "[" + std::to_string(frame.step.index) + "]";
          break;
        case kMapValue:
          out += "[" + AnyRepr(frame.step.key.raw()) + "]";
          break;
        case kMapKey:
          out += ".key(" + AnyRepr(frame.step.key.raw()) + ")";
          break;
      }
    }
    return out;
  }

  /// Throws an error of `kind` saying where the walk was.
  [[noreturn]] void Fail(const char* kind, const std::string& message) {
    std::string text = std::string(who_) + ": at " + Path() + " (" +
                       frames_.back().obj->GetTypeKey() + "): " + message;
    ThrowError(kind, text.c_str());
  }

  const char* who_;
  VisitCallback visit_;
  TransformCallback transform_;
  void* ctx_;
  const Object* root_ = nullptr;
  std::vector<Frame> frames_;
  std::vector<Any> results_;
  std::vector<Any> memo_results_;
  std::vector<ObjectRef> memo_keep_;  // the memo's objects, so that no address is reused
  PointerMap<uint32_t> memo_;
  NodeInfoCache infos_;
};

}  // namespace

void StructuralVisitImpl(const AnyView& root, VisitCallback fn, void* ctx) {
  Walker("StructuralVisit", fn, nullptr, ctx).Run(root);
}

Any StructuralTransformImpl(const AnyView& root, TransformCallback fn, void* ctx) {
  Any result = Walker("StructuralTransform", nullptr, fn, ctx).Run(root);
  if (result.type_index() == kFerryNone) return Any(root);
  return result;
}

}  // namespace details

/// ferry.StructuralVisit(root, fn): calls fn(node) on every object reachable from root, children
/// first, each once.
FERRY_REGISTER_GLOBAL("ferry.StructuralVisit")
    .set_body_typed([](AnyView root, Function fn) {
      StructuralVisit(root, [&](const ObjectRef& node) { fn(node); });
    })
    .quick();

/// ferry.StructuralTransform(root, fn) -> the rebuilt root; fn(node) returns a replacement or None.
FERRY_REGISTER_GLOBAL("ferry.StructuralTransform")
    .set_body_typed([](AnyView root, Function fn) {
      return StructuralTransform(root, [&](const ObjectRef& node) { return fn(node); });
    })
    .quick();

}  // namespace ferry
