// StructuralVisit and StructuralTransform on the balanced 999 999-node tree of
// bench_structural.cc, each beside its floor: a hand-written recursive walk or rebuild that knows
// the two C++ types (no tables, no callbacks). Also the structural hash of the same tree, the
// walk a visit is compared with.
//
// Transforms: none changes (the result is the input), one leaf changes (the walk still visits
// every node to find it, but copies only the 20 nodes of its spine), every leaf changes (the
// whole tree is copied). The counters give the objects each transform made.
//
// Each benchmark builds its own tree after giving the heap's free memory back (TrimHeap), and
// the results are dropped between iterations (not timed), so an iteration allocates from what
// the previous one freed; run with repetitions interleaved at random
// (--benchmark_enable_random_interleaving=true) so that no row is measured in one order only.
#include <benchmark/benchmark.h>

#include <vector>

#include "transform_floor.h"
#ifdef FERRY_BENCH_TVM_FFI
#include "transform_tvm_ffi.h"
#endif

namespace {

using namespace ferry_bench;

constexpr int64_t kLeaves = 500000;  // 999,999 nodes
constexpr int64_t kNodes = 2 * kLeaves - 1;

const KeepLeaves kNone;
const ChangeOneLeaf kOneLeaf{kLeaves / 3};
const ChangeEveryLeaf kEveryLeaf;

void BM_Ferry_Visit(benchmark::State& state) {
  TrimHeap();
  ObjectRef tree = Tree(0, kLeaves);
  for (auto _ : state) {
    int64_t n = 0;
    StructuralVisit(tree, [&](const ObjectRef&) { ++n; });
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_Floor_Visit(benchmark::State& state) {
  TrimHeap();
  ObjectRef tree = Tree(0, kLeaves);
  const int32_t num = NumNode::RuntimeTypeIndex();
  for (auto _ : state) benchmark::DoNotOptimize(FloorCount(tree.get(), num));
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_FloorCallback_Visit(benchmark::State& state) {
  TrimHeap();
  ObjectRef tree = Tree(0, kLeaves);
  const int32_t num = NumNode::RuntimeTypeIndex();
  for (auto _ : state) {
    int64_t n = 0;
    FloorVisitThrough(
        tree, num, [](void* ctx, const ObjectRef&) { ++*static_cast<int64_t*>(ctx); }, &n);
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_Ferry_Hash(benchmark::State& state) {
  TrimHeap();
  ObjectRef tree = Tree(0, kLeaves);
  for (auto _ : state) benchmark::DoNotOptimize(StructuralHash()(tree));
  state.SetItemsProcessed(state.iterations() * kNodes);
}

template <typename F>
void RunFerryTransform(benchmark::State& state, const F& f) {
  TrimHeap();
  ObjectRef tree = Tree(0, kLeaves);
  int64_t copied = 0;
  for (auto _ : state) {
    ObjectRef out = StructuralTransform(tree, LeafRule(f));
    state.PauseTiming();
    // Objects of the result that are not in the input: the root when it differs, and below a
    // new object every child with one reference (a kept child has two: old and new parent).
    copied = 0;
    std::vector<const Object*> stack;
    if (!out.same_as(tree)) stack.push_back(out.get());
    while (!stack.empty()) {
      const Object* n = stack.back();
      stack.pop_back();
      ++copied;
      if (n->IsInstance<PairNode>()) {
        const auto* p = static_cast<const PairNode*>(n);
        if (p->a->use_count() == 1) stack.push_back(p->a.get());
        if (p->b->use_count() == 1) stack.push_back(p->b.get());
      }
    }
    out = ObjectRef();  // dropping the copies is not timed
    state.ResumeTiming();
  }
  state.counters["objects_made"] = static_cast<double>(copied);
  state.SetItemsProcessed(state.iterations() * kNodes);
}
template <typename F>
void RunFloorTransform(benchmark::State& state, const F& f) {
  TrimHeap();
  ObjectRef tree = Tree(0, kLeaves);
  const int32_t num = NumNode::RuntimeTypeIndex();
  for (auto _ : state) {
    ObjectRef out = FloorRebuild(tree, num, f);
    state.PauseTiming();
    out = ObjectRef();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}

#ifdef FERRY_BENCH_TVM_FFI
/// The peer's StructuralMap on the same tree (transform_tvm_ffi.h); dropping the result is not
/// timed, as for the others.
template <typename F>
void RunTvmFfiTransform(benchmark::State& state, const F& f) {
  TrimHeap();
  tvm::ffi::ObjectRef tree = tvmffi_tree::MakeTree(0, kLeaves);
  bool same = false;
  for (auto _ : state) {
    tvm::ffi::Any out = tvmffi_tree::Map(tree, f);
    state.PauseTiming();
    same = out.as<tvm::ffi::Object>() == tree.get();
    out = tvm::ffi::Any();
    state.ResumeTiming();
  }
  state.counters["returns_input"] = same ? 1 : 0;
  state.SetItemsProcessed(state.iterations() * kNodes);
}
void BM_TvmFfi_TransformNone(benchmark::State& state) { RunTvmFfiTransform(state, kNone); }
void BM_TvmFfi_TransformOneLeaf(benchmark::State& state) { RunTvmFfiTransform(state, kOneLeaf); }
void BM_TvmFfi_TransformEveryLeaf(benchmark::State& state) {
  RunTvmFfiTransform(state, kEveryLeaf);
}
BENCHMARK(BM_TvmFfi_TransformNone)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TvmFfi_TransformOneLeaf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TvmFfi_TransformEveryLeaf)->Unit(benchmark::kMillisecond);
#endif

void BM_Ferry_TransformNone(benchmark::State& state) { RunFerryTransform(state, kNone); }
void BM_Floor_TransformNone(benchmark::State& state) { RunFloorTransform(state, kNone); }
void BM_Ferry_TransformOneLeaf(benchmark::State& state) { RunFerryTransform(state, kOneLeaf); }
void BM_Floor_TransformOneLeaf(benchmark::State& state) { RunFloorTransform(state, kOneLeaf); }
void BM_Ferry_TransformEveryLeaf(benchmark::State& state) { RunFerryTransform(state, kEveryLeaf); }
void BM_Floor_TransformEveryLeaf(benchmark::State& state) { RunFloorTransform(state, kEveryLeaf); }

BENCHMARK(BM_Ferry_Visit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_Visit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FloorCallback_Visit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_Hash)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_TransformNone)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_TransformNone)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_TransformOneLeaf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_TransformOneLeaf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_TransformEveryLeaf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_TransformEveryLeaf)->Unit(benchmark::kMillisecond);

}  // namespace
