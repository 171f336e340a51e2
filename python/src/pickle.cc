/// \file pickle.cc
/// Pickles that name their libraries: which library registered a type key or a global
/// (FerryLibraryOfTypeKey/FerryLibraryOfGlobal), and the libraries the type keys of a
/// save_json document need. The policy (FERRY_PICKLE_LIBRARIES) and the loading on the
/// unpickling side are in ferry/registry.py; docs/distributed.md describes both.
#include <cstdlib>  // getenv
#include <cstring>  // strcmp, memchr
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core.h"

namespace ferry_py {

bool PickleLibrariesEnabled() {
  const char* value = std::getenv("FERRY_PICKLE_LIBRARIES");
  return value == nullptr || !(std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0 ||
                               std::strcmp(value, "false") == 0 || std::strcmp(value, "no") == 0);
}

PyObject* PickleLibrariesOfJSON(PyObject* text) {
  if (!PickleLibrariesEnabled()) return PyTuple_New(0);
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  if (data == nullptr) return nullptr;
  // save_json writes each node on a line of its own, starting with its type: the type keys are
  // the strings after this marker (a string value holding the same characters is escaped, and
  // its newlines too, so it never starts a line).
  constexpr std::string_view kMarker = "\n  {\"type\": \"";
  std::string_view doc(data, static_cast<size_t>(size));
  std::unordered_set<std::string_view> seen_keys;
  std::vector<std::string> paths;
  PyObject* out = PyList_New(0);
  if (out == nullptr) return nullptr;
  for (size_t at = doc.find(kMarker); at != std::string_view::npos; at = doc.find(kMarker, at)) {
    const size_t begin = at + kMarker.size();
    size_t end = begin;
    bool escaped = false;
    while (end < doc.size() && doc[end] != '"') {
      if (doc[end] == '\\') {
        escaped = true;
        ++end;  // the escaped character, which may be a quote
      }
      ++end;
    }
    at = end;
    std::string_view raw = doc.substr(begin, end - begin);
    if (end >= doc.size() || !seen_keys.insert(raw).second) continue;
    std::string key(raw);
    if (escaped) {  // a key with escapes (never seen in practice): let Python's json decode it
      PyObject* json = PyImport_ImportModule("json");
      PyObject* quoted = PyUnicode_FromStringAndSize(doc.data() + begin - 1,
                                                     static_cast<Py_ssize_t>(raw.size() + 2));
      PyObject* decoded = json != nullptr && quoted != nullptr
                              ? PyObject_CallMethod(json, "loads", "(O)", quoted)
                              : nullptr;
      Py_XDECREF(json);
      Py_XDECREF(quoted);
      const char* utf8 = decoded != nullptr ? PyUnicode_AsUTF8(decoded) : nullptr;
      if (utf8 == nullptr) {
        Py_XDECREF(decoded);
        Py_DECREF(out);
        return nullptr;
      }
      key = utf8;
      Py_DECREF(decoded);
    }
    const char* path = nullptr;
    if (FerryLibraryOfTypeKey(key.c_str(), &path) != 0) {
      Py_DECREF(out);
      return RaiseFerryError();
    }
    if (path == nullptr) continue;
    bool known = false;
    for (const std::string& p : paths) known = known || p == path;
    if (known) continue;
    paths.emplace_back(path);
    PyObject* pair = Py_BuildValue("(ss)", path, key.c_str());
    if (pair == nullptr || PyList_Append(out, pair) != 0) {
      Py_XDECREF(pair);
      Py_DECREF(out);
      return nullptr;
    }
    Py_DECREF(pair);
  }
  PyObject* tuple = PyList_AsTuple(out);
  Py_DECREF(out);
  return tuple;
}

namespace {

PyObject* JSONLibraries(PyObject*, PyObject* text) {
  if (!PyUnicode_Check(text)) {
    return PyErr_Format(PyExc_TypeError, "_json_libraries: expected a str, not %s",
                        Py_TYPE(text)->tp_name);
  }
  return PickleLibrariesOfJSON(text);
}

PyObject* LibraryOfType(PyObject*, PyObject* arg) {
  const char* key = PyUnicode_AsUTF8(arg);
  if (key == nullptr) return nullptr;
  const char* path = nullptr;
  if (FerryLibraryOfTypeKey(key, &path) != 0) return RaiseFerryError();
  if (path == nullptr) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(path);
}

PyObject* LibraryOfGlobal(PyObject*, PyObject* arg) {
  const char* name = PyUnicode_AsUTF8(arg);
  if (name == nullptr) return nullptr;
  const char* path = nullptr;
  if (FerryLibraryOfGlobal(name, &path) != 0) return RaiseFerryError();
  if (path == nullptr) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(path);
}

PyObject* PickleLibrariesOn(PyObject*, PyObject*) {
  return PyBool_FromLong(PickleLibrariesEnabled());
}

PyMethodDef kPickleMethods[] = {
    {"_json_libraries", JSONLibraries, METH_O,
     "_json_libraries(text): ((library path, type key), ...) for the libraries the types of a "
     "save_json document were registered by, one pair per library; () when none (or "
     "FERRY_PICKLE_LIBRARIES=0)."},
    {"_library_of_type", LibraryOfType, METH_O,
     "_library_of_type(type_key): the resolved path of the library whose load registered the "
     "type, or None (the core, the executable, or not registered by load_library)."},
    {"_library_of_global", LibraryOfGlobal, METH_O,
     "_library_of_global(name): the resolved path of the library whose load registered the "
     "global function (while it is still that function), or None."},
    {"_pickle_libraries_on", PickleLibrariesOn, METH_NOARGS,
     "Whether pickles name and load their libraries (FERRY_PICKLE_LIBRARIES is not 0)."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int AddPickleFunctions(PyObject* module) { return PyModule_AddFunctions(module, kPickleMethods); }

}  // namespace ferry_py
