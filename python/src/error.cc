/// \file error.cc
/// Errors across the boundary. A Ferry error becomes the matching Python exception (built by
/// the package's factory, which appends the C++ frames to the traceback). A Python exception
/// raised in a callback becomes a Ferry Error whose payload is the exception itself, so when
/// the error comes back to Python the very same exception object is raised again.
#include <string>

#include "core.h"

namespace ferry_py {


namespace {
bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();  // the same, under its pre-3.13 name
#endif
}
}  // namespace

void DecRefWithGil(void* obj) {
  if (!Py_IsInitialized() || IsFinalizing()) return;  // the interpreter is gone
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(obj));
  PyGILState_Release(state);
}

namespace {

/// The Ferry error kind of a Python exception: the nearest builtin base the Ferry side knows by
/// name, else the class name.
std::string KindOf(PyObject* exc) {
  static PyObject* const kKnown[] = {
      PyExc_ValueError,          PyExc_TypeError,     PyExc_KeyError,    PyExc_IndexError,
      PyExc_AttributeError,      PyExc_NotImplementedError, PyExc_MemoryError,
      PyExc_OverflowError,       PyExc_ZeroDivisionError,   PyExc_RuntimeError,
  };
  PyObject* kind = PyObject_GetAttrString(exc, "__ferry_kind__");
  const char* text = kind != nullptr && PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : nullptr;
  std::string out = text != nullptr ? text : "";  // not UTF-8 (a lone surrogate): ignored
  Py_XDECREF(kind);
  PyErr_Clear();
  if (!out.empty()) return out;
  for (PyObject* known : kKnown) {
    if (PyObject_TypeCheck(exc, reinterpret_cast<PyTypeObject*>(known))) {
      return reinterpret_cast<PyTypeObject*>(known)->tp_name;
    }
  }
  return _PyType_Name(Py_TYPE(exc));
}

/// str(exc), or a placeholder when that fails.
std::string MessageOf(PyObject* exc) {
  PyObject* text = PyObject_Str(exc);
  std::string out;
  if (text != nullptr && PyUnicode_Check(text)) {
    const char* utf8 = PyUnicode_AsUTF8(text);
    if (utf8 != nullptr) out = utf8;
  }
  Py_XDECREF(text);
  PyErr_Clear();
  return out.empty() && text == nullptr ? "<exception str() failed>" : out;
}

/// The Python traceback as text, innermost frame last (as Python prints it).
std::string TracebackOf(PyObject* tb) {
  if (tb == nullptr) return std::string();
  std::string out;
  PyObject* module = PyImport_ImportModule("traceback");
  PyObject* lines = module ? PyObject_CallMethod(module, "format_tb", "O", tb) : nullptr;
  if (lines != nullptr) {
    PyObject* empty = PyUnicode_FromString("");
    PyObject* joined = empty ? PyUnicode_Join(empty, lines) : nullptr;
    if (joined != nullptr) {
      const char* utf8 = PyUnicode_AsUTF8(joined);
      if (utf8 != nullptr) out = utf8;
    }
    Py_XDECREF(joined);
    Py_XDECREF(empty);
  }
  Py_XDECREF(lines);
  Py_XDECREF(module);
  PyErr_Clear();
  return out;
}

}  // namespace

void SetFerryErrorFromPython() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  if (type == nullptr) {
    FerryErrorSetRaisedFromCStr("RuntimeError", "a Python callback failed without an exception");
    return;
  }
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb != nullptr) PyException_SetTraceback(value, tb);
  std::string kind = KindOf(value);
  std::string message = MessageOf(value);
  std::string backtrace = TracebackOf(tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  FerryObjectHandle error = nullptr;
  if (FerryErrorCreate(kind.c_str(), message.c_str(), backtrace.c_str(), &error) != 0) {
    Py_DECREF(value);
    return;  // the failure to create it is the raised error now
  }
  if (FerryErrorSetPayload(error, value, &DecRefWithGil) != 0) Py_DECREF(value);
  FerryErrorSetRaised(error);
  FerryObjectDecRef(error);
}

PyObject* RaiseFerryError() {
  FerryObjectHandle error = nullptr;
  FerryErrorMoveFromRaised(&error);
  if (error == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "a Ferry call failed without raising an error");
    return nullptr;
  }
  void* payload = nullptr;
  void (*deleter)(void*) = nullptr;
  if (FerryErrorGetPayload(error, &payload, &deleter) == 0 && deleter == &DecRefWithGil &&
      payload != nullptr) {
    PyObject* exc = static_cast<PyObject*>(payload);
    PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(exc))), Py_NewRef(exc),
                  PyException_GetTraceback(exc));
    FerryObjectDecRef(error);
    return nullptr;
  }
  const char *kind = "RuntimeError", *message = "", *backtrace = "";
  FerryErrorGetInfo(error, &kind, &message, &backtrace);
  PyObject* exc = nullptr;
  if (g_state.error_factory != nullptr) {
    exc = PyObject_CallFunction(g_state.error_factory, "sss", kind, message, backtrace);
  }
  if (exc == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, message);
    FerryObjectDecRef(error);  // after: `message` is the error's
    return nullptr;
  }
  FerryObjectDecRef(error);
  PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(exc))), exc,
                PyException_GetTraceback(exc));
  return nullptr;
}

}  // namespace ferry_py
