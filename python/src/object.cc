/// \file object.cc
/// `ferry.Object`, the base of every Python class of a Ferry object; the field descriptor that
/// reads reflected fields; and the registry from type index to Python class.
#include <new>  // std::bad_alloc
#include <string>

#include "core.h"

namespace ferry_py {

namespace {

/// Calls a cached global with Python arguments.
PyObject* CallGlobal(const char* name, FerryObjectHandle* slot, PyObject* const* args,
                     Py_ssize_t n) {
  FerryObjectHandle f = CachedGlobal(name, slot);
  if (f == nullptr) return PyErr_Format(PyExc_RuntimeError, "global '%s' is missing", name);
  TempScope scope;
  std::vector<FerryAny> cells(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PyToAny(args[i], &cells[static_cast<size_t>(i)], &scope) != 0) return nullptr;
  }
  return CallFunction(f, cells.data(), static_cast<int32_t>(n), false);
}

/// The class registered for `key`, or NULL (borrowed).
PyTypeObject* RegisteredClass(const char* key) {
  return reinterpret_cast<PyTypeObject*>(PyDict_GetItemString(g_state.classes_by_key, key));
}

/// Calls the package's class hook (ferry.registry._class_hook): `(key, cls, None)` after a
/// registered class is first met for its type (installs its field descriptors now that the type
/// is known), `(key, None, base)` for a type without a class (returns a new class deriving
/// from `base`). Returns a new reference, or NULL with an exception.
PyObject* CallClassHook(const char* key, PyObject* cls, PyObject* base) {
  if (g_state.class_hook == nullptr) return Py_NewRef(cls != nullptr ? cls : base);
  return PyObject_CallFunction(g_state.class_hook, "sOO", key, cls != nullptr ? cls : Py_None,
                               base != nullptr ? base : Py_None);
}

/// The class of objects of `type_index`: the class registered for its key; else the class made
/// for it on first sight (named after its key, deriving from the class of its nearest registered
/// ancestor, with the same field descriptors). ferry.Object if that fails (an error is printed
/// as unraisable: a wrapper is still made).
/// The type key of an object, "?" if the registry does not know it.
const char* TypeKeyOf(FerryObjectHandle h) {
  const char* key = "?";
  if (FerryTypeIndexToKey(TypeIndexOf(h), &key) != 0) DiscardFerryError();
  return key;
}

PyTypeObject* Lookup(int32_t type_index) {
  const char* key = nullptr;
  if (FerryTypeIndexToKey(type_index, &key) != 0) {
    DiscardFerryError();
    return &ObjectType;
  }
  if (PyTypeObject* cls = RegisteredClass(key)) {
    PyObject* done = CallClassHook(key, reinterpret_cast<PyObject*>(cls), nullptr);
    if (done == nullptr) PyErr_WriteUnraisable(reinterpret_cast<PyObject*>(cls));
    Py_XDECREF(done);
    return cls;
  }
  if (PyObject* made = PyDict_GetItemString(g_state.auto_classes, key)) {
    return reinterpret_cast<PyTypeObject*>(made);
  }
  PyTypeObject* base = &ObjectType;
  const FerryTypeInfo* info = nullptr;
  if (FerryTypeGetInfo(type_index, &info) == 0) {
    for (int32_t d = info->type_depth - 1; d >= 0; --d) {
      const char* ancestor = nullptr;
      if (FerryTypeIndexToKey(info->type_ancestors[d], &ancestor) != 0) break;
      if (PyTypeObject* cls = RegisteredClass(ancestor)) {
        base = cls;
        break;
      }
    }
  } else {
    DiscardFerryError();
  }
  PyObject* made = CallClassHook(key, nullptr, reinterpret_cast<PyObject*>(base));
  if (made == nullptr || !PyType_Check(made) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(made), &ObjectType) ||
      PyDict_SetItemString(g_state.auto_classes, key, made) != 0) {
    if (made != nullptr && !PyErr_Occurred()) {
      PyErr_Format(PyExc_TypeError, "the class hook returned %R for '%s'", made, key);
    }
    PyErr_WriteUnraisable(reinterpret_cast<PyObject*>(base));
    Py_XDECREF(made);
    return base;
  }
  Py_DECREF(made);  // g_state.auto_classes keeps it
  return reinterpret_cast<PyTypeObject*>(made);
}

// ---------------------------------------------------------------------------------------------
// The live wrapper of each object.

/// Enters `obj` as the wrapper of `h` unless `h` has a live one.
void RememberWrapper(FerryObjectHandle h, PyObject* obj) {
  try {
    auto [slot, inserted] = g_state.wrappers.Insert(h, obj);
    // A wrapper in its deallocation (reference count 0: clearing its __dict__ or weak references
    // ran code that brought the object back) gives way; it does not remove the new entry.
    if (!inserted && Py_REFCNT(*slot) == 0) {
      *slot = obj;
    } else if (!inserted && *slot != obj) {
      g_wrapper_aliases = true;  // `obj` is a second live wrapper of `h`
    }
  } catch (const std::bad_alloc&) {
    // Only identity is lost: the object gets a new wrapper next time.
    g_wrapper_aliases = true;
  }
}

/// The live Python wrapper of `h` (borrowed), or NULL if it has none.
PyObject* FindWrapper(FerryObjectHandle h) {
  PyObject** slot = g_state.wrappers.Find(h);
  return slot != nullptr && Py_REFCNT(*slot) > 0 ? *slot : nullptr;
}

void ForgetWrapper(FerryObjectHandle h, PyObject* obj) {
  PyObject** slot = g_state.wrappers.Find(h);
  if (slot != nullptr && *slot == obj) g_state.wrappers.Erase(h);
}

// ---------------------------------------------------------------------------------------------
// ferry.Object

PyObject* ObjectNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* obj = type->tp_alloc(type, 0);  // handle NULL until __init__ or __setstate__
  if (obj != nullptr) NoteWrapperMade(obj);
  return obj;
}

void ObjectDealloc(PyObject* obj) {
  auto* self = reinterpret_cast<PyFerryObject*>(obj);
  NoteWrapperFreed(obj);
  // First: weak reference callbacks may bring the object back to Python.
  if (self->handle != nullptr) ForgetWrapper(self->handle, obj);
  if (self->weakrefs != nullptr) PyObject_ClearWeakRefs(obj);
  if (self->handle != nullptr) {
    FerryObjectHandle h = self->handle;
    self->handle = nullptr;
    if (PyErr_Occurred() == nullptr) {
      DecRef(h);
    } else {
      // Freed while an exception propagates: the C++ destructors this may run can call Python
      // (a callback, a capsule's deleter), which must neither see nor clear that exception.
      SavedError saved;
      DecRef(h);
    }
  }
  Py_TYPE(obj)->tp_free(obj);
}

/// Whether an object of `type_index` is of the type `key` names or of a type derived from it.
bool IsOfTypeKey(int32_t type_index, const char* key) {
  int32_t wanted = -1;
  if (FerryTypeKeyToIndex(key, &wanted) != 0) {
    DiscardFerryError();  // an unknown key: no object is of its type
    return false;
  }
  if (wanted == type_index) return true;
  const FerryTypeInfo* info = nullptr;
  if (FerryTypeGetInfo(type_index, &info) != 0) return false;
  for (int32_t d = 0; d < info->type_depth; ++d) {
    if (info->type_ancestors[d] == wanted) return true;
  }
  return false;
}

/// Whether a wrapper of `self`'s class may hold `handle`: a ferry.Function holds functions
/// only, a class registered for a type key objects of that type or derived types, any other
/// class (ferry.Object) any object. 0, or -1 with a TypeError.
int CheckHandleFits(PyObject* self, FerryObjectHandle handle) {
  const int32_t type_index = TypeIndexOf(handle);
  PyTypeObject* cls = Py_TYPE(self);
  // The common case first: the class registered for the object's type (cached by type index)
  // is the wrapper's class or derives from it.
  if (PyType_IsSubtype(ClassOf(type_index), cls)) return 0;
  std::string wanted;
  if (PyType_IsSubtype(cls, &FunctionType)) {
    if (type_index == kFerryFunction) return 0;
    wanted = "ferry.Function";
  } else {
    static PyObject* const kTypeKeyName = PyUnicode_InternFromString("_type_key");
    PyObject* key = kTypeKeyName != nullptr
                        ? PyObject_GetAttr(reinterpret_cast<PyObject*>(cls), kTypeKeyName)
                        : nullptr;
    if (key == nullptr || !PyUnicode_Check(key)) {
      Py_XDECREF(key);
      PyErr_Clear();
      return 0;
    }
    const char* text = PyUnicode_AsUTF8(key);
    if (text == nullptr) {
      Py_DECREF(key);
      return -1;
    }
    wanted = text;
    Py_DECREF(key);
    if (IsOfTypeKey(type_index, wanted.c_str())) return 0;
  }
  const char* got = "?";
  if (FerryTypeIndexToKey(type_index, &got) != 0) DiscardFerryError();
  PyErr_Format(PyExc_TypeError, "a %s holds objects of type '%s' (or derived), not '%s'",
               cls->tp_name, wanted.c_str(), got);
  return -1;
}

/// Makes `self` own `handle` (a reference the caller hands over), releasing its old one; or
/// releases `handle` and fails with a TypeError if it does not fit `self`'s class. 0 or -1.
int ReplaceHandle(PyObject* self, FerryObjectHandle handle) {
  if (CheckHandleFits(self, handle) != 0) {
    DecRef(handle);
    return -1;
  }
  auto* obj = reinterpret_cast<PyFerryObject*>(self);
  FerryObjectHandle old = obj->handle;
  if (old != nullptr) ForgetWrapper(old, self);
  obj->handle = handle;
  RememberWrapper(handle, self);
  if (old != nullptr) DecRef(old);
  return PyObject_TypeCheck(self, &FunctionType) ? SetFunctionHandleFields(self) : 0;
}

/// Makes `self` refer to the object of `made` (a new reference, or NULL after a failed call,
/// which is passed on): 0, or -1 with an exception.
int AdoptHandle(PyObject* self, PyObject* made) {
  if (made == nullptr) return -1;
  if (!IsFerryObject(made) || HandleOf(made) == nullptr) {
    PyErr_Format(PyExc_TypeError, "expected a Ferry object, got '%s'", Py_TYPE(made)->tp_name);
    Py_DECREF(made);
    return -1;
  }
  FerryObjectHandle handle = HandleOf(made);
  IncRef(handle);
  // `made` goes first: if it was the object's wrapper and dies now, `self` takes its place.
  Py_DECREF(made);
  return ReplaceHandle(self, handle);
}

}  // namespace

int AdoptNewHandle(PyObject* self, FerryObjectHandle handle) { return ReplaceHandle(self, handle); }

void AttachNewHandle(PyObject* self, FerryObjectHandle handle) {
  reinterpret_cast<PyFerryObject*>(self)->handle = handle;
  RememberWrapper(handle, self);
}

namespace {

/// When a value of `kwargs` is an `enum.Enum` member, ferry._enums.check_make_node(key,
/// kwargs): a member of another enum class than its field's is a TypeError (it would pass as
/// its value). 0, or -1 with an exception.
int CheckEnumMembers(PyObject* key, PyObject* kwargs) {
  static PyObject* enum_class = nullptr;  // enum.Enum, kept for the process
  if (enum_class == nullptr) {
    PyObject* module = PyImport_ImportModule("enum");
    if (module == nullptr) return -1;
    enum_class = PyObject_GetAttrString(module, "Enum");
    Py_DECREF(module);
    if (enum_class == nullptr) return -1;
  }
  PyObject *name, *value;
  Py_ssize_t pos = 0;
  bool any = false;
  while (!any && PyDict_Next(kwargs, &pos, &name, &value)) {
    const int is = PyObject_IsInstance(value, enum_class);
    if (is < 0) return -1;
    any = is != 0;
  }
  if (!any) return 0;
  PyObject* module = PyImport_ImportModule("ferry._enums");
  if (module == nullptr) return -1;
  PyObject* done = PyObject_CallMethod(module, "check_make_node", "OO", key, kwargs);
  Py_DECREF(module);
  if (done == nullptr) return -1;
  Py_DECREF(done);
  return 0;
}

}  // namespace

/// MakeNode(key, **fields) with the fields converted here, so that a value that does not
/// convert is an error naming its field. A new reference, or NULL with an exception.
PyObject* MakeNodeFromKwargs(PyObject* key, PyObject* kwargs) {
  FerryObjectHandle f = CachedGlobal("ferry.MakeNode", &g_state.globals.make_node);
  if (f == nullptr) return PyErr_Format(PyExc_RuntimeError, "global 'ferry.MakeNode' is missing");
  if (!PyUnicode_Check(key)) {
    return PyErr_Format(PyExc_TypeError, "make_node: the type key must be a str, not '%s'",
                        Py_TYPE(key)->tp_name);
  }
  Py_ssize_t n = kwargs != nullptr ? PyDict_GET_SIZE(kwargs) : 0;
  if (n > 0 && CheckEnumMembers(key, kwargs) != 0) return nullptr;
  std::vector<FerryAny> cells(static_cast<size_t>(1 + 2 * n));
  TempScope scope;
  if (PyToAny(key, &cells[0], &scope) != 0) return nullptr;
  PyObject *name, *value;
  Py_ssize_t pos = 0;
  size_t i = 1;
  while (kwargs != nullptr && PyDict_Next(kwargs, &pos, &name, &value)) {
    if (PyToAny(name, &cells[i], &scope) != 0) return nullptr;
    if (PyToAny(value, &cells[i + 1], &scope) != 0) {
      PyObject* prefix = PyUnicode_FromFormat("make_node(%U): field '%U'", key, name);
      PrefixPendingError(prefix);
      Py_XDECREF(prefix);
      return nullptr;
    }
    i += 2;
  }
  PyObject* made = CallFunction(f, cells.data(), static_cast<int32_t>(cells.size()), false);
  if (made == nullptr && kwargs != nullptr) {
    NamePassedFieldType(
        [](PyObject* name, void* fields) {
          return PyDict_GetItemWithError(static_cast<PyObject*>(fields), name);
        },
        kwargs);
  }
  return made;
}

namespace {

/// Object(**fields): creates the node registered for the class's `_type_key` by MakeNode.
int ObjectInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 0) {
    PyErr_Format(PyExc_TypeError,
                 "%s() takes fields by keyword only (or define __init__ with "
                 "__init_handle_by_constructor__)",
                 Py_TYPE(self)->tp_name);
    return -1;
  }
  PyObject* key = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(self)), "_type_key");
  if (key == nullptr) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s cannot be constructed: it is not registered with register_object",
                 Py_TYPE(self)->tp_name);
    return -1;
  }
  PyObject* made = MakeNodeFromKwargs(key, kwargs);
  Py_DECREF(key);
  return AdoptHandle(self, made);
}

/// The reflected field names of objects of `type_index` as a frozenset (borrowed; cached), or
/// NULL with an exception.
PyObject* FieldNamesOf(PyObject* self, int32_t type_index) {
  PyObject* cache = g_state.field_names;
  PyObject* key = PyLong_FromLong(type_index);
  if (key == nullptr) return nullptr;
  PyObject* names = PyDict_GetItemWithError(cache, key);
  if (names == nullptr && !PyErr_Occurred()) {
    PyObject* list =
        CallGlobal("ferry.NodeListAttrNames", &g_state.globals.list_attr_names, &self, 1);
    names = list != nullptr ? PyFrozenSet_New(list) : nullptr;
    Py_XDECREF(list);
    if (names != nullptr && PyDict_SetItem(cache, key, names) != 0) Py_CLEAR(names);
    Py_XDECREF(names);  // the cache keeps it
  }
  Py_DECREF(key);
  return names;
}

/// After the generic lookup failed: a reflected field the class has no descriptor for (an
/// object of a derived type that comes back as its registered ancestor's class).
[[gnu::noinline]] PyObject* GetAttrFallback(PyObject* self, PyObject* name) {
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return nullptr;
  FerryObjectHandle h = HandleOf(self);
  if (h == nullptr || !PyUnicode_Check(name)) return nullptr;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);  // the AttributeError, unless the name is a field
  const char* cname = PyUnicode_AsUTF8(name);
  if (cname == nullptr || (cname[0] == '_' && cname[1] == '_')) {
    PyErr_Restore(type, value, tb);  // replaces AsUTF8's error: a name not UTF-8 is no field
    return nullptr;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  // hasattr() probes must stay cheap: answer "no such field" here, without a C++ exception.
  PyObject* names = FieldNamesOf(self, TypeIndexOf(h));
  int has = names != nullptr ? PySet_Contains(names, name) : -1;
  if (has < 0) return nullptr;  // the lookup itself failed: report that
  if (has == 0) {
    return PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%U'", TypeKeyOf(h),
                        name);
  }
  FerryAny cell;
  if (FerryObjectGetAttr(h, cname, &cell) != 0) return RaiseFerryError();
  return AnyToPy(cell, /*owned=*/true);
}

/// Descriptors (field reads) and the instance dict first, as for any object; only a miss pays
/// for the fallback, so the hit path is a call and a test.
PyObject* ObjectGetAttro(PyObject* self, PyObject* name) {
  PyObject* found = PyObject_GenericGetAttr(self, name);
  if (found != nullptr) return found;
  return GetAttrFallback(self, name);
}

/// Attribute assignment: a data descriptor of the class (a field, a property) takes it; any
/// other name is an AttributeError naming the type and the name. A wrapper holds no state of
/// its own, so that what Python reads is what C++ holds.
int ObjectSetAttro(PyObject* self, PyObject* name, PyObject* value) {
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%s'",
                 Py_TYPE(name)->tp_name);
    return -1;
  }
  PyObject* descr = _PyType_Lookup(Py_TYPE(self), name);
  if (descr != nullptr) {
    descrsetfunc set = Py_TYPE(descr)->tp_descr_set;
    if (set != nullptr) {
      Py_INCREF(descr);
      int rc = set(descr, self, value);
      Py_DECREF(descr);
      return rc;
    }
  }
  FerryObjectHandle h = HandleOf(self);
  const char* type = h != nullptr ? TypeKeyOf(h) : Py_TYPE(self)->tp_name;
  if (descr != nullptr) {
    PyErr_Format(PyExc_AttributeError,
                 "'%s' object attribute '%U' is read-only (a class attribute, not a field)", type,
                 name);
  } else {
    PyErr_Format(PyExc_AttributeError,
                 "'%s' object has no field '%U' (Ferry objects hold no Python attributes)", type,
                 name);
  }
  return -1;
}

PyObject* ObjectRepr(PyObject* self) {
  if (HandleOf(self) == nullptr) {
    return PyUnicode_FromFormat("<%s (uninitialized)>", Py_TYPE(self)->tp_name);
  }
  return CallGlobal("ferry.Repr", &g_state.globals.repr, &self, 1);
}

// Wrappers of one object are equal; an uninitialized wrapper is equal to itself only.
Py_hash_t ObjectHash(PyObject* self) {
  return HandleOf(self) != nullptr ? _Py_HashPointer(HandleOf(self)) : _Py_HashPointer(self);
}

PyObject* ObjectRichCompare(PyObject* a, PyObject* b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !IsFerryObject(b)) Py_RETURN_NOTIMPLEMENTED;
  bool same = HandleOf(a) != nullptr ? HandleOf(a) == HandleOf(b) : a == b;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

PyObject* ObjectSameAs(PyObject* self, PyObject* other) {
  return PyBool_FromLong(IsFerryObject(other) && HandleOf(self) == HandleOf(other));
}

PyObject* ObjectInitByConstructor(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "__init_handle_by_constructor__(fconstructor, *args)");
    return nullptr;
  }
  if (Py_IS_TYPE(args[0], &FunctionType) && nargs - 1 <= 8) {
    // The common case (a constructor global): adopt the result without wrapping it first.
    FerryObjectHandle made = CallForObject(args[0], args + 1, nargs - 1);
    if (made == nullptr || ReplaceHandle(self, made) != 0) return nullptr;
    Py_RETURN_NONE;
  }
  PyObject* made = PyObject_Vectorcall(args[0], args + 1, static_cast<size_t>(nargs - 1), nullptr);
  if (AdoptHandle(self, made) != 0) return nullptr;
  Py_RETURN_NONE;
}

PyObject* ObjectGetState(PyObject* self, PyObject*) {
  if (HandleOf(self) == nullptr) {
    PyErr_Format(PyExc_ValueError, "cannot pickle an uninitialized %s", Py_TYPE(self)->tp_name);
    return nullptr;
  }
  PyObject* text = CallGlobal("ferry.SaveJSON", &g_state.globals.save_json, &self, 1);
  if (text == nullptr) {
    // A Function in the graph (JSON has no form for one): by parts, or the error again
    // (ferry/container.py _state_by_parts).
    if (!PyErr_ExceptionMatches(PyExc_ValueError)) return nullptr;
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != nullptr) PyException_SetTraceback(value, traceback);
    PyObject* container = PyImport_ImportModule("ferry.container");
    PyObject* state = container != nullptr
                          ? PyObject_CallMethod(container, "_state_by_parts", "OO", self, value)
                          : nullptr;
    Py_XDECREF(container);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return state;
  }
  // The JSON alone when the core or the executable registered every type (as small as it
  // was); (JSON, libraries) when loaded libraries did (docs/distributed.md).
  PyObject* libraries = PickleLibrariesOfJSON(text);
  if (libraries == nullptr || PyTuple_GET_SIZE(libraries) == 0) {
    Py_XDECREF(libraries);
    if (libraries == nullptr) Py_CLEAR(text);
    return text;
  }
  return Py_BuildValue("(NN)", text, libraries);
}

PyObject* ObjectSetState(PyObject* self, PyObject* state) {
  if (PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2 &&
      PyUnicode_Check(PyTuple_GET_ITEM(state, 0)) &&
      PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(state, 0), "ferry:parts") == 0) {
    // ("ferry:parts", reduce tuple): an object whose graph holds a Function (ObjectGetState).
    PyObject* container = PyImport_ImportModule("ferry.container");
    PyObject* made = container != nullptr ? PyObject_CallMethod(container, "_from_parts_state",
                                                                "(O)", PyTuple_GET_ITEM(state, 1))
                                          : nullptr;
    Py_XDECREF(container);
    if (AdoptHandle(self, made) != 0) return nullptr;
    Py_RETURN_NONE;
  }
  if (PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2) {
    // (JSON, libraries): load the libraries this process lacks first (ferry/registry.py).
    PyObject* registry = PyImport_ImportModule("ferry.registry");
    PyObject* done = registry != nullptr ? PyObject_CallMethod(registry, "_ensure_libraries", "(O)",
                                                               PyTuple_GET_ITEM(state, 1))
                                         : nullptr;
    Py_XDECREF(registry);
    if (done == nullptr) return nullptr;
    Py_DECREF(done);
    state = PyTuple_GET_ITEM(state, 0);
  }
  PyObject* made = CallGlobal("ferry.LoadJSON", &g_state.globals.load_json, &state, 1);
  if (AdoptHandle(self, made) != 0) return nullptr;
  Py_RETURN_NONE;
}

/// Attributes, with each reflected field once (the class's field descriptors already list
/// most of them; a derived type may have more).
PyObject* ObjectDir(PyObject* self, PyObject*) {
  PyObject* names =
      PyObject_CallMethod(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__dir__", "O", self);
  if (names == nullptr || HandleOf(self) == nullptr) return names;
  PyObject* unique = PySet_New(names);
  Py_DECREF(names);
  if (unique == nullptr) return nullptr;
  PyObject* fields =
      CallGlobal("ferry.NodeListAttrNames", &g_state.globals.list_attr_names, &self, 1);
  PyObject* iter = fields != nullptr ? PyObject_GetIter(fields) : nullptr;
  PyObject* item;
  while (iter != nullptr && (item = PyIter_Next(iter)) != nullptr) {
    int rc = PySet_Add(unique, item);
    Py_DECREF(item);
    if (rc != 0) break;
  }
  Py_XDECREF(iter);
  Py_XDECREF(fields);
  if (PyErr_Occurred()) {
    Py_DECREF(unique);
    return nullptr;
  }
  PyObject* list = PySequence_List(unique);
  Py_DECREF(unique);
  return list;
}

PyObject* ObjectGetHandle(PyObject* self, void*) { return PyLong_FromVoidPtr(HandleOf(self)); }
PyObject* ObjectGetTypeKey(PyObject* self, void*) {
  if (HandleOf(self) == nullptr) Py_RETURN_NONE;
  const char* key = nullptr;
  if (FerryTypeIndexToKey(TypeIndexOf(HandleOf(self)), &key) != 0) return RaiseFerryError();
  return PyUnicode_FromString(key);
}

PyMethodDef kObjectMethods[] = {
    {"same_as", ObjectSameAs, METH_O, "Whether both refer to the same Ferry object."},
    {"__init_handle_by_constructor__",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ObjectInitByConstructor)),
     METH_FASTCALL,
     "Calls fconstructor(*args) and makes self refer to the object it returns (TVM-style)."},
    {"__getstate__", ObjectGetState, METH_NOARGS, "The object as JSON (for pickle)."},
    {"__setstate__", ObjectSetState, METH_O, "Loads the object from JSON (for pickle)."},
    {"__dir__", ObjectDir, METH_NOARGS, "Attributes, including the reflected fields."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kObjectGetSet[] = {
    {"__ferry_handle__", ObjectGetHandle, nullptr, "The address of the Ferry object.", nullptr},
    {"__ferry_type_key__", ObjectGetTypeKey, nullptr, "The type key of the Ferry object.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// ---------------------------------------------------------------------------------------------
// Field: a data descriptor reading one reflected field through a per-type cached getter.

struct PyField {
  PyObject_HEAD PyObject* name;
  int32_t cached_type_index;
  int64_t offset;
  FerryFieldGetter getter;
  /// The writer of the field for objects of `setter_type_index` (found on first write).
  int32_t setter_type_index;
  int64_t setter_offset;
  FerryFieldSetter setter;
};

PyObject* FieldNew(PyTypeObject* type, PyObject* args, PyObject*) {
  PyObject* name = nullptr;
  if (!PyArg_ParseTuple(args, "U", &name)) return nullptr;
  auto* self = reinterpret_cast<PyField*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->name = Py_NewRef(name);
  self->cached_type_index = -1;
  self->setter_type_index = -1;
  return reinterpret_cast<PyObject*>(self);
}

void FieldDealloc(PyObject* obj) {
  Py_CLEAR(reinterpret_cast<PyField*>(obj)->name);
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* FieldGet(PyObject* descr, PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<PyField*>(descr);
  if (obj == nullptr || obj == Py_None) return Py_NewRef(descr);
  // The descriptor may be applied to anything by hand (`Field.__get__(other)`). Only classes
  // derived from ferry.Object inherit its tp_getattro, so that is a one-load check for almost
  // all of them; the others (a __getattr__ of their own) take the subtype walk.
  const bool is_ferry_object = Py_TYPE(obj)->tp_getattro == &ObjectGetAttro || IsFerryObject(obj);
  FerryObjectHandle h = is_ferry_object ? HandleOf(obj) : nullptr;
  if (h == nullptr) {
    return PyErr_Format(PyExc_AttributeError, "'%s' object has no Ferry object to read '%U' from",
                        Py_TYPE(obj)->tp_name, self->name);
  }
  int32_t index = TypeIndexOf(h);
  if (index != self->cached_type_index) {
    const char* name = PyUnicode_AsUTF8(self->name);
    if (name == nullptr) return nullptr;
    if (FerryObjectGetFieldGetter(h, name, &self->offset, &self->getter) != 0) {
      self->cached_type_index = -1;
      return RaiseFerryError();
    }
    self->cached_type_index = index;
  }
  FerryAny cell;
  if (self->getter(static_cast<const char*>(h) + self->offset, &cell) != 0) {
    return RaiseFerryError();
  }
  return OwnedCellToPy(cell);
}

int FieldSet(PyObject* descr, PyObject* obj, PyObject* value) {
  auto* self = reinterpret_cast<PyField*>(descr);
  FerryObjectHandle h = IsFerryObject(obj) ? HandleOf(obj) : nullptr;
  if (h == nullptr) {
    PyErr_Format(PyExc_AttributeError, "'%s' object has no Ferry object to write '%U' to",
                 Py_TYPE(obj)->tp_name, self->name);
    return -1;
  }
  if (value == nullptr) {
    PyErr_Format(PyExc_AttributeError, "cannot delete field '%U' of '%s'", self->name,
                 TypeKeyOf(h));
    return -1;
  }
  int32_t index = TypeIndexOf(h);
  if (index != self->setter_type_index) {
    const char* name = PyUnicode_AsUTF8(self->name);
    if (name == nullptr) return -1;
    // AttributeError for a read-only type, before the value is looked at.
    if (FerryObjectGetFieldSetter(h, name, &self->setter_offset, &self->setter) != 0) {
      self->setter_type_index = -1;
      RaiseFerryError();
      return -1;
    }
    self->setter_type_index = index;
  }
  TempScope scope;
  FerryAny cell;
  int rc = PyToAny(value, &cell, &scope);
  if (rc == 0 && self->setter == nullptr) {
    // No setter: the field checks its values (a run-time type's field naming a type key).
    // FerryObjectSetAttr's error names the field itself.
    if (FerryObjectSetAttr(h, PyUnicode_AsUTF8(self->name), &cell) == 0) return 0;
    RaiseFerryError();
    NamePassedFieldType([](PyObject*, void* passed) { return static_cast<PyObject*>(passed); },
                        value);
    return -1;
  }
  if (rc == 0 && self->setter(static_cast<char*>(h) + self->setter_offset, &cell) != 0) {
    RaiseFerryError();
    std::string message;  // "expected int but got ferry.String": name what was assigned
    if (PendingTypeErrorText(&message)) RewritePassedType(value, std::move(message), 0);
    rc = -1;
  }
  if (rc != 0) {
    PyObject* prefix = PyUnicode_FromFormat("field '%U' of '%s'", self->name, TypeKeyOf(h));
    PrefixPendingError(prefix);
    Py_XDECREF(prefix);
  }
  return rc;
}

PyObject* FieldGetName(PyObject* self, void*) {
  return Py_NewRef(reinterpret_cast<PyField*>(self)->name);
}

/// A descriptor pickles as its name (the getter and setter it caches belong to this process):
/// cloudpickle sends a class defined in __main__ with its dict, descriptors included.
PyObject* FieldReduce(PyObject* self, PyObject*) {
  return Py_BuildValue("(O(O))", reinterpret_cast<PyObject*>(Py_TYPE(self)),
                       reinterpret_cast<PyField*>(self)->name);
}

PyMethodDef kFieldMethods[] = {
    {"__reduce__", FieldReduce, METH_NOARGS, "Pickles the descriptor as Field(name)."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kFieldGetSet[] = {
    {"name", FieldGetName, nullptr, "The field name.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace

PyTypeObject ObjectType = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject FieldType = {PyVarObject_HEAD_INIT(nullptr, 0)};

void InitObjectTypes() {
  ObjectType.tp_name = "ferry.Object";
  ObjectType.tp_doc =
      "The base class of every Ferry object in Python. Fields read as attributes; equality and "
      "hashing are by identity unless a subclass says otherwise; objects pickle through JSON.";
  ObjectType.tp_basicsize = sizeof(PyFerryObject);
  ObjectType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  ObjectType.tp_new = ObjectNew;
  ObjectType.tp_init = ObjectInit;
  ObjectType.tp_dealloc = ObjectDealloc;
  ObjectType.tp_getattro = ObjectGetAttro;
  ObjectType.tp_setattro = ObjectSetAttro;
  ObjectType.tp_repr = ObjectRepr;
  ObjectType.tp_hash = ObjectHash;
  ObjectType.tp_richcompare = ObjectRichCompare;
  ObjectType.tp_weaklistoffset = offsetof(PyFerryObject, weakrefs);
  ObjectType.tp_methods = kObjectMethods;
  ObjectType.tp_getset = kObjectGetSet;

  FieldType.tp_name = "ferry.Field";
  FieldType.tp_doc = "Field(name): reads the reflected field `name` of a Ferry object.";
  FieldType.tp_basicsize = sizeof(PyField);
  FieldType.tp_flags = Py_TPFLAGS_DEFAULT;
  FieldType.tp_new = FieldNew;
  FieldType.tp_dealloc = FieldDealloc;
  FieldType.tp_descr_get = FieldGet;
  FieldType.tp_descr_set = FieldSet;
  FieldType.tp_getset = kFieldGetSet;
  FieldType.tp_methods = kFieldMethods;
}

int InitClassRegistry() {
  g_state.classes_by_key = PyDict_New();
  g_state.auto_classes = PyDict_New();
  g_state.field_names = PyDict_New();
  g_state.global_funcs = PyDict_New();
  return g_state.classes_by_key != nullptr && g_state.auto_classes != nullptr &&
                 g_state.field_names != nullptr && g_state.global_funcs != nullptr
             ? 0
             : -1;
}

PyObject* WrapObject(FerryObjectHandle h, bool owned) {
  int32_t index = TypeIndexOf(h);
  if (index != kFerryFunction) {
    if (PyObject* wrapper = FindWrapper(h)) {
      if (owned) DecRef(h);  // the wrapper holds its own reference
      return Py_NewRef(wrapper);
    }
  }
  if (!owned) IncRef(h);  // the new wrapper's
  if (index == kFerryFunction) return WrapFunction(h);
  PyTypeObject* cls = ClassOf(index);
  PyObject* obj = cls->tp_alloc(cls, 0);
  if (obj == nullptr) {
    DecRef(h);
    return nullptr;
  }
  NoteWrapperMade(obj);
  reinterpret_cast<PyFerryObject*>(obj)->handle = h;
  RememberWrapper(h, obj);
  return obj;
}

PyTypeObject* ClassOf(int32_t type_index) {
  if (type_index < 0) return &ObjectType;
  size_t i = static_cast<size_t>(type_index);
  std::vector<PyTypeObject*>& cache = g_state.class_cache;
  if (i < cache.size() && cache[i] != nullptr) return cache[i];
  // Lookup may run Python code (the class hook), which may look up classes too, or register
  // one and clear the cache: index the cache only after it.
  PyTypeObject* cls = Lookup(type_index);
  if (i >= g_state.class_cache.size()) g_state.class_cache.resize(i + 1, nullptr);
  g_state.class_cache[i] = cls;
  return cls;
}

void InvalidateClassCache() { g_state.class_cache.clear(); }

PyObject* RegisterClass(PyObject*, PyObject* args) {
  const char* key = nullptr;
  PyObject* cls = nullptr;
  if (!PyArg_ParseTuple(args, "sO!", &key, &PyType_Type, &cls)) return nullptr;
  if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &ObjectType)) {
    return PyErr_Format(PyExc_TypeError, "register_object: %R does not derive from ferry.Object",
                        cls);
  }
  if (PyDict_SetItemString(g_state.classes_by_key, key, cls) != 0) return nullptr;
  // Classes made on first sight may now have a nearer registered ancestor (or this very key):
  // objects met from now on get classes made anew. Live wrappers keep theirs.
  PyDict_Clear(g_state.auto_classes);
  InvalidateClassCache();
  Py_RETURN_NONE;
}

PyObject* SetClassHook(PyObject*, PyObject* hook) {
  if (!PyCallable_Check(hook)) {
    return PyErr_Format(PyExc_TypeError, "_set_class_hook: %R is not callable", hook);
  }
  Py_XSETREF(g_state.class_hook, Py_NewRef(hook));
  Py_RETURN_NONE;
}

PyObject* ClassOfKey(PyObject*, PyObject* key) {
  const char* text = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
  if (text == nullptr) {
    if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_TypeError, "_class_of_key: a str, not %s", Py_TYPE(key)->tp_name);
    }
    return nullptr;
  }
  int32_t index = -1;
  if (FerryTypeKeyToIndex(text, &index) != 0) return RaiseFerryError();
  return Py_NewRef(reinterpret_cast<PyObject*>(ClassOf(index)));
}

PyObject* ListClasses(PyObject*, PyObject*) {
  return Py_BuildValue("(NN)", PyDict_Copy(g_state.classes_by_key),
                       PyDict_Copy(g_state.auto_classes));
}

}  // namespace ferry_py
