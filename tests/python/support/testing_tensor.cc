// Tensor functions of the Python tests' support library: C++ that reads, writes, keeps and makes
// tensors, so tests can check that NumPy and C++ see the same memory.
#include <ferry/ferry.h>

#include <cstring>
#include <memory>  // shared_ptr
#include <vector>

namespace {

using namespace ferry;

/// Calls `f(element pointer)` for every element of a host tensor, in row-major order.
template <typename F>
void ForEach(const ConstTensor& t, F f) {
  const int64_t elem = (t.dtype().bits() * t.dtype().lanes() + 7) / 8;
  std::vector<int64_t> index(static_cast<size_t>(t.ndim()), 0);
  for (int64_t k = 0; k < t.numel(); ++k) {
    int64_t offset = 0;
    for (int32_t d = 0; d < t.ndim(); ++d) offset += index[d] * t.strides()[d];
    f(static_cast<char*>(const_cast<void*>(t.data_ptr())) + offset * elem);
    for (int32_t d = t.ndim() - 1; d >= 0; --d) {
      if (++index[d] < t.shape()[d]) break;
      index[d] = 0;
    }
  }
}

double ReadAsDouble(const char* p, DataType dtype) {
  auto read = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return static_cast<double>(v);
  };
  if (dtype == DataType::Float(64)) return read(double{});
  if (dtype == DataType::Float(32)) return read(float{});
  if (dtype == DataType::Int(64)) return read(int64_t{});
  if (dtype == DataType::Int(32)) return read(int32_t{});
  if (dtype == DataType::Int(8)) return read(int8_t{});
  if (dtype == DataType::UInt(8)) return read(uint8_t{});
  FERRY_THROW(TypeError) << "test.tensor_sum: unsupported dtype " << dtype;
}

void WriteDouble(char* p, DataType dtype, double value) {
  auto write = [p](auto v) { std::memcpy(p, &v, sizeof(v)); };
  if (dtype == DataType::Float(64)) return write(value);
  if (dtype == DataType::Float(32)) return write(static_cast<float>(value));
  if (dtype == DataType::Int(64)) return write(static_cast<int64_t>(value));
  if (dtype == DataType::Int(32)) return write(static_cast<int32_t>(value));
  FERRY_THROW(TypeError) << "test.tensor_fill: unsupported dtype " << dtype;
}

Tensor kept;  // test.tensor_keep / test.tensor_drop

FERRY_REGISTER_GLOBAL("test.tensor_identity").set_body_typed([](Tensor t) { return t; }, {"t"});
FERRY_REGISTER_GLOBAL("test.tensor_sum")
    .set_body_typed(
        [](ConstTensor t) {
          double sum = 0;
          ForEach(t, [&](const char* p) { sum += ReadAsDouble(p, t.dtype()); });
          return sum;
        },
        {"t"});
FERRY_REGISTER_GLOBAL("test.tensor_fill")
    .set_body_typed(
        [](Tensor t, double value) {  // a Tensor parameter: never a read-only one
          ForEach(t, [&](char* p) { WriteDouble(p, t.dtype(), value); });
        },
        {"t", "value"});
FERRY_REGISTER_GLOBAL("test.tensor_keep").set_body_typed([](Tensor t) { kept = t; });
FERRY_REGISTER_GLOBAL("test.tensor_drop").set_body_typed([]() { kept = Tensor(); });
FERRY_REGISTER_GLOBAL("test.tensor_ndim_ptr").set_body_typed([](DLTensor* t) { return t->ndim; });
FERRY_REGISTER_GLOBAL("test.tensor_ndim_const_ptr").set_body_typed([](const DLTensor* t) {
  return t->ndim;
});
/// The first element of a float64 tensor through a `const DLTensor*`.
FERRY_REGISTER_GLOBAL("test.tensor_first_const_ptr").set_body_typed([](const DLTensor* t) {
  double v;
  std::memcpy(&v, static_cast<const char*>(t->data) + t->byte_offset, sizeof(v));
  return v;
});
FERRY_REGISTER_GLOBAL("test.tensor_empty").set_body_typed([](Shape shape, DataType dtype) {
  return Tensor::Empty(std::vector<int64_t>(shape.begin(), shape.end()), dtype);
});
/// [ndim, numel, nbytes, contiguous, read-only, data address % 64]
FERRY_REGISTER_GLOBAL("test.tensor_info").set_body_typed([](ConstTensor t) {
  return Array<int64_t>{
      t.ndim(),       t.numel(),
      t.nbytes(),     t.IsContiguous(),
      t.IsReadOnly(), static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64)};
});
FERRY_REGISTER_GLOBAL("test.tensor_use_count").set_body_typed([](ConstTensor t) {
  return t.use_count() - 1;  // not counting the argument's own reference
});
/// Calls f(t) with a DLTensor* borrowed from t (a plain cell, not the Tensor object).
FERRY_REGISTER_GLOBAL("test.tensor_call_with_ptr").set_body_typed([](Tensor t, Function f) {
  DLTensor view = *t.GetDLTensorPtr();
  return f(&view);
});
/// Calls f(t) with a `const DLTensor*` borrowed from t: Python sees a read-only view.
FERRY_REGISTER_GLOBAL("test.tensor_call_with_const_ptr")
    .set_body_typed([](ConstTensor t, Function f) {
      const DLTensor* view = t.GetDLTensorPtr();
      return f(view);
    });
/// ToDLPackVersioned through a ConstTensor: the flags the hand-over carries.
FERRY_REGISTER_GLOBAL("test.tensor_const_export_flags").set_body_typed([](ConstTensor t) {
  DLManagedTensorVersioned* out = t.ToDLPackVersioned();
  const auto flags = static_cast<int64_t>(out->flags);
  out->deleter(out);
  return flags;
});

/// A Function whose destruction calls `f()`: C++ code run by a Python dealloc, to check that a
/// dealloc during an exception's propagation keeps that exception.
FERRY_REGISTER_GLOBAL("test.call_on_destroy").set_body_typed([](Function f) {
  class CallOnDestroy {
   public:
    explicit CallOnDestroy(Function f) : f_(std::move(f)) {}
    CallOnDestroy(const CallOnDestroy&) = delete;
    CallOnDestroy& operator=(const CallOnDestroy&) = delete;
    ~CallOnDestroy() {
      try {
        f_();
      } catch (...) {  // a destructor may not throw; the test sees the call through f's effect
      }
    }

   private:
    Function f_;
  };
  auto holder = std::make_shared<CallOnDestroy>(std::move(f));
  return Function::FromTyped([holder]() {});
});

}  // namespace
