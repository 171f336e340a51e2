// What an error costs in C++ (docs/benchmarks.md, "Errors"): a FERRY_THROW caught in C++, with
// and without asking for its backtrace text, and a C++ error reaching a C ABI caller, each
// beside its floor, a plain `throw std::runtime_error` caught by the same caller. Each is run
// from a shallow stack and from under 40 more frames (a caller as deep as a Python program's
// interpreter stack): capturing the frames costs in proportion to the stack's depth.
// FERRY_BACKTRACE=0 in the environment measures the same without any capture.
#include <stdexcept>

#include "ops.h"

namespace ferry_bench {
namespace {

[[gnu::noinline]] void ThrowFerry() { FERRY_THROW(ValueError) << "x"; }
[[gnu::noinline]] void ThrowPlain() { throw std::runtime_error("ValueError: x"); }

/// Runs `f` under `depth` more frames (not inlined, not a tail call).
template <typename F>
[[gnu::noinline]] void UnderFrames(int depth, F&& f) {
  if (depth == 0) {
    f();
  } else {
    UnderFrames(depth - 1, f);
  }
  DoNotOptimize(depth);
}

template <int Depth>
struct Ferry_ThrowCatch {
  void operator()() {
    UnderFrames(Depth, [] {
      try {
        ThrowFerry();
      } catch (const Error& e) {
        DoNotOptimize(e.get());
      }
    });
  }
};
template <int Depth>
struct Floor_ThrowCatch {
  void operator()() {
    UnderFrames(Depth, [] {
      try {
        ThrowPlain();
      } catch (const std::exception& e) {
        DoNotOptimize(e.what());
      }
    });
  }
};

/// The backtrace text asked for: the frames symbolized (each address once per process, then
/// from the cache) and the text made.
template <int Depth>
struct Ferry_ThrowCatchText {
  void operator()() {
    UnderFrames(Depth, [] {
      try {
        ThrowFerry();
      } catch (const Error& e) {
        DoNotOptimize(e.backtrace().size());
      }
    });
  }
};

/// A registered function that throws, called through the C ABI: -1, then the raised error is
/// taken and released, as a frontend does before making its own exception.
template <int Depth>
struct Ferry_CApiError {
  FerryObjectHandle f = nullptr;
  FerryAny arg{};
  Ferry_CApiError() {
    Function::SetGlobal("bench.throw", Function::FromTyped([](int64_t) { ThrowFerry(); }),
                        /*override=*/true);
    FerryFunctionGetGlobal("bench.throw", &f);
    arg.type_index = kFerryInt;
    arg.v_int64 = 1;
  }
  ~Ferry_CApiError() { FerryObjectDecRef(f); }
  Ferry_CApiError(const Ferry_CApiError&) = delete;
  Ferry_CApiError& operator=(const Ferry_CApiError&) = delete;
  void operator()() {
    UnderFrames(Depth, [this] {
      FerryAny result;
      if (FerryFunctionCall(f, &arg, 1, &result) != 0) {
        FerryObjectHandle error = nullptr;
        FerryErrorMoveFromRaised(&error);
        FerryObjectDecRef(error);
      }
    });
  }
};
/// Its floor: a std::function that throws, caught and turned into a return code.
template <int Depth>
struct Floor_CApiError {
  std::function<void(int64_t)> f = [](int64_t) { ThrowPlain(); };
  void operator()() {
    UnderFrames(Depth, [this] {
      int rc = 0;
      try {
        f(1);
      } catch (const std::exception& e) {
        DoNotOptimize(e.what());
        rc = -1;
      }
      DoNotOptimize(rc);
    });
  }
};

using Ferry_ThrowCatch_0 = Ferry_ThrowCatch<0>;
using Floor_ThrowCatch_0 = Floor_ThrowCatch<0>;
using Ferry_ThrowCatchText_0 = Ferry_ThrowCatchText<0>;
using Ferry_CApiError_0 = Ferry_CApiError<0>;
using Floor_CApiError_0 = Floor_CApiError<0>;
using Ferry_ThrowCatch_40 = Ferry_ThrowCatch<40>;
using Floor_ThrowCatch_40 = Floor_ThrowCatch<40>;
using Ferry_ThrowCatchText_40 = Ferry_ThrowCatchText<40>;
using Ferry_CApiError_40 = Ferry_CApiError<40>;
using Floor_CApiError_40 = Floor_CApiError<40>;

}  // namespace
}  // namespace ferry_bench

FERRY_BENCHMARK(Ferry_ThrowCatch_0);
FERRY_BENCHMARK(Floor_ThrowCatch_0);
FERRY_BENCHMARK(Ferry_ThrowCatchText_0);
FERRY_BENCHMARK(Ferry_CApiError_0);
FERRY_BENCHMARK(Floor_CApiError_0);
FERRY_BENCHMARK(Ferry_ThrowCatch_40);
FERRY_BENCHMARK(Floor_ThrowCatch_40);
FERRY_BENCHMARK(Ferry_ThrowCatchText_40);
FERRY_BENCHMARK(Ferry_CApiError_40);
FERRY_BENCHMARK(Floor_CApiError_40);
