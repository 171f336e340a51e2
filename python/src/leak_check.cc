/// \file leak_check.cc
/// ferry._core's part of the leak check (FERRY_LEAK_CHECK=1, docs/python.md "Leak check"):
/// libferry calls Report at exit, after Py_Finalize returned, and it prints the Python wrappers
/// of Ferry objects that the interpreter never freed and the Functions made from Python
/// callables that are still alive. It reads only the extension's own C++ state: the
/// interpreter is gone by then.
#include <cinttypes>  // PRId64
#include <cstdio>
#include <map>
#include <new>  // std::bad_alloc
#include <string>
#include <vector>

#include "core.h"

namespace ferry_py {

namespace {

int64_t g_callable_functions = 0;
/// Every live wrapper (keys; the values are unused), while the check is on. GIL held.
ferry::details::PointerMap<char>* g_wrappers = nullptr;

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
  // The interpreter never freed these wrappers; their memory stays, so their handles can be read.
  std::map<std::string, int64_t> wrappers;
  g_wrappers->ForEach([&](const void* wrapper, char) {
    const FerryObjectHandle handle = static_cast<const PyFerryObject*>(wrapper)->handle;
    const char* key = "<no object>";
    if (handle != nullptr &&
        FerryTypeIndexToKey(static_cast<const FerryObject*>(handle)->type_index, &key) != 0) {
      key = "<unknown>";
    }
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

/// Removes from libferry's global function table the functions made from Python callables
/// (`register_func`, or a converted callable a frontend registered): the table keeps them for
/// the life of the process, and the callable keeps its module's globals.
void DropCallableGlobals() {
  int32_t count = 0;
  const char* const* listed = nullptr;
  if (FerryFunctionListGlobalNames(&count, &listed) != 0) {
    DiscardFerryError();
    return;
  }
  std::vector<std::string> names;
  try {
    names.assign(listed, listed + count);  // the list is valid until the next call only
  } catch (const std::bad_alloc&) {
    return;  // not dropped: the report names what they hold
  }
  for (const std::string& name : names) {
    FerryObjectHandle func = nullptr;
    if (FerryFunctionGetGlobal(name.c_str(), &func) != 0) {
      DiscardFerryError();
      continue;
    }
    const bool callable = MadeFromCallable(func);
    DecRef(func);
    if (callable && FerryFunctionRemoveGlobal(name.c_str(), nullptr) != 0) DiscardFerryError();
  }
}

/// Releases the Functions made from Python callables that a live ferry.Function wrapper alone
/// holds (`fn = ferry.convert(lambda ...)` at module level): module globals -> wrapper ->
/// Function -> callable -> the same globals is a cycle. The wrapper's tp_traverse shows the
/// collector that callable (function.cc, FunctionTraverse), so Python's last collections free
/// it too; this drop does not depend on the order in which finalization clears and collects,
/// and costs nothing while the check is off. Each such wrapper is left
/// uninitialized (calling it is the ValueError of an uninitialized ferry.Function), which frees
/// the callable here, on the finalizing thread, and leaves the rest of the cycle to Python's
/// last collection. A Function another Ferry object also holds (a List, a field) is left alone:
/// that cycle runs through Ferry's containers, which the check reports.
void DropCallablesOnlyWrappersHold() {
  std::vector<PyObject*> held;
  try {
    g_wrappers->ForEach([&](const void* wrapper, char) {
      auto* obj = static_cast<PyObject*>(const_cast<void*>(wrapper));
      const FerryObjectHandle handle = reinterpret_cast<PyFerryObject*>(obj)->handle;
      if (Py_REFCNT(obj) > 0 && handle != nullptr && PyObject_TypeCheck(obj, &FunctionType) &&
          __atomic_load_n(&static_cast<FerryObject*>(handle)->ref_counter, __ATOMIC_ACQUIRE) == 1 &&
          MadeFromCallable(handle)) {
        held.push_back(obj);
      }
    });
  } catch (const std::bad_alloc&) {
    return;  // not dropped: the report names what they hold
  }
  // Held across the loop: freeing one callable may free the globals holding another wrapper.
  for (PyObject* obj : held) Py_INCREF(obj);
  for (PyObject* obj : held) {
    auto* self = reinterpret_cast<PyFerryFunction*>(obj);
    const FerryObjectHandle handle = self->base.handle;
    PyObject** slot = g_state.wrappers.Find(handle);
    if (slot != nullptr && *slot == obj) g_state.wrappers.Erase(handle);
    self->base.handle = nullptr;
    self->safe_call = &FerryFunctionCall;  // as a wrapper made without a handle (FunctionNew)
    DecRef(handle);
  }
  for (PyObject* obj : held) Py_DECREF(obj);
}

/// Drops the Python objects g_state holds for the life of the process (classes, hooks, cached
/// Functions, py_class __init__ plans), and those libferry holds for this interpreter: the
/// field defaults of the types it registered (a `default_factory` is a Function holding a
/// Python callable, `ferry.List` say) and the global functions made from Python callables; and
/// the Functions made from Python callables that only their wrapper holds. They keep modules'
/// classes, and through their functions' globals the modules' own wrappers, alive
/// past finalization; libferry's own drop of its tables comes after Py_Finalize, too late to
/// free a Python object. Each stays usable: dicts are emptied, hooks set to NULL (which every
/// user checks), the class cache forgotten; a type whose defaults went has required fields, a
/// dropped global is "not registered", a dropped wrapper's Function "not initialized".
void DropStateAtTeardown(PyObject*) {
  SavedError saved;
  for (int32_t type_index : g_state.registered_types) {
    // Releases on this thread, which holds the GIL (DecRefWithGil). Cannot fail for a type
    // registered from a field table; if it did, the report names what stayed.
    if (FerryTypeClearFieldDefaults(type_index) != 0) DiscardFerryError();
  }
  g_state.registered_types.clear();
  DropCallableGlobals();
  DropCallablesOnlyWrappersHold();
  g_state.class_cache.clear();  // borrowed from the dicts below
  for (PyObject* dict :
       {g_state.classes_by_key, g_state.auto_classes, g_state.field_names, g_state.global_funcs}) {
    if (dict != nullptr) PyDict_Clear(dict);
  }
  ForgetObjectType();
  Py_CLEAR(g_state.class_hook);
  Py_CLEAR(g_state.dtype_class);
  Py_CLEAR(g_state.error_factory);
  DropInitPlans();
}

/// Python's atexit hook (bound to the module, whatever name it was imported under): puts a
/// capsule into ferry._core's module dict whose destructor runs
/// DropStateAtTeardown. The interpreter wipes that dict late in finalization, after the
/// package's modules went (an earlier drop would break a later atexit hook that uses Ferry).
PyObject* ReleaseCaches(PyObject* module, PyObject*) {
  PyObject* capsule = PyCapsule_New(&g_state, "ferry._core leak check", &DropStateAtTeardown);
  int rc = capsule != nullptr ? PyModule_AddObjectRef(module, "_leak_check_teardown", capsule) : -1;
  Py_XDECREF(capsule);
  if (rc != 0) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef kReleaseCaches = {"_leak_check_release_caches", ReleaseCaches, METH_NOARGS,
                              "Drops ferry._core's caches at exit (FERRY_LEAK_CHECK=1)."};

}  // namespace

bool g_leak_check = false;

void NoteWrapperMadeSlow(PyObject* wrapper) {
  try {
    g_wrappers->Insert(wrapper, 0);
  } catch (const std::bad_alloc&) {
    // Not tracked: this wrapper is never reported.
  }
}

void NoteWrapperFreedSlow(PyObject* wrapper) { g_wrappers->Erase(wrapper); }

int InitLeakCheck(PyObject* module) {
  int32_t enabled = 0;
  if (FerryLeakCheckEnabled(&enabled) != 0) {
    RaiseFerryError();
    return -1;
  }
  if (enabled == 0 || g_leak_check) return 0;
  PyObject* atexit = PyImport_ImportModule("atexit");
  PyObject* hook = atexit != nullptr ? PyCFunction_New(&kReleaseCaches, module) : nullptr;
  PyObject* done = hook != nullptr ? PyObject_CallMethod(atexit, "register", "O", hook) : nullptr;
  Py_XDECREF(atexit);
  Py_XDECREF(hook);
  if (done == nullptr) return -1;
  Py_DECREF(done);
  if (FerryLeakCheckAddReporter(&Report) != 0) {
    RaiseFerryError();
    return -1;
  }
  g_wrappers = new ferry::details::PointerMap<char>();  // never destroyed: read at exit
  g_leak_check = true;
  return 0;
}

void (*CallableDeleter())(void*) { return g_leak_check ? &ReleaseCounted : &DecRefWithGil; }

void CountCallableFunction() {
  if (g_leak_check) __atomic_fetch_add(&g_callable_functions, 1, __ATOMIC_RELAXED);
}

}  // namespace ferry_py
