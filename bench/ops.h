// The operations the benchmarks measure, each written once and run two ways: timed by Google
// Benchmark (bench_object.cc, bench_function.cc) and counted by callgrind (callgrind_ops.cc).
//
// An operation is a struct whose constructor does the setup and whose operator() is one
// repetition. `Ferry_X` is the Ferry operation, `Floor_X` the plain-C++ code doing the same
// work and `TvmFfi_X` (ops_tvm_ffi.h, when the build has the peer) the same operation through
// apache-tvm-ffi; bench/report.py gives Ferry / floor and Ferry / tvm-ffi. benchmark::DoNotOptimize
// keeps every result alive, so neither side can be folded away: it forces the value into a register
// or memory and tells the compiler that memory may have been read or written.
#ifndef FERRY_BENCH_OPS_H_
#define FERRY_BENCH_OPS_H_

#include <benchmark/benchmark.h>
#include <ferry/ferry.h>

#include <any>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

namespace ferry_bench {

using benchmark::DoNotOptimize;
using namespace ferry;

/// glibc and libstdc++ skip atomic instructions while a process has one thread
/// (__libc_single_threaded): a shared_ptr copy becomes a plain add. Ferry's counts are always
/// atomic, and the programs Ferry lives in (Python, servers) have threads, so every benchmark
/// program starts and joins one thread before anything is measured; the flag never resets.
inline const bool kProcessIsMultiThreaded = [] {
  std::thread([] {}).join();
  return true;
}();

// ------------------------------------------------------------------------------------------
// Types.

/// A small object: the 16-byte header and one int64.
class SmallNode : public Object {
 public:
  int64_t value = 1;
  static constexpr const char* _type_key = "bench.Small";
  FERRY_DECLARE_FINAL_OBJECT_INFO(SmallNode, Object);
};
class Small : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Small, ObjectRef, SmallNode);
};
/// The same 24 bytes as a plain struct.
struct PlainSmall {
  int32_t count = 1;
  int32_t type = 0;
  void* deleter = nullptr;
  int64_t value = 1;
};
static_assert(sizeof(PlainSmall) == sizeof(SmallNode), "the floor must allocate the same size");

// Two three-level hierarchies under one base: Base > Mid > Leaf and Base > Other > OtherLeaf.
// Leaf and OtherLeaf are at depth 3. Base reserves 4 child slots: Mid takes 2 (itself and
// Leaf), Other the next 2, so OtherLeaf's index is above Mid's range and a miss takes the
// ancestor-chain path (TypeIsDerivedFrom) rather than the one-comparison early exit.
class BaseNode : public Object {
 public:
  static constexpr const char* _type_key = "bench.Base";
  static constexpr int32_t _type_child_slots = 4;
  FERRY_DECLARE_BASE_OBJECT_INFO(BaseNode, Object);
};
class MidNode : public BaseNode {
 public:
  static constexpr const char* _type_key = "bench.Mid";
  static constexpr int32_t _type_child_slots = 1;
  FERRY_DECLARE_BASE_OBJECT_INFO(MidNode, BaseNode);
};
class LeafNode : public MidNode {
 public:
  static constexpr const char* _type_key = "bench.Leaf";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LeafNode, MidNode);
};
class OtherNode : public BaseNode {
 public:
  static constexpr const char* _type_key = "bench.Other";
  static constexpr int32_t _type_child_slots = 1;
  FERRY_DECLARE_BASE_OBJECT_INFO(OtherNode, BaseNode);
};
class OtherLeafNode : public OtherNode {
 public:
  static constexpr const char* _type_key = "bench.OtherLeaf";
  FERRY_DECLARE_FINAL_OBJECT_INFO(OtherLeafNode, OtherNode);
};
class Mid : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Mid, ObjectRef, MidNode);
};

/// Registers the hierarchy in a fixed order (types otherwise register at first use, and the
/// order decides the indices and so which IsInstance path a miss takes).
inline void RegisterHierarchy() {
  (void)LeafNode::RuntimeTypeIndex();
  (void)OtherLeafNode::RuntimeTypeIndex();
}

/// The plain C++ hierarchy with the same shape, for dynamic_cast.
struct PBase {
  virtual ~PBase() = default;
};
struct PMid : PBase {};
struct PLeaf : PMid {};
struct POther : PBase {};
struct POtherLeaf : POther {};

inline int64_t Add(int64_t a, int64_t b) { return a + b; }

// ------------------------------------------------------------------------------------------
// Objects.

/// make_object<T>() and drop the only reference.
struct Ferry_MakeDrop {
  void operator()() {
    ObjectPtr<SmallNode> p = make_object<SmallNode>();
    DoNotOptimize(p.get());
  }
};
struct Floor_MakeDrop {
  void operator()() {
    auto* p = new PlainSmall();
    DoNotOptimize(p);
    delete p;
  }
};

/// Copy an ObjectRef and drop the copy: one count increment and one decrement.
struct Ferry_CopyDrop {
  ObjectRef ref{make_object<SmallNode>()};
  void operator()() {
    ObjectRef copy = ref;
    DoNotOptimize(copy.get());
  }
};
struct Floor_CopyDrop {
  std::atomic<int32_t> count{1};
  void operator()() {
    count.fetch_add(1, std::memory_order_relaxed);
    DoNotOptimize(&count);
    count.fetch_sub(1, std::memory_order_acq_rel);
  }
};

/// A depth-3 object tested against its depth-2 ancestor.
struct Ferry_IsInstanceHit {
  ObjectRef leaf{(RegisterHierarchy(), make_object<LeafNode>())};
  const Object* obj = leaf.get();
  void operator()() {
    DoNotOptimize(obj);
    DoNotOptimize(obj->IsInstance<MidNode>());
  }
};
struct Floor_IsInstanceHit {
  std::unique_ptr<PBase> owner{new PLeaf()};
  PBase* obj = owner.get();
  void operator()() {
    DoNotOptimize(obj);
    DoNotOptimize(dynamic_cast<PMid*>(obj));
  }
};
/// A depth-3 object tested against the depth-2 type of the other branch.
struct Ferry_IsInstanceMiss {
  ObjectRef leaf{(RegisterHierarchy(), make_object<OtherLeafNode>())};
  const Object* obj = leaf.get();
  void operator()() {
    DoNotOptimize(obj);
    DoNotOptimize(obj->IsInstance<MidNode>());
  }
};
struct Floor_IsInstanceMiss {
  std::unique_ptr<PBase> owner{new POtherLeaf()};
  PBase* obj = owner.get();
  void operator()() {
    DoNotOptimize(obj);
    DoNotOptimize(dynamic_cast<PMid*>(obj));
  }
};

/// obj->as<MidNode>() of a Leaf (a hit in Mid's reserved slots). dynamic_cast, the C++
/// language's answer, is the IsInstanceHit row's floor; this row's floor is the least any
/// type test can do: the same loop with one load of the object's type index and one compare
/// against a constant, as if T's index were known at compile time (a final type with a static
/// index). The constant need not match: the select costs the same either way.
struct Ferry_AsHit {
  ObjectRef leaf{(RegisterHierarchy(), make_object<LeafNode>())};
  const Object* obj = leaf.get();
  void operator()() {
    DoNotOptimize(obj);
    DoNotOptimize(obj->as<MidNode>());
  }
};
struct Floor_AsHit {
  static constexpr int32_t kIndex = 200;
  ObjectRef leaf{(RegisterHierarchy(), make_object<LeafNode>())};
  const Object* obj = leaf.get();
  void operator()() {
    DoNotOptimize(obj);
    DoNotOptimize(obj->type_index() == kIndex ? static_cast<const MidNode*>(obj) : nullptr);
  }
};

/// Downcast<Mid>(ref) of a Leaf: the type check plus the new reference it returns.
struct Ferry_Downcast {
  ObjectRef leaf{(RegisterHierarchy(), make_object<LeafNode>())};
  void operator()() {
    Mid mid = Downcast<Mid>(leaf);
    DoNotOptimize(mid.get());
  }
};
/// dynamic_cast plus the count increment and decrement of the reference a Downcast returns.
struct Floor_Downcast {
  std::unique_ptr<PBase> owner{new PLeaf()};
  PBase* obj = owner.get();
  std::atomic<int32_t> count{1};
  void operator()() {
    DoNotOptimize(obj);
    PMid* mid = dynamic_cast<PMid*>(obj);
    count.fetch_add(1, std::memory_order_relaxed);
    DoNotOptimize(mid);
    count.fetch_sub(1, std::memory_order_acq_rel);
  }
};

/// String from a 5-byte literal vs std::string (which keeps up to 15 bytes inline).
struct Ferry_StringShort {
  void operator()() {
    String s("short");
    DoNotOptimize(s.data());
  }
};
struct Floor_StringShort {
  void operator()() {
    std::string s("short");
    DoNotOptimize(s.data());
  }
};
/// String from a 40-byte literal vs std::string (both allocate).
struct Ferry_String40 {
  void operator()() {
    String s("a string literal that is forty bytes lon");
    DoNotOptimize(s.data());
  }
};
struct Floor_String40 {
  void operator()() {
    std::string s("a string literal that is forty bytes lon");
    DoNotOptimize(s.data());
  }
};
static_assert(sizeof("a string literal that is forty bytes lon") == 41, "40 bytes + NUL");

// ------------------------------------------------------------------------------------------
// Functions and values.

/// add(x, 2) through TypedFunction<int64_t(int64_t, int64_t)> around Function::FromTyped.
struct Ferry_TypedCall {
  TypedFunction<int64_t(int64_t, int64_t)> f{
      Function::FromTyped([](int64_t a, int64_t b) { return Add(a, b); }, "add")};
  int64_t x = 1;
  void operator()() {
    DoNotOptimize(x);
    DoNotOptimize(f(x, 2));
  }
};
/// Function::FromTyped(lambda) and drop it (no name given), vs a std::function of the same
/// lambda (kept inline, no allocation) made and dropped.
struct Ferry_FromTypedDrop {
  void operator()() {
    Function f = Function::FromTyped([](int64_t a, int64_t b) { return Add(a, b); });
    DoNotOptimize(f.get());
  }
};
struct Floor_FromTypedDrop {
  void operator()() {
    std::function<int64_t(int64_t, int64_t)> f{[](int64_t a, int64_t b) { return Add(a, b); }};
    DoNotOptimize(f);
  }
};

/// The same lambda through std::function. DoNotOptimize(f) in the constructor hides the target
/// from the optimizer, so the call stays an indirect call as in real use.
struct Floor_TypedCall {
  std::function<int64_t(int64_t, int64_t)> f{[](int64_t a, int64_t b) { return Add(a, b); }};
  int64_t x = 1;
  Floor_TypedCall() { DoNotOptimize(f); }
  void operator()() {
    DoNotOptimize(x);
    DoNotOptimize(f(x, 2));
  }
};

/// Registers "bench.add" once; every program that looks it up calls this first.
inline void RegisterAdd() {
  static const bool done = [] {
    Function::SetGlobal("bench.add", Function::FromTyped(&Add, "bench.add"), true);
    return true;
  }();
  (void)done;
}

/// FerryFunctionCall(add, {1, 2}) from C, on a handle found once with FerryFunctionGetGlobal.
struct Ferry_CApiCall {
  FerryObjectHandle f = nullptr;
  FerryAny args[2];
  Ferry_CApiCall() {
    RegisterAdd();
    FerryFunctionGetGlobal("bench.add", &f);
    for (FerryAny& a : args) {
      a.type_index = kFerryInt;
      a.small_len = 0;
    }
    args[0].v_int64 = 1;
    args[1].v_int64 = 2;
  }
  ~Ferry_CApiCall() { FerryObjectDecRef(f); }
  Ferry_CApiCall(const Ferry_CApiCall&) = delete;
  Ferry_CApiCall& operator=(const Ferry_CApiCall&) = delete;
  void operator()() {
    DoNotOptimize(args);
    FerryAny result;
    FerryFunctionCall(f, args, 2, &result);
    DoNotOptimize(result.v_int64);
  }
};
/// The C ABI call's floor is the same std::function call as the typed call's.
struct Floor_CApiCall : Floor_TypedCall {};

/// Function::GetGlobal("bench.add") and drop the Function it returns.
struct Ferry_GetGlobal {
  Ferry_GetGlobal() { RegisterAdd(); }
  void operator()() {
    std::optional<Function> f = Function::GetGlobal("bench.add");
    DoNotOptimize(f->get());
  }
};
/// unordered_map<std::string, std::function>::find with a key of the same length, in a table
/// of about the same size as the registry.
struct Floor_GetGlobal {
  std::unordered_map<std::string, std::function<int64_t(int64_t, int64_t)>> table;
  Floor_GetGlobal() {
    for (int i = 0; i < 200; ++i) table["bench.fn" + std::to_string(i)] = nullptr;
    table["bench.add"] = &Add;
  }
  void operator()() {
    auto it = table.find("bench.add");
    DoNotOptimize(it);
  }
};

/// The plain tagged union an Any stands for: the floor of the Any round trips.
using PlainValue =
    std::variant<std::monostate, int64_t, double, std::string, std::shared_ptr<PlainSmall>>;

/// Any from an int64 and cast back.
struct Ferry_AnyInt {
  int64_t x = 42;
  void operator()() {
    DoNotOptimize(x);
    Any v = x;
    DoNotOptimize(v.cast<int64_t>());
  }
};
struct Floor_AnyInt {
  int64_t x = 42;
  void operator()() {
    DoNotOptimize(x);
    PlainValue v = x;
    DoNotOptimize(std::get<int64_t>(v));
  }
};
/// Any from a 3-byte std::string (stored inline in the cell) and cast back to std::string.
struct Ferry_AnyShortString {
  std::string s = "abc";
  void operator()() {
    DoNotOptimize(s);
    Any v = s;
    DoNotOptimize(v.cast<std::string>());
  }
};
struct Floor_AnyShortString {
  std::string s = "abc";
  void operator()() {
    DoNotOptimize(s);
    PlainValue v = s;
    std::string out = std::get<std::string>(v);
    DoNotOptimize(out);
  }
};
/// Any from an object reference and cast back: two count increments and two decrements.
struct Ferry_AnyObject {
  Small obj{make_object<SmallNode>()};
  void operator()() {
    Any v = obj;
    DoNotOptimize(v.cast<Small>().get());
  }
};
struct Floor_AnyObject {
  std::shared_ptr<PlainSmall> obj = std::make_shared<PlainSmall>();
  void operator()() {
    PlainValue v = obj;
    std::shared_ptr<PlainSmall> out = std::get<std::shared_ptr<PlainSmall>>(v);
    DoNotOptimize(out.get());
  }
};

// ------------------------------------------------------------------------------------------
// Containers.

/// push_back of kArrayPushes int64s into a fresh, uniquely held Array<int64_t>, growth
/// included, then drop it: the per-element cost is the operation's cost / kArrayPushes.
/// Counted by callgrind only; bench_container.cc times the same loop at 1e4 and 1e6 elements
/// (where the kernel's page faults, which callgrind does not see, also count).
constexpr int64_t kArrayPushes = 1000;
struct Ferry_ArrayPushBack {
  int64_t n = kArrayPushes;
  void operator()() {
    DoNotOptimize(n);
    Array<int64_t> a;
    for (int64_t i = 0; i < n; ++i) a.push_back(i);
    DoNotOptimize(a.get());
  }
};
struct Floor_ArrayPushBack {
  int64_t n = kArrayPushes;
  void operator()() {
    DoNotOptimize(n);
    std::vector<int64_t> a;
    for (int64_t i = 0; i < n; ++i) a.push_back(i);
    DoNotOptimize(a.data());
  }
};

// ------------------------------------------------------------------------------------------
// Dict (bench_list.cc times the same work at 1e6 keys)

/// Counted by callgrind only: one insert of an int key per operation, into a map that grows to
/// 1e5 keys and then starts again empty (so growth is included, amortized).
constexpr int64_t kDictKeys = 100000;
struct Ferry_DictSet {
  Dict<int64_t, int64_t> d;
  int64_t i = 0;
  void operator()() {
    d.Set(i * 7919, i);
    if (++i == kDictKeys) {
      d = Dict<int64_t, int64_t>();
      i = 0;
    }
  }
};
struct Floor_DictSet {
  std::unordered_map<int64_t, int64_t> d;
  int64_t i = 0;
  void operator()() {
    d[i * 7919] = i;
    if (++i == kDictKeys) {
      d = std::unordered_map<int64_t, int64_t>();
      i = 0;
    }
  }
};

/// Counted by callgrind only: one lookup per operation in a map of 1e5 int keys, the keys in
/// insertion order.
struct Ferry_DictAt {
  Dict<int64_t, int64_t> d;
  int64_t i = 0;
  Ferry_DictAt() {
    for (int64_t k = 0; k < kDictKeys; ++k) d.Set(k * 7919, k);
  }
  void operator()() {
    DoNotOptimize(d.at(i * 7919));
    if (++i == kDictKeys) i = 0;
  }
};
struct Floor_DictAt {
  std::unordered_map<int64_t, int64_t> d;
  int64_t i = 0;
  Floor_DictAt() {
    for (int64_t k = 0; k < kDictKeys; ++k) d[k * 7919] = k;
  }
  void operator()() {
    DoNotOptimize(d.at(i * 7919));
    if (++i == kDictKeys) i = 0;
  }
};

}  // namespace ferry_bench

// The peer's operations (TvmFfi_X), when the build found apache-tvm-ffi's wheel.
#ifdef FERRY_BENCH_TVM_FFI
#include "ops_tvm_ffi.h"
#endif

namespace ferry_bench {

/// One Google Benchmark run of Op: constructs it once, then times operator().
template <typename Op>
void RunOp(benchmark::State& state) {
  Op op;
  for (auto _ : state) op();
}

}  // namespace ferry_bench

/// Registers the operation ferry_bench::Op with Google Benchmark under the name "BM_<Op>".
#define FERRY_BENCHMARK(Op)                                                       \
  [[maybe_unused]] static ::benchmark::internal::Benchmark* ferry_bench_##Op##_ = \
      ::benchmark::RegisterBenchmark("BM_" #Op, &::ferry_bench::RunOp<::ferry_bench::Op>)

#endif  // FERRY_BENCH_OPS_H_
