// The C++ functions the Rust benchmark calls through Ferry: add(a, b), inc(x), and call_n(f, n,
// arg), a C++ loop calling f(arg) n times. The same bodies as tvm_side.cc.
#include <ferry/function.h>

#include <cstdint>

extern "C" void ferry_bench_register() {
  using ferry::Any;
  using ferry::Function;
  Function::SetGlobal("bench.add",
                      Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "bench.add"),
                      true);
  Function::SetGlobal("bench.inc",
                      Function::FromTyped([](int64_t x) { return x + 1; }, "bench.inc"), true);
  Function::SetGlobal("bench.call_n",
                      Function::FromTyped(
                          [](Function f, int64_t n, Any arg) {
                            Any last;
                            for (int64_t i = 0; i < n; ++i) last = f(arg);
                            return last;
                          },
                          "bench.call_n"),
                      true);
}
