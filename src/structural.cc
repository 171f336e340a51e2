/// \file structural.cc
/// Structural equality and hashing. Both visit each object once (equality maps every lhs object
/// to one rhs object; hashing memoizes per object), and give SEqualReduce / SHashReduce a
/// reducer that compares or hashes plain fields at once (inline, in structural.h, for ints,
/// enums, floats, bools, DataType and String members) and walks object fields as it meets them:
/// by recursion (HashNode, VisitNow) down to RecursionLimit() levels, and past that by queueing
/// them on explicit stacks (frames, tasks) that a loop drains, so the C++ stack used is bounded
/// whatever the depth. An Array member held by its node alone has its elements walked at once
/// (ReduceArrays, ReduceArray). Nodes without reducers are read by a field plan (FieldPlan).
///
/// Only shared objects enter the memo and mapping tables. An object with a single reference
/// is held by its one parent only, so the walk reaches it by one path and never meets it
/// again (a cycle or a shared sub-graph needs a second reference). On a tree that saves a
/// table insert, and on a large one a cache miss, per node. The exception is a node whose
/// reducer visits the same field twice: that field is then walked twice, with the same result.
/// The root counts as shared: the caller may only borrow it, so a cycle back to it can leave its
/// count at one.
#include <cstdint>      // INT32_MIN: the tags of known children
#include <cstdlib>      // PodStack storage
#include <functional>   // std::hash
#include <memory>       // FieldPlan
#include <mutex>        // FieldPlan
#include <new>          // std::bad_alloc
#include <sstream>      // mismatch paths
#include <type_traits>  // PodStack
#include <unordered_map>

#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"
#include "node_info_cache_internal.h"
#include "pointer_map_internal.h"
#include "structural_internal.h"
#include "tensor_internal.h"

namespace ferry {
namespace details {
namespace {

inline uint64_t HashCombine(uint64_t seed, uint64_t value) { return SHashCombine(seed, value); }

/// What comparing two cells without walking gives.
enum class CellOrder { kUnequal, kEqual, kWalk };

/// Whether a walk looks into the value: objects other than strings. Strings (in any form) and
/// plain values compare and hash by value.
inline bool IsWalked(int32_t type_index) {
  return IsObjectIndex(type_index) && type_index != kFerryString;
}

/// CompareCells for everything but two walked objects and two ints.
__attribute__((noinline)) CellOrder CompareOtherCells(const FerryAny* a, const FerryAny* b) {
  std::string_view ta, tb;
  const bool sa = AnyToStringView(a, &ta), sb = AnyToStringView(b, &tb);
  if (sa || sb) return sa && sb && ta == tb ? CellOrder::kEqual : CellOrder::kUnequal;
  const bool oa = IsObjectIndex(a->type_index), ob = IsObjectIndex(b->type_index);
  if (!oa || !ob) return !oa && !ob && AnyEqual(a, b) ? CellOrder::kEqual : CellOrder::kUnequal;
  return CellOrder::kWalk;
}

inline CellOrder CompareCells(const FerryAny* a, const FerryAny* b) {
  const int32_t ia = a->type_index, ib = b->type_index;
  // Even one object on both sides is walked: a variable inside it may be mapped to another.
  if (FERRY_LIKELY(IsWalked(ia) && IsWalked(ib))) return CellOrder::kWalk;
  if (ia == kFerryInt && ib == kFerryInt) {
    return a->v_int64 == b->v_int64 ? CellOrder::kEqual : CellOrder::kUnequal;
  }
  return CompareOtherCells(a, b);
}

/// Copies a cell field by field. A reducer builds its AnyView on the stack with a store per
/// field, and the walk copies the cell right after: a 16-byte load across those stores cannot
/// be forwarded from the store buffer and waits for them to reach the cache (about a dozen
/// cycles, for each field a reducer queues). Loads of the same width as the stores forward.
inline void CopyCell(FerryAny* dst, const FerryAny* src) {
  dst->type_index = src->type_index;
  dst->small_len = src->small_len;
  dst->v_int64 = src->v_int64;
}

/// A cell holding `obj` (not null) as an object whose type is read from its header when the
/// walk reaches it (ReduceObjects / ReduceObject): the walk looks only at v_obj of such cells.
inline FerryAny UnreadObjectCell(const Object* obj) {
  FerryAny cell;
  cell.type_index = kFerryObject;
  cell.small_len = 0;
  cell.v_obj = ObjectUnsafe::GetHeader(obj);
  return cell;
}
/// The cell AnyView(ref) makes: None for null, else the object with its type index.
/// The content of a BytesObj.
inline std::string_view BytesOf(const Object* obj) {
  const auto* bytes = static_cast<const BytesObj*>(obj);
  return std::string_view(bytes->data, bytes->size);
}

inline FerryAny CellOfObject(const Object* obj) {
  if (obj == nullptr) return NoneCell();
  FerryAny cell;
  cell.type_index = obj->type_index();
  cell.small_len = 0;
  cell.v_obj = ObjectUnsafe::GetHeader(obj);
  return cell;
}
inline const AnyView& AsView(const FerryAny& cell) {
  return *reinterpret_cast<const AnyView*>(&cell);
}

inline const Object* ObjectOf(const FerryAny* v) { return ObjectUnsafe::FromHeader(v->v_obj); }

/// The field's value as a cell: borrowed when its type allows (no reference count traffic),
/// else boxed in `*box`. An object in a boxed value is held by the node too.
inline const FerryAny* FieldCell(const FieldInfo& field, const Object* obj, FerryAny* cell,
                                 Any* box) {
  const char* addr = reinterpret_cast<const char*>(obj) + field.offset;
  if (field.type->view(addr, cell)) return cell;
  *box = field.type->get(addr);
  return box->raw();
}

/// How a walk reads the compared fields of a node without SEqualReduce (compared field by
/// field: `_type_sequal_by_fields`, and every type registered at run time, Python's py_class):
/// each field's offset and kind, found once per type, so that a walk reads a number, a string,
/// an Any or an object pointer without the call through its FieldType (and, for a DataType,
/// without boxing it). Other fields take FieldCell. The cell is the one FieldCell makes.
struct PlannedField {
  enum Kind : uint8_t { kObject, kAny, kInt, kFloat, kBool, kString, kDataType, kOther };
  Kind kind;
  size_t offset;
  const FieldInfo* field;
};
struct FieldPlan {
  std::vector<PlannedField> fields;
};

PlannedField::Kind KindOf(const FieldInfo& field) {
  const FieldType* type = field.type;
  if (type->view == &ViewObjectPointerField) return PlannedField::kObject;
  if (type->view == &ViewField<Any>) return PlannedField::kAny;
  if (type->view == &ViewField<int64_t>) return PlannedField::kInt;
  if (type->view == &ViewField<double>) return PlannedField::kFloat;
  if (type->view == &ViewField<bool>) return PlannedField::kBool;
  if (type->view == &ViewField<String>) return PlannedField::kString;
  if (type == FieldTypeOf<DataType>()) return PlannedField::kDataType;
  return PlannedField::kOther;
}

/// The plan of `info`'s type, made on first use and kept (as NodeInfo records are).
__attribute__((noinline)) const FieldPlan* FieldPlanOf(const NodeInfo* info) {
  static std::mutex mutex;
  static auto* plans = new std::unordered_map<const NodeInfo*, std::unique_ptr<FieldPlan>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<FieldPlan>& plan = (*plans)[info];
  if (plan == nullptr) {
    plan = std::make_unique<FieldPlan>();
    for (const FieldInfo& field : info->fields) {
      if (field.compare) plan->fields.push_back(PlannedField{KindOf(field), field.offset, &field});
    }
  }
  return plan.get();
}

/// FieldPlanOf, remembered for the walk (direct-mapped by NodeInfo address).
class FieldPlanCache {
 public:
  const FieldPlan* Get(const NodeInfo* info) {
    Entry& entry = entries_[(reinterpret_cast<uintptr_t>(info) >> 4) % kEntries];
    if (entry.info != info) entry = Entry{info, FieldPlanOf(info)};
    return entry.plan;
  }

 private:
  static constexpr uintptr_t kEntries = 8;
  struct Entry {
    const NodeInfo* info = nullptr;
    const FieldPlan* plan = nullptr;
  };
  Entry entries_[kEntries];
};

/// The planned field's value in `obj` as a cell, as FieldCell gives it.
__attribute__((always_inline)) inline const FerryAny* PlannedCell(const PlannedField& f,
                                                                  const Object* obj, FerryAny* cell,
                                                                  Any* box) {
  const char* addr = reinterpret_cast<const char*>(obj) + f.offset;
  switch (f.kind) {
    case PlannedField::kObject:
      *cell = CellOfObject(reinterpret_cast<const ObjectRef*>(addr)->get());
      return cell;
    case PlannedField::kAny:
      return reinterpret_cast<const Any*>(addr)->raw();
    case PlannedField::kInt:
      TypeTraitsOf<int64_t>::CopyToAnyView(*reinterpret_cast<const int64_t*>(addr), cell);
      return cell;
    case PlannedField::kFloat:
      TypeTraitsOf<double>::CopyToAnyView(*reinterpret_cast<const double*>(addr), cell);
      return cell;
    case PlannedField::kBool:
      TypeTraitsOf<bool>::CopyToAnyView(*reinterpret_cast<const bool*>(addr), cell);
      return cell;
    case PlannedField::kString:
      return &reinterpret_cast<const String*>(addr)->cell();
    case PlannedField::kDataType:
      *cell = *AnyView(*reinterpret_cast<const DataType*>(addr)).raw();
      return cell;
    case PlannedField::kOther:
      break;
  }
  return FieldCell(*f.field, obj, cell, box);
}

/// A stack of trivially copyable entries: push, pop, truncate and index without the checks and
/// the element-wise resize of std::vector (the walks do one of each per object).
template <typename T>
class PodStack {
 public:
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  PodStack() = default;
  PodStack(const PodStack&) = delete;
  PodStack& operator=(const PodStack&) = delete;
  ~PodStack() { std::free(data_); }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  void push_back(const T& value) { push_uninitialized() = value; }
  /// A new entry at the top, for the caller to fill in.
  T& push_uninitialized() {
    if (FERRY_UNLIKELY(size_ == capacity_)) Grow();
    return data_[size_++];
  }
  void pop_back() { --size_; }
  void truncate(size_t size) { size_ = size; }

 private:
  void Grow() {
    const size_t capacity = capacity_ == 0 ? 64 : capacity_ * 2;
    T* data = static_cast<T*>(std::realloc(static_cast<void*>(data_), capacity * sizeof(T)));
    if (data == nullptr) throw std::bad_alloc();
    data_ = data;
    capacity_ = capacity;
  }
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

/// How deep the walks recurse before they go on their explicit stacks: a level takes about
/// 150 bytes of the C++ stack in a -O2 build (a reducer and HashNode or VisitNow:
/// TheRecursionUsesABoundedStack prints it), so the default needs some 40 KiB, well within the
/// smallest thread stacks in use (Java's callbacks keep 160 KiB).
constexpr int kRecursionLimit = 256;
thread_local int recursion_limit = kRecursionLimit;  // SetStructuralRecursionLimit
int RecursionLimit() { return recursion_limit; }

const FieldInfo* FieldAt(const NodeInfo* info, size_t offset) {
  if (info == nullptr) return nullptr;
  for (const FieldInfo& field : info->fields) {
    if (field.offset == offset) return &field;
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Equality

class SEqualHandler {
 public:
  SEqualHandler(bool map_free_vars, bool trace) : map_free_vars_(map_free_vars), trace_(trace) {}

  bool Run(const AnyView& lhs, const AnyView& rhs) {
    if (trace_) paths_.push_back(PathStep{-1, PathStep::kRoot, 0, nullptr, nullptr});
    Task root{*lhs.raw(), *rhs.raw(), false, trace_ ? 0 : -1};
    if (IsObjectIndex(root.lhs.type_index)) lhs_root_ = ObjectOf(&root.lhs);
    if (IsObjectIndex(root.rhs.type_index)) rhs_root_ = ObjectOf(&root.rhs);
    switch (CompareCells(&root.lhs, &root.rhs)) {
      case CellOrder::kEqual:
        return true;
      case CellOrder::kUnequal:
        return Fail(root.path);
      case CellOrder::kWalk:
        stack_.push_back(root);
    }
    return Drain(0, 0);
  }

  /// The path of the first difference, after Run returned false.
  std::string MismatchPath() const {
    std::vector<std::string> parts;
    for (int32_t i = failed_path_; i >= 0; i = paths_[i].parent) parts.push_back(Describe(i));
    std::string out;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += *it;
    return out;
  }

  bool Reduce(const AnyView& lhs, const AnyView& rhs, const void* lhs_addr, bool define) {
    const CellOrder order = CompareCells(lhs.raw(), rhs.raw());
    if (order == CellOrder::kEqual) return true;
    if (order == CellOrder::kWalk && Recursing()) {
      return VisitNow(ObjectOf(lhs.raw()), ObjectOf(rhs.raw()), define);
    }
    // The common case inline: two objects in members of the node, no path kept.
    if (FERRY_LIKELY(order == CellOrder::kWalk && !trace_ && lhs_addr >= node_begin_ &&
                     lhs_addr < node_end_)) {
      Task& task = stack_.push_uninitialized();
      CopyCell(&task.lhs, lhs.raw());
      CopyCell(&task.rhs, rhs.raw());
      task.define = define;
      task.path = -1;
      return true;
    }
    return ReduceSlow(order, lhs, rhs, lhs_addr, define);
  }

  bool ReduceObjects(const Object* lhs, const Object* rhs, const void* lhs_addr, bool define) {
    if (FERRY_LIKELY(lhs != nullptr && rhs != nullptr && Recursing())) {
      return VisitNow(lhs, rhs, define);
    }
    if (FERRY_LIKELY(lhs != nullptr && rhs != nullptr && !trace_ && lhs_addr >= node_begin_ &&
                     lhs_addr < node_end_)) {
      Task& task = stack_.push_uninitialized();
      task.lhs = UnreadObjectCell(lhs);
      task.rhs = UnreadObjectCell(rhs);
      task.define = define;
      task.path = -1;
      return true;
    }
    const FerryAny l = CellOfObject(lhs), r = CellOfObject(rhs);
    return Reduce(AsView(l), AsView(r), lhs_addr, define);
  }

  /// Two Array members: their elements are queued now, as VisitBuiltins would queue them when
  /// the walk reached the arrays (both arrays have one reference, so neither would enter the
  /// tables). Shared arrays, temporaries and traced walks take ReduceObjects.
  __attribute__((always_inline)) bool ReduceArrays(const Object* lhs, const Object* rhs,
                                                   const void* lhs_addr, bool define) {
    const auto* la = static_cast<const ArrayObj*>(lhs);
    const auto* ra = static_cast<const ArrayObj*>(rhs);
    if (FERRY_UNLIKELY(la == nullptr || ra == nullptr || trace_ ||
                       (!Recursing() && (lhs_addr < node_begin_ || lhs_addr >= node_end_)))) {
      return ReduceObjects(lhs, rhs, lhs_addr, define);
    }
    const int64_t size = la->size();
    if (size != ra->size()) return false;
    if (size == 0) return true;  // empty arrays are equal, shared or not (VisitObjects)
    if (FERRY_UNLIKELY(!la->unique() || !ra->unique() || la == lhs_root_ || ra == rhs_root_)) {
      return ReduceObjects(lhs, rhs, lhs_addr, define);
    }
    if (FERRY_LIKELY(Recursing())) {
      const Any* l = la->begin();
      const Any* r = ra->begin();
      for (int64_t i = 0; i < size; ++i) {
        switch (CompareCells(l[i].raw(), r[i].raw())) {
          case CellOrder::kEqual:
            break;
          case CellOrder::kUnequal:
            return false;
          case CellOrder::kWalk:
            if (!VisitNow(ObjectOf(l[i].raw()), ObjectOf(r[i].raw()), define)) return false;
        }
      }
      return true;
    }
    return QueueElements(la, ra, size, define);
  }

  /// ReduceArrays past the limit, for two unshared arrays of `size` > 0 elements: compares them
  /// or queues their objects.
  __attribute__((noinline)) bool QueueElements(const ArrayObj* la, const ArrayObj* ra, int64_t size,
                                               bool define) {
    const Any* l = la->begin();
    const Any* r = ra->begin();
    for (int64_t i = 0; i < size; ++i) {
      switch (CompareCells(l[i].raw(), r[i].raw())) {
        case CellOrder::kEqual:
          break;
        case CellOrder::kUnequal:
          return false;
        case CellOrder::kWalk: {
          Task& task = stack_.push_uninitialized();
          CopyCell(&task.lhs, l[i].raw());
          CopyCell(&task.rhs, r[i].raw());
          task.define = define;
          task.path = -1;
        }
      }
    }
    return true;
  }

  bool FreeVarEqual(const Object* lhs, const Object* rhs) const {
    return lhs == rhs || current_define_ || map_free_vars_;
  }
  bool map_free_vars() const { return map_free_vars_; }

 private:
  struct Task {
    FerryAny lhs, rhs;
    bool define;
    int32_t path;
  };

  /// Compares the pairs on the stack above `base`, the last queued first, at `depth` levels of
  /// recursion.
  bool Drain(size_t base, int depth) {
    while (stack_.size() > base) {
      Task task;
      CopyTask(&task, stack_.back());
      stack_.pop_back();
      if (!VisitObjects(task, depth)) return false;
    }
    return true;
  }

  /// Whether the running reducer's objects are compared as it meets them (VisitNow), by
  /// recursion: below depth_limit_ and when no mismatch path is kept. Past the limit, and for
  /// StructuralMismatch, they go on the stack for the enclosing Drain, in field order. The
  /// pairs are visited in the same order either way (a pair, all it holds, then the next
  /// pair: a definition site before the uses after it), so the result is the same; only a
  /// reducer's plain fields are compared before its objects on the stack and between them by
  /// recursion, so the first mismatch may be another, and StructuralMismatch, which names it,
  /// keeps to the stack.
  bool Recursing() const { return depth_ < depth_limit_; }

  /// Compares two objects met by a recursing reducer now; the reducer resumes after. Two
  /// unshared registered nodes with reducers (the common case) go straight to the reducer.
  bool VisitNow(const Object* lo, const Object* ro, bool define) {
    const NodeInfo* info;
    if (FERRY_LIKELY(lo->type_index() >= kFerryDynamicObjectBegin &&
                     lo->type_index() == ro->type_index() && lo->unique() && ro->unique() &&
                     lo != lhs_root_ && ro != rhs_root_ && depth_ + 1 < depth_limit_ &&
                     (info = infos_.Get(lo)) != nullptr && info->sequal_reduce != nullptr)) {
      const bool outer_define = current_define_;
      current_define_ = define;
      ++depth_;
      node_begin_ = lo;
      node_end_ = reinterpret_cast<const char*>(lo) + info->object_size;
      const bool equal = info->sequal_reduce(lo, ro, SEqualReducer(this));
      current_define_ = outer_define;
      --depth_;
      return equal;
    }
    return VisitOther(lo, ro, define);
  }

  /// VisitNow for other pairs: shared objects, built-in types, nodes without SEqualReduce,
  /// and nodes at the limit.
  __attribute__((noinline)) bool VisitOther(const Object* lo, const Object* ro, bool define) {
    const bool outer_define = current_define_;
    const int outer_depth = depth_;
    const size_t mark = stack_.size();
    Task task;
    task.lhs = UnreadObjectCell(lo);
    task.rhs = UnreadObjectCell(ro);
    task.define = define;
    task.path = -1;
    bool equal = VisitObjects(task, outer_depth + 1);
    // What the pair queued (past the limit; an array's or a map's items) is compared before
    // the reducer goes on: a definition site before the uses after it.
    if (FERRY_UNLIKELY(stack_.size() != mark) && equal) equal = Drain(mark, outer_depth + 1);
    current_define_ = outer_define;
    depth_ = outer_depth;
    return equal;
  }

  /// Field by field, as CopyCell (a task is written so, and read back soon after).
  static void CopyTask(Task* dst, const Task& src) {
    CopyCell(&dst->lhs, &src.lhs);
    CopyCell(&dst->rhs, &src.rhs);
    dst->define = src.define;
    dst->path = src.path;
  }
  struct PathStep {
    enum Kind { kRoot, kField, kIndex, kMapKey, kUnknown };
    int32_t parent;
    Kind kind;
    size_t offset_or_index;
    const Object* owner;  // for kField: the lhs object whose field this is
    const FerryAny* key;  // for kMapKey
  };

  int32_t AddPath(int32_t parent, PathStep::Kind kind, size_t value, const Object* owner,
                  const FerryAny* key = nullptr) {
    if (!trace_) return -1;
    paths_.push_back(PathStep{parent, kind, value, owner, key});
    return static_cast<int32_t>(paths_.size()) - 1;
  }

  bool Fail(int32_t path) {
    failed_path_ = path;
    return false;
  }

  std::string Describe(int32_t i) const {
    const PathStep& step = paths_[i];
    switch (step.kind) {
      case PathStep::kRoot:
        return "root";
      case PathStep::kIndex:
        return "[" + std::to_string(step.offset_or_index) + "]";
      case PathStep::kMapKey:
        return "[" + AnyRepr(step.key) + "]";
      case PathStep::kField:
        // A List or Dict is its one field `data` (an Array or Map): its items read `[0]`, as an
        // Array's do, not `.data[0]`.
        if (step.owner->type_index() == kFerryList || step.owner->type_index() == kFerryDict) {
          return "";
        }
        if (const FieldInfo* f = FieldAt(GetNodeInfo(step.owner), step.offset_or_index)) {
          return "." + f->name;
        }
        [[fallthrough]];
      default:
        return ".<?>";
    }
  }

  __attribute__((noinline)) bool ReduceSlow(CellOrder order, const AnyView& lhs, const AnyView& rhs,
                                            const void* lhs_addr, bool define) {
    const bool member = lhs_addr >= node_begin_ && lhs_addr < node_end_;
    const int32_t path =
        trace_ ? AddPath(current_path_, member ? PathStep::kField : PathStep::kUnknown,
                         static_cast<size_t>(static_cast<const char*>(lhs_addr) -
                                             reinterpret_cast<const char*>(current_lhs_)),
                         current_lhs_)
               : -1;
    if (order == CellOrder::kUnequal) return Fail(path);
    if (!member) {
      // Maybe a temporary: keep its objects alive until the walk reaches them.
      keep_alive_.emplace_back(lhs);
      keep_alive_.emplace_back(rhs);
    }
    stack_.push_back(Task{*lhs.raw(), *rhs.raw(), define, path});
    return true;
  }

  /// Children are pushed in field order; reversing them makes the first one run next, so
  /// the first mismatch found is the first in field order.
  void QueuedFrom(size_t mark) {
    for (size_t i = mark, j = stack_.size(); i + 1 < j; ++i, --j) {
      Task t;
      CopyTask(&t, stack_[i]);
      CopyTask(&stack_[i], stack_[j - 1]);
      CopyTask(&stack_[j - 1], t);
    }
  }

  static bool IsEmptyValue(const Object* obj) {
    switch (obj->type_index()) {
      case kFerryArray:
        return static_cast<const ArrayObj*>(obj)->size() == 0;
      case kFerryMap:
        return static_cast<const MapObj*>(obj)->size() == 0;
      default:
        return false;
    }
  }

  /// Maps a shared lhs object to its rhs object: kEqual when the two were met (and mapped to
  /// each other) before, kUnequal when either was mapped to another, kWalk when new.
  __attribute__((noinline)) CellOrder MapShared(const Object* lo, const Object* ro) {
    auto [lmapped, lnew] = lhs_to_rhs_.Insert(lo, ro);
    if (!lnew) return *lmapped == ro ? CellOrder::kEqual : CellOrder::kUnequal;
    auto [rmapped, rnew] = rhs_to_lhs_.Insert(ro, lo);
    if (!rnew) return *rmapped == lo ? CellOrder::kEqual : CellOrder::kUnequal;
    return CellOrder::kWalk;
  }

  /// The MapShared step of VisitObjects and VisitStatic for a pair of which either object may
  /// be shared: true when the pair is done (met before, or either mapped to another object),
  /// with the comparison's result in `*result`; false to walk it.
  __attribute__((always_inline)) bool DoneAsShared(const Task& task, const Object* lo,
                                                   const Object* ro, bool* result) {
    switch (MapShared(lo, ro)) {
      case CellOrder::kEqual:
        *result = true;
        return true;
      case CellOrder::kUnequal:
        *result = Fail(task.path);
        return true;
      case CellOrder::kWalk:
        break;
    }
    return false;
  }

  /// Compares the objects of `task`, at `depth` levels of recursion.
  __attribute__((always_inline)) bool VisitObjects(const Task& task, int depth) {
    const Object* lo = ObjectOf(&task.lhs);
    const Object* ro = ObjectOf(&task.rhs);
    const int32_t type_index = lo->type_index();
    const int32_t rhs_type_index = ro->type_index();
    // Registered nodes (the common case) have dynamic indices: no strings, arrays, maps,
    // tensors or shapes among them.
    if (FERRY_LIKELY(type_index >= kFerryDynamicObjectBegin &&
                     rhs_type_index >= kFerryDynamicObjectBegin)) {
      bool result;
      if (FERRY_UNLIKELY(!lo->unique() || !ro->unique() || lo == lhs_root_ || ro == rhs_root_) &&
          DoneAsShared(task, lo, ro, &result)) {
        return result;
      }
      if (type_index != rhs_type_index) return Fail(task.path);
      const size_t mark = stack_.size();
      const NodeInfo* info = infos_.Get(lo);
      return VisitNode(task, lo, ro, info, mark, depth);
    }
    return VisitStatic(task, lo, ro, depth);
  }

  /// VisitObjects when either object has a built-in type (a string, an array...).
  __attribute__((noinline)) bool VisitStatic(const Task& task, const Object* lo, const Object* ro,
                                             int depth) {
    const int32_t type_index = lo->type_index();
    // A String from an object field of a reducer (ReduceObjects): by content, and never in the
    // tables below, as a string that came in a cell.
    if (FERRY_UNLIKELY(type_index == kFerryString || ro->type_index() == kFerryString)) {
      const FerryAny l = CellOfObject(lo), r = CellOfObject(ro);
      return CompareCells(&l, &r) == CellOrder::kEqual ? true : Fail(task.path);
    }
    // Bytes are values too: by content, never in the tables below (as strings).
    if (FERRY_UNLIKELY(type_index == kFerryBytes || ro->type_index() == kFerryBytes)) {
      return BytesOf(lo) == BytesOf(ro) && type_index == ro->type_index() ? true : Fail(task.path);
    }
    // Each object maps to one object of the other side for the whole comparison. Objects
    // with one reference each are met only here (see the top of the file): no entry needed.
    if (FERRY_UNLIKELY(!lo->unique() || !ro->unique() || lo == lhs_root_ || ro == rhs_root_)) {
      // An empty Array or Map holds nothing that could differ, and every default-constructed
      // one is the same shared object: mapping it would tie unrelated fields together (two
      // empty lists' data against two separately made empty arrays would compare unequal).
      if (FERRY_UNLIKELY(IsEmptyValue(lo) && IsEmptyValue(ro))) {
        return type_index == ro->type_index() ? true : Fail(task.path);
      }
      bool result;
      if (DoneAsShared(task, lo, ro, &result)) return result;
    }
    if (type_index != ro->type_index()) return Fail(task.path);
    if (FERRY_UNLIKELY(type_index == kFerryArray || type_index == kFerryMap ||
                       type_index == kFerryTensor || type_index == kFerryShape)) {
      return VisitBuiltins(task, lo, ro);
    }
    const size_t mark = stack_.size();
    const NodeInfo* info = infos_.Get(lo);
    return VisitNode(task, lo, ro, info, mark, depth);
  }

  /// VisitObjects for arrays, maps, tensors and shapes.
  __attribute__((noinline)) bool VisitBuiltins(const Task& task, const Object* lo,
                                               const Object* ro) {
    const size_t mark = stack_.size();
    switch (lo->type_index()) {
      case kFerryArray: {
        const auto* la = static_cast<const ArrayObj*>(lo);
        const auto* ra = static_cast<const ArrayObj*>(ro);
        if (la->size() != ra->size()) return Fail(task.path);
        for (int64_t i = 0; i < la->size(); ++i) {
          if (!QueueCells(la->at(i).raw(), ra->at(i).raw(), task.define,
                          AddPath(task.path, PathStep::kIndex, static_cast<size_t>(i), lo))) {
            return false;
          }
        }
        QueuedFrom(mark);
        return true;
      }
      case kFerryMap:
        return VisitMaps(task, static_cast<const MapObj*>(lo), static_cast<const MapObj*>(ro));
      case kFerryTensor:
        return details::TensorContentEqual(static_cast<const TensorObj*>(lo),
                                           static_cast<const TensorObj*>(ro))
                   ? true
                   : Fail(task.path);
      case kFerryShape: {
        Shape ls = GetRef<Shape>(static_cast<const ShapeObj*>(lo));
        Shape rs = GetRef<Shape>(static_cast<const ShapeObj*>(ro));
        return ls == rs ? true : Fail(task.path);
      }
      default:
        return true;
    }
  }

  /// VisitObjects, continued for registered nodes.
  bool VisitNode(const Task& task, const Object* lo, const Object* ro, const NodeInfo* info,
                 size_t mark, int depth) {
    if (FERRY_UNLIKELY(info == nullptr || info->sequal_reduce == nullptr)) {
      return VisitFields(task, lo, ro, info, mark, depth);
    }
    node_begin_ = lo;
    node_end_ = reinterpret_cast<const char*>(lo) + info->object_size;
    current_lhs_ = lo;
    current_path_ = task.path;
    current_define_ = task.define;
    depth_ = depth;
    const bool equal = info->sequal_reduce(lo, ro, SEqualReducer(this));
    if (!equal) {
      if (failed_path_ < 0) failed_path_ = task.path;
      return false;
    }
    QueuedFrom(mark);
    return true;
  }

  /// VisitNode for a node without SEqualReduce: its compared fields, or its identity.
  /// Below the limit (and without a path to keep) the fields' objects are compared at once, as
  /// a reducer's are; else queued.
  __attribute__((noinline)) bool VisitFields(const Task& task, const Object* lo, const Object* ro,
                                             const NodeInfo* info, size_t mark, int depth) {
    if (info == nullptr) return lo == ro ? true : Fail(task.path);  // unregistered: identity
    if (!info->sequal_by_fields) return lo == ro ? true : Fail(task.path);
    const FieldPlan* plan = plans_.Get(info);
    const bool recursing = depth < depth_limit_;
    if (recursing) {
      depth_ = depth;
      current_define_ = false;
    }
    for (const PlannedField& field : plan->fields) {
      FerryAny lcell, rcell;
      Any lbox, rbox;
      const FerryAny* l = PlannedCell(field, lo, &lcell, &lbox);
      const FerryAny* r = PlannedCell(field, ro, &rcell, &rbox);
      if (recursing) {
        switch (CompareCells(l, r)) {
          case CellOrder::kEqual:
            continue;
          case CellOrder::kUnequal:
            return false;
          case CellOrder::kWalk: {
            const Object* lo_field = ObjectOf(l);
            const Object* ro_field = ObjectOf(r);
            const bool equal =
                lo_field->type_index() == kFerryArray && ro_field->type_index() == kFerryArray
                    ? ReduceArrays(lo_field, ro_field, nullptr, false)
                    : VisitNow(lo_field, ro_field, false);
            if (!equal) return false;
            continue;
          }
        }
      }
      if (!QueueCells(l, r, false, AddPath(task.path, PathStep::kField, field.offset, lo))) {
        return false;
      }
    }
    QueuedFrom(mark);
    return true;
  }

  bool VisitMaps(const Task& task, const MapObj* lm, const MapObj* rm) {
    if (lm->size() != rm->size()) return Fail(task.path);
    const size_t mark = stack_.size();
    for (const MapObj::Entry* e = lm->entries_begin(); e != lm->entries_end(); ++e) {
      if (MapObj::IsErased(*e)) continue;
      // Keys that are objects match their counterpart from earlier in the walk (or themselves).
      AnyView key = e->key;
      if (IsObjectIndex(e->key.type_index()) && e->key.type_index() != kFerryString) {
        if (const Object* const* mapped = lhs_to_rhs_.Find(ObjectOf(e->key.raw()))) {
          FerryAny cell = *e->key.raw();
          cell.type_index = (*mapped)->type_index();
          cell.v_obj = ObjectUnsafe::GetHeader(*mapped);
          key = *reinterpret_cast<const AnyView*>(&cell);
        }
      }
      const int32_t path = AddPath(task.path, PathStep::kMapKey, 0, lm, e->key.raw());
      const Any* rv = rm->Find(key);
      if (rv == nullptr) return Fail(path);
      if (!QueueCells(e->value.raw(), rv->raw(), task.define, path)) return false;
    }
    QueuedFrom(mark);
    return true;
  }

  /// Compares two cells now, or queues them on the stack when both are objects.
  bool QueueCells(const FerryAny* a, const FerryAny* b, bool define, int32_t path) {
    switch (CompareCells(a, b)) {
      case CellOrder::kEqual:
        return true;
      case CellOrder::kUnequal:
        return Fail(path);
      case CellOrder::kWalk:
        stack_.push_back(Task{*a, *b, define, path});
    }
    return true;
  }

  const bool map_free_vars_;
  const bool trace_;
  PodStack<Task> stack_;
  std::vector<Any> keep_alive_;
  std::vector<PathStep> paths_;
  int32_t failed_path_ = -1;
  PointerMap<const Object*> lhs_to_rhs_;
  PointerMap<const Object*> rhs_to_lhs_;
  const Object* lhs_root_ = nullptr;
  const Object* rhs_root_ = nullptr;
  NodeInfoCache infos_;
  FieldPlanCache plans_;
  const int depth_limit_ = trace_ ? 0 : RecursionLimit();  // Recursing()
  // The node whose SEqualReduce is running, and where its members lie, and its depth.
  const Object* current_lhs_ = nullptr;
  int depth_ = 0;
  const void* node_begin_ = nullptr;
  const void* node_end_ = nullptr;
  int32_t current_path_ = -1;
  bool current_define_ = false;
};

// ---------------------------------------------------------------------------------------------
// Hashing

class SHashHandler {
 public:
  explicit SHashHandler(bool map_free_vars) : map_free_vars_(map_free_vars) {}

  uint64_t Run(const AnyView& value) {
    empty_array_hash_ = EmptyArrayHash();
    if (Immediate(value.raw(), &result_)) return result_;
    root_ = ObjectOf(value.raw());
    Enter(ObjectOf(value.raw()), false, kRootSlot, 0);
    Drain(0, 0);  // a frame is left open when the limit is 0
    return result_;
  }

  /// `addr` is where the value lives, or nullptr when unknown.
  void Reduce(SHashState* st, const AnyView& value, const void* addr, bool define) {
    const FerryAny* cell = value.raw();
    if (!IsWalked(cell->type_index)) {
      st->acc = HashCombine(st->acc, PlainHash(cell));
      return;
    }
    if (st->recursing) {
      st->kids = HashCombine(st->kids, HashCell(cell, define, st->depth + 1));
      return;
    }
    // An object is looked at when the walk reaches it (Immediate, then Enter), not here: one
    // visit instead of two, and no early load of its header.
    if (FERRY_UNLIKELY(addr == nullptr || addr < node_begin_ || addr >= node_end_)) {
      KeepAlive(value);
    }
    AddChild(cell, define);
  }
  void ReduceObject(SHashState* st, const Object* value, const void* addr, bool define) {
    if (FERRY_UNLIKELY(value == nullptr)) {
      st->acc = HashCombine(st->acc, kSHashNone);
      return;
    }
    if (FERRY_LIKELY(st->recursing)) {
      st->kids = HashCombine(st->kids, HashObject(value, define, st->depth + 1));
      return;
    }
    if (FERRY_UNLIKELY(addr == nullptr || addr < node_begin_ || addr >= node_end_)) {
      const FerryAny cell = CellOfObject(value);
      KeepAlive(AsView(cell));
    }
    Child& child = children_.push_uninitialized();
    child.cell = UnreadObjectCell(value);
    child.define = define;
  }

  void FreeVarHash(SHashState* st, const Object* var) {
    const uint64_t hash = st->define || map_free_vars_ ? Mix(free_var_counter_++)
                                                       : Mix(reinterpret_cast<uint64_t>(var));
    st->acc = HashCombine(st->acc, hash);
  }
  bool map_free_vars() const { return map_free_vars_; }

 private:
  /// A value waiting for the walk; `hash` is its hash once known.
  struct Child {
    FerryAny cell;
    uint64_t hash;
    bool define;
  };
  /// An object whose children are being walked.
  struct Frame {
    const Object* obj;
    uint64_t acc;               // its own part of the hash, before the children's
    size_t begin, end, next;    // its children: children_[begin, end)
    size_t slot;                // where the hash goes: an index into children_, kRootSlot...
    bool commutative;           // a map: entries in any order hash alike
    bool memo;                  // shared: has an entry in memo_
    bool grouped = false;       // has arrays' elements (ReduceArray): see FoldGrouped
    bool node = false;          // a node (NodeHash), not an array or a map
    uint64_t var_base = 0;      // a map: free_var_counter_ at each entry's start
    uint64_t vars_defined = 0;  // a map: the variables its finished entries numbered
  };
  struct Memo {
    uint64_t hash;
    bool done;  // false while the object's frame is open
  };
  static constexpr size_t kRootSlot = static_cast<size_t>(-1);
  static constexpr size_t kReturnSlot = static_cast<size_t>(-2);  // ret_: for HashNow
  uint64_t& Slot(size_t slot) {
    if (FERRY_UNLIKELY(slot >= kReturnSlot)) return slot == kRootSlot ? result_ : ret_;
    return children_[slot].hash;
  }

  /// The hash of a node: its own part (its plain fields, mixed in as its reducer met them)
  /// and the fold of its children's hashes (in the order the reducer met them), however the
  /// children were walked.
  static uint64_t NodeHash(uint64_t own, uint64_t kids) {
    return kids == 0 ? own : HashCombine(own, kids);
  }

  /// Holds a value that may be a temporary of the reducer until the walk reaches it.
  __attribute__((noinline)) void KeepAlive(const AnyView& value) {
    keep_alive_.emplace_back(value);
  }

  /// AnyHash, with the most common case (an int) without the call.
  static uint64_t PlainHash(const FerryAny* v) {
    if (v->type_index == kFerryInt) return SHashInt(v->v_int64);
    return AnyHash(v);
  }

  /// Walks the open frames above `base` until all are finished, entering their children at
  /// `depth`: what Enter leaves open past depth_limit_, and arrays and maps.
  __attribute__((noinline)) void Drain(size_t base, int depth) {
    while (frames_.size() > base) {
      Frame& frame = frames_.back();
      if (frame.commutative && (frame.next - frame.begin) % 2 == 0) NextMapEntry(&frame);
      if (frame.next < frame.end) {
        const size_t i = frame.next++;
        Child& child = children_[i];
        if (!Immediate(&child.cell, &child.hash)) {
          Enter(ObjectOf(&child.cell), child.define, i, depth);
        }
        continue;
      }
      uint64_t hash;
      if (frame.node) {
        hash = NodeHash(frame.acc, frame.grouped ? FoldGrouped(frame.begin, frame.end)
                                                 : Fold(0, frame.begin, frame.end));
      } else {
        hash = Finish(frame);
      }
      const size_t slot = frame.slot;
      if (frame.memo) *memo_.Find(frame.obj) = Memo{hash, true};
      children_.truncate(frame.begin);
      frames_.pop_back();
      Slot(slot) = hash;
    }
  }

  /// Between the entries of a map (and after the last): each entry numbers the variables it
  /// defines from the same start, so the hash does not depend on the order of the entries, as
  /// equality does not. After the map the numbering goes on past all of them.
  void NextMapEntry(Frame* frame) {
    if (frame->next != frame->begin) {
      frame->vars_defined += free_var_counter_ - frame->var_base;
      free_var_counter_ = frame->var_base;
    }
    if (frame->next == frame->end) free_var_counter_ = frame->var_base + frame->vars_defined;
  }

  static uint64_t Mix(uint64_t x) { return SHashMix(x); }
  static uint64_t KeyHash(const char* key) { return std::hash<std::string_view>()(key); }

  bool MaybeShared(const Object* obj) const { return !obj->unique() || obj == root_; }

  /// Hashes values that need no walk: plain values, strings, shapes, visited objects.
  __attribute__((always_inline)) bool Immediate(const FerryAny* v, uint64_t* out) {
    const int32_t type_index = v->type_index;
    if (!IsWalked(type_index)) {
      if (FERRY_LIKELY(type_index > kKnownTag)) *out = PlainHash(v);  // else hashed already
      return true;
    }
    return ImmediateObject(ObjectOf(v), out);
  }
  __attribute__((always_inline)) bool ImmediateObject(const Object* obj, uint64_t* out) {
    if (FERRY_UNLIKELY(MaybeShared(obj))) {  // only shared objects are memoized (file top)
      const Memo* memo = memo_.Find(obj);
      if (memo != nullptr && memo->done) {
        *out = memo->hash;
        return true;
      }
    }
    // A cell's index may be kFerryObject (ReduceObject): the header has the type.
    const int32_t object_index = obj->type_index();
    if (FERRY_UNLIKELY(object_index == kFerryTensor || object_index == kFerryShape ||
                       object_index == kFerryString || object_index == kFerryBytes)) {
      *out = ContentHash(obj);
      return true;
    }
    return false;
  }
  /// HashObject for a walked cell (an Any, a field read through its FieldType): an unshared
  /// Array's elements hashed at once, as ReduceArray does.
  __attribute__((noinline)) uint64_t HashCell(const FerryAny* cell, bool define, int depth) {
    const Object* obj = ObjectOf(cell);
    if (obj->type_index() == kFerryArray && obj->unique() && obj != root_ && depth < depth_limit_) {
      return HashElements(static_cast<const ArrayObj*>(obj), define, depth);
    }
    return HashObject(obj, define, depth);
  }

  /// The hash of an object (not null) met by a recursing reducer at `depth`: a registered
  /// node's, unshared, at once (HashNode); others through Immediate and HashNow.
  __attribute__((always_inline)) uint64_t HashObject(const Object* obj, bool define, int depth) {
    if (FERRY_LIKELY(obj->type_index() >= kFerryDynamicObjectBegin && obj->unique() &&
                     obj != root_ && depth < depth_limit_)) {
      return HashNode(obj, define, depth, false);
    }
    uint64_t hash;
    if (ImmediateObject(obj, &hash)) return hash;
    return HashNow(obj, define, depth);
  }

  /// Strings, bytes, tensors and shapes hash by content, without a frame.
  __attribute__((noinline)) static uint64_t ContentHash(const Object* obj) {
    if (obj->type_index() == kFerryString) {  // as AnyHash hashes a string
      const FerryAny cell = CellOfObject(obj);
      return AnyHash(&cell);
    }
    if (obj->type_index() == kFerryBytes) {
      return HashCombine(KeyHash(BytesObj::_type_key), std::hash<std::string_view>()(BytesOf(obj)));
    }
    if (obj->type_index() == kFerryTensor) {
      return HashCombine(KeyHash(TensorObj::_type_key),
                         details::TensorContentHash(static_cast<const TensorObj*>(obj)));
    }
    const auto* shape = static_cast<const ShapeObj*>(obj);
    uint64_t h = KeyHash(ShapeObj::_type_key);
    for (uint64_t i = 0; i < shape->size; ++i) {
      h = HashCombine(h, Mix(static_cast<uint64_t>(shape->data[i])));
    }
    return h;
  }

  /// Puts the hash of `obj` (an object Immediate() could not hash) in Slot(slot): at once below
  /// depth_limit_ (HashNow), else through a frame that the enclosing Drain finishes.
  void Enter(const Object* obj, bool define, size_t slot, int depth) {
    if (FERRY_LIKELY(depth < depth_limit_)) {
      const uint64_t hash = HashNow(obj, define, depth);
      Slot(slot) = hash;
      return;
    }
    EnterQueued(obj, define, slot, depth);
  }

  /// The hash of `obj` (an object Immediate() could not hash), now. Below depth_limit_ a
  /// node's reducer runs with its children hashed as it meets them (by recursion: this, one
  /// level deeper); an array, a map, or a node past the limit is walked by frames drained here.
  /// The reducer that met `obj`, if any, resumes after with its state as it was.
  __attribute__((noinline)) uint64_t HashNow(const Object* obj, bool define, int depth) {
    const int32_t type_index = obj->type_index();
    if (FERRY_LIKELY(depth < depth_limit_ && type_index != kFerryArray &&
                     type_index != kFerryMap)) {
      return HashNode(obj, define, depth, MaybeShared(obj));
    }
    const size_t open = frames_.size();
    EnterQueued(obj, define, kReturnSlot, depth);
    Drain(open, depth + 1);
    return ret_;
  }

  /// HashNow for a node below the limit. Each node's reducer has a state of its own (on this
  /// stack), so the reducer that met `obj` resumes with its own.
  uint64_t HashNode(const Object* obj, bool define, int depth, bool memo) {
    const NodeInfo* info = infos_.Get(obj);
    if (FERRY_UNLIKELY(memo || info == nullptr || info->shash_reduce == nullptr)) {
      return HashOtherNode(obj, define, depth, memo, info);
    }
    SHashState st;
    st.acc = info->type_key_hash;  // == KeyHash(type_key), computed at registration
    st.kids = 0;
    st.handler = this;
    st.empty_array_hash = empty_array_hash_;
    st.depth = depth;
    st.define = define;
    st.recursing = true;
    info->shash_reduce(obj, SHashReducer(&st));
    return NodeHash(st.acc, st.kids);
  }

  /// HashNode for a node that may be shared (memoized) or has no SHashReduce.
  __attribute__((noinline)) uint64_t HashOtherNode(const Object* obj, bool define, int depth,
                                                   bool memo, const NodeInfo* info) {
    // Immediate() found no finished entry, so an entry here is a node whose hash is being
    // made (or an open frame): a cycle. Hash the object by its type alone.
    if (FERRY_UNLIKELY(memo) && !memo_.Insert(obj, Memo{0, false}).second) {
      return Mix(KeyHash(obj->GetTypeKey()) ^ 0x5bd1e995);
    }
    SHashState st;
    st.kids = 0;
    st.handler = this;
    st.empty_array_hash = empty_array_hash_;
    st.depth = depth;
    st.define = define;
    st.recursing = true;
    if (FERRY_LIKELY(info != nullptr && info->shash_reduce != nullptr)) {
      st.acc = info->type_key_hash;  // == KeyHash(type_key), computed at registration
      info->shash_reduce(obj, SHashReducer(&st));
    } else {
      ReduceWithoutReducer(&st, obj, info);
    }
    const uint64_t hash = NodeHash(st.acc, st.kids);
    if (FERRY_UNLIKELY(memo)) *memo_.Find(obj) = Memo{hash, true};
    return hash;
  }

  /// Enter past depth_limit_: hashes `obj`'s own part and queues its children; its hash lands
  /// in Slot(slot) when they are done, or here at once when it has none (a frame is opened only
  /// for an object with children to walk).
  __attribute__((noinline)) void EnterQueued(const Object* obj, bool define, size_t slot,
                                             int depth) {
    const bool memo = MaybeShared(obj);
    if (FERRY_UNLIKELY(memo) && !memo_.Insert(obj, Memo{0, false}).second) {
      Slot(slot) = Mix(KeyHash(obj->GetTypeKey()) ^ 0x5bd1e995);
      return;
    }
    const size_t begin = children_.size();
    const int32_t type_index = obj->type_index();
    if (FERRY_UNLIKELY(type_index == kFerryArray || type_index == kFerryMap)) {
      EnterContainer(obj, define, slot, memo, begin);
      return;
    }
    const NodeInfo* info = infos_.Get(obj);
    SHashState st;
    st.kids = 0;
    st.handler = this;
    st.empty_array_hash = empty_array_hash_;
    st.depth = depth;
    st.define = define;
    st.recursing = false;
    if (FERRY_LIKELY(info != nullptr && info->shash_reduce != nullptr)) {
      st.acc = info->type_key_hash;
      node_begin_ = obj;
      node_end_ = reinterpret_cast<const char*>(obj) + info->object_size;
      info->shash_reduce(obj, SHashReducer(&st));
    } else {
      ReduceWithoutReducer(&st, obj, info);
    }
    const uint64_t acc = st.acc;
    const size_t end = children_.size();
    if (end - begin == known_) {  // a leaf (children all hashed already, if any): done
      uint64_t kids = 0;
      if (FERRY_UNLIKELY(known_ != 0)) {
        known_ = 0;
        kids = grouped_ ? FoldGrouped(begin, end) : Fold(0, begin, end);
        grouped_ = false;
        children_.truncate(begin);
      }
      const uint64_t hash = NodeHash(acc, kids);
      if (FERRY_UNLIKELY(memo)) *memo_.Find(obj) = Memo{hash, true};
      Slot(slot) = hash;
      return;
    }
    Frame& frame = frames_.push_uninitialized();
    frame.obj = obj;
    frame.acc = acc;
    frame.begin = begin;
    frame.end = end;
    frame.next = begin;
    frame.slot = slot;
    frame.commutative = false;
    frame.memo = memo;
    frame.grouped = grouped_;
    frame.node = true;
    frame.var_base = 0;
    frame.vars_defined = 0;
    known_ = 0;
    grouped_ = false;
  }

 public:
  /// An Array member of the node whose reducer runs: hashed as the array is when entered as an
  /// object (its own part, then its elements). A recursing reducer hashes the elements at once;
  /// past the limit they go to children_ after a header child (kGroupTag, the element count,
  /// the array's own part of its hash), plain ones hashed now (kKnownTag), and FoldGrouped
  /// folds them as Finish folds an array's frame. Arrays that may be shared (and so memoized)
  /// and temporaries go through ReduceObject instead.
  void ReduceArray(SHashState* st, const Object* value, const void* addr, bool define) {
    const auto* array = static_cast<const ArrayObj*>(value);
    if (FERRY_LIKELY(array != nullptr && st->recursing)) {
      if (array->size() == 0) {  // an empty array (shared or not)
        st->kids = HashCombine(st->kids, empty_array_hash_);
        return;
      }
      if (FERRY_LIKELY(array->unique() && array != root_)) {
        st->kids = HashCombine(st->kids, HashElements(array, define, st->depth + 1));
        return;
      }
    }
    ReduceArrayQueued(st, array, addr, define);
  }

 private:
  /// ReduceArray past the limit, and for null and shared arrays.
  __attribute__((noinline)) void ReduceArrayQueued(SHashState* st, const ArrayObj* array,
                                                   const void* addr, bool define) {
    if (array == nullptr || st->recursing || addr < node_begin_ || addr >= node_end_) {
      ReduceObject(st, array, addr, define);
      return;
    }
    const int64_t size = array->size();
    if (size == 0) {  // the hash of an empty array (shared or not): a known child
      Child& child = children_.push_uninitialized();
      child.cell.type_index = kKnownTag;
      child.cell.small_len = 0;
      child.cell.v_int64 = 0;
      child.hash = empty_array_hash_;
      child.define = define;
      ++known_;
      return;
    }
    if (!array->unique() || array == root_) {
      ReduceObject(st, array, addr, define);
      return;
    }
    Child& child = children_.push_uninitialized();
    child.cell.small_len = 0;
    child.define = define;
    ++known_;
    grouped_ = true;
    child.cell.type_index = kGroupTag;
    child.cell.v_int64 = size;
    child.hash = HashCombine(kArrayKeyHash, static_cast<uint64_t>(size));
    AddElements(array, define);
  }

  /// The hash of an array (as when entered as an object), its elements hashed now (by
  /// recursion).
  __attribute__((always_inline)) uint64_t HashElements(const ArrayObj* array, bool define,
                                                       int depth) {
    uint64_t hash = HashCombine(kArrayKeyHash, static_cast<uint64_t>(array->size()));
    for (const Any& element : *array) {
      const FerryAny* cell = element.raw();
      uint64_t h;
      if (FERRY_LIKELY(IsWalked(cell->type_index))) {
        h = HashObject(ObjectOf(cell), define, depth);
      } else {
        h = PlainHash(cell);
      }
      hash = HashCombine(hash, h);
    }
    return hash;
  }

  /// ReduceArray's children: the elements of `array`, plain ones hashed now.
  __attribute__((noinline)) void AddElements(const ArrayObj* array, bool define) {
    for (const Any& element : *array) {
      const FerryAny* cell = element.raw();
      if (FERRY_LIKELY(IsWalked(cell->type_index))) {
        AddChild(cell, define);
      } else {
        Child& child = children_.push_uninitialized();
        child.cell.type_index = kKnownTag;
        child.cell.small_len = 0;
        child.cell.v_int64 = 0;
        child.hash = PlainHash(cell);
        child.define = define;
        ++known_;
      }
    }
  }

  /// Children that ReduceArray marked: kGroupTag heads an array's elements, kKnownTag is a
  /// child already hashed. Neither is a type index (IsWalked is false for both).
  static constexpr int32_t kGroupTag = INT32_MIN;
  static constexpr int32_t kKnownTag = INT32_MIN + 1;

  /// Fold of children_[begin, end) into `hash`.
  uint64_t Fold(uint64_t hash, size_t begin, size_t end) const {
    for (size_t i = begin; i < end; ++i) hash = HashCombine(hash, children_[i].hash);
    return hash;
  }

  /// The fold of a node's children when arrays' elements are among them: each group folds
  /// into its header's hash first, as the array's own frame would, and that into the rest.
  uint64_t FoldGrouped(size_t begin, size_t end) const {
    uint64_t hash = 0;
    for (size_t i = begin; i < end;) {
      const Child& child = children_[i];
      if (child.cell.type_index != kGroupTag) {
        hash = HashCombine(hash, child.hash);
        ++i;
        continue;
      }
      uint64_t group = child.hash;
      const size_t last = i + 1 + static_cast<size_t>(child.cell.v_int64);
      for (++i; i < last; ++i) group = HashCombine(group, children_[i].hash);
      hash = HashCombine(hash, group);
    }
    return hash;
  }

  /// HashNow or EnterQueued for a node without SHashReduce: all its compared fields, or its
  /// identity.
  void ReduceWithoutReducer(SHashState* st, const Object* obj, const NodeInfo* info) {
    if (info == nullptr) {
      st->acc = HashCombine(KeyHash(obj->GetTypeKey()), Mix(reinterpret_cast<uint64_t>(obj)));
      return;
    }
    st->acc = info->type_key_hash;
    if (!info->sequal_by_fields) {
      st->acc = HashCombine(st->acc, Mix(reinterpret_cast<uint64_t>(obj)));
      return;
    }
    st->define = false;
    node_begin_ = obj;
    node_end_ = reinterpret_cast<const char*>(obj) + info->object_size;
    for (const PlannedField& field : plans_.Get(info)->fields) {
      FerryAny cell;
      Any box;
      const FerryAny* value = PlannedCell(field, obj, &cell, &box);
      Reduce(st, AsView(*value), reinterpret_cast<const char*>(obj) + field.offset, false);
    }
  }

  /// Enter for an Array or a Map: always a frame (a map's hash is made in Drain's loop).
  void EnterContainer(const Object* obj, bool define, size_t slot, bool memo, size_t begin) {
    Frame frame{obj, 0, begin, begin, begin, slot, false, memo};
    if (obj->type_index() == kFerryArray) {
      const auto* array = static_cast<const ArrayObj*>(obj);
      frame.acc = HashCombine(kArrayKeyHash, static_cast<uint64_t>(array->size()));
      for (const Any& cell : *array) AddChild(cell.raw(), define);
    } else {
      const auto* map = static_cast<const MapObj*>(obj);
      static const uint64_t kMapKeyHash = KeyHash(MapObj::_type_key);
      frame.acc = HashCombine(kMapKeyHash, map->size());
      frame.commutative = true;
      frame.var_base = free_var_counter_;
      for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        AddChild(e->key.raw(), define);
        AddChild(e->value.raw(), define);
      }
    }
    frame.end = children_.size();
    frames_.push_back(frame);
  }

  void AddChild(const FerryAny* cell, bool define) {
    Child& child = children_.push_uninitialized();
    CopyCell(&child.cell, cell);
    child.define = define;
  }

  /// The hash of an array's or a map's frame.
  uint64_t Finish(const Frame& frame) const {
    uint64_t hash = frame.acc;
    if (frame.commutative) {
      uint64_t sum = 0;
      for (size_t i = frame.begin; i + 1 < frame.end; i += 2) {
        sum += Mix(HashCombine(children_[i].hash, children_[i + 1].hash));
      }
      return HashCombine(hash, sum);
    }
    return Fold(hash, frame.begin, frame.end);
  }

  /// The parts of an array's hash known before the walk: its type key's, an empty array's.
  static const uint64_t kArrayKeyHash;
  static uint64_t EmptyArrayHash() {
    static const uint64_t hash = HashCombine(kArrayKeyHash, 0);
    return hash;
  }
  uint64_t empty_array_hash_ = 0;  // EmptyArrayHash(), read once per walk (Run)

  const bool map_free_vars_;
  const int depth_limit_ = RecursionLimit();
  PodStack<Frame> frames_;
  PodStack<Child> children_;
  std::vector<Any> keep_alive_;
  PointerMap<Memo> memo_;
  NodeInfoCache infos_;
  FieldPlanCache plans_;
  const Object* root_ = nullptr;
  // The node whose reducer runs past the limit: where its members lie.
  const void* node_begin_ = nullptr;
  const void* node_end_ = nullptr;
  uint64_t result_ = 0;
  uint64_t ret_ = 0;      // kReturnSlot
  bool grouped_ = false;  // the running reducer queued an array's elements (kGroupTag)
  size_t known_ = 0;      // children the running reducer queued already hashed (kKnownTag)
  uint64_t free_var_counter_ = 0;
};

const uint64_t SHashHandler::kArrayKeyHash =
    std::hash<std::string_view>()(std::string_view(ArrayObj::_type_key));

void SetStructuralRecursionLimit(int limit) noexcept {
  recursion_limit = limit < 0 ? kRecursionLimit : limit;
}

}  // namespace details

bool SEqualReducer::Reduce(const AnyView& lhs, const AnyView& rhs, const void* lhs_addr,
                           bool define) const {
  return handler_->Reduce(lhs, rhs, lhs_addr, define);
}
bool SEqualReducer::ReduceObjects(const Object* lhs, const Object* rhs, const void* lhs_addr,
                                  bool define) const {
  return handler_->ReduceObjects(lhs, rhs, lhs_addr, define);
}
bool SEqualReducer::FreeVarEqualImpl(const Object* lhs, const Object* rhs) const {
  return handler_->FreeVarEqual(lhs, rhs);
}
bool SEqualReducer::ReduceArrays(const Object* lhs, const Object* rhs, const void* lhs_addr,
                                 bool define) const {
  return handler_->ReduceArrays(lhs, rhs, lhs_addr, define);
}
bool SEqualReducer::map_free_vars() const { return handler_->map_free_vars(); }

void SHashReducer::Reduce(const AnyView& value, bool define) const {
  state_->handler->Reduce(state_, value, nullptr, define);
}
void SHashReducer::Reduce(const AnyView& value, const void* addr, bool define) const {
  state_->handler->Reduce(state_, value, addr, define);
}
void SHashReducer::ReduceObject(const Object* value, const void* addr, bool define) const {
  state_->handler->ReduceObject(state_, value, addr, define);
}
void SHashReducer::ReduceArray(const Object* value, const void* addr, bool define) const {
  state_->handler->ReduceArray(state_, value, addr, define);
}
void SHashReducer::FreeVarHashImpl(const Object* var) const {
  state_->handler->FreeVarHash(state_, var);
}
void SHashReducer::SHashReduceHashedValue(uint64_t hash) const {
  state_->acc = details::SHashCombine(state_->acc, hash);
}
bool SHashReducer::map_free_vars() const { return state_->handler->map_free_vars(); }

bool StructuralEqual::operator()(const AnyView& lhs, const AnyView& rhs, bool map_free_vars) const {
  return details::SEqualHandler(map_free_vars, false).Run(lhs, rhs);
}

uint64_t StructuralHash::operator()(const AnyView& value, bool map_free_vars) const {
  return details::SHashHandler(map_free_vars).Run(value);
}

std::optional<std::string> StructuralMismatch(const AnyView& lhs, const AnyView& rhs,
                                              bool map_free_vars) {
  details::SEqualHandler handler(map_free_vars, true);
  if (handler.Run(lhs, rhs)) return std::nullopt;
  return handler.MismatchPath();
}

/// ferry.StructuralEqual(lhs, rhs, map_free_vars=False) -> bool
FERRY_REGISTER_GLOBAL("ferry.StructuralEqual")
    .set_body_typed([](AnyView lhs, AnyView rhs, bool map_free_vars) {
      return StructuralEqual()(lhs, rhs, map_free_vars);
    })
    .quick();
/// ferry.StructuralHash(value, map_free_vars=False) -> int (the 64-bit hash as int64)
FERRY_REGISTER_GLOBAL("ferry.StructuralHash")
    .set_body_typed([](AnyView value, bool map_free_vars) {
      return static_cast<int64_t>(StructuralHash()(value, map_free_vars));
    })
    .quick();
/// ferry.StructuralMismatch(lhs, rhs, map_free_vars) -> the path of the first difference or None
FERRY_REGISTER_GLOBAL("ferry.StructuralMismatch")
    .set_body_typed([](AnyView lhs, AnyView rhs, bool map_free_vars) -> Optional<String> {
      auto path = StructuralMismatch(lhs, rhs, map_free_vars);
      if (!path) return Optional<String>();
      return String(*path);
    })
    .quick();

}  // namespace ferry
