/// \file transform.cc
/// StructuralVisit and StructuralTransform: one post-order walk with an explicit stack of
/// frames. A frame is an object whose children are being walked; its `cursor` says which child
/// comes next and (in a transform) `walked` how many it has gone into. When the children are
/// done, a transform copies the object only when one of them changed, putting in their results,
/// and hands it to `fn`. A child without children of its own that its parent holds (see below)
/// gets no frame: `fn` is called on it at once. A unique node that holds its children (an
/// immutable node) gets no frame either: it is walked by native recursion (Walker::Lean) down
/// to kStructuralWalkRecursion levels, the rest of the graph by the explicit stack (see Walker).
/// A visit walks such a node whose fields are all object pointers by Walker::VisitLevel, which
/// decides each child by a byte per type index and its count (it builds nothing).
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

#include <memory>
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
  /// A node that holds its children: walked by Walker::Lean, recursively, when it is unique.
  bool lean = false;
  const NodeInfo* info = nullptr;
  /// kNode: the fields that may hold an object, in order, and how many.
  std::vector<FieldSlot> slots;
  uint32_t count = 0;
  /// Whether every slot is read as the object pointer at its offset; then `offsets` lists
  /// them (slots[i].offset), the compact array a visit's Walker::VisitLevel loops over.
  bool pointers_only = false;
  std::vector<uint32_t> offsets;
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

/// An error on its way out of the walk, collecting the access path as it passes the levels of
/// the recursion: `steps` innermost first, each one or more steps ("[2].body").
struct PathError {
  std::string kind;
  std::string message;
  std::string type_key;  // of the object the walk was at
  std::vector<std::string> steps;
};

/// The walk. `kTransform`: StructuralTransform (results, rebuilds) rather than StructuralVisit.
///
/// Two ways of walking cooperate. A unique node that holds its children (an immutable node:
/// TypePlan::lean) is walked by Lean, a native recursion that needs no frame, no reference
/// counts and no memo (it is reached once, and its children live as long as it does). Anything
/// else (the root, shared objects, containers, mutable nodes) gets a frame on the explicit
/// stack, walked by RunLoop. Each calls the other: RunLoop hands a lean child to Lean, and Lean
/// hands a child it cannot walk to a new run of RunLoop (Nested) above the frames already on
/// the stack (a segment: frames_[run_base_] up). Native recursion (Lean levels and nested
/// runs) stops at kStructuralWalkRecursion levels; below that every object is walked on the
/// explicit stack, whose depth memory alone limits.
///
/// An error becomes a PathError where it happens; each Lean level adds its field and each
/// segment its path as it passes, and Run throws it as the error of its kind.
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
  Any Run(const AnyView& root) {
    if (!IsWalkedCell(*root.raw())) return Any();
    root_ = ObjectOfCell(*root.raw());
    frames_.resize(64);
    top_ = frames_.data() - 1;
    try {
      // The caller's reference may be borrowed: the memo holds the root.
      EnterShared(root_, PlanOf(root_), nullptr, 0);
      RunLoop(0);
    } catch (PathError& e) {
      std::string text = std::string(who_) + ": at root";
      for (size_t i = e.steps.size(); i-- > 0;) text += e.steps[i];
      text += " (" + e.type_key + "): " + e.message;
      ThrowError(e.kind.c_str(), text.c_str());
    }
    return std::move(root_result_);
  }

 private:
  /// Walks the frames of the current segment (from frames_[run_base_]) until its bottom frame
  /// is done. `depth`: the levels of native recursion under this call.
  /// The loop is a hot path: a node's object fields are read here, the rest out of line.
  void RunLoop(uint32_t depth) {
    while (top_ >= frames_.data() + run_base_) {
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
          } else if ((c = ViewedChild(top.plan, top.obj, slot, &held)) == nullptr) {
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
        EnterShared(child, child_plan, key, kTransform ? top.walked - 1 : 0);
      } else if (child_plan->lean && held && key == nullptr && depth < kStructuralWalkRecursion) {
        LeanChild(child, child_plan, depth + 1);
        continue;
      } else {
        Push(child, child_plan, 0, !held, key);
      }
      if (!held && box_.type_index() != kFerryNone) box_ = Any();
    }
  }

  /// Calls `fn` on `node`; its replacement goes to `*out` (a transform). An error becomes a
  /// PathError at `node`.
  void Call(const ObjectRef& node, Any* out) {
    try {
      if constexpr (kTransform) {
        fn_(ctx_, node, out);
      } else {
        (void)out;
        fn_(ctx_, node);
      }
    } catch (const Error& e) {
      ThrowAt(node.get(), e);
    }
  }

  [[noreturn]] __attribute__((noinline)) static void ThrowAt(const Object* obj, const Error& e) {
    throw PathError{std::string(e.kind()), std::string(e.message()), obj->GetTypeKey(), {}};
  }

  /// The walk of a unique node that holds its children (TypePlan::lean), by native recursion:
  /// its children, then `fn` on it (on a copy with the changed children put in, for a
  /// transform: its result goes to `*out`, None when the node stays). `depth`: the levels of
  /// native recursion this one is.
  __attribute__((noinline)) void Lean(const Object* obj, const TypePlan* plan, uint32_t depth,
                                      Any* out) {
    if constexpr (!kTransform) {
      if (plan->pointers_only) {
        VisitLevel<true>(obj, plan, depth);
        return;
      }
    }
    LeanLevel<true>(obj, plan, depth, out);
  }

  /// A visit's Lean of a node whose fields are all object pointers (TypePlan::pointers_only):
  /// a visit builds nothing, so each child is decided by one byte of its type (acts_) and its
  /// uniqueness, and a unique leaf or lean node (the common children) is handled here; any
  /// other child (first met type, shared, skipped, a container, a mutable node, too deep) by
  /// VisitChild. Two levels per call, as LeanLevel.
  template <bool kFirst>
  __attribute__((always_inline)) void VisitLevel(const Object* obj, const TypePlan* plan,
                                                 uint32_t depth) {
    const char* base = reinterpret_cast<const char*>(obj);
    const uint32_t* const begin = plan->offsets.data();
    const uint32_t* const end = begin + plan->count;
    const uint32_t* at = begin;
    try {
      for (; at != end; ++at) {
        const Object* c = *reinterpret_cast<const Object* const*>(base + *at);
        if (c == nullptr) continue;
        const uint32_t type_index = static_cast<uint32_t>(c->type_index());
        const uint8_t act = type_index < kActCount ? acts_[type_index] : kActOther;
        if (c->unique()) {
          if (act == kActLeaf) {
            BorrowedRef node(c);
            Call(node.ref(), nullptr);
            continue;
          }
          if (act == kActLean && depth < kStructuralWalkRecursion) {
            if constexpr (kFirst) {
              VisitLevel<false>(c, act_plans_[type_index], depth + 1);
            } else {
              Lean(c, act_plans_[type_index], depth + 1, nullptr);
            }
            continue;
          }
        }
        VisitChild(c, depth);
      }
    } catch (PathError& e) {
      e.steps.push_back("." + plan->info->fields[plan->slots[at - begin].index].name);
      throw;
    }
    BorrowedRef node(obj);  // alive: see the file comment
    Call(node.ref(), nullptr);
  }

  /// A child of VisitLevel that its fast path does not take, walked as LeanLevel walks a
  /// pointer child; records its type's act for the next ones.
  __attribute__((noinline)) void VisitChild(const Object* c, uint32_t depth) {
    const CacheEntry& entry = EntryOf(c);
    const uint32_t type_index = static_cast<uint32_t>(c->type_index());
    if (type_index < kActCount && acts_[type_index] == kActUnknown) {
      acts_[type_index] = entry.kind == kLeaf                       ? kActLeaf
                          : entry.lean && entry.plan->pointers_only ? kActLean
                                                                    : kActOther;
      if (acts_[type_index] == kActLean) {
        if (act_plans_ == nullptr) act_plans_.reset(new const TypePlan*[kActCount]);
        act_plans_[type_index] = entry.plan;
      }
    }
    if (entry.kind == kSkip) return;
    if (c->unique()) {
      if (entry.kind == kLeaf) {
        BorrowedRef node(c);
        Call(node.ref(), nullptr);
        return;
      }
      if (entry.lean && depth < kStructuralWalkRecursion) {
        Lean(c, entry.plan, depth + 1, nullptr);
        return;
      }
    }
    Nested(c, entry.plan, true, 0, depth + kStructuralWalkNestedLevels);
  }

  /// Lean's body. Lean runs two levels of it per call (`kFirst`: the first, which walks its lean
  /// children with the second inlined, whose lean children are walked by calls of Lean): half
  /// the calls, and their saving and restoring of registers, of one level per call.
  template <bool kFirst>
  __attribute__((always_inline)) void LeanLevel(const Object* obj, const TypePlan* plan,
                                                uint32_t depth, Any* out) {
    [[maybe_unused]] uint32_t walked = 0;
    [[maybe_unused]] const uint32_t changes_begin = static_cast<uint32_t>(changes_.size());
    const char* base = reinterpret_cast<const char*>(obj);
    const FieldSlot* slot = plan->slots.data();
    const FieldSlot* const end = slot + plan->count;
    try {
      for (; slot != end; ++slot) {
        if (slot->read != FieldRead::kPointer) {
          walked += LeanViewedSlot(obj, plan, *slot, walked, depth);
          continue;
        }
        // An object pointer: the parent holds the child.
        const Object* c = *reinterpret_cast<const Object* const*>(base + slot->offset);
        if (c == nullptr) continue;
        const CacheEntry& entry = EntryOf(c);
        if (entry.kind == kSkip) continue;
        [[maybe_unused]] uint32_t ordinal = 0;
        if constexpr (kTransform) ordinal = walked++;
        if (c->unique()) {
          if (entry.kind == kLeaf) {
            BorrowedRef node(c);
            if constexpr (kTransform) {
              Any result;
              Call(node.ref(), &result);
              if (result.type_index() != kFerryNone && !Holds(result, c)) {
                changes_.push_back(Change{ordinal, std::move(result)});
              }
            } else {
              Call(node.ref(), nullptr);
            }
            continue;
          }
          if (entry.lean && depth < kStructuralWalkRecursion) {
            if constexpr (kTransform) {
              Any result;
              LeanNext<kFirst>(c, entry.plan, depth + 1, &result);
              if (result.type_index() != kFerryNone) {
                changes_.push_back(Change{ordinal, std::move(result)});
              }
            } else {
              LeanNext<kFirst>(c, entry.plan, depth + 1, nullptr);
            }
            continue;
          }
        }
        Nested(c, entry.plan, true, ordinal, depth + kStructuralWalkNestedLevels);
      }
    } catch (PathError& e) {
      e.steps.push_back("." + plan->info->fields[slot->index].name);
      throw;
    }
    if constexpr (!kTransform) {
      BorrowedRef node(obj);  // alive: see the file comment
      Call(node.ref(), nullptr);
    } else if (changes_.size() > changes_begin) {
      LeanRebuild(obj, plan, walked, changes_begin, out);
    } else {
      BorrowedRef node(obj);
      Call(node.ref(), out);
      // `fn` returning the node it was given keeps it, as returning nothing does.
      if (Holds(*out, obj)) *out = Any();
    }
  }

  /// A field of a lean node read through its type (not an object pointer), out of the loop's
  /// way: its child, if any, walked as LeanLevel would, as the child of `ordinal`. A value read
  /// as an owned copy is not held by the node: its nested run holds it. Returns 1 when there
  /// was a child to walk, else 0.
  __attribute__((noinline)) uint32_t LeanViewedSlot(const Object* obj, const TypePlan* plan,
                                                    const FieldSlot& slot, uint32_t ordinal,
                                                    uint32_t depth) {
    bool held = true;
    const Object* c = ViewedChild(plan, obj, slot, &held);
    if (c == nullptr) return 0;
    const CacheEntry& entry = EntryOf(c);
    if (entry.kind == kSkip) {
      if (box_.type_index() != kFerryNone) box_ = Any();
      return 0;
    }
    if (held && c->unique() && (entry.kind == kLeaf || entry.lean)) {
      Any result;
      if (entry.kind == kLeaf) {
        BorrowedRef node(c);
        Call(node.ref(), &result);
        if (Holds(result, c)) result = Any();
      } else if (depth < kStructuralWalkRecursion) {
        Lean(c, entry.plan, depth + 1, &result);
      } else {
        Nested(c, entry.plan, held, ordinal, depth + kStructuralWalkNestedLevels);
        return 1;
      }
      if constexpr (kTransform) {
        if (result.type_index() != kFerryNone) {
          changes_.push_back(Change{ordinal, std::move(result)});
        }
      }
      return 1;
    }
    Nested(c, entry.plan, held, ordinal, depth + kStructuralWalkNestedLevels);
    return 1;
  }

  /// The next level of LeanLevel<kFirst>: inlined after the first, a call of Lean after the
  /// second.
  template <bool kFirst>
  __attribute__((always_inline)) void LeanNext(const Object* obj, const TypePlan* plan,
                                               uint32_t depth, Any* out) {
    if constexpr (kFirst) {
      LeanLevel<false>(obj, plan, depth, out);
    } else {
      Lean(obj, plan, depth, out);
    }
  }

  /// A lean node with changed children: its copy with them put in, handed to `fn`.
  __attribute__((noinline)) void LeanRebuild(const Object* obj, const TypePlan* plan,
                                             uint32_t walked, uint32_t changes_begin, Any* out) {
    Frame frame{obj, plan, plan->count, walked, changes_begin, 0};
    ObjectRef rebuilt;
    try {
      rebuilt = Rebuild(frame);
    } catch (const Error& e) {
      ThrowAt(obj, e);
    }
    changes_.resize(changes_begin);
    Call(rebuilt, out);
    if (out->type_index() == kFerryNone || Holds(*out, rebuilt.get())) *out = std::move(rebuilt);
  }

  /// A lean child of the top frame (RunLoop), walked by Lean; an error passing gets the path of
  /// the segment to the child.
  __attribute__((noinline)) void LeanChild(const Object* child, const TypePlan* plan,
                                           uint32_t depth) {
    const size_t at = static_cast<size_t>(top_ - frames_.data());
    try {
      if constexpr (kTransform) {
        Any result;
        Lean(child, plan, depth, &result);
        if (result.type_index() != kFerryNone) {
          changes_.push_back(Change{top_->walked - 1, std::move(result)});
        }
      } else {
        Lean(child, plan, depth, nullptr);
      }
    } catch (PathError& e) {
      e.steps.push_back(SegmentPath(at, true));
      throw;
    }
  }

  /// A child of a Lean node that Lean does not walk (shared, a container, a mutable node, one
  /// read as an owned copy, or too deep), walked by a new segment of the explicit stack. Its
  /// result is recorded for the Lean node as the child of `ordinal`.
  __attribute__((noinline)) void Nested(const Object* child, const TypePlan* plan, bool held,
                                        uint32_t ordinal, uint32_t depth) {
    struct Restore {
      Walker* walker;
      size_t base;
      uint32_t ordinal;
      ~Restore() {
        walker->run_base_ = base;
        walker->run_ordinal_ = ordinal;
      }
    } restore{this, run_base_, run_ordinal_};
    run_base_ = static_cast<size_t>(top_ + 1 - frames_.data());
    run_ordinal_ = ordinal;
    if (!child->unique()) {
      EnterShared(child, plan, nullptr, ordinal);
    } else {
      Push(child, plan, 0, !held, nullptr);
    }
    if (!held && box_.type_index() != kFerryNone) box_ = Any();
    RunLoop(depth);
  }
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
  /// An entry of the plan cache (EntryOf).
  struct CacheEntry {
    int32_t type_index = -1;
    Kind kind = kLeaf;
    bool lean = false;
    const TypePlan* plan = nullptr;
  };
  static constexpr uint32_t kCacheEntries = 16;

  /// Memo values: an object in progress, or done with its result at memo_results_ index.
  static constexpr uint32_t kInProgress = 0xffffffffu;

  /// The plan of `obj`'s type, from a small direct-mapped cache by type index.
  const TypePlan* PlanOf(const Object* obj) { return EntryOf(obj).plan; }

  /// The cache entry of `obj`'s type, which has its plan's kind and lean beside the plan: the
  /// walk decides what to do with a child from the entry alone, one load fewer on the path
  /// that waits for the child's header to come from memory.
  const CacheEntry& EntryOf(const Object* obj) {
    const int32_t type_index = obj->type_index();
    CacheEntry& entry = cache_[static_cast<uint32_t>(type_index) % kCacheEntries];
    if (entry.type_index != type_index) {
      const TypePlan* plan = MakePlan(obj);
      entry.type_index = type_index;
      entry.kind = plan->kind;
      entry.lean = plan->lean;
      entry.plan = plan;
    }
    return entry;
  }

  __attribute__((noinline)) const TypePlan* MakePlan(const Object* obj) {
    static const TypePlan kLeafPlan;
    static const TypePlan kArrayPlan{kArray, true, false, nullptr, {}, 0, false, {}};
    static const TypePlan kMapPlan{kMap, true, false, nullptr, {}, 0, false, {}};
    static const TypePlan kListPlan{kList, false, false, nullptr, {}, 0, false, {}};
    static const TypePlan kDictPlan{kDict, false, false, nullptr, {}, 0, false, {}};
    static const TypePlan kSkipPlan{kSkip, false, false, nullptr, {}, 0, false, {}};
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
      plan.lean = plan.kind == kNode && plan.holds_children;
      plan.pointers_only = true;
      for (const FieldSlot& slot : plan.slots) {
        plan.pointers_only = plan.pointers_only && slot.read == FieldRead::kPointer;
        plan.offsets.push_back(slot.offset);
      }
    }
    return &plan;
  }

  /// Goes into a shared object (or the root), or uses its memoized result when it was met
  /// before, as the child of `ordinal` of its parent. The memo holds it to the end of the walk.
  __attribute__((noinline)) void EnterShared(const Object* child, const TypePlan* plan,
                                             const Any* key, uint32_t ordinal) {
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
        changes_.push_back(Change{ordinal, memo_results_[*state]});
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
  __attribute__((noinline)) const Object* ViewedChild(const TypePlan* plan, const Object* obj,
                                                      const FieldSlot& slot, bool* held) {
    const Object* child = ChildOfField(slot.read, plan->info->fields[slot.index], obj, &box_);
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
        if (top_ >= frames_.data() + run_base_) {
          changes_.push_back(Change{top_->walked - 1, std::move(result)});
        } else if (run_base_ == 0) {
          root_result_ = std::move(result);
        } else {
          changes_.push_back(Change{run_ordinal_, std::move(result)});  // for a Lean node
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
        : expected_(frame.walked),
          next_(frame.changes_begin),
          end_(changes->size()),
          changes_(changes) {}
    /// The replacement of the next walked child, or null when it is unchanged; a ValueError
    /// when `fn` changed the object so that it has more walked children than were walked.
    Any* Next() {
      if (ordinal_ >= expected_) ThrowChanged();
      const uint32_t ordinal = ordinal_++;
      if (next_ < end_ && (*changes_)[next_].ordinal == ordinal) {
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
    size_t end_;  // of changes_, which a rebuild does not grow
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
          Any* replacement = IsWalkedCell(*element.raw()) ? pairing.Next() : nullptr;
          if (replacement != nullptr) {
            out.push_back(std::move(*replacement));
          } else {
            out.push_back(element);
          }
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

  /// Moves the object of `*value` (a change, dropped after the rebuild) into the
  /// object-pointer field at `addr` of a fresh copy (no other thread sees it), releasing the
  /// object the field held: the change's reference becomes the field's, without a count.
  static void PutPointer(char* addr, Any* value) {
    const FerryAny cell = std::move(*value).MoveToOwned();
    Object* next = const_cast<Object*>(ObjectOfCell(cell));
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
      Any* replacement = nullptr;
      const Object* child = nullptr;
      FieldRead read = FieldRead::kPlain;
      if (slot < plan.count && plan.slots[slot].index == i) {
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
          PutPointer(reinterpret_cast<char*>(copy.get()) + field.offset, replacement);
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

  /// The access path within the current segment (frames_[run_base_] up) of the frame at `at`,
  /// and of its child the walk is in when `child`: ".body.args[2]". Each frame's step is read
  /// from its parent's cursor, which has just passed it. The bottom frame of a segment is not
  /// a map step (Lean and LeanChild take no map entries).
  std::string SegmentPath(size_t at, bool child) const {
    std::string out;
    size_t key = 0;
    for (size_t i = 0; i <= run_base_; ++i) key += (frames_[i].flags & kMapStep) ? 1 : 0;
    auto step = [&](const Frame& parent, const Frame* frame) {
      const uint32_t cursor = parent.cursor - 1;
      switch (parent.plan->kind) {
        case kLeaf:
        case kSkip:
          break;
        case kNode:
          out += "." + parent.plan->info->fields[parent.plan->slots[cursor].index].name;
          break;
        case kArray:
        case kList:
          out += "[" + std::to_string(cursor) + "]";
          break;
        case kMap:
        case kDict:
          if (frame != nullptr && (frame->flags & kMapStep)) {
            const std::string repr = AnyRepr(keys_[key++].raw());
            out += cursor % 2 == 0 ? ".key(" + repr + ")" : "[" + repr + "]";
          }
          break;
      }
    };
    for (size_t i = run_base_ + 1; i <= at; ++i) step(frames_[i - 1], &frames_[i]);
    if (child) step(frames_[at], nullptr);
    return out;
  }

  /// Throws an error of `kind` saying where the walk was: at the top frame.
  [[noreturn]] __attribute__((noinline)) void Fail(const char* kind, const std::string& message) {
    throw PathError{kind,
                    message,
                    top_->obj->GetTypeKey(),
                    {SegmentPath(static_cast<size_t>(top_ - frames_.data()), false)}};
  }

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
  size_t run_base_ = 0;       // the bottom frame of the current segment of the explicit stack
  uint32_t run_ordinal_ = 0;  // a nested segment's: its bottom object's ordinal in its parent
  Any box_;                   // a child read as an owned copy, until its frame holds it
  CacheEntry cache_[kCacheEntries];
  /// A visit's decision by type index (VisitLevel), below kActCount: kActUnknown until
  /// VisitChild meets the type; kActLeaf (no children), kActLean (a lean node of object
  /// pointers, whose plan is act_plans_[type index]) or kActOther (anything else).
  static constexpr uint32_t kActCount = 1024;
  static constexpr uint8_t kActUnknown = 0, kActLeaf = 1, kActLean = 2, kActOther = 3;
  uint8_t acts_[kTransform ? 1 : kActCount] = {};
  /// On the heap, made when a type is first marked kActLean: the walk lives on its caller's
  /// stack, which the tests bound (DeepGraphsNeedLittleStack).
  std::unique_ptr<const TypePlan*[]> act_plans_;
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
