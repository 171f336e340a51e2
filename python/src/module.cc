/// \file module.cc
/// The `ferry._core` module: the registry and library functions, fast Array access, and the
/// hooks through which the pure-Python package installs its classes.
#include <dlfcn.h>  // dladdr: where libferry was loaded from

#include <cstring>  // strcmp
#include <string>

#include "core.h"

namespace ferry_py {

CoreState& g_state = *new CoreState();

void InitObjectTypes();
void InitFunctionType();
int InitClassRegistry();

namespace {

/// The UTF-8 text of the str `name`, or NULL with a ValueError when it holds a NUL (a C string
/// would end there, and the lookup would be of its prefix).
const char* NameOf(PyObject* name, const char* func) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name, &size);
  if (text == nullptr) return nullptr;
  if (std::strlen(text) != static_cast<size_t>(size)) {
    PyErr_Format(PyExc_ValueError, "%s(): the name %R holds a NUL character", func, name);
    return nullptr;
  }
  return text;
}

/// get_global_func(name, allow_missing=False), parsed by hand: it sits on the path of every
/// TVM-style constructor (`__init_handle_by_constructor__(get_global_func(...), ...)`).
PyObject* GetGlobalFunc(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* name_obj = nargs >= 1 ? args[0] : nullptr;
  PyObject* allow_obj = nargs >= 2 ? args[1] : nullptr;
  if (nargs > 2) {
    return PyErr_Format(PyExc_TypeError, "get_global_func() takes at most 2 arguments");
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    if (key == nullptr) return nullptr;
    PyObject** slot = std::strcmp(key, "name") == 0            ? &name_obj
                      : std::strcmp(key, "allow_missing") == 0 ? &allow_obj
                                                               : nullptr;
    if (slot == nullptr || *slot != nullptr) {
      return PyErr_Format(PyExc_TypeError,
                          "get_global_func() got an unexpected or repeated "
                          "keyword argument '%s'",
                          key);
    }
    *slot = args[nargs + k];
  }
  if (name_obj == nullptr || !PyUnicode_Check(name_obj)) {
    return PyErr_Format(PyExc_TypeError, "get_global_func() argument 'name' must be str, not %s",
                        name_obj != nullptr ? Py_TYPE(name_obj)->tp_name : "missing");
  }
  const char* name = NameOf(name_obj, "get_global_func");
  if (name == nullptr) return nullptr;
  int allow_missing = allow_obj != nullptr ? PyObject_IsTrue(allow_obj) : 0;
  if (allow_missing < 0) return nullptr;
  // One Function object per name while the registration stays the same: checking the registry
  // each time keeps overrides visible, and skips making a new wrapper.
  PyObject* cache = g_state.global_funcs;
  FerryObjectHandle f = nullptr;
  if (FerryFunctionGetGlobal(name, &f) != 0) return RaiseFerryError();
  if (f == nullptr) {
    if (PyDict_DelItemString(cache, name) != 0) PyErr_Clear();
    if (allow_missing) Py_RETURN_NONE;
    return PyErr_Format(PyExc_KeyError, "global function '%s' is not registered", name);
  }
  PyObject* cached = PyDict_GetItemString(cache, name);
  if (cached != nullptr && HandleOf(cached) == f) {
    DecRef(f);
    return Py_NewRef(cached);
  }
  PyObject* wrapper = WrapFunction(f);
  if (wrapper != nullptr && PyDict_SetItemString(cache, name, wrapper) != 0) Py_CLEAR(wrapper);
  return wrapper;
}

PyObject* ListGlobalFuncNames(PyObject*, PyObject*) {
  int32_t count = 0;
  const char* const* names = nullptr;
  if (FerryFunctionListGlobalNames(&count, &names) != 0) return RaiseFerryError();
  return StrSequence<true>(names, count);
}

/// _register_global(name, function_or_callable, override) -> the registered ferry.Function.
PyObject* RegisterGlobal(PyObject*, PyObject* args) {
  const char* name = nullptr;
  PyObject* f = nullptr;
  int override = 0;
  if (!PyArg_ParseTuple(args, "sOp", &name, &f, &override)) return nullptr;
  FerryObjectHandle handle = nullptr;
  if (PyObject_TypeCheck(f, &FunctionType)) {
    handle = HandleOf(f);
    if (handle == nullptr) {
      return PyErr_Format(PyExc_ValueError,
                          "register_func('%s'): the ferry.Function is not "
                          "initialized",
                          name);
    }
    IncRef(handle);
  } else if (PyCallable_Check(f)) {
    if (FunctionFromCallable(f, &handle) != 0) return nullptr;
  } else {
    return PyErr_Format(PyExc_TypeError, "register_func: %R is not callable", f);
  }
  if (FerryFunctionSetGlobal(name, handle, override) != 0) {
    DecRef(handle);
    return RaiseFerryError();
  }
  return WrapFunction(handle);
}

PyObject* RemoveGlobalFunc(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    return PyErr_Format(PyExc_TypeError, "remove_global_func() argument 'name' must be str, not %s",
                        Py_TYPE(arg)->tp_name);
  }
  const char* name = NameOf(arg, "remove_global_func");
  if (name == nullptr) return nullptr;
  int32_t removed = 0;
  if (FerryFunctionRemoveGlobal(name, &removed) != 0) return RaiseFerryError();
  // get_global_func's cached wrapper must not keep the removed function (and what it holds).
  if (PyDict_DelItem(g_state.global_funcs, arg) != 0) PyErr_Clear();
  return PyBool_FromLong(removed);
}

PyObject* Convert(PyObject*, PyObject* value) {
  if (IsFerryObject(value)) return Py_NewRef(value);
  FerryAny cell;
  if (PyToAnyOwned(value, &cell) != 0) return nullptr;
  return AnyToPy(cell, /*owned=*/true);
}

PyObject* MakeNode(PyObject*, PyObject* args, PyObject* kwargs) {
  PyObject* key = nullptr;
  if (!PyArg_ParseTuple(args, "O:make_node", &key)) return nullptr;
  return MakeNodeFromKwargs(key, kwargs);
}

PyObject* LoadLibrary(PyObject*, PyObject* arg) {
  PyObject* path = nullptr;
  if (!PyUnicode_FSConverter(arg, &path)) return nullptr;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = FerryLibraryLoad(PyBytes_AS_STRING(path));
  Py_END_ALLOW_THREADS;
  Py_DECREF(path);
  if (rc != 0) return RaiseFerryError();
  InvalidateClassCache();
  Py_RETURN_NONE;
}

PyObject* UnloadLibrary(PyObject*, PyObject* arg) {
  PyObject* path = nullptr;
  if (!PyUnicode_FSConverter(arg, &path)) return nullptr;
  int rc = FerryLibraryUnload(PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (rc != 0) return RaiseFerryError();
  InvalidateClassCache();
  // get_global_func's cache must not keep the removed functions (and so the library) alive.
  PyObject* stale = PyList_New(0);
  if (stale == nullptr) return nullptr;
  PyObject *name, *wrapper;
  Py_ssize_t pos = 0;
  while (PyDict_Next(g_state.global_funcs, &pos, &name, &wrapper)) {
    const char* text = PyUnicode_AsUTF8(name);
    FerryObjectHandle now = nullptr;
    if (text == nullptr || FerryFunctionGetGlobal(text, &now) != 0) {
      PyErr_Clear();
      FerryErrorMoveFromRaised(&now);  // drop the error, if any
      if (now != nullptr) DecRef(now);
      now = nullptr;
    }
    bool same = now != nullptr && HandleOf(wrapper) == now;
    if (now != nullptr) DecRef(now);
    if (!same && PyList_Append(stale, name) != 0) {
      Py_DECREF(stale);
      return nullptr;
    }
  }
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(stale); ++k) {
    if (PyDict_DelItem(g_state.global_funcs, PyList_GET_ITEM(stale, k)) != 0) PyErr_Clear();
  }
  Py_DECREF(stale);
  Py_RETURN_NONE;
}

/// The reason FerryLibraryLoad would refuse the file for its ABI record, or None.
PyObject* LibraryAbiMismatch(PyObject*, PyObject* arg) {
  PyObject* path = nullptr;
  if (!PyUnicode_FSConverter(arg, &path)) return nullptr;
  const char* problem = nullptr;
  int rc = FerryLibraryAbiMismatch(PyBytes_AS_STRING(path), &problem);
  Py_DECREF(path);
  if (rc != 0) return RaiseFerryError();
  if (problem == nullptr) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(problem, static_cast<Py_ssize_t>(strlen(problem)), "replace");
}

PyObject* SetDTypeClass(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &PyUnicode_Type)) {
    return PyErr_Format(PyExc_TypeError, "_set_dtype_class: %R is not a subclass of str", cls);
  }
  Py_XSETREF(g_state.dtype_class, Py_NewRef(cls));
  Py_RETURN_NONE;
}

PyObject* SetErrorFactory(PyObject*, PyObject* f) {
  Py_XSETREF(g_state.error_factory, Py_NewRef(f));
  Py_RETURN_NONE;
}

PyObject* LibPath(PyObject*, PyObject*) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&FerryObjectIncRef), &info) == 0 ||
      info.dli_fname == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "cannot find where libferry was loaded from");
    return nullptr;
  }
  return PyUnicode_DecodeFSDefault(info.dli_fname);
}

/// The cells of a container object read through `get` (FerryArrayGetData,
/// FerryListGetData); -1 with a TypeError naming `what` for any other object.
int CellsOf(PyObject* obj, int (*get)(FerryObjectHandle, int64_t*, const FerryAny**),
            const char* what, int64_t* size, const FerryAny** data) {
  if (!IsFerryObject(obj) || HandleOf(obj) == nullptr) {
    PyErr_Format(PyExc_TypeError, "expected a %s, got '%s'", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (get(HandleOf(obj), size, data) != 0) {
    RaiseFerryError();
    return -1;
  }
  return 0;
}
int ArrayData(PyObject* array, int64_t* size, const FerryAny** data) {
  return CellsOf(array, &FerryArrayGetData, "ferry.Array", size, data);
}
int ListData(PyObject* list, int64_t* size, const FerryAny** data) {
  return CellsOf(list, &FerryListGetData, "ferry.List", size, data);
}

/// The Py_ssize_t value of an index object, before any size is known: reading it may run
/// Python code (`__index__`), so it is read before a list's cells are. -1 with an error set
/// (check PyErr_Occurred) when it is not an index.
Py_ssize_t RawIndex(PyObject* index_obj) {
  // An int is read directly (PyNumber_AsSsize_t goes through __index__ first); an int too large
  // for Py_ssize_t, or anything else, takes the general path and its errors.
  Py_ssize_t index = PyLong_CheckExact(index_obj) ? PyLong_AsSsize_t(index_obj) : -1;
  if (index == -1) {
    PyErr_Clear();
    index = PyNumber_AsSsize_t(index_obj, PyExc_IndexError);
  }
  return index;
}

/// `index` (read by RawIndex from `index_obj`) of a sequence of `size` items, negative ones
/// counted from the end; -1 with an IndexError naming both when out of range.
Py_ssize_t CheckedIndex(Py_ssize_t index, PyObject* index_obj, int64_t size, const char* what) {
  if (index < 0) index += size;
  if (index < 0 || index >= size) {
    PyErr_Format(PyExc_IndexError, "%s index %R out of range for size %lld", what, index_obj,
                 static_cast<long long>(size));
    return -1;
  }
  return index;
}

/// `index` of a sequence of `size` items, negative ones counted from the end; -1 with an
/// IndexError naming both when out of range.
Py_ssize_t ItemIndex(PyObject* index_obj, int64_t size, const char* what) {
  Py_ssize_t index = RawIndex(index_obj);
  if (index == -1 && PyErr_Occurred()) return -1;
  return CheckedIndex(index, index_obj, size, what);
}

/// A Python list of the values of `size` cells at `data`. Converting a cell runs only Ferry's
/// own Python code (the class hook, the DataType class), which writes no container, so `data`
/// stays valid through the loop.
PyObject* CellsToList(const FerryAny* data, int64_t size) {
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(size));
  if (out == nullptr) return nullptr;
  for (int64_t i = 0; i < size; ++i) {
    PyObject* item = AnyToPy(data[i], /*owned=*/false);
    if (item == nullptr) {
      Py_DECREF(out);
      return nullptr;
    }
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), item);
  }
  return out;
}

PyObject* ArraySize(PyObject*, PyObject* array) {
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (ArrayData(array, &size, &data) != 0) return nullptr;
  return PyLong_FromLongLong(size);
}

PyObject* ArrayGetItem(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_array_getitem(array, index)");
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (ArrayData(args[0], &size, &data) != 0) return nullptr;
  Py_ssize_t index = ItemIndex(args[1], size, "Array");
  if (index < 0) return nullptr;
  return AnyToPy(data[index], /*owned=*/false);
}

PyObject* ArrayToList(PyObject*, PyObject* array) {
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (ArrayData(array, &size, &data) != 0) return nullptr;
  return CellsToList(data, size);
}

PyObject* ListSize(PyObject*, PyObject* list) {
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (ListData(list, &size, &data) != 0) return nullptr;
  return PyLong_FromLongLong(size);
}

/// A new ferry.List of the items the slice `start:stop:step` (unpacked) selects.
PyObject* ListSlice(const FerryAny* data, int64_t size, Py_ssize_t start, Py_ssize_t stop,
                    Py_ssize_t step) {
  Py_ssize_t n = PySlice_AdjustIndices(static_cast<Py_ssize_t>(size), &start, &stop, step);
  if (n > INT32_MAX) return PyErr_Format(PyExc_OverflowError, "slice too large");
  std::vector<FerryAny> cells(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) cells[static_cast<size_t>(i)] = data[start + i * step];
  FerryObjectHandle ctor = CachedGlobal("ferry.List", &g_state.globals.list);
  if (ctor == nullptr) return PyErr_Format(PyExc_RuntimeError, "global 'ferry.List' is missing");
  return CallFunction(ctor, cells.data(), static_cast<int32_t>(n), false);
}

// A List's cells are read only after every step that may run Python code (an index's
// __index__, a value's conversion): Python code may let another thread write the list, which
// would move its cells and change its size under us. So each of these is one atomic step
// with respect to other Python threads.

PyObject* ListGetItem(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_list_getitem(list, index)");
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (PySlice_Check(args[1])) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(args[1], &start, &stop, &step) < 0) return nullptr;
    if (ListData(args[0], &size, &data) != 0) return nullptr;
    return ListSlice(data, size, start, stop, step);
  }
  Py_ssize_t raw = RawIndex(args[1]);
  if (raw == -1 && PyErr_Occurred()) return nullptr;
  if (ListData(args[0], &size, &data) != 0) return nullptr;
  Py_ssize_t index = CheckedIndex(raw, args[1], size, "List");
  if (index < 0) return nullptr;
  // The conversion takes its reference before it may run Python code (a class hook).
  return AnyToPy(data[index], /*owned=*/false);
}

PyObject* ListSetItem(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) return PyErr_Format(PyExc_TypeError, "_list_setitem(list, index, value)");
  if (!IsFerryObject(args[0]) || HandleOf(args[0]) == nullptr) {
    return PyErr_Format(PyExc_TypeError, "expected a ferry.List, got '%s'",
                        Py_TYPE(args[0])->tp_name);
  }
  Py_ssize_t raw = RawIndex(args[1]);
  if (raw == -1 && PyErr_Occurred()) return nullptr;
  TempScope scope;
  FerryAny cell;
  if (PyToAny(args[2], &cell, &scope) != 0) return nullptr;
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (ListData(args[0], &size, &data) != 0) return nullptr;
  Py_ssize_t index = CheckedIndex(raw, args[1], size, "List");
  if (index < 0) return nullptr;
  if (FerryListSetItem(HandleOf(args[0]), index, &cell) != 0) return RaiseFerryError();
  Py_RETURN_NONE;
}

PyObject* ListAppend(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_list_append(list, value)");
  if (!IsFerryObject(args[0]) || HandleOf(args[0]) == nullptr) {
    return PyErr_Format(PyExc_TypeError, "expected a ferry.List, got '%s'",
                        Py_TYPE(args[0])->tp_name);
  }
  TempScope scope;
  FerryAny cell;
  if (PyToAny(args[1], &cell, &scope) != 0) return nullptr;
  if (FerryListAppend(HandleOf(args[0]), &cell) != 0) return RaiseFerryError();
  Py_RETURN_NONE;
}

/// The elements of a List as a Python list, read from a snapshot (ferry.ListToArray, O(1)):
/// converting an element may run Python code (a class hook, the DataType class), during which
/// another thread may write the list; the snapshot's cells stay put.
PyObject* ListToList(PyObject*, PyObject* list) {
  if (!IsFerryObject(list) || HandleOf(list) == nullptr) {
    return PyErr_Format(PyExc_TypeError, "expected a ferry.List, got '%s'", Py_TYPE(list)->tp_name);
  }
  FerryObjectHandle to_array = CachedGlobal("ferry.ListToArray", &g_state.globals.list_to_array);
  if (to_array == nullptr) {
    return PyErr_Format(PyExc_RuntimeError, "global 'ferry.ListToArray' is missing");
  }
  FerryAny arg;
  SetCell(&arg, TypeIndexOf(HandleOf(list)), 0, reinterpret_cast<uintptr_t>(HandleOf(list)));
  FerryAny snapshot;
  if (CallRaw(&FerryFunctionCall, to_array, &arg, 1, false, &snapshot) != 0) {
    return RaiseFerryError();
  }
  int64_t size = 0;
  const FerryAny* data = nullptr;
  PyObject* out = nullptr;
  if (FerryArrayGetData(snapshot.v_obj, &size, &data) != 0) {
    RaiseFerryError();
  } else {
    out = CellsToList(data, size);
  }
  DecRef(snapshot.v_obj);
  return out;
}

// -- The type slots of ferry.List and ferry.Dict. A class statement points len(), x[k] and the
// like at CPython's generic slot functions, which look the dunder method up and call it (about
// 35 ns per use); _install_container_slots points them at these functions instead. They do
// what the classes' Python-visible methods do (python/ferry/container.py), which stay for
// explicit calls and for subclasses.

Py_ssize_t ListLength(PyObject* list) {
  int64_t size = 0;
  const FerryAny* data = nullptr;
  if (ListData(list, &size, &data) != 0) return -1;
  return static_cast<Py_ssize_t>(size);
}

PyObject* ListSubscript(PyObject* list, PyObject* index) {
  PyObject* args[2] = {list, index};
  return ListGetItem(nullptr, args, 2);
}

/// Calls the dict global `name` (looked up once into `*slot`) on `dict` and `n - 1` more Python
/// values into `*result`; -1 with a Python exception.
int CallDictGlobal(const char* name, FerryObjectHandle* slot, PyObject* const* values, int32_t n,
                   FerryAny* result) {
  FerryObjectHandle func = CachedGlobal(name, slot);
  if (func == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "global '%s' is missing", name);
    return -1;
  }
  TempScope scope;
  FerryAny cells[3];
  for (int32_t i = 0; i < n; ++i) {
    if (PyToAny(values[i], &cells[i], &scope) != 0) return -1;
  }
  if (CallRaw(&FerryFunctionCall, func, cells, n, false, result) != 0) {
    RaiseFerryError();
    return -1;
  }
  return 0;
}

Py_ssize_t DictLength(PyObject* dict) {
  FerryAny result;
  if (CallDictGlobal("ferry.DictSize", &g_state.globals.dict_size, &dict, 1, &result) != 0) {
    return -1;
  }
  return static_cast<Py_ssize_t>(result.v_int64);
}

PyObject* DictSubscript(PyObject* dict, PyObject* key) {
  PyObject* values[2] = {dict, key};
  FerryAny result;
  if (CallDictGlobal("ferry.DictGetItem", &g_state.globals.dict_get, values, 2, &result) != 0) {
    return nullptr;
  }
  return OwnedCellToPy(result);
}

/// _dict_getitem(dict, key): Dict.__getitem__ (a function of this module bound as a method, not
/// a Python function, which CPython's specializing interpreter would call in place of the slot).
PyObject* DictGetItem(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_dict_getitem(dict, key)");
  return DictSubscript(args[0], args[1]);
}

int DictAssSubscript(PyObject* dict, PyObject* key, PyObject* value) {
  FerryAny result;
  if (value != nullptr) {
    PyObject* values[3] = {dict, key, value};
    return CallDictGlobal("ferry.DictSetItem", &g_state.globals.dict_set, values, 3, &result);
  }
  PyObject* values[2] = {dict, key};
  if (CallDictGlobal("ferry.DictErase", &g_state.globals.dict_erase, values, 2, &result) != 0) {
    return -1;
  }
  if (result.v_int64 == 0) {
    PyErr_SetObject(PyExc_KeyError, key);
    return -1;
  }
  return 0;
}

int DictContains(PyObject* dict, PyObject* key) {
  PyObject* values[2] = {dict, key};
  FerryAny result;
  if (CallDictGlobal("ferry.DictCount", &g_state.globals.dict_count, values, 2, &result) != 0) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();  // a key that cannot be one (a set, say) is just absent
    return 0;
  }
  return result.v_int64 != 0 ? 1 : 0;
}

/// _install_container_slots(List, Dict): see above.
PyObject* InstallContainerSlots(PyObject*, PyObject* args) {
  PyTypeObject* list = nullptr;
  PyTypeObject* dict = nullptr;
  if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &list, &PyType_Type, &dict)) return nullptr;
  for (PyTypeObject* type : {list, dict}) {
    if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) || type->tp_as_mapping == nullptr ||
        type->tp_as_sequence == nullptr) {
      return PyErr_Format(PyExc_TypeError, "_install_container_slots: '%s' is not a class",
                          type->tp_name);
    }
  }
  list->tp_as_sequence->sq_length = ListLength;
  list->tp_as_mapping->mp_length = ListLength;
  list->tp_as_mapping->mp_subscript = ListSubscript;
  dict->tp_as_sequence->sq_length = DictLength;
  dict->tp_as_mapping->mp_length = DictLength;
  dict->tp_as_mapping->mp_subscript = DictSubscript;
  dict->tp_as_mapping->mp_ass_subscript = DictAssSubscript;
  dict->tp_as_sequence->sq_contains = DictContains;
  PyType_Modified(list);
  PyType_Modified(dict);
  Py_RETURN_NONE;
}

/// _instancemethod(f): `f` as a method (bound to the instance it is read from), so a class can
/// use a function of this module as a method without a Python-level wrapper call.
PyObject* InstanceMethod(PyObject*, PyObject* f) { return PyInstanceMethod_New(f); }

PyObject* DTypeParse(PyObject*, PyObject* arg) {
  const char* text = PyUnicode_AsUTF8(arg);
  if (text == nullptr) return nullptr;
  FerryDataType dtype;
  if (FerryDataTypeFromString(text, &dtype) != 0) return RaiseFerryError();
  return Py_BuildValue("(iii)", dtype.code, dtype.bits, dtype.lanes);
}

PyObject* TypeKeyToIndex(PyObject*, PyObject* arg) {
  const char* key = PyUnicode_AsUTF8(arg);
  if (key == nullptr) return nullptr;
  int32_t index = -1;
  if (FerryTypeKeyToIndex(key, &index) != 0) return RaiseFerryError();
  return PyLong_FromLong(index);
}

PyMethodDef kMethods[] = {
    {"get_global_func", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(GetGlobalFunc)),
     METH_FASTCALL | METH_KEYWORDS,
     "get_global_func($module, /, name, allow_missing=False)\n--\n\n"
     "The registered global function `name`; KeyError (or None with allow_missing) when there "
     "is none."},
    {"list_global_func_names", ListGlobalFuncNames, METH_NOARGS,
     "The names of every registered global function, sorted."},
    {"_register_global", RegisterGlobal, METH_VARARGS, nullptr},
    {"remove_global_func", RemoveGlobalFunc, METH_O,
     "Removes a global function; returns whether it existed."},
    {"convert", Convert, METH_O,
     "convert($module, value, /)\n--\n\n"
     "The Ferry form of a Python value (callables become Functions, lists Arrays, dicts Maps); "
     "plain values come back as they are."},
    {"_library_abi_mismatch", LibraryAbiMismatch, METH_O, nullptr},
    {"unload_library", UnloadLibrary, METH_O,
     "unload_library(path): removes a loaded library's registrations; closes it later."},
    {"load_library", LoadLibrary, METH_O,
     "load_library(path): loads a shared library and runs its registrations."},
    {"_register_class", RegisterClass, METH_VARARGS, nullptr},
    {"_set_class_hook", SetClassHook, METH_O, nullptr},
    {"make_node", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(MakeNode)),
     METH_VARARGS | METH_KEYWORDS,
     "make_node($module, type_key, /, **fields)\n--\n\n"
     "Creates the reflected node type_key from fields given by name (every field without a "
     "recorded default must be given: a ValueError lists missing and unknown names, a "
     "TypeError or OverflowError names a field whose value does not convert)."},
    {"_classes", ListClasses, METH_NOARGS, nullptr},
    {"_class_of_key", ClassOfKey, METH_O, nullptr},
    {"_set_dtype_class", SetDTypeClass, METH_O, nullptr},
    {"_set_error_factory", SetErrorFactory, METH_O, nullptr},
    {"_builtin_error_kinds", BuiltinErrorKinds, METH_NOARGS, nullptr},
    {"_lib_path", LibPath, METH_NOARGS, "The path of the loaded libferry."},
    {"_array_size", ArraySize, METH_O, nullptr},
    {"_array_getitem", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ArrayGetItem)),
     METH_FASTCALL, nullptr},
    {"_array_to_list", ArrayToList, METH_O, nullptr},
    {"_dtype_parse", DTypeParse, METH_O, nullptr},
    {"_list_size", ListSize, METH_O, nullptr},
    {"_instancemethod", InstanceMethod, METH_O, nullptr},
    {"_install_container_slots", InstallContainerSlots, METH_VARARGS, nullptr},
    {"_dict_getitem", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(DictGetItem)),
     METH_FASTCALL, nullptr},
    {"_list_getitem", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ListGetItem)),
     METH_FASTCALL, nullptr},
    {"_list_setitem", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ListSetItem)),
     METH_FASTCALL, nullptr},
    {"_list_append", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ListAppend)),
     METH_FASTCALL, nullptr},
    {"_list_to_list", ListToList, METH_O, nullptr},
    {"_type_key_to_index", TypeKeyToIndex, METH_O, nullptr},
    {"_register_type", RegisterType, METH_VARARGS, nullptr},
    {"_install_init", InstallInit, METH_VARARGS, nullptr},
    {"_create", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(CreateObject)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    "ferry._core",
    "The C++ core of the ferry package (see the ferry package for the public API).",
    -1,
    kMethods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace
}  // namespace ferry_py

PyMODINIT_FUNC PyInit__core() {
  using namespace ferry_py;
  InitObjectTypes();
  InitFunctionType();
  if (PyType_Ready(&ObjectType) < 0 || PyType_Ready(&FunctionType) < 0 ||
      PyType_Ready(&FieldType) < 0 || InitClassRegistry() != 0) {
    return nullptr;
  }
  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr) return nullptr;
  if (PyModule_AddObjectRef(module, "Object", reinterpret_cast<PyObject*>(&ObjectType)) < 0 ||
      PyModule_AddObjectRef(module, "Function", reinterpret_cast<PyObject*>(&FunctionType)) < 0 ||
      PyModule_AddObjectRef(module, "Field", reinterpret_cast<PyObject*>(&FieldType)) < 0 ||
      PyModule_AddStringConstant(module, "__ferry_version__", FERRY_VERSION_STRING) < 0 ||
      AddTensorFunctions(module) < 0 || AddPickleFunctions(module) < 0 ||
      InitLeakCheck(module) != 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
