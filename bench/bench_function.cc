// Functions and values: each Ferry operation (BM_Ferry_X) beside its plain-C++ floor
// (BM_Floor_X), in the same run. The operations themselves are in ops.h, shared with
// callgrind_ops.cc.
#include "ops.h"

FERRY_BENCHMARK(Ferry_FromTypedDrop);
FERRY_BENCHMARK(Floor_FromTypedDrop);
FERRY_BENCHMARK(Ferry_TypedCall);
FERRY_BENCHMARK(Floor_TypedCall);
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
