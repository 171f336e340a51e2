// Types defined in Python (ferry.py_class, ferry.tschema.register): registration through the C
// ABI's FerryTypeRegisterWithFields, and creation of an object from all its field values.
#include <string>
#include <vector>

#include "core.h"

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
  return PyLong_FromLong(index);
}

/// _create(self, type_index, names, *values): makes `self` the new object of `type_index` whose
/// fields (all of them, in field order) take `values`. `names` (a tuple of the field names) only
/// names a value that does not convert. Returns None.
PyObject* CreateObject(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3 || !PyTuple_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "_create(self, type_index, names, *values)");
    return nullptr;
  }
  const long type_index = PyLong_AsLong(args[1]);
  if (type_index == -1 && PyErr_Occurred()) return nullptr;
  const Py_ssize_t n = nargs - 3;
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
    if (PyToAny(args[3 + i], &cells[i], &scope) != 0) {
      PyObject* names = args[2];
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
    return RaiseFerryError();
  }
  if (AdoptNewHandle(args[0], made) != 0) return nullptr;
  Py_RETURN_NONE;
}

}  // namespace ferry_py
