// Runs every operation of ops.h N times, each in its own Loop<Op> function, for
// `valgrind --tool=callgrind`: the inclusive instruction count of Loop<Op> divided by N is the
// cost of one operation. Instruction counts are repeatable where wall-clock times on a shared
// machine are not (they do not see cache misses or the cost of an atomic instruction, though).
//
//     valgrind --tool=callgrind --callgrind-out-file=cg.out callgrind_ops 100000 >order.txt
//     callgrind_annotate --inclusive=yes --threshold=100 cg.out >cg.txt
//     python3 bench/report.py --callgrind 100000 cg.txt order.txt
#include <cstdio>
#include <cstdlib>

#include "ops.h"

namespace ferry_bench {

/// Never inlined, so callgrind reports its cost under its own name.
template <typename Op>
__attribute__((noinline)) void Loop(Op& op, long n) {
  for (long i = 0; i < n; ++i) op();
}

/// One warm-up call (first-use registration, allocator set-up), then the counted loop. Prints
/// the name, so the report can list the operations in this order.
template <typename Op>
void Measure(const char* name, long n) {
  Op op;
  op();
  Loop(op, n);
  std::printf("%s\n", name);
}

}  // namespace ferry_bench

int main(int argc, char** argv) {
  if (argc != 2 || std::atol(argv[1]) <= 0) {
    std::fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  const long n = std::atol(argv[1]);
  using namespace ferry_bench;
#define MEASURE(Op) Measure<Op>(#Op, n)
  MEASURE(Ferry_MakeDrop);
  MEASURE(Floor_MakeDrop);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_MakeDrop);
#endif
  MEASURE(Ferry_CopyDrop);
  MEASURE(Floor_CopyDrop);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_CopyDrop);
#endif
  MEASURE(Ferry_IsInstanceHit);
  MEASURE(Floor_IsInstanceHit);
  MEASURE(Ferry_IsInstanceMiss);
  MEASURE(Floor_IsInstanceMiss);
  MEASURE(Ferry_AsHit);
  MEASURE(Floor_AsHit);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_AsHit);
#endif
  MEASURE(Ferry_Downcast);
  MEASURE(Floor_Downcast);
  MEASURE(Ferry_StringShort);
  MEASURE(Floor_StringShort);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_StringShort);
#endif
  MEASURE(Ferry_String40);
  MEASURE(Floor_String40);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_String40);
#endif
  MEASURE(Ferry_FromTypedDrop);
  MEASURE(Floor_FromTypedDrop);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_FromTypedDrop);
#endif
  MEASURE(Ferry_TypedCall);
  MEASURE(Floor_TypedCall);
#ifdef FERRY_BENCH_TVM_FFI
  MEASURE(TvmFfi_TypedCall);
#endif
  MEASURE(Ferry_CApiCall);
  MEASURE(Floor_CApiCall);
  MEASURE(Ferry_GetGlobal);
  MEASURE(Floor_GetGlobal);
  MEASURE(Ferry_AnyInt);
  MEASURE(Floor_AnyInt);
  MEASURE(Ferry_AnyShortString);
  MEASURE(Floor_AnyShortString);
  MEASURE(Ferry_AnyObject);
  MEASURE(Floor_AnyObject);
  MEASURE(Ferry_ArrayPushBack);
  MEASURE(Floor_ArrayPushBack);
  MEASURE(Ferry_DictSet);
  MEASURE(Floor_DictSet);
  MEASURE(Ferry_DictAt);
  MEASURE(Floor_DictAt);
#undef MEASURE
  return 0;
}
