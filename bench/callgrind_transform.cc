// Instructions per node of StructuralVisit and StructuralTransform, for
// `valgrind --tool=callgrind` (the wall-clock figures are bench_transform's), each beside its
// floor (transform_floor.h). As in callgrind_walks.cc, each operation runs REPS times in its own
// Loop<Op>, after one warm-up call, and the order file it prints names each operation with its
// node count, so bench/report.py divides the inclusive count of Loop<Op> by REPS x nodes.
// Results are kept until the operation's Loop has returned, so dropping a copied tree is not
// counted (as in bench_transform, where it is not timed).
//
// Each operation runs in a child process of its own (fork), on a heap nothing else used: what
// an allocation costs depends on where the heap's free memory is, so with one process the count
// of an operation that allocates depended on the operations before it (the floor's every-leaf
// rebuild: 172 or 275 Ir per node by the order). Callgrind follows the children; `%p` gives each
// its own output file, and the annotations of all of them go to one file for the report:
//
//     valgrind --tool=callgrind --callgrind-out-file=cg.%p.out \
//       callgrind_transform 100000 2 >order.txt
//     for f in cg.*.out; do callgrind_annotate --inclusive=yes --threshold=100 $f; done >cg.txt
//     python3 bench/report.py --callgrind 2 cg.txt order.txt
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "transform_floor.h"
#ifdef FERRY_BENCH_TVM_FFI
#include "transform_tvm_ffi.h"
#endif

namespace ferry_bench {

using benchmark::DoNotOptimize;

/// Never inlined, so callgrind reports its cost under its own name.
template <typename Op>
__attribute__((noinline)) void Loop(Op& op, long n) {
  for (long i = 0; i < n; ++i) op();
}

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

/// Runs one operation in a child process (a fresh heap; see the file comment) and prints its
/// name and node count, the report's order and divisor. Exits when the child fails.
template <typename Op>
void Measure(const char* name, int64_t leaves, int64_t nodes, long reps) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    Op op(leaves);
    op.kept.reserve(static_cast<size_t>(reps) + 1);  // no reallocation inside the Loop
    op();
    Loop(op, reps);
    std::printf("%s %lld\n", name, static_cast<long long>(nodes));
    std::fflush(stdout);
    _exit(0);  // the results are not dropped: that is not counted, and takes time
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s: the child process failed\n", name);
    std::exit(1);
  }
}

}  // namespace ferry_bench

int main(int argc, char** argv) {
  if (argc != 3 || std::atol(argv[1]) <= 0 || std::atol(argv[2]) <= 0) {
    std::fprintf(stderr, "usage: %s LEAVES REPS  (a tree of 2 * LEAVES - 1 nodes)\n", argv[0]);
    return 2;
  }
  const int64_t leaves = std::atol(argv[1]);
  const int64_t nodes = 2 * leaves - 1;
  const long reps = std::atol(argv[2]);
  using namespace ferry_bench;
#define MEASURE(Op) Measure<Op>(#Op, leaves, nodes, reps)
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
