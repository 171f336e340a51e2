// Containers beside the standard library and, for Map<String, int64_t>, apache-tvm-ffi's Map
// (BM_TvmFfi_X, when the build has the peer: FERRY_BENCH_TVM_FFI).
#include <benchmark/benchmark.h>
#include <ferry/ferry.h>
#ifdef FERRY_BENCH_TVM_FFI
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/string.h>
#endif

#include <string>
#include <unordered_map>
#include <vector>

namespace {

using namespace ferry;

constexpr int64_t kCount = 1000000;
constexpr int64_t kKeys = 100000;

// Pushes range(0) elements into a fresh container.
void BM_Ferry_ArrayPushBack(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    Array<int64_t> a;
    for (int64_t i = 0; i < n; ++i) a.push_back(i);
    benchmark::DoNotOptimize(a.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_Floor_ArrayPushBack(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    std::vector<int64_t> a;
    for (int64_t i = 0; i < n; ++i) a.push_back(i);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Ferry_ArraySum(benchmark::State& state) {
  Array<int64_t> a;
  for (int64_t i = 0; i < kCount; ++i) a.push_back(i);
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t x : a) sum += x;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}
void BM_Floor_ArraySum(benchmark::State& state) {
  std::vector<int64_t> a;
  for (int64_t i = 0; i < kCount; ++i) a.push_back(i);
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t x : a) sum += x;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}

std::vector<std::string> Keys() {
  std::vector<std::string> keys;
  for (int64_t i = 0; i < kKeys; ++i) keys.push_back("key_number_" + std::to_string(i * 7919));
  return keys;
}

void BM_Ferry_MapInsert(benchmark::State& state) {
  std::vector<std::string> keys = Keys();
  std::vector<String> strings(keys.begin(), keys.end());
  for (auto _ : state) {
    Map<String, int64_t> m;
    for (int64_t i = 0; i < kKeys; ++i) m.Set(strings[i], i);
    benchmark::DoNotOptimize(m.get());
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
void BM_Floor_MapInsert(benchmark::State& state) {
  std::vector<std::string> keys = Keys();
  for (auto _ : state) {
    std::unordered_map<std::string, int64_t> m;
    for (int64_t i = 0; i < kKeys; ++i) m[keys[i]] = i;
    benchmark::DoNotOptimize(&m);
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}

/// Map lookups of every key of `MakeKeys()`, by Ferry, the floor and tvm-ffi.
template <std::vector<std::string> (*MakeKeys)()>
void FerryMapLookup(benchmark::State& state) {
  std::vector<std::string> keys = MakeKeys();
  std::vector<String> strings(keys.begin(), keys.end());
  Map<String, int64_t> m;
  for (int64_t i = 0; i < kKeys; ++i) m.Set(strings[i], i);
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t i = 0; i < kKeys; ++i) sum += m.at(strings[i]);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
template <std::vector<std::string> (*MakeKeys)()>
void FloorMapLookup(benchmark::State& state) {
  std::vector<std::string> keys = MakeKeys();
  std::unordered_map<std::string, int64_t> m;
  for (int64_t i = 0; i < kKeys; ++i) m[keys[i]] = i;
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t i = 0; i < kKeys; ++i) sum += m.at(keys[i]);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}

#ifdef FERRY_BENCH_TVM_FFI
void BM_TvmFfi_MapInsert(benchmark::State& state) {
  std::vector<std::string> keys = Keys();
  std::vector<tvm::ffi::String> strings(keys.begin(), keys.end());
  for (auto _ : state) {
    tvm::ffi::Map<tvm::ffi::String, int64_t> m;
    for (int64_t i = 0; i < kKeys; ++i) m.Set(strings[i], i);
    benchmark::DoNotOptimize(m.get());
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
template <std::vector<std::string> (*MakeKeys)()>
void TvmFfiMapLookup(benchmark::State& state) {
  std::vector<std::string> keys = MakeKeys();
  std::vector<tvm::ffi::String> strings(keys.begin(), keys.end());
  tvm::ffi::Map<tvm::ffi::String, int64_t> m;
  for (int64_t i = 0; i < kKeys; ++i) m.Set(strings[i], i);
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t i = 0; i < kKeys; ++i) sum += m.at(strings[i]);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
#endif

// The same lookups with keys of at most 7 bytes, which a String keeps inline ("k" and up to six
// base-36 digits), against std::string keys (inline too, up to 15 bytes).
std::vector<std::string> ShortKeys() {
  std::vector<std::string> keys;
  for (int64_t i = 0; i < kKeys; ++i) {
    std::string key = "k";
    for (int64_t n = i * 7919; n > 0; n /= 36) {
      key += "0123456789abcdefghijklmnopqrstuvwxyz"[n % 36];
    }
    keys.push_back(key);
  }
  return keys;
}

void BM_Ferry_MapLookup(benchmark::State& state) { FerryMapLookup<Keys>(state); }
void BM_Floor_MapLookup(benchmark::State& state) { FloorMapLookup<Keys>(state); }
void BM_Ferry_MapLookupShortKeys(benchmark::State& state) { FerryMapLookup<ShortKeys>(state); }
void BM_Floor_MapLookupShortKeys(benchmark::State& state) { FloorMapLookup<ShortKeys>(state); }
#ifdef FERRY_BENCH_TVM_FFI
void BM_TvmFfi_MapLookup(benchmark::State& state) { TvmFfiMapLookup<Keys>(state); }
void BM_TvmFfi_MapLookupShortKeys(benchmark::State& state) { TvmFfiMapLookup<ShortKeys>(state); }
#endif

BENCHMARK(BM_Ferry_ArrayPushBack)->Arg(10000)->Arg(kCount)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Floor_ArrayPushBack)->Arg(10000)->Arg(kCount)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ferry_ArraySum)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_ArraySum)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ferry_MapInsert)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_MapInsert)->Unit(benchmark::kMillisecond);
#ifdef FERRY_BENCH_TVM_FFI
BENCHMARK(BM_TvmFfi_MapInsert)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(BM_Ferry_MapLookup)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_MapLookup)->Unit(benchmark::kMillisecond);
#ifdef FERRY_BENCH_TVM_FFI
BENCHMARK(BM_TvmFfi_MapLookup)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(BM_Ferry_MapLookupShortKeys)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_MapLookupShortKeys)->Unit(benchmark::kMillisecond);
#ifdef FERRY_BENCH_TVM_FFI
BENCHMARK(BM_TvmFfi_MapLookupShortKeys)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
