// The peer's side of bench_transform.cc: the same balanced tree of Num and Pair nodes declared
// with apache-tvm-ffi's macros and reflection, rewritten by its StructuralMap (post-order; a
// callback on Num returns a replacement or Unchanged), as `TvmFfi_X` beside `Ferry_X` and
// `Floor_X`. Only with FERRY_BENCH_TVM_FFI (scripts/bench.sh passes the pinned wheel's headers
// and libtvm_ffi.so); never needed by CI.
//
// StructuralMap calls its callback at every occurrence of a node and keeps no memo of its
// own (a tree has no shared nodes, so the work is the same as Ferry's); it checks uniqueness
// to allow in-place reuse along uniquely owned paths, which the benchmark does not use (the
// input tree stays alive, so every path is shared by the input and the walk).
#ifndef FERRY_BENCH_TRANSFORM_TVM_FFI_H_
#define FERRY_BENCH_TRANSFORM_TVM_FFI_H_

#include <tvm/ffi/extra/structural_mutate.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

namespace ferry_bench {
namespace tvmffi_tree {

namespace ffi = ::tvm::ffi;

class NumObj : public ffi::Object {
 public:
  int64_t value = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_peer.Num", NumObj, ffi::Object);
};
class Num : public ffi::ObjectRef {
 public:
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Num, ffi::ObjectRef, NumObj);
};
class PairObj : public ffi::Object {
 public:
  ffi::ObjectRef a, b;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_peer.Pair", PairObj, ffi::Object);
};

inline ffi::ObjectRef MakeNum(int64_t v) {
  ffi::ObjectPtr<NumObj> n = ffi::make_object<NumObj>();
  n->value = v;
  return ffi::ObjectRef(n);
}
inline ffi::ObjectRef MakePair(ffi::ObjectRef a, ffi::ObjectRef b) {
  ffi::ObjectPtr<PairObj> n = ffi::make_object<PairObj>();
  n->a = std::move(a);
  n->b = std::move(b);
  return ffi::ObjectRef(n);
}
/// The tree of structural_nodes.h's Tree: `leaves` leaves numbered from `first`.
inline ffi::ObjectRef MakeTree(int64_t first, int64_t leaves) {
  if (leaves == 1) return MakeNum(first);
  return MakePair(MakeTree(first, leaves / 2), MakeTree(first + leaves / 2, leaves - leaves / 2));
}

/// StructuralMap with the leaf rule `f` (as transform_floor.h's LeafRule).
template <typename F>
ffi::Any Map(const ffi::ObjectRef& tree, const F& f) {
  return ffi::StructuralMap<ffi::WalkOrder::kPostOrder>(
      ffi::Any(tree), [&f](const Num& num) -> ffi::UnchangedOr<ffi::Any> {
        const int64_t v = f(num->value);
        if (v < 0) return ffi::Unchanged();
        return ffi::Any(MakeNum(v));
      });
}

}  // namespace tvmffi_tree
}  // namespace ferry_bench

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  using ferry_bench::tvmffi_tree::NumObj;
  using ferry_bench::tvmffi_tree::PairObj;
  refl::ObjectDef<NumObj>().def_ro("value", &NumObj::value);
  refl::ObjectDef<PairObj>().def_ro("a", &PairObj::a).def_ro("b", &PairObj::b);
}

#endif  // FERRY_BENCH_TRANSFORM_TVM_FFI_H_
