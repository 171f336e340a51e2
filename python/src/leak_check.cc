/// \file leak_check.cc
/// ferry._core's part of the leak check (FERRY_LEAK_CHECK=1, docs/python.md "Leak check"):
/// libferry calls Report at exit, after Py_Finalize returned, and it prints the Python wrappers
/// of Ferry objects that the interpreter never freed and the Functions made from Python
/// callables that are still alive. It reads only the extension's own C++ state: the
/// interpreter is gone by then.
#include <cinttypes>  // PRId64
#include <cstdio>
#include <map>
#include <string>

#include "core.h"

namespace ferry_py {

namespace {

bool g_enabled = false;  // set once, at module init
int64_t g_callable_functions = 0;

/// The deleter of a Function made from a Python callable while the check is on.
void ReleaseCounted(void* callable) {
  __atomic_fetch_sub(&g_callable_functions, 1, __ATOMIC_RELAXED);
  DecRefWithGil(callable);
}

int64_t Report() {
  // The cached global functions are the global table's (libferry dropped its own references
  // just before); the extension's handles on them are not leaks either.
  FerryObjectHandle* cached[] = {
      &g_state.globals.array,         &g_state.globals.map,        &g_state.globals.list,
      &g_state.globals.list_to_array, &g_state.globals.repr,       &g_state.globals.save_json,
      &g_state.globals.load_json,     &g_state.globals.make_node,  &g_state.globals.list_attr_names,
      &g_state.globals.dict_size,     &g_state.globals.dict_get,   &g_state.globals.dict_set,
      &g_state.globals.dict_erase,    &g_state.globals.dict_count,
  };
  for (FerryObjectHandle* slot : cached) {
    if (*slot != nullptr) FerryObjectDecRef(*slot);
    *slot = nullptr;
  }
  int64_t leaks = 0;
  std::map<std::string, int64_t> wrappers;
  g_state.wrappers.ForEach([&](const void* handle, PyObject*) {
    const char* key = "<unknown>";
    const int32_t index = static_cast<const FerryObject*>(handle)->type_index;
    if (FerryTypeIndexToKey(index, &key) != 0) key = "<unknown>";
    ++wrappers[key];
  });
  if (!wrappers.empty()) {
    std::fprintf(stderr, "ferry: leak check: Python wrappers alive at exit, by type key:\n");
    for (const auto& [key, count] : wrappers) {
      std::fprintf(stderr, "ferry:   %8" PRId64 "  %s\n", count, key.c_str());
      leaks += count;
    }
  }
  const int64_t callables = __atomic_load_n(&g_callable_functions, __ATOMIC_RELAXED);
  if (callables != 0) {
    std::fprintf(stderr,
                 "ferry: leak check: %" PRId64
                 " Function(s) made from Python callables alive at exit\n",
                 callables);
    leaks += callables;
  }
  return leaks;
}

}  // namespace

int InitLeakCheck() {
  int32_t enabled = 0;
  if (FerryLeakCheckEnabled(&enabled) != 0 || (enabled != 0 && FerryLeakCheckAddReporter(&Report) != 0)) {
    RaiseFerryError();
    return -1;
  }
  g_enabled = enabled != 0;
  return 0;
}

void (*CallableDeleter())(void*) { return g_enabled ? &ReleaseCounted : &DecRefWithGil; }

void CountCallableFunction() {
  if (g_enabled) __atomic_fetch_add(&g_callable_functions, 1, __ATOMIC_RELAXED);
}

}  // namespace ferry_py
