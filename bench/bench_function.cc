// Functions and values: each Ferry operation (BM_Ferry_X) beside its plain-C++ floor
// (BM_Floor_X) and, when the build has the peer, apache-tvm-ffi's (BM_TvmFfi_X), in the same
// run. The operations themselves are in ops.h and ops_tvm_ffi.h, shared with callgrind_ops.cc.
#include "ops.h"

FERRY_BENCHMARK(Ferry_FromTypedDrop);
FERRY_BENCHMARK(Floor_FromTypedDrop);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_FromTypedDrop);
#endif
FERRY_BENCHMARK(Ferry_TypedCall);
FERRY_BENCHMARK(Floor_TypedCall);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_TypedCall);
#endif
FERRY_BENCHMARK(Ferry_CApiCall);
FERRY_BENCHMARK(Floor_CApiCall);
FERRY_BENCHMARK(Ferry_GetGlobal);
FERRY_BENCHMARK(Floor_GetGlobal);
FERRY_BENCHMARK(Ferry_AnyInt);
FERRY_BENCHMARK(Floor_AnyInt);
FERRY_BENCHMARK(Ferry_AnyShortString);
FERRY_BENCHMARK(Floor_AnyShortString);
FERRY_BENCHMARK(Ferry_AnyObject);
FERRY_BENCHMARK(Floor_AnyObject);
