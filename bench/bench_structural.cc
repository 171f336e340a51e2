// Structural hash/equality per node and JSON throughput on a 1e6-node tree and a shared DAG.
#include <benchmark/benchmark.h>
#include <ferry/ferry.h>

#include <string>

namespace {

using namespace ferry;

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
FERRY_REGISTER_NODE_TYPE(NumNode);
FERRY_REGISTER_NODE_TYPE(PairNode);

ObjectRef Num(int64_t v) {
  auto n = make_object<NumNode>();
  n->value = v;
  return ObjectRef(n);
}
ObjectRef Pair(ObjectRef a, ObjectRef b) {
  auto n = make_object<PairNode>();
  n->a = std::move(a);
  n->b = std::move(b);
  return ObjectRef(n);
}

/// A balanced tree with `leaves` leaves (2 * leaves - 1 nodes).
ObjectRef Tree(int64_t first, int64_t leaves) {
  if (leaves == 1) return Num(first);
  return Pair(Tree(first, leaves / 2), Tree(first + leaves / 2, leaves - leaves / 2));
}
/// A DAG of `depth` levels, each node pointing twice at the one below: depth + 1 nodes.
ObjectRef Dag(int depth) {
  ObjectRef node = Num(1);
  for (int i = 0; i < depth; ++i) node = Pair(node, node);
  return node;
}

constexpr int64_t kLeaves = 500000;  // 999,999 nodes
constexpr int64_t kNodes = 2 * kLeaves - 1;

void BM_Ferry_HashTree(benchmark::State& state) {
  ObjectRef tree = Tree(0, kLeaves);
  for (auto _ : state) benchmark::DoNotOptimize(StructuralHash()(tree));
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_Ferry_EqualTree(benchmark::State& state) {
  ObjectRef a = Tree(0, kLeaves), b = Tree(0, kLeaves);
  for (auto _ : state) benchmark::DoNotOptimize(StructuralEqual()(a, b));
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_Ferry_HashDag(benchmark::State& state) {
  ObjectRef dag = Dag(1000);
  for (auto _ : state) benchmark::DoNotOptimize(StructuralHash()(dag));
  state.SetItemsProcessed(state.iterations() * 1001);
}
void BM_Ferry_EqualDag(benchmark::State& state) {
  ObjectRef a = Dag(1000), b = Dag(1000);
  for (auto _ : state) benchmark::DoNotOptimize(StructuralEqual()(a, b));
  state.SetItemsProcessed(state.iterations() * 1001);
}
void BM_Ferry_SaveJSON(benchmark::State& state) {
  ObjectRef tree = Tree(0, kLeaves);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = SaveJSON(tree);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_Ferry_LoadJSON(benchmark::State& state) {
  std::string text = SaveJSON(Tree(0, kLeaves));
  for (auto _ : state) benchmark::DoNotOptimize(LoadJSON(text).raw());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetItemsProcessed(state.iterations() * kNodes);
}

BENCHMARK(BM_Ferry_HashTree)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_EqualTree)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_HashDag)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_EqualDag)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_SaveJSON)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_LoadJSON)->Unit(benchmark::kMillisecond);

}  // namespace
