// List and Dict (mutable, shared) beside std::vector and std::unordered_map: 1e6 push_backs
// into a fresh container, 1e6 inserts of int keys into a fresh map, 1e6 lookups.
// ops.h also makes the process multi-threaded before anything is timed (see there), so the
// standard containers' allocations pay for atomics as Ferry's do; its Dict operations are the
// ones callgrind_ops counts.
#include <benchmark/benchmark.h>
#include <ferry/ferry.h>

#include <unordered_map>
#include <vector>

#include "ops.h"

namespace {

using namespace ferry;

constexpr int64_t kCount = 1000000;

void BM_Ferry_ListPushBack(benchmark::State& state) {
  for (auto _ : state) {
    List<int64_t> xs;
    for (int64_t i = 0; i < kCount; ++i) xs.push_back(i);
    benchmark::DoNotOptimize(xs.get());
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}
void BM_Floor_ListPushBack(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<int64_t> xs;
    for (int64_t i = 0; i < kCount; ++i) xs.push_back(i);
    benchmark::DoNotOptimize(xs.data());
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}

void BM_Ferry_DictInsert(benchmark::State& state) {
  for (auto _ : state) {
    Dict<int64_t, int64_t> d;
    for (int64_t i = 0; i < kCount; ++i) d.Set(i * 7919, i);
    benchmark::DoNotOptimize(d.get());
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}
void BM_Floor_DictInsert(benchmark::State& state) {
  for (auto _ : state) {
    std::unordered_map<int64_t, int64_t> d;
    for (int64_t i = 0; i < kCount; ++i) d[i * 7919] = i;
    benchmark::DoNotOptimize(&d);
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}

void BM_Ferry_DictLookup(benchmark::State& state) {
  Dict<int64_t, int64_t> d;
  for (int64_t i = 0; i < kCount; ++i) d.Set(i * 7919, i);
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t i = 0; i < kCount; ++i) sum += d.at(i * 7919);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}
void BM_Floor_DictLookup(benchmark::State& state) {
  std::unordered_map<int64_t, int64_t> d;
  for (int64_t i = 0; i < kCount; ++i) d[i * 7919] = i;
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t i = 0; i < kCount; ++i) sum += d.at(i * 7919);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}

BENCHMARK(BM_Ferry_ListPushBack)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_ListPushBack)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_DictInsert)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_DictInsert)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_DictLookup)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_DictLookup)->Unit(benchmark::kMillisecond);

}  // namespace
