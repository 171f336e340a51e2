// Objects: each Ferry operation (BM_Ferry_X) beside its plain-C++ floor (BM_Floor_X) and, when
// the build has the peer, apache-tvm-ffi's (BM_TvmFfi_X), in the same run. The operations
// themselves are in ops.h and ops_tvm_ffi.h, shared with callgrind_ops.cc.
#include "ops.h"

FERRY_BENCHMARK(Ferry_MakeDrop);
FERRY_BENCHMARK(Floor_MakeDrop);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_MakeDrop);
#endif
FERRY_BENCHMARK(Ferry_CopyDrop);
FERRY_BENCHMARK(Floor_CopyDrop);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_CopyDrop);
#endif
FERRY_BENCHMARK(Ferry_IsInstanceHit);
FERRY_BENCHMARK(Floor_IsInstanceHit);
FERRY_BENCHMARK(Ferry_IsInstanceMiss);
FERRY_BENCHMARK(Floor_IsInstanceMiss);
FERRY_BENCHMARK(Ferry_AsHit);
FERRY_BENCHMARK(Floor_AsHit);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_AsHit);
#endif
FERRY_BENCHMARK(Ferry_Downcast);
FERRY_BENCHMARK(Floor_Downcast);
FERRY_BENCHMARK(Ferry_StringShort);
FERRY_BENCHMARK(Floor_StringShort);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_StringShort);
#endif
FERRY_BENCHMARK(Ferry_String40);
FERRY_BENCHMARK(Floor_String40);
#ifdef FERRY_BENCH_TVM_FFI
FERRY_BENCHMARK(TvmFfi_String40);
#endif
