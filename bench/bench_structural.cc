// Structural hash/equality per node and JSON throughput on a 1e6-node tree and a shared DAG;
// the walks also at 1e3..1e6 nodes, each beside its floor (a plain recursive walk of the same
// objects, structural_nodes.h). Instructions per node: callgrind_walks.cc.
#include <benchmark/benchmark.h>

#include <string>

#include "structural_nodes.h"

namespace {

using namespace ferry_bench;

constexpr int64_t kLeaves = 500000;  // 999,999 nodes
constexpr int64_t kNodes = 2 * kLeaves - 1;

// state.range(0) is the number of leaves: 2 * leaves - 1 nodes.
void BM_Ferry_HashTree(benchmark::State& state) {
  ObjectRef tree = Tree(0, state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(StructuralHash()(tree));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
void BM_Floor_HashTree(benchmark::State& state) {
  ObjectRef tree = Tree(0, state.range(0));
  const int32_t num = NumNode::RuntimeTypeIndex();
  for (auto _ : state) benchmark::DoNotOptimize(FloorHash(tree.get(), num));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
void BM_Ferry_EqualTree(benchmark::State& state) {
  ObjectRef a = Tree(0, state.range(0)), b = Tree(0, state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(StructuralEqual()(a, b));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
void BM_Floor_EqualTree(benchmark::State& state) {
  ObjectRef a = Tree(0, state.range(0)), b = Tree(0, state.range(0));
  const int32_t num = NumNode::RuntimeTypeIndex();
  for (auto _ : state) benchmark::DoNotOptimize(FloorEqual(a.get(), b.get(), num));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
// The same walks on a tree of IR-like nodes with fields of mixed kinds (IrNode).
void BM_Ferry_HashIrTree(benchmark::State& state) {
  ObjectRef tree = IrTree(0, state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(StructuralHash()(tree));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
void BM_Floor_HashIrTree(benchmark::State& state) {
  ObjectRef tree = IrTree(0, state.range(0));
  const auto* root = static_cast<const IrNode*>(tree.get());
  for (auto _ : state) benchmark::DoNotOptimize(FloorIrHash(root));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
void BM_Ferry_EqualIrTree(benchmark::State& state) {
  ObjectRef a = IrTree(0, state.range(0)), b = IrTree(0, state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(StructuralEqual()(a, b));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
}
void BM_Floor_EqualIrTree(benchmark::State& state) {
  ObjectRef a = IrTree(0, state.range(0)), b = IrTree(0, state.range(0));
  const auto* x = static_cast<const IrNode*>(a.get());
  const auto* y = static_cast<const IrNode*>(b.get());
  for (auto _ : state) benchmark::DoNotOptimize(FloorIrEqual(x, y));
  state.SetItemsProcessed(state.iterations() * (2 * state.range(0) - 1));
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
// The floor of LoadJSON: the same objects made in C++ (in the same order, children first)
// and dropped; no text.
void BM_Floor_LoadJSON(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Tree(0, kLeaves).get());
  state.SetItemsProcessed(state.iterations() * kNodes);
}

// 999 / 9 999 / 99 999 / 999 999 nodes.
#define FERRY_WALK_SIZES Arg(500)->Arg(5000)->Arg(50000)->Arg(kLeaves)
BENCHMARK(BM_Ferry_HashTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Floor_HashTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_EqualTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Floor_EqualTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_HashIrTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Floor_HashIrTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_EqualIrTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Floor_EqualIrTree)->FERRY_WALK_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_HashDag)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_EqualDag)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_SaveJSON)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_LoadJSON)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_LoadJSON)->Unit(benchmark::kMillisecond);

}  // namespace
