// Instructions per node of the structural walks and of JSON, for `valgrind --tool=callgrind`
// (the wall-clock figures are bench_structural's): each operation runs REPS times in its own
// Loop<Op>, after one warm-up call; the order file it prints names each operation with its
// node count, so bench/report.py divides the inclusive count of Loop<Op> by REPS x nodes.
//
//     valgrind --tool=callgrind --callgrind-out-file=cg.out callgrind_walks 500000 2 >order.txt
//     callgrind_annotate --inclusive=yes --threshold=100 cg.out >cg.txt
//     python3 bench/report.py --callgrind 2 cg.txt order.txt
#include <benchmark/benchmark.h>

#include <string>

#include "callgrind_main.h"
#include "structural_nodes.h"

namespace ferry_bench {

using benchmark::DoNotOptimize;

struct Ferry_HashTree {
  ObjectRef tree;
  explicit Ferry_HashTree(int64_t leaves) : tree(Tree(0, leaves)) {}
  void operator()() { DoNotOptimize(StructuralHash()(tree)); }
};
struct Floor_HashTree {
  ObjectRef tree;
  int32_t num = NumNode::RuntimeTypeIndex();
  explicit Floor_HashTree(int64_t leaves) : tree(Tree(0, leaves)) {}
  void operator()() { DoNotOptimize(FloorHash(tree.get(), num)); }
};
struct Ferry_EqualTree {
  ObjectRef a, b;
  explicit Ferry_EqualTree(int64_t leaves) : a(Tree(0, leaves)), b(Tree(0, leaves)) {}
  void operator()() { DoNotOptimize(StructuralEqual()(a, b)); }
};
struct Floor_EqualTree {
  ObjectRef a, b;
  int32_t num = NumNode::RuntimeTypeIndex();
  explicit Floor_EqualTree(int64_t leaves) : a(Tree(0, leaves)), b(Tree(0, leaves)) {}
  void operator()() { DoNotOptimize(FloorEqual(a.get(), b.get(), num)); }
};
struct Ferry_HashIrTree {
  ObjectRef tree;
  explicit Ferry_HashIrTree(int64_t leaves) : tree(IrTree(0, leaves)) {}
  void operator()() { DoNotOptimize(StructuralHash()(tree)); }
};
struct Floor_HashIrTree {
  ObjectRef tree;
  explicit Floor_HashIrTree(int64_t leaves) : tree(IrTree(0, leaves)) {}
  void operator()() { DoNotOptimize(FloorIrHash(static_cast<const IrNode*>(tree.get()))); }
};
struct Ferry_EqualIrTree {
  ObjectRef a, b;
  explicit Ferry_EqualIrTree(int64_t leaves) : a(IrTree(0, leaves)), b(IrTree(0, leaves)) {}
  void operator()() { DoNotOptimize(StructuralEqual()(a, b)); }
};
struct Floor_EqualIrTree {
  ObjectRef a, b;
  explicit Floor_EqualIrTree(int64_t leaves) : a(IrTree(0, leaves)), b(IrTree(0, leaves)) {}
  void operator()() {
    DoNotOptimize(
        FloorIrEqual(static_cast<const IrNode*>(a.get()), static_cast<const IrNode*>(b.get())));
  }
};
struct Ferry_HashFieldsTree {
  ObjectRef tree;
  explicit Ferry_HashFieldsTree(int64_t leaves) : tree(IrTree<IrFieldsNode>(0, leaves)) {}
  void operator()() { DoNotOptimize(StructuralHash()(tree)); }
};
struct Ferry_EqualFieldsTree {
  ObjectRef a, b;
  explicit Ferry_EqualFieldsTree(int64_t leaves)
      : a(IrTree<IrFieldsNode>(0, leaves)), b(IrTree<IrFieldsNode>(0, leaves)) {}
  void operator()() { DoNotOptimize(StructuralEqual()(a, b)); }
};
struct Ferry_HashDag {
  ObjectRef dag = Dag(1000);
  explicit Ferry_HashDag(int64_t) {}
  void operator()() { DoNotOptimize(StructuralHash()(dag)); }
};
struct Ferry_EqualDag {
  ObjectRef a = Dag(1000), b = Dag(1000);
  explicit Ferry_EqualDag(int64_t) {}
  void operator()() { DoNotOptimize(StructuralEqual()(a, b)); }
};
struct Ferry_SaveJSON {
  ObjectRef tree;
  explicit Ferry_SaveJSON(int64_t leaves) : tree(Tree(0, leaves)) {}
  void operator()() {
    std::string text = SaveJSON(tree);
    DoNotOptimize(text.data());
  }
};
struct Ferry_LoadJSON {
  std::string text;
  explicit Ferry_LoadJSON(int64_t leaves) : text(SaveJSON(Tree(0, leaves))) {}
  void operator()() { DoNotOptimize(LoadJSON(text).raw()); }
};
struct Floor_LoadJSON {  // the same objects made in C++ and dropped
  explicit Floor_LoadJSON(int64_t leaves) : leaves(leaves) {}
  int64_t leaves;
  void operator()() { DoNotOptimize(Tree(0, leaves).get()); }
};

}  // namespace ferry_bench

int main(int argc, char** argv) {
  using namespace ferry_bench;
  int64_t leaves = 0;
  long reps = 0;
  if (!ParseCallgrindArgs(argc, argv, &leaves, &reps)) return 2;
  const int64_t nodes = 2 * leaves - 1;
#define MEASURE(Op, n) Measure<Op>(#Op, leaves, n, reps)
  MEASURE(Ferry_HashTree, nodes);
  MEASURE(Floor_HashTree, nodes);
  MEASURE(Ferry_EqualTree, nodes);
  MEASURE(Floor_EqualTree, nodes);
  MEASURE(Ferry_HashIrTree, nodes);
  MEASURE(Floor_HashIrTree, nodes);
  MEASURE(Ferry_EqualIrTree, nodes);
  MEASURE(Floor_EqualIrTree, nodes);
  MEASURE(Ferry_HashFieldsTree, nodes);
  MEASURE(Ferry_EqualFieldsTree, nodes);
  MEASURE(Ferry_HashDag, 1001);
  MEASURE(Ferry_EqualDag, 1001);
  MEASURE(Ferry_SaveJSON, nodes);
  MEASURE(Ferry_LoadJSON, nodes);
  MEASURE(Floor_LoadJSON, nodes);
  return 0;
}
