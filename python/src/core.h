/// \file core.h
/// Shared declarations of the `ferry._core` extension: the Python object layouts, value
/// conversion in both directions, the class registry and the error bridge. The extension talks
/// to libferry only through the C ABI (ferry/c_api.h).
#ifndef FERRY_PYTHON_CORE_H_
#define FERRY_PYTHON_CORE_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ferry/c_api.h>

#include <cstring>  // memcpy
#include <string>   // messages of conversion errors
#include <vector>   // temporaries of a conversion beyond the inline ones
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>  // pthread_self: the thread of the GIL's holder, before Python 3.12
#define FERRY_PY_PTHREADS 1
#endif

#include "state.h"

namespace ferry_py {

/// A Python handle of a Ferry object: owns one strong reference to `handle` (may be NULL for an
/// object whose construction has not finished, e.g. during unpickling).
struct PyFerryObject {
  PyObject_HEAD FerryObjectHandle handle;
  PyObject* weakrefs;
};

/// A Ferry Function; called through vectorcall.
struct PyFerryFunction {
  PyFerryObject base;
  vectorcallfunc vectorcall;
  /// The function's C entry point (FerryFunctionGetSafeCall), called without FerryFunctionCall's
  /// argument checks; NULL until the handle is set.
  FerryFunctionSafeCall safe_call;
  /// Whether calls release the GIL: on for C++ functions, off for functions made from Python
  /// callables (they would take it right back) and functions registered quick.
  int release_gil;
  /// Parameter names as a tuple of str, NULL until first needed, Py_None when it has none.
  PyObject* param_names;
};

extern PyTypeObject ObjectType;
extern PyTypeObject FunctionType;
extern PyTypeObject FieldType;

/// Keeps the error indicator across code that may set or clear it, for destructors and deallocs:
/// they can run while an exception propagates (a temporary dropped by the unwinding), and must
/// leave that exception as they found it. Whatever the guarded code raises is discarded.
///
///     void DeleteCapsule(PyObject* c) { SavedError saved; ...; }
class SavedError {
 public:
  SavedError() { PyErr_Fetch(&type_, &value_, &traceback_); }
  ~SavedError() { PyErr_Restore(type_, value_, traceback_); }
  SavedError(const SavedError&) = delete;
  SavedError& operator=(const SavedError&) = delete;

 private:
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

inline bool IsFerryObject(PyObject* v) { return PyObject_TypeCheck(v, &ObjectType); }
inline FerryObjectHandle HandleOf(PyObject* v) {
  return reinterpret_cast<PyFerryObject*>(v)->handle;
}
inline int32_t TypeIndexOf(FerryObjectHandle h) { return static_cast<FerryObject*>(h)->type_index; }

/// Writes a whole cell with one 16-byte store. A cell written field by field (4 + 4 + 8 bytes) and
/// then read whole (a 16-byte load: Any's copy and move in C++ do that) defeats the CPU's store
/// forwarding: the load waits until the narrower stores have retired, a stall on every call.
/// Every cell the extension hands to C++ is written through here.
inline void SetCell(FerryAny* out, int32_t type_index, uint32_t small_len, uint64_t payload) {
#if defined(__SSE2__)  // x86: little-endian, so type_index is the head's low half
  uint64_t head = static_cast<uint32_t>(type_index) | (static_cast<uint64_t>(small_len) << 32);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_set_epi64x(static_cast<long long>(payload), static_cast<long long>(head)));
#else
  FerryAny cell;
  cell.type_index = type_index;
  cell.small_len = small_len;
  std::memcpy(&cell.v_int64, &payload, sizeof(payload));
  *out = cell;
#endif
}
inline uint64_t BitsOf(const void* p) { return reinterpret_cast<uintptr_t>(p); }
inline uint64_t BitsOf(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}
static_assert(sizeof(FerryAny) == 16 && offsetof(FerryAny, v_int64) == 8, "the cell layout");
/// A cell borrowing the object `h`.
inline void SetObject(FerryAny* out, FerryObjectHandle h) {
  SetCell(out, TypeIndexOf(h), 0, BitsOf(h));
}

/// Reference counting inline, by the header's protocol as c_api.h defines it.
inline void IncRef(FerryObjectHandle h) { FerryObjectIncRefInline(h); }
inline void DecRef(FerryObjectHandle h) { FerryObjectDecRefInline(h); }

/// The bytes of a ferry.String or ferry.Bytes object, read through the layout c_api.h gives.
inline const FerryStringObject* StringOf(FerryObjectHandle h) {
  return static_cast<const FerryStringObject*>(h);
}

// ---------------------------------------------------------------------------------------------
// Conversion.

/// The class of the last Ferry object converted and its version tag at the time (never 0 while
/// a class is cached): a value's class is that class while both match. CPython gives every
/// class a version tag of its own from a counter it never winds back and sets it to 0 when the
/// class changes, so a class that died and whose address another class took carries another tag
/// (0 until CPython assigns one). Two loads and two compares, no weak reference; set by
/// RememberObjectType (convert.cc).
inline PyTypeObject* g_last_object_type = nullptr;
inline unsigned int g_last_object_type_tag = 0;

inline bool IsLastObjectType(PyTypeObject* type) {
  return type == g_last_object_type && type->tp_version_tag == g_last_object_type_tag;
}
/// Caches `type` (a subclass of ferry.Object) as the last class converted, when CPython can give
/// it a version tag; forgets the cached one otherwise.
void RememberObjectType(PyTypeObject* type);
/// Forgets the cached class (the leak check's teardown).
inline void ForgetObjectType() {
  g_last_object_type = nullptr;
  g_last_object_type_tag = 0;
}

/// The value of an int of at most one digit (most ints), read straight from the object; false
/// for longer ones (PyLong_AsLongLongAndOverflow handles those).
inline bool CompactIntValue(PyObject* value, int64_t* out) {
#if PY_VERSION_HEX >= 0x030C0000
  auto* v = reinterpret_cast<PyLongObject*>(value);
  if (!PyUnstable_Long_IsCompact(v)) return false;
  *out = PyUnstable_Long_CompactValue(v);
  return true;
#elif PY_VERSION_HEX >= 0x030B0000
  Py_ssize_t size = Py_SIZE(value);  // the sign times the number of digits
  if (size < -1 || size > 1) return false;
  *out = size * static_cast<int64_t>(reinterpret_cast<PyLongObject*>(value)->ob_digit[0]);
  return true;
#else
  (void)value;
  (void)out;
  return false;
#endif
}

/// A new list (`kList`) or tuple of `n` items, item `i` the new reference `item(i)` returns;
/// nullptr with the exception set when that or the sequence's allocation fails. How the
/// extension turns a C array (names, types, a shape) into a Python sequence.
template <bool kList, typename MakeItem>
PyObject* SequenceOf(int32_t n, MakeItem item) {
  PyObject* seq = kList ? PyList_New(n) : PyTuple_New(n);
  if (seq == nullptr) return nullptr;
  for (int32_t i = 0; i < n; ++i) {
    PyObject* value = item(i);
    if (value == nullptr) {
      Py_DECREF(seq);
      return nullptr;
    }
    if constexpr (kList) {
      PyList_SET_ITEM(seq, i, value);
    } else {
      PyTuple_SET_ITEM(seq, i, value);
    }
  }
  return seq;
}
/// The `n` C strings of `strings` as a new tuple (list: `kList`) of str.
template <bool kList = false>
PyObject* StrSequence(const char* const* strings, int32_t n) {
  return SequenceOf<kList>(n, [strings](int32_t i) { return PyUnicode_FromString(strings[i]); });
}

/// Objects created while converting arguments (strings with NULs, lists, dicts, callables);
/// released when the scope ends, after the call that used them.
class TempScope {
 public:
  TempScope() = default;
  TempScope(const TempScope&) = delete;
  TempScope& operator=(const TempScope&) = delete;
  /// Most calls keep nothing: then ending the scope is one compare.
  ~TempScope() {
    if (num_inline_ != 0) ReleaseAll();
  }
  void Keep(FerryObjectHandle h) {
    if (num_inline_ < kInline) {
      inline_[num_inline_++] = h;
      if (num_inline_ == kInline) more_ = nullptr;
    } else {
      if (more_ == nullptr) more_ = new std::vector<FerryObjectHandle>();
      more_->push_back(h);
    }
  }

 private:
  [[gnu::noinline]] void ReleaseAll() {
    for (int i = 0; i < num_inline_; ++i) DecRef(inline_[i]);
    if (num_inline_ == kInline && more_ != nullptr) {
      for (FerryObjectHandle h : *more_) DecRef(h);
      delete more_;
    }
  }

  static constexpr int kInline = 4;
  FerryObjectHandle inline_[kInline];
  int num_inline_ = 0;
  /// Only calls with more than kInline temporaries pay for a vector (most calls make none); set
  /// when the inline slots fill up, so that a scope which keeps nothing initializes one field.
  std::vector<FerryObjectHandle>* more_;
};

/// PyToAnyNoting beyond its inline head: every kind of value (1 for a Ferry object's wrapper, 0
/// for anything else converted, -1 with an exception).
int PyToAnySlow(PyObject* value, FerryAny* out, TempScope* scope);

/// Converts a Python value into a cell that borrows (from `value` or from `scope`), telling how:
/// 1 when `value` is a wrapper of the class converted last and the cell now holds its object
/// (a call whose result is that object can return the argument as it is, function.cc), 0 for
/// any other value, -1 with a Python exception set (TypeError/OverflowError naming the Python
/// type).
///
/// The one conversion from Python to Ferry values: calls, constructors, containers and field
/// writes all go through it. The commonest values convert inline (small ints, objects of the
/// last class converted); the rest out of line.
[[gnu::always_inline]] inline int PyToAnyNoting(PyObject* value, FerryAny* out, TempScope* scope) {
  int64_t v;
  if (Py_IS_TYPE(value, &PyLong_Type) && CompactIntValue(value, &v)) {
    SetCell(out, kFerryInt, 0, static_cast<uint64_t>(v));
    return 0;
  }
  if (IsLastObjectType(Py_TYPE(value)) && HandleOf(value) != nullptr) {
    SetObject(out, HandleOf(value));
    return 1;
  }
  return PyToAnySlow(value, out, scope);
}
/// PyToAnyNoting without the how: 0, or -1 with a Python exception set.
[[gnu::always_inline]] inline int PyToAny(PyObject* value, FerryAny* out, TempScope* scope) {
  return PyToAnyNoting(value, out, scope) < 0 ? -1 : 0;
}

/// Raises the pending exception again with `prefix: ` before its message when it is one of the
/// plain kinds a conversion raises (TypeError, OverflowError, ...); any other exception is kept
/// as it is, with "while converting <prefix>" as a note. `prefix` may be NULL (nothing changes).
void PrefixPendingError(PyObject* prefix);
/// Converts an object with `__dlpack__` (NumPy, PyTorch, ...) into a cell holding a Tensor that
/// shares its memory, kept by `scope`: 0; -1 with an exception; 1 when `value` has no
/// `__dlpack__` (nothing done). The tensor's deleter releases the Python object (tensor.cc).
int DLPackToAny(PyObject* value, FerryAny* out, TempScope* scope);
/// A borrowed DLTensor* cell as a ferry.Tensor viewing it (valid while the DLTensor is);
/// read-only for a `const DLTensor*` (the cell's small_len says so).
PyObject* BorrowedDLTensorToPy(void* tensor, bool read_only);
/// Adds the tensor functions (_tensor_*) to the module: 0, or -1 with an exception.
int AddTensorFunctions(PyObject* module);
/// Adds the pickling helpers (_json_libraries, _library_of_*) to the module (pickle.cc).
int AddPickleFunctions(PyObject* module);
/// Whether pickles name and load their libraries: FERRY_PICKLE_LIBRARIES is unset or not 0.
bool PickleLibrariesEnabled();
/// ((library path, type key), ...): one pair for each library that registered a type of the
/// save_json document `text` (a str); () when none or when PickleLibrariesEnabled() is false.
PyObject* PickleLibrariesOfJSON(PyObject* text);
/// Converts a Python value into a cell that owns its object (for results of callbacks).
int PyToAnyOwned(PyObject* value, FerryAny* out);
/// Converts a cell to Python. With `owned`, the cell's reference is taken over (and released
/// on failure); otherwise the cell is only borrowed. NULL with a Python exception on failure.
PyObject* AnyToPy(const FerryAny& cell, bool owned);
/// The Python object of an object handle: the object's live wrapper if it has one, else a new
/// wrapper of its registered class. With `owned` the caller's reference is taken over (and
/// released on failure); otherwise the handle is borrowed. NULL with an exception on failure.
PyObject* WrapObject(FerryObjectHandle handle, bool owned);

/// A str of UTF-8 bytes (UnicodeDecodeError when they are not UTF-8). ASCII text of up to
/// kAsciiCopyMax bytes is copied without the decoder.
constexpr size_t kAsciiCopyMax = 256;
PyObject* Utf8ToPy(const char* data, size_t size);
/// A str of the ferry.String `h`, whose reference is taken over (released also on failure).
PyObject* OwnedStringToPy(FerryObjectHandle h);

/// AnyToPy of an owned cell, with the commonest kinds (None, int, objects of registered types)
/// inline and strings one call away: call results and field reads.
[[gnu::always_inline]] inline PyObject* OwnedCellToPy(const FerryAny& cell) {
  if (cell.type_index == kFerryNone) Py_RETURN_NONE;
  if (cell.type_index == kFerryInt) return PyLong_FromLongLong(cell.v_int64);
  if (cell.type_index >= kFerryDynamicObjectBegin) return WrapObject(cell.v_obj, true);
  if (cell.type_index == kFerryString) return OwnedStringToPy(cell.v_obj);
  return AnyToPy(cell, /*owned=*/true);
}

// ---------------------------------------------------------------------------------------------
// Classes.

/// The Python class of objects of `type_index`: the class registered for its key or for its
/// nearest registered ancestor, else ferry.Object. Borrowed.
PyTypeObject* ClassOf(int32_t type_index);
/// Drops the cached index -> class table after a registration.
void InvalidateClassCache();
/// Registers `cls` for `type_key` (module function _register_class).
PyObject* RegisterClass(PyObject* module, PyObject* args);
/// Conversion errors from C++ name the Ferry type a Python value became ("expected int but got
/// ferry.String"), where the caller passed a `str`: these rewrite the pending TypeError to name
/// the Python type of the value passed (left as is for a Ferry object, whose names agree).
/// Out of the hot path. The text of the pending TypeError with a single str argument:
bool PendingTypeErrorText(std::string* out);
/// Renames K in the "expected T but got K" of `message` that starts at `expected_at`.
void RewritePassedType(PyObject* passed, std::string message, size_t expected_at);
/// For "... field 'NAME'[ of 'KEY']: expected T but got K": `find(NAME, context)` gives the value
/// passed for the field (borrowed, or NULL to leave the error as it is).
void NamePassedFieldType(PyObject* (*find)(PyObject* name, void* context), void* context);
/// MakeNode(key, **fields), a field whose value does not convert named in the error (module
/// function _make_node). A new reference, or NULL with an exception.
PyObject* MakeNodeFromKwargs(PyObject* key, PyObject* kwargs);
/// Makes `self` (a ferry.Object wrapper) own `handle` (a reference handed over); on a class that
/// cannot hold it, releases it and fails with a TypeError. 0 or -1.
int AdoptNewHandle(PyObject* self, FerryObjectHandle handle);
/// _core._register_type and _core._create (py_class.cc).
PyObject* RegisterType(PyObject* module, PyObject* args);
PyObject* CreateObject(PyObject* module, PyObject* const* args, Py_ssize_t nargs);
PyObject* InstallInit(PyObject* module, PyObject* args);
/// Makes the fresh wrapper `self` (no handle yet) own `handle` (a reference handed over), which
/// the caller knows fits `self`'s class.
void AttachNewHandle(PyObject* self, FerryObjectHandle handle);
/// Sets the package's class hook (module function _set_class_hook; see object.cc Lookup).
PyObject* SetClassHook(PyObject* module, PyObject* hook);
/// (registered classes by key, classes made on first sight by key), copies (module function
/// _classes, for tests).
PyObject* ListClasses(PyObject* module, PyObject* unused);
/// The class of objects of the type key `key` (module function _class_of_key, which ferry.auto
/// resolves pickled class references with): ClassOf its index; a KeyError for an unknown key.
PyObject* ClassOfKey(PyObject* module, PyObject* key);

// ---------------------------------------------------------------------------------------------
// Errors.

/// Raises the current Ferry error of this thread as a Python exception; returns NULL for
/// convenience. A Python exception that a callback raised comes back as the same object.
PyObject* RaiseFerryError();
/// Drops this thread's raised Ferry error, for a failure that has an answer of its own.
void DiscardFerryError();
/// Turns the current Python exception into this thread's raised Ferry error (and clears it).
void SetFerryErrorFromPython();
/// _builtin_error_kinds(): the kinds of FerryErrorBuiltinKinds, as a tuple of str.
PyObject* BuiltinErrorKinds(PyObject* module, PyObject* unused);

// ---------------------------------------------------------------------------------------------
// Functions.

/// Wraps a Function handle (taking over the reference).
PyObject* WrapFunction(FerryObjectHandle handle);
/// Sets what a ferry.Function wrapper caches about its handle (entry point, GIL policy,
/// parameter names), after the handle was set or replaced: 0, or -1 with an exception.
int SetFunctionHandleFields(PyObject* function);
/// Whether the interpreter began to finalize (callable without the GIL).
inline bool InterpreterIsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();  // the same, under its pre-3.13 name
#endif
}

/// Whether the calling thread holds the GIL: PyGILState_Check's answer for the main interpreter
/// (ferry._core supports no other), without its lookup in thread-specific storage (a visible share
/// of a callback's instructions). True on the thread that finalizes the interpreter until
/// Py_Finalize returns (while Py_IsInitialized() already says false); false on every thread
/// after (no thread state is current).
inline bool ThisThreadHoldsGil() {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != nullptr;  // this thread's, NULL while it is released
#elif PY_VERSION_HEX >= 0x030C0000
  return _PyThreadState_UncheckedGet() != nullptr;
#else
  // Before 3.12 the current thread state is the GIL holder's, whichever thread that is. Its
  // thread_id is PyThread_get_thread_ident() of its thread, which on POSIX is pthread_self():
  // asked directly, that is a few instructions instead of a call through libpython.
  PyThreadState* holder = _PyThreadState_UncheckedGet();
#if defined(FERRY_PY_PTHREADS)
  return holder != nullptr && holder->thread_id == reinterpret_cast<unsigned long>(pthread_self());
#else
  return holder != nullptr && holder->thread_id == PyThread_get_thread_ident();
#endif
#endif
}

/// Drops a Python reference from any thread (taking the GIL), and on the finalizing thread during
/// finalization; nothing on other threads once the interpreter is finalizing, nor once it is
/// gone. The deleter of every Python object a Ferry object holds (callables, exceptions).
void DecRefWithGil(void* obj);
/// Makes a Function from a Python callable (new reference in *out).
int FunctionFromCallable(PyObject* callable, FerryObjectHandle* out);
/// Whether `func` (a Function) was made by FunctionFromCallable: it holds a Python callable.
bool MadeFromCallable(FerryObjectHandle func);

/// Whether FERRY_LEAK_CHECK is on (set once, at module init).
extern bool g_leak_check;
void NoteWrapperMadeSlow(PyObject* wrapper);
void NoteWrapperFreedSlow(PyObject* wrapper);
/// Tracks a new ferry.Object / ferry.Function wrapper for the leak check; a branch when off.
inline void NoteWrapperMade(PyObject* wrapper) {
  if (__builtin_expect(g_leak_check, 0)) NoteWrapperMadeSlow(wrapper);
}
/// Forgets a wrapper being deallocated (ObjectDealloc, which every wrapper's dealloc ends in).
inline void NoteWrapperFreed(PyObject* wrapper) {
  if (__builtin_expect(g_leak_check, 0)) NoteWrapperFreedSlow(wrapper);
}

/// Frees every py_class __init__ plan (each holds its class, __init__ and defaults): the leak
/// check's teardown. Classes called after it take the generic path.
void DropInitPlans();

/// Turns the leak check's part of ferry._core on when FERRY_LEAK_CHECK is set (at module init,
/// once `module` exists); -1 with a Python error on failure.
int InitLeakCheck(PyObject* module);
/// The deleter of a Function made from a Python callable: DecRefWithGil, counted for the leak
/// check when it is on.
void (*CallableDeleter())(void*);
/// Counts a Function made from a Python callable (after it was made with CallableDeleter()).
void CountCallableFunction();
/// `call(func, args, n, result)` with the GIL released around it.
int CallReleasingGil(FerryFunctionSafeCall call, FerryObjectHandle func, const FerryAny* args,
                     int32_t n, FerryAny* result);
/// Calls through `call` (a function's entry point, or FerryFunctionCall) into `*result`, which
/// starts as None, releasing the GIL around the call when asked. 0, or -1 with the Ferry error
/// raised (not yet a Python exception).
inline int CallRaw(FerryFunctionSafeCall call, FerryObjectHandle func, const FerryAny* args,
                   int32_t n, bool release_gil, FerryAny* result) {
  SetCell(result, kFerryNone, 0, 0);
  return release_gil ? CallReleasingGil(call, func, args, n, result) : call(func, args, n, result);
}
/// Calls `func` (checked entry) with cells; the result is converted to Python.
PyObject* CallFunction(FerryObjectHandle func, const FerryAny* args, int32_t n, bool release_gil);
/// Calls the ferry.Function `func` with at most 8 positional arguments and returns the object it
/// returns (an owned handle), without making a Python wrapper for it; NULL with an exception.
FerryObjectHandle CallForObject(PyObject* func, PyObject* const* args, Py_ssize_t nargs);
/// A global function handle, looked up once and kept (ferry.Array, ferry.Map, ...).
FerryObjectHandle CachedGlobal(const char* name, FerryObjectHandle* slot);

}  // namespace ferry_py

#endif  // FERRY_PYTHON_CORE_H_
