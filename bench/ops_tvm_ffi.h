// The peer's side of ops.h: the same operations through apache-tvm-ffi's C++ API (its wheel's
// headers and libtvm_ffi.so), as `TvmFfi_X` beside `Ferry_X` and `Floor_X`, so the three run in
// one binary and one run. Included by ops.h only when the build found the wheel
// (FERRY_BENCH_TVM_FFI, set by bench/CMakeLists.txt from what scripts/bench.sh passes).
//
// Each struct does what its Ferry twin in ops.h does, with tvm-ffi's spelling of the same API:
// make_object, Object::IsInstance, Function::FromTyped, TypedFunction, String.
#ifndef FERRY_BENCH_OPS_TVM_FFI_H_
#define FERRY_BENCH_OPS_TVM_FFI_H_

#include <benchmark/benchmark.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ferry_bench {
namespace tvmffi_types {

namespace ffi = ::tvm::ffi;

/// SmallNode of ops.h: tvm-ffi's 16-byte header (a 64-bit count word, the type index) and
/// one int64.
class SmallObj : public ffi::Object {
 public:
  int64_t value = 1;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_peer.Small", SmallObj, ffi::Object);
};

// The hierarchy of ops.h with tvm-ffi's macros: Base > Mid > Leaf and Base > Other >
// OtherLeaf, Base reserving 4 child slots and Mid and Other 1 each (itself plus its leaf), so
// a Leaf tested against Mid is a hit in Mid's reserved range, as in Ferry's row.
class BaseObj : public ffi::Object {
 public:
  static constexpr uint32_t _type_child_slots = 4;
  static constexpr bool _type_child_slots_can_overflow = true;
  TVM_FFI_DECLARE_OBJECT_INFO("bench_peer.Base", BaseObj, ffi::Object);
};
class MidObj : public BaseObj {
 public:
  static constexpr uint32_t _type_child_slots = 1;
  TVM_FFI_DECLARE_OBJECT_INFO("bench_peer.Mid", MidObj, BaseObj);
};
class LeafObj : public MidObj {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_peer.Leaf", LeafObj, MidObj);
};
class OtherObj : public BaseObj {
 public:
  static constexpr uint32_t _type_child_slots = 1;
  TVM_FFI_DECLARE_OBJECT_INFO("bench_peer.Other", OtherObj, BaseObj);
};
class OtherLeafObj : public OtherObj {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_peer.OtherLeaf", OtherLeafObj, OtherObj);
};

}  // namespace tvmffi_types

// ------------------------------------------------------------------------------------------
// Objects.

/// tvm::ffi::make_object<T>() and drop the only reference.
struct TvmFfi_MakeDrop {
  void operator()() {
    tvm::ffi::ObjectPtr<tvmffi_types::SmallObj> p = tvm::ffi::make_object<tvmffi_types::SmallObj>();
    DoNotOptimize(p.get());
  }
};

/// Copy a tvm::ffi::ObjectRef and drop the copy: its count increment and decrement.
struct TvmFfi_CopyDrop {
  tvm::ffi::ObjectRef ref{tvm::ffi::make_object<tvmffi_types::SmallObj>()};
  void operator()() {
    tvm::ffi::ObjectRef copy = ref;
    DoNotOptimize(copy.get());
  }
};

/// A Leaf as a Mid: tvm-ffi's ObjectRef::as<MidObj>() without its null test (Ferry's row calls
/// Object::as, which has none either), i.e. Object::IsInstance and the cast. The constructor
/// checks that the Leaf's index does fall in Mid's reserved slots.
struct TvmFfi_AsHit {
  tvm::ffi::ObjectRef leaf{tvm::ffi::make_object<tvmffi_types::LeafObj>()};
  const tvm::ffi::Object* obj = leaf.get();
  TvmFfi_AsHit() {
    using tvmffi_types::MidObj;
    const int32_t begin = MidObj::RuntimeTypeIndex();
    const int32_t index = obj->type_index();
    if (index <= begin || index > begin + static_cast<int32_t>(MidObj::_type_child_slots)) {
      std::fprintf(stderr, "tvm-ffi's Leaf (index %d) is outside Mid's reserved slots (%d..%d)\n",
                   index, begin, begin + static_cast<int32_t>(MidObj::_type_child_slots));
      std::abort();
    }
  }
  void operator()() {
    using tvmffi_types::MidObj;
    DoNotOptimize(obj);
    DoNotOptimize(obj->IsInstance<MidObj>() ? static_cast<const MidObj*>(obj) : nullptr);
  }
};

/// tvm::ffi::String from a 5-byte literal (tvm-ffi keeps up to 7 bytes inline) and drop.
struct TvmFfi_StringShort {
  void operator()() {
    tvm::ffi::String s("short");
    DoNotOptimize(s.data());
  }
};
/// tvm::ffi::String from a 40-byte literal (one allocation) and drop.
struct TvmFfi_String40 {
  void operator()() {
    tvm::ffi::String s("a string literal that is forty bytes lon");
    DoNotOptimize(s.data());
  }
};

// ------------------------------------------------------------------------------------------
// Functions.

/// tvm::ffi::Function::FromTyped(lambda) (no name) and drop it.
struct TvmFfi_FromTypedDrop {
  void operator()() {
    tvm::ffi::Function f =
        tvm::ffi::Function::FromTyped([](int64_t a, int64_t b) { return Add(a, b); });
    DoNotOptimize(f.get());
  }
};

/// add(x, 2) through tvm::ffi::TypedFunction<int64_t(int64_t, int64_t)> around
/// Function::FromTyped with a name, as Ferry_TypedCall.
struct TvmFfi_TypedCall {
  tvm::ffi::TypedFunction<int64_t(int64_t, int64_t)> f{
      tvm::ffi::Function::FromTyped([](int64_t a, int64_t b) { return Add(a, b); }, "add")};
  int64_t x = 1;
  void operator()() {
    DoNotOptimize(x);
    DoNotOptimize(f(x, 2));
  }
};

}  // namespace ferry_bench

#endif  // FERRY_BENCH_OPS_TVM_FFI_H_
