/// \file error.cc
/// Errors across the boundary. A Ferry error becomes the matching Python exception (built by
/// the package's factory); its C++ frames become traceback entries. A Python exception raised
/// in a callback becomes a Ferry Error whose payload is the exception itself, so when the error
/// comes back to Python the very same exception object is raised again, with the C++ frames it
/// crossed added to its traceback.
///
/// The traceback entries of C++ frames are frames of empty code objects (one per function and
/// line, cached) made by PyFrame_New, as Cython does: their globals are one shared dict and they
/// have no f_back, so they reference nothing of the user's, and a caught error frees its frames
/// when the catching function returns, with or without the garbage collector.
#include <dlfcn.h>  // dladdr: which frames are this extension's

#include <cstdio>   // snprintf
#include <cstdlib>  // malloc
#include <cstring>  // strcmp, memcpy
#include <string>

#include "core.h"  // Python.h first
// clang-format off
#include <frameobject.h>  // PyFrame_New
// clang-format on

namespace ferry_py {

void DecRefWithGil(void* obj) {
  // During finalization too: what the teardown of modules frees (a List of callables in a
  // module's globals, field defaults dropped by the leak check's teardown) releases its Python
  // objects, and what they hold in turn, while the interpreter can still free them.
  if (ThisThreadHoldsGil()) {
    Py_DECREF(static_cast<PyObject*>(obj));
    return;
  }
  // Another thread cannot take the GIL from a finalizing interpreter (it would hang or exit).
  if (!Py_IsInitialized() || InterpreterIsFinalizing()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(obj));
  PyGILState_Release(state);
}

namespace {

/// A str from UTF-8 that may be invalid (a message quoting bytes): bad bytes become U+FFFD.
PyObject* DecodeLenient(const char* text) {
  return PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(std::strlen(text)), "replace");
}

/// The Python classes of the builtin Ferry kinds (FerryErrorBuiltinKinds) that Python has too.
const std::vector<PyTypeObject*>& BuiltinKindClasses() {
  auto& errors = g_state.errors;
  if (!errors.builtin_classes_ready) {
    PyObject* builtins = PyEval_GetBuiltins();  // borrowed
    for (const char* const* kind = FerryErrorBuiltinKinds(); *kind != nullptr; ++kind) {
      PyObject* cls = builtins != nullptr ? PyDict_GetItemString(builtins, *kind) : nullptr;
      if (cls != nullptr && PyType_Check(cls)) {
        errors.builtin_classes.push_back(reinterpret_cast<PyTypeObject*>(cls));  // immortal
      }
    }
    errors.builtin_classes_ready = true;
  }
  return errors.builtin_classes;
}

/// The Ferry error kind of a Python exception: its __ferry_kind__, else the nearest class in its
/// MRO that is a builtin kind, else the class name.
std::string KindOf(PyObject* exc) {
  PyObject* kind = PyObject_GetAttrString(exc, "__ferry_kind__");
  const char* text = kind != nullptr && PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : nullptr;
  std::string out = text != nullptr ? text : "";  // not UTF-8 (a lone surrogate): ignored
  Py_XDECREF(kind);
  PyErr_Clear();
  if (!out.empty()) return out;
  const std::vector<PyTypeObject*>& known = BuiltinKindClasses();
  PyObject* mro = Py_TYPE(exc)->tp_mro;
  for (Py_ssize_t i = 0; mro != nullptr && i < PyTuple_GET_SIZE(mro); ++i) {
    PyObject* base = PyTuple_GET_ITEM(mro, i);
    for (PyTypeObject* cls : known) {
      if (base == reinterpret_cast<PyObject*>(cls)) return cls->tp_name;
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

/// The formatted traceback of a Python exception (the payload of an error a callback raised),
/// as malloc'ed UTF-8: the payload formatter, called only when C++ asks for the error's text.
char* FormatPayload(void* payload) {
  if (!Py_IsInitialized() || InterpreterIsFinalizing()) return nullptr;
  PyGILState_STATE state = PyGILState_Ensure();
  PyObject* saved_type = nullptr;
  PyObject* saved_value = nullptr;
  PyObject* saved_tb = nullptr;
  PyErr_Fetch(&saved_type, &saved_value, &saved_tb);
  char* out = nullptr;
  PyObject* module = PyImport_ImportModule("traceback");
  PyObject* lines = module != nullptr ? PyObject_CallMethod(module, "format_exception", "O",
                                                            static_cast<PyObject*>(payload))
                                      : nullptr;
  PyObject* empty = lines != nullptr ? PyUnicode_FromString("") : nullptr;
  PyObject* joined = empty != nullptr ? PyUnicode_Join(empty, lines) : nullptr;
  Py_ssize_t size = 0;
  const char* utf8 = joined != nullptr ? PyUnicode_AsUTF8AndSize(joined, &size) : nullptr;
  if (utf8 != nullptr) {
    out = static_cast<char*>(std::malloc(static_cast<size_t>(size) + 1));
    if (out != nullptr) std::memcpy(out, utf8, static_cast<size_t>(size) + 1);
  }
  Py_XDECREF(joined);
  Py_XDECREF(empty);
  Py_XDECREF(lines);
  Py_XDECREF(module);
  PyErr_Restore(saved_type, saved_value, saved_tb);  // drops any error of the formatting
  PyGILState_Release(state);
  return out;
}

/// The path of this extension as dladdr reports it: frames from it are Python's side.
const char* CoreLibrary() {
  std::string& path = g_state.errors.core_library;
  if (path.empty()) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&RaiseFerryError), &info) != 0 &&
        info.dli_fname != nullptr) {
      path = info.dli_fname;
    }
  }
  return path.c_str();
}

/// A C ABI entry point ("FerryFunctionCall"): where Python's side called into C++.
bool IsCAbiEntry(const char* function) {
  if (std::strncmp(function, "Ferry", 5) != 0 || function[5] < 'A' || function[5] > 'Z') {
    return false;
  }
  for (const char* p = function; *p != '\0'; ++p) {
    if (*p == ':' || *p == '(' || *p == ' ') return false;
  }
  return true;
}

/// The globals of every C++ frame: a dict that holds no frame, so no frame is in a cycle.
PyObject* CxxGlobals() {
  PyObject*& globals = g_state.errors.cxx_globals;
  if (globals == nullptr) {
    globals = PyDict_New();
    if (globals != nullptr) {
      PyObject* name = PyUnicode_FromString("<C++>");
      if (name == nullptr || PyDict_SetItemString(globals, "__name__", name) != 0) {
        Py_CLEAR(globals);
      }
      Py_XDECREF(name);
    }
  }
  return globals;
}

/// The code object of a C++ frame record, made once per (function, file, line): the strings
/// of a record live as long as the process, so their addresses are the key.
PyCodeObject* CodeOf(const FerryErrorFrame& frame) {
  auto& cache = g_state.errors.codes;
  const std::pair<std::pair<const char*, const char*>, int32_t> key{{frame.function, frame.file},
                                                                    frame.line};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::string name = frame.function;
  if (name.empty()) {
    char addr[32];
    std::snprintf(addr, sizeof(addr), "%#zx", static_cast<size_t>(frame.address));
    name = addr;
  }
  const char* file = frame.file[0] != '\0'      ? frame.file
                     : frame.library[0] != '\0' ? frame.library
                                                : "<C++>";
  PyCodeObject* code = PyCode_NewEmpty(file, name.c_str(), frame.line);
  if (code != nullptr) cache.emplace(key, code);  // kept for the life of the process
  return code;
}

/// Raises `exc` (a new reference is taken) with its own traceback, then in front of it the C++
/// frames of `error`, outermost first, ending at the innermost (the throw site): those between
/// the Python caller (the first frame of this extension or C ABI entry) and the throw, or, for
/// an error a Python callback raised, between this extension's callback frames and the caller.
/// A failure to decorate is dropped: it must never hide the error. `from_callback`: `exc` was
/// raised by a Python callback, so the frames begin with this extension's callback frames.
void RestoreWithFrames(PyObject* exc, FerryObjectHandle error, bool from_callback) {
  const FerryErrorFrame* frames = nullptr;
  int32_t num = 0;
  if (FerryErrorGetFrames(error, &frames, &num) != 0) {
    DiscardFerryError();  // not an Error object: no frames
    num = 0;
  }
  const char* core = CoreLibrary();
  int32_t begin = 0;
  // An error thrown in C++ begins at its throw site: when Ferry's calling machinery threw it
  // (an argument that does not convert), whose frames are left out, it begins in this
  // extension, and no C++ frame stands between the caller and the throw.
  while (from_callback && begin < num && std::strcmp(frames[begin].library, core) == 0) ++begin;
  int32_t end = begin;
  while (end < num && std::strcmp(frames[end].library, core) != 0 &&
         !IsCAbiEntry(frames[end].function)) {
    ++end;
  }
  // The frames are made before the exception is pending: the C API wants none pending.
  PyFrameObject* made[64];
  int32_t num_made = 0;
  PyObject* globals = end > begin ? CxxGlobals() : nullptr;
  PyThreadState* tstate = PyThreadState_Get();
  for (int32_t i = begin; globals != nullptr && i < end && num_made < 64; ++i) {
    PyCodeObject* code = CodeOf(frames[i]);
    PyFrameObject* frame = code != nullptr ? PyFrame_New(tstate, code, globals, nullptr) : nullptr;
    if (frame == nullptr) break;
    made[num_made++] = frame;
  }
  PyErr_Clear();  // of a failed decoration (out of memory): the frames made so far are used
  PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(exc))), Py_NewRef(exc),
                PyException_GetTraceback(exc));
  for (int32_t i = 0; i < num_made; ++i) {  // innermost first: each one goes in front
    PyTraceBack_Here(made[i]);
    Py_DECREF(made[i]);
  }
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
  Py_XDECREF(type);
  Py_XDECREF(tb);
  // The C++ frames are captured here (raw); the Python traceback is formatted only if C++ asks
  // for the text (FormatPayload), so crossing costs the same however long the traceback grew.
  FerryObjectHandle error = nullptr;
  if (FerryErrorCreate(kind.c_str(), message.c_str(), nullptr, &error) != 0) {
    Py_DECREF(value);
    return;  // the failure to create it is the raised error now
  }
  if (FerryErrorSetPayload(error, value, &DecRefWithGil) != 0) {
    Py_DECREF(value);
  } else if (FerryErrorSetPayloadFormatter(error, &FormatPayload) != 0) {
    DiscardFerryError();  // the text then lacks Python's part: not worth failing
  }
  FerryErrorSetRaised(error);
  DecRef(error);
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
    RestoreWithFrames(static_cast<PyObject*>(payload), error, /*from_callback=*/true);
    DecRef(error);
    return nullptr;
  }
  const char *kind = "RuntimeError", *message = "", *backtrace = "";
  if (FerryErrorGetInfo(error, &kind, &message, &backtrace) != 0) {
    DiscardFerryError();  // not an Error object: say so below
    message = "a Ferry call raised an object that is not an error";
  }
  PyObject* exc = nullptr;
  PyObject* py_message = DecodeLenient(message);
  if (g_state.error_factory != nullptr && py_message != nullptr) {
    PyObject* py_kind = DecodeLenient(kind);
    PyObject* py_backtrace = py_kind != nullptr ? DecodeLenient(backtrace) : nullptr;
    if (py_backtrace != nullptr) {
      exc = PyObject_CallFunctionObjArgs(g_state.error_factory, py_kind, py_message, py_backtrace,
                                         nullptr);
    }
    Py_XDECREF(py_backtrace);
    Py_XDECREF(py_kind);
  }
  if (exc == nullptr) {
    if (!PyErr_Occurred()) {
      if (py_message != nullptr) {
        PyErr_SetObject(PyExc_RuntimeError, py_message);
      } else {
        PyErr_SetString(PyExc_RuntimeError, "a Ferry call failed (its message is unreadable)");
      }
    }
    Py_XDECREF(py_message);
    DecRef(error);  // after: `message` is the error's
    return nullptr;
  }
  Py_DECREF(py_message);
  RestoreWithFrames(exc, error, /*from_callback=*/false);
  Py_DECREF(exc);
  DecRef(error);
  return nullptr;
}

PyObject* BuiltinErrorKinds(PyObject*, PyObject*) {
  PyObject* out = PyList_New(0);
  for (const char* const* kind = FerryErrorBuiltinKinds(); out != nullptr && *kind != nullptr;
       ++kind) {
    PyObject* name = PyUnicode_FromString(*kind);
    if (name == nullptr || PyList_Append(out, name) != 0) Py_CLEAR(out);
    Py_XDECREF(name);
  }
  if (out == nullptr) return nullptr;
  Py_SETREF(out, PyList_AsTuple(out));
  return out;
}

}  // namespace ferry_py
