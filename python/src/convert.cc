/// \file convert.cc
/// Python values <-> FerryAny cells. Arguments convert straight into cells that borrow from the
/// Python objects (strings point into the str's UTF-8 buffer), so a call builds no temporary
/// Python objects; only lists, dicts, callables and bytes need a Ferry object made for them.
#include <pthread.h>  // pthread_getattr_np: where this thread's stack ends

#include <cstring>  // memchr, memcpy

#include "core.h"

namespace ferry_py {
namespace {

inline void SetNone(FerryAny* out) { SetCell(out, kFerryNone, 0, 0); }

/// Builds a container by calling the global `ctor` on converted items; the result is kept by
/// `scope`.
int MakeContainer(FerryObjectHandle ctor, PyObject* const* items, Py_ssize_t n, FerryAny* out,
                  TempScope* scope) {
  if (n > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "ferry: container too large");
    return -1;
  }
  std::vector<FerryAny> cells(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PyToAny(items[i], &cells[i], scope) != 0) return -1;
  }
  FerryAny result;
  if (CallRaw(&FerryFunctionCall, ctor, cells.data(), static_cast<int32_t>(n), false, &result) !=
      0) {
    RaiseFerryError();
    return -1;
  }
  scope->Keep(result.v_obj);
  *out = result;
  return 0;
}

int ListToAny(PyObject* seq, FerryAny* out, TempScope* scope) {
  // A tuple holds its items for us even if converting one (through __index__) changes a list.
  PyObject* tuple = PyList_Check(seq) ? PyList_AsTuple(seq) : Py_NewRef(seq);
  if (tuple == nullptr) return -1;
  int rc = MakeContainer(CachedGlobal("ferry.Array", &g_state.globals.array),
                         &PyTuple_GET_ITEM(tuple, 0), PyTuple_GET_SIZE(tuple), out, scope);
  Py_DECREF(tuple);
  return rc;
}

int DictToAny(PyObject* dict, FerryAny* out, TempScope* scope) {
  std::vector<PyObject*> items;
  items.reserve(static_cast<size_t>(2 * PyDict_GET_SIZE(dict)));
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    items.push_back(Py_NewRef(key));
    items.push_back(Py_NewRef(value));
  }
  int rc = MakeContainer(CachedGlobal("ferry.Map", &g_state.globals.map), items.data(),
                         static_cast<Py_ssize_t>(items.size()), out, scope);
  for (PyObject* item : items) Py_DECREF(item);
  return rc;
}

/// Whether data[0, size) holds a NUL byte. Strings of 8 to 16 bytes (those too long to go inline
/// and most others) are checked as two overlapping words rather than through memchr.
inline bool HasNul(const char* data, size_t size) {
  if (size >= 8 && size <= 16) {
    auto has_zero_byte = [](uint64_t x) {
      return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
    };
    uint64_t head, tail;
    std::memcpy(&head, data, 8);
    std::memcpy(&tail, data + size - 8, 8);
    return has_zero_byte(head) || has_zero_byte(tail);
  }
  return std::memchr(data, '\0', size) != nullptr;
}

/// Whether less than kStackReserve bytes of this thread's C stack are left below the caller.
bool CStackIsLow() {
  constexpr uintptr_t kStackReserve = 256 * 1024;  // for the C++ calls made below this point
  thread_local uintptr_t limit = 0;                // the lowest address the caller may reach
  if (limit == 0) {
    pthread_attr_t attr;
    void* base = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      if (pthread_attr_getstack(&attr, &base, &size) != 0) base = nullptr;
      pthread_attr_destroy(&attr);
    }
    limit = base != nullptr ? reinterpret_cast<uintptr_t>(base) + kStackReserve : 1;
  }
  char here;
  return reinterpret_cast<uintptr_t>(&here) < limit;
}

int StrToAny(PyObject* value, FerryAny* out, TempScope* scope) {
  Py_ssize_t size = 0;
  const char* data;
  if (PyUnicode_IS_COMPACT_ASCII(value)) {  // most strs: their characters are the UTF-8 bytes
    data = static_cast<const char*>(PyUnicode_DATA(value));
    size = PyUnicode_GET_LENGTH(value);
  } else {
    data = PyUnicode_AsUTF8AndSize(value, &size);
    if (data == nullptr) return -1;
  }
  if (size < static_cast<Py_ssize_t>(sizeof(out->v_bytes))) {
    uint64_t bytes = 0;
    std::memcpy(&bytes, data, static_cast<size_t>(size));
    SetCell(out, kFerrySmallStr, static_cast<uint32_t>(size), bytes);
    return 0;
  }
  if (!HasNul(data, static_cast<size_t>(size))) {
    // Borrowed from the str (its ASCII characters or its cached UTF-8 form): it outlives the call.
    // The length travels too (0 past 4 GiB: read to the NUL), so no consumer needs strlen.
    uint64_t len = static_cast<uint64_t>(size);
    SetCell(out, kFerryRawStr, len <= UINT32_MAX ? static_cast<uint32_t>(len) : 0, BitsOf(data));
    return 0;
  }
  FerryObjectHandle h = nullptr;
  if (FerryStringCreate(data, static_cast<size_t>(size), &h) != 0) {
    RaiseFerryError();
    return -1;
  }
  scope->Keep(h);
  SetObject(out, h);
  return 0;
}

}  // namespace

/// Drops this thread's raised Ferry error, for a failure that has an answer of its own.
void DiscardFerryError() {
  FerryObjectHandle err = nullptr;
  FerryErrorMoveFromRaised(&err);
  if (err != nullptr) DecRef(err);
}

FerryObjectHandle CachedGlobal(const char* name, FerryObjectHandle* slot) {
  if (*slot == nullptr && FerryFunctionGetGlobal(name, slot) != 0) {
    *slot = nullptr;
    DiscardFerryError();  // a lookup cannot fail but on a bad name; the caller reports absence
  }
  return *slot;
}

void RememberObjectType(PyTypeObject* type) {
  unsigned int tag = 0;
#if PY_VERSION_HEX >= 0x030C0000
  if (PyUnstable_Type_AssignVersionTag(type)) tag = type->tp_version_tag;
#else
  if (type->tp_version_tag == 0) {
    // Before 3.12 CPython assigns a tag when it looks a name up in the class through its method
    // cache: a lookup (of a name no class has) does it. Made once; NULL only without memory.
    static PyObject* const kProbe = PyUnicode_InternFromString("__ferry_version_tag_probe__");
    if (kProbe == nullptr) {
      PyErr_Clear();  // only the cache is lost
    } else {
      (void)_PyType_Lookup(type, kProbe);
    }
  }
  tag = type->tp_version_tag;
#endif
  g_last_object_type = tag != 0 ? type : nullptr;
  g_last_object_type_tag = tag;
}

namespace {
inline bool IsFerryObjectFast(PyObject* value) {
  PyTypeObject* type = Py_TYPE(value);
  if (IsLastObjectType(type)) return true;
  if (!IsFerryObject(value)) return false;
  RememberObjectType(type);
  return true;
}

int IntToAny(PyObject* value, FerryAny* out) {
  int64_t v = 0;
  if (CompactIntValue(value, &v)) {
    SetCell(out, kFerryInt, 0, static_cast<uint64_t>(v));
    return 0;
  }
  int overflow = 0;
  v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow != 0) {
    // Not converted to a float here: the target's type is not known yet, and an int stored as
    // a float would lose digits silently where any value goes (a List, an Any field).
    PyErr_Format(PyExc_OverflowError,
                 "int %R does not fit in 64 bits (Ferry's ints are int64; where a float is "
                 "meant, pass float(x))",
                 value);
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  SetCell(out, kFerryInt, 0, static_cast<uint64_t>(v));
  return 0;
}

int FloatToAny(PyObject* value, FerryAny* out) {
  SetCell(out, kFerryFloat, 0, BitsOf(PyFloat_AS_DOUBLE(value)));
  return 0;
}

int ObjectToAny(PyObject* value, FerryAny* out) {
  FerryObjectHandle h = HandleOf(value);
  if (h == nullptr) {
    PyErr_Format(PyExc_ValueError, "%s object is not initialized (it has no Ferry object)",
                 Py_TYPE(value)->tp_name);
    return -1;
  }
  SetObject(out, h);
  return 0;
}
}  // namespace

int PyToAnySlow(PyObject* value, FerryAny* out, TempScope* scope) {
  PyTypeObject* type = Py_TYPE(value);
  // Exact types first: one pointer compare each for the common arguments.
  if (type == &PyLong_Type) return IntToAny(value, out);
  if (type == &PyUnicode_Type) return StrToAny(value, out, scope);
  if (IsFerryObjectFast(value)) return ObjectToAny(value, out) == 0 ? 1 : -1;
  if (type == &PyFloat_Type) return FloatToAny(value, out);
  if (value == Py_None) {
    SetNone(out);
    return 0;
  }
  if (type == &PyBool_Type) {
    SetCell(out, kFerryBool, 0, value == Py_True);
    return 0;
  }
  if (PyLong_Check(value)) return IntToAny(value, out);  // int subclasses (IntEnum, ...)
  if (PyFloat_Check(value)) return FloatToAny(value, out);
  if (PyUnicode_Check(value)) {
    if (g_state.dtype_class != nullptr &&
        PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(g_state.dtype_class))) {
      FerryDataType dtype;
      const char* text = PyUnicode_AsUTF8(value);
      if (text == nullptr) return -1;
      if (FerryDataTypeFromString(text, &dtype) != 0) {
        RaiseFerryError();
        return -1;
      }
      uint64_t bits = 0;
      std::memcpy(&bits, &dtype, sizeof(dtype));
      SetCell(out, kFerryDataType, 0, bits);
      return 0;
    }
    return StrToAny(value, out, scope);
  }
  if (PyBytes_Check(value) || PyByteArray_Check(value)) {
    FerryObjectHandle h = nullptr;
    int rc = PyBytes_Check(value)
                 ? FerryBytesCreate(PyBytes_AS_STRING(value),
                                    static_cast<size_t>(PyBytes_GET_SIZE(value)), &h)
                 : FerryBytesCreate(PyByteArray_AS_STRING(value),
                                    static_cast<size_t>(PyByteArray_GET_SIZE(value)), &h);
    if (rc != 0) {
      RaiseFerryError();
      return -1;
    }
    scope->Keep(h);
    SetObject(out, h);
    return 0;
  }
  if (PyList_Check(value) || PyTuple_Check(value) || PyDict_Check(value)) {
    // A list that holds itself, or nesting deeper than the recursion limit or than the C stack
    // can take (the limit may have been raised far past it): RecursionError.
    if (CStackIsLow()) {
      PyErr_SetString(PyExc_RecursionError,
                      "a nested container is too deep to convert to a Ferry value (the C stack "
                      "is nearly used up)");
      return -1;
    }
    if (Py_EnterRecursiveCall(" while converting a nested container to a Ferry value") != 0) {
      return -1;
    }
    int rc = PyDict_Check(value) ? DictToAny(value, out, scope) : ListToAny(value, out, scope);
    Py_LeaveRecursiveCall();
    return rc;
  }
  if (int rc = DLPackToAny(value, out, scope); rc <= 0) return rc;  // NumPy, PyTorch, ...
  if (PyCallable_Check(value)) {
    FerryObjectHandle h = nullptr;
    if (FunctionFromCallable(value, &h) != 0) return -1;
    scope->Keep(h);
    SetObject(out, h);
    return 0;
  }
  if (PyIndex_Check(value)) {  // numpy integers and other __index__ types
    PyObject* index = PyNumber_Index(value);
    if (index == nullptr) return -1;
    int rc = PyToAny(index, out, scope);
    Py_DECREF(index);
    return rc;
  }
  PyErr_Format(PyExc_TypeError, "cannot convert a value of type '%s' to a Ferry value",
               type->tp_name);
  return -1;
}

int PyToAnyOwned(PyObject* value, FerryAny* out) {
  // The commonest callback results hold no object: no scope to set up and tear down.
  if (Py_IS_TYPE(value, &PyLong_Type)) return IntToAny(value, out);
  if (value == Py_None) {
    SetNone(out);
    return 0;
  }
  TempScope scope;
  if (PyToAny(value, out, &scope) != 0) return -1;
  if (out->type_index >= kFerryStaticObjectBegin) {
    IncRef(out->v_obj);  // the scope's reference is dropped when it ends
  } else if (out->type_index == kFerryRawStr) {
    FerryObjectHandle h = nullptr;
    if (FerryStringCreate(out->v_c_str, FerryRawStrLength(out), &h) != 0) {
      RaiseFerryError();
      return -1;
    }
    SetObject(out, h);
  }
  return 0;
}

namespace {
/// Whether `size` bytes are all ASCII: word by word, the last word overlapping the one before.
inline bool IsAscii(const char* data, size_t size) {
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  if (size < 8) {
    unsigned char acc = 0;
    for (size_t i = 0; i < size; ++i) acc |= static_cast<unsigned char>(data[i]);
    return (acc & 0x80) == 0;
  }
  uint64_t acc = 0;
  uint64_t word;
  for (size_t i = 0; i + 8 < size; i += 8) {
    std::memcpy(&word, data + i, 8);
    acc |= word;
  }
  std::memcpy(&word, data + size - 8, 8);
  return ((acc | word) & kHighBits) == 0;
}
}  // namespace

PyObject* Utf8ToPy(const char* data, size_t size) {
  // ASCII text (names, keys, most messages) is copied straight into a compact ASCII str: the
  // decoder would make the same object after three calls and its own checks. One character
  // goes to the decoder, which returns CPython's shared str of it; long text too, where a
  // separate check would read the bytes twice.
  if (size >= 2 && size <= kAsciiCopyMax && IsAscii(data, size)) {
    PyObject* str = PyUnicode_New(static_cast<Py_ssize_t>(size), 127);
    if (str != nullptr) std::memcpy(PyUnicode_DATA(str), data, size);  // the NUL is written
    return str;
  }
  return PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(size), nullptr);
}

PyObject* OwnedStringToPy(FerryObjectHandle h) {
  PyObject* result = Utf8ToPy(StringOf(h)->data, static_cast<size_t>(StringOf(h)->size));
  DecRef(h);
  return result;
}

PyObject* AnyToPy(const FerryAny& cell, bool owned) {
  switch (cell.type_index) {
    case kFerryNone:
      Py_RETURN_NONE;
    case kFerryInt:
      return PyLong_FromLongLong(cell.v_int64);
    case kFerryBool:
      return PyBool_FromLong(cell.v_int64 != 0);
    case kFerryFloat:
      return PyFloat_FromDouble(cell.v_float64);
    case kFerryOpaquePtr:
      return PyLong_FromVoidPtr(cell.v_ptr);
    case kFerryRawStr:
      return Utf8ToPy(cell.v_c_str, FerryRawStrLength(&cell));
    case kFerrySmallStr:
      return Utf8ToPy(cell.v_bytes, cell.small_len);
    case kFerryDLTensorPtr:
      return BorrowedDLTensorToPy(cell.v_ptr, (cell.small_len & 1) != 0);
    case kFerryDataType: {
      FerryObjectHandle text = nullptr;
      if (FerryDataTypeToString(cell.v_dtype, &text) != 0) return RaiseFerryError();
      PyObject* str = PyUnicode_FromStringAndSize(StringOf(text)->data,
                                                  static_cast<Py_ssize_t>(StringOf(text)->size));
      DecRef(text);
      if (str == nullptr || g_state.dtype_class == nullptr) return str;
      PyObject* dtype = PyObject_CallOneArg(g_state.dtype_class, str);
      Py_DECREF(str);
      return dtype;
    }
    default:
      break;
  }
  if (cell.type_index < kFerryStaticObjectBegin) {
    return PyErr_Format(PyExc_TypeError, "cannot convert a Ferry value of type index %d to Python",
                        static_cast<int>(cell.type_index));
  }
  FerryObjectHandle h = cell.v_obj;
  if (cell.type_index == kFerryString || cell.type_index == kFerryBytes) {
    const char* data = StringOf(h)->data;
    auto size = static_cast<size_t>(StringOf(h)->size);
    PyObject* result = cell.type_index == kFerryString
                           ? Utf8ToPy(data, size)
                           : PyBytes_FromStringAndSize(data, static_cast<Py_ssize_t>(size));
    if (owned) DecRef(h);
    return result;
  }
  return WrapObject(h, owned);
}

namespace {
/// Whether exceptions of `type` are made from their message alone, so that one can be raised
/// again with a longer message: the plain kinds a conversion raises, not their subclasses
/// (UnicodeEncodeError takes five arguments; a user's class may take anything).
bool TakesOnlyAMessage(PyObject* type) {
  static PyObject* const kPlain[] = {PyExc_TypeError,      PyExc_ValueError,    PyExc_OverflowError,
                                     PyExc_RuntimeError,   PyExc_KeyError,      PyExc_IndexError,
                                     PyExc_AttributeError, PyExc_RecursionError};
  for (PyObject* plain : kPlain) {
    if (type == plain) return true;
  }
  return false;
}
}  // namespace

void PrefixPendingError(PyObject* prefix) {
  if (prefix == nullptr) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (type == nullptr || !TakesOnlyAMessage(type)) {
    PyObject* note =
        value != nullptr ? PyUnicode_FromFormat("while converting %U", prefix) : nullptr;
    PyObject* added = note != nullptr ? PyObject_CallMethod(value, "add_note", "O", note) : nullptr;
    Py_XDECREF(added);
    Py_XDECREF(note);
    PyErr_Clear();  // a note is a courtesy: without one the error is still the right one
    PyErr_Restore(type, value, tb);
    return;
  }
  PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
  if (text == nullptr) {
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return;
  }
  PyErr_Format(type, "%U: %U", prefix, text);
  Py_DECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
}

}  // namespace ferry_py
