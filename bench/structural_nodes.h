// The nodes and graphs of the structural and JSON benchmarks (bench_structural.cc, timed) and
// of callgrind_walks.cc (instructions per node), and the floors: plain recursive walks of the
// same objects that know their C++ types. Two shapes: binary nodes (NumNode, PairNode) and an
// IR-like node with fields of mixed kinds (IrNode).
#ifndef FERRY_BENCH_STRUCTURAL_NODES_H_
#define FERRY_BENCH_STRUCTURAL_NODES_H_

#include <ferry/ferry.h>

#include <cstdint>
#include <cstring>
#include <string>
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

/// The operator of an IrNode: an enum field, reflected by name.
enum class IrOp : int32_t { kConst = 0, kAdd = 1, kMul = 2 };

/// A node of the shape of a real IR: plain fields of several kinds (an int64, a double, a
/// String name, an enum, a DataType), an Array of children and an Optional child, compared
/// and hashed by a hand-written reducer, as TVM's nodes are.
class IrNode : public Object {
 public:
  int64_t id = 0;
  double scale = 1.0;
  String name;
  IrOp op = IrOp::kConst;
  DataType dtype;
  Array<ObjectRef> args;
  Optional<ObjectRef> body;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("id", &id);
    v->Visit("scale", &scale);
    v->Visit("name", &name);
    v->Visit("op", &op);
    v->Visit("dtype", &dtype);
    v->Visit("args", &args);
    v->Visit("body", &body);
  }
  bool SEqualReduce(const IrNode* other, SEqualReducer equal) const {
    return equal(id, other->id) && equal(scale, other->scale) && equal(name, other->name) &&
           equal(op, other->op) && equal(dtype, other->dtype) && equal(args, other->args) &&
           equal(body, other->body);
  }
  void SHashReduce(SHashReducer hash) const {
    hash(id);
    hash(scale);
    hash(name);
    hash(op);
    hash(dtype);
    hash(args);
    hash(body);
  }
  static constexpr const char* _type_key = "bench.Ir";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IrNode, Object);
};

/// IrNode's fields compared field by field (`_type_sequal_by_fields`, no reducers): the path of
/// the walks for nodes without SEqualReduce, which Python's py_class nodes take too.
class IrFieldsNode : public Object {
 public:
  int64_t id = 0;
  double scale = 1.0;
  String name;
  IrOp op = IrOp::kConst;
  DataType dtype;
  Array<ObjectRef> args;
  Optional<ObjectRef> body;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("id", &id);
    v->Visit("scale", &scale);
    v->Visit("name", &name);
    v->Visit("op", &op);
    v->Visit("dtype", &dtype);
    v->Visit("args", &args);
    v->Visit("body", &body);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "bench.IrFields";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IrFieldsNode, Object);
};

/// A balanced tree of IrNodes (or IrFieldsNodes) with `leaves` leaves (2 * leaves - 1 IrNodes). A
/// leaf is a float32 constant named `c<id>` (inline string) with no arguments; an inner node an
/// int32 `add`/`mul` named `tmp_<id>` (from 9 characters: a string object) with its two subtrees in
/// `args`; every fourth inner node has a leaf as `body` in place of its second argument
/// (args of one), so both Optional forms occur.
template <typename Node = IrNode>
ObjectRef IrTree(int64_t first, int64_t leaves) {
  auto n = make_object<Node>();
  n->id = first;
  n->scale = 0.5 * static_cast<double>(leaves);
  if (leaves == 1) {
    n->name = String("c" + std::to_string(first % 100000));
    n->op = IrOp::kConst;
    n->dtype = DataType::Float(32);
    return ObjectRef(n);
  }
  n->name = String("tmp_" + std::to_string(first + leaves));
  n->op = first % 2 == 0 ? IrOp::kAdd : IrOp::kMul;
  n->dtype = DataType::Int(32);
  ObjectRef left = IrTree<Node>(first, leaves / 2);
  ObjectRef right = IrTree<Node>(first + leaves / 2, leaves - leaves / 2);
  if ((first + leaves) % 4 == 0) {
    n->args = Array<ObjectRef>{left};
    n->body = right;
  } else {
    n->args = Array<ObjectRef>{left, right};
  }
  return ObjectRef(n);
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

/// The floor of a structural hash of an IrTree: every field read and mixed in by a recursion
/// that knows the one node type (no tables, no reducers, no cells).
inline uint64_t FloorIrHash(const IrNode* n) {
  uint64_t h = static_cast<uint64_t>(n->id) * 0x9e3779b97f4a7c15ULL;
  uint64_t bits;
  std::memcpy(&bits, &n->scale, sizeof(bits));
  h = (h ^ bits) * 0xff51afd7ed558ccdULL;
  const char* s = n->name.data();
  for (size_t i = 0, len = n->name.size(); i < len; ++i) h = (h ^ s[i]) * 0x100000001b3ULL;
  const FerryDataType dt = n->dtype;
  h = (h ^ (static_cast<uint64_t>(n->op) << 32 ^ dt.code << 24 ^ dt.bits << 16 ^ dt.lanes)) *
      0xff51afd7ed558ccdULL;
  for (const ObjectRef& arg : n->args) {
    h = (h ^ FloorIrHash(static_cast<const IrNode*>(arg.get()))) * 0x9e3779b97f4a7c15ULL;
  }
  if (n->body) h ^= FloorIrHash(static_cast<const IrNode*>(n->body.value().get())) + (h << 6);
  return h;
}
/// The floor of structural equality on the same trees.
inline bool FloorIrEqual(const IrNode* x, const IrNode* y) {
  if (x->id != y->id || x->scale != y->scale || x->op != y->op) return false;
  const FerryDataType a = x->dtype, b = y->dtype;
  if (a.code != b.code || a.bits != b.bits || a.lanes != b.lanes) return false;
  if (x->name.size() != y->name.size() ||
      std::memcmp(x->name.data(), y->name.data(), x->name.size()) != 0) {
    return false;
  }
  if (x->args.size() != y->args.size() || x->body.has_value() != y->body.has_value()) return false;
  for (size_t i = 0; i < x->args.size(); ++i) {
    if (!FloorIrEqual(static_cast<const IrNode*>(x->args[i].get()),
                      static_cast<const IrNode*>(y->args[i].get()))) {
      return false;
    }
  }
  return !x->body || FloorIrEqual(static_cast<const IrNode*>(x->body.value().get()),
                                  static_cast<const IrNode*>(y->body.value().get()));
}

}  // namespace ferry_bench

/// Registered in the one program that includes this header.
FERRY_REGISTER_NODE_TYPE(ferry_bench::NumNode);
FERRY_REGISTER_NODE_TYPE(ferry_bench::PairNode);
FERRY_REGISTER_ENUM(ferry_bench::IrOp, "bench.IrOp",
                    {{ferry_bench::IrOp::kConst, "Const"},
                     {ferry_bench::IrOp::kAdd, "Add"},
                     {ferry_bench::IrOp::kMul, "Mul"}});
FERRY_REGISTER_NODE_TYPE(ferry_bench::IrNode);
FERRY_REGISTER_NODE_TYPE(ferry_bench::IrFieldsNode);

#endif  // FERRY_BENCH_STRUCTURAL_NODES_H_
