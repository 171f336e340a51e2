/// \file state.h
/// Everything `ferry._core` keeps between calls, in one place (as nanobind keeps its
/// internals): the classes, the package's hooks, the cached globals and the wrapper table. One
/// instance, `g_state`, made when the extension loads and never destroyed, so no static
/// destructor runs while wrappers may still be deallocated at interpreter exit. Touched with
/// the GIL held only.
#ifndef FERRY_PYTHON_STATE_H_
#define FERRY_PYTHON_STATE_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ferry/c_api.h>

#include <map>      // the code objects of C++ traceback entries
#include <string>   // the extension's path
#include <utility>  // pair
#include <vector>   // the class cache

#include "pointer_map_internal.h"

namespace ferry_py {

struct CoreState {
  // -- Classes (object.cc).
  /// type_key -> class registered by register_object (strong references).
  PyObject* classes_by_key = nullptr;
  /// type_key -> class made on first sight for a type without a registered class.
  PyObject* auto_classes = nullptr;
  /// type_index -> class, filled on demand (borrowed from the two dicts above).
  std::vector<PyTypeObject*> class_cache;
  /// type index -> frozenset of the type's field names, for the attribute fallback.
  PyObject* field_names = nullptr;

  // -- Hooks the pure-Python package installs (module functions _set_*).
  /// ferry.registry._class_hook: field descriptors of registered classes, classes made on
  /// first sight.
  PyObject* class_hook = nullptr;
  /// The DataType class (a str subclass), or NULL.
  PyObject* dtype_class = nullptr;
  /// (kind, message, backtrace) -> exception, or NULL.
  PyObject* error_factory = nullptr;

  // -- Errors (error.cc), each filled on first use.
  struct {
    /// The Python classes of the builtin kinds (FerryErrorBuiltinKinds) Python has too.
    std::vector<PyTypeObject*> builtin_classes;
    bool builtin_classes_ready = false;
    /// This extension's path as dladdr names it: frames from it are Python's side.
    std::string core_library;
    /// The globals of every C++ traceback frame: one dict that holds no frame.
    PyObject* cxx_globals = nullptr;
    /// (function, file, line) of a frame record (strings that live as long as the process)
    /// -> the empty code object of its traceback entry.
    std::map<std::pair<std::pair<const char*, const char*>, int32_t>, PyCodeObject*> codes;
  } errors;

  // -- Global functions looked up once and kept (CachedGlobal).
  struct {
    FerryObjectHandle array = nullptr;
    FerryObjectHandle map = nullptr;
    FerryObjectHandle list = nullptr;
    FerryObjectHandle list_to_array = nullptr;
    FerryObjectHandle repr = nullptr;
    FerryObjectHandle save_json = nullptr;
    FerryObjectHandle load_json = nullptr;
    FerryObjectHandle make_node = nullptr;
    FerryObjectHandle list_attr_names = nullptr;
    FerryObjectHandle dict_size = nullptr;
    FerryObjectHandle dict_get = nullptr;
    FerryObjectHandle dict_set = nullptr;
    FerryObjectHandle dict_erase = nullptr;
    FerryObjectHandle dict_count = nullptr;
  } globals;
  /// name -> ferry.Function, one per registration (get_global_func).
  PyObject* global_funcs = nullptr;

  // -- Types this interpreter registered (py_class.cc: py_class, tschema.register, unpickled
  // declarations). Their field defaults are this interpreter's values and factories, held in
  // libferry's type table; the leak check's teardown clears them (FerryTypeClearFieldDefaults)
  // while the interpreter can still free what they hold.
  std::vector<int32_t> registered_types;

  // -- Tensors (tensor.cc), set up by AddTensorFunctions.
  struct {
    PyObject* dlpack_name = nullptr;          ///< "__dlpack__"
    PyObject* max_version_kwnames = nullptr;  ///< ("max_version",)
    PyObject* max_version = nullptr;          ///< (1, 1)
    PyObject* dlpack_kwargs[4] = {};          ///< the keywords of __dlpack__, interned
    PyObject* numpy_name = nullptr;           ///< "numpy"
    PyTypeObject* ndarray_type = nullptr;     ///< numpy.ndarray, once NumPy is imported
    PyObject* from_dlpack = nullptr;          ///< numpy.from_dlpack, at first use
  } tensor;

  // -- Identity (object.cc).
  /// Ferry object -> its live Python wrapper (borrowed entries; see object.cc).
  ferry::details::PointerMap<PyObject*> wrappers;
};

/// The one instance.
extern CoreState& g_state;

/// Set for good once a live object has had a second wrapper, or a wrapper could not be entered in
/// g_state.wrappers (RememberWrapper, object.cc). While it is false, a live wrapper that holds an
/// object of a non-Function type is that object's entry, so a call whose result is one of its
/// arguments returns the argument's wrapper without looking it up (function.cc). A plain global
/// beside g_state: the call path reads it with one load (g_state is reached through a pointer).
inline bool g_wrapper_aliases = false;

}  // namespace ferry_py

#endif  // FERRY_PYTHON_STATE_H_
