/// \file transform.cc
/// StructuralVisit and StructuralTransform: one post-order walk with an explicit stack of
/// frames. A frame is an object whose children are being walked; its `cursor` says which child
/// comes next and (in a transform) `walked` how many it has gone into. When the children are
/// done, a transform copies the object only when one of them changed, putting in their results,
/// and hands it to `fn`. A child without children of its own that its parent holds (see below)
/// gets no frame: `fn` is called on it at once.
///
/// What a type's objects hold is worked out once per walk (TypePlan): a node's fields that may
/// hold an object, each read as the object pointer at its offset (the field types whose view is
/// ViewObjectPointerField) or through its FieldType; number fields are left out.
///
/// A child whose result is the child itself (the common case) leaves no trace: the results of
/// changed children only are kept, in `changes_`, each with its ordinal among the walked
/// children of its parent, and a rebuild re-reads the children in the same order to pair them.
///
/// As in structural.cc, only shared objects (more than one reference, or the root) enter the
/// memo: an object with a single reference has one parent and is reached once, and a cycle
/// needs a second reference to some object on it. The memo also marks objects in progress, so
/// reaching one again is a cycle.
///
/// The frames on the stack are the path from the root to the object being finished, so an
/// error's access path is read from them (each step from its parent's cursor); nothing is kept
/// for paths until an error, but the keys of map steps (`fn` may erase them from a Dict).
///
/// What keeps the objects under the walk alive while `fn` runs, which may drop every other
/// reference to them (issue 35's hardening):
/// - the memo holds every shared object (and the root) to the end, so a memoized address is
///   never reused by a new object either;
/// - an object with one reference, its parent's, is held by its parent when the parent's
///   children cannot be replaced while the parent lives: a registered node that is not
///   `_type_mutable` (reflection cannot write its fields), an Array or a Map (copy-on-write: a
///   write through a handle copies unless the handle is the only reference, and the only
///   reference is the parent's field). The parent lives by the same argument, down to an object
///   the walk holds. Writing a field of such an object in place behind its handles (through
///   GetObjectPtr or an ObjectPtr kept from its construction) breaks its immutability and is not
///   supported while it is walked;
/// - any other frame (a child of a List, a Dict or a mutable node, or one read through a boxed
///   value) holds a reference to its object until it is popped.
/// Children are read from their parent one at a time, when the walk goes into them, so a
/// container `fn` changed is walked as it is then; a rebuild that no longer finds the children
/// it walked is a ValueError.
#include "ferry/reflection/transform.h"

#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ferry/container/dict.h"
#include "ferry/container/list.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"
#include "pointer_map_internal.h"

namespace ferry {
namespace details {
namespace {

/// Whether the walk goes into the value: objects other than strings and bytes.
inline bool IsWalkedCell(const FerryAny& cell) {
  return cell.type_index >= kFerryStaticObjectBegin && cell.type_index != kFerryString &&
         cell.type_index != kFerryBytes;
}
inline bool IsWalkedIndex(int32_t type_index) {
  return type_index >= kFerryStaticObjectBegin && type_index != kFerryString &&
         type_index != kFerryBytes;
}

inline const Object* ObjectOfCell(const FerryAny& cell) {
  return ObjectUnsafe::FromHeader(cell.v_obj);
}

/// A reference to an object the walk keeps alive by other means, for `fn`: made and dropped
/// without touching the object's count.
class BorrowedRef {
 public:
  explicit BorrowedRef(const Object* obj)
      : ref_(ObjectUnsafe::PtrFromOwned<Object>(const_cast<Object*>(obj))) {}
  ~BorrowedRef() {
    ObjectPtr<Object> ptr = ObjectUnsafe::MovePtr(std::move(ref_));
    ObjectUnsafe::MoveToOwned(&ptr);
  }
  BorrowedRef(const BorrowedRef&) = delete;
  BorrowedRef& operator=(const BorrowedRef&) = delete;
  const ObjectRef& ref() const { return ref_; }

 private:
  ObjectRef ref_;
};

/// What a walk does with an object: goes into it (a node, a container), calls `fn` on it alone
/// (a leaf), or leaves it out (kSkip: strings and bytes are values).
enum Kind : uint8_t { kLeaf, kNode, kArray, kMap, kList, kDict, kSkip };

/// How the walk reads a field: the object pointer at its offset, through FieldType::view (and
/// `get` when there is no borrowed form), or not at all (a number, never an object).
enum class FieldRead : uint8_t { kPointer, kView, kPlain };

/// A field of a node that may hold an object.
struct FieldSlot {
  uint32_t offset;
  FieldRead read;  // kPointer or kView
  uint32_t index;  // in NodeInfo::fields
};

/// What the walk needs to know of a type, worked out once per walk and type.
struct TypePlan {
  /// kLeaf for objects without fields that may hold an object.
  Kind kind = kLeaf;
  /// Whether the object keeps its walked children alive while it lives (see the file comment).
  bool holds_children = false;
  const NodeInfo* info = nullptr;
  /// kNode: the fields that may hold an object, in order, and how many.
  std::vector<FieldSlot> slots;
  uint32_t count = 0;
};

/// How a field of `type` is read. An object pointer is known by its view function
/// (ViewObjectPointerField); a number by what its view makes of zeroed storage: a number (of
/// every other type it is None, or there is no borrowed form). An enum (no borrowed form: its
/// value is its member's name) holds no object either; reading it through `get` would make
/// that name for every node, and fail on a value that is no member (enum.h).
FieldRead ReadOf(const FieldType* type) {
  if (type->view == &ViewObjectPointerField) return FieldRead::kPointer;
  alignas(16) static const unsigned char kZeros[64] = {};
  FerryAny cell;
  if (type->view(kZeros, &cell)) {
    if (cell.type_index == kFerryInt || cell.type_index == kFerryFloat ||
        cell.type_index == kFerryBool) {
      return FieldRead::kPlain;
    }
  } else if (type->type_str().rfind("Enum[", 0) == 0) {
    return FieldRead::kPlain;
  }
  return FieldRead::kView;
}

/// The walk. `kTransform`: StructuralTransform (results, rebuilds) rather than StructuralVisit.
template <bool kTransform>
class Walker {
  using Callback = std::conditional_t<kTransform, TransformCallback, VisitCallback>;

 public:
  Walker(const char* who, Callback fn, void* ctx) : who_(who), fn_(fn), ctx_(ctx) {}
  /// After an error: the references the frames still hold.
  ~Walker() {
    for (const Frame& frame : frames_) {
      if (&frame == top_ + 1) break;
      if (frame.flags & kOwned) ObjectUnsafe::DecRef(const_cast<Object*>(frame.obj));
    }
  }
  Walker(const Walker&) = delete;
  Walker& operator=(const Walker&) = delete;

  /// Walks from `root`; returns the transformed root (None when unchanged) for a transform.
  /// The loop is the hot path: a node's object fields are read here, the rest out of line.
  Any Run(const AnyView& root) {
    if (!IsWalkedCell(*root.raw())) return Any();
    root_ = ObjectOfCell(*root.raw());
    frames_.resize(64);
    top_ = frames_.data() - 1;
    // The caller's reference may be borrowed: the memo holds the root.
    EnterShared(root_, PlanOf(root_), nullptr);
    while (top_ >= frames_.data()) {
      Frame& top = *top_;
      const TypePlan& plan = *top.plan;
      const Object* child = nullptr;
      const TypePlan* child_plan = nullptr;
      const Any* key = nullptr;
      bool held = plan.holds_children;
      if (plan.kind == kNode) {
        const FieldSlot* slots = plan.slots.data();
        while (top.cursor < plan.count) {
          const FieldSlot& slot = slots[top.cursor++];
          const Object* c;
          if (slot.read == FieldRead::kPointer) {
            c = *reinterpret_cast<const Object* const*>(reinterpret_cast<const char*>(top.obj) +
                                                        slot.offset);
            if (c == nullptr) continue;
          } else if ((c = ViewedChild(top, slot, &held)) == nullptr) {
            continue;
          }
          const TypePlan* cp = PlanOf(c);
          if (cp->kind == kSkip) continue;
          if constexpr (kTransform) ++top.walked;
          if (cp->kind == kLeaf && held && c->unique()) {
            Leaf(c, cp);  // no frame: held by its parent, fn called at once
            continue;
          }
          child = c;
          child_plan = cp;
          break;
        }
      } else if (plan.kind != kLeaf) {
        child = NextItem(&top, &key);
        if (child != nullptr) {
          child_plan = PlanOf(child);
          if constexpr (kTransform) ++top.walked;
          if (child_plan->kind == kLeaf && held && key == nullptr && child->unique()) {
            Leaf(child, child_plan);
            continue;
          }
        }
      }
      if (child == nullptr) {
        Finish();
        continue;
      }
      if (!child->unique()) {
        EnterShared(child, child_plan, key);
      } else {
        Push(child, child_plan, 0, !held, key);
      }
      if (!held && box_.type_index() != kFerryNone) box_ = Any();
    }
    return std::move(root_result_);
  }

 private:
  struct Frame {
    const Object* obj;
    const TypePlan* plan;
    uint32_t cursor;         // the next slot, element, or 2 * entry + (0 key, 1 value)
    uint32_t walked;         // a transform's: the children gone into so far
    uint32_t changes_begin;  // this frame's children's entries in changes_ start here
    uint8_t flags;           // kShared, kOwned, kMapStep
  };
  /// Frame::flags: in the memo (which holds the object); holding a reference to the object;
  /// reached as a key or value of a Map or Dict (its key is on keys_).
  static constexpr uint8_t kShared = 1, kOwned = 2, kMapStep = 4;
  /// The result of a changed child: its ordinal among its parent's walked children.
  struct Change {
    uint32_t ordinal;
    Any value;
  };
  /// Memo values: an object in progress, or done with its result at memo_results_ index.
  static constexpr uint32_t kInProgress = 0xffffffffu;

  /// The plan of `obj`'s type, from a small direct-mapped cache by type index.
  const TypePlan* PlanOf(const Object* obj) {
    const int32_t type_index = obj->type_index();
    CacheEntry& entry = cache_[static_cast<uint32_t>(type_index) % kCacheEntries];
    if (entry.type_index != type_index) {
      entry.type_index = type_index;
      entry.plan = MakePlan(obj);
    }
    return entry.plan;
  }

  __attribute__((noinline)) const TypePlan* MakePlan(const Object* obj) {
    static const TypePlan kLeafPlan;
    static const TypePlan kArrayPlan{kArray, true, nullptr, {}, 0};
    static const TypePlan kMapPlan{kMap, true, nullptr, {}, 0};
    static const TypePlan kListPlan{kList, false, nullptr, {}, 0};
    static const TypePlan kDictPlan{kDict, false, nullptr, {}, 0};
    static const TypePlan kSkipPlan{kSkip, false, nullptr, {}, 0};
    switch (obj->type_index()) {
      case kFerryString:
      case kFerryBytes:
        return &kSkipPlan;
      case kFerryArray:
        return &kArrayPlan;
      case kFerryMap:
        return &kMapPlan;
      case kFerryList:
        return &kListPlan;
      case kFerryDict:
        return &kDictPlan;
      default:
        break;
    }
    const NodeInfo* info = GetNodeInfo(obj);
    if (info == nullptr || info->fields.empty()) return &kLeafPlan;
    auto [it, inserted] = plans_.try_emplace(info);
    TypePlan& plan = it->second;
    if (inserted) {
      plan.holds_children = !info->mutable_fields;
      plan.info = info;
      for (size_t i = 0; i < info->fields.size(); ++i) {
        const FieldRead read = ReadOf(info->fields[i].type);
        if (read == FieldRead::kPlain) continue;
        plan.slots.push_back(FieldSlot{static_cast<uint32_t>(info->fields[i].offset), read,
                                       static_cast<uint32_t>(i)});
      }
      plan.count = static_cast<uint32_t>(plan.slots.size());
      plan.kind = plan.count == 0 ? kLeaf : kNode;
    }
    return &plan;
  }

  /// Goes into a shared object (or the root), or uses its memoized result when it was met
  /// before. The memo holds it to the end of the walk.
  __attribute__((noinline)) void EnterShared(const Object* child, const TypePlan* plan,
                                             const Any* key) {
    auto [state, inserted] = memo_.Insert(child, kInProgress);
    if (inserted) {
      memo_keep_.push_back(GetRef<ObjectRef>(child));
      Push(child, plan, kShared, false, key);
      return;
    }
    if (*state == kInProgress) {
      Push(child, plan, 0, false, key);  // for the path in the message
      Fail("ValueError", "the graph has a cycle: this object contains itself");
    }
    if constexpr (kTransform) {
      if (memo_results_[*state].type_index() != kFerryNone) {
        changes_.push_back(Change{top_->walked - 1, memo_results_[*state]});
      }
    }
  }

  /// Pushes a frame, written in place: a Frame built on the stack and copied would be read
  /// back with wide loads right after its narrow stores, which cannot be forwarded.
  void Push(const Object* obj, const TypePlan* plan, uint8_t flags, bool owned, const Any* key) {
    if (top_ + 1 == frames_.data() + frames_.size()) Grow();
    if (owned) {
      ObjectUnsafe::IncRef(const_cast<Object*>(obj));
      flags |= kOwned;
    }
    if (key != nullptr) {
      keys_.push_back(*key);
      flags |= kMapStep;
    }
    Frame& frame = *++top_;
    frame.obj = obj;
    frame.plan = plan;
    frame.cursor = 0;
    frame.flags = flags;
    if constexpr (kTransform) {
      frame.walked = 0;
      frame.changes_begin = static_cast<uint32_t>(changes_.size());
    }
  }

  /// A child without children of its own that its parent holds: `fn` is called on it at once,
  /// without a frame (one is pushed for the path when `fn` throws).
  void Leaf(const Object* obj, const TypePlan* plan) {
    try {
      BorrowedRef node(obj);
      if constexpr (kTransform) {
        Any result;
        fn_(ctx_, node.ref(), &result);
        if (result.type_index() != kFerryNone && !Holds(result, obj)) {
          changes_.push_back(Change{top_->walked - 1, std::move(result)});
        }
      } else {
        fn_(ctx_, node.ref());
      }
    } catch (const Error& e) {
      Push(obj, plan, 0, false, nullptr);
      Fail(std::string(e.kind()).c_str(), std::string(e.message()));
    }
  }

  __attribute__((noinline)) void Grow() {
    const size_t depth = static_cast<size_t>(top_ + 1 - frames_.data());
    frames_.resize(2 * frames_.size());
    top_ = frames_.data() + depth - 1;
  }

  /// The object a field holds when the walk goes into it, or null. A type without a borrowed
  /// form is read as an owned copy into `*box`, which may hold the only reference to the
  /// object (`get` may have made it).
  static const Object* ChildOfField(FieldRead read, const FieldInfo& field, const Object* obj,
                                    Any* box) {
    const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
    if (read == FieldRead::kPointer) {
      const Object* child = *reinterpret_cast<const Object* const*>(addr);
      return child != nullptr && IsWalkedIndex(child->type_index()) ? child : nullptr;
    }
    FerryAny cell;
    if (field.type->view(addr, &cell)) return IsWalkedCell(cell) ? ObjectOfCell(cell) : nullptr;
    *box = field.type->get(addr);
    if (IsWalkedCell(*box->raw())) return ObjectOfCell(*box->raw());
    *box = Any();
    return nullptr;
  }

  /// The object in `slot` of `frame`, read through its type. A value read as an owned copy is
  /// kept in box_ until the child's frame holds it, so the parent does not hold that child:
  /// `*held` is cleared.
  __attribute__((noinline)) const Object* ViewedChild(const Frame& frame, const FieldSlot& slot,
                                                      bool* held) {
    const Object* child =
        ChildOfField(slot.read, frame.plan->info->fields[slot.index], frame.obj, &box_);
    if (box_.type_index() != kFerryNone) *held = false;
    return child;
  }

  /// The next item of an Array, List, Map or Dict that the walk goes into; null at the end.
  /// Sets `*key` for a map step.
  __attribute__((noinline)) const Object* NextItem(Frame* frame, const Any** key) {
    switch (frame->plan->kind) {
      case kLeaf:
      case kSkip:
      case kNode:
        return nullptr;
      case kArray:
      case kList: {
        const ArrayObj* array = ArrayOf(*frame);
        const size_t count = static_cast<size_t>(array->size());
        while (frame->cursor < count) {
          const FerryAny& c = *array->begin()[frame->cursor++].raw();
          if (IsWalkedCell(c)) return ObjectOfCell(c);
        }
        return nullptr;
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
            *key = &e.key;
            return ObjectOfCell(c);
          }
        }
        return nullptr;
      }
    }
    return nullptr;
  }

  static const ArrayObj* ArrayOf(const Frame& frame) {
    if (frame.plan->kind == kList) return static_cast<const ListNode*>(frame.obj)->data.get();
    return static_cast<const ArrayObj*>(frame.obj);
  }
  static const MapObj* MapOf(const Frame& frame) {
    if (frame.plan->kind == kDict) return static_cast<const DictNode*>(frame.obj)->data.get();
    return static_cast<const MapObj*>(frame.obj);
  }

  static bool Holds(const Any& value, const Object* obj) {
    return IsWalkedCell(*value.raw()) && ObjectOfCell(*value.raw()) == obj;
  }

  /// All children of the top frame are done: rebuild it (a transform), call `fn`, pop it.
  void Finish() {
    const Frame& frame = *top_;
    Any result;
    try {
      BorrowedRef node(frame.obj);  // alive: see the file comment
      if constexpr (!kTransform) {
        fn_(ctx_, node.ref());
      } else if (changes_.size() > frame.changes_begin) {
        ObjectRef rebuilt = Rebuild(frame);
        fn_(ctx_, rebuilt, &result);
        if (result.type_index() == kFerryNone || Holds(result, rebuilt.get())) {
          result = std::move(rebuilt);
        }
      } else {
        fn_(ctx_, node.ref(), &result);
        // `fn` returning the node it was given keeps it, as returning nothing does.
        if (Holds(result, frame.obj)) result = Any();
      }
    } catch (const Error& e) {
      Fail(std::string(e.kind()).c_str(), std::string(e.message()));
    }
    const Object* obj = frame.obj;
    const uint8_t flags = frame.flags;
    if (flags & kMapStep) keys_.pop_back();
    if constexpr (kTransform) {
      if (changes_.size() > frame.changes_begin) changes_.resize(frame.changes_begin);
    }
    --top_;
    if (flags & kShared) Memoize(obj, &result);
    if constexpr (kTransform) {
      if (result.type_index() != kFerryNone) {
        if (top_ < frames_.data()) {
          root_result_ = std::move(result);
        } else {
          changes_.push_back(Change{top_->walked - 1, std::move(result)});
        }
      }
    }
    // Last: this may free the object (`fn` dropped every other reference to it).
    if (flags & kOwned) ObjectUnsafe::DecRef(const_cast<Object*>(obj));
  }

  __attribute__((noinline)) void Memoize(const Object* obj, const Any* result) {
    if constexpr (kTransform) {
      *memo_.Find(obj) = static_cast<uint32_t>(memo_results_.size());
      memo_results_.push_back(*result);
    } else {
      *memo_.Find(obj) = 0;
    }
  }

  /// Pairs the top frame's children, re-read in order, with its changes.
  class Pairing {
   public:
    Pairing(const Frame& frame, std::vector<Change>* changes)
        : expected_(frame.walked), next_(frame.changes_begin), changes_(changes) {}
    /// The replacement of the next walked child, or null when it is unchanged; a ValueError
    /// when `fn` changed the object so that it has more walked children than were walked.
    const Any* Next() {
      if (ordinal_ >= expected_) ThrowChanged();
      const uint32_t ordinal = ordinal_++;
      if (next_ < changes_->size() && (*changes_)[next_].ordinal == ordinal) {
        return &(*changes_)[next_++].value;
      }
      return nullptr;
    }
    /// A ValueError unless every walked child was met again.
    void Done() const {
      if (ordinal_ != expected_) ThrowChanged();
    }

   private:
    uint32_t ordinal_ = 0;
    uint32_t expected_;
    size_t next_;
    std::vector<Change>* changes_;
  };

  /// The top frame's object with its changed children put in: a new object.
  __attribute__((noinline)) ObjectRef Rebuild(const Frame& frame) {
    Pairing pairing(frame, &changes_);
    switch (frame.plan->kind) {
      case kLeaf:
      case kSkip:
        break;
      case kNode:
        return RebuildNode(frame, &pairing);
      case kArray:
      case kList: {
        const ArrayObj* array = ArrayOf(frame);
        Array<Any> out;
        out.reserve(array->size());
        for (const Any& element : *array) {
          const Any* replacement = IsWalkedCell(*element.raw()) ? pairing.Next() : nullptr;
          out.push_back(replacement != nullptr ? *replacement : element);
        }
        pairing.Done();
        if (frame.plan->kind == kArray) return std::move(out);
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
          if (IsWalkedCell(*e->key.raw())) {
            if (const Any* replacement = pairing.Next()) key = *replacement;
          }
          if (IsWalkedCell(*e->value.raw())) {
            if (const Any* replacement = pairing.Next()) value = *replacement;
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
        pairing.Done();
        if (frame.plan->kind == kMap) return std::move(out);
        ObjectPtr<DictNode> dict = make_object<DictNode>();
        dict->data = std::move(out);
        return ObjectRef(std::move(dict));
      }
    }
    ThrowChanged();  // a leaf has no walked children, so it has no changes
  }

  [[noreturn]] static void ThrowChanged() {
    FERRY_THROW(ValueError) << "the object's children changed during the walk (`fn` must not "
                               "modify the graph being transformed)";
  }

  /// Whether `value` is an object of exactly the registered node type of `child`, which the
  /// field held: a C++ object-pointer field then accepts it without a conversion, since such a
  /// field's check is its class's type test (not so for containers, whose element types a
  /// conversion may check, nor for the constraints of fields registered at run time).
  static bool IsSameNodeType(const Any& value, const Object* child) {
    const int32_t type_index = value.type_index();
    return type_index >= kFerryStaticObjectEnd && type_index == child->type_index();
  }

  /// Stores the object of `value` in the object-pointer field at `addr` of a fresh copy (no
  /// other thread sees it), releasing the object the field held.
  static void PutPointer(char* addr, const Any& value) {
    Object* next = const_cast<Object*>(ObjectOfCell(*value.raw()));
    ObjectUnsafe::IncRef(next);
    Object*& field = *reinterpret_cast<Object**>(addr);
    Object* old = field;
    field = next;
    if (old != nullptr) ObjectUnsafe::DecRef(old);
  }

  ObjectRef RebuildNode(const Frame& frame, Pairing* pairing) {
    const TypePlan& plan = *frame.plan;
    const NodeInfo* info = plan.info;
    const Object* obj = frame.obj;
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
    size_t slot = 0;  // the next of plan.slots
    for (size_t i = 0; i < info->fields.size(); ++i) {
      const FieldInfo& field = info->fields[i];
      const Any* replacement = nullptr;
      const Object* child = nullptr;
      FieldRead read = FieldRead::kPlain;
      if (slot < plan.slots.size() && plan.slots[slot].index == i) {
        Any box;
        read = plan.slots[slot++].read;
        if ((child = ChildOfField(read, field, obj, &box)) != nullptr) {
          replacement = pairing->Next();
        }
      }
      if (replacement == nullptr && !by_fields) continue;
      const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
      try {
        if (replacement != nullptr && read == FieldRead::kPointer && field.constraint == nullptr &&
            IsSameNodeType(*replacement, child)) {
          PutPointer(reinterpret_cast<char*>(copy.get()) + field.offset, *replacement);
        } else if (replacement != nullptr) {
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
    pairing->Done();
    return ObjectRef(std::move(copy));
  }

  /// The access path of the top frame: "root.body.args[2]". Each frame's step is read from its
  /// parent's cursor, which has just passed it.
  std::string Path() const {
    std::string out = "root";
    size_t key = 0;
    for (const Frame* frame = frames_.data() + 1; frame <= top_; ++frame) {
      const Frame& parent = frame[-1];
      const uint32_t at = parent.cursor - 1;
      switch (parent.plan->kind) {
        case kLeaf:
        case kSkip:
          break;
        case kNode:
          out += "." + parent.plan->info->fields[parent.plan->slots[at].index].name;
          break;
        case kArray:
        case kList:
          out += "[" + std::to_string(at) + "]";
          break;
        case kMap:
        case kDict:
          if (frame->flags & kMapStep) {
            const std::string repr = AnyRepr(keys_[key++].raw());
            out += at % 2 == 0 ? ".key(" + repr + ")" : "[" + repr + "]";
          }
          break;
      }
    }
    return out;
  }

  /// Throws an error of `kind` saying where the walk was.
  [[noreturn]] __attribute__((noinline)) void Fail(const char* kind, const std::string& message) {
    std::string text =
        std::string(who_) + ": at " + Path() + " (" + top_->obj->GetTypeKey() + "): " + message;
    ThrowError(kind, text.c_str());
  }

  struct CacheEntry {
    int32_t type_index = -1;
    const TypePlan* plan = nullptr;
  };
  static constexpr uint32_t kCacheEntries = 16;

  const char* who_;
  Callback fn_;
  void* ctx_;
  const Object* root_ = nullptr;
  std::vector<Frame> frames_;  // the stack: frames_[0] .. *top_
  Frame* top_ = nullptr;
  std::vector<Any> keys_;  // the keys of the map steps on the stack, bottom up
  std::vector<Change> changes_;
  std::vector<Any> memo_results_;
  std::vector<ObjectRef> memo_keep_;  // the memo's objects, so that no address is reused
  PointerMap<uint32_t> memo_;
  Any root_result_;
  Any box_;  // a child read as an owned copy, until its frame holds it
  CacheEntry cache_[kCacheEntries];
  std::unordered_map<const NodeInfo*, TypePlan> plans_;
};

}  // namespace

void StructuralVisitImpl(const AnyView& root, VisitCallback fn, void* ctx) {
  Walker<false>("StructuralVisit", fn, ctx).Run(root);
}

Any StructuralTransformImpl(const AnyView& root, TransformCallback fn, void* ctx) {
  Any result = Walker<true>("StructuralTransform", fn, ctx).Run(root);
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
