/// \file tensor.cc
/// Tensors between Python and Ferry through the DLPack protocol of the Python array API
/// standard: any object with `__dlpack__` (NumPy, PyTorch, JAX, ...) converts to a ferry.Tensor
/// without a copy (the producer's deleter, run when C++ drops the tensor, releases the Python
/// object), and a ferry.Tensor hands itself out through `__dlpack__` capsules.
#include <cstring>  // memcpy

#include "core.h"
#include "state.h"

namespace ferry_py {
namespace {

constexpr const char* kCapsule = "dltensor";
constexpr const char* kCapsuleUsed = "used_dltensor";
constexpr const char* kCapsuleVersioned = "dltensor_versioned";
constexpr const char* kCapsuleVersionedUsed = "used_dltensor_versioned";

constexpr const char* kDLPackKeywords[4] = {"stream", "max_version", "dl_device", "copy"};

int InitNames() {
  auto& st = g_state.tensor;
  if (st.dlpack_name != nullptr) return 0;
  st.dlpack_name = PyUnicode_InternFromString("__dlpack__");
  st.max_version_kwnames = Py_BuildValue("(s)", "max_version");
  st.max_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  st.numpy_name = PyUnicode_InternFromString("numpy");
  bool ok = st.dlpack_name != nullptr && st.max_version_kwnames != nullptr &&
            st.max_version != nullptr && st.numpy_name != nullptr;
  for (int i = 0; i < 4; ++i) {
    st.dlpack_kwargs[i] = PyUnicode_InternFromString(kDLPackKeywords[i]);
    ok = ok && st.dlpack_kwargs[i] != nullptr;
  }
  return ok ? 0 : -1;
}

/// Calls `value.__dlpack__(max_version=(1, 1))`, or `value.__dlpack__()` for producers that
/// predate the keyword (they raise TypeError for it).
PyObject* CallDLPack(PyObject* value, PyObject* method) {
  PyObject* args[] = {value, g_state.tensor.max_version};
  PyObject* capsule = PyObject_Vectorcall(method, args, 1, g_state.tensor.max_version_kwnames);
  if (capsule != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return capsule;
  PyErr_Clear();
  return PyObject_CallOneArg(method, value);
}

/// Turns a DLPack capsule into a Tensor handle (new reference), marking the capsule used.
FerryObjectHandle TensorFromCapsule(PyObject* capsule, PyObject* producer) {
  FerryObjectHandle tensor = nullptr;
  if (PyCapsule_IsValid(capsule, kCapsuleVersioned)) {
    auto* managed =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kCapsuleVersioned));
    if (FerryTensorFromDLPackVersioned(managed, &tensor) != 0) {
      RaiseFerryError();
      return nullptr;
    }
    PyCapsule_SetName(capsule, kCapsuleVersionedUsed);
    return tensor;
  }
  if (PyCapsule_IsValid(capsule, kCapsule)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (FerryTensorFromDLPack(managed, &tensor) != 0) {
      RaiseFerryError();
      return nullptr;
    }
    PyCapsule_SetName(capsule, kCapsuleUsed);
    return tensor;
  }
  PyErr_Format(PyExc_TypeError,
               "%s.__dlpack__() returned %s, not an unused DLPack capsule ('dltensor' or "
               "'dltensor_versioned')",
               Py_TYPE(producer)->tp_name, Py_TYPE(capsule)->tp_name);
  return nullptr;
}

/// `value.__dlpack__` made a Tensor (new reference); NULL with an exception.
FerryObjectHandle TensorFromProducer(PyObject* value, PyObject* method) {
  PyObject* capsule = CallDLPack(value, method);
  if (capsule == nullptr) return nullptr;
  FerryObjectHandle tensor = TensorFromCapsule(capsule, value);
  Py_DECREF(capsule);  // a used capsule no longer deletes the tensor
  return tensor;
}

// ---------------------------------------------------------------------------------------------
// NumPy arrays, read directly.
//
// `numpy.ndarray` objects are read through NumPy's C ABI (the PyArrayObject and PyArray_Descr
// fields every NumPy extension reads through PyArray_DATA & co., unchanged from NumPy 1.x to
// 2.x in the prefix used here), without calling __dlpack__: no capsule, no DLManagedTensor and no
// Python call per conversion. The tensor holds a reference to the array, dropped (with the GIL)
// when C++ drops the tensor. Anything unusual (byte-swapped, an unsupported dtype, strides that
// are not whole elements) goes the DLPack way, whose errors are NumPy's own.

/// The prefix of NumPy's PyArrayObject_fields.
struct NumpyArray {
  PyObject_HEAD char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
};
/// The prefix of NumPy's PyArray_Descr.
struct NumpyDescr {
  PyObject_HEAD PyTypeObject* typeobj;
  char kind;
  char type;
  char byteorder;
  char flags;
  int type_num;
};
constexpr int kNpyArrayWriteable = 0x0400;

/// numpy.ndarray if NumPy is imported (never imports it), else NULL.
PyTypeObject* NdarrayType() {
  auto& st = g_state.tensor;
  if (st.ndarray_type != nullptr) return st.ndarray_type;
  PyObject* numpy = st.numpy_name != nullptr ? PyImport_GetModule(st.numpy_name) : nullptr;
  if (numpy == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* ndarray = PyObject_GetAttrString(numpy, "ndarray");
  Py_DECREF(numpy);
  if (ndarray == nullptr || !PyType_Check(ndarray)) {
    PyErr_Clear();
    Py_XDECREF(ndarray);
    return nullptr;
  }
  st.ndarray_type = reinterpret_cast<PyTypeObject*>(ndarray);  // kept for the process
  return st.ndarray_type;
}

/// The DLPack dtype of a NumPy type number, or false for one DLPack lacks (or rare ones).
bool NumpyDType(int type_num, int64_t elsize, DLDataType* out) {
  uint8_t code;
  switch (type_num) {
    case 0:
      code = kDLBool;
      break;  // NPY_BOOL
    case 1:
    case 3:
    case 5:
    case 7:
    case 9:
      code = kDLInt;
      break;  // BYTE SHORT INT LONG LONGLONG
    case 2:
    case 4:
    case 6:
    case 8:
    case 10:
      code = kDLUInt;
      break;
    case 11:
    case 12:
    case 23:
      code = kDLFloat;
      break;  // FLOAT DOUBLE HALF
    case 14:
    case 15:
      code = kDLComplex;
      break;  // CFLOAT CDOUBLE
    default:
      return false;
  }
  out->code = code;
  out->bits = static_cast<uint8_t>(elsize * 8);
  out->lanes = 1;
  return true;
}

void DropArray(void* array) { DecRefWithGil(array); }

/// 0 with the tensor in `*out`; 1 when the array needs the DLPack way; -1 with an exception.
int TensorFromNumpy(PyObject* value, FerryObjectHandle* out) {
  const auto* array = reinterpret_cast<const NumpyArray*>(value);
  const auto* descr = reinterpret_cast<const NumpyDescr*>(array->descr);
  if (descr->byteorder == '>' || array->nd > 64) return 1;
  // The element size from the type number (the descr's elsize moved between NumPy 1 and 2).
  int64_t elsize;
  switch (descr->type_num) {
    case 0:
    case 1:
    case 2:
      elsize = 1;
      break;
    case 3:
    case 4:
    case 23:
      elsize = 2;
      break;
    case 5:
    case 6:
    case 11:
      elsize = 4;
      break;
    case 7:
    case 8:
      elsize = sizeof(long);
      break;
    case 9:
    case 10:
    case 12:
    case 14:
      elsize = 8;
      break;
    case 15:
      elsize = 16;
      break;
    default:
      return 1;
  }
  DLTensor view;
  if (!NumpyDType(descr->type_num, elsize, &view.dtype)) return 1;
  int64_t shape[64], strides[64];
  for (int i = 0; i < array->nd; ++i) {
    shape[i] = array->dimensions[i];
    if (array->strides[i] % elsize != 0) return 1;
    strides[i] = array->strides[i] / elsize;
  }
  view.data = array->data;
  view.device = DLDevice{kDLCPU, 0};
  view.ndim = array->nd;
  view.shape = shape;
  view.strides = strides;
  view.byte_offset = 0;
  const uint64_t flags = (array->flags & kNpyArrayWriteable) ? 0 : DLPACK_FLAG_BITMASK_READ_ONLY;
  if (FerryTensorFromDLTensor(&view, flags, value, &DropArray, out) != 0) {
    RaiseFerryError();
    return -1;
  }
  Py_INCREF(value);  // dropped by DropArray when the tensor dies
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Handing a ferry.Tensor out.

/// The capsule's destructor: runs the hand-over's deleter unless a consumer took it (renamed the
/// capsule "used_..."). It may run while an exception propagates (`[t.__dlpack__(), 1 / 0]`, or
/// NumPy refusing a dtype), so the error indicator is kept as it was.
void DeleteUnusedCapsule(PyObject* capsule) {
  SavedError saved;
  if (PyCapsule_IsValid(capsule, kCapsuleVersioned)) {
    auto* m =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kCapsuleVersioned));
    if (m->deleter != nullptr) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, kCapsule)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (m->deleter != nullptr) m->deleter(m);
  }
  // A used capsule belongs to its consumer. PyCapsule_IsValid sets no error; `saved` puts back
  // the one that was pending, if any.
}

/// The tensor handle of a ferry.Tensor wrapper, or NULL with a TypeError.
FerryObjectHandle TensorHandleOf(PyObject* obj) {
  if (!IsFerryObject(obj) || HandleOf(obj) == nullptr ||
      TypeIndexOf(HandleOf(obj)) != kFerryTensor) {
    PyErr_Format(PyExc_TypeError, "expected a ferry.Tensor, got %s", Py_TYPE(obj)->tp_name);
    return nullptr;
  }
  return HandleOf(obj);
}

inline const DLTensor& DLOf(FerryObjectHandle h) {
  return static_cast<const FerryTensorObject*>(h)->dl_tensor;
}

/// tensor.__dlpack__(stream, max_version, dl_device, copy) -> capsule.
PyObject* ExportTensor(PyObject* self, PyObject* stream, PyObject* max_version, PyObject* dl_device,
                       PyObject* copy) {
  FerryObjectHandle h = TensorHandleOf(self);
  if (h == nullptr) return nullptr;
  const DLTensor& dl = DLOf(h);
  if (stream != Py_None && dl.device.device_type == kDLCPU) {
    PyErr_SetString(PyExc_ValueError,
                    "__dlpack__: stream must be None for a CPU tensor (there is no stream to "
                    "synchronize with)");
    return nullptr;
  }
  if (dl_device != Py_None) {
    int type = 0, id = 0;
    if (!PyTuple_Check(dl_device)) {
      PyErr_Format(PyExc_TypeError,
                   "__dlpack__: dl_device must be a (device_type, device_id) tuple, not %s",
                   Py_TYPE(dl_device)->tp_name);
      return nullptr;
    }
    if (!PyArg_ParseTuple(dl_device, "ii;__dlpack__: dl_device must be (device_type, device_id)",
                          &type, &id)) {
      return nullptr;
    }
    if (type != dl.device.device_type || id != dl.device.device_id) {
      PyErr_Format(PyExc_BufferError,
                   "__dlpack__: the tensor lives on device (%d, %d) and Ferry does not copy it to "
                   "(%d, %d)",
                   static_cast<int>(dl.device.device_type), static_cast<int>(dl.device.device_id),
                   type, id);
      return nullptr;
    }
  }
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError,
                    "__dlpack__: copy=True is not supported: Ferry only shares its tensors");
    return nullptr;
  }
  bool versioned = false;
  if (max_version != Py_None) {
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__: max_version must be a (major, minor) tuple");
      return nullptr;
    }
    long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred()) return nullptr;
    versioned = major >= 1;
  }
  if (versioned) {
    DLManagedTensorVersioned* m = nullptr;
    if (FerryTensorToDLPackVersioned(h, &m) != 0) return RaiseFerryError();
    PyObject* capsule = PyCapsule_New(m, kCapsuleVersioned, &DeleteUnusedCapsule);
    if (capsule == nullptr) m->deleter(m);
    return capsule;
  }
  DLManagedTensor* m = nullptr;
  if (FerryTensorToDLPack(h, &m) != 0) {
    PyObject* err = RaiseFerryError();
    // NumPy and the array API standard call a refused export a BufferError.
    if (PyErr_ExceptionMatches(PyExc_ValueError)) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
      PyErr_Format(PyExc_BufferError, "%U", text);
      Py_XDECREF(text);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
    }
    return err;
  }
  PyObject* capsule = PyCapsule_New(m, kCapsule, &DeleteUnusedCapsule);
  if (capsule == nullptr) m->deleter(m);
  return capsule;
}

/// _tensor_to_dlpack(tensor, stream, max_version, dl_device, copy) -> capsule.
PyObject* TensorToDLPack(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "_tensor_to_dlpack takes 5 arguments");
    return nullptr;
  }
  return ExportTensor(args[0], args[1], args[2], args[3], args[4]);
}

/// The method __dlpack__(stream=None, max_version=None, dl_device=None, copy=None), with its
/// arguments parsed here: NumPy's from_dlpack calls it with keywords on every conversion.
PyObject* DLPackMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  // Keywords at call sites are interned, so a pointer compare finds them.
  PyObject* const* interned = g_state.tensor.dlpack_kwargs;
  PyObject* values[4] = {Py_None, Py_None, Py_None, Py_None};
  if (nargs > 4) {
    return PyErr_Format(PyExc_TypeError, "__dlpack__() takes at most 4 arguments (%zd given)",
                        nargs);
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) values[i] = args[i];
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, k);
    int found = -1;
    for (int j = 0; j < 4 && found < 0; ++j) {
      if (name == interned[j]) found = j;
    }
    for (int j = 0; j < 4 && found < 0; ++j) {
      if (PyUnicode_CompareWithASCIIString(name, kDLPackKeywords[j]) == 0) found = j;
    }
    if (found < 0) {
      return PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument '%U'",
                          name);
    }
    if (found < nargs) {
      return PyErr_Format(PyExc_TypeError, "__dlpack__() got multiple values for argument '%s'",
                          kDLPackKeywords[found]);
    }
    values[found] = args[nargs + k];
  }
  return ExportTensor(self, values[0], values[1], values[2], values[3]);
}

PyObject* DeviceTuple(FerryObjectHandle h) {
  PyObject* type = PyLong_FromLong(static_cast<long>(DLOf(h).device.device_type));
  PyObject* id = PyLong_FromLong(static_cast<long>(DLOf(h).device.device_id));
  PyObject* tuple = type != nullptr && id != nullptr ? PyTuple_Pack(2, type, id) : nullptr;
  Py_XDECREF(type);
  Py_XDECREF(id);
  return tuple;
}

PyObject* DLPackDeviceMethod(PyObject* self, PyObject*) {
  FerryObjectHandle h = TensorHandleOf(self);
  return h == nullptr ? nullptr : DeviceTuple(h);
}

/// True when `array` (a numpy.ndarray) still shows exactly the tensor's view: same data, dtype,
/// shape and strides (an array's shape and dtype can be reassigned in place after it was passed).
bool ArrayMatchesTensor(PyObject* array_obj, const DLTensor& dl) {
  const auto* array = reinterpret_cast<const NumpyArray*>(array_obj);
  const auto* descr = reinterpret_cast<const NumpyDescr*>(array->descr);
  DLDataType dtype;
  if (array->data != dl.data || dl.byte_offset != 0 || array->nd != dl.ndim ||
      !NumpyDType(descr->type_num, dl.dtype.bits / 8, &dtype) || dtype.code != dl.dtype.code ||
      descr->byteorder == '>') {
    return false;
  }
  const int64_t elsize = dl.dtype.bits / 8;
  for (int i = 0; i < array->nd; ++i) {
    if (array->dimensions[i] != dl.shape[i] || array->strides[i] != dl.strides[i] * elsize) {
      return false;
    }
  }
  return true;
}

/// The tensor's dtype as a ferry.DataType (new reference).
PyObject* DTypeOf(FerryObjectHandle h) {
  FerryAny cell;
  FerryDataType dtype{DLOf(h).dtype.code, DLOf(h).dtype.bits, DLOf(h).dtype.lanes};
  uint64_t bits = 0;
  std::memcpy(&bits, &dtype, sizeof(dtype));
  SetCell(&cell, kFerryDataType, 0, bits);
  return AnyToPy(cell, false);
}

constexpr int kNumpyMaxDims = 64;

/// Whether NumPy has a dtype for DLPack elements of `dtype` (what numpy.from_dlpack accepts).
bool NumpyCanHold(DLDataType dtype) {
  if (dtype.lanes != 1) return false;
  switch (dtype.code) {
    case kDLBool:
      return dtype.bits == 8;
    case kDLInt:
    case kDLUInt:
      return dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    case kDLFloat:
      return dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    case kDLComplex:
      return dtype.bits == 64 || dtype.bits == 128;
    default:
      return false;
  }
}

/// tensor.numpy(): the NumPy array the tensor was made from when it still shows the same view
/// (no new object at all), else numpy.from_dlpack(tensor); both share the memory.
PyObject* NumpyMethod(PyObject* self, PyObject*) {
  FerryObjectHandle h = TensorHandleOf(self);
  if (h == nullptr) return nullptr;
  const DLTensor& dl = DLOf(h);
  if (dl.device.device_type != kDLCPU) {
    return PyErr_Format(PyExc_BufferError,
                        "Tensor.numpy(): the tensor lives on device (%d, %d); NumPy reads CPU "
                        "memory only",
                        static_cast<int>(dl.device.device_type),
                        static_cast<int>(dl.device.device_id));
  }
  if (!NumpyCanHold(dl.dtype)) {
    PyObject* dtype = DTypeOf(h);
    if (dtype == nullptr) return nullptr;
    PyErr_Format(PyExc_TypeError,
                 "Tensor.numpy(): NumPy has no dtype for %S elements (it holds bool8, int8-64, "
                 "uint8-64, float16-64 and complex64/128, one lane each)",
                 dtype);
    Py_DECREF(dtype);
    return nullptr;
  }
  if (dl.ndim > kNumpyMaxDims) {
    return PyErr_Format(PyExc_BufferError,
                        "Tensor.numpy(): the tensor has %d dimensions and NumPy holds at most %d",
                        static_cast<int>(dl.ndim), kNumpyMaxDims);
  }
  void* owner = nullptr;
  void (*owner_deleter)(void*) = nullptr;
  if (FerryTensorGetOwner(h, &owner, &owner_deleter) != 0) return RaiseFerryError();
  if (owner_deleter == &DropArray && ArrayMatchesTensor(static_cast<PyObject*>(owner), dl)) {
    return Py_NewRef(static_cast<PyObject*>(owner));
  }
  PyObject*& from_dlpack = g_state.tensor.from_dlpack;
  if (from_dlpack == nullptr) {
    PyObject* numpy = PyImport_ImportModule("numpy");
    if (numpy == nullptr) return nullptr;
    from_dlpack = PyObject_GetAttrString(numpy, "from_dlpack");
    Py_DECREF(numpy);
    if (from_dlpack == nullptr) return nullptr;
  }
  return PyObject_CallOneArg(from_dlpack, self);
}

PyMethodDef kDunderMethods[] = {
    {"numpy", NumpyMethod, METH_NOARGS,
     "numpy(): a NumPy array sharing this tensor's memory: the array the tensor was made from "
     "when it still has the same view, else numpy.from_dlpack(self) (read-only when the tensor "
     "is). BufferError for a tensor that is not on the CPU."},
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(DLPackMethod)),
     METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule "
     "sharing this tensor's memory (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", DLPackDeviceMethod, METH_NOARGS,
     "__dlpack_device__(): (device_type, device_id) of the memory."},
};

/// _install_tensor_methods(cls): adds __dlpack__ and __dlpack_device__ to the Tensor class as
/// method descriptors (a Python method in between would double the cost of np.from_dlpack).
PyObject* InstallTensorMethods(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls)) return PyErr_Format(PyExc_TypeError, "expected a class");
  for (PyMethodDef& def : kDunderMethods) {
    PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls), &def);
    if (descr == nullptr) return nullptr;
    const int rc = PyObject_SetAttrString(cls, def.ml_name, descr);
    Py_DECREF(descr);
    if (rc != 0) return nullptr;
  }
  // A Tensor has no reflected fields for ferry.Object's attribute fallback to find, and only a
  // class with the generic tp_getattro gets CPython's method-call fast path (no bound method
  // made per `t.__dlpack__(...)`).
  reinterpret_cast<PyTypeObject*>(cls)->tp_getattro = PyObject_GenericGetAttr;
  PyType_Modified(reinterpret_cast<PyTypeObject*>(cls));
  Py_RETURN_NONE;
}

PyObject* IntTuple(const int64_t* values, int32_t n) {
  return SequenceOf<false>(n, [values](int32_t i) { return PyLong_FromLongLong(values[i]); });
}

PyObject* TensorShape(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  return h == nullptr ? nullptr : IntTuple(DLOf(h).shape, DLOf(h).ndim);
}

PyObject* TensorStrides(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  return h == nullptr ? nullptr : IntTuple(DLOf(h).strides, DLOf(h).ndim);
}

PyObject* TensorDType(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  return h == nullptr ? nullptr : DTypeOf(h);
}

/// (device_type, device_id), as __dlpack_device__ returns it.
PyObject* TensorDevice(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  if (h == nullptr) return nullptr;
  return Py_BuildValue("(ii)", static_cast<int>(DLOf(h).device.device_type),
                       static_cast<int>(DLOf(h).device.device_id));
}

/// (data address, byte offset, read-only): for tests and the repr of Python users.
PyObject* TensorInfo(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  if (h == nullptr) return nullptr;
  const bool read_only =
      (static_cast<const FerryTensorObject*>(h)->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return Py_BuildValue("(NKO)", PyLong_FromVoidPtr(DLOf(h).data),
                       static_cast<unsigned long long>(DLOf(h).byte_offset),
                       read_only ? Py_True : Py_False);
}

/// A Tensor (new reference) from an object whose type has `method` as __dlpack__: NumPy
/// arrays directly, others through their capsule. NULL with an exception.
FerryObjectHandle TensorFromAny(PyObject* value, PyObject* method) {
  if (Py_TYPE(value) == NdarrayType()) {  // exactly numpy.ndarray: a subclass may differ
    FerryObjectHandle h = nullptr;
    const int rc = TensorFromNumpy(value, &h);
    if (rc <= 0) return h;
  }
  Py_INCREF(method);
  FerryObjectHandle h = TensorFromProducer(value, method);
  Py_DECREF(method);
  return h;
}

/// _tensor_from_dlpack(x): x itself when it is a ferry.Tensor, else a Tensor sharing x's memory.
PyObject* TensorFromDLPack(PyObject*, PyObject* obj) {
  if (IsFerryObject(obj) && HandleOf(obj) != nullptr &&
      TypeIndexOf(HandleOf(obj)) == kFerryTensor) {
    return Py_NewRef(obj);
  }
  // Borrowed; no error set when absent.
  PyObject* method = _PyType_Lookup(Py_TYPE(obj), g_state.tensor.dlpack_name);
  if (method == nullptr) {
    return PyErr_Format(PyExc_TypeError,
                        "from_dlpack: %s has no __dlpack__ method (expected an array such as a "
                        "NumPy array or a PyTorch tensor)",
                        Py_TYPE(obj)->tp_name);
  }
  FerryObjectHandle h = TensorFromAny(obj, method);
  if (h == nullptr) return nullptr;
  return WrapObject(h, /*owned=*/true);
}

PyMethodDef kTensorMethods[] = {
    {"_tensor_to_dlpack",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(TensorToDLPack)), METH_FASTCALL,
     nullptr},
    {"_tensor_from_dlpack", TensorFromDLPack, METH_O, nullptr},
    {"_install_tensor_methods", InstallTensorMethods, METH_O, nullptr},
    {"_tensor_shape", TensorShape, METH_O, nullptr},
    {"_tensor_strides", TensorStrides, METH_O, nullptr},
    {"_tensor_dtype", TensorDType, METH_O, nullptr},
    {"_tensor_device", TensorDevice, METH_O, nullptr},
    {"_tensor_info", TensorInfo, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int DLPackToAny(PyObject* value, FerryAny* out, TempScope* scope) {
  FerryObjectHandle h = nullptr;
  const auto& st = g_state.tensor;
  if (Py_TYPE(value) == st.ndarray_type && st.ndarray_type != nullptr) {
    if (TensorFromNumpy(value, &h) < 0) return -1;
  }
  if (h == nullptr) {
    PyObject* method = _PyType_Lookup(Py_TYPE(value), st.dlpack_name);  // borrowed, no error
    if (method == nullptr) return 1;
    h = TensorFromAny(value, method);
  }
  if (h == nullptr) return -1;
  scope->Keep(h);
  SetObject(out, h);
  return 0;
}

PyObject* BorrowedDLTensorToPy(void* tensor, bool read_only) {
  FerryObjectHandle h = nullptr;
  const uint64_t flags = read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  if (FerryTensorFromDLTensor(static_cast<const DLTensor*>(tensor), flags, nullptr, nullptr, &h) !=
      0) {
    return RaiseFerryError();
  }
  return WrapObject(h, /*owned=*/true);
}

int AddTensorFunctions(PyObject* module) {
  if (InitNames() != 0) return -1;
  return PyModule_AddFunctions(module, kTensorMethods);
}

}  // namespace ferry_py
