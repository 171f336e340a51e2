// The floors of StructuralVisit and StructuralTransform on the trees of structural_nodes.h, and
// the leaf rules both sides apply: for bench_transform.cc (timed) and callgrind_transform.cc
// (instructions per node). A floor is a plain recursive walk or rebuild that knows the two C++
// types (no tables, no callbacks, no explicit stack).
#ifndef FERRY_BENCH_TRANSFORM_FLOOR_H_
#define FERRY_BENCH_TRANSFORM_FLOOR_H_

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "structural_nodes.h"

namespace ferry_bench {

/// Gives the heap's free memory back (glibc's malloc_trim), so that where an operation's
/// allocations land depends less on what the operations before it left freed: bench_transform
/// calls it before building each benchmark's tree. (callgrind_transform runs each operation in
/// a fresh process instead.)
inline void TrimHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

/// The floor of a visit: counts the nodes recursively. `num` is NumNode's type index.
inline int64_t FloorCount(const Object* node, int32_t num) {
  if (node->type_index() == num) return 1;
  const auto* pair = static_cast<const PairNode*>(node);
  return 1 + FloorCount(pair->a.get(), num) + FloorCount(pair->b.get(), num);
}

/// The visit floor with Ferry's callback protocol: the same recursive walk calling `fn(ctx,
/// node)` through a function pointer per node (as StructuralVisit calls the user's callable),
/// which shows the part of the gap the type-erased callback makes.
inline void FloorVisitThrough(const ObjectRef& node, int32_t num,
                              void (*fn)(void* ctx, const ObjectRef& node), void* ctx) {
  if (node->type_index() != num) {
    const auto* pair = static_cast<const PairNode*>(node.get());
    FloorVisitThrough(pair->a, num, fn, ctx);
    FloorVisitThrough(pair->b, num, fn, ctx);
  }
  fn(ctx, node);
}

/// The floor of a transform: rebuilds the tree bottom-up, replacing the leaves `f` maps to a new
/// value (f returns -1 to keep) and copying only the pairs with a changed child.
template <typename F>
ObjectRef FloorRebuild(const ObjectRef& node, int32_t num, const F& f) {
  if (node->type_index() == num) {
    const int64_t v = f(static_cast<const NumNode*>(node.get())->value);
    return v < 0 ? node : Num(v);
  }
  const auto* pair = static_cast<const PairNode*>(node.get());
  ObjectRef a = FloorRebuild(pair->a, num, f);
  ObjectRef b = FloorRebuild(pair->b, num, f);
  if (a.same_as(pair->a) && b.same_as(pair->b)) return node;
  return Pair(std::move(a), std::move(b));
}

/// The callback of a Ferry transform that makes the same decisions as FloorRebuild with `f`.
template <typename F>
auto LeafRule(const F& f) {
  return [f](const ObjectRef& node) -> ObjectRef {
    if (const auto* num = node.as<NumNode>()) {
      const int64_t v = f(num->value);
      if (v >= 0) return Num(v);
    }
    return ObjectRef();
  };
}

/// The leaf rules of the benchmarks for a tree of `leaves` leaves numbered 0..leaves-1: keep
/// every leaf, change the one numbered leaves / 3, change every leaf.
struct KeepLeaves {
  int64_t operator()(int64_t) const { return -1; }
};
struct ChangeOneLeaf {
  int64_t which;
  int64_t operator()(int64_t v) const { return v == which ? 7 : -1; }
};
struct ChangeEveryLeaf {
  int64_t operator()(int64_t v) const { return v + 1; }
};

}  // namespace ferry_bench

#endif  // FERRY_BENCH_TRANSFORM_FLOOR_H_
