// libdemo.so of the Rust tests: the README's demo library (demo.add, demo.call, the node
// demo.IntImm) plus a few globals that let the tests drive Rust closures from C++ (many calls,
// many threads, errors caught in C++). Built by tests/common/mod.rs against the libferry that
// ferry-sys links.
#include <ferry/ferry.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace ferry;

class IntImmNode : public Object {
 public:
  int64_t value = 0;
  void VisitAttrs(AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "demo.IntImm";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntImmNode, Object);
};
FERRY_REGISTER_NODE_TYPE(IntImmNode);

FERRY_REGISTER_GLOBAL("demo.add").set_body_typed([](int64_t a, int64_t b) { return a + b; });
FERRY_REGISTER_GLOBAL("demo.call").set_body_typed([](Function f) { return f(41); });

/// Calls f(arg) n times from C++ and returns the last result.
FERRY_REGISTER_GLOBAL("demo.call_n").set_body_typed([](Function f, int64_t n, Any arg) {
  Any last;
  for (int64_t i = 0; i < n; ++i) last = f(arg);
  return last;
});

/// Calls f(i) `per_thread` times from each of `threads` C++ threads and returns the sum of the
/// int results; the first error any thread saw is rethrown here.
FERRY_REGISTER_GLOBAL("demo.call_threads")
    .set_body_typed([](Function f, int64_t threads, int64_t per_thread) {
      std::atomic<int64_t> sum{0};
      std::vector<Optional<Error>> errors(static_cast<size_t>(threads));
      std::vector<std::thread> pool;
      for (int64_t t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          try {
            for (int64_t i = 0; i < per_thread; ++i) sum += f(i).cast<int64_t>();
          } catch (const Error& e) {
            errors[static_cast<size_t>(t)] = e;
          }
        });
      }
      for (std::thread& th : pool) th.join();
      for (const Optional<Error>& e : errors) {
        if (e.has_value()) throw e.value();
      }
      return sum.load();
    });

/// Calls f(arg) and returns "kind: message" of the ferry::Error C++ caught, or "no error".
FERRY_REGISTER_GLOBAL("demo.catch").set_body_typed([](Function f, Any arg) -> std::string {
  try {
    f(arg);
  } catch (const Error& e) {
    return std::string(e.kind().view()) + ": " + std::string(e.message().view());
  }
  return "no error";
});

/// Throws an error of `kind` with `message`.
FERRY_REGISTER_GLOBAL("demo.raise").set_body_typed([](String kind, String message) -> int64_t {
  throw Error(kind, message);
});

/// The sum of a float64 tensor's elements, read in C++.
FERRY_REGISTER_GLOBAL("demo.tensor_sum").set_body_typed([](Tensor t) {
  FERRY_CHECK(t.dtype() == DataType("float64") && t.IsContiguous()) << "float64, contiguous";
  const double* data = static_cast<const double*>(t.data_ptr());
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += data[i];
  return sum;
});
/// Whether C++ sees the tensor as read-only: the flags of its object, read through the C ABI's
/// layout (an ObjectRef parameter takes any tensor, where a `Tensor` one may refuse read-only
/// data).
FERRY_REGISTER_GLOBAL("demo.tensor_is_read_only").set_body_typed([](ObjectRef t) {
  FERRY_CHECK(t.defined() && t.get()->type_index() == kFerryTensor) << "expected a tensor";
  const auto* raw = reinterpret_cast<const FerryTensorObject*>(t.get());
  return (raw->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
});
/// A float64 tensor [0, 1, ..., n-1] made in C++.
FERRY_REGISTER_GLOBAL("demo.arange").set_body_typed([](int64_t n) {
  Tensor t = Tensor::Empty({n}, DataType("float64"), DLDevice{kDLCPU, 0});
  double* data = static_cast<double*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<double>(i);
  return t;
});

/// x + 1: the C++ floor of a Rust closure called from C++ (benches/calls.rs).
FERRY_REGISTER_GLOBAL("demo.inc").set_body_typed([](int64_t x) { return x + 1; });
