// The functions the benchmark needs from tvm-ffi that its wheel does not ship among its testing
// globals (it has testing.nop and testing.echo, but no two-int add, no "call a callback n
// times" and no typed Tensor function). Exported as a tvm-ffi module and loaded with
// tvm_ffi.load_module; the bodies match test.add and test.call_n of Ferry's test-support library
// (tests/python/support).
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

int64_t Add(int64_t a, int64_t b) { return a + b; }

int64_t CallN(tvm::ffi::Function f, int64_t n) {
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += f(i).cast<int64_t>();
  return sum;
}

// A typed Tensor parameter and result, as test.tensor_identity in Ferry's support library.
tvm::ffi::Tensor TensorIdentity(tvm::ffi::Tensor t) { return t; }

// A C++ error reaching Python, as test.raise_value_error (bench_errors.py).
void RaiseValueError(tvm::ffi::String message) { TVM_FFI_THROW(ValueError) << message; }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_identity, TensorIdentity);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_n, CallN);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_value_error, RaiseValueError);
