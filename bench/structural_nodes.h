// The nodes and graphs of the structural and JSON benchmarks (bench_structural.cc, timed) and
// of callgrind_walks.cc (instructions per node), and the floor: a plain recursive walk of the
// same objects that knows their two C++ types.
#ifndef FERRY_BENCH_STRUCTURAL_NODES_H_
#define FERRY_BENCH_STRUCTURAL_NODES_H_

#include <ferry/ferry.h>

#include <cstdint>
#include <thread>

namespace ferry_bench {

using namespace ferry;

/// As in ops.h: the process has had a second thread, so libstdc++ uses atomics as in a host.
inline const bool kWalksAreMultiThreaded = [] {
  std::thread([] {}).join();
  return true;
}();

class NumNode : public Object {
 public:
  int64_t value = 0;
  void VisitAttrs(AttrVisitor* v) { v->Visit("value", &value); }
  bool SEqualReduce(const NumNode* other, SEqualReducer equal) const {
    return equal(value, other->value);
  }
  void SHashReduce(SHashReducer hash) const { hash(value); }
  static constexpr const char* _type_key = "bench.Num";
  FERRY_DECLARE_FINAL_OBJECT_INFO(NumNode, Object);
};
class PairNode : public Object {
 public:
  ObjectRef a, b;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const PairNode* other, SEqualReducer equal) const {
    return equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(SHashReducer hash) const {
    hash(a);
    hash(b);
  }
  static constexpr const char* _type_key = "bench.Pair";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PairNode, Object);
};

inline ObjectRef Num(int64_t v) {
  auto n = make_object<NumNode>();
  n->value = v;
  return ObjectRef(n);
}
inline ObjectRef Pair(ObjectRef a, ObjectRef b) {
  auto n = make_object<PairNode>();
  n->a = std::move(a);
  n->b = std::move(b);
  return ObjectRef(n);
}

/// A balanced tree with `leaves` leaves (2 * leaves - 1 nodes).
inline ObjectRef Tree(int64_t first, int64_t leaves) {
  if (leaves == 1) return Num(first);
  return Pair(Tree(first, leaves / 2), Tree(first + leaves / 2, leaves - leaves / 2));
}
/// A DAG of `depth` levels, each node pointing twice at the one below: depth + 1 nodes.
inline ObjectRef Dag(int depth) {
  ObjectRef node = Num(1);
  for (int i = 0; i < depth; ++i) node = Pair(node, node);
  return node;
}

/// The floor of a structural hash: a recursive walk that knows the two node types (a type
/// test, a load per field, a multiply-xor per node; no tables, no reducers). `num` is
/// NumNode's type index.
inline uint64_t FloorHash(const Object* node, int32_t num) {
  if (node->type_index() == num) {
    return static_cast<uint64_t>(static_cast<const NumNode*>(node)->value) * 0x9e3779b97f4a7c15ULL;
  }
  const auto* pair = static_cast<const PairNode*>(node);
  const uint64_t a = FloorHash(pair->a.get(), num);
  return (a ^ (FloorHash(pair->b.get(), num) + (a << 12) + (a >> 4))) * 0xff51afd7ed558ccdULL;
}
/// The floor of structural equality on the same trees.
inline bool FloorEqual(const Object* x, const Object* y, int32_t num) {
  if (x->type_index() != y->type_index()) return false;
  if (x->type_index() == num) {
    return static_cast<const NumNode*>(x)->value == static_cast<const NumNode*>(y)->value;
  }
  const auto* p = static_cast<const PairNode*>(x);
  const auto* q = static_cast<const PairNode*>(y);
  return FloorEqual(p->a.get(), q->a.get(), num) && FloorEqual(p->b.get(), q->b.get(), num);
}

}  // namespace ferry_bench

/// Registered in the one program that includes this header.
FERRY_REGISTER_NODE_TYPE(ferry_bench::NumNode);
FERRY_REGISTER_NODE_TYPE(ferry_bench::PairNode);

#endif  // FERRY_BENCH_STRUCTURAL_NODES_H_
