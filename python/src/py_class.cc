// Types defined in Python (ferry.py_class, ferry.tschema.register): registration through the C
// ABI's FerryTypeRegisterWithFields, and creation of an object from all its field values.
#include <algorithm>  // find
#include <memory>
#include <new>  // bad_alloc
#include <string>
#include <vector>

#include "core.h"
#include "pointer_map_internal.h"

namespace ferry_py {

/// _register_type(key, parent_index, child_slots, flags, ((name, type, flags), ...)) -> index.
PyObject* RegisterType(PyObject*, PyObject* args) {
  const char* key = nullptr;
  int parent = 0, child_slots = 0, flags = 0;
  PyObject* fields = nullptr;
  if (!PyArg_ParseTuple(args, "siiiO!", &key, &parent, &child_slots, &flags, &PyTuple_Type,
                        &fields)) {
    return nullptr;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(fields);
  std::vector<FerryFieldSpec> specs(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    FerryFieldSpec& spec = specs[static_cast<size_t>(i)];
    int field_flags = 0;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "ssi", &spec.name, &spec.type,
                          &field_flags)) {
      return nullptr;
    }
    spec.flags = field_flags;
  }
  int32_t index = -1;
  if (FerryTypeRegisterWithFields(key, parent, child_slots, flags, specs.data(),
                                  static_cast<int32_t>(n), &index) != 0) {
    return RaiseFerryError();
  }
  InvalidateClassCache();
  std::vector<int32_t>& registered = g_state.registered_types;
  if (std::find(registered.begin(), registered.end(), index) == registered.end()) {
    try {
      registered.push_back(index);
    } catch (const std::bad_alloc&) {
      return PyErr_NoMemory();
    }
  }
  return PyLong_FromLong(index);
}

namespace {

/// Converts `values` (one per field, in field order) and makes the object of `type_index` from
/// them: a new handle, or NULL with an exception naming the field (`names`) that did not
/// convert or was refused.
FerryObjectHandle MakeFromValues(long type_index, PyObject* names, PyObject* const* values,
                                 Py_ssize_t n) {
  constexpr Py_ssize_t kInline = 8;
  FerryAny inline_cells[kInline];
  std::vector<FerryAny> more;
  FerryAny* cells = inline_cells;
  if (n > kInline) {
    more.resize(static_cast<size_t>(n));
    cells = more.data();
  }
  TempScope scope;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PyToAny(values[i], &cells[i], &scope) != 0) {
      PyObject* prefix = i < PyTuple_GET_SIZE(names)
                             ? PyUnicode_FromFormat("field '%U'", PyTuple_GET_ITEM(names, i))
                             : PyUnicode_FromFormat("field %zd", i);
      PrefixPendingError(prefix);
      Py_XDECREF(prefix);
      return nullptr;
    }
  }
  FerryObjectHandle made = nullptr;
  if (FerryObjectCreate(static_cast<int32_t>(type_index), cells, static_cast<int32_t>(n), &made) !=
      0) {
    RaiseFerryError();
    struct Passed {
      PyObject* names;
      PyObject* const* values;
      Py_ssize_t n;
    } passed{names, values, n};
    NamePassedFieldType(
        [](PyObject* name, void* context) -> PyObject* {
          const auto* p = static_cast<const Passed*>(context);
          for (Py_ssize_t i = 0; i < p->n && i < PyTuple_GET_SIZE(p->names); ++i) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(p->names, i), name) == 0) return p->values[i];
          }
          return nullptr;
        },
        &passed);
    return nullptr;
  }
  return made;
}

/// Raises dataclasses.FrozenInstanceError (an AttributeError) for assigning `name`.
void RaiseFrozen(PyObject* name) {
  PyObject* module = PyImport_ImportModule("dataclasses");
  PyObject* kind =
      module != nullptr ? PyObject_GetAttrString(module, "FrozenInstanceError") : nullptr;
  Py_XDECREF(module);
  if (kind == nullptr) return;
  PyErr_Format(kind, "cannot assign to field '%U': __init__ of a frozen py_class cannot run again",
               name);
  Py_DECREF(kind);
}

/// __init__ run again on the live object `self`: the fields take `values` in place, so every
/// holder (C++ included) sees them and the wrapper keeps its object (and hash). All values are
/// converted and checked first (into a scratch object), so a bad one leaves `self` unchanged.
/// A frozen type's object is a FrozenInstanceError. 0, or -1 with an exception.
int ReinitInPlace(PyObject* self, long type_index, PyObject* names, PyObject* const* values,
                  Py_ssize_t n) {
  FerryObjectHandle target = HandleOf(self);
  if (n > 0 && PyTuple_GET_SIZE(names) == n) {
    // Writable at all? (Asked before converting: a frozen type refuses any value.)
    const char* first = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, 0));
    if (first == nullptr) return -1;
    int64_t offset = 0;
    FerryFieldSetter setter = nullptr;
    if (FerryObjectGetFieldSetter(target, first, &offset, &setter) != 0) {
      DiscardFerryError();
      RaiseFrozen(PyTuple_GET_ITEM(names, 0));
      return -1;
    }
  }
  FerryObjectHandle scratch = MakeFromValues(type_index, names, values, n);
  if (scratch == nullptr) return -1;
  int rc = 0;
  for (Py_ssize_t i = 0; i < n && rc == 0; ++i) {
    const char* name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i));
    FerryAny cell{};
    if (name == nullptr) {
      rc = -1;
    } else if (FerryObjectGetAttr(scratch, name, &cell) != 0 ||
               FerryObjectSetAttr(target, name, &cell) != 0) {
      RaiseFerryError();
      rc = -1;
    }
    FerryAnyRelease(&cell);
  }
  FerryObjectDecRef(scratch);
  return rc;
}

}  // namespace

/// _create(self, type_index, names, *values): makes `self` the new object of `type_index` whose
/// fields (all of them, in field order) take `values`; when `self` already holds an object
/// (`__init__` called again), that object's fields take them in place (ReinitInPlace). `names`
/// (a tuple of the field names) names a value that does not convert. Returns None.
namespace {

/// Whether the object `h` is of the type `type_index` or of a type derived from it.
bool HoldsTypeOrSubtype(FerryObjectHandle h, long type_index) {
  const int32_t actual = TypeIndexOf(h);
  if (actual == type_index) return true;
  const FerryTypeInfo* info = nullptr;
  const FerryTypeInfo* wanted = nullptr;
  if (FerryTypeGetInfo(actual, &info) != 0 ||
      FerryTypeGetInfo(static_cast<int32_t>(type_index), &wanted) != 0) {
    DiscardFerryError();
    return false;
  }
  return wanted->type_depth < info->type_depth &&
         info->type_ancestors[wanted->type_depth] == wanted->type_index;
}

}  // namespace

PyObject* CreateObject(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3 || !PyTuple_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "_create(self, type_index, names, *values)");
    return nullptr;
  }
  const long type_index = PyLong_AsLong(args[1]);
  if (type_index == -1 && PyErr_Occurred()) return nullptr;
  // `self` arrives unchecked when __init__ is called through the class (`P.__init__(5, ...)`):
  // it must be an object of this type (or of a subtype), or its memory is taken for a wrapper's.
  if (!IsFerryObject(args[0]) ||
      (HandleOf(args[0]) != nullptr && !HoldsTypeOrSubtype(HandleOf(args[0]), type_index))) {
    const char* key = nullptr;
    if (FerryTypeIndexToKey(static_cast<int32_t>(type_index), &key) != 0) DiscardFerryError();
    PyErr_Format(PyExc_TypeError, "%s.__init__: self must be a %s object, not '%s'",
                 key != nullptr ? key : "py_class", key != nullptr ? key : "py_class",
                 Py_TYPE(args[0])->tp_name);
    return nullptr;
  }
  if (HandleOf(args[0]) != nullptr) {
    if (ReinitInPlace(args[0], type_index, args[2], args + 3, nargs - 3) != 0) return nullptr;
    Py_RETURN_NONE;
  }
  FerryObjectHandle made = MakeFromValues(type_index, args[2], args + 3, nargs - 3);
  if (made == nullptr) return nullptr;
  if (AdoptNewHandle(args[0], made) != 0) return nullptr;
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------------------------------------
// The constructor's fast path.
//
// `P(1, 2.0, "abc")` for a py_class P goes through type.__call__: an argument tuple, P.__new__,
// then the generated Python __init__ (a frame), which calls _create. The class's own vectorcall
// entry (PyTypeObject::tp_vectorcall, which CPython calls in place of type.__call__ when set
// and never inherits) binds the arguments to the fields here instead, from a plan made when the
// class was decorated, and does what __new__ and __init__ would. It applies only while the
// class is as it was decorated: its __init__ is the generated one, __new__ is ferry.Object's and
// there is no __post_init__ (checked again whenever the class's attribute version changes). Any
// call it cannot bind exactly (too many arguments, an unknown or repeated keyword, a missing
// one) goes the generic way, so errors are the ones the generated __init__ gives.

namespace {

struct InitField {
  PyObject* name = nullptr;      // str
  PyObject* fallback = nullptr;  // the default, the default_factory, or NULL (required)
  bool is_factory = false;
  bool init = true;  // a parameter of __init__
};

struct InitPlan {
  PyTypeObject* type = nullptr;
  PyObject* init = nullptr;  // the generated __init__
  newfunc tp_new = nullptr;
  long type_index = -1;
  unsigned int version_tag = 0;
  PyObject* names = nullptr;  // tuple of the field names, in field order
  std::vector<InitField> fields;
  std::vector<Py_ssize_t> positional;  // the field of each positional parameter, in order
};

ferry::details::PointerMap<InitPlan*>& Plans() {
  static auto* plans = new ferry::details::PointerMap<InitPlan*>();  // lives as the classes do
  return *plans;
}

/// The plans of redecorated classes, replaced in Plans(): a call may still be reading one, so
/// they are kept until DropInitPlans.
std::vector<InitPlan*>& ReplacedPlans() {
  static auto* plans = new std::vector<InitPlan*>();
  return *plans;
}

void FreePlan(InitPlan* plan) {
  for (InitField& field : plan->fields) {
    Py_XDECREF(field.name);
    Py_XDECREF(field.fallback);
  }
  Py_XDECREF(plan->init);
  Py_XDECREF(plan->names);
  Py_XDECREF(reinterpret_cast<PyObject*>(plan->type));
  delete plan;
}

PyObject* InternedStr(const char* text) {
  PyObject* s = PyUnicode_InternFromString(text);
  if (s == nullptr) PyErr_Clear();
  return s;
}

/// Whether `plan` still describes its class; refreshes the version tag it is keyed on.
bool PlanIsCurrent(InitPlan& plan) {
  PyTypeObject* type = plan.type;
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
  if ((type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) != 0 &&
      type->tp_version_tag == plan.version_tag && plan.version_tag != 0) {
    return true;
  }
#endif
  static PyObject* const kInit = InternedStr("__init__");
  static PyObject* const kPostInit = InternedStr("__post_init__");
  if (kInit == nullptr || kPostInit == nullptr) return false;
  // _PyType_Lookup (the method cache) assigns the class a new version tag.
  if (_PyType_Lookup(type, kInit) != plan.init || type->tp_new != plan.tp_new ||
      _PyType_Lookup(type, kPostInit) != nullptr) {
    return false;
  }
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
  if ((type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) != 0) plan.version_tag = type->tp_version_tag;
#endif
  return true;
}

/// type.__call__(type, *args, **kwargs) from vectorcall arguments.
PyObject* CallGeneric(PyObject* type, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tuple = PyTuple_New(nargs);
  if (tuple == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(tuple, i, args[i]);
  }
  PyObject* kwargs = nullptr;
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
    kwargs = PyDict_New();
    for (Py_ssize_t j = 0; kwargs != nullptr && j < PyTuple_GET_SIZE(kwnames); ++j) {
      if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, j), args[nargs + j]) != 0) {
        Py_CLEAR(kwargs);
      }
    }
    if (kwargs == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
  }
  PyObject* result = PyType_Type.tp_call(type, tuple, kwargs);
  Py_DECREF(tuple);
  Py_XDECREF(kwargs);
  return result;
}

PyObject* PyClassVectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  InitPlan** found = Plans().Find(callable);
  if (found == nullptr || !PlanIsCurrent(**found)) {
    return CallGeneric(callable, args, nargs, kwnames);
  }
  const InitPlan& plan = **found;
  const Py_ssize_t n = static_cast<Py_ssize_t>(plan.fields.size());
  if (nargs > static_cast<Py_ssize_t>(plan.positional.size())) {
    return CallGeneric(callable, args, nargs, kwnames);
  }
  constexpr Py_ssize_t kInline = 16;
  PyObject* inline_values[kInline];
  std::vector<PyObject*> more;
  PyObject** values = inline_values;
  if (n > kInline) {
    more.resize(static_cast<size_t>(n));
    values = more.data();
  }
  for (Py_ssize_t k = 0; k < n; ++k) values[k] = nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) values[plan.positional[static_cast<size_t>(i)]] = args[i];
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, j);
    Py_ssize_t k = 0;
    while (k < n && plan.fields[static_cast<size_t>(k)].name != key) ++k;  // interned: identity
    if (k == n) {
      for (k = 0; k < n; ++k) {
        int same = PyUnicode_Compare(plan.fields[static_cast<size_t>(k)].name, key);
        if (same == -1 && PyErr_Occurred()) return nullptr;
        if (same == 0) break;
      }
    }
    if (k == n || !plan.fields[static_cast<size_t>(k)].init || values[k] != nullptr) {
      return CallGeneric(callable, args, nargs, kwnames);
    }
    values[k] = args[nargs + j];
  }
  // Every required parameter given? (Checked before any default_factory runs.)
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (values[k] == nullptr && plan.fields[static_cast<size_t>(k)].fallback == nullptr) {
      return CallGeneric(callable, args, nargs, kwnames);
    }
  }
  std::vector<PyObject*> made_defaults;  // new references from default factories
  struct Release {
    std::vector<PyObject*>& refs;
    ~Release() {
      for (PyObject* r : refs) Py_DECREF(r);
    }
  } release{made_defaults};
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (values[k] != nullptr) continue;
    const InitField& field = plan.fields[static_cast<size_t>(k)];
    if (!field.is_factory) {
      values[k] = field.fallback;
      continue;
    }
    PyObject* value = PyObject_CallNoArgs(field.fallback);
    if (value == nullptr) return nullptr;
    made_defaults.push_back(value);
    values[k] = value;
  }
  PyTypeObject* type = plan.type;
  PyObject* self = plan.tp_new(type, nullptr, nullptr);  // ferry.Object.__new__
  if (self == nullptr) return nullptr;
  FerryObjectHandle made = MakeFromValues(plan.type_index, plan.names, values, n);
  if (made == nullptr) {
    Py_DECREF(self);
    return nullptr;
  }
  AttachNewHandle(self, made);
  return self;
}

}  // namespace

/// _install_init(cls, init, type_index, names, ((name, kind, value, init, kw_only), ...)), one
/// tuple per field in field order: gives `cls` the fast constructor (above) for its generated
/// `init`. `kind` is 0 for a required field, 1 when `value` is its default, 2 when `value` is
/// its default_factory.
PyObject* InstallInit(PyObject*, PyObject* args) {
  constexpr int kRequired = 0, kFactory = 2;
  PyObject *cls = nullptr, *init = nullptr, *names = nullptr, *fields = nullptr;
  long type_index = -1;
  if (!PyArg_ParseTuple(args, "O!OlO!O!", &PyType_Type, &cls, &init, &type_index, &PyTuple_Type,
                        &names, &PyTuple_Type, &fields)) {
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  if (Py_TYPE(cls) != &PyType_Type || !PyType_IsSubtype(type, &ObjectType) ||
      PyTuple_GET_SIZE(fields) != PyTuple_GET_SIZE(names)) {
    PyErr_SetString(PyExc_TypeError, "_install_init: a ferry.Object class of metaclass type");
    return nullptr;
  }
  // A class with its own __new__ (or a metaclass) keeps the generic path.
  if (type->tp_new != ObjectType.tp_new) Py_RETURN_NONE;
  auto plan = std::make_unique<InitPlan>();
  plan->type = type;
  plan->init = init;
  plan->tp_new = type->tp_new;
  plan->type_index = type_index;
  plan->names = names;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fields); ++k) {
    PyObject *name = nullptr, *value = nullptr;
    int kind = 0, in_init = 0, kw_only = 0;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, k), "UiOpp", &name, &kind, &value, &in_init,
                          &kw_only)) {
      return nullptr;
    }
    PyObject* fallback = kind == kRequired ? nullptr : value;
    const int is_factory = kind == kFactory;
    Py_INCREF(name);
    PyUnicode_InternInPlace(&name);
    InitField field;
    field.name = name;
    field.fallback = fallback;
    Py_XINCREF(fallback);
    field.is_factory = is_factory != 0;
    field.init = in_init != 0;
    if (field.init && !kw_only) plan->positional.push_back(k);
    plan->fields.push_back(field);
  }
  Py_INCREF(cls);
  Py_INCREF(init);
  Py_INCREF(names);
  InitPlan* raw = plan.release();
  auto [slot, inserted] = Plans().Insert(cls, raw);
  if (!inserted) {  // the class is redecorated
    ReplacedPlans().push_back(*slot);
    *slot = raw;
  }
  (void)PlanIsCurrent(*raw);
  type->tp_vectorcall = PyClassVectorcall;
  Py_RETURN_NONE;
}

void DropInitPlans() {
  std::vector<InitPlan*> plans;
  plans.swap(ReplacedPlans());
  Plans().ForEach([&](const void*, InitPlan* plan) { plans.push_back(plan); });
  Plans() = ferry::details::PointerMap<InitPlan*>();  // classes called later take the generic path
  for (InitPlan* plan : plans) FreePlan(plan);
}

}  // namespace ferry_py
