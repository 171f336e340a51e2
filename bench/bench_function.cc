// Functions and values: each Ferry operation (BM_Ferry_*) beside its floor (BM_Floor_*).
#include <benchmark/benchmark.h>
#include <ferry/ferry.h>

#include <functional>
#include <string>
#include <unordered_map>

namespace {

using namespace ferry;  // NOLINT

FERRY_REGISTER_GLOBAL("bench.add").set_body_typed([](int64_t a, int64_t b) { return a + b; });

void BM_Ferry_TypedCall(benchmark::State& state) {
  TypedFunction<int64_t(int64_t, int64_t)> f(
      Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "add"));
  int64_t x = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(f(x, 2));
  }
}
void BM_Floor_TypedCall(benchmark::State& state) {
  std::function<int64_t(int64_t, int64_t)> f = [](int64_t a, int64_t b) { return a + b; };
  int64_t x = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(f(x, 2));
  }
}

void BM_Ferry_CApiCall(benchmark::State& state) {
  FerryObjectHandle f = nullptr;
  FerryFunctionGetGlobal("bench.add", &f);
  FerryAny args[2];
  args[0].type_index = args[1].type_index = kFerryInt;
  args[0].small_len = args[1].small_len = 0;
  args[0].v_int64 = 1;
  args[1].v_int64 = 2;
  for (auto _ : state) {
    FerryAny result;
    result.type_index = kFerryNone;
    FerryFunctionCall(f, args, 2, &result);
    benchmark::DoNotOptimize(result.v_int64);
  }
  FerryObjectDecRef(f);
}

void BM_Ferry_GetGlobal(benchmark::State& state) {
  for (auto _ : state) {
    auto f = Function::GetGlobal("bench.add");
    benchmark::DoNotOptimize(f);
  }
}
void BM_Floor_GetGlobal(benchmark::State& state) {
  std::unordered_map<std::string, std::function<int64_t(int64_t, int64_t)>> table;
  for (int i = 0; i < 200; ++i) table["bench.fn" + std::to_string(i)] = nullptr;
  table["bench.add"] = [](int64_t a, int64_t b) { return a + b; };
  for (auto _ : state) {
    auto f = table.find("bench.add");
    benchmark::DoNotOptimize(f);
  }
}

void BM_Ferry_AnyInt(benchmark::State& state) {
  int64_t x = 42;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    Any v = x;
    benchmark::DoNotOptimize(v.cast<int64_t>());
  }
}
void BM_Ferry_AnyShortString(benchmark::State& state) {
  std::string s = "abc";
  for (auto _ : state) {
    Any v = s;
    benchmark::DoNotOptimize(v.cast<std::string>());
  }
}
void BM_Floor_AnyShortString(benchmark::State& state) {
  std::string s = "abc";
  for (auto _ : state) {
    std::string copy = s;
    benchmark::DoNotOptimize(std::string(copy));
  }
}
void BM_Ferry_AnyObject(benchmark::State& state) {
  String obj("an object that is a long string");
  for (auto _ : state) {
    Any v = obj;
    benchmark::DoNotOptimize(v.cast<String>().get());
  }
}

BENCHMARK(BM_Ferry_TypedCall);
BENCHMARK(BM_Floor_TypedCall);
BENCHMARK(BM_Ferry_CApiCall);
BENCHMARK(BM_Ferry_GetGlobal);
BENCHMARK(BM_Floor_GetGlobal);
BENCHMARK(BM_Ferry_AnyInt);
BENCHMARK(BM_Ferry_AnyShortString);
BENCHMARK(BM_Floor_AnyShortString);
BENCHMARK(BM_Ferry_AnyObject);

}  // namespace
