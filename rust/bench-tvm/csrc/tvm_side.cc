// The C++ functions the Rust benchmark calls through tvm-ffi: the bodies of ferry_side.cc,
// registered with tvm-ffi's own registry.
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

extern "C" void tvm_bench_register() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("bench.add", [](int64_t a, int64_t b) { return a + b; })
      .def("bench.inc", [](int64_t x) { return x + 1; })
      .def("bench.call_n", [](tvm::ffi::Function f, int64_t n, tvm::ffi::Any arg) {
        tvm::ffi::Any last;
        for (int64_t i = 0; i < n; ++i) last = f(arg);
        return last;
      });
}
