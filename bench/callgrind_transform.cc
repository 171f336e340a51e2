// Instructions per node of StructuralVisit and StructuralTransform, for
// `valgrind --tool=callgrind` (the wall-clock figures are bench_transform's), each beside its
// floor (transform_floor.h), driven as callgrind_walks.cc is (callgrind_main.h): each operation
// runs REPS times in its own Loop<Op>, after one warm-up call, and the order file it prints names
// each operation with its node count, so bench/report.py divides the inclusive count of Loop<Op>
// by REPS x nodes.
// Results are kept until the operation's Loop has returned, so dropping a copied tree is not
// counted (as in bench_transform, where it is not timed).
//
// Each operation runs in a child process of its own (fork), on a heap nothing else used: what
// an allocation costs depends on where the heap's free memory is, so with one process the count
// of an operation that allocates depended on the operations before it (the floor's every-leaf
// rebuild: 172 or 275 Ir per node by the order). Callgrind follows the children; `%p` gives each
// its own output file, and the annotations of all of them go to one file for the report:
//
//     cg="valgrind --tool=callgrind --callgrind-out-file=cg.%p.out"
//     $cg callgrind_transform 100000 2 >order.txt
//     for f in cg.*.out; do callgrind_annotate --inclusive=yes --threshold=100 $f; done >cg.txt
//     python3 bench/report.py --callgrind 2 cg.txt order.txt
#include <benchmark/benchmark.h>

#include <vector>

#include "callgrind_main.h"
#include "transform_floor.h"
#ifdef FERRY_BENCH_TVM_FFI
#include "transform_tvm_ffi.h"
#endif

namespace ferry_bench {

using benchmark::DoNotOptimize;

/// The tree, the results kept (one per call), NumNode's type index and the leaf rules.
struct Base {
  explicit Base(int64_t leaves) : tree(Tree(0, leaves)), one{leaves / 3} {}
  ObjectRef tree;
  std::vector<ObjectRef> kept;
  int32_t num = NumNode::RuntimeTypeIndex();
  KeepLeaves none;
  ChangeOneLeaf one;
  ChangeEveryLeaf every;
  void Keep(ObjectRef out) { kept.push_back(std::move(out)); }
};

struct Ferry_Visit : Base {
  using Base::Base;
  void operator()() {
    int64_t n = 0;
    StructuralVisit(tree, [&](const ObjectRef&) { ++n; });
    DoNotOptimize(n);
  }
};
struct Floor_Visit : Base {
  using Base::Base;
  void operator()() { DoNotOptimize(FloorCount(tree.get(), num)); }
};

/// The floor visit calling a counter through a function pointer per node (transform_floor.h).
struct FloorCallback_Visit : Base {
  using Base::Base;
  void operator()() {
    int64_t n = 0;
    FloorVisitThrough(
        tree, num, [](void* ctx, const ObjectRef&) { ++*static_cast<int64_t*>(ctx); }, &n);
    DoNotOptimize(n);
  }
};

#define FERRY_BENCH_TRANSFORM_OPS(Name, rule)                              \
  struct Ferry_##Name : Base {                                             \
    using Base::Base;                                                      \
    void operator()() { Keep(StructuralTransform(tree, LeafRule(rule))); } \
  };                                                                       \
  struct Floor_##Name : Base {                                             \
    using Base::Base;                                                      \
    void operator()() { Keep(FloorRebuild(tree, num, rule)); }             \
  };
FERRY_BENCH_TRANSFORM_OPS(TransformNone, none)
FERRY_BENCH_TRANSFORM_OPS(TransformOneLeaf, one)
FERRY_BENCH_TRANSFORM_OPS(TransformEveryLeaf, every)
#undef FERRY_BENCH_TRANSFORM_OPS

#ifdef FERRY_BENCH_TVM_FFI
/// The peer's StructuralMap on its own copy of the tree (transform_tvm_ffi.h).
struct TvmFfiBase : Base {
  explicit TvmFfiBase(int64_t leaves) : Base(1), peer_tree(tvmffi_tree::MakeTree(0, leaves)) {
    one = ChangeOneLeaf{leaves / 3};  // Base(1) made a one-leaf Ferry tree, not used here
    peer_kept.reserve(16);
  }
  tvm::ffi::ObjectRef peer_tree;
  std::vector<tvm::ffi::Any> peer_kept;
};
#define FERRY_BENCH_TVM_FFI_OPS(Name, rule)                                       \
  struct TvmFfi_##Name : TvmFfiBase {                                             \
    using TvmFfiBase::TvmFfiBase;                                                 \
    void operator()() { peer_kept.push_back(tvmffi_tree::Map(peer_tree, rule)); } \
  };
FERRY_BENCH_TVM_FFI_OPS(TransformNone, none)
FERRY_BENCH_TVM_FFI_OPS(TransformOneLeaf, one)
FERRY_BENCH_TVM_FFI_OPS(TransformEveryLeaf, every)
#undef FERRY_BENCH_TVM_FFI_OPS
#endif

}  // namespace ferry_bench

int main(int argc, char** argv) {
  using namespace ferry_bench;
  int64_t leaves = 0;
  long reps = 0;
  if (!ParseCallgrindArgs(argc, argv, &leaves, &reps)) return 2;
  const int64_t nodes = 2 * leaves - 1;
#define MEASURE(Op) MeasureInChild<Op>(#Op, leaves, nodes, reps)
  MEASURE(Ferry_Visit);
  MEASURE(Floor_Visit);
  MEASURE(FloorCallback_Visit);
  MEASURE(Ferry_TransformNone);
  MEASURE(Floor_TransformNone);
  MEASURE(Ferry_TransformOneLeaf);
  MEASURE(Floor_TransformOneLeaf);
  MEASURE(Ferry_TransformEveryLeaf);
  MEASURE(Floor_TransformEveryLeaf);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_TransformNone);
  MEASURE(TvmFfi_TransformOneLeaf);
  MEASURE(TvmFfi_TransformEveryLeaf);
#endif
  return 0;
}
