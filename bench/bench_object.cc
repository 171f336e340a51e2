// Objects: each Ferry operation (BM_Ferry_*) beside its plain-C++ floor (BM_Floor_*).
#include <benchmark/benchmark.h>
#include <ferry/ferry.h>

#include <atomic>
#include <string>

namespace {

using namespace ferry;  // NOLINT

class SmallNode : public Object {
 public:
  int64_t value = 1;
  static constexpr const char* _type_key = "bench.Small";
  FERRY_DECLARE_FINAL_OBJECT_INFO(SmallNode, Object);
};
struct PlainSmall {
  int32_t count = 1;
  int32_t type = 0;
  void* deleter = nullptr;
  int64_t value = 1;
};

// A three-level hierarchy: Base > Mid > Leaf, plus an unrelated sibling of Mid.
class BaseNode : public Object {
 public:
  static constexpr const char* _type_key = "bench.Base";
  static constexpr uint32_t _type_child_slots = 4;
  FERRY_DECLARE_BASE_OBJECT_INFO(BaseNode, Object);
};
class MidNode : public BaseNode {
 public:
  static constexpr const char* _type_key = "bench.Mid";
  static constexpr uint32_t _type_child_slots = 1;
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
  FERRY_DECLARE_FINAL_OBJECT_INFO(OtherNode, BaseNode);
};
class Mid : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Mid, ObjectRef, MidNode);
};

struct PBase {
  virtual ~PBase() = default;
};
struct PMid : PBase {};
struct PLeaf : PMid {};
struct POther : PBase {};

void BM_Ferry_MakeDrop(benchmark::State& state) {
  for (auto _ : state) {
    ObjectPtr<SmallNode> p = make_object<SmallNode>();
    benchmark::DoNotOptimize(p.get());
  }
}
void BM_Floor_MakeDrop(benchmark::State& state) {
  for (auto _ : state) {
    auto* p = new PlainSmall();
    benchmark::DoNotOptimize(p);
    delete p;
  }
}

void BM_Ferry_CopyDrop(benchmark::State& state) {
  ObjectRef ref(make_object<SmallNode>());
  for (auto _ : state) {
    ObjectRef copy = ref;
    benchmark::DoNotOptimize(copy.get());
  }
}
void BM_Floor_CopyDrop(benchmark::State& state) {
  std::atomic<int32_t> count{1};
  for (auto _ : state) {
    count.fetch_add(1, std::memory_order_relaxed);
    benchmark::DoNotOptimize(&count);
    count.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void BM_Ferry_IsInstanceHit(benchmark::State& state) {
  ObjectRef leaf(make_object<LeafNode>());
  const Object* obj = leaf.get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    benchmark::DoNotOptimize(obj->IsInstance<MidNode>());
  }
}
void BM_Floor_IsInstanceHit(benchmark::State& state) {
  PBase* obj = new PLeaf();
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    benchmark::DoNotOptimize(dynamic_cast<PMid*>(obj));
  }
  delete obj;
}
void BM_Ferry_IsInstanceMiss(benchmark::State& state) {
  ObjectRef other(make_object<OtherNode>());
  const Object* obj = other.get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    benchmark::DoNotOptimize(obj->IsInstance<MidNode>());
  }
}
void BM_Floor_IsInstanceMiss(benchmark::State& state) {
  PBase* obj = new POther();
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    benchmark::DoNotOptimize(dynamic_cast<PMid*>(obj));
  }
  delete obj;
}

void BM_Ferry_Downcast(benchmark::State& state) {
  ObjectRef leaf(make_object<LeafNode>());
  for (auto _ : state) {
    Mid mid = Downcast<Mid>(leaf);
    benchmark::DoNotOptimize(mid.get());
  }
}
void BM_Floor_Downcast(benchmark::State& state) {
  // The floor of a Downcast: dynamic_cast plus the reference copy it returns.
  PBase* obj = new PLeaf();
  std::atomic<int32_t> count{1};
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    PMid* mid = dynamic_cast<PMid*>(obj);
    count.fetch_add(1, std::memory_order_relaxed);
    benchmark::DoNotOptimize(mid);
    count.fetch_sub(1, std::memory_order_acq_rel);
  }
  delete obj;
}

const char* kShort = "short";
const char* kLong = "a string literal that is forty bytes lon";

void BM_Ferry_StringShort(benchmark::State& state) {
  for (auto _ : state) {
    String s(kShort);
    benchmark::DoNotOptimize(s.data());
  }
}
void BM_Floor_StringShort(benchmark::State& state) {
  for (auto _ : state) {
    std::string s(kShort);
    benchmark::DoNotOptimize(s.data());
  }
}
void BM_Ferry_String40(benchmark::State& state) {
  for (auto _ : state) {
    String s(kLong);
    benchmark::DoNotOptimize(s.data());
  }
}
void BM_Floor_String40(benchmark::State& state) {
  for (auto _ : state) {
    std::string s(kLong);
    benchmark::DoNotOptimize(s.data());
  }
}

BENCHMARK(BM_Ferry_MakeDrop);
BENCHMARK(BM_Floor_MakeDrop);
BENCHMARK(BM_Ferry_CopyDrop);
BENCHMARK(BM_Floor_CopyDrop);
BENCHMARK(BM_Ferry_IsInstanceHit);
BENCHMARK(BM_Floor_IsInstanceHit);
BENCHMARK(BM_Ferry_IsInstanceMiss);
BENCHMARK(BM_Floor_IsInstanceMiss);
BENCHMARK(BM_Ferry_Downcast);
BENCHMARK(BM_Floor_Downcast);
BENCHMARK(BM_Ferry_StringShort);
BENCHMARK(BM_Floor_StringShort);
BENCHMARK(BM_Ferry_String40);
BENCHMARK(BM_Floor_String40);

}  // namespace
